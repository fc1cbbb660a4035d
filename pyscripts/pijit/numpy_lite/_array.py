"""numpy.ndarray for pijit's numpy stand-in (its operators are in _operators).

An ndarray *is* a pijit tensor: the class derives from pijit._C.TensorBase, so pijit.Tensor(a),
mindspore.tensor(a), memoryview(a) and every pijit op take it as they take a tensor, and views
share storage as numpy's do. Results of pijit ops (pijit.Tensor objects, fresh from the op) become
ndarrays by a class switch (the two classes have one layout), so nothing is copied twice. The
logical dtype is the storage dtype, or for an emulated dtype (int8, int16, uint8, float16) an
attribute on the instance; see _dtypes.

Semantics are numpy 1.24's, not pijit's: dtypes and promotion (Python floats are float64, value-
based casting of scalars), 0-d results of operators and reductions are numpy scalars, integer
wrap-around, 'same_kind' in-place casting, numpy's error messages.
"""
import operator
import warnings

from pijit import _C
from pijit import dtype as _pdt
from pijit.numpy_lite import _dtypes as _d
from pijit.numpy_lite import _scalars as _s
from pijit.numpy_lite import _print

_TB = _C.TensorBase
_tb_dtype = _TB.__dict__["dtype"].__get__
_tb_shape = _TB.__dict__["shape"].__get__
_tb_ndim = _TB.__dict__["ndim"].__get__
_tb_size = _TB.__dict__["size"].__get__
_tb_strides = _TB.__dict__["strides"].__get__
_tb_getitem = _TB.__getitem__
_tb_setitem = _TB.__setitem__
_tb_item = _TB.item
_tb_tolist = _TB.tolist


def op(name, inputs, **attrs):
    return _C.op(name, tuple(inputs), attrs)


def tensor(value, storage):
    """A pijit tensor (0-d for a number) of a storage dtype."""
    from pijit.tensor import Tensor
    return Tensor(value, storage)


def wrap(t, d, *inputs):
    """Makes the pijit tensor `t`, fresh from an op, an ndarray of dtype d (in place). An op that
    handed back one of its inputs gets a copy instead, so no caller's object changes class."""
    for x in inputs:
        if t is x:
            t = op("copy", (t,))
            break
    t.__class__ = ndarray
    if d._emulated:
        t.__dict__["_ldt"] = d
    return t


def ldtype(a):
    """The numpy dtype of an ndarray or any pijit tensor."""
    d = a.__dict__.get("_ldt") if isinstance(a, ndarray) else None
    return d if d is not None else _d.NATIVE[_tb_dtype(a)]


def scalar_of(t, d):
    """The numpy scalar of dtype d holding the one element of storage tensor t."""
    return _s.make(d, _tb_item(t))


def result(t, d, *inputs):
    """A ufunc's result: an ndarray, or a numpy scalar when it is 0-d."""
    if _tb_ndim(t) == 0:
        return scalar_of(t, d)
    return wrap(t, d, *inputs)


# ---- casts -------------------------------------------------------------------------------------

_PART = {_d.COMPLEX64: _d.FLOAT32, _d.COMPLEX128: _d.FLOAT64}


def _const(v, storage):
    return tensor(v, storage)


def normalize(t, d):
    """Wraps (int8, int16, uint8) or rounds (float16) a storage tensor into dtype d's values."""
    if not d._emulated:
        return t
    if d is _d.FLOAT16:
        shape = _tb_shape(t)
        flat = op("reshape", (t,), shape=(-1,))
        return op("reshape", (tensor(_d.round_f16_list(_tb_tolist(flat)), _pdt.float32),),
                  shape=shape)
    i32 = _pdt.int32
    if _tb_dtype(t) is not i32:
        t = op("cast", (t,), dtype=i32)
    full = 1 << d._bits
    if d.kind == "u":
        return op("mod", (t, _const(full, i32)))
    half = full >> 1
    return op("sub", (op("mod", (op("add", (t, _const(half, i32))), _const(full, i32))),
                      _const(half, i32)))


