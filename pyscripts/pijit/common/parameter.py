"""`mindspore.common.parameter`."""
from pijit.parameter import Parameter, ParameterTuple  # noqa: F401

# The name a Parameter has until a Cell names it (MindSpore's helpers compare against it).
PARAMETER_NAME_DEFAULT = "Parameter"
