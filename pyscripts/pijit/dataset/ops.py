"""The dataset operations: batch, shuffle, map, filter, repeat, take, skip, zip, concat,
project, rename and split, with MindSpore's argument checks and column semantics."""
import collections
import inspect
import random

from pijit.dataset import _validators as _v
from pijit.dataset import config
from pijit.dataset._compat import np, as_output, shape_str
from pijit.dataset import _parallel
from pijit.dataset.transforms._core import row_random
from pijit.dataset.engine import Dataset


def _index_of(names, columns, what):
    idx = []
    for c in columns:
        if c not in names:
            raise RuntimeError("Invalid column, %s: '%s' does not exist in the dataset columns %s."
                               % (what, c, names))
        idx.append(names.index(c))
    return idx


def _placed(names, in_cols, out_cols):
    """Column names after an operation turned in_cols into out_cols (MindSpore's rule: same
    count -> renamed in place; else the outputs first, then the untouched columns in order)."""
    if len(in_cols) == len(out_cols):
        m = dict(zip(in_cols, out_cols))
        return [m.get(n, n) for n in names]
    return list(out_cols) + [n for n in names if n not in in_cols]


def _op_name(op):
    return getattr(op, "__name__", None) or type(op).__name__


def _user_error(what, e, died=False):
    if died:
        return ("Exception thrown from dataset pipeline: a worker process of %s died "
                "unexpectedly (%s)" % (what, e))
    return ("Exception thrown from user defined Python function in dataset: %s raised %s: %s"
            % (what, type(e).__name__, e))


class BatchInfo:
    """What a callable batch_size or a per_batch_map receives."""

    def __init__(self, batch_num, epoch_num):
        self._batch_num, self._epoch_num = batch_num, epoch_num

    def get_batch_num(self):
        return self._batch_num

    def get_epoch_num(self):
        return self._epoch_num


def _stack(rows, col, name):
    first = rows[0][col]
    for r in rows[1:]:
        a = r[col]
        if a.shape != first.shape:
            raise RuntimeError(
                "Inconsistent batch shapes, batch operation expects same shape for each data row, "
                "but got inconsistent shape in column %d, expected shape for this column is:%s, "
                "got shape:%s (column '%s')" % (col, shape_str(first.shape), shape_str(a.shape),
                                                 name))
        if a.dtype != first.dtype:
            raise RuntimeError(
                "Inconsistent batch type, batch operation expects same type for each data row, "
                "but got inconsistent type in column %d, expected type for this column is:%s, "
                "got type:%s (column '%s')" % (col, first.dtype, a.dtype, name))
    return np.stack([r[col] for r in rows])


