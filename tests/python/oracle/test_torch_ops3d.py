"""3-D convolution / pooling / upsampling (ops.conv3d, Conv3D, Conv3DTranspose, MaxPool3D,
AvgPool3D, adaptive 3-D pools, UpsampleNearest3D / UpsampleTrilinear3D, max_unpool1d/3d, nn.Conv3d
... BatchNorm3d) and the mint.nn / mint.nn.functional names of the same work (1-D and 3-D pools,
conv1d/conv3d, ConvTranspose2d, fold/unfold, grid_sample, kl_div, losses, in-place activations)
against PyTorch: values, and gradients through pijit.grad, in float32 and float64; jitted equal
to eager. Where torch is absent each test fails, or skips under PIJIT_ALLOW_NO_TORCH=1."""
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
from pijit import nn, ops
from pijit.mint import nn as mnn
from pijit.mint.nn import functional as F


def rand(shape, seed, dtype="float32", lo=-2.0, hi=2.0):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype(dtype)


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
        g = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
        self.assertEqual(g.shape, w.shape, msg)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=msg)

    def grads(self, ours, theirs, arrays, rtol=1e-4, atol=1e-5, msg=""):
        """sum(f(*arrays) * probe) differentiated in every input by pijit and torch."""
        pts = [pj.Tensor(a) for a in arrays]
        out = ours(*pts)
        probe = rand(tuple(out.shape), 99, str(arrays[0].dtype))
        fn = lambda *xs: (ours(*xs) * pj.Tensor(probe)).sum()  # noqa: E731
        got = pj.grad(fn, grad_position=tuple(range(len(arrays))))(*pts)
        if not isinstance(got, tuple):
            got = (got,)
        tts = [torch.tensor(a, requires_grad=True) for a in arrays]
        (theirs(*tts) * torch.tensor(probe)).sum().backward()
        self.check(out, theirs(*[torch.tensor(a) for a in arrays]), rtol, atol, msg + " value")
        for i, (g, t) in enumerate(zip(got, tts)):
            self.check(g, t.grad, rtol, atol, "%s grad %d" % (msg, i))


