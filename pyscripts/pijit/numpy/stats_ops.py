"""mindspore.numpy's histograms, interpolation, convolution, gradients and random draws, with
numpy's meaning and MindSpore's 32-bit defaults (Python data becomes int32 / float32; counts are
int32 unless weighted or a density).

Bins follow numpy: `bins` equal-width bins over `range` (the data's min and max by default; a
zero-width range widens to +-0.5), or a sequence of monotonically increasing edges; each bin is
half-open [e_i, e_i+1) except the last, which holds its right edge; values outside the edges are
not counted. Edges are computed in float64 as numpy's linspace does, then stored at the data's
float dtype (float32 for integer data)."""
import builtins
import math

from pijit import _C
from pijit import dtype as _dt
from pijit import creation as _creation
from pijit._ops_common import op as _op
from pijit.numpy._utils import tensor as _tensor, float_of as _float, cast as _cast, \
    is_int as _is_int, check_axis as _check_axis, shape_of as _shape_of


def array_str(a):
    """The string of a Tensor's values, as print shows them."""
    if not isinstance(a, _C.TensorBase):
        raise TypeError("For 'array_str', the input must be a Tensor, but got %s" % type(a).__name__)
    return str(a)


def _flat(x):
    return _op("reshape", (x,), shape=(-1,))


def _count(idx, weights, n, dtype):
    """Per-bin sums of weights (ones when None) of the flat int64 bin indices idx (-1: not
    counted), a length-n vector."""
    keep = _op("ge", (idx, _C.as_operand(0, idx)))
    safe = _op("where", (keep, idx, _C.as_operand(0, idx)))
    w = _creation.ones(tuple(idx.shape), dtype=dtype) if weights is None else _cast(weights, dtype)
    w = _op("where", (keep, w, _C.as_operand(0, w)))
    from pijit import ops
    return ops.bincount(safe, w, n)[:n]


def bincount(x, weights=None, minlength=0, length=None):
    """The number of occurrences of each value of the non-negative 1-D int tensor x (the sum of
    weights at it when given): max(x) + 1 values, at least minlength, exactly length when given
    (larger values not counted). int32 counts, or the weights' float dtype."""
    t = _tensor(x, "bincount")
    if t.ndim != 1 or t.dtype.is_floating_point or t.dtype is _dt.bool_:
        raise TypeError("For 'bincount', 'x' must be a 1-D tensor of integers, but got %s %s"
                        % (tuple(t.shape), t.dtype))
    if not _is_int(minlength) or minlength < 0:
        raise ValueError("For 'bincount', 'minlength' must be a non-negative int, but got %r"
                         % (minlength,))
    vals = t.tolist()
    if builtins.any(v < 0 for v in vals):
        raise ValueError("For 'bincount', the values of 'x' must be non-negative")
    n = length if length is not None else builtins.max([minlength] + [v + 1 for v in vals])
    idx = _op("cast", (t,), dtype=_dt.int64)
    idx = _op("where", (_op("lt", (idx, _C.as_operand(n, idx))), idx, _C.as_operand(-1, idx)))
    if weights is None:
        return _op("cast", (_count(idx, None, n, _dt.float64),), dtype=_dt.int32)
    w = _float(_tensor(weights, "bincount"))
    if tuple(w.shape) != tuple(t.shape):
        raise ValueError("For 'bincount', 'weights' must have the shape of 'x' %s, but got %s"
                         % (tuple(t.shape), tuple(w.shape)))
    return _count(idx, w, n, w.dtype)


