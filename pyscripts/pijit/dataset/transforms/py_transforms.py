"""mindspore.dataset.transforms.py_transforms (MindSpore 1.x): Compose, OneHotOp (OneHot with
label smoothing), RandomApply, RandomChoice, RandomOrder."""
from pijit.dataset.transforms.transforms import (  # noqa: F401
    PyTensorOperation, Compose, OneHot, RandomApply, RandomChoice, RandomOrder)

OneHotOp = OneHot

__all__ = ["PyTensorOperation", "Compose", "OneHotOp", "RandomApply", "RandomChoice",
           "RandomOrder"]
