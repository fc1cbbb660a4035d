"""The third part of MindSpore's primitives (issue 42), composed from pijit's ops: wrappers of
functional forms (Acosh, Addcdiv, Cross, CumProd, Cummax, DiagPart, DivNoNan, Eps, LogSpace,
LpNorm, ...), in-place scatters on Parameters (ScatterMax/Update, ScatterNd*, the functional
scatter_* forms captured under jit), segment reductions, searches and histograms, block
rearrangements, pools with argmax, Im2Col/Col2Im, LRN, mirror padding, resizes, window functions,
random draws, the optimizer update primitives and BatchNorm. Values are worked out by hand (the
comments give the arithmetic); jitted calls are one graph with no break and equal to eager."""
import math
import unittest

import pijit as ms
from pijit import ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


def P(data, name, dtype=None):
    return ms.Parameter(T(data, dtype), name=name)


def close(test, got, want, places=5):
    got = [g.tolist() for g in got] if isinstance(got, tuple) else got
    got = got.tolist() if hasattr(got, "tolist") else got
    flat_g, flat_w = _flat(got), _flat(want)
    test.assertEqual(len(flat_g), len(flat_w), (got, want))
    for g, w in zip(flat_g, flat_w):
        test.assertAlmostEqual(g, w, places=places, msg=(got, want))


def _flat(v):
    if isinstance(v, (list, tuple)):
        return [e for x in v for e in _flat(x)]
    return [v]


def one_graph(test, fn, *args):
    """fn eagerly and jitted: equal results, the jitted one captured as one graph with no break."""
    jitted = ms.jit(fn)
    jitted(*args)
    got = jitted(*args)
    want = fn(*args)
    ws = want if isinstance(want, tuple) else (want,)
    gs = got if isinstance(got, tuple) else (got,)
    for w, g in zip(ws, gs):
        test.assertEqual((g.dtype, g.shape, g.tolist()), (w.dtype, w.shape, w.tolist()))
    if CAPTURE_ON:
        st = ms.jit_stats(jitted)
        test.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))
    else:  # (no capture: jitted ran eagerly, equal to eager above)
        assert_ran_eagerly(test, jitted)
    return got


