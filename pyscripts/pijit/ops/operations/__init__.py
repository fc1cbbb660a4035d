"""`mindspore.ops.operations` (imported as P): the primitive classes, P.Mul(), P.MatMul(...)."""
from pijit.ops.primitives import *  # noqa: F401,F403
from pijit.ops.primitives import Primitive, __all__  # noqa: F401
