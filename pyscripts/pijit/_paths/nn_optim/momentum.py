"""`mindspore.nn.optim.momentum`: Momentum (pijit.nn's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "Momentum",
])
