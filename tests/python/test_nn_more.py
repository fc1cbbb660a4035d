"""More of mindspore.nn (issue 42): the learning-rate lists and schedule Cells against MindSpore's
documented examples, the optimizers AdamWeightDecay / RMSProp / Adagrad / Lamb / LARS / FTRL
against a pure-Python reference for two steps (and a dynamic learning rate), the 1-D conv and
pool layers, adaptive pools, channel dropout, instance norm, the new activations, OneHot, Norm,
Tril/Triu, EmbeddingLookup, WithEvalCell, MultiheadAttention and the Transformer layers, and the
metrics (MindSpore's documented example outputs). Layers and optimizers also run under jit: one
graph, no break, results equal to eager."""
import math
import struct
import unittest

import pijit as ms
from pijit import nn, ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def close(case, got, want, rel=2e-6, abs_=1e-7):
    if isinstance(want, (list, tuple)):
        case.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            close(case, g, w, rel, abs_)
        return
    case.assertTrue(abs(got - want) <= abs_ + rel * abs(want), "%r != %r" % (got, want))


def captured(case, fn, *args):
    """fn jitted: the result equals eager's (bitwise), in one graph with no break."""
    want = fn(*args)
    jf = ms.jit(fn)
    before = ms.jit_stats(jf)["graphs"]  # a Cell's counts are its construct's, over instances
    got = jf(*args)
    if CAPTURE_ON:
        st = ms.jit_stats(jf)
        case.assertEqual(st["break_reasons"], [])
        case.assertEqual(st["graphs"] - before, 1)
    else:  # (no capture: jf ran eagerly)
        assert_ran_eagerly(case, jf)
    flat = lambda o: [x.tolist() for x in o] if isinstance(o, tuple) else o.tolist()  # noqa: E731
    case.assertEqual(flat(got), flat(want))
    return want


class LearningRateLists(unittest.TestCase):
    # the outputs printed in MindSpore's docstring examples
    def test_documented_examples(self):
        self.assertEqual(nn.piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01]),
                         [0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01, 0.01, 0.01])
        self.assertEqual(nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1),
                         [0.1, 0.1, 0.09000000000000001, 0.09000000000000001, 0.08100000000000002,
                          0.08100000000000002])
        self.assertEqual(nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, True),
                         [0.1, 0.1, 0.1, 0.1, 0.016529888822158657, 0.016529888822158657])
        self.assertEqual(nn.inverse_decay_lr(0.1, 0.5, 6, 1, 1, True),
                         [0.1, 0.06666666666666667, 0.05, 0.04, 0.03333333333333333,
                          0.028571428571428574])
        self.assertEqual(nn.cosine_decay_lr(0.01, 0.1, 6, 2, 2),
                         [0.1, 0.1, 0.05500000000000001, 0.05500000000000001, 0.01, 0.01])
        self.assertEqual(nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5),
                         [0.1, 0.1, 0.07363961030678928, 0.07363961030678928, 0.01, 0.01])
        self.assertEqual(nn.warmup_lr(0.1, 6, 2, 2), [0.0, 0.0, 0.05, 0.05, 0.1, 0.1])

    def test_other_modes(self):
        # not stair: 0.1 * 0.9 ** (epoch / 2), epochs 0, 0, 1, 1
        self.assertEqual(nn.exponential_decay_lr(0.1, 0.9, 4, 2, 2), [0.1, 0.1, 0.1 * 0.9 ** 0.5, 0.1 * 0.9 ** 0.5])
        # stair: floor(epoch / 2): epochs 0..3 -> 0, 0, 1, 1
        self.assertEqual(nn.exponential_decay_lr(0.1, 0.9, 4, 1, 2, True), [0.1, 0.1, 0.1 * 0.9, 0.1 * 0.9])
        # natural exp without stair: e ** (-rate * epoch), decay_epoch not dividing (MindSpore's code)
        self.assertEqual(nn.natural_exp_decay_lr(0.1, 0.5, 3, 1, 2), [0.1 * math.e ** (-0.5 * k) for k in range(3)])
        self.assertEqual(nn.inverse_decay_lr(0.1, 0.5, 3, 1, 2), [0.1, 0.1 / 1.25, 0.1 / 1.5])
        # update_decay_epoch: d = 2 * max(ceil(epoch / 2), 1): epochs 0..4 -> d 2, 2, 2, 4, 4
        want = [((0.1 - 0.01) * (1 - e / d) ** 2 + 0.01) for e, d in ((0, 2), (1, 2), (2, 2), (3, 4), (4, 4))]
        self.assertEqual(nn.polynomial_decay_lr(0.1, 0.01, 5, 1, 2, 2.0, True), want)

    def test_argument_errors(self):
        with self.assertRaises(TypeError):
            nn.exponential_decay_lr(1, 0.9, 6, 2, 1)  # learning_rate must be a float
        with self.assertRaises(ValueError):
            nn.exponential_decay_lr(0.1, 0.9, 0, 2, 1)
        with self.assertRaises(ValueError):
            nn.cosine_decay_lr(0.1, 0.01, 6, 2, 2)  # max_lr <= min_lr
        with self.assertRaises(ValueError):
            nn.piecewise_constant_lr([2, 5], [0.1])
        with self.assertRaises(ValueError):
            nn.piecewise_constant_lr([5, 2], [0.1, 0.2])
        with self.assertRaises(TypeError):
            nn.warmup_lr(0.1, 6, 2, True)


