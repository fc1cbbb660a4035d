"""pijit.nn: MindSpore-style layers (Cell, Dense, Conv2d, BatchNorm2d, ...) and loss cells."""
from pijit.nn.cell import Cell
from pijit.nn.activation import (ReLU, ReLU6, LeakyReLU, GELU, SiLU, Sigmoid, Tanh, Softmax,
                                 LogSoftmax, HSwish, HSigmoid)
from pijit.nn.basic import Dense, Flatten, Identity, Dropout, Embedding
from pijit.nn.conv import Conv2d, Conv2dTranspose
from pijit.nn.normalization import BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm
from pijit.nn.pooling import MaxPool2d, AvgPool2d, AdaptiveAvgPool2d
from pijit.nn.container import SequentialCell, CellList, CellDict
from pijit.nn.loss import (LossBase, SoftmaxCrossEntropyWithLogits, CrossEntropyLoss, NLLLoss,
                           MSELoss, L1Loss, SmoothL1Loss, BCEWithLogitsLoss, BCELoss)
from pijit.nn.optim import Optimizer, SGD, Momentum, Adam
from pijit.nn.wrap import WithLossCell, TrainOneStepCell, ForwardValueAndGrad
from pijit.nn.rnn import RNN, GRU, LSTM, RNNCell, GRUCell, LSTMCell
from pijit.nn.basic import Pad, ClipByNorm
from pijit.nn.wrap import TrainOneStepWithLossScaleCell, DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell
