"""`mindspore.ops._grad`: where MindSpore keeps its primitives' gradient definitions; programs import
bprop_getters from here (or from .grad_base) to register a primitive's gradient."""
from pijit.ops._grad.grad_base import bprop_getters  # noqa: F401

__all__ = ["bprop_getters"]
