"""The tutorial scripts (tests/tutorials/) against PyTorch: each script runs unchanged under
`python -m pijit run` on this interpreter (TUTORIAL_SIZE=small), and the same network and
optimiser written in torch (float64), started from the script's init.ckpt and fed the same
batches, gives the same loss curve within 1e-4 relative:

  quick start, LeNet-5: the batches are the MNIST files read here (the pipeline's order is the
                        file's), rescaled and normalised in torch
  CIFAR-10 ResNet:      BatchNorm in training mode, Momentum(0.9) with the cosine schedule written
                        out here; the augmented batches (random crop and flip) are drawn by pijit's
                        pipeline from the same seed in a process of their own, as the script draws
                        them
"""
import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

from requires import require_numpy, require_torch

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    torch = None

import pijit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TUTORIALS = os.path.join(ROOT, "tests", "tutorials")
PYSCRIPTS = os.path.join(ROOT, "pyscripts")
sys.path.insert(0, TUTORIALS)
import make_data  # noqa: E402


def env():
    e = dict(os.environ, TUTORIAL_SIZE="small")
    e["PYTHONPATH"] = PYSCRIPTS + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def run(case, script, args, cwd):
    p = subprocess.run([sys.executable, "-m", "pijit", "run", os.path.join(TUTORIALS, script)] + args,
                       cwd=cwd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=900)
    case.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-4000:])
    return [float(line.rsplit(" ", 1)[1]) for line in p.stdout.splitlines()
            if line.startswith("epoch: ") and ", loss is " in line]


def init_params(path):
    return {k: torch.tensor(v.asnumpy(), dtype=torch.float64) for k, v in pijit.load_checkpoint(path).items()}