class BatchDataset(Dataset):
    def __init__(self, child, batch_size, drop_remainder, num_parallel_workers, **kw):
        unknown = set(kw) - {"per_batch_map", "input_columns", "output_columns",
                             "python_multiprocessing", "max_rowsize", "pad_info"}
        if unknown:
            raise TypeError("batch() got an unexpected keyword argument '%s'" % sorted(unknown)[0])
        if not (isinstance(batch_size, int) or callable(batch_size)) or \
                isinstance(batch_size, bool):
            raise TypeError("batch_size should either be an int or a callable.")
        if callable(batch_size):
            if len(inspect.signature(batch_size).parameters) != 1:
                raise ValueError("callable batch_size should take one parameter (BatchInfo).")
        else:
            _v.check_pos_int32(batch_size, "batch_size")
        if num_parallel_workers is not None:
            _v.check_num_parallel_workers(num_parallel_workers)
        _v.type_check(drop_remainder, (bool,), "drop_remainder")
        per_batch_map = kw.get("per_batch_map")
        in_cols, out_cols = kw.get("input_columns"), kw.get("output_columns")
        if in_cols is not None and per_batch_map is None:
            raise ValueError("input_columns can be specified only when per_batch_map is set.")
        if kw.get("pad_info") is not None:
            raise NotImplementedError("batch(pad_info=...) is not supported by pijit's dataset; "
                                      "pad in a map or per_batch_map")
        super().__init__([child], num_parallel_workers)
        names = child.get_col_names()
        if in_cols is not None:
            _v.check_columns(in_cols, "input_columns")
            in_cols = _v.to_list(in_cols)
            if len(in_cols) != len(inspect.signature(per_batch_map).parameters) - 1:
                raise ValueError("The signature of per_batch_map should match with input columns.")
        elif per_batch_map is not None:
            in_cols = list(names)
        if out_cols is not None:
            _v.check_columns(out_cols, "output_columns")
            out_cols = _v.to_list(out_cols)
        self.batch_size, self.drop_remainder = batch_size, drop_remainder
        self.per_batch_map = per_batch_map
        self.in_cols = in_cols
        self.in_idx = _index_of(names, in_cols, "input column") if in_cols else None
        self.out_cols = out_cols if out_cols is not None else in_cols
        self._names = (_placed(names, in_cols, self.out_cols) if per_batch_map is not None
                       else list(names))

    def get_col_names(self):
        return list(self._names)

    def get_batch_size(self):
        return self.batch_size if isinstance(self.batch_size, int) else -1

    def _size(self):
        n = self.children[0]._size()
        if n is None or not isinstance(self.batch_size, int):
            return None
        if n < 0:
            return n
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def _iter(self, run, epoch):
        names = self.children[0].get_col_names()
        epoch_num = epoch if isinstance(epoch, int) else 0
        rows, batch_num = [], 0
        size = self._batch_len(batch_num, epoch_num)
        for row in self.children[0]._iter(run, epoch):
            rows.append(row)
            if len(rows) == size:
                yield self._make(rows, names, batch_num, epoch_num)
                rows, batch_num = [], batch_num + 1
                size = self._batch_len(batch_num, epoch_num)
        if rows and not self.drop_remainder:
            yield self._make(rows, names, batch_num, epoch_num)

    def _batch_len(self, batch_num, epoch_num):
        if isinstance(self.batch_size, int):
            return self.batch_size
        n = self.batch_size(BatchInfo(batch_num, epoch_num))
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise RuntimeError("Invalid batch_size, the callable batch_size must return a "
                               "positive int, but got %r." % (n,))
        return n

    def _make(self, rows, names, batch_num, epoch_num):
        if self.per_batch_map is None:
            return tuple(_stack(rows, c, names[c]) for c in range(len(names)))
        args = [[r[i] for r in rows] for i in self.in_idx]
        try:
            out = self.per_batch_map(*args, BatchInfo(batch_num, epoch_num))
        except Exception as e:
            raise RuntimeError(_user_error("batch's per_batch_map %s on input_columns %s"
                                           % (_op_name(self.per_batch_map), self.in_cols), e)) from e
        if not isinstance(out, tuple):
            raise RuntimeError("Invalid per_batch_map, the return value of per_batch_map should "
                               "be a tuple of lists of arrays, but got %s." % type(out).__name__)
        if len(out) != len(self.out_cols):
            raise RuntimeError("Invalid columns, per_batch_map returned %d columns but "
                               "output_columns (or input_columns) names %d: %s."
                               % (len(out), len(self.out_cols), self.out_cols))
        done = {}
        for name, col in zip(self.out_cols, out):
            if isinstance(col, (list, tuple)):
                col = _stack([(as_output(x, "per_batch_map's output")[0],) for x in col], 0, name)
            done[name] = as_output(col, "per_batch_map's output")[0]
        return tuple(done[n] if n in done else _stack(rows, names.index(n), n)
                     for n in self._names)


class ShuffleDataset(Dataset):
    def __init__(self, child, buffer_size, _fixed_seed=None):
        _v.type_check(buffer_size, (int,), "buffer_size")
        _v.check_value(buffer_size, [2, _v.INT32_MAX], "buffer_size")
        super().__init__([child])
        self.buffer_size = buffer_size
        self.reshuffle_each_epoch = _fixed_seed is None
        self._fixed_seed = _fixed_seed

    def is_shuffled(self):
        return True

    def _iter(self, run, epoch):
        rng = (run.rng(self, epoch) if self._fixed_seed is None
               else random.Random(self._fixed_seed))
        buf = []
        for row in self.children[0]._iter(run, epoch):
            if len(buf) < self.buffer_size:
                buf.append(row)
                continue
            i = rng.randrange(len(buf))
            out, buf[i] = buf[i], row
            yield out
        rng.shuffle(buf)
        yield from buf


