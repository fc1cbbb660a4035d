"""Activation cells: ReLU, ReLU6, LeakyReLU, GELU, SiLU, Sigmoid, Tanh, Softmax, LogSoftmax,
HSwish, HSigmoid."""
from pijit._validate import check_input
from pijit.nn.cell import Cell
from pijit.ops import functional as F
from pijit.ops import nn_functional as NF


class ReLU(Cell):
    def construct(self, x):
        check_input("ReLU", "x", x)
        return F.relu(x)


class ReLU6(Cell):
    def construct(self, x):
        check_input("ReLU6", "x", x)
        return NF.relu6(x)


class HSwish(Cell):
    def construct(self, x):
        check_input("HSwish", "x", x)
        return NF.hardswish(x)


class HSigmoid(Cell):
    def construct(self, input_x):
        check_input("HSigmoid", "input_x", input_x)
        return NF.hardsigmoid(input_x)


class LeakyReLU(Cell):
    def __init__(self, alpha=0.2):
        super().__init__()
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise TypeError("LeakyReLU: alpha must be a number, got %r" % (alpha,))
        self.alpha = float(alpha)

    def construct(self, x):
        check_input("LeakyReLU", "x", x)
        return NF.leaky_relu(x, self.alpha)

    def extend_repr(self):
        return "alpha=%s" % self.alpha


class GELU(Cell):
    """GELU(approximate=True): MindSpore's default is the tanh approximation."""

    def __init__(self, approximate=True):
        super().__init__()
        self.approximate = bool(approximate)

    def construct(self, x):
        check_input("GELU", "x", x)
        return F.gelu(x, approximate="tanh" if self.approximate else "none")


class SiLU(Cell):
    def construct(self, x):
        check_input("SiLU", "x", x)
        return F.silu(x)


class Sigmoid(Cell):
    def construct(self, x):
        check_input("Sigmoid", "x", x)
        return F.sigmoid(x)


class Tanh(Cell):
    def construct(self, x):
        check_input("Tanh", "x", x)
        return F.tanh(x)


class Softmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        check_input("Softmax", "x", x)
        return F.softmax(x, self.axis)


class LogSoftmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        check_input("LogSoftmax", "x", x)
        return F.log_softmax(x, self.axis)
