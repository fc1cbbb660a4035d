"""The mindspore.nn layers and optimizers of test_nn_more against PyTorch: MultiheadAttention and
the Transformer encoder/decoder layers given torch's weights (masks, batch_first, norm_first,
gelu), InstanceNorm2d, PReLU, Adagrad (torch.optim.Adagrad with eps=0 is MindSpore's rule) and
RMSProp (MindSpore's rule worked with torch tensors: torch's RMSprop starts the mean square at 0
and adds eps outside the root, MindSpore's at 1 and inside), training a small net five steps with
gradients from torch's autograd. Float32 tolerance; where torch is absent each test fails, or
skips under PIJIT_ALLOW_NO_TORCH=1 (requires.py)."""
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


def rand(shape, seed, lo=-1.0, hi=1.0):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype("float32")


def put(param, value):
    param.set_data(pj.Tensor(value.detach().numpy().copy() if hasattr(value, "detach") else value))


def copy_mha(ours, theirs):
    put(ours.in_proj_weight, theirs.in_proj_weight)
    put(ours.in_proj_bias, theirs.in_proj_bias)
    put(ours.out_proj.weight, theirs.out_proj.weight)
    put(ours.out_proj.bias, theirs.out_proj.bias)


def copy_layer(ours, theirs, decoder=False):
    copy_mha(ours.self_attn, theirs.self_attn)
    if decoder:
        copy_mha(ours.multihead_attn, theirs.multihead_attn)
    for a, b in (("dense1", "linear1"), ("dense2", "linear2")):
        put(getattr(ours, a).weight, getattr(theirs, b).weight)
        put(getattr(ours, a).bias, getattr(theirs, b).bias)
    for n in ("norm1", "norm2", "norm3") if decoder else ("norm1", "norm2"):
        put(getattr(ours, n).gamma, getattr(theirs, n).weight)
        put(getattr(ours, n).beta, getattr(theirs, n).bias)


class TorchCase(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)
        torch.manual_seed(0)

    def check(self, got, want, rtol=1e-4, atol=2e-5, msg=""):
        w = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
        g = np.asarray(got.tolist() if hasattr(got, "tolist") else got, dtype=np.float64)
        self.assertEqual(g.shape, w.shape, msg)
        np.testing.assert_allclose(g, w.astype(np.float64), rtol=rtol, atol=atol, err_msg=msg)


class Attention(TorchCase):
    def test_multihead_attention(self):
        for batch_first in (False, True):
            t = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
            m = nn.MultiheadAttention(8, 2, batch_first=batch_first)
            copy_mha(m, t)
            q, k = rand((3, 2, 8), 1), rand((4, 2, 8), 2)  # (L, N, E), (S, N, E)
            if batch_first:
                q, k = q.transpose(1, 0, 2).copy(), k.transpose(1, 0, 2).copy()
            causal = np.triu(np.ones((3, 4), bool), 2)
            kpm = np.array([[False, False, False, True], [False, True, False, False]])
            for kw in ({}, {"attn_mask": causal}, {"key_padding_mask": kpm},
                       {"attn_mask": causal, "key_padding_mask": kpm, "average_attn_weights": False}):
                tk = {a: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for a, v in kw.items()}
                pk = {a: pj.Tensor(v) if isinstance(v, np.ndarray) else v for a, v in kw.items()}
                want = t(torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(k), **tk)
                got = m(pj.Tensor(q), pj.Tensor(k), pj.Tensor(k), **pk)
                msg = "batch_first=%s %s" % (batch_first, sorted(kw))
                self.check(got[0], want[0], msg=msg)
                self.check(got[1], want[1], msg=msg)

    def test_float_mask_and_unbatched(self):
        t = torch.nn.MultiheadAttention(6, 3)
        m = nn.MultiheadAttention(6, 3)
        copy_mha(m, t)
        x, mask = rand((5, 6), 3), rand((5, 5), 4)
        want = t(*(torch.from_numpy(x),) * 3, attn_mask=torch.from_numpy(mask))
        got = m(*(pj.Tensor(x),) * 3, attn_mask=pj.Tensor(mask))
        self.check(got[0], want[0])
        self.check(got[1], want[1])

    def test_encoder_layer(self):
        for norm_first, act in ((False, "relu"), (True, "gelu")):
            t = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=act,
                                                 norm_first=norm_first)
            m = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=act, norm_first=norm_first)
            copy_layer(m, t)
            x = rand((4, 2, 8), 5)
            mask = np.triu(np.ones((4, 4), bool), 1)
            want = t(torch.from_numpy(x), src_mask=torch.from_numpy(mask))
            self.check(m(pj.Tensor(x), src_mask=pj.Tensor(mask)), want, msg="%s %s" % (norm_first, act))
            self.check(pj.jit(m)(pj.Tensor(x), src_mask=pj.Tensor(mask)), want)

    def test_decoder_layer(self):
        t = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        m = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        copy_layer(m, t, decoder=True)
        tgt, mem = rand((2, 3, 8), 6), rand((2, 5, 8), 7)
        mask = np.triu(np.ones((3, 3), bool), 1)
        kpm = np.array([[False] * 5, [False, False, False, True, True]])
        want = t(torch.from_numpy(tgt), torch.from_numpy(mem), tgt_mask=torch.from_numpy(mask),
                 memory_key_padding_mask=torch.from_numpy(kpm))
        got = m(pj.Tensor(tgt), pj.Tensor(mem), tgt_mask=pj.Tensor(mask),
                memory_key_padding_mask=pj.Tensor(kpm))
        self.check(got, want)


