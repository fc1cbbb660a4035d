"""MobileNetV2 as the model zoo's official/cv/MobileNetV2 writes it, at toy width: ConvBNReLU with
explicit padding, depthwise convolutions (group = channels), ReLU6, inverted residuals added with
P.Add, a backbone / head split joined by a combining Cell, weights re-drawn with numpy through
Parameter.set_data over cells_and_names(), a label-smoothed loss and Momentum; trained eagerly and
in GRAPH_MODE from the same start."""
import numpy as np

import mindspore.nn as nn
import mindspore.common.dtype as mstype
import mindspore.ops.operations as P
import mindspore.ops.functional as F
from mindspore import Tensor, context
from mindspore.nn.loss.loss import LossBase

import zoo_common as zc


def make_divisible(v, divisor, min_value=None):
    """Channels rounded to a multiple of divisor, never more than 10% below v."""
    min_value = min_value or divisor
    rounded = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * v else rounded


class GlobalAvgPooling(nn.Cell):
    def __init__(self):
        super(GlobalAvgPooling, self).__init__()
        self.mean = P.ReduceMean(keep_dims=False)

    def construct(self, x):
        return self.mean(x, (2, 3))


class ConvBNReLU(nn.Cell):
    """Convolution (depthwise when groups > 1), BatchNorm, ReLU6."""

    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
        super(ConvBNReLU, self).__init__()
        padding = (kernel_size - 1) // 2
        if groups == 1:
            conv = nn.Conv2d(in_planes, out_planes, kernel_size, stride, pad_mode='pad', padding=padding)
        else:
            conv = nn.Conv2d(in_planes, in_planes, kernel_size, stride, pad_mode='pad', padding=padding,
                             group=in_planes)
        self.features = nn.SequentialCell([conv, nn.BatchNorm2d(out_planes), nn.ReLU6()])

    def construct(self, x):
        return self.features(x)


class InvertedResidual(nn.Cell):
    def __init__(self, inp, oup, stride, expand_ratio):
        super(InvertedResidual, self).__init__()
        assert stride in [1, 2]
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))
        layers.extend([
            ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
            nn.Conv2d(hidden_dim, oup, kernel_size=1, stride=1, has_bias=False),
            nn.BatchNorm2d(oup),
        ])
        self.conv = nn.SequentialCell(layers)
        self.add = P.Add()
        self.cast = P.Cast()

    def construct(self, x):
        identity = x
        x = self.conv(x)
        if self.use_res_connect:
            return self.add(identity, x)
        return x


class MobileNetV2Backbone(nn.Cell):
    def __init__(self, width_mult=1., inverted_residual_setting=None, round_nearest=8,
                 input_channel=32, last_channel=1280):
        super(MobileNetV2Backbone, self).__init__()
        block = InvertedResidual
        # t (expansion), c (channels), n (repeats), s (first stride)
        self.cfgs = inverted_residual_setting or [
            [1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]
        input_channel = make_divisible(input_channel * width_mult, round_nearest)
        self.out_channels = make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [ConvBNReLU(3, input_channel, stride=2)]
        for t, c, n, s in self.cfgs:
            output_channel = make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t))
                input_channel = output_channel
        features.append(ConvBNReLU(input_channel, self.out_channels, kernel_size=1))
        self.features = nn.SequentialCell(features)
        self._initialize_weights()

    def construct(self, x):
        return self.features(x)

    def _initialize_weights(self):
        self.init_parameters_data()
        for _, m in self.cells_and_names():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.set_data(Tensor(np.random.normal(0, np.sqrt(2. / n), m.weight.data.shape).astype("float32")))
                if m.bias is not None:
                    m.bias.set_data(Tensor(np.zeros(m.bias.data.shape, dtype="float32")))
            elif isinstance(m, nn.BatchNorm2d):
                m.gamma.set_data(Tensor(np.ones(m.gamma.data.shape, dtype="float32")))
                m.beta.set_data(Tensor(np.zeros(m.beta.data.shape, dtype="float32")))

    def get_out_channels(self):
        return self.out_channels


