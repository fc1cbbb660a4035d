"""mindspore.numpy's math functions over pijit tensors: elementwise arithmetic and functions,
reductions (axis/keepdims as numpy spells them), products (dot, matmul, tensordot, kron),
differences, polynomials and norms."""
import builtins
import math

from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit.numpy._utils import (is_int, tensor as _t, operands as _operands, cast as _cast,
                                float_of as _float, check_axis as _axis, check_axes as _axes,
                                full as _full, prod as _prod)
from pijit.numpy.array_ops import (ravel as _ravel, moveaxis as _moveaxis,
                                   broadcast_arrays as _broadcast_arrays)


def _unary(name, op, to_float=False, doc=None):
    def f(x, dtype=None):
        x = _t(x, name)
        if to_float:
            x = _float(x)
        return _cast(op(x), dtype)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc or "Elementwise %s; dtype converts the result." % name
    return f


def _binary(name, op, doc=None):
    def f(x1, x2, dtype=None):
        a, b = _operands(x1, x2)
        return _cast(op(a, b), dtype)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc or ("Elementwise %s with broadcasting; dtype converts the result." % name)
    return f


def _r(name):
    return lambda *xs: _op(name, xs)


add = _binary("add", _r("add"))
subtract = _binary("subtract", _r("sub"))
multiply = _binary("multiply", _r("mul"))
divide = _binary("divide", _r("div"), "True division (integers give float32); dtype converts.")
true_divide = divide
floor_divide = _binary("floor_divide", _r("floor_div"))
remainder = _binary("remainder", _r("mod"),
                    "x1 - floor(x1 / x2) * x2: the remainder has the sign of x2 (Python's %).")
maximum = _binary("maximum", _r("maximum"))
minimum = _binary("minimum", _r("minimum"))


def power(x1, x2, dtype=None):
    """x1 ** x2 elementwise."""
    a, b = _operands(x1, x2)
    return _cast(_op("pow", (a, b)), dtype)


def float_power(x1, x2, dtype=None):
    """x1 ** x2 computed in float64."""
    a, b = _t(x1, "float_power"), _t(x2, "float_power")
    out = _op("pow", (_cast(a, _dt.float64), _cast(b, _dt.float64)))
    return _cast(out, dtype)


def fmod(x1, x2, dtype=None):
    """The remainder with the sign of x1 (C's fmod): x1 - trunc(x1 / x2) * x2."""
    a, b = _operands(x1, x2)
    if a.dtype.is_floating_point or b.dtype.is_floating_point:
        q = _op("div", (a, b))
        q = _op("mul", (_op("sign", (q,)), _op("floor", (_op("abs", (q,)),))))
        return _cast(a - q * b, dtype)
    r = _op("mod", (_op("abs", (a,)), _op("abs", (b,))))
    return _cast(_op("mul", (r, _op("sign", (a,)))), dtype)


absolute = _unary("absolute", _r("abs"))
negative = _unary("negative", _r("neg"))
positive = _unary("positive", lambda x: _op("copy", (x,)))
square = _unary("square", _r("square"))
sqrt = _unary("sqrt", _r("sqrt"), True)
cbrt = _unary("cbrt", lambda x: _op("mul", (_op("sign", (x,)),
                                             _op("pow", (_op("abs", (x,)), _C.as_operand(1.0 / 3, x))))),
              True, "The cube root, real for negative x (sign(x) * |x| ** (1/3)).")
reciprocal = _unary("reciprocal", _r("reciprocal"), True)
exp = _unary("exp", _r("exp"), True)
expm1 = _unary("expm1", _r("expm1"), True)
exp2 = _unary("exp2", lambda x: _op("pow", (_C.as_operand(2.0, x), x)), True)
log = _unary("log", _r("log"), True)
log1p = _unary("log1p", _r("log1p"), True)
log2 = _unary("log2", lambda x: _op("log", (x,)) * (1.0 / math.log(2.0)), True)
log10 = _unary("log10", lambda x: _op("log", (x,)) * (1.0 / math.log(10.0)), True)
floor = _unary("floor", _r("floor"), True)
ceil = _unary("ceil", _r("ceil"), True)
trunc = _unary("trunc", lambda x: _op("mul", (_op("sign", (x,)), _op("floor", (_op("abs", (x,)),)))),
               True, "Rounds towards zero.")
