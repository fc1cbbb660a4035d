"""`mindspore.nn.optim.sgd`: SGD (pijit.nn's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "SGD",
])
