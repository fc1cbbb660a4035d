"""pijit/ops/ops_rest.py (issue 42) against PyTorch: the fixed-kernel fractional max pooling
(ops.fractional_max_pool2d/3d, FractionalMaxPoolWithFixedKsize, FractionalMaxPool3DWithFixedKsize,
nn.FractionalMaxPool2d/3d) with the same random samples as torch's fractional_max_pool2d/3d:
values, indices and gradients, float32 and float64, batched and unbatched; and ops.LSTM (the
flat-weight primitive) against torch.nn.LSTM with the weights packed in MindSpore's CPU layout:
outputs, final states and gradients, stacked, bidirectional, without bias, with a projection."""
import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
import unittest


try:
    import numpy as np
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import nn, ops


from torch_case import T, TorchCase


class Case(TorchCase):
    SEED = 5


class FractionalMaxPool(Case):
    def torch_pool(self, nd, x, k, out, samples):
        fn = TF.fractional_max_pool2d if nd == 2 else TF.fractional_max_pool3d
        xt = torch.tensor(x, requires_grad=True)
        y, idx = fn(xt, k, output_size=out, return_indices=True, _random_samples=torch.tensor(samples))
        w = torch.tensor(self.rs.randn(*y.shape).astype(x.dtype))
        (y * w).sum().backward()
        return y, idx, xt.grad, w.numpy()

    def check(self, nd, shape, k, out, dtype, unbatched=False):
        x = self.rs.randn(*shape).astype(dtype)
        n, c = (1, shape[0]) if unbatched else shape[:2]
        samples = self.rs.rand(n, c, nd).astype(dtype)
        y_t, idx_t, g_t, w = self.torch_pool(nd, x, k, out, samples)
        fn = ops.fractional_max_pool2d if nd == 2 else ops.fractional_max_pool3d
        y, idx = fn(T(x), k, output_size=out, return_indices=True, _random_samples=T(samples))
        self.close(y, y_t, msg="values %s" % (shape,))
        np.testing.assert_array_equal(idx.asnumpy(), idx_t.numpy())
        self.assertEqual(idx.dtype, pj.int64)
        g = pj.grad(lambda xx: (fn(xx, k, output_size=out, _random_samples=T(samples)) * T(w)).sum())(T(x))
        self.close(g, g_t, msg="gradient %s" % (shape,))

    def test_2d(self):
        for dtype in (np.float32, np.float64):
            self.check(2, (2, 3, 9, 11), 2, (5, 4), dtype)
            self.check(2, (1, 2, 7, 8), (3, 2), (4, 6), dtype)   # overlapping windows
            self.check(2, (2, 1, 6, 5), 2, (1, 1), dtype)        # one window per dim
            self.check(2, (3, 8, 8), 3, (5, 5), dtype, unbatched=True)

    def test_3d(self):
        for dtype in (np.float32, np.float64):
            self.check(3, (2, 2, 6, 7, 8), 2, (3, 4, 5), dtype)
            self.check(3, (2, 6, 5, 6), (2, 2, 2), (4, 3, 3), dtype, unbatched=True)

    def test_output_ratio_and_cells(self):
        x = self.rs.randn(2, 3, 10, 9).astype(np.float32)
        s = self.rs.rand(2, 3, 2).astype(np.float32)
        y_t, idx_t = TF.fractional_max_pool2d(torch.tensor(x), 3, output_ratio=(0.5, 0.7), return_indices=True,
                                              _random_samples=torch.tensor(s))
        cell = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.7), return_indices=True, _random_samples=T(s))
        y, idx = cell(T(x))
        self.close(y, y_t)
        np.testing.assert_array_equal(idx.asnumpy(), idx_t.numpy())
        x3 = self.rs.randn(1, 2, 6, 7, 8).astype(np.float32)
        s3 = self.rs.rand(1, 2, 3).astype(np.float32)
        y3_t = TF.fractional_max_pool3d(torch.tensor(x3), 2, output_size=(3, 4, 5), _random_samples=torch.tensor(s3))
        self.close(nn.FractionalMaxPool3d(2, output_size=(3, 4, 5), _random_samples=T(s3))(T(x3)), y3_t)

    def test_primitives(self):
        x = self.rs.randn(2, 2, 8, 9).astype(np.float32)
        s = self.rs.rand(2, 2, 2).astype(np.float32)
        y_t, idx_t = TF.fractional_max_pool2d(torch.tensor(x), (2, 3), output_size=(5, 4), return_indices=True,
                                              _random_samples=torch.tensor(s))
        y, idx = ops.FractionalMaxPoolWithFixedKsize((2, 3), (5, 4))(T(x), T(s))
        self.close(y, y_t)
        np.testing.assert_array_equal(idx.asnumpy(), idx_t.numpy())
        x3 = self.rs.randn(2, 3, 5, 6, 7).astype(np.float32)
        s3 = self.rs.rand(2, 3, 3).astype(np.float32)
        y3_t, i3_t = TF.fractional_max_pool3d(torch.tensor(x3), 2, output_size=(3, 3, 4), return_indices=True,
                                              _random_samples=torch.tensor(s3))
        y3, i3 = ops.FractionalMaxPool3DWithFixedKsize(2, (3, 3, 4))(T(x3), T(s3))
        self.close(y3, y3_t)
        np.testing.assert_array_equal(i3.asnumpy(), i3_t.numpy())
        # channels-last layout: the same pooling, transposed
        y4, i4 = ops.FractionalMaxPool3DWithFixedKsize(2, (3, 3, 4), "NDHWC")(T(x3.transpose(0, 2, 3, 4, 1)), T(s3))
        self.close(y4, y3_t.numpy().transpose(0, 2, 3, 4, 1))
        np.testing.assert_array_equal(i4.asnumpy(), i3_t.numpy().transpose(0, 2, 3, 4, 1))

    def test_jit_equals_eager(self):
        x = T(self.rs.randn(2, 3, 9, 9).astype(np.float32))
        s = T(self.rs.rand(2, 3, 2).astype(np.float32))

        def f(a, b):
            return ops.fractional_max_pool2d(a, 2, output_size=(4, 5), return_indices=True, _random_samples=b)
        e = f(x, s)
        j = pj.jit(f)(x, s)
        np.testing.assert_array_equal(j[0].asnumpy(), e[0].asnumpy())
        np.testing.assert_array_equal(j[1].asnumpy(), e[1].asnumpy())


