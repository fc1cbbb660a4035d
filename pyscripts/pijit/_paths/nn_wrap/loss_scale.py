"""`mindspore.nn.wrap.loss_scale`: training with loss scaling (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "TrainOneStepWithLossScaleCell", "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell",
])
