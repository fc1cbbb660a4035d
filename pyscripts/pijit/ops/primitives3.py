"""The third part of MindSpore's primitive classes and the functional forms paired with them:
wrappers of functional forms pijit has (Acosh, Addcdiv, Cdist, HShrink, Complex, Cross, Cummax,
IsClose, ...), in-place scatters on Parameters (ScatterMul/Div/Max/Min/Update, ScatterNd*),
segment reductions, searches and histograms, block rearrangements (SpaceToDepth, BatchToSpaceND),
windowed pools with argmax (MaxPoolWithArgmax, AdaptiveMaxPool2D), Im2Col/Col2Im, LRN, window
functions, matrix band/diagonal ops, random draws, and the optimizer update primitives
(ApplyMomentum, Adam, ...).

Everything is composed from registry ops (no kernels of its own), deciding from shapes, dtypes and
attributes only, so a call captures into the caller's graph; where MindSpore passes a shape or a
size as a Tensor (Expand, FillV2, Randperm, Bincount, MirrorPad, the V2 resizes) its values are
read, which under jit stops capture there, as for MindSpore's dynamic-shape ops.
The primitives that write Parameters in place (the Scatter*, Apply*, SGD, Adam, BatchNorm in
training) are a graph break under jit, as Assign() and AssignAdd() are; the functional scatters
(ops.scatter_mul, ...) are captured, their write replayed after the graph as ops.assign's.
Errors follow MindSpore's classes and name the primitive ("For 'ScatterMax', ...").
"""
import builtins as _b
import math as _math

from pijit import _C
from pijit import creation as _creation
from pijit import dtype as _dt
from pijit._ops_common import op as _op, as_tensor as _t
from pijit._state import runtime_state
from pijit.ops import functional as F
from pijit.ops import functional2 as F2
from pijit.ops import nn_functional as NF
from pijit.ops import primitives2 as P2
from pijit.ops.primitives import Primitive
from pijit.ops.primitives2 import (_tensor, _int, _bool, _ints, _axis, _floating, _integral, _take,
                                   _is_int)

_Tensor = _C.TensorBase
_FUNCTIONAL = []


def _export(fn):
    _FUNCTIONAL.append(fn.__name__)
    return fn


