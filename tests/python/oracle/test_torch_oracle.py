"""pijit layers against PyTorch (Debian's python3-torch on the system Python): the same weights are
copied into torch and each layer's output, and a small CNN's, must agree. Where torch is absent each
test fails, or skips under PIJIT_ALLOW_NO_TORCH=1 (requires.py)."""
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


def to_torch(t):
    return torch.from_numpy(np.array(np.asarray(t)))


def rand(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-2, 2, size=shape).astype("float32")


class TorchCase(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)

    def check(self, got, want, rtol=1e-4, atol=1e-5, msg=""):
        np.testing.assert_allclose(np.asarray(got), want.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=msg)


class TestConvPool(TorchCase):
    def test_conv2d_configurations(self):
        for (n, cin, cout, h, w, k, s, p, d, g, bias) in [
                (1, 3, 4, 7, 9, 3, 1, 0, 1, 1, True), (3, 4, 8, 11, 10, 3, 2, 1, 1, 2, False),
                (2, 6, 6, 9, 9, 3, 1, 2, 2, 6, True), (1, 5, 17, 8, 8, 1, 1, 0, 1, 1, True),
                (2, 3, 5, 12, 13, 5, 3, 2, 1, 1, False)]:
            x = rand(n, cin, h, w, seed=1)
            conv = nn.Conv2d(cin, cout, k, stride=s, pad_mode="pad", padding=p, dilation=d,
                             group=g, has_bias=bias)
            want = TF.conv2d(torch.from_numpy(x), to_torch(conv.weight),
                             to_torch(conv.bias) if bias else None, s, p, d, g)
            self.check(conv(pj.Tensor(x)), want, msg="conv %s" % ((n, cin, cout, k, s, p, d, g),))

    def test_conv2d_same_matches_tensorflow_rule(self):
        x = rand(1, 2, 7, 7, seed=2)
        conv = nn.Conv2d(2, 3, 4, stride=2, pad_mode="same")
        xt = TF.pad(torch.from_numpy(x), (1, 2, 1, 2))  # total 3: 1 before, 2 after
        want = TF.conv2d(xt, to_torch(conv.weight), None, 2)
        self.assertEqual(conv(pj.Tensor(x)).shape, (1, 3, 4, 4))
        self.check(conv(pj.Tensor(x)), want)

    def test_conv_transpose(self):
        x = rand(2, 4, 5, 6, seed=3)
        ct = nn.Conv2dTranspose(4, 3, 3, stride=2, pad_mode="pad", padding=1, has_bias=True)
        want = TF.conv_transpose2d(torch.from_numpy(x), to_torch(ct.weight), to_torch(ct.bias),
                                   2, 1)
        self.check(ct(pj.Tensor(x)), want)

    def test_pooling(self):
        x = rand(2, 3, 9, 10, seed=4)
        xt = torch.from_numpy(x)
        self.check(nn.MaxPool2d(3, 2)(pj.Tensor(x)), TF.max_pool2d(xt, 3, 2))
        self.check(nn.AvgPool2d(2, 2)(pj.Tensor(x)), TF.avg_pool2d(xt, 2, 2))
        self.check(ops.max_pool2d(pj.Tensor(x), 3, 2, 1, ceil_mode=True),
                   TF.max_pool2d(xt, 3, 2, 1, ceil_mode=True))
        self.check(ops.avg_pool2d(pj.Tensor(x), 3, 2, 1, count_include_pad=False),
                   TF.avg_pool2d(xt, 3, 2, 1, count_include_pad=False))
        self.check(nn.AdaptiveAvgPool2d((4, 3))(pj.Tensor(x)), TF.adaptive_avg_pool2d(xt, (4, 3)))
        self.check(nn.MaxPool2d(3, 1, dilation=2)(pj.Tensor(x)), TF.max_pool2d(xt, 3, 1, dilation=2))
        self.check(nn.AvgPool2d(2, 2, divisor_override=3)(pj.Tensor(x)),
                   TF.avg_pool2d(xt, 2, 2, divisor_override=3))

    def test_tiled_max_pool_propagates_nan_as_torch_does(self):
        # Windows that tile the plane run pijit's own kernel: a NaN wins its window as in PyTorch, in
        # float32 (oneDNN's pooling dropped it) and float64. (Jitted: test_compiler's ConvBlocks.)
        for dtype in ("float32", "float64"):
            x = rand(2, 16, 8, 10, seed=21).astype(dtype)
            flat = x.reshape(-1)
            flat[::37] = np.nan
            flat[5::41] = -np.inf
            flat[7::13] = np.floor(flat[7::13])  # ties
            xt = torch.from_numpy(x)
            for k in (2, (2, 5), 4):
                want = TF.max_pool2d(xt, k, k).numpy()
                self.assertTrue(np.isnan(want).any())
                np.testing.assert_array_equal(np.asarray(nn.MaxPool2d(k, k)(pj.Tensor(x))), want,
                                              err_msg="%s %s" % (dtype, k))

    def test_same_pooling_is_tensorflow_same(self):
        x = rand(2, 3, 9, 10, seed=14)
        xt = torch.from_numpy(x)
        for k, s in ((2, 2), (3, 2), (3, 1), (4, 3)):
            pads = []
            for n in (10, 9):  # F.pad order: last dim first
                out = (n + s - 1) // s
                total = max((out - 1) * s + k - n, 0)
                pads += [total // 2, total - total // 2]
            want_max = TF.max_pool2d(TF.pad(xt, pads, value=float("-inf")), k, s)
            num = TF.avg_pool2d(TF.pad(xt, pads), k, s, divisor_override=1)
            den = TF.avg_pool2d(TF.pad(torch.ones_like(xt), pads), k, s, divisor_override=1)
            self.check(nn.MaxPool2d(k, s, pad_mode="same")(pj.Tensor(x)), want_max, msg="max %d %d" % (k, s))
            self.check(nn.AvgPool2d(k, s, pad_mode="same")(pj.Tensor(x)), num / den, msg="avg %d %d" % (k, s))

    def test_interpolate_and_pad(self):
        x = rand(1, 2, 5, 7, seed=5)
        xt = torch.from_numpy(x)
        self.check(ops.interpolate(pj.Tensor(x), size=(8, 9), mode="nearest"),
                   TF.interpolate(xt, size=(8, 9), mode="nearest"))
        for ac in (False, True):
            self.check(ops.interpolate(pj.Tensor(x), size=(8, 9), mode="bilinear", align_corners=ac),
                       TF.interpolate(xt, size=(8, 9), mode="bilinear", align_corners=ac))
        for sf in (1.5, 2.0, 0.7):
            self.check(ops.interpolate(pj.Tensor(x), scale_factor=sf, mode="bilinear"),
                       TF.interpolate(xt, scale_factor=sf, mode="bilinear"), msg="scale %s" % sf)
            self.check(ops.interpolate(pj.Tensor(x), scale_factor=sf, mode="nearest"),
                       TF.interpolate(xt, scale_factor=sf, mode="nearest"), msg="scale %s" % sf)
        for mode in ("constant", "reflect", "replicate", "circular"):
            self.check(ops.pad(pj.Tensor(x), (1, 2, 2, 1), mode=mode),
                       TF.pad(xt, (1, 2, 2, 1), mode=mode), msg=mode)


class TestNormDenseLoss(TorchCase):
    def test_dense_and_activations(self):
        x = rand(5, 7, seed=6)
        d = nn.Dense(7, 3)
        self.check(d(pj.Tensor(x)), TF.linear(torch.from_numpy(x), to_torch(d.weight), to_torch(d.bias)))
        xt = torch.from_numpy(x)
        for cell, fn in ((nn.ReLU(), torch.relu), (nn.Sigmoid(), torch.sigmoid), (nn.Tanh(), torch.tanh),
                         (nn.GELU(False), TF.gelu), (nn.SiLU(), TF.silu), (nn.ReLU6(), TF.relu6),
                         (nn.LeakyReLU(0.1), lambda t: TF.leaky_relu(t, 0.1)),
                         (nn.Softmax(), lambda t: torch.softmax(t, -1)),
                         (nn.LogSoftmax(), lambda t: torch.log_softmax(t, -1))):
            self.check(cell(pj.Tensor(x)), fn(xt), msg=type(cell).__name__)
        self.check(nn.GELU()(pj.Tensor(x)), TF.gelu(xt, approximate="tanh"))

    def test_batchnorm_train_and_eval(self):
        x = rand(4, 3, 5, 5, seed=7)
        bn = nn.BatchNorm2d(3)
        tb = torch.nn.BatchNorm2d(3, momentum=0.1)  # MindSpore momentum 0.9 == torch 0.1
        bn.set_train(True)
        tb.train()
        self.check(bn(pj.Tensor(x)), tb(torch.from_numpy(x)))
        self.check(bn.moving_mean, tb.running_mean)
        self.check(bn.moving_variance, tb.running_var)
        bn.set_train(False)
        tb.eval()
        self.check(bn(pj.Tensor(x)), tb(torch.from_numpy(x)))

    def test_layer_and_group_norm(self):
        x = rand(2, 6, 4, seed=8)
        ln = nn.LayerNorm((4,), epsilon=1e-5)
        self.check(ln(pj.Tensor(x)), TF.layer_norm(torch.from_numpy(x), (4,), eps=1e-5))
        gn = nn.GroupNorm(3, 6)
        self.check(gn(pj.Tensor(x)), TF.group_norm(torch.from_numpy(x), 3, eps=1e-5))

    def test_embedding(self):
        emb = nn.Embedding(10, 4)
        ids = np.array([[1, 9], [0, 3]])
        self.check(emb(pj.Tensor(ids)), TF.embedding(torch.from_numpy(ids), to_torch(emb.embedding_table)))

    def test_losses(self):
        logits, labels = rand(6, 5, seed=9), np.array([0, 4, 2, 2, 1, 3])
        lt, yt = torch.from_numpy(logits), torch.from_numpy(labels)
        for red in ("none", "mean", "sum"):
            self.check(nn.CrossEntropyLoss(reduction=red)(pj.Tensor(logits), pj.Tensor(labels)),
                       TF.cross_entropy(lt, yt, reduction=red), msg=red)
        self.check(nn.CrossEntropyLoss(label_smoothing=0.2)(pj.Tensor(logits), pj.Tensor(labels)),
                   TF.cross_entropy(lt, yt, label_smoothing=0.2))
        probs = np.abs(rand(6, 5, seed=10))
        probs /= probs.sum(1, keepdims=True)
        self.check(nn.SoftmaxCrossEntropyWithLogits()(pj.Tensor(logits), pj.Tensor(probs)),
                   TF.cross_entropy(lt, torch.from_numpy(probs), reduction="none"))
        self.check(nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")(
            pj.Tensor(logits), pj.Tensor(labels)), TF.cross_entropy(lt, yt))
        a, b = rand(4, 3, seed=11), rand(4, 3, seed=12)
        at, bt = torch.from_numpy(a), torch.from_numpy(b)
        self.check(nn.MSELoss()(pj.Tensor(a), pj.Tensor(b)), TF.mse_loss(at, bt))
        self.check(nn.L1Loss(reduction="sum")(pj.Tensor(a), pj.Tensor(b)), TF.l1_loss(at, bt, reduction="sum"))
        target = (b > 0).astype("float32")
        self.check(nn.BCEWithLogitsLoss()(pj.Tensor(a), pj.Tensor(target)),
                   TF.binary_cross_entropy_with_logits(at, torch.from_numpy(target)))


class LeNetLike(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 8, 3, pad_mode="valid", has_bias=True)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(8, 3)

    def construct(self, x):
        x = self.pool(self.relu(self.bn(self.conv1(x))))
        x = self.relu(self.conv2(x))
        return self.fc(self.flatten(self.gap(x)))


class TestSmallCNN(TorchCase):
    def test_cnn_matches_torch(self):
        pj.set_seed(0)
        net = LeNetLike()
        net.set_train(False)
        tnet = torch.nn.Sequential(
            torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2, 2), torch.nn.Conv2d(4, 8, 3), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 3)).eval()
        with torch.no_grad():
            tnet[0].weight.copy_(to_torch(net.conv1.weight))
            tnet[0].bias.copy_(to_torch(net.conv1.bias))
            tnet[4].weight.copy_(to_torch(net.conv2.weight))
            tnet[4].bias.copy_(to_torch(net.conv2.bias))
            tnet[8].weight.copy_(to_torch(net.fc.weight))
            tnet[8].bias.copy_(to_torch(net.fc.bias))
        x = rand(2, 1, 12, 12, seed=13)
        self.check(net(pj.Tensor(x)), tnet(torch.from_numpy(x)))


if __name__ == "__main__":
    unittest.main()
