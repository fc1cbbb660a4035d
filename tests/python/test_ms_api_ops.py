"""MindSpore 2.x signatures of ops and Tensor methods whose meaning pijit used to take from numpy
or PyTorch (ops.split, ops.max/min, ops.flatten, the pools, cumsum/sum/prod, div, round, softplus,
rand/randint, Tensor.mT, ...). Each name is called exactly as MindSpore documents it, positionally
and by keyword, against values worked out by hand; UnderJit checks one call of each inside
@jit: one graph, no break, results equal to eager. docs/mindspore_api.md lists the signatures."""
import math
import sys
import unittest

from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY  # noqa: E402

import pijit as ms
from pijit import ops


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


def values(out):
    """(dtype, shape, data) of a tensor, recursively for tuples: what two results must share."""
    if isinstance(out, tuple):
        return tuple(values(o) for o in out)
    return (out.dtype, out.shape, out.tolist())


def close(test, got, want, places=5):
    test.assertEqual(len(got), len(want))
    for g, w in zip(got, want):
        test.assertAlmostEqual(g, w, places=places)


X23 = [[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]


class Split(unittest.TestCase):
    def test_int_is_the_chunk_size(self):
        x = T([[1, 2, 3], [4, 5, 6]])
        parts = ops.split(x, 1, 1)
        self.assertEqual([p.tolist() for p in parts], [[[1], [4]], [[2], [5]], [[3], [6]]])
        self.assertIsInstance(parts, tuple)
        # The last chunk may be smaller (MindSpore's example).
        self.assertEqual([p.tolist() for p in ops.split(ms.arange(10), 3)],
                         [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]])
        self.assertEqual([p.tolist() for p in ops.split(ms.arange(4), 9)], [[0, 1, 2, 3]])

    def test_list_is_the_chunk_sizes(self):
        x = T([[1, 2, 3], [4, 5, 6]])
        a, b = ops.split(x, [1, 2], 1)
        self.assertEqual((a.tolist(), b.tolist()), ([[1], [4]], [[2, 3], [5, 6]]))
        parts = ops.split(tensor=ms.arange(10), split_size_or_sections=(3, 3, 4), axis=0)
        self.assertEqual([p.tolist() for p in parts], [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]])
        self.assertEqual([p.shape for p in ops.split(x, [2, 0], -2)], [(2, 3), (0, 3)])

    def test_tensor_split(self):
        x = T([[1, 2, 3], [4, 5, 6]])
        self.assertEqual([p.tolist() for p in x.split(2, 1)], [[[1, 2], [4, 5]], [[3], [6]]])
        self.assertEqual([p.shape for p in x.split(split_size_or_sections=[1, 1], axis=0)],
                         [(1, 3), (1, 3)])

    def test_errors_name_the_argument(self):
        x = ms.arange(6)
        with self.assertRaisesRegex(ValueError, r"must be non-negative and sum to the length of "
                                                r"axis 0 \(6\)"):
            ops.split(x, [1, 3])
        with self.assertRaisesRegex(ValueError, "split_size_or_sections must be positive, got 0"):
            ops.split(x, 0)
        with self.assertRaisesRegex(TypeError, "split_size_or_sections must be an int or"):
            ops.split(x, 2.0)
        with self.assertRaisesRegex(ValueError, "axis=1 is out of range for a 1-D tensor"):
            ops.split(x, 2, 1)


