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

_ALL = (bool_, int32, int64, float32, float64)
_BY_NAME = {t.name: t for t in _ALL}
_BY_NAME.update({"bool_": bool_, "float": float32, "double": float64, "int": int64})

# MindSpore's other element types exist as names, so programs that mention them import and print;
# pijit has no kernels for them, and making a tensor of one raises TypeError naming the five it has.
float16 = half = Type("float16", "Float16", 2, -1, True)
bfloat16 = Type("bfloat16", "BFloat16", 2, -1, True)
int8 = Type("int8", "Int8", 1, -1, False)
int16 = short = Type("int16", "Int16", 2, -1, False)
uint8 = Type("uint8", "UInt8", 1, -1, False)
uint16 = Type("uint16", "UInt16", 2, -1, False)
uint32 = Type("uint32", "UInt32", 4, -1, False)
uint64 = Type("uint64", "UInt64", 8, -1, False)
complex64 = Type("complex64", "Complex64", 8, -1, False)
complex128 = Type("complex128", "Complex128", 16, -1, False)
_UNSUPPORTED = (float16, bfloat16, int8, int16, uint8, uint16, uint32, uint64, complex64,
                complex128)

# MindSpore's aliases.
float_ = float32
double = float64
int_ = int64
number_type = (int32, int64, float32, float64)


def _by_name(name):
    if name in _BY_NAME:
        return _BY_NAME[name]
    return {t.name: t for t in _UNSUPPORTED}[name]


def as_dtype(x):
    """Returns the pijit dtype for a pijit dtype, a name, a Python type or a numpy dtype."""
    if isinstance(x, Type):
        return x
    from pijit import _C
    return _ALL[_C.dtype_code(x)]
