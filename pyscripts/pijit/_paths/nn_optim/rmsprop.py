"""`mindspore.nn.optim.rmsprop`: RMSProp (pijit.nn's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "RMSProp",
])