class MaxMin(unittest.TestCase):
    Y = [[0.0, 0.3, 0.4, 0.5, 0.1], [3.2, 0.4, 0.1, 2.9, 4.0]]

    def test_ops_max_min_return_values_and_indices(self):
        v, i = ops.max(T(self.Y), 0, True)
        self.assertEqual(v.shape, (1, 5))
        self.assertEqual([round(a, 5) for a in v.tolist()[0]], [3.2, 0.4, 0.4, 2.9, 4.0])
        self.assertEqual((i.tolist(), i.dtype), ([[1, 1, 0, 1, 1]], ms.int64))
        v, i = ops.min(input=T(self.Y), axis=1, keepdims=False)
        self.assertEqual(([round(a, 5) for a in v.tolist()], i.tolist()), ([0.0, 0.1], [0, 2]))
        v, i = ops.max(T([[1, 7, 7], [9, 2, 9]]), -1)  # the first of equal maxima
        self.assertEqual((v.tolist(), i.tolist(), v.dtype), ([7, 9], [1, 0], ms.int64))

    def test_axis_none_is_every_element_and_index_zero(self):
        v, i = ops.max(T([0.0, 0.4, 0.6, 0.7, 0.1]))
        self.assertEqual((round(v.item(), 5), v.shape, i.item(), i.shape, i.dtype),
                         (0.7, (), 0, (), ms.int64))
        v, i = ops.min(T(X23), keepdims=True)  # MindSpore: keepdims has no effect here
        self.assertEqual((v.item(), v.shape, i.item()), (1.0, (), 0))

    def test_initial_and_where(self):
        t = T([[1.0, 5.0], [2.0, 3.0]])
        v, i = ops.max(t, 1, initial=4.0)  # input seen as [[4, 5], [4, 4]]
        self.assertEqual((v.tolist(), i.tolist()), ([5.0, 4.0], [1, 0]))
        v, i = ops.max(t, 1, initial=0.0, where=T([[True, False], [True, True]]))
        self.assertEqual((v.tolist(), i.tolist()), ([1.0, 3.0], [0, 1]))
        v, i = ops.min(t, 0, initial=2.5)  # input seen as [[1, 2.5], [2, 2.5]]: a tie in col 1
        self.assertEqual((v.tolist(), i.tolist()), ([1.0, 2.5], [0, 0]))
        with self.assertRaisesRegex(ValueError, "where needs initial"):
            ops.max(t, 0, where=T([True, False]))
        with self.assertRaisesRegex(ValueError, "does not broadcast to the input's shape"):
            ops.max(t, 0, initial=0.0, where=T([[[True]], [[False]]]))
        with self.assertRaisesRegex(TypeError, "initial must be a number"):
            ops.max(t, 0, initial="1")

    def test_bad_axis(self):
        with self.assertRaisesRegex(TypeError, r"max: axis must be an int or None, got \(0, 1\) "
                                               r"\(ops.amax reduces several axes\)"):
            ops.max(T(X23), (0, 1))
        with self.assertRaisesRegex(ValueError, "min: axis=2 is out of range for a 2-D tensor"):
            ops.min(T(X23), 2)

    def test_tensor_max_min_return_values(self):
        a = ms.arange(4).reshape(2, 2).astype(ms.float32)
        self.assertEqual((a.max().item(), a.max().shape), (3.0, ()))
        self.assertEqual(a.min(axis=0).tolist(), [0.0, 1.0])
        v, i = a.max(axis=0, return_indices=True)
        self.assertEqual((v.tolist(), i.tolist()), ([2.0, 3.0], [1, 1]))
        v, i = a.min(0, False, return_indices=True)
        self.assertEqual((v.tolist(), i.tolist()), ([0.0, 1.0], [0, 0]))
        # MindSpore's documented examples of initial and where.
        self.assertEqual(a.min(axis=0, initial=9, where=T([False])).tolist(), [9.0, 9.0])
        self.assertEqual(a.min(axis=0, initial=9, where=T([False, True])).tolist(), [9.0, 1.0])
        self.assertEqual(a.max(1, True).tolist(), [[1.0], [3.0]])
        self.assertEqual(a.max(keepdims=True).shape, ())  # axis None: keepdims has no effect

    def test_tensor_max_over_several_axes(self):
        a = T([[[1.0, 8.0], [3.0, 4.0]], [[5.0, 2.0], [7.0, 0.0]]])
        self.assertEqual(a.max(axis=(0, 2)).tolist(), [8.0, 7.0])
        self.assertEqual(a.min(axis=[1, 2], keepdims=True).tolist(), [[[1.0]], [[0.0]]])
        self.assertEqual(a.max(axis=(1, 2), initial=7.5).tolist(), [8.0, 7.5])
        with self.assertRaisesRegex(ValueError, "return_indices must be False when axis is a "
                                                "tuple/list"):
            a.max(axis=(0, 1), return_indices=True)

    def test_argmax_dim_keepdim(self):
        x = T(X23)
        self.assertEqual(ops.argmax(x).tolist(), 5)
        self.assertEqual(ops.argmax(x, 1).tolist(), [1, 2])
        self.assertEqual(ops.argmax(input=x, dim=0, keepdim=True).tolist(), [[1, 0, 1]])
        self.assertEqual(ops.argmax(x, axis=1, keepdims=True).tolist(), [[1], [2]])  # older names
        with self.assertRaisesRegex(TypeError, "got both 'dim' and 'axis'"):
            ops.argmax(x, 0, axis=1)


