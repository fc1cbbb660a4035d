"""The mint.nn / mint.nn.functional names added with the 3-D work (pijit/mint/nn): 1-D and 3-D
pools and convolutions, ConvTranspose2d, fold/unfold, pads, in-place activations, losses,
SyncBatchNorm, upsampling layers. Values by hand (the comments give the arithmetic); in-place forms
write into their argument, eagerly and jitted; errors as torch words them. The torch comparisons of
the same names live in oracle/test_torch_ops3d.py."""
import math
import unittest

import pijit as ms
from pijit import mint
from pijit.mint import nn as mnn
from pijit.mint.nn import functional as F

F32, F64 = ms.float32, ms.float64


def T(data, dtype=F64):
    return ms.Tensor(data, dtype)


def flat(t):
    return t.reshape(-1).tolist()


class Pools(unittest.TestCase):
    def test_1d_pools(self):
        x = T([[[1.0, 5.0, 2.0, 4.0, 3.0]]])
        self.assertEqual(flat(F.adaptive_avg_pool1d(x, 2)), [8.0 / 3, 3.0])  # [0,3) and [2,5)
        y, i = F.adaptive_max_pool1d(x, 2, return_indices=True)
        self.assertEqual((flat(y), flat(i), i.dtype), ([5.0, 4.0], [1, 3], ms.int64))
        self.assertEqual(flat(F.avg_pool1d(x, 2)), [3.0, 3.0])
        # padding counts in the divisor unless count_include_pad=False
        self.assertEqual(flat(F.avg_pool1d(x, 2, 2, 1)), [0.5, 3.5, 3.5])
        self.assertEqual(flat(F.avg_pool1d(x, 2, 2, 1, False, False)), [1.0, 3.5, 3.5])
        self.assertEqual(flat(mnn.AvgPool1d(3, 1)(x)), [8.0 / 3, 11.0 / 3, 3.0])
        self.assertEqual(mnn.AdaptiveMaxPool1d(1)(x).tolist(), [[[5.0]]])
        self.assertEqual(mnn.AdaptiveAvgPool1d(1)(x[0]).tolist(), [[3.0]])  # unbatched (C, L)

    def test_2d_and_3d_pools(self):
        x = T([[[[1.0, 2.0, 3.0], [4.0, 9.0, 6.0]]]])
        y, i = F.adaptive_max_pool2d(x, (1, 2), True)
        self.assertEqual((flat(y), flat(i)), ([9.0, 9.0], [4, 4]))  # windows [0,2) and [1,3)
        y, i = mnn.MaxPool2d(2, 1, return_indices=True)(x)
        self.assertEqual((flat(y), flat(i)), ([9.0, 9.0], [4, 4]))
        u = mnn.MaxUnpool2d(2, 1)(y, i, (2, 3))
        self.assertEqual(flat(u), [0.0, 0.0, 0.0, 0.0, 9.0, 0.0])
        x3 = T([float(v) for v in range(8)]).reshape(1, 1, 2, 2, 2)
        self.assertEqual(flat(mnn.AvgPool3d(2)(x3)), [3.5])
        self.assertEqual(flat(F.avg_pool3d(x3, 2, 1, 1, divisor_override=1))[:2], [0.0, 1.0])
        self.assertEqual(mnn.AdaptiveAvgPool3d((1, None, 1))(x3).shape, (1, 1, 1, 2, 1))
        self.assertEqual(flat(F.max_pool3d(x3, 2)), [7.0])

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "expected a 2-D or 3-D input"):
            F.avg_pool1d(T([1.0, 2.0]), 1)
        with self.assertRaisesRegex(TypeError, "kernel_size must be an int or a tuple of 3 ints"):
            F.avg_pool3d(T([[[[[1.0]]]]]), "2")


