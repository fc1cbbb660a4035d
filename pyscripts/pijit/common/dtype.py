"""`mindspore.common.dtype` (imported as mstype): the same objects as pijit.dtype."""
from pijit.dtype import *  # noqa: F401,F403
from pijit.dtype import Type, as_dtype, _ALL  # noqa: F401