def cast_storage(a, d):
    """The storage tensor of `a` (an ndarray or pijit tensor) converted to dtype d with numpy's
    unsafe casting. May return `a` itself when nothing changes."""
    src = ldtype(a)
    if src is d:
        return a
    st = d._storage
    if d is _d.FLOAT16:
        if src.kind == "b" or src in (_d.INT8, _d.UINT8):  # exact in float16
            return op("cast", (a,), dtype=st)
        # Round from the source's own values: float64 -> float16 directly, as numpy does.
        if _tb_dtype(a) not in (_pdt.float32, _pdt.float64):
            a = op("cast", (a,), dtype=_pdt.float64)
        return normalize(a, d)
    if d._emulated:  # int8, int16, uint8: C casts to int32, then the low bits
        if _tb_dtype(a) is not _pdt.int32:
            a = op("cast", (a,), dtype=_pdt.int32)
        return normalize(a, d)
    if _tb_dtype(a) is st:
        return a
    return op("cast", (a,), dtype=st)


def storage_of(x, d):
    """The storage tensor of an operand (ndarray, pijit tensor, numpy or Python scalar) as d."""
    if isinstance(x, _TB):
        return cast_storage(x, d)
    if isinstance(x, _s.generic):
        x = x._value()
    return tensor(_d.to_value(x, d), d._storage)


# ---- construction ------------------------------------------------------------------------------

def _discover(obj, found):
    """Collects the dtypes numpy would discover in nested sequences; raises for data the stand-in
    cannot hold (strings, objects)."""
    if isinstance(obj, (list, tuple)):
        for x in obj:
            _discover(x, found)
        return
    if isinstance(obj, _TB):
        found.add(ldtype(obj))
        return
    if isinstance(obj, _s.generic):
        found.add(obj.dtype)
        return
    d = _d.python_dtype(obj)
    if d is None:
        if isinstance(obj, range):
            found.add(_d.INT64)
            return
        if isinstance(obj, (str, bytes)):
            raise _d.unsupported("arrays of strings (numpy.str_/bytes_ dtypes)")
        raise _d.unsupported("arrays of %s objects (the object dtype)" % type(obj).__name__)
    found.add(d)


def _has_arrays(obj):
    if isinstance(obj, (list, tuple)):
        return any(_has_arrays(x) for x in obj)
    return isinstance(obj, _TB)


def _plain(obj):
    """Nested lists of Python numbers for pijit's constructor (numpy scalars and ranges
    unpacked; tensors stay, the constructor reads them)."""
    if isinstance(obj, (list, tuple, range)):
        return [_plain(x) for x in obj]
    if isinstance(obj, _s.generic):
        return obj._value()
    return obj


def _plain_ints(obj, limit=1 << 63):
    """Nested lists with every float made an int as numpy stores a Python number into an integer
    array: through Python's int() (so 1e10 into int32 keeps its low 32 bits, NaN raises)."""
    if isinstance(obj, (list, tuple, range)):
        return [_plain_ints(x, limit) for x in obj]
    if isinstance(obj, _s.generic):
        obj = obj._value()
    if isinstance(obj, float):
        obj = int(obj)
    if isinstance(obj, int) and not isinstance(obj, bool) and \
            not -(1 << 63) <= obj < limit:
        raise OverflowError("Python int too large to convert to C long")
    return obj


def _wrap_nested(obj, d):
    if isinstance(obj, list):
        return [_wrap_nested(x, d) for x in obj]
    return _d.wrap_int(obj, d) if isinstance(obj, int) else obj


def _to_real(obj, conv):
    if isinstance(obj, list):
        for x in obj:
            _to_real(x, conv)
    elif isinstance(obj, complex):
        conv(obj)


