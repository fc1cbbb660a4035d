"""The tutorial scripts of tests/tutorials/ run unchanged under `python -m pijit run` on the running
interpreter: the MNIST quick start (Model.train with LossMonitor/TimeMonitor/ModelCheckpoint, eval,
and the value_and_grad loop), the CIFAR-10 ResNet (augmentation, BatchNorm, Momentum with a cosine
schedule) and a model-zoo train.py (GeneratorDataset over a CSV, TrainOneStepCell, a custom
callback, checkpoint reload + eval).

Checked: exit status, MindSpore's LossMonitor/TimeMonitor line formats, the loss falling, the
jitted run's loss curve equal bit for bit to a fully eager run's (`--no-capture` and
PIJIT_MODEL_JIT=0), the MLP's curve against a plain-Python implementation of the same network,
optimiser and pipeline started from the script's init.ckpt, the checkpoint files' names, and bad
input through the scripts' entry points (a corrupt MNIST file, a source raising mid-epoch, a
column-count mismatch): a non-zero exit with an error naming the file / dataset / columns, within
a timeout. TUTORIAL_SIZE=small keeps every run to seconds.
"""
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import pijit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TUTORIALS = os.path.join(ROOT, "tests", "tutorials")
PYSCRIPTS = os.path.join(ROOT, "pyscripts")
sys.path.insert(0, TUTORIALS)
import make_data  # noqa: E402  (plain Python: writes the data sets)

TIMEOUT = 600
LOSS_LINE = re.compile(r"^epoch: (\d+) step: (\d+), loss is (\S+)$")
TIME_LINE = re.compile(r"^Train epoch time: \d+\.\d{3} ms, per step time: \d+\.\d{3} ms$")


def run_script(name, args, cwd, eager=False, env=None, timeout=TIMEOUT):
    """Runs tests/tutorials/<name> under `python -m pijit run` (eager: --no-capture and
    PIJIT_MODEL_JIT=0, nothing jitted); returns (returncode, stdout, stderr)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = PYSCRIPTS + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e["TUTORIAL_SIZE"] = "small"
    e.pop("PIJIT_PROGRESS", None)
    if eager:
        e["PIJIT_MODEL_JIT"] = "0"
    e.update(env or {})
    cmd = [sys.executable, "-m", "pijit", "run"] + (["--no-capture"] if eager else [])
    cmd += [os.path.join(TUTORIALS, name)] + list(args)
    p = subprocess.run(cmd, cwd=cwd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def loss_monitor_lines(out):
    """LossMonitor's lines as (epoch, step, loss text); every line starting "epoch: " must match."""
    rows = []
    for line in out.splitlines():
        if line.startswith("epoch: "):
            m = LOSS_LINE.match(line)
            if not m:
                raise AssertionError("not LossMonitor's format: %r" % line)
            rows.append((int(m.group(1)), int(m.group(2)), m.group(3)))
    return rows


class _Tmp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pijit-tutorials-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def workdir(self, name):
        d = os.path.join(self.tmp, name)
        os.makedirs(d, exist_ok=True)
        return d

    def ok(self, result):
        rc, out, err = result
        self.assertEqual(rc, 0, "the script failed:\n" + out[-3000:] + err[-5000:])
        return out, err


# ---- an independent reference: the quick start's MLP in plain Python (float64) ----

def read_mnist(d, prefix):
    with open(os.path.join(d, prefix + "-images-idx3-ubyte"), "rb") as f:
        magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
        pixels = f.read()
    with open(os.path.join(d, prefix + "-labels-idx1-ubyte"), "rb") as f:
        f.read(8)
        labels = list(f.read())
    size = rows * cols
    return [pixels[i * size:(i + 1) * size] for i in range(n)], labels


def dot(a, b):
    return sum(map(float.__mul__, a, b))


