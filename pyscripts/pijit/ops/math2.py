"""Elementwise maths with kernels of their own (kernels/elementwise.h): the inverse trigonometric
and hyperbolic functions, lgamma/digamma, erfinv, the modified Bessel functions I0/I1 (plain and
exponentially scaled), the regularized incomplete gamma functions (igamma, igammac), atan2,
hypot, nextafter, signbit, and the integer ops (bitwise and/or/xor/
not, shifts, gcd, lcm, population count), as MindSpore's functional forms (ops.asin, ...) and its
primitive classes (ops.Asin(), P.Atan2(), ...).

Each is one registry op, so eager calls, capture and autodiff read the same declaration.
Semantics are numpy's/PyTorch's: integer and bool inputs of the transcendental functions compute
in float32; the integer ops keep the promoted integer dtype at its own width (uint64 included),
shifts past the width give 0 (or -1 for a negative number shifted right), gcd/lcm are
non-negative, and bool tensors take and/or/xor/not as logical. Gradients where MindSpore defines
them: asin, acos, atan, asinh, acosh, atanh, atan2, hypot, lgamma (digamma), digamma (trigamma,
an internal op), erfinv, the Bessel functions, and igamma/igammac in x (not in a: it raises).
"""
from pijit import _C
from pijit._ops_common import operands as _operands
from pijit.ops.primitives import Primitive

_Tensor = _C.TensorBase
_op = _C.op

__all__ = []


def _tensor(who, name, x):
    if not isinstance(x, _Tensor):
        raise TypeError("For '%s', the input '%s' must be a Tensor, but got %s"
                        % (who, name, type(x).__name__))
    return x


def _unary(name, op, arg="input", doc=""):
    def f(x):
        return _op(op, (_tensor(name, arg, x),))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "ops.%s(%s): %s (registry op '%s')." % (name, arg, doc, op)
    globals()[name] = f
    __all__.append(name)
    return f


def _binary(name, op, args=("input", "other"), doc=""):
    def f(x, y):
        if not isinstance(x, _Tensor) and not isinstance(y, _Tensor):
            raise TypeError("For '%s', at least one of '%s' and '%s' must be a Tensor, but got %s "
                            "and %s" % (name, args[0], args[1], type(x).__name__, type(y).__name__))
        return _op(op, _operands(x, y))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = ("ops.%s(%s, %s): %s, broadcast and promoted like the arithmetic operators "
                 "(registry op '%s')." % (name, args[0], args[1], doc, op))
    globals()[name] = f
    __all__.append(name)
    return f


def _alias(name, fn):
    globals()[name] = fn
    __all__.append(name)


_unary("asin", "asin", doc="arcsine, NaN outside [-1, 1]")
_unary("acos", "acos", doc="arccosine, NaN outside [-1, 1]")
_unary("atan", "atan", doc="arctangent")
_unary("asinh", "asinh", doc="inverse hyperbolic sine")
_unary("acosh", "acosh", doc="inverse hyperbolic cosine, NaN below 1")
_unary("atanh", "atanh", doc="inverse hyperbolic tangent, +-inf at +-1")
_unary("lgamma", "lgamma", doc="log |Gamma(x)|, inf at 0 and the negative integers")
_unary("digamma", "digamma", doc="psi(x) = d/dx log Gamma(x), NaN at the negative integers")
_unary("erfinv", "erfinv", doc="the inverse of erf on [-1, 1], +-inf at +-1")
_unary("i0", "bessel_i0", doc="the modified Bessel function of the first kind of order 0")
_unary("bessel_i0", "bessel_i0", "x", doc="I0(x)")
_unary("bessel_i0e", "bessel_i0e", "x", doc="I0(x) exp(-|x|)")
_unary("bessel_i1", "bessel_i1", "x", doc="I1(x)")
_unary("bessel_i1e", "bessel_i1e", "x", doc="I1(x) exp(-|x|)")
_unary("signbit", "signbit", doc="True where the sign bit is set (-0.0 and negative NaN too)")
_unary("invert", "bitwise_not", "x", doc="bitwise NOT of integers (~x), logical NOT of bool")
_unary("bitwise_not", "bitwise_not", doc="as invert")
_unary("population_count", "population_count", "input_x",
       doc="the set bits of each integer at its own width, as uint8")
for _name, _same in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                     ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh")):
    _alias(_name, globals()[_same])

_binary("atan2", "atan2", doc="the angle of the point (other, input), in [-pi, pi]")
_alias("arctan2", atan2)  # noqa: F821 (defined by _binary)
_binary("hypot", "hypot", doc="sqrt(input^2 + other^2) without overflow; inf if either is inf")
_binary("nextafter", "nextafter", doc="the next float after input towards other")
_binary("bitwise_and", "bitwise_and", doc="bitwise AND of integers, logical AND of bool")
_binary("bitwise_or", "bitwise_or", doc="bitwise OR of integers, logical OR of bool")
_binary("bitwise_xor", "bitwise_xor", doc="bitwise XOR of integers, logical XOR of bool")
_binary("bitwise_left_shift", "bitwise_left_shift", doc="input << other (0 past the width)")
_binary("bitwise_right_shift", "bitwise_right_shift",
        doc="input >> other, arithmetic for signed integers (0 or -1 past the width)")
_binary("igamma", "igamma", doc="the regularized lower incomplete gamma function P(input, other)")
_binary("igammac", "igammac", doc="the regularized upper incomplete gamma function Q(input, other) = 1 - P")
_binary("gcd", "gcd", doc="the greatest common divisor of integers, >= 0 (gcd(0, 0) = 0)")
_binary("lcm", "lcm", doc="the least common multiple of integers, >= 0 (0 if either is 0)")


# ---- primitive classes ---------------------------------------------------------------------------
def _unary_class(cls_name, fn, arg):
    class P(Primitive):
        def __call__(self, *args):
            self._arity(args, 1)
            return fn(args[0])
    P.__name__ = P.__qualname__ = cls_name
    P.__doc__ = "%s()(%s): as ops.%s." % (cls_name, arg, fn.__name__)
    globals()[cls_name] = P
    __all__.append(cls_name)
    return P


def _binary_class(cls_name, fn, args):
    class P(Primitive):
        def __call__(self, *a):
            self._arity(a, 2)
            return fn(a[0], a[1])
    P.__name__ = P.__qualname__ = cls_name
    P.__doc__ = "%s()(%s, %s): as ops.%s." % (cls_name, args[0], args[1], fn.__name__)
    globals()[cls_name] = P
    __all__.append(cls_name)
    return P


for _cls, _fn, _arg in (("Asin", "asin", "x"), ("ACos", "acos", "x"), ("Atan", "atan", "x"),
                        ("Asinh", "asinh", "x"), ("Acosh", "acosh", "x"), ("Atanh", "atanh", "x"),
                        ("Lgamma", "lgamma", "x"), ("Digamma", "digamma", "input"),
                        ("Erfinv", "erfinv", "input_x"), ("BesselI0", "bessel_i0", "x"),
                        ("BesselI0e", "bessel_i0e", "x"), ("BesselI1", "bessel_i1", "x"),
                        ("BesselI1e", "bessel_i1e", "x"),
                        ("PopulationCount", "population_count", "input_x")):
    _unary_class(_cls, globals()[_fn], _arg)

for _cls, _fn, _args in (("Atan2", "atan2", ("x", "y")), ("NextAfter", "nextafter", ("x1", "x2")),
                         ("BitwiseAnd", "bitwise_and", ("x1", "x2")),
                         ("BitwiseOr", "bitwise_or", ("x1", "x2")),
                         ("BitwiseXor", "bitwise_xor", ("x1", "x2")),
                         ("LeftShift", "bitwise_left_shift", ("x1", "x2")),
                         ("RightShift", "bitwise_right_shift", ("input_x", "input_y")),
                         ("Gcd", "gcd", ("x1", "x2")), ("Lcm", "lcm", ("x1", "x2")),
                         ("Igamma", "igamma", ("a", "x")), ("Igammac", "igammac", ("a", "x"))):
    _binary_class(_cls, globals()[_fn], _args)


class Rint(Primitive):
    """Rint()(input_x): the nearest integer, halves to even (registry op 'round'); integers are
    returned as they are."""

    def __call__(self, *args):
        self._arity(args, 1)
        return _op("round", (_tensor("Rint", "input_x", args[0]),))


__all__.append("Rint")
del _cls, _fn, _arg, _args, _name, _same
