"""`mindspore.nn.wrap.cell_wrapper`: the cells that wrap a network for training and evaluation
(pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "WithLossCell", "WithGradCell", "WithEvalCell", "TrainOneStepCell", "ForwardValueAndGrad",
    "GetNextSingleOp", "ParameterUpdate", "PipelineCell", "MicroBatchInterleaved",
])