class Schedules(unittest.TestCase):
    CASES = [
        (lambda: nn.ExponentialDecayLR(0.1, 0.9, 4), lambda s: 0.1 * 0.9 ** (s / 4)),
        (lambda: nn.ExponentialDecayLR(0.1, 0.9, 4, True), lambda s: 0.1 * 0.9 ** (s // 4)),
        (lambda: nn.NaturalExpDecayLR(0.1, 0.9, 4), lambda s: 0.1 * math.e ** (-0.9 * s)),
        (lambda: nn.NaturalExpDecayLR(0.1, 0.9, 4, True), lambda s: 0.1 * math.e ** (-0.9 * (s // 4 * 4))),
        (lambda: nn.InverseDecayLR(0.1, 0.9, 4), lambda s: 0.1 / (1 + 0.9 * s / 4)),
        (lambda: nn.InverseDecayLR(0.1, 0.9, 4, True), lambda s: 0.1 / (1 + 0.9 * (s // 4))),
        (lambda: nn.CosineDecayLR(0.01, 0.1, 4), lambda s: 0.01 + 0.045 * (1 + math.cos(math.pi * min(s, 4) / 4))),
        (lambda: nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5), lambda s: 0.09 * (1 - min(s, 4) / 4) ** 0.5 + 0.01),
        (lambda: nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5, True),
         lambda s: 0.09 * (1 - s / (4 * max(math.ceil(s / 4), 1))) ** 0.5 + 0.01),
        (lambda: nn.WarmUpLR(0.1, 2), lambda s: 0.1 * min(s, 2) / 2),
    ]

    def test_values_at_steps(self):
        for make, formula in self.CASES:
            sched = make()
            with self.subTest(type(sched).__name__):
                for s in (0, 1, 2, 5, 9):
                    lr = sched(T(s, ms.int32))
                    self.assertEqual((lr.shape, lr.dtype), ((), ms.float32))
                    close(self, lr.item(), formula(s), rel=3e-6)

    def test_documented_example(self):
        # ExponentialDecayLR(0.1, 0.9, 4) at step 2: 0.1 * 0.9 ** 0.5, in float32 as MindSpore's Pow
        want = f32(f32(f32(0.9) ** f32(0.5)) * f32(0.1))
        self.assertEqual(nn.ExponentialDecayLR(0.1, 0.9, 4)(T(2, ms.int32)).item(), want)
        self.assertEqual(nn.WarmUpLR(0.1, 2)(T(2, ms.int32)).item(), f32(0.1))

    def test_captured(self):
        for make, _ in self.CASES:
            captured(self, make(), T(3, ms.int32))

    def test_argument_errors(self):
        with self.assertRaises(TypeError):
            nn.CosineDecayLR(0, 0.1, 4)  # min_lr must be a float
        with self.assertRaises(ValueError):
            nn.ExponentialDecayLR(0.1, 0.9, 0)
        with self.assertRaises(TypeError):
            nn.InverseDecayLR(0.1, 0.9, 4, 1)
        with self.assertRaises(ValueError):
            nn.WarmUpLR(-0.1, 2)


# ---- optimizers -----------------------------------------------------------------------------------

W0, B0 = [1.0, -2.0, 3.0], [0.5]
GRADS = [([0.1, 0.2, -0.3], [1.0]), ([-0.2, 0.4, 0.1], [-0.5])]


def params():
    return [ms.Parameter(T(W0), name="w"), ms.Parameter(T(B0), name="bias")]


def run(make, n=2, jit=False):
    ps = params()
    opt = make(ps)
    step = ms.jit(opt) if jit else opt
    for g in GRADS[:n]:
        step(tuple(T(x) for x in g))
    return [p.tolist() for p in ps], opt, step


def reference(update, state_init, lrs=(0.1, 0.1)):
    """A pure-Python run of `update(p, g, state, lr, t)` over each element, two steps."""
    out = []
    for k, p0 in enumerate((W0, B0)):
        ps, states = list(p0), [dict(state_init) for _ in p0]
        for t, (g_all, lr) in enumerate(zip(GRADS, lrs)):
            g = g_all[k]
            ps = [update(p, gi, st, lr, t + 1) for p, gi, st in zip(ps, g, states)]
        out.append(ps)
    return out


class Optimizers(unittest.TestCase):
    def check(self, make, want, rel=3e-6):
        got, _, _ = run(make)
        close(self, got, want, rel=rel, abs_=1e-6)
        # jitted: the same bits, one graph
        got_j, _, step = run(make, jit=True)
        self.assertEqual(got_j, got)
        self.assertEqual(ms.jit_stats(step)["break_reasons"], [])

    def test_adam_weight_decay(self):
        def upd(p, g, st, lr, t, wd=0.01):
            st["m"] = 0.9 * st["m"] + 0.1 * g
            st["v"] = 0.999 * st["v"] + 0.001 * g * g
            u = st["m"] / (math.sqrt(st["v"]) + 1e-6) + wd * p
            return p - lr * u
        want = reference(upd, {"m": 0.0, "v": 0.0})
        # 'bias' is decayed too (the default filter skips only beta/gamma)
        self.check(lambda ps: nn.AdamWeightDecay(ps, 0.1, weight_decay=0.01), want)

    def test_rmsprop(self):
        def upd(p, g, st, lr, t):
            st["s"] = 0.9 * st["s"] + 0.1 * g * g  # mean square starts at 1
            st["m"] = 0.5 * st["m"] + lr * g / math.sqrt(st["s"] + 1e-10)
            return p - st["m"]
        self.check(lambda ps: nn.RMSProp(ps, 0.1, momentum=0.5), reference(upd, {"s": 1.0, "m": 0.0}))

    def test_rmsprop_centered(self):
        def upd(p, g, st, lr, t):
            st["a"] = 0.9 * st["a"] + 0.1 * g
            st["s"] = 0.9 * st["s"] + 0.1 * g * g
            st["m"] = lr * g / math.sqrt(st["s"] - st["a"] ** 2 + 1e-10)
            return p - st["m"]
        self.check(lambda ps: nn.RMSProp(ps, 0.1, centered=True),
                   reference(upd, {"a": 0.0, "s": 1.0, "m": 0.0}))

    def test_adagrad(self):
        def upd(p, g, st, lr, t):
            st["a"] += g * g
            return p - lr * g / math.sqrt(st["a"])
        self.check(lambda ps: nn.Adagrad(ps, learning_rate=0.1), reference(upd, {"a": 0.1}))

        def keep(p, g, st, lr, t):  # update_slots=False: the accumulator stays at accum
            return p - lr * g / math.sqrt(0.5)
        self.check(lambda ps: nn.Adagrad(ps, 0.5, 0.1, update_slots=False), reference(keep, {}))

    def test_lamb(self):
        def lamb(p0, g_rows, wd):
            ps, m, v = list(p0), [0.0] * len(p0), [0.0] * len(p0)
            for t, g in enumerate(g_rows, 1):
                m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
                v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
                u = [(a / (1 - 0.9 ** t)) / (math.sqrt(b / (1 - 0.999 ** t)) + 1e-6) + wd * p
                     for a, b, p in zip(m, v, ps)]
                wn, un = math.sqrt(sum(p * p for p in ps)), math.sqrt(sum(x * x for x in u))
                r = wn / un if wn > 0 and un > 0 else 1.0
                ps = [p - 0.1 * r * x for p, x in zip(ps, u)]
            return ps
        want = [lamb(W0, [g[0] for g in GRADS], 0.01), lamb(B0, [g[1] for g in GRADS], 0.01)]
        self.check(lambda ps: nn.Lamb(ps, 0.1, weight_decay=0.01), want)

    def test_lars_momentum(self):
        # LARS scales 'w' (the filter skips names with 'bias'); the decay moves into LARS
        def lars(p0, g_rows, scale):
            ps, acc = list(p0), [0.0] * len(p0)
            for g in g_rows:
                if scale:
                    wn = math.sqrt(sum(p * p for p in ps))
                    gn = math.sqrt(sum(x * x for x in g))
                    r = 0.001 * wn / (gn + 0.01 * wn + 1e-5)
                    g = [r * (x + 0.01 * p) for x, p in zip(g, ps)]
                acc = [0.9 * a + x for a, x in zip(acc, g)]
                ps = [p - 0.1 * a for p, a in zip(ps, acc)]
            return ps
        want = [lars(W0, [g[0] for g in GRADS], True), lars(B0, [g[1] for g in GRADS], False)]
        self.check(lambda ps: nn.LARS(nn.Momentum(ps, 0.1, 0.9, weight_decay=0.01)), want)
        lars = nn.LARS(nn.Momentum(params(), 0.1, 0.9, weight_decay=0.01))
        self.assertEqual((lars.get_lr(), lars.get_weight_decay(), lars.opt.weight_decay), (0.1, 0.01, 0.0))

    def test_lars_trains_jitted_as_eager(self):
        def make():
            ms.set_seed(1)
            net = nn.Dense(4, 3)
            opt = nn.LARS(nn.Momentum(net.trainable_params(), 0.1, 0.9, weight_decay=0.01))
            return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt), net
        (eager, net_e), (jitted, net_j) = make(), make()
        step = ms.jit(jitted)
        x, y = ops.randn((5, 4)), ops.randn((5, 3))
        for _ in range(3):
            self.assertEqual(step(x, y).tolist(), eager(x, y).tolist())
        self.assertEqual(net_j.weight.tolist(), net_e.weight.tolist())
        self.assertEqual(ms.jit_stats(step)["break_reasons"], [])

    def test_ftrl(self):
        def upd(p, g, st, lr, t, l1=0.001, l2=0.002):
            a_new = st["a"] + g * g
            st["z"] += g - (a_new ** 0.5 - st["a"] ** 0.5) / lr * p
            st["a"] = a_new
            if abs(st["z"]) <= l1:
                return 0.0
            return (math.copysign(l1, st["z"]) - st["z"]) / (a_new ** 0.5 / lr + 2 * l2)
        self.check(lambda ps: nn.FTRL(ps, learning_rate=0.1, l1=0.001, l2=0.002),
                   reference(upd, {"a": 0.1, "z": 0.0}), rel=2e-5)

    def test_dynamic_learning_rates(self):
        def sgd(p, g, st, lr, t):
            return p - lr * g
        # a schedule Cell: CosineDecayLR(0.01, 0.1, 4) at steps 0 and 1
        lrs = [0.01 + 0.045 * (1 + math.cos(math.pi * s / 4)) for s in (0, 1)]
        self.check(lambda ps: nn.SGD(ps, nn.CosineDecayLR(0.01, 0.1, 4)), reference(sgd, {}, lrs))
        # a list from warmup_lr: 0.0 then 0.05
        self.check(lambda ps: nn.SGD(ps, nn.warmup_lr(0.1, 4, 1, 2)), reference(sgd, {}, (0.0, 0.05)))
        # a 1-D Tensor
        self.check(lambda ps: nn.Adagrad(ps, learning_rate=T([0.2, 0.1])),
                   reference(lambda p, g, st, lr, t: (st.__setitem__("a", st["a"] + g * g),
                                                      p - lr * g / math.sqrt(st["a"]))[1],
                             {"a": 0.1}, (0.2, 0.1)))
        # RMSProp with a schedule and groups: the bias group has its own fixed lr
        def grouped(ps):
            return nn.RMSProp([{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.05}],
                              nn.WarmUpLR(0.1, 2))
        got, _, _ = run(grouped)

        def rms(p0, g_rows, lrs):
            ps, s, m = list(p0), [1.0] * len(p0), [0.0] * len(p0)
            for g, lr in zip(g_rows, lrs):
                s = [0.9 * a + 0.1 * x * x for a, x in zip(s, g)]
                m = [lr * x / math.sqrt(a + 1e-10) for x, a in zip(g, s)]
                ps = [p - d for p, d in zip(ps, m)]
            return ps
        close(self, got, [rms(W0, [g[0] for g in GRADS], (0.0, 0.05)),
                          rms(B0, [g[1] for g in GRADS], (0.05, 0.05))], abs_=1e-6)

    def test_argument_errors(self):
        with self.assertRaises(TypeError):
            nn.RMSProp(params(), decay=1)  # must be a float
        with self.assertRaises(ValueError):
            nn.RMSProp(params(), epsilon=0.0)
        with self.assertRaises(ValueError):
            nn.AdamWeightDecay(params(), beta1=1.0)
        with self.assertRaises(ValueError):
            nn.Adagrad(params(), accum=-0.1)
        with self.assertRaises(TypeError):
            nn.LARS(object())
        with self.assertRaises(TypeError):
            nn.FTRL(params(), learning_rate=nn.WarmUpLR(0.1, 2))


# ---- layers -----------------------------------------------------------------------------------------

X1 = T([[[1.0, 2.0, 3.0, 4.0, 5.0]]])  # (1, 1, 5)


class Layers1d(unittest.TestCase):
    def test_conv1d(self):
        c = nn.Conv1d(1, 1, 3, pad_mode="pad", padding=1, has_bias=True, weight_init="ones",
                      bias_init="zeros")
        self.assertEqual(c.weight.shape, (1, 1, 3))
        # sums of 3 neighbours with zero padding
        self.assertEqual(captured(self, c, X1).tolist(), [[[3.0, 6.0, 9.0, 12.0, 9.0]]])
        c = nn.Conv1d(1, 2, 2, stride=2, pad_mode="valid", weight_init="ones")
        self.assertEqual(c(X1).tolist(), [[[3.0, 7.0], [3.0, 7.0]]])
        self.assertEqual(nn.Conv1d(1, 1, 3)(X1).shape, (1, 1, 5))  # 'same'

    def test_conv1d_transpose(self):
        ct = nn.Conv1dTranspose(1, 1, 2, stride=2, pad_mode="valid", weight_init="ones")
        self.assertEqual(ct.weight.shape, (1, 1, 2))
        # each input element spread over 2 outputs
        self.assertEqual(captured(self, ct, T([[[1.0, 2.0]]])).tolist(), [[[1.0, 1.0, 2.0, 2.0]]])
        self.assertEqual(nn.Conv1dTranspose(1, 2, 3, stride=2)(X1).shape, (1, 2, 10))
        ct = nn.Conv1dTranspose(1, 1, 3, pad_mode="valid", weight_init="ones")
        self.assertEqual(ct(T([[[1.0, 2.0]]])).tolist(), [[[1.0, 3.0, 3.0, 2.0]]])

    def test_pools(self):
        self.assertEqual(captured(self, nn.MaxPool1d(2, 2), X1).tolist(), [[[2.0, 4.0]]])
        self.assertEqual(captured(self, nn.AvgPool1d(2, 1), X1).tolist(), [[[1.5, 2.5, 3.5, 4.5]]])
        self.assertEqual(nn.MaxPool1d(3, 1, "same")(X1).tolist(), [[[2.0, 3.0, 4.0, 5.0, 5.0]]])
        self.assertEqual(nn.MaxPool1d(2, 2)(X1[0]).shape, (1, 2))  # (C, L)

    def test_adaptive_pools(self):
        # windows [floor(i L / o), ceil((i + 1) L / o)): L=5, o=2 -> [0, 3), [2, 5)
        self.assertEqual(captured(self, nn.AdaptiveAvgPool1d(2), X1).tolist(), [[[2.0, 4.0]]])
        self.assertEqual(nn.AdaptiveMaxPool1d(3)(X1).tolist(), [[[2.0, 4.0, 5.0]]])
        y = ms.arange(30).astype(ms.float32).reshape(1, 1, 5, 6)  # y[r, c] = 6 r + c
        # rows [0, 3), [2, 5); columns pairs -> max at the window's bottom-right
        self.assertEqual(captured(self, nn.AdaptiveMaxPool2d((2, 3)), y).tolist(),
                         [[[[13.0, 15.0, 17.0], [25.0, 27.0, 29.0]]]])
        self.assertEqual(nn.AdaptiveMaxPool2d((None, 2))(y).shape, (1, 1, 5, 2))


class MoreLayers(unittest.TestCase):
    def test_instance_norm(self):
        x = T([[[[1.0, 3.0]], [[2.0, 2.0]]]])  # (1, 2, 1, 2): channel 0 mean 2 var 1; channel 1 var 0
        n = nn.InstanceNorm2d(2)
        got = captured(self, n, x).tolist()
        close(self, got[0][0][0], [-1 / math.sqrt(1 + 1e-5), 1 / math.sqrt(1 + 1e-5)])
        self.assertEqual(got[0][1][0], [0.0, 0.0])
        self.assertEqual([p.name for p in n.get_parameters()], ["gamma", "beta"])
        self.assertEqual(nn.InstanceNorm1d(2)(T([[[1.0, 3.0], [0.0, 4.0]]])).shape, (1, 2, 2))

    def test_channel_dropout(self):
        ms.set_seed(3)
        d = nn.Dropout2d(0.5)
        x = ms.ones((4, 8, 2, 2))
        self.assertEqual(d(x).tolist(), x.tolist())  # eval mode: identity
        d.set_train()
        y = d(x).tolist()
        for n in range(4):
            for c in range(8):
                vals = {v for row in y[n][c] for v in row}
                self.assertEqual(len(vals), 1)  # a whole channel kept (x2) or dropped
                self.assertIn(vals.pop(), (0.0, 2.0))

    def test_activations(self):
        x = T([-2.0, -0.5, 0.0, 1.5])
        cases = [
            (nn.ELU(), [math.expm1(-2.0), math.expm1(-0.5), 0.0, 1.5]),
            (nn.LogSigmoid(), [-math.log1p(math.exp(2.0)), -math.log1p(math.exp(0.5)), -math.log(2.0),
                               -math.log1p(math.exp(-1.5))]),
            (nn.Softsign(), [-2 / 3, -0.5 / 1.5, 0.0, 1.5 / 2.5]),
            (nn.Hardtanh(), [-1.0, -0.5, 0.0, 1.0]),
            (nn.HShrink(0.5), [-2.0, 0.0, 0.0, 1.5]),
            (nn.SoftShrink(0.5), [-1.5, 0.0, 0.0, 1.0]),
            (nn.Tanhshrink(), [-2.0 - math.tanh(-2.0), -0.5 - math.tanh(-0.5), 0.0, 1.5 - math.tanh(1.5)]),
            (nn.CELU(2.0), [2 * math.expm1(-1.0), 2 * math.expm1(-0.25), 0.0, 1.5]),
            (nn.Mish(), [v * math.tanh(math.log1p(math.exp(v))) for v in (-2.0, -0.5, 0.0, 1.5)]),
            (nn.Softmin(), [math.exp(-v) / sum(math.exp(-u) for u in (-2.0, -0.5, 0.0, 1.5))
                            for v in (-2.0, -0.5, 0.0, 1.5)]),
        ]
        for cell, want in cases:
            with self.subTest(type(cell).__name__):
                close(self, captured(self, cell, x).tolist(), want, rel=2e-6, abs_=2e-7)
        self.assertEqual(nn.GLU()(T([1.0, 2.0, 0.0, 0.0])).tolist(), [0.5, 1.0])

    def test_prelu(self):
        p = nn.PReLU(2, [0.1, 0.2])
        self.assertEqual([q.name for q in p.get_parameters()], ["a"])
        x = T([[[-1.0], [-2.0]], [[3.0], [-4.0]]])  # (2, 2, 1): channel 0 slope 0.1, channel 1 0.2
        close(self, captured(self, p, x).tolist(), [[[-0.1], [-0.4]], [[3.0], [-0.8]]])
        self.assertEqual(nn.PReLU()(T([-4.0, 4.0])).tolist(), [-1.0, 4.0])

    def test_one_hot_norm_tril_triu(self):
        self.assertEqual(captured(self, nn.OneHot(depth=3), T([0, 2])).tolist(),
                         [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
        oh = nn.OneHot(axis=0, depth=2, on_value=5.0, off_value=-1.0, dtype=ms.int32)(T([1, 0, 1]))
        self.assertEqual((oh.dtype, oh.tolist()), (ms.int32, [[-1, 5, -1], [5, -1, 5]]))
        self.assertEqual(captured(self, nn.Norm(), T([[3.0, 0.0], [0.0, 4.0]])).item(), 5.0)
        self.assertEqual(nn.Norm(1, True)(T([[3.0, 4.0], [6.0, 8.0]])).tolist(), [[5.0], [10.0]])
        m = ms.ones((3, 3))
        self.assertEqual(captured(self, nn.Tril(), m).tolist(), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
        self.assertEqual(nn.Triu()(m, 1).tolist(), [[0, 1, 1], [0, 0, 1], [0, 0, 0]])

    def test_embedding_lookup(self):
        e = nn.EmbeddingLookup(3, 2, param_init="ones")
        e.embedding_table.set_data(T([[0.0, 1.0], [2.0, 3.0], [3.0, 4.0]]))
        # id 5 is out of range: a zero row
        self.assertEqual(captured(self, e, T([[2, 0], [5, 1]])).tolist(),
                         [[[3.0, 4.0], [0.0, 1.0]], [[0.0, 0.0], [2.0, 3.0]]])
        e2 = nn.EmbeddingLookup(3, 2, max_norm=1.0)
        e2.embedding_table.set_data(T([[0.0, 1.0], [2.0, 3.0], [3.0, 4.0]]))
        close(self, e2(T([2])).tolist(), [[0.6, 0.8]])

    def test_with_eval_cell(self):
        net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
        cell = nn.WithEvalCell(net, nn.MSELoss())
        loss, out, label = cell(T([[1.0, 2.0]]), T([[1.0]]))
        self.assertEqual((loss.item(), out.tolist(), label.tolist()), (4.0, [[3.0]], [[1.0]]))

    def test_padding_layers(self):
        x = T([[[1.0, 2.0, 3.0]]])
        self.assertEqual(captured(self, nn.ReflectionPad1d((2, 1)), x).tolist(), [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]])
        self.assertEqual(captured(self, nn.ReplicationPad1d(2), x).tolist(), [[[1.0, 1.0, 1.0, 2.0, 3.0, 3.0, 3.0]]])
        self.assertEqual(nn.ConstantPad1d((1, 0), 9.0)(x).tolist(), [[[9.0, 1.0, 2.0, 3.0]]])
        # (left, right, top, bottom)
        self.assertEqual(nn.ZeroPad2d((1, 0, 0, 1))(x).tolist(), [[[0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0]]])
        self.assertEqual(nn.ReflectionPad2d(1)(T([[[1.0, 2.0], [3.0, 4.0]]])).tolist(),
                         [[[4.0, 3.0, 4.0, 3.0], [2.0, 1.0, 2.0, 1.0], [4.0, 3.0, 4.0, 3.0], [2.0, 1.0, 2.0, 1.0]]])
        with self.assertRaises(ValueError):
            nn.ReflectionPad1d(3)(x)  # reflection needs padding < size
        # the gathered padding differentiates: d/dx sum(pad(x)) counts each source element
        g = ops.grad(lambda a: nn.ReflectionPad1d((2, 1))(a).sum())(x)
        self.assertEqual(g.tolist(), [[[1.0, 3.0, 2.0]]])

    def test_shuffles_roll_moments_and_more(self):
        y = ms.arange(16).astype(ms.float32).reshape(1, 4, 2, 2)  # channel c holds 4 c .. 4 c + 3
        z = captured(self, nn.PixelShuffle(2), y)
        self.assertEqual(z.tolist(), [[[[0.0, 4.0, 1.0, 5.0], [8.0, 12.0, 9.0, 13.0],
                                        [2.0, 6.0, 3.0, 7.0], [10.0, 14.0, 11.0, 15.0]]]])
        self.assertEqual(nn.PixelUnshuffle(2)(z).tolist(), y.tolist())
        self.assertEqual(captured(self, nn.Roll(1, 0), T([1, 2, 3, 4])).tolist(), [4, 1, 2, 3])
        self.assertEqual(nn.Roll((1, -1), (0, 1))(T([[1, 2], [3, 4]])).tolist(), [[4, 3], [2, 1]])
        mean, var = nn.Moments()(T([1.0, 2.0, 3.0, 4.0]))
        self.assertEqual((mean.item(), var.item()), (2.5, 1.25))
        mean, var = nn.Moments(1, True)(T([[1.0, 3.0], [2.0, 2.0]]))
        self.assertEqual((mean.tolist(), var.tolist()), ([[2.0], [2.0]], [[1.0], [0.0]]))
        self.assertEqual(nn.Threshold(0.5, -1.0)(T([0.2, 0.7])).tolist(), [-1.0, f32(0.7)])
        self.assertEqual(nn.Softmax2d()(ms.ones((2, 1, 1))).tolist(), [[[0.5]], [[0.5]]])
        self.assertEqual(nn.Unflatten(1, (2, 2))(ms.ones((3, 4))).shape, (3, 2, 2))
        self.assertIsInstance(nn.get_activation("relu"), nn.ReLU)
        self.assertIsNone(nn.get_activation(None))
        with self.assertRaises(KeyError):
            nn.get_activation("nope")


class Attention(unittest.TestCase):
    def test_multihead_attention_hand_worked(self):
        # identity projections, one head, one query over two keys
        m = nn.MultiheadAttention(2, 1)
        m.in_proj_weight.set_data(T([[1.0, 0.0], [0.0, 1.0]] * 3))
        m.out_proj.weight.set_data(T([[1.0, 0.0], [0.0, 1.0]]))
        m.out_proj.bias.set_data(T([0.0, 0.0]))
        q = T([[[1.0, 0.0]]])                  # (L=1, N=1, E=2)
        kv = T([[[1.0, 0.0]], [[0.0, 1.0]]])   # (S=2, N=1, E=2)
        out, w = m(q, kv, kv)
        # scores (1, 0) / sqrt(2): weights softmax -> a = 1 / (1 + e^(-1/sqrt 2))
        a = 1 / (1 + math.exp(-1 / math.sqrt(2)))
        close(self, w.tolist(), [[[a, 1 - a]]])
        close(self, out.tolist(), [[[a, 1 - a]]])
        out, w = m(q, kv, kv, key_padding_mask=T([[False, True]]))
        self.assertEqual(w.tolist(), [[[1.0, 0.0]]])
        self.assertEqual(len(m(q, kv, kv, need_weights=False)), 1)

    def test_shapes_masks_and_capture(self):
        ms.set_seed(0)
        m = nn.MultiheadAttention(8, 2, batch_first=True)
        x = ops.randn((2, 3, 8))
        causal = T([[False, True, True], [False, False, True], [False, False, False]])
        out, w = captured(self, lambda a: m(a, a, a, attn_mask=causal), x)
        self.assertEqual((out.shape, w.shape), ((2, 3, 8), (2, 3, 3)))
        wl = w.tolist()
        for b in range(2):
            self.assertEqual(wl[b][0][1:], [0.0, 0.0])
            for row in wl[b]:
                close(self, sum(row), 1.0)
        _, wh = m(x, x, x, average_attn_weights=False)
        self.assertEqual(wh.shape, (2, 2, 3, 3))
        out, w = m(x[0], x[0], x[0])  # unbatched
        self.assertEqual((out.shape, w.shape), ((3, 8), (3, 3)))
        m2 = nn.MultiheadAttention(8, 2, kdim=4, vdim=6, add_bias_kv=True, add_zero_attn=True)
        out, w = m2(ops.randn((3, 2, 8)), ops.randn((5, 2, 4)), ops.randn((5, 2, 6)))
        self.assertEqual((out.shape, w.shape), ((3, 2, 8), (2, 3, 7)))
        with self.assertRaises(ValueError):
            nn.MultiheadAttention(6, 4)

    def test_transformer_layers(self):
        ms.set_seed(1)
        src, tgt = ops.randn((4, 2, 8)), ops.randn((3, 2, 8))
        enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
        self.assertEqual(captured(self, enc, src).shape, (4, 2, 8))
        dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=True, activation="gelu")
        self.assertEqual(captured(self, dec, tgt, src).shape, (3, 2, 8))
        stack = nn.TransformerEncoder(enc, 2)
        # MindSpore's stack: one new layer used twice
        self.assertEqual(len(stack.trainable_params()), len(enc.trainable_params()))
        layer = stack.layers[0]
        self.assertEqual(stack(src).tolist(), layer(layer(src)).tolist())
        t = nn.Transformer(8, 2, 2, 2, 16, dropout=0.0)
        out = captured(self, t, src, tgt)
        self.assertEqual(out.shape, (3, 2, 8))
        with self.assertRaises(ValueError):
            nn.TransformerEncoderLayer(8, 2, activation="tanh")

    def test_transformer_trains_jitted_as_eager(self):
        def make():
            ms.set_seed(5)
            net = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
            opt = nn.AdamWeightDecay(net.trainable_params(), nn.WarmUpLR(0.01, 2), weight_decay=0.01)
            return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
        ms.set_seed(6)
        x, y = ops.randn((4, 2, 8)), ops.randn((4, 2, 8))
        eager, jitted = make(), make()
        step = ms.jit(jitted)
        for _ in range(3):
            self.assertEqual(step(x, y).tolist(), eager(x, y).tolist())
        self.assertEqual(ms.jit_stats(step)["break_reasons"], [])


class Metrics(unittest.TestCase):
    X = T([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])
    Y = T([1, 0, 1])

    def test_documented_examples(self):
        m = nn.Accuracy("classification")
        m.clear()
        m.update(self.X, self.Y)
        self.assertEqual(m.eval(), 0.6666666666666666)
        p, r, f = nn.Precision(), nn.Recall(), nn.F1()
        for metric in (p, r, f):
            metric.update(self.X, self.Y)
        self.assertEqual((p.eval(), p.eval(average=True)), ([0.5, 1.0], 0.75))
        self.assertEqual(r.eval(), [1.0, 0.5])
        close(self, f.eval(), [2 / 3, 2 / 3])
        mae = nn.MAE()
        mae.update(T([0.1, 0.2, 0.6, 0.9]), T([0.1, 0.25, 0.7, 0.9]))
        self.assertEqual(mae.eval(), 0.037499990314245224)  # MindSpore's printed value
        mse = nn.MSE()
        mse.update(T([0.1, 0.2, 0.6, 0.9]), T([0.1, 0.25, 0.5, 0.9]))
        self.assertEqual(mse.eval(), 0.0031250009778887033)
        top = nn.TopKCategoricalAccuracy(3)
        top.update(T([[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.0], [0.9, 0.6, 0.2, 0.01, 0.3]]),
                   T([2, 0, 1]))
        self.assertEqual(top.eval(), 0.6666666666666666)
        loss = nn.Loss()
        loss.update(T(0.2))
        loss.update([0.4])
        close(self, loss.eval(), (f32(0.2) + 0.4) / 2)

    def test_lists_one_hot_multilabel_and_accumulation(self):
        m = nn.Accuracy()
        m.update([[0.2, 0.5], [0.3, 0.1]], [[0, 1], [0, 1]])  # one-hot labels from lists
        m.update(T([[0.9, 0.1]]), T([0]))
        self.assertEqual(m.eval(), 2 / 3)
        ml = nn.Accuracy("multilabel")
        ml.update(T([[0.7, 0.2, 0.9], [0.4, 0.6, 0.1]]), T([[1, 0, 1], [0, 0, 0]]))
        self.assertEqual(ml.eval(), 0.5)
        self.assertEqual(nn.Top1CategoricalAccuracy()(self.X, self.Y), 2 / 3)
        self.assertEqual(nn.Top5CategoricalAccuracy().k, 5)
        self.assertEqual(nn.Fbeta(2.0)(self.X, self.Y), [5 * 1 / (4 * 1 + 2), 5 * 1 / (4 * 2 + 1)])
        self.assertIsInstance(nn.get_metric_fn("accuracy"), nn.Accuracy)
        self.assertIn("F1", nn.names())  # (MindSpore's spelling)

    def test_set_indexes_and_errors(self):
        m = nn.Accuracy().set_indexes([1, 0])
        m.update(self.Y, self.X)  # inputs swapped back by the indexes
        self.assertEqual(m.eval(), 2 / 3)
        with self.assertRaises(RuntimeError):
            nn.Accuracy().eval()
        with self.assertRaises(ValueError):
            nn.Accuracy().update(self.X)
        acc = nn.Accuracy()
        acc.update(self.X, self.Y)
        with self.assertRaises(ValueError):
            acc.update(T([[0.1, 0.2, 0.7]]), T([2]))  # the class count changed
        with self.assertRaises(ValueError):
            nn.Accuracy("other")
        self.assertEqual(nn.auc([0.0, 1.0, 2.0], [0.0, 1.0, 0.0]), 1.0)


class ImportPaths(unittest.TestCase):
    # model-zoo imports (BERT: mindspore.nn.learning_rate_schedule; optimizers by module)
    PATHS = {
        "pijit.nn.learning_rate_schedule": ["LearningRateSchedule", "PolynomialDecayLR", "WarmUpLR",
                                            "CosineDecayLR", "ExponentialDecayLR"],
        "pijit.nn.dynamic_lr": ["cosine_decay_lr", "piecewise_constant_lr", "warmup_lr"],
        "pijit.nn.optim.lamb": ["Lamb"], "pijit.nn.optim.rmsprop": ["RMSProp"],
        "pijit.nn.optim.ada_grad": ["Adagrad"], "pijit.nn.optim.lars": ["LARS"],
        "pijit.nn.optim.ftrl": ["FTRL"], "pijit.nn.optim.adam": ["AdamWeightDecay"],
        "pijit.nn.layer.transformer": ["MultiheadAttention", "Transformer"],
        "pijit.nn.metrics": ["Accuracy", "Metric", "Loss"],
    }

    def test_paths_hold_the_same_objects(self):
        import importlib
        for path, names in sorted(self.PATHS.items()):
            mod = importlib.import_module(path)
            for name in names:
                with self.subTest(path=path, name=name):
                    self.assertIs(getattr(mod, name), getattr(nn, name))


if __name__ == "__main__":
    unittest.main()
