"""`mindspore.nn.layer.activation`: the activation layers (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "Softmin", "Softmax", "Softmax2d", "LogSoftmax", "ReLU", "ReLU6", "RReLU", "SeLU", "SiLU",
    "Tanh", "Tanhshrink", "Hardtanh", "GELU", "FastGelu", "Sigmoid", "Softsign", "PReLU",
    "get_activation", "LeakyReLU", "HSigmoid", "HSwish", "ELU", "LogSigmoid", "LRN", "SoftShrink",
    "HShrink", "CELU", "Threshold", "Mish", "GLU",
])
