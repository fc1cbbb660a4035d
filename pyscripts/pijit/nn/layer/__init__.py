"""`mindspore.nn.layer`: every layer class, as pijit.nn has them; the submodules (basic, conv,
normalization, activation, pooling, container, rnns, rnn_cells, embedding) are MindSpore's paths."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "Dense", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "Flatten", "Unflatten", "ClipByNorm",
    "Norm", "OneHot", "Pad", "Unfold", "Fold", "Tril", "Triu", "MatrixDiag", "MatrixDiagPart",
    "MatrixSetDiag", "L1Regularizer", "Upsample", "Roll", "Identity", "Conv1d", "Conv2d", "Conv3d",
    "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "SyncBatchNorm", "Softmin", "Softmax", "Softmax2d", "LogSoftmax", "ReLU", "ReLU6", "RReLU",
    "SeLU", "SiLU", "Tanh", "Tanhshrink", "Hardtanh", "GELU", "FastGelu", "Sigmoid", "Softsign",
    "PReLU", "get_activation", "LeakyReLU", "HSigmoid", "HSwish", "ELU", "LogSigmoid", "LRN",
    "SoftShrink", "HShrink", "CELU", "Threshold", "Mish", "GLU", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d",
    "LPPool2d", "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d", "SequentialCell", "CellList", "CellDict", "RNN", "GRU", "LSTM", "RNNCell",
    "GRUCell", "LSTMCell", "Embedding", "EmbeddingLookup", "MultiFieldEmbeddingLookup",
])
