"""MindSpore's `mindspore.common` layout: dtype, initializer, parameter, tensor, api, mutable."""
from pijit.common import dtype  # noqa: F401
from pijit.common import initializer  # noqa: F401
from pijit.common import api, parameter, tensor  # noqa: F401
from pijit.parameter import Parameter, ParameterTuple  # noqa: F401
from pijit.mutable import mutable  # noqa: F401
from pijit.tensor import Tensor  # noqa: F401
