"""numpy functions of pijit's numpy stand-in: elementwise math, comparisons, shapes, products,
dtype helpers, ufunc objects (creation is in _creation). Each follows numpy 1.24 (dtype rules, argument names, results as scalars or arrays);
arguments it does not support raise NotImplementedError saying so."""
import builtins as _bi
import math
import operator

from pijit import dtype as _pdt
from pijit.numpy_lite import _dtypes as _d
from pijit.numpy_lite import _scalars as _s
from pijit.numpy_lite._array import (op, tensor, wrap, result, normalize, cast_storage,
                                     storage_of, asarray, ndarray, _tb_shape, _tb_ndim,
                                     _norm_axis)
from pijit.numpy_lite._operators import binary, unary, _operand, _broadcast_shapes
from pijit.numpy_lite import _reduce as _r


def _shape_arg(shape):
    if isinstance(shape, (tuple, list)):
        return tuple(operator.index(s) for s in shape)
    return (operator.index(shape),)


def _check_order(order):
    if order not in ("C", "K", "A", None):
        raise _d.unsupported("order=%r (the stand-in keeps C order)" % (order,))


# ---- elementwise ---------------------------------------------------------------------------------

def _check_ufunc_kwargs(kwargs):
    for k, v in kwargs.items():
        if k in ("out", "where", "casting", "order", "dtype", "subok", "signature") and v in (
                None, True, "same_kind", "K", True):
            continue
        raise _d.unsupported("the %s= argument of numpy's ufuncs" % k)


def _float_loop(d):
    """The dtype numpy's float-only ufuncs (sqrt, exp, ...) compute in for an input dtype."""
    if d.kind in "fc":
        return d
    if d in (_d.BOOL, _d.INT8, _d.UINT8):
        return _d.FLOAT16
    if d in (_d.INT16, _d.UINT16):
        return _d.FLOAT32
    return _d.FLOAT64


