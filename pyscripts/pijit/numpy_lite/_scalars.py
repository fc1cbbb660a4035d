"""numpy's scalar types (np.float32(1.5), what indexing a 1-D array returns) for the stand-in.

A scalar holds a Python value already converted to its dtype (a float32 scalar holds the nearest
float32, an int8 one a wrapped int). Arithmetic goes through the array operators on 0-d arrays,
so scalars promote and round exactly as arrays do; float64 is a subclass of Python's float, as in
numpy. The classes and their hierarchy (generic > number > integer > signedinteger > int8 ...)
carry numpy's names.
"""
import math

from pijit.numpy_lite import _dtypes as _d


def _array_mod():
    from pijit.numpy_lite import _array
    return _array


def _ops():
    from pijit.numpy_lite import _operators
    return _operators


def _scalar_value(x, d):
    """What np.<type>(x) makes of a Python number or string."""
    if isinstance(x, str):
        if d is _d.BOOL:
            return bool(x)
        x = float(x) if d.kind == "f" else int(x)
    if d is _d.BOOL:
        return bool(x)
    if d.kind == "c":
        return _d.to_value(complex(x), d)
    if d.kind in "iu":
        if isinstance(x, float):
            x = int(x)  # raises for nan and inf, as numpy does
        return _d.wrap_int(operator_index(x), d)
    return _d.to_value(float(x), d)


def operator_index(x):
    try:
        return x.__index__()
    except AttributeError:
        return int(x)


