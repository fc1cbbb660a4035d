"""User-data sources: GeneratorDataset and NumpySlicesDataset.

A random-access source (one with __getitem__ and __len__) is read through a sampler, so it can be
shuffled, sharded, split and read by parallel workers; an iterable or a generator function is
read in its own order, each epoch from a fresh iter()/call.
"""
import builtins
import copy

from pijit.dataset import _validators as _v
from pijit.dataset import config
from pijit.dataset import samplers as _s
from pijit.dataset import _parallel
from pijit.dataset._compat import np, convert_row, to_array
from pijit.dataset.engine import Dataset

__all__ = ["GeneratorDataset", "NumpySlicesDataset", "MappableSource"]


def _source_error(name, e, died=False):
    if died:
        return ("Exception thrown from dataset pipeline: a worker process of %s died "
                "unexpectedly (%s)" % (name, e))
    return ("Exception thrown from user defined Python function in dataset: %s's source raised "
            "%s: %s" % (name, type(e).__name__, e))


class MappableSource(Dataset):
    """A source of n addressable rows read in the order its sampler gives."""

    _dataset_name = "Dataset"
    random_access = True

    def __init__(self, num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id,
                 python_multiprocessing=False):
        _v.check_source_options(num_samples, num_parallel_workers, shuffle, sampler, num_shards,
                                shard_id)
        super().__init__((), num_parallel_workers)
        self.sampler = _s.select_sampler(num_samples, sampler, shuffle, num_shards, shard_id)
        self.num_samples = num_samples
        self.python_multiprocessing = python_multiprocessing

    # what a source defines
    def _len(self):
        raise NotImplementedError

    def _row(self, i):
        raise NotImplementedError

    def _checked_row(self, i):
        return self._row(i)

    def is_shuffled(self):
        return self.sampler.is_shuffled()

    def is_sharded(self):
        return self.sampler.is_sharded()

    def _size(self):
        return self.sampler._count(self._len())

    def _workers_spec(self):
        n = self.num_parallel_workers or config.default_workers()
        return (self._checked_row, n, self.python_multiprocessing) if n > 1 else None

    def _iter(self, run, epoch):
        idx = self.sampler._indices(self._len(), run.rng(self, epoch))
        pool = run.pool(self)
        if pool is None:
            for i in idx:
                yield self._checked_row(i)
            return
        yield from _parallel.ordered_map(
            pool, ((i,) for i in idx), run.prefetch, self._dataset_name,
            lambda e, died: _source_error(self._dataset_name, e, died) if died else
            (str(e) if isinstance(e, RuntimeError) else _source_error(self._dataset_name, e)))

    def _split_source(self, indices, randomize):
        d = copy.copy(self)
        d._size_cache = None
        d.sampler = (_s.SubsetRandomSampler(indices) if randomize else
                     _s.SubsetSampler(indices))
        return d

    def use_sampler(self, new_sampler):
        self.sampler = _s.select_sampler(None, new_sampler, None, None, None)
        self._size_cache = None