def from_data(obj, d=None):
    """numpy.array(obj, dtype=d) for nested sequences and Python/numpy scalars: the values are
    made in the dtype numpy discovers (bool, int64, float64, ...), then cast like astype (numbers
    stored into an integer dtype go through int(), as numpy's setitem does)."""
    found = set()
    _discover(obj, found)
    natural = None
    for f in found:
        natural = f if natural is None else _d.promote_types(natural, f)
    if natural is None:  # only empty sequences
        natural = _d.FLOAT64
    if d is not None and d.kind in "iu" and natural.kind == "f" and not _has_arrays(obj):
        if d is _d.UINT64:
            obj, natural = _plain_ints(obj, 1 << 64), _d.UINT64
            obj = _wrap_nested(obj, d)
        else:
            obj, natural = _plain_ints(obj), _d.INT64
        data = obj
    else:
        data = _plain(obj)
    if natural.kind == "c" and d is not None and d.kind != "c" and not _has_arrays(obj):
        _to_real(data, float if d.kind in "fb" else int)  # raises Python's TypeError, as numpy
    build = natural._storage  # holds the values exactly (int8 data is built as int32, etc.)
    t = tensor(data, build)  # numpy scalars of an emulated dtype hold in-range values
    t.__class__ = ndarray
    if natural._emulated:
        t.__dict__["_ldt"] = natural
    if d is None or d is natural:
        return t
    return wrap(cast_storage(t, d), d, t)


def array(object, dtype=None, copy=True, order="K", subok=False, ndmin=0, like=None):
    """numpy.array for numbers, nested sequences, ndarrays, pijit tensors and buffers."""
    if order not in ("K", "A", "C", None):
        raise _d.unsupported("order=%r (the stand-in keeps C order)" % (order,))
    if like is not None:
        raise _d.unsupported("array(like=...)")
    d = None if dtype is None else _d.as_dtype(dtype)
    if isinstance(object, ndarray):
        r = object.astype(d if d is not None else object.dtype, copy=copy)
    elif isinstance(object, _TB):  # a pijit Tensor or Parameter
        _readable(object)
        src = ldtype(object)
        if copy or not _TB.is_contiguous(object):
            t = op("copy", (object,))
        else:  # shares the tensor's memory, as numpy.asarray shares a buffer's
            t = op("reshape", (object,), shape=_tb_shape(object))
        r = wrap(t, src, object)
        if d is not None and d is not src:
            r = wrap(cast_storage(r, d), d, r)
    elif isinstance(object, (list, tuple, range, bool, int, float, complex, _s.generic)):
        r = from_data(object, d)
    elif isinstance(object, (str, bytes)):
        raise _d.unsupported("arrays of strings (numpy.str_/bytes_ dtypes)")
    else:
        r = _from_other(object, d)
    if ndmin and r.ndim < ndmin:
        r = r.reshape((1,) * (ndmin - r.ndim) + r.shape)
    return r


def _readable(t):
    """Reads a tensor's data the way numpy would, through the buffer protocol: a tensor being
    captured (symbolic) refuses, and capture breaks the graph there as it does for numpy."""
    try:
        with memoryview(t):
            pass
    except BufferError:  # not contiguous: numpy would copy it; pijit can
        pass


_BUFFER_DTYPES = {"?": _d.BOOL, "b": _d.INT8, "h": _d.INT16, "i": _d.INT32, "l": _d.INT64,
                  "q": _d.INT64, "B": _d.UINT8, "e": _d.FLOAT16, "f": _d.FLOAT32,
                  "d": _d.FLOAT64, "H": _d.UINT16, "I": _d.UINT32, "L": _d.UINT64,
                  "Q": _d.UINT64, "Zf": _d.COMPLEX64, "Zd": _d.COMPLEX128}


def _from_other(obj, d):
    try:
        mv = memoryview(obj)
    except TypeError:
        mv = None
    if mv is not None:
        fmt = mv.format.lstrip("@=<")
        src = _BUFFER_DTYPES.get(fmt)
        if src is None:
            raise _d.unsupported("buffers of format %r" % mv.format)
        values = mv.tolist() if mv.ndim else [mv.tolist()]
        r = from_data(values if mv.ndim else values[0], src)
        return r if d is None else r.astype(d)
    raise _d.unsupported("arrays of %s objects (the object dtype)" % type(obj).__name__)


