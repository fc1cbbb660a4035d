"""mindspore.mint (pijit.mint): MindSpore's PyTorch-style API. Functions, layers and optimizers
are called as mint documents them (torch's argument names: dim, keepdim, alpha, in_features,
padding, betas, ...) against values worked out by hand; UnderJit checks that the common functions
capture into one graph with no break, and that a training step of mint layers with a mint
optimizer is one graph with exactly the eager weights. oracle/test_ms_mint_oracle.py compares them
with PyTorch on random data."""
import math
import struct
import sys
import unittest

from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY  # noqa: E402

import pijit as ms
from pijit import mint
from pijit.mint import nn
from pijit.mint.nn import functional as F


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def values(out):
    if isinstance(out, (tuple, list)):
        return tuple(values(o) for o in out)
    return (out.dtype, out.shape, out.tolist())


def flat(t):
    out = t.tolist()
    while isinstance(out, list) and out and isinstance(out[0], list):
        out = [v for row in out for v in row]
    return out


X = [[1.0, -2.5, 3.0], [4.0, 0.5, -6.0]]


class Functions(unittest.TestCase):
    def test_arithmetic_with_alpha(self):
        x, y = T([1.0, 2.0]), T([4.0, 8.0])
        self.assertEqual(mint.add(x, y, alpha=0.5).tolist(), [3.0, 6.0])
        self.assertEqual(mint.sub(y, x, alpha=2).tolist(), [2.0, 4.0])
        self.assertEqual(values(mint.add(T(1, ms.int32), T([4.0, 5.0]), alpha=0.5)),
                         (ms.float32, (2,), [3.0, 3.5]))
        self.assertEqual(mint.mul(x, 3).tolist(), [3.0, 6.0])
        self.assertEqual(mint.div(T([-7.0, 7.0]), 2, rounding_mode="floor").tolist(), [-4.0, 3.0])
        self.assertEqual(mint.div(T([-7.0, 7.0]), 2, rounding_mode="trunc").tolist(), [-3.0, 3.0])
        self.assertEqual(mint.remainder(T([-7, 7]), 3).tolist(), [2, 1])
        self.assertEqual(mint.fmod(T([-7, 7]), 3).tolist(), [-1, 1])
        self.assertEqual(mint.pow(T([2.0, 3.0]), 2).tolist(), [4.0, 9.0])
        with self.assertRaisesRegex(TypeError, "alpha must be a number"):
            mint.add(x, y, alpha="2")

    def test_clamp(self):
        x = T(X)
        self.assertEqual(mint.clamp(x, -1, 2).tolist(), [[1.0, -1.0, 2.0], [2.0, 0.5, -1.0]])
        self.assertEqual(mint.clamp(x, max=0.0).tolist(), [[0.0, -2.5, 0.0], [0.0, 0.0, -6.0]])
        self.assertEqual(mint.clamp(T([1.0, 5.0]), T([2.0, 0.0]), T([3.0, 4.0])).tolist(), [2.0, 4.0])
        with self.assertRaisesRegex(ValueError, "at least one of min and max"):
            mint.clamp(x)

    def test_unary(self):
        self.assertEqual(mint.abs(T([-1, 2])).tolist(), [1, 2])
        self.assertEqual(mint.neg(T([1.0])).tolist(), [-1.0])
        self.assertEqual(mint.sqrt(T([4, 9])).tolist(), [2.0, 3.0])
        self.assertEqual(mint.rsqrt(T([4.0])).tolist(), [0.5])
        self.assertEqual(mint.square(T([3])).tolist(), [9])
        self.assertEqual(mint.reciprocal(T([4.0])).tolist(), [0.25])
        self.assertEqual(mint.floor(T([-1.5, 1.5])).tolist(), [-2.0, 1.0])
        self.assertEqual(mint.ceil(T([-1.5, 1.5])).tolist(), [-1.0, 2.0])
        self.assertEqual(mint.trunc(T([-1.5, 1.5])).tolist(), [-1.0, 1.0])
        self.assertEqual(mint.round(T([0.5, 1.5, 2.567]), decimals=0).tolist(), [0.0, 2.0, 3.0])
        self.assertEqual(mint.sign(T([-2.0, 0.0, 3.0])).tolist(), [-1.0, 0.0, 1.0])
        self.assertEqual(mint.exp(T([0.0])).tolist(), [1.0])
        self.assertEqual(mint.log(T([1.0])).tolist(), [0.0])
        self.assertEqual(mint.log2(T([8.0])).tolist(), [3.0])
        self.assertEqual(mint.exp2(T([3.0])).tolist(), [8.0])
        self.assertEqual(mint.sigmoid(T([0.0])).tolist(), [0.5])
        self.assertEqual(mint.tanh(T([0.0])).tolist(), [0.0])
        self.assertEqual(mint.erf(T([0.0])).tolist(), [0.0])
        inf, nan = float("inf"), float("nan")
        v = T([1.0, inf, nan])
        self.assertEqual(mint.isfinite(v).tolist(), [True, False, False])
        self.assertEqual(mint.isinf(v).tolist(), [False, True, False])
        self.assertEqual(mint.isnan(v).tolist(), [False, False, True])
        self.assertEqual(mint.isclose(T([1.0, 1.1]), T([1.0, 1.0])).tolist(), [True, False])

    def test_comparisons_and_logic(self):
        x, y = T([1, 2, 3]), T([3, 2, 1])
        self.assertEqual(mint.eq(x, y).tolist(), [False, True, False])
        self.assertEqual(mint.ne(x, 2).tolist(), [True, False, True])
        self.assertEqual(mint.gt(x, y).tolist(), [False, False, True])
        self.assertEqual(mint.greater_equal(x, y).tolist(), [False, True, True])
        self.assertEqual(mint.lt(x, y).tolist(), [True, False, False])
        self.assertEqual(mint.less_equal(x, y).tolist(), [True, True, False])
        self.assertEqual(mint.maximum(x, y).tolist(), [3, 2, 3])
        self.assertEqual(mint.minimum(x, y).tolist(), [1, 2, 1])
        self.assertEqual(mint.logical_and(T([0, 1, 2]), T([1, 1, 0])).tolist(), [False, True, False])
        self.assertEqual(mint.logical_or(T([0, 0]), T([0, 5])).tolist(), [False, True])
        self.assertEqual(mint.logical_xor(T([True, True]), T([True, False])).tolist(), [False, True])
        self.assertEqual(mint.logical_not(T([True, False])).tolist(), [False, True])
        self.assertEqual(mint.where(x > 1, x, y).tolist(), [3, 2, 3])

    def test_reductions(self):
        x = T(X)
        self.assertEqual(mint.sum(x, 1, keepdim=True).tolist(), [[1.5], [-1.5]])
        self.assertEqual(mint.sum(x, dim=(0, 1)).tolist(), 0.0)
        self.assertEqual(values(mint.sum(T([1, 2], ms.int32), dtype=ms.float64)), (ms.float64, (), 3.0))
        self.assertEqual(mint.mean(x, 0).tolist(), [2.5, -1.0, -1.5])
        self.assertEqual(mint.mean(x, dim=1, keepdim=True).tolist(), [[0.5], [-0.5]])
        self.assertEqual(mint.prod(T([[1, 2], [3, 4]]), 1).tolist(), [2, 12])
        self.assertEqual(mint.max(x).tolist(), 4.0)
        v, i = mint.max(x, 1, keepdim=True)
        self.assertEqual((v.tolist(), i.tolist(), i.dtype), ([[3.0], [4.0]], [[2], [0]], ms.int64))
        v, i = mint.min(x, dim=0)
        self.assertEqual((v.tolist(), i.tolist()), ([1.0, -2.5, -6.0], [0, 0, 1]))
        self.assertEqual(mint.max(x, T([[2.0] * 3] * 2)).tolist(), [[2.0, 2.0, 3.0], [4.0, 2.0, 2.0]])
        self.assertEqual(mint.amax(x, 1).tolist(), [3.0, 4.0])
        self.assertEqual(mint.amin(x).tolist(), -6.0)
        self.assertEqual(values(mint.argmax(x)), (ms.int64, (), 3))
        self.assertEqual(mint.argmax(x, 1, True).tolist(), [[2], [0]])
        self.assertEqual(mint.argmin(x, dim=1).tolist(), [1, 2])
        self.assertEqual(mint.all(x > -3, 1).tolist(), [True, False])
        self.assertEqual(mint.any(T([[0, 0], [0, 1]]), dim=1).tolist(), [False, True])
        self.assertEqual(mint.var(T([1.0, 3.0])).tolist(), 2.0)  # Bessel's correction by default
        self.assertEqual(mint.var(T([1.0, 3.0]), correction=0).tolist(), 1.0)
        self.assertEqual(mint.std(T([[1.0, 3.0]]), 1).tolist(), [f32(math.sqrt(2.0))])
        self.assertAlmostEqual(mint.logsumexp(T([0.0, 0.0]), 0).tolist(), math.log(2.0), places=6)
        self.assertEqual(mint.cumsum(T([[1, 2], [3, 4]]), 0).tolist(), [[1, 2], [4, 6]])
        self.assertEqual(mint.cumsum(T([1, 2], ms.int32), 0, dtype=ms.float32).tolist(), [1.0, 3.0])

    def test_sorting(self):
        x = T([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
        v, i = mint.topk(x, 2)
        self.assertEqual((v.tolist(), i.tolist()), ([[3.0, 2.0], [5.0, 4.0]], [[0, 2], [1, 2]]))
        v, i = mint.topk(x, 1, dim=0, largest=False)
        self.assertEqual((v.tolist(), i.tolist()), ([[0.0, 1.0, 2.0]], [[1, 0, 0]]))
        v, i = mint.sort(x, dim=1, descending=True)
        self.assertEqual((v.tolist(), i.tolist()), ([[3.0, 2.0, 1.0], [5.0, 4.0, 0.0]], [[0, 2, 1], [1, 2, 0]]))
        self.assertEqual(mint.argsort(x).tolist(), [[1, 2, 0], [0, 2, 1]])

    def test_linear_algebra(self):
        a, b = T([[1.0, 2.0], [3.0, 4.0]]), T([[5.0, 6.0], [7.0, 8.0]])
        self.assertEqual(mint.matmul(a, b).tolist(), [[19.0, 22.0], [43.0, 50.0]])
        self.assertEqual(mint.mm(a, b).tolist(), [[19.0, 22.0], [43.0, 50.0]])
        self.assertEqual(mint.bmm(mint.ones(2, 2, 3), mint.ones(2, 3, 4)).tolist(), [[[3.0] * 4] * 2] * 2)
        self.assertEqual(mint.baddbmm(mint.ones(1, 1, 1), T([[[1.0, 2.0]]]), T([[[3.0], [4.0]]]),
                                      beta=0.5, alpha=2).tolist(), [[[22.5]]])
        self.assertEqual(mint.addmm(a, a, mint.eye(2), beta=2).tolist(), [[3.0, 6.0], [9.0, 12.0]])
        self.assertEqual(mint.addbmm(mint.zeros(1, 1), T([[[1.0]], [[2.0]]]), T([[[3.0]], [[4.0]]])).tolist(),
                         [[11.0]])
        self.assertEqual(mint.outer(T([1, 2]), T([3, 4])).tolist(), [[3, 4], [6, 8]])
        self.assertEqual(mint.dot(T([1.0, 2.0]), T([3.0, 4.0])).tolist(), 11.0)
        with self.assertRaisesRegex(ValueError, "bmm: both inputs must be 3-D"):
            mint.bmm(a, b)
        with self.assertRaisesRegex(ValueError, "mm: both inputs must be 2-D"):
            mint.mm(T([1.0]), b)

    def test_creation(self):
        self.assertEqual(values(mint.zeros((2, 1))), (ms.float32, (2, 1), [[0.0], [0.0]]))
        self.assertEqual(values(mint.ones(2, 2, dtype=ms.int32)), (ms.int32, (2, 2), [[1, 1], [1, 1]]))
        self.assertEqual(values(mint.full((2,), 3)), (ms.int64, (2,), [3, 3]))
        self.assertEqual(values(mint.full((1,), 0.5)), (ms.float32, (1,), [0.5]))
        x = T([1, 2], ms.int32)
        self.assertEqual(values(mint.zeros_like(x)), (ms.int32, (2,), [0, 0]))
        self.assertEqual(values(mint.ones_like(x, dtype=ms.float32)), (ms.float32, (2,), [1.0, 1.0]))
        self.assertEqual(values(mint.full_like(x, 7)), (ms.int32, (2,), [7, 7]))
        self.assertEqual(values(mint.arange(5)), (ms.int64, (5,), [0, 1, 2, 3, 4]))
        self.assertEqual(values(mint.arange(1, 2, 0.5)), (ms.float32, (2,), [1.0, 1.5]))
        self.assertEqual(mint.arange(0, 6, 2, dtype=ms.float32).tolist(), [0.0, 2.0, 4.0])
        self.assertEqual(mint.linspace(0, 1, 3).tolist(), [0.0, 0.5, 1.0])
        self.assertEqual(mint.eye(2, 3).tolist(), [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
        self.assertEqual(mint.empty(2).tolist(), [0.0, 0.0])
        self.assertEqual(mint.clone(x).tolist(), [1, 2])
        self.assertEqual(mint.rand(2, 3).shape, (2, 3))
        self.assertEqual(mint.randn((4,)).dtype, ms.float32)
        r = mint.randint(3, 7, (100,))
        self.assertEqual((r.dtype, r.shape), (ms.int64, (100,)))
        self.assertTrue(min(r.tolist()) >= 3 and max(r.tolist()) < 7)
        self.assertTrue(max(mint.randint(2, (50,)).tolist()) < 2)
        self.assertEqual(mint.rand_like(T([[1.0]])).shape, (1, 1))

    def test_shapes(self):
        x = T([[1, 2, 3], [4, 5, 6]])
        self.assertEqual(mint.cat((x, x), dim=1).shape, (2, 6))
        self.assertEqual(mint.stack([x, x], dim=-1).shape, (2, 3, 2))
        self.assertEqual([t.tolist() for t in mint.split(x, 2, dim=1)], [[[1, 2], [4, 5]], [[3], [6]]])
        self.assertEqual([t.shape for t in mint.split(x, [1, 2], 1)], [(2, 1), (2, 2)])
        self.assertEqual([t.tolist() for t in mint.chunk(mint.arange(5), 3)], [[0, 1], [2, 3], [4]])
        self.assertEqual(mint.narrow(x, 1, 1, 2).tolist(), [[2, 3], [5, 6]])
        self.assertEqual(mint.index_select(x, 1, T([2, 0])).tolist(), [[3, 1], [6, 4]])
        self.assertEqual(mint.gather(x, 1, T([[2, 0], [1, 1]])).tolist(), [[3, 1], [5, 5]])
        self.assertEqual(mint.gather(x, 0, T([[1, 0, 1]])).tolist(), [[4, 2, 6]])
        self.assertEqual(mint.scatter_add(mint.zeros(2, 3), 1, T([[0, 0, 2], [1, 1, 1]]),
                                          T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).tolist(),
                         [[3.0, 0.0, 3.0], [0.0, 15.0, 0.0]])
        self.assertEqual(mint.flatten(mint.ones(2, 3, 4)).shape, (24,))
        self.assertEqual(mint.flatten(mint.ones(2, 3, 4), 1).shape, (2, 12))
        self.assertEqual(mint.flatten(T(5.0)).shape, (1,))
        self.assertEqual(mint.reshape(x, (3, 2)).tolist(), [[1, 2], [3, 4], [5, 6]])
        self.assertEqual(mint.permute(mint.ones(2, 3, 4), (2, 0, 1)).shape, (4, 2, 3))
        self.assertEqual(mint.transpose(x, 0, 1).tolist(), [[1, 4], [2, 5], [3, 6]])
        self.assertEqual(mint.squeeze(mint.ones(1, 2, 1)).shape, (2,))
        self.assertEqual(mint.squeeze(mint.ones(1, 2, 1), 1).shape, (1, 2, 1))  # size 2: kept
        self.assertEqual(mint.squeeze(mint.ones(1, 2, 1), (0, 2)).shape, (2,))
        self.assertEqual(mint.unsqueeze(x, 0).shape, (1, 2, 3))
        self.assertEqual(mint.flip(x, (0, 1)).tolist(), [[6, 5, 4], [3, 2, 1]])
        self.assertEqual(mint.roll(x, 1).tolist(), [[6, 1, 2], [3, 4, 5]])
        self.assertEqual(mint.roll(x, 1, 1).tolist(), [[3, 1, 2], [6, 4, 5]])
        self.assertEqual(mint.tile(T([1, 2]), (2,)).tolist(), [1, 2, 1, 2])
        self.assertEqual(mint.broadcast_to(T([1, 2]), (2, 2)).tolist(), [[1, 2], [1, 2]])
        self.assertEqual(mint.repeat_interleave(T([[1, 2], [3, 4]]), 2).tolist(), [1, 1, 2, 2, 3, 3, 4, 4])
        self.assertEqual(mint.repeat_interleave(T([[1, 2], [3, 4]]), T([1, 2]), 0).tolist(),
                         [[1, 2], [3, 4], [3, 4]])
        self.assertEqual(mint.tril(x).tolist(), [[1, 0, 0], [4, 5, 0]])
        self.assertEqual(mint.triu(x, diagonal=1).tolist(), [[0, 2, 3], [0, 0, 6]])
        with self.assertRaisesRegex(ValueError, "narrow: start 2 and length 2 do not fit"):
            mint.narrow(x, 1, 2, 2)

    def test_data_dependent(self):
        x = T([[0.0, 1.5], [2.0, 0.0]])
        self.assertEqual(values(mint.nonzero(x)), (ms.int64, (2, 2), [[0, 1], [1, 0]]))
        self.assertEqual([t.tolist() for t in mint.nonzero(x, as_tuple=True)], [[0, 1], [1, 0]])
        self.assertEqual(mint.masked_select(x, x > 1).tolist(), [1.5, 2.0])
        u, inv = mint.unique(T([[3, 1], [3, 2]]), return_inverse=True)
        self.assertEqual((u.tolist(), inv.tolist(), inv.dtype), ([1, 2, 3], [[2, 0], [2, 1]], ms.int64))
        with self.assertRaisesRegex(NotImplementedError, "return_counts and dim"):
            mint.unique(x, return_counts=True)


class Functional(unittest.TestCase):
    def test_activations(self):
        x = T([-2.0, 0.0, 3.0])
        self.assertEqual(F.relu(x).tolist(), [0.0, 0.0, 3.0])
        self.assertEqual(F.relu6(T([-1.0, 7.0])).tolist(), [0.0, 6.0])
        self.assertEqual(F.leaky_relu(x).tolist(), [f32(-0.02), 0.0, 3.0])
        self.assertEqual(F.leaky_relu(x, 0.5).tolist(), [-1.0, 0.0, 3.0])
        self.assertEqual(F.elu(T([0.0, 1.0])).tolist(), [0.0, 1.0])
        self.assertAlmostEqual(F.elu(T([-1.0]), alpha=2.0).tolist()[0], 2 * (math.exp(-1) - 1), places=6)
        self.assertEqual(F.hardtanh(x).tolist(), [-1.0, 0.0, 1.0])
        self.assertEqual(F.hardswish(T([-3.0, 0.0, 3.0])).tolist(), [0.0, 0.0, 3.0])
        self.assertEqual(F.hardsigmoid(T([-3.0, 0.0, 3.0])).tolist(), [0.0, 0.5, 1.0])
        self.assertAlmostEqual(F.gelu(T([1.0])).tolist()[0], 0.8413447, places=6)
        self.assertAlmostEqual(F.gelu(T([1.0]), approximate="tanh").tolist()[0], 0.8411920, places=6)
        self.assertAlmostEqual(F.silu(T([1.0])).tolist()[0], 1 / (1 + math.exp(-1)), places=6)
        self.assertAlmostEqual(F.mish(T([1.0])).tolist()[0], math.tanh(math.log1p(math.e)), places=6)
        self.assertAlmostEqual(F.logsigmoid(T([-100.0])).tolist()[0], -100.0, places=4)
        self.assertAlmostEqual(F.softplus(T([1.0]), beta=2).tolist()[0], math.log1p(math.exp(2)) / 2, places=6)
        self.assertEqual(F.sigmoid(T([0.0])).tolist(), [0.5])
        self.assertEqual(F.tanh(T([0.0])).tolist(), [0.0])
        with self.assertRaisesRegex(ValueError, "approximate must be 'none' or 'tanh'"):
            F.gelu(x, approximate="fast")

    def test_softmax(self):
        x = T([[0.0, math.log(3.0)], [0.0, 0.0]])
        self.assertEqual([[round(v, 6) for v in r] for r in F.softmax(x).tolist()], [[0.25, 0.75], [0.5, 0.5]])
        self.assertEqual([[round(v, 6) for v in r] for r in F.softmax(x, dim=0).tolist()],
                         [[0.5, 0.75], [0.5, 0.25]])
        self.assertEqual(F.softmax(x, dtype=ms.float64).dtype, ms.float64)
        self.assertAlmostEqual(F.log_softmax(x, 1).tolist()[1][0], math.log(0.5), places=6)
        self.assertEqual(mint.softmax(x, 1).tolist(), F.softmax(x, 1).tolist())
        self.assertEqual(F.normalize(T([[3.0, 4.0]])).tolist(), [[f32(0.6), f32(0.8)]])
        self.assertEqual(F.normalize(T([[3.0, -1.0]]), p=1).tolist(), [[0.75, -0.25]])

    def test_linear_dropout_embedding(self):
        x = T([[1.0, 2.0]])
        w = T([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        self.assertEqual(F.linear(x, w).tolist(), [[1.0, 2.0, 3.0]])
        self.assertEqual(F.linear(x, w, T([1.0, 1.0, 1.0])).tolist(), [[2.0, 3.0, 4.0]])
        self.assertEqual(F.dropout(x, 0.5, training=False).tolist(), [[1.0, 2.0]])
        self.assertEqual(F.dropout(x, 1.0).tolist(), [[0.0, 0.0]])
        out = F.dropout(mint.ones(1000), 0.5).tolist()
        self.assertEqual(set(out), {0.0, 2.0})
        self.assertEqual(F.embedding(T([[2, 0]]), w).tolist(), [[[1.0, 1.0], [1.0, 0.0]]])
        self.assertEqual(values(F.one_hot(T([0, 2]), 3)), (ms.int64, (2, 3), [[1, 0, 0], [0, 0, 1]]))
        self.assertEqual(F.one_hot(T([1, 3])).shape, (2, 4))

    def test_convolution_and_pooling(self):
        x = T([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]])
        w = T([[[[1.0, 0.0], [0.0, 1.0]]]])
        self.assertEqual(F.conv2d(x, w).tolist(), [[[[6.0, 8.0], [12.0, 14.0]]]])
        self.assertEqual(F.conv2d(x, w, T([1.0]), padding=1, stride=2).tolist(),
                         [[[[2.0, 4.0], [8.0, 15.0]]]])
        self.assertEqual(F.conv2d(x, w, padding="same").shape, (1, 1, 3, 3))
        self.assertEqual(F.max_pool2d(x, 2).tolist(), [[[[5.0]]]])
        self.assertEqual(F.max_pool2d(x, 2, 1).tolist(), [[[[5.0, 6.0], [8.0, 9.0]]]])
        self.assertEqual(F.avg_pool2d(x, 2).tolist(), [[[[3.0]]]])  # stride = kernel_size
        self.assertEqual(F.avg_pool2d(x, 3, 1, 1, count_include_pad=False).tolist()[0][0][0][0], 3.0)
        self.assertEqual(F.adaptive_avg_pool2d(x, 1).tolist(), [[[[5.0]]]])
        self.assertEqual(F.interpolate(T([[[[1.0, 2.0]]]]), scale_factor=2).tolist(),
                         [[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]]])
        with self.assertRaisesRegex(ValueError, "padding='same' is not supported for strided"):
            F.conv2d(x, w, padding="same", stride=2)

    def test_pad(self):
        x = T([[1.0, 2.0, 3.0]])
        self.assertEqual(F.pad(x, (1, 2)).tolist(), [[0.0, 1.0, 2.0, 3.0, 0.0, 0.0]])
        self.assertEqual(F.pad(x, (1, 0, 1, 0), value=9.0).tolist(), [[9.0, 9.0, 9.0, 9.0], [9.0, 1.0, 2.0, 3.0]])
        self.assertEqual(F.pad(x, (2, 1), mode="reflect").tolist(), [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]])
        self.assertEqual(F.pad(x, (2, 1), mode="replicate").tolist(), [[1.0, 1.0, 1.0, 2.0, 3.0, 3.0]])
        self.assertEqual(F.pad(x, (2, 1), mode="circular").tolist(), [[2.0, 3.0, 1.0, 2.0, 3.0, 1.0]])
        with self.assertRaisesRegex(ValueError, "padding length must be even"):
            F.pad(x, (1, 2, 3))

    def test_normalisation(self):
        x = T([[1.0, 3.0], [5.0, 7.0]])
        out = F.layer_norm(x, (2,)).tolist()
        self.assertAlmostEqual(out[0][0], -1.0, places=4)
        self.assertAlmostEqual(out[1][1], 1.0, places=4)
        rm, rv = mint.zeros(2), mint.ones(2)
        out = F.batch_norm(x, rm, rv, training=True, momentum=0.5)
        self.assertAlmostEqual(out.tolist()[0][0], -1.0, places=4)
        self.assertEqual(rm.tolist(), [1.5, 2.5])  # 0.5 * 0 + 0.5 * batch mean (3, 5)
        self.assertEqual(rv.tolist(), [4.5, 4.5])  # 0.5 * 1 + 0.5 * unbiased variance 8
        g = F.group_norm(T([[[1.0], [3.0], [5.0], [7.0]]]), 2).tolist()
        self.assertAlmostEqual(g[0][0][0], -1.0, places=4)
        self.assertAlmostEqual(g[0][3][0], 1.0, places=4)

    def test_losses(self):
        logits = T([[0.0, 0.0], [math.log(3.0), 0.0]])
        target = T([0, 1])
        ce = -(math.log(0.5) + math.log(0.25)) / 2
        self.assertAlmostEqual(F.cross_entropy(logits, target).tolist(), ce, places=6)
        self.assertAlmostEqual(F.cross_entropy(logits, target, reduction="sum").tolist(), 2 * ce, places=5)
        self.assertAlmostEqual(F.cross_entropy(logits, T([0, -100])).tolist(), -math.log(0.5), places=6)
        self.assertAlmostEqual(F.nll_loss(T([[-1.0, -2.0]]), T([1])).tolist(), 2.0, places=6)
        a, b = T([1.0, 2.0, 4.0]), T([1.0, 0.0, 1.0])
        self.assertEqual(F.mse_loss(a, b).tolist(), f32(13.0 / 3))
        self.assertEqual(F.mse_loss(a, b, "none").tolist(), [0.0, 4.0, 9.0])
        self.assertEqual(F.l1_loss(a, b, "sum").tolist(), 5.0)
        self.assertEqual(F.smooth_l1_loss(a, b, "none").tolist(), [0.0, 1.5, 2.5])  # default 'mean' elsewhere
        self.assertAlmostEqual(F.smooth_l1_loss(a, b).tolist(), 4.0 / 3, places=6)
        self.assertAlmostEqual(F.binary_cross_entropy(T([0.5]), T([1.0])).tolist(), math.log(2), places=6)
        self.assertAlmostEqual(F.binary_cross_entropy_with_logits(T([0.0]), T([1.0]), pos_weight=T([2.0])).tolist(),
                               2 * math.log(2), places=6)
        with self.assertRaisesRegex(ValueError, "reduction must be 'none', 'mean' or 'sum'"):
            F.mse_loss(a, b, "avg")


class Layers(unittest.TestCase):
    def test_linear(self):
        ms.set_seed(3)
        m = nn.Linear(4, 2)
        self.assertEqual((m.weight.shape, m.bias.shape), ((2, 4), (2,)))
        self.assertEqual([p.name for p in m.trainable_params()], ["weight", "bias"])
        bound = 1 / math.sqrt(4)
        self.assertTrue(all(abs(v) <= bound for v in flat(m.weight) + m.bias.tolist()))
        m = nn.Linear(in_features=2, out_features=1, bias=False)
        self.assertIsNone(m.bias)
        m.weight.set_data(T([[2.0, -1.0]]))
        self.assertEqual(m(T([[3.0, 1.0]])).tolist(), [[5.0]])
        self.assertEqual(repr(m).split("<")[1].rstrip(">"), "in_features=2, out_features=1, bias=False")
        with self.assertRaisesRegex(ValueError, "in_features must be a positive int"):
            nn.Linear(0, 2)

    def test_conv2d(self):
        m = nn.Conv2d(2, 3, 3, padding=1, bias=False)
        self.assertEqual((m.weight.shape, m.bias), ((3, 2, 3, 3), None))
        self.assertEqual(m(mint.ones(1, 2, 5, 5)).shape, (1, 3, 5, 5))
        m = nn.Conv2d(1, 1, 2, stride=2)
        self.assertEqual(m(mint.ones(1, 1, 4, 4)).shape, (1, 1, 2, 2))
        m = nn.Conv2d(1, 1, 3, padding=1, padding_mode="replicate", bias=False)
        m.weight.set_data(mint.ones(1, 1, 3, 3))
        self.assertEqual(m(mint.ones(1, 1, 2, 2)).tolist(), [[[[9.0, 9.0], [9.0, 9.0]]]])
        m = nn.Conv2d(2, 4, 1, groups=2, padding="same")
        self.assertEqual(m.weight.shape, (4, 1, 1, 1))
        with self.assertRaisesRegex(ValueError, "divisible by groups"):
            nn.Conv2d(3, 4, 1, groups=2)

    def test_activation_layers(self):
        x = T([-2.0, 0.0, 3.0])
        self.assertEqual(nn.ReLU()(x).tolist(), [0.0, 0.0, 3.0])
        self.assertEqual(nn.LeakyReLU(0.5)(x).tolist(), [-1.0, 0.0, 3.0])
        self.assertEqual(nn.LeakyReLU(negative_slope=0.5).negative_slope, 0.5)
        self.assertEqual(nn.Hardtanh(-1.0, 2.0)(x).tolist(), [-1.0, 0.0, 2.0])
        self.assertEqual(nn.Identity()(x).tolist(), x.tolist())
        self.assertEqual(nn.GELU(approximate="tanh")(x).tolist(), F.gelu(x, approximate="tanh").tolist())
        self.assertEqual(nn.Softmax(dim=0)(x).tolist(), F.softmax(x, 0).tolist())
        for cls in (nn.ReLU6, nn.SiLU, nn.Sigmoid, nn.Tanh, nn.ELU, nn.Hardswish, nn.Hardsigmoid,
                    nn.Mish, nn.Softplus, nn.LogSigmoid, nn.LogSoftmax):
            self.assertEqual(cls()(x).shape, (3,))
        self.assertEqual(repr(nn.ELU(0.5)), "ELU<alpha=0.5, inplace=False>")
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'slope'"):
            nn.LeakyReLU(slope=0.1)

    def test_dropout_flatten_embedding(self):
        d = nn.Dropout(p=0.5)
        d.set_train(False)
        self.assertEqual(d(T([1.0, 2.0])).tolist(), [1.0, 2.0])
        d.set_train(True)
        self.assertEqual(set(d(mint.ones(1000)).tolist()), {0.0, 2.0})
        self.assertEqual(nn.Flatten()(mint.ones(2, 3, 4)).shape, (2, 12))
        e = nn.Embedding(5, 3, padding_idx=1)
        self.assertEqual((e.weight.shape, e.weight[1].tolist()), ((5, 3), [0.0, 0.0, 0.0]))
        self.assertEqual(e(T([[1, 1]])).tolist(), [[[0.0] * 3] * 2])

    def test_norm_layers(self):
        ln = nn.LayerNorm(2)
        self.assertEqual((ln.weight.tolist(), ln.bias.tolist()), ([1.0, 1.0], [0.0, 0.0]))
        out = ln(T([[1.0, 3.0]])).tolist()
        self.assertAlmostEqual(out[0][0], -1.0, places=4)
        self.assertIsNone(nn.LayerNorm(2, elementwise_affine=False).weight)
        bn = nn.BatchNorm2d(1)
        bn.set_train(True)
        bn(T([[[[1.0, 3.0]]], [[[5.0, 7.0]]]]))
        self.assertEqual(bn.running_mean.tolist(), [f32(0.4)])  # 0.9 * 0 + 0.1 * 4
        self.assertAlmostEqual(bn.running_var.tolist()[0], 0.9 + 0.1 * 20.0 / 3, places=6)
        bn.set_train(False)
        self.assertAlmostEqual(bn(T([[[[0.4]]]])).tolist()[0][0][0][0], 0.0, places=6)
        self.assertEqual(nn.BatchNorm1d(3)(mint.ones(2, 3)).shape, (2, 3))
        self.assertEqual(nn.GroupNorm(2, 4)(mint.ones(1, 4, 2, 2)).shape, (1, 4, 2, 2))
        with self.assertRaisesRegex(ValueError, "expected a 4-D input"):
            nn.BatchNorm2d(1)(mint.ones(2, 1))

    def test_pooling_padding_upsampling(self):
        x = T([[[[1.0, 2.0], [3.0, 4.0]]]])
        self.assertEqual(nn.MaxPool2d(2)(x).tolist(), [[[[4.0]]]])
        self.assertEqual(nn.AvgPool2d(2)(x).tolist(), [[[[2.5]]]])
        self.assertEqual(nn.AdaptiveAvgPool2d((1, 2))(x).tolist(), [[[[2.0, 3.0]]]])
        self.assertEqual(nn.Upsample(scale_factor=2)(x).shape, (1, 1, 4, 4))
        self.assertEqual(nn.ZeroPad2d(1)(x).shape, (1, 1, 4, 4))
        self.assertEqual(nn.ConstantPad2d((1, 0, 0, 0), 7.0)(x).tolist(), [[[[7.0, 1.0, 2.0], [7.0, 3.0, 4.0]]]])
        self.assertEqual(nn.ReflectionPad2d((1, 0, 0, 0))(x).tolist(), [[[[2.0, 1.0, 2.0], [4.0, 3.0, 4.0]]]])
        self.assertEqual(nn.ReplicationPad2d((0, 1, 0, 0))(x).tolist(), [[[[1.0, 2.0, 2.0], [3.0, 4.0, 4.0]]]])

    def test_loss_layers(self):
        logits, target = T([[0.0, 0.0]]), T([1])
        self.assertAlmostEqual(nn.CrossEntropyLoss()(logits, target).tolist(), math.log(2), places=6)
        self.assertAlmostEqual(nn.CrossEntropyLoss(label_smoothing=0.2)(logits, target).tolist(), math.log(2), places=6)
        self.assertAlmostEqual(nn.NLLLoss()(T([[-1.0, -2.0]]), target).tolist(), 2.0, places=6)
        a, b = T([1.0, 3.0]), T([0.0, 0.0])
        self.assertEqual(nn.MSELoss()(a, b).tolist(), 5.0)
        self.assertEqual(nn.L1Loss(reduction="sum")(a, b).tolist(), 4.0)
        self.assertEqual(nn.SmoothL1Loss()(a, b).tolist(), 1.5)  # (|1| - 0.5 + |3| - 0.5) / 2
        self.assertAlmostEqual(nn.BCELoss()(T([0.5]), T([0.0])).tolist(), math.log(2), places=6)
        self.assertAlmostEqual(nn.BCEWithLogitsLoss()(T([0.0]), T([1.0])).tolist(), math.log(2), places=6)
        with self.assertRaisesRegex(ValueError, "MSELoss: reduction must be"):
            nn.MSELoss("avg")


def _one_param(value):
    return ms.Parameter(T(value), name="w")


class Optimizers(unittest.TestCase):
    """One parameter, updates worked out by hand from torch's documented rules."""

    def test_sgd(self):
        p = _one_param([1.0, 2.0])
        opt = mint.optim.SGD([p], lr=0.5)
        opt((T([1.0, -2.0]),))
        self.assertEqual(p.tolist(), [0.5, 3.0])
        p = _one_param([1.0])
        opt = mint.optim.SGD([p], lr=0.1, momentum=0.5, weight_decay=1.0)
        opt((T([1.0]),))  # g = 1 + 1 = 2; buf = 2; p = 1 - 0.2
        self.assertEqual(p.tolist(), [f32(0.8)])
        opt((T([1.0]),))  # g = 1 + 0.8 = 1.8; buf = 0.5 * 2 + 1.8 = 2.8; p = 0.8 - 0.28
        self.assertAlmostEqual(p.tolist()[0], 0.52, places=6)
        with self.assertRaisesRegex(ValueError, "nesterov momentum requires a momentum"):
            mint.optim.SGD([_one_param([1.0])], lr=0.1, nesterov=True)

    def test_adam_and_adamw(self):
        # step 1: m = 0.1 g, v = 0.001 g^2; m / (1 - b1) = g, v / (1 - b2) = g^2: p -= lr g / (|g| + eps)
        # (to 5 places: the bias corrections are float32)
        p = _one_param([1.0, -1.0])
        mint.optim.Adam([p], lr=0.1)((T([2.0, -4.0]),))
        self.assertEqual([round(v, 5) for v in p.tolist()], [0.9, -0.9])
        p = _one_param([1.0])
        mint.optim.AdamW([p], lr=0.1, weight_decay=0.5)((T([2.0]),))  # p *= 1 - 0.05 first
        self.assertAlmostEqual(p.tolist()[0], 0.95 - 0.1, places=5)
        p = _one_param([1.0])
        mint.optim.Adam([p], lr=0.1, weight_decay=0.5)((T([0.5]),))  # g = 0.5 + 0.5 = 1 (L2)
        self.assertAlmostEqual(p.tolist()[0], 0.9, places=5)
        p = _one_param([1.0])
        mint.optim.AdamW([p], lr=0.1, weight_decay=0.0, maximize=True)((T([2.0]),))
        self.assertAlmostEqual(p.tolist()[0], 1.1, places=5)
        opt = mint.optim.AdamW([_one_param([1.0])], amsgrad=True)
        self.assertEqual(len(opt.max_exp_avg_sq), 1)
        with self.assertRaisesRegex(ValueError, "invalid beta1 value"):
            mint.optim.AdamW([_one_param([1.0])], betas=(1.0, 0.9))

    def test_parameter_groups(self):
        a, b = _one_param([1.0]), ms.Parameter(T([1.0]), name="b")
        opt = mint.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5, "weight_decay": 1.0}], lr=0.1)
        opt((T([1.0]), T([1.0])))
        self.assertEqual((a.tolist(), b.tolist()), ([f32(0.9)], [0.0]))
        self.assertEqual(opt.step_count.tolist(), [1])
        with self.assertRaisesRegex(ValueError, "unknown keys \\['betas'\\]"):
            mint.optim.SGD([{"params": [a], "betas": (0.9, 0.9)}], lr=0.1)
        with self.assertRaisesRegex(ValueError, "1 gradients for 2 parameters"):
            opt((T([1.0]),))


