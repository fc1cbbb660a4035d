"""3-D convolution and pooling (pijit/ops/ops3d.py, nn/layers3.py; kernels/conv3d.cc, pool3d.cc,
graph/ops/conv3d_ops.cc): values against direct Python loops written here (float64 runs pijit's
loops, float32 oneDNN), gradients against central differences in float64, MindSpore's pad modes,
the errors, and capture (one graph, jitted equal to eager). torch comparisons live in
oracle/test_torch_ops3d.py."""
import itertools
import random
import unittest

import pijit as ms
from pijit import nn, ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly

F64, F32 = ms.float64, ms.float32


def rnd(shape, seed):
    r = random.Random(seed)
    n = 1
    for s in shape:
        n *= s
    return [r.uniform(-1, 1) for _ in range(n)]


def T(flat, shape, dtype=F64):
    return ms.Tensor(flat, dtype).reshape(shape)


def flat(t):
    return t.reshape(-1).tolist()


def naive_conv3d(x, xs, w, ws, bias, stride, pads, dil, groups):
    """Direct definition: out[n, o, p] = b[o] + sum_{c in group, k} x[n, c, p*s - lo + k*d] w[o, c, k]."""
    N, C, I = xs[0], xs[1], xs[2:]
    O, Cg, K = ws[0], ws[1], ws[2:]
    out_sp = [(I[d] + pads[2 * d] + pads[2 * d + 1] - dil[d] * (K[d] - 1) - 1) // stride[d] + 1
              for d in range(3)]
    Og = O // groups

    def xi(n, c, p):
        return x[(((n * C + c) * I[0] + p[0]) * I[1] + p[1]) * I[2] + p[2]]

    out = []
    for n in range(N):
        for o in range(O):
            g = o // Og
            for p in itertools.product(*[range(s) for s in out_sp]):
                acc = bias[o] if bias else 0.0
                for cg in range(Cg):
                    c = g * Cg + cg
                    for k in itertools.product(*[range(s) for s in K]):
                        q = [p[d] * stride[d] - pads[2 * d] + k[d] * dil[d] for d in range(3)]
                        if all(0 <= q[d] < I[d] for d in range(3)):
                            wv = w[(((o * Cg + cg) * K[0] + k[0]) * K[1] + k[1]) * K[2] + k[2]]
                            acc += xi(n, c, q) * wv
                out.append(acc)
    return out, (N, O) + tuple(out_sp)


