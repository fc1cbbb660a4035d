"""`mindspore.nn.layer.rnns`: the recurrent layers (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "RNN", "GRU", "LSTM",
])
