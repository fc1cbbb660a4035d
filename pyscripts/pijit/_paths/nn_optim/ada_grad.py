"""`mindspore.nn.optim.ada_grad`: Adagrad (pijit.nn's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "Adagrad",
])