def mlp_reference(images, labels, params, lr, epochs, batch):
    """Flatten -> Dense -> ReLU -> Dense -> ReLU -> Dense, mean cross entropy, plain SGD; the
    images rescaled by 1/255 and normalised by (0.1307, 0.3081). Returns each step's loss."""
    W = [[list(map(float, row)) for row in params["layers.%d.weight" % k]] for k in (0, 2, 4)]
    B = [list(map(float, params["layers.%d.bias" % k])) for k in (0, 2, 4)]
    xs = [[(p / 255.0 - 0.1307) / 0.3081 for p in img] for img in images]
    losses = []
    for _ in range(epochs):
        for start in range(0, len(xs), batch):
            X, Y = xs[start:start + batch], labels[start:start + batch]
            n = len(X)
            # forward
            acts = [X]
            pre = []
            for layer in range(3):
                z = [[dot(w, a) + b for w, b in zip(W[layer], B[layer])] for a in acts[-1]]
                pre.append(z)
                acts.append([[max(v, 0.0) for v in r] for r in z] if layer < 2 else z)
            loss, dz = 0.0, []
            for logits, y in zip(acts[-1], Y):
                m = max(logits)
                ex = [math.exp(v - m) for v in logits]
                s = sum(ex)
                loss += math.log(s) + m - logits[y]
                dz.append([e / s / n - (1.0 / n if k == y else 0.0) for k, e in enumerate(ex)])
            losses.append(loss / n)
            # backward
            grads = [None] * 3
            for layer in (2, 1, 0):
                a_in = acts[layer]
                a_t = list(zip(*a_in))
                dz_t = list(zip(*dz))
                gW = [[dot(dcol, acol) for acol in a_t] for dcol in dz_t]
                gB = [sum(dcol) for dcol in dz_t]
                grads[layer] = (gW, gB)
                if layer:
                    w_t = list(zip(*W[layer]))
                    da = [[dot(row, wc) for wc in w_t] for row in dz]
                    dz = [[g if z > 0 else 0.0 for g, z in zip(dr, zr)] for dr, zr in zip(da, pre[layer - 1])]
            for layer in range(3):
                gW, gB = grads[layer]
                W[layer] = [[w - lr * g for w, g in zip(wr, gr)] for wr, gr in zip(W[layer], gW)]
                B[layer] = [b - lr * g for b, g in zip(B[layer], gB)]
    return losses


def load_params(path):
    return {k: v.tolist() for k, v in pijit.load_checkpoint(path).items()}


class TestModelTrainEpochs(unittest.TestCase):
    """Model.train reads one iterator of `epoch` epochs, as MindSpore's DatasetHelper does: each
    epoch of a shuffled dataset comes in a new order (an iterator per epoch replayed the first)."""

    def test_each_epoch_reshuffles(self):
        import pijit.dataset as ds
        from pijit import nn
        from pijit.train import Model, Callback
        from pijit.dataset._compat import np

        class Rows:
            def __getitem__(self, i):
                return np.array([float(i)], dtype=np.float32), np.array(i % 2, dtype=np.int32)

            def __len__(self):
                return 16

        class Record(Callback):
            def __init__(self):
                super().__init__()
                self.seen = []

            def on_train_step_end(self, run_context):
                x = run_context.original_args().train_dataset_element[0]
                self.seen.append([int(v[0]) for v in x.tolist()])

        pijit.set_seed(3)
        data = ds.GeneratorDataset(Rows(), ["x", "y"], shuffle=True).batch(16)
        net = nn.Dense(1, 2)
        rec = Record()
        Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.01)).train(4, data, callbacks=[rec])
        self.assertEqual(len(rec.seen), 4)
        for order in rec.seen:
            self.assertEqual(sorted(order), list(range(16)))
        self.assertEqual(len(set(map(tuple, rec.seen))), 4, rec.seen)


