"""mindspore.dataset.vision: image transforms on NumPy images, as C++ kernels (issue 43).

See vision/transforms.py for the semantics and vision/_image.py for how consecutive transforms
fuse into one pass. The 1.x import paths (vision.c_transforms, vision.py_transforms) are thin
modules over the same classes.
"""
from pijit.dataset.vision.utils import (Inter, Border, ImageBatchFormat, ImageReadMode,  # noqa: F401
                                        SliceMode, ConvertMode)
from pijit.dataset.vision.transforms import *  # noqa: F401,F403
from pijit.dataset.vision import transforms as _t

__all__ = ["Inter", "Border", "ImageBatchFormat", "ImageReadMode", "SliceMode",
           "ConvertMode"] + list(_t.__all__)
