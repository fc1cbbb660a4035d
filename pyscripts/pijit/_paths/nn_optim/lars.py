"""`mindspore.nn.optim.lars`: LARS (pijit.nn's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "LARS",
])
