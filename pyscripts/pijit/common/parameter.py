"""`mindspore.common.parameter`."""
from pijit.parameter import Parameter, ParameterTuple  # noqa: F401