class GeneratorDataset(MappableSource):
    def __init__(self, source, column_names=None, column_types=None, schema=None,
                 num_samples=None, num_parallel_workers=1, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, python_multiprocessing=True, max_rowsize=None):
        self._dataset_name = "GeneratorDataset"
        if not callable(source):
            try:
                iter(source)
            except TypeError:
                raise TypeError("Input `source` function of GeneratorDataset should be callable, "
                                "iterable or random accessible, commonly it should implement one "
                                "of the method like yield, __getitem__ or __next__(__iter__)."
                                ) from None
        if column_names is not None:
            _v.check_columns(column_names, "column_names")
        if column_names is None and schema is None:
            raise ValueError("Neither columns_names nor schema are provided.")
        if schema is not None:
            raise NotImplementedError("GeneratorDataset(schema=...) is not supported by pijit's "
                                      "dataset; pass column_names (and column_types)")
        if column_types is not None:
            _v.type_check(column_types, (list,), "column_types")
        if python_multiprocessing is not None:
            _v.type_check(python_multiprocessing, (bool,), "python_multiprocessing")
        if sampler is not None and not hasattr(source, "__getitem__"):
            raise ValueError("sampler is not supported if source does not have attribute "
                             "'__getitem__'.")
        if num_shards is not None and not hasattr(source, "__getitem__"):
            raise ValueError("num_shards is not supported if source does not have attribute "
                             "'__getitem__'.")
        if (num_shards is None) != (shard_id is None):
            raise ValueError("num_shards and shard_id need to be passed in together.")
        if num_shards is not None:
            _v.check_pos_int32(num_shards, "num_shards")
            _v.type_check(shard_id, (int,), "shard_id")
            if shard_id >= num_shards or shard_id < 0:
                raise ValueError("shard_id should be less than num_shards.")
        if isinstance(source, builtins.zip):  # a zip iterates once: keep its rows
            source = list(source)
        self.random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        super().__init__(num_samples, num_parallel_workers, shuffle if self.random_access
                         else None, sampler, num_shards, shard_id,
                         bool(python_multiprocessing))
        self.source = source
        self.column_names = _v.to_list(column_names)
        self.column_types = None
        if column_types is not None:
            from pijit.dataset._types import to_numpy_dtype
            self.column_types = [to_numpy_dtype(t) for t in column_types]

    def get_col_names(self):
        return list(self.column_names)

    def _len(self):
        return len(self.source)

    def _size(self):
        if self.random_access:
            return MappableSource._size(self)
        if hasattr(self.source, "__len__"):
            n = len(self.source)
            return min(n, self.num_samples) if self.num_samples else n
        return None

    def is_shuffled(self):
        return self.random_access and self.sampler.is_shuffled()

    def is_sharded(self):
        return self.random_access and self.sampler.is_sharded()

    def _workers_spec(self):
        return MappableSource._workers_spec(self) if self.random_access else None

    def _check(self, row):
        names = self.column_names
        if len(row) != len(names):
            raise RuntimeError(
                "Invalid columns, the number of columns returned in 'source' should match the "
                "number of 'column_names', but got the number of columns returned in 'source': "
                "%d, the number of 'column_names': %d (%s)." % (len(row), len(names), names))
        if self.column_types is not None:
            for a, t, n in zip(row, self.column_types, names):
                if t is not None and a.dtype != t:
                    raise RuntimeError(
                        "Invalid data, the type of column '%s' returned in 'source' (%s) does "
                        "not match the type given in 'column_types' (%s)." % (n, a.dtype, t))
        return row

    def _checked_row(self, i):
        try:
            row = convert_row(self.source[i])
        except Exception as e:
            raise RuntimeError(_source_error(self._dataset_name, e)) from e
        return self._check(row)

    def _iter(self, run, epoch):
        if self.random_access:
            yield from MappableSource._iter(self, run, epoch)
            return
        try:
            try:
                it = iter(self.source)
            except TypeError:
                it = iter(self.source())  # a generator function: a fresh generator each epoch
            limit = self.num_samples or -1
            while limit != 0:
                try:
                    row = next(it)
                except StopIteration:
                    return
                row = convert_row(row)
                limit -= 1
                yield self._check(row)
        except RuntimeError as e:
            if str(e).startswith("Invalid"):
                raise
            raise RuntimeError(_source_error(self._dataset_name, e)) from e
        except Exception as e:
            raise RuntimeError(_source_error(self._dataset_name, e)) from e


class NumpySlicesDataset(GeneratorDataset):
    """Rows sliced along the first axis of each column of `data` (a list: one column; a tuple:
    one column per element; a dict: one column per key; an array: one column)."""

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None):
        if isinstance(data, dict):
            names = list(data.keys())
            cols = [data[k] for k in names]
        elif isinstance(data, tuple):
            names, cols = None, list(data)
        elif isinstance(data, (list, np.ndarray)) or hasattr(data, "__array__"):
            names, cols = None, [data]
        else:
            raise TypeError("Unsupported data type: %s, only support some common python data "
                            "type, like list, tuple, dict, and numpy array." % type(data))
        arrays = [to_array(c, "NumpySlicesDataset's column %d" % i) for i, c in enumerate(cols)]
        for a in arrays:
            if a.ndim == 0:
                raise ValueError("NumpySlicesDataset: each column needs at least one dimension "
                                 "to slice, got a scalar.")
        n = arrays[0].shape[0]
        for a in arrays[1:]:
            if a.shape[0] != n:
                raise ValueError("Invalid data, the first dimension of every column should be "
                                 "the same, got %d and %d." % (n, a.shape[0]))
        if column_names is None:
            column_names = names or ["column_%d" % i for i in range(len(arrays))]
        else:
            _v.check_columns(column_names, "column_names")
            column_names = _v.to_list(column_names)
            if len(column_names) != len(arrays):
                raise ValueError("Invalid column_names, got %d names for %d columns."
                                 % (len(column_names), len(arrays)))
        super().__init__(_Slices(arrays), column_names, num_samples=num_samples,
                         num_parallel_workers=num_parallel_workers, shuffle=shuffle,
                         sampler=sampler, num_shards=num_shards, shard_id=shard_id,
                         python_multiprocessing=False)
        self._dataset_name = "NumpySlicesDataset"


class _Slices:
    def __init__(self, arrays):
        self.arrays = arrays

    def __len__(self):
        return self.arrays[0].shape[0]

    def __getitem__(self, i):
        return tuple(a[i] for a in self.arrays)
