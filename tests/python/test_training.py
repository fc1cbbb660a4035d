"""Training (issue 13): nn.SGD, nn.Momentum, nn.Adam, WithLossCell and TrainOneStepCell. What a user
relies on: each optimizer applies MindSpore's update rule (checked element by element against the
formulas in plain Python floats), learning-rate lists and schedules, weight decay and loss scale
behave as documented, bad arguments raise clear errors, and a jitted training step is one graph
that leaves exactly the weights the eager step leaves (torch comparison: oracle/test_torch_training.py)."""
import math
import struct
import unittest

import pijit as pj
from pijit import nn, ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def flat(t):
    return [float(v) for v in t.reshape((-1,)).tolist()]


class Quadratic(nn.Cell):
    """loss = sum(c * w^2) / 2 + sum(w): gradient c * w + 1, known in closed form."""

    def __init__(self, w0, c):
        super().__init__()
        self.w = pj.Parameter(pj.Tensor(w0), name="w")
        self.c = pj.Tensor(c)

    def construct(self):
        return (self.c * self.w * self.w).sum() / 2 + self.w.sum()


class Reference(object):
    """The optimizers' update rules on Python floats, one list element per parameter element."""

    @staticmethod
    def run(kind, w, c, steps, lr=0.1, **kw):
        w = list(w)
        state = {"buf": [0.0] * len(w), "m": [0.0] * len(w), "v": [0.0] * len(w)}
        for t in range(1, steps + 1):
            rate = lr(t - 1) if callable(lr) else (lr[min(t - 1, len(lr) - 1)] if isinstance(lr, list) else lr)
            for i in range(len(w)):
                g = (c[i] * w[i] + 1.0) / kw.get("loss_scale", 1.0) + kw.get("weight_decay", 0.0) * w[i]
                if kind == "sgd":
                    mom, damp = kw.get("momentum", 0.0), kw.get("dampening", 0.0)
                    if mom:
                        b = g if t == 1 else mom * state["buf"][i] + (1 - damp) * g
                        state["buf"][i] = b
                        g = g + mom * b if kw.get("nesterov") else b
                    w[i] -= rate * g
                elif kind == "momentum":
                    mom = kw["momentum"]
                    b = mom * state["buf"][i] + g
                    state["buf"][i] = b
                    w[i] -= rate * (g + mom * b if kw.get("use_nesterov") else b)
                else:
                    b1, b2, eps = 0.9, 0.999, 1e-8
                    m = b1 * state["m"][i] + (1 - b1) * g
                    v = b2 * state["v"][i] + (1 - b2) * g * g
                    state["m"][i], state["v"][i] = m, v
                    w[i] -= rate * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (math.sqrt(v) + eps)
        return w


