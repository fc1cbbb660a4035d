"""dtypes, scalar types and numpy 1.24's type promotion for pijit's numpy stand-in.

Every dtype lives in a pijit tensor of a *storage* dtype. bool, int32, int64, float32 and float64
are pijit's own; int8, int16 and uint8 are stored in int32 and float16 in float32, and every
operation leaves them as numpy's loops would (integers wrapped, halves rounded to nearest even):
they are emulated, exactly, not approximated. Promotion follows numpy 1.x, including its
value-based casting of Python numbers and 0-d operands next to arrays.
"""
import math
import struct

from pijit import dtype as _pdt

# ---- error messages --------------------------------------------------------------------------

_WHY = ("numpy is not installed for this Python, so `import numpy` gave pijit's small stand-in "
        "(pijit.numpy_lite)")


def not_provided(what):
    """The message for a name or feature the stand-in lacks; `what` names it (`numpy.fft`)."""
    return "%s is not provided by pijit's numpy stand-in: %s" % (what, _WHY)


def unsupported(what):
    return NotImplementedError(not_provided(what))


# ---- dtype objects ---------------------------------------------------------------------------

class dtype(object):
    """numpy.dtype for the stand-in's types; dtype(x) accepts what numpy accepts for them
    (names, type codes, scalar types, Python types, dtypes, None for float64)."""
    __slots__ = ("name", "kind", "char", "itemsize", "type", "str", "_storage", "_emulated",
                 "_bits")

    def __new__(cls, obj=None, align=False, copy=False):
        return as_dtype(obj)

    @property
    def byteorder(self):
        return "|" if self.itemsize == 1 else "="

    @property
    def isbuiltin(self):
        return 1

    @property
    def shape(self):
        return ()

    @property
    def ndim(self):
        return 0

    @property
    def names(self):
        return None

    @property
    def fields(self):
        return None

    @property
    def base(self):
        return self

    @property
    def descr(self):
        return [("", self.str)]

    def __repr__(self):
        return "dtype('%s')" % self.name

    def __str__(self):
        return self.name

    def __eq__(self, other):
        try:
            return as_dtype(other) is self
        except (TypeError, NotImplementedError):
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("numpy.dtype", self.name))

    def __reduce__(self):
        return (dtype, (self.name,))

    def __getattr__(self, name):
        raise AttributeError("'numpy.dtype' object has no attribute '%s' (%s)"
                             % (name, not_provided("numpy.dtype.%s" % name)))


def _make_dtype(name, kind, char, itemsize, storage, emulated):
    d = object.__new__(dtype)
    d.name, d.kind, d.char, d.itemsize = name, kind, char, itemsize
    d.str = ("|" if itemsize == 1 else "<") + kind + str(itemsize)
    d._storage, d._emulated, d._bits = storage, emulated, itemsize * 8
    return d


BOOL = _make_dtype("bool", "b", "?", 1, _pdt.bool_, False)
INT8 = _make_dtype("int8", "i", "b", 1, _pdt.int32, True)
INT16 = _make_dtype("int16", "i", "h", 2, _pdt.int32, True)
INT32 = _make_dtype("int32", "i", "i", 4, _pdt.int32, False)
INT64 = _make_dtype("int64", "i", "l", 8, _pdt.int64, False)
UINT8 = _make_dtype("uint8", "u", "B", 1, _pdt.int32, True)
FLOAT16 = _make_dtype("float16", "f", "e", 2, _pdt.float32, True)
FLOAT32 = _make_dtype("float32", "f", "f", 4, _pdt.float32, False)
FLOAT64 = _make_dtype("float64", "f", "d", 8, _pdt.float64, False)
UINT16 = _make_dtype("uint16", "u", "H", 2, _pdt.uint16, False)
UINT32 = _make_dtype("uint32", "u", "I", 4, _pdt.uint32, False)
UINT64 = _make_dtype("uint64", "u", "L", 8, _pdt.uint64, False)
COMPLEX64 = _make_dtype("complex64", "c", "F", 8, _pdt.complex64, False)
COMPLEX128 = _make_dtype("complex128", "c", "D", 16, _pdt.complex128, False)
ALL = (BOOL, INT8, INT16, INT32, INT64, UINT8, FLOAT16, FLOAT32, FLOAT64, UINT16, UINT32, UINT64,
       COMPLEX64, COMPLEX128)

