"""Makes `import mindspore` (and `mindspore.X`) resolve to pijit when MindSpore is not installed.

A meta-path finder maps `mindspore[.sub]` to `pijit[.sub]` and registers the very same module
objects under both names, so `mindspore.Tensor is pijit.Tensor`.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

_PREFIX = "mindspore"


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self.saved_spec = module.__spec__
        return module

    def exec_module(self, module):
        # Already executed under its pijit name; undo the import system's __spec__ overwrite.
        module.__spec__ = self.saved_spec


class MindSporeAliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        real = "pijit" + fullname[len(_PREFIX):]
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real))


def mindspore_installed():
    for finder in sys.meta_path:
        if isinstance(finder, MindSporeAliasFinder):
            continue
        find = getattr(finder, "find_spec", None)
        if find and find(_PREFIX, None) is not None:
            return True
    return False


def install_mindspore_alias():
    """Installs the alias unless MindSpore itself is importable; returns whether it did."""
    if any(isinstance(f, MindSporeAliasFinder) for f in sys.meta_path):
        return True
    if mindspore_installed():
        return False
    # First in line: the path finder would otherwise load pijit's files a second time under
    # mindspore.* names (mindspore.__path__ is pijit's).
    sys.meta_path.insert(0, MindSporeAliasFinder())
    return True