class Base(unittest.TestCase):
    def setUp(self):
        require_numpy(self, np)
        require_torch(self, torch)
        self.tmp = tempfile.mkdtemp(prefix="pijit-tutorials-oracle-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def close(self, got, want):
        self.assertEqual(len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            self.assertLess(abs(g - w), 1e-4 * abs(w), "step %d: pijit %r, torch %r" % (i + 1, g, w))


class TestQuickStartLeNet(Base):
    def test_loss_curve(self):
        data = os.path.join(self.tmp, "mnist")
        make_data.make_mnist(data, 256, 128)
        got = run(self, "quickstart.py", ["--data-dir", data, "--net", "lenet", "--loop", "model"], self.tmp)
        self.assertEqual(len(got), 12)
        p = init_params(os.path.join(self.tmp, "checkpoints", "init.ckpt"))
        self.assertEqual(sorted(p), sorted(["conv1.weight", "conv2.weight"] + ["fc%d.%s" % (i, k) for i in (1, 2, 3)
                                                                                for k in ("weight", "bias")]))
        for v in p.values():
            v.requires_grad_(True)
        with open(os.path.join(data, "train-images-idx3-ubyte"), "rb") as f:
            _, n, rows, cols = struct.unpack(">IIII", f.read(16))
            x = torch.tensor(np.frombuffer(f.read(), np.uint8).reshape(n, 1, rows, cols).astype(np.float64))
        with open(os.path.join(data, "train-labels-idx1-ubyte"), "rb") as f:
            f.read(8)
            y = torch.tensor(np.frombuffer(f.read(), np.uint8).astype(np.int64))
        x = (x / 255.0 - 0.1307) / 0.3081
        want = []
        for _ in range(3):
            for s in range(0, n, 64):
                h = F.max_pool2d(F.relu(F.conv2d(x[s:s + 64], p["conv1.weight"])), 2, 2)
                h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2.weight"])), 2, 2).flatten(1)
                h = F.relu(F.linear(h, p["fc1.weight"], p["fc1.bias"]))
                h = F.relu(F.linear(h, p["fc2.weight"], p["fc2.bias"]))
                loss = F.cross_entropy(F.linear(h, p["fc3.weight"], p["fc3.bias"]), y[s:s + 64])
                grads = torch.autograd.grad(loss, list(p.values()))
                with torch.no_grad():
                    for v, g in zip(p.values(), grads):
                        v -= 0.1 * g
                want.append(loss.item())
        self.close(got, want)


# Draws the script's training batches with its own pipeline and seed, in a process of its own (a
# fresh seed state, as the script had), into an .npz.
DRAW = """
import sys
import numpy as np
import mindspore
sys.path.insert(0, %r)
import resnet_cifar10 as script
mindspore.set_seed(1)
data = script.create_dataset(sys.argv[1], "train", 16, 2)
xs, ys = [], []
it = data.create_tuple_iterator(num_epochs=2, output_numpy=True)
for epoch in range(2):  # as Model.train reads it: one pass of the iterator per epoch
    for x, y in it:
        xs.append(x); ys.append(y)
np.savez(sys.argv[2], x=np.stack(xs), y=np.stack(ys))
"""


class TestResNetCifar10(Base):
    LR = 0.02  # at 0.1 this tiny batch trains chaotically: float32 rounding grows ~30x a step
    def test_loss_curve(self):
        data = os.path.join(self.tmp, "cifar")
        make_data.make_cifar(data, 32, 32)
        got = run(self, "resnet_cifar10.py", ["--data-dir", data, "--lr", repr(self.LR)], self.tmp)
        self.assertEqual(len(got), 20)
        draw = os.path.join(self.tmp, "draw.py")
        with open(draw, "w") as f:
            f.write(DRAW % TUTORIALS)
        npz = os.path.join(self.tmp, "batches.npz")
        subprocess.run([sys.executable, "-m", "pijit", "run", draw, data, npz], env=env(), check=True,
                       timeout=600)
        batches = np.load(npz)
        self.assertEqual(batches["x"].shape, (20, 16, 3, 32, 32))
        # an epoch's batches are 10 different ones from 160 images, and epoch 2 re-shuffles and re-draws
        self.assertFalse(np.array_equal(batches["x"][0], batches["x"][10]))
        p = init_params(os.path.join(self.tmp, "checkpoints", "init.ckpt"))
        train = [k for k in p if not k.endswith((".mean", ".variance"))]
        for k in train:
            p[k].requires_grad_(True)

        def conv(x, name, stride, pad):
            return F.conv2d(x, p[name + ".weight"], stride=stride, padding=pad)

        def bn(x, name):
            return F.batch_norm(x, p[name + ".mean"], p[name + ".variance"], p[name + ".gamma"],
                                p[name + ".beta"], training=True, momentum=0.1, eps=1e-5)

        def block(x, name, stride, down):
            out = F.relu(bn(conv(x, name + ".conv1", stride, 1), name + ".bn1"))
            out = bn(conv(out, name + ".conv2", 1, 1), name + ".bn2")
            idt = bn(conv(x, name + ".down_sample.0", stride, 0), name + ".down_sample.1") if down else x
            return F.relu(out + idt)

        def net(x):
            x = F.relu(bn(conv(x, "stem.0", 1, 1), "stem.1"))
            x = block(x, "layers.0", 1, False)
            x = block(x, "layers.1", 2, True)
            x = block(x, "layers.2", 2, True)
            return F.linear(x.mean((2, 3)), p["fc.weight"], p["fc.bias"])

        accum = {k: torch.zeros_like(p[k]) for k in train}
        want = []
        for i in range(20):
            lr = 0.5 * self.LR * (1 + math.cos(math.pi * (i // 10) / 2))  # cosine_decay_lr(0, LR, 20, 10, 2)
            x = torch.tensor(batches["x"][i].astype(np.float64))
            y = torch.tensor(batches["y"][i].astype(np.int64))
            loss = F.cross_entropy(net(x), y)
            grads = torch.autograd.grad(loss, [p[k] for k in train])
            with torch.no_grad():
                for k, g in zip(train, grads):
                    accum[k].mul_(0.9).add_(g)
                    p[k] -= lr * accum[k]
            want.append(loss.item())
        self.close(got, want)


if __name__ == "__main__":
    unittest.main()
