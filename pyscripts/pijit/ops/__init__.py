"""pijit.ops: MindSpore-style operators (functional forms; primitive classes come with nn)."""
from pijit.ops.functional import *  # noqa: F401,F403
from pijit.ops.functional import _UNARY, _BINARY  # noqa: F401