class Layers(TorchCase):
    def test_instance_norm(self):
        t = torch.nn.InstanceNorm2d(3, affine=True)
        with torch.no_grad():
            t.weight.copy_(torch.from_numpy(rand((3,), 8, 0.5, 1.5)))
            t.bias.copy_(torch.from_numpy(rand((3,), 9)))
        m = nn.InstanceNorm2d(3)
        put(m.gamma, t.weight)
        put(m.beta, t.bias)
        x = rand((2, 3, 4, 5), 10, -3.0, 3.0)
        self.check(m(pj.Tensor(x)), t(torch.from_numpy(x)))

    def test_prelu(self):
        t = torch.nn.PReLU(3)
        with torch.no_grad():
            t.weight.copy_(torch.from_numpy(rand((3,), 11, 0.0, 0.5)))
        m = nn.PReLU(3, [float(v) for v in t.weight.detach().numpy()])
        x = rand((2, 3, 4), 12)
        self.check(m(pj.Tensor(x)), t(torch.from_numpy(x)))


class Optimizers(TorchCase):
    def train(self, make_ours, torch_step, steps=5):
        w, b = rand((3, 4), 13), rand((3,), 14)
        xs, ys = rand((6, 4), 15), rand((6, 3), 16)
        net = nn.Dense(4, 3)
        put(net.weight, w)
        put(net.bias, b)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), make_ours(net.trainable_params()))
        tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
        for _ in range(steps):
            step(pj.Tensor(xs), pj.Tensor(ys))
            loss = ((torch.from_numpy(xs) @ tw.T + tb - torch.from_numpy(ys)) ** 2).mean()
            gw, gb = torch.autograd.grad(loss, (tw, tb))
            with torch.no_grad():
                torch_step((tw, tb), (gw, gb))
        self.check(net.weight, tw, rtol=1e-4, atol=1e-5)
        self.check(net.bias, tb, rtol=1e-4, atol=1e-5)

    def test_adagrad(self):
        holder = {}

        def torch_step(params, grads):
            if "opt" not in holder:
                holder["opt"] = torch.optim.Adagrad(params, lr=0.1, initial_accumulator_value=0.1, eps=0.0)
            for p, g in zip(params, grads):
                p.grad = g.clone()
            holder["opt"].step()
        self.train(lambda ps: nn.Adagrad(ps, accum=0.1, learning_rate=0.1), torch_step)

    def test_rmsprop(self):
        state = {}

        def torch_step(params, grads):
            for i, (p, g) in enumerate(zip(params, grads)):
                s, a, m = state.get(i, (torch.ones_like(p), torch.zeros_like(p), torch.zeros_like(p)))
                s = 0.9 * s + 0.1 * g * g
                a = 0.9 * a + 0.1 * g
                m = 0.5 * m + 0.05 * g / torch.sqrt(s - a * a + 1e-10)
                p -= m
                state[i] = (s, a, m)
        self.train(lambda ps: nn.RMSProp(ps, 0.05, momentum=0.5, centered=True), torch_step)


if __name__ == "__main__":
    unittest.main()
