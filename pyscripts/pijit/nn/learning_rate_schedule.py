"""`mindspore.nn.learning_rate_schedule`: the schedule Cells (pijit.nn.lr's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR", "CosineDecayLR",
    "PolynomialDecayLR", "WarmUpLR",
])
