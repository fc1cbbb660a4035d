"""`mindspore.nn.layer.transformer`: MultiheadAttention and the Transformer layers (pijit.nn's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerDecoder", "Transformer",
])