def pack_ms_cpu(mod, num_layers, bidirectional, has_bias, proj):
    """torch.nn.LSTM's weights in MindSpore's CPU flat layout: every W_ih, every W_hh, every W_hr,
    then one bias b_ih + b_hh per (layer, direction)."""
    keys = [(l, "_reverse" if d else "") for l in range(num_layers) for d in range(2 if bidirectional else 1)]
    parts = [getattr(mod, "weight_ih_l%d%s" % k).detach().numpy().ravel() for k in keys]
    parts += [getattr(mod, "weight_hh_l%d%s" % k).detach().numpy().ravel() for k in keys]
    if proj:
        parts += [getattr(mod, "weight_hr_l%d%s" % k).detach().numpy().ravel() for k in keys]
    if has_bias:
        parts += [(getattr(mod, "bias_ih_l%d%s" % k) + getattr(mod, "bias_hh_l%d%s" % k)).detach().numpy()
                  for k in keys]
    return np.concatenate(parts).reshape(-1, 1, 1)


class LSTMPrimitive(Case):
    def check(self, inp, hid, layers, bias, bidir, proj=0, dtype=np.float32, rtol=1e-5, atol=1e-6):
        torch.manual_seed(3)
        mod = torch.nn.LSTM(inp, hid, layers, bias=bias, bidirectional=bidir, proj_size=proj)
        if dtype == np.float64:
            mod = mod.double()
        D = 2 if bidir else 1
        R = proj or hid
        Tn, B = 5, 3
        x = self.rs.randn(Tn, B, inp).astype(dtype)
        h0 = self.rs.randn(layers * D, B, R).astype(dtype)
        c0 = self.rs.randn(layers * D, B, hid).astype(dtype)
        xt = torch.tensor(x, requires_grad=True)
        out_t, (h_t, c_t) = mod(xt, (torch.tensor(h0), torch.tensor(c0)))
        wo = self.rs.randn(*out_t.shape).astype(dtype)
        (out_t * torch.tensor(wo)).sum().backward()
        w = pack_ms_cpu(mod, layers, bidir, bias, proj).astype(dtype)
        prim = ops.LSTM(inp, hid, layers, bias, bidir, 0.0, proj)
        self.assertEqual(prim.weight_size(), w.size)
        out, h, c, reserve, state = prim(T(x), T(h0), T(c0), T(w))
        msg = "LSTM(%d, %d, %d, bias=%s, bidir=%s, proj=%d)" % (inp, hid, layers, bias, bidir, proj)
        self.close(out, out_t, rtol, atol, msg)
        self.close(h, h_t, rtol, atol, msg)
        self.close(c, c_t, rtol, atol, msg)
        gx, gw = pj.grad(lambda a, b: (prim(a, T(h0), T(c0), b)[0] * T(wo)).sum(), grad_position=(0, 1))(T(x), T(w))
        self.close(gx, xt.grad, rtol * 10, atol * 10, msg + " dx")
        # d/dW_ih of layer 0 (forward direction) sits at the start of w
        gw_ih = mod.weight_ih_l0.grad.numpy().ravel()
        self.close(gw.asnumpy().ravel()[:gw_ih.size], gw_ih, rtol * 10, atol * 10, msg + " dW_ih")
        if bias:  # the summed bias's gradient is each of torch's two biases' gradient
            n_b = 4 * hid * layers * D
            self.close(gw.asnumpy().ravel()[-n_b:][:4 * hid], mod.bias_ih_l0.grad.numpy(), rtol * 10, atol * 10,
                       msg + " db")

    def test_values_and_grads(self):
        self.check(4, 6, 1, True, False)
        self.check(4, 6, 2, True, True)
        self.check(3, 5, 2, False, False)
        self.check(4, 6, 2, True, True, dtype=np.float64, rtol=1e-10, atol=1e-12)

    def test_projection(self):
        self.check(4, 6, 2, True, True, proj=3)

    def test_jit_equals_eager(self):
        prim = ops.LSTM(3, 4, 2, True, True, 0.0)
        x = T(self.rs.randn(4, 2, 3).astype(np.float32))
        h = T(self.rs.randn(4, 2, 4).astype(np.float32))
        w = T(self.rs.randn(prim.weight_size(), 1, 1).astype(np.float32) * 0.3)

        def f(a, b, c, d):
            return prim(a, b, c, d)[:3]
        e = f(x, h, h, w)
        j = pj.jit(f)(x, h, h, w)
        for a, b in zip(e, j):
            np.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=1e-6, atol=1e-7)


if __name__ == "__main__":
    unittest.main()