class Flatten(unittest.TestCase):
    def test_default_keeps_dim_0(self):
        self.assertEqual(ops.flatten(ms.ones((1, 2, 3, 4))).shape, (1, 24))
        self.assertEqual(ops.flatten(input=ms.ones((2, 3, 4)), order="C").shape, (2, 12))
        self.assertEqual(ops.flatten(T([1, 2, 3])).tolist(), [1, 2, 3])  # 1-D stays 1-D
        self.assertEqual(ops.flatten(T(5.0)).tolist(), [5.0])  # 0-D becomes 1-D

    def test_start_end_dims(self):
        c = ms.arange(24).reshape(2, 3, 4)
        self.assertEqual(ops.flatten(c, start_dim=0, end_dim=1).shape, (6, 4))
        self.assertEqual(ops.flatten(c, "C", start_dim=0).shape, (24,))
        self.assertEqual(ops.flatten(c, start_dim=-2).shape, (2, 12))
        self.assertEqual(ops.flatten(c, start_dim=1, end_dim=1).shape, (2, 3, 4))

    def test_fortran_order(self):
        b = ms.arange(6).reshape(2, 3)  # [[0, 1, 2], [3, 4, 5]]
        self.assertEqual(ops.flatten(b, "F", start_dim=0).tolist(), [0, 3, 1, 4, 2, 5])
        # MindSpore reverses every dim, then flattens start_dim..end_dim of that.
        self.assertEqual(ops.flatten(b, order="F").tolist(), [[0, 3], [1, 4], [2, 5]])
        self.assertEqual(ops.flatten(ms.arange(24).reshape(2, 3, 4), "F").shape, (4, 6))

    def test_tensor_flatten(self):
        c = ms.arange(24).reshape(2, 3, 4)
        self.assertEqual(c.flatten().shape, (24,))
        self.assertEqual(c.flatten(start_dim=1).shape, (2, 12))
        self.assertEqual(ms.arange(6).reshape(2, 3).flatten("F").tolist(), [0, 3, 1, 4, 2, 5])
        self.assertEqual(c.flatten(1).shape, (2, 12))  # newer overload flatten(start_dim, end_dim)
        self.assertEqual(c.flatten(0, 1).shape, (6, 4))

    def test_errors(self):
        c = ms.ones((2, 3))
        with self.assertRaisesRegex(ValueError, "order must be 'C' or 'F', got 'A'"):
            ops.flatten(c, "A")
        with self.assertRaisesRegex(TypeError, "order must be a str, got None"):
            ops.flatten(c, None)
        with self.assertRaisesRegex(ValueError, r"start_dim \(1\) comes after end_dim \(0\)"):
            ops.flatten(c, start_dim=1, end_dim=0)
        with self.assertRaisesRegex(ValueError, "end_dim=2 is out of range for a 2-D tensor"):
            ops.flatten(c, end_dim=2)


def grid(n):
    """A (1, 1, n, n) float32 tensor holding 0 .. n*n-1 row by row."""
    return ms.arange(n * n).reshape(1, 1, n, n).astype(ms.float32)


