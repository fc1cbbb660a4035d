"""`mindspore.nn.optim.ftrl`: FTRL (pijit.nn's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "FTRL",
])
