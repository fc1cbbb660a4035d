"""`mindspore.ops.operations._grad_ops`: the primitives of MindSpore's own gradient definitions MindSpore keeps here, as pijit's own
primitive classes (the same objects as ops.X / P.X). Names pijit does not have yet are absent."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.ops",), [
    "BiasAddGrad", "ReluGrad", "SigmoidGrad", "TanhGrad",
])