class MapDataset(Dataset):
    def __init__(self, child, operations, input_columns, output_columns, column_order,
                 num_parallel_workers, **kw):
        if column_order is not None:
            raise ValueError("The parameter 'column_order' had been deleted in map operation. "
                             "Please use '.project' operation instead.")
        unknown = set(kw) - {"python_multiprocessing", "max_rowsize", "cache", "callbacks",
                             "offload"}
        if unknown:
            raise TypeError("map() got an unexpected keyword argument '%s'" % sorted(unknown)[0])
        ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        if not ops:
            raise ValueError("Input operations should not be empty.")
        from pijit import nn
        for i, op in enumerate(ops):
            if isinstance(op, nn.Cell):
                raise ValueError("Input operations should not contain network computing operator "
                                 "like in mindspore.nn or mindspore.ops, got operation: %s" % op)
            if not callable(op):
                raise TypeError("operations[%d] is neither a c_transform op (TensorOperation) nor "
                                "a callable pyfunc." % i)
        if num_parallel_workers is not None:
            _v.check_num_parallel_workers(num_parallel_workers)
        mp = kw.get("python_multiprocessing", False)
        _v.type_check(mp, (bool,), "python_multiprocessing")
        for name, cols in (("input_columns", input_columns), ("output_columns", output_columns)):
            if cols is not None:
                _v.check_columns(cols, name)
        super().__init__([child], num_parallel_workers)
        names = child.get_col_names()
        in_cols = _v.to_list(input_columns)
        if in_cols is None:  # as many leading columns as the first operation takes
            in_cols = names[:max(1, min(len(names), _arity(ops[0])))]
        self.in_cols = in_cols
        self.in_idx = _index_of(names, in_cols, "input column")
        self.out_cols = _v.to_list(output_columns) or list(in_cols)
        self.ops = ops
        self.python_multiprocessing = mp
        self._names = _placed(names, in_cols, self.out_cols)
        placed = {n: i for i, n in enumerate(self.out_cols)}
        # where each output column comes from: ("out", k) or ("in", child column index)
        self._take = [("out", placed[n]) if n in placed else ("in", names.index(n))
                      for n in self._names]
        self._what = "map operation [%s] on input_columns %s" % (
            ", ".join(_op_name(o) for o in ops), in_cols)

    def get_col_names(self):
        return list(self._names)

    def _apply(self, args):
        ops, i = self.ops, 0
        while i < len(ops):
            j = i
            while j < len(ops) and getattr(ops[j], "fusable", False):
                j += 1
            if j - i > 1 and len(args) == 1:  # a run of image transforms: one fused kernel pass
                from pijit.dataset.vision._image import run_chain
                args = as_output(run_chain(ops[i:j], tuple(args)), "the map operation's output")
                i = j
                continue
            args = as_output(ops[i](*args), "the map operation's output")
            i += 1
        if len(args) != len(self.out_cols):
            raise ValueError("Invalid columns, the number of columns returned by the operations "
                             "(%d) should match the number of output_columns %s."
                             % (len(args), self.out_cols))
        return args

    def _apply_seeded(self, args, seed):
        with row_random(seed):
            return self._apply(args)

    def _workers_spec(self):
        n = self.num_parallel_workers or config.default_workers()
        if n <= 1:
            return None
        seeded = any(getattr(op, "random", False) for op in self.ops)
        return (self._apply_seeded if seeded else self._apply, n, self.python_multiprocessing)

    def _iter(self, run, epoch):
        rows = self.children[0]._iter(run, epoch)
        pool = run.pool(self)
        if pool is None:  # one worker: the transforms draw from their own streams, in row order
            for row in rows:
                try:
                    out = self._apply([row[i] for i in self.in_idx])
                except Exception as e:
                    raise RuntimeError(_user_error(self._what, e)) from e
                yield self._assemble(row, out)
        else:
            kept = collections.deque()  # input rows, in order, until their results return
            # Several workers: random transforms draw from a generator per row (see
            # transforms._core.row_random), so the draws do not depend on which worker runs first.
            seeded = any(getattr(op, "random", False) for op in self.ops)
            base = run.rng(self, epoch).getrandbits(64) << 32 if seeded else None

            def work():
                for n, row in enumerate(rows):
                    kept.append(row)
                    args = [row[i] for i in self.in_idx]
                    yield (args,) if base is None else (args, base | n)
            for out in _parallel.ordered_map(pool, work(), run.prefetch, "map",
                                             lambda e, died: _user_error(self._what, e, died)):
                yield self._assemble(kept.popleft(), out)

    def _assemble(self, row, out):
        return tuple(out[k] if kind == "out" else row[k] for kind, k in self._take)


def _arity(op):
    try:
        ps = inspect.signature(op).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind == p.VAR_POSITIONAL for p in ps):
        return 1
    return sum(1 for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               and p.default is p.empty) or 1