class Module(unittest.TestCase):
    def test_all_lists_only_defined_names(self):
        for mod in (mint, mint.nn, mint.nn.functional, mint.optim):
            self.assertEqual([n for n in mod.__all__ if not hasattr(mod, n)], [], mod.__name__)
            self.assertEqual(len(mod.__all__), len(set(mod.__all__)), mod.__name__)
        self.assertIs(mint.nn.functional, F)
        for name in ("polar", "bernoulli"):  # composed in mint/__init__.py
            self.assertIn(name, mint.__all__)
        self.assertIs(mint.erfinv, ms.ops.erfinv)  # a kernel now (pijit/ops/math2.py)
        self.assertIs(mint.inverse, ms.ops.inverse)  # pijit's linear algebra (pijit/ops/linalg.py)


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class UnderJit(unittest.TestCase):
    """One call of each inside @jit: one graph, no break, the eager result (twice)."""

    W = T([[[[0.5, -1.0], [0.25, 1.0]]], [[[1.0, 0.0], [0.0, -1.0]]]])
    INDEX = T([[2, 0], [1, 1]])

    CASES = [
        ("add_sub", lambda x: (mint.add(x, 1, alpha=2), mint.sub(x, x, alpha=0.5))),
        ("mul_div", lambda x: (mint.mul(x, x), mint.div(x, 3, rounding_mode="floor"))),
        ("clamp_where", lambda x: (mint.clamp(x, 1, 4), mint.where(x > 2, x, 0.0))),
        ("reductions", lambda x: (mint.sum(x, 1, keepdim=True), mint.mean(x), mint.max(x),
                                  mint.max(x, 1), mint.min(x, dim=0, keepdim=True),
                                  mint.argmax(x, 1), mint.var(x, 1), mint.std(x))),
        ("matmul_bmm", lambda x: (mint.matmul(x, mint.transpose(x, 0, 1)),
                                  mint.bmm(mint.unsqueeze(x, 0), mint.unsqueeze(mint.transpose(x, 0, 1), 0)),
                                  mint.baddbmm(mint.zeros(1, 2, 2), mint.unsqueeze(x, 0),
                                               mint.unsqueeze(mint.transpose(x, 0, 1), 0), alpha=2))),
        ("cat_stack_split", lambda x: (mint.cat((x, x), 1), mint.stack((x, x)), mint.split(x, 2, 1),
                                       mint.chunk(x, 3, 1))),
        ("creation", lambda x: x + mint.zeros(2, 3) + mint.ones((2, 3)) + mint.full((2, 3), 2.0)
         + mint.arange(3) + mint.zeros_like(x)),
        ("gather_index", lambda x: (mint.gather(x, 1, UnderJit.INDEX), mint.index_select(x, 1, T([2, 0])),
                                    mint.narrow(x, 1, 1, 2))),
        ("shapes", lambda x: (mint.flatten(x), mint.permute(x, (1, 0)), mint.squeeze(mint.unsqueeze(x, 0)),
                              mint.flip(x, (1,)), mint.roll(x, 1, 1), mint.tile(x, (1, 2)),
                              mint.tril(x), mint.triu(x, 1), mint.repeat_interleave(x, 2, 0))),
        ("sort_topk", lambda x: (mint.sort(x, dim=1), mint.topk(x, 2), mint.argsort(x))),
        ("elementwise", lambda x: (mint.exp(x), mint.log(x), mint.sqrt(x), mint.rsqrt(x), mint.erf(x),
                                   mint.isfinite(x), mint.isclose(x, x), mint.pow(x, 2),
                                   mint.logical_and(x > 1, x < 5), mint.cumsum(x, 1))),
        ("activations", lambda x: (F.relu(x - 3), F.gelu(x), F.silu(x), F.softmax(x), F.log_softmax(x, 0),
                                   F.leaky_relu(x - 3), F.elu(x - 3), F.hardswish(x), F.mish(x))),
        ("losses", lambda x: (F.cross_entropy(x, T([2, 0])), F.mse_loss(x, x * 2), F.l1_loss(x, x * 0),
                              F.smooth_l1_loss(x, x * 0.5), F.nll_loss(F.log_softmax(x, 1), T([1, 1])),
                              F.binary_cross_entropy_with_logits(x, x * 0.1))),
        ("nn_functional", lambda x: (F.linear(x, x), F.layer_norm(x, (3,)), F.pad(x, (1, 1), mode="replicate"),
                                     F.dropout(x, 0.5, training=False), F.embedding(T([1, 0]), x),
                                     F.one_hot(T([0, 2]), 3))),
        ("conv_pool", lambda x: (F.conv2d(mint.reshape(x, (1, 1, 2, 3)), UnderJit.W, padding=1),
                                 F.max_pool2d(mint.reshape(x, (1, 1, 2, 3)), 2, 1),
                                 F.avg_pool2d(mint.reshape(x, (1, 1, 2, 3)), (1, 3)),
                                 F.interpolate(mint.reshape(x, (1, 1, 2, 3)), scale_factor=2))),
    ]

    def test_each_name_captures_into_one_graph(self):
        x = T([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
        for name, fn in self.CASES:
            with self.subTest(name=name):
                want = values(fn(x))
                jf = ms.jit(fn)
                self.assertEqual(values(jf(x)), want)
                self.assertEqual(values(jf(x)), want)
                st = ms.jit_stats(jf)
                self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))

    def run_steps(self, opt_kind, jit, steps=4):
        ms.set_seed(5)
        net = _MintNet()
        net.set_train(True)
        params = net.trainable_params()
        opt = {"adamw": lambda: mint.optim.AdamW(params, lr=0.01, weight_decay=0.1, amsgrad=True),
               "adam": lambda: mint.optim.Adam(params, lr=0.01),
               "sgd": lambda: mint.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True)}[opt_kind]()
        loss_fn = nn.CrossEntropyLoss()
        grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, params)

        def step(x, y):
            loss, grads = grad_fn(x, y)
            opt(grads)
            return loss

        run = ms.jit(step) if jit else step
        ms.set_seed(6)
        x, y = ms.randn(8, 6), T([i % 3 for i in range(8)])
        losses = [run(x, y).tolist() for _ in range(steps)]
        return net, run, losses

    def test_a_training_step_of_mint_layers_is_one_graph_with_the_eager_weights(self):
        for kind in ("adamw", "adam", "sgd"):
            with self.subTest(optimizer=kind):
                eager, _, le = self.run_steps(kind, False)
                # step is one code object for every run: count what this run adds
                before = ms.jit_stats(self.run_steps(kind, True, steps=0)[1])
                jitted, run, lj = self.run_steps(kind, True)
                st = ms.jit_stats(run)
                added = [st[k] - before[k] for k in ("graphs", "breaks", "cache_hits")]
                self.assertEqual(added, [1, 0, 3], st["break_reasons"])  # one capture, three hits
                self.assertEqual(le, lj)
                self.assertLess(lj[-1], lj[0])
                for a, b in zip(eager.get_parameters(), jitted.get_parameters()):
                    self.assertEqual(flat(a), flat(b), "%s %s" % (kind, a.name))


class _MintNet(ms.nn.Cell):
    def __init__(self):
        super().__init__()
        # (no LayerNorm: pijit's jitted layer_norm training step drifts from eager by ~1e-5,
        # nn.LayerNorm as well; reported, not this module's)
        self.fc1 = nn.Linear(6, 8)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.0)
        self.fc2 = nn.Linear(8, 3)

    def construct(self, x):
        return self.fc2(self.drop(self.act(self.fc1(x))))


if __name__ == "__main__":
    unittest.main()
