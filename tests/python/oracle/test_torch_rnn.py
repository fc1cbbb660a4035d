"""nn.LSTM, nn.GRU, nn.RNN and their cells against PyTorch's (Debian's python3-torch on the system
Python), with torch's weights copied in by name: MindSpore names its weights as torch does
(weight_ih_l0, bias_hh_l1_reverse, ...) and stacks the gates in the same order (LSTM i, f, g, o;
GRU r, z, n), so a checkpoint maps one to one. Values, gradients (inputs, initial states and
every weight) and a short training run must agree within float32 tolerance, for stacked,
bidirectional and batch_first layers, with and without an initial state; seq_length must give
what torch's packed sequences give (outputs zero past each length, the state of its last valid
step). nn.Pad's mirror modes against numpy.pad, nn.ClipByNorm against its formula in float64.
Where torch is absent each test fails, or skips under PIJIT_ALLOW_NO_TORCH=1 (requires.py)."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_torch

try:
    import numpy as np
    import torch
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import nn, ops

KINDS = (("LSTM", "LSTM", {}), ("GRU", "GRU", {}), ("RNN", "RNN", {}),
         ("RNN_relu", "RNN", {"nonlinearity": "relu"}))


def rand(shape, seed, lo=-1.0, hi=1.0):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype("float32")


def pair(kind, I, H, L, **kw):
    """(pijit layer, torch layer with the pijit layer's weights)."""
    _, cls, extra = [k for k in KINDS if k[0] == kind][0]
    kw.update(extra)
    net = getattr(nn, cls)(I, H, L, **kw)
    tkw = dict(kw)
    tkw["bias"] = tkw.pop("has_bias", True)
    tnet = getattr(torch.nn, cls)(I, H, L, **tkw)
    params = {p.name: p for p in net.get_parameters()}
    with torch.no_grad():
        names = [n for n, _ in tnet.named_parameters()]
        assert sorted(names) == sorted(params), (names, list(params))
        for n, tp in tnet.named_parameters():
            assert tuple(tp.shape) == tuple(params[n].shape), n
            tp.copy_(torch.from_numpy(np.array(np.asarray(params[n]))))
    return net, tnet


class RecurrentLayersMatchTorch(unittest.TestCase):
    I, H, T, B = 6, 9, 7, 4

    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)

    def inputs(self, kind, L, nd, batch_first, with_state, seed):
        x = rand((self.B, self.T, self.I) if batch_first else (self.T, self.B, self.I), seed)
        h0, c0 = rand((L * nd, self.B, self.H), seed + 1), rand((L * nd, self.B, self.H), seed + 2)
        if not with_state:
            return x, None, None
        if kind == "LSTM":
            return x, (pj.Tensor(h0), pj.Tensor(c0)), (torch.from_numpy(h0), torch.from_numpy(c0))
        return x, pj.Tensor(h0), torch.from_numpy(h0)

    def test_values_and_gradients(self):
        seed = 0
        for kind, _, _ in KINDS:
            for L, bi, batch_first, with_state in ((1, False, False, False), (2, False, True, True),
                                                   (1, True, True, True), (3, True, False, False)):
                seed += 10
                what = "%s L=%d bi=%s batch_first=%s state=%s" % (kind, L, bi, batch_first, with_state)
                pj.set_seed(seed)
                net, tnet = pair(kind, self.I, self.H, L, batch_first=batch_first, bidirectional=bi)
                nd = 2 if bi else 1
                x, hx, thx = self.inputs(kind, L, nd, batch_first, with_state, seed)
                tx = torch.from_numpy(x.copy()).requires_grad_(True)
                if thx is not None:
                    thx = tuple(t.requires_grad_(True) for t in thx) if kind == "LSTM" else thx.requires_grad_(True)
                tout, thn = tnet(tx, thx)
                out, hn = net(pj.Tensor(x), hx)
                np.testing.assert_allclose(np.asarray(out), tout.detach().numpy(), rtol=1e-5, atol=2e-6, err_msg=what)
                pairs = [(hn[0], thn[0]), (hn[1], thn[1])] if kind == "LSTM" else [(hn, thn)]
                for a, b in pairs:
                    np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=1e-5, atol=2e-6, err_msg=what)
                # gradients of <wo, output> + <wh, h_n> (+ <wc, c_n>)
                wo = rand(tuple(tout.shape), seed + 3)
                wh = [rand(tuple(b.shape), seed + 4 + k) for k, (_, b) in enumerate(pairs)]
                tloss = (tout * torch.from_numpy(wo)).sum() + sum((b * torch.from_numpy(w)).sum()
                                                                  for (_, b), w in zip(pairs, wh))
                tloss.backward()
                weights = pj.ParameterTuple(net.trainable_params())
                lstm = kind == "LSTM"

                def loss(xv, *state):
                    o, h = net(xv, (tuple(state) if lstm else state[0]) if state else None)
                    hs_ = (h[0], h[1]) if lstm else (h,)
                    total = (o * pj.Tensor(wo)).sum()
                    for v, w in zip(hs_, wh):
                        total = total + (v * pj.Tensor(w)).sum()
                    return total
                state_in = (tuple(hx) if lstm else (hx,)) if with_state else ()
                g_in, g_w = ops.GradOperation(get_all=True, get_by_list=True)(loss, weights)(pj.Tensor(x), *state_in)
                np.testing.assert_allclose(np.asarray(g_in[0]), tx.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=what + " dx")
                if with_state:
                    tstates = thx if lstm else (thx,)
                    for k, t in enumerate(tstates):
                        np.testing.assert_allclose(np.asarray(g_in[1 + k]), t.grad.numpy(), rtol=1e-4, atol=1e-5,
                                                   err_msg="%s d state %d" % (what, k))
                tgrads = dict(tnet.named_parameters())
                self.assertEqual(len(g_w), len(tgrads))
                for p, g in zip(weights, g_w):
                    np.testing.assert_allclose(np.asarray(g), tgrads[p.name].grad.numpy(), rtol=1e-4, atol=1e-5,
                                               err_msg="%s d %s" % (what, p.name))

    def test_seq_length_is_torchs_packed_sequence(self):
        lengths = [7, 3, 5, 1]
        seed = 500
        for kind, _, _ in KINDS:
            for bi in (False, True):
                seed += 10
                pj.set_seed(seed)
                net, tnet = pair(kind, self.I, self.H, 2, bidirectional=bi, batch_first=True)
                x, hx, thx = self.inputs(kind, 2, 2 if bi else 1, True, True, seed)
                packed = torch.nn.utils.rnn.pack_padded_sequence(torch.from_numpy(x), torch.tensor(lengths),
                                                                 batch_first=True, enforce_sorted=False)
                tpacked, thn = tnet(packed, thx)
                tout, _ = torch.nn.utils.rnn.pad_packed_sequence(tpacked, batch_first=True, total_length=self.T)
                out, hn = net(pj.Tensor(x), hx, pj.Tensor(lengths, dtype=pj.int32))
                what = "%s bi=%s" % (kind, bi)
                np.testing.assert_allclose(np.asarray(out), tout.detach().numpy(), rtol=1e-5, atol=2e-6, err_msg=what)
                if kind == "LSTM":
                    for a, b in zip(hn, thn):
                        np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=1e-5, atol=2e-6, err_msg=what)
                else:
                    np.testing.assert_allclose(np.asarray(hn), thn.detach().numpy(), rtol=1e-5, atol=2e-6, err_msg=what)

    def test_cells(self):
        x, h, c = rand((5, self.I), 1), rand((5, self.H), 2), rand((5, self.H), 3)
        for name, kw in (("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                         ("GRUCell", {"has_bias": False})):
            pj.set_seed(4)
            cell = getattr(nn, name)(self.I, self.H, **kw)
            tkw = dict(kw)
            tkw["bias"] = tkw.pop("has_bias", True)
            tcell = getattr(torch.nn, name)(self.I, self.H, **tkw)
            with torch.no_grad():
                params = cell.parameters_dict()
                for n, tp in tcell.named_parameters():
                    tp.copy_(torch.from_numpy(np.array(np.asarray(params[n]))))
            if name == "LSTMCell":
                got = cell(pj.Tensor(x), (pj.Tensor(h), pj.Tensor(c)))
                want = tcell(torch.from_numpy(x), (torch.from_numpy(h), torch.from_numpy(c)))
                for a, b in zip(got, want):
                    np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=1e-5, atol=2e-6, err_msg=name)
            else:
                got = cell(pj.Tensor(x), pj.Tensor(h))
                want = tcell(torch.from_numpy(x), torch.from_numpy(h))
                np.testing.assert_allclose(np.asarray(got), want.detach().numpy(), rtol=1e-5, atol=2e-6,
                                           err_msg="%s %s" % (name, kw))

    def test_training_follows_torch(self):
        class Head(nn.Cell):
            def __init__(self, kind):
                super().__init__()
                self.rnn = getattr(nn, kind)(self_I, 12, 2, batch_first=True, bidirectional=True)
                self.fc = nn.Dense(24, 3)

            def construct(self, x):
                out, _ = self.rnn(x)
                return self.fc(out[:, -1, :])

        class THead(torch.nn.Module):
            def __init__(self, kind):
                super().__init__()
                self.rnn = getattr(torch.nn, kind)(self_I, 12, 2, batch_first=True, bidirectional=True)
                self.fc = torch.nn.Linear(24, 3)

            def forward(self, x):
                out, _ = self.rnn(x)
                return self.fc(out[:, -1, :])

        self_I = self.I
        rs = np.random.RandomState(8)
        x = rs.standard_normal((16, self.T, self.I)).astype("float32")
        y = (x[:, :, 0].sum(axis=1) > 0).astype("int64") + (x[:, :, 1].sum(axis=1) > 1).astype("int64")
        for kind in ("LSTM", "GRU", "RNN"):
            pj.set_seed(21)
            net, tnet = Head(kind), THead(kind)
            tparams = dict(tnet.named_parameters())
            with torch.no_grad():
                for p in net.get_parameters():
                    tparams[p.name].copy_(torch.from_numpy(np.array(np.asarray(p))))
            step = pj.jit(nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                                              nn.SGD(net.trainable_params(), 0.5, momentum=0.9)))
            topt = torch.optim.SGD(tnet.parameters(), lr=0.5, momentum=0.9)
            losses, tlosses = [], []
            for _ in range(20):
                losses.append(float(step(pj.Tensor(x), pj.Tensor(y))))
                topt.zero_grad()
                tl = torch.nn.functional.cross_entropy(tnet(torch.from_numpy(x)), torch.from_numpy(y))
                tl.backward()
                topt.step()
                tlosses.append(float(tl))
            np.testing.assert_allclose(losses, tlosses, rtol=2e-4, atol=2e-5, err_msg="%s loss curve" % kind)
            for p in net.trainable_params():
                np.testing.assert_allclose(np.asarray(p), tparams[p.name].detach().numpy(), rtol=1e-3, atol=1e-4,
                                           err_msg="%s %s" % (kind, p.name))
            self.assertLess(losses[-1], 0.7 * losses[0], (kind, losses))


