"""AlexNet as the model zoo's official/cv/AlexNet writes it, at toy size: helper functions that
make the convolutions ('same' and 'valid' padding, biases) and the dense layers, P.ReLU, valid 3x3
max-pools, dropout between the dense layers, a per-step learning-rate Tensor, Momentum and the
sparse softmax cross-entropy; trained eagerly and in GRAPH_MODE from the same start (the same seed
before each run, so dropout draws the same masks)."""
import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.ops.operations as P
from mindspore import Tensor, context

import zoo_common as zc


def conv(in_channels, out_channels, kernel_size, stride=1, padding=0, pad_mode="valid", has_bias=True):
    return nn.Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride, padding=padding,
                     has_bias=has_bias, pad_mode=pad_mode)


def fc_with_initialize(input_channels, out_channels, has_bias=True):
    return nn.Dense(input_channels, out_channels, has_bias=has_bias)


class AlexNet(nn.Cell):
    def __init__(self, num_classes=10, channel=3, phase='train', include_top=True, width=(8, 16, 24, 24, 16)):
        super(AlexNet, self).__init__()
        c1, c2, c3, c4, c5 = width
        self.conv1 = conv(channel, c1, 11, stride=4, pad_mode="same", has_bias=True)
        self.conv2 = conv(c1, c2, 5, pad_mode="same", has_bias=True)
        self.conv3 = conv(c2, c3, 3, pad_mode="same", has_bias=True)
        self.conv4 = conv(c3, c4, 3, pad_mode="same", has_bias=True)
        self.conv5 = conv(c4, c5, 3, pad_mode="same", has_bias=True)
        self.relu = P.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode='valid')
        self.include_top = include_top
        if self.include_top:
            dropout_ratio = 0.35 if phase == 'train' else 0.0
            self.flatten = nn.Flatten()
            self.fc1 = fc_with_initialize(c5 * 2 * 2, 64)
            self.fc2 = fc_with_initialize(64, 64)
            self.fc3 = fc_with_initialize(64, num_classes)
            self.dropout = nn.Dropout(p=dropout_ratio)

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.relu(self.conv3(x))
        x = self.relu(self.conv4(x))
        x = self.max_pool2d(self.relu(self.conv5(x)))
        if not self.include_top:
            return x
        x = self.flatten(x)
        x = self.dropout(self.relu(self.fc1(x)))
        x = self.dropout(self.relu(self.fc2(x)))
        return self.fc3(x)


def get_lr(current_step, lr_max, total_epochs, steps_per_epoch):
    """Linear warm-up over the first epoch, then linear decay: one value per step."""
    total = total_epochs * steps_per_epoch
    lrs = []
    for i in range(total):
        if i < steps_per_epoch:
            lrs.append(lr_max * (i + 1) / steps_per_epoch)
        else:
            lrs.append(lr_max * (1.0 - (i - steps_per_epoch) / float(total)))
    return np.array(lrs[current_step:], dtype=np.float32)


def train_net(net, steps):
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    lr = Tensor(get_lr(0, 0.02, steps, 1))
    opt = nn.Momentum(net.trainable_params(), lr, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step.set_train()
    return step


def main(steps=6):
    zc.seeded(6)
    x, y = zc.images(19, (4, 3, 96, 96), 10)
    eager_net = AlexNet(10)
    jit_net = AlexNet(10)
    zc.same_start(eager_net, jit_net)

    context.set_context(mode=context.PYNATIVE_MODE)
    ms.set_seed(7)
    step = train_net(eager_net, steps)
    eager = [zc.as_float(step(x, y)) for _ in range(steps)]

    context.set_context(mode=context.GRAPH_MODE)
    ms.set_seed(7)
    step = train_net(jit_net, steps)
    before = zc.capture_counts(step)
    jitted = [zc.as_float(step(x, y)) for _ in range(steps)]
    graphs, breaks = zc.capture_counts(step, since=before)
    context.set_context(mode=context.PYNATIVE_MODE)
    zc.report("alexnet", eager, jitted, graphs, breaks)


if __name__ == "__main__":
    main()