class OptimizerRules(unittest.TestCase):
    W0, C = [0.5, -1.5, 2.0, 0.0], [1.0, 0.5, 2.0, 3.0]

    def train(self, make_opt, steps=6):
        net = Quadratic(self.W0, self.C)
        opt = make_opt(net.trainable_params())
        grad = pj.grad(net, None, net.trainable_params())
        for _ in range(steps):
            opt(grad())
        return flat(net.w), opt

    def check(self, got, want, tol=2e-6):
        for g, w in zip(got, want):
            self.assertLess(abs(g - w), tol * (1 + abs(w)), (got, want))

    def test_sgd_variants(self):
        for kw in ({}, {"momentum": 0.9}, {"momentum": 0.8, "dampening": 0.3}, {"momentum": 0.9, "nesterov": True},
                   {"momentum": 0.5, "weight_decay": 0.1}, {"loss_scale": 4.0}):
            got, _ = self.train(lambda p: nn.SGD(p, 0.1, **kw))
            self.check(got, Reference.run("sgd", self.W0, self.C, 6, 0.1, **kw))

    def test_momentum_and_nesterov(self):
        for kw in ({"momentum": 0.9}, {"momentum": 0.9, "use_nesterov": True}, {"momentum": 0.7, "weight_decay": 0.05}):
            got, _ = self.train(lambda p: nn.Momentum(p, 0.05, **kw))
            self.check(got, Reference.run("momentum", self.W0, self.C, 6, 0.05, **kw))

    def test_adam(self):
        got, opt = self.train(lambda p: nn.Adam(p, 0.01))
        self.check(got, Reference.run("adam", self.W0, self.C, 6, 0.01), 1e-5)
        self.assertEqual(opt.global_step.tolist(), [6])

    def test_learning_rate_lists_and_schedules(self):
        lrs = [0.1, 0.05, 0.02]
        got, opt = self.train(lambda p: nn.SGD(p, lrs))  # the last value holds after the list
        self.check(got, Reference.run("sgd", self.W0, self.C, 6, lrs))
        self.assertAlmostEqual(float(opt.get_lr()), 0.02, places=6)
        sched = lambda step: 0.2 / (1.0 + step.astype(pj.float32))  # called with the step tensor
        got, _ = self.train(lambda p: nn.Momentum(p, sched, 0.5))
        self.check(got, Reference.run("momentum", self.W0, self.C, 6, lambda t: 0.2 / (1.0 + t), momentum=0.5))

    def test_errors(self):
        p = Quadratic(self.W0, self.C).trainable_params()
        with self.assertRaisesRegex(ValueError, "2 gradients for 1 parameters"):
            nn.SGD(p, 0.1)((pj.Tensor(self.W0), pj.Tensor(self.W0)))
        with self.assertRaisesRegex(ValueError, r"the gradient of w has shape \(2,\), but the parameter has shape \(4,\)"):
            nn.SGD(p, 0.1)((pj.Tensor([1.0, 2.0]),))
        with self.assertRaisesRegex(TypeError, "expected a tuple of gradients"):
            nn.SGD(p, 0.1)(pj.Tensor(self.W0))
        with self.assertRaisesRegex(ValueError, "nesterov needs momentum > 0 and dampening = 0"):
            nn.SGD(p, 0.1, nesterov=True)
        with self.assertRaisesRegex(TypeError, "learning_rate must be a number, a Tensor, a list of numbers or a schedule"):
            nn.Adam(p, "fast")
        with self.assertRaisesRegex(ValueError, "learning_rate must be >= 0"):
            nn.Momentum(p, -0.1, 0.9)
        with self.assertRaisesRegex(ValueError, "the parameter list is empty"):
            nn.Adam([], 0.1)
        with self.assertRaisesRegex(TypeError, r"parameters\[0\] is a Tensor, not a Parameter"):
            nn.Adam([pj.Tensor(1.0)], 0.1)
        with self.assertRaisesRegex(TypeError, "optimizer must be an nn.Optimizer"):
            nn.TrainOneStepCell(nn.WithLossCell(nn.Dense(2, 2), nn.MSELoss()), "sgd")


def lenet():
    class LeNet5(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid", has_bias=True)
            self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=True)
            self.fc1 = nn.Dense(400, 120, activation="relu")
            self.fc2 = nn.Dense(120, 84, activation="relu")
            self.fc3 = nn.Dense(84, 10)
            self.pool = nn.MaxPool2d(2, 2)
            self.relu = nn.ReLU()
            self.flatten = nn.Flatten()

        def construct(self, x):
            x = self.pool(self.relu(self.conv1(x)))
            x = self.pool(self.relu(self.conv2(x)))
            return self.fc3(self.fc2(self.fc1(self.flatten(x))))
    return LeNet5()


