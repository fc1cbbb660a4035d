"""`mindspore.ops.operations.array_ops`: the array primitives MindSpore keeps here, as pijit's own
primitive classes (the same objects as ops.X / P.X). Names pijit does not have yet are absent."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.ops",), [
    "ArgMaxWithValue", "ArgMinWithValue", "Argmax", "Argmin", "BatchToSpace", "BroadcastTo", "Cast",
    "Concat", "DType", "DepthToSpace", "Diag", "DiagPart", "ExpandDims", "Eye", "Fill", "Gather",
    "GatherD", "GatherNd", "Identity", "InvertPermutation", "MaskedFill", "MaskedSelect",
    "Meshgrid", "NonZero", "Ones", "OnesLike", "Range", "Rank", "Reshape", "ReverseV2",
    "ScalarToTensor", "ScatterAdd", "ScatterNd", "ScatterNdAdd", "ScatterNdUpdate", "ScatterUpdate",
    "Select", "Shape", "Size", "Slice", "Sort", "SpaceToDepth", "Split", "SplitV", "Squeeze",
    "Stack", "StridedSlice", "TensorScatterUpdate", "Tile", "Transpose", "Tril", "Triu",
    "TupleToArray", "Unique", "Unstack", "UnsortedSegmentSum", "Zeros", "ZerosLike",
])
