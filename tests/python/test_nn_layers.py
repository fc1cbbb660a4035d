"""Every nn layer on 3.7/3.9: output shapes and values on small hand-checkable inputs, train/eval
behaviour, and the errors a MindSpore user expects (the torch oracle suite checks values at
scale on the system Python)."""
import unittest

import pijit as pj
from pijit import nn, ops
from pijit.common.initializer import One, Zero


class TestDenseConv(unittest.TestCase):
    def test_dense_values_and_activation(self):
        d = nn.Dense(3, 2, weight_init=One(), bias_init=Zero(), activation="relu")
        self.assertEqual(d(pj.Tensor([[1.0, 2.0, -4.0]])).tolist(), [[0.0, 0.0]])
        self.assertEqual(d(pj.Tensor([[1.0, 2.0, 3.0]])).tolist(), [[6.0, 6.0]])
        self.assertEqual(d(pj.ones(4, 5, 3)).shape, (4, 5, 2))

    def test_dense_shape_error_names_shapes(self):
        d = nn.Dense(4, 2)
        with self.assertRaises(ValueError) as cm:
            d(pj.ones(3, 5))
        self.assertIn("in_channels=4", str(cm.exception))
        self.assertIn("(3, 5)", str(cm.exception))

    def test_conv2d_pad_modes(self):
        x = pj.ones(1, 1, 5, 5)
        same = nn.Conv2d(1, 1, 3, weight_init=One())           # MindSpore default: pad_mode='same'
        self.assertEqual(same(x).shape, (1, 1, 5, 5))
        self.assertEqual(same(x)[0, 0, 0].tolist(), [4.0, 6.0, 6.0, 6.0, 4.0])
        valid = nn.Conv2d(1, 1, 3, pad_mode="valid", weight_init=One())
        self.assertEqual(valid(x).tolist(), [[[[9.0] * 3] * 3]])
        pad = nn.Conv2d(1, 2, 3, stride=2, pad_mode="pad", padding=1, weight_init=One(),
                        has_bias=True, bias_init=Zero())
        self.assertEqual(pad(x).shape, (1, 2, 3, 3))
        self.assertEqual(pad(x)[0, 0, 1].tolist(), [6.0, 9.0, 6.0])

    def test_conv2d_groups_and_transpose(self):
        x = pj.ones(2, 4, 6, 6)
        self.assertEqual(nn.Conv2d(4, 8, 3, group=2)(x).shape, (2, 8, 6, 6))
        self.assertEqual(nn.Conv2d(4, 4, 3, group=4, pad_mode="valid")(x).shape, (2, 4, 4, 4))
        ct = nn.Conv2dTranspose(4, 3, 2, stride=2, pad_mode="valid")
        self.assertEqual(ct(x).shape, (2, 3, 12, 12))
        self.assertEqual(nn.Conv2dTranspose(4, 3, 3, stride=2)(x).shape, (2, 3, 12, 12))
        self.assertEqual(nn.Conv2dTranspose(4, 3, 3, pad_mode="pad", padding=(1, 1, 0, 0))(x).shape,
                         (2, 3, 6, 8))
        with self.assertRaises(ValueError) as cm:
            nn.Conv2dTranspose(4, 3, 3, pad_mode="pad", padding=(1, 0, 0, 0))(x)
        self.assertIn("symmetric", str(cm.exception))

    def test_conv2d_errors(self):
        with self.assertRaises(ValueError) as cm:
            nn.Conv2d(3, 4, 3)(pj.ones(1, 2, 5, 5))
        self.assertIn("in_channels=3", str(cm.exception))
        self.assertIn("(1, 2, 5, 5)", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            nn.Conv2d(1, 1, 5, pad_mode="valid")(pj.ones(1, 1, 3, 3))
        self.assertIn("kernel size (5, 5)", str(cm.exception))
        self.assertIn("larger than the padded input", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            nn.Conv2d(1, 1, 3, pad_mode="circular")
        self.assertIn("pad_mode", str(cm.exception))
        with self.assertRaises(ValueError):
            nn.Conv2d(3, 4, 3, group=2)
        with self.assertRaises(ValueError):
            nn.Conv2d(1, 1, 3, padding=1)  # padding needs pad_mode='pad'
        with self.assertRaises(ValueError):
            nn.Conv2d(1, 1, 3)(pj.ones(1, 5, 5))
        with self.assertRaises(TypeError):
            ops.conv2d(pj.ones(1, 1, 3, 3, dtype=pj.int32), pj.ones(1, 1, 1, 1, dtype=pj.int32))


class TestPooling(unittest.TestCase):
    def test_max_avg_adaptive(self):
        x = pj.arange(16, dtype=pj.float32).reshape(1, 1, 4, 4)
        self.assertEqual(nn.MaxPool2d(2, 2)(x).tolist(), [[[[5.0, 7.0], [13.0, 15.0]]]])
        self.assertEqual(nn.AvgPool2d(2, 2)(x).tolist(), [[[[2.5, 4.5], [10.5, 12.5]]]])
        self.assertEqual(nn.AdaptiveAvgPool2d(1)(x).tolist(), [[[[7.5]]]])
        self.assertEqual(nn.AdaptiveAvgPool2d((2, 1))(x).tolist(), [[[[3.5], [11.5]]]])
        self.assertEqual(nn.MaxPool2d(3, 2, pad_mode="same")(x).shape, (1, 1, 2, 2))
        self.assertEqual(ops.max_pool2d(x, 3, 2, ceil_mode=True).shape, (1, 1, 2, 2))
        self.assertEqual(ops.max_pool2d(x, 3, 2, ceil_mode=False).shape, (1, 1, 1, 1))

    def test_same_mode_pads_the_end_and_averages_valid_elements(self):
        x = pj.arange(25, dtype=pj.float32).reshape(1, 1, 5, 5)  # TF 'same': extra pad at the end
        self.assertEqual(nn.MaxPool2d(2, 2, pad_mode="same")(x).tolist(),
                         [[[[6.0, 8.0, 9.0], [16.0, 18.0, 19.0], [21.0, 23.0, 24.0]]]])
        self.assertEqual(nn.AvgPool2d(2, 2, pad_mode="same")(x)[0, 0, 0].tolist(), [3.0, 5.0, 6.5])
        self.assertEqual(nn.AvgPool2d(2, 2, pad_mode="same")(x)[0, 0, 2].tolist(), [20.5, 22.5, 24.0])
        y = pj.arange(49, dtype=pj.float32).reshape(1, 1, 7, 7) * -1  # pads on both sides
        self.assertEqual(nn.MaxPool2d(3, 2, pad_mode="same")(y)[0, 0, 0].tolist(),
                         [0.0, -1.0, -3.0, -5.0])

    def test_pool_errors(self):
        with self.assertRaises(ValueError):
            nn.MaxPool2d(2, 2, pad_mode="full")
        with self.assertRaises(ValueError):
            ops.max_pool2d(pj.ones(1, 1, 4, 4), 2, 2, padding=2)  # pad > kernel/2
        with self.assertRaises(ValueError):
            nn.MaxPool2d(2, 2)(pj.ones(4, 4))


class TestNormalization(unittest.TestCase):
    def test_batchnorm_train_updates_moving_stats(self):
        bn = nn.BatchNorm2d(2)
        x = pj.Tensor([[[[1.0, 3.0]], [[0.0, 0.0]]], [[[5.0, 7.0]], [[2.0, 2.0]]]])  # N=2,C=2,1x2
        bn.set_train(True)
        y = bn(x)
        # channel 0: mean 4, biased var 5; moving = 0.9*0 + 0.1*4, 0.9*1 + 0.1*(5*4/3)
        self.assertAlmostEqual(bn.moving_mean.tolist()[0], 0.4, places=6)
        self.assertAlmostEqual(bn.moving_variance.tolist()[0], 0.9 + 0.1 * 20.0 / 3, places=5)
        self.assertAlmostEqual(y[0, 0, 0, 0].item(), (1 - 4) / (5 + 1e-5) ** 0.5, places=5)
        bn.set_train(False)
        z = bn(x)
        self.assertAlmostEqual(z[0, 0, 0, 0].item(), (1 - 0.4) / (bn.moving_variance.tolist()[0]
                                                                   + 1e-5) ** 0.5, places=5)

    def test_batchnorm_errors(self):
        with self.assertRaises(ValueError) as cm:
            nn.BatchNorm2d(3)(pj.ones(2, 4, 2, 2))
        self.assertIn("num_features=3", str(cm.exception))
        self.assertIn("(2, 4, 2, 2)", str(cm.exception))
        with self.assertRaisesRegex(ValueError, "For 'BatchNorm2d', the dimension of 'x' should be 4, but got 2"):
            nn.BatchNorm2d(3)(pj.ones(2, 3))
        self.assertEqual(nn.BatchNorm1d(3)(pj.ones(2, 3)).shape, (2, 3))

    def test_layer_and_group_norm(self):
        ln = nn.LayerNorm((2,), epsilon=0.0)
        self.assertEqual(ln(pj.Tensor([[1.0, 3.0]])).tolist(), [[-1.0, 1.0]])
        with self.assertRaises(ValueError):
            ln(pj.ones(2, 3))
        gn = nn.GroupNorm(1, 2, eps=0.0)
        self.assertEqual(gn(pj.Tensor([[[1.0], [3.0]]])).tolist(), [[[-1.0], [1.0]]])
        with self.assertRaises(ValueError):
            nn.GroupNorm(3, 4)


class TestMisc(unittest.TestCase):
    def test_dropout_train_eval_and_seed(self):
        d = nn.Dropout(p=0.5)
        x = pj.ones(1000)
        self.assertIs(d(x), x)  # eval: identity
        d.set_train(True)
        pj.set_seed(1)
        a = d(x)
        pj.set_seed(1)
        b = d(x)
        self.assertEqual(a.tolist(), b.tolist())
        kept = (a > 0).sum().item()
        self.assertTrue(400 < kept < 600)
        self.assertEqual(a.max().item(), 2.0)
        self.assertEqual(nn.Dropout(keep_prob=0.9).p, 1 - 0.9)
        with self.assertRaises(ValueError):
            nn.Dropout(p=1.0)

    def test_embedding(self):
        emb = nn.Embedding(4, 3, padding_idx=0)
        out = emb(pj.Tensor([[0, 2], [3, 3]], pj.int32))
        self.assertEqual(out.shape, (2, 2, 3))
        self.assertEqual(out[0, 0].tolist(), [0.0, 0.0, 0.0])
        with self.assertRaises(IndexError):
            emb(pj.Tensor([4]))

    def test_flatten_identity_activations(self):
        self.assertEqual(nn.Flatten()(pj.ones(2, 3, 4)).shape, (2, 12))
        x = pj.Tensor([-2.0, 0.0, 8.0])
        self.assertEqual(nn.ReLU6()(x).tolist(), [0.0, 0.0, 6.0])
        self.assertEqual(nn.LeakyReLU(0.5)(x).tolist(), [-1.0, 0.0, 8.0])
        self.assertAlmostEqual(nn.Sigmoid()(pj.Tensor([0.0])).item(), 0.5)
        self.assertAlmostEqual(nn.Softmax()(pj.Tensor([1.0, 1.0])).tolist()[0], 0.5)
        self.assertIs(nn.Identity()(x), x)


class TestLosses(unittest.TestCase):
    def test_cross_entropy_and_softmax_ce(self):
        logits = pj.Tensor([[0.0, 0.0], [0.0, 0.0]])
        labels = pj.Tensor([0, 1], pj.int32)
        ln2 = 0.6931471805599453
        self.assertAlmostEqual(nn.CrossEntropyLoss()(logits, labels).item(), ln2, places=6)
        self.assertEqual(nn.CrossEntropyLoss(reduction="none")(logits, labels).shape, (2,))
        self.assertAlmostEqual(nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum")(
            logits, labels).item(), 2 * ln2, places=5)
        onehot = pj.Tensor([[1.0, 0.0], [0.0, 1.0]])
        self.assertEqual(nn.SoftmaxCrossEntropyWithLogits()(logits, onehot).shape, (2,))
        with self.assertRaises(ValueError):
            nn.CrossEntropyLoss(reduction="avg")

    def test_regression_losses(self):
        a, b = pj.Tensor([1.0, 2.0]), pj.Tensor([2.0, 4.0])
        self.assertEqual(nn.MSELoss()(a, b).item(), 2.5)
        self.assertEqual(nn.L1Loss(reduction="sum")(a, b).item(), 3.0)
        self.assertAlmostEqual(nn.BCEWithLogitsLoss()(pj.Tensor([0.0]), pj.Tensor([1.0])).item(),
                               0.6931472, places=6)
        with self.assertRaises(ValueError):
            nn.MSELoss()(a, pj.ones(3))


if __name__ == "__main__":
    unittest.main()
