"""MindSpore primitives model-zoo code reaches for (issue 42): StridedSlice with every mask, Split,
ArgMaxWithValue, Slice, Flatten, ZerosLike, TensorAdd, AssignAdd/AssignSub, InplaceAdd/Sub/Update,
Invert, Dense, FloatStatus, tuple_to_array, OneHot with Tensor on/off values, GatherD, ScatterNd,
LayerNorm, Dropout, the softmax cross-entropies, MaxPool/AvgPool, Range, Eye, TopK, Sort, CumSum,
Unstack, ReverseV2, the resizes, L2Normalize, Einsum and a few more. Each is checked against values
worked out by hand (comments give the arithmetic), against MindSpore's error classes, and inside
@jit: one graph, no break, results equal to eager."""
import math
import unittest

import pijit as ms
from pijit import nn, ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


def values(out):
    """(dtype, shape, data) of a tensor, recursively for tuples: what two results must share."""
    if isinstance(out, (tuple, list)):
        return tuple(values(o) for o in out)
    return (out.dtype, out.shape, out.tolist())


X = ms.arange(24).reshape(2, 3, 4)  # X[i, j, k] = 12 i + 4 j + k


class StridedSliceMasks(unittest.TestCase):
    def ss(self, begin, end, strides, **masks):
        return ops.StridedSlice(**masks)(X, begin, end, strides)

    def test_plain_and_partial_specs(self):
        # X[1:2, 0:2, 0:4:2]
        self.assertEqual(self.ss((1, 0, 0), (2, 2, 4), (1, 1, 2)).tolist(), [[[12, 14], [16, 18]]])
        # a shorter spec takes the remaining dims whole: X[0:1, 2:3, :]
        self.assertEqual(self.ss((0, 2), (1, 3), (1, 1)).tolist(), [[[8, 9, 10, 11]]])
        # negative strides walk backwards: X[1:0:-1, 2:0:-2, 3:0:-3]
        self.assertEqual(self.ss((1, 2, 3), (0, 0, 0), (-1, -2, -3)).tolist(), [[[23]]])
        # out-of-range bounds clamp as Python's slices do
        self.assertEqual(self.ss((0, -100), (1, 100), (1, 1)).shape, (1, 3, 4))

    def test_begin_and_end_masks(self):
        # bit 0 of begin_mask: begin[0] ignored -> X[0:1, 1:2]
        self.assertEqual(self.ss((1, 1), (1, 2), (1, 1), begin_mask=1).tolist(), [[[4, 5, 6, 7]]])
        # bit 1 of end_mask: end[1] ignored -> X[0:1, 1:]
        self.assertEqual(self.ss((0, 1), (1, 0), (1, 1), end_mask=2).shape, (1, 2, 4))
        # both with a negative stride: X[::-1, 0:1]
        self.assertEqual(self.ss((5, 0), (0, 1), (-1, 1), begin_mask=1, end_mask=1).tolist(),
                         [[[12, 13, 14, 15]], [[0, 1, 2, 3]]])

    def test_shrink_new_axis_and_ellipsis(self):
        # shrink bit 0: X[1, 0:2] (dim 0 dropped)
        self.assertEqual(self.ss((1, 0), (2, 2), (1, 1), shrink_axis_mask=1).tolist(),
                         [[12, 13, 14, 15], [16, 17, 18, 19]])
        self.assertEqual(self.ss((-1, 0), (0, 1), (1, 1), shrink_axis_mask=3).tolist(), [12, 13, 14, 15])
        # new axis at spec position 1: X[0:1, None, 1:3] -> (1, 1, 2, 4)
        self.assertEqual(self.ss((0, 0, 1), (1, 1, 3), (1, 1, 1), new_axis_mask=2).shape, (1, 1, 2, 4))
        # ellipsis at position 0: X[..., 1:3]
        self.assertEqual(self.ss((0, 1), (1, 3), (1, 1), ellipsis_mask=1).tolist(),
                         [[[1, 2], [5, 6], [9, 10]], [[13, 14], [17, 18], [21, 22]]])
        # ellipsis in the middle with a shrink after it: X[1, ..., 2]
        self.assertEqual(self.ss((1, 0, 2), (2, 0, 3), (1, 1, 1), ellipsis_mask=2,
                                 shrink_axis_mask=5).tolist(), [14, 18, 22])
        self.assertEqual(ops.strided_slice(X, (0, 1), (1, 3), (1, 1), ellipsis_mask=1).shape,
                         (2, 3, 2))

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "only one bit of 'ellipsis_mask'"):
            ops.StridedSlice(ellipsis_mask=3)
        with self.assertRaisesRegex(TypeError, "'begin_mask' must be an int"):
            ops.StridedSlice(begin_mask=1.0)
        with self.assertRaisesRegex(ValueError, "same length"):
            self.ss((0,), (1, 1), (1, 1))
        with self.assertRaisesRegex(ValueError, "cannot contain 0"):
            self.ss((0,), (1,), (0,))
        with self.assertRaisesRegex(TypeError, "'begin' must be a tuple of ints"):
            self.ss((0.5,), (1,), (1,))
        with self.assertRaisesRegex(ValueError, "shrunk index 5 is out of range"):
            self.ss((5,), (6,), (1,), shrink_axis_mask=1)
        with self.assertRaisesRegex(TypeError, "'input_x' must be a Tensor"):
            ops.StridedSlice()([1, 2], (0,), (1,), (1,))


