"""mindspore.numpy's comparisons and logical functions over pijit tensors (equal, isnan, isclose,
isin, array_equal, ...). Each returns a bool tensor, except isscalar, array_equal and array_equiv,
which return Python bools as MindSpore's do (array_equal reads the data: a graph break under jit)."""
import math

from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit.numpy._utils import tensor as _t, operands as _operands, check_axes as _axes


def _cmp(name, op):
    def f(x1, x2, dtype=None):
        out = _op(op, _operands(x1, x2))
        return out if dtype is None else _op("cast", (out,), dtype=_dt.as_dtype(dtype))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Elementwise %s with broadcasting, as a bool tensor." % name
    return f


equal = _cmp("equal", "eq")
not_equal = _cmp("not_equal", "ne")
less = _cmp("less", "lt")
less_equal = _cmp("less_equal", "le")
greater = _cmp("greater", "gt")
greater_equal = _cmp("greater_equal", "ge")


def _bool(x):
    return x if x.dtype is _dt.bool_ else _op("ne", (x, _C.as_operand(0, x)))


def logical_and(x1, x2, dtype=None):
    a, b = _operands(x1, x2)
    return _op("logical_and", (_bool(a), _bool(b)))


def logical_or(x1, x2, dtype=None):
    a, b = _operands(x1, x2)
    return _op("logical_or", (_bool(a), _bool(b)))


def logical_xor(x1, x2, dtype=None):
    a, b = _operands(x1, x2)
    return _op("logical_xor", (_bool(a), _bool(b)))


def logical_not(a, dtype=None):
    return _op("logical_not", (_bool(_t(a, "logical_not")),))


def isnan(x, dtype=None):
    x = _t(x, "isnan")
    return _op("ne", (x, x))


def isinf(x, dtype=None):
    x = _t(x, "isinf")
    if not x.dtype.is_floating_point:
        return _op("full", (), shape=tuple(x.shape), value=False, dtype=_dt.bool_)
    return _op("eq", (_op("abs", (x,)), _C.as_operand(math.inf, x)))


def isposinf(x):
    x = _t(x, "isposinf")
    if not x.dtype.is_floating_point:
        return _op("full", (), shape=tuple(x.shape), value=False, dtype=_dt.bool_)
    return _op("eq", (x, _C.as_operand(math.inf, x)))


def isneginf(x):
    x = _t(x, "isneginf")
    if not x.dtype.is_floating_point:
        return _op("full", (), shape=tuple(x.shape), value=False, dtype=_dt.bool_)
    return _op("eq", (x, _C.as_operand(-math.inf, x)))


def isfinite(x, dtype=None):
    x = _t(x, "isfinite")
    if not x.dtype.is_floating_point:
        return _op("full", (), shape=tuple(x.shape), value=True, dtype=_dt.bool_)
    # x - x is 0 for finite x and NaN for the infinities and NaN.
    return _op("eq", (x - x, _C.as_operand(0.0, x)))


def isscalar(element):
    """Whether element is a Python number, bool or str (a tensor is not a scalar)."""
    return isinstance(element, (int, float, complex, bool, str, bytes))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| elementwise; equal infinities are close; NaNs are close to
    each other only with equal_nan."""
    a, b = _operands(a, b)
    if not a.dtype.is_floating_point and not b.dtype.is_floating_point:
        a = _op("cast", (a,), dtype=_dt.float32)
    diff = _op("abs", (a - b,))
    close = _op("le", (diff, _op("abs", (b,)) * rtol + atol))
    close = _op("logical_or", (close, _op("eq", (a, b))))  # equal infinities
    if equal_nan:
        close = _op("logical_or", (close, _op("logical_and", (_op("ne", (a, a)), _op("ne", (b, b))))))
    return close


def in1d(ar1, ar2, invert=False):
    """For each element of ar1 (flattened), whether it occurs in ar2."""
    a = _op("reshape", (_t(ar1, "in1d"),), shape=(-1,))
    return isin(a, ar2, invert=invert)


def isin(element, test_elements, invert=False):
    """For each element, whether it occurs in test_elements (any shape)."""
    e = _t(element, "isin")
    t = _op("reshape", (_t(test_elements, "isin"),), shape=(-1,))
    hit = _op("any", (_op("eq", _operands(_op("expand_dims", (e,), axis=-1), t)),), axis=(-1,),
              keepdims=False)
    return _op("logical_not", (hit,)) if invert else hit


def sometrue(a, axis=None, keepdims=False):
    """Whether any element (along axis) is true."""
    a = _t(a, "sometrue")
    return _op("any", (_bool(a),), axis=_axes("sometrue", axis, a.ndim), keepdims=bool(keepdims))


def array_equal(a1, a2, equal_nan=False):
    """True when the two have the same shape and elements (a Python bool)."""
    a, b = _t(a1, "array_equal"), _t(a2, "array_equal")
    if tuple(a.shape) != tuple(b.shape):
        return False
    same = _op("eq", (a, b))
    if equal_nan:
        same = _op("logical_or", (same, _op("logical_and", (_op("ne", (a, a)), _op("ne", (b, b))))))
    return bool(_op("all", (same,), axis=None, keepdims=False).item())


def array_equiv(a1, a2):
    """True when the two broadcast to one shape and are equal there (a Python bool)."""
    a, b = _t(a1, "array_equiv"), _t(a2, "array_equiv")
    try:
        same = _op("eq", (a, b))
    except ValueError:
        return False
    return bool(_op("all", (same,), axis=None, keepdims=False).item())


__all__ = ["not_equal", "less_equal", "less", "greater_equal", "greater", "equal", "isfinite",
           "isnan", "isinf", "isposinf", "isneginf", "isscalar", "logical_and", "logical_not",
           "logical_or", "logical_xor", "in1d", "isin", "isclose", "sometrue", "array_equal",
           "array_equiv"]
