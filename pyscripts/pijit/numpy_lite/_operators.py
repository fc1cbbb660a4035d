"""numpy's operators for pijit's numpy stand-in: +, -, *, /, //, %, **, bitwise ops, shifts and
comparisons between arrays, numpy scalars and Python numbers, with numpy 1.24's type resolution.

add, subtract, multiply and the comparisons promote with result_type (value-based for Python
numbers and 0-d operands next to arrays); true_divide, floor_divide, remainder, power, the bitwise
ops and shifts take the first of their loops every operand casts to safely (numpy's default
resolver), so uint8 ** 300 is int16 while uint8 + 300 is uint16. The computation runs in pijit
ops on the storage dtype, then integers are wrapped and halves rounded (_array.normalize).
"""
import operator
import warnings

from pijit import dtype as _pdt
from pijit.numpy_lite import _dtypes as _d
from pijit.numpy_lite import _scalars as _s
from pijit.numpy_lite._array import (op, tensor, wrap, ldtype, result, normalize, storage_of,
                                     array, ndarray, _TB, _const, _tb_ndim, _tb_item, _tb_shape,
                                     _tb_setitem, _tb_tolist, _tb_dtype)


def _operand(x):
    """(dtype, ndim, value) of an operand for promotion, or None when numpy would defer."""
    if isinstance(x, ndarray):
        return (ldtype(x), _tb_ndim(x), _tb_item(x) if _tb_ndim(x) == 0 else None), x
    if isinstance(x, _TB):
        return None, None  # a pijit Tensor: numpy defers to its __array_priority__
    if isinstance(x, _s.generic):
        return (x.dtype, 0, x._value()), x
    d = _d.python_dtype(x) if isinstance(x, (bool, int, float, complex)) else None
    if d is not None:
        return (d, 0, x), x
    if isinstance(x, (list, tuple)):
        a = array(x)
        return (a.dtype, a.ndim, a.item() if a.ndim == 0 else None), a
    return None, None


_NOT_SUPPORTED_TYPES = ("ufunc '%s' not supported for the input types, and the inputs could not "
                        "be safely coerced to any supported types according to the casting rule "
                        "''safe''")
_UFUNC = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "true_divide",
          "floor_div": "floor_divide", "mod": "remainder", "pow": "power", "and": "bitwise_and",
          "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
          "rshift": "right_shift", "eq": "equal", "ne": "not_equal", "lt": "less",
          "le": "less_equal", "gt": "greater", "ge": "greater_equal", "matmul": "matmul"}
_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
_BOOL_AS = {"add": "logical_or", "mul": "logical_and", "and": "logical_and", "or": "logical_or",
            "xor": "logical_xor", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt",
            "ge": "ge", "matmul": None}
_PY_INT_OPS = {"and": operator.and_, "or": operator.or_, "xor": operator.xor,
               "lshift": operator.lshift, "rshift": operator.rshift}


_LOOPS = {"div": _d.FLOAT_LOOPS + _d.COMPLEX_LOOPS, "floor_div": _d.INT_LOOPS + _d.FLOAT_LOOPS,
          "mod": _d.INT_LOOPS + _d.FLOAT_LOOPS,
          "pow": _d.INT_LOOPS + _d.FLOAT_LOOPS + _d.COMPLEX_LOOPS,
          "and": _d.BOOL_LOOP + _d.INT_LOOPS, "or": _d.BOOL_LOOP + _d.INT_LOOPS,
          "xor": _d.BOOL_LOOP + _d.INT_LOOPS, "lshift": _d.INT_LOOPS, "rshift": _d.INT_LOOPS}


