"""mindspore.dataset.vision.py_transforms (MindSpore 1.x): the Python-side transforms 1.x scripts
import. On NumPy images they compute what the 1.x versions do: ToTensor gives CHW float32 / 255,
Normalize and NormalizePad then work on those CHW images (1.x's py_transforms.Normalize takes
CHW), HWC2CHW transposes. PIL-only transforms (ToPIL, ...) are not provided."""
from pijit.dataset.vision.utils import Inter, Border  # noqa: F401
from pijit.dataset.vision import transforms as _t
from pijit.dataset.vision.transforms import (  # noqa: F401
    ToTensor, HWC2CHW, Resize, RandomResizedCrop, CenterCrop, RandomCrop, Pad,
    RandomHorizontalFlip, RandomVerticalFlip, Decode, ToType)
from pijit.dataset.transforms.transforms import Compose  # noqa: F401

__all__ = ["Inter", "Border", "ToTensor", "HWC2CHW", "Resize", "RandomResizedCrop", "CenterCrop",
           "RandomCrop", "Pad", "RandomHorizontalFlip", "RandomVerticalFlip", "Decode", "ToType",
           "Normalize", "NormalizePad", "Compose"]


class Normalize(_t.Normalize):
    """(image - mean) / std per channel of a CHW float image (1.x py_transforms semantics)."""

    def __init__(self, mean, std):
        super().__init__(mean, std, is_hwc=False)


class NormalizePad(_t.NormalizePad):
    """Normalize of a CHW image plus a zero channel (1.x py_transforms semantics)."""

    def __init__(self, mean, std, dtype="float32"):
        super().__init__(mean, std, dtype, is_hwc=False)
