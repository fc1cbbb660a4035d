"""LeNet-5 as the model zoo's official/cv/LeNet writes it (valid convolutions, Normal(0.02) dense
weights, Momentum, sparse softmax cross-entropy), trained on a fixed batch instead of MNIST:
eagerly (PYNATIVE_MODE) and as a graph (GRAPH_MODE), from the same start."""
import mindspore.nn as nn
from mindspore.common.initializer import Normal
from mindspore import context

import zoo_common as zc


class LeNet5(nn.Cell):
    """conv(5x5) -> relu -> pool, twice, then three dense layers."""

    def __init__(self, num_class=10, num_channel=1, include_top=True):
        super(LeNet5, self).__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode='valid')
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode='valid')
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.include_top = include_top
        if self.include_top:
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
            self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
            self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        if not self.include_top:
            return x
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def train_net(net):
    # what Model(network, loss, opt) builds
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step.set_train()
    return step


def main(steps=6):
    zc.seeded(1)
    x, y = zc.images(7, (8, 1, 32, 32), 10)
    eager_net = LeNet5()
    jit_net = LeNet5()
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
    zc.report("lenet", eager, jitted, graphs, breaks)


if __name__ == "__main__":
    main()