class PadAndClipMatchNumpy(unittest.TestCase):
    def test_pad_modes_against_numpy_pad(self):
        x = rand((2, 3, 4, 5), 3)
        for mode, np_mode in (("CONSTANT", "constant"), ("REFLECT", "reflect"), ("SYMMETRIC", "symmetric")):
            for paddings in (((0, 0), (1, 2), (3, 0), (4, 4)), ((1, 1), (2, 2), (0, 3), (2, 1))):
                if mode == "REFLECT":
                    paddings = tuple((min(a, n - 1), min(b, n - 1)) for (a, b), n in zip(paddings, x.shape))
                got = np.asarray(nn.Pad(paddings, mode)(pj.Tensor(x)))
                np.testing.assert_array_equal(got, np.pad(x, paddings, mode=np_mode), err_msg="%s %s" % (mode, paddings))

    def test_clip_by_norm_formula(self):
        x = rand((3, 4, 5), 6, -3, 3)
        for axis in (None, 0, (1, 2), -1):
            for c in (0.5, 4.0, 100.0):
                got = np.asarray(nn.ClipByNorm(axis)(pj.Tensor(x), pj.Tensor(np.float32(c))))
                ax = tuple(range(3)) if axis is None else axis
                norm = np.sqrt((x.astype("float64") ** 2).sum(axis=ax, keepdims=True))
                np.testing.assert_allclose(got, x * c / np.maximum(norm, c), rtol=2e-6, atol=1e-7,
                                           err_msg="axis=%s clip=%s" % (axis, c))


if __name__ == "__main__":
    unittest.main()