class ShapesAndIndices(unittest.TestCase):
    def test_split(self):
        parts = ops.Split(1, 3)(X)
        self.assertIsInstance(parts, tuple)
        self.assertEqual([p.tolist() for p in parts][1], [[[4, 5, 6, 7]], [[16, 17, 18, 19]]])
        self.assertEqual([p.shape for p in ops.Split(-1, 2)(X)], [(2, 3, 2), (2, 3, 2)])
        self.assertEqual(ops.Split()(X)[0].tolist(), X.tolist())
        with self.assertRaisesRegex(ValueError, "cannot be split into 'output_num' 2"):
            ops.Split(1, 2)(X)
        with self.assertRaisesRegex(ValueError, "'output_num' must be positive"):
            ops.Split(0, 0)
        with self.assertRaisesRegex(ValueError, "'axis' must be in range"):
            ops.Split(3, 1)(X)

    def test_split_functional_sizes(self):
        self.assertEqual([p.tolist() for p in ops.split(ms.arange(5), 2)], [[0, 1], [2, 3], [4]])
        self.assertEqual([p.tolist() for p in ops.split(ms.arange(5), [1, 4])], [[0], [1, 2, 3, 4]])

    def test_arg_with_value(self):
        index, value = ops.ArgMaxWithValue()(T([0.0, 0.4, 0.6, 0.7, 0.1]))
        self.assertEqual(values((index, value)), ((ms.int64, (), 3), (ms.float32, (), value.tolist())))
        self.assertAlmostEqual(value.tolist(), 0.7, places=6)
        x = T([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]])
        i, v = ops.ArgMinWithValue(axis=1, keep_dims=True)(x)
        self.assertEqual(values((i, v)), ((ms.int64, (2, 1), [[1], [2]]), (ms.float32, (2, 1), [[1.0], [-1.0]])))
        i, v = ops.ArgMaxWithValue(0)(T([[1.0, 7.0], [1.0, 2.0]]))  # ties: the first index
        self.assertEqual((i.tolist(), v.tolist()), ([0, 0], [1.0, 7.0]))
        with self.assertRaisesRegex(TypeError, "'keep_dims' must be a bool"):
            ops.ArgMaxWithValue(keep_dims=1)
        with self.assertRaisesRegex(TypeError, "'axis' must be an int"):
            ops.ArgMaxWithValue(axis=(0,))

    def test_slice(self):
        self.assertEqual(ops.Slice()(X, (0, 1, 1), (-1, 2, 2)).tolist(),
                         [[[5, 6], [9, 10]], [[17, 18], [21, 22]]])
        self.assertEqual(ops.Slice()(X, (1, 0, 3), (1, -1, 1)).tolist(), [[[15], [19], [23]]])
        with self.assertRaisesRegex(ValueError, "must lie within dim 1 of size 3"):
            ops.Slice()(X, (0, 2, 0), (1, 2, 1))
        with self.assertRaisesRegex(ValueError, "must equal the rank"):
            ops.Slice()(X, (0, 0), (1, 1))

    def test_flatten_zeros_ones_like(self):
        self.assertEqual(ops.Flatten()(X).shape, (2, 12))
        self.assertEqual(ops.Flatten()(T([1.0, 2.0])).tolist(), [[1.0], [2.0]])
        with self.assertRaisesRegex(ValueError, "rank of 'input_x' must be >= 1"):
            ops.Flatten()(T(1.0))
        self.assertEqual(values(ops.ZerosLike()(T([[1, 2]], ms.int32))), (ms.int32, (1, 2), [[0, 0]]))
        self.assertEqual(values(ops.OnesLike()(T([1.5]))), (ms.float32, (1,), [1.0]))

    def test_unstack_reverse_broadcast(self):
        a, b = ops.Unstack(1)(T([[1, 2], [3, 4]]))
        self.assertEqual((a.tolist(), b.tolist()), ([1, 3], [2, 4]))
        with self.assertRaisesRegex(ValueError, "'num' \\(3\\) must equal"):
            ops.Unstack(0, 3)(T([[1, 2], [3, 4]]))
        self.assertEqual(ops.ReverseV2((0, 1))(T([[1, 2], [3, 4]])).tolist(), [[4, 3], [2, 1]])
        self.assertEqual(ops.ReverseV2((-1,))(T([[1, 2, 3]])).tolist(), [[3, 2, 1]])
        self.assertEqual(ops.BroadcastTo((2, -1))(T([1, 2])).tolist(), [[1, 2], [1, 2]])

    def test_topk_sort_argmin_cumsum(self):
        v, i = ops.TopK()(T([1.0, 3.0, 2.0, 5.0]), 2)
        self.assertEqual(values((v, i)), ((ms.float32, (2,), [5.0, 3.0]), (ms.int32, (2,), [3, 1])))
        v, i = ops.Sort(descending=True)(T([1.0, 3.0, 2.0]))
        self.assertEqual(values((v, i)), ((ms.float32, (3,), [3.0, 2.0, 1.0]), (ms.int32, (3,), [1, 2, 0])))
        self.assertEqual(values(ops.Argmin()(T([[3.0, 1.0], [0.0, 5.0]]))), (ms.int32, (2,), [1, 0]))
        x = T([1.0, 2.0, 3.0])
        # inclusive [1, 3, 6]; exclusive [0, 1, 3]; reverse [6, 5, 3]; both [5, 3, 0]
        got = [ops.CumSum(e, r)(x, 0).tolist() for e, r in ((False, False), (True, False), (False, True), (True, True))]
        self.assertEqual(got, [[1.0, 3.0, 6.0], [0.0, 1.0, 3.0], [6.0, 5.0, 3.0], [5.0, 3.0, 0.0]])
        with self.assertRaisesRegex(ValueError, "'k' must be in \\[0, 4\\]"):
            ops.TopK()(T([1.0, 3.0, 2.0, 5.0]), 5)

    def test_gather_d_and_scatter_nd(self):
        x = T([[1, 2], [3, 4]])
        # dim 1: out[i][j] = x[i][index[i][j]]
        self.assertEqual(ops.GatherD()(x, 1, T([[0, 0], [1, 0]])).tolist(), [[1, 1], [4, 3]])
        # dim 0: out[i][j] = x[index[i][j]][j]
        self.assertEqual(ops.gather_elements(x, 0, T([[1, 0], [1, 1]])).tolist(), [[3, 2], [3, 4]])
        # repeated positions add up: 1 + 3 at 0, 2 at 2
        self.assertEqual(values(ops.ScatterNd()(T([[0], [2], [0]]), T([1.0, 2.0, 3.0]), (4,))),
                         (ms.float32, (4,), [4.0, 0.0, 2.0, 0.0]))
        self.assertEqual(values(ops.scatter_nd(T([[0, 1], [1, 1]]), T([5, 6], ms.int32), (2, 2))),
                         (ms.int32, (2, 2), [[0, 5], [0, 6]]))
        self.assertEqual(ops.ScatterNd()(T([[1]]), T([[1.0, 2.0]]), (2, 2)).tolist(), [[0.0, 0.0], [1.0, 2.0]])
        with self.assertRaisesRegex(ValueError, "'updates' must have shape \\(2,\\)"):
            ops.ScatterNd()(T([[0], [1]]), T([1.0]), (3,))
        with self.assertRaisesRegex(TypeError, "dtype of 'index' must be an integer type"):
            ops.GatherD()(x, 1, T([[0.0]]))

    def test_creation(self):
        self.assertEqual(values(ops.Range()(0, 10, 3)), (ms.int64, (4,), [0, 3, 6, 9]))
        self.assertEqual(values(ops.Range()(1.0, 0.0, -0.25)), (ms.float32, (4,), [1.0, 0.75, 0.5, 0.25]))
        with self.assertRaisesRegex(ValueError, "'delta' cannot be 0"):
            ops.Range()(0, 1, 0)
        with self.assertRaisesRegex(ValueError, "more than 'maxlen' 3"):
            ops.Range(3)(0, 10, 2)
        self.assertEqual(values(ops.Eye()(2, 3, ms.int32)), (ms.int32, (2, 3), [[1, 0, 0], [0, 1, 0]]))
        self.assertEqual(values(ops.tuple_to_array((1, 2, 3))), (ms.int64, (3,), [1, 2, 3]))
        self.assertEqual(values(ops.TupleToArray()((1.5, 2.0))), (ms.float32, (2,), [1.5, 2.0]))
        with self.assertRaisesRegex(TypeError, "must be a tuple"):
            ops.tuple_to_array(3)
        with self.assertRaisesRegex(ValueError, "must not be empty"):
            ops.tuple_to_array(())
        self.assertEqual(values(ops.scalar_to_tensor(2, ms.int32)), (ms.int32, (), 2))
        self.assertEqual(ops.ScalarCast()(2.7, ms.int32), 2)
        self.assertEqual(values(ops.Tril()(ms.ones((2, 3)))), (ms.float32, (2, 3), [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]))
        self.assertEqual(ops.Triu(1)(ms.ones((2, 3))).tolist(), [[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
        gx, gy = ops.Meshgrid()((T([1, 2, 3]), T([4, 5])))
        self.assertEqual((gx.tolist(), gy.tolist()), ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]]))
        gx, gy = ops.Meshgrid("ij")((T([1, 2, 3]), T([4, 5])))
        self.assertEqual((gx.shape, gy.tolist()), ((3, 2), [[4, 5], [4, 5], [4, 5]]))


