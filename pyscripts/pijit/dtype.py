"""pijit element types, spelled the way MindSpore spells them.

`pijit.float32` prints as ``Float32`` (MindSpore's ``mstype.float32``); ``name`` gives numpy's
spelling. The order of ``_ALL`` matches the C++ ``pj::DType`` enum (kernels/dtype.h).
"""


class Type(object):
    __slots__ = ("name", "_ms_name", "itemsize", "code", "is_floating_point")

    def __init__(self, name, ms_name, itemsize, code, is_floating_point):
        self.name = name
        self._ms_name = ms_name
        self.itemsize = itemsize
        self.code = code
        self.is_floating_point = is_floating_point

    def __repr__(self):
        return self._ms_name

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = Type("bool", "Bool", 1, 0, False)
int32 = Type("int32", "Int32", 4, 1, False)
int64 = Type("int64", "Int64", 8, 2, False)
float32 = Type("float32", "Float32", 4, 3, True)
float64 = Type("float64", "Float64", 8, 4, True)
float16 = Type("float16", "Float16", 2, 5, True)
bfloat16 = Type("bfloat16", "BFloat16", 2, 6, True)
int8 = Type("int8", "Int8", 1, 7, False)
int16 = Type("int16", "Int16", 2, 8, False)
uint8 = Type("uint8", "UInt8", 1, 9, False)
uint16 = Type("uint16", "UInt16", 2, 10, False)
uint32 = Type("uint32", "UInt32", 4, 11, False)
uint64 = Type("uint64", "UInt64", 8, 12, False)
complex64 = Type("complex64", "Complex64", 8, 13, False)
complex128 = Type("complex128", "Complex128", 16, 14, False)

# Indexed by code (the C++ pj::DType value).
_ALL = (bool_, int32, int64, float32, float64, float16, bfloat16, int8, int16, uint8, uint16,
        uint32, uint64, complex64, complex128)
_BY_NAME = {t.name: t for t in _ALL}
_BY_NAME.update({"bool_": bool_, "float": float32, "double": float64, "int": int64,
                 "half": float16})

# MindSpore's aliases.
float_ = single = float32
double = float64
half = float16
int_ = int64
short = int16
byte = int8
ubyte = uint8
ushort = uint16
intc = int32
intp = int64
uintc = uint32
uintp = uint64
cfloat = complex64
cdouble = complex128
number_type = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16,
               float32, float64, complex64, complex128)
int_type = (int8, int16, int32, int64)
uint_type = (uint8, uint16, uint32, uint64)
float_type = (float16, float32, float64, bfloat16)
signed_type = (int8, int16, int32, int64, float16, float32, float64, bfloat16, complex64,
               complex128)
complex_type = (complex64, complex128)
all_types = (bool_,) + number_type


def _by_name(name):
    return _BY_NAME[name]


def as_dtype(x):
    """Returns the pijit dtype for a pijit dtype, a name, a Python type or a numpy dtype."""
    if isinstance(x, Type):
        return x
    from pijit import _C
    return _ALL[_C.dtype_code(x)]
