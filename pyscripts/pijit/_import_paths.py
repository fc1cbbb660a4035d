"""MindSpore's module paths below pijit modules that are single files (mindspore.nn.optim.momentum,
mindspore.nn.loss.loss, mindspore.nn.wrap.grad_reducer, ...): each such module gets a search path,
pijit/_paths/<name>/, holding the thin modules of those paths, so `import pijit.nn.optim.momentum`
(and its mindspore alias) finds them while nn/optim.py stays one file."""
import os

from pijit.nn import loss as _loss, optim as _optim, wrap as _wrap

_HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_paths")

for _mod, _dir in ((_optim, "nn_optim"), (_loss, "nn_loss"), (_wrap, "nn_wrap")):
    _path = os.path.join(_HERE, _dir)
    # (appended: should the module become a package, its own path still comes first)
    if _path not in list(getattr(_mod, "__path__", [])):
        _mod.__path__ = list(getattr(_mod, "__path__", [])) + [_path]
