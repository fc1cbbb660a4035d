"""MindSpore's compile configuration (mindspore._extends.parse.compile_config).

pijit honours one of MindSpore's configs, JIT_ENABLE_AUGASSIGN_INPLACE: what `x += y` means on a
Tensor. '0' (the default): `x += y` is `x = x + y`, a new tensor promoted as `+` promotes, and any
other name of the old tensor keeps its values, as MindSpore does on CPU and GPU. '1': `+=`, `-=`,
`*=`, `/=` and `//=` write the result into x (every name of it sees the change; the result is cast
to x's dtype where numpy's same_kind rule allows, else TypeError), as MindSpore's graph mode does
with the switch (and its Ascend PyNative mode always). `%=`, `**=`, `@=` and the bitwise ones are
the plain operators either way; `Tensor.add_()` and the other methods ending in `_` always write.

Set it as MindSpore reads it: `compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = '1'` here, or
MS_JIT=JIT_ENABLE_AUGASSIGN_INPLACE:1 in the environment (read when pijit is imported; MS_JIT's
other keys name configs pijit does not have and are ignored). Unlike MindSpore, which reads it once
at its first compilation and only for graph mode, pijit applies it to eager code at once, and a
jitted function captured under the other setting recompiles (eager and jitted always agree).
"""
import os as _os
import sys as _sys
import types as _types

from pijit import _C

__all__ = ["JIT_ENABLE_AUGASSIGN_INPLACE"]

JIT_ENABLE_AUGASSIGN_INPLACE = '0'

def _augassign_switch(value):
    if isinstance(value, (str, int)):  # (MindSpore compares the text with "1"; bools are ints)
        if value in ('1', 1):
            return True
        if value in ('0', 0, ''):
            return False
    raise ValueError("JIT_ENABLE_AUGASSIGN_INPLACE must be '1' (augmented assignment writes into a "
                     "Tensor) or '0' (it makes a new Tensor, the default), got %r" % (value,))


class _CompileConfig(_types.ModuleType):
    # Assigning the switch sets the C operators at once; the module's namespace changes too, which
    # a captured graph that met an augmented assignment on a tensor guards: a flip recompiles.
    def __setattr__(self, name, value):
        if name == "JIT_ENABLE_AUGASSIGN_INPLACE":
            _C._set_augassign_inplace(_augassign_switch(value))
        _types.ModuleType.__setattr__(self, name, value)


def _from_ms_jit(text):
    """The value MS_JIT ("KEY:VALUE,...") gives the switch, or None."""
    found = None
    for item in text.split(","):
        key, sep, value = item.partition(":")
        if sep and key.strip() == "JIT_ENABLE_AUGASSIGN_INPLACE":
            found = value.strip()
    return found


_sys.modules[__name__].__class__ = _CompileConfig
_env = _from_ms_jit(_os.environ.get("MS_JIT", ""))
if _env is not None:
    try:
        _augassign_switch(_env)
    except ValueError as e:
        raise ValueError("MS_JIT: %s" % e) from None
    JIT_ENABLE_AUGASSIGN_INPLACE = _env
_C._set_augassign_inplace(_augassign_switch(JIT_ENABLE_AUGASSIGN_INPLACE))
