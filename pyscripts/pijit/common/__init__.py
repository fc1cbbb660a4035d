"""MindSpore's `mindspore.common` layout: dtype, initializer, parameter, tensor, api, mutable."""
from pijit.common import dtype  # noqa: F401
from pijit.common import initializer  # noqa: F401
from pijit.common import api, parameter, tensor  # noqa: F401
from pijit.parameter import Parameter, ParameterTuple  # noqa: F401
from pijit.mutable import mutable  # noqa: F401
from pijit.tensor import Tensor  # noqa: F401
# The names mindspore.common itself exports (MindSpore's common/__init__.py): every dtype and its
# helpers, the seed functions and jit's family.
from pijit.common.dtype import *  # noqa: F401,F403,E402
from pijit.common.dtype import (Type, dtype_to_nptype, dtype_to_pytype,  # noqa: F401,E402
                                pytype_to_dtype)
from pijit.creation import set_seed, get_seed  # noqa: F401,E402
from pijit.common.api import jit, ms_function, jit_class, ms_class  # noqa: F401,E402


def get_py_obj_dtype(obj):
    """MindSpore's get_py_obj_dtype: a Tensor's dtype, a dtype itself, or the dtype of a Python
    or numpy scalar type or value (1 -> int64, 1.0 -> float64, True -> bool_)."""
    from pijit import _C
    from pijit import dtype as _d
    if isinstance(obj, _C.TensorBase):
        return obj.dtype
    if isinstance(obj, _d.Type):
        return obj
    if not isinstance(obj, type) and type(obj) in (bool, int, float, complex):
        obj = type(obj)
    return pytype_to_dtype(obj)


from pijit._toplevel2 import (Int, uint, number, string, list_, tuple_, type_none,  # noqa: F401,E402
                              tensor_type, QuantDtype, set_dump, ms_memory_recycle)
from pijit.jit import JitConfig  # noqa: F401,E402
from pijit.common.sparse_tensor import COOTensor, CSRTensor, RowTensor, SparseTensor  # noqa: F401,E402
