"""ResNet as the model zoo's official/cv/ResNet builds and trains it, at toy size: numpy He-normal
convolution weights, BatchNorm2d after every convolution, bottleneck blocks (ResNet-50 style,
'same' padding, one with a squeeze-and-excitation branch) or basic blocks (ResNet-18 style, 'pad'
padding and nn.Pad before the max-pool), a label-smoothed cross-entropy made of OneHot with Tensor
on/off values, Momentum with weight-decay parameter groups, order_params and a per-step learning
rate Tensor. Each variant trains a few steps eagerly and in GRAPH_MODE from the same start.

    python resnet_zoo.py [bottleneck|basic]
"""
import math
import sys

import numpy as np

import mindspore.nn as nn
import mindspore.ops as ops
import mindspore.common.dtype as mstype
from mindspore import context
from mindspore.common.tensor import Tensor
from mindspore.nn.loss.loss import LossBase
import mindspore.ops.functional as F
import mindspore.ops.operations as P

import zoo_common as zc


def he_normal(shape, gain=math.sqrt(2.0)):
    """He-normal over the fan-out, drawn with numpy's global generator (as train.py seeds it)."""
    fan_out = shape[0] * (shape[2] * shape[3] if len(shape) == 4 else 1)
    return np.random.normal(0.0, gain / math.sqrt(fan_out), size=shape).astype(np.float32)


def he_uniform(shape):
    bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + 5.0)) / math.sqrt(shape[1])
    return np.random.uniform(-bound, bound, size=shape).astype(np.float32)


