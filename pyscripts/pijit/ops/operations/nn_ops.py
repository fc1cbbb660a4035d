"""`mindspore.ops.operations.nn_ops`: the neural-network primitives MindSpore keeps here, as pijit's own
primitive classes (the same objects as ops.X / P.X). Names pijit does not have yet are absent."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.ops",), [
    "Adam", "AdaptiveAvgPool2D", "ApplyMomentum", "AvgPool", "BCEWithLogitsLoss", "BatchNorm",
    "BiasAdd", "BinaryCrossEntropy", "Conv2D", "Conv2DTranspose", "Dropout", "Dropout2D", "Elu",
    "FastGeLU", "Flatten", "GeLU", "HSigmoid", "HSwish", "KLDivLoss", "L2Loss", "L2Normalize",
    "LayerNorm", "LogSoftmax", "LRN", "LSTM", "MaxPool", "MaxPoolWithArgmax", "MirrorPad", "Mish",
    "NLLLoss", "OneHot", "Pad", "PReLU", "ReLU", "ReLU6", "ResizeBilinear", "SGD", "SeLU", "SiLU",
    "Sigmoid", "SigmoidCrossEntropyWithLogits", "SmoothL1Loss", "Softmax",
    "SoftmaxCrossEntropyWithLogits", "Softplus", "Softsign", "SparseSoftmaxCrossEntropyWithLogits",
    "Tanh", "TopK",
])
