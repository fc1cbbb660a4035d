"""`mindspore.nn.layer.container`: the containers (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "SequentialCell", "CellList", "CellDict",
])
