"""`mindspore.common.tensor`."""
from pijit.tensor import Tensor  # noqa: F401