class FilterDataset(Dataset):
    def __init__(self, child, predicate, input_columns, num_parallel_workers):
        if not callable(predicate):
            raise TypeError("Predicate should be a Python function or a callable Python object.")
        if num_parallel_workers is not None:
            _v.check_num_parallel_workers(num_parallel_workers)
        if input_columns is not None:
            _v.check_columns(input_columns, "input_columns")
        super().__init__([child], num_parallel_workers)
        names = child.get_col_names()
        self.in_idx = _index_of(names, _v.to_list(input_columns) or names, "input column")
        self.predicate = predicate

    def _size(self):
        return None

    def _iter(self, run, epoch):
        for row in self.children[0]._iter(run, epoch):
            try:
                keep = self.predicate(*[row[i] for i in self.in_idx])
            except Exception as e:
                raise RuntimeError(_user_error("filter predicate %s" % _op_name(self.predicate),
                                               e)) from e
            if bool(keep):
                yield row


class RepeatDataset(Dataset):
    def __init__(self, child, count):
        _v.type_check(count, (int, type(None)), "repeat")
        if isinstance(count, int) and ((count <= 0 and count != -1) or count > _v.INT32_MAX):
            raise ValueError("count should be either -1 or positive integer, range[1, INT32_MAX].")
        super().__init__([child])
        self.count = -1 if count is None else count

    def get_repeat_count(self):
        return self.count

    def _size(self):
        n = self.children[0]._size()
        if n is None:
            return None
        return -1 if self.count == -1 else n * self.count

    def get_dataset_size(self):
        if self.count == -1:
            return -1
        return Dataset.get_dataset_size(self)

    def _iter(self, run, epoch):
        r = 0
        while self.count == -1 or r < self.count:
            yield from self.children[0]._iter(run, (epoch, r))
            r += 1


class TakeDataset(Dataset):
    def __init__(self, child, count):
        _v.type_check(count, (int,), "count")
        if (count <= 0 and count != -1) or count > _v.INT32_MAX:
            raise ValueError("count should be either -1 or within the required interval of "
                             "(0, %d], got %d." % (_v.INT32_MAX, count))
        super().__init__([child])
        self.count = count

    def _size(self):
        n = self.children[0]._size()
        if n is None or self.count == -1:
            return n
        return min(n, self.count) if n >= 0 else self.count

    def _iter(self, run, epoch):
        if self.count == -1:
            yield from self.children[0]._iter(run, epoch)
            return
        left = self.count
        rows = self.children[0]._iter(run, epoch)
        for row in rows:
            yield row
            left -= 1
            if left == 0:
                rows.close()
                return


class SkipDataset(Dataset):
    def __init__(self, child, count):
        _v.type_check(count, (int,), "count")
        _v.check_value(count, (0, _v.INT32_MAX), "count")
        super().__init__([child])
        self.count = count

    def _size(self):
        n = self.children[0]._size()
        return n if n is None or n < 0 else max(0, n - self.count)

    def _iter(self, run, epoch):
        for i, row in enumerate(self.children[0]._iter(run, epoch)):
            if i >= self.count:
                yield row


class ZipDataset(Dataset):
    def __init__(self, datasets):
        for i, d in enumerate(datasets):
            _v.type_check(d, (Dataset,), "datasets[%d]" % i)
        super().__init__(datasets)
        names = []
        for d in datasets:
            for n in d.get_col_names():
                if n in names:
                    raise RuntimeError("Invalid data, zip: column name '%s' is in more than one of "
                                       "the zipped datasets; rename it first." % n)
                names.append(n)
        self._names = names

    def get_col_names(self):
        return list(self._names)

    def _size(self):
        sizes = [c._size() for c in self.children]
        if any(s is None for s in sizes):
            return None
        known = [s for s in sizes if s >= 0]
        return min(known) if known else -1

    def _iter(self, run, epoch):
        its = [c._iter(run, epoch) for c in self.children]
        try:
            while True:
                row = ()
                for it in its:
                    try:
                        row += next(it)
                    except StopIteration:
                        return
                yield row
        finally:
            for it in its:
                it.close()


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        super().__init__(datasets)
        names = datasets[0].get_col_names()
        for d in datasets[1:]:
            if d.get_col_names() != names:
                raise RuntimeError("Invalid data, column names of the concatenated datasets should "
                                   "be the same, but got %s and %s." % (names, d.get_col_names()))
        self._names = list(names)

    def get_col_names(self):
        return list(self._names)

    def _size(self):
        sizes = [c._size() for c in self.children]
        if any(s is None for s in sizes):
            return None
        return -1 if any(s < 0 for s in sizes) else sum(sizes)

    def _iter(self, run, epoch):
        for c in self.children:
            yield from c._iter(run, epoch)


