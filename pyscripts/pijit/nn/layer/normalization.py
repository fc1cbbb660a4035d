"""`mindspore.nn.layer.normalization`: the normalisation layers (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d",
    "InstanceNorm2d", "InstanceNorm3d", "SyncBatchNorm",
])