class Elementwise(unittest.TestCase):
    def test_wrappers(self):
        close(self, ops.Acosh()(T([1.0, 2.0])), [0.0, math.log(2 + math.sqrt(3))])
        close(self, ops.Asinh()(T([1.0])), [math.log(1 + math.sqrt(2))])
        close(self, ops.Atanh()(T([0.5])), [0.5 * math.log(3)])
        # 1 + 3 * 4 / 2 and 1 + 3 * 4 * 2
        self.assertEqual(ops.Addcdiv()(T([1.0]), T([4.0]), T([2.0]), T([3.0])).tolist(), [7.0])
        self.assertEqual(ops.Addcmul()(T([1.0]), T([4.0]), T([2.0]), T([3.0])).tolist(), [25.0])
        self.assertEqual(ops.Inv()(T([2.0, 4.0])).tolist(), [0.5, 0.25])
        self.assertEqual(ops.HShrink(1.0)(T([-2.0, 0.5, 1.5])).tolist(), [-2.0, 0.0, 1.5])
        self.assertEqual(ops.SoftShrink(1.0)(T([-2.0, 0.5, 1.5])).tolist(), [-1.0, 0.0, 0.5])
        self.assertEqual(ops.Cross()(T([[1.0, 0, 0]]), T([[0.0, 1, 0]])).tolist(), [[0.0, 0.0, 1.0]])
        self.assertEqual(ops.Ger()(T([1.0, 2.0]), T([3.0, 4.0])).tolist(), [[3.0, 4.0], [6.0, 8.0]])
        self.assertEqual(ops.Heaviside()(T([-1.0, 0.0, 2.0]), T([0.5])).tolist(), [0.0, 0.5, 1.0])
        self.assertEqual(ops.Hypot()(T([3.0]), T([4.0])).tolist(), [5.0])
        self.assertEqual(ops.TruncateDiv()(T([-7, 7]), T([2, 2])).tolist(), [-3, 3])
        self.assertEqual(ops.TruncateMod()(T([-7.0, 7.0]), T([2.0, 2.0])).tolist(), [-1.0, 1.0])
        with self.assertRaisesRegex(ValueError, "'lambd' must be greater than or equal to 0"):
            ops.HShrink(-1.0)

    def test_no_nan_divisions(self):
        self.assertEqual(ops.DivNoNan()(T([1.0, 2.0]), T([0.0, 4.0])).tolist(), [0.0, 0.5])
        # 0 where y is 0 even when x is inf
        self.assertEqual(ops.MulNoNan()(T([float("inf"), 2.0]), T([0.0, 4.0])).tolist(), [0.0, 8.0])
        self.assertEqual(ops.Xdivy()(T([0.0, 3.0]), T([0.0, 2.0])).tolist(), [0.0, 1.5])

    def test_counts_and_constants(self):
        self.assertEqual(ops.Eps()(T([1.0, 2.0])).tolist(), [2.0 ** -23] * 2)
        self.assertEqual(ops.Eps()(T([1.0], ms.float64)).tolist(), [2.0 ** -52])
        with self.assertRaisesRegex(TypeError, "must be float16, float32 or float64"):
            ops.Eps()(T([1]))
        eq = ops.EqualCount()(T([1, 2, 3], ms.int32), T([1, 0, 3], ms.int32))
        self.assertEqual((eq.dtype, eq.shape, eq.tolist()), (ms.int32, (1,), [2]))
        self.assertEqual(ops.FillV2()((2, 2), T(3.0)).tolist(), [[3.0, 3.0], [3.0, 3.0]])
        self.assertEqual(ops.FillV2()(T([3]), T(1, ms.int32)).dtype, ms.int32)
        self.assertEqual(ops.TensorShape()(ms.ones((2, 5))).tolist(), [2, 5])
        # 2**0, 2**1, 2**2
        self.assertEqual(ops.LogSpace(3, 2)(T(0.0), T(2.0)).tolist(), [1.0, 2.0, 4.0])
        # axis 0 of [[1, 2], [3, 4], [5, 6]]: sqrt(1 + 9 + 25), sqrt(4 + 16 + 36)
        close(self, ops.LpNorm(0)(T([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])), [math.sqrt(35), math.sqrt(56)])
        close(self, ops.LpNorm((0, 1), p=1)(T([[1.0, -2.0], [3.0, 4.0]])), 10.0)
        self.assertEqual(ops.InvertPermutation()((3, 4, 0, 2, 1)), (2, 4, 3, 0, 1))
        with self.assertRaisesRegex(ValueError, "must be a permutation"):
            ops.InvertPermutation()((0, 0))
        self.assertEqual(ops.IsClose()(T([1.0, float("nan")]), T([1.0 + 1e-9, float("nan")])).tolist(),
                         [True, True])  # equal_nan defaults to True for the primitive
        self.assertEqual(ops.approximate_equal(T([1.0, 2.0]), T([1.0, 2.1]), 0.01).tolist(), [True, False])
        self.assertEqual(ops.ApproximateEqual(0.2)(T([1.0, 2.0]), T([1.0, 2.1])).tolist(), [True, True])
        self.assertEqual(ops.addn([T([1.0]), T([2.0]), T([3.0])]).tolist(), [6.0])
        self.assertEqual(ops.AccumulateNV2()([T([1.0]), T([2.0])]).tolist(), [3.0])
        with self.assertRaisesRegex(ValueError, "every input must have the shape"):
            ops.accumulate_n([T([1.0]), T([1.0, 2.0])])

    def test_complex_parts(self):
        z = ops.Complex()(T([1.0, 2.0]), T([3.0, 4.0]))
        self.assertEqual(ops.Real()(z).tolist(), [1.0, 2.0])
        self.assertEqual(ops.Imag()(ops.Conj()(z)).tolist(), [-3.0, -4.0])
        self.assertEqual(ops.view_as_real(z).tolist(), [[1.0, 3.0], [2.0, 4.0]])
        close(self, ops.ComplexAbs()(ops.Complex()(T([3.0]), T([4.0]))), [5.0])

    def test_scans_and_diagonals(self):
        # exclusive and reversed: [4*3*2, 4*3, 4, 1]
        self.assertEqual(ops.CumProd(True, True)(T([1.0, 2.0, 3.0, 4.0]), 0).tolist(), [24.0, 12.0, 4.0, 1.0])
        self.assertEqual(ops.CumProd()(T([1.0, 2.0, 3.0]), 0).tolist(), [1.0, 2.0, 6.0])
        v, i = ops.Cummax(0)(T([1.0, 3.0, 2.0, 4.0]))
        self.assertEqual((v.tolist(), i.tolist()), ([1.0, 3.0, 3.0, 4.0], [0, 1, 1, 3]))
        v, i = ops.Cummin(0)(T([3.0, 1.0, 2.0]))
        self.assertEqual((v.tolist(), i.tolist()), ([3.0, 1.0, 1.0], [0, 1, 1]))
        d = ops.Diag()(T([1.0, 2.0]))
        self.assertEqual(d.tolist(), [[1.0, 0.0], [0.0, 2.0]])
        self.assertEqual(ops.DiagPart()(d).tolist(), [1.0, 2.0])
        with self.assertRaisesRegex(ValueError, "even rank"):
            ops.DiagPart()(T([1.0, 2.0]))
        self.assertEqual(ops.Trace()(T([[1.0, 2.0], [3.0, 4.0]])).tolist(), 5.0)
        # keep i - j <= 0 (nothing below) and j - i <= 1 (one above)
        self.assertEqual(ops.MatrixBandPart()(ms.ones((3, 3)), 0, 1).tolist(),
                         [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
        self.assertEqual(ops.matrix_band_part(ms.ones((2, 2)), -1, 0).tolist(), [[1.0, 0.0], [1.0, 1.0]])
        self.assertEqual(ops.ReverseSequence(1)(T([[1, 2, 3], [4, 5, 6]]), T([2, 3])).tolist(),
                         [[2, 1, 3], [6, 5, 4]])
        self.assertEqual(ops.reverse_sequence(T([[1, 2], [3, 4], [5, 6]]), T([1, 2]), 0, 1).tolist(),
                         [[1, 4], [3, 2], [5, 6]])

    def test_captured(self):
        def f(x, y):
            a = ops.DivNoNan()(x, y) + ops.Addcmul()(x, x, y, 2.0)
            b = ops.CumProd(True)(x, 0) + ops.LpNorm(0)(ops.Diag()(x))
            c = ops.MatrixBandPart()(ops.Ger()(x, y), 0, 0)
            return a, b, c, ops.ReverseSequence(0, 1)(ops.Ger()(x, y), T([1, 2, 3]))
        one_graph(self, f, T([1.0, 2.0, 3.0]), T([0.0, 1.0, 2.0]))


class Scatters(unittest.TestCase):
    def test_row_scatters_in_place(self):
        p = P([1.0, 5.0, 3.0], "p")
        # row 0 takes max(1, 4, 0.5) = 4, row 2 max(3, 9)
        self.assertIs(ops.ScatterMax()(p, T([0, 0, 2]), T([4.0, 0.5, 9.0])), p)
        self.assertEqual(p.tolist(), [4.0, 5.0, 9.0])
        ops.ScatterMin()(p, T([1]), T([2.0]))
        self.assertEqual(p.tolist(), [4.0, 2.0, 9.0])
        ops.ScatterMul()(p, T([0, 0]), T([2.0, 3.0]))  # 4 * 2 * 3
        ops.ScatterDiv()(p, T([2]), T([3.0]))
        self.assertEqual(p.tolist(), [24.0, 2.0, 3.0])
        ops.ScatterUpdate()(p, T([1, 1]), T([7.0, 8.0]))  # the last write wins
        ops.ScatterSub()(p, T([[0, 0]]), T([[1.0, 2.0]]))  # indices of any shape
        ops.ScatterAdd()(p, T([2]), T([1.0]))
        self.assertEqual(p.tolist(), [21.0, 8.0, 4.0])
        q = P([[1, 2], [3, 4]], "q", ms.int32)
        ops.ScatterMax()(q, T([1]), T([[5, 0]], ms.int32))
        self.assertEqual((q.dtype, q.tolist()), (ms.int32, [[1, 2], [5, 4]]))

    def test_nd_scatters(self):
        p = P([[1.0, 2.0], [3.0, 4.0]], "p")
        # (0, 1) * 2 * 5, (1, 0) * 3
        self.assertIs(ops.scatter_nd_mul(p, T([[0, 1], [1, 0], [0, 1]]), T([2.0, 3.0, 5.0])), p)
        self.assertEqual(p.tolist(), [[1.0, 20.0], [9.0, 4.0]])
        ops.ScatterNdMax()(p, T([[1]]), T([[0.0, 6.0]]))
        ops.ScatterNdSub()(p, T([[0, 0]]), T([1.0]))
        self.assertEqual(p.tolist(), [[0.0, 20.0], [9.0, 6.0]])
        x = T([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        self.assertEqual(ops.tensor_scatter_min(x, T([[0], [0]]), T([[0.0, 9.0], [5.0, -1.0]])).tolist(),
                         [[0.0, -1.0], [3.0, 4.0], [5.0, 6.0]])
        self.assertEqual(ops.TensorScatterDiv()(x, T([[2, 1]]), T([2.0])).tolist()[2], [5.0, 3.0])
        self.assertEqual(x.tolist()[0], [1.0, 2.0])  # a copy

    def test_errors_leave_the_parameter(self):
        p = P([1.0, 2.0], "p")
        with self.assertRaisesRegex(ValueError, r"'updates' must be indices.shape \+ input_x.shape\[1:\]"):
            ops.ScatterMax()(p, T([0, 1]), T([1.0]))
        with self.assertRaisesRegex(TypeError, "dtype of 'indices' must be int32 or int64"):
            ops.ScatterUpdate()(p, T([0.0]), T([1.0]))
        with self.assertRaisesRegex(TypeError, "dtype of 'updates' must be the dtype of 'input_x'"):
            ops.scatter_max(p, T([0]), T([1]))
        self.assertEqual(p.tolist(), [1.0, 2.0])
        with self.assertRaisesRegex(TypeError, "'use_locking' must be a bool"):
            ops.ScatterMin(use_locking=1)

    def test_functional_scatter_captured(self):
        w = P([1.0, 5.0, 3.0], "w")

        @ms.jit
        def f(u):
            ops.scatter_max(w, T([0, 2]), u)  # captured: the write replayed after the graph
            return w * 2

        self.assertEqual(f(T([4.0, 1.0])).tolist(), [8.0, 10.0, 6.0])
        self.assertEqual(w.tolist(), [4.0, 5.0, 3.0])
        self.assertEqual(f(T([6.0, 7.0])).tolist(), [12.0, 10.0, 14.0])
        if CAPTURE_ON:
            st = ms.jit_stats(f)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, f)

    def test_primitive_scatter_breaks_as_assign(self):
        w = P([1.0, 2.0], "w")
        upd = ops.ScatterUpdate()

        @ms.jit
        def g(u):
            upd(w, T([1]), u)
            return w + 1

        self.assertEqual(g(T([5.0])).tolist(), [2.0, 6.0])
        self.assertEqual(w.tolist(), [1.0, 5.0])
        if CAPTURE_ON:
            self.assertTrue(any("writes a Parameter in place" in r for r in ms.jit_stats(g)["break_reasons"]))
        else:
            assert_ran_eagerly(self, g)


class Segments(unittest.TestCase):
    def test_sorted_segments(self):
        x, ids = T([1.0, 2.0, 3.0, 4.0]), T([0, 0, 2, 2])
        self.assertEqual(ops.SegmentSum()(x, ids).tolist(), [3.0, 0.0, 7.0])
        self.assertEqual(ops.SegmentMean()(x, ids).tolist(), [1.5, 0.0, 3.5])
        self.assertEqual(ops.SegmentMax()(x, ids).tolist(), [2.0, 0.0, 4.0])
        self.assertEqual(ops.SegmentMin()(x, ids).tolist(), [1.0, 0.0, 3.0])
        self.assertEqual(ops.SegmentProd()(x, ids).tolist(), [2.0, 1.0, 12.0])
        with self.assertRaisesRegex(ValueError, "must be sorted and non-negative"):
            ops.SegmentSum()(x, T([1, 0, 0, 0]))

    def test_unsorted_segments(self):
        x, ids = T([1.0, 2.0, 3.0, 4.0]), T([2, 0, 2, 5])  # 5 is dropped
        self.assertEqual(ops.UnsortedSegmentSum()(x, ids, 3).tolist(), [2.0, 0.0, 4.0])
        self.assertEqual(ops.unsorted_segment_max(x, ids, 3).tolist(), [2.0, -3.4028234663852886e38, 3.0])
        self.assertEqual(ops.UnsortedSegmentMin()(x, ids, 3).tolist(), [2.0, 3.4028234663852886e38, 1.0])
        p = ops.unsorted_segment_prod(T([[1, 2], [3, 4], [5, 6]], ms.int32), T([1, 1, 0]), 2)
        self.assertEqual((p.dtype, p.tolist()), (ms.int32, [[5, 6], [3, 8]]))
        with self.assertRaisesRegex(ValueError, "'num_segments' must be > 0"):
            ops.UnsortedSegmentMax()(x, ids, 0)

    def test_captured(self):
        def f(x, ids):
            return ops.unsorted_segment_max(x, ids, 3), ops.UnsortedSegmentProd()(x, ids, 3)
        one_graph(self, f, T([[1.0, 2.0], [3.0, 0.5], [5.0, 6.0]]), T([2, 0, 2]))


class SearchesAndHistograms(unittest.TestCase):
    def test_searches(self):
        seq = T([[0.0, 1, 3, 5, 7], [2, 4, 6, 8, 10]])
        v = T([[3.0, 6, 9], [3, 6, 9]])
        out = ops.SearchSorted()(seq, v)
        self.assertEqual((out.dtype, out.tolist()), (ms.int64, [[2, 4, 5], [1, 2, 4]]))
        self.assertEqual(ops.SearchSorted(ms.int32, True)(seq, v).tolist(), [[3, 4, 5], [1, 3, 4]])
        self.assertEqual(ops.searchsorted(T([1.0, 2.0, 2.0, 3.0]), T([2.0]), side="right").tolist(), [3])
        self.assertEqual(ops.searchsorted(T([1.0, 2.0, 2.0, 3.0]), T([2.0]), out_int32=True).dtype, ms.int32)
        self.assertEqual(ops.LowerBound()(T([[1, 2, 2, 4]]), T([[2, 3]])).tolist(), [[1, 3]])
        self.assertEqual(ops.UpperBound()(T([[1, 2, 2, 4]]), T([[2, 3]])).tolist(), [[3, 3]])
        b = ops.Bucketize([1.0, 5.0])(T([0.0, 1.0, 3.0, 5.0, 6.0]))
        self.assertEqual((b.dtype, b.tolist()), (ms.int32, [0, 1, 1, 2, 2]))
        with self.assertRaisesRegex(ValueError, "share every dim but the last"):
            ops.SearchSorted()(seq, T([[1.0]]))

    def test_counts(self):
        c = ops.bincount(T([0, 1, 1, 3]))
        self.assertEqual((c.dtype, c.tolist()), (ms.int64, [1, 2, 0, 1]))
        self.assertEqual(ops.bincount(T([1, 1]), T([0.5, 2.0]), 4).tolist(), [0.0, 2.5, 0.0, 0.0])
        self.assertEqual(ops.Bincount()(T([0, 2, 2, 7]), T(3), T([1.0, 2.0, 3.0, 4.0])).tolist(), [1.0, 0.0, 5.0])
        # bins [0, .75) [.75, 1.5) [1.5, 2.25) [2.25, 3]
        self.assertEqual(ops.histc(T([1.0, 2.0, 1.0, 4.0]), 4, 0.0, 3.0).tolist(), [0.0, 2.0, 1.0, 0.0])
        # min == max: the data's range [1, 3] in 2 bins; 3 falls in the last
        self.assertEqual(ops.Histogram(2)(T([1.0, 2.0, 3.0])).tolist(), [1.0, 2.0])
        h = ops.HistogramFixedWidth(5)(T([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]), T([0.0, 5.0]))
        self.assertEqual((h.dtype, h.tolist()), (ms.int32, [2, 1, 1, 0, 2]))

    def test_captured(self):
        def f(seq, v, x):
            return ops.SearchSorted()(seq, v), ops.Bucketize([0.5])(v), ops.histc(x, 3, 0.0, 3.0)
        one_graph(self, f, T([0.0, 1.0, 2.0]), T([0.5, 1.5]), T([0.5, 2.5, 2.9]))


class Rearrangements(unittest.TestCase):
    X = ms.arange(16).reshape(1, 1, 4, 4).astype(ms.float32)  # X[0, 0, h, w] = 4 h + w

    def test_space_and_depth(self):
        s = ops.SpaceToDepth(2)(self.X)
        # channel (i*2 + j) holds X[2h + i, 2w + j]
        self.assertEqual(s.tolist()[0][1], [[1.0, 3.0], [9.0, 11.0]])
        self.assertEqual(ops.DepthToSpace(2)(s).tolist(), self.X.tolist())
        with self.assertRaisesRegex(ValueError, "'block_size' must be >= 2"):
            ops.SpaceToDepth(1)

    def test_space_and_batch(self):
        b = ops.SpaceToBatchND(2, [[0, 0], [0, 0]])(self.X)
        self.assertEqual(b.shape, (4, 1, 2, 2))
        self.assertEqual(b.tolist()[1], [[[1.0, 3.0], [9.0, 11.0]]])  # block offset (0, 1)
        self.assertEqual(ops.BatchToSpaceND(2, [[0, 0], [0, 0]])(b).tolist(), self.X.tolist())
        padded = ops.space_to_batch_nd(ms.ones((1, 1, 2, 2)), (2, 2), [[1, 1], [1, 1]])
        self.assertEqual((padded.shape, padded.sum().tolist()), ((4, 1, 2, 2), 4.0))
        self.assertEqual(ops.batch_to_space_nd(padded, (2, 2), [[1, 1], [1, 1]]).tolist(), [[[[1.0, 1.0], [1.0, 1.0]]]])

    def test_pools_with_argmax(self):
        x = T([[[[1.0, 2, 5, 3], [4, 0, 1, 1], [0, 0, 0, 9], [7, 0, 0, 0]]]])
        v, i = ops.MaxPoolWithArgmax(2, 2)(x)
        self.assertEqual((v.tolist(), i.dtype, i.tolist()), ([[[[4.0, 5.0], [7.0, 9.0]]]], ms.int32,
                                                             [[[[4, 2], [12, 11]]]]))
        # windows of 2x3 to (1, 2): columns [0, 2) and [1, 3)
        v, i = ops.AdaptiveMaxPool2D((1, 2))(T([[[[1.0, 2, 5], [4, 0, 1]]]]))
        self.assertEqual((v.tolist(), i.tolist()), ([[[[4.0, 5.0]]]], [[[[3, 2]]]]))
        self.assertEqual(ops.adaptive_max_pool1d(T([[[1.0, 3, 2, 0]]]), 2).tolist(), [[[3.0, 2.0]]])
        self.assertEqual(ops.adaptive_avg_pool1d(T([[[1.0, 2, 3, 4]]]), 2).tolist(), [[[1.5, 3.5]]])
        self.assertEqual(ops.avg_pool1d(T([[[1.0, 2, 3, 4]]]), 2, 2).tolist(), [[[1.5, 3.5]]])
        # sqrt(1 + 4), sqrt(9 + 16)
        close(self, ops.lp_pool1d(T([[[1.0, 2, 3, 4]]]), 2, 2), [[[math.sqrt(5), 5.0]]])
        close(self, ops.lp_pool2d(T([[[[1.0, 2], [3, 4]]]]), 1, 2), [[[[10.0]]]])
        up = ops.max_unpool2d(T([[[[5.0, 9.0]]]]), T([[[[2, 7]]]]), 2)
        self.assertEqual(up.tolist(), [[[[0.0, 0.0, 5.0, 0.0], [0.0, 0.0, 0.0, 9.0]]]])

    def test_im2col_col2im(self):
        x = ms.arange(9).reshape(1, 1, 3, 3).astype(ms.float32)
        cols = ops.Im2Col(2)(x)
        self.assertEqual(cols.shape, (1, 1, 4, 4))
        self.assertEqual(cols.tolist()[0][0][0], [0.0, 1.0, 3.0, 4.0])  # the top-left of each window
        self.assertEqual(ops.unfold(x, 2).shape, (1, 4, 4))
        # each position summed once per window covering it
        self.assertEqual(ops.Col2Im(2)(ops.Im2Col(2)(ms.ones((1, 1, 3, 3))), T([3, 3])).tolist(),
                         [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]])
        self.assertEqual(ops.fold(ops.unfold(x, 3, padding=1), (3, 3), 3, padding=1).tolist()[0][0][1],
                         [6 * 3.0, 9 * 4.0, 6 * 5.0])  # the centre row: covered by 6, 9, 6 windows

    def test_captured(self):
        def f(x):
            v, i = ops.MaxPoolWithArgmax(2, 2)(x)
            return v, i, ops.SpaceToDepth(2)(x), ops.unfold(x, 2, stride=2), ops.LRN(1)(x)
        one_graph(self, f, self.X)


class NormPadResize(unittest.TestCase):
    def test_lrn(self):
        # channel 1 sees all three channels: 1 / (1 + 3) ** 0.5; the edges two: 1 / 3 ** 0.5
        close(self, ops.LRN(1, 1.0, 1.0, 0.5)(ms.ones((1, 3, 1, 1))), [[[[1 / math.sqrt(3)]], [[0.5]], [[1 / math.sqrt(3)]]]])
        close(self, ops.lrn(ms.ones((1, 1, 1, 1)) * 2.0, 0, 2.0, 0.5, 1.0), [[[[2.0 / 4.0]]]])
        with self.assertRaisesRegex(ValueError, "'norm_region' must be 'ACROSS_CHANNELS'"):
            ops.lrn(ms.ones((1, 1, 1, 1)), norm_region="WITHIN")

    def test_pads(self):
        self.assertEqual(ops.MirrorPad()(T([[1.0, 2, 3]]), T([[0, 0], [2, 1]])).tolist(), [[3.0, 2, 1, 2, 3, 2]])
        self.assertEqual(ops.MirrorPad("SYMMETRIC")(T([[1.0, 2, 3]]), T([[0, 0], [2, 1]])).tolist(),
                         [[2.0, 1, 1, 2, 3, 3]])
        with self.assertRaisesRegex(ValueError, "the paddings of dim 1 must be in"):
            ops.MirrorPad()(T([[1.0, 2]]), T([[0, 0], [2, 0]]))
        self.assertEqual(ops.PadV3()(T([[1.0, 2]]), (1, 1), T(5.0)).tolist(), [[5.0, 1.0, 2.0, 5.0]])
        self.assertEqual(ops.PadV3("edge")(T([[1.0, 2]]), (2, 0)).tolist(), [[1.0, 1.0, 1.0, 2.0]])

    def test_resizes(self):
        x = ms.arange(4).reshape(1, 1, 2, 2).astype(ms.float32)
        self.assertEqual(ops.ResizeNearestNeighborV2()(x, T([4, 4])).tolist()[0][0][1], [0.0, 0.0, 1.0, 1.0])
        self.assertEqual(ops.ResizeLinear1D()(T([[[1.0, 3.0]]]), T([3])).tolist(), [[[1.0, 2.0, 3.0]]])
        # half pixel: sources -0.25, 0.5, 1.25 -> 1, 2, 3 (clamped at the edges)
        self.assertEqual(ops.ResizeLinear1D("half_pixel")(T([[[1.0, 3.0]]]), T([3])).tolist(), [[[1.0, 2.0, 3.0]]])


class Windows(unittest.TestCase):
    def test_windows(self):
        close(self, ops.hann_window(4), [0.0, 0.5, 1.0, 0.5])
        close(self, ops.hann_window(3, False), [0.0, 1.0, 0.0])
        close(self, ops.hamming_window(4), [0.08, 0.54, 1.0, 0.54])
        close(self, ops.bartlett_window(4), [0.0, 0.5, 1.0, 0.5])
        close(self, ops.blackman_window(3, False), [0.0, 1.0, 0.0])
        i0 = lambda x: sum((x / 2) ** (2 * k) / math.factorial(k) ** 2 for k in range(40))  # noqa: E731
        close(self, ops.kaiser_window(3, False, 2.0), [1 / i0(2.0), 1.0, 1 / i0(2.0)])
        self.assertEqual(ops.hann_window(4, dtype=ms.float64).dtype, ms.float64)
        close(self, ops.HammingWindow()(T([4])), [0.08, 0.54, 1.0, 0.54])
        close(self, ops.BartlettWindow(False)(T(3)), [0.0, 1.0, 0.0])
        with self.assertRaisesRegex(ValueError, "'window_length' must be non-negative"):
            ops.hann_window(-1)

    def test_indices(self):
        t = ops.TrilIndices(3, 3)()
        self.assertEqual((t.dtype, t.tolist()), (ms.int32, [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]))
        self.assertEqual(ops.TriuIndices(2, 3, 1, ms.int64)().tolist(), [[0, 0, 1], [1, 2, 2]])
        # 5 in (2, 4) is (1, 1); 7 is (1, 3)
        self.assertEqual(ops.UnravelIndex()(T([5, 7]), T([2, 4])).tolist(), [[1, 1], [1, 3]])


class DataDependentAndRandom(unittest.TestCase):
    def test_unique_family(self):
        y, idx = ops.Unique()(T([1, 2, 5, 2]))
        self.assertEqual((y.tolist(), idx.tolist()), ([1, 2, 5], [0, 1, 2, 1]))
        y, idx = ops.UniqueWithPad()(T([1, 1, 2, 2, 3, 3, 4, 5]), 8)
        self.assertEqual((y.tolist(), idx.tolist()), ([1, 2, 3, 4, 5, 8, 8, 8], [0, 0, 1, 1, 2, 2, 3, 4]))
        out, idx, counts = ops.UniqueConsecutive(True, True)(T([1, 1, 2, 2, 3, 1]))
        self.assertEqual((out.tolist(), idx.tolist(), counts.tolist()), ([1, 2, 3, 1], [0, 0, 1, 1, 2, 3], [2, 2, 1, 1]))
        self.assertEqual(ops.UniqueConsecutive()(T([1, 1]))[1:], (None, None))
        self.assertEqual(ops.NonZero()(T([[0, 1], [2, 0]])).tolist(), [[0, 1], [1, 0]])
        self.assertEqual(ops.MaskedSelect()(T([1, 2, 3]), T([True, False, True])).tolist(), [1, 3])

    def test_random(self):
        r = ops.Randperm(6)(T([4]))
        self.assertEqual((r.dtype, sorted(r.tolist()[:4]), r.tolist()[4:]), (ms.int32, [0, 1, 2, 3], [-1, -1]))
        self.assertEqual(sorted(ops.randperm(5).tolist()), [0, 1, 2, 3, 4])
        t = ops.TruncatedNormal()(T([1000]))
        self.assertTrue(all(abs(v) <= 2.0 for v in t.tolist()))
        self.assertEqual(ops.TruncatedNormal(3)((4,)).tolist(), ops.TruncatedNormal(3)((4,)).tolist())
        u = ops.UniformInt(1)((200,), T(2), T(5))
        self.assertEqual((u.dtype, sorted(set(u.tolist()))), (ms.int32, [2, 3, 4]))
        with self.assertRaisesRegex(ValueError, "'minval' must be less than 'maxval'"):
            ops.UniformInt()((2,), T(3), T(3))
        c = ops.RandomCategorical()(T([[0.0, -100.0]]), 5, 3)
        self.assertEqual((c.dtype, c.tolist()), (ms.int64, [[0] * 5]))
        m = ops.Multinomial(seed=2)(T([[0.0, 1.0]]), 3)
        self.assertEqual((m.dtype, m.tolist()), (ms.int32, [[1, 1, 1]]))
        self.assertEqual(ops.StandardLaplace(1)((3,)).shape, (3,))
        out, mask = ops.Dropout2D(0.5)(ms.ones((4, 6, 2, 2)))
        self.assertEqual(mask.dtype, ms.bool_)
        for n in range(4):
            for c in range(6):  # a channel is kept (x 2) or zeroed whole
                plane = out.tolist()[n][c]
                self.assertIn(plane, ([[2.0, 2.0], [2.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]))
        with self.assertRaisesRegex(ValueError, "must be 5-D"):
            ops.Dropout3D()(ms.ones((1, 1, 1, 1)))


class OptimizerUpdates(unittest.TestCase):
    def test_momentum_and_descent(self):
        v, a = P([1.0], "v"), P([0.5], "a")
        # accum = 0.5 * 0.9 + 2 = 2.45; var = 1 - 0.1 * 2.45
        self.assertIs(ops.ApplyMomentum()(v, a, 0.1, T([2.0]), 0.9), v)
        close(self, (v, a), ([0.755], [2.45]))
        v = P([1.0], "v")
        ops.ApplyGradientDescent()(v, T(0.5), T([2.0]))
        self.assertEqual(v.tolist(), [0.0])
        v = P([1.0, -1.0], "v")
        # prox = v - 0.5 * 1 = (0.5, -1.5); shrink by 0.5 * 0.2 and divide by 1 + 0.5 * 1
        ops.ApplyProximalGradientDescent()(v, 0.5, 0.2, 1.0, T([1.0, 1.0]))
        close(self, v, [0.4 / 1.5, -1.4 / 1.5])

    def test_rmsprop_family(self):
        v, ms_, mom = P([1.0], "v"), P([0.0], "ms"), P([0.0], "mom")
        # ms = 0.1 * 4; mom = 0.01 * 2 / sqrt(0.4 + 1e-6)
        ops.ApplyRMSProp()(v, ms_, mom, 0.01, T([2.0]), 0.9, 0.0, 1e-6)
        step = 0.02 / math.sqrt(0.4 + 1e-6)
        close(self, (v, ms_, mom), ([1 - step], [0.4], [step]))
        v, mg, ms_, mom = P([1.0], "v"), P([0.0], "mg"), P([0.0], "ms"), P([0.0], "mom")
        ops.ApplyCenteredRMSProp()(v, mg, ms_, mom, T([2.0]), 0.01, 0.9, 0.0, 1e-6)
        step = 0.02 / math.sqrt(0.4 - 0.04 + 1e-6)
        close(self, (v, mg, ms_), ([1 - step], [0.2], [0.4]))

    def test_adagrad_family(self):
        v, acc = P([1.0], "v"), P([0.0], "acc")
        out = ops.ApplyAdagrad()(v, acc, 0.1, T([2.0]))  # accum 4, var 1 - 0.1 * 2 / 2
        self.assertIs(out[0], v)
        close(self, (v, acc), ([0.9], [4.0]))
        v, acc = P([1.0], "v"), P([0.0], "acc")
        ops.ApplyAdagradV2(1.0)(v, acc, 0.1, T([2.0]))  # 1 - 0.2 / (2 + 1)
        close(self, v, [1 - 0.2 / 3])
        v, acc = P([1.0], "v"), P([0.0], "acc")
        ops.ApplyProximalAdagrad()(v, acc, 0.1, 0.0, 0.0, T([2.0]))
        close(self, v, [0.9])

    def test_adam_family(self):
        v, m, vv = P([1.0], "v"), P([0.0], "m"), P([0.0], "vv")
        # m = 0.1, v = 0.001; lr_t = 0.01 * sqrt(1 - 0.999) / (1 - 0.9); step = lr_t * 0.1 / (sqrt(0.001) + 1e-8)
        ops.Adam()(v, m, vv, 0.9, 0.999, 0.01, 0.9, 0.999, 1e-8, T([1.0]))
        lr_t = 0.01 * math.sqrt(0.001) / 0.1
        close(self, (v, m, vv), ([1 - lr_t * 0.1 / (math.sqrt(0.001) + 1e-8)], [0.1], [0.001]))
        v, m, vv = P([1.0], "v"), P([0.0], "m"), P([0.0], "vv")
        ops.AdamWeightDecay()(v, m, vv, 0.01, 0.9, 0.999, 1e-8, 0.1, T([1.0]))
        close(self, v, [1 - 0.01 * (0.1 / (math.sqrt(0.001) + 1e-8) + 0.1)])
        v, m, u = P([1.0], "v"), P([0.0], "m"), P([0.0], "u")
        # m = 0.1; u = max(0, 1) = 1; var -= 0.01 / (1 - 0.9) * 0.1 / (1 + 1e-8)
        ops.ApplyAdaMax()(v, m, u, 0.9, 0.01, 0.9, 0.999, 1e-8, T([1.0]))
        close(self, (v, m, u), ([1 - 0.1 * 0.1 / (1 + 1e-8)], [0.1], [1.0]))
        v, acc, au = P([1.0], "v"), P([0.0], "acc"), P([0.0], "au")
        ops.ApplyAdadelta()(v, acc, au, 1.0, 0.9, 1e-6, T([1.0]))
        upd = math.sqrt(1e-6) / math.sqrt(0.1 + 1e-6)
        close(self, (v, acc, au), ([1 - upd], [0.1], [0.1 * upd * upd]))

    def test_sign_ftrl_sgd(self):
        v, m = P([1.0], "v"), P([0.0], "m")
        # m = 0.1 (same sign as g): update = (1 + 0.5) * 1
        ops.ApplyAddSign()(v, m, 0.1, 1.0, 0.5, 0.9, T([1.0]))
        close(self, v, [1 - 0.15])
        v, m = P([1.0], "v"), P([0.0], "m")
        ops.ApplyPowerSign()(v, m, 0.1, math.log(2), 1.0, 0.9, T([1.0]))  # exp(ln 2) = 2
        close(self, v, [0.8])
        v, acc, lin = P([1.0], "v"), P([0.1], "acc"), P([0.1], "lin")
        ops.ApplyFtrl()(v, acc, lin, T([0.5]), 0.01, 0.0, 0.0, -0.5)
        lin_w = 0.6 - (math.sqrt(0.35) - math.sqrt(0.1)) / 0.01
        close(self, (v, lin), ([-lin_w / (math.sqrt(0.35) / 0.01)], [lin_w]), places=4)
        p, acc, stat = P([1.0], "p"), P([0.0], "acc"), P([1.0], "stat")
        ops.SGD()(p, T([1.0]), T(0.1), acc, T(0.9), stat)  # first step: accum = g, stat -> 0
        ops.SGD()(p, T([1.0]), T(0.1), acc, T(0.9), stat)  # accum = 0.9 + 1
        close(self, (p, acc, stat), ([1 - 0.1 - 0.19], [1.9], [0.0]))

    def test_batch_norm(self):
        x = T([[[[1.0, 2.0]], [[3.0, 5.0]]]])
        mean, var = P([0.0, 0.0], "mean"), P([1.0, 1.0], "var")
        y, bm, bv, _, _ = ops.BatchNorm(True)(x, ms.ones((2,)), ms.zeros((2,)), mean, var)
        close(self, (bm, bv), ([1.5, 4.0], [0.25, 1.0]))
        # running = 0.9 * old + 0.1 * batch (unbiased variance 0.5 and 2)
        close(self, (mean, var), ([0.15, 0.4], [0.95, 1.1]))
        close(self, y, [[[[-0.5 / math.sqrt(0.25 + 1e-5), 0.5 / math.sqrt(0.25 + 1e-5)]],
                         [[-1 / math.sqrt(1 + 1e-5), 1 / math.sqrt(1 + 1e-5)]]]])
        y = ops.BatchNorm()(x, ms.ones((2,)), ms.zeros((2,)), T([1.0, 3.0]), T([4.0, 1.0]))[0]
        close(self, y, [[[[0.0, 1 / math.sqrt(4 + 1e-5)]], [[0.0, 2 / math.sqrt(1 + 1e-5)]]]])

    def test_conv2d_transpose_is_conv_input_gradient(self):
        # each input position is covered by as many 2x2 windows as overlap it
        out = ops.Conv2DTranspose(1, 2)(ms.ones((1, 1, 2, 2)), ms.ones((1, 1, 2, 2)), (1, 1, 3, 3))
        self.assertEqual(out.tolist(), [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]])
        same = ops.Conv2DTranspose(1, 3, pad_mode="same")(ms.ones((1, 1, 2, 2)), ms.ones((1, 1, 3, 3)), (1, 1, 2, 2))
        self.assertEqual(same.tolist(), [[[[4.0, 4.0], [4.0, 4.0]]]])

    def test_vjp(self):
        out, fn = ops.vjp(lambda a, b: a * b, T([1.0, 2.0]), T([3.0, 4.0]))
        self.assertEqual(out.tolist(), [3.0, 8.0])
        ga, gb = fn(T([1.0, 10.0]))
        self.assertEqual((ga.tolist(), gb.tolist()), ([3.0, 40.0], [1.0, 20.0]))


if __name__ == "__main__":
    unittest.main()
