"""`mindspore.nn.optim.optimizer`: the optimizer base class (pijit.nn's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "Optimizer",
])