def _edges(who, x, bins, rng):
    """(edges as a list of Python floats, their tensor at x's float dtype)."""
    dt = x.dtype if x.dtype.is_floating_point else _dt.float32
    if _is_int(bins):
        if bins < 1:
            raise ValueError("For '%s', 'bins' must be a positive int, but got %d" % (who, bins))
        if rng is None:
            if x.size == 0:
                lo, hi = 0.0, 1.0
            else:
                lo, hi = float(_op("min", (x,), axis=None, keepdims=False).item()), \
                    float(_op("max", (x,), axis=None, keepdims=False).item())
        else:
            lo, hi = float(rng[0]), float(rng[1])
            if lo > hi:
                raise ValueError("For '%s', 'range' must be (min, max) with min <= max, but got %r"
                                 % (who, tuple(rng)))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError("For '%s', the range [%r, %r] is not finite" % (who, lo, hi))
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
        edges[-1] = hi
    else:
        e = bins.tolist() if isinstance(bins, _C.TensorBase) else list(bins)
        edges = [float(v) for v in e]
        if len(edges) < 2 or builtins.any(b < a for a, b in zip(edges, edges[1:])):
            raise ValueError("For '%s', 'bins' must increase monotonically, when an array" % who)
    from pijit.tensor import Tensor
    return edges, Tensor(edges, dt)


def _bin_index(x, edges_t, nb):
    """The bin of each element of the flat x (-1 outside the edges)."""
    from pijit import ops
    xe = _op("cast", (x,), dtype=edges_t.dtype) if x.dtype is not edges_t.dtype else x
    i = _op("cast", (ops.searchsorted(edges_t, xe, right=True),), dtype=_dt.int64) - 1
    last = edges_t[nb:nb + 1]
    i = _op("where", (_op("eq", (xe, last)), _C.as_operand(nb - 1, i), i))
    ok = _op("logical_and", (_op("ge", (i, _C.as_operand(0, i))),
                             _op("lt", (i, _C.as_operand(nb, i)))))
    return _op("where", (ok, i, _C.as_operand(-1, i)))


def _hist_dd(who, cols, bins, rng, weights, density):
    """The D-dimensional histogram of the D flat columns: (counts, [edge tensors])."""
    d = len(cols)
    if _is_int(bins) or isinstance(bins, _C.TensorBase) and bins.ndim == 1 and d == 1:
        bins = [bins] * d
    bins = list(bins)
    if len(bins) != d:
        raise ValueError("For '%s', 'bins' must give one entry per dimension (%d), but got %d"
                         % (who, d, len(bins)))
    rng = [None] * d if rng is None else list(rng)
    if len(rng) != d:
        raise ValueError("For '%s', 'range' must give one (min, max) per dimension" % who)
    w = None
    if weights is not None:
        w = _flat(_float(_tensor(weights, who)))
        if tuple(w.shape) != tuple(cols[0].shape):
            raise ValueError("For '%s', 'weights' must have one value per sample (%d), but got %s"
                             % (who, cols[0].shape[0], tuple(w.shape)))
    edges, idx, sizes = [], None, []
    for c, b, r in zip(cols, bins, rng):
        e, et = _edges(who, c, b, r)
        nb = len(e) - 1
        i = _bin_index(c, et, nb)
        if idx is None:
            idx = i
        else:
            bad = _op("logical_or", (_op("lt", (idx, _C.as_operand(0, idx))),
                                     _op("lt", (i, _C.as_operand(0, i)))))
            idx = _op("where", (bad, _C.as_operand(-1, idx), idx * nb + i))
        edges.append((e, et))
        sizes.append(nb)
    total = 1
    for s in sizes:
        total *= s
    wdt = w.dtype if w is not None else _dt.float32
    hist = _op("reshape", (_count(idx, w, total, wdt if (w is not None or density) else _dt.float64),),
               shape=tuple(sizes))
    if density:
        # each count over the total and the bin's volume (the product of its widths)
        vol = None
        for k, (e, _) in enumerate(edges):
            from pijit.tensor import Tensor
            width = Tensor([b - a for a, b in zip(e, e[1:])], hist.dtype)
            shp = [1] * d
            shp[k] = -1
            width = _op("reshape", (width,), shape=tuple(shp))
            vol = width if vol is None else vol * width
        s = _op("sum", (hist,), axis=None, keepdims=False)
        hist = hist / s / vol
    elif w is None:
        hist = _op("cast", (hist,), dtype=_dt.int32)
    return hist, [et for _, et in edges]