class Pools(unittest.TestCase):
    def test_avg_pool2d_stride_defaults_to_1(self):
        out = ops.avg_pool2d(grid(4), 2)  # window (i, j) averages 4i+j, +1, +4, +5
        self.assertEqual(out.tolist(), [[[[2.5, 3.5, 4.5], [6.5, 7.5, 8.5], [10.5, 11.5, 12.5]]]])
        self.assertEqual(ops.avg_pool2d(input_x=grid(4), kernel_size=2, stride=2).tolist(),
                         [[[[2.5, 4.5], [10.5, 12.5]]]])
        self.assertEqual(ops.avg_pool2d(grid(4)).tolist(), grid(4).tolist())  # kernel 1, stride 1

    def test_avg_pool2d_padding_and_divisor(self):
        # padding 1, kernel 2, stride 2: corner windows hold one element, edges two.
        want = [[[[0.0, 0.75, 0.75], [3.0, 7.5, 4.5], [3.0, 6.75, 3.75]]]]
        self.assertEqual(ops.avg_pool2d(grid(4), 2, 2, 1).tolist(), want)
        self.assertEqual(ops.avg_pool2d(grid(4), 2, 2, (1, 1, 1, 1)).tolist(), want)
        sums = ops.avg_pool2d(grid(4), 2, 2, 1, False, True, 1)  # divisor_override=1: sums
        self.assertEqual(sums.tolist(),
                         [[[[0.0, 3.0, 3.0], [12.0, 30.0, 18.0], [12.0, 27.0, 15.0]]]])
        counted = ops.avg_pool2d(grid(4), 2, 2, 1, count_include_pad=False)
        self.assertEqual(counted.tolist()[0][0][0], [0.0, 1.5, 3.0])
        with self.assertRaisesRegex(NotImplementedError, r"padding \(1, 0, 1, 1\) pads unevenly"):
            ops.avg_pool2d(grid(4), 2, 2, (1, 0, 1, 1))
        with self.assertRaisesRegex(ValueError, "divisor_override must be positive"):
            ops.avg_pool2d(grid(4), 2, divisor_override=-1)

    def test_max_pool2d_positional_order(self):
        # (x, kernel_size, stride, padding, dilation): kernel 3 dilated by 2 covers rows
        # i, i+2, i+4 and the same columns, so the maximum is 7(i+4) + (j+4).
        out = ops.max_pool2d(grid(7), 3, 1, 0, 2)
        self.assertEqual(out.tolist(), [[[[7.0 * i + j + 32 for j in range(3)] for i in range(3)]]])
        self.assertEqual(ops.max_pool2d(grid(4), 2).tolist(), [[[[5.0, 7.0], [13.0, 15.0]]]])
        self.assertEqual(ops.max_pool2d(x=grid(4), kernel_size=3, stride=2, padding=0, dilation=1,
                                        return_indices=False, ceil_mode=True).shape, (1, 1, 2, 2))
        # the argmax of each window as a flat h * W + w index (int64): in grid(4) it is the value
        out, idx = ops.max_pool2d(grid(4), 2, return_indices=True)
        self.assertEqual(out.tolist(), [[[[5.0, 7.0], [13.0, 15.0]]]])
        self.assertEqual((idx.tolist(), idx.dtype), ([[[[5, 7], [13, 15]]]], ms.int64))