class Elementwise(unittest.TestCase):
    def test_tensor_add_invert_dense(self):
        self.assertEqual(ops.TensorAdd()(T([1.0]), T([2.0])).tolist(), [3.0])
        self.assertTrue(issubclass(ops.TensorAdd, ops.Add))
        self.assertEqual(repr(ops.TensorAdd()), "Prim[TensorAdd]")
        # ~x == -x - 1 in two's complement
        self.assertEqual(values(ops.Invert()(T([0, 1, -3, 7], ms.int32))), (ms.int32, (4,), [-1, -2, 2, -8]))
        self.assertEqual(ops.Invert()(T([2 ** 62], ms.int64)).tolist(), [-(2 ** 62) - 1])
        with self.assertRaisesRegex(TypeError, "must be an integer type"):
            ops.Invert()(T([1.0]))
        with self.assertRaisesRegex(TypeError, "must be an integer type"):
            ops.Invert()(T([True]))
        # [1, 2] @ [[1, 1], [0, 2]].T + [0.5, 0] = [3.5, 4]
        self.assertEqual(ops.Dense()(T([[1.0, 2.0]]), T([[1.0, 1.0], [0.0, 2.0]]), T([0.5, 0.0])).tolist(), [[3.5, 4.0]])
        self.assertEqual(values(ops.Dense()(T([1.0, 2.0]), T([3.0, 4.0]), T(1.0))), (ms.float32, (), 12.0))
        self.assertEqual(ops.Dense()(ms.ones((2, 3, 4)), ms.ones((5, 4))).shape, (2, 3, 5))
        with self.assertRaisesRegex(ValueError, "'w' must be 2-D with last dim 4"):
            ops.Dense()(ms.ones((2, 4)), ms.ones((5, 3)))

    def test_float_status_and_finite_tests(self):
        nan, inf = float("nan"), float("inf")
        self.assertEqual(values(ops.FloatStatus()(T([nan, 1.0, -inf]))), (ms.float32, (1,), [1.0]))
        self.assertEqual(ops.FloatStatus()(T([[1.0, -2.0]])).tolist(), [0.0])
        self.assertEqual(ops.FloatStatus()(T([inf], ms.float64)).tolist(), [1.0])
        with self.assertRaisesRegex(TypeError, "must be a floating type"):
            ops.FloatStatus()(T([1]))
        x = T([nan, inf, -inf, 0.0])
        self.assertEqual(ops.IsNan()(x).tolist(), [True, False, False, False])
        self.assertEqual(ops.IsInf()(x).tolist(), [False, True, True, False])
        self.assertEqual(ops.IsFinite()(x).tolist(), [False, False, False, True])

    def test_activations(self):
        x = T([-1.0, 0.0, 2.0])
        for got, want in (
                (ops.FastGeLU()(x), [v / (1 + math.exp(-1.702 * abs(v))) * math.exp(0.851 * (v - abs(v))) for v in (-1.0, 0.0, 2.0)]),
                (ops.Elu()(x), [math.expm1(-1.0), 0.0, 2.0]),
                (ops.Softsign()(x), [-0.5, 0.0, 2.0 / 3]),
                (ops.Mish()(x), [v * math.tanh(math.log1p(math.exp(v))) for v in (-1.0, 0.0, 2.0)]),
                (ops.Erfc()(x), [math.erfc(v) for v in (-1.0, 0.0, 2.0)]),
                (ops.Trunc()(T([-1.5, 0.5, 2.7])), [-1.0, 0.0, 2.0]),
                (ops.SquaredDifference()(x, T([1.0, 1.0, 1.0])), [4.0, 1.0, 1.0]),
                (ops.L2Normalize(-1)(T([[3.0, 4.0]]))[0], [0.6, 0.8])):
            for g, w in zip(got.tolist(), want):
                self.assertAlmostEqual(g, w, places=6)
        # epsilon bounds the squared norm from below: 0.3 / sqrt(1e-4) = 30
        self.assertAlmostEqual(ops.L2Normalize()(T([0.003]))[0].tolist(), 0.3, places=5)
        self.assertEqual(ops.MaskedFill()(T([1.0, 2.0]), T([True, False]), 9.0).tolist(), [9.0, 2.0])
        self.assertEqual(ops.L2Loss()(T([1.0, 2.0])).tolist(), 2.5)