class Convolutions(unittest.TestCase):
    def test_conv1d_by_hand(self):
        x = T([[[1.0, 2.0, 3.0, 4.0]]])
        w = T([[[1.0, -1.0]]])
        self.assertEqual(flat(F.conv1d(x, w)), [-1.0, -1.0, -1.0])
        self.assertEqual(flat(F.conv1d(x, w, T([0.5]), 2, 1)), [-0.5, -0.5, 4.5])  # padded x: 0 1 2 3 4 0
        self.assertEqual(flat(F.conv1d(x, w, None, 1, "same")), [-1.0, -1.0, -1.0, 4.0])
        self.assertEqual(F.conv1d(x[0], w).shape, (1, 3))  # unbatched
        net = mnn.Conv1d(1, 2, 3, padding=1, bias=False)
        self.assertEqual((net(x.astype(F32)).shape, net.weight.shape, net.bias), ((1, 2, 4), (2, 1, 3), None))
        with self.assertRaisesRegex(ValueError, "padding='same' is not supported for strided"):
            F.conv1d(x, w, None, 2, "same")

    def test_conv3d_and_conv_transpose2d(self):
        x = T([float(v) for v in range(1, 9)]).reshape(1, 1, 2, 2, 2)
        w = T([1.0] * 8).reshape(1, 1, 2, 2, 2)
        self.assertEqual(flat(F.conv3d(x, w)), [36.0])
        self.assertEqual(F.conv3d(x, w, None, 1, 1).shape, (1, 1, 3, 3, 3))
        net = mnn.Conv3d(1, 3, (1, 2, 2), stride=(1, 2, 1))
        self.assertEqual(net(x.astype(F32)).shape, (1, 3, 2, 1, 1))
        net = mnn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.assertEqual(net.weight.shape, (2, 2, 3, 3))
        x2 = ms.ops.ones((1, 2, 3, 4), F32)
        self.assertEqual(net(x2).shape, (1, 4, 6, 8))
        self.assertEqual(net(x2, output_size=(5, 7)).shape, (1, 4, 5, 7))
        # a 1x1 transposed convolution of ones with weight 1 and bias 0 at stride 2 interleaves zeros
        t = mnn.ConvTranspose2d(1, 1, 1, stride=2, bias=False)
        t.weight.set_data(T([[[[1.0]]]], F32))
        self.assertEqual(t(T([[[[1.0, 2.0]]]], F32)).tolist(), [[[[1.0, 0.0, 2.0]]]])

    def test_fold_unfold(self):
        x = T([float(v) for v in range(9)]).reshape(1, 1, 3, 3)
        cols = mnn.Unfold(2)(x)
        self.assertEqual(cols.shape, (1, 4, 4))
        self.assertEqual(flat(cols[0, :, 0]), [0.0, 1.0, 3.0, 4.0])
        back = mnn.Fold((3, 3), 2)(cols)  # each element summed once per window that holds it
        self.assertEqual(flat(back), [0.0, 2.0, 2.0, 6.0, 16.0, 10.0, 6.0, 14.0, 8.0])


class Activations(unittest.TestCase):
    def test_values(self):
        x = T([-2.0, -0.25, 0.0, 0.5, 3.0])
        self.assertEqual(flat(F.hardshrink(x, 0.4)), [-2.0, 0.0, 0.0, 0.5, 3.0])
        self.assertEqual(flat(mnn.Threshold(0.25, -9.0)(x)), [-9.0, -9.0, -9.0, 0.5, 3.0])
        a, s = 1.6732632423543772, 1.0507009873554805
        got = flat(mnn.SELU()(x))
        for v, g in zip(flat(x), got):
            want = s * (v if v > 0 else a * math.expm1(v))
            self.assertAlmostEqual(g, want, places=14)
        self.assertEqual(flat(F.prelu(x, T([0.5]))), [-1.0, -0.125, 0.0, 0.5, 3.0])
        p = mnn.PReLU(2, 0.25)
        self.assertEqual(flat(p(T([[-4.0, -8.0], [1.0, 2.0]], F32))), [-1.0, -2.0, 1.0, 2.0])
        self.assertEqual(p.weight.shape, (2,))
        self.assertEqual(flat(F.glu(T([1.0, 0.0]), 0)), [0.5])  # 1 * sigmoid(0)
        self.assertEqual(F.flatten(ms.ops.ones((2, 3, 4))).shape, (24,))
        self.assertEqual(F.flatten(ms.ops.ones((2, 3, 4)), 1).shape, (2, 12))
        p2 = mnn.PixelShuffle(2)(T([1.0, 2.0, 3.0, 4.0]).reshape(1, 4, 1, 1))
        self.assertEqual(p2.tolist(), [[[[1.0, 2.0], [3.0, 4.0]]]])

    def test_inplace_forms_write_their_argument(self):
        for name, args, want in (("relu_", (), [0.0, 0.0, 2.0]), ("hardtanh_", (-0.5, 1.0), [-0.5, 0.0, 1.0]),
                                 ("threshold_", (1.0, 7.0), [7.0, 7.0, 2.0]),
                                 ("sigmoid_", (), [1 / (1 + math.e), 0.5, 1 / (1 + math.exp(-2))]),
                                 ("elu_", (2.0,), [2 * math.expm1(-1), 0.0, 2.0])):
            x = T([-1.0, 0.0, 2.0])
            alias = x
            r = getattr(F, name)(x, *args)
            self.assertIs(r, x)
            for g, w in zip(flat(alias), want):
                self.assertAlmostEqual(g, w, places=14, msg=name)
        x = T([-1.0, 2.0])
        F.relu(x, inplace=True)
        self.assertEqual(flat(x), [0.0, 2.0])

    def test_inplace_jitted_equals_eager(self):
        def f(x):
            y = x * 2
            F.relu_(y)
            F.hardtanh_(y, -1.0, 3.0)
            return y + F.threshold(x, 0.0, 5.0)

        x = T([-1.0, 0.5, 4.0])
        want = f(x).tolist()
        jf = ms.jit(f)
        for _ in range(2):
            self.assertEqual(jf(x).tolist(), want)
        self.assertEqual(want, [0.0 + 5.0, 1.0 + 0.5, 3.0 + 4.0])
        self.assertEqual(ms.jit_stats(jf)["break_reasons"], [])