class TestParallelMapDraws(unittest.TestCase):
    """A map run by two workers draws its random transforms per row: the same seed gives the same
    augmented images however the workers' threads interleave (the resnet tutorial's jitted and
    eager runs must see the same batches)."""

    def run_pipeline(self, seed):
        import time
        import pijit.dataset as ds
        from pijit.dataset import vision
        from pijit.dataset._compat import np

        class Images:
            def __getitem__(self, i):
                return (np.array([[[(i * 37 + r * 8 + c) % 256] for c in range(8)] for r in range(8)],
                                 dtype=np.uint8),)

            def __len__(self):
                return 24

        def stall(img):  # rows reach the random ops in an order set by the sleeps, not the rows
            time.sleep(0.004 * (int(img.tolist()[0][0][0]) % 3))
            return img

        pijit.set_seed(seed)
        data = ds.GeneratorDataset(Images(), ["image"], shuffle=False)
        data = data.map([stall, vision.RandomCrop(6), vision.RandomHorizontalFlip(), vision.RandomVerticalFlip()],
                        input_columns="image", num_parallel_workers=2)
        return [x.tolist() for (x,) in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]

    def test_same_seed_same_draws(self):
        first = self.run_pipeline(5)
        self.assertEqual(len(first), 24)
        for _ in range(2):
            self.assertEqual(self.run_pipeline(5), first)
        self.assertNotEqual(self.run_pipeline(6), first)


