"""`mindspore.ops.operations.comm_ops`: the collective-communication primitives MindSpore keeps here, as pijit's own
primitive classes (the same objects as ops.X / P.X). Names pijit does not have yet are absent."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.ops",), [
    "AllGather", "AllReduce", "AlltoAll", "Broadcast", "NeighborExchange", "NeighborExchangeV2",
    "ReduceOp", "ReduceScatter",
])
