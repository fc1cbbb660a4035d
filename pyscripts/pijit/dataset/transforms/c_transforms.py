"""mindspore.dataset.transforms.c_transforms (MindSpore 1.x): the same classes as
mindspore.dataset.transforms."""
from pijit.dataset.transforms.transforms import (  # noqa: F401
    TensorOperation, Compose, TypeCast, OneHot, Fill, Concatenate, Duplicate, Slice, PadEnd, Mask,
    Relational, RandomApply, RandomChoice, Unique)

__all__ = ["TensorOperation", "Compose", "TypeCast", "OneHot", "Fill", "Concatenate", "Duplicate",
           "Slice", "PadEnd", "Mask", "Relational", "RandomApply", "RandomChoice", "Unique"]