# The dtype a pijit storage dtype holds when no emulated dtype is attached.
NATIVE = {_pdt.bool_: BOOL, _pdt.int32: INT32, _pdt.int64: INT64, _pdt.float32: FLOAT32,
          _pdt.float64: FLOAT64, _pdt.uint16: UINT16, _pdt.uint32: UINT32, _pdt.uint64: UINT64,
          _pdt.complex64: COMPLEX64, _pdt.complex128: COMPLEX128}

_BY_NAME = {}
for _d in ALL:
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.char] = _d
    _BY_NAME[_d.str] = _d
    _BY_NAME[_d.str[1:]] = _d
    _BY_NAME["=" + _d.str[1:]] = _d
    _BY_NAME["<" + _d.str[1:]] = _d
_BY_NAME.update({"bool_": BOOL, "bool8": BOOL, "b1": BOOL, "byte": INT8, "short": INT16,
                 "intc": INT32, "int": INT64, "int_": INT64, "long": INT64, "longlong": INT64,
                 "q": INT64, "ubyte": UINT8, "half": FLOAT16, "single": FLOAT32, "float": FLOAT64,
                 "double": FLOAT64, "float_": FLOAT64, "p": INT64, "ushort": UINT16,
                 "uintc": UINT32, "uint": UINT64, "ulonglong": UINT64, "Q": UINT64, "P": UINT64,
                 "uintp": UINT64, "complex": COMPLEX128, "cfloat": COMPLEX128,
                 "cdouble": COMPLEX128, "complex_": COMPLEX128, "csingle": COMPLEX64,
                 "singlecomplex": COMPLEX64})

# Real numpy's other types: named so that asking for one says it is missing rather than unknown.
_KNOWN_ELSEWHERE = ("float128", "longdouble", "longfloat", "complex256", "clongdouble", "object",
                    "object_", "str", "str_", "unicode", "bytes", "bytes_", "string_", "void",
                    "datetime64", "timedelta64", "g", "G", "O", "S", "U", "V", "M", "m", "f16",
                    "c32")


def as_dtype(obj):
    """The stand-in dtype for anything numpy accepts as one of the stand-in's types."""
    if isinstance(obj, dtype):
        return obj
    if obj is None:
        return FLOAT64
    t = getattr(obj, "_np_dtype", None)  # the scalar types
    if isinstance(obj, type) and isinstance(t, dtype):
        return t
    if obj is float:
        return FLOAT64
    if obj is int:
        return INT64
    if obj is bool:
        return BOOL
    if obj is complex:
        return COMPLEX128
    if isinstance(obj, str):
        d = _BY_NAME.get(obj)
        if d is not None:
            return d
        if obj in _KNOWN_ELSEWHERE or obj.rstrip("0123456789") in ("U", "S", "<U", "|S", "V"):
            raise unsupported("dtype %r" % obj)
        raise TypeError("data type %r not understood" % obj)
    if obj in (bytes, object) or (isinstance(obj, type) and obj.__name__ in
                                           _KNOWN_ELSEWHERE):
        raise unsupported("dtype %s" % getattr(obj, "__name__", obj))
    # numpy has no idea of pijit's (MindSpore's) dtypes either.
    raise TypeError("Cannot interpret '%r' as a data type" % (obj,))


# ---- scalar values -----------------------------------------------------------------------------

_F32 = struct.Struct("<f")
_F16 = struct.Struct("<e")
_HALF_OVERFLOW = 65520.0  # halfway between float16's largest finite (65504) and 2**16


