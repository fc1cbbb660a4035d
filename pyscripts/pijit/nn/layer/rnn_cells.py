"""`mindspore.nn.layer.rnn_cells`: the recurrent cells (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "RNNCell", "GRUCell", "LSTMCell",
])
