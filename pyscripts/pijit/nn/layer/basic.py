"""`mindspore.nn.layer.basic`: dense, dropout, flatten, padding and the other basic layers (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "Dense", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "Flatten", "Unflatten", "ClipByNorm",
    "Norm", "OneHot", "Pad", "Unfold", "Fold", "Tril", "Triu", "MatrixDiag", "MatrixDiagPart",
    "MatrixSetDiag", "L1Regularizer", "Upsample", "Roll", "Identity",
])