def _float_unary(opname, x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    if not isinstance(x, (ndarray, _s.generic)):
        x = asarray(x)
    d = _float_loop(x.dtype)
    t = storage_of(x, d)
    return result(normalize(op(opname, (t,)), d), d, t)


def sqrt(x, **kwargs):
    return _float_unary("sqrt", x, **kwargs)


def exp(x, **kwargs):
    return _float_unary("exp", x, **kwargs)


def log(x, **kwargs):
    return _float_unary("log", x, **kwargs)


def sin(x, **kwargs):
    return _float_unary("sin", x, **kwargs)


def cos(x, **kwargs):
    return _float_unary("cos", x, **kwargs)


def tan(x, **kwargs):
    return _float_unary("tan", x, **kwargs)


def tanh(x, **kwargs):
    return _float_unary("tanh", x, **kwargs)


def log1p(x, **kwargs):
    return _float_unary("log1p", x, **kwargs)


def expm1(x, **kwargs):
    return _float_unary("expm1", x, **kwargs)


def floor(x, **kwargs):
    return _float_unary("floor", x, **kwargs)


def ceil(x, **kwargs):
    return _float_unary("ceil", x, **kwargs)


def rint(x, **kwargs):
    return _float_unary("round", x, **kwargs)


def absolute(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    return unary("abs", x if isinstance(x, (ndarray, _s.generic)) else asarray(x))


def negative(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    return unary("neg", x if isinstance(x, (ndarray, _s.generic)) else asarray(x))


def positive(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    return unary("pos", x if isinstance(x, (ndarray, _s.generic)) else asarray(x))


def invert(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    return unary("invert", x if isinstance(x, (ndarray, _s.generic)) else asarray(x))


bitwise_not = invert


def square(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    x = x if isinstance(x, (ndarray, _s.generic)) else asarray(x)
    d = _d.INT8 if x.dtype is _d.BOOL else x.dtype  # numpy's square has no bool loop
    t = storage_of(x, d)
    return result(normalize(op("mul", (t, t)), d), d, t)


def sign(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    x = x if isinstance(x, (ndarray, _s.generic)) else asarray(x)
    d = x.dtype
    if d is _d.BOOL:
        raise TypeError("ufunc 'sign' did not contain a loop with signature matching types "
                        "<class 'numpy.dtype[bool_]'> -> None")
    t = storage_of(x, d)
    s = op("sign", (t,))
    if d.kind == "f":  # sign(nan) is nan
        s = op("where", (op("ne", (t, t)), t, s))
    return result(s, d, t)


def _isfloat_op(x, fn_float, fn_other):
    x = x if isinstance(x, (ndarray, _s.generic)) else asarray(x)
    t = storage_of(x, x.dtype)
    if x.dtype.kind in "fc":
        return result(fn_float(t), _d.BOOL, t)
    return result(op("full", (), shape=_tb_shape(t), value=fn_other, dtype=_pdt.bool_),
                  _d.BOOL)


def isnan(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    return _isfloat_op(x, lambda t: op("ne", (t, t)), False)


def _parts(fn, join):
    """fn over a real tensor; for a complex one, fn of both parts joined by a logical op."""
    def f(t):
        if _storage(t) in (_pdt.complex64, _pdt.complex128):
            return op(join, (fn(op("real", (t,))), fn(op("imag", (t,)))))
        return fn(t)
    return f


def isinf(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    return _isfloat_op(x, _parts(lambda t: op("eq", (op("abs", (t,)),
                                                       tensor(math.inf, _storage(t)))),
                                 "logical_or"), False)


def isfinite(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    return _isfloat_op(x, _parts(lambda t: op("lt", (op("abs", (t,)),
                                                       tensor(math.inf, _storage(t)))),
                                 "logical_and"), True)


def _storage(t):
    from pijit.numpy_lite._array import _tb_dtype
    return _tb_dtype(t)


def _binary_func(name):
    def f(x1, x2, **kwargs):
        _check_ufunc_kwargs(kwargs)
        r = binary(name, x1, x2)
        if r is NotImplemented:  # a pijit tensor: read it as an array
            r = binary(name, asarray(x1), asarray(x2))
        return r
    return f


add = _binary_func("add")
subtract = _binary_func("sub")
multiply = _binary_func("mul")
divide = true_divide = _binary_func("div")
floor_divide = _binary_func("floor_div")
remainder = mod = _binary_func("mod")
power = _binary_func("pow")
bitwise_and = _binary_func("and")
bitwise_or = _binary_func("or")
bitwise_xor = _binary_func("xor")
left_shift = _binary_func("lshift")
right_shift = _binary_func("rshift")
equal = _binary_func("eq")
not_equal = _binary_func("ne")
less = _binary_func("lt")
less_equal = _binary_func("le")
greater = _binary_func("gt")
greater_equal = _binary_func("ge")


def _extremum(opname, x1, x2, kwargs):
    _check_ufunc_kwargs(kwargs)
    (p1, a), (p2, b) = _operand(x1), _operand(x2)
    if p1 is None or p2 is None:
        (p1, a), (p2, b) = _operand(asarray(x1)), _operand(asarray(x2))
    d = _d.from_kb(_d.result_kb([p1, p2]))
    x, y = storage_of(a, d), storage_of(b, d)
    if d is _d.BOOL:
        t = op("logical_or" if opname == "maximum" else "logical_and", (x, y))
    else:
        # numpy's loops: (x >= y || isnan(x)) ? x : y for float16 and integers; its SIMD float32
        # and float64 loops hand back y when x == y (so maximum(-0.0, 0.0) is 0.0 there).
        strict = d in (_d.FLOAT32, _d.FLOAT64)
        keep_x = op(("gt" if strict else "ge") if opname == "maximum" else
                    ("lt" if strict else "le"), (x, y))
        if d.kind == "f":
            keep_x = op("logical_or", (keep_x, op("ne", (x, x))))
        t = op("where", (keep_x, x, y))
    return result(t, d, x, y)


def maximum(x1, x2, **kwargs):
    return _extremum("maximum", x1, x2, kwargs)


def minimum(x1, x2, **kwargs):
    return _extremum("minimum", x1, x2, kwargs)


def clip(a, a_min, a_max, out=None, **kwargs):
    if out is not None:
        raise _d.unsupported("the out= argument")
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    r = asarray(a)
    if a_min is not None:
        r = maximum(r, a_min)
    if a_max is not None:
        r = minimum(r, a_max)
    return r


def around(a, decimals=0, out=None):
    """numpy.around (PyArray_Round): rint for decimals 0; otherwise multiply by 10**decimals,
    rint and divide, each written back to the input's dtype (integers: in float64)."""
    if out is not None:
        raise _d.unsupported("the out= argument")
    a = a if isinstance(a, (ndarray, _s.generic)) else asarray(a)
    d = a.dtype
    decimals = operator.index(decimals)
    if decimals >= 0:
        if d.kind in "iu":
            return a
        if decimals == 0:
            return rint(a)
    first, second = ("mul", "div") if decimals >= 0 else ("div", "mul")
    f = 10.0 ** _bi.abs(decimals)
    out_d = _d.FLOAT64 if d.kind in "iu" else d

    def step(name, x):
        r = binary(name, x, f)
        if not _d.can_cast_same_kind(r.dtype, out_d):
            raise TypeError("Cannot cast ufunc '%s' output from %r to %r with casting rule "
                            "'same_kind'" % ("multiply" if name == "mul" else "divide", r.dtype,
                                             out_d))
        return r.astype(out_d) if r.dtype is not out_d else r

    r = step(second, rint(step(first, a)))
    return r.astype(d) if d.kind in "iu" else r


def logical_not(x, **kwargs):
    _check_ufunc_kwargs(kwargs)
    x = asarray(x) if not isinstance(x, (ndarray, _s.generic)) else x
    t = storage_of(x, _d.BOOL)
    return result(op("logical_not", (t,)), _d.BOOL, t)


def _logical_bin(name):
    def f(x1, x2, **kwargs):
        _check_ufunc_kwargs(kwargs)
        a = storage_of(x1 if isinstance(x1, (ndarray, _s.generic, bool, int, float))
                       else asarray(x1), _d.BOOL)
        b = storage_of(x2 if isinstance(x2, (ndarray, _s.generic, bool, int, float))
                       else asarray(x2), _d.BOOL)
        return result(op(name, (a, b)), _d.BOOL, a, b)
    return f


logical_and = _logical_bin("logical_and")
logical_or = _logical_bin("logical_or")
logical_xor = _logical_bin("logical_xor")


def where(condition, x=None, y=None):
    if x is None and y is None:
        raise _d.unsupported("where(condition) with one argument (use nonzero)")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    c = storage_of(asarray(condition), _d.BOOL)
    (px, a), (py, b) = _operand(x), _operand(y)
    if px is None or py is None:
        (px, a), (py, b) = _operand(asarray(x)), _operand(asarray(y))
    d = _d.from_kb(_d.result_kb([px, py]))
    t = op("where", (c, storage_of(a, d), storage_of(b, d)))
    return wrap(t, d) if _tb_ndim(t) else wrap(t, d)


# ---- comparisons of whole arrays -----------------------------------------------------------------

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.isclose: |a - b| <= atol + rtol * |b|, computed as numpy computes it."""
    x = asarray(a)
    y = asarray(b)
    dt = _d.from_kb(_d.result_kb([(y.dtype, y.ndim, y.item() if y.ndim == 0 else None),
                                  (_d.FLOAT64, 0, 1.0)]))
    y = asarray(y, dtype=dt)
    xfin, yfin = isfinite(x), isfinite(y)
    close = less_equal(absolute(subtract(x, y)), add(atol, multiply(rtol, absolute(y))))
    if _bi.all(_flat_bools(xfin)) and _bi.all(_flat_bools(yfin)):
        return close
    finite = logical_and(xfin, yfin)
    cond = logical_and(finite, close)
    cond = logical_or(cond, logical_and(logical_not(finite), equal(x, y)))
    if equal_nan:
        cond = logical_or(cond, logical_and(isnan(x), isnan(y)))
    return cond


def _flat_bools(v):
    if isinstance(v, ndarray):
        return v.reshape(-1).tolist()
    return [bool(v)]


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_r.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    try:
        a1, a2 = asarray(a1), asarray(a2)
    except Exception:
        return False
    if a1.shape != a2.shape:
        return False
    if not equal_nan:
        return bool(asarray(equal(a1, a2)).all())
    a1nan, a2nan = isnan(a1), isnan(a2)
    if not bool(asarray(equal(a1nan, a2nan)).all()):
        return False
    return bool(asarray(logical_or(equal(a1, a2), a1nan)).all())


def array_equiv(a1, a2):
    try:
        a1, a2 = asarray(a1), asarray(a2)
        _broadcast_shapes(a1.shape, a2.shape)
    except Exception:
        return False
    return bool(asarray(equal(a1, a2)).all())


# ---- shapes --------------------------------------------------------------------------------------

def reshape(a, newshape, order="C"):
    return asarray(a).reshape(newshape, order=order)


def transpose(a, axes=None):
    return asarray(a).transpose(axes)


def swapaxes(a, axis1, axis2):
    return asarray(a).swapaxes(axis1, axis2)


def squeeze(a, axis=None):
    return asarray(a).squeeze(axis)


def ravel(a, order="C"):
    return asarray(a).ravel(order)


def expand_dims(a, axis):
    a = asarray(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = a.ndim + len(axes)
    axes = sorted(_norm_axis(operator.index(x), nd) for x in axes)
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    shape = list(a.shape)
    for x in axes:
        shape.insert(x, 1)
    return a.reshape(tuple(shape))


def shape(a):
    return asarray(a).shape if not isinstance(a, (ndarray, _s.generic)) else a.shape


def ndim(a):
    return asarray(a).ndim if not isinstance(a, (ndarray, _s.generic)) else a.ndim


def size(a, axis=None):
    a = asarray(a)
    return a.size if axis is None else a.shape[axis]


def broadcast_to(array_, shape, subok=False):
    a = asarray(array_)
    return wrap(op("broadcast_to", (a,), shape=_shape_arg(shape)), a.dtype, a)


def _common(arrays):
    arrays = [asarray(x) for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    d = arrays[0].dtype
    for x in arrays[1:]:
        d = _d.promote_types(d, x.dtype)
    return arrays, d


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise _d.unsupported("the out= argument")
    arrays, d = _common(arrays)
    if dtype is not None:
        d = _d.as_dtype(dtype)
    if axis is None:
        arrays, axis = [x.reshape(-1) for x in arrays], 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ax = _norm_axis(operator.index(axis), nd)
    t = op("concat", tuple(cast_storage(x, d) for x in arrays), axis=ax)
    return wrap(t, d, *arrays)


def stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise _d.unsupported("the out= argument")
    arrays, d = _common(arrays)
    if dtype is not None:
        d = _d.as_dtype(dtype)
    shapes = {x.shape for x in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    ax = _norm_axis(operator.index(axis), arrays[0].ndim + 1)
    t = op("stack", tuple(cast_storage(x, d) for x in arrays), axis=ax)
    return wrap(t, d, *arrays)


def vstack(tup):
    arrays = [asarray(x) for x in tup]
    arrays = [x.reshape(1, -1) if x.ndim < 2 else x for x in arrays]
    return concatenate(arrays, 0)


def hstack(tup):
    arrays = [asarray(x) for x in tup]
    arrays = [x.reshape(1) if x.ndim == 0 else x for x in arrays]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1)


# ---- products ------------------------------------------------------------------------------------

def matmul(x1, x2, **kwargs):
    """numpy.matmul. Float products come from pijit's kernels, which may round differently from
    the BLAS a numpy build uses (so may two numpy builds)."""
    _check_ufunc_kwargs(kwargs)
    a, b = asarray(x1), asarray(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand %d does not have enough dimensions (has 0, "
                         "gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)"
                         % (0 if a.ndim == 0 else 1))
    d = _d.promote_types(a.dtype, b.dtype)
    if d is _d.FLOAT16:
        raise _d.unsupported("matmul of float16 arrays")
    compute = _d.INT64 if d.kind in "biu" else d
    x, y = cast_storage(a, compute), cast_storage(b, compute)
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        raise ValueError("matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         "gufunc signature (n?,k),(k,m?)->(n?,m?) (size %d is different from %d)"
                         % (b.shape[-2 if b.ndim > 1 else 0], a.shape[-1]))
    t = op("matmul", (x, y))
    if d is _d.BOOL:
        t = op("ne", (t, tensor(0, _pdt.int64)))
    elif compute is not d:
        t = normalize(op("cast", (t,), dtype=d._storage), d) if d._emulated else \
            op("cast", (t,), dtype=d._storage)
    return result(t, d, x, y)


def dot(a, b, out=None):
    if out is not None:
        raise _d.unsupported("the out= argument")
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    raise _d.unsupported("dot of arrays with more than 2 dimensions (use matmul)")


def outer(a, b, out=None):
    a, b = asarray(a).reshape(-1, 1), asarray(b).reshape(1, -1)
    return multiply(a, b)


# ---- dtype helpers -------------------------------------------------------------------------------

def result_type(*arrays_and_dtypes):
    ops = []
    for x in arrays_and_dtypes:
        if isinstance(x, (_d.dtype, type, str)):
            ops.append((_d.as_dtype(x), 1, None))
        else:
            p, _ = _operand(x)
            if p is None:
                p, _ = _operand(asarray(x))
            ops.append(p)
    return _d.from_kb(_d.result_kb(ops))


def issubdtype(arg1, arg2):
    t1 = arg1 if isinstance(arg1, type) and issubclass(arg1, _s.generic) else \
        _d.as_dtype(arg1).type
    if isinstance(arg2, type) and issubclass(arg2, _s.generic):
        return issubclass(t1, arg2)
    return issubclass(t1, _d.as_dtype(arg2).type)


def isscalar(element):
    return isinstance(element, (_s.generic, int, float, complex, str, bytes, bool))


def can_cast(from_, to, casting="safe"):
    src = from_.dtype if isinstance(from_, (ndarray, _s.generic)) else _d.as_dtype(from_)
    dst = _d.as_dtype(to)
    if casting == "unsafe":
        return True
    if casting == "same_kind":
        return _d.can_cast_same_kind(src, dst)
    if casting in ("no", "equiv"):
        return src is dst
    return _d.promote_types(src, dst) is dst


class finfo(object):
    """numpy.finfo for float16, float32 and float64."""
    _INFO = {"float16": (10, 5, 0.0009765625, 65504.0, 6.103515625e-05, 3, 0.001),
             "float32": (23, 8, 1.1920928955078125e-07, 3.4028234663852886e+38,
                         1.1754943508222875e-38, 6, 1e-06),
             "float64": (52, 11, 2.220446049250313e-16, 1.7976931348623157e+308,
                         2.2250738585072014e-308, 15, 1e-15)}

    def __init__(self, dtype):
        d = dtype.dtype if isinstance(dtype, (ndarray, _s.generic)) else _d.as_dtype(
            float if dtype is float else dtype)
        if d.kind != "f":
            raise ValueError("data type %r not inexact" % d.type)
        nmant, nexp, eps, big, tiny, precision, resolution = self._INFO[d.name]
        mk = d.type._make
        self.dtype = d
        self.bits = d._bits
        self.nmant, self.nexp, self.precision = nmant, nexp, precision
        self.eps = mk(eps)
        self.max = mk(big)
        self.min = mk(-big)
        self.tiny = self.smallest_normal = mk(tiny)
        self.resolution = mk(resolution)

    def __repr__(self):
        return "finfo(resolution=%s, min=%s, max=%s, dtype=%s)" % (
            self.resolution, _exp_str(self.min), _exp_str(self.max), self.dtype.name)


def _exp_str(v):
    from pijit.numpy_lite import _print
    return _print.format_scientific(float(v), v.dtype._bits, -1, -1, "-")


class iinfo(object):
    """numpy.iinfo for the integer types."""

    def __init__(self, int_type):
        d = int_type.dtype if isinstance(int_type, (ndarray, _s.generic)) else \
            _d.as_dtype(int_type)
        if d.kind not in "iu":
            raise ValueError("Invalid integer data type %r." % d.kind)
        self.dtype = d
        self.bits = d._bits
        self.kind = d.kind
        self.min = 0 if d.kind == "u" else -(1 << (d._bits - 1))
        self.max = (1 << d._bits) - 1 if d.kind == "u" else (1 << (d._bits - 1)) - 1

    def __repr__(self):
        return "iinfo(min=%d, max=%d, dtype=%s)" % (self.min, self.max, self.dtype.name)


# ---- ufunc objects -------------------------------------------------------------------------------

class UFuncTypeError(TypeError):
    """numpy's TypeError for a ufunc that has no loop for the asked types."""


UFuncTypeError.__module__ = "numpy.core._exceptions"


class ufunc(object):
    """A callable with numpy's ufunc name and the reduce/accumulate the stand-in has."""

    def __init__(self, name, fn, nin, reduce_fn=None, accumulate_fn=None):
        self.__name__ = name
        self._fn = fn
        self.nin = nin
        self.nout = 1
        self._reduce = reduce_fn
        self._accumulate = accumulate_fn

    def __call__(self, *args, **kwargs):
        d = kwargs.pop("dtype", None)
        if d is None:
            return self._fn(*args, **kwargs)
        # dtype= picks the loop: the inputs are cast to it ('same_kind'), the loop runs in it
        d = _d.as_dtype(d)
        ins = []
        for i, x in enumerate(args[:self.nin]):
            x = x if isinstance(x, (ndarray, _s.generic)) else asarray(x)
            if not _d.can_cast_same_kind(x.dtype, d):
                raise UFuncTypeError("Cannot cast ufunc '%s' input %d from %r to %r with casting "
                                "rule 'same_kind'" % (self.__name__, i, x.dtype, d))
            ins.append(x.astype(d))
        r = self._fn(*(tuple(ins) + tuple(args[self.nin:])), **kwargs)
        rd = getattr(r, "dtype", None)
        if rd is not None and rd is not d:  # dtype= names the output: bool ones take no other
            raise TypeError("No loop matching the specified signature and casting was found "
                            "for ufunc %s" % self.__name__)
        return r

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, **kwargs):
        if self._reduce is None or kwargs:
            raise _d.unsupported("numpy.%s.reduce" % self.__name__)
        if dtype is not None:
            return self._reduce(array, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
        return self._reduce(array, axis=axis, out=out, keepdims=keepdims)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        if self._accumulate is None:
            raise _d.unsupported("numpy.%s.accumulate" % self.__name__)
        return self._accumulate(array, axis=axis, dtype=dtype, out=out)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError("'numpy.ufunc' object has no attribute '%s' (%s)"
                             % (name, _d.not_provided("numpy.%s.%s" % (self.__name__, name))))

    def __repr__(self):
        return "<ufunc '%s'>" % self.__name__


ufunc.__module__ = "numpy"

_UFUNCS = {
    "add": (add, 2, _r.sum, _r.cumsum), "subtract": (subtract, 2),
    "multiply": (multiply, 2, _r.prod, _r.cumprod),
    "divide": (divide, 2), "true_divide": (true_divide, 2), "floor_divide": (floor_divide, 2),
    "remainder": (remainder, 2), "mod": (mod, 2), "power": (power, 2),
    "maximum": (maximum, 2, _r.amax), "minimum": (minimum, 2, _r.amin),
    "equal": (equal, 2), "not_equal": (not_equal, 2), "less": (less, 2),
    "less_equal": (less_equal, 2), "greater": (greater, 2), "greater_equal": (greater_equal, 2),
    "logical_and": (logical_and, 2, _r.all), "logical_or": (logical_or, 2, _r.any),
    "logical_xor": (logical_xor, 2), "logical_not": (logical_not, 1),
    "bitwise_and": (bitwise_and, 2), "bitwise_or": (bitwise_or, 2),
    "bitwise_xor": (bitwise_xor, 2), "invert": (invert, 1), "bitwise_not": (invert, 1),
    "left_shift": (left_shift, 2), "right_shift": (right_shift, 2),
    "sqrt": (sqrt, 1), "exp": (exp, 1), "log": (log, 1), "sin": (sin, 1), "cos": (cos, 1),
    "tan": (tan, 1), "tanh": (tanh, 1), "log1p": (log1p, 1), "expm1": (expm1, 1),
    "floor": (floor, 1), "ceil": (ceil, 1), "rint": (rint, 1), "absolute": (absolute, 1),
    "negative": (negative, 1), "positive": (positive, 1), "square": (square, 1),
    "sign": (sign, 1), "isnan": (isnan, 1), "isinf": (isinf, 1), "isfinite": (isfinite, 1),
}


def make_ufuncs():
    out = {}
    for name, spec in _UFUNCS.items():
        fn, nin = spec[0], spec[1]
        out[name] = ufunc(name, fn, nin, spec[2] if len(spec) > 2 else None,
                          spec[3] if len(spec) > 3 else None)
    return out
