"""mindspore.mint (pijit.mint) against PyTorch (Debian's python3-torch on the system Python):
functions, functional forms, layers given the same weights, and several optimizer steps, on random
float32 data, must agree with torch within float32 tolerance. Where torch is absent each test
fails, or skips under PIJIT_ALLOW_NO_TORCH=1 (requires.py)."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_torch

try:
    import numpy as np
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import mint
from pijit.mint.nn import functional as F


def rand(shape, seed, lo=-2.0, hi=2.0):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype("float32")


class TorchCase(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)

    def check(self, got, want, rtol=1e-4, atol=1e-5, msg=""):
        if isinstance(want, (tuple, list)):
            self.assertEqual(len(got), len(want), msg)
            for g, w in zip(got, want):
                self.check(g, w, rtol, atol, msg)
            return
        w = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
        g = np.asarray(got)
        self.assertEqual(g.shape, w.shape, msg)
        self.assertEqual(str(g.dtype), str(w.dtype), msg)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=msg)


class Functions(TorchCase):
    def test_elementwise_and_reductions(self):
        a, b = rand((4, 5), 1), rand((4, 5), 2, 0.5, 2.0)
        pa, pb, ta, tb = pj.Tensor(a), pj.Tensor(b), torch.from_numpy(a), torch.from_numpy(b)
        for name in ("add", "sub"):
            self.check(getattr(mint, name)(pa, pb, alpha=0.5), getattr(torch, name)(ta, tb, alpha=0.5), msg=name)
        for name in ("mul", "div", "maximum", "minimum", "remainder", "fmod", "pow"):
            x, y = (pb, pa) if name == "pow" else (pa, pb)
            tx, ty = (tb, ta) if name == "pow" else (ta, tb)
            self.check(getattr(mint, name)(x, y), getattr(torch, name)(tx, ty), msg=name)
        for name in ("abs", "neg", "exp", "tanh", "sigmoid", "erf", "floor", "ceil", "trunc", "sign",
                     "square", "sin", "cos"):
            self.check(getattr(mint, name)(pa), getattr(torch, name)(ta), msg=name)
        for name in ("sqrt", "rsqrt", "log", "log2", "log10", "reciprocal", "log1p"):
            self.check(getattr(mint, name)(pb), getattr(torch, name)(tb), msg=name)
        for dim in (None, 0, 1):
            kw = {} if dim is None else {"dim": dim}
            self.check(mint.sum(pa, **kw), torch.sum(ta, **kw), msg="sum %s" % dim)
            self.check(mint.mean(pa, **kw), torch.mean(ta, **kw), msg="mean %s" % dim)
            self.check(mint.var(pa, **kw), torch.var(ta, **kw), msg="var %s" % dim)
            self.check(mint.std(pa, **kw), torch.std(ta, **kw), msg="std %s" % dim)
            self.check(mint.argmax(pa, **kw), torch.argmax(ta, **kw), msg="argmax %s" % dim)
            if dim is not None:
                self.check(mint.max(pa, dim, True), tuple(torch.max(ta, dim, True)), msg="max")
                self.check(mint.min(pa, dim), tuple(torch.min(ta, dim)), msg="min")
                self.check(mint.logsumexp(pa, dim), torch.logsumexp(ta, dim), msg="logsumexp")
                self.check(mint.cumsum(pa, dim), torch.cumsum(ta, dim), msg="cumsum")
                self.check(mint.prod(pb, dim), torch.prod(tb, dim), msg="prod")
                self.check(mint.sort(pa, dim=dim, descending=True),
                           tuple(torch.sort(ta, dim=dim, descending=True)), msg="sort")
                self.check(mint.topk(pa, 3, dim), tuple(torch.topk(ta, 3, dim)), msg="topk")

    def test_products_and_indexing(self):
        a, b = rand((3, 4, 5), 3), rand((3, 5, 2), 4)
        pa, pb, ta, tb = pj.Tensor(a), pj.Tensor(b), torch.from_numpy(a), torch.from_numpy(b)
        self.check(mint.bmm(pa, pb), torch.bmm(ta, tb))
        c = rand((3, 4, 2), 5)
        self.check(mint.baddbmm(pj.Tensor(c), pa, pb, beta=0.5, alpha=1.5),
                   torch.baddbmm(torch.from_numpy(c), ta, tb, beta=0.5, alpha=1.5))
        self.check(mint.matmul(pa, pb), torch.matmul(ta, tb))
        idx = np.random.RandomState(6).randint(0, 5, size=(3, 4, 3))
        self.check(mint.gather(pa, 2, pj.Tensor(idx)), torch.gather(ta, 2, torch.from_numpy(idx)))
        idx1 = np.random.RandomState(7).randint(0, 4, size=(3, 2, 5))
        self.check(mint.gather(pa, 1, pj.Tensor(idx1)), torch.gather(ta, 1, torch.from_numpy(idx1)))
        sel = np.array([4, 0, 2])
        self.check(mint.index_select(pa, 2, pj.Tensor(sel)), torch.index_select(ta, 2, torch.from_numpy(sel)))
        self.check(mint.narrow(pa, 1, 1, 2), torch.narrow(ta, 1, 1, 2))
        self.check(mint.chunk(pa, 2, 2), torch.chunk(ta, 2, 2))
        self.check(mint.split(pa, [1, 3], 1), torch.split(ta, [1, 3], 1))
        self.check(mint.flip(pa, (0, 2)), torch.flip(ta, (0, 2)))
        self.check(mint.roll(pa, (2, -1), (1, 2)), torch.roll(ta, (2, -1), (1, 2)))
        self.check(mint.tril(pa, -1), torch.tril(ta, -1))
        self.check(mint.triu(pa, 2), torch.triu(ta, 2))
        self.check(mint.repeat_interleave(pa, 2, 1), torch.repeat_interleave(ta, 2, 1))
        self.check(mint.flatten(pa, 1), torch.flatten(ta, 1))
        self.check(mint.nonzero(pa > 1), torch.nonzero(ta > 1))


class Functional(TorchCase):
    def test_activations_and_losses(self):
        x = rand((6, 7), 10, -4.0, 4.0)
        px, tx = pj.Tensor(x), torch.from_numpy(x)
        for name in ("relu", "relu6", "silu", "sigmoid", "tanh", "hardswish", "hardsigmoid",
                     "hardtanh", "mish", "logsigmoid", "elu", "leaky_relu", "softplus"):
            self.check(getattr(F, name)(px), getattr(TF, name)(tx), msg=name)
        self.check(F.gelu(px), TF.gelu(tx))
        self.check(F.gelu(px, approximate="tanh"), TF.gelu(tx, approximate="tanh"))
        self.check(F.softmax(px, 0), TF.softmax(tx, 0))
        self.check(F.log_softmax(px, 1), TF.log_softmax(tx, 1))
        self.check(F.normalize(px), TF.normalize(tx))
        y = np.random.RandomState(11).randint(0, 7, size=(6,))
        py, ty = pj.Tensor(y), torch.from_numpy(y)
        for red in ("mean", "sum", "none"):
            self.check(F.cross_entropy(px, py, reduction=red), TF.cross_entropy(tx, ty, reduction=red), msg=red)
            self.check(F.cross_entropy(px, py, reduction=red, label_smoothing=0.2),
                       TF.cross_entropy(tx, ty, reduction=red, label_smoothing=0.2), msg=red)
            self.check(F.nll_loss(F.log_softmax(px, 1), py, reduction=red),
                       TF.nll_loss(TF.log_softmax(tx, 1), ty, reduction=red), msg=red)
            z = rand((6, 7), 12)
            pz, tz = pj.Tensor(z), torch.from_numpy(z)
            self.check(F.mse_loss(px, pz, red), TF.mse_loss(tx, tz, reduction=red), msg=red)
            self.check(F.l1_loss(px, pz, red), TF.l1_loss(tx, tz, reduction=red), msg=red)
            self.check(F.smooth_l1_loss(px, pz, red, 0.5), TF.smooth_l1_loss(tx, tz, reduction=red, beta=0.5), msg=red)
            p = rand((6, 7), 13, 0.05, 0.95)
            q = rand((6, 7), 14, 0.0, 1.0)
            self.check(F.binary_cross_entropy(pj.Tensor(p), pj.Tensor(q), reduction=red),
                       TF.binary_cross_entropy(torch.from_numpy(p), torch.from_numpy(q), reduction=red), msg=red)
            self.check(F.binary_cross_entropy_with_logits(px, pj.Tensor(q), reduction=red),
                       TF.binary_cross_entropy_with_logits(tx, torch.from_numpy(q), reduction=red), msg=red)

    def test_convolution_pooling_padding(self):
        x = rand((2, 3, 9, 8), 20)
        w = rand((4, 3, 3, 3), 21)
        bias = rand((4,), 22)
        px, tx, pw, tw = pj.Tensor(x), torch.from_numpy(x), pj.Tensor(w), torch.from_numpy(w)
        for stride, padding, dilation in ((1, 0, 1), (2, 1, 1), (1, (2, 1), 2), (1, "same", 1), (2, "valid", 1)):
            self.check(F.conv2d(px, pw, pj.Tensor(bias), stride, padding, dilation),
                       TF.conv2d(tx, tw, torch.from_numpy(bias), stride, padding, dilation),
                       rtol=1e-4, atol=1e-4, msg="%s %s %s" % (stride, padding, dilation))
        for k, s, p in ((2, None, 0), (3, 2, 1), (3, 1, 1)):
            self.check(F.max_pool2d(px, k, s, p), TF.max_pool2d(tx, k, s, p), msg="max %s" % k)
            self.check(F.avg_pool2d(px, k, s, p), TF.avg_pool2d(tx, k, s, p), msg="avg %s" % k)
            self.check(F.avg_pool2d(px, k, s, p, count_include_pad=False),
                       TF.avg_pool2d(tx, k, s, p, count_include_pad=False), msg="avg %s" % k)
        self.check(F.adaptive_avg_pool2d(px, (3, 4)), TF.adaptive_avg_pool2d(tx, (3, 4)))
        for mode in ("constant", "reflect", "replicate", "circular"):
            self.check(F.pad(px, (1, 2, 2, 1), mode=mode), TF.pad(tx, (1, 2, 2, 1), mode=mode), msg=mode)
        self.check(F.interpolate(px, scale_factor=2), TF.interpolate(tx, scale_factor=2))
        self.check(F.interpolate(px, size=(5, 11), mode="bilinear", align_corners=False),
                   TF.interpolate(tx, size=(5, 11), mode="bilinear", align_corners=False))
        self.check(F.layer_norm(px, (9, 8)), TF.layer_norm(tx, (9, 8)), atol=1e-4)
        self.check(F.group_norm(px, 3), TF.group_norm(tx, 3), atol=1e-4)
        rm, rv = np.zeros(3, "float32"), np.ones(3, "float32")
        prm, prv, trm, trv = pj.Tensor(rm), pj.Tensor(rv), torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
        self.check(F.batch_norm(px, prm, prv, training=True), TF.batch_norm(tx, trm, trv, training=True), atol=1e-4)
        self.check(prm, trm)
        self.check(prv, trv)


class Layers(TorchCase):
    def copy_weights(self, mine, theirs):
        for (name, p) in mine.parameters_and_names():
            tp = dict(theirs.named_parameters()).get(name.split(".")[-1])
            if tp is not None:
                p.set_data(pj.Tensor(tp.detach().numpy()))

    def test_layers_with_the_same_weights(self):
        torch.manual_seed(0)
        x = rand((2, 3, 8, 8), 30)
        px, tx = pj.Tensor(x), torch.from_numpy(x)
        pairs = [(mint.nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(3, 4, 3, padding=1)),
                 (mint.nn.Conv2d(3, 6, 3, 2, 1, groups=3, padding_mode="reflect"),
                  torch.nn.Conv2d(3, 6, 3, 2, 1, groups=3, padding_mode="reflect")),
                 (mint.nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)),
                 (mint.nn.GroupNorm(3, 3), torch.nn.GroupNorm(3, 3)),
                 (mint.nn.LayerNorm((8, 8)), torch.nn.LayerNorm((8, 8))),
                 (mint.nn.MaxPool2d(3, 2, 1), torch.nn.MaxPool2d(3, 2, 1)),
                 (mint.nn.AvgPool2d(2), torch.nn.AvgPool2d(2)),
                 (mint.nn.Upsample(scale_factor=2), torch.nn.Upsample(scale_factor=2))]
        for mine, theirs in pairs:
            self.copy_weights(mine, theirs)
            mine.set_train(True)
            theirs.train()
            self.check(mine(px), theirs(tx), atol=1e-4, msg=type(mine).__name__)
        bn_m, bn_t = pairs[2]
        self.check(bn_m.running_mean, bn_t.running_mean)
        self.check(bn_m.running_var, bn_t.running_var)
        v = rand((5, 6), 31)
        lin, tlin = mint.nn.Linear(6, 4), torch.nn.Linear(6, 4)
        self.copy_weights(lin, tlin)
        self.check(lin(pj.Tensor(v)), tlin(torch.from_numpy(v)))
        emb, temb = mint.nn.Embedding(10, 3, padding_idx=2), torch.nn.Embedding(10, 3, padding_idx=2)
        self.copy_weights(emb, temb)
        ids = np.array([[1, 2, 9], [0, 2, 5]])
        self.check(emb(pj.Tensor(ids)), temb(torch.from_numpy(ids)))


class Optimizers(TorchCase):
    def run_both(self, make_mint, make_torch, steps=5):
        w0 = [rand((4, 3), 40), rand((3,), 41)]
        grads = [[rand(w.shape, 50 + 10 * s + i) for i, w in enumerate(w0)] for s in range(steps)]
        mp = [pj.Parameter(pj.Tensor(w), name="p%d" % i) for i, w in enumerate(w0)]
        tp = [torch.nn.Parameter(torch.from_numpy(w.copy())) for w in w0]
        mo, to = make_mint(mp), make_torch(tp)
        for g in grads:
            mo(tuple(pj.Tensor(x) for x in g))
            for p, x in zip(tp, g):
                p.grad = torch.from_numpy(x)
            to.step()
        return mp, tp

    def test_updates_match_torch(self):
        cases = [
            ("AdamW", dict(lr=0.01)), ("AdamW", dict(lr=0.05, betas=(0.8, 0.95), weight_decay=0.3)),
            ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True)),
            ("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.02, weight_decay=0.1, amsgrad=True)),
            ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01)),
            ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
        ]
        for name, kw in cases:
            mp, tp = self.run_both(lambda ps: getattr(mint.optim, name)(ps, **kw),
                                   lambda ps: getattr(torch.optim, name)(ps, **kw))
            for a, b in zip(mp, tp):
                self.check(a, b, rtol=1e-4, atol=1e-5, msg="%s %s" % (name, kw))

    def test_parameter_groups_match_torch(self):
        mp, tp = self.run_both(
            lambda ps: mint.optim.AdamW([{"params": [ps[0]], "lr": 0.05, "weight_decay": 0.0},
                                         {"params": [ps[1]]}], lr=0.01),
            lambda ps: torch.optim.AdamW([{"params": [ps[0]], "lr": 0.05, "weight_decay": 0.0},
                                          {"params": [ps[1]]}], lr=0.01))
        for a, b in zip(mp, tp):
            self.check(a, b, rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