class ProjectDataset(Dataset):
    def __init__(self, child, columns):
        _v.check_columns(columns, "columns")
        super().__init__([child])
        self._names = _v.to_list(columns)
        self.idx = _index_of(child.get_col_names(), self._names, "column")

    def get_col_names(self):
        return list(self._names)

    def _iter(self, run, epoch):
        for row in self.children[0]._iter(run, epoch):
            yield tuple(row[i] for i in self.idx)


class RenameDataset(Dataset):
    def __init__(self, child, input_columns, output_columns):
        _v.check_columns(input_columns, "input_columns")
        _v.check_columns(output_columns, "output_columns")
        ins, outs = _v.to_list(input_columns), _v.to_list(output_columns)
        if len(ins) != len(outs):
            raise ValueError("Number of column in input_columns and output_columns is not equal.")
        super().__init__([child])
        names = child.get_col_names()
        _index_of(names, ins, "input column")
        m = dict(zip(ins, outs))
        self._names = [m.get(n, n) for n in names]
        if len(set(self._names)) != len(self._names):
            raise RuntimeError("Invalid columns, rename gives two columns the same name: %s."
                               % self._names)

    def get_col_names(self):
        return list(self._names)

    def _iter(self, run, epoch):
        return self.children[0]._iter(run, epoch)


def _absolute_sizes(sizes, n):
    if n is None or n <= 0:
        raise RuntimeError("dataset_size is unknown, unable to split.")
    if all(isinstance(s, int) for s in sizes):
        if sum(sizes) != n:
            raise RuntimeError("Sum of split sizes %d is not equal to dataset size %d."
                               % (sum(sizes), n))
        return list(sizes)
    out = []
    for s in sizes:
        a = int(round(s * n))
        if a == 0:
            raise RuntimeError("Split percentage %s is too small." % s)
        out.append(a)
    diff = n - sum(out)
    if diff > 0:  # the rows rounding left over go to the first split
        out[0] += diff
    elif diff < 0:  # extra rows come off the first split that keeps at least one
        for i, a in enumerate(out):
            if a + diff > 0:
                out[i] += diff
                break
    if sum(out) != n:
        raise RuntimeError("Sum of calculated split sizes %d is not equal to dataset size %d."
                           % (sum(out), n))
    return out


def split(ds, sizes, randomize):
    _v.type_check(sizes, (list,), "sizes")
    _v.type_check(randomize, (bool,), "randomize")
    if not sizes:
        raise ValueError("sizes cannot be empty.")
    all_int = all(isinstance(s, int) and not isinstance(s, bool) for s in sizes)
    all_float = all(isinstance(s, float) for s in sizes)
    if not (all_int or all_float):
        raise ValueError("sizes should be list of int or list of float.")
    if all_int and not all(s > 0 for s in sizes):
        raise ValueError("sizes is a list of int, but there should be no negative or zero numbers.")
    if all_float:
        if not all(0 < s <= 1 for s in sizes):
            raise ValueError("sizes is a list of float, but there should be no numbers outside "
                             "the range (0, 1].")
        if abs(sum(sizes) - 1) >= 0.00001:
            raise ValueError("sizes is a list of float, but the percentages do not sum up to 1.")
    if ds.is_sharded():
        raise RuntimeError("Dataset should not be sharded before split.")
    n = ds.get_dataset_size()
    absolute = _absolute_sizes(sizes, n)
    seed = config.run_seed()  # one draw for all splits: they must partition the same order
    if getattr(ds, "random_access", False):  # a random-access source: split its row indices
        order = list(range(n))
        if randomize:
            random.Random(seed).shuffle(order)
        out, start = [], 0
        for size in absolute:
            out.append(ds._split_source(order[start:start + size], randomize))
            start += size
        return tuple(out)
    out, skip = [], 0
    for size in absolute:
        d = ShuffleDataset(ds, 10000, _fixed_seed=seed) if randomize else ds
        if skip:
            d = d.skip(skip)
        out.append(d.take(size))
        skip += size
    return tuple(out)