class Reductions(unittest.TestCase):
    def test_cumsum(self):
        x = T([[1, 2], [3, 4]])
        self.assertEqual(x.cumsum().tolist(), [1, 3, 6, 10])  # axis None: flattened
        self.assertEqual(x.cumsum(0).tolist(), [[1, 2], [4, 6]])
        y = x.cumsum(axis=1, dtype=ms.float64)
        self.assertEqual((y.tolist(), y.dtype), ([[1.0, 3.0], [3.0, 7.0]], ms.float64))
        self.assertEqual(ops.cumsum(x, 1, ms.float32).dtype, ms.float32)
        y = ops.cumsum(x=T([1, 2, 3], ms.int32), axis=0)
        self.assertEqual((y.tolist(), y.dtype), ([1, 3, 6], ms.int32))  # keeps the input's dtype

    def test_tensor_sum_positional_order(self):
        x = T([[1.0, 2.0], [3.0, 4.0]])
        y = x.sum(0, ms.float64)  # (axis, dtype, keepdims, initial)
        self.assertEqual((y.tolist(), y.dtype), ([4.0, 6.0], ms.float64))
        self.assertEqual(x.sum(0, None, True).tolist(), [[4.0, 6.0]])
        self.assertEqual(x.sum(1, None, True, 10).tolist(), [[13.0], [17.0]])
        self.assertEqual(x.sum(axis=1, dtype=None, keepdims=False, initial=0.5).tolist(),
                         [3.5, 7.5])
        # The newer overload sum(dim=None, keepdim=False, *, dtype=None).
        self.assertEqual(x.sum(dim=1, keepdim=True).tolist(), [[3.0], [7.0]])
        self.assertEqual(x.sum(1, True).tolist(), [[3.0], [7.0]])

    def test_ops_sum(self):
        x = T([[1.0, 2.0], [3.0, 4.0]])
        y = ops.sum(x, 1, True, dtype=ms.float64)
        self.assertEqual((y.tolist(), y.dtype), ([[3.0], [7.0]], ms.float64))
        self.assertEqual(ops.sum(input=x, dim=(0, 1), keepdim=False).item(), 10.0)
        self.assertEqual(ops.sum(x).item(), 10.0)
        self.assertEqual(ops.sum(x, axis=0, keep_dims=True).tolist(), [[4.0, 6.0]])  # older names
        with self.assertRaisesRegex(TypeError, "got both 'dim' and 'axis'"):
            ops.sum(x, dim=0, axis=0)

    def test_prod(self):
        x = T([[1.0, 2.0], [3.0, 4.0]])
        y = ops.prod(x, 1, True, ms.float64)
        self.assertEqual((y.tolist(), y.dtype), ([[2.0], [12.0]], ms.float64))
        self.assertEqual(ops.prod(input=x, axis=0, keep_dims=False, dtype=None).tolist(),
                         [3.0, 8.0])
        self.assertEqual(x.prod(0, True, ms.float64).tolist(), [[3.0, 8.0]])
        self.assertEqual(x.prod().item(), 24.0)


