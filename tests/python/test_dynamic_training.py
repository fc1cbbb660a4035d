"""Training steps over changing batch sizes (issue 17): a gradient taken inside the graph is emitted
again for each new size (graph::replay_sweep), so every layer's and loss's gradient rule runs for
the new sizes as the eager tape runs it. Each configuration trains a jitted copy and a plain copy
of one network side by side over several batch sizes: every loss and every parameter after every
step equal bit for bit, at most 2 compiles, no eager call."""
import sys
import unittest

import pijit as pj
from pijit import nn
from jit_compare import no_stress, same_bits as same

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
SIZES = [5, 3, 8, 3, 6, 2, 7]


class Net(nn.Cell):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.CellList(layers)

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def dense_stack():
    return [nn.Dense(6, 8), nn.GELU(), nn.LayerNorm((8,)), nn.Dense(8, 8), nn.Tanh(), nn.Dense(8, 4)]


def conv_stack():
    return [nn.Conv2d(2, 4, 3, pad_mode="same", has_bias=True), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(4, 4, 3, pad_mode="pad", padding=1), nn.GroupNorm(2, 4), nn.SiLU(), nn.AvgPool2d(2, 2),
            nn.Flatten(), nn.Dense(16, 4)]


def pooled_stack():
    return [nn.Conv2d(2, 3, 1), nn.LeakyReLU(0.1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(3, 4),
            nn.Sigmoid()]


CONFIGS = [
    ("dense, cross entropy, Adam", dense_stack, (6,), lambda: nn.CrossEntropyLoss(), "labels",
     lambda ps: nn.Adam(ps, learning_rate=0.01)),
    ("dense, MSE, SGD", dense_stack, (6,), lambda: nn.MSELoss(), "targets", lambda ps: nn.SGD(ps, 0.05)),
    ("conv, BatchNorm, GroupNorm, cross entropy, Momentum", conv_stack, (2, 8, 8), lambda: nn.CrossEntropyLoss(),
     "labels", lambda ps: nn.Momentum(ps, 0.05, 0.9)),
    ("pooled conv, smooth L1, SGD with momentum", pooled_stack, (2, 5, 5), lambda: nn.SmoothL1Loss(), "targets",
     lambda ps: nn.SGD(ps, 0.1, momentum=0.5)),
    ("dense, L1, Adam", dense_stack, (6,), lambda: nn.L1Loss(), "targets", lambda ps: nn.Adam(ps, 0.02)),
]


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class TrainingOverBatchSizes(unittest.TestCase):
    def check(self, name, layers, shape, loss, target, optimizer):
        def make():
            pj.set_seed(4)
            net = Net(layers())
            net.set_train(True)
            return nn.TrainOneStepCell(nn.WithLossCell(net, loss()), optimizer(net.trainable_params())), net
        pj.reset(nn.TrainOneStepCell.construct)
        plain, pnet = make()
        step, jnet = make()
        jstep = pj.jit(step)
        pj.set_seed(9)
        for n in SIZES:
            x = pj.randn(n, *shape)
            y = pj.randint(0, 4, (n,)).astype(pj.int32) if target == "labels" else pj.randn(n, 4)
            with no_stress():  # (the plain step shares the jitted one's code object)
                want = plain(x, y)
            self.assertTrue(same(jstep(x, y), want), "%s: batch %d" % (name, n))
            for a, b in zip(jnet.get_parameters(), pnet.get_parameters()):
                self.assertTrue(same(a, b), "%s: batch %d, %s" % (name, n, a.name))
        st = pj.jit_stats(jstep)
        self.assertEqual((st["compiles"], st["recompiles"], st["frames_default"]), (2, 1, 0), name)
        notes = [n for e in st["entries"] for n in e["dynamic"]]
        self.assertTrue(any(n.endswith("is emitted again for each new size") for n in notes), (name, notes))
        self.assertFalse([n for n in notes if "specialised" in n], (name, notes))

    def test_configurations(self):
        for config in CONFIGS:
            with self.subTest(config[0]):
                self.check(*config)


if __name__ == "__main__":
    unittest.main()
