"""mindspore.dataset.vision.c_transforms (MindSpore 1.x): the same transforms as
mindspore.dataset.vision, under the names 1.x scripts import."""
from pijit.dataset.vision.utils import Inter, Border, ImageBatchFormat  # noqa: F401
from pijit.dataset.vision.transforms import (  # noqa: F401
    Rescale, Normalize, NormalizePad, HWC2CHW, Resize, RandomResizedCrop, Crop, CenterCrop,
    RandomCrop, Pad, RandomHorizontalFlip, RandomVerticalFlip, HorizontalFlip, VerticalFlip,
    Decode, RandomCropDecodeResize)
from pijit.dataset.transforms.transforms import TypeCast

__all__ = ["Inter", "Border", "ImageBatchFormat", "Rescale", "Normalize", "NormalizePad",
           "HWC2CHW", "Resize", "RandomResizedCrop", "Crop", "CenterCrop", "RandomCrop", "Pad",
           "RandomHorizontalFlip", "RandomVerticalFlip", "HorizontalFlip", "VerticalFlip",
           "Decode", "RandomCropDecodeResize", "TypeCast"]