class generic(object):
    """Base class of numpy's scalar types."""
    __slots__ = ()
    _np_dtype = None

    def __new__(cls, value=0):
        d = cls._np_dtype
        if d is None:
            raise TypeError("cannot create 'numpy.%s' instances" % cls.__name__)
        arr = _array_mod()
        if isinstance(value, (list, tuple)) or (isinstance(value, arr.ndarray) and value.ndim):
            return arr.array(value, dtype=d)
        if isinstance(value, arr.ndarray):
            value = value.astype(d).item()
        elif isinstance(value, generic):
            value = arr.array(value).astype(d).item()
        return cls._make(_scalar_value(value, d))

    @classmethod
    def _make(cls, value):
        obj = object.__new__(cls)
        obj._v = value
        return obj

    def _value(self):
        return self._v

    # ---- array-like attributes ---------------------------------------------------------------
    @property
    def dtype(self):
        return type(self)._np_dtype

    @property
    def shape(self):
        return ()

    @property
    def ndim(self):
        return 0

    @property
    def size(self):
        return 1

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.dtype.itemsize

    @property
    def T(self):
        return self

    def item(self, *args):
        if args and args not in ((0,), ((),), ((0,),)):
            raise IndexError("index %s is out of bounds for size 1" % (args[0],))
        return self._value()

    def tolist(self):
        return self._value()

    def astype(self, dtype, *args, **kwargs):
        return _array_mod().array(self).astype(dtype)[()]

    def copy(self):
        return self

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (type(self), (self._value(),))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError("'numpy.%s' object has no attribute '%s' (%s)"
                             % (type(self).__name__, name,
                                _d.not_provided("numpy.%s.%s" % (type(self).__name__, name))))

    # ---- conversions ---------------------------------------------------------------------------
    def __bool__(self):
        return bool(self._value())

    def __int__(self):
        return int(self._value())

    def __float__(self):
        return float(self._value())

    def __complex__(self):
        return complex(self._value())

    def __hash__(self):
        return hash(self._value())

    def __round__(self, ndigits=None):
        if ndigits is None:
            return round(self._value())
        return _array_mod().array(self).round(ndigits)[()]

    def __str__(self):
        from pijit.numpy_lite import _print
        return _print.scalar_str(self._value(), self.dtype)

    __repr__ = __str__

    def __format__(self, spec):
        if not spec:
            return str(self)
        return format(self._value(), spec)

    # ---- operators (the array operators on 0-d arrays) ---------------------------------------
    def _bin(name, reflected=False):
        def f(self, other):
            return _ops().binary(name, other, self) if reflected else \
                _ops().binary(name, self, other)
        f.__name__ = "__%s__" % name
        return f

    __add__, __radd__ = _bin("add"), _bin("add", True)
    __sub__, __rsub__ = _bin("sub"), _bin("sub", True)
    __mul__, __rmul__ = _bin("mul"), _bin("mul", True)
    __truediv__, __rtruediv__ = _bin("div"), _bin("div", True)
    __floordiv__, __rfloordiv__ = _bin("floor_div"), _bin("floor_div", True)
    __mod__, __rmod__ = _bin("mod"), _bin("mod", True)
    __pow__, __rpow__ = _bin("pow"), _bin("pow", True)
    __and__, __rand__ = _bin("and"), _bin("and", True)
    __or__, __ror__ = _bin("or"), _bin("or", True)
    __xor__, __rxor__ = _bin("xor"), _bin("xor", True)
    __lshift__, __rlshift__ = _bin("lshift"), _bin("lshift", True)
    __rshift__, __rrshift__ = _bin("rshift"), _bin("rshift", True)
    __eq__, __ne__ = _bin("eq"), _bin("ne")
    __lt__, __le__ = _bin("lt"), _bin("le")
    __gt__, __ge__ = _bin("gt"), _bin("ge")
    del _bin

    def __divmod__(self, other):
        return (self // other, self % other)

    def __neg__(self):
        return _ops().unary("neg", self)

    def __pos__(self):
        return _ops().unary("pos", self)

    def __abs__(self):
        return _ops().unary("abs", self)

    def __invert__(self):
        return _ops().unary("invert", self)


class number(generic):
    __slots__ = ()


class integer(number):
    __slots__ = ()

    def __index__(self):
        return self._v

    def is_integer(self):
        return True


class signedinteger(integer):
    __slots__ = ()


class unsignedinteger(integer):
    __slots__ = ()


class inexact(number):
    __slots__ = ()


class floating(inexact):
    __slots__ = ()

    def is_integer(self):
        v = self._value()
        return math.isfinite(v) and v == int(v)


class bool_(generic):
    __slots__ = ("_v",)
    _np_dtype = _d.BOOL

    def __index__(self):
        import warnings
        warnings.warn("In future, it will be an error for 'np.bool_' scalars to be interpreted "
                      "as an index", DeprecationWarning, stacklevel=2)
        return int(self._v)


class int8(signedinteger):
    __slots__ = ("_v",)
    _np_dtype = _d.INT8


class int16(signedinteger):
    __slots__ = ("_v",)
    _np_dtype = _d.INT16


class int32(signedinteger):
    __slots__ = ("_v",)
    _np_dtype = _d.INT32


class int64(signedinteger):
    __slots__ = ("_v",)
    _np_dtype = _d.INT64


class uint8(unsignedinteger):
    __slots__ = ("_v",)
    _np_dtype = _d.UINT8


class uint16(unsignedinteger):
    __slots__ = ("_v",)
    _np_dtype = _d.UINT16


class uint32(unsignedinteger):
    __slots__ = ("_v",)
    _np_dtype = _d.UINT32


class uint64(unsignedinteger):
    __slots__ = ("_v",)
    _np_dtype = _d.UINT64


class float16(floating):
    __slots__ = ("_v",)
    _np_dtype = _d.FLOAT16


class float32(floating):
    __slots__ = ("_v",)
    _np_dtype = _d.FLOAT32


class float64(floating, float):
    """Also a Python float, as numpy's float64 is."""
    __slots__ = ()
    _np_dtype = _d.FLOAT64

    def __new__(cls, value=0.0):
        obj = generic.__new__(cls, value)
        return obj

    @classmethod
    def _make(cls, value):
        return float.__new__(cls, value)

    def _value(self):
        return float.__float__(self)

    @property
    def _v(self):
        return float.__float__(self)

    @property
    def real(self):
        return self

    @property
    def imag(self):
        return float64._make(0.0)


class complexfloating(inexact):
    __slots__ = ()

    @property
    def real(self):
        return _FLOAT_OF[type(self)]._make(self._value().real)

    @property
    def imag(self):
        return _FLOAT_OF[type(self)]._make(self._value().imag)

    def conjugate(self):
        return type(self)._make(self._value().conjugate())

    def __float__(self):
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part",
                      ComplexWarning, stacklevel=2)
        return float(self._value().real)

    def __int__(self):
        return int(self.__float__())


class ComplexWarning(RuntimeWarning):
    """numpy.ComplexWarning: a complex value cast to a real type."""


class complex64(complexfloating):
    __slots__ = ("_v",)
    _np_dtype = _d.COMPLEX64


class complex128(complexfloating, complex):
    """Also a Python complex, as numpy's complex128 is."""
    __slots__ = ()
    _np_dtype = _d.COMPLEX128

    def __new__(cls, value=0j):
        return generic.__new__(cls, value)

    @classmethod
    def _make(cls, value):
        return complex.__new__(cls, value)

    def _value(self):
        return complex(self.real_, self.imag_)

    @property
    def real_(self):
        return complex.real.__get__(self)

    @property
    def imag_(self):
        return complex.imag.__get__(self)

    @property
    def _v(self):
        return self._value()


_FLOAT_OF = {complex64: float32, complex128: float64}

_TYPES = (bool_, int8, int16, int32, int64, uint8, float16, float32, float64, uint16, uint32,
          uint64, complex64, complex128)
for _t in _TYPES:
    _t._np_dtype.type = _t
for _t in (generic, number, integer, signedinteger, unsignedinteger, inexact, floating,
           complexfloating, ComplexWarning) + _TYPES:
    _t.__module__ = "numpy"


def make(d, value):
    """The scalar of dtype d holding a value already converted to d."""
    return d.type._make(value)