def asarray(a, dtype=None, order=None, like=None):
    return array(a, dtype, copy=False, order=order or "K", like=like)


def asanyarray(a, dtype=None, order=None, like=None):
    return array(a, dtype, copy=False, order=order or "K", like=like)


def ascontiguousarray(a, dtype=None, like=None):
    r = array(a, dtype, copy=False, like=like)
    return r if _TB.is_contiguous(r) else r.copy()


# ---- indexing ----------------------------------------------------------------------------------

_INDEX_ERROR = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                "integer or boolean arrays are valid indices")


def _key1(k):
    if isinstance(k, (int, slice)) or k is None or k is Ellipsis:
        return k
    if isinstance(k, _s.bool_):
        return bool(k._v)
    if isinstance(k, _s.integer):
        return k._v
    if isinstance(k, ndarray):
        d = ldtype(k)
        if d.kind == "f":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        if _tb_ndim(k) == 0 and d.kind != "b":
            return _tb_item(k)
        return k
    if isinstance(k, list):
        return _key1(array(k))
    if isinstance(k, _TB):
        return k
    if hasattr(type(k), "__index__") and not isinstance(k, (float, _s.floating)):
        return operator.index(k)
    raise IndexError(_INDEX_ERROR)


def index_key(key):
    if isinstance(key, tuple):
        return tuple(_key1(k) for k in key)
    return _key1(key)


def _gives_scalar(key):
    if isinstance(key, tuple):
        return all(isinstance(k, int) for k in key)
    return isinstance(key, int)


# ---- the class -----------------------------------------------------------------------------------

