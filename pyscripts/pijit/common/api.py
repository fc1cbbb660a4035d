"""`mindspore.common.api`: jit and its companions, and _no_grad."""
import contextlib

from pijit import _C
from pijit._state import runtime_state
from pijit.jit import jit, ms_function, jit_class, ms_class, lazy_inline  # noqa: F401


class _no_grad(contextlib.ContextDecorator):
    """MindSpore's _no_grad: inside `with _no_grad():` (or a function decorated with
    `@_no_grad()`) no gradient is recorded: values computed there are constants to every
    gradient being taken (grad, value_and_grad, GradOperation), as if passed through
    ops.stop_gradient. Pauses nest and are per thread."""
    # Pausing the tape is runtime state capture does not model (pijit/_state.py): a captured
    # frame stops at the construction, at entering and at leaving the block, so what runs
    # between (captured or not) runs while the pause is real and is recorded by no tape.
    __pijit_state__ = "pauses gradient recording"

    @runtime_state("pauses gradient recording")
    def __enter__(self):
        _C.tape_pause()
        return self

    @runtime_state("resumes gradient recording")
    def __exit__(self, *exc):
        _C.tape_resume()
        return False
