"""The pipeline: Dataset (the operations a user chains) and the iterators that run it.

A dataset is a tree of nodes; iterating one runs every node's `_iter(run, epoch)` generator of
rows (tuples of numpy arrays, one per column) pulled by its parent. `run` (a _Run) holds what one
iterator's run owns: the base seed, worker pools, the prefetch depth. `epoch` is any value that
names the pass: a node that draws random numbers asks run.rng(self, epoch), so a set seed repeats
each epoch's draws, and repeat() hands its child a distinct epoch per repetition.
"""
import random
import threading

from pijit.dataset import _validators as _v
from pijit.dataset import config
from pijit.dataset._compat import np, to_tensor
from pijit.dataset import _parallel
from pijit._state import runtime_state

# Capture must never trace the pipeline: it reads files and the seed, keeps caches and runs
# threads, so running it once on symbolic values would freeze or leak them. These entry points
# stop capture; the pipeline runs eagerly and hands the captured code its tensors.
_RUNS = "runs the data pipeline"

__all__ = ["Dataset", "TupleIterator", "DictIterator"]


class _Run:
    def __init__(self, root):
        self.seed = config.run_seed()
        self.prefetch = config.get_prefetch_size()
        self.keys = {}
        self.workers = {}
        self.parallel = False
        stack = [root]
        while stack:  # preorder numbering: the same pipeline numbers its nodes the same way
            node = stack.pop()
            if id(node) in self.keys:
                continue
            self.keys[id(node)] = len(self.keys)
            stack.extend(reversed(node.children))
        self._lock = threading.Lock()
        self._start(root, set())

    def _start(self, node, seen):
        if id(node) in seen:
            return
        seen.add(id(node))
        for c in node.children:
            self._start(c, seen)
        w = node._workers_spec()
        if w is not None:
            fn, n, processes = w
            self.workers[id(node)] = _parallel.Workers(fn, n, processes)
            self.parallel = True

    def rng(self, node, epoch):
        return random.Random("%d|%d|%r" % (self.seed, self.keys.get(id(node), -1), epoch))

    def pool(self, node):
        return self.workers.get(id(node))

    def close(self):
        for w in self.workers.values():
            w.close()
        self.workers = {}


class Dataset:
    """Base of every dataset: the operations return new datasets; nothing runs until iterated."""

    def __init__(self, children=(), num_parallel_workers=None):
        self.children = list(children)
        self.num_parallel_workers = num_parallel_workers
        self._size_cache = None

    # ---- what a node defines ----
    def get_col_names(self):
        return list(self.children[0].get_col_names())

    def _iter(self, run, epoch):
        raise NotImplementedError

    def _size(self):
        """The row count when known without running the pipeline, else None."""
        return self.children[0]._size() if self.children else None

    def _workers_spec(self):
        """(fn, n, processes) when this node runs fn in a worker pool during a run."""
        return None

    # ---- sizes and shapes ----
    @runtime_state(_RUNS)
    def get_dataset_size(self):
        if self._size_cache is None:
            n = self._size()
            if n is None:  # e.g. a generator without __len__: count one pass, as MindSpore does
                n = sum(1 for _ in self.create_tuple_iterator(num_epochs=1, output_numpy=True))
            self._size_cache = n
        return self._size_cache

    def get_batch_size(self):
        return self.children[0].get_batch_size() if self.children else 1

    def get_repeat_count(self):
        return self.children[0].get_repeat_count() if self.children else 1

    def _first_row(self):
        for row in self.create_tuple_iterator(num_epochs=1, output_numpy=True):
            return row
        raise RuntimeError("The dataset is empty: no row to read the output shapes and types "
                           "from.")

    @runtime_state(_RUNS)
    def output_shapes(self, estimate=False):
        return [list(a.shape) for a in self._first_row()]

    @runtime_state(_RUNS)
    def output_types(self):
        return [a.dtype for a in self._first_row()]

    def is_shuffled(self):
        return any(c.is_shuffled() for c in self.children)

    def is_sharded(self):
        return any(c.is_sharded() for c in self.children)

    # ---- iteration ----
    @runtime_state(_RUNS)
    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False,
                              do_copy=True):
        return TupleIterator(self, columns, num_epochs, output_numpy, do_copy)

    @runtime_state(_RUNS)
    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
        return DictIterator(self, None, num_epochs, output_numpy, do_copy)

    @runtime_state(_RUNS)
    def __iter__(self):
        return iter(self.create_tuple_iterator())

    # ---- operations ----
    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, **kw):
        from pijit.dataset.ops import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder, num_parallel_workers, **kw)

    def shuffle(self, buffer_size):
        from pijit.dataset.ops import ShuffleDataset
        return ShuffleDataset(self, buffer_size)

    def map(self, operations, input_columns=None, output_columns=None, column_order=None,
            num_parallel_workers=None, **kw):
        from pijit.dataset.ops import MapDataset
        return MapDataset(self, operations, input_columns, output_columns, column_order,
                          num_parallel_workers, **kw)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None):
        from pijit.dataset.ops import FilterDataset
        return FilterDataset(self, predicate, input_columns, num_parallel_workers)

    def repeat(self, count=None):
        from pijit.dataset.ops import RepeatDataset
        return RepeatDataset(self, count)

    def take(self, count=-1):
        from pijit.dataset.ops import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count):
        from pijit.dataset.ops import SkipDataset
        return SkipDataset(self, count)

    def zip(self, datasets):
        from pijit.dataset.ops import ZipDataset
        _v.type_check(datasets, (tuple, Dataset), "datasets")
        return ZipDataset((self,) + (datasets if isinstance(datasets, tuple) else (datasets,)))

    def concat(self, datasets):
        from pijit.dataset.ops import ConcatDataset
        _v.type_check(datasets, (list, Dataset), "datasets")
        if isinstance(datasets, list):
            for i, d in enumerate(datasets):
                _v.type_check(d, (Dataset,), "dataset[%d]" % i)
        return ConcatDataset([self] + (datasets if isinstance(datasets, list) else [datasets]))

    def __add__(self, other):
        return self.concat(other)

    def project(self, columns):
        from pijit.dataset.ops import ProjectDataset
        return ProjectDataset(self, columns)

    def rename(self, input_columns, output_columns):
        from pijit.dataset.ops import RenameDataset
        return RenameDataset(self, input_columns, output_columns)

    def split(self, sizes, randomize=True):
        from pijit.dataset.ops import split
        return split(self, sizes, randomize)

    def apply(self, apply_func):
        if not callable(apply_func):
            raise TypeError("apply_func must be a function.")
        out = apply_func(self)
        if not isinstance(out, Dataset):
            raise TypeError("apply_func must return a dataset.")
        return out