class Conv3d(TorchCase):
    def test_conv3d_values_and_grads(self):
        for dt, tol in (("float32", 2e-4), ("float64", 1e-10)):
            x, w, b = rand((2, 4, 5, 6, 7), 1, dt), rand((6, 2, 3, 2, 3), 2, dt), rand((6,), 3, dt)
            self.grads(lambda x, w, b: ops.conv3d(x, w, b, (1, 2, 1), "pad", (1, 0, 1, 1, 0, 2),
                                                  (1, 1, 2), 2),
                       lambda x, w, b: TF.conv3d(TF.pad(x, (0, 2, 1, 1, 1, 0)), w, b, (1, 2, 1),
                                                 dilation=(1, 1, 2), groups=2),
                       [x, w, b], tol, tol, "conv3d " + dt)
            # 'same': TensorFlow's split (extra at the end), stride 2
            xs = rand((1, 2, 6, 5, 4), 4, dt)
            ws = rand((3, 2, 3, 4, 2), 5, dt)
            self.grads(lambda x, w: ops.conv3d(x, w, stride=2, pad_mode="same"),
                       lambda x, w: TF.conv3d(TF.pad(x, (0, 0, 1, 2, 0, 1)), w, stride=2),
                       [xs, ws], tol, tol, "conv3d same " + dt)

    def test_conv_transpose3d_values_and_grads(self):
        for dt, tol in (("float32", 2e-4), ("float64", 1e-10)):
            x, w, b = rand((2, 4, 3, 4, 5), 6, dt), rand((4, 3, 3, 2, 3), 7, dt), rand((6,), 8, dt)
            p = ops.Conv3DTranspose(4, 6, (3, 2, 3), pad_mode="pad", pad=(1, 1, 0, 0, 1, 1),
                                    stride=(2, 1, 2), group=2, output_padding=(1, 0, 1))
            self.grads(lambda x, w, b: p(x, w, b),
                       lambda x, w, b: TF.conv_transpose3d(x, w, b, (2, 1, 2), (1, 0, 1), (1, 0, 1),
                                                           groups=2),
                       [x, w, b], tol, tol, "conv_transpose3d " + dt)
            # output_padding at least the stride only with dilation (torch's rule)
            w2 = rand((4, 2, 2, 2, 2), 9, dt)
            self.grads(lambda x, w: ops.Conv3DTranspose(4, 2, 2, pad_mode="pad", stride=1,
                                                        dilation=3, output_padding=2)(x, w),
                       lambda x, w: TF.conv_transpose3d(x, w, stride=1, output_padding=2,
                                                        dilation=3),
                       [x, w2], tol, tol, "conv_transpose3d output_padding " + dt)

    def test_nn_conv3d_layers(self):
        x = rand((2, 3, 4, 5, 6), 10)
        net = nn.Conv3d(3, 4, (3, 1, 2), stride=(1, 2, 1), pad_mode="pad", padding=1,
                        has_bias=True)
        w, b = net.weight.asnumpy(), net.bias.asnumpy()
        self.check(net(pj.Tensor(x)), TF.conv3d(torch.tensor(x), torch.tensor(w), torch.tensor(b),
                                                (1, 2, 1), 1), 2e-4, 2e-4)
        net = nn.Conv3dTranspose(3, 4, 3, stride=2, pad_mode="same", has_bias=True)
        y = net(pj.Tensor(x))
        self.assertEqual(y.shape, (2, 4, 8, 10, 12))  # in * stride
        full = TF.conv_transpose3d(torch.tensor(x), torch.tensor(net.weight.asnumpy()),
                                   torch.tensor(net.bias.asnumpy()), 2)  # (in-1)*2 + 3
        self.check(y, full[:, :, 1:9, 1:11, 1:13], 2e-4, 2e-4)  # crop 1 at the front
        net = mnn.Conv3d(3, 4, 2, padding=(1, 0, 1), dilation=(1, 2, 1), groups=1)
        self.check(net(pj.Tensor(x)), TF.conv3d(torch.tensor(x), torch.tensor(net.weight.asnumpy()),
                                                torch.tensor(net.bias.asnumpy()), 1, (1, 0, 1),
                                                (1, 2, 1)), 2e-4, 2e-4)


