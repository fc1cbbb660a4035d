"""pijit.numpy: MindSpore's numpy-style functions over pijit tensors (`import mindspore.numpy as
mnp` under the MindSpore alias). Every function takes tensors or Python data (numbers and lists
become int32/float32 tensors, as MindSpore's do) and returns pijit Tensors, built from registry ops,
so each works eagerly and inside pijit.jit.

This package is not numpy: `import numpy` anywhere, pijit included, is an absolute import of the
real numpy (or of pijit.numpy_lite when numpy is not installed); only `mindspore.numpy` and
`pijit.numpy` name this package.
"""
from pijit.numpy.array_ops import *  # noqa: F401,F403
from pijit.numpy.array_ops import __all__ as _array_ops_all
from pijit.numpy.array_creations import *  # noqa: F401,F403
from pijit.numpy.array_creations import copy_ as copy
from pijit.numpy.array_creations import __all__ as _creations_all
from pijit.numpy.dtypes import (int_, int8, int16, int32, int64, uint, uint8, uint16,  # noqa: F401
                                uint32, uint64, float_, float16, float32, float64, bool_, inf,
                                nan, pi, numeric_types, PINF, NINF)
from pijit.numpy.math_ops import *  # noqa: F401,F403
from pijit.numpy.math_ops import __all__ as _math_all
from pijit.numpy.math_ops import divmod_ as divmod, sum_ as sum  # noqa: A001
from pijit.numpy.logic_ops import *  # noqa: F401,F403
from pijit.numpy.logic_ops import __all__ as _logic_all
from pijit.numpy.stats_ops import *  # noqa: F401,F403
from pijit.numpy.stats_ops import __all__ as _stats_all

# numpy's other spellings, as MindSpore's numpy defines them
mod = remainder  # noqa: F405
fabs = absolute  # noqa: F405
round = around  # noqa: A001,F405
abs = absolute  # noqa: A001,F405
max = amax  # noqa: A001,F405
min = amin  # noqa: A001,F405

# MindSpore's __all__ (its module lists) minus the names pijit cannot compute; copy, around and
# round are attributes there but not in __all__, and so here.
__all__ = sorted(set(
    [n for n in _array_ops_all] + [n for n in _creations_all] +
    [n for n in _math_all if n not in ("divmod_", "sum_", "around")] + list(_logic_all) +
    list(_stats_all) +
    ["divmod", "sum", "mod", "fabs", "abs", "max", "min"] + numeric_types))

# numpy names whose meaning is the ops function's, element by element (the kernels of
# ops/math2.py and ops/linalg.py): the same objects.
from pijit import ops as _ops  # noqa: E402
_SAME_AS_OPS = {"arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2",
                "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
                "invert": "bitwise_not", "gcd": "gcd", "lcm": "lcm", "signbit": "signbit",
                "copysign": "copysign", "matrix_power": "matrix_power"}
for _n, _o in _SAME_AS_OPS.items():
    globals()[_n] = getattr(_ops, _o)
__all__ = sorted(set(__all__) | set(_SAME_AS_OPS))
