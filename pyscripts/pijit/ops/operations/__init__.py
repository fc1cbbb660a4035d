"""`mindspore.ops.operations` (imported as P): the primitive classes, P.Mul(), P.MatMul(...).
Every Primitive class pijit.ops exports is here, the same object (one definition: a primitive
added to any ops module is a P name without a list to update).

pijit.ops imports this module before its later modules (ops3d, losses2, special2, ...) have
loaded, so the names beyond ops.primitives' are gathered on first use (PEP 562's module
__getattr__, which `from ... import *` reaches through __all__)."""
from pijit.ops.primitives import *  # noqa: F401,F403
from pijit.ops.primitives import Primitive, __all__ as _base_all  # noqa: F401

_done = []


def _gather():
    """Binds every public Primitive class of pijit.ops here; sets __all__."""
    import pijit.ops as ops
    names = set(_base_all)
    for name in dir(ops):
        obj = getattr(ops, name)
        if not name.startswith("_") and isinstance(obj, type) and issubclass(obj, Primitive):
            globals().setdefault(name, obj)
            names.add(name)
    globals()["__all__"] = sorted(names)
    _done.append(True)


def __getattr__(name):
    import sys
    ops = sys.modules.get("pijit.ops")
    # only once pijit.ops has finished importing (importlib marks a module being run so): a
    # partial scan would stop short
    if not _done and ops is not None and not getattr(getattr(ops, "__spec__", None), "_initializing", False):
        _gather()
        if name in globals():
            return globals()[name]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    if not _done:
        _gather()
    return sorted(globals())