def conv(cin, cout, k, stride=1, base=False):
    w = Tensor(he_normal((cout, cin, k, k)))
    if base:  # ResNet-18/34: explicit padding
        return nn.Conv2d(cin, cout, kernel_size=k, stride=stride, padding=k // 2, pad_mode='pad', weight_init=w)
    return nn.Conv2d(cin, cout, kernel_size=k, stride=stride, padding=0, pad_mode='same', weight_init=w)


def bn(channels, base=False, last=False):
    if base:
        return nn.BatchNorm2d(channels, eps=1e-5, momentum=0.1, gamma_init=1, beta_init=0,
                              moving_mean_init=0, moving_var_init=1)
    return nn.BatchNorm2d(channels, eps=1e-4, momentum=0.9, gamma_init=0 if last else 1, beta_init=0,
                          moving_mean_init=0, moving_var_init=1)


def dense(cin, cout):
    return nn.Dense(cin, cout, has_bias=True, weight_init=Tensor(he_uniform((cout, cin))), bias_init=0)


class Bottleneck(nn.Cell):
    """1x1 reduce, 3x3, 1x1 expand (x4), optional squeeze-and-excitation, projection shortcut."""
    expansion = 4

    def __init__(self, cin, cout, stride=1, se_block=False):
        super(Bottleneck, self).__init__()
        mid = cout // self.expansion
        self.conv1, self.bn1 = conv(cin, mid, 1), bn(mid)
        self.conv2, self.bn2 = conv(mid, mid, 3, stride), bn(mid)
        self.conv3, self.bn3 = conv(mid, cout, 1), bn(cout)
        self.relu = nn.ReLU()
        self.se_block = se_block
        if se_block:
            self.se_pool = ops.ReduceMean(keep_dims=False)
            self.se_fc0 = dense(cout, cout // 4)
            self.se_fc1 = dense(cout // 4, cout)
            self.se_sigmoid = nn.Sigmoid()
            self.se_mul = ops.Mul()
        self.down_sample = stride != 1 or cin != cout
        self.down_sample_layer = None
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([conv(cin, cout, 1, stride), bn(cout)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.se_block:
            scale = self.se_pool(out, (2, 3))
            scale = self.se_sigmoid(self.se_fc1(self.relu(self.se_fc0(scale))))
            scale = ops.reshape(scale, ops.shape(scale) + (1, 1))
            out = self.se_mul(scale, out)
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        return self.relu(out + identity)


class BasicBlock(nn.Cell):
    """Two 3x3 convolutions with explicit padding (ResNet-18/34)."""

    def __init__(self, cin, cout, stride=1, se_block=False):
        super(BasicBlock, self).__init__()
        self.conv1, self.bn1d = conv(cin, cout, 3, stride, base=True), bn(cout, base=True)
        self.conv2, self.bn2d = conv(cout, cout, 3, 1, base=True), bn(cout, base=True)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or cin != cout
        self.down_sample_layer = None
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([conv(cin, cout, 1, stride, base=True), bn(cout, base=True)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1d(self.conv1(x)))
        out = self.bn2d(self.conv2(out))
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        return self.relu(out + identity)


class ResNet(nn.Cell):
    def __init__(self, block, layer_nums, in_channels, out_channels, strides, num_classes, res_base=False):
        super(ResNet, self).__init__()
        if not len(layer_nums) == len(in_channels) == len(out_channels) == 4:
            raise ValueError("ResNet: four stages expected")
        self.res_base = res_base
        self.conv1 = conv(3, in_channels[0], 7, 2, base=res_base)
        self.bn1 = bn(in_channels[0], base=res_base)
        self.relu = P.ReLU()
        if res_base:
            self.pad = nn.Pad(paddings=((0, 0), (0, 0), (1, 1), (1, 1)))
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="valid")
        else:
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.layer1 = self._make_layer(block, layer_nums[0], in_channels[0], out_channels[0], strides[0])
        self.layer2 = self._make_layer(block, layer_nums[1], in_channels[1], out_channels[1], strides[1])
        self.layer3 = self._make_layer(block, layer_nums[2], in_channels[2], out_channels[2], strides[2],
                                       se_block=not res_base)
        self.layer4 = self._make_layer(block, layer_nums[3], in_channels[3], out_channels[3], strides[3])
        self.mean = P.ReduceMean(keep_dims=True)
        self.flatten = nn.Flatten()
        self.end_point = dense(out_channels[3], num_classes)

    @staticmethod
    def _make_layer(block, count, cin, cout, stride, se_block=False):
        layers = [block(cin, cout, stride=stride)]
        for i in range(1, count):
            layers.append(block(cout, cout, stride=1, se_block=se_block and i == count - 1))
        return nn.SequentialCell(layers)

    def construct(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        if self.res_base:
            x = self.pad(x)
        x = self.maxpool(x)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        out = self.mean(x, (2, 3))
        return self.end_point(self.flatten(out))


def tiny_resnet(kind, num_classes):
    if kind == "basic":
        return ResNet(BasicBlock, [1, 1, 1, 1], [8, 8, 16, 16], [8, 16, 16, 32], [1, 2, 2, 2], num_classes,
                      res_base=True)
    return ResNet(Bottleneck, [1, 1, 2, 1], [8, 16, 32, 32], [16, 32, 32, 64], [1, 2, 2, 2], num_classes)


class CrossEntropySmooth(LossBase):
    """Softmax cross-entropy against one-hot labels with label smoothing."""

    def __init__(self, sparse=True, reduction='mean', smooth_factor=0., num_classes=1000):
        super(CrossEntropySmooth, self).__init__()
        self.onehot = P.OneHot()
        self.sparse = sparse
        self.on_value = Tensor(1.0 - smooth_factor, mstype.float32)
        self.off_value = Tensor(1.0 * smooth_factor / (num_classes - 1), mstype.float32)
        self.ce = nn.SoftmaxCrossEntropyWithLogits(reduction=reduction)

    def construct(self, logit, label):
        if self.sparse:
            label = self.onehot(label, F.shape(logit)[1], self.on_value, self.off_value)
        return self.ce(logit, label)


def warmup_cosine_lr(base_lr, total_steps, warmup_steps):
    lrs = []
    for i in range(total_steps):
        if i < warmup_steps:
            lrs.append(base_lr * (i + 1) / warmup_steps)
        else:
            lrs.append(0.5 * base_lr * (1 + math.cos(math.pi * (i - warmup_steps) / (total_steps - warmup_steps))))
    return np.array(lrs, dtype=np.float32)


def make_optimizer(net, steps, loss_scale=1.0):
    decayed, no_decayed = [], []
    for p in net.trainable_params():
        if 'beta' not in p.name and 'gamma' not in p.name and 'bias' not in p.name:
            decayed.append(p)
        else:
            no_decayed.append(p)
    groups = [{'params': decayed, 'weight_decay': 1e-4},
              {'params': no_decayed},
              {'order_params': net.trainable_params()}]
    lr = Tensor(warmup_cosine_lr(0.05, steps, 2))
    return nn.Momentum(groups, lr, 0.9, loss_scale=loss_scale)


def train_net(net, steps):
    loss = CrossEntropySmooth(sparse=True, reduction="mean", smooth_factor=0.1, num_classes=10)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), make_optimizer(net, steps))
    step.set_train()
    return step


def main(kind, steps=5):
    zc.seeded(2)
    x, y = zc.images(11, (4, 3, 32, 32), 10)
    eager_net = tiny_resnet(kind, 10)
    jit_net = tiny_resnet(kind, 10)
    zc.same_start(eager_net, jit_net)

    context.set_context(mode=context.PYNATIVE_MODE)
    step = train_net(eager_net, steps)
    eager = [zc.as_float(step(x, y)) for _ in range(steps)]

    context.set_context(mode=context.GRAPH_MODE)
    step = train_net(jit_net, steps)
    before = zc.capture_counts(step)
    jitted = [zc.as_float(step(x, y)) for _ in range(steps)]
    graphs, breaks = zc.capture_counts(step, since=before)
    context.set_context(mode=context.PYNATIVE_MODE)
    # the BatchNorm statistics moved the same way both times
    stats_equal = all(np.array_equal(a.asnumpy(), b.asnumpy()) for a, b in
                      zip(eager_net.get_parameters(), jit_net.get_parameters()) if "moving" in a.name)
    zc.report("resnet_" + kind, eager, jitted, graphs, breaks, bn_stats_equal=stats_equal)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bottleneck")