class _Iterator:
    """Runs the pipeline for num_epochs epochs (-1: without end); each epoch ends with one
    StopIteration, and iterating the same iterator again runs the next epoch."""

    def __init__(self, dataset, columns, num_epochs, output_numpy, do_copy):
        _v.type_check(num_epochs, (int,), "num_epochs")
        if num_epochs < -1 or num_epochs == 0:
            raise ValueError("num_epochs should be either -1 or positive integer, but got %d."
                             % num_epochs)
        _v.type_check(output_numpy, (bool,), "output_numpy")
        _v.type_check(do_copy, (bool,), "do_copy")
        if columns is not None:
            _v.check_columns(columns, "columns")
            dataset = dataset.project(columns)
        self._dataset = dataset
        self._names = dataset.get_col_names()
        self._num_epochs = num_epochs
        self._numpy = output_numpy
        self._epoch = 0
        self._cur = None
        self._run = _Run(dataset)

    def __iter__(self):
        return self

    def _start_epoch(self):
        rows = self._dataset._iter(self._run, self._epoch)
        if self._run.parallel:  # keep the next rows (batches) coming while the step runs
            rows = _parallel.Pump(rows, self._run.prefetch, "iterator")
        return rows

    @runtime_state(_RUNS)  # (capture inlines __next__ as a special method; this call it refuses)
    def _next_row(self):
        if self._run is None:
            raise StopIteration
        if self._cur is None:
            if self._num_epochs != -1 and self._epoch >= self._num_epochs:
                self.stop()
                raise StopIteration
            self._cur = self._start_epoch()
        try:
            return next(self._cur)
        except StopIteration:
            self._cur = None
            self._epoch += 1
            if self._num_epochs != -1 and self._epoch >= self._num_epochs:
                self.stop()
            raise
        except BaseException:
            self.stop()
            raise

    def _out(self, row):
        if self._numpy:
            return list(row)
        return [to_tensor(a) for a in row]

    def stop(self):
        cur, self._cur = self._cur, None
        if isinstance(cur, _parallel.Pump):
            cur.close()
        if self._run is not None:
            self._run.close()
            self._run = None

    def __del__(self):
        try:
            self.stop()
        except Exception:
            pass

    def get_col_names(self):
        return list(self._names)


class TupleIterator(_Iterator):
    __pijit_state__ = _RUNS

    @runtime_state(_RUNS)
    def __next__(self):
        return self._out(self._next_row())


class DictIterator(_Iterator):
    __pijit_state__ = _RUNS

    @runtime_state(_RUNS)
    def __next__(self):
        return dict(zip(self._names, self._out(self._next_row())))