def loop_dtype(name, pa, pb):
    """The dtype numpy's ufunc for operator `name` computes in, for operands described by
    (dtype, ndim, value). Comparisons get a dtype that holds both sides exactly."""
    if name in _LOOPS:
        if name == "div" and pa[0].kind in "biu" and pb[0].kind in "biu":
            return _d.FLOAT64
        kb = _d.loop_kb(_LOOPS[name], [pa, pb])
        if kb is None:
            raise TypeError(_NOT_SUPPORTED_TYPES % _UFUNC[name])
        return _d.from_kb(kb)
    kb = _d.result_kb([pa, pb])
    if name in _COMPARE and kb[0] == "u" and 8 < kb[1] < 64:
        return _d.INT64  # uint16/32 hold no value that int64 does not
    r = _d.from_kb(kb)
    if r is _d.BOOL and name == "sub":
        raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the "
                        "bitwise_xor, the `^` operator, or the logical_xor function instead.")
    return r


def binary(name, a, b):
    """a <op> b with numpy's type resolution; NotImplemented when numpy would defer."""
    pa, a = _operand(a)
    pb, b = _operand(b)
    if pa is None or pb is None:
        if name in ("eq", "ne") and (a is None or b is None) and not isinstance(
                a if pa is None else b, _TB):
            return _compare_none(name, b if pa is None else a)
        return NotImplemented
    loop = loop_dtype(name, pa, pb)
    if name == "eq" or name == "ne":
        try:
            _broadcast_shapes(_shape(a), _shape(b))
        except ValueError:
            warnings.warn("elementwise comparison failed; this will raise an error in the future.",
                          DeprecationWarning, stacklevel=3)
            return name == "ne"
    x, y = storage_of(a, loop), storage_of(b, loop)
    if name == "pow" and loop.kind in "iu" and _any_negative(y):
        raise ValueError("Integers to negative integer powers are not allowed.")
    if loop is _d.BOOL:
        t = op(_BOOL_AS[name], (x, y))
        return result(t, _d.BOOL, a, b)
    if name in _COMPARE:
        if loop.kind == "c" and name not in ("eq", "ne"):
            raise _d.unsupported("ordering comparisons of complex arrays")
        if loop is _d.UINT64 and name not in ("eq", "ne"):
            x, y = _u64_ordered(x), _u64_ordered(y)
        return result(op(name, (x, y)), _d.BOOL, a, b)
    if name in _PY_INT_OPS:
        t = _python_elementwise(_PY_INT_OPS[name], x, y, loop)
    elif name == "div" and loop.kind == "c":
        t = _complex_div(x, y)
    elif name == "mul" and loop.kind == "c":
        t = _complex_mul(x, y)
    else:
        t = op(name, (x, y))
    return result(normalize(t, loop), loop, a, b)


def _exponent(o):
    """numpy's is_scalar_with_conversion: (exponent, is_float) of a scalar exponent, or None."""
    if isinstance(o, int):
        if not -(1 << 63) <= o < (1 << 63):
            return None
        return float(o), False
    if isinstance(o, float):
        return o, True
    if isinstance(o, ndarray):
        if _tb_ndim(o) == 0 and ldtype(o).kind in "iuf":
            return float(_tb_item(o)), ldtype(o).kind == "f"
        return None
    if isinstance(o, (_s.integer, _s.floating)):
        return float(o._value()), isinstance(o, _s.floating)
    return None


def power(a, b):
    """a ** b for an ndarray a: numpy's operator takes shortcuts for scalar exponents (a float
    array keeps its dtype for 1, -1, 0, 0.5 and 2; any array squares itself for 2)."""
    e = _exponent(b)
    if e is not None:
        from pijit.numpy_lite import _funcs
        value, is_float = e
        d = ldtype(a)
        if d.kind == "f":
            if value == 1.0:
                return unary("pos", a)
            if value == -1.0:
                t = storage_of(a, d)
                return result(normalize(op("div", (tensor(1, d._storage), t)), d), d, t)
            if value == 0.0:
                return result(op("full", (), shape=_tb_shape(a), value=1, dtype=d._storage), d)
            if value == 0.5:
                return _funcs.sqrt(a)
            if value == 2.0:
                return _funcs.square(a)
        elif value == 2.0:
            if is_float and d.kind in "iu":  # squared in place in a float64 copy: an array
                r = _funcs.square(a.astype(_d.FLOAT64))
                return r if isinstance(r, ndarray) else array(r)
            return _funcs.square(a)
    return binary("pow", a, b)