def naive_pool3d(x, xs, k, s, pads, mode, ceil=False, include_pad=True):
    N, C, I = xs[0], xs[1], xs[2:]
    out_sp = []
    for d in range(3):
        span = I[d] + pads[2 * d] + pads[2 * d + 1] - k[d]
        o = (-(-span // s[d]) if ceil else span // s[d]) + 1
        if ceil and (o - 1) * s[d] >= I[d] + pads[2 * d]:
            o -= 1
        out_sp.append(o)
    out = []
    for n, c in itertools.product(range(N), range(C)):
        for p in itertools.product(*[range(v) for v in out_sp]):
            starts = [p[d] * s[d] - pads[2 * d] for d in range(3)]
            ends = [min(starts[d] + k[d], I[d] + pads[2 * d + 1]) for d in range(3)]
            padded = 1
            for d in range(3):
                padded *= ends[d] - starts[d]
            vals = []
            for q in itertools.product(*[range(max(starts[d], 0), min(ends[d], I[d])) for d in range(3)]):
                vals.append(x[(((n * C + c) * I[0] + q[0]) * I[1] + q[1]) * I[2] + q[2]])
            if mode == "max":
                out.append(max(vals))
            else:
                out.append(sum(vals) / (padded if include_pad else len(vals)))
    return out, (N, C) + tuple(out_sp)


class Close(unittest.TestCase):
    def close(self, got, want, tol):
        self.assertEqual(len(got), len(want))
        for i, (a, b) in enumerate(zip(got, want)):
            self.assertLessEqual(abs(a - b), tol * (1 + abs(b)), "element %d: %r vs %r" % (i, a, b))


class Conv3dValues(Close):
    def test_hand_value(self):
        x = T(list(range(1, 9)), (1, 1, 2, 2, 2))
        w = T([1.0] * 8, (1, 1, 2, 2, 2))
        self.assertEqual(ops.conv3d(x, w).tolist(), [[[[[36.0]]]]])
        # 'same' at stride 1 with an even kernel pads one plane at the back of each dim: the last
        # output sees only x[0, 0, 1, 1, 1] = 8, the first every element
        y = ops.conv3d(x, w, pad_mode="same")
        self.assertEqual(y.shape, (1, 1, 2, 2, 2))
        want, _ = naive_conv3d(flat(x), (1, 1, 2, 2, 2), [1.0] * 8, (1, 1, 2, 2, 2), None, (1, 1, 1),
                               (0, 1, 0, 1, 0, 1), (1, 1, 1), 1)
        self.assertEqual(flat(y), want)
        self.assertEqual((flat(y)[0], flat(y)[-1]), (36.0, 8.0))

    def test_against_direct_loops(self):
        cases = [((2, 4, 4, 5, 3), (6, 2, 2, 3, 2), (1, 2, 1), (1, 0, 1, 1, 0, 2), (1, 1, 2), 2, True),
                 ((1, 3, 5, 4, 4), (2, 3, 3, 1, 2), (2, 1, 2), (0, 0, 0, 0, 0, 0), (2, 1, 1), 1, False)]
        for dtype, tol in ((F64, 1e-12), (F32, 1e-5)):
            for i, (xs, ws, st, pads, dil, g, has_b) in enumerate(cases):
                x, w, b = rnd(xs, i), rnd(ws, 10 + i), rnd((ws[0],), 20 + i)
                want, shape = naive_conv3d(x, xs, w, ws, b if has_b else None, st, pads, dil, g)
                y = ops.conv3d(T(x, xs, dtype), T(w, ws, dtype), T(b, (ws[0],), dtype) if has_b else None,
                               st, "pad", pads, dil, g)
                self.assertEqual((y.shape, y.dtype), (shape, dtype))
                self.close(flat(y), want, tol)

    def test_transpose_is_the_adjoint(self):
        # <conv3d(x, w), y> == <x, conv_transpose3d(y, w)> for every geometry (float64 loops and
        # float32 oneDNN)
        xs, ws = (2, 4, 5, 4, 6), (6, 2, 3, 2, 3)
        for dtype, tol in ((F64, 1e-12), (F32, 1e-4)):
            x, w = T(rnd(xs, 1), xs, dtype), T(rnd(ws, 2), ws, dtype)
            p = ops.Conv3D(6, (3, 2, 3), pad_mode="pad", pad=(1, 1, 0, 1, 1, 0), stride=(2, 1, 2),
                           group=2)
            y = p(x, w)
            r = T(rnd(y.shape, 3), y.shape, dtype)
            t = ops.Conv3DTranspose(6, 4, (3, 2, 3), pad_mode="pad", pad=(1, 1, 0, 1, 1, 0),
                                    stride=(2, 1, 2), group=2)
            xt = t(r, w)
            self.assertEqual(xt.shape, xs)
            self.close([(y * r).sum().item()], [(x * xt).sum().item()], tol)

    def test_gradients_by_central_differences(self):
        xs, ws = (1, 2, 3, 3, 4), (2, 1, 2, 2, 2)
        x0, w0 = rnd(xs, 4), rnd(ws, 5)

        def loss(xf, wf):
            y = ops.conv3d(T(xf, xs), T(wf, ws), None, (1, 1, 2), "pad", (1, 0, 0, 1, 1, 1), 1, 2)
            return (y * y).sum()

        def loss_t(x, w):
            return (ops.conv3d(x, w, None, (1, 1, 2), "pad", (1, 0, 0, 1, 1, 1), 1, 2) ** 2).sum()

        gx, gw = ms.grad(loss_t, grad_position=(0, 1))(T(x0, xs), T(w0, ws))
        eps = 1e-6
        for vec, g, which in ((x0, gx, 0), (w0, gw, 1)):
            got = flat(g)
            for j in range(0, len(vec), 5):
                up, dn = list(vec), list(vec)
                up[j] += eps
                dn[j] -= eps
                args_up = (up, w0) if which == 0 else (x0, up)
                args_dn = (dn, w0) if which == 0 else (x0, dn)
                num = (loss(*args_up).item() - loss(*args_dn).item()) / (2 * eps)
                self.assertAlmostEqual(got[j], num, delta=1e-6 * (1 + abs(num)))

    def test_transpose_gradients_by_central_differences(self):
        xs, ws = (1, 2, 2, 3, 2), (2, 3, 2, 2, 3)
        x0, w0 = rnd(xs, 6), rnd(ws, 7)
        p = ops.Conv3DTranspose(2, 3, (2, 2, 3), pad_mode="pad", pad=(0, 1, 1, 0, 1, 1),
                                stride=(2, 1, 2), output_padding=(1, 0, 0))

        def loss(x, w):
            return (p(x, w) ** 2).sum()
        gx, gw = ms.grad(loss, grad_position=(0, 1))(T(x0, xs), T(w0, ws))
        eps = 1e-6
        for vec, g, which in ((x0, gx, 0), (w0, gw, 1)):
            got = flat(g)
            for j in range(0, len(vec), 4):
                up, dn = list(vec), list(vec)
                up[j] += eps
                dn[j] -= eps
                fu = loss(*((T(up, xs), T(w0, ws)) if which == 0 else (T(x0, xs), T(up, ws)))).item()
                fd = loss(*((T(dn, xs), T(w0, ws)) if which == 0 else (T(x0, xs), T(dn, ws)))).item()
                self.assertAlmostEqual(got[j], (fu - fd) / (2 * eps), delta=1e-6 * (1 + abs(fu)))

    def test_errors(self):
        x, w = T(rnd((1, 4, 3, 3, 3), 1), (1, 4, 3, 3, 3)), T(rnd((2, 3, 1, 1, 1), 2), (2, 3, 1, 1, 1))
        with self.assertRaisesRegex(ValueError, "input has 4 channels but weight expects 3"):
            ops.conv3d(x, w)
        with self.assertRaisesRegex(ValueError, "'padding' must be 0 when 'pad_mode' is 'valid'"):
            ops.conv3d(x, w, padding=1)
        with self.assertRaisesRegex(ValueError, "input and weight must be 5-D"):
            ops.conv3d(x.reshape(4, 3, 3, 3), w)
        big = T(rnd((1, 4, 4, 1, 1), 3), (1, 4, 4, 1, 1))
        with self.assertRaisesRegex(ValueError, "larger than the padded input"):
            ops.conv3d(x, big)
        with self.assertRaisesRegex(ValueError, "'pad_mode' must be 'same', 'valid' or 'pad'"):
            ops.Conv3D(2, 1, pad_mode="full")
        with self.assertRaisesRegex(TypeError, "does not support dtype Int32"):
            ops.conv3d(x.astype(ms.int32), w.astype(ms.int32))
        with self.assertRaisesRegex(ValueError, "output_padding must be non-negative and smaller"):
            ops.Conv3DTranspose(4, 2, 1, stride=1, output_padding=1)(x, T(rnd((4, 2, 1, 1, 1), 4),
                                                                          (4, 2, 1, 1, 1)))


class Pool3dValues(Close):
    def test_against_direct_loops(self):
        xs = (2, 2, 4, 5, 6)
        x = rnd(xs, 8)
        for dtype in (F64, F32):
            t = T(x, xs, dtype)
            tol = 1e-12 if dtype == F64 else 1e-6
            for k, s, p, ceil in (((2, 3, 2), (1, 2, 2), (1, 1, 1), True), ((3, 3, 3), (2, 2, 2), (0, 1, 1), False)):
                pads = (p[0], p[0], p[1], p[1], p[2], p[2])
                want, shape = naive_pool3d(x, xs, k, s, pads, "max", ceil)
                y = ops.max_pool3d(t, k, s, p, 1, ceil)
                self.assertEqual(y.shape, shape)
                self.close(flat(y), want, tol)
                for inc in (True, False):
                    want, shape = naive_pool3d(x, xs, k, s, pads, "avg", ceil, inc)
                    y = ops.avg_pool3d(t, k, s, pads, ceil, inc)
                    self.assertEqual(y.shape, shape)
                    self.close(flat(y), want, tol)

    def test_mindspore_pad_modes(self):
        xs = (1, 1, 5, 4, 3)
        x = rnd(xs, 9)
        t = T(x, xs)
        # 'same': ceil(in / stride) outputs, total padding split with the extra at the end
        y = ops.MaxPool3D(3, 2, "same")(t)
        want, shape = naive_pool3d(x, xs, (3, 3, 3), (2, 2, 2), (1, 1, 0, 1, 1, 1), "max")
        self.assertEqual(y.shape, (1, 1, 3, 2, 2))
        self.close(flat(y), want, 0)
        y = ops.AvgPool3D(2, 1, "pad", (1, 0, 0, 1, 1, 0), count_include_pad=False)(t)
        want, shape = naive_pool3d(x, xs, (2, 2, 2), (1, 1, 1), (1, 0, 0, 1, 1, 0), "avg", False, False)
        self.assertEqual(y.shape, shape)
        self.close(flat(y), want, 1e-12)

    def test_indices_and_unpool(self):
        t = T([float(v) for v in range(16)], (1, 1, 2, 2, 4))
        y, i = ops.MaxPool3DWithArgmax(2, 2, 0)(t)
        self.assertEqual(flat(y), [13.0, 15.0])
        self.assertEqual(flat(i), [13, 15])
        self.assertEqual(i.dtype, ms.int64)
        u = ops.max_unpool3d(y, i, 2)
        self.assertEqual(flat(u), [0.0] * 13 + [13.0, 0.0, 15.0])
        y, i = ops.adaptive_max_pool3d(t, (1, 1, 2), True)
        self.assertEqual((flat(y), flat(i), i.dtype), ([13.0, 15.0], [13, 15], ms.int32))
        self.assertEqual(flat(ops.adaptive_avg_pool3d(t, (1, 1, 1))), [7.5])
        self.assertEqual(flat(ops.max_unpool1d(T([5.0, 7.0], (1, 1, 2)), ms.Tensor([[[1, 2]]]), 2)),
                         [0.0, 5.0, 7.0, 0.0])

    def test_adaptive_avg_primitive_and_unpool2d_primitive(self):
        t = T([float(v) for v in range(16)], (1, 1, 2, 2, 4))
        # output cells average depth/row [0, 2) and columns [0, 2) / [2, 4)
        self.assertEqual(flat(ops.AdaptiveAvgPool3D((1, 1, 2))(t)), [(0 + 1 + 4 + 5 + 8 + 9 + 12 + 13) / 8.0,
                                                                    (2 + 3 + 6 + 7 + 10 + 11 + 14 + 15) / 8.0])
        self.assertEqual(ops.AdaptiveAvgPool3D((None, 1, None))(t).shape, (1, 1, 2, 1, 4))
        x = T([5.0, 7.0], (1, 1, 1, 2))
        u = ops.MaxUnpool2D(2)(x, ms.Tensor([[[[1, 6]]]]))  # (1-1)*2 + 2 rows, (2-1)*2 + 2 columns
        self.assertEqual(u.tolist(), [[[[0.0, 5.0, 0.0, 0.0], [0.0, 0.0, 7.0, 0.0]]]])
        u = ops.MaxUnpool2D(2, strides=1, output_shape=(1, 1, 3, 3))(x, ms.Tensor([[[[4, 8]]]]))
        self.assertEqual(flat(u), [0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 7.0])

    def test_nan_propagates_through_max(self):
        t = T([1.0, float("nan"), 3.0, 2.0, 0.0, -1.0, 4.0, 5.0], (1, 1, 2, 2, 2))
        y, i = ops.max_pool3d(t, 2, return_indices=True)
        self.assertTrue(flat(y)[0] != flat(y)[0])
        self.assertEqual(flat(i), [1])

    def test_pool_gradients(self):
        xs = (1, 2, 3, 4, 4)
        x0 = rnd(xs, 11)
        for fn in (lambda x: ops.max_pool3d(x, 2, 1, 1), lambda x: ops.avg_pool3d(x, 2, 1, 1, True, False),
                   lambda x: ops.adaptive_avg_pool3d(x, (2, 3, 3)), lambda x: ops.adaptive_max_pool3d(x, 2),
                   lambda x: ops.UpsampleTrilinear3D()(x, [4, 5, 7])):
            loss = lambda x: (fn(x) ** 2).sum()  # noqa: E731
            g = flat(ms.grad(loss)(T(x0, xs)))
            eps = 1e-6
            for j in range(0, len(x0), 7):
                up, dn = list(x0), list(x0)
                up[j] += eps
                dn[j] -= eps
                num = (loss(T(up, xs)).item() - loss(T(dn, xs)).item()) / (2 * eps)
                self.assertAlmostEqual(g[j], num, delta=1e-6)

    def test_errors(self):
        t = T(rnd((1, 1, 3, 3, 3), 1), (1, 1, 3, 3, 3))
        with self.assertRaisesRegex(ValueError, "pad should be at most half of effective kernel size"):
            ops.max_pool3d(t, 2, 1, 2)
        with self.assertRaisesRegex(ValueError, "the input must be 4-D or 5-D"):
            ops.max_pool3d(t.reshape(3, 9), 2)
        with self.assertRaisesRegex(ValueError, "'pad_list' must be 0"):
            ops.MaxPool3D(2, 1, "same", pad_list=1)
        with self.assertRaisesRegex(ValueError, "exactly one of 'output_size' and 'scales'"):
            ops.UpsampleNearest3D()(t)
        with self.assertRaisesRegex(TypeError, "avg_pool3d does not support dtype Int32"):
            ops.avg_pool3d(t.astype(ms.int32), 2)
        # integer max pools run widened and keep their dtype
        y = ops.max_pool3d(T([float(v) for v in range(8)], (1, 1, 2, 2, 2)).astype(ms.int32), 2)
        self.assertEqual((y.dtype, flat(y)), (ms.int32, [7]))


class Layers(Close):
    def test_layer_shapes_and_params(self):
        x = T(rnd((2, 3, 4, 6, 6), 1), (2, 3, 4, 6, 6), F32)
        net = nn.Conv3d(3, 5, 3, has_bias=True)
        self.assertEqual(net(x).shape, (2, 5, 4, 6, 6))
        self.assertEqual([p.name for p in net.trainable_params()], ["weight", "bias"])
        self.assertEqual(net.weight.shape, (5, 3, 3, 3, 3))
        self.assertEqual(nn.Conv3d(3, 6, (1, 2, 3), 2, "valid", group=3)(x).shape, (2, 6, 2, 3, 2))
        self.assertEqual(nn.Conv3dTranspose(3, 2, 3, 2)(x).shape, (2, 2, 8, 12, 12))
        self.assertEqual(nn.Conv3dTranspose(3, 2, 3, 2, "valid")(x).shape, (2, 2, 9, 13, 13))
        self.assertEqual(nn.Conv3dTranspose(3, 2, 3, 2, "pad", 1, output_padding=1)(x).shape,
                         (2, 2, 8, 12, 12))
        self.assertEqual(nn.MaxPool3d(2)(x).shape, (2, 3, 2, 3, 3))
        self.assertEqual(nn.AvgPool3d(3, 1, 1)(x).shape, (2, 3, 4, 6, 6))
        y, i = nn.AdaptiveMaxPool3d((2, None, 3), True)(x)
        self.assertEqual((y.shape, i.dtype), ((2, 3, 2, 6, 3), ms.int32))
        bn = nn.BatchNorm3d(3)
        # MindSpore's names: BatchNorm3d holds a BatchNorm2d `bn2d` (moving stats named mean/variance)
        self.assertEqual([p.name for p in bn.get_parameters()],
                         ["bn2d.gamma", "bn2d.beta", "bn2d.mean", "bn2d.variance"])
        with self.assertRaisesRegex(ValueError, r"must be \(N, 4, D, H, W\)"):
            nn.BatchNorm3d(4)(x)
        with self.assertRaisesRegex(ValueError, "in_channels.*must be divisible by group"):
            nn.Conv3d(3, 4, 1, group=2)

    def test_batchnorm3d_by_hand(self):
        # per channel: mean and biased variance over (N, D, H, W)
        vals = [1.0, 2.0, 3.0, 6.0]
        x = T(vals, (1, 1, 1, 2, 2))
        bn = nn.BatchNorm3d(1, eps=0.0)
        bn.set_train(True)
        y = flat(bn(x))
        m = 3.0
        v = sum((a - m) ** 2 for a in vals) / 4
        self.close(y, [(a - m) / v ** 0.5 for a in vals], 1e-6)
        self.close(flat(bn.bn2d.moving_mean), [0.1 * m], 1e-6)
        self.close(flat(bn.bn2d.moving_variance), [0.9 + 0.1 * v * 4 / 3], 1e-6)


class Capture(unittest.TestCase):
    def test_one_graph_and_equal_to_eager(self):
        xs, ws = (2, 2, 4, 5, 6), (4, 2, 3, 3, 3)
        x, w = T(rnd(xs, 1), xs, F32), T(rnd(ws, 2), ws, F32)

        def f(x, w):
            y = ops.conv3d(x, w, None, 1, "same")
            y = ops.max_pool3d(ops.relu(y), 2, 2, 0, 1, True)
            z = ops.avg_pool3d(y, 2, 1, (1, 0, 1, 0, 1, 0), False, False)
            return ops.adaptive_avg_pool3d(z, (1, 2, 2)) + ops.UpsampleNearest3D()(z, [1, 2, 2])

        want = f(x, w)
        jf = ms.jit(f)
        for _ in range(2):
            got = jf(x, w)
            self.assertEqual(got.tolist(), want.tolist())
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))
        else:
            assert_ran_eagerly(self, jf)

    def test_training_step_jitted_equals_eager(self):
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv3d(2, 3, 3, pad_mode="pad", padding=(1, 1, 0, 0, 1, 1), has_bias=True)
                self.up = nn.Conv3dTranspose(3, 2, 2, stride=2, pad_mode="valid", has_bias=True)
                self.pool = nn.AvgPool3d(2)

            def construct(self, x):
                return (self.up(self.pool(ops.relu(self.conv(x)))) ** 2).mean()

        ms.set_seed(3)
        x = T(rnd((2, 2, 4, 6, 4), 5), (2, 2, 4, 6, 4), F32)
        net = Net()
        vg = ms.value_and_grad(net, None, net.trainable_params())
        v0, g0 = vg(x)
        jvg = ms.jit(lambda t: vg(t))
        v1, g1 = jvg(x)
        self.assertEqual(v1.tolist(), v0.tolist())
        for a, b in zip(g0, g1):
            self.assertEqual(a.shape, b.shape)
            for p, q in zip(flat(a), flat(b)):
                self.assertAlmostEqual(p, q, delta=1e-5 * (1 + abs(p)))
        self.assertEqual(ms.jit_stats(jvg)["break_reasons"], [])


if __name__ == "__main__":
    unittest.main()
