"""VGG as the model zoo's official/cv/VGG builds it, at toy size: a layer list read from a config
('M' for max-pool), 3x3 convolutions with BatchNorm2d and ReLU, a classifier of Dense / ReLU /
Dropout, convolution weights from a user Initializer subclass (Kaiming normal over the fan-out,
filled into a numpy array by _initialize) set through Parameter.set_data and initializer(...), and
the config's options as attributes of a namespace; trained with Momentum eagerly and in
GRAPH_MODE from the same start (the same seed before each run, so dropout draws the same masks)."""
import math

import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.common.dtype as mstype
from mindspore import context
from mindspore.common import initializer as init
from mindspore.common.initializer import initializer

import zoo_common as zc


class Config(object):
    """Stands for the zoo's yaml config."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


class KaimingNormal(init.Initializer):
    """Normal(0, gain / sqrt(fan)) for a conv weight of shape (out, in, kh, kw)."""

    def __init__(self, a=0, mode='fan_in', nonlinearity='leaky_relu'):
        super(KaimingNormal, self).__init__()
        self.mode, self.a, self.nonlinearity = mode, a, nonlinearity

    def _initialize(self, arr):
        receptive = int(np.prod(arr.shape[2:])) if len(arr.shape) > 2 else 1
        fan = (arr.shape[0] if self.mode == 'fan_out' else arr.shape[1]) * receptive
        gain = math.sqrt(2.0) if self.nonlinearity == 'relu' else math.sqrt(2.0 / (1 + self.a ** 2))
        arr[...] = np.random.normal(0, gain / math.sqrt(fan), arr.shape).astype(np.float32)


def _make_layer(base, args, batch_norm):
    layers = []
    in_channels = 3
    for v in base:
        if v == 'M':
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
            continue
        weight = 'ones'
        if args.initialize_mode == "XavierUniform":
            weight = initializer('XavierUniform', shape=(v, in_channels, 3, 3), dtype=mstype.float32)
        conv2d = nn.Conv2d(in_channels=in_channels, out_channels=v, kernel_size=3, padding=args.padding,
                           pad_mode=args.pad_mode, has_bias=args.has_bias, weight_init=weight)
        if batch_norm:
            layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU()]
        else:
            layers += [conv2d, nn.ReLU()]
        in_channels = v
    return nn.SequentialCell(layers)


class Vgg(nn.Cell):
    def __init__(self, base, num_classes=1000, batch_norm=False, batch_size=1, args=None, phase="train"):
        super(Vgg, self).__init__()
        self.layers = _make_layer(base, args, batch_norm=batch_norm)
        self.flatten = nn.Flatten()
        dropout_ratio = 0.5 if phase == "train" and args.has_dropout else 0.0
        width = args.hidden
        self.classifier = nn.SequentialCell([
            nn.Dense(base[-2] * args.spatial * args.spatial, width), nn.ReLU(), nn.Dropout(p=dropout_ratio),
            nn.Dense(width, width), nn.ReLU(), nn.Dropout(p=dropout_ratio),
            nn.Dense(width, num_classes)])
        if args.initialize_mode == "KaimingNormal":
            self.custom_init_weight()

    def construct(self, x):
        x = self.layers(x)
        x = self.flatten(x)
        return self.classifier(x)

    def custom_init_weight(self):
        for _, cell in self.cells_and_names():
            if isinstance(cell, nn.Conv2d):
                cell.weight.set_data(init.initializer(KaimingNormal(a=math.sqrt(5), mode='fan_out',
                                                                    nonlinearity='relu'),
                                                      cell.weight.shape, cell.weight.dtype))
                if cell.bias is not None:
                    cell.bias.set_data(init.initializer('zeros', cell.bias.shape, cell.bias.dtype))
            elif isinstance(cell, nn.Dense):
                cell.weight.set_data(init.initializer(init.Normal(0.01), cell.weight.shape, cell.weight.dtype))
                if cell.bias is not None:
                    cell.bias.set_data(init.initializer('zeros', cell.bias.shape, cell.bias.dtype))


# a VGG-11-like stack, narrowed
cfg = {'tiny': [8, 'M', 16, 'M', 16, 16, 'M', 32, 'M']}


def vgg(num_classes, args):
    return Vgg(cfg['tiny'], num_classes=num_classes, args=args, batch_norm=args.batch_norm)


def train_net(net):
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9, weight_decay=5e-4)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step.set_train()
    return step


def main(steps=5):
    args = Config(initialize_mode="KaimingNormal", padding=1, pad_mode="pad", has_bias=True, batch_norm=True,
                  has_dropout=True, hidden=32, spatial=2)
    zc.seeded(4)
    x, y = zc.images(17, (4, 3, 32, 32), 10)
    eager_net = vgg(10, args)
    jit_net = vgg(10, args)
    zc.same_start(eager_net, jit_net)

    context.set_context(mode=context.PYNATIVE_MODE)
    ms.set_seed(5)
    step = train_net(eager_net)
    eager = [zc.as_float(step(x, y)) for _ in range(steps)]

    context.set_context(mode=context.GRAPH_MODE)
    ms.set_seed(5)
    step = train_net(jit_net)
    before = zc.capture_counts(step)
    jitted = [zc.as_float(step(x, y)) for _ in range(steps)]
    graphs, breaks = zc.capture_counts(step, since=before)
    context.set_context(mode=context.PYNATIVE_MODE)
    zc.report("vgg", eager, jitted, graphs, breaks)


if __name__ == "__main__":
    main()
