"""numpy's array creation functions for pijit's numpy stand-in: full, zeros, ones, empty, the
*_like forms, arange and linspace (numpy's own arithmetic, so the values match bit for bit), eye,
identity, copy."""
import builtins as _bi
import math
import operator

from pijit import dtype as _pdt
from pijit.numpy_lite import _dtypes as _d
from pijit.numpy_lite import _scalars as _s
from pijit.numpy_lite._array import op, tensor, wrap, cast_storage, array, asarray, ndarray
from pijit.numpy_lite._funcs import _shape_arg, _check_order, floor


def full(shape, fill_value, dtype=None, order="C", like=None):
    _check_order(order)
    shape = _shape_arg(shape)
    for s in shape:
        if s < 0:
            raise ValueError("negative dimensions are not allowed")
    if dtype is None:
        fill = asarray(fill_value)
        d = fill.dtype
    else:
        d = _d.as_dtype(dtype)
        fill = fill_value
    if isinstance(fill, (ndarray, list, tuple)) and asarray(fill).ndim:
        f = asarray(fill)
        t = op("broadcast_to", (cast_storage(f, d),), shape=shape)
        return wrap(op("copy", (t,)), d)
    v = fill.item() if isinstance(fill, (ndarray, _s.generic)) else fill
    if d.kind == "c":  # the full op takes no complex value: broadcast a 0-d tensor of it
        t = op("broadcast_to", (tensor(_fill_value(v, d), d._storage),), shape=shape)
        return wrap(op("copy", (t,)), d)
    return wrap(op("full", (), shape=shape, value=_fill_value(v, d), dtype=d._storage), d)


def _fill_value(v, d):
    """numpy.full copies a 0-d array of the value into the result: a C cast (1e10 and NaN into
    int32 both become INT32_MIN)."""
    return _d.to_value(v, d)


def zeros(shape, dtype=float, order="C", like=None):
    return full(shape, 0, dtype if dtype is not None else float, order)


def ones(shape, dtype=None, order="C", like=None):
    return full(shape, 1, dtype if dtype is not None else float, order)


def empty(shape, dtype=float, order="C", like=None):
    """Zero-filled: pijit never hands out uninitialised memory."""
    return zeros(shape, dtype, order)


def _like(a, dtype, shape):
    a = asarray(a)
    return (a.dtype if dtype is None else dtype), (a.shape if shape is None else shape)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None):
    d, s = _like(a, dtype, shape)
    return zeros(s, d)


def ones_like(a, dtype=None, order="K", subok=True, shape=None):
    d, s = _like(a, dtype, shape)
    return ones(s, d)


def empty_like(a, dtype=None, order="K", subok=True, shape=None):
    d, s = _like(a, dtype, shape)
    return zeros(s, d)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    d, s = _like(a, dtype, shape)
    return full(s, fill_value, d)


def arange(start, stop=None, step=None, dtype=None, like=None):
    """numpy.arange: the dtype numpy infers from the arguments, and numpy's values (start and
    start + step made in that dtype, then start + i * delta)."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    vals = [x._value() if isinstance(x, _s.generic) else x for x in (start, stop, step)]
    start, stop, step = vals
    if step == 0:
        raise ZeroDivisionError("division by zero") if isinstance(step, int) else \
            ValueError("Maximum allowed size exceeded")
    if dtype is None:
        d = _d.INT64
        for v in vals:
            vd = _d.python_dtype(v)
            if vd is None:
                raise TypeError("unsupported operand type for arange: %s" % type(v).__name__)
            d = _d.promote_types(d, vd) if vd is not _d.BOOL else d
    else:
        d = _d.as_dtype(dtype)
    n = _bi.max(int(math.ceil((stop - start) / step)), 0)
    if d.kind in "biu":
        if _bi.all(isinstance(v, int) for v in vals):
            values = list(range(start, start + n * step, step))[:n]
        else:
            first = _d.to_value(start, d) if not isinstance(start, float) else int(start)
            second = int(start + step)
            delta = second - first
            values = [first + i * delta for i in range(n)]
        values = [_d.wrap_int(v, d) for v in values] if d is not _d.BOOL else \
            [bool(v) for v in values]
        if d is _d.BOOL and n > 2:
            raise TypeError("arange() is only supported for booleans when the result has at "
                            "most length 2.")
    else:
        rnd = _py_round(d)
        first = rnd(float(start))
        delta = rnd(rnd(float(start + step)) - first) if n > 1 else 0.0
        values = [first, first + delta][:n] + [rnd(first + rnd(i * delta)) for i in range(2, n)]
        if n > 1:
            values[1] = rnd(float(start + step))
    return wrap(tensor(values, d._storage), d) if values else zeros((0,), d)


def _py_round(d):
    from pijit.numpy_lite._reduce import py_round
    return py_round(d)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """numpy.linspace for scalar start and stop (numpy's float64 arithmetic, then astype)."""
    if not all(isinstance(v, (int, float, _s.generic)) for v in (start, stop)):
        raise _d.unsupported("linspace with array start or stop")
    if axis != 0:
        raise _d.unsupported("linspace(axis=...)")
    num = operator.index(num)
    if num < 0:
        raise ValueError("Number of samples, %d, must be non-negative." % num)
    start, stop = float(start), float(stop)
    div = (num - 1) if endpoint else num
    delta = stop - start
    ys = [float(i) for i in range(num)]
    if div > 0:
        step = delta / div
        if step == 0:
            ys = [y / div * delta for y in ys]
        else:
            ys = [y * step for y in ys]
    else:
        step = math.nan
        ys = [y * delta for y in ys]
    ys = [y + start for y in ys]
    if endpoint and num > 1:
        ys[-1] = stop
    d = _d.FLOAT64 if dtype is None else _d.as_dtype(dtype)
    out = wrap(tensor(ys, _pdt.float64), _d.FLOAT64) if ys else zeros((0,))
    if d.kind in "iu":
        out = floor(out)
    out = out.astype(d, copy=False)
    return (out, _s.make(_d.FLOAT64, step)) if retstep else out


def eye(N, M=None, k=0, dtype=float, order="C", like=None):
    M = N if M is None else M
    d = _d.as_dtype(dtype)
    rows = [[1 if j - i == k else 0 for j in range(M)] for i in range(N)]
    return array(rows, dtype=d) if N and M else zeros((N, M), d)


def identity(n, dtype=None, like=None):
    return eye(n, dtype=float if dtype is None else dtype)


def copy(a, order="K", subok=False):
    return array(a, copy=True)
