"""Makes `import mindspore` (and `mindspore.X`) resolve to pijit when MindSpore is not installed,
and `import numpy` resolve to pijit's numpy stand-in (pijit.numpy_lite) when numpy is not.

A meta-path finder maps `mindspore[.sub]` to `pijit[.sub]` and registers the very same module
objects under both names, so `mindspore.Tensor is pijit.Tensor`. The numpy finder does the same
for `numpy[.sub]` -> `pijit.numpy_lite[.sub]`, but only after every other finder has failed to
find a real numpy: an installed numpy always wins (a broken one is not masked either).
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


# ---- numpy ---------------------------------------------------------------------------------------

_NUMPY = "numpy"
_LITE = "pijit.numpy_lite"


class _MissingLoader(importlib.abc.Loader):
    """Raises a clear error for a numpy submodule the stand-in does not have (numpy.linalg)."""

    def __init__(self, fullname):
        self.fullname = fullname

    def create_module(self, spec):
        raise ModuleNotFoundError(
            "No module named '%s': pijit's numpy stand-in does not provide it (numpy is not "
            "installed for this Python, so `import numpy` gave pijit.numpy_lite)"
            % self.fullname, name=self.fullname)

    def exec_module(self, module):  # pragma: no cover - create_module always raises
        pass


class NumpyLiteFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == _NUMPY:
            if numpy_installed():
                return None
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(_LITE), is_package=True)
        if not fullname.startswith(_NUMPY + "."):
            return None
        parent = sys.modules.get(_NUMPY)
        if parent is None or not getattr(parent, "__pijit_numpy_lite__", False):
            return None  # the real numpy's submodules
        real = _LITE + fullname[len(_NUMPY):]
        if importlib.util.find_spec(real) is None:
            return importlib.machinery.ModuleSpec(fullname, _MissingLoader(fullname))
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real))


def numpy_installed():
    """Whether a finder other than pijit's can find a real numpy."""
    for finder in sys.meta_path:
        if isinstance(finder, NumpyLiteFinder):
            continue
        find = getattr(finder, "find_spec", None)
        if find and find(_NUMPY, None) is not None:
            return True
    return False


def install_numpy_lite():
    """Installs the numpy stand-in's finder; it serves `import numpy` only when no real numpy can
    be found at that moment. Returns False (and installs nothing) when numpy is installed now."""
    if any(isinstance(f, NumpyLiteFinder) for f in sys.meta_path):
        return True
    if _NUMPY in sys.modules or numpy_installed():
        return False
    # First in line, for the same reason as the MindSpore alias: numpy.random must not be loaded
    # a second time from the stand-in's files by the path finder.
    sys.meta_path.insert(0, NumpyLiteFinder())
    return True