class Losses(unittest.TestCase):
    def test_kl_div(self):
        logp = T([math.log(0.25), math.log(0.75)])
        tgt = T([0.5, 0.5])
        pw = [0.5 * (math.log(0.5) - math.log(0.25)), 0.5 * (math.log(0.5) - math.log(0.75))]
        self.assertEqual(flat(F.kl_div(logp, tgt, "none")), pw)
        self.assertAlmostEqual(F.kl_div(logp, tgt).item(), sum(pw) / 2, places=15)
        self.assertAlmostEqual(F.kl_div(logp, tgt, "sum").item(), sum(pw), places=15)
        self.assertAlmostEqual(mnn.KLDivLoss("batchmean")(logp.reshape(1, 2), tgt.reshape(1, 2)).item(),
                               sum(pw), places=15)
        self.assertEqual(flat(F.kl_div(logp, T([0.0, 1.0]), "none"))[0], 0.0)  # 0 log 0 = 0
        with self.assertRaisesRegex(ValueError, "reduction must be 'none', 'mean', 'sum' or 'batchmean'"):
            F.kl_div(logp, tgt, "max")

    def test_soft_margin_and_cosine_embedding(self):
        x, y = T([0.0, 2.0]), T([1.0, -1.0])
        want = [math.log(2.0), math.log1p(math.exp(2.0))]
        self.assertAlmostEqual(mnn.SoftMarginLoss()(x, y).item(), sum(want) / 2, places=14)
        self.assertEqual(len(flat(F.soft_margin_loss(x, y, "none"))), 2)
        a, b = T([[1.0, 0.0], [1.0, 1.0]]), T([[0.0, 1.0], [1.0, 1.0]])
        t = T([1.0, -1.0])
        # cos = 0 and 1: 1 - 0 for target 1, max(0, 1 - 0.5) for target -1
        got = flat(F.cosine_embedding_loss(a, b, t, 0.5, "none"))
        # (torch's eps 1e-12 on the squared norms moves the values by ~1e-12)
        self.assertAlmostEqual(got[0], 1.0, places=10)
        self.assertAlmostEqual(got[1], 0.5, places=10)
        self.assertAlmostEqual(mnn.CosineEmbeddingLoss(0.5, "sum")(a, b, t).item(), 1.5, places=10)