class InPlace(unittest.TestCase):
    def test_assign_add_and_sub_eager(self):
        w = ms.Parameter(T([1.0, 2.0]), name="w")
        self.assertIs(ops.AssignAdd()(w, T([1.0, 1.0])), w)
        self.assertEqual(w.tolist(), [2.0, 3.0])
        self.assertIs(ops.AssignSub()(w, 1), w)  # a number is broadcast
        self.assertEqual(w.tolist(), [1.0, 2.0])
        ops.assign_add(w, T([0.5]))
        self.assertEqual(w.tolist(), [1.5, 2.5])
        step = ms.Parameter(T(0, ms.int32), name="step")
        ops.AssignAdd()(step, 1)
        self.assertEqual(values(step), (ms.int32, (), 1))
        with self.assertRaisesRegex(ValueError, "does not broadcast to the variable's shape"):
            ops.AssignAdd()(w, T([1.0, 2.0, 3.0]))
        self.assertEqual(w.tolist(), [1.5, 2.5])  # a refused update changes nothing
        with self.assertRaisesRegex(TypeError, "'variable' must be a Parameter or Tensor"):
            ops.AssignAdd()([1.0], 1.0)

    def test_assign_add_under_jit(self):
        w = ms.Parameter(T([0.0, 0.0]), name="w")
        add = ops.AssignAdd()

        @ms.jit
        def f(x):
            ops.assign_add(w, x)  # captured: the write is replayed after the graph
            return w * 2

        self.assertEqual(f(T([1.0, 2.0])).tolist(), [2.0, 4.0])
        self.assertEqual(f(T([1.0, 2.0])).tolist(), [4.0, 8.0])
        self.assertEqual(w.tolist(), [2.0, 4.0])
        if CAPTURE_ON:
            st = ms.jit_stats(f)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, f)

        @ms.jit
        def g(x):
            add(w, x)  # the primitive is a graph break, as Assign() is
            return w + 1

        self.assertEqual(g(T([1.0, 1.0])).tolist(), [4.0, 6.0])
        self.assertEqual(w.tolist(), [3.0, 5.0])
        if CAPTURE_ON:
            self.assertTrue(any("writes a Parameter in place" in r for r in ms.jit_stats(g)["break_reasons"]))
        else:
            assert_ran_eagerly(self, g)

    def test_inplace_add_sub_update(self):
        x = T([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        v = T([[0.5, 1.0], [1.0, 1.5]])
        self.assertEqual(ops.InplaceAdd((0, 1))(x, v).tolist(), [[1.5, 3.0], [4.0, 5.5], [5.0, 6.0]])
        self.assertEqual(x.tolist()[0], [1.0, 2.0])  # a new tensor: x is unchanged
        self.assertEqual(ops.InplaceSub((2, 2))(x, v).tolist(), [[1.0, 2.0], [3.0, 4.0], [3.5, 3.5]])
        xi = T([[1, 2], [3, 4], [5, 6]], ms.int32)
        self.assertEqual(values(ops.InplaceAdd(1)(xi, T([[10, 20]], ms.int32))),
                         (ms.int32, (3, 2), [[1, 2], [13, 24], [5, 6]]))
        self.assertEqual(ops.InplaceUpdate((2, 0))(xi, T([[7, 8], [9, 10]], ms.int32)).tolist(),
                         [[9, 10], [3, 4], [7, 8]])
        self.assertEqual(ops.inplace_sub(x, T([[1.0, 1.0]]), 1).tolist()[1], [2.0, 3.0])
        with self.assertRaisesRegex(ValueError, "'v' must have shape \\(2, 2\\)"):
            ops.InplaceAdd((0, 1))(x, T([[1.0, 2.0]]))
        with self.assertRaisesRegex(ValueError, "'indices' must be in \\[0, 3\\)"):
            ops.InplaceAdd(3)(x, T([[1.0, 2.0]]))
        with self.assertRaisesRegex(TypeError, "'v' must have the dtype of 'x'"):
            ops.InplaceAdd(0)(x, T([[1, 2]]))


class OneHotTensors(unittest.TestCase):
    def test_values_and_dtype_follow_on_value(self):
        out = ops.OneHot()(T([0, 2], ms.int32), 3, T(0.9, ms.float32), T(0.05, ms.float32))
        self.assertEqual((out.dtype, out.shape), (ms.float32, (2, 3)))
        self.assertEqual(out.tolist(), [[T(0.9).tolist(), T(0.05).tolist(), T(0.05).tolist()],
                                        [T(0.05).tolist(), T(0.05).tolist(), T(0.9).tolist()]])
        out = ops.OneHot(axis=0)(T([1, 0]), 2, T(5, ms.int32), T(-1, ms.int32))
        self.assertEqual(values(out), (ms.int32, (2, 2), [[-1, 5], [5, -1]]))
        self.assertEqual(ops.OneHot()(T([1]), 2, 1.0, 0.0).tolist(), [[0.0, 1.0]])  # numbers still work
        with self.assertRaisesRegex(TypeError, "must both be Tensors"):
            ops.OneHot()(T([1]), 2, T(1.0), 0.0)
        with self.assertRaisesRegex(TypeError, "'off_value' must have the dtype of 'on_value'"):
            ops.OneHot()(T([1]), 2, T(1.0), T(0))
        with self.assertRaisesRegex(TypeError, "dtype of 'indices' must be int32 or int64"):
            ops.OneHot()(T([1.0]), 2, T(1.0), T(0.0))
        with self.assertRaisesRegex(ValueError, "'depth' must be non-negative"):
            ops.OneHot()(T([1]), -1, T(1.0), T(0.0))

    def test_label_smoothing_training_step_is_one_graph(self):
        class SmoothLoss(nn.Cell):
            def __init__(self, classes, smooth):
                super().__init__()
                self.onehot = ops.OneHot()
                self.on = T(1.0 - smooth, ms.float32)
                self.off = T(smooth / (classes - 1), ms.float32)
                self.classes = classes

            def construct(self, logits, label):
                target = self.onehot(label, self.classes, self.on, self.off)
                return ops.mean(ops.neg(ops.sum(target * ops.log_softmax(logits, -1), -1)))

        def run(jit):
            ms.set_seed(3)
            net = nn.Dense(4, 3)
            step = nn.TrainOneStepCell(nn.WithLossCell(net, SmoothLoss(3, 0.1)),
                                       nn.SGD(net.trainable_params(), 0.1))
            fn = ms.jit(step) if jit else step
            x, y = ms.randn(5, 4), T([0, 1, 2, 1, 0], ms.int32)
            losses = [fn(x, y).tolist() for _ in range(3)]
            return losses, net.weight.tolist(), fn

        eager, w_eager, _ = run(False)
        jitted, w_jit, fn = run(True)
        self.assertEqual(jitted, eager)
        self.assertEqual(w_jit, w_eager)
        self.assertLess(eager[2], eager[0])
        if CAPTURE_ON:
            st = ms.jit_stats(fn)
            self.assertEqual((st["breaks"], st["break_reasons"]), (0, []))
            self.assertGreaterEqual(st["graphs"], 1)
        else:
            assert_ran_eagerly(self, fn)


class NNPrimitives(unittest.TestCase):
    def test_layer_norm(self):
        out, mean, var = ops.LayerNorm()(T([[1.0, 2.0, 3.0]]), ms.ones(3), ms.zeros(3))
        # mean 2, variance 2/3, (x - 2) / sqrt(2/3 + 1e-7)
        s = math.sqrt(2.0 / 3 + 1e-7)
        for g, w in zip(out.tolist()[0], [-1 / s, 0.0, 1 / s]):
            self.assertAlmostEqual(g, w, places=5)
        self.assertEqual((mean.shape, mean.tolist(), var.shape), ((1, 1), [[2.0]], (1, 1)))
        self.assertAlmostEqual(var.tolist()[0][0], 2.0 / 3, places=6)
        x = ms.arange(8.0).reshape(2, 2, 2)
        out, mean, var = ops.LayerNorm(begin_norm_axis=1, begin_params_axis=-1)(x, T([1.0, 2.0]), T([0.0, 1.0]))
        self.assertEqual((out.shape, mean.shape, mean.tolist()), ((2, 2, 2), (2, 1, 1), [[[1.5]], [[5.5]]]))
        with self.assertRaisesRegex(ValueError, "'gamma' and 'beta' must have shape \\(2,\\)"):
            ops.LayerNorm(1, -1)(x, ms.ones(3), ms.zeros(3))

    def test_dropout(self):
        out, mask = ops.Dropout(0.5)(ms.ones((8, 8)))
        self.assertEqual(mask.dtype, ms.float32)
        kept = mask.tolist()
        self.assertEqual(out.tolist(), [[2.0 * k for k in row] for row in kept])
        out, mask = ops.Dropout(1.0)(T([1.0, 2.0]))
        self.assertEqual((out.tolist(), mask.tolist()), ([1.0, 2.0], [1.0, 1.0]))
        with self.assertRaisesRegex(ValueError, "'keep_prob' must be in \\(0, 1\\]"):
            ops.Dropout(0.0)

    def test_cross_entropies(self):
        logits = T([[0.0, 0.0], [1.0, 3.0]])
        # -log(1/2) and -log(e^1 / (e^1 + e^3)); mean of the two
        l0, l1 = math.log(2), math.log(1 + math.exp(2))
        self.assertAlmostEqual(ops.SparseSoftmaxCrossEntropyWithLogits()(logits, T([1, 0])).tolist(),
                               (l0 + l1) / 2, places=5)
        g = ops.SparseSoftmaxCrossEntropyWithLogits(True)(logits, T([1, 0])).tolist()
        p = 1 / (1 + math.exp(2))  # softmax(1, 3)[0]
        for a, b in zip(g[0] + g[1], [0.25, -0.25, (p - 1) / 2, (1 - p) / 2]):
            self.assertAlmostEqual(a, b, places=6)
        loss, d = ops.SoftmaxCrossEntropyWithLogits()(logits, T([[0.0, 1.0], [0.5, 0.5]]))
        self.assertEqual(loss.shape, (2,))
        self.assertAlmostEqual(loss.tolist()[1], 0.5 * l1 + 0.5 * (l1 - 2), places=5)
        self.assertAlmostEqual(d.tolist()[1][0], p - 0.5, places=6)
        x, y = T([-1.0, 2.0]), T([0.0, 1.0])
        want = [max(v, 0) - v * t + math.log1p(math.exp(-abs(v))) for v, t in ((-1.0, 0.0), (2.0, 1.0))]
        for a, b in zip(ops.SigmoidCrossEntropyWithLogits()(x, y).tolist(), want):
            self.assertAlmostEqual(a, b, places=6)
        with self.assertRaisesRegex(ValueError, "'logits' must be \\(N, C\\) and 'labels' \\(N,\\)"):
            ops.SparseSoftmaxCrossEntropyWithLogits()(logits, T([1]))

    def test_pools(self):
        x = ms.arange(9.0).reshape(1, 1, 3, 3)
        self.assertEqual(ops.MaxPool(2, 1)(x).tolist(), [[[[4.0, 5.0], [7.0, 8.0]]]])
        # 'same', stride 2: out 2x2, one pixel of padding after: windows {0,1,3,4} {2,5} {6,7} {8}
        self.assertEqual(ops.MaxPool(2, 2, "same")(x).tolist(), [[[[4.0, 5.0], [7.0, 8.0]]]])
        self.assertEqual(ops.AvgPool(2, 2, "SAME")(x).tolist(), [[[[2.0, 3.5], [6.5, 8.0]]]])
        self.assertEqual(ops.AvgPool((1, 1, 2, 2), (1, 1, 1, 1))(x).tolist(), [[[[2.0, 3.0], [5.0, 6.0]]]])
        with self.assertRaisesRegex(ValueError, "'pad_mode' must be 'same' or 'valid'"):
            ops.MaxPool(2, 2, "pad")
        with self.assertRaisesRegex(ValueError, "must be 4-D"):
            ops.MaxPool(2, 2)(ms.ones((3, 3)))

    def test_resizes(self):
        x = ms.arange(4.0).reshape(1, 1, 2, 2)
        self.assertEqual(ops.ResizeNearestNeighbor((3, 3))(x).tolist(),  # floor(i * 2/3)
                         [[[[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [2.0, 2.0, 3.0]]]])
        self.assertEqual(ops.ResizeNearestNeighbor((3, 3), align_corners=True)(x).tolist(),  # round(i * 1/2)
                         [[[[0.0, 1.0, 1.0], [2.0, 3.0, 3.0], [2.0, 3.0, 3.0]]]])
        # legacy corners: src = i * 2/4 -> 0, .5, 1, 1.5 (the last clamped to pixel 1)
        self.assertEqual(ops.ResizeBilinear((4, 4))(x).tolist()[0][0][0], [0.0, 0.5, 1.0, 1.0])
        self.assertEqual(ops.ResizeBilinear((3, 3), align_corners=True)(x).tolist(),
                         [[[[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]]])
        # half pixels: src = (i + .5) / 2 - .5 -> -.25, .25, .75, 1.25
        self.assertEqual(ops.ResizeBilinear((4, 4), half_pixel_centers=True)(x).tolist()[0][0][0],
                         [0.0, 0.25, 0.75, 1.0])
        self.assertEqual(ops.ResizeBilinearV2()(x, (4, 4)).tolist(), ops.ResizeBilinear((4, 4))(x).tolist())
        with self.assertRaisesRegex(ValueError, "cannot both be True"):
            ops.ResizeBilinear((2, 2), True, True)

    def test_einsum(self):
        a, b = T([[1.0, 2.0]]), T([[3.0], [4.0]])
        self.assertEqual(ops.Einsum("ij,jk->ik")((a, b)).tolist(), [[11.0]])
        self.assertEqual(ops.einsum("ij->ji", a).tolist(), [[1.0], [2.0]])
        self.assertEqual(ops.einsum("ii", T([[1.0, 2.0], [3.0, 4.0]])).tolist(), 5.0)
        self.assertEqual(ops.einsum("ii->i", T([[1.0, 2.0], [3.0, 4.0]])).tolist(), [1.0, 4.0])
        self.assertEqual(ops.einsum("i,j", T([1.0, 2.0]), T([3.0, 4.0])).tolist(), [[3.0, 4.0], [6.0, 8.0]])
        q, k = ms.arange(12.0).reshape(2, 2, 3), ms.arange(6.0).reshape(2, 3, 1)
        self.assertEqual(ops.einsum("bij,bjk->bik", q, k).tolist(), ops.matmul(q, k).tolist())
        with self.assertRaisesRegex(ValueError, "names 2 operands, but got 1"):
            ops.einsum("ij,jk", a)


class MorePrimitives(unittest.TestCase):
    def test_math(self):
        self.assertEqual(ops.LogicalXor()(T([True, False]), T([True, True])).tolist(), [False, True])
        self.assertEqual(ops.Expm1()(T([0.0])).tolist(), [0.0])
        self.assertAlmostEqual(ops.Tan()(T([0.5])).tolist()[0], math.tan(0.5), places=6)
        self.assertAlmostEqual(ops.Sinh()(T([1.0])).tolist()[0], math.sinh(1), places=6)
        self.assertAlmostEqual(ops.Cosh()(T([1.0])).tolist()[0], math.cosh(1), places=6)
        self.assertEqual(ops.Xlogy()(T([0.0, 2.0]), T([0.0, 1.0])).tolist(), [0.0, 0.0])  # 0 * log 0 = 0
        self.assertEqual(ops.PReLU()(T([[-1.0, 2.0], [-2.0, -4.0]]), T([0.5, 0.25])).tolist(),
                         [[-0.5, 2.0], [-1.0, -1.0]])
        with self.assertRaisesRegex(ValueError, "'weight' must be 1-D with 1 or C"):
            ops.PReLU()(ms.ones((2, 3)), ms.ones(2))
        self.assertEqual(ops.Roll(1, 0)(T([1, 2, 3])).tolist(), [3, 1, 2])
        self.assertEqual(ops.Roll((-1, 1), (0, 1))(T([[1, 2], [3, 4]])).tolist(), [[4, 3], [2, 1]])
        a, b = ops.SquareSumAll()(T([1.0, 2.0]), T([3.0]))
        self.assertEqual((a.tolist(), b.tolist()), (5.0, 9.0))
        std, mean = ops.ReduceStd(0)(T([1.0, 2.0, 3.0, 4.0]))  # sample variance 5/3
        self.assertAlmostEqual(std.tolist(), math.sqrt(5.0 / 3), places=6)
        self.assertEqual(mean.tolist(), 2.5)

    def test_scatter_updates(self):
        x = T([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual(ops.TensorScatterUpdate()(x, T([[0, 1], [1, 0]]), T([9.0, 8.0])).tolist(),
                         [[1.0, 9.0], [8.0, 4.0]])
        self.assertEqual(ops.TensorScatterAdd()(T([1, 2, 3]), T([[0], [0]]), T([5, 5])).tolist(), [11, 2, 3])
        p = ms.Parameter(T([1.0, 2.0, 3.0]), name="p")
        self.assertIs(ops.ScatterNdUpdate()(p, T([[2]]), T([7.0])), p)
        self.assertEqual(p.tolist(), [1.0, 2.0, 7.0])
        with self.assertRaisesRegex(TypeError, "'updates' must have the dtype of 'input_x'"):
            ops.TensorScatterUpdate()(x, T([[0, 0]]), T([1]))

    def test_losses(self):
        lp = ops.log_softmax(T([[1.0, 2.0], [0.0, 0.0]]), -1)
        # weighted: (2 * (log(1 + e) - 1) + 1 * log 2) / (2 + 1)
        l0, l1 = math.log(1 + math.e) - 1, math.log(2)
        loss, total = ops.NLLLoss()(lp, T([1, 0]), T([1.0, 2.0]))
        self.assertAlmostEqual(loss.tolist(), (2 * l0 + l1) / 3, places=6)
        self.assertEqual(total.tolist(), 3.0)
        loss, total = ops.NLLLoss("sum", 0)(lp, T([1, 0]), T([1.0, 2.0]))  # label 0 ignored
        self.assertAlmostEqual(loss.tolist(), 2 * l0, places=6)
        self.assertEqual(total.tolist(), 2.0)
        # 0.5 * (log 0.5 - (-1)); the 0 label contributes 0
        self.assertAlmostEqual(ops.KLDivLoss("sum")(T([-1.0, -2.0]), T([0.5, 0.0])).tolist(),
                               0.5 * (math.log(0.5) + 1), places=6)
        with self.assertRaisesRegex(ValueError, "'reduction' must be 'none', 'mean', 'sum' or 'batchmean'"):
            ops.KLDivLoss("avg")

    def test_random(self):
        self.assertEqual(ops.UniformReal(1, 2)((2, 2)).tolist(), ops.UniformReal(1, 2)((2, 2)).tolist())
        u = ops.UniformReal()((50,)).tolist()
        self.assertTrue(all(0.0 <= v < 1.0 for v in u))
        self.assertEqual(values(ops.StandardNormal(3)((3,)))[:2], (ms.float32, (3,)))


class Gradients(unittest.TestCase):
    """The composed primitives differentiate (eagerly and jitted alike); values by hand."""

    def grad(self, fn, x):
        g = ms.grad(fn)(x)
        self.assertEqual(ms.jit(ms.grad(fn))(x).tolist(), g.tolist())
        return g.tolist()

    def test_gradients(self):
        x = T([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
        # x[0:2, 1]: ones in column 1
        self.assertEqual(self.grad(lambda x: ops.StridedSlice(1, 0, 0, 0, 2)(x, (0, 1), (2, 2), (1, 1)).sum(), x),
                         [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
        # row 0 reads column 0 twice (weights 1, 2); row 1 reads columns 2 (3) and 1 (4)
        w = T([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual(self.grad(lambda x: (ops.GatherD()(x, 1, T([[0, 0], [2, 1]])) * w).sum(), x),
                         [[3.0, 0.0, 0.0], [0.0, 4.0, 3.0]])
        # both rows land in row 1 of the output, whose weights are 3, 4, 5
        m = ms.arange(9.0).reshape(3, 3)
        self.assertEqual(self.grad(lambda x: (ops.ScatterNd()(T([[1], [1]]), x, (3, 3)) * m).sum(), x),
                         [[3.0, 4.0, 5.0], [3.0, 4.0, 5.0]])
        # out0 = x0, out1 = x1 + 2 x0 + 2 x1 = 2 x0 + 3 x1 = [14, 16, 24]; L = sum(out ** 2):
        # dx0 = 2 out0 + 4 out1, dx1 = 6 out1
        self.assertEqual(self.grad(lambda x: (ops.InplaceAdd((1, 1))(x, x * 2) ** 2).sum(), x),
                         [[58.0, 74.0, 102.0], [84.0, 96.0, 144.0]])
        # out = x with row 0 replaced by 3 x0: L = 9 |x0|^2 + |x1|^2 -> 18 x0 and 2 x1
        self.assertEqual(self.grad(lambda x: (ops.InplaceUpdate((0,))(x, x[:1] * 3) ** 2).sum(), x),
                         [[18.0, 90.0, 54.0], [8.0, 4.0, 12.0]])
        # sum_ik (x x^T)_ik = |sum of rows|^2: gradient 2 * (x0 + x1) in every row
        self.assertEqual(self.grad(lambda x: ops.einsum("ij,kj->", x, x), x),
                         [[10.0, 14.0, 18.0], [10.0, 14.0, 18.0]])
        # only the window maxima (5 and 6) get gradient
        self.assertEqual(self.grad(lambda x: ops.MaxPool(2, 2, "same")(x.reshape(1, 1, 2, 3)).sum(), x),
                         [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        # AvgPool 'same' 2x2/2 on 2x3: a window of 4 (weights 1/4) and one of 2 (1/2)
        self.assertEqual(self.grad(lambda x: ops.AvgPool(2, 2, "same")(x.reshape(1, 1, 2, 3)).sum(), x),
                         [[0.25, 0.25, 0.5], [0.25, 0.25, 0.5]])


class NewDtypes(unittest.TestCase):
    """The small integer and 16-bit float dtypes pass through (issue 42's dtypes)."""

    def test_invert_on_every_integer_dtype(self):
        for dt, top in ((ms.int8, None), (ms.int16, None), (ms.uint8, 2 ** 8), (ms.uint16, 2 ** 16),
                        (ms.uint32, 2 ** 32), (ms.uint64, 2 ** 64)):
            out = ops.Invert()(T([0, 1, 5], dt))
            want = [-1, -2, -6] if top is None else [top - 1, top - 2, top - 6]
            self.assertEqual(values(out), (dt, (3,), want), dt)
        with self.assertRaisesRegex(TypeError, "must be an integer type, but got Complex64"):
            ops.Invert()(T([1 + 2j], ms.complex64))

    def test_half_precision(self):
        self.assertEqual(ops.FloatStatus()(T([1.0, float("inf")], ms.float16)).tolist(), [1.0])
        self.assertEqual(ops.FloatStatus()(T([1.0], ms.bfloat16)).tolist(), [0.0])
        out = ops.OneHot()(T([0, 1]), 2, T(0.5, ms.float16), T(0.25, ms.float16))
        self.assertEqual(values(out), (ms.float16, (2, 2), [[0.5, 0.25], [0.25, 0.5]]))
        p = ms.Parameter(T([1.0, 2.0], ms.float16), name="p")
        ops.AssignAdd()(p, T([0.5, 0.5]))
        self.assertEqual(values(p), (ms.float16, (2,), [1.5, 2.5]))
        self.assertEqual(values(ops.ScatterNd()(T([[0], [0]]), T([1, 2], ms.uint8), (2,))), (ms.uint8, (2,), [3, 0]))


class UnderJit(unittest.TestCase):
    """Each primitive inside @jit: one graph, no break, the eager result."""
    CASES = [
        ("StridedSlice", lambda x: ops.StridedSlice(1, 2, 0, 0, 0)(x, (1, 0), (0, 1), (-1, 1))),
        ("StridedSlice_masks", lambda x: ops.StridedSlice(0, 0, 1, 0, 4)(x, (0, 0, 1), (1, 1, 2), (1, 1, 1))),
        ("StridedSlice_new", lambda x: ops.StridedSlice(new_axis_mask=1)(x, (0, 0), (1, 2), (1, 1))),
        ("strided_slice", lambda x: ops.strided_slice(x, (0,), (1,), (1,))),
        ("Split", lambda x: ops.Split(1, 3)(x)),
        ("ArgMaxWithValue", lambda x: ops.ArgMaxWithValue(1, True)(x)),
        ("ArgMinWithValue", lambda x: ops.ArgMinWithValue()(x)),
        ("Slice", lambda x: ops.Slice()(x, (0, 1), (-1, 2))),
        ("Flatten", lambda x: ops.Flatten()(x.reshape(2, 3, 1))),
        ("ZerosLike", lambda x: ops.ZerosLike()(x) + x),
        ("OnesLike", lambda x: ops.OnesLike()(x) * x),
        ("TensorAdd", lambda x: ops.TensorAdd()(x, x)),
        ("InplaceAdd", lambda x: ops.InplaceAdd((1, 1))(x, x)),
        ("InplaceSub", lambda x: ops.InplaceSub(0)(x, x[:1])),
        ("InplaceUpdate", lambda x: ops.InplaceUpdate((1, 0))(x, x * 2)),
        ("Invert", lambda x: ops.Invert()(ops.Cast()(x, ms.int32))),
        ("Dense", lambda x: ops.Dense()(x, x, x[:, 0])),
        ("FloatStatus", lambda x: ops.FloatStatus()(x / (x - 1.0))),
        ("IsFinite", lambda x: ops.IsFinite()(x / (x - 1.0))),
        ("tuple_to_array", lambda x: x + ops.tuple_to_array((1.0, 2.0, 3.0))),
        ("OneHot_tensors", lambda x: ops.OneHot()(ops.Cast()(x, ms.int32) % 3, 3, x[0, 0], x[0, 1])),
        ("GatherD", lambda x: ops.GatherD()(x, 1, ops.Cast()(x, ms.int32) % 3)),
        ("ScatterNd", lambda x: ops.ScatterNd()(ms.Tensor([[1], [0], [1]]), x[0], (3,))),
        ("Range", lambda x: x[0] + ops.Range()(0, 3, 1)),
        ("Eye", lambda x: x[:, :2] @ ops.Eye()(2, 2, ms.float32)),
        ("TopK", lambda x: ops.TopK()(x, 2)),
        ("Sort", lambda x: ops.Sort(0, True)(x)),
        ("CumSum", lambda x: ops.CumSum(True, True)(x, 1)),
        ("Argmin", lambda x: ops.Argmin(0)(x)),
        ("Unstack", lambda x: ops.Unstack(1)(x)),
        ("ReverseV2", lambda x: ops.ReverseV2((0, 1))(x)),
        ("BroadcastTo", lambda x: ops.BroadcastTo((2, 2, -1))(x)),
        ("L2Normalize", lambda x: ops.L2Normalize(1)(x)),
        ("FastGeLU", lambda x: ops.FastGeLU()(x)),
        ("Elu", lambda x: ops.Elu(0.5)(x - 3.0)),
        ("Tril", lambda x: ops.Tril(-1)(x)),
        ("LayerNorm", lambda x: ops.LayerNorm()(x, ms.ones(3), ms.zeros(3))),
        ("Dropout_seeded", lambda x: ops.Dropout(0.7, 1, 2)(x)),
        ("SparseSoftmaxCE", lambda x: ops.SparseSoftmaxCrossEntropyWithLogits()(x, ms.Tensor([0, 2]))),
        ("SoftmaxCE", lambda x: ops.SoftmaxCrossEntropyWithLogits()(x, ops.softmax(x * 2))),
        ("MaxPool_same", lambda x: ops.MaxPool(2, 2, "same")(x.reshape(1, 1, 2, 3))),
        ("AvgPool_same", lambda x: ops.AvgPool(2, 2, "same")(x.reshape(1, 1, 2, 3))),
        ("ResizeNearest", lambda x: ops.ResizeNearestNeighbor((3, 5))(x.reshape(1, 1, 2, 3))),
        ("ResizeBilinear", lambda x: ops.ResizeBilinear((3, 4), half_pixel_centers=True)(x.reshape(1, 1, 2, 3))),
        ("Einsum", lambda x: ops.Einsum("ij,kj->ik")((x, x))),
        ("einsum_trace", lambda x: ops.einsum("ij,ij->", x, x)),
        ("Meshgrid", lambda x: ops.Meshgrid()((x[0], x[1, :2]))),
        ("Sinh_Cosh", lambda x: ops.Sinh()(x / 4) + ops.Cosh()(x / 4)),
        ("Xlogy", lambda x: ops.Xlogy()(x - 1.0, x)),
        ("PReLU", lambda x: ops.PReLU()(x - 3.0, ms.Tensor([0.5, 0.25]).reshape(2, 1)[:, 0][:1])),
        ("Roll", lambda x: ops.Roll((1, -1), (0, 1))(x)),
        ("ReduceStd", lambda x: ops.ReduceStd(1, keep_dims=True)(x)),
        ("TensorScatterUpdate", lambda x: ops.TensorScatterUpdate()(x, ms.Tensor([[0, 1]]), x[1, :1])),
        ("NLLLoss", lambda x: ops.NLLLoss()(ops.log_softmax(x, -1), ms.Tensor([2, 0]), ms.ones(3))),
        ("KLDivLoss", lambda x: ops.KLDivLoss("batchmean")(ops.log_softmax(x, -1), ops.softmax(x * 2, -1))),
        ("UniformReal_seeded", lambda x: x + ops.UniformReal(4, 5)((2, 3))),
    ]

    def test_each_primitive_captures_into_one_graph(self):
        x = T([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
        for name, fn in self.CASES:
            with self.subTest(name=name):
                want = values(fn(x))
                jf = ms.jit(fn)
                self.assertEqual(values(jf(x)), want)
                self.assertEqual(values(jf(x)), want)
                if CAPTURE_ON:
                    st = ms.jit_stats(jf)
                    self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))
                else:  # (no capture: jf ran eagerly, equal to eager above)
                    assert_ran_eagerly(self, jf)


if __name__ == "__main__":
    unittest.main()
