"""`mindspore.common.dtype` (imported as mstype): the same objects as pijit.dtype."""
from pijit.dtype import *  # noqa: F401,F403
from pijit.dtype import Type, as_dtype, _ALL  # noqa: F401


def _check_dtype(who, t):
    from pijit.dtype import Type
    if not isinstance(t, Type):
        raise TypeError("%s: expected a MindSpore dtype (mindspore.float32, ...), got %r" % (who, t))


def dtype_to_nptype(type_):
    """The numpy scalar type of a dtype: float32 -> numpy.float32 (numpy's, or pijit's numpy
    stand-in's when numpy is not installed)."""
    _check_dtype("dtype_to_nptype", type_)
    import numpy
    nptype = getattr(numpy, "bool_" if type_.name == "bool" else type_.name, None)
    if nptype is None:
        raise TypeError("dtype_to_nptype: numpy has no type for %s" % (type_,))
    return nptype


def dtype_to_pytype(type_):
    """The Python type of a dtype's values: bool_ -> bool, integers -> int, floating -> float,
    complex -> complex."""
    _check_dtype("dtype_to_pytype", type_)
    if type_.name == "bool":
        return bool
    if type_.name.startswith("complex"):
        return complex
    return float if type_.is_floating_point else int


def pytype_to_dtype(obj):
    """The dtype of a Python or numpy type: bool -> bool_, int -> int64, float -> float64,
    complex -> complex128, numpy.float32 or numpy.dtype('float32') -> float32; a dtype is returned
    as it is."""
    from pijit import dtype as _d
    if isinstance(obj, _d.Type):
        return obj
    simple = {bool: _d.bool_, int: _d.int64, float: _d.float64, complex: _d.complex128}
    if obj in simple:
        return simple[obj]
    name = getattr(obj, "name", None) if not isinstance(obj, type) else getattr(obj, "__name__", None)
    if isinstance(name, str):
        try:
            return _d._by_name(name.rstrip("_") if name == "bool_" else name)
        except KeyError:
            pass
    raise TypeError("pytype_to_dtype: %r has no MindSpore dtype in pijit" % (obj,))


from pijit._toplevel2 import (Int, uint, number, string, list_, tuple_, type_none,  # noqa: F401,E402
                              tensor_type, QuantDtype)