def histogram(a, bins=10, range=None, weights=None, density=False):  # noqa: A002
    """(hist, bin_edges) of the flattened a; see the module notes for bins."""
    x = _flat(_tensor(a, "histogram"))
    if not _is_int(bins) and not isinstance(bins, (list, tuple, _C.TensorBase)):
        raise TypeError("For 'histogram', 'bins' must be an int or a sequence, but got %s"
                        % type(bins).__name__)
    hist, edges = _hist_dd("histogram", [x], [bins], None if range is None else [range], weights,
                           density)
    return hist, edges[0]


def histogram2d(x, y, bins=10, range=None, weights=None, density=False):  # noqa: A002
    """(H, xedges, yedges): the 2-D histogram of the points (x[i], y[i]); bins an int, a pair of
    ints, an edge sequence or a pair of them."""
    tx, ty = _flat(_tensor(x, "histogram2d")), _flat(_tensor(y, "histogram2d"))
    if tuple(tx.shape) != tuple(ty.shape):
        raise ValueError("For 'histogram2d', 'x' and 'y' must have one length, but got %d and %d"
                         % (tx.shape[0], ty.shape[0]))
    if _is_int(bins):
        bins = [bins, bins]
    elif isinstance(bins, _C.TensorBase) or (isinstance(bins, (list, tuple)) and len(bins) != 2):
        bins = [bins, bins]
    hist, edges = _hist_dd("histogram2d", [tx, ty], bins, range, weights, density)
    return hist, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=False):  # noqa: A002
    """(H, [edges of each dim]): the histogram of the N points of the (N, D) sample (or of a list
    of D 1-D tensors)."""
    if isinstance(sample, (list, tuple)) and sample and isinstance(sample[0], _C.TensorBase):
        cols = [_flat(_tensor(s, "histogramdd")) for s in sample]
    else:
        t = _tensor(sample, "histogramdd")
        if t.ndim == 1:
            t = _op("reshape", (t,), shape=(-1, 1))
        if t.ndim != 2:
            raise ValueError("For 'histogramdd', 'sample' must be (N, D), but got %s"
                             % (tuple(t.shape),))
        cols = [t[:, k] for k in builtins.range(t.shape[1])]
    if _is_int(bins):
        bins = [bins] * len(cols)
    return _hist_dd("histogramdd", cols, bins, range, weights, density)


def interp(x, xp, fp, left=None, right=None):
    """Piecewise-linear interpolation of the points (xp, fp) (xp increasing) at x; left / right
    (fp[0] / fp[-1] by default) beyond the ends."""
    from pijit import ops
    tx = _float(_tensor(x, "interp"))
    txp, tfp = _float(_tensor(xp, "interp")), _float(_tensor(fp, "interp"))
    if txp.ndim != 1 or tuple(txp.shape) != tuple(tfp.shape) or txp.shape[0] == 0:
        raise ValueError("For 'interp', 'xp' and 'fp' must be 1-D of one non-zero length, but got "
                         "%s and %s" % (tuple(txp.shape), tuple(tfp.shape)))
    n = txp.shape[0]
    dt = tx.dtype
    txp, tfp = _cast(txp, dt), _cast(tfp, dt)
    if n == 1:
        mid = _creation.full(tuple(tx.shape), tfp.item(), dtype=dt)
    else:
        j = _op("cast", (ops.searchsorted(txp, tx, right=True),), dtype=_dt.int64)
        j = ops.clamp(j, 1, n - 1)
        x0, x1 = ops.gather(txp, j - 1, 0), ops.gather(txp, j, 0)
        f0, f1 = ops.gather(tfp, j - 1, 0), ops.gather(tfp, j, 0)
        mid = f0 + (tx - x0) * (f1 - f0) / (x1 - x0)
    lv = tfp[0:1] if left is None else _C.as_operand(float(left), tx)
    rv = tfp[n - 1:n] if right is None else _C.as_operand(float(right), tx)
    out = _op("where", (_op("lt", (tx, txp[0:1])), lv + tx * 0, mid))
    out = _op("where", (_op("gt", (tx, txp[n - 1:n])), rv + tx * 0, out))
    # x equal to the last point takes fp[-1] exactly (numpy's rule)
    return _op("where", (_op("eq", (tx, txp[n - 1:n])), tfp[n - 1:n] + tx * 0, out))


