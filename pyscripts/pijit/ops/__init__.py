"""pijit.ops: MindSpore-style operators: functional forms (ops.add, ops.conv2d, ...) and
primitive classes (ops.Add(), ops.MatMul(transpose_b=True), ...)."""
from pijit.ops.functional import *  # noqa: F401,F403
from pijit.ops.functional import _UNARY, _BINARY  # noqa: F401
from pijit.ops.nn_functional import *  # noqa: F401,F403
from pijit.ops.misc import *  # noqa: F401,F403
from pijit.ops.primitives import *  # noqa: F401,F403
from pijit.ops.primitives import Primitive  # noqa: F401
from pijit.ops.primitives2 import *  # noqa: F401,F403  (the functional forms it pairs with its classes)
from pijit.ops.functional2 import *  # noqa: F401,F403  (flip, roll, tril, bmm, isnan, norm, ...)
from pijit.ops.primitives3 import *  # noqa: F401,F403  (scatter_mul, unfold, searchsorted, ...)
from pijit.ops.linalg import *  # noqa: F401,F403  (inverse, det, svd, qr, cholesky, matrix_solve, ...)
from pijit.ops.math2 import *  # noqa: F401,F403  (asin, atan2, lgamma, erfinv, bitwise_and, gcd, ...)
from pijit.ops.composite import MultitypeFuncGraph  # noqa: F401
from pijit.ops import composite, operations  # noqa: F401
from pijit.autodiff import GradOperation, grad, value_and_grad, get_grad, stop_gradient  # noqa: F401
from pijit.vmap import vmap  # noqa: F401
from pijit.creation import (ones, zeros, full, fill, ones_like, zeros_like, full_like, arange,  # noqa: F401
                            linspace, eye, rand, randn, randint)

# MindSpore's ops.functional (imported as F) holds the functional forms too: model-zoo code calls
# F.tuple_to_array, F.zeros_like, F.fill, F.stop_gradient, ... Each public function of ops that
# functional lacks is bound there under the same name (one object, so capture sees the same call).
def _fill_functional():
    import builtins
    import types
    for name, value in list(globals().items()):
        if (not name.startswith("_") and not hasattr(functional, name)
                and not hasattr(builtins, name)  # (ops.range, ops.slice: functional calls range())
                and isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type(functional.abs)))):
            setattr(functional, name, value)


_fill_functional()
del _fill_functional
from pijit.ops.complex_fns import real, imag, conj, complex, is_complex  # noqa: F401,E402
from pijit.ops.ops3d import *  # noqa: F401,F403,E402  (Conv3D, MaxPool3D, conv3d, ...)
from pijit.ops.losses2 import *  # noqa: F401,F403,E402  (CTCLoss, multi_margin_loss, ...)
from pijit.ops.detection import *  # noqa: F401,F403,E402  (NMSWithMask, ROIAlign, iou, ...)
from pijit.ops.special2 import *  # noqa: F401,F403,E402  (bessel_j0, zeta, jvp, gamma, ...)
from pijit.ops.sparse import *  # noqa: F401,F403,E402  (coo_*/csr_* functions)
from pijit.ops.ops_rest import *  # noqa: F401,F403,E402
from pijit.ops.fft import *  # noqa: F401,F403,E402
from pijit.ops.taylor import *  # noqa: F401,F403,E402  (jet, derivative)