fix = trunc
rint = _unary("rint", _r("round"), True, "Rounds to the nearest integer, halves to even.")
sign = _unary("sign", _r("sign"))
sin = _unary("sin", _r("sin"), True)
cos = _unary("cos", _r("cos"), True)
tan = _unary("tan", _r("tan"), True)
tanh = _unary("tanh", _r("tanh"), True)
sinh = _unary("sinh", lambda x: (_op("expm1", (x,)) - _op("expm1", (-x,))) * 0.5, True,
              "(e^x - e^-x) / 2, computed with expm1 so small x keep their precision.")
cosh = _unary("cosh", lambda x: (_op("exp", (x,)) + _op("exp", (-x,))) * 0.5, True)
arcsinh = _unary("arcsinh", lambda x: _op("sign", (x,)) * _op("log1p", (
    _op("abs", (x,)) + _op("square", (x,)) / (_op("sqrt", (_op("square", (x,)) + 1.0,)) + 1.0),)),
    True, "sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))).")
arccosh = _unary("arccosh", lambda x: _op("log", (x + _op("sqrt", (_op("square", (x,)) - 1.0,)),)),
                 True)
arctanh = _unary("arctanh", lambda x: _op("log1p", (x * 2.0 / (1.0 - x),)) * 0.5, True)
deg2rad = _unary("deg2rad", lambda x: x * (math.pi / 180.0), True)
radians = deg2rad
rad2deg = _unary("rad2deg", lambda x: x * (180.0 / math.pi), True)


def around(a, decimals=0):
    """Rounds half to even to decimals places."""
    from pijit.ops import functional as F
    return F.round(_t(a, "around"), decimals=decimals)


def clip(a, a_min, a_max, dtype=None):
    """a limited to [a_min, a_max] (either may be None; numbers or tensors)."""
    a = _t(a, "clip")
    if a_min is None and a_max is None:
        raise ValueError("clip: a_min and a_max cannot both be None")
    if isinstance(a_min, _C.TensorBase) or isinstance(a_max, _C.TensorBase):
        if a_min is not None:
            a = _op("maximum", _operands(a, a_min))
        if a_max is not None:
            a = _op("minimum", _operands(a, a_max))
        return _cast(a, dtype)
    return _cast(_op("clamp", (a,), min=a_min, max=a_max), dtype)


def heaviside(x1, x2, dtype=None):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    a, b = _operands(x1, x2)
    one, zero = _C.as_operand(1, a), _C.as_operand(0, a)
    pos = _op("where", (_op("gt", (a, zero)), one, zero))
    return _cast(_op("where", (_op("eq", (a, zero)),) + _operands(b, pos)), dtype)


def hypot(x1, x2, dtype=None):
    a, b = _operands(x1, x2)
    return _cast(_op("sqrt", (_float(_op("square", (a,)) + _op("square", (b,))),)), dtype)


def logaddexp(x1, x2, dtype=None):
    """log(exp(x1) + exp(x2)) without overflow: max + log1p(exp(-|x1 - x2|))."""
    a, b = _operands(x1, x2)
    a, b = _float(a), _float(b)
    m = _op("maximum", (a, b))
    return _cast(m + _op("log1p", (_op("exp", (-_op("abs", (a - b,)),)),)), dtype)


def logaddexp2(x1, x2, dtype=None):
    """log2(2**x1 + 2**x2)."""
    a, b = _operands(x1, x2)
    a, b = _float(a), _float(b)
    m = _op("maximum", (a, b))
    ln2 = math.log(2.0)
    d = _op("exp", (-_op("abs", (a - b,)) * ln2,))
    return _cast(m + _op("log1p", (d,)) * (1.0 / ln2), dtype)


def divmod_(x1, x2, dtype=None):
    return floor_divide(x1, x2, dtype), remainder(x1, x2, dtype)


# ---- reductions ----------------------------------------------------------------------------------

def _reduce(who, name, a, axis, keepdims):
    a = _t(a, who)
    return _op(name, (a,), axis=_axes(who, axis, a.ndim), keepdims=bool(keepdims))