def _sliding(a, n_out, m):
    """(n_out, m) windows a[k:k+m] of the 1-D a, gathered."""
    from pijit.tensor import Tensor
    idx = Tensor([[k + j for j in builtins.range(m)] for k in builtins.range(n_out)], _dt.int64)
    return a[idx]


def correlate(a, v, mode="valid"):
    """c[k] = sum_n a[n + k] v[n] of 1-D a and v ('valid': where they fully overlap, 'same':
    max(len) values centred, 'full': every overlap). v longer than a swaps them and reverses
    the result, as numpy does."""
    ta, tv = _tensor(a, "correlate"), _tensor(v, "correlate")
    if ta.ndim != 1 or tv.ndim != 1:
        raise ValueError("For 'correlate', 'a' and 'v' must be 1-D, but got %d-D and %d-D"
                         % (ta.ndim, tv.ndim))
    if ta.shape[0] == 0 or tv.shape[0] == 0:
        raise ValueError("For 'correlate', 'a' and 'v' must not be empty")
    if mode not in ("valid", "same", "full"):
        raise ValueError("For 'correlate', 'mode' must be 'valid', 'same' or 'full', but got %r"
                         % (mode,))
    from pijit import ops
    swap = tv.shape[0] > ta.shape[0]
    if swap:
        ta, tv = tv, ta
    la, lv = ta.shape[0], tv.shape[0]
    if mode == "valid":
        lo, hi = 0, 0
    elif mode == "same":
        lo, hi = lv // 2, lv - 1 - lv // 2
    else:
        lo, hi = lv - 1, lv - 1
    dt = ta.dtype if ta.dtype is tv.dtype else (_dt.float32 if (ta.dtype.is_floating_point or
                                                              tv.dtype.is_floating_point)
                                                else _dt.int32)
    ta, tv = _cast(ta, dt), _cast(tv, dt)
    pad = ops.concat((_creation.zeros((lo,), dtype=dt), ta, _creation.zeros((hi,), dtype=dt)), 0)
    n_out = la + lo + hi - lv + 1
    out = _op("sum", (_sliding(pad, n_out, lv) * tv,), axis=(1,), keepdims=False)
    if swap:
        out = out[::-1]
    return out


def convolve(a, v, mode="full"):
    """The discrete linear convolution of 1-D a and v: correlate with v reversed."""
    ta, tv = _tensor(a, "convolve"), _tensor(v, "convolve")
    if tv.ndim != 1 or ta.ndim != 1:
        raise ValueError("For 'convolve', 'a' and 'v' must be 1-D, but got %d-D and %d-D"
                         % (ta.ndim, tv.ndim))
    if tv.shape[0] > ta.shape[0]:
        ta, tv = tv, ta
    return correlate(ta, tv[::-1], mode)


def cumprod(a, axis=None, dtype=None):
    """The running product along axis (of the flattened a when None)."""
    from pijit import ops
    t = _cast(_tensor(a, "cumprod"), dtype)
    if axis is None:
        return ops.cumprod(_flat(t), 0)
    return ops.cumprod(t, _check_axis("cumprod", axis, t.ndim))


