"""`mindspore.nn.optim.lamb`: Lamb (pijit.nn's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "Lamb",
])
