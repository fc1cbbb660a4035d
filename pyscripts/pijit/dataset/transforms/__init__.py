"""mindspore.dataset.transforms: generic transforms (issue 43). The 1.x import paths
(transforms.c_transforms, transforms.py_transforms) are thin modules over the same classes."""
from pijit.dataset.transforms.transforms import *  # noqa: F401,F403
from pijit.dataset.transforms import transforms as _t

__all__ = list(_t.__all__)