class MobileNetV2Head(nn.Cell):
    def __init__(self, input_channel=1280, num_classes=1000, has_dropout=False, activation="None"):
        super(MobileNetV2Head, self).__init__()
        head = [GlobalAvgPooling(), nn.Dense(input_channel, num_classes, has_bias=True)]
        if has_dropout:
            head.insert(1, nn.Dropout(p=0.2))
        self.head = nn.SequentialCell(head)
        self.need_activation = activation in ("Sigmoid", "Softmax")
        if activation == "Sigmoid":
            self.activation = P.Sigmoid()
        elif activation == "Softmax":
            self.activation = P.Softmax()
        self._initialize_weights()

    def construct(self, x):
        x = self.head(x)
        if self.need_activation:
            x = self.activation(x)
        return x

    def _initialize_weights(self):
        self.init_parameters_data()
        for _, m in self.cells_and_names():
            if isinstance(m, nn.Dense):
                m.weight.set_data(Tensor(np.random.normal(0, 0.01, m.weight.data.shape).astype("float32")))
                if m.bias is not None:
                    m.bias.set_data(Tensor(np.zeros(m.bias.data.shape, dtype="float32")))


class MobileNetV2Combine(nn.Cell):
    def __init__(self, backbone, head):
        super(MobileNetV2Combine, self).__init__(auto_prefix=False)
        self.backbone = backbone
        self.head = head

    def construct(self, x):
        return self.head(self.backbone(x))


class CrossEntropyWithLabelSmooth(LossBase):
    def __init__(self, smooth_factor=0., num_classes=1000):
        super(CrossEntropyWithLabelSmooth, self).__init__()
        self.onehot = P.OneHot()
        self.on_value = Tensor(1.0 - smooth_factor, mstype.float32)
        self.off_value = Tensor(1.0 * smooth_factor / (num_classes - 1), mstype.float32)
        self.ce = nn.SoftmaxCrossEntropyWithLogits()
        self.mean = P.ReduceMean(False)
        self.cast = P.Cast()

    def construct(self, logit, label):
        one_hot_label = self.onehot(self.cast(label, mstype.int32), F.shape(logit)[1], self.on_value, self.off_value)
        out_loss = self.ce(logit, one_hot_label)
        return self.mean(out_loss, 0)


def mobilenet_v2(num_classes):
    setting = [[1, 8, 1, 1], [6, 8, 2, 2], [6, 16, 2, 2], [6, 24, 1, 1]]
    backbone = MobileNetV2Backbone(width_mult=1.0, inverted_residual_setting=setting, input_channel=8,
                                   last_channel=64)
    head = MobileNetV2Head(input_channel=backbone.get_out_channels(), num_classes=num_classes)
    return MobileNetV2Combine(backbone, head)


def train_net(net):
    loss = CrossEntropyWithLabelSmooth(smooth_factor=0.1, num_classes=10)
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9, weight_decay=4e-5)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step.set_train()
    return step


def main(steps=5):
    zc.seeded(3)
    x, y = zc.images(13, (4, 3, 32, 32), 10)
    eager_net = mobilenet_v2(10)
    jit_net = mobilenet_v2(10)
    zc.same_start(eager_net, jit_net)

    context.set_context(mode=context.PYNATIVE_MODE)
    step = train_net(eager_net)
    eager = [zc.as_float(step(x, y)) for _ in range(steps)]

    context.set_context(mode=context.GRAPH_MODE)
    step = train_net(jit_net)
    before = zc.capture_counts(step)
    jitted = [zc.as_float(step(x, y)) for _ in range(steps)]
    graphs, breaks = zc.capture_counts(step, since=before)
    context.set_context(mode=context.PYNATIVE_MODE)
    zc.report("mobilenetv2", eager, jitted, graphs, breaks)


if __name__ == "__main__":
    main()
