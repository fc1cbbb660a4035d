"""`mindspore.nn.dynamic_lr`: the per-step learning-rate lists (pijit.nn.lr's)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr",
    "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr",
])