class Pool3d(TorchCase):
    def test_max_pool3d(self):
        for dt in ("float32", "float64"):
            x = rand((2, 3, 5, 6, 7), 11, dt)
            x[0, 0, 1, 1, 1] = np.nan
            y, i = ops.max_pool3d(pj.Tensor(x), (2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2), True, True)
            ty, ti = TF.max_pool3d(torch.tensor(x), (2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2), True,
                                   True)
            self.check(y, ty, msg="max_pool3d " + dt)
            finite = np.isfinite(ty.numpy())
            np.testing.assert_array_equal(i.asnumpy()[finite], ti.numpy()[finite])
            x = rand((2, 3, 5, 6, 7), 12, dt)
            self.grads(lambda x: ops.max_pool3d(x, 2, 1, 1),
                       lambda x: TF.max_pool3d(x, 2, 1, 1), [x], msg="max_pool3d grad " + dt)

    def test_max_pool3d_primitives(self):
        x = rand((1, 2, 5, 6, 7), 13)
        tx = torch.tensor(x)
        self.check(ops.MaxPool3D(3, 2, "same")(pj.Tensor(x)),
                   TF.max_pool3d(TF.pad(tx, (1, 1, 0, 1, 1, 1), value=-np.inf), 3, 2))
        self.check(ops.MaxPool3D(3, 2, "pad", pad_list=(1, 0, 1, 1, 0, 1), ceil_mode=True)(
            pj.Tensor(x)), TF.max_pool3d(TF.pad(tx, (0, 1, 1, 1, 1, 0), value=-np.inf), 3, 2,
                                         ceil_mode=True))
        y, i = ops.MaxPool3DWithArgmax(2, 2, 1, argmax_type=pj.int32)(pj.Tensor(x))
        ty, ti = TF.max_pool3d(tx, 2, 2, 1, return_indices=True)
        self.check(y, ty)
        self.assertEqual(i.dtype, pj.int32)
        np.testing.assert_array_equal(i.asnumpy(), ti.numpy())
        # unpooling puts each maximum back
        u = ops.max_unpool3d(y, i, 2, 2, 1, output_size=x.shape)
        self.check(u, TF.max_unpool3d(ty, ti, 2, 2, 1, output_size=x.shape[2:]))

    def test_avg_pool3d(self):
        for dt in ("float32", "float64"):
            x = rand((2, 3, 5, 6, 7), 14, dt)
            for inc in (True, False):
                self.grads(lambda x: ops.avg_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 1), True, inc),
                           lambda x: TF.avg_pool3d(x, (2, 3, 2), (1, 2, 2), 1, True, inc), [x],
                           msg="avg_pool3d %s %s" % (dt, inc))
            self.grads(lambda x: ops.avg_pool3d(x, 2, 2, divisor_override=3),
                       lambda x: TF.avg_pool3d(x, 2, 2, divisor_override=3), [x])
        x = rand((1, 2, 5, 6, 7), 15)
        p = ops.AvgPool3D(2, 1, "pad", (1, 1, 0, 0, 1, 1), count_include_pad=False)
        self.check(p(pj.Tensor(x)), TF.avg_pool3d(torch.tensor(x), 2, 1, (1, 0, 1),
                                                  count_include_pad=False))

    def test_adaptive_pools(self):
        for dt in ("float32", "float64"):
            x = rand((2, 3, 5, 7, 9), 16, dt)
            self.grads(lambda x: ops.adaptive_avg_pool3d(x, (3, None, 4)),
                       lambda x: TF.adaptive_avg_pool3d(x, (3, 7, 4)), [x], msg="aap3d " + dt)
            self.grads(lambda x: ops.adaptive_max_pool3d(x, (2, 3, 4)),
                       lambda x: TF.adaptive_max_pool3d(x, (2, 3, 4)), [x], msg="amp3d " + dt)
            y, i = ops.AdaptiveMaxPool3D()(pj.Tensor(x), (2, 3, 4))
            self.assertEqual(i.dtype, pj.int32)
            np.testing.assert_array_equal(
                i.asnumpy(), TF.adaptive_max_pool3d(torch.tensor(x), (2, 3, 4), True)[1].numpy())
        x = rand((3, 5, 7, 9), 17)  # unbatched
        self.check(nn.AdaptiveAvgPool3d(2)(pj.Tensor(x)), TF.adaptive_avg_pool3d(torch.tensor(x), 2))

    def test_upsample3d(self):
        x = rand((2, 3, 3, 4, 5), 18)
        tx = torch.tensor(x)
        self.grads(lambda x: ops.UpsampleTrilinear3D()(x, [5, 7, 4]),
                   lambda x: TF.interpolate(x, (5, 7, 4), mode="trilinear"), [x])
        self.grads(lambda x: ops.UpsampleTrilinear3D(True)(x, None, [2.0, 1.5, 0.6]),
                   lambda x: TF.interpolate(x, scale_factor=(2.0, 1.5, 0.6), mode="trilinear",
                                            align_corners=True), [x])
        self.check(ops.UpsampleNearest3D()(pj.Tensor(x), [5, 7, 4]),
                   TF.interpolate(tx, (5, 7, 4), mode="nearest"))
        self.check(ops.UpsampleNearest3D()(pj.Tensor(x), None, [2.0, 1.5, 0.6]),
                   TF.interpolate(tx, scale_factor=(2.0, 1.5, 0.6), mode="nearest"))

    def test_max_unpool1d(self):
        x = rand((2, 3, 9), 19)
        ty, ti = TF.max_pool1d(torch.tensor(x), 3, 2, return_indices=True)
        got = ops.max_unpool1d(pj.Tensor(ty.numpy()), pj.Tensor(ti.numpy()), 3, 2)
        self.check(got, TF.max_unpool1d(ty, ti, 3, 2))

    def test_batchnorm3d(self):
        x = rand((3, 4, 2, 3, 5), 20)
        net = nn.BatchNorm3d(4)
        net.set_train(True)
        y = net(pj.Tensor(x))
        bn = torch.nn.BatchNorm3d(4, momentum=0.1)
        self.check(y, bn(torch.tensor(x)), 1e-4, 1e-5)
        self.check(net.bn2d.moving_mean, bn.running_mean, 1e-5, 1e-6)
        self.check(net.bn2d.moving_variance, bn.running_var, 1e-5, 1e-6)
        net.set_train(False)
        bn.eval()
        self.check(net(pj.Tensor(x)), bn(torch.tensor(x)), 1e-4, 1e-5)