def _number(who, name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("For '%s', the '%s' must be a number, but got %r" % (who, name, v))
    return v


def _scalar(who, name, v):
    """A number, or the value of a Tensor of one element (read: a constant in a graph)."""
    if isinstance(v, _Tensor):
        if v.size != 1:
            raise ValueError("For '%s', the '%s' must hold one value, but got shape %r"
                             % (who, name, v.shape))
        return v.reshape(()).item()
    return _number(who, name, v)


def _ints_of(who, name, v):
    """A tuple of ints given as a tuple/list or a 1-D int Tensor (whose values are read)."""
    if isinstance(v, _Tensor):
        _integral(who, name, v)
        return tuple(int(e) for e in v.reshape((-1,)).tolist())
    if _is_int(v):
        return (v,)
    return _ints(who, name, v)


def _pair(who, name, v, n=2):
    if _is_int(v):
        return (v,) * n
    v = _ints(who, name, v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError("For '%s', the '%s' must be an int or %d ints, but got %r" % (who, name, n, v))
    return v


def _like(x, value):
    """A tensor of x's shape and dtype filled with `value`."""
    return _creation.full(tuple(x.shape), value, dtype=x.dtype)


def _const(data, dtype=_dt.int64):
    return _creation.tensor(data, dtype)


def _float(x):
    return x if x.dtype.is_floating_point else F.cast(x, _dt.float32)


def _work(x):
    return x if x.dtype.is_floating_point else F.cast(x, _dt.float64)


def _back(out, dtype):
    return out if out.dtype is dtype else F.cast(out, dtype)


def _amax(x, axis, keepdims=False):
    return _op("max", (x,), axis=(axis,), keepdims=keepdims)


def _amin(x, axis, keepdims=False):
    return _op("min", (x,), axis=(axis,), keepdims=keepdims)


def _lowest(dtype):
    if dtype.is_floating_point:
        return -float("inf")
    return -(1 << 63)


def _finfo(dtype):
    """(eps, max) of a floating dtype."""
    name = str(dtype).lower()
    if "float16" in name and "b" not in name:
        return 2.0 ** -10, 65504.0
    if "bfloat16" in name:
        return 2.0 ** -7, 3.3895313892515355e38
    if "float64" in name:
        return 2.0 ** -52, 1.7976931348623157e308
    return 2.0 ** -23, 3.4028234663852886e38


# ----- wrappers of functional forms ---------------------------------------------------------------

def _unary_class(name, fn, doc):
    def __call__(self, x):
        return fn(_tensor(type(self).__name__, "x", x))
    return type(name, (Primitive,), {"__call__": __call__, "__doc__": doc, "__module__": __name__})


# (Acosh, Asinh and Atanh are math2.py's, MatrixBandPart linalg.py's)
Inv = _unary_class("Inv", lambda x: F.reciprocal(x), "Inv()(x): 1 / x (reciprocal).")
ComplexAbs = _unary_class("ComplexAbs", lambda x: F.abs(x), "ComplexAbs()(x): |x| of a complex x.")
SeLU = _unary_class("SeLU", lambda x: F2.selu(x), "SeLU()(input_x): the scaled ELU.")
StopGradient = _unary_class("StopGradient", lambda x: _autodiff().stop_gradient(x),
                            "StopGradient()(x): x, with no gradient flowing back through it.")
Trace = _unary_class("Trace", lambda x: F2.trace(x), "Trace()(x): the sum of a matrix's diagonal.")
NonZero = _unary_class("NonZero", lambda x: F2.nonzero(x),
                       "NonZero()(x): the (N, rank) int64 indices of x's non-zero elements "
                       "(data-dependent: under jit capture stops here).")
MaskedSelect = type("MaskedSelect", (Primitive,), {
    "__call__": lambda self, x, mask: F2.masked_select(x, mask),
    "__doc__": "MaskedSelect()(x, mask): x's elements where mask is True, 1-D (data-dependent)."})


def _autodiff():
    from pijit import autodiff
    return autodiff


def _ops():
    import pijit.ops as ops
    return ops


class Complex(Primitive):
    """Complex()(real, imag): real + 1j * imag (float32 -> complex64, float64 -> complex128)."""

    def __call__(self, real, imag):
        return _ops().complex(_tensor(type(self).__name__, "real", real), _tensor(type(self).__name__, "imag", imag))


class Conj(Primitive):
    """Conj()(input): the complex conjugate (a real input is returned as it is)."""

    def __call__(self, input):
        return _ops().conj(_tensor(type(self).__name__, "input", input))


class Real(Primitive):
    """Real()(input): the real part (a real input is returned as it is)."""

    def __call__(self, input):
        return _ops().real(_tensor(type(self).__name__, "input", input))


class Imag(Primitive):
    """Imag()(input): the imaginary part (zeros for a real input)."""

    def __call__(self, input):
        return _ops().imag(_tensor(type(self).__name__, "input", input))


class _Lambd(Primitive):
    def __init__(self, lambd=0.5):
        _number(type(self).__name__, "lambd", lambd)
        if lambd < 0:
            raise ValueError("For '%s', the 'lambd' must be greater than or equal to 0, but got %r"
                             % (type(self).__name__, lambd))
        super().__init__(lambd=float(lambd))


class HShrink(_Lambd):
    """HShrink(lambd=0.5)(input_x): x where |x| > lambd, else 0."""

    def __call__(self, input_x):
        return F2.hardshrink(_tensor(type(self).__name__, "input_x", input_x), self.attrs["lambd"])


class SoftShrink(_Lambd):
    """SoftShrink(lambd=0.5)(input_x): x - lambd above lambd, x + lambd below -lambd, else 0."""

    def __call__(self, input_x):
        return F2.soft_shrink(_tensor(type(self).__name__, "input_x", input_x), self.attrs["lambd"])


class CeLU(Primitive):
    """CeLU(alpha=1.0)(input_x): max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def __init__(self, alpha=1.0):
        _number("CeLU", "alpha", alpha)
        if alpha == 0:
            raise ValueError("For 'CeLU', the 'alpha' can not be 0")
        super().__init__(alpha=float(alpha))

    def __call__(self, input_x):
        return F2.celu(_tensor(type(self).__name__, "input_x", input_x), self.attrs["alpha"])


class _Addc(Primitive):
    def __call__(self, input_data, x1, x2, value):
        for n, v in (("input_data", input_data), ("x1", x1), ("x2", x2)):
            _tensor(type(self).__name__, n, v)
        q = F.div(x1, x2) if self._div else F.mul(x1, x2)
        v = value if isinstance(value, _Tensor) else _number(type(self).__name__, "value", value)
        return input_data + q * v


class Addcdiv(_Addc):
    """Addcdiv()(input_data, x1, x2, value): input_data + value * x1 / x2."""
    _div = True


class Addcmul(_Addc):
    """Addcmul()(input_data, x1, x2, value): input_data + value * x1 * x2."""
    _div = False


class Cdist(Primitive):
    """Cdist(p=2.0)(input_x, input_y): the p-norm distances between the rows of two batches of
    row vectors, (B, P, M) and (B, R, M) -> (B, P, R)."""

    def __init__(self, p=2.0):
        _number("Cdist", "p", p)
        if p < 0:
            raise ValueError("For 'Cdist', the 'p' must be non-negative, but got %r" % (p,))
        super().__init__(p=float(p))

    def __call__(self, input_x, input_y):
        return F2.cdist(_tensor(type(self).__name__, "input_x", input_x), _tensor(type(self).__name__, "input_y", input_y),
                        self.attrs["p"])


class Cross(Primitive):
    """Cross(dim=-65530)(x1, x2): the 3-vector cross product along `dim` (the default: the first
    dim of size 3)."""

    def __init__(self, dim=-65530):
        super().__init__(dim=_int("Cross", "dim", dim))

    def __call__(self, x1, x2):
        d = self.attrs["dim"]
        return F2.cross(_tensor(type(self).__name__, "x1", x1), _tensor(type(self).__name__, "x2", x2),
                        None if d == -65530 else d)


class CumProd(Primitive):
    """CumProd(exclusive=False, reverse=False)(x, axis): the running product along `axis`;
    exclusive starts each with 1 (shifted by one), reverse runs from the end."""

    def __init__(self, exclusive=False, reverse=False):
        super().__init__(exclusive=_bool("CumProd", "exclusive", exclusive),
                         reverse=_bool("CumProd", "reverse", reverse))

    def __call__(self, x, axis):
        x = _tensor(type(self).__name__, "x", x)
        a = _axis(type(self).__name__, "axis", axis, x.ndim)
        return _scan_shifted(x, a, self.attrs["exclusive"], self.attrs["reverse"],
                             lambda t: F2.cumprod(t, a), 1)


def _scan_shifted(x, a, exclusive, reverse, scan, fill):
    if reverse:
        x = P2._flip(x, a)
    if exclusive:
        n = x.shape[a]
        head = _creation.full(tuple(x.shape[:a]) + (1,) + tuple(x.shape[a + 1:]), fill, dtype=x.dtype)
        x = F.concat((head, x[(slice(None),) * a + (slice(0, n - 1),)]), a)
    out = scan(x)
    return P2._flip(out, a) if reverse else out


class _CumExtreme(Primitive):
    def __init__(self, axis):
        super().__init__(axis=_int(type(self).__name__, "axis", axis))

    def __call__(self, input):
        x = _tensor(type(self).__name__, "input", input)
        a = _axis(type(self).__name__, "axis", self.attrs["axis"], x.ndim)
        return self._fn(x, a)


class Cummax(_CumExtreme):
    """Cummax(axis)(input) -> (values, indices): the running maximum along `axis` and where it
    was (int64)."""
    _fn = staticmethod(lambda x, a: F2.cummax(x, a))


class Cummin(_CumExtreme):
    """Cummin(axis)(input) -> (values, indices): the running minimum and where it was."""
    _fn = staticmethod(lambda x, a: F2.cummin(x, a))


class Diag(Primitive):
    """Diag()(input_x): shape (D1..Dk) -> (D1..Dk, D1..Dk) with input_x on the diagonal."""

    def __call__(self, input_x):
        return F2.diag(_tensor(type(self).__name__, "input_x", input_x))


def _diag_part(who, x):
    k = x.ndim // 2
    if x.ndim == 0 or x.ndim % 2 or tuple(x.shape[:k]) != tuple(x.shape[k:]):
        raise ValueError("For '%s', the input must have an even rank 2k with shape (D1..Dk, D1..Dk), "
                         "but got %r" % (who, x.shape))
    n = 1
    for s in x.shape[:k]:
        n *= s
    flat = F.reshape(x, (n * n,))
    return F.reshape(_take(flat, 0, [i * (n + 1) for i in range(n)]), tuple(x.shape[:k]))


class DiagPart(Primitive):
    """DiagPart()(input_x): the inverse of Diag: (D1..Dk, D1..Dk) -> (D1..Dk)."""

    def __call__(self, input_x):
        return _diag_part(type(self).__name__, _tensor(type(self).__name__, "input_x", input_x))


def _zero_where(cond, value):
    return F.where(cond, F.mul(value, 0), value)


class DivNoNan(Primitive):
    """DivNoNan()(x1, x2): x1 / x2, and 0 where x2 is 0."""

    def __call__(self, x1, x2):
        x1, x2 = _t(x1), _t(x2)
        zero = F.eq(x2, 0)
        q = F.div(x1, F.where(zero, _creation.ones_like(x2), x2))
        return _zero_where(zero, q)


class MulNoNan(Primitive):
    """MulNoNan()(x, y): x * y, and 0 where y is 0 (even where x is inf or nan)."""

    def __call__(self, x, y):
        x, y = _t(x), _t(y)
        p = F.mul(x, y)
        return F.where(F.eq(y, 0), _creation.zeros((), dtype=p.dtype), p)


class Xdivy(Primitive):
    """Xdivy()(x, y): x / y, and 0 where x is 0."""

    def __call__(self, x, y):
        return F2.xdivy(x, y)


class Eps(Primitive):
    """Eps()(x): a tensor of x's shape and dtype filled with the dtype's machine epsilon
    (float32: 1.1920929e-07)."""

    def __call__(self, x):
        x = _tensor(type(self).__name__, "x", x)
        if not x.dtype.is_floating_point:
            raise TypeError("For 'Eps', the dtype of 'x' must be float16, float32 or float64, but "
                            "got %s" % x.dtype)
        return _like(x, _finfo(x.dtype)[0])


class EqualCount(Primitive):
    """EqualCount()(x, y): a (1,) tensor of x's dtype counting the positions where x == y."""

    def __call__(self, x, y):
        x, y = _tensor(type(self).__name__, "x", x), _tensor(type(self).__name__, "y", y)
        if x.dtype is not y.dtype:
            raise TypeError("For 'EqualCount', 'x' and 'y' must have one dtype, but got %s and %s"
                            % (x.dtype, y.dtype))
        if x.shape != y.shape:
            raise ValueError("For 'EqualCount', 'x' and 'y' must have one shape, but got %r and %r"
                             % (x.shape, y.shape))
        return F.reshape(F.cast(F.sum(F.cast(F.eq(x, y), _dt.int64)), x.dtype), (1,))


class Expand(Primitive):
    """Expand()(x, shape): x broadcast to `shape` (a 1-D int Tensor; -1 keeps a dim)."""

    def __call__(self, x, shape):
        x = _tensor(type(self).__name__, "x", x)
        return F2.expand(x, _tensor(type(self).__name__, "shape", shape))


class FillV2(Primitive):
    """FillV2()(shape, value): a tensor of `shape` (tuple or 1-D int Tensor) filled with the
    0-D Tensor `value`, of its dtype."""

    def __call__(self, shape, value):
        s = _ints_of(type(self).__name__, "shape", shape)
        v = _tensor(type(self).__name__, "value", value)
        if v.size != 1:
            raise ValueError("For 'FillV2', the 'value' must be a 0-D Tensor, but got shape %r"
                             % (v.shape,))
        return F.broadcast_to(F.reshape(v, (1,) * len(s)), s) + _creation.zeros(s, dtype=v.dtype)


class GatherNd(Primitive):
    """GatherNd()(input_x, indices): the slices of input_x at the index vectors of indices'
    last dim."""

    def __call__(self, input_x, indices):
        return F2.gather_nd(input_x, indices)


class Ger(Primitive):
    """Ger()(x1, x2): the outer product of two 1-D tensors."""

    def __call__(self, x1, x2):
        x1, x2 = _tensor(type(self).__name__, "x1", x1), _tensor(type(self).__name__, "x2", x2)
        if x1.ndim != 1 or x2.ndim != 1:
            raise ValueError("For 'Ger', 'x1' and 'x2' must be 1-D, but got %r and %r"
                             % (x1.shape, x2.shape))
        return F2.outer(x1, x2)


class Heaviside(Primitive):
    """Heaviside()(x, values): 0 where x < 0, values where x == 0, 1 where x > 0."""

    def __call__(self, x, values):
        return F2.heaviside(x, values)


class Hypot(Primitive):
    """Hypot()(x1, x2): sqrt(x1**2 + x2**2)."""

    def __call__(self, x1, x2):
        return F2.hypot(x1, x2)


class IndexAdd(Primitive):
    """IndexAdd(axis, use_lock=True, check_index_bound=True)(input_x, indices, y): adds y's
    slices to the slices `indices` of the Parameter input_x along `axis`, in place; returns
    input_x."""

    def __init__(self, axis, use_lock=True, check_index_bound=True):
        super().__init__(axis=_int("IndexAdd", "axis", axis),
                         use_lock=_bool("IndexAdd", "use_lock", use_lock),
                         check_index_bound=_bool("IndexAdd", "check_index_bound", check_index_bound))

    @runtime_state("writes a Parameter in place")
    def __call__(self, input_x, indices, y):
        return F2.index_add(input_x, indices, y, self.attrs["axis"])


class IndexFill(Primitive):
    """IndexFill()(x, dim, index, value): x with the slices `index` along `dim` set to value."""

    def __call__(self, x, dim, index, value):
        if isinstance(dim, _Tensor):
            dim = int(dim.item())
        return F2.index_fill(x, dim, index, value)


class InvertPermutation(Primitive):
    """InvertPermutation()(input_x): the inverse of a permutation of 0..n-1 given as a tuple or
    list of ints (a constant: returns a tuple)."""

    def __call__(self, input_x):
        if isinstance(input_x, _Tensor) or not isinstance(input_x, (tuple, list)):
            raise TypeError("For 'InvertPermutation', the 'input_x' must be a tuple or list of ints, "
                            "but got %s" % type(input_x).__name__)
        p = _ints(type(self).__name__, "input_x", input_x)
        if sorted(p) != list(range(len(p))):
            raise ValueError("For 'InvertPermutation', the 'input_x' must be a permutation of "
                             "0..%d, but got %r" % (len(p) - 1, p))
        out = [0] * len(p)
        for i, v in enumerate(p):
            out[v] = i
        return tuple(out)


class IsClose(Primitive):
    """IsClose(rtol=1e-05, atol=1e-08, equal_nan=True)(input, other): |input - other| <=
    atol + rtol * |other|, elementwise."""

    def __init__(self, rtol=1e-05, atol=1e-08, equal_nan=True):
        super().__init__(rtol=float(_number("IsClose", "rtol", rtol)),
                         atol=float(_number("IsClose", "atol", atol)),
                         equal_nan=_bool("IsClose", "equal_nan", equal_nan))

    def __call__(self, input, other):
        a = self.attrs
        return F2.isclose(input, other, a["rtol"], a["atol"], a["equal_nan"])


class Logit(Primitive):
    """Logit(eps=-1.0)(x): log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps >= 0."""

    def __init__(self, eps=-1.0):
        super().__init__(eps=float(_number("Logit", "eps", eps)))

    def __call__(self, x):
        e = self.attrs["eps"]
        return F2.logit(_tensor(type(self).__name__, "x", x), e if e >= 0 else None)


class LogSpace(Primitive):
    """LogSpace(steps=10, base=10, dtype=float32)(start, end): base ** (steps evenly spaced
    exponents from start to end), start and end 0-D Tensors."""

    def __init__(self, steps=10, base=10, dtype=_dt.float32):
        _int("LogSpace", "steps", steps)
        _int("LogSpace", "base", base)
        if steps < 0:
            raise ValueError("For 'LogSpace', the 'steps' must be non-negative, but got %d" % steps)
        super().__init__(steps=steps, base=base, dtype=dtype)

    def __call__(self, start, end):
        a = self.attrs
        start, end = _tensor(type(self).__name__, "start", start), _tensor(type(self).__name__, "end", end)
        n = a["steps"]
        s = F.cast(F.reshape(start, ()), _dt.float64)
        e = F.cast(F.reshape(end, ()), _dt.float64)
        k = F.cast(_creation.arange(n), _dt.float64)
        exps = s + (e - s) * (k / float(_b.max(n - 1, 1)))
        return F.cast(F.pow(_creation.full((n,), float(a["base"]), dtype=_dt.float64), exps), a["dtype"])


class LpNorm(Primitive):
    """LpNorm(axis, p=2, keep_dims=False, epsilon=1e-12)(input): (sum |x|**p)**(1/p) over the
    axes `axis` (p = 0 counts the non-zero elements)."""

    def __init__(self, axis, p=2, keep_dims=False, epsilon=1e-12):
        axis = (axis,) if _is_int(axis) else _ints("LpNorm", "axis", axis)
        _int("LpNorm", "p", p)
        if p < 0:
            raise ValueError("For 'LpNorm', the 'p' must be non-negative, but got %d" % p)
        super().__init__(axis=axis, p=p, keep_dims=_bool("LpNorm", "keep_dims", keep_dims),
                         epsilon=float(_number("LpNorm", "epsilon", epsilon)))

    def __call__(self, input):
        x = _floating(type(self).__name__, "input", _tensor(type(self).__name__, "input", input))
        a = self.attrs
        axes = tuple(_axis(type(self).__name__, "axis", v, x.ndim) for v in a["axis"])
        if a["p"] == 0:
            return F.sum(F.cast(F.ne(x, 0), x.dtype), axes, a["keep_dims"])
        if a["p"] == 1:
            return F.sum(F.abs(x), axes, a["keep_dims"])
        s = F.sum(F.pow(F.abs(x), float(a["p"])), axes, a["keep_dims"])
        return F.sqrt(s) if a["p"] == 2 else F.pow(s, 1.0 / a["p"])


class _Seeded(Primitive):
    def __init__(self, seed=0, seed2=0, **attrs):
        _int(type(self).__name__, "seed", seed)
        _int(type(self).__name__, "seed2", seed2)
        if seed < 0 or seed2 < 0:
            raise ValueError("For '%s', 'seed' and 'seed2' must be non-negative" % type(self).__name__)
        super().__init__(seed=seed, seed2=seed2, **attrs)

    def _seed(self):
        a = self.attrs
        return (a["seed"] * 1000003 + a["seed2"]) if (a["seed"] or a["seed2"]) else None


class Multinomial(_Seeded):
    """Multinomial(seed=0, seed2=0, dtype=int32)(x, num_samples): category indices drawn with
    replacement with the (unnormalised) probabilities of each row of x."""

    def __init__(self, seed=0, seed2=0, dtype=_dt.int32):
        if dtype not in (_dt.int32, _dt.int64):
            raise TypeError("For 'Multinomial', the 'dtype' must be int32 or int64, but got %s" % dtype)
        super().__init__(seed, seed2, dtype=dtype)

    def __call__(self, x, num_samples):
        x = _tensor(type(self).__name__, "x", x)
        n = int(_scalar(type(self).__name__, "num_samples", num_samples))
        return F.cast(F2.multinomial(x, n, True, self._seed()), self.attrs["dtype"])


class Randperm(Primitive):
    """Randperm(max_length=1, pad=-1, dtype=int32)(n): a random permutation of 0..n-1 (n a (1,)
    int Tensor, read) followed by `pad` up to max_length elements."""

    def __init__(self, max_length=1, pad=-1, dtype=_dt.int32):
        _int("Randperm", "max_length", max_length)
        if max_length <= 0:
            raise ValueError("For 'Randperm', the 'max_length' must be > 0, but got %d" % max_length)
        super().__init__(max_length=max_length, pad=_int("Randperm", "pad", pad), dtype=dtype)

    def __call__(self, n):
        n = int(_scalar(type(self).__name__, "n", _tensor(type(self).__name__, "n", n)))
        a = self.attrs
        if not 0 <= n <= a["max_length"]:
            raise ValueError("For 'Randperm', the 'n' must be in [0, max_length=%d], but got %d"
                             % (a["max_length"], n))
        perm = F.sort(_creation.rand((n,)), 0)[1] if n else _creation.zeros((0,), dtype=_dt.int64)
        rest = _creation.full((a["max_length"] - n,), a["pad"], dtype=_dt.int64)
        return F.cast(F.concat((F.cast(perm, _dt.int64), rest), 0), a["dtype"])


@_export
def randperm(n, seed=0, offset=0, dtype=_dt.int64):
    """ops.randperm(n, seed=0, offset=0, dtype=int64): a random permutation of 0..n-1."""
    _int("randperm", "n", n)
    if n < 0:
        raise ValueError("For 'randperm', the 'n' must be non-negative, but got %d" % n)
    keys = _creation.rand((n,), seed=(seed * 1000003 + offset) if (seed or offset) else None)
    return F.cast(F.sort(keys, 0)[1], dtype)


class Renorm(Primitive):
    """Renorm(p, dim, maxnorm)(x): each slice along `dim` whose p-norm exceeds maxnorm scaled
    down to norm maxnorm."""

    def __init__(self, p, dim, maxnorm):
        _int("Renorm", "p", p)
        if p <= 0:
            raise ValueError("For 'Renorm', the 'p' must be > 0, but got %d" % p)
        super().__init__(p=p, dim=_int("Renorm", "dim", dim),
                         maxnorm=float(_number("Renorm", "maxnorm", maxnorm)))

    def __call__(self, x):
        a = self.attrs
        return F2.renorm(x, a["p"], a["dim"], a["maxnorm"])


def _reverse_sequence(who, x, seq_lengths, seq_dim, batch_dim):
    x = _tensor(who, "x", x)
    lens = _integral(who, "seq_lengths", _tensor(who, "seq_lengths", seq_lengths))
    sd = _axis(who, "seq_dim", seq_dim, x.ndim)
    bd = _axis(who, "batch_dim", batch_dim, x.ndim)
    if sd == bd:
        raise ValueError("For '%s', 'seq_dim' and 'batch_dim' must differ, but both are %d" % (who, sd))
    if lens.ndim != 1 or lens.shape[0] != x.shape[bd]:
        raise ValueError("For '%s', 'seq_lengths' must be 1-D of length x.shape[batch_dim] = %d, but "
                         "got shape %r" % (who, x.shape[bd], lens.shape))
    n = x.shape[sd]
    L = F.reshape(F.cast(lens, _dt.int64), (-1, 1))        # (B, 1)
    i = F.reshape(_creation.arange(n), (1, n))            # (1, S)
    idx = F.where(F.lt(i, L), L - 1 - i, F.broadcast_to(i, (lens.shape[0], n)))  # (B, S)
    shape = [1] * x.ndim
    shape[bd], shape[sd] = lens.shape[0], n
    if bd > sd:
        idx = F.transpose(idx, (1, 0))
    idx = F.broadcast_to(F.reshape(idx, tuple(shape)), tuple(x.shape))
    return P2.gather_d(x, sd, idx)


class ReverseSequence(Primitive):
    """ReverseSequence(seq_dim, batch_dim=0)(x, seq_lengths): for each batch b, the first
    seq_lengths[b] elements along seq_dim reversed, the rest kept."""

    def __init__(self, seq_dim, batch_dim=0):
        super().__init__(seq_dim=_int("ReverseSequence", "seq_dim", seq_dim),
                         batch_dim=_int("ReverseSequence", "batch_dim", batch_dim))

    def __call__(self, x, seq_lengths):
        a = self.attrs
        return _reverse_sequence(type(self).__name__, x, seq_lengths, a["seq_dim"], a["batch_dim"])


@_export
def reverse_sequence(x, seq_lengths, seq_dim, batch_dim=0):
    """ops.reverse_sequence(x, seq_lengths, seq_dim, batch_dim=0): ReverseSequence's."""
    return _reverse_sequence("reverse_sequence", x, seq_lengths, seq_dim, batch_dim)


class ApproximateEqual(Primitive):
    """ApproximateEqual(tolerance=1e-05)(x, y): |x - y| < tolerance, elementwise."""

    def __init__(self, tolerance=1e-05):
        super().__init__(tolerance=float(_number("ApproximateEqual", "tolerance", tolerance)))

    def __call__(self, x, y):
        return _approx(type(self).__name__, x, y, self.attrs["tolerance"])


def _approx(who, x, y, tol):
    x, y = _tensor(who, "x", x), _tensor(who, "y", y)
    if x.shape != y.shape:
        raise ValueError("For '%s', 'x' and 'y' must have one shape, but got %r and %r"
                         % (who, x.shape, y.shape))
    return F.lt(F.abs(F.sub(x, y)), tol)


@_export
def approximate_equal(x, y, tolerance=1e-5):
    """ops.approximate_equal(x, y, tolerance=1e-5): |x - y| < tolerance."""
    return _approx("approximate_equal", x, y, float(_number("approximate_equal", "tolerance", tolerance)))


def _addn(who, x):
    if isinstance(x, _Tensor) or not isinstance(x, (tuple, list)) or not x:
        raise TypeError("For '%s', the input must be a non-empty tuple or list of Tensors, but got %s"
                        % (who, type(x).__name__))
    out = _tensor(who, "x", x[0])
    for t in x[1:]:
        t = _tensor(who, "x", t)
        if t.shape != out.shape:
            raise ValueError("For '%s', every input must have the shape %r, but got %r"
                             % (who, out.shape, t.shape))
        out = out + t
    return out


class AccumulateNV2(Primitive):
    """AccumulateNV2()(x): the elementwise sum of a tuple/list of tensors of one shape."""

    def __call__(self, *x):
        return _addn(type(self).__name__, x[0] if len(x) == 1 and isinstance(x[0], (tuple, list)) else x)


@_export
def addn(x):
    """ops.addn(x): the elementwise sum of a tuple/list of tensors of one shape."""
    return _addn("addn", x)


@_export
def accumulate_n(x):
    """ops.accumulate_n(x): as addn."""
    return _addn("accumulate_n", x)


class TensorShape(Primitive):
    """TensorShape()(input_x): input_x's shape as a 1-D int64 Tensor."""

    def __call__(self, input_x):
        return _const(list(_tensor(type(self).__name__, "input_x", input_x).shape))


class TruncateDiv(Primitive):
    """TruncateDiv()(x, y): x / y rounded toward zero."""

    def __call__(self, x, y):
        return F2.truncate_div(x, y)


class TruncateMod(Primitive):
    """TruncateMod()(x, y): the remainder of the division rounded toward zero (sign of x)."""

    def __call__(self, x, y):
        return F2.truncate_mod(x, y)


class _TriIndices(Primitive):
    def __init__(self, row, col, offset=0, dtype=_dt.int32):
        who = type(self).__name__
        for n, v in (("row", row), ("col", col), ("offset", offset)):
            _int(who, n, v)
        if row < 0 or col < 0:
            raise ValueError("For '%s', 'row' and 'col' must be non-negative, but got %d and %d"
                             % (who, row, col))
        if dtype not in (_dt.int32, _dt.int64):
            raise TypeError("For '%s', the 'dtype' must be int32 or int64, but got %s" % (who, dtype))
        super().__init__(row=row, col=col, offset=offset, dtype=dtype)

    def __call__(self):
        a = self.attrs
        return _tri_indices(a["row"], a["col"], a["offset"], a["dtype"], self._lower)


def _tri_indices(row, col, offset, dtype, lower):
    keep = [(i, j) for i in range(row) for j in range(col) if ((j - i <= offset) if lower else (j - i >= offset))]
    data = [[i for i, _ in keep], [j for _, j in keep]]
    return _creation.tensor(data, dtype) if keep else _creation.zeros((2, 0), dtype=dtype)


class TrilIndices(_TriIndices):
    """TrilIndices(row, col, offset=0, dtype=int32)(): the (2, N) row and column indices of the
    lower triangle (on and below diagonal `offset`) of a row x col matrix, row by row."""
    _lower = True


class TriuIndices(_TriIndices):
    """TriuIndices(row, col, offset=0, dtype=int32)(): the upper triangle's indices."""
    _lower = False


class UnravelIndex(Primitive):
    """UnravelIndex()(indices, dims): the coordinates of flat indices in an array of shape
    `dims` (a 1-D int Tensor): shape (len(dims),) + indices.shape."""

    def __call__(self, indices, dims):
        idx = _integral(type(self).__name__, "indices", _tensor(type(self).__name__, "indices", indices))
        d = _integral(type(self).__name__, "dims", _tensor(type(self).__name__, "dims", dims))
        if d.ndim != 1:
            raise ValueError("For 'UnravelIndex', 'dims' must be 1-D, but got shape %r" % (d.shape,))
        rest, out = idx, []
        for k in range(d.shape[0] - 1, -1, -1):
            dk = F.cast(d[k], idx.dtype)
            out.append(F.floor_mod(rest, dk) if hasattr(F, "floor_mod") else rest - (rest // dk) * dk)
            rest = rest // dk
        return F.stack(out[::-1], 0)


class Unique(Primitive):
    """Unique()(input_x) -> (y, idx): the distinct elements (sorted) and each element's index in
    y (data-dependent)."""

    def __call__(self, input_x):
        return F2.unique(_tensor(type(self).__name__, "input_x", input_x))


class UniqueConsecutive(Primitive):
    """UniqueConsecutive(return_idx=False, return_counts=False, axis=None)(x) -> (output, idx,
    counts): runs of equal consecutive elements reduced to one; idx and counts are None unless
    asked for."""

    def __init__(self, return_idx=False, return_counts=False, axis=None):
        if axis is not None:
            _int("UniqueConsecutive", "axis", axis)
        super().__init__(return_idx=_bool("UniqueConsecutive", "return_idx", return_idx),
                         return_counts=_bool("UniqueConsecutive", "return_counts", return_counts),
                         axis=axis)

    def __call__(self, x):
        a = self.attrs
        out = F2.unique_consecutive(_tensor(type(self).__name__, "x", x), True, True, a["axis"])
        return (out[0], out[1] if a["return_idx"] else None, out[2] if a["return_counts"] else None)


def _unique_with_pad(who, x, pad_num):
    x = _tensor(who, "x", x)
    if x.ndim != 1:
        raise ValueError("For '%s', the 'x' must be 1-D, but got shape %r" % (who, x.shape))
    pad = _scalar(who, "pad_num", pad_num)
    y, idx = F2.unique(x)
    n = x.shape[0]
    rest = _creation.full((n - y.shape[0],), pad, dtype=x.dtype)
    return F.concat((y, rest), 0), F.cast(idx, x.dtype if not x.dtype.is_floating_point else _dt.int32)


class UniqueWithPad(Primitive):
    """UniqueWithPad()(x, pad_num) -> (y, idx): Unique's y padded with pad_num to x's length, and
    each element's index in y (data-dependent)."""

    def __call__(self, x, pad_num):
        return _unique_with_pad(type(self).__name__, x, pad_num)


@_export
def unique_with_pad(x, pad_num):
    """ops.unique_with_pad(x, pad_num): UniqueWithPad()(x, pad_num)."""
    return _unique_with_pad("unique_with_pad", x, pad_num)


@_export
def view_as_real(input):
    """ops.view_as_real(input): a complex tensor as real pairs, shape input.shape + (2,)."""
    x = _tensor("view_as_real", "input", input)
    if not P2._is_complex(x.dtype):
        raise TypeError("For 'view_as_real', the dtype of 'input' must be complex64 or complex128, "
                        "but got %s" % x.dtype)
    o = _ops()
    return F.stack((o.real(x), o.imag(x)), -1)


@_export
def inv(x):
    """ops.inv(x): 1 / x."""
    return F.reciprocal(_tensor("inv", "x", x))


# ----- scatters and segment reductions ------------------------------------------------------------
# Every reduction of rows chosen by an index vector goes through one helper: sums by index_add;
# products, extremes and "the last write wins" through a (n, rows) match mask (memory n * rows *
# row size: composed, not a kernel). Integers compute in float64 (exact below 2**53).

def _reduce_rows(ids, src, rows, kind):
    """(out, hit): out[r] reduces the rows src[i] with ids[i] == r ('sum', 'prod', 'max', 'min',
    'last': the last such row), hit[r] says whether any did. ids: int64 (n,); ids outside
    [0, rows) are dropped. out is float (src's, or float64 for integers)."""
    src = _work(src)
    n, tail = src.shape[0], tuple(src.shape[1:])
    match = F.eq(F.reshape(ids, (n, 1)), F.reshape(_creation.arange(rows), (1, rows)))  # (n, rows)
    hit = F.reshape(F.sum(F.cast(match, _dt.int64), 0), (rows,)) > 0
    if kind == "sum":
        ok = F.logical_and(F.ge(ids, 0), F.lt(ids, rows))
        safe = F.where(ok, ids, _creation.full((n,), rows, dtype=_dt.int64))
        base = _creation.zeros((rows + 1,) + tail, dtype=src.dtype)
        return _op("index_add", (base, safe, src), axis=0)[:rows], hit
    if kind == "last":
        pos = F.reshape(F.cast(_creation.arange(n), _dt.int64), (n, 1))
        last = _amax(F.where(match, pos, _creation.full((), -1, dtype=_dt.int64)), 0)  # (rows,)
        return _op("index_select", (src, F.clamp(last, 0, None)), axis=0), hit
    neutral = {"prod": 1.0, "max": -float("inf"), "min": float("inf")}[kind]
    m = F.reshape(match, (n, rows) + (1,) * len(tail))
    vals = F.where(m, F.reshape(src, (n, 1) + tail), _creation.full((), neutral, dtype=src.dtype))
    if kind == "prod":
        return F.prod(vals, 0), hit
    return (_amax(vals, 0) if kind == "max" else _amin(vals, 0)), hit


def _combine(x, red, hit, kind):
    """x's rows updated by the reduced rows: x op red where hit."""
    w = _work(x)
    h = F.reshape(hit, (hit.shape[0],) + (1,) * (x.ndim - 1))
    if kind == "add":
        out = w + red
    elif kind == "sub":
        out = w - red
    elif kind == "mul":
        out = w * red
    elif kind == "div":
        out = F.where(h, w / red, w)
    elif kind == "max":
        out = F.maximum(w, red)
    elif kind == "min":
        out = F.minimum(w, red)
    else:  # update
        out = F.where(h, red, w)
    if not x.dtype.is_floating_point and kind == "div":
        out = F.where(h, F.trunc(out) if hasattr(F, "trunc") else F2.trunc(out), out)
    return _back(out, x.dtype)


_REDUCER = {"add": "sum", "sub": "sum", "mul": "prod", "div": "prod", "max": "max", "min": "min",
            "update": "last"}


def _scatter_check(who, x, indices, updates):
    x = _tensor(who, "input_x", x)
    idx = _tensor(who, "indices", indices)
    if idx.dtype not in (_dt.int32, _dt.int64):
        raise TypeError("For '%s', the dtype of 'indices' must be int32 or int64, but got %s"
                        % (who, idx.dtype))
    upd = _tensor(who, "updates", updates)
    if upd.dtype is not x.dtype:
        raise TypeError("For '%s', the dtype of 'updates' must be the dtype of 'input_x' (%s), but "
                        "got %s" % (who, x.dtype, upd.dtype))
    return x, idx, upd


def _scatter_new(who, kind, input_x, indices, updates):
    """The value ScatterAdd/.../ScatterUpdate writes: rows `indices` of input_x combined with
    updates (shape indices.shape + input_x.shape[1:])."""
    x, idx, upd = _scatter_check(who, input_x, indices, updates)
    if x.ndim == 0:
        raise ValueError("For '%s', the rank of 'input_x' must be >= 1" % who)
    want = tuple(idx.shape) + tuple(x.shape[1:])
    if tuple(upd.shape) != want:
        raise ValueError("For '%s', the shape of 'updates' must be indices.shape + "
                         "input_x.shape[1:] = %r, but got %r" % (who, want, upd.shape))
    flat = F.reshape(F.cast(idx, _dt.int64), (-1,))
    src = F.reshape(upd, (flat.shape[0],) + tuple(x.shape[1:]))
    red, hit = _reduce_rows(flat, src, x.shape[0], _REDUCER[kind])
    return _combine(x, red, hit, kind)


def _scatter_nd_new(who, kind, input_x, indices, updates):
    """The value of input_x after ScatterNd<kind>: the index vectors of indices' last dim (K
    long) address input_x's first K dims; updates has shape indices.shape[:-1] +
    input_x.shape[K:]."""
    x, idx, upd = _scatter_check(who, input_x, indices, updates)
    if idx.ndim < 1:
        raise ValueError("For '%s', the rank of 'indices' must be >= 1" % who)
    k = idx.shape[-1]
    if k > x.ndim:
        raise ValueError("For '%s', indices.shape[-1] = %d must not exceed the rank of input_x (%d)"
                         % (who, k, x.ndim))
    want = tuple(idx.shape[:-1]) + tuple(x.shape[k:])
    if tuple(upd.shape) != want:
        raise ValueError("For '%s', the shape of 'updates' must be indices.shape[:-1] + "
                         "input_x.shape[indices.shape[-1]:] = %r, but got %r" % (who, want, upd.shape))
    rows, strides = 1, []
    for s in reversed(x.shape[:k]):
        strides.insert(0, rows)
        rows *= s
    i64 = F.reshape(F.cast(idx, _dt.int64), (-1, k))
    lin = F.sum(i64 * _const(strides), -1) if k else F.reshape(i64, (-1,)) * 0
    tail = tuple(x.shape[k:])
    x2 = F.reshape(x, (rows,) + tail)
    red, hit = _reduce_rows(lin, F.reshape(upd, (lin.shape[0],) + tail), rows, _REDUCER[kind])
    return F.reshape(_combine(x2, red, hit, kind), tuple(x.shape))


def _scatter_class(name, kind, nd, use_locking_default):
    new = _scatter_nd_new if nd else _scatter_new

    def __init__(self, use_locking=use_locking_default):
        Primitive.__init__(self, use_locking=_bool(name, "use_locking", use_locking))

    @runtime_state("writes a Parameter in place")
    def __call__(self, input_x, indices, updates):
        value = new(name, kind, input_x, indices, updates)
        input_x[...] = value
        return input_x

    shape = "indices.shape[:-1] + input_x.shape[K:]" if nd else "indices.shape + input_x.shape[1:]"
    doc = ("%s(use_locking=%s)(input_x, indices, updates): %s the Parameter input_x in place at %s "
           "(updates of shape %s) and returns it; a graph break under jit, as Assign()."
           % (name, use_locking_default, {"add": "adds updates to", "sub": "subtracts updates from",
                                          "mul": "multiplies by updates", "div": "divides by updates",
                                          "max": "takes the maximum with updates of",
                                          "min": "takes the minimum with updates of",
                                          "update": "writes updates into"}[kind],
              "the index vectors of indices' last dim" if nd else "the rows `indices`", shape))
    return type(name, (Primitive,), {"__init__": __init__, "__call__": __call__, "__doc__": doc,
                                     "__module__": __name__})


for _kind in ("add", "sub", "mul", "div", "max", "min", "update"):
    _cap = _kind.capitalize()
    globals()["Scatter" + _cap] = _scatter_class("Scatter" + _cap, _kind, False, _kind == "update")
    if _kind != "update":  # (ScatterNdUpdate is primitives2's)
        globals()["ScatterNd" + _cap] = _scatter_class("ScatterNd" + _cap, _kind, True, False)
del _kind, _cap


def _functional_scatter(name, who, kind, nd):
    new = _scatter_nd_new if nd else _scatter_new
    if nd:
        def fn(input_x, indices, updates, use_locking=False):
            input_x[...] = new(who, kind, input_x, indices, updates)
            return input_x
        fn.__pijit_inplace__ = lambda input_x, indices, updates, use_locking=False: new(
            who, kind, input_x, indices, updates)
    else:
        def fn(input_x, indices, updates):
            input_x[...] = new(who, kind, input_x, indices, updates)
            return input_x
        fn.__pijit_inplace__ = lambda input_x, indices, updates: new(who, kind, input_x, indices, updates)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = ("ops.%s: as %s, on the Parameter input_x in place; returns it. Under jit the "
                  "write is replayed after the graph, as ops.assign's." % (name, who))
    globals()[name] = fn
    _FUNCTIONAL.append(name)


for _kind in ("update", "mul", "div", "max", "min"):
    _functional_scatter("scatter_" + _kind, "Scatter" + _kind.capitalize(), _kind, False)
for _kind in ("sub", "mul", "div", "max", "min"):
    _functional_scatter("scatter_nd_" + _kind, "ScatterNd" + _kind.capitalize(), _kind, True)
del _kind


def _tensor_scatter_class(name, kind):
    def __call__(self, input_x, indices, updates):
        return _scatter_nd_new(name, kind, input_x, indices, updates)
    doc = ("%s()(input_x, indices, updates): a copy of input_x combined (%s) with updates at the "
           "index vectors of indices' last dim (repeated positions all apply)." % (name, kind))
    return type(name, (Primitive,), {"__call__": __call__, "__doc__": doc, "__module__": __name__})


for _kind in ("sub", "mul", "div", "max", "min"):
    _cap = _kind.capitalize()
    globals()["TensorScatter" + _cap] = _tensor_scatter_class("TensorScatter" + _cap, _kind)
    if _kind != "sub":
        def _ts(input_x, indices, updates, _k=_kind, _w="TensorScatter" + _cap):
            return _scatter_nd_new(_w, _k, input_x, indices, updates)
        _ts.__name__ = _ts.__qualname__ = "tensor_scatter_" + _kind
        _ts.__doc__ = ("ops.tensor_scatter_%s(input_x, indices, updates): TensorScatter%s()'s copy."
                       % (_kind, _cap))
        globals()[_ts.__name__] = _ts
        _FUNCTIONAL.append(_ts.__name__)
del _kind, _cap, _ts


def _segment_ids(who, x, segment_ids):
    x = _tensor(who, "input_x", x)
    ids = _tensor(who, "segment_ids", segment_ids)
    if ids.dtype not in (_dt.int32, _dt.int64):
        raise TypeError("For '%s', the dtype of 'segment_ids' must be int32 or int64, but got %s"
                        % (who, ids.dtype))
    if x.ndim == 0 or tuple(x.shape[:ids.ndim]) != tuple(ids.shape):
        raise ValueError("For '%s', the shape of 'segment_ids' %r must be a prefix of input_x's %r"
                         % (who, ids.shape, x.shape))
    tail = tuple(x.shape[ids.ndim:])
    flat = F.reshape(F.cast(ids, _dt.int64), (-1,))
    return x, flat, F.reshape(x, (flat.shape[0],) + tail)


def _segment(who, kind, x, segment_ids, num, empty):
    x, flat, src = _segment_ids(who, x, segment_ids)
    red, hit = _reduce_rows(flat, src, num, "sum" if kind == "mean" else kind)
    if kind == "mean":
        counts = F.sum(F.cast(F.eq(F.reshape(flat, (-1, 1)), F.reshape(_creation.arange(num), (1, num))),
                              red.dtype), 0)
        red = red / F.reshape(F.clamp(counts, 1, None), (num,) + (1,) * (red.ndim - 1))
    h = F.reshape(hit, (num,) + (1,) * (red.ndim - 1))
    red = F.where(h, red, _creation.full((), empty, dtype=red.dtype))
    return _back(red, x.dtype)


class _SegmentOp(Primitive):
    def __call__(self, input_x, segment_ids):
        ids = _tensor(type(self).__name__, "segment_ids", segment_ids)
        if ids.ndim != 1:
            raise ValueError("For '%s', the 'segment_ids' must be 1-D, but got shape %r"
                             % (type(self).__name__, ids.shape))
        vals = [int(v) for v in ids.tolist()]  # (the output length is data-dependent)
        if any(v < 0 for v in vals) or vals != sorted(vals):
            raise ValueError("For '%s', the 'segment_ids' must be sorted and non-negative, but got %r"
                             % (type(self).__name__, vals))
        num = (vals[-1] + 1) if vals else 0
        return _segment(type(self).__name__, self._kind, input_x, ids, num, 1 if self._kind == "prod" else 0)


def _segment_doc(name, what, empty):
    return ("%s()(input_x, segment_ids): out[s] = the %s of the rows of input_x whose sorted 1-D "
            "segment_ids is s, for s up to max(segment_ids) (read: data-dependent); an absent s "
            "gives %s." % (name, what, empty))


class SegmentSum(_SegmentOp):
    __doc__ = _segment_doc("SegmentSum", "sum", 0)
    _kind = "sum"


class SegmentMean(_SegmentOp):
    __doc__ = _segment_doc("SegmentMean", "mean", 0)
    _kind = "mean"


class SegmentMax(_SegmentOp):
    __doc__ = _segment_doc("SegmentMax", "maximum", 0)
    _kind = "max"


class SegmentMin(_SegmentOp):
    __doc__ = _segment_doc("SegmentMin", "minimum", 0)
    _kind = "min"


class SegmentProd(_SegmentOp):
    __doc__ = _segment_doc("SegmentProd", "product", 1)
    _kind = "prod"


def _num_segments(who, num_segments):
    if isinstance(num_segments, _Tensor):
        num_segments = int(num_segments.reshape(()).item())
    _int(who, "num_segments", num_segments)
    if num_segments <= 0:
        raise ValueError("For '%s', the 'num_segments' must be > 0, but got %d" % (who, num_segments))
    return num_segments


def _unsorted(who, kind, x, segment_ids, num_segments):
    num = _num_segments(who, num_segments)
    t = _tensor(who, "input_x", x)
    if kind == "prod":
        empty = 1
    elif t.dtype.is_floating_point:
        empty = -_finfo(t.dtype)[1] if kind == "max" else _finfo(t.dtype)[1]
    else:
        bits = {_dt.int32: 31, _dt.int64: 63}.get(t.dtype, 31)
        empty = -(1 << bits) if kind == "max" else (1 << bits) - 1
    return _segment(who, kind, t, segment_ids, num, empty)


def _unsorted_class(name, kind, empty):
    def __call__(self, x, segment_ids, num_segments):
        return _unsorted(name, kind, x, segment_ids, num_segments)
    doc = ("%s()(x, segment_ids, num_segments): out[s] = the %s of the slices of x whose "
           "segment_ids is s (segment_ids' shape a prefix of x's), for s in [0, num_segments); "
           "ids outside are dropped; an empty segment gives %s." % (name, kind, empty))
    return type(name, (Primitive,), {"__call__": __call__, "__doc__": doc, "__module__": __name__})


class UnsortedSegmentSum(Primitive):
    """UnsortedSegmentSum()(input_x, segment_ids, num_segments): ops.unsorted_segment_sum."""

    def __call__(self, input_x, segment_ids, num_segments):
        return F2.unsorted_segment_sum(input_x, segment_ids, _num_segments(type(self).__name__, num_segments))


UnsortedSegmentMax = _unsorted_class("UnsortedSegmentMax", "max", "the dtype's lowest value")
UnsortedSegmentMin = _unsorted_class("UnsortedSegmentMin", "min", "the dtype's largest value")
UnsortedSegmentProd = _unsorted_class("UnsortedSegmentProd", "prod", "1")


@_export
def unsorted_segment_max(x, segment_ids, num_segments):
    """ops.unsorted_segment_max(x, segment_ids, num_segments): UnsortedSegmentMax's."""
    return _unsorted("unsorted_segment_max", "max", x, segment_ids, num_segments)


@_export
def unsorted_segment_min(x, segment_ids, num_segments):
    """ops.unsorted_segment_min(x, segment_ids, num_segments): UnsortedSegmentMin's."""
    return _unsorted("unsorted_segment_min", "min", x, segment_ids, num_segments)


@_export
def unsorted_segment_prod(x, segment_ids, num_segments):
    """ops.unsorted_segment_prod(x, segment_ids, num_segments): UnsortedSegmentProd's."""
    return _unsorted("unsorted_segment_prod", "prod", x, segment_ids, num_segments)


# ----- searches and histograms --------------------------------------------------------------------

def _search(who, seq, values, right, dtype):
    """For each value, how many entries of its row of the sorted `seq` are < it (<= with right):
    seq (..., R) and values (..., S) with the same leading dims, or a 1-D seq for any values."""
    seq, values = _tensor(who, "sorted_sequence", seq), _tensor(who, "values", values)
    if seq.ndim == 0:
        raise ValueError("For '%s', the 'sorted_sequence' must not be a scalar" % who)
    if seq.ndim == 1:
        s = seq
        v = F.expand_dims(values, -1)
    else:
        if values.ndim != seq.ndim or tuple(values.shape[:-1]) != tuple(seq.shape[:-1]):
            raise ValueError("For '%s', 'sorted_sequence' %r and 'values' %r must share every dim but "
                             "the last" % (who, seq.shape, values.shape))
        s = F.expand_dims(seq, -2)      # (..., 1, R)
        v = F.expand_dims(values, -1)   # (..., S, 1)
    below = F.le(s, v) if right else F.lt(s, v)
    return F.cast(F.sum(F.cast(below, _dt.int64), -1), dtype)


class SearchSorted(Primitive):
    """SearchSorted(dtype=int64, right=False)(sorted_sequence, values, sorter=None): where each
    value would be inserted into its row of sorted_sequence (innermost dim) to keep it sorted."""

    def __init__(self, dtype=_dt.int64, right=False):
        if dtype not in (_dt.int32, _dt.int64):
            raise TypeError("For 'SearchSorted', the 'dtype' must be int32 or int64, but got %s" % dtype)
        super().__init__(dtype=dtype, right=_bool("SearchSorted", "right", right))

    def __call__(self, sorted_sequence, values, sorter=None):
        if sorter is not None:
            sorted_sequence = P2.gather_d(sorted_sequence, -1 % _b.max(sorted_sequence.ndim, 1), sorter)
        return _search(type(self).__name__, sorted_sequence, values, self.attrs["right"], self.attrs["dtype"])


@_export
def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """ops.searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
    sorter=None): SearchSorted's; side 'right' is right=True."""
    if side not in (None, "left", "right"):
        raise ValueError("For 'searchsorted', the 'side' must be 'left' or 'right', but got %r" % (side,))
    if side == "left" and right:
        raise ValueError("For 'searchsorted', side='left' and right=True contradict each other")
    right = right or side == "right"
    if sorter is not None:
        sorted_sequence = P2.gather_d(sorted_sequence, sorted_sequence.ndim - 1, sorter)
    return _search("searchsorted", sorted_sequence, values, right, _dt.int32 if out_int32 else _dt.int64)


class Bucketize(Primitive):
    """Bucketize(boundaries)(input): for each element, the number of boundaries <= it (int32):
    the bucket i with boundaries[i-1] <= x < boundaries[i]."""

    def __init__(self, boundaries):
        if not isinstance(boundaries, (list, tuple)) or not _b.all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in boundaries):
            raise TypeError("For 'Bucketize', the 'boundaries' must be a list of floats, but got %r"
                            % (boundaries,))
        if list(boundaries) != sorted(boundaries):
            raise ValueError("For 'Bucketize', the 'boundaries' must be sorted, but got %r" % (boundaries,))
        super().__init__(boundaries=[float(v) for v in boundaries])

    def __call__(self, input):
        x = _tensor(type(self).__name__, "input", input)
        b = self.attrs["boundaries"]
        if not b:
            return _creation.zeros(tuple(x.shape), dtype=_dt.int32)
        bt = _creation.tensor(b, _dt.float64)
        return _search(type(self).__name__, bt, F.cast(x, _dt.float64), True, _dt.int32)


class _Bound(Primitive):
    def __init__(self, out_type=_dt.int32):
        if out_type not in (_dt.int32, _dt.int64):
            raise TypeError("For '%s', the 'out_type' must be int32 or int64, but got %s"
                            % (type(self).__name__, out_type))
        super().__init__(out_type=out_type)

    def __call__(self, sorted_x, values):
        s, v = _tensor(type(self).__name__, "sorted_x", sorted_x), _tensor(type(self).__name__, "values", values)
        if s.ndim != 2 or v.ndim != 2 or s.shape[0] != v.shape[0]:
            raise ValueError("For '%s', 'sorted_x' and 'values' must be 2-D with one number of rows, "
                             "but got %r and %r" % (type(self).__name__, s.shape, v.shape))
        return _search(type(self).__name__, s, v, self._right, self.attrs["out_type"])


class LowerBound(_Bound):
    """LowerBound(out_type=int32)(sorted_x, values): per row, the first index whose entry is
    >= the value."""
    _right = False


class UpperBound(_Bound):
    """UpperBound(out_type=int32)(sorted_x, values): per row, the first index whose entry is
    > the value."""
    _right = True


def _bincount(who, x, n, weights, dtype):
    """counts (or weight sums) of the values 0..n-1 of the int tensor x (others dropped)."""
    flat = F.reshape(F.cast(x, _dt.int64), (-1,))
    if weights is None:
        w = _creation.ones((flat.shape[0],), dtype=_dt.float64)
    else:
        w = F.reshape(F.cast(weights, _dt.float64), (-1,))
        if w.shape[0] != flat.shape[0]:
            raise ValueError("For '%s', the 'weights' must have the shape of the input %r, but got %r"
                             % (who, x.shape, weights.shape))
    red, _ = _reduce_rows(flat, w, n, "sum")
    return F.cast(red, dtype)


class Bincount(Primitive):
    """Bincount()(array, size, weights): out[i] = the sum of weights where array == i, for i in
    [0, size) (size a 0-D int Tensor, read); of weights' dtype."""

    def __call__(self, array, size, weights):
        a = _integral(type(self).__name__, "array", _tensor(type(self).__name__, "array", array))
        n = int(_scalar(type(self).__name__, "size", size))
        if n < 0:
            raise ValueError("For 'Bincount', the 'size' must be non-negative, but got %d" % n)
        w = _tensor(type(self).__name__, "weights", weights)
        return _bincount(type(self).__name__, a, n, w, w.dtype)


@_export
def bincount(input, weights=None, minlength=0):
    """ops.bincount(input, weights=None, minlength=0): the number of occurrences (or the weight
    sums) of each value 0..max(input) in the 1-D non-negative int input, at least minlength
    long (the length reads the data). int64 counts; weights' dtype with weights."""
    x = _integral("bincount", "input", _tensor("bincount", "input", input))
    if x.ndim != 1:
        raise ValueError("For 'bincount', the 'input' must be 1-D, but got shape %r" % (x.shape,))
    _int("bincount", "minlength", minlength)
    if minlength < 0:
        raise ValueError("For 'bincount', the 'minlength' must be non-negative, but got %d" % minlength)
    vals = x.tolist()
    if any(v < 0 for v in vals):
        raise ValueError("For 'bincount', the 'input' must be non-negative")
    n = _b.max([minlength] + [v + 1 for v in vals])
    if weights is None:
        return _bincount("bincount", x, n, None, _dt.int64)
    w = _tensor("bincount", "weights", weights)
    return _bincount("bincount", x, n, w, w.dtype if w.dtype.is_floating_point else _dt.float64)


def _histc(who, x, bins, lo, hi):
    x = _tensor(who, "x", x)
    _int(who, "bins", bins)
    if bins <= 0:
        raise ValueError("For '%s', the 'bins' must be > 0, but got %d" % (who, bins))
    lo, hi = float(_number(who, "min", lo)), float(_number(who, "max", hi))
    if lo > hi:
        raise ValueError("For '%s', the 'max' must be >= 'min', but got min %r and max %r" % (who, lo, hi))
    f = F.reshape(F.cast(x, _dt.float64), (-1,))
    if lo == hi:  # the data's own range (a graph computes it too)
        if f.shape[0] == 0:
            lo_t = hi_t = _creation.zeros((), dtype=_dt.float64)
        else:
            lo_t, hi_t = _amin(f, 0), _amax(f, 0)
        same = F.eq(lo_t, hi_t)
        lo_t, hi_t = F.where(same, lo_t - 1.0, lo_t), F.where(same, hi_t + 1.0, hi_t)
    else:
        lo_t = _creation.full((), lo, dtype=_dt.float64)
        hi_t = _creation.full((), hi, dtype=_dt.float64)
    inside = F.logical_and(F.ge(f, lo_t), F.le(f, hi_t))
    b = F.floor((f - lo_t) / (hi_t - lo_t) * bins)
    b = F.cast(F.clamp(b, 0, bins - 1), _dt.int64)
    b = F.where(inside, b, _creation.full((), bins, dtype=_dt.int64))  # outside: dropped
    red, _ = _reduce_rows(b, _creation.ones((f.shape[0],), dtype=_dt.float64), bins, "sum")
    return red


class Histogram(Primitive):
    """Histogram(bins=100, min=0.0, max=0.0)(x): counts of x's elements in `bins` equal bins of
    [min, max] (min == max: the data's own range); elements outside are ignored. Of x's dtype."""

    def __init__(self, bins=100, min=0.0, max=0.0):
        _int("Histogram", "bins", bins)
        super().__init__(bins=bins, min=float(_number("Histogram", "min", min)),
                         max=float(_number("Histogram", "max", max)))

    def __call__(self, x):
        a = self.attrs
        x = _tensor(type(self).__name__, "x", x)
        return F.cast(_histc(type(self).__name__, x, a["bins"], a["min"], a["max"]), x.dtype)


@_export
def histc(input, bins=100, min=0., max=0.):
    """ops.histc(input, bins=100, min=0., max=0.): Histogram(bins, min, max)(input)."""
    x = _tensor("histc", "input", input)
    return F.cast(_histc("histc", x, bins, min, max), x.dtype)


class HistogramFixedWidth(Primitive):
    """HistogramFixedWidth(nbins, dtype='int32')(x, range): counts of x in nbins equal bins of
    [range[0], range[1]); values below fall in bin 0, above in the last bin."""

    def __init__(self, nbins, dtype="int32"):
        _int("HistogramFixedWidth", "nbins", nbins)
        if nbins < 1:
            raise ValueError("For 'HistogramFixedWidth', the 'nbins' must be >= 1, but got %d" % nbins)
        if dtype not in ("int32", _dt.int32):
            raise TypeError("For 'HistogramFixedWidth', the 'dtype' must be 'int32', but got %r" % (dtype,))
        super().__init__(nbins=nbins, dtype="int32")

    def __call__(self, x, range):
        x, r = _tensor(type(self).__name__, "x", x), _tensor(type(self).__name__, "range", range)
        if tuple(r.shape) != (2,):
            raise ValueError("For 'HistogramFixedWidth', the 'range' must have shape (2,), but got %r"
                             % (r.shape,))
        n = self.attrs["nbins"]
        f = F.reshape(F.cast(x, _dt.float64), (-1,))
        r = F.cast(r, _dt.float64)
        b = F.floor((f - r[0]) / (r[1] - r[0]) * n)
        b = F.cast(F.clamp(b, 0, n - 1), _dt.int64)
        red, _ = _reduce_rows(b, _creation.ones((f.shape[0],), dtype=_dt.float64), n, "sum")
        return F.cast(red, _dt.int32)


# ----- block rearrangements -----------------------------------------------------------------------

def _nchw(who, x):
    x = _tensor(who, "x", x)
    if x.ndim != 4:
        raise ValueError("For '%s', the input must be 4-D (NCHW), but got shape %r" % (who, x.shape))
    return x


class SpaceToDepth(Primitive):
    """SpaceToDepth(block_size)(x): NCHW blocks of block_size x block_size moved into channels:
    out[n, (i*bs + j)*C + c, h, w] = x[n, c, h*bs + i, w*bs + j]."""

    def __init__(self, block_size):
        _int("SpaceToDepth", "block_size", block_size)
        if block_size < 2:
            raise ValueError("For 'SpaceToDepth', the 'block_size' must be >= 2, but got %d" % block_size)
        super().__init__(block_size=block_size)

    def __call__(self, x):
        x = _nchw(type(self).__name__, x)
        bs = self.attrs["block_size"]
        n, c, h, w = x.shape
        if h % bs or w % bs:
            raise ValueError("For 'SpaceToDepth', the height and width %r must be divisible by "
                             "block_size %d" % ((h, w), bs))
        t = F.reshape(x, (n, c, h // bs, bs, w // bs, bs))
        t = F.transpose(t, (0, 3, 5, 1, 2, 4))
        return F.reshape(t, (n, c * bs * bs, h // bs, w // bs))


class DepthToSpace(Primitive):
    """DepthToSpace(block_size)(x): the inverse of SpaceToDepth: out[n, c, h*bs + i, w*bs + j] =
    x[n, (i*bs + j)*C_out + c, h, w]."""

    def __init__(self, block_size):
        _int("DepthToSpace", "block_size", block_size)
        if block_size < 2:
            raise ValueError("For 'DepthToSpace', the 'block_size' must be >= 2, but got %d" % block_size)
        super().__init__(block_size=block_size)

    def __call__(self, x):
        x = _nchw(type(self).__name__, x)
        bs = self.attrs["block_size"]
        n, c, h, w = x.shape
        if c % (bs * bs):
            raise ValueError("For 'DepthToSpace', the channels %d must be divisible by block_size**2 = "
                             "%d" % (c, bs * bs))
        t = F.reshape(x, (n, bs, bs, c // (bs * bs), h, w))
        t = F.transpose(t, (0, 3, 4, 1, 5, 2))
        return F.reshape(t, (n, c // (bs * bs), h * bs, w * bs))


def _block_args(who, block_shape, pairs, name):
    if _is_int(block_shape):
        block_shape = (block_shape, block_shape)
    block = _ints(who, "block_shape", block_shape)
    if _b.any(b < 1 for b in block):
        raise ValueError("For '%s', the 'block_shape' must be >= 1, but got %r" % (who, block))
    if not isinstance(pairs, (tuple, list)) or len(pairs) != len(block) or not _b.all(
            isinstance(p, (tuple, list)) and len(p) == 2 and _b.all(_is_int(v) and v >= 0 for v in p)
            for p in pairs):
        raise ValueError("For '%s', the '%s' must be %d pairs of non-negative ints, but got %r"
                         % (who, name, len(block), pairs))
    return block, tuple(tuple(p) for p in pairs)


def _space_to_batch(who, x, block, pads):
    x = _tensor(who, "input_x", x)
    m = len(block)
    if x.ndim < m + 1:
        raise ValueError("For '%s', the rank of 'input_x' must be >= %d, but got %d" % (who, m + 1, x.ndim))
    lead = x.ndim - m  # N and the dims before the spatial ones (NCHW: N, C)
    flat = []
    for p in reversed(pads):
        flat.extend(p)
    if _b.any(flat):
        x = NF.pad(x, tuple(flat))
    sp = tuple(x.shape[lead:])
    for s, b in zip(sp, block):
        if s % b:
            raise ValueError("For '%s', the padded spatial shape %r must be divisible by block_shape %r"
                             % (who, sp, block))
    shape = tuple(x.shape[:lead])
    for s, b in zip(sp, block):
        shape += (s // b, b)
    t = F.reshape(x, shape)
    perm = tuple(lead + 2 * i + 1 for i in range(m)) + tuple(range(lead)) + tuple(lead + 2 * i for i in range(m))
    t = F.transpose(t, perm)
    nb = 1
    for b in block:
        nb *= b
    return F.reshape(t, (nb * x.shape[0],) + tuple(x.shape[1:lead]) + tuple(s // b for s, b in zip(sp, block)))


def _batch_to_space(who, x, block, crops):
    x = _tensor(who, "input_x", x)
    m = len(block)
    lead = x.ndim - m
    nb = 1
    for b in block:
        nb *= b
    if x.ndim < m + 1 or x.shape[0] % nb:
        raise ValueError("For '%s', the batch %d must be divisible by prod(block_shape) = %d"
                         % (who, x.shape[0] if x.ndim else 0, nb))
    n = x.shape[0] // nb
    sp = tuple(x.shape[lead:])
    t = F.reshape(x, tuple(block) + (n,) + tuple(x.shape[1:]))
    # (b1..bm, N, C.., s1..sm) -> (N, C.., s1, b1, ..., sm, bm)
    perm = (m,) + tuple(range(m + 1, m + lead)) + tuple(v for i in range(m) for v in (m + lead + i, i))
    t = F.transpose(t, perm)
    t = F.reshape(t, (n,) + tuple(x.shape[1:lead]) + tuple(s * b for s, b in zip(sp, block)))
    idx = (slice(None),) * lead + tuple(slice(c0, s * b - c1) for (c0, c1), s, b in zip(crops, sp, block))
    return t[idx]


class SpaceToBatchND(Primitive):
    """SpaceToBatchND(block_shape, paddings)(input_x): the spatial (last len(block_shape)) dims
    zero-padded, then cut into blocks moved into the batch: out[(i*b2 + j)*N + n, c, h, w] =
    padded[n, c, h*b1 + i, w*b2 + j]."""

    def __init__(self, block_shape, paddings):
        block, pads = _block_args("SpaceToBatchND", block_shape, paddings, "paddings")
        super().__init__(block_shape=block, paddings=pads)

    def __call__(self, input_x):
        return _space_to_batch(type(self).__name__, input_x, self.attrs["block_shape"], self.attrs["paddings"])


class BatchToSpaceND(Primitive):
    """BatchToSpaceND(block_shape, crops)(input_x): the inverse of SpaceToBatchND, then `crops`
    cut from the start and end of each spatial dim."""

    def __init__(self, block_shape, crops):
        block, crops = _block_args("BatchToSpaceND", block_shape, crops, "crops")
        super().__init__(block_shape=block, crops=crops)

    def __call__(self, input_x):
        return _batch_to_space(type(self).__name__, input_x, self.attrs["block_shape"], self.attrs["crops"])


@_export
def space_to_batch_nd(input_x, block_size, paddings):
    """ops.space_to_batch_nd(input_x, block_size, paddings): SpaceToBatchND's."""
    block, pads = _block_args("space_to_batch_nd", block_size, paddings, "paddings")
    return _space_to_batch("space_to_batch_nd", input_x, block, pads)


@_export
def batch_to_space_nd(input_x, block_shape, crops):
    """ops.batch_to_space_nd(input_x, block_shape, crops): BatchToSpaceND's."""
    block, crops = _block_args("batch_to_space_nd", block_shape, crops, "crops")
    return _batch_to_space("batch_to_space_nd", input_x, block, crops)


# ----- windows: pools with argmax, Im2Col / Col2Im --------------------------------------------------

def _out_len(n, k, s, d, p0, p1, ceil=False):
    span = n + p0 + p1 - d * (k - 1) - 1
    if span < 0:
        return 0
    q = -(-span // s) if ceil else span // s
    out = q + 1
    if ceil and (out - 1) * s >= n + p0:  # (the last window must start inside the input)
        out -= 1
    return out


def _patches(x, ks, ss, ds, pads, value):
    """x (N, C, H, W) padded by pads ((top, bottom), (left, right)) with `value`: the windows as
    (N, C, kh*kw, oh, ow), built from strided basic slices (views), and (oh, ow)."""
    (kh, kw), (sh, sw), (dh, dw) = ks, ss, ds
    (pt, pb), (pl, pr) = pads
    if pt or pb or pl or pr:
        x = NF.pad(x, (pl, pr, pt, pb), "constant", value)
    H, W = x.shape[2], x.shape[3]
    oh = _out_len(H, kh, sh, dh, 0, 0)
    ow = _out_len(W, kw, sw, dw, 0, 0)
    if oh <= 0 or ow <= 0:
        raise ValueError("the kernel does not fit the padded input of %r" % ((H, W),))
    parts = []
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dh, j * dw
            parts.append(x[:, :, r0:r0 + sh * (oh - 1) + 1:sh, c0:c0 + sw * (ow - 1) + 1:sw])
    return F.stack(parts, 2), oh, ow


def _flat_positions(H, W, ks, ss, ds, pads, oh, ow):
    """For each window element (kh*kw, oh, ow): its flat index h*W + w in the unpadded input
    (-1 where it falls in the padding)."""
    (kh, kw), (sh, sw), (dh, dw) = ks, ss, ds
    pt, pl = pads[0][0], pads[1][0]
    out = []
    for i in range(kh):
        for j in range(kw):
            rows = []
            for a in range(oh):
                h = a * sh + i * dh - pt
                rows.append([(h * W + (b * sw + j * dw - pl)) if (0 <= h < H and 0 <= b * sw + j * dw - pl < W)
                             else -1 for b in range(ow)])
            out.append(rows)
    return out


def _max_with_argmax(x, ks, ss, ds, pads):
    n, c, H, W = x.shape
    win, oh, ow = _patches(x, ks, ss, ds, pads, _lowest(x.dtype) if x.dtype.is_floating_point else -(1 << 31))
    vals, arg = _amax(win, 2), F.argmax(win, 2)  # (N, C, oh, ow)
    pos = _const(_flat_positions(H, W, ks, ss, ds, pads, oh, ow))  # (K, oh, ow)
    k = pos.shape[0]
    flat_pos = F.broadcast_to(F.reshape(pos, (1, 1, k, oh, ow)), (n, c, k, oh, ow))
    where = P2.gather_d(flat_pos, 2, F.reshape(F.cast(arg, _dt.int64), (n, c, 1, oh, ow)))
    return vals, F.reshape(where, (n, c, oh, ow))


def _pads_for(who, pad_mode, n, k, s, d):
    if pad_mode == "VALID":
        return (0, 0)
    out = -(-n // s)
    total = _b.max((out - 1) * s + d * (k - 1) + 1 - n, 0)
    return (total // 2, total - total // 2)


class MaxPoolWithArgmax(Primitive):
    """MaxPoolWithArgmax(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x) ->
    (output, argmax): the max pool and, for each output, the flat index h*W + w of its maximum
    within its (n, c) plane (int32)."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        who = "MaxPoolWithArgmax"
        ks = _pair(who, "kernel_size", kernel_size)
        ss = _pair(who, "strides", strides)
        if not isinstance(pad_mode, str) or pad_mode.upper() not in ("SAME", "VALID"):
            raise ValueError("For '%s', the 'pad_mode' must be 'same' or 'valid', but got %r" % (who, pad_mode))
        if data_format != "NCHW":
            raise ValueError("For '%s', only data_format 'NCHW' is supported, but got %r" % (who, data_format))
        if _b.min(ks + ss) < 1:
            raise ValueError("For '%s', 'kernel_size' and 'strides' must be positive" % who)
        super().__init__(kernel_size=ks, strides=ss, pad_mode=pad_mode.upper(), data_format=data_format)

    def __call__(self, x):
        x = _nchw(type(self).__name__, x)
        a = self.attrs
        pads = tuple(_pads_for(type(self).__name__, a["pad_mode"], x.shape[2 + i], a["kernel_size"][i],
                               a["strides"][i], 1) for i in range(2))
        vals, arg = _max_with_argmax(x, a["kernel_size"], a["strides"], (1, 1), pads)
        return vals, F.cast(arg, _dt.int32)


def _adaptive_bounds(n, m):
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


def _adaptive_max(x, out_hw, with_index):
    """Adaptive max pool of the last two dims of (N, C, H, W): each output cell the max over its
    window [floor(i*H/oh), ceil((i+1)*H/oh)); the windows padded to the widest with -inf."""
    n, c, H, W = x.shape
    oh, ow = out_hw
    rb, cb = _adaptive_bounds(H, oh), _adaptive_bounds(W, ow)
    kh, kw = _b.max(e - s for s, e in rb), _b.max(e - s for s, e in cb)
    ridx = [[_b.min(s + k, e - 1) for k in range(kh)] for s, e in rb]
    cidx = [[_b.min(s + k, e - 1) for k in range(kw)] for s, e in cb]
    # a repeated last index adds no new maximum and, argmax taking the first, no new index
    t = _take(x, 2, [v for r in ridx for v in r])            # (N, C, oh*kh, W)
    t = _take(t, 3, [v for r in cidx for v in r])            # (N, C, oh*kh, ow*kw)
    t = F.reshape(t, (n, c, oh, kh, ow, kw))
    t = F.reshape(F.transpose(t, (0, 1, 2, 4, 3, 5)), (n, c, oh, ow, kh * kw))
    vals = _amax(t, -1)
    if not with_index:
        return vals, None
    arg = F.cast(F.argmax(t, -1), _dt.int64)
    pos = [[[ridx[a][u] * W + cidx[b][v] for u in range(kh) for v in range(kw)] for b in range(ow)]
           for a in range(oh)]
    table = F.broadcast_to(F.reshape(_const(pos), (1, 1, oh, ow, kh * kw)), (n, c, oh, ow, kh * kw))
    return vals, F.reshape(P2.gather_d(table, 4, F.reshape(arg, (n, c, oh, ow, 1))), (n, c, oh, ow))


def _out_hw(who, x, output_size, n=2):
    if _is_int(output_size) or output_size is None:
        output_size = (output_size,) * n
    if not isinstance(output_size, (tuple, list)) or len(output_size) != n:
        raise ValueError("For '%s', the 'output_size' must be an int or %d values, but got %r"
                         % (who, n, output_size))
    out = tuple(x.shape[x.ndim - n + i] if v is None else v for i, v in enumerate(output_size))
    if not _b.all(_is_int(v) and v > 0 for v in out):
        raise ValueError("For '%s', the 'output_size' must be positive ints, but got %r" % (who, output_size))
    return out


def _as4d(who, x, allowed):
    x = _tensor(who, "input", x)
    if x.ndim not in allowed:
        raise ValueError("For '%s', the input must be %s-D, but got shape %r"
                         % (who, " or ".join(str(a) for a in allowed), x.shape))
    return x


class AdaptiveMaxPool2D(Primitive):
    """AdaptiveMaxPool2D(output_size)(input_x) -> (output, argmax): the adaptive max pool of the
    last two dims ((C, H, W) or (N, C, H, W)) and the flat index h*W + w of each maximum (int64)."""

    def __init__(self, output_size):
        super().__init__(output_size=output_size)

    def __call__(self, input_x):
        x = _as4d(type(self).__name__, input_x, (3, 4))
        return _adaptive_max_pool2d(type(self).__name__, x, self.attrs["output_size"], True)


def _adaptive_max_pool2d(who, x, output_size, with_index):
    squeeze = x.ndim == 3
    x4 = F.expand_dims(x, 0) if squeeze else x
    vals, arg = _adaptive_max(x4, _out_hw(who, x4, output_size), with_index)
    if squeeze:
        vals = F.squeeze(vals, 0)
        arg = F.squeeze(arg, 0) if arg is not None else None
    return (vals, arg) if with_index else vals


@_export
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """ops.adaptive_max_pool2d(input, output_size, return_indices=False): AdaptiveMaxPool2D's
    output (and the int64 flat indices with return_indices)."""
    x = _as4d("adaptive_max_pool2d", input, (3, 4))
    return _adaptive_max_pool2d("adaptive_max_pool2d", x, output_size,
                                _bool("adaptive_max_pool2d", "return_indices", return_indices))


@_export
def adaptive_max_pool1d(input, output_size):
    """ops.adaptive_max_pool1d(input, output_size): the adaptive max pool of the last dim of
    (N, C, L) or (C, L)."""
    x = _as4d("adaptive_max_pool1d", input, (2, 3))
    _int("adaptive_max_pool1d", "output_size", output_size)
    out = _adaptive_max_pool2d("adaptive_max_pool1d", F.expand_dims(x, -2), (1, output_size), False)
    return F.squeeze(out, -2)


@_export
def adaptive_avg_pool1d(input, output_size):
    """ops.adaptive_avg_pool1d(input, output_size): the adaptive average pool of the last dim of
    (N, C, L) or (C, L)."""
    x = _as4d("adaptive_avg_pool1d", input, (2, 3))
    _int("adaptive_avg_pool1d", "output_size", output_size)
    if output_size <= 0:
        raise ValueError("For 'adaptive_avg_pool1d', the 'output_size' must be positive, but got %d"
                         % output_size)
    x4 = F.expand_dims(x, -2) if x.ndim == 3 else F.expand_dims(F.expand_dims(x, 0), -2)
    out = F.squeeze(NF.adaptive_avg_pool2d(x4, (1, output_size)), -2)
    return out if x.ndim == 3 else F.squeeze(out, 0)


@_export
def avg_pool1d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True):
    """ops.avg_pool1d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
    count_include_pad=True): the average pool of the last dim of (N, C, L)."""
    x = _as4d("avg_pool1d", input_x, (3,))
    for n, v in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding)):
        _int("avg_pool1d", n, v)
    out = NF.avg_pool2d(F.expand_dims(x, -2), (1, kernel_size), (1, stride), (0, padding), ceil_mode,
                        count_include_pad)
    return F.squeeze(out, -2)


def _lp_pool(who, x, norm_type, ks, stride, ceil_mode):
    p = float(_number(who, "norm_type", norm_type))
    if p == 0:
        raise ValueError("For '%s', the 'norm_type' must not be 0" % who)
    k = 1
    for v in ks:
        k *= v
    s = NF.avg_pool2d(F.pow(x, p), ks, stride, 0, ceil_mode, True)
    s = F.sign(s) * F.relu(F.abs(s)) * float(k)
    return F.pow(s, 1.0 / p)


@_export
def lp_pool1d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """ops.lp_pool1d(x, norm_type, kernel_size, stride=None, ceil_mode=False): (sum over each
    window of x**p)**(1/p) along the last dim of (N, C, L)."""
    t = _as4d("lp_pool1d", x, (2, 3))
    _int("lp_pool1d", "kernel_size", kernel_size)
    st = kernel_size if stride is None else _int("lp_pool1d", "stride", stride)
    x4 = F.expand_dims(t, -2) if t.ndim == 3 else F.expand_dims(F.expand_dims(t, 0), -2)
    out = F.squeeze(_lp_pool("lp_pool1d", x4, norm_type, (1, kernel_size), (1, st), ceil_mode), -2)
    return out if t.ndim == 3 else F.squeeze(out, 0)


@_export
def lp_pool2d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """ops.lp_pool2d(x, norm_type, kernel_size, stride=None, ceil_mode=False): the 2-D power
    average pool of (N, C, H, W)."""
    t = _as4d("lp_pool2d", x, (4,))
    ks = _pair("lp_pool2d", "kernel_size", kernel_size)
    st = ks if stride is None else _pair("lp_pool2d", "stride", stride)
    return _lp_pool("lp_pool2d", t, norm_type, ks, st, ceil_mode)


@_export
def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """ops.max_unpool2d(x, indices, kernel_size, stride=None, padding=0, output_size=None): the
    values of x written at their flat indices h*W + w (a max pool's) of zero planes of the
    unpooled size ((H-1)*stride - 2*padding + kernel_size, or output_size's last two)."""
    who = "max_unpool2d"
    t = _as4d(who, x, (3, 4))
    idx = _integral(who, "indices", _tensor(who, "indices", indices))
    if idx.shape != t.shape:
        raise ValueError("For '%s', 'indices' must have the shape of 'x' %r, but got %r"
                         % (who, t.shape, idx.shape))
    ks = _pair(who, "kernel_size", kernel_size)
    st = ks if stride is None else _pair(who, "stride", stride)
    pd = _pair(who, "padding", padding)
    H, W = t.shape[-2], t.shape[-1]
    oh = (H - 1) * st[0] - 2 * pd[0] + ks[0]
    ow = (W - 1) * st[1] - 2 * pd[1] + ks[1]
    if output_size is not None:
        oh, ow = tuple(output_size)[-2:]
    lead = tuple(t.shape[:-2])
    planes = 1
    for s in lead:
        planes *= s
    src = F.reshape(t, (planes, H * W))
    pos = F.reshape(F.cast(idx, _dt.int64), (planes, H * W))
    base = F.reshape(F.cast(_creation.arange(planes), _dt.int64) * (oh * ow), (planes, 1))
    flat = F.reshape(pos + base, (-1,))
    # a position written twice (overlapping windows) holds one value: the last write wins
    red, hit = _reduce_rows(flat, F.reshape(src, (-1,)), planes * oh * ow, "last")
    out = F.where(hit, red, _creation.zeros((), dtype=red.dtype))
    return F.reshape(_back(out, t.dtype), lead + (oh, ow))


def _im2col(who, x, ks, ds, pads, ss):
    x = _nchw(who, x)
    win, oh, ow = _patches(x, ks, ss, ds, ((pads[0], pads[0]), (pads[1], pads[1])), 0.0)
    n, c = x.shape[:2]
    return F.reshape(win, (n, c, ks[0] * ks[1], oh * ow))


class Im2Col(Primitive):
    """Im2Col(ksizes, strides=1, dilations=1, pads=0)(x): the sliding ksizes windows of the
    NCHW x as columns: (N, C, kh*kw, L) with L the number of window positions."""

    def __init__(self, ksizes, strides=1, dilations=1, pads=0):
        who = "Im2Col"
        super().__init__(ksizes=_pair(who, "ksizes", ksizes), strides=_pair(who, "strides", strides),
                         dilations=_pair(who, "dilations", dilations), pads=_pair(who, "pads", pads))

    def __call__(self, x):
        a = self.attrs
        return _im2col(type(self).__name__, x, a["ksizes"], a["dilations"], a["pads"], a["strides"])


@_export
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """ops.unfold(input, kernel_size, dilation=1, padding=0, stride=1): Im2Col's columns as
    (N, C*kh*kw, L)."""
    who = "unfold"
    ks = _pair(who, "kernel_size", kernel_size)
    out = _im2col(who, input, ks, _pair(who, "dilation", dilation), _pair(who, "padding", padding),
                  _pair(who, "stride", stride))
    n, c = out.shape[:2]
    return F.reshape(out, (n, c * ks[0] * ks[1], out.shape[-1]))


def _col2im(who, x, output_size, ks, ds, pads, ss):
    """Sums the columns (N, C, kh*kw, L) back into (N, C, H, W): each window element added at its
    place (index_add over the padded plane), the padding then cut off."""
    x = _tensor(who, "x", x)
    if x.ndim != 4:
        raise ValueError("For '%s', the input must be 4-D (N, C, kh*kw, L), but got %r" % (who, x.shape))
    H, W = _ints_of(who, "output_size", output_size) if not (
        isinstance(output_size, (tuple, list)) and len(output_size) == 2) else _ints(who, "output_size", output_size)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = ks, ds, pads, ss
    Hp, Wp = H + 2 * ph, W + 2 * pw
    oh, ow = _out_len(Hp, kh, sh, dh, 0, 0), _out_len(Wp, kw, sw, dw, 0, 0)
    n, c = x.shape[:2]
    if x.shape[2] != kh * kw or x.shape[3] != oh * ow:
        raise ValueError("For '%s', the input must have shape (N, C, %d, %d) for this output size and "
                         "kernel, but got %r" % (who, kh * kw, oh * ow, x.shape))
    pos = [(i * dh + a * sh) * Wp + (j * dw + b * sw)
           for i in range(kh) for j in range(kw) for a in range(oh) for b in range(ow)]
    w = _work(x)
    src = F.transpose(F.reshape(w, (n * c, kh * kw * oh * ow)), (1, 0))
    base = _creation.zeros((Hp * Wp, n * c), dtype=w.dtype)
    out = _op("index_add", (base, _const(pos), src), axis=0)
    out = F.reshape(F.transpose(out, (1, 0)), (n, c, Hp, Wp))[:, :, ph:ph + H, pw:pw + W]
    return _back(out, x.dtype)


class Col2Im(Primitive):
    """Col2Im(kernel_size, dilation=1, padding=0, stride=1)(x, output_size): the inverse
    arrangement of Im2Col, overlapping window elements summed: (N, C, kh*kw, L) -> (N, C, H, W)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        who = "Col2Im"
        super().__init__(kernel_size=_pair(who, "kernel_size", kernel_size),
                         dilation=_pair(who, "dilation", dilation),
                         padding=_pair(who, "padding", padding), stride=_pair(who, "stride", stride))

    def __call__(self, x, output_size):
        a = self.attrs
        return _col2im(type(self).__name__, x, output_size, a["kernel_size"], a["dilation"], a["padding"], a["stride"])


@_export
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """ops.fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1): (N, C*kh*kw, L)
    columns summed back into (N, C, H, W) (output_size: two ints or a 1-D Tensor of two)."""
    who = "fold"
    x = _tensor(who, "input", input)
    ks = _pair(who, "kernel_size", kernel_size)
    if x.ndim != 3 or x.shape[1] % (ks[0] * ks[1]):
        raise ValueError("For 'fold', the input must be (N, C*kh*kw, L), but got %r" % (x.shape,))
    x4 = F.reshape(x, (x.shape[0], x.shape[1] // (ks[0] * ks[1]), ks[0] * ks[1], x.shape[2]))
    return _col2im(who, x4, output_size, ks, _pair(who, "dilation", dilation),
                   _pair(who, "padding", padding), _pair(who, "stride", stride))


@_export
def col2im(input_x, output_size, kernel_size, dilation, padding_value, stride):
    """ops.col2im(input_x, output_size, kernel_size, dilation, padding_value, stride): Col2Im's."""
    who = "col2im"
    return _col2im(who, input_x, output_size, _pair(who, "kernel_size", kernel_size),
                   _pair(who, "dilation", dilation), _pair(who, "padding_value", padding_value),
                   _pair(who, "stride", stride))


# ----- normalisation, padding, resizing -----------------------------------------------------------

def _lrn(who, x, depth_radius, bias, alpha, beta, norm_region):
    x = _floating(who, "x", _tensor(who, "x", x))
    _int(who, "depth_radius", depth_radius)
    if depth_radius < 0:
        raise ValueError("For '%s', the 'depth_radius' must be non-negative, but got %d" % (who, depth_radius))
    if norm_region != "ACROSS_CHANNELS":
        raise ValueError("For '%s', the 'norm_region' must be 'ACROSS_CHANNELS', but got %r" % (who, norm_region))
    if x.ndim != 4:
        raise ValueError("For '%s', the input must be 4-D (NCHW), but got shape %r" % (who, x.shape))
    r = depth_radius
    c = x.shape[1]
    sq = F.square(x)
    padded = NF.pad(sq, (0, 0, 0, 0, r, r)) if r else sq
    total = padded[:, 0:c]
    for k in range(1, 2 * r + 1):
        total = total + padded[:, k:k + c]
    return x / F.pow(total * float(alpha) + float(bias), float(beta))


class LRN(Primitive):
    """LRN(depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region='ACROSS_CHANNELS')(x):
    x / (bias + alpha * sum of x**2 over channels c-r..c+r) ** beta, NCHW."""

    def __init__(self, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
        who = "LRN"
        _int(who, "depth_radius", depth_radius)
        for n, v in (("bias", bias), ("alpha", alpha), ("beta", beta)):
            _number(who, n, v)
        if not isinstance(norm_region, str):
            raise TypeError("For 'LRN', the 'norm_region' must be a str, but got %r" % (norm_region,))
        super().__init__(depth_radius=depth_radius, bias=float(bias), alpha=float(alpha),
                         beta=float(beta), norm_region=norm_region)

    def __call__(self, x):
        a = self.attrs
        return _lrn(type(self).__name__, x, a["depth_radius"], a["bias"], a["alpha"], a["beta"], a["norm_region"])


@_export
def lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
    """ops.lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region='ACROSS_CHANNELS')."""
    return _lrn("lrn", x, depth_radius, bias, alpha, beta, norm_region)


def _mirror_index(n, lo, hi, symmetric):
    """Source indices of a dim of n padded by lo and hi by reflection (edge not repeated) or
    symmetric reflection (edge repeated)."""
    out = []
    for i in range(-lo, n + hi):
        j = i
        if symmetric:
            period = 2 * n
            j = j % period
            j = j if j < n else period - 1 - j
        else:
            period = 2 * (n - 1) if n > 1 else 1
            j = j % period
            j = j if j < n else period - j
        out.append(j)
    return out


class MirrorPad(Primitive):
    """MirrorPad(mode='REFLECT')(input_x, paddings): each dim d padded by paddings[d] = (before,
    after) (an (R, 2) int Tensor, read) with its mirror image: 'REFLECT' leaves the edge out,
    'SYMMETRIC' repeats it."""

    def __init__(self, mode="REFLECT"):
        if mode not in ("REFLECT", "SYMMETRIC"):
            raise ValueError("For 'MirrorPad', the 'mode' must be 'REFLECT' or 'SYMMETRIC', but got %r" % (mode,))
        super().__init__(mode=mode)

    def __call__(self, input_x, paddings):
        x = _tensor(type(self).__name__, "input_x", input_x)
        p = _tensor(type(self).__name__, "paddings", paddings)
        if tuple(p.shape) != (x.ndim, 2):
            raise ValueError("For 'MirrorPad', the 'paddings' must have shape (%d, 2), but got %r"
                             % (x.ndim, p.shape))
        pads = [tuple(int(v) for v in row) for row in p.tolist()]
        sym = self.attrs["mode"] == "SYMMETRIC"
        for d, (lo, hi) in enumerate(pads):
            n = x.shape[d]
            if lo < 0 or hi < 0 or lo > n - (0 if sym else 1) or hi > n - (0 if sym else 1):
                raise ValueError("For 'MirrorPad', the paddings of dim %d must be in [0, %d], but got %r"
                                 % (d, n - (0 if sym else 1), (lo, hi)))
            if lo or hi:
                x = _take(x, d, _mirror_index(n, lo, hi, sym))
        return x


class PadV3(Primitive):
    """PadV3(mode='constant', paddings_contiguous=True)(x, paddings, constant_value=None): x
    padded as ops.pad (paddings from the last dim backwards: (left, right, top, bottom, ...));
    modes 'constant', 'reflect', 'edge' and 'circular'. paddings_contiguous=False takes all the
    befores first, then the afters."""

    def __init__(self, mode="constant", paddings_contiguous=True):
        if mode not in ("constant", "reflect", "edge", "circular"):
            raise ValueError("For 'PadV3', the 'mode' must be 'constant', 'reflect', 'edge' or 'circular', "
                             "but got %r" % (mode,))
        super().__init__(mode=mode, paddings_contiguous=_bool("PadV3", "paddings_contiguous",
                                                              paddings_contiguous))

    def __call__(self, x, paddings, constant_value=None):
        x = _tensor(type(self).__name__, "x", x)
        p = list(_ints_of(type(self).__name__, "paddings", paddings))
        if len(p) % 2 or len(p) > 2 * x.ndim:
            raise ValueError("For 'PadV3', the 'paddings' must hold an even number of values, at most %d, "
                             "but got %r" % (2 * x.ndim, p))
        if not self.attrs["paddings_contiguous"]:
            h = len(p) // 2
            p = [v for pair in zip(p[:h], p[h:]) for v in pair]
        mode = {"edge": "replicate"}.get(self.attrs["mode"], self.attrs["mode"])
        value = 0.0 if constant_value is None else _scalar(type(self).__name__, "constant_value", constant_value)
        return NF.pad(x, tuple(p), mode, value)


def _size2(who, size, n):
    s = _ints_of(who, "size", size)
    if len(s) != n or _b.min(s) <= 0:
        raise ValueError("For '%s', the 'size' must hold %d positive ints, but got %r" % (who, n, s))
    return s


class ResizeNearestNeighborV2(Primitive):
    """ResizeNearestNeighborV2(align_corners=False, half_pixel_centers=False)(image, size):
    ResizeNearestNeighbor with the (H, W) size given as a 1-D int Tensor (read)."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        who = "ResizeNearestNeighborV2"
        if align_corners and half_pixel_centers:
            raise ValueError("For '%s', 'align_corners' and 'half_pixel_centers' can not both be True" % who)
        super().__init__(align_corners=_bool(who, "align_corners", align_corners),
                         half_pixel_centers=_bool(who, "half_pixel_centers", half_pixel_centers))

    def __call__(self, image, size):
        x = _nchw(type(self).__name__, image)
        a = self.attrs
        for axis, n_out in zip((2, 3), _size2(type(self).__name__, size, 2)):
            x = _take(x, axis, P2._nearest_index(x.shape[axis], n_out, a["align_corners"],
                                                  a["half_pixel_centers"]))
        return x


class ResizeLinear1D(Primitive):
    """ResizeLinear1D(coordinate_transformation_mode='align_corners')(x, size): linear resize of
    the last dim of (N, C, W) to size (a (1,) int Tensor, read); modes 'align_corners',
    'half_pixel' and 'asymmetric'."""

    def __init__(self, coordinate_transformation_mode="align_corners"):
        if coordinate_transformation_mode not in ("align_corners", "half_pixel", "asymmetric"):
            raise ValueError("For 'ResizeLinear1D', the 'coordinate_transformation_mode' must be "
                             "'align_corners', 'half_pixel' or 'asymmetric', but got %r"
                             % (coordinate_transformation_mode,))
        super().__init__(coordinate_transformation_mode=coordinate_transformation_mode)

    def __call__(self, x, size):
        x = _floating(type(self).__name__, "x", _tensor(type(self).__name__, "x", x))
        if x.ndim != 3:
            raise ValueError("For 'ResizeLinear1D', the 'x' must be 3-D, but got shape %r" % (x.shape,))
        (n_out,) = _size2(type(self).__name__, size, 1)
        mode = self.attrs["coordinate_transformation_mode"]
        lo, hi, w = P2._linear_taps(x.shape[2], n_out, mode == "align_corners", mode == "half_pixel")
        wt = _creation.tensor(w, x.dtype)
        return _take(x, 2, lo) * (1.0 - wt) + _take(x, 2, hi) * wt


# ----- window functions (constants computed from ints) ----------------------------------------------

def _window(who, n, periodic, dtype, fn):
    _int(who, "window_length", n)
    if n < 0:
        raise ValueError("For '%s', the 'window_length' must be non-negative, but got %d" % (who, n))
    _bool(who, "periodic", periodic)
    if dtype is None:
        dtype = _dt.float32
    if not dtype.is_floating_point:
        raise TypeError("For '%s', the 'dtype' must be a floating type, but got %s" % (who, dtype))
    if n == 0:
        return _creation.zeros((0,), dtype=dtype)
    if n == 1:
        return _creation.ones((1,), dtype=dtype)
    d = n if periodic else n - 1
    return _creation.tensor([fn(k, d) for k in range(n)], dtype)


def _cosines(*coef):
    return lambda k, d: _b.sum(c * _math.cos(2 * _math.pi * i * k / d) * (-1) ** i for i, c in enumerate(coef))


@_export
def hann_window(window_length, periodic=True, *, dtype=None):
    """ops.hann_window(window_length, periodic=True, *, dtype=None): 0.5 - 0.5 cos(2 pi k / d)."""
    return _window("hann_window", window_length, periodic, dtype, _cosines(0.5, 0.5))


@_export
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None):
    """ops.hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None):
    alpha - beta cos(2 pi k / d)."""
    return _window("hamming_window", window_length, periodic, dtype, _cosines(float(alpha), float(beta)))


@_export
def blackman_window(window_length, periodic=True, *, dtype=None):
    """ops.blackman_window(window_length, periodic=True, *, dtype=None): 0.42 - 0.5 cos(2 pi k/d)
    + 0.08 cos(4 pi k/d)."""
    return _window("blackman_window", window_length, periodic, dtype, _cosines(0.42, 0.5, 0.08))


@_export
def bartlett_window(window_length, periodic=True, *, dtype=None):
    """ops.bartlett_window(window_length, periodic=True, *, dtype=None): the triangle
    1 - |2k/d - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, lambda k, d: 1 - _b.abs(2.0 * k / d - 1))


def _i0(x):
    """The modified Bessel function I0 by its power series (converges for every x)."""
    total, term, k = 1.0, 1.0, 1
    while True:
        term *= (x / (2.0 * k)) ** 2
        total += term
        if term < total * 1e-17:
            return total
        k += 1


@_export
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None):
    """ops.kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None):
    I0(beta sqrt(1 - (2k/d - 1)**2)) / I0(beta)."""
    b = float(_number("kaiser_window", "beta", beta))
    return _window("kaiser_window", window_length, periodic, dtype,
                   lambda k, d: _i0(b * _math.sqrt(_b.max(0.0, 1 - (2.0 * k / d - 1) ** 2))) / _i0(b))


class _WindowPrim(Primitive):
    def __init__(self, periodic=True, dtype=_dt.float32, **extra):
        super().__init__(periodic=_bool(type(self).__name__, "periodic", periodic), dtype=dtype, **extra)

    def __call__(self, window_length):
        n = int(_scalar(type(self).__name__, "window_length", _tensor(type(self).__name__, "window_length", window_length)))
        a = dict(self.attrs)
        return self._fn(n, a.pop("periodic"), dtype=a.pop("dtype"), **a)


class BartlettWindow(_WindowPrim):
    """BartlettWindow(periodic=True, dtype=float32)(window_length): ops.bartlett_window's."""
    _fn = staticmethod(bartlett_window)


class BlackmanWindow(_WindowPrim):
    """BlackmanWindow(periodic=True, dtype=float32)(window_length): ops.blackman_window's."""
    _fn = staticmethod(blackman_window)


class HammingWindow(_WindowPrim):
    """HammingWindow(periodic=True, alpha=0.54, beta=0.46, dtype=float32)(length)."""

    def __init__(self, periodic=True, alpha=0.54, beta=0.46, dtype=_dt.float32):
        super().__init__(periodic, dtype, alpha=float(_number("HammingWindow", "alpha", alpha)),
                         beta=float(_number("HammingWindow", "beta", beta)))

    _fn = staticmethod(hamming_window)


# ----- random draws and dropout ---------------------------------------------------------------------

class StandardLaplace(_Seeded):
    """StandardLaplace(seed=0, seed2=0)(shape): float32 Laplace(0, 1) samples."""

    def __call__(self, shape):
        return F2.standard_laplace(_ints_of(type(self).__name__, "shape", shape), self._seed())


class TruncatedNormal(_Seeded):
    """TruncatedNormal(seed=0, seed2=0, dtype=float32)(shape): N(0, 1) samples within [-2, 2]
    (drawn again where outside); shape a 1-D int Tensor (read) or tuple."""

    def __init__(self, seed=0, seed2=0, dtype=_dt.float32):
        if not dtype.is_floating_point:
            raise TypeError("For 'TruncatedNormal', the 'dtype' must be a floating type, but got %s" % dtype)
        super().__init__(seed, seed2, dtype=dtype)

    def __call__(self, shape):
        s = _ints_of(type(self).__name__, "shape", shape)
        seed = self._seed()
        out = _creation.randn(s, seed=seed)
        for k in range(8):  # P(outside) = 4.6%: after 8 redraws ~1e-11 of the elements remain
            again = _creation.randn(s, seed=None if seed is None else seed + k + 1)
            out = F.where(F.gt(F.abs(out), 2.0), again, out)
        return F.cast(F.clamp(out, -2.0, 2.0), self.attrs["dtype"])


class UniformInt(_Seeded):
    """UniformInt(seed=0, seed2=0)(shape, minval, maxval): int32 samples uniform in [minval,
    maxval) (0-D int Tensors)."""

    def __call__(self, shape, minval, maxval):
        s = _ints_of(type(self).__name__, "shape", shape)
        lo = int(_scalar(type(self).__name__, "minval", minval))
        hi = int(_scalar(type(self).__name__, "maxval", maxval))
        if lo >= hi:
            raise ValueError("For 'UniformInt', the 'minval' must be less than 'maxval', but got %d and %d"
                             % (lo, hi))
        u = _creation.rand(s, seed=self._seed(), dtype=_dt.float64)
        return F.cast(F.clamp(F.floor(u * float(hi - lo)), 0, hi - lo - 1) + lo, _dt.int32)


def _categorical(who, logits, num_sample, seed, dtype):
    x = _floating(who, "logits", _tensor(who, "logits", logits))
    if x.ndim != 2:
        raise ValueError("For '%s', the 'logits' must be 2-D, but got shape %r" % (who, x.shape))
    _int(who, "num_sample", num_sample)
    _int(who, "seed", seed)
    p = F.exp(x - _amax(x, -1, True))
    return F.cast(F2.multinomial(p, num_sample, True, seed or None), dtype)


class RandomCategorical(Primitive):
    """RandomCategorical(dtype=int64)(logits, num_sample, seed=0): num_sample category indices per
    row drawn with probabilities softmax(logits)."""

    def __init__(self, dtype=_dt.int64):
        if dtype not in (_dt.int16 if hasattr(_dt, "int16") else _dt.int32, _dt.int32, _dt.int64):
            raise TypeError("For 'RandomCategorical', the 'dtype' must be int16, int32 or int64, but got %s"
                            % dtype)
        super().__init__(dtype=dtype)

    def __call__(self, logits, num_sample, seed=0):
        return _categorical(type(self).__name__, logits, num_sample, seed, self.attrs["dtype"])


@_export
def random_categorical(logits, num_sample, seed=0, dtype=_dt.int64):
    """ops.random_categorical(logits, num_sample, seed=0, dtype=int64): RandomCategorical's."""
    return _categorical("random_categorical", logits, num_sample, seed, dtype)


class _DropoutND(Primitive):
    def __init__(self, keep_prob=0.5):
        _number(type(self).__name__, "keep_prob", keep_prob)
        if not 0 <= keep_prob <= 1:
            raise ValueError("For '%s', the 'keep_prob' must be in [0, 1], but got %r" % (type(self).__name__, keep_prob))
        super().__init__(keep_prob=float(keep_prob))

    def __call__(self, input_x):
        x = _tensor(type(self).__name__, "input_x", input_x)
        if x.ndim != self._rank:
            raise ValueError("For '%s', the input must be %d-D, but got shape %r" % (type(self).__name__, self._rank, x.shape))
        kp = self.attrs["keep_prob"]
        keep = F.lt(_creation.rand(tuple(x.shape[:2]) + (1,) * (x.ndim - 2)), kp)
        mask = F.broadcast_to(keep, tuple(x.shape))
        scale = 0.0 if kp == 0 else 1.0 / kp
        return F.where(mask, x * scale, _creation.zeros((), dtype=x.dtype)), mask


class Dropout2D(_DropoutND):
    """Dropout2D(keep_prob=0.5)(input_x) -> (output, mask): whole channels of NCHW zeroed with
    probability 1 - keep_prob, the rest scaled by 1/keep_prob; mask (bool) says which were kept."""
    _rank = 4


class Dropout3D(_DropoutND):
    """Dropout3D(keep_prob=0.5)(input_x) -> (output, mask): Dropout2D for NCDHW."""
    _rank = 5


# ----- optimizer update primitives: in-place writes of Parameter inputs -----------------------------
# Each computes MindSpore's documented update from the current values, then writes every state
# Parameter (var, accum, m, v, ...). Scalars (lr, beta1, ...) may be numbers or one-element Tensors.

def _write(who, targets, values):
    for name, t, v in zip(("var", "accum", "state", "state"), targets, values):
        if not isinstance(t, _Tensor):
            raise TypeError("For '%s', the updated input must be a Parameter or Tensor, but got %s"
                            % (who, type(t).__name__))
    for t, v in zip(targets, values):
        t[...] = _back(v, t.dtype) if v.shape == t.shape else F.broadcast_to(_back(v, t.dtype), t.shape)


def _s(x):
    """A scalar input as an operand: a one-element Tensor as a 0-D tensor, a number as it is."""
    if isinstance(x, _Tensor):
        return F.reshape(x, ()) if x.size == 1 else x
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError("a scalar input must be a number or a Tensor, but got %s" % type(x).__name__)
    return float(x)


def _same(who, **ts):
    ref = None
    for name, t in ts.items():
        _tensor(who, name, t)
        if ref is None:
            ref = (name, t)
        elif t.shape != ref[1].shape:
            raise ValueError("For '%s', '%s' must have the shape of '%s' %r, but got %r"
                             % (who, name, ref[0], ref[1].shape, t.shape))


class _Apply(Primitive):
    def __init__(self, use_locking=False, **attrs):
        super().__init__(use_locking=_bool(type(self).__name__, "use_locking", use_locking), **attrs)


class ApplyMomentum(Primitive):
    """ApplyMomentum(use_nesterov=False, use_locking=False, gradient_scale=1.0)(variable,
    accumulation, learning_rate, gradient, momentum): accum = accum * momentum + gradient;
    variable -= lr * accum (Nesterov: lr * gradient + lr * momentum * accum). Returns variable."""

    def __init__(self, use_nesterov=False, use_locking=False, gradient_scale=1.0):
        super().__init__(use_nesterov=_bool("ApplyMomentum", "use_nesterov", use_nesterov),
                         use_locking=_bool("ApplyMomentum", "use_locking", use_locking),
                         gradient_scale=float(_number("ApplyMomentum", "gradient_scale", gradient_scale)))

    @runtime_state("writes a Parameter in place")
    def __call__(self, variable, accumulation, learning_rate, gradient, momentum):
        _same(type(self).__name__, variable=variable, accumulation=accumulation, gradient=gradient)
        lr, mom = _s(learning_rate), _s(momentum)
        g = gradient * self.attrs["gradient_scale"] if self.attrs["gradient_scale"] != 1.0 else gradient
        acc = accumulation * mom + g
        step = (g * lr + acc * mom * lr) if self.attrs["use_nesterov"] else acc * lr
        _write(type(self).__name__, (accumulation, variable), (acc, variable - step))
        return variable


class ApplyGradientDescent(Primitive):
    """ApplyGradientDescent()(var, alpha, delta): var -= alpha * delta; returns var."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, alpha, delta):
        _same(type(self).__name__, var=var, delta=delta)
        _write(type(self).__name__, (var,), (var - delta * _s(alpha),))
        return var


class ApplyProximalGradientDescent(Primitive):
    """ApplyProximalGradientDescent()(var, alpha, l1, l2, delta): prox = var - alpha * delta;
    var = sign(prox) / (1 + alpha * l2) * max(|prox| - alpha * l1, 0). Returns var."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, alpha, l1, l2, delta):
        _same(type(self).__name__, var=var, delta=delta)
        a, a1, a2 = _s(alpha), _s(l1), _s(l2)
        prox = var - delta * a
        new = F.sign(prox) / (a * a2 + 1.0) * F.relu(F.abs(prox) - a * a1)
        _write(type(self).__name__, (var,), (new,))
        return var


class ApplyRMSProp(_Apply):
    """ApplyRMSProp(use_locking=False)(var, mean_square, moment, learning_rate, grad, decay,
    momentum, epsilon): ms = decay*ms + (1-decay)*grad**2; mom = momentum*mom +
    lr*grad/sqrt(ms + epsilon); var -= mom. Returns var."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, mean_square, moment, learning_rate, grad, decay, momentum, epsilon):
        _same(type(self).__name__, var=var, mean_square=mean_square, moment=moment, grad=grad)
        d, m, e, lr = _s(decay), _s(momentum), _s(epsilon), _s(learning_rate)
        ms = mean_square * d + F.square(grad) * (1.0 - d)
        mom = moment * m + grad * lr / F.sqrt(ms + e)
        _write(type(self).__name__, (mean_square, moment, var), (ms, mom, var - mom))
        return var


class ApplyCenteredRMSProp(_Apply):
    """ApplyCenteredRMSProp(use_locking=False)(var, mean_gradient, mean_square, moment, grad,
    learning_rate, decay, momentum, epsilon): mg = decay*mg + (1-decay)*grad; ms likewise with
    grad**2; mom = momentum*mom + lr*grad/sqrt(ms - mg**2 + epsilon); var -= mom."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, mean_gradient, mean_square, moment, grad, learning_rate, decay, momentum,
                 epsilon):
        _same(type(self).__name__, var=var, mean_gradient=mean_gradient, mean_square=mean_square, moment=moment,
              grad=grad)
        d, m, e, lr = _s(decay), _s(momentum), _s(epsilon), _s(learning_rate)
        mg = mean_gradient * d + grad * (1.0 - d)
        ms = mean_square * d + F.square(grad) * (1.0 - d)
        mom = moment * m + grad * lr / F.sqrt(ms - F.square(mg) + e)
        _write(type(self).__name__, (mean_gradient, mean_square, moment, var), (mg, ms, mom, var - mom))
        return var


class ApplyAdagrad(Primitive):
    """ApplyAdagrad(update_slots=True)(var, accum, lr, grad) -> (var, accum): accum += grad**2
    (when update_slots); var -= lr * grad / sqrt(accum)."""

    def __init__(self, update_slots=True):
        super().__init__(update_slots=_bool(type(self).__name__, "update_slots", update_slots))

    def _eps(self):
        return None

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, accum, lr, grad):
        _same(type(self).__name__, var=var, accum=accum, grad=grad)
        acc = accum + F.square(grad) if self.attrs["update_slots"] else accum
        e = self._eps()
        denom = F.sqrt(acc) if e is None else F.sqrt(acc) + e
        _write(type(self).__name__, (accum, var), (acc, var - grad * _s(lr) / denom))
        return var, accum


class ApplyAdagradV2(ApplyAdagrad):
    """ApplyAdagradV2(epsilon, update_slots=True)(var, accum, lr, grad) -> (var, accum): as
    ApplyAdagrad with var -= lr * grad / (sqrt(accum) + epsilon)."""

    def __init__(self, epsilon, update_slots=True):
        Primitive.__init__(self, epsilon=float(_number("ApplyAdagradV2", "epsilon", epsilon)),
                           update_slots=_bool("ApplyAdagradV2", "update_slots", update_slots))

    def _eps(self):
        return self.attrs["epsilon"]


class ApplyProximalAdagrad(_Apply):
    """ApplyProximalAdagrad(use_locking=False)(var, accum, lr, l1, l2, grad) -> (var, accum):
    accum += grad**2; prox = var - lr*grad/sqrt(accum); var = sign(prox)/(1 + lr*l2) *
    max(|prox| - lr*l1, 0)."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, accum, lr, l1, l2, grad):
        _same(type(self).__name__, var=var, accum=accum, grad=grad)
        r, a1, a2 = _s(lr), _s(l1), _s(l2)
        acc = accum + F.square(grad)
        prox = var - grad * r / F.sqrt(acc)
        new = F.sign(prox) / (r * a2 + 1.0) * F.relu(F.abs(prox) - r * a1)
        _write(type(self).__name__, (accum, var), (acc, new))
        return var, accum


class ApplyAdaMax(Primitive):
    """ApplyAdaMax()(var, m, v, beta1_power, lr, beta1, beta2, epsilon, grad) -> (var, m, v):
    m = beta1*m + (1-beta1)*grad; v = max(beta2*v, |grad|); var -= lr/(1-beta1_power) *
    m/(v + epsilon)."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, m, v, beta1_power, lr, beta1, beta2, epsilon, grad):
        _same(type(self).__name__, var=var, m=m, v=v, grad=grad)
        b1, b2 = _s(beta1), _s(beta2)
        m2 = m * b1 + grad * (1.0 - b1)
        v2 = F.maximum(v * b2, F.abs(grad))
        new = var - m2 / (v2 + _s(epsilon)) * (_s(lr) / (1.0 - _s(beta1_power)))
        _write(type(self).__name__, (m, v, var), (m2, v2, new))
        return var, m, v


class ApplyAdadelta(Primitive):
    """ApplyAdadelta()(var, accum, accum_update, lr, rho, epsilon, grad) -> (var, accum,
    accum_update): accum = rho*accum + (1-rho)*grad**2; update = sqrt(accum_update + eps) /
    sqrt(accum + eps) * grad; accum_update = rho*accum_update + (1-rho)*update**2; var -= lr*update."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, accum, accum_update, lr, rho, epsilon, grad):
        _same(type(self).__name__, var=var, accum=accum, accum_update=accum_update, grad=grad)
        r, e = _s(rho), _s(epsilon)
        acc = accum * r + F.square(grad) * (1.0 - r)
        upd = F.sqrt(accum_update + e) / F.sqrt(acc + e) * grad
        au = accum_update * r + F.square(upd) * (1.0 - r)
        _write(type(self).__name__, (accum, accum_update, var), (acc, au, var - upd * _s(lr)))
        return var, accum, accum_update


class _ApplySign(Primitive):
    @runtime_state("writes a Parameter in place")
    def __call__(self, var, m, lr, alpha_or_logbase, sign_decay, beta, grad):
        _same(type(self).__name__, var=var, m=m, grad=grad)
        b = _s(beta)
        m2 = m * b + grad * (1.0 - b)
        agree = F.sign(grad) * F.sign(m2) * _s(sign_decay)
        upd = self._scale(agree, _s(alpha_or_logbase)) * grad
        _write(type(self).__name__, (m, var), (m2, var - upd * _s(lr)))
        return var, m


class ApplyAddSign(_ApplySign):
    """ApplyAddSign()(var, m, lr, alpha, sign_decay, beta, grad) -> (var, m): m = beta*m +
    (1-beta)*grad; var -= lr * (alpha + sign_decay*sign(grad)*sign(m)) * grad."""

    @staticmethod
    def _scale(agree, alpha):
        return agree + alpha


class ApplyPowerSign(_ApplySign):
    """ApplyPowerSign()(var, m, lr, logbase, sign_decay, beta, grad) -> (var, m): m as AddSign;
    var -= lr * exp(logbase * sign_decay * sign(grad) * sign(m)) * grad."""

    @staticmethod
    def _scale(agree, logbase):
        return F.exp(agree * logbase)


class ApplyFtrl(_Apply):
    """ApplyFtrl(use_locking=False)(var, accum, linear, grad, lr, l1, l2, lr_power): FTRL-proximal:
    accum' = accum + grad**2; linear += grad - (accum'**-p - accum**-p)/lr * var; var =
    (sign(linear)*l1 - linear) / (accum'**-p/lr + 2*l2) where |linear| > l1, else 0. Returns var."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, accum, linear, grad, lr, l1, l2, lr_power):
        _same(type(self).__name__, var=var, accum=accum, linear=linear, grad=grad)
        r, a1, a2, p = _s(lr), _s(l1), _s(l2), _s(lr_power)
        acc = accum + F.square(grad)
        lin = linear + grad - (F.pow(acc, -p) - F.pow(accum, -p)) / r * var
        quad = F.pow(acc, -p) / r + a2 * 2.0
        new = F.where(F.gt(F.abs(lin), a1), (F.sign(lin) * a1 - lin) / quad, _creation.zeros((), dtype=var.dtype))
        _write(type(self).__name__, (accum, linear, var), (acc, lin, new))
        return var


class SGD(Primitive):
    """SGD(dampening=0.0, weight_decay=0.0, nesterov=False)(parameters, gradient, learning_rate,
    accum, momentum, stat): g = gradient + weight_decay*parameters; with momentum > 0,
    accum = g on the first step (stat > 0, which is then set to 0), else momentum*accum +
    (1-dampening)*g, and g = accum (Nesterov: g + momentum*accum); parameters -= lr * g."""

    def __init__(self, dampening=0.0, weight_decay=0.0, nesterov=False):
        nesterov = _bool("SGD", "nesterov", nesterov)
        dampening = float(_number("SGD", "dampening", dampening))
        if nesterov and dampening != 0:
            raise ValueError("For 'SGD', nesterov requires dampening 0, but got %r" % dampening)
        super().__init__(dampening=dampening, nesterov=nesterov,
                         weight_decay=float(_number("SGD", "weight_decay", weight_decay)))

    @runtime_state("writes a Parameter in place")
    def __call__(self, parameters, gradient, learning_rate, accum, momentum, stat):
        _same(type(self).__name__, parameters=parameters, gradient=gradient, accum=accum)
        a = self.attrs
        g = gradient + parameters * a["weight_decay"] if a["weight_decay"] else gradient
        mom = _s(momentum)
        first = F.gt(F.reshape(stat, ()) if isinstance(stat, _Tensor) else _const(float(stat), _dt.float32), 0)
        acc = F.where(first, g, accum * mom + g * (1.0 - a["dampening"]))
        use_mom = F.gt(mom if isinstance(mom, _Tensor) else _const(mom, _dt.float32), 0)
        step = F.where(use_mom, (g + acc * mom) if a["nesterov"] else acc, g)
        targets, values = [accum, parameters], [F.where(use_mom, acc, accum), parameters - step * _s(learning_rate)]
        if isinstance(stat, _Tensor):
            targets.append(stat)
            values.append(F.where(use_mom, _creation.zeros_like(stat), stat))
        _write(type(self).__name__, targets, values)
        return parameters


class Adam(Primitive):
    """Adam(use_locking=False, use_nesterov=False)(var, m, v, beta1_power, beta2_power, lr,
    beta1, beta2, epsilon, gradient) -> (var, m, v): m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g**2;
    var -= lr*sqrt(1-beta2_power)/(1-beta1_power) * m/(sqrt(v) + epsilon) (Nesterov: with
    b1*m + (1-b1)*g in place of m)."""

    def __init__(self, use_locking=False, use_nesterov=False):
        super().__init__(use_locking=_bool("Adam", "use_locking", use_locking),
                         use_nesterov=_bool("Adam", "use_nesterov", use_nesterov))

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, gradient):
        _same(type(self).__name__, var=var, m=m, v=v, gradient=gradient)
        b1, b2 = _s(beta1), _s(beta2)
        m2 = m * b1 + gradient * (1.0 - b1)
        v2 = v * b2 + F.square(gradient) * (1.0 - b2)
        lr_t = F.mul(_s(lr), F.sqrt(_const(1.0, var.dtype) - _s(beta2_power))) / (1.0 - _s(beta1_power))
        num = (m2 * b1 + gradient * (1.0 - b1)) if self.attrs["use_nesterov"] else m2
        _write(type(self).__name__, (m, v, var), (m2, v2, var - num / (F.sqrt(v2) + _s(epsilon)) * lr_t))
        return var, m, v


class AdamWeightDecay(Primitive):
    """AdamWeightDecay(use_locking=False)(var, m, v, lr, beta1, beta2, epsilon, decay, gradient)
    -> (var, m, v): m and v as Adam's; var -= lr * (m/(sqrt(v) + epsilon) + decay*var)."""

    def __init__(self, use_locking=False):
        super().__init__(use_locking=_bool("AdamWeightDecay", "use_locking", use_locking))

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, m, v, lr, beta1, beta2, epsilon, decay, gradient):
        _same(type(self).__name__, var=var, m=m, v=v, gradient=gradient)
        b1, b2 = _s(beta1), _s(beta2)
        m2 = m * b1 + gradient * (1.0 - b1)
        v2 = v * b2 + F.square(gradient) * (1.0 - b2)
        upd = m2 / (F.sqrt(v2) + _s(epsilon)) + var * _s(decay)
        _write(type(self).__name__, (m, v, var), (m2, v2, var - upd * _s(lr)))
        return var, m, v


class BatchNorm(Primitive):
    """BatchNorm(is_training=False, epsilon=1e-5, momentum=0.1, data_format='NCHW')(input_x,
    scale, bias, mean, variance) -> (y, batch_mean, batch_variance, reserve_space_1,
    reserve_space_2). Inference normalises with mean/variance; training with the batch's
    statistics (over every dim but 1) and updates the Parameters mean and variance in place:
    running = (1 - momentum) * running + momentum * batch (the variance unbiased), a graph break
    under jit as Assign()."""

    def __init__(self, is_training=False, epsilon=1e-5, momentum=0.1, data_format="NCHW"):
        who = "BatchNorm"
        epsilon = float(_number(who, "epsilon", epsilon))
        momentum = float(_number(who, "momentum", momentum))
        if not 0 < epsilon <= 1:
            raise ValueError("For 'BatchNorm', the 'epsilon' must be in (0, 1], but got %r" % epsilon)
        if not 0 <= momentum <= 1:
            raise ValueError("For 'BatchNorm', the 'momentum' must be in [0, 1], but got %r" % momentum)
        if data_format != "NCHW":
            raise ValueError("For 'BatchNorm', only data_format 'NCHW' is supported, but got %r" % (data_format,))
        super().__init__(is_training=_bool(who, "is_training", is_training), epsilon=epsilon,
                         momentum=momentum, data_format=data_format)

    def __call__(self, input_x, scale, bias, mean, variance):
        x = _floating(type(self).__name__, "input_x", _tensor(type(self).__name__, "input_x", input_x))
        if x.ndim < 2:
            raise ValueError("For 'BatchNorm', the rank of 'input_x' must be >= 2, but got %d" % x.ndim)
        for n, t in (("scale", scale), ("bias", bias), ("mean", mean), ("variance", variance)):
            if _tensor(type(self).__name__, n, t).shape != (x.shape[1],):
                raise ValueError("For 'BatchNorm', the '%s' must have shape (%d,), but got %r"
                                 % (n, x.shape[1], t.shape))
        a = self.attrs
        if a["is_training"]:
            return self._train(x, scale, bias, mean, variance)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        y = (x - F.reshape(mean, shape)) / F.sqrt(F.reshape(variance, shape) + a["epsilon"]) \
            * F.reshape(scale, shape) + F.reshape(bias, shape)
        return y, mean, variance, mean, variance

    @runtime_state("writes a Parameter in place")
    def _train(self, x, scale, bias, mean, variance):
        a = self.attrs
        axes = (0,) + tuple(range(2, x.ndim))
        bm = F.mean(x, axes)
        bv = F.var(x, axes, 0)
        y = NF.batch_norm(x, mean, variance, scale, bias, True, a["momentum"], a["epsilon"])
        return y, bm, bv, bm, bv


class Conv2DTranspose(Primitive):
    """Conv2DTranspose(out_channel, kernel_size, pad_mode='valid', pad=0, pad_list=None, mode=1,
    stride=1, dilation=1, group=1, data_format='NCHW')(dout, weight, input_size): the gradient
    of Conv2D with respect to its input: dout (N, out_channel, Ho, Wo) and Conv2D's weight
    (out_channel, C/group, kh, kw) give (N, C, H, W) = input_size."""

    def __init__(self, out_channel, kernel_size, pad_mode="valid", pad=0, pad_list=None, mode=1,
                 stride=1, dilation=1, group=1, data_format="NCHW"):
        who = "Conv2DTranspose"
        _int(who, "out_channel", out_channel)
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("valid", "same", "pad"):
            raise ValueError("For '%s', the 'pad_mode' must be 'valid', 'same' or 'pad', but got %r"
                             % (who, pad_mode))
        pads = pad_list if pad_list is not None else pad
        pads = (pads,) * 4 if _is_int(pads) else _ints(who, "pad", pads)
        if len(pads) != 4 or _b.min(pads) < 0:
            raise ValueError("For '%s', the 'pad' must be one or four non-negative ints, but got %r" % (who, pads))
        if data_format != "NCHW":
            raise ValueError("For '%s', only data_format 'NCHW' is supported, but got %r" % (who, data_format))
        super().__init__(out_channel=out_channel, kernel_size=_pair(who, "kernel_size", kernel_size),
                         pad_mode=pad_mode.lower(), pad=pads, mode=mode,
                         stride=_pair(who, "stride", stride[-2:] if isinstance(stride, (tuple, list))
                                      and len(stride) == 4 else stride),
                         dilation=_pair(who, "dilation", dilation[-2:] if isinstance(dilation, (tuple, list))
                                        and len(dilation) == 4 else dilation),
                         group=_int(who, "group", group), data_format=data_format)

    def __call__(self, dout, weight, input_size):
        a = self.attrs
        dout, weight = _nchw(type(self).__name__, dout), _tensor(type(self).__name__, "weight", weight)
        size = _ints_of(type(self).__name__, "input_size", input_size)
        if len(size) != 4:
            raise ValueError("For 'Conv2DTranspose', the 'input_size' must hold 4 ints, but got %r" % (size,))
        H, W = size[2], size[3]
        (kh, kw), (sh, sw), (dh, dw) = a["kernel_size"], a["stride"], a["dilation"]
        if a["pad_mode"] == "pad":
            top, left = a["pad"][0], a["pad"][2]
        elif a["pad_mode"] == "same":
            top = _pads_for(type(self).__name__, "SAME", H, kh, sh, dh)[0]
            left = _pads_for(type(self).__name__, "SAME", W, kw, sw, dw)[0]
        else:
            top = left = 0
        full = NF.conv_transpose2d(dout, weight, None, (sh, sw), 0, 0, a["group"], (dh, dw))
        fh, fw = full.shape[2], full.shape[3]
        if fh < top + H or fw < left + W:  # rows the forward conv never read get no gradient
            full = NF.pad(full, (0, _b.max(0, left + W - fw), 0, _b.max(0, top + H - fh)))
        return full[:, :, top:top + H, left:left + W]


# ----- autodiff in functional form -------------------------------------------------------------------

@_export
def vjp(fn, *inputs, weights=None, has_aux=False):
    """ops.vjp(fn, *inputs, weights=None, has_aux=False) -> (outputs, vjp_fn) (and aux with
    has_aux): vjp_fn(v) gives the gradients of sum(outputs * v) with respect to the inputs
    (a tuple with several inputs), and to `weights` as a second part when given."""
    from pijit.autodiff import GradOperation
    if weights is not None:
        raise NotImplementedError("ops.vjp: weights= is not supported by pijit (differentiate the "
                                  "inputs, or use ops.grad with weights)")
    out = fn(*inputs)
    aux = None
    if has_aux:
        if not isinstance(out, tuple) or len(out) < 2:
            raise ValueError("For 'vjp', with has_aux=True fn must return (output, aux...), but got %r"
                             % (type(out).__name__,))
        out, aux = out[0], out[1:]
        first = lambda *a: fn(*a)[0]  # noqa: E731
    else:
        first = fn
    grad_all = GradOperation(get_all=True, sens_param=True)(first)

    def vjp_fn(*v):
        g = grad_all(*(inputs + (v[0] if len(v) == 1 else v,)))
        return g[0] if len(inputs) == 1 and isinstance(g, tuple) else g

    return (out, vjp_fn, aux[0] if aux and len(aux) == 1 else aux) if has_aux else (out, vjp_fn)


# ---- Median, NanToNum ------------------------------------------------------------------------------

def _type_name_check(who, name, v, types, type_text):
    # MindSpore's validator wording: "the type of 'axis' should be 'int', but got type 'float'."
    if not isinstance(v, types) or (types is int and isinstance(v, bool)):
        raise TypeError("For '%s', the type of '%s' should be '%s', but got type '%s'."
                        % (who, name, type_text, type(v).__name__))
    return v


class Median(Primitive):
    """Median(global_median=False, axis=0, keep_dims=False, ignore_nan=False)(x) -> (y, indices):
    the lower median along `axis` (the element at (n - 1) // 2 of the sorted slice) and its int64
    index; global_median=True: the median of every element (a 0-d y; indices is a 0-d 0, as
    MindSpore documents it as meaningless there). The gradient flows to the chosen elements."""

    def __init__(self, global_median=False, axis=0, keep_dims=False, ignore_nan=False):
        _type_name_check("Median", "global_median", global_median, bool, "bool")
        _type_name_check("Median", "axis", axis, int, "int")
        _type_name_check("Median", "keep_dims", keep_dims, bool, "bool")
        _type_name_check("Median", "ignore_nan", ignore_nan, bool, "bool")
        super().__init__(global_median=global_median, axis=axis, keep_dims=keep_dims,
                         ignore_nan=ignore_nan)

    def __call__(self, x):
        x = _tensor("Median", "x", x)
        if self.attrs["global_median"]:
            flat = F.reshape(x, (-1,))
            values, _ = F2.median(flat, 0, False)
            return values, _creation.zeros((), dtype=_dt.int64)
        axis, n = self.attrs["axis"], _b.max(x.ndim, 1)
        if not -n <= axis < n:
            raise ValueError("For primitive[Median], the axis must be in [%d,%d), but got %d."
                             % (-n, n, axis))
        if self.attrs["ignore_nan"]:
            raise NotImplementedError("For 'Median', ignore_nan=True is not supported by pijit")
        keep = self.attrs["keep_dims"]
        if x.dtype.is_floating_point or x.ndim == 0:
            return F2.median(x, axis, keep)
        # Integers: sort's gradient scatters, which integer tensors cannot; the chosen element is
        # picked by a one-hot mask instead, so the gradient (the mask) flows as for floats.
        axis %= x.ndim
        # (the order is taken on float64, exact for int8..int32 and int64 below 2**53: the
        # gradient of sort's indices on an integer tensor fails inside the tape today)
        _, idx = F2.median(F.stop_gradient(F.cast(x, _dt.float64)), axis, True)
        pos = F.reshape(_creation.arange(x.shape[axis], dtype=idx.dtype),
                        tuple(x.shape[axis] if d == axis else 1 for d in range(x.ndim)))
        values = F.cast((x * F.cast(F.eq(pos, idx), x.dtype)).sum(axis=axis, keepdims=keep), x.dtype)
        return values, (idx if keep else F.squeeze(idx, axis))


class NanToNum(Primitive):
    """NanToNum(nan=0.0, posinf=None, neginf=None)(x): NaN, +inf and -inf of x replaced (posinf /
    neginf None: the dtype's largest / lowest finite value), as ops.nan_to_num."""

    def __init__(self, nan=0.0, posinf=None, neginf=None):
        _type_name_check("NanToNum", "nan", nan, (int, float), "float")
        if posinf is not None:
            _type_name_check("NanToNum", "posinf", posinf, (int, float), "float")
        if neginf is not None:
            _type_name_check("NanToNum", "neginf", neginf, (int, float), "float")
        super().__init__(nan=float(nan), posinf=posinf, neginf=neginf)

    def __call__(self, x):
        x = _tensor("NanToNum", "x", x)
        return F2.nan_to_num(x, self.attrs["nan"], self.attrs["posinf"], self.attrs["neginf"])


_ALL_CLASSES = sorted(n for n, v in globals().items()
                      if isinstance(v, type) and issubclass(v, Primitive) and v is not Primitive
                      and not n.startswith("_"))
__all__ = _ALL_CLASSES + _FUNCTIONAL