class ShapeAndSortOps(unittest.TestCase):
    def test_unsqueeze_dim(self):
        x = T([[1, 2], [3, 4]])
        self.assertEqual(ops.unsqueeze(input=x, dim=0).shape, (1, 2, 2))
        self.assertEqual(ops.unsqueeze(x, -1).tolist(), [[[1], [2]], [[3], [4]]])
        self.assertEqual(ops.unsqueeze(x, axis=1).shape, (2, 1, 2))  # pijit's earlier keyword

    def test_topk(self):
        x = T(X23)
        v, i = x.topk(2)
        self.assertEqual((v.tolist(), i.tolist()), ([[5.0, 3.0], [6.0, 4.0]], [[1, 2], [2, 0]]))
        v, i = x.topk(1, dim=0)
        self.assertEqual((v.tolist(), i.tolist()), ([[4.0, 5.0, 6.0]], [[1, 0, 1]]))
        v, i = x.topk(k=1, dim=0, largest=False, sorted=True)
        self.assertEqual((v.tolist(), i.tolist()), ([[1.0, 2.0, 3.0]], [[0, 1, 0]]))
        v, i = ops.topk(x, 2, dim=1)
        self.assertEqual(i.tolist(), [[1, 2], [2, 0]])

    def test_sort(self):
        x = T(X23)
        v, i = x.sort()
        self.assertEqual((v.tolist(), i.tolist()), ([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]],
                                                    [[0, 2, 1], [1, 0, 2]]))
        v, i = x.sort(dim=0, descending=True, stable=False)
        self.assertEqual((v.tolist(), i.tolist()), ([[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]],
                                                    [[1, 0, 1], [0, 1, 0]]))
        self.assertEqual(T([2.0, 1.0, 2.0, 1.0]).sort(-1, False, True)[1].tolist(), [1, 3, 0, 2])
        self.assertEqual(x.sort(axis=0)[1].tolist(), [[0, 1, 0], [1, 0, 1]])  # older keyword
        v, i = ops.sort(input_x=x, axis=0, descending=False)
        self.assertEqual(v.tolist(), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

    def test_repeat(self):
        self.assertEqual(T(3).repeat(4).tolist(), [3, 3, 3, 3])
        x = T([[1, 2], [3, 4]])
        self.assertEqual(x.repeat(2).tolist(), [1, 1, 2, 2, 3, 3, 4, 4])
        self.assertEqual(x.repeat(3, axis=1).tolist(), [[1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4]])
        self.assertEqual(x.repeat([1, 2], axis=0).tolist(), [[1, 2], [3, 4], [3, 4]])
        self.assertEqual(x.repeat(repeats=(0, 2), axis=-1).tolist(), [[2, 2], [4, 4]])
        self.assertEqual(x.repeat([0, 0], 0).shape, (0, 2))
        with self.assertRaisesRegex(ValueError, r"repeats \(1, 2, 3\) must hold 2 non-negative"):
            x.repeat([1, 2, 3], axis=0)


class ElementwiseOps(unittest.TestCase):
    def test_softmax_dtype(self):
        y = ops.softmax(T([1, 2]), dtype=ms.float64)
        e1, e2 = math.exp(1), math.exp(2)
        self.assertIs(y.dtype, ms.float64)
        close(self, y.tolist(), [e1 / (e1 + e2), e2 / (e1 + e2)], places=12)
        self.assertEqual(ops.softmax(input=T([[0.0, 0.0]]), axis=0).tolist(), [[1.0, 1.0]])

    def test_div_rounding_modes(self):
        a, b = T([-7, 7, -8, 8]), T([2, 2, 3, -3])
        self.assertEqual(ops.div(a, b, rounding_mode="trunc").tolist(), [-3, 3, -2, -2])
        self.assertEqual(ops.div(a, b, rounding_mode="floor").tolist(), [-4, 3, -3, -3])
        self.assertEqual(ops.div(a, b, rounding_mode="trunc").dtype, ms.int64)
        close(self, ops.div(a, b).tolist(), [-3.5, 3.5, -8 / 3, -8 / 3])
        self.assertEqual(ops.div(input=T([-7.5, 7.5]), other=2.0).tolist(), [-3.75, 3.75])
        self.assertEqual(ops.div(T([-7.5, 7.5]), 2.0, rounding_mode="trunc").tolist(), [-3.0, 3.0])
        self.assertEqual(ops.div(T([-7.5, 7.5]), 2, rounding_mode="floor").tolist(), [-4.0, 3.0])
        self.assertEqual(ops.divide(T([9]), 2, rounding_mode="floor").tolist(), [4])
        with self.assertRaisesRegex(ValueError, "rounding_mode must be None, 'floor' or 'trunc', "
                                                "got 'round'"):
            ops.div(a, b, rounding_mode="round")

    def test_round_decimals(self):
        close(self, ops.round(T([0.81, 1.52, 2.33, 2.56, -4.57]), decimals=1).tolist(),
              [0.8, 1.5, 2.3, 2.6, -4.6])
        self.assertEqual(ops.round(T([0.5, 1.5, 2.5, -4.5])).tolist(), [0.0, 2.0, 2.0, -4.0])
        self.assertEqual(ops.round(T([1234.5, -1260.0]), decimals=-2).tolist(), [1200.0, -1300.0])
        close(self, T([0.25, 1.37]).round(1).tolist(), [0.2, 1.4])  # 2.5 rounds to even
        with self.assertRaisesRegex(RuntimeError, "decimals must be 0 for an integer input"):
            ops.round(T([1, 2]), decimals=1)

    def test_softplus_beta_threshold(self):
        close(self, ops.softplus(T([0.1, 0.2, 30.0, 25.0])).tolist(),
              [math.log1p(math.exp(0.1)), math.log1p(math.exp(0.2)), 30.0, 25.0])
        # beta 2, threshold 4: 2 * 1 <= 4 -> log(1 + e^2) / 2; 2 * 3 > 4 -> 3 itself.
        got = ops.softplus(input=T([1.0, 3.0]), beta=2, threshold=4).tolist()
        self.assertAlmostEqual(got[0], math.log1p(math.exp(2.0)) / 2, places=6)
        self.assertEqual(got[1], 3.0)
        self.assertEqual(ops.softplus(T([5.0]), 1, 2).tolist(), [5.0])

    def test_layer_norm_weight_bias(self):
        x = T([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
        r = 1 / math.sqrt(2 / 3 + 1e-7)  # (x - 2) / sqrt(var + eps), var = 2/3
        out = ops.layer_norm(x, (3,), ms.ones(3), ms.zeros(3), 1e-7)
        close(self, out.tolist()[0], [-r, 0.0, r])
        out = ops.layer_norm(input=x, normalized_shape=(3,), weight=T([2.0, 2.0, 2.0]),
                             bias=T([1.0, 1.0, 1.0]), eps=1e-7)
        close(self, out.tolist()[1], [1 - 2 * r, 1.0, 1 + 2 * r])
        with self.assertRaisesRegex(TypeError, "got both 'weight' and 'gamma'"):
            ops.layer_norm(x, 3, weight=ms.ones(3), gamma=ms.ones(3))


class Random(unittest.TestCase):
    def test_seed_makes_a_call_reproducible(self):
        a = ops.rand(2, 3, seed=5)
        b = ops.rand((2, 3), dtype=ms.float32, seed=5)
        self.assertEqual((a.shape, a.dtype, a.tolist()), ((2, 3), ms.float32, b.tolist()))
        self.assertTrue(all(0.0 <= v < 1.0 for row in a.tolist() for v in row))
        self.assertNotEqual(ops.rand(2, 3, seed=6).tolist(), a.tolist())
        n = ops.randn(4, dtype=ms.float64, seed=2)
        self.assertEqual((n.dtype, n.tolist()), (ms.float64, ops.randn(4, dtype=ms.float64,
                                                                       seed=2).tolist()))

    def test_seed_leaves_the_global_generator_alone(self):
        ms.set_seed(7)
        plain = ms.rand(4).tolist()
        ms.set_seed(7)
        ops.rand(3, seed=1), ops.randn(3, seed=1), ops.randint(0, 9, (3,), seed=1)
        self.assertEqual(ms.rand(4).tolist(), plain)

    def test_randint_positional_seed_and_keyword_dtype(self):
        r = ops.randint(1, 10, (2, 3), 4)
        self.assertEqual((r.shape, r.dtype), ((2, 3), ms.int64))
        self.assertEqual(r.tolist(), ops.randint(low=1, high=10, size=(2, 3), seed=4).tolist())
        self.assertTrue(all(1 <= v < 10 for row in r.tolist() for v in row))
        self.assertIs(ops.randint(0, 5, (3,), seed=1, dtype=ms.int32).dtype, ms.int32)
        self.assertIs(ops.randint(0, 5, (3,), ms.int32).dtype, ms.int32)  # pijit's earlier form
        for bad in (-1, 1.5, True):
            with self.assertRaisesRegex(TypeError, "seed must be a non-negative int or None"):
                ops.randint(0, 5, (3,), bad)
        with self.assertRaisesRegex(TypeError, "rand\\(\\): seed must be"):
            ops.rand(2, seed=-3)


class TensorMembers(unittest.TestCase):
    def test_mT(self):
        self.assertEqual(ms.ones((2, 3, 4)).mT.shape, (2, 4, 3))
        self.assertEqual(T([[1, 2], [3, 4]]).mT.tolist(), [[1, 3], [2, 4]])
        v = T([1.0, 2.0])
        self.assertFalse(hasattr(v, "mT"))
        with self.assertRaisesRegex(ValueError, "needs at least 2, got a 1-D tensor"):
            v.mT

    def test_half_and_bfloat16(self):
        h = T([1.0, 1.0 / 3]).half()
        self.assertEqual((h.dtype, h.tolist()), (ms.float16, [1.0, 0.333251953125]))
        b = T([1.0, 1.0 / 3]).bfloat16()
        self.assertEqual((b.dtype, b.tolist()), (ms.bfloat16, [1.0, 0.333984375]))

    def test_from_numpy(self):
        with self.assertRaisesRegex(TypeError, "from_numpy expects a numpy.ndarray, got list"):
            ms.Tensor.from_numpy([1, 2])
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy is not installed for this Python: Tensor.from_numpy(ndarray) "
                          "not exercised")
        t = ms.Tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
        self.assertEqual((t.dtype, t.tolist()), (ms.float32, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]))


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class UnderJit(unittest.TestCase):
    """One call of each name inside @jit: one graph, no break, the eager result (twice: the
    second call runs the cached graph)."""

    CASES = [
        ("split", lambda x: ops.split(x, 2, 1)),
        ("split_sizes", lambda x: x.split([1, 2], axis=1)),
        ("max", lambda x: ops.max(x, 1, keepdims=True)),
        ("max_all", lambda x: ops.max(x)),
        ("min_initial_where", lambda x: ops.min(x, 0, initial=2.5, where=T([True, False, True]))),
        ("tensor_max", lambda x: x.max(axis=0, return_indices=True)),
        ("tensor_min_axes", lambda x: x.min(axis=(0, 1), keepdims=True)),
        ("argmax", lambda x: ops.argmax(x, dim=0, keepdim=True)),
        ("flatten", lambda x: ops.flatten(x.reshape(2, 3, 1), "F")),
        ("tensor_flatten", lambda x: x.reshape(1, 2, 3).flatten(start_dim=1)),
        ("avg_pool2d", lambda x: ops.avg_pool2d(x.reshape(1, 1, 2, 3), 2, 1, (0, 0, 0, 0))),
        ("max_pool2d", lambda x: ops.max_pool2d(x.reshape(1, 1, 2, 3), 2, 1, 0, 1)),
        ("cumsum", lambda x: x.cumsum(dtype=ms.float64)),
        ("ops_cumsum", lambda x: ops.cumsum(x, 1)),
        ("tensor_sum", lambda x: x.sum(1, ms.float64, True, 1.0)),
        ("ops_sum", lambda x: ops.sum(x, dim=0, keepdim=True, dtype=ms.float64)),
        ("prod", lambda x: ops.prod(x, 1, True, ms.float64)),
        ("unsqueeze", lambda x: ops.unsqueeze(x, dim=1)),
        ("layer_norm", lambda x: ops.layer_norm(x, (3,), weight=ms.ones(3), bias=ms.zeros(3))),
        ("topk", lambda x: x.topk(2, dim=1)),
        ("sort", lambda x: x.sort(dim=0, descending=True)),
        ("ops_sort", lambda x: ops.sort(x, axis=0)),
        ("softmax", lambda x: ops.softmax(x, 0, dtype=ms.float64)),
        ("div_trunc", lambda x: ops.div(x, -4.0, rounding_mode="trunc")),
        ("div_floor", lambda x: ops.div(x, -4.0, rounding_mode="floor")),
        ("round", lambda x: ops.round(x / 7, decimals=2)),
        ("softplus", lambda x: ops.softplus(x, 2, 5)),
        ("rand_seed", lambda x: x + ops.rand(2, 3, seed=3)),
        ("randn_seed", lambda x: x + ops.randn((2, 3), seed=3)),
        ("randint_seed", lambda x: x + ops.randint(0, 5, (2, 3), 7)),
        ("repeat", lambda x: x.repeat([1, 0, 2], axis=1)),
        ("mT", lambda x: x.mT),
    ]

    def test_each_name_captures_into_one_graph(self):
        x = T(X23)
        for name, fn in self.CASES:
            with self.subTest(name=name):
                want = values(fn(x))
                jf = ms.jit(fn)
                self.assertEqual(values(jf(x)), want)
                self.assertEqual(values(jf(x)), want)
                st = ms.jit_stats(jf)
                self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))


if __name__ == "__main__":
    unittest.main()