def round_f32(x):
    """float x rounded to the nearest float32 (ties to even), as a Python float."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def round_f16(x):
    if abs(x) >= _HALF_OVERFLOW:
        return math.copysign(math.inf, x)
    return _F16.unpack(_F16.pack(x))[0]


def round_f16_list(values):
    """Rounds every float to float16 in one struct call (struct rounds to nearest even)."""
    big = _HALF_OVERFLOW
    vals = [v if not abs(v) >= big else math.copysign(math.inf, v) for v in values]
    fmt = "<%de" % len(vals)
    return list(struct.unpack(fmt, struct.pack(fmt, *vals)))


def wrap_int(v, d):
    """An int wrapped into dtype d's range, as numpy's integer loops leave it."""
    bits = d._bits
    if d.kind == "u":
        return v % (1 << bits)
    half = 1 << (bits - 1)
    return (v + half) % (1 << bits) - half


def to_value(x, d):
    """A Python number converted to dtype d the way numpy's scalar constructors convert it (C casts
    for floats to ints go through int32, so out-of-range values and NaN become INT32_MIN)."""
    if d is BOOL:
        return bool(x)
    if d.kind in "iu":
        if isinstance(x, float):
            if not math.isfinite(x) or not -2147483649.0 < x < 2147483648.0:
                if d is INT64:
                    if not math.isfinite(x) or not -9.3e18 < x < 9.2e18:
                        return -(1 << 63)
                    return int(x)
                return wrap_int(-(1 << 31), d)
            x = int(x)
        return wrap_int(int(x), d)
    if d.kind == "c":
        x = complex(x)
        if d is COMPLEX64:
            return complex(round_f32(x.real), round_f32(x.imag))
        return x
    x = float(x)
    if d is FLOAT32:
        return round_f32(x)
    if d is FLOAT16:
        return round_f16(x)
    return x


def python_dtype(x):
    """The dtype numpy gives a Python scalar (bool, int, float)."""
    if isinstance(x, bool):
        return BOOL
    if isinstance(x, int):
        if not -(1 << 63) <= x < (1 << 63):
            if 0 <= x < (1 << 64):
                return UINT64
            raise unsupported("integers outside int64/uint64 (object arrays)")
        return INT64
    if isinstance(x, float):
        return FLOAT64
    if isinstance(x, complex):
        return COMPLEX128
    return None


# ---- promotion (numpy 1.x) -------------------------------------------------------------------
# Types are (kind, bits) pairs here, so that intermediate unsigned types numpy would pick
# (uint16 for the value 1000) take part in promotion even though no array of them can be made.

def _kb(d):
    return (d.kind, d._bits)


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 2}  # numpy ranks complex with float here


def _promote_kb(a, b):
    if a == b:
        return a
    (ka, ba), (kb, bb) = a, b
    if ka == "b":
        return b
    if kb == "b":
        return a
    if ka == kb:
        return (ka, max(ba, bb))
    if ka == "c" or kb == "c":
        # complex(2n) holds float(n): promote the other side with the component float type
        c, other = (a, b) if ka == "c" else (b, a)
        f = _promote_kb(("f", c[1] // 2), other)
        return ("c", max(64, f[1] * 2))
    if ka == "f" or kb == "f":
        f, other = (a, b) if ka == "f" else (b, a)
        return ("f", max(f[1], {8: 16, 16: 32, 32: 64, 64: 64}[other[1]]))
    s, u = (a, b) if ka == "i" else (b, a)
    if s[1] > u[1]:
        return s
    if u[1] == 64:
        return ("f", 64)
    return ("i", u[1] * 2)


def _min_scalar(kb, value):
    """numpy's min_scalar_type: the smallest type of the value's kind that holds it, and whether
    it is an unsigned value that also fits the signed type of that size ("small unsigned")."""
    kind, bits = kb
    if kind == "b":
        return kb, False
    if kind in "iu":
        v = int(value)
        for b in (8, 16, 32, 64):
            if v >= 0 and v < (1 << b):
                return ("u", b), v < (1 << (b - 1))
            if v < 0 and v >= -(1 << (b - 1)):
                return ("i", b), False
        return kb, False
    if kind == "c":
        z = complex(value)
        ok = all(not math.isfinite(p) or -3.4e38 < p < 3.4e38 for p in (z.real, z.imag))
        return (("c", 64) if ok else kb), False
    x = float(value)
    if not math.isfinite(x) or -65000.0 < x < 65000.0:
        return ("f", 16), False
    if -3.4e38 < x < 3.4e38:
        return ("f", min(bits, 32)), False
    return kb, False


def _promote_small(t1, t2, small1, small2):
    if small1 and t2[0] not in "bu":
        t1 = ("i", t1[1])
    elif small2 and t1[0] not in "bu":
        t2 = ("i", t2[1])
    return _promote_kb(t1, t2)


def _use_min_scalar(operands):
    """numpy's should_use_min_scalar: value-based casting applies to the 0-d operands when there
    are arrays too and no 0-d operand is of a higher kind (bool < int < float) than they are."""
    arr_kinds = [_KIND_RANK[d.kind] for d, nd, _ in operands if nd > 0]
    sc_kinds = [_KIND_RANK[d.kind] for d, nd, _ in operands if nd == 0]
    return bool(arr_kinds) and bool(sc_kinds) and max(arr_kinds) >= max(sc_kinds)


def result_kb(operands):
    """numpy 1.x result_type over (dtype, ndim, value) triples; value matters for 0-d operands.
    (add, subtract, multiply, maximum, minimum and the comparisons resolve their loop this way.)"""
    use_min = _use_min_scalar(operands)
    ret, ret_small = None, False
    for d, nd, value in operands:
        kb, small = _kb(d), False
        if use_min and nd == 0:
            kb, small = _min_scalar(kb, value)
        if ret is None:
            ret, ret_small = kb, small
        else:
            ret = _promote_small(kb, ret, small, ret_small)
            ret_small = small and ret_small
    return ret


def _can_cast_safe(a, b):
    return _promote_kb(a, b) == b


INT_LOOPS = [("i", 8), ("u", 8), ("i", 16), ("u", 16), ("i", 32), ("u", 32), ("i", 64),
             ("u", 64)]
FLOAT_LOOPS = [("f", 16), ("f", 32), ("f", 64)]
COMPLEX_LOOPS = [("c", 64), ("c", 128)]
BOOL_LOOP = [("b", 8)]


def loop_kb(loops, operands):
    """numpy's default type resolver: the first loop type every operand casts to safely (0-d
    operands by value, a small unsigned value counting as signed for a signed loop); None when
    there is none. (true_divide, floor_divide, remainder, power, the bitwise ops and shifts.)"""
    use_min = _use_min_scalar(operands)
    for t in loops:
        for d, nd, value in operands:
            kb = _kb(d)
            if use_min and nd == 0:
                kb, small = _min_scalar(kb, value)
                if small and t[0] != "u":
                    kb = ("i", kb[1])
            if not _can_cast_safe(kb, t):
                break
        else:
            return t
    return None


_BY_KB = {_kb(d): d for d in ALL}


def from_kb(kb):
    d = _BY_KB.get(kb)
    if d is None:
        name = {"u": "uint", "i": "int", "f": "float", "c": "complex"}[kb[0]] + str(kb[1])
        raise unsupported("the result dtype %s" % name)
    return d


def promote_types(a, b):
    return from_kb(_promote_kb(_kb(as_dtype(a)), _kb(as_dtype(b))))


_CAST_RANK = {"b": 0, "u": 1, "i": 2, "f": 3, "c": 4}


def can_cast_same_kind(src, dst):
    """numpy's 'same_kind' rule: a safe cast, or one within a kind (float64 -> float32)."""
    if _CAST_RANK[dst.kind] > _CAST_RANK[src.kind]:
        return True
    if src.kind == dst.kind:
        return True
    return _promote_kb(_kb(src), _kb(dst)) == _kb(dst)