def _diff_along(f, axis, h, edge_order):
    """numpy's gradient of f along axis with spacing h (a number or a 1-D coordinate tensor)."""
    n = f.shape[axis]
    if n < edge_order + 1:
        raise ValueError("For 'gradient', the shape of each dimension must be at least "
                         "edge_order + 1 (%d), but got %d" % (edge_order + 1, n))

    def s(a, b):
        return f[(slice(None),) * axis + (slice(a, b),)]

    if not isinstance(h, _C.TensorBase):
        inner = (s(2, None) - s(None, -2)) / (2.0 * h)
        if edge_order == 1:
            first = (s(1, 2) - s(0, 1)) / h
            last = (s(n - 1, n) - s(n - 2, n - 1)) / h
        else:
            first = (s(0, 1) * -1.5 + s(1, 2) * 2.0 - s(2, 3) * 0.5) / h
            last = (s(n - 3, n - 2) * 0.5 - s(n - 2, n - 1) * 2.0 + s(n - 1, n) * 1.5) / h
    else:
        if edge_order != 1:
            raise ValueError("For 'gradient', coordinate spacing supports edge_order 1 only")
        shp = [1] * f.ndim
        shp[axis] = -1
        d = h[1:] - h[:-1]
        d = _op("reshape", (d,), shape=tuple(shp))
        d1 = d[(slice(None),) * axis + (slice(None, -1),)]
        d2 = d[(slice(None),) * axis + (slice(1, None),)]
        # the second-order central difference for uneven steps
        a = -d2 / (d1 * (d1 + d2))
        b = (d2 - d1) / (d1 * d2)
        c = d1 / (d2 * (d1 + d2))
        inner = a * s(None, -2) + b * s(1, -1) + c * s(2, None)
        first = (s(1, 2) - s(0, 1)) / d[(slice(None),) * axis + (slice(0, 1),)]
        last = (s(n - 1, n) - s(n - 2, n - 1)) / d[(slice(None),) * axis + (slice(n - 2, n - 1),)]
    from pijit import ops
    return ops.concat((first, inner, last), axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    """numpy's gradient: central differences inside, one-sided (edge_order 1 or 2) at the ends;
    varargs are the spacings: none (1), one number for every axis, or one number or 1-D
    coordinate tensor per axis. One tensor for one axis, else a list."""
    t = _float(_tensor(f, "gradient"))
    if edge_order not in (1, 2):
        raise ValueError("For 'gradient', 'edge_order' must be 1 or 2, but got %r" % (edge_order,))
    if axis is None:
        axes = list(builtins.range(t.ndim))
    elif isinstance(axis, (list, tuple)):
        axes = [_check_axis("gradient", a, t.ndim) for a in axis]
    else:
        axes = [_check_axis("gradient", axis, t.ndim)]
    if not varargs:
        hs = [1.0] * len(axes)
    elif len(varargs) == 1 and not isinstance(varargs[0], (_C.TensorBase, list, tuple)):
        hs = [float(varargs[0])] * len(axes)
    elif len(varargs) == len(axes):
        hs = []
        for h, a in zip(varargs, axes):
            if isinstance(h, (_C.TensorBase, list, tuple)):
                h = _cast(_float(_tensor(h, "gradient")), t.dtype)
                if h.ndim == 0:
                    h = float(h.item())
                elif h.ndim != 1 or h.shape[0] != t.shape[a]:
                    raise ValueError("For 'gradient', a coordinate array must be 1-D and match "
                                     "the length of its axis (%d), but got %s"
                                     % (t.shape[a], tuple(h.shape)))
            else:
                h = float(h)
            hs.append(h)
    else:
        raise TypeError("For 'gradient', give no spacing, one, or one per axis (%d), but got %d"
                        % (len(axes), len(varargs)))
    out = [_diff_along(t, a, h, edge_order) for a, h in zip(axes, hs)]
    return out[0] if len(out) == 1 else out


def unwrap(p, discont=math.pi, axis=-1):
    """p with each jump larger than discont between neighbours along axis taken back by a
    multiple of 2 pi (the phase unwrapped)."""
    from pijit import ops
    t = _float(_tensor(p, "unwrap"))
    a = _check_axis("unwrap", axis, t.ndim)
    n = t.shape[a]
    if n < 2:
        return t
    pre = (slice(None),) * a
    dd = t[pre + (slice(1, None),)] - t[pre + (slice(None, -1),)]
    two_pi = 2.0 * math.pi
    # (dd + pi) mod 2 pi - pi, with the mod of a floating value taken as Python's (the sign of
    # the divisor), and +pi kept where the jump is positive (numpy's rule)
    ddmod = ops.floor_mod(dd + math.pi, _C.as_operand(two_pi, dd)) - math.pi
    ddmod = _op("where", (_op("logical_and", (_op("eq", (ddmod, _C.as_operand(-math.pi, dd))),
                                              _op("gt", (dd, _C.as_operand(0.0, dd))))),
                          _C.as_operand(math.pi, dd), ddmod))
    corr = ddmod - dd
    corr = _op("where", (_op("lt", (_op("abs", (dd,)), _C.as_operand(float(discont), dd))),
                         _C.as_operand(0.0, dd), corr))
    cum = ops.cumsum(corr, a)
    return ops.concat((t[pre + (slice(0, 1),)], t[pre + (slice(1, None),)] + cum), a)


class _Grid(object):
    """mgrid / ogrid: grid[a:b:step, ...]; a complex step (5j) means that many points from a to b
    inclusive."""

    def __init__(self, sparse):
        self.sparse = sparse

    @staticmethod
    def _axis(sl):
        if not isinstance(sl, slice):
            raise TypeError("the index of mgrid / ogrid must be slices, got %r" % (sl,))
        start = 0 if sl.start is None else sl.start
        step = 1 if sl.step is None else sl.step
        if isinstance(step, complex):
            num = int(abs(step))
            stop = sl.stop
            return _creation.linspace(float(start), float(stop), num, None)
        if builtins.all(_is_int(v) for v in (start, sl.stop, step)):
            return _op("cast", (_creation.arange(start, sl.stop, step),), dtype=_dt.int32)
        return _op("cast", (_creation.arange(float(start), float(sl.stop), float(step)),),
                   dtype=_dt.float32)

    def __getitem__(self, key):
        single = not isinstance(key, tuple)
        keys = (key,) if single else key
        vecs = [self._axis(k) for k in keys]
        if single:
            return vecs[0]
        if any(v.dtype.is_floating_point for v in vecs):
            vecs = [_op("cast", (v,), dtype=_dt.float32) for v in vecs]
        d = len(vecs)
        out = []
        shape = tuple(v.shape[0] for v in vecs)
        for k, v in enumerate(vecs):
            shp = [1] * d
            shp[k] = -1
            g = _op("reshape", (v,), shape=tuple(shp))
            out.append(g if self.sparse else _op("broadcast_to", (g,), shape=shape))
        if self.sparse:
            return out
        from pijit import ops
        return ops.stack(out, 0)


mgrid = _Grid(False)
ogrid = _Grid(True)


def _shape_args(who, shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _shape_of(who, tuple(shape))


def rand(*shape, dtype=_dt.float32):
    """Uniform samples in [0, 1) of the given shape (ints or one tuple), float32 by default."""
    dt = _dt.as_dtype(dtype)
    if not dt.is_floating_point:
        raise TypeError("For 'rand', 'dtype' must be a float type, but got %s" % dt)
    return _creation.rand(_shape_args("rand", shape), dtype=dt)


def randn(*shape, dtype=_dt.float32):
    """Standard normal samples of the given shape, float32 by default."""
    dt = _dt.as_dtype(dtype)
    if not dt.is_floating_point:
        raise TypeError("For 'randn', 'dtype' must be a float type, but got %s" % dt)
    return _creation.randn(_shape_args("randn", shape), dtype=dt)


def randint(minval, maxval=None, shape=None, dtype=_dt.int32):
    """Integers in [minval, maxval) ([0, minval) when maxval is None) of shape (a 0-d tensor when
    None), int32 by default."""
    if maxval is None:
        minval, maxval = 0, minval
    if not (_is_int(minval) and _is_int(maxval)):
        raise TypeError("For 'randint', 'minval' and 'maxval' must be ints, but got %r and %r"
                        % (minval, maxval))
    if minval >= maxval:
        raise ValueError("For 'randint', 'minval' (%d) must be less than 'maxval' (%d)"
                         % (minval, maxval))
    dt = _dt.as_dtype(dtype)
    if dt.is_floating_point or dt is _dt.bool_:
        raise TypeError("For 'randint', 'dtype' must be an int type, but got %s" % dt)
    s = () if shape is None else _shape_of("randint", shape)
    return _creation.randint(minval, maxval, s, dtype=dt)


__all__ = ["array_str", "bincount", "convolve", "correlate", "cumprod", "gradient", "histogram",
           "histogram2d", "histogramdd", "interp", "mgrid", "ogrid", "rand", "randint", "randn",
           "unwrap"]
