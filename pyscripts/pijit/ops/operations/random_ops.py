"""`mindspore.ops.operations.random_ops`: the random primitives MindSpore keeps here, as pijit's own
primitive classes (the same objects as ops.X / P.X). Names pijit does not have yet are absent."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.ops",), [
    "Gamma", "Multinomial", "RandomCategorical", "RandomChoiceWithMask", "Randperm",
    "StandardLaplace", "StandardNormal", "UniformInt", "UniformReal",
])
