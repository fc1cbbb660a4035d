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

# MindSpore's aliases.
float_ = float32
double = float64
int_ = int64
number_type = (int32, int64, float32, float64)


def _by_name(name):
    return _BY_NAME[name]


def as_dtype(x):
    """Returns the pijit dtype for a pijit dtype, a name, a Python type or a numpy dtype."""
    if isinstance(x, Type):
        return x
    from pijit import _C
    return _ALL[_C.dtype_code(x)]
