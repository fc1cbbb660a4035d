"""Gradients against PyTorch's autograd (Debian's python3-torch on the system Python): every
differentiable op pijit has a rule for, on the same float32 inputs, with the same output
sensitivity, must give torch's gradients within float32 tolerance. Where torch is absent each test fails, or
skips under PIJIT_ALLOW_NO_TORCH=1 (requires.py)."""
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
from pijit import ops
from pijit.ops import nn_functional as NF


def rand(shape, seed, lo=-2.0, hi=2.0):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype("float32")


class GradientsMatchTorch(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)

    def check(self, pfn, tfn, *arrays, rtol=2e-4, atol=2e-5, name=""):
        """d <sens, f(inputs)> / d inputs, pijit (tape) against torch (autograd)."""
        ts = [torch.from_numpy(a.copy()).requires_grad_(True) for a in arrays]
        tout = tfn(*ts)
        sens = rand(tuple(tout.shape), 99)
        tout.backward(torch.from_numpy(sens))
        pin = [pj.Tensor(a) for a in arrays]
        got = ops.GradOperation(get_all=True, sens_param=True)(pfn)(*pin, pj.Tensor(sens))
        got = got if isinstance(got, (tuple, list)) else (got,)
        # one gradient per input, each present: zip alone would pass over a missing one
        self.assertEqual(len(got), len(ts), "%s: %d gradients for %d inputs" % (name, len(got), len(ts)))
        for k, (g, t) in enumerate(zip(got, ts)):
            self.assertIsNotNone(g, "%s: input %d has no gradient" % (name, k))
            self.assertIsNotNone(t.grad, "%s: torch gave input %d no gradient" % (name, k))
            self.assertEqual(tuple(np.asarray(g).shape), tuple(t.grad.shape), "%s: input %d" % (name, k))
            np.testing.assert_allclose(np.asarray(g), t.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg="%s: input %d" % (name, k))

    def test_elementwise(self):
        a, b = rand((3, 4), 1), rand((4,), 2)
        pos = rand((3, 4), 3, 0.2, 3.0)
        for name, p, t in (("add", lambda x, y: x + y, lambda x, y: x + y),
                           ("sub", lambda x, y: x - y, lambda x, y: x - y),
                           ("mul", lambda x, y: x * y, lambda x, y: x * y),
                           ("div", lambda x, y: x / (y * y + 1), lambda x, y: x / (y * y + 1)),
                           ("maximum", ops.maximum, torch.maximum), ("minimum", ops.minimum, torch.minimum)):
            self.check(p, t, a, b, name=name)
        for name, p, t in (("exp", ops.exp, torch.exp), ("tanh", ops.tanh, torch.tanh),
                           ("sigmoid", ops.sigmoid, torch.sigmoid), ("relu", ops.relu, torch.relu),
                           ("silu", ops.silu, TF.silu), ("gelu", ops.gelu, TF.gelu), ("sin", ops.sin, torch.sin),
                           ("cos", ops.cos, torch.cos), ("abs", ops.abs, torch.abs), ("erf", ops.erf, torch.erf),
                           ("softplus", ops.softplus, TF.softplus), ("square", ops.square, torch.square),
                           ("neg", ops.neg, torch.neg), ("expm1", ops.expm1, torch.expm1)):
            self.check(p, t, a, name=name)
        for name, p, t in (("log", ops.log, torch.log), ("sqrt", ops.sqrt, torch.sqrt),
                           ("rsqrt", ops.rsqrt, torch.rsqrt), ("reciprocal", ops.reciprocal, torch.reciprocal),
                           ("log1p", ops.log1p, torch.log1p), ("pow", lambda x: x ** 1.7, lambda x: x ** 1.7)):
            self.check(p, t, pos, name=name)

    def test_reductions_and_softmax(self):
        x = rand((3, 4, 5), 4)
        for name, p, t in (("sum", lambda v: v.sum(axis=(0, 2)), lambda v: v.sum(dim=(0, 2))),
                           ("mean", lambda v: v.mean(axis=1, keep_dims=True), lambda v: v.mean(dim=1, keepdim=True)),
                           ("max", lambda v: v.max(axis=-1), lambda v: v.amax(dim=-1)),
                           ("min", lambda v: v.min(axis=0), lambda v: v.amin(dim=0)),
                           ("var", lambda v: v.var(axis=1, ddof=1), lambda v: v.var(dim=1, unbiased=True)),
                           ("std", lambda v: v.std(axis=2), lambda v: v.std(dim=2, unbiased=False)),
                           ("logsumexp", lambda v: ops.logsumexp(v, 1), lambda v: torch.logsumexp(v, 1)),
                           ("prod", lambda v: v.prod(axis=1), lambda v: torch.prod(v, 1)),
                           ("softmax", lambda v: ops.softmax(v, axis=1), lambda v: torch.softmax(v, 1)),
                           ("log_softmax", lambda v: ops.log_softmax(v, axis=-1), lambda v: torch.log_softmax(v, -1))):
            self.check(p, t, x, name=name)

    def test_shapes_indexing_and_matrices(self):
        x, w, m = rand((3, 4), 5), rand((4, 2), 6), rand((2, 3, 4), 7)
        self.check(lambda a, b: ops.matmul(a, b), lambda a, b: a @ b, x, w, name="matmul")
        self.check(lambda a, b: ops.matmul(a, b), lambda a, b: a @ b, m, w, name="batched matmul")
        self.check(lambda a, b: ops.dense(a, b.T), lambda a, b: TF.linear(a, b.T), x, w, name="dense")
        self.check(lambda a: a.reshape((2, 6)).transpose(1, 0)[1:, ::2], lambda a: a.reshape(2, 6).t()[1:, ::2], x,
                   name="reshape/transpose/slice")
        self.check(lambda a, b: ops.concat((a, b.T), axis=0), lambda a, b: torch.cat((a, b.t()), 0), x, w, name="concat")
        self.check(lambda a: ops.stack((a, a * 2), axis=1), lambda a: torch.stack((a, a * 2), 1), x, name="stack")
        self.check(lambda a: ops.tile(a, (2, 1)), lambda a: a.repeat(2, 1), x, name="tile")
        self.check(lambda a: ops.broadcast_to(a[0], (3, 4)), lambda a: a[0].expand(3, 4), x, name="broadcast_to")

    def test_gathering_and_scans(self):
        x, idx = rand((5, 3), 21), np.array([4, 0, 4, 2, 1, 4], "int64")
        self.check(lambda v: ops.index_select(v, 0, pj.Tensor(idx)),
                   lambda v: torch.index_select(v, 0, torch.from_numpy(idx)), x, name="index_select")
        self.check(lambda w: ops.gather(w, pj.Tensor(idx.reshape(2, 3)), 0),
                   lambda w: w[torch.from_numpy(idx.reshape(2, 3))], x, name="gather")
        for pad in (None, 4):
            self.check(lambda w: NF.embedding(pj.Tensor(idx), w, padding_idx=pad),
                       lambda w: TF.embedding(torch.from_numpy(idx), w, padding_idx=pad), x,
                       name="embedding padding_idx=%s" % pad)
        self.check(lambda v: ops.cumsum(v, 1), lambda v: torch.cumsum(v, 1), x, name="cumsum")
        r, c = np.array([0, 3, 0, 4], "int64"), np.array([2, 1, 2, 0], "int64")
        self.check(lambda v: v[pj.Tensor(r), pj.Tensor(c)], lambda v: v[torch.from_numpy(r), torch.from_numpy(c)], x,
                   name="advanced index")
        self.check(lambda v: ops.sort(v, axis=0, descending=True)[0], lambda v: torch.sort(v, 0, True)[0], x, name="sort")
        self.check(lambda v: ops.topk(v, 2)[0], lambda v: torch.topk(v, 2)[0], x, name="topk")
        z, gg, gb = rand((2, 4, 3, 2), 24), rand((4,), 25), rand((4,), 26)
        self.check(lambda v, g, b: NF.group_norm(v, 2, g, b), lambda v, g, b: TF.group_norm(v, 2, g, b), z, gg, gb,
                   rtol=1e-3, atol=1e-4, name="group_norm")
        self.check(lambda v: NF.pad(v, (1, 2)), lambda v: TF.pad(v, (1, 2)), x, name="pad")
        y, w = rand((2, 4, 3, 3), 22), rand((4, 3, 3, 2), 23)
        self.check(lambda v, w: ops.conv_transpose2d(v, w, stride=(2, 1), padding=1, output_padding=(1, 0), groups=2),
                   lambda v, w: TF.conv_transpose2d(v, w, None, (2, 1), 1, (1, 0), 2), y, w,
                   rtol=1e-3, atol=1e-4, name="conv_transpose2d")

    def test_convolution_pooling_and_norms(self):
        x, w, b = rand((2, 4, 7, 6), 8), rand((6, 2, 3, 3), 9), rand((6,), 10)
        self.check(lambda x, w, b: ops.conv2d(x, w, b, stride=(2, 1), pad_mode="pad", padding=1, dilation=(1, 2), groups=2),
                   lambda x, w, b: TF.conv2d(x, w, b, (2, 1), 1, (1, 2), 2), x, w, b, rtol=1e-3, atol=1e-4,
                   name="conv2d")
        y = rand((2, 3, 6, 7), 11)
        self.check(lambda v: NF.max_pool2d(v, 2, 2), lambda v: TF.max_pool2d(v, 2, 2), y, name="max_pool2d")
        self.check(lambda v: NF.avg_pool2d(v, 3, 2, 1), lambda v: TF.avg_pool2d(v, 3, 2, 1), y, name="avg_pool2d")
        self.check(lambda v: NF.adaptive_avg_pool2d(v, (2, 3)), lambda v: TF.adaptive_avg_pool2d(v, (2, 3)), y,
                   name="adaptive_avg_pool2d")
        g, be = rand((3,), 12, 0.5, 1.5), rand((3,), 13)
        rm, rv = np.zeros(3, "float32"), np.ones(3, "float32")
        self.check(lambda v, g, b: NF.batch_norm(v, pj.Tensor(rm), pj.Tensor(rv), g, b, training=True),
                   lambda v, g, b: TF.batch_norm(v, torch.zeros(3), torch.ones(3), g, b, training=True),
                   y, g, be, rtol=1e-3, atol=1e-4, name="batch_norm")
        g2, b2 = rand((6, 7), 14), rand((6, 7), 15)
        self.check(lambda v, g, b: NF.layer_norm(v, (6, 7), g, b), lambda v, g, b: TF.layer_norm(v, (6, 7), g, b),
                   y, g2, b2, rtol=1e-3, atol=1e-4, name="layer_norm")

    def test_losses(self):
        logits, target = rand((5, 4), 16), np.array([0, 3, 1, 1, 2], "int64")
        w = rand((4,), 17, 0.5, 2.0)

        def both(pfn, tfn, *arrays, **kw):
            self.check(pfn, tfn, *arrays, **kw)
        both(lambda x: NF.cross_entropy(x, pj.Tensor(target)),
             lambda x: TF.cross_entropy(x, torch.from_numpy(target)), logits, name="cross_entropy")
        both(lambda x: NF.cross_entropy(x, pj.Tensor(target), pj.Tensor(w), reduction="sum", label_smoothing=0.1),
             lambda x: TF.cross_entropy(x, torch.from_numpy(target), torch.from_numpy(w), reduction="sum",
                                        label_smoothing=0.1), logits, name="cross_entropy weighted")
        both(lambda x: NF.nll_loss(ops.log_softmax(x, axis=1), pj.Tensor(target), reduction="none"),
             lambda x: TF.nll_loss(torch.log_softmax(x, 1), torch.from_numpy(target), reduction="none"),
             logits, name="nll_loss")
        a, b = rand((3, 4), 18), rand((3, 4), 19)
        both(lambda x, y: NF.mse_loss(x, y), lambda x, y: TF.mse_loss(x, y), a, b, name="mse_loss")
        both(lambda x, y: NF.l1_loss(x, y, "sum"), lambda x, y: TF.l1_loss(x, y, reduction="sum"), a, b, name="l1_loss")
        both(lambda x, y: NF.smooth_l1_loss(x, y, 0.5, "mean"),
             lambda x, y: TF.smooth_l1_loss(x, y, reduction="mean", beta=0.5), a, b, name="smooth_l1_loss")
        labels = (rand((3, 4), 20, 0, 1) > 0.5).astype("float32")
        both(lambda x: NF.binary_cross_entropy_with_logits(x, pj.Tensor(labels)),
             lambda x: TF.binary_cross_entropy_with_logits(x, torch.from_numpy(labels)), a,
             name="binary_cross_entropy_with_logits")
        both(lambda x: NF.binary_cross_entropy(ops.sigmoid(x), pj.Tensor(labels)),
             lambda x: TF.binary_cross_entropy(torch.sigmoid(x), torch.from_numpy(labels)), a,
             name="binary_cross_entropy")


if __name__ == "__main__":
    unittest.main()
