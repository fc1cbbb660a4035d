"""`mindspore.ops.operations.linalg_ops`: the linear-algebra primitives MindSpore keeps here (Svd,
Eigh, Geqrf), as pijit's own classes (the same objects as ops.X / P.X)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.ops",), ["Svd", "Eigh", "Geqrf"])
