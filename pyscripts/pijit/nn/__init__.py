"""pijit.nn: MindSpore-style layers (Cell, Dense, Conv2d, BatchNorm2d, ...) and loss cells."""
from pijit.nn.cell import Cell
from pijit.nn.activation import (ReLU, ReLU6, LeakyReLU, GELU, SiLU, Sigmoid, Tanh, Softmax,
                                 LogSoftmax, HSwish, HSigmoid)
from pijit.nn.basic import Dense, Flatten, Identity, Dropout, Embedding
from pijit.nn.conv import Conv2d, Conv2dTranspose
from pijit.nn.normalization import BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm, SyncBatchNorm
from pijit.nn.pooling import MaxPool2d, AvgPool2d, AdaptiveAvgPool2d
from pijit.nn.container import SequentialCell, CellList, CellDict
from pijit.nn.loss import (LossBase, SoftmaxCrossEntropyWithLogits, CrossEntropyLoss, NLLLoss,
                           MSELoss, L1Loss, SmoothL1Loss, BCEWithLogitsLoss, BCELoss)
from pijit.nn.optim import Optimizer, SGD, Momentum, Adam
from pijit.nn.wrap import WithLossCell, TrainOneStepCell, ForwardValueAndGrad
from pijit.nn.rnn import RNN, GRU, LSTM, RNNCell, GRUCell, LSTMCell
from pijit.nn.basic import Pad, ClipByNorm
from pijit.nn.wrap import TrainOneStepWithLossScaleCell, DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell
from pijit.nn.optim import AdamWeightDecay, RMSProp, Adagrad, Lamb, LARS, FTRL
from pijit.nn.lr import (piecewise_constant_lr, exponential_decay_lr, natural_exp_decay_lr, inverse_decay_lr, cosine_decay_lr, polynomial_decay_lr, warmup_lr, LearningRateSchedule, ExponentialDecayLR, NaturalExpDecayLR, InverseDecayLR, CosineDecayLR, PolynomialDecayLR, WarmUpLR)
from pijit.nn.layers2 import (Conv1d, Conv1dTranspose, MaxPool1d, AvgPool1d, AdaptiveAvgPool1d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, Dropout1d, Dropout2d, Dropout3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, ELU, PReLU, Softmin, LogSigmoid, Mish, SeLU, CELU, Softsign, Hardtanh, HShrink, SoftShrink, Tanhshrink, GLU, FastGelu, OneHot, Norm, Tril, Triu, EmbeddingLookup, WithEvalCell)
from pijit.nn.transformer import (MultiheadAttention, TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder, Transformer)
from pijit.nn.metrics import (Metric, Accuracy, Loss, TopKCategoricalAccuracy, Top1CategoricalAccuracy, Top5CategoricalAccuracy, MAE, MSE, Precision, Recall, Fbeta, F1, get_metric_fn, names, rearrange_inputs, auc)
from pijit.nn.layers2 import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad2d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, PixelShuffle, PixelUnshuffle, Unflatten, Roll, Moments, Threshold, Softmax2d, get_activation)
from pijit.nn.layers3 import *  # noqa: F401,F403,E402  (Conv3d, MaxPool3d, BatchNorm3d, ...)
from pijit.nn.layers4 import *  # noqa: F401,F403,E402  (BiDense, LRN, LPPool2d, ...)
from pijit.nn.loss2 import *  # noqa: F401,F403,E402  (CTCLoss, HuberLoss, FocalLoss, ...)
from pijit.nn.optim2 import *  # noqa: F401,F403,E402  (Adadelta, AdaMax, Rprop, ...)
from pijit.nn.metrics2 import *  # noqa: F401,F403,E402  (ConfusionMatrix, ROC, Dice, ...)
from pijit.nn.layers5 import *  # noqa: F401,F403,E402
from pijit.nn.graph_cell import GraphCell  # noqa: E402