def _compare_none(name, other):
    """numpy compares elementwise with None (never equal)."""
    if isinstance(other, ndarray):
        return full_bool(other.shape, name == "ne")
    return NotImplemented


def full_bool(shape, value):
    return wrap(op("full", (), shape=tuple(shape), value=value, dtype=_pdt.bool_), _d.BOOL)


def _shape(x):
    return _tb_shape(x) if isinstance(x, _TB) else ()


def _broadcast_shapes(*shapes):
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        dim = 1
        for s in shapes:
            k = i - (nd - len(s))
            if k < 0:
                continue
            if s[k] != 1:
                if dim != 1 and dim != s[k]:
                    raise ValueError("operands could not be broadcast together with shapes " +
                                     " ".join(_shape_str(s) for s in shapes))
                dim = s[k]
        out.append(dim)
    return tuple(out)


def _shape_str(s):
    return "(" + ",".join(str(d) for d in s) + ("," if len(s) == 1 else "") + ")"


def _any_negative(t):
    if _tb_ndim(t) == 0:
        return _tb_item(t) < 0
    return bool(_tb_item(op("any", (op("lt", (t, _const(0, _tb_dtype(t)))),), axis=None,
                            keepdims=False)))


def _python_elementwise(fn, x, y, d):
    """Integer bitwise ops and shifts (no pijit op), elementwise in Python, wrapped to d."""
    shape = _broadcast_shapes(_tb_shape(x), _tb_shape(y))
    xs = _tb_tolist(op("reshape", (op("broadcast_to", (x,), shape=shape),), shape=(-1,)))
    ys = _tb_tolist(op("reshape", (op("broadcast_to", (y,), shape=shape),), shape=(-1,)))
    if fn in (operator.lshift, operator.rshift):
        vals = [_d.wrap_int(fn(p, q) if 0 <= q < d._bits else (0 if fn is operator.lshift or p >= 0
                                                                else -1), d)
                for p, q in zip(xs, ys)]
    else:
        vals = [_d.wrap_int(fn(p, q), d) for p, q in zip(xs, ys)]
    return op("reshape", (tensor(vals, d._storage),), shape=shape)


def _abs_c64(x):
    """|z| for complex64 as numpy's loop computes it (hypotf, without AVX-512; the oracle's
    reference): the float64 hypot rounded once to float32."""
    return op("cast", (op("abs", (op("cast", (x,), dtype=_pdt.complex128),)),),
              dtype=_pdt.float32)


def _u64_ordered(t):
    """uint64 values mapped onto int64 in the same order (v - 2**63, wrapping), so that the
    comparison runs on signed integers (pijit's kernels compare 64-bit integers as signed)."""
    i = op("cast", (t,), dtype=_pdt.int64)
    return op("add", (i, tensor(-(1 << 63), _pdt.int64)))


def _complex_mul(x, y):
    """numpy's complex product, each part rounded as written (no fused multiply-add)."""
    ar, ai = op("real", (x,)), op("imag", (x,))
    br, bi = op("real", (y,)), op("imag", (y,))
    re = op("sub", (op("mul", (ar, br)), op("mul", (ai, bi))))
    im = op("add", (op("mul", (ar, bi)), op("mul", (ai, br))))
    return op("complex", (re, im))