def sum_(a, axis=None, dtype=None, keepdims=False, initial=None):
    """The sum over axis (None: every element); dtype converts the input first, initial is added.
    bool and int inputs keep an integer sum."""
    a = _cast(_t(a, "sum"), dtype)
    if a.dtype is _dt.bool_:
        a = _op("cast", (a,), dtype=_dt.int32)
    out = _op("sum", (a,), axis=_axes("sum", axis, a.ndim), keepdims=bool(keepdims))
    if out.dtype is not a.dtype:  # integers keep their width
        out = _op("cast", (out,), dtype=a.dtype)
    if initial is not None:
        out = out + initial
    return out


def mean(a, axis=None, keepdims=False, dtype=None):
    """The arithmetic mean over axis; integer inputs give float32."""
    a = _float(_t(a, "mean"))
    return _cast(_op("mean", (a,), axis=_axes("mean", axis, a.ndim), keepdims=bool(keepdims)),
                 dtype)


def _moment(who, name, x, axis, ddof, keepdims):
    x = _float(_t(x, who))
    if not is_int(ddof):
        raise TypeError("%s: ddof must be an int, got %r" % (who, ddof))
    return _op(name, (x,), axis=_axes(who, axis, x.ndim), keepdims=bool(keepdims), ddof=ddof)


def var(x, axis=None, ddof=0, keepdims=False):
    """The variance sum((x - mean)^2) / (N - ddof) over axis."""
    return _moment("var", "var", x, axis, ddof, keepdims)


def std(x, axis=None, ddof=0, keepdims=False):
    """The standard deviation sqrt(var(x, axis, ddof))."""
    return _moment("std", "std", x, axis, ddof, keepdims)


def _extreme(who, name, a, axis, keepdims, initial, where):
    a = _t(a, who)
    if where is not True and where is not None:
        if initial is None:
            raise ValueError("%s: reduction operation %s does not have an identity, so to use a "
                             "where mask one has to specify 'initial'" % (who, who))
        a = _op("where", (_t(where),) + _operands(a, initial))
    out = _op(name, (a,), axis=_axes(who, axis, a.ndim), keepdims=bool(keepdims))
    if initial is not None:
        out = _op("maximum" if name == "max" else "minimum", _operands(out, initial))
    return out


def amax(a, axis=None, keepdims=False, initial=None, where=True):
    """The maximum over axis; initial is the smallest value the result may take, where (bool,
    broadcast to a) picks the elements that count (it needs initial)."""
    return _extreme("amax", "max", a, axis, keepdims, initial, where)


def amin(a, axis=None, keepdims=False, initial=None, where=True):
    return _extreme("amin", "min", a, axis, keepdims, initial, where)


def ptp(x, axis=None, keepdims=False):
    """max - min over axis."""
    return amax(x, axis, keepdims) - amin(x, axis, keepdims)


def argmax(a, axis=None):
    """The int32 index of the first maximum (of the flattened array when axis is None)."""
    a = _t(a, "argmax")
    return _op("cast", (_op("argmax", (a,), axis=axis, keepdims=False),), dtype=_dt.int32)


def argmin(a, axis=None):
    a = _t(a, "argmin")
    return _op("cast", (_op("argmin", (a,), axis=axis, keepdims=False),), dtype=_dt.int32)


def average(x, axis=None, weights=None, returned=False):
    """The weighted mean over axis (weights 1-D along axis or of x's shape); returned also gives
    the sum of the weights."""
    x = _float(_t(x, "average"))
    if weights is None:
        out = _op("mean", (x,), axis=_axes("average", axis, x.ndim), keepdims=False)
        if not returned:
            return out
        n = x.size if axis is None else _prod(x.shape[d] for d in _axes("average", axis, x.ndim))
        return out, _full(tuple(out.shape), float(n), out.dtype)
    w = _float(_t(weights, "average"))
    if tuple(w.shape) != tuple(x.shape):
        if axis is None or not is_int(axis) or w.ndim != 1:
            raise TypeError("average: axis must be an int when the shapes of x and weights differ")
        ax = _axis("average", axis, x.ndim)
        s = [1] * x.ndim
        s[ax] = w.shape[0]
        w = _op("reshape", (w,), shape=tuple(s))
    axes = _axes("average", axis, x.ndim)
    wsum = _op("sum", (_op("broadcast_to", (w,), shape=tuple(x.shape)),), axis=axes, keepdims=False)
    out = _op("sum", (x * w,), axis=axes, keepdims=False) / wsum
    return (out, wsum) if returned else out


