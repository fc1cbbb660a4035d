"""Thin modules at the import paths MindSpore's users write (mindspore.nn.optim.momentum,
mindspore.ops.operations.math_ops, ...), each holding pijit's existing objects.

    from pijit._reexport import reexport
    reexport(__name__, ("pijit.nn",), ["Momentum", "SGD"])

Each listed name is MindSpore's: the module gets it now when a source module has it, and a name
that no source had at import time is still looked up on each access (module __getattr__), so an
object pijit gains later appears at the old path too. A name no source has raises AttributeError
(ImportError for `from ... import name`), as for any absent name.
"""
import importlib
import sys


def reexport(module_name, sources, names):
    mod = sys.modules[module_name]
    names = list(names)

    def lookup(name):
        for src in sources:
            obj = getattr(importlib.import_module(src), name, _MISSING)
            if obj is not _MISSING:
                return obj
        return _MISSING

    found = []
    for name in names:
        obj = lookup(name)
        if obj is not _MISSING:
            setattr(mod, name, obj)
            found.append(name)
    pending = frozenset(names) - frozenset(found)

    def __getattr__(name):
        if name in pending:
            obj = lookup(name)
            if obj is not _MISSING:
                return obj
        raise AttributeError("module %r has no attribute %r" % (module_name, name))

    mod.__getattr__ = __getattr__
    mod.__all__ = sorted(found)
    return mod


_MISSING = object()
