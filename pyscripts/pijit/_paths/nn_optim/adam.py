"""`mindspore.nn.optim.adam`: the Adam family (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "Adam", "AdamWeightDecay", "AdamOffload",
])
