"""Training against PyTorch (Debian's python3-torch on the system Python): LeNet and an MLP start
from the same weights (copied into torch) and train 20 steps on a seeded synthetic data set with
SGD-with-momentum and with Adam; the loss curves and the final weights must agree within float32
tolerance (jitted steps equal eager ones bit for bit: tests/python/test_training.py, on the
Pythons pijit captures). Where torch is absent each test fails, or skips under
PIJIT_ALLOW_NO_TORCH=1 (requires.py)."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_torch

try:
    import numpy as np
    import torch
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import nn


def to_torch(t):
    return torch.from_numpy(np.array(np.asarray(t)))


class LeNet5(nn.Cell):
    """MindSpore's LeNet-5 (model zoo), 1x32x32 inputs."""

    def __init__(self, num_class=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid", has_bias=True)
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=True)
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_class)
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def torch_lenet():
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 6, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2, 2),
        torch.nn.Conv2d(6, 16, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2, 2), torch.nn.Flatten(),
        torch.nn.Linear(400, 120), torch.nn.ReLU(), torch.nn.Linear(120, 84), torch.nn.ReLU(),
        torch.nn.Linear(84, 10))


def mlp():
    return nn.SequentialCell([nn.Dense(32, 64), nn.ReLU(), nn.Dense(64, 64), nn.ReLU(), nn.Dense(64, 5)])


def torch_mlp():
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                               torch.nn.ReLU(), torch.nn.Linear(64, 5))


def copy_weights(net, tnet):
    tparams = [p for p in tnet.parameters()]
    params = net.trainable_params()
    assert len(tparams) == len(params)
    with torch.no_grad():
        for tp, p in zip(tparams, params):
            assert tuple(tp.shape) == tuple(p.shape), (tp.shape, p.shape)
            tp.copy_(to_torch(p))


def data(shape, classes, steps, seed):
    """Two batches, cycled; each label is the argmax of a fixed random projection of its input (a
    rule the nets can learn, so the loss falls)."""
    rs = np.random.RandomState(seed)
    proj = rs.standard_normal((int(np.prod(shape[1:])), classes)).astype("float32")
    batches = []
    for _ in range(2):
        x = rs.standard_normal(shape).astype("float32")
        batches.append((x, np.argmax(x.reshape(shape[0], -1) @ proj, axis=1).astype("int64")))
    return [batches[i % 2] for i in range(steps)]


class TrainingMatchesTorch(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)
        pj.set_num_threads(1)

    def run_both(self, make_net, make_tnet, shape, classes, kind):
        pj.set_seed(7)
        net, tnet = make_net(), make_tnet()
        copy_weights(net, tnet)
        if kind == "sgd":
            opt = nn.SGD(net.trainable_params(), learning_rate=0.01, momentum=0.9)
            topt = torch.optim.SGD(tnet.parameters(), lr=0.01, momentum=0.9)
        else:
            opt = nn.Adam(net.trainable_params(), learning_rate=1e-3)
            topt = torch.optim.Adam(tnet.parameters(), lr=1e-3)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
        losses, tlosses = [], []
        for t, (x, y) in enumerate(data(shape, classes, 20, seed=3), 1):
            losses.append(float(step(pj.Tensor(x), pj.Tensor(y))))
            if kind == "adam":
                # MindSpore's Adam adds eps to sqrt(v) before the bias correction, torch after it:
                # torch's eps / sqrt(1 - beta2^t) is MindSpore's update exactly.
                topt.param_groups[0]["eps"] = 1e-8 / np.sqrt(1 - 0.999 ** t)
            topt.zero_grad()
            tl = torch.nn.functional.cross_entropy(tnet(torch.from_numpy(x)), torch.from_numpy(y))
            tl.backward()
            topt.step()
            tlosses.append(float(tl))
        np.testing.assert_allclose(losses, tlosses, rtol=2e-4, atol=2e-5, err_msg="%s loss curve" % kind)
        for p, tp in zip(net.trainable_params(), tnet.parameters()):
            np.testing.assert_allclose(np.asarray(p), tp.detach().numpy(), rtol=1e-3, atol=1e-4,
                                       err_msg="%s %s" % (kind, p.name))
        # (the two batches alternate: compare the loss on one batch, first and last time seen)
        self.assertLess(losses[-2], losses[0])

    def test_lenet_sgd_momentum(self):
        self.run_both(LeNet5, torch_lenet, (8, 1, 32, 32), 10, "sgd")

    def test_lenet_adam(self):
        self.run_both(LeNet5, torch_lenet, (8, 1, 32, 32), 10, "adam")

    def test_mlp_sgd_momentum_and_adam(self):
        for kind in ("sgd", "adam"):
            self.run_both(mlp, torch_mlp, (32, 32), 5, kind)



if __name__ == "__main__":
    unittest.main()