class MintFunctional(TorchCase):
    def test_1d_and_2d_pools(self):
        x = rand((2, 3, 11), 21)
        tx = torch.tensor(x)
        self.grads(lambda x: F.adaptive_avg_pool1d(x, 4), lambda x: TF.adaptive_avg_pool1d(x, 4), [x])
        self.grads(lambda x: F.adaptive_max_pool1d(x, 4), lambda x: TF.adaptive_max_pool1d(x, 4), [x])
        y, i = F.adaptive_max_pool1d(pj.Tensor(x), 4, True)
        np.testing.assert_array_equal(i.asnumpy(), TF.adaptive_max_pool1d(tx, 4, True)[1].numpy())
        self.grads(lambda x: F.avg_pool1d(x, 3, 2, 1, True, False),
                   lambda x: TF.avg_pool1d(x, 3, 2, 1, True, False), [x])
        x2 = rand((2, 3, 7, 9), 22)
        self.grads(lambda x: F.adaptive_max_pool2d(x, (3, 4)),
                   lambda x: TF.adaptive_max_pool2d(x, (3, 4)), [x2])
        y, i = F.adaptive_max_pool2d(pj.Tensor(x2), (3, 4), return_indices=True)
        np.testing.assert_array_equal(
            i.asnumpy(), TF.adaptive_max_pool2d(torch.tensor(x2), (3, 4), True)[1].numpy())
        y, i = F.max_pool2d(pj.Tensor(x2), 2, 2, return_indices=True)
        ty, ti = TF.max_pool2d(torch.tensor(x2), 2, 2, return_indices=True)
        self.check(y, ty)
        np.testing.assert_array_equal(i.asnumpy(), ti.numpy())
        self.check(F.max_unpool2d(y, i, 2, 2, output_size=(7, 9)),
                   TF.max_unpool2d(ty, ti, 2, 2, output_size=(7, 9)))
        self.check(mnn.MaxUnpool2d(2)(y, i, (7, 9)), TF.max_unpool2d(ty, ti, 2, output_size=(7, 9)))
        x3 = rand((2, 3, 4, 5, 6), 23)
        self.grads(lambda x: F.avg_pool3d(x, 2, 1, 1, False, True, 5),
                   lambda x: TF.avg_pool3d(x, 2, 1, 1, False, True, 5), [x3])
        self.grads(lambda x: F.adaptive_avg_pool3d(x, (2, None, 3)),
                   lambda x: TF.adaptive_avg_pool3d(x, (2, None, 3)), [x3])

    def test_conv1d_conv3d(self):
        x, w, b = rand((2, 4, 9), 24), rand((6, 2, 3), 25), rand((6,), 26)
        self.grads(lambda x, w, b: F.conv1d(x, w, b, 2, 1, 2, 2),
                   lambda x, w, b: TF.conv1d(x, w, b, 2, 1, 2, 2), [x, w, b], 2e-4, 2e-4)
        self.grads(lambda x, w: F.conv1d(x, w, None, 1, "same", 1, 2),
                   lambda x, w: TF.conv1d(x, w, None, 1, "same", 1, 2), [x, w], 2e-4, 2e-4)
        x3, w3 = rand((2, 4, 4, 5, 6), 27), rand((2, 4, 2, 3, 2), 28)
        self.grads(lambda x, w: F.conv3d(x, w, None, 1, "same"),
                   lambda x, w: TF.conv3d(x, w, None, 1, "same"), [x3, w3], 2e-4, 2e-4)
        net = mnn.Conv1d(4, 6, 3, padding=2, padding_mode="reflect")
        self.check(net(pj.Tensor(x)), torch.nn.functional.conv1d(
            TF.pad(torch.tensor(x), (2, 2), mode="reflect"), torch.tensor(net.weight.asnumpy()),
            torch.tensor(net.bias.asnumpy())), 2e-4, 2e-4)
        net = mnn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        x2 = rand((2, 4, 5, 6), 29)
        self.check(net(pj.Tensor(x2)), TF.conv_transpose2d(
            torch.tensor(x2), torch.tensor(net.weight.asnumpy()), torch.tensor(net.bias.asnumpy()),
            2, 1, 1, 2), 2e-4, 2e-4)
        self.check(net(pj.Tensor(x2), output_size=(9, 11)), TF.conv_transpose2d(
            torch.tensor(x2), torch.tensor(net.weight.asnumpy()), torch.tensor(net.bias.asnumpy()),
            2, 1, 0, 2), 2e-4, 2e-4)

    def test_fold_unfold_pixel_shuffle(self):
        x = rand((2, 3, 6, 7), 30)
        self.grads(lambda x: F.unfold(x, (2, 3), 1, 1, (2, 1)),
                   lambda x: TF.unfold(x, (2, 3), 1, 1, (2, 1)), [x])
        cols = rand((2, 3 * 2 * 3, 9), 31)
        self.grads(lambda c: F.fold(c, (4, 5), (2, 3), 1, 0, 1),
                   lambda c: TF.fold(c, (4, 5), (2, 3), 1, 0, 1), [cols])
        p = rand((2, 8, 3, 4), 32)
        self.check(mnn.PixelShuffle(2)(pj.Tensor(p)), TF.pixel_shuffle(torch.tensor(p), 2))

    def test_grid_sample(self):
        x = rand((2, 3, 5, 6), 33)
        g = rand((2, 4, 7, 2), 34, lo=-1.2, hi=1.2)
        for mode in ("bilinear", "nearest"):
            for pad in ("zeros", "border", "reflection"):
                for ac in (False, True):
                    if mode == "bilinear":
                        self.grads(lambda x, g: F.grid_sample(x, g, mode, pad, ac),
                                   lambda x, g: TF.grid_sample(x, g, mode, pad, ac), [x, g],
                                   1e-4, 1e-4, "%s %s %s" % (mode, pad, ac))
                    else:
                        self.check(F.grid_sample(pj.Tensor(x), pj.Tensor(g), mode, pad, ac),
                                   TF.grid_sample(torch.tensor(x), torch.tensor(g), mode, pad, ac),
                                   msg="%s %s %s" % (mode, pad, ac))

    def test_activations(self):
        x = rand((3, 4, 5), 35)
        tx = torch.tensor(x)
        w = rand((4,), 36)
        self.grads(lambda x, w: F.prelu(x, w), lambda x, w: TF.prelu(x, w), [x, w])
        self.check(mnn.PReLU(4, 0.1)(pj.Tensor(x)), TF.prelu(tx, torch.full((4,), 0.1)))
        self.grads(lambda x: F.glu(x, 1), lambda x: TF.glu(x, 1), [rand((3, 4, 5), 37)])
        self.check(F.hardshrink(pj.Tensor(x), 0.7), TF.hardshrink(tx, 0.7))
        self.check(mnn.Hardshrink()(pj.Tensor(x)), TF.hardshrink(tx))
        self.check(mnn.SELU()(pj.Tensor(x)), TF.selu(tx))
        self.check(F.threshold(pj.Tensor(x), 0.3, -2.0), TF.threshold(tx, 0.3, -2.0))
        self.check(mnn.Threshold(0.3, -2.0)(pj.Tensor(x)), TF.threshold(tx, 0.3, -2.0))
        for name, kw in (("relu_", {}), ("sigmoid_", {}), ("elu_", {"alpha": 0.5}),
                         ("hardtanh_", {"min_val": -0.5, "max_val": 0.7})):
            t = pj.Tensor(x.copy())
            r = getattr(F, name)(t, **kw)
            self.assertIs(r, t)
            want = getattr(torch, name)(tx.clone(), **kw) if hasattr(torch, name) else \
                getattr(TF, name)(tx.clone(), **kw)
            self.check(t, want, msg=name)
        t = pj.Tensor(x.copy())
        self.assertIs(F.threshold_(t, 0.1, 9.0), t)
        self.check(t, TF.threshold(tx, 0.1, 9.0))
        self.check(F.flatten(pj.Tensor(x)), torch.flatten(tx))
        self.check(F.flatten(pj.Tensor(x), 1), torch.flatten(tx, 1))

    def test_losses(self):
        logp = np.log(np.random.RandomState(38).dirichlet(np.ones(5), size=4)).astype("float32")
        tgt = np.random.RandomState(39).dirichlet(np.ones(5), size=4).astype("float32")
        zeroed = tgt.copy()
        zeroed[0, 1] = 0.0  # a zero target contributes 0 (torch's xlogy)
        for red in ("none", "mean", "sum", "batchmean"):
            self.grads(lambda a, b: F.kl_div(a, b, red), lambda a, b: TF.kl_div(a, b, reduction=red),
                       [logp, tgt], msg="kl " + red)
            self.check(F.kl_div(pj.Tensor(logp), pj.Tensor(zeroed), red),
                       TF.kl_div(torch.tensor(logp), torch.tensor(zeroed), reduction=red))
            self.check(F.kl_div(pj.Tensor(logp), pj.Tensor(np.log(tgt + 1e-3)), red, True),
                       TF.kl_div(torch.tensor(logp), torch.tensor(np.log(tgt + 1e-3)), reduction=red,
                                 log_target=True))
        self.check(mnn.KLDivLoss("batchmean")(pj.Tensor(logp), pj.Tensor(tgt)),
                   TF.kl_div(torch.tensor(logp), torch.tensor(tgt), reduction="batchmean"))
        a, y = rand((4, 6), 40), np.sign(rand((4, 6), 41)).astype("float32")
        for red in ("none", "mean", "sum"):
            self.grads(lambda a: F.soft_margin_loss(a, pj.Tensor(y), red),
                       lambda a: TF.soft_margin_loss(a, torch.tensor(y), reduction=red), [a])
        x1, x2 = rand((5, 7), 42), rand((5, 7), 43)
        t = np.array([1, -1, 1, -1, -1], "float32")
        for red in ("none", "mean", "sum"):
            self.grads(lambda a, b: F.cosine_embedding_loss(a, b, pj.Tensor(t), 0.2, red),
                       lambda a, b: TF.cosine_embedding_loss(a, b, torch.tensor(t), 0.2,
                                                             reduction=red), [x1, x2])
        self.check(mnn.CosineEmbeddingLoss(0.1)(pj.Tensor(x1), pj.Tensor(x2), pj.Tensor(t)),
                   TF.cosine_embedding_loss(torch.tensor(x1), torch.tensor(x2), torch.tensor(t), 0.1))
        self.check(mnn.SoftMarginLoss("sum")(pj.Tensor(a), pj.Tensor(y)),
                   TF.soft_margin_loss(torch.tensor(a), torch.tensor(y), reduction="sum"))

    def test_interpolate_and_upsampling_layers(self):
        x1 = rand((2, 3, 7), 44)
        self.check(F.upsample(pj.Tensor(x1), 11, mode="linear"),
                   TF.interpolate(torch.tensor(x1), 11, mode="linear"))
        self.check(F.interpolate(pj.Tensor(x1), scale_factor=1.5, mode="nearest"),
                   TF.interpolate(torch.tensor(x1), scale_factor=1.5, mode="nearest"))
        x3 = rand((1, 2, 3, 4, 5), 45)
        self.check(F.interpolate(pj.Tensor(x3), (4, 6, 3), mode="trilinear", align_corners=True),
                   TF.interpolate(torch.tensor(x3), (4, 6, 3), mode="trilinear", align_corners=True))
        x2 = rand((2, 3, 4, 5), 46)
        self.check(mnn.UpsamplingNearest2d(scale_factor=2)(pj.Tensor(x2)),
                   torch.nn.UpsamplingNearest2d(scale_factor=2)(torch.tensor(x2)))
        self.check(mnn.UpsamplingBilinear2d((7, 9))(pj.Tensor(x2)),
                   torch.nn.UpsamplingBilinear2d((7, 9))(torch.tensor(x2)))

    def test_pad_layers(self):
        x1, x3 = rand((2, 3, 6), 47), rand((1, 2, 3, 4, 5), 48)
        # (this torch has no ZeroPad1d / ZeroPad3d: ConstantPad with 0 is the same layer)
        for name, arg, tname, targ in (
                ("ConstantPad1d", ((1, 2), 0.5), "ConstantPad1d", ((1, 2), 0.5)),
                ("ZeroPad1d", (2,), "ConstantPad1d", (2, 0.0)),
                ("ReflectionPad1d", ((2, 1),), "ReflectionPad1d", ((2, 1),)),
                ("ReplicationPad1d", (3,), "ReplicationPad1d", (3,))):
            self.check(getattr(mnn, name)(*arg)(pj.Tensor(x1)),
                       getattr(torch.nn, tname)(*targ)(torch.tensor(x1)), msg=name)
        for name, arg, tname, targ in (
                ("ConstantPad3d", ((1, 2, 0, 1, 2, 0), -1.0), "ConstantPad3d",
                 ((1, 2, 0, 1, 2, 0), -1.0)),
                ("ZeroPad3d", (1,), "ConstantPad3d", (1, 0.0)),
                ("ReflectionPad3d", ((1, 2, 1, 0, 2, 1),), "ReflectionPad3d", ((1, 2, 1, 0, 2, 1),)),
                ("ReplicationPad3d", (2,), "ReplicationPad3d", (2,))):
            self.check(getattr(mnn, name)(*arg)(pj.Tensor(x3)),
                       getattr(torch.nn, tname)(*targ)(torch.tensor(x3)), msg=name)

    def test_batchnorm3d_syncbatchnorm(self):
        x = rand((3, 4, 2, 3, 5), 49)
        for ours in (mnn.BatchNorm3d(4), mnn.SyncBatchNorm(4)):
            ours.set_train(True)
            bn = torch.nn.BatchNorm3d(4)
            self.check(ours(pj.Tensor(x)), bn(torch.tensor(x)), 1e-4, 1e-5)
            self.check(ours.running_mean, bn.running_mean, 1e-5, 1e-6)
            self.check(ours.running_var, bn.running_var, 1e-5, 1e-6)


class Jitted(TorchCase):
    def test_jit_equals_eager_conv3d_training_step(self):
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv3d(2, 4, 3, pad_mode="pad", padding=1, has_bias=True)
                self.bn = nn.BatchNorm3d(4)
                self.pool = nn.MaxPool3d(2)
                self.up = nn.Conv3dTranspose(4, 2, 2, stride=2, pad_mode="valid")
                self.avg = nn.AdaptiveAvgPool3d(1)

            def construct(self, x):
                y = self.pool(ops.relu(self.bn(self.conv(x))))
                return self.avg(self.up(y) + x).sum()

        x = pj.Tensor(rand((2, 2, 4, 6, 6), 50))
        net = Net()
        net.set_train(True)
        grad = pj.value_and_grad(net, None, net.trainable_params())
        v0, g0 = grad(x)
        jitted = pj.jit(grad)
        v1, g1 = jitted(x)
        v2, g2 = jitted(x)
        np.testing.assert_allclose(v1.asnumpy(), v0.asnumpy(), rtol=1e-5, atol=1e-6)
        for a, b in zip(g0, g1):
            np.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
