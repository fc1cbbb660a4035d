"""`mindspore.nn.layer.embedding`: the embedding layers (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "Embedding", "EmbeddingLookup", "MultiFieldEmbeddingLookup",
])