class Layers(unittest.TestCase):
    def test_pads(self):
        x = T([1.0, 2.0, 3.0]).reshape(1, 1, 3)
        self.assertEqual(flat(mnn.ZeroPad1d((1, 2))(x)), [0.0, 1.0, 2.0, 3.0, 0.0, 0.0])
        self.assertEqual(flat(mnn.ConstantPad1d(1, 9.0)(x)), [9.0, 1.0, 2.0, 3.0, 9.0])
        self.assertEqual(flat(mnn.ReflectionPad1d(2)(x)), [3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0])
        self.assertEqual(flat(mnn.ReplicationPad1d((2, 1))(x)), [1.0, 1.0, 1.0, 2.0, 3.0, 3.0])
        x3 = ms.ops.ones((1, 1, 1, 1, 1), F64)
        self.assertEqual(mnn.ZeroPad3d(1)(x3).shape, (1, 1, 3, 3, 3))
        self.assertEqual(mnn.ConstantPad3d((1, 0, 0, 0, 0, 2), 5.0)(x3).shape, (1, 1, 3, 1, 2))
        self.assertEqual(mnn.ReplicationPad3d(1)(x3).sum().item(), 27.0)
        self.assertEqual(mnn.ReflectionPad3d((1, 1, 0, 0, 0, 0))(T([1.0, 2.0]).reshape(1, 1, 1, 1, 2)).tolist(),
                         [[[[[2.0, 1.0, 2.0, 1.0]]]]])
        with self.assertRaisesRegex(ValueError, "padding must be an int or a tuple of 6 ints"):
            mnn.ZeroPad3d((1, 2))

    def test_batch_norms(self):
        x = T([1.0, 3.0, 5.0, 7.0]).reshape(2, 1, 2, 1, 1)
        for cls in (mnn.BatchNorm3d, mnn.SyncBatchNorm):
            bn = cls(1, eps=0.0)
            bn.set_train(True)
            y = flat(bn(x))
            sd = math.sqrt(5.0)  # mean 4, biased variance 5
            for g, v in zip(y, [1.0, 3.0, 5.0, 7.0]):
                self.assertAlmostEqual(g, (v - 4.0) / sd, places=12)
            # running statistics (float32 parameters): 0.9 * init + 0.1 * batch (unbiased variance)
            self.assertAlmostEqual(flat(bn.running_mean)[0], 0.4, places=6)
            self.assertAlmostEqual(flat(bn.running_var)[0], 0.9 + 0.1 * 20.0 / 3, places=6)
        self.assertEqual(mnn.SyncBatchNorm(1)(T([[1.0], [2.0]])).shape, (2, 1))
        with self.assertRaisesRegex(ValueError, "expected a 5-D input"):
            mnn.BatchNorm3d(1)(T([[1.0]]))

    def test_upsampling_layers(self):
        x = T([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 2, 2)
        self.assertEqual(flat(mnn.UpsamplingNearest2d(scale_factor=2)(x)),
                         [1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 3.0, 3.0, 4.0, 4.0])
        # align_corners: the corners stay, the middle is the mean of its neighbours
        self.assertEqual(flat(mnn.UpsamplingBilinear2d((3, 3))(x)), [1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0])
        self.assertEqual(flat(F.upsample(T([1.0, 3.0]).reshape(1, 1, 2), 3, mode="linear",
                                         align_corners=True)), [1.0, 2.0, 3.0])

    def test_grid_sample_identity(self):
        x = T([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 2, 2)
        # the corner-aligned identity grid reads every pixel back
        g = T([[[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [1.0, 1.0]]]])
        self.assertEqual(flat(F.grid_sample(x, g, align_corners=True)), [1.0, 2.0, 3.0, 4.0])
        self.assertEqual(flat(F.grid_sample(x, T([[[[0.0, 0.0]]]]), align_corners=True)), [2.5])
        self.assertEqual(flat(F.grid_sample(x, T([[[[3.0, 0.0]]]]), padding_mode="zeros")), [0.0])

    def test_names_exported(self):
        for name in ("AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
                     "AvgPool1d", "AvgPool3d", "BatchNorm3d", "ConstantPad1d", "ConstantPad3d", "Conv1d",
                     "Conv3d", "ConvTranspose2d", "CosineEmbeddingLoss", "Fold", "Unfold", "Hardshrink",
                     "KLDivLoss", "MaxUnpool2d", "PReLU", "PixelShuffle", "ReflectionPad1d",
                     "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad3d", "SELU", "SoftMarginLoss",
                     "SyncBatchNorm", "Threshold", "UpsamplingBilinear2d", "UpsamplingNearest2d",
                     "ZeroPad1d", "ZeroPad3d"):
            self.assertIn(name, mnn.__all__)
            self.assertIs(getattr(mint.nn, name), getattr(mnn, name))


if __name__ == "__main__":
    unittest.main()