class _Hidden(object):
    """Hides a pijit tensor method that numpy's ndarray does not have."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, cls=None):
        raise AttributeError("'numpy.ndarray' object has no attribute '%s'" % self.name)


def _binop(name):
    def f(self, other):
        return _ops.binary(name, self, other)
    f.__name__ = "__%s__" % name
    return f


def _rbinop(name):
    def f(self, other):
        return _ops.binary(name, other, self)
    f.__name__ = "__r%s__" % name
    return f


def _ibinop(name):
    def f(self, other):
        return _ops.inplace(name, self, other)
    f.__name__ = "__i%s__" % name
    return f


class ndarray(_TB):
    """numpy.ndarray: an n-dimensional array (pijit tensor storage, numpy semantics)."""

    __hash__ = None
    __array_priority__ = 0.0
    # Marks the stand-in's arrays for pijit's own code: they are tensors to pijit's C layer but
    # their operators are numpy's (capture must not trace them as pijit tensors).
    __pijit_numpy_lite__ = True

    def __new__(cls, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
        if buffer is not None or strides is not None or offset:
            raise _d.unsupported("numpy.ndarray(buffer=..., strides=..., offset=...)")
        from pijit.numpy_lite import _creation
        return _creation.zeros(shape, dtype)

    def __setattr__(self, name, value):
        if name == "shape":
            raise _d.unsupported("assigning ndarray.shape (use reshape)")
        raise AttributeError("'numpy.ndarray' object has no attribute '%s'" % name)

    def __getattr__(self, name):
        if name.startswith("__") or name == "_ldt":
            raise AttributeError(name)
        raise AttributeError("'numpy.ndarray' object has no attribute '%s' (%s)"
                             % (name, _d.not_provided("numpy.ndarray.%s" % name)))

    assign_value = _Hidden("assign_value")
    is_contiguous = _Hidden("is_contiguous")

    # ---- attributes ----------------------------------------------------------------------------
    @property
    def dtype(self):
        return ldtype(self)

    @property
    def shape(self):
        return _tb_shape(self)

    @property
    def ndim(self):
        return _tb_ndim(self)

    @property
    def size(self):
        return _tb_size(self)

    @property
    def itemsize(self):
        return ldtype(self).itemsize

    @property
    def nbytes(self):
        return ldtype(self).itemsize * _tb_size(self)

    @property
    def strides(self):
        d = ldtype(self)
        k = _tb_dtype(self).itemsize
        return tuple(s // k * d.itemsize for s in _tb_strides(self))

    @property
    def T(self):
        return self.transpose()

    @property
    def real(self):
        d = ldtype(self)
        if d.kind != "c":
            return self
        return wrap(op("real", (self,)), _PART[d], self)

    @property
    def imag(self):
        d = ldtype(self)
        if d.kind != "c":
            return wrap(op("full", (), shape=_tb_shape(self), value=0, dtype=d._storage), d)
        return wrap(op("imag", (self,)), _PART[d], self)

    def conj(self):
        d = ldtype(self)
        if d.kind != "c":
            return self.copy()
        return wrap(op("conj", (self,)), d, self)

    conjugate = conj

    @property
    def __array_interface__(self):
        """Describes the memory as it is (an emulated dtype shows its storage)."""
        st = _tb_dtype(self)
        typestr = {"bool": "|b1", "int32": "<i4", "int64": "<i8", "float32": "<f4",
                   "float64": "<f8", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8",
                   "complex64": "<c8", "complex128": "<c16"}[st.name]
        return {"shape": self.shape, "typestr": typestr, "data": (self._data_ptr(), False),
                "strides": None if _TB.is_contiguous(self) else _tb_strides(self), "version": 3}

    # ---- conversion ----------------------------------------------------------------------------
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        d = _d.as_dtype(dtype)
        if casting not in ("unsafe", "same_kind", "safe", "equiv", "no"):
            raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or "
                             "'unsafe'")
        if casting != "unsafe" and not _d.can_cast_same_kind(ldtype(self), d):
            raise TypeError("Cannot cast array data from %r to %r according to the rule %r"
                            % (ldtype(self), d, casting))
        if d is ldtype(self):
            return self.copy() if copy else self
        if ldtype(self).kind == "c" and d.kind != "c":
            warnings.warn("Casting complex values to real discards the imaginary part",
                          _s.ComplexWarning, stacklevel=2)
        return wrap(cast_storage(self, d), d, self)

    def copy(self, order="C"):
        return wrap(op("copy", (self,)), ldtype(self), self)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (_rebuild, (self.tolist(), ldtype(self).name))

    def tolist(self):
        return _tb_tolist(self)

    def item(self, *args):
        if not args:
            if _tb_size(self) != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            return _tb_item(self)
        if len(args) == 1 and isinstance(args[0], int):
            n = _tb_size(self)
            i = args[0]
            if not -n <= i < n:
                raise IndexError("index %d is out of bounds for size %d" % (i, n))
            return _tb_item(op("reshape", (self,), shape=(-1,)), i % n)
        key = args[0] if len(args) == 1 else args
        return _tb_item(_tb_getitem(self, index_key(tuple(key))))

    def fill(self, value):
        _tb_setitem(self, Ellipsis, storage_of(value, ldtype(self)))

    def view(self, *args, **kwargs):
        if args or kwargs:
            raise _d.unsupported("ndarray.view(dtype)")
        return wrap(op("reshape", (self,), shape=_tb_shape(self)), ldtype(self), self)

    def __array__(self, dtype=None):
        return self if dtype is None else self.astype(dtype)

    # ---- shape ---------------------------------------------------------------------------------
    def reshape(self, *shape, order="C"):
        if order != "C":
            raise _d.unsupported("reshape(order=%r)" % order)
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        shape = tuple(operator.index(s) for s in shape)
        _check_reshape(self.size, self.shape, shape)
        return wrap(op("reshape", (self,), shape=shape), ldtype(self), self)

    def transpose(self, *axes):
        nd = _tb_ndim(self)
        if not axes or (len(axes) == 1 and axes[0] is None):
            perm = tuple(reversed(range(nd)))
        else:
            perm = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) \
                else axes
            perm = tuple(_norm_axis(operator.index(p), nd) for p in perm)
            if sorted(perm) != list(range(nd)):
                raise ValueError("axes don't match array")
        return wrap(op("transpose", (self,), perm=perm), ldtype(self), self)

    def swapaxes(self, axis1, axis2):
        nd = _tb_ndim(self)
        perm = list(range(nd))
        a, b = _norm_axis(axis1, nd), _norm_axis(axis2, nd)
        perm[a], perm[b] = perm[b], perm[a]
        return self.transpose(perm)

    def flatten(self, order="C"):
        return wrap(op("reshape", (op("copy", (self,)),), shape=(-1,)), ldtype(self))

    def ravel(self, order="C"):
        return self.reshape(-1)

    def squeeze(self, axis=None):
        shape = self.shape
        if axis is None:
            new = tuple(s for s in shape if s != 1)
        else:
            axes = {_norm_axis(a, len(shape)) for a in _axes_tuple(axis)}
            for a in axes:
                if shape[a] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size not "
                                     "equal to one")
            new = tuple(s for i, s in enumerate(shape) if i not in axes)
        return self.reshape(new)

    # ---- container protocol ----------------------------------------------------------------------
    def __len__(self):
        if _tb_ndim(self) == 0:
            raise TypeError("len() of unsized object")
        return _tb_shape(self)[0]

    def __iter__(self):
        if _tb_ndim(self) == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(_tb_shape(self)[0]):
            yield self[i]

    def __contains__(self, value):
        return bool((self == value).any())

    def __getitem__(self, key):
        k = index_key(key)
        t = _tb_getitem(self, k)
        d = ldtype(self)
        if _tb_ndim(t) == 0 and _gives_scalar(k):
            return scalar_of(t, d)
        if t is self:
            t = op("reshape", (self,), shape=_tb_shape(self))
        return wrap(t, d)

    def __setitem__(self, key, value):
        d = ldtype(self)
        if isinstance(value, (bool, int, float, complex, _s.generic)):
            v = value._value() if isinstance(value, _s.generic) else value
            if d.kind in "iu" and isinstance(v, float):
                v = int(v)  # raises for nan, as numpy does
            t = tensor(_d.to_value(v, d), d._storage)
        else:
            t = storage_of(value if isinstance(value, _TB) else array(value), d)
        _tb_setitem(self, index_key(key), t)

    def __delitem__(self, key):
        raise ValueError("cannot delete array elements")

    # ---- conversions to Python -----------------------------------------------------------------
    def __bool__(self):
        n = _tb_size(self)
        if n == 1:
            return bool(_tb_item(self))
        if n == 0:
            warnings.warn("The truth value of an empty array is ambiguous. Returning False, but "
                          "in future this will result in an error. Use `array.size > 0` to check "
                          "that an array is not empty.", DeprecationWarning, stacklevel=2)
            return False
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "Use a.any() or a.all()")

    def __int__(self):
        if _tb_size(self) != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return int(_tb_item(self))

    def __float__(self):
        if _tb_size(self) != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return float(_tb_item(self))

    def __complex__(self):
        if _tb_size(self) != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return complex(_tb_item(self))

    def __index__(self):
        if _tb_ndim(self) != 0 or ldtype(self).kind not in "iu":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return _tb_item(self)

    # ---- printing ------------------------------------------------------------------------------
    def __str__(self):
        d = ldtype(self)
        if not d._emulated:
            return _C.format_str(self)
        return _print.array_str(self.tolist(), self.shape, d)

    def __repr__(self):
        return _print.array_repr(self.tolist(), self.shape, ldtype(self))

    def __format__(self, spec):
        if not spec:
            return str(self)
        if _tb_ndim(self) == 0:
            return format(_tb_item(self), spec)
        raise TypeError("unsupported format string passed to numpy.ndarray.__format__")

    # ---- operators -----------------------------------------------------------------------------
    __add__, __radd__, __iadd__ = _binop("add"), _rbinop("add"), _ibinop("add")
    __sub__, __rsub__, __isub__ = _binop("sub"), _rbinop("sub"), _ibinop("sub")
    __mul__, __rmul__, __imul__ = _binop("mul"), _rbinop("mul"), _ibinop("mul")
    __truediv__, __rtruediv__, __itruediv__ = _binop("div"), _rbinop("div"), _ibinop("div")
    __floordiv__, __rfloordiv__, __ifloordiv__ = (_binop("floor_div"), _rbinop("floor_div"),
                                                  _ibinop("floor_div"))
    __mod__, __rmod__, __imod__ = _binop("mod"), _rbinop("mod"), _ibinop("mod")
    __rpow__, __ipow__ = _rbinop("pow"), _ibinop("pow")

    def __pow__(self, other):
        return _ops.power(self, other)
    __and__, __rand__, __iand__ = _binop("and"), _rbinop("and"), _ibinop("and")
    __or__, __ror__, __ior__ = _binop("or"), _rbinop("or"), _ibinop("or")
    __xor__, __rxor__, __ixor__ = _binop("xor"), _rbinop("xor"), _ibinop("xor")
    __lshift__, __rlshift__, __ilshift__ = _binop("lshift"), _rbinop("lshift"), _ibinop("lshift")
    __rshift__, __rrshift__, __irshift__ = _binop("rshift"), _rbinop("rshift"), _ibinop("rshift")
    __eq__, __ne__ = _binop("eq"), _binop("ne")
    __lt__, __le__ = _binop("lt"), _binop("le")
    __gt__, __ge__ = _binop("gt"), _binop("ge")

    def __divmod__(self, other):
        return (self // other, self % other)

    def __rdivmod__(self, other):
        return (other // self, other % self)

    def __matmul__(self, other):
        from pijit.numpy_lite import _funcs
        return _funcs.matmul(self, other)

    def __rmatmul__(self, other):
        from pijit.numpy_lite import _funcs
        return _funcs.matmul(other, self)

    def __imatmul__(self, other):
        raise _d.unsupported("the in-place operator @=")

    def __neg__(self):
        return _ops.unary("neg", self)

    def __pos__(self):
        return _ops.unary("pos", self)

    def __abs__(self):
        return _ops.unary("abs", self)

    def __invert__(self):
        return _ops.unary("invert", self)

    # ---- methods that are numpy functions --------------------------------------------------------
    def _method(name, module="_reduce"):
        def f(self, *args, **kwargs):
            import importlib
            return getattr(importlib.import_module("pijit.numpy_lite." + module), name)(
                self, *args, **kwargs)
        f.__name__ = name
        return f

    sum = _method("sum")
    mean = _method("mean")
    prod = _method("prod")
    all = _method("all")
    any = _method("any")
    max = _method("amax")
    min = _method("amin")
    argmax = _method("argmax")
    argmin = _method("argmin")
    clip = _method("clip", "_funcs")
    round = _method("around", "_funcs")
    dot = _method("dot", "_funcs")
    cumsum = _method("cumsum")
    std = _method("std")
    var = _method("var")
    del _method


ndarray.__module__ = "numpy"


def _rebuild(values, name):
    return array(values, dtype=name)


def _norm_axis(axis, nd):
    if not -nd <= axis < nd:
        raise _axis_error(axis, nd)
    return axis % nd if nd else 0


def _axis_error(axis, nd):
    return AxisError(axis, nd)


class AxisError(ValueError, IndexError):
    """numpy.AxisError (a ValueError and an IndexError)."""

    def __init__(self, axis, ndim=None):
        if ndim is None:
            super().__init__(axis)
        else:
            super().__init__("axis %d is out of bounds for array of dimension %d" % (axis, ndim))


AxisError.__module__ = "numpy"


def _axes_tuple(axis):
    if isinstance(axis, (tuple, list)):
        return tuple(operator.index(a) for a in axis)
    return (operator.index(axis),)


def _check_reshape(size, old, shape):
    unknown = [i for i, s in enumerate(shape) if s == -1]
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise ValueError("negative dimensions not allowed")
            known *= s
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if (unknown and (known == 0 or size % known)) or (not unknown and known != size):
        raise ValueError("cannot reshape array of size %d into shape %s"
                         % (size, _shape_repr(shape)))


def _shape_repr(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


from pijit.numpy_lite import _operators as _ops  # noqa: E402 (it builds on everything above)