class TestQuickStart(_Tmp):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.data = os.path.join(cls.tmp, "MNIST_Data")
        make_data.make_mnist(cls.data, 256, 128)

    def quickstart(self, cwd, *args, **kw):
        return run_script("quickstart.py", ["--data-dir", self.data] + list(args), cwd, **kw)

    def test_mlp_model_train_eval_and_functional_loop(self):
        d = self.workdir("mlp")
        out, _ = self.ok(self.quickstart(d))
        rows = loss_monitor_lines(out)
        # 256 images in batches of 64: 4 steps per epoch, 3 epochs, one line per step
        self.assertEqual([(e, s) for e, s, _ in rows], [(e, s) for e in (1, 2, 3) for s in (1, 2, 3, 4)])
        losses = [float(t) for _, _, t in rows]
        self.assertTrue(all(math.isfinite(v) for v in losses))
        self.assertLess(sum(losses[-4:]), sum(losses[:4]) - 0.2, losses)  # it learns
        times = [line for line in out.splitlines() if line.startswith("Train epoch time")]
        self.assertEqual(len(times), 3)
        for line in times:
            self.assertRegex(line, TIME_LINE)
        self.assertRegex(out, r"Model\.eval: accuracy (0|1)\.\d{4}")
        # the value_and_grad loop from the same seed trains the same network the same way
        fn = [float(v) for v in re.findall(r"^epoch \d loss: +(\S+)  \[", out, re.M)]
        self.assertEqual(len(fn), 12)
        for a, b in zip(fn, losses):
            self.assertAlmostEqual(a, b, places=5)
        self.assertEqual(len(re.findall(r"^functional loop: epoch \d test accuracy \d\.\d{4}$", out, re.M)), 3)
        files = sorted(os.listdir(os.path.join(d, "checkpoints")))
        self.assertEqual(files, ["init.ckpt", "mnist-1_4.ckpt", "mnist-2_4.ckpt", "mnist-3_4.ckpt"])

    def test_mlp_jitted_equals_eager_and_plain_python(self):
        dj, de = self.workdir("mlp_jit"), self.workdir("mlp_eager")
        out_j, _ = self.ok(self.quickstart(dj, "--loop", "model"))
        out_e, _ = self.ok(self.quickstart(de, "--loop", "model", eager=True))
        curve_j, curve_e = loss_monitor_lines(out_j), loss_monitor_lines(out_e)
        self.assertEqual(len(curve_j), 12)
        self.assertEqual(curve_j, curve_e)  # the loss texts: the same float32 bits
        self.assertEqual(re.findall(r"accuracy \S+", out_j), re.findall(r"accuracy \S+", out_e))
        images, labels = read_mnist(self.data, "train")
        params = load_params(os.path.join(dj, "checkpoints", "init.ckpt"))
        ref = mlp_reference(images, labels, params, lr=0.1, epochs=3, batch=64)
        for (_, _, text), r in zip(curve_j, ref):
            self.assertLess(abs(float(text) - r), 1e-4 * abs(r), (text, r))
        # the last checkpoint holds the trained weights the run ended with
        last = load_params(os.path.join(dj, "checkpoints", "mnist-3_4.ckpt"))
        self.assertNotEqual(last["layers.0.weight"], params["layers.0.weight"])

    def test_lenet_jitted_equals_eager(self):
        dj, de = self.workdir("lenet_jit"), self.workdir("lenet_eager")
        args = ("--net", "lenet", "--epochs", "2")
        out_j, _ = self.ok(self.quickstart(dj, *args))
        out_e, _ = self.ok(self.quickstart(de, *args, eager=True))
        curve = loss_monitor_lines(out_j)
        self.assertEqual(len(curve), 8)
        self.assertEqual(curve, loss_monitor_lines(out_e))
        fn = lambda out: re.findall(r"^(epoch \d loss: .*|functional loop: .*)$", out, re.M)  # noqa: E731
        self.assertEqual(len(fn(out_j)), 10)
        self.assertEqual(fn(out_j), fn(out_e))

    def test_corrupt_mnist_file(self):
        d = self.workdir("corrupt")
        bad = os.path.join(d, "data")
        shutil.copytree(self.data, bad)
        path = os.path.join(bad, "train-images-idx3-ubyte")
        with open(path, "rb") as f:
            raw = f.read()
        with open(path, "wb") as f:  # cut in the middle of the pixels
            f.write(raw[:len(raw) // 2])
        rc, out, err = run_script("quickstart.py", ["--data-dir", bad], d, timeout=120)
        self.assertNotEqual(rc, 0)
        self.assertIn("RuntimeError: Invalid file, %s is truncated or corrupt" % path, err)
        self.assertNotIn("loss is", out)  # no step ran on part of the data
        with open(path, "wb") as f:  # a wrong magic number
            f.write(b"\x00\x00\x09\x99" + raw[4:])
        rc, out, err = run_script("quickstart.py", ["--data-dir", bad], d, timeout=120)
        self.assertNotEqual(rc, 0)
        self.assertIn("%s is not an MNIST image file" % path, err)


class TestResNetCifar10(_Tmp):
    def test_train_eval_jitted_equals_eager(self):
        data = os.path.join(self.tmp, "cifar")
        make_data.make_cifar(data, 32, 32)
        dj, de = self.workdir("jit"), self.workdir("eager")
        out_j, _ = self.ok(run_script("resnet_cifar10.py", ["--data-dir", data], dj))
        rows = loss_monitor_lines(out_j)
        # 5 x 32 images, batch 16, drop_remainder: 10 steps per epoch, 2 epochs
        self.assertEqual([(e, s) for e, s, _ in rows], [(e, s) for e in (1, 2) for s in range(1, 11)])
        losses = [float(t) for _, _, t in rows]
        self.assertLess(sum(losses[10:]), sum(losses[:10]), losses)
        self.assertEqual(len(re.findall(TIME_LINE.pattern, out_j, re.M)), 2)
        self.assertRegex(out_j, r"Model\.eval: accuracy (0|1)\.\d{4}")
        self.assertEqual(sorted(os.listdir(os.path.join(dj, "checkpoints"))),
                         ["init.ckpt", "resnet_cifar10-1_10.ckpt", "resnet_cifar10-2_10.ckpt"])
        out_e, _ = self.ok(run_script("resnet_cifar10.py", ["--data-dir", data], de, eager=True))
        self.assertEqual(rows, loss_monitor_lines(out_e))
        self.assertEqual(re.findall(r"accuracy \S+", out_j), re.findall(r"accuracy \S+", out_e))


class TestModelZooTrain(_Tmp):
    STEP = re.compile(r"^epoch: \[ *(\d+)/ *3\], step: \[ *(\d+)/ *12\], loss: (\S+), step time: [\d.]+ ms$")

    def curve(self, out):
        rows = [self.STEP.match(line) for line in out.splitlines() if line.startswith("epoch: [")]
        self.assertTrue(all(rows), out)
        return [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in rows]

    def test_graph_mode_equals_eager_pynative(self):
        dj, de = self.workdir("graph"), self.workdir("pynative")
        out_j, _ = self.ok(run_script("train.py", ["--mode", "graph"], dj))
        rows = self.curve(out_j)
        # 384 rows, batch 32: 12 steps per epoch, 3 epochs
        self.assertEqual([(e, s) for e, s, _ in rows], [(e, s) for e in (1, 2, 3) for s in range(1, 13)])
        means = [float(m) for m in re.findall(r"^epoch \d done: mean loss (\S+),", out_j, re.M)]
        self.assertEqual(len(means), 3)
        self.assertLess(means[2], means[0] * 0.6, means)
        m = re.search(r"^eval of checkpoint_net-3_12\.ckpt: acc (\S+), loss (\S+)$", out_j, re.M)
        self.assertIsNotNone(m, out_j)
        self.assertGreater(float(m.group(1)), 0.7)
        # keep_checkpoint_max=2: the first epoch's file was removed
        self.assertEqual(sorted(os.listdir(os.path.join(dj, "ckpt"))),
                         ["checkpoint_net-2_12.ckpt", "checkpoint_net-3_12.ckpt"])
        out_e, _ = self.ok(run_script("train.py", ["--mode", "pynative"], de, eager=True))
        self.assertEqual(rows, self.curve(out_e))
        self.assertEqual(m.group(0), re.search(r"^eval of .*$", out_e, re.M).group(0))

    def write_data(self, d):
        good = self.workdir("good")
        if not os.path.exists(os.path.join(good, "data", "train.csv")):
            self.ok(run_script("train.py", ["--epoch_size", "1"], good))
        os.makedirs(os.path.join(d, "data"), exist_ok=True)
        for name in ("train.csv", "eval.csv"):
            shutil.copy(os.path.join(good, "data", name), os.path.join(d, "data", name))
        return os.path.join(d, "data", "train.csv")

    def test_source_raising_mid_epoch(self):
        d = self.workdir("raising")
        path = self.write_data(d)
        with open(path) as f:
            lines = f.readlines()
        fields = lines[201].split(",")
        fields[3] = "oops"
        lines[201] = ",".join(fields)
        with open(path, "w") as f:
            f.writelines(lines)
        # shuffle=True and two workers: whichever step reaches row 200 fails there
        rc, out, err = run_script("train.py", ["--data_path", path], d, timeout=120)
        self.assertNotEqual(rc, 0)
        self.assertIn("RuntimeError: Exception thrown from user defined Python function in dataset: "
                      "GeneratorDataset's source raised ValueError: could not convert string to float: "
                      "'oops'", err)
        self.assertNotIn("epoch 1 done", out)  # no epoch ends short of a row silently
        self.assertFalse(os.path.exists(os.path.join(d, "ckpt")) and os.listdir(os.path.join(d, "ckpt")))

    def test_column_count_mismatch(self):
        d = self.workdir("columns")
        path = self.write_data(d)
        for cols, n in (("data", 1), ("data,label,weight", 3)):
            rc, out, err = run_script("train.py", ["--data_path", path, "--columns", cols], d, timeout=120)
            self.assertNotEqual(rc, 0)
            self.assertIn("the number of columns returned in 'source': 2, the number of 'column_names': %d (%r)"
                          % (n, cols.split(",")), err)
            self.assertNotIn("loss:", out)


if __name__ == "__main__":
    unittest.main()
