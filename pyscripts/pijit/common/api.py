"""`mindspore.common.api`: jit and its companions."""
from pijit.jit import jit, ms_function, jit_class, ms_class, lazy_inline  # noqa: F401
