"""MindSpore's `mindspore.common` layout: dtype, initializer, Parameter, Tensor."""
from pijit.common import dtype  # noqa: F401
from pijit.common import initializer  # noqa: F401
from pijit.parameter import Parameter  # noqa: F401
from pijit.tensor import Tensor  # noqa: F401
