"""mindspore.numpy's array creation functions over pijit tensors (array, zeros, arange, eye,
tril, diag, meshgrid, pad, ...). MindSpore's defaults: float32 for fills and float ranges, int32 for
integer ranges and Python integer data."""
import builtins
import math

from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit.numpy._utils import (is_int, to_32, tensor as _t, cast as _cast, shape_of as _shape,
                                full as _full, check_axis as _check_axis)


def array(obj, dtype=None, copy=True, ndmin=0):
    """A new tensor from a tensor, number, bool, list or tuple (Python data as int32/float32);
    dtype converts, ndmin prepends size-1 dims up to that many."""
    if isinstance(obj, _C.TensorBase):
        out = _op("copy", (obj,)) if copy else obj
    else:
        out = _t(obj, "array")
    out = _cast(out, dtype)
    if not is_int(ndmin):
        raise TypeError("array: ndmin must be an int, got %r" % (ndmin,))
    if out.ndim < ndmin:
        out = _op("reshape", (out,), shape=(1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def asarray(a, dtype=None):
    """a as a tensor (a tensor itself when it already has the dtype)."""
    return _cast(_t(a, "asarray"), dtype)


def asfarray(a, dtype=_dt.float32):
    """a as a float tensor (float32 unless dtype names another float type)."""
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_floating_point:
        dtype = _dt.float32
    return _cast(_t(a, "asfarray"), dtype)


def copy_(a):
    return _op("copy", (_t(a, "copy"),))


def _fill_dtype(dtype, default):
    return default if dtype is None else _dt.as_dtype(dtype)


def ones(shape, dtype=_dt.float32):
    return _full(_shape("ones", shape), 1, _fill_dtype(dtype, _dt.float32))


def zeros(shape, dtype=_dt.float32):
    return _full(_shape("zeros", shape), 0, _fill_dtype(dtype, _dt.float32))


def empty(shape, dtype=_dt.float32):
    """Zero-filled: pijit never hands out uninitialised memory."""
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    """A tensor of shape filled with fill_value (a number, bool or a tensor broadcast to the
    shape); dtype follows the value (bool, int32, float32) unless given."""
    shape = _shape("full", shape)
    if isinstance(fill_value, (list, tuple, _C.TensorBase)):
        v = _cast(_t(fill_value, "full"), dtype)
        return _op("broadcast_to", (v,), shape=shape)
    if isinstance(fill_value, bool):
        default = _dt.bool_
    elif isinstance(fill_value, int):
        default = _dt.int32
    elif isinstance(fill_value, float):
        default = _dt.float32
    else:
        raise TypeError("full: fill_value must be a number, bool, list or Tensor, got %s"
                        % type(fill_value).__name__)
    return _full(shape, fill_value, _fill_dtype(dtype, default))


def _like(who, a, dtype, shape):
    a = _t(a, who)
    return (_dt.as_dtype(dtype) if dtype is not None else a.dtype,
            tuple(a.shape) if shape is None else _shape(who, shape))


def ones_like(a, dtype=None, shape=None):
    dtype, shape = _like("ones_like", a, dtype, shape)
    return _full(shape, 1, dtype)


def zeros_like(a, dtype=None, shape=None):
    dtype, shape = _like("zeros_like", a, dtype, shape)
    return _full(shape, 0, dtype)


def empty_like(prototype, dtype=None, shape=None):
    return zeros_like(prototype, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    dtype, shape = _like("full_like", a, dtype, shape)
    if isinstance(fill_value, _C.TensorBase):
        return _op("broadcast_to", (_cast(fill_value, dtype),), shape=shape)
    return _full(shape, fill_value, dtype)


def _number(who, name, v):
    if isinstance(v, _C.TensorBase) and v.ndim == 0:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("%s: %s must be a number, got %r" % (who, name, v))
    return v


def arange(start, stop=None, step=None, dtype=None):
    """Values from start (0 when only one bound is given) up to stop, step apart; int32 when every
    argument is an int, else float32, unless dtype says otherwise."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    start, stop, step = (_number("arange", n, v) for n, v in
                         (("start", start), ("stop", stop), ("step", step)))
    if step == 0:
        raise ValueError("arange: step must not be 0")
    if dtype is None:
        dtype = _dt.int32 if builtins.all(is_int(v) for v in (start, stop, step)) else _dt.float32
    return _op("arange", (), start=float(start), stop=float(stop), step=float(step),
               dtype=_dt.as_dtype(dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """num evenly spaced values over [start, stop] (stop left out when endpoint is False); float32
    unless dtype says otherwise. retstep also returns the spacing. Scalar bounds only."""
    start, stop = _number("linspace", "start", start), _number("linspace", "stop", stop)
    if not is_int(num) or num < 0:
        raise ValueError("linspace: num must be a non-negative int, got %r" % (num,))
    dtype = _fill_dtype(dtype, _dt.float32)
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else float("nan")
    if endpoint:
        out = _op("linspace", (), start=float(start), stop=float(stop), num=num, dtype=_dt.float64)
    else:
        out = _op("linspace", (), start=float(start), stop=float(start + step * num), num=num + 1,
                  dtype=_dt.float64)
        out = out[:num]
    out = _cast(out, dtype)
    if axis not in (0, -1):
        raise ValueError("linspace: axis must be 0 for scalar start and stop, got %r" % (axis,))
    return (out, step) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num, endpoint)."""
    exps = linspace(start, stop, num, endpoint, dtype=_dt.float64, axis=axis)
    out = _op("pow", (_C.as_operand(float(base), exps), exps))
    return _cast(out, _fill_dtype(dtype, _dt.float32))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """num values spaced evenly on a log scale from start to stop (both non-zero, same sign)."""
    start, stop = _number("geomspace", "start", start), _number("geomspace", "stop", stop)
    if start == 0 or stop == 0 or (start < 0) != (stop < 0):
        raise ValueError("geomspace: start and stop must be non-zero and of the same sign")
    sign = -1.0 if start < 0 else 1.0
    out = logspace(math.log10(abs(start)), math.log10(abs(stop)), num, endpoint, 10.0,
                   _dt.float64, axis)
    if num > 0:  # exact end points, as numpy
        first = _full((1,), float(abs(start)), _dt.float64)
        if endpoint and num > 1:
            last = _full((1,), float(abs(stop)), _dt.float64)
            out = _op("concat", (first, out[1:-1], last), axis=0)
        else:
            out = _op("concat", (first, out[1:]), axis=0)
    return _cast(out * sign, _fill_dtype(dtype, _dt.float32))


def _tri_mask(n, m, k):
    """(n, m) bool mask of j - i <= k (the lower triangle with the k-th diagonal)."""
    i = _op("arange", (), start=0.0, stop=float(n), step=1.0, dtype=_dt.int64)
    j = _op("arange", (), start=0.0, stop=float(m), step=1.0, dtype=_dt.int64)
    d = _op("sub", (_op("reshape", (j,), shape=(1, m)), _op("reshape", (i,), shape=(n, 1))))
    return _op("le", (d, _C.as_operand(k, d)))


def eye(N, M=None, k=0, dtype=_dt.float32):
    """The (N, M) matrix with ones on the k-th diagonal."""
    M = N if M is None else M
    for name, v in (("N", N), ("M", M), ("k", k)):
        if not is_int(v):
            raise TypeError("eye: %s must be an int, got %r" % (name, v))
    dtype = _fill_dtype(dtype, _dt.float32)
    if k == 0:
        return _op("eye", (), n=N, m=M, dtype=dtype)
    on = _op("logical_and", (_tri_mask(N, M, k), _op("logical_not", (_tri_mask(N, M, k - 1),))))
    return _op("cast", (on,), dtype=dtype)


def identity(n, dtype=_dt.float32):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=_dt.float32):
    """Ones at and below the k-th diagonal of an (N, M) matrix."""
    M = N if M is None else M
    return _op("cast", (_tri_mask(N, M, k),), dtype=_fill_dtype(dtype, _dt.float32))


def _tri(who, m, k, lower):
    m = _t(m, who)
    if not is_int(k):
        raise TypeError("%s: k must be an int, got %r" % (who, k))
    if m.ndim < 2:
        if m.ndim == 0:
            raise ValueError("%s: input must be at least 1-D" % who)
        m = _op("broadcast_to", (m,), shape=(m.shape[0], m.shape[0]))
    n, c = m.shape[-2], m.shape[-1]
    mask = _tri_mask(n, c, k) if lower else _op("logical_not", (_tri_mask(n, c, k - 1),))
    return _op("where", (mask, m, _C.as_operand(0, m)))


def tril(m, k=0):
    """The lower triangle of (the last two dims of) m: elements above the k-th diagonal are 0.
    A 1-D m is first broadcast to a square matrix, as numpy does."""
    return _tri("tril", m, k, True)


def triu(m, k=0):
    """The upper triangle: elements below the k-th diagonal are 0."""
    return _tri("triu", m, k, False)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The offset-th diagonal of the (axis1, axis2) planes, as a new last dim."""
    a = _t(a, "diagonal")
    if a.ndim < 2:
        raise ValueError("diagonal: the input must be at least 2-D, got %d-D" % a.ndim)
    ax1, ax2 = _check_axis("diagonal", axis1, a.ndim), _check_axis("diagonal", axis2, a.ndim)
    if ax1 == ax2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    rest = [d for d in range(a.ndim) if d not in (ax1, ax2)]
    x = _op("transpose", (a,), perm=tuple(rest) + (ax1, ax2))
    n, m = x.shape[-2], x.shape[-1]
    if offset >= 0:
        length = builtins.max(0, builtins.min(n, m - offset))
        rows, cols = list(range(length)), [i + offset for i in range(length)]
    else:
        length = builtins.max(0, builtins.min(n + offset, m))
        rows, cols = [i - offset for i in range(length)], list(range(length))
    if length == 0:
        return _full(tuple(x.shape[:-2]) + (0,), 0, a.dtype)
    from pijit.tensor import Tensor
    r, c = Tensor(rows, _dt.int64), Tensor(cols, _dt.int64)
    return x[(Ellipsis, r, c)]


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """The sum along the offset-th diagonal."""
    d = diagonal(a, offset, axis1, axis2)
    out = _op("sum", (_cast(d, dtype),), axis=(-1,), keepdims=False)
    return out


def diag(v, k=0):
    """A 1-D v: the square matrix with v on its k-th diagonal; a 2-D v: its k-th diagonal."""
    v = _t(v, "diag")
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        # v along the diagonal: as a column (k >= 0: row i holds v[i]) or a row (k < 0: column j
        # holds v[j]), padded to n and kept where j - i == k.
        line = _op("pad", (v,), pads=(0, abs(k)), mode="constant", value=0.0)
        line = _op("reshape", (line,), shape=(n, 1) if k >= 0 else (1, n))
        on = _op("logical_and", (_tri_mask(n, n, k), _op("logical_not", (_tri_mask(n, n, k - 1),))))
        return _op("where", (on, line, _C.as_operand(0, line)))
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("diag: input must be 1-D or 2-D, got %d-D" % v.ndim)


def diagflat(v, k=0):
    v = _t(v, "diagflat")
    return diag(_op("reshape", (v,), shape=(-1,)), k)


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an n x ... x n array: ndim copies of arange(n)."""
    i = _op("arange", (), start=0.0, stop=float(n), step=1.0, dtype=_dt.int32)
    return (i,) * ndim


def _tri_indices(who, n, k, m, upper):
    m = n if m is None else m
    from pijit.tensor import Tensor
    pairs = [(i, j) for i in range(n) for j in range(m) if ((j - i >= k) if upper else (j - i <= k))]
    return (Tensor([p[0] for p in pairs], _dt.int32), Tensor([p[1] for p in pairs], _dt.int32))


def triu_indices(n, k=0, m=None):
    return _tri_indices("triu_indices", n, k, m, True)


def tril_indices(n, k=0, m=None):
    return _tri_indices("tril_indices", n, k, m, False)


def triu_indices_from(arr, k=0):
    arr = _t(arr, "triu_indices_from")
    if arr.ndim != 2:
        raise ValueError("triu_indices_from: input array must be 2-D")
    return triu_indices(arr.shape[0], k, arr.shape[1])


def tril_indices_from(arr, k=0):
    arr = _t(arr, "tril_indices_from")
    if arr.ndim != 2:
        raise ValueError("tril_indices_from: input array must be 2-D")
    return tril_indices(arr.shape[0], k, arr.shape[1])


def meshgrid(*xi, sparse=False, indexing="xy"):
    """Coordinate matrices from 1-D coordinate vectors; 'xy' (Cartesian) swaps the first two
    output dims, 'ij' keeps matrix order; sparse returns broadcastable shapes."""
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', got %r" % (indexing,))
    xs = [_op("reshape", (_t(x, "meshgrid"),), shape=(-1,)) for x in xi]
    n = len(xs)
    shapes = [x.shape[0] for x in xs]
    out = []
    for i, x in enumerate(xs):
        s = [1] * n
        s[i] = shapes[i]
        if indexing == "xy" and n >= 2 and i < 2:
            s[0], s[1] = s[1], s[0]
        out.append(_op("reshape", (x,), shape=tuple(s)))
    if not sparse:
        full_shape = list(shapes)
        if indexing == "xy" and n >= 2:
            full_shape[0], full_shape[1] = full_shape[1], full_shape[0]
        out = [_op("broadcast_to", (o,), shape=tuple(full_shape)) for o in out]
    return tuple(out)


def indices(dimensions, dtype=_dt.int32, sparse=False):
    """A grid of indices: one array per dim, each varying along its own dim."""
    dims = _shape("indices", dimensions)
    grids = meshgrid(*[_op("arange", (), start=0.0, stop=float(d), step=1.0,
                           dtype=_dt.as_dtype(dtype)) for d in dims],
                     sparse=sparse, indexing="ij")
    if sparse:
        return grids
    if not grids:
        return _full((0,), 0, _dt.as_dtype(dtype))
    return _op("stack", grids, axis=0)


def ix_(*args):
    """Open meshes from 1-D sequences: the i-th has shape 1 everywhere but along dim i."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = _t(a, "ix_")
        if a.ndim != 1:
            raise ValueError("ix_: cross index must be 1 dimensional")
        s = [1] * n
        s[i] = a.shape[0]
        out.append(_op("reshape", (a,), shape=tuple(s)))
    return tuple(out)


def vander(x, N=None, increasing=False):
    """Columns are powers of x: x**(N-1), ..., x**0 (increasing: x**0 first)."""
    x = _t(x, "vander")
    if x.ndim != 1:
        raise ValueError("vander: x must be a one-dimensional array")
    N = x.shape[0] if N is None else N
    p = _op("arange", (), start=0.0, stop=float(N), step=1.0, dtype=x.dtype)
    if not increasing:
        p = p[::-1]
    return _op("pow", (_op("reshape", (x,), shape=(-1, 1)), _op("reshape", (p,), shape=(1, N))))


def _window(who, M, f):
    if not is_int(M):
        raise TypeError("%s: M must be an int, got %r" % (who, M))
    if M < 1:
        return _full((0,), 0, _dt.float32)
    if M == 1:
        return _full((1,), 1, _dt.float32)
    n = _op("arange", (), start=0.0, stop=float(M), step=1.0, dtype=_dt.float64)
    return _op("cast", (f(n, M - 1),), dtype=_dt.float32)


def _cos(x):
    return _op("cos", (x,))


def hamming(M):
    return _window("hamming", M, lambda n, d: 0.54 - _cos(n * (2 * math.pi / d)) * 0.46)


def hanning(M):
    return _window("hanning", M, lambda n, d: 0.5 - _cos(n * (2 * math.pi / d)) * 0.5)


def blackman(M):
    return _window("blackman", M, lambda n, d: 0.42 - _cos(n * (2 * math.pi / d)) * 0.5
                   + _cos(n * (4 * math.pi / d)) * 0.08)


def bartlett(M):
    return _window("bartlett", M,
                   lambda n, d: 1.0 - _op("abs", (n * (2.0 / d) - 1.0,)))


def _pad_width(who, pad_width, ndim):
    """numpy's pad_width forms as ((before, after), ...) per dim."""
    pw = pad_width
    if is_int(pw):
        return ((pw, pw),) * ndim
    pw = tuple(tuple(p) if isinstance(p, (list, tuple)) else p for p in pw)
    if builtins.all(is_int(p) for p in pw):
        if len(pw) == 1:
            return ((pw[0], pw[0]),) * ndim
        if len(pw) == 2:
            return (pw,) * ndim
    elif len(pw) == 1 and len(pw[0]) == 2:
        return (tuple(pw[0]),) * ndim
    elif len(pw) == ndim and builtins.all(len(p) == 2 for p in pw):
        return pw
    raise ValueError("%s: pad_width %r does not fit a %d-D array" % (who, pad_width, ndim))


def pad(arr, pad_width, mode="constant", stat_length=None, constant_values=0, end_values=0,
        reflect_type="even"):
    """numpy's pad for modes 'constant' (a scalar constant_values), 'edge', 'reflect' and
    'symmetric' (reflect_type 'even'). Other modes raise NotImplementedError."""
    x = _t(arr, "pad")
    widths = _pad_width("pad", pad_width, x.ndim)
    if builtins.any(p < 0 for w in widths for p in w):
        raise ValueError("pad: pad_width must be non-negative, got %r" % (pad_width,))
    if reflect_type != "even":
        raise NotImplementedError("pad: reflect_type 'odd' is not supported")
    if mode == "constant":
        if not isinstance(constant_values, (int, float)) or isinstance(constant_values, bool):
            raise NotImplementedError("pad: constant_values must be one number in pijit, got %r"
                                      % (constant_values,))
        flat = []
        for before, after in reversed(widths):
            flat += [before, after]
        out = _op("pad", (x,), pads=tuple(flat), mode="constant", value=float(constant_values))
        return out
    if mode not in ("edge", "reflect", "symmetric"):
        raise NotImplementedError("pad: mode %r is not supported (constant, edge, reflect, "
                                  "symmetric are)" % (mode,))
    # One dim at a time, by concatenating index-selected slices.
    from pijit.tensor import Tensor
    for d, (before, after) in enumerate(widths):
        if before == 0 and after == 0:
            continue
        n = x.shape[d]
        if mode == "edge":
            idx = [0] * before + list(range(n)) + [n - 1] * after
        else:
            if mode == "reflect" and n < 2:
                idx = [0] * (before + n + after)
            else:
                period = 2 * n - 2 if mode == "reflect" else 2 * n
                idx = []
                for i in range(-before, n + after):
                    j = i % period if period else 0
                    if mode == "reflect":
                        j = j if j < n else period - j
                    else:
                        j = j if j < n else period - 1 - j
                    idx.append(j)
        x = _op("index_select", (x, Tensor(idx, _dt.int64)), axis=d)
    return x


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 (numpy's name)
    """The edges of `bins` equal bins over range (default: the data's min and max)."""
    a = _op("reshape", (_t(a, "histogram_bin_edges"),), shape=(-1,))
    if not is_int(bins) or bins < 1:
        raise NotImplementedError("histogram_bin_edges: bins must be a positive int in pijit")
    if range is None:
        lo = _op("cast", (_op("min", (a,), axis=None, keepdims=False),), dtype=_dt.float32)
        hi = _op("cast", (_op("max", (a,), axis=None, keepdims=False),), dtype=_dt.float32)
    else:
        lo, hi = (_t(float(v)) for v in range)
    same = _op("eq", (lo, hi))
    lo = _op("where", (same, lo - 0.5, lo))
    hi = _op("where", (same, hi + 0.5, hi))
    steps = _op("arange", (), start=0.0, stop=float(bins + 1), step=1.0, dtype=_dt.float32)
    return lo + (hi - lo) * (steps / float(bins))


__all__ = ["array", "asarray", "asfarray", "ones", "zeros", "full", "arange", "linspace",
           "logspace", "eye", "identity", "empty", "empty_like", "ones_like", "zeros_like",
           "full_like", "diagonal", "tril", "triu", "tri", "trace", "meshgrid", "diagflat", "diag",
           "diag_indices", "ix_", "indices", "geomspace", "vander", "hamming", "hanning",
           "bartlett", "blackman", "triu_indices", "tril_indices", "triu_indices_from",
           "tril_indices_from", "histogram_bin_edges", "pad"]