def count_nonzero(x, axis=None, keepdims=False):
    x = _t(x, "count_nonzero")
    nz = _op("cast", (_op("ne", (x, _C.as_operand(0, x))),), dtype=_dt.int32)
    return _op("sum", (nz,), axis=_axes("count_nonzero", axis, x.ndim), keepdims=bool(keepdims))


def _nan_to(x, value):
    return _op("where", (_op("ne", (x, x)), _C.as_operand(value, x), x))


def nansum(a, axis=None, dtype=None, keepdims=False):
    """The sum treating NaN as 0."""
    a = _t(a, "nansum")
    return sum_(_nan_to(a, 0) if a.dtype.is_floating_point else a, axis, dtype, keepdims)


def _count_not_nan(a, axis, keepdims):
    ok = _op("cast", (_op("eq", (a, a)),), dtype=a.dtype)
    return _op("sum", (ok,), axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, keepdims=False):
    """The mean of the non-NaN elements."""
    a = _float(_t(a, "nanmean"))
    axes = _axes("nanmean", axis, a.ndim)
    s = _op("sum", (_nan_to(a, 0),), axis=axes, keepdims=bool(keepdims))
    return _cast(s / _count_not_nan(a, axes, bool(keepdims)), dtype)


def nanvar(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """The variance of the non-NaN elements."""
    a = _float(_t(a, "nanvar"))
    axes = _axes("nanvar", axis, a.ndim)
    m = nanmean(a, axis, keepdims=True)
    d = _nan_to(_op("square", (a - m,)), 0)
    n = _count_not_nan(a, axes, bool(keepdims))
    return _cast(_op("sum", (d,), axis=axes, keepdims=bool(keepdims)) / (n - ddof), dtype)


def nanstd(a, axis=None, dtype=None, ddof=0, keepdims=False):
    return _cast(_op("sqrt", (nanvar(a, axis, None, ddof, keepdims),)), dtype)


def nanmax(a, axis=None, dtype=None, keepdims=False):
    """The maximum ignoring NaN (NaN where a slice is all NaN)."""
    a = _t(a, "nanmax")
    if not a.dtype.is_floating_point:
        return _cast(amax(a, axis, keepdims), dtype)
    axes = _axes("nanmax", axis, a.ndim)
    out = _op("max", (_nan_to(a, -math.inf),), axis=axes, keepdims=bool(keepdims))
    allnan = _op("eq", (_count_not_nan(a, axes, bool(keepdims)), _C.as_operand(0, out)))
    return _cast(_op("where", (allnan, _C.as_operand(math.nan, out), out)), dtype)


def nanmin(a, axis=None, dtype=None, keepdims=False):
    a = _t(a, "nanmin")
    if not a.dtype.is_floating_point:
        return _cast(amin(a, axis, keepdims), dtype)
    axes = _axes("nanmin", axis, a.ndim)
    out = _op("min", (_nan_to(a, math.inf),), axis=axes, keepdims=bool(keepdims))
    allnan = _op("eq", (_count_not_nan(a, axes, bool(keepdims)), _C.as_operand(0, out)))
    return _cast(_op("where", (allnan, _C.as_operand(math.nan, out), out)), dtype)


def cumsum(a, axis=None, dtype=None):
    """The running sum along axis (of the flattened array when None); dtype converts the input;
    bool and small ints add up in int32."""
    a = _t(a, "cumsum")
    a = _cast(a, dtype)
    if a.dtype is _dt.bool_:
        a = _op("cast", (a,), dtype=_dt.int32)
    if axis is None:
        a, axis = _ravel(a), 0
    out = _op("cumsum", (a,), axis=axis)
    return out if out.dtype is a.dtype else _op("cast", (out,), dtype=a.dtype)


def nancumsum(a, axis=None, dtype=None):
    a = _t(a, "nancumsum")
    return cumsum(_nan_to(a, 0) if a.dtype.is_floating_point else a, axis, dtype)


# ---- products ------------------------------------------------------------------------------------

def matmul(x1, x2, dtype=None):
    """numpy's matmul: 1-D operands are promoted to matrices and the added dim removed."""
    a, b = _t(x1, "matmul"), _t(x2, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: input operand does not have enough dimensions")
    return _cast(_op("matmul", (a, b)), dtype)


def dot(a, b):
    """numpy's dot: a product for scalars, the inner product for vectors, matmul for matrices, and
    for N-D arrays the sum over a's last axis and b's second-to-last."""
    a, b = _t(a, "dot"), _t(b, "dot")
    if a.ndim == 0 or b.ndim == 0:
        return _op("mul", (a, b))
    if b.ndim <= 2:
        return _op("matmul", (a, b))
    return tensordot(a, b, ((a.ndim - 1,), (b.ndim - 2,)))


def inner(a, b):
    """The sum over the last axes of a and b."""
    a, b = _t(a, "inner"), _t(b, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return _op("mul", (a, b))
    return tensordot(a, b, ((a.ndim - 1,), (b.ndim - 1,)))


def outer(a, b):
    """a (flattened) times b (flattened) as a (M, N) matrix."""
    a, b = _ravel(_t(a, "outer")), _ravel(_t(b, "outer"))
    return _op("mul", (_op("reshape", (a,), shape=(-1, 1)), _op("reshape", (b,), shape=(1, -1))))


def tensordot(a, b, axes=2):
    """The sum of products over the given axes: an int N is a's last N and b's first N; a pair of
    sequences names them."""
    a, b = _t(a, "tensordot"), _t(b, "tensordot")
    if is_int(axes):
        if axes < 0:
            raise ValueError("tensordot: axes must be non-negative, got %d" % axes)
        ax_a, ax_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if is_int(ax_a) else list(ax_a)
        ax_b = [ax_b] if is_int(ax_b) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError("tensordot: shape-mismatch for sum")
    ax_a = [_axis("tensordot", d, a.ndim) for d in ax_a]
    ax_b = [_axis("tensordot", d, b.ndim) for d in ax_b]
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError("tensordot: shape-mismatch for sum (%d vs %d)" % (a.shape[i], b.shape[j]))
    free_a = [d for d in range(a.ndim) if d not in ax_a]
    free_b = [d for d in range(b.ndim) if d not in ax_b]
    k = _prod(a.shape[d] for d in ax_a)
    ma = _op("reshape", (_op("transpose", (a,), perm=tuple(free_a + ax_a)),),
             shape=(_prod(a.shape[d] for d in free_a), k))
    mb = _op("reshape", (_op("transpose", (b,), perm=tuple(ax_b + free_b)),),
             shape=(k, _prod(b.shape[d] for d in free_b)))
    out = _op("matmul", (ma, mb))
    return _op("reshape", (out,), shape=tuple(a.shape[d] for d in free_a) +
               tuple(b.shape[d] for d in free_b))


def multi_dot(arrays):
    """dot of each array with the next (the first may be 1-D: a row; the last: a column)."""
    xs = [_t(a, "multi_dot") for a in arrays]
    if len(xs) < 2:
        raise ValueError("multi_dot: expecting at least 2 arrays")
    out = xs[0]
    for x in xs[1:]:
        out = dot(out, x)
    return out


def kron(a, b):
    """The Kronecker product: blocks a[i, j] * b."""
    a, b = _t(a, "kron"), _t(b, "kron")
    nd = builtins.max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    ia, ib = [], []
    for x, y in zip(sa, sb):
        ia += [x, 1]
        ib += [1, y]
    out = _op("mul", (_op("reshape", (a,), shape=tuple(ia)), _op("reshape", (b,), shape=tuple(ib))))
    return _op("reshape", (out,), shape=tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of vectors of length 3 (or 2: the z component alone)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = _moveaxis(_t(a, "cross"), axisa, -1)
    b = _moveaxis(_t(b, "cross"), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("cross: incompatible dimensions for cross product (dimension must be 2 or 3)")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else None
    b2 = b[..., 2] if b.shape[-1] == 3 else None
    z = a0 * b1 - a1 * b0
    if a2 is None and b2 is None:
        return z
    a2 = _op("full_like", (a0,), value=0) if a2 is None else a2
    b2 = _op("full_like", (b0,), value=0) if b2 is None else b2
    out = _op("stack", (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z), axis=-1)
    return _moveaxis(out, -1, axisc)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along axis."""
    a = _t(a, "diff")
    axis = _axis("diff", axis, a.ndim)
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            continue
        e = _t(extra, "diff")
        if e.ndim == 0:
            s = list(a.shape)
            s[axis] = 1
            e = _op("broadcast_to", (e,), shape=tuple(s))
        parts.append(e)
    if prepend is not None:
        a = _op("concat", (parts[0], a), axis=axis)
    if append is not None:
        a = _op("concat", (a, parts[-1]), axis=axis)
    head = (slice(None),) * axis
    for _ in range(n):
        hi, lo = a[head + (slice(1, None),)], a[head + (slice(None, -1),)]
        a = _op("ne", (hi, lo)) if a.dtype is _dt.bool_ else hi - lo
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array."""
    d = diff(_ravel(_t(ary, "ediff1d")))
    parts = []
    if to_begin is not None:
        parts.append(_ravel(_cast(_t(to_begin), d.dtype)))
    parts.append(d)
    if to_end is not None:
        parts.append(_ravel(_cast(_t(to_end), d.dtype)))
    return parts[0] if len(parts) == 1 else _op("concat", tuple(parts), axis=0)


def trapz(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule along axis, with sample points x or spacing dx."""
    y = _float(_t(y, "trapz"))
    axis = _axis("trapz", axis, y.ndim)
    head = (slice(None),) * axis
    avg = (y[head + (slice(1, None),)] + y[head + (slice(None, -1),)]) * 0.5
    if x is None:
        return _op("sum", (avg,), axis=(axis,), keepdims=False) * dx
    d = diff(_float(_t(x, "trapz")), axis=-1 if _t(x).ndim == 1 else axis)
    if d.ndim == 1 and y.ndim > 1:
        s = [1] * y.ndim
        s[axis] = d.shape[0]
        d = _op("reshape", (d,), shape=tuple(s))
    return _op("sum", (avg * d,), axis=(axis,), keepdims=False)


def searchsorted(a, v, side="left", sorter=None):
    """Indices at which v's elements would be inserted into the sorted 1-D a (int32)."""
    a = _t(a, "searchsorted")
    if a.ndim != 1:
        raise ValueError("searchsorted: a must be 1-D")
    if sorter is not None:
        a = _op("index_select", (a, _t(sorter, "searchsorted")), axis=0)
    v = _t(v, "searchsorted")
    if side not in ("left", "right"):
        raise ValueError("searchsorted: side must be 'left' or 'right', got %r" % (side,))
    vv = _op("expand_dims", (v,), axis=-1)
    below = _op("lt" if side == "left" else "le", _operands(a, vv))
    return _op("sum", (_op("cast", (below,), dtype=_dt.int32),), axis=(-1,), keepdims=False)


def digitize(x, bins, right=False):
    """The index of the bin each x falls in (bins increasing or decreasing)."""
    x, bins = _t(x, "digitize"), _t(bins, "digitize")
    xx = _op("expand_dims", (x,), axis=-1)
    cmp = _op("ge" if not right else "gt", _operands(xx, bins))
    inc = _op("sum", (_op("cast", (cmp,), dtype=_dt.int32),), axis=(-1,), keepdims=False)
    # Decreasing bins count from the other side.
    dec = bins.shape[0] - _op("sum", (_op("cast", (_op("gt" if not right else "ge", _operands(xx, bins)),),
                                          dtype=_dt.int32),), axis=(-1,), keepdims=False)
    if bins.shape[0] > 1:
        increasing = _op("le", (bins[0], bins[-1]))
        return _op("where", (increasing, inc, dec))
    return inc


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """The covariance matrix of the variables (rows, or columns when rowvar is False)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported")
    m = _float(_t(m, "cov"))
    if m.ndim == 1:
        m = _op("reshape", (m,), shape=(1, -1))
    if not rowvar and m.ndim == 2:
        m = _op("transpose", (m,), perm=(1, 0))
    if y is not None:
        y = _float(_t(y, "cov"))
        if y.ndim == 1:
            y = _op("reshape", (y,), shape=(1, -1))
        if not rowvar:
            y = _op("transpose", (y,), perm=(1, 0))
        m = _op("concat", (m, y), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = m.shape[1]
    c = m - _op("mean", (m,), axis=(1,), keepdims=True)
    out = _op("matmul", (c, _op("transpose", (c,), perm=(1, 0)))) / float(n - ddof)
    if out.shape == (1, 1):
        out = _op("reshape", (out,), shape=())
    return _cast(out, dtype)


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """The Pearson correlation coefficients, clipped to [-1, 1]."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return _cast(c / c, dtype)
    d = _op("sqrt", (diagonal_of(c),))
    out = c / _op("reshape", (d,), shape=(-1, 1)) / _op("reshape", (d,), shape=(1, -1))
    return _cast(_op("clamp", (out,), min=-1.0, max=1.0), dtype)


def diagonal_of(m):
    from pijit.numpy.array_creations import diagonal
    return diagonal(m)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms (ord None/2, 1, inf, -inf, 0 or any p) and the Frobenius, 1, inf and nuclear-
    free matrix norms (ord None/'fro', 1, -1, inf, -inf) as numpy.linalg.norm computes them."""
    x = _float(_t(x, "norm"))
    if axis is None:
        if ord is None:
            return _op("sqrt", (_op("sum", (_op("square", (x,)),), axis=None, keepdims=bool(keepdims)),))
        axis = tuple(range(x.ndim))
    axes = (axis,) if is_int(axis) else tuple(axis)
    axes = tuple(_axis("norm", d, x.ndim) for d in axes)
    kd = bool(keepdims)
    if len(axes) == 1:
        a = _op("abs", (x,))
        if ord is None or ord == 2:
            return _op("sqrt", (_op("sum", (_op("square", (x,)),), axis=axes, keepdims=kd),))
        if ord == math.inf:
            return _op("max", (a,), axis=axes, keepdims=kd)
        if ord == -math.inf:
            return _op("min", (a,), axis=axes, keepdims=kd)
        if ord == 0:
            return _op("sum", (_op("cast", (_op("ne", (x, _C.as_operand(0, x))),), dtype=x.dtype),),
                       axis=axes, keepdims=kd)
        if ord == 1:
            return _op("sum", (a,), axis=axes, keepdims=kd)
        if isinstance(ord, str):
            raise ValueError("norm: invalid norm order %r for vectors" % (ord,))
        s = _op("sum", (_op("pow", (a, _C.as_operand(float(ord), a))),), axis=axes, keepdims=kd)
        return _op("pow", (s, _C.as_operand(1.0 / ord, s)))
    if len(axes) != 2:
        raise ValueError("norm: improper number of dimensions to norm")
    r, c = axes
    if ord is None or ord == "fro":
        return _op("sqrt", (_op("sum", (_op("square", (x,)),), axis=axes, keepdims=kd),))
    a = _op("abs", (x,))
    if ord in (1, -1, math.inf, -math.inf):
        inner_axis, outer_axis = (r, c) if ord in (1, -1) else (c, r)
        s = _op("sum", (a,), axis=(inner_axis,), keepdims=True)
        out = _op("max" if ord in (1, math.inf) else "min", (s,), axis=(outer_axis,), keepdims=True)
        return out if kd else _op("squeeze", (out,), axis=axes)
    raise NotImplementedError("norm: matrix norm ord=%r needs singular values (not in pijit)" % (ord,))


def ravel_multi_index(multi_index, dims, mode="clip", order="C"):
    """The flat indices of coordinate arrays in an array of shape dims."""
    dims = tuple(dims)
    idx = [_t(i, "ravel_multi_index") for i in multi_index]
    if len(idx) != len(dims):
        raise ValueError("ravel_multi_index: parameter multi_index must be a sequence of length %d"
                         % len(dims))
    if order not in ("C", "F"):
        raise ValueError("ravel_multi_index: order must be 'C' or 'F'")
    out = None
    stride = 1
    order_dims = list(range(len(dims)))
    if order == "C":
        order_dims.reverse()
    for d in order_dims:
        i = idx[d]
        if mode == "clip":
            i = _op("clamp", (i,), min=0, max=dims[d] - 1)
        elif mode == "wrap":
            i = _op("mod", (i, _C.as_operand(dims[d], i)))
        term = i * stride
        out = term if out is None else out + term
        stride *= dims[d]
    return out


# ---- polynomials (coefficients highest power first, as numpy.poly*) ----------------------------

def _poly(p, who):
    p = _t(p, who)
    if p.ndim != 1:
        raise ValueError("%s: input must be 1-D" % who)
    return p


def polyadd(a1, a2):
    a, b = _poly(a1, "polyadd"), _poly(a2, "polyadd")
    n = builtins.max(a.shape[0], b.shape[0])
    a = _op("pad", (a,), pads=(n - a.shape[0], 0), mode="constant", value=0.0)
    b = _op("pad", (b,), pads=(n - b.shape[0], 0), mode="constant", value=0.0)
    return a + b


def polysub(a1, a2):
    b = _poly(a2, "polysub")
    return polyadd(a1, -b)


def polyval(p, x):
    """p[0] x^(n-1) + ... + p[n-1], by Horner's rule."""
    p = _poly(p, "polyval")
    x = _t(x, "polyval")
    out = _op("full_like", (x,), value=0) if p.shape[0] == 0 else None
    for i in range(p.shape[0]):
        out = p[i] + (x * 0 if out is None else out * x)
    return out


def polyder(p, m=1):
    """The m-th derivative's coefficients."""
    p = _poly(p, "polyder")
    for _ in range(m):
        n = p.shape[0] - 1
        if n <= 0:
            return _full((0,), 0, p.dtype)
        pw = _op("arange", (), start=float(n), stop=0.0, step=-1.0, dtype=p.dtype)
        p = p[:-1] * pw
    return p


def polyint(p, m=1, k=None):
    """The m-th antiderivative's coefficients; k the integration constants (0 by default)."""
    p = _float(_poly(p, "polyint"))
    ks = [0.0] * m if k is None else ([k] * m if isinstance(k, (int, float)) else list(k))
    for i in range(m):
        n = p.shape[0]
        pw = _op("arange", (), start=float(n), stop=0.0, step=-1.0, dtype=p.dtype)
        p = _op("concat", (p / pw, _full((1,), float(ks[i]), p.dtype)), axis=0)
    return p


def polymul(a1, a2):
    """The product's coefficients (a full convolution of the two)."""
    a, b = _poly(a1, "polymul"), _poly(a2, "polymul")
    na, nb = a.shape[0], b.shape[0]
    # (na, na + nb - 1): row i holds b shifted right by i; the product sums a[i] times row i.
    rows = [_op("pad", (b,), pads=(i, na - 1 - i), mode="constant", value=0.0) for i in range(na)]
    return _op("sum", (_op("stack", tuple(rows), axis=0) * _op("reshape", (a,), shape=(-1, 1)),),
               axis=(0,), keepdims=False)


def result_type(*arrays_and_dtypes):
    """The dtype MindSpore's promotion gives the arguments (tensors, data or dtypes)."""
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    ts = []
    for x in arrays_and_dtypes:
        if isinstance(x, (_dt.Type, str)):
            ts.append(_full((), 0, _dt.as_dtype(x)))
        else:
            ts.append(_t(x, "result_type"))
    out = ts[0]
    yes = _full((), True, _dt.bool_)
    for t in ts[1:]:
        out = _op("where", (yes, out, t))
    return out.dtype


def promote_types(type1, type2):
    return result_type(_dt.as_dtype(type1), _dt.as_dtype(type2))


__all__ = ["mean", "inner", "add", "subtract", "multiply", "divide", "true_divide", "power", "dot",
           "outer", "tensordot", "absolute", "std", "var", "average", "minimum", "matmul",
           "square", "sqrt", "reciprocal", "log", "maximum", "heaviside", "amax", "amin", "hypot",
           "float_power", "floor", "ptp", "deg2rad", "rad2deg", "count_nonzero", "positive",
           "negative", "clip", "floor_divide", "remainder", "fix", "fmod", "trunc", "exp", "expm1",
           "exp2", "kron", "promote_types", "divmod_", "diff", "cbrt", "cross", "ceil", "trapz",
           "log1p", "logaddexp", "log2", "logaddexp2", "log10", "ediff1d", "nansum", "nanmean",
           "nanvar", "nanstd", "cumsum", "nancumsum", "sin", "cos", "tan", "sinh", "cosh", "tanh",
           "arcsinh", "arccosh", "arctanh", "cov", "multi_dot", "nanmax", "nanmin", "argmax",
           "argmin", "searchsorted", "sum_", "corrcoef", "sign", "digitize", "around", "polyadd",
           "polysub", "polyval", "polyder", "polymul", "polyint", "result_type", "ravel_multi_index",
           "norm", "rint", "radians"]