def _complex_div(x, y):
    """numpy's complex division (Smith's method) in the parts' own precision."""
    ar, ai = op("real", (x,)), op("imag", (x,))
    br, bi = op("real", (y,)), op("imag", (y,))
    st = _tb_dtype(ar)
    shape = _broadcast_shapes(_tb_shape(x), _tb_shape(y))
    ar, ai, br, bi = [op("broadcast_to", (v,), shape=shape) for v in (ar, ai, br, bi)]
    abr, abi = op("abs", (br,)), op("abs", (bi,))
    one = tensor(1.0, st)
    # |br| >= |bi|
    rat1 = op("div", (bi, br))
    scl1 = op("div", (one, op("add", (br, op("mul", (bi, rat1))))))
    r1 = op("mul", (op("add", (ar, op("mul", (ai, rat1)))), scl1))
    i1 = op("mul", (op("sub", (ai, op("mul", (ar, rat1)))), scl1))
    # both zero: a / |br|
    r0, i0 = op("div", (ar, abr)), op("div", (ai, abr))
    # |br| < |bi|
    rat2 = op("div", (br, bi))
    scl2 = op("div", (one, op("add", (bi, op("mul", (br, rat2))))))
    r2 = op("mul", (op("add", (op("mul", (ar, rat2)), ai)), scl2))
    i2 = op("mul", (op("sub", (op("mul", (ai, rat2)), ar)), scl2))
    first = op("ge", (abr, abi))
    zero = tensor(0.0, st)
    both0 = op("logical_and", (op("eq", (abr, zero)), op("eq", (abi, zero))))
    re = op("where", (first, op("where", (both0, r0, r1)), r2))
    im = op("where", (first, op("where", (both0, i0, i1)), i2))
    return op("complex", (re, im))


def unary(name, a):
    """-a, +a, abs(a), ~a."""
    if not isinstance(a, (ndarray, _s.generic)):
        a = array(a)
    d = a.dtype
    x = storage_of(a, d)
    if name == "neg":
        if d is _d.BOOL:
            raise TypeError("The numpy boolean negative, the `-` operator, is not supported, use "
                            "the `~` operator or the logical_not function instead.")
        t = op("neg", (x,))
    elif name == "pos":
        if d is _d.BOOL:
            warnings.warn("Applying '+' to a non-numerical array is ill-defined. Returning a "
                          "copy, but in the future this will error.", DeprecationWarning,
                          stacklevel=3)
        t = op("copy", (x,))
    elif name == "abs":
        t = op("copy", (x,)) if d is _d.BOOL else op("abs", (x,))
        if d is _d.COMPLEX64:
            t = _abs_c64(x)
            d = _d.FLOAT32
        elif d is _d.COMPLEX128:
            d = _d.FLOAT64
    else:  # invert
        if d is _d.BOOL:
            t = op("logical_not", (x,))
        elif d.kind in "fc":
            raise TypeError(_NOT_SUPPORTED_TYPES % "invert")
        else:
            t = op("sub", (op("neg", (x,)), _const(1, d._storage)))
    return result(normalize(t, d), d, x)


def inplace(name, a, b):
    """a <op>= b: numpy computes in the promoted dtype and casts back under 'same_kind'."""
    pb, b2 = _operand(b)
    if pb is None:
        if isinstance(b, _TB):  # a pijit tensor on the right: read it as an array
            b2 = array(b)
        else:
            return NotImplemented
    r = power(a, b2) if name == "pow" else binary(name, a, b2)
    if r is NotImplemented:
        return r
    rd = r.dtype
    if not _d.can_cast_same_kind(rd, a.dtype):
        raise TypeError("Cannot cast ufunc '%s' output from %r to %r with casting rule "
                        "'same_kind'" % (_UFUNC[name], rd, a.dtype))
    rs = _shape(r) if isinstance(r, _TB) else ()
    if rs != a.shape:
        raise ValueError("non-broadcastable output operand with shape %s doesn't match the "
                         "broadcast shape %s" % (_shape_str(a.shape), _shape_str(rs)))
    _tb_setitem(a, Ellipsis, storage_of(r, a.dtype))
    return a