def mlp():
    return nn.SequentialCell([nn.Dense(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dense(32, 4)])


def blocked_cnn():
    """Channels in 16s, so oneDNN's convolutions read their weights reordered into blocked layouts:
    weights that change every step take the path of a training loop (reordered into the node's own
    buffer from the third launch on)."""
    def block(a, b):
        return [nn.Conv2d(a, b, 3, pad_mode="pad", padding=1, has_bias=True), nn.BatchNorm2d(b), nn.ReLU()]
    return nn.SequentialCell(block(3, 16) + [nn.MaxPool2d(2, 2)] + block(16, 32) +
                             [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(32, 10)])


class JittedTraining(unittest.TestCase):
    def run_steps(self, make, kind, shape, classes, jit, steps=4):
        pj.set_seed(11)
        net = make()
        net.set_train(True)
        opt = nn.SGD(net.trainable_params(), 0.05, momentum=0.9, weight_decay=1e-4) if kind == "sgd" \
            else nn.Adam(net.trainable_params(), 1e-3)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
        run = pj.jit(step) if jit else step
        pj.set_seed(12)
        batches = [(pj.randn(*shape), pj.Tensor([i % classes for i in range(shape[0])])) for _ in range(2)]
        losses = [float(run(*batches[i % 2])) for i in range(steps)]
        return net, run, losses

    def test_jitted_step_is_one_graph_with_the_eager_weights(self):
        # TrainOneStepCell.construct is one code object for every step cell: count what each adds.
        before = pj.jit_stats(nn.TrainOneStepCell.construct)
        for make, shape, classes in ((mlp, (8, 16), 4), (lenet, (4, 1, 32, 32), 10)):
            for kind in ("sgd", "adam"):
                eager, _, le = self.run_steps(make, kind, shape, classes, False)
                jitted, step, lj = self.run_steps(make, kind, shape, classes, True, steps=4)
                if CAPTURE_ON:
                    st = pj.jit_stats(step)
                    # ("compiles" counts every capture; "graphs" counts live entries, which stays put
                    # once earlier suites' step cells fill the code's cache and an entry is evicted)
                    added = [st[k] - before[k] for k in ("compiles", "breaks", "cache_hits")]
                    self.assertEqual(added, [1, 0, 3], st["break_reasons"])  # one capture, three hits
                    if make is lenet:  # the weight gradients and pool gradients are the graph's own kernels
                        # (LeNet's entry: its conv and ReLU may run as one conv2d_block, the ReLU's
                        # gradient reading the ReLU's output, not the conv's)
                        compiled = [e["compiled"] for e in st["entries"] if "Float32[4, 1, 32, 32]" in e["compiled"]][-1]
                        self.assertEqual((compiled.count("conv2d_weight_grad("), compiled.count("max_pool2d_grad(")),
                                         (2, 2), compiled)
                    before = st
                else:
                    assert_ran_eagerly(self, step)
                self.assertEqual(le, lj)
                for a, b in zip(eager.get_parameters(), jitted.get_parameters()):  # BatchNorm's statistics too
                    self.assertEqual(flat(a), flat(b), "%s %s" % (kind, a.name))

    def test_a_blocked_cnn_trained_for_many_steps_keeps_the_eager_weights(self):
        for kind in ("sgd", "adam"):
            before = pj.jit_stats(nn.TrainOneStepCell.construct)
            eager, _, le = self.run_steps(blocked_cnn, kind, (2, 3, 8, 8), 10, False, steps=6)
            jitted, step, lj = self.run_steps(blocked_cnn, kind, (2, 3, 8, 8), 10, True, steps=6)
            if CAPTURE_ON:
                st = pj.jit_stats(step)
                # (one code object for every step cell: a new cell's graph counts as its recompile)
                self.assertEqual([st[k] - before[k] for k in ("compiles", "breaks", "cache_hits")], [1, 0, 5],
                                 st["break_reasons"])
            else:
                assert_ran_eagerly(self, step)
            self.assertEqual(le, lj, kind)
            for a, b in zip(eager.get_parameters(), jitted.get_parameters()):
                self.assertEqual(flat(a), flat(b), "%s %s" % (kind, a.name))

    def test_sens_scales_the_gradients(self):
        w0 = [0.5, -1.0]
        for sens in (1.0, 2.5):
            net = Quadratic(w0, [1.0, 1.0])

            class Loss(nn.Cell):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner

                def construct(self):
                    return self.inner()
            nn.TrainOneStepCell(Loss(net), nn.SGD(net.trainable_params(), 0.1), sens=sens)()
            self.assertEqual(flat(net.w), [f32(w - 0.1 * sens * (w + 1.0)) for w in w0])


if __name__ == "__main__":
    unittest.main()
