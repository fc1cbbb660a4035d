"""mindspore.ops functional names of issue 42 (pijit/ops/functional2.py): flip, roll, tril/triu,
swapaxes, unstack, meshgrid, tensor_split, the products (bmm, mm, batch_dot, tensor_dot, addmm...),
elementwise math (isnan, isclose, fmod, logaddexp, atanh, ...), norms and distances, scans
(cummax, cumprod), activations, losses, segment and scatter ops, random draws, data-dependent ops
(unique, nonzero, masked_select), queries, and the names mindspore.common and mindspore gained.
Values are worked out by hand (comments give the arithmetic); errors are MindSpore's classes;
each function that does not depend on data is captured by @jit into one graph, equal to eager."""
import math
import unittest

import pijit as ms
from pijit import ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly

T = ms.Tensor
INF, NAN = float("inf"), float("nan")
X = T([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
V = T([1.0, 2.0, 3.0])
M3 = ms.arange(24, dtype=ms.float32).reshape(2, 3, 4)  # M3[i, j, k] = 12 i + 4 j + k


def values(out):
    if isinstance(out, (tuple, list)):
        return tuple(values(o) for o in out)
    if isinstance(out, ms.Tensor):
        return (out.dtype, out.shape, out.tolist())
    return out


class Close(unittest.TestCase):
    def close(self, got, want, tol=1e-6):
        got = got.tolist() if isinstance(got, ms.Tensor) else got
        if isinstance(want, (list, tuple)):
            self.assertEqual(len(got), len(want), (got, want))
            for g, w in zip(got, want):
                self.close(g, w, tol)
        elif isinstance(want, float) and math.isnan(want):
            self.assertTrue(math.isnan(got), got)
        else:
            self.assertAlmostEqual(got, want, delta=tol * max(1.0, abs(want)) if abs(want) != INF else 0)


class ShapesAndJoins(Close):
    def test_flips_and_rolls(self):
        self.assertEqual(ops.flip(X, (0, 1)).tolist(), [[-6.0, 5.0, 4.0], [3.0, -2.0, 1.0]])
        self.assertEqual(ops.fliplr(X).tolist(), [[3.0, -2.0, 1.0], [-6.0, 5.0, 4.0]])
        self.assertEqual(ops.flipud(X).tolist(), [[4.0, 5.0, -6.0], [1.0, -2.0, 3.0]])
        self.assertEqual(ops.reverse(V, 0).tolist(), [3.0, 2.0, 1.0])
        # dims None rolls the flattened [1, -2, 3, 4, 5, -6] by one
        self.assertEqual(ops.roll(X, 1).tolist(), [[-6.0, 1.0, -2.0], [3.0, 4.0, 5.0]])
        self.assertEqual(ops.roll(X, (1, -1), (0, 1)).tolist(), [[5.0, -6.0, 4.0], [-2.0, 3.0, 1.0]])
        # counter-clockwise: the last column becomes the first row
        self.assertEqual(ops.rot90(X).tolist(), [[3.0, -6.0], [-2.0, 5.0], [1.0, 4.0]])
        self.assertEqual(ops.rot90(X, 3).tolist(), [[4.0, 1.0], [5.0, -2.0], [-6.0, 3.0]])
        self.assertEqual(ops.rot90(X, 2).tolist(), ops.flip(X, (0, 1)).tolist())

    def test_triangles_transposes_moves(self):
        self.assertEqual(ops.tril(X).tolist(), [[1.0, 0.0, 0.0], [4.0, 5.0, 0.0]])
        self.assertEqual(ops.triu(X, 1).tolist(), [[0.0, -2.0, 3.0], [0.0, 0.0, -6.0]])
        self.assertEqual(ops.swapaxes(M3, 0, 2).shape, (4, 3, 2))
        self.assertEqual(ops.swapaxes(M3, 0, 2)[3, 2, 1].item(), 12 + 8 + 3)
        self.assertEqual(ops.swapdims(M3, 1, 2).shape, (2, 4, 3))
        self.assertEqual(ops.t(X).tolist(), [[1.0, 4.0], [-2.0, 5.0], [3.0, -6.0]])
        self.assertEqual(ops.t(V).tolist(), V.tolist())
        self.assertEqual(ops.movedim(M3, 0, -1).shape, (3, 4, 2))
        self.assertEqual(ops.moveaxis(M3, (0, 1), (2, 0)).shape, (3, 4, 2))
        self.assertEqual(ops.movedim(M3, (0, 1), (2, 0))[2, 3, 1].item(), 12 + 8 + 3)

    def test_unstack_meshgrid_repeats(self):
        self.assertEqual(values(ops.unstack(X, 1)), values((T([1.0, 4.0]), T([-2.0, 5.0]), T([3.0, -6.0]))))
        self.assertEqual([u.tolist() for u in ops.unbind(X)], X.tolist())
        gx, gy = ops.meshgrid(V, T([4.0, 5.0]))  # 'xy': shape (len(y), len(x))
        self.assertEqual((gx.tolist(), gy.tolist()), ([[1.0, 2.0, 3.0]] * 2, [[4.0] * 3, [5.0] * 3]))
        gi, _ = ops.meshgrid((V, T([4.0, 5.0])), indexing="ij")
        self.assertEqual(gi.tolist(), [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
        self.assertEqual(ops.repeat_elements(X, 2, 1).tolist()[0], [1.0, 1.0, -2.0, -2.0, 3.0, 3.0])
        self.assertEqual(ops.repeat_interleave(V, 2).tolist(), [1.0, 1.0, 2.0, 2.0, 3.0, 3.0])
        self.assertEqual(ops.repeat_interleave(X, (1, 2), 0).tolist(),
                         [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [4.0, 5.0, -6.0]])

    def test_narrow_and_splits(self):
        self.assertEqual(ops.narrow(X, 1, 1, 2).tolist(), [[-2.0, 3.0], [5.0, -6.0]])
        r = ms.arange(7)
        # 7 = 3 + 2 + 2: the first 7 % 3 pieces are one longer
        self.assertEqual([p.tolist() for p in ops.tensor_split(r, 3)], [[0, 1, 2], [3, 4], [5, 6]])
        self.assertEqual([p.tolist() for p in ops.tensor_split(r, [2, 5])], [[0, 1], [2, 3, 4], [5, 6]])
        self.assertEqual([p.tolist() for p in ops.tensor_split(r, [5, 2])], [[0, 1, 2, 3, 4], [], [2, 3, 4, 5, 6]])  # as numpy
        self.assertEqual([p.tolist() for p in ops.hsplit(X, 3)], [[[1.0], [4.0]], [[-2.0], [5.0]], [[3.0], [-6.0]]])
        self.assertEqual([p.tolist() for p in ops.vsplit(X, 2)], [[X.tolist()[0]], [X.tolist()[1]]])
        self.assertEqual([p.shape for p in ops.dsplit(M3, [1])], [(2, 3, 1), (2, 3, 3)])
        # chunk: pieces of ceil(5 / 2) = 3
        self.assertEqual([p.tolist() for p in ops.chunk(ms.arange(5), 2)], [[0, 1, 2], [3, 4]])
        self.assertEqual(len(ops.chunk(ms.arange(6), 4)), 3)  # ceil(6 / 4) = 2: three pieces

    def test_stacks_expand_ravel(self):
        self.assertEqual(ops.hstack((V, V)).tolist(), [1.0, 2.0, 3.0] * 2)
        self.assertEqual(ops.hstack((X, X)).shape, (2, 6))
        self.assertEqual(ops.vstack((V, V)).tolist(), [[1.0, 2.0, 3.0]] * 2)
        self.assertEqual(ops.column_stack((V, V)).tolist(), [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
        self.assertEqual(ops.expand(T([[1.0], [2.0]]), (2, 3)).tolist(), [[1.0] * 3, [2.0] * 3])
        self.assertEqual(ops.expand(T([[1.0], [2.0]]), T([-1, 2])).tolist(), [[1.0] * 2, [2.0] * 2])
        self.assertEqual(ops.ravel(X).tolist(), [1.0, -2.0, 3.0, 4.0, 5.0, -6.0])

    def test_diagonals(self):
        # offset 1 of each M3[i]: (0, 1), (1, 2), (2, 3) -> 12 i + 1, 12 i + 6, 12 i + 11
        self.assertEqual(ops.diagonal(M3, 1, 1, 2).tolist(), [[1.0, 6.0, 11.0], [13.0, 18.0, 23.0]])
        self.assertEqual(ops.diagonal(X).tolist(), [1.0, 5.0])
        self.assertEqual(ops.diagonal(X, -1).tolist(), [4.0])
        self.assertEqual(ops.diag(V).tolist(), [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
        self.assertEqual(ops.diag(T([[1, 2]])).shape, (1, 2, 1, 2))
        self.assertEqual(ops.diagflat(T([1.0, 2.0]), 1).tolist(), [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
        self.assertEqual(ops.diagflat(T([1.0, 2.0]), -1).tolist(), [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
        self.assertEqual(ops.trace(X).item(), 6.0)

    def test_slice_mask_gather_fill(self):
        self.assertEqual(ops.slice(X, (0, 1), (2, 2)).tolist(), [[-2.0, 3.0], [5.0, -6.0]])
        self.assertEqual(ops.sequence_mask(T([1, 3]), 4).tolist(),
                         [[True, False, False, False], [True, True, True, False]])
        self.assertEqual(ops.sequence_mask(T([1, 3])).shape, (2, 3))  # maxlen: the longest
        self.assertEqual(ops.gather_nd(X, T([[0, 1], [1, 2]])).tolist(), [-2.0, -6.0])
        self.assertEqual(ops.gather_nd(X, T([[1]])).tolist(), [[4.0, 5.0, -6.0]])
        self.assertEqual(ops.masked_fill(X, X > 0, 0.0).tolist(), [[0.0, -2.0, 0.0], [0.0, 0.0, -6.0]])
        self.assertEqual(ops.index_fill(X, 1, T([0, 2]), -1.0).tolist(), [[-1.0, -2.0, -1.0], [-1.0, 5.0, -1.0]])

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "For 'flip', the input 'input' must be a Tensor"):
            ops.flip([1, 2], 0)
        with self.assertRaisesRegex(ValueError, "For 'flip', the 'dims' names a dim twice"):
            ops.flip(X, (0, -2))
        with self.assertRaisesRegex(ValueError, r"'dims' must be in range \[-2, 2\)"):
            ops.flip(X, 2)
        with self.assertRaisesRegex(ValueError, "rank of 'input' must be <= 2"):
            ops.t(M3)
        with self.assertRaisesRegex(ValueError, "'source' and 'destination' must have the same length"):
            ops.movedim(M3, (0, 1), 2)
        with self.assertRaisesRegex(ValueError, r"start \(2\) \+ length \(2\)"):
            ops.narrow(X, 1, 2, 2)
        with self.assertRaisesRegex(ValueError, "'chunks' must be > 0"):
            ops.chunk(X, 0)
        with self.assertRaisesRegex(TypeError, "'tensors' must be a tuple or list"):
            ops.hstack(X)
        with self.assertRaisesRegex(ValueError, "'dim1' and 'dim2' must be different"):
            ops.diagonal(X, 0, 1, -1)
        with self.assertRaisesRegex(ValueError, "'maxlen' must be > 0"):
            ops.sequence_mask(T([1]), 0)
        with self.assertRaisesRegex(TypeError, "'mask' must be a bool Tensor"):
            ops.masked_fill(X, T([1.0]), 0.0)
        with self.assertRaisesRegex(TypeError, "dtype of 'indices' must be an integer type"):
            ops.gather_nd(X, T([[0.0]]))


class Products(Close):
    def test_matrix_products(self):
        self.assertEqual(ops.mm(X, ops.t(X)).tolist(), [[14.0, -24.0], [-24.0, 77.0]])
        self.assertEqual(ops.bmm(M3, ops.swapaxes(M3, 1, 2)).shape, (2, 3, 3))
        self.assertEqual(ops.bmm(M3, ops.swapaxes(M3, 1, 2))[0, 0, 0].item(), 0 + 1 + 4 + 9)
        self.assertEqual(ops.mv(X, V).tolist(), [6.0, -4.0])  # 1 - 4 + 9, 4 + 10 - 18
        self.assertEqual(ops.outer(V, T([1.0, 2.0])).tolist(), [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
        self.assertIs(ops.ger, ops.outer)
        self.assertEqual(ops.inner(X, V).tolist(), [6.0, -4.0])
        self.assertEqual(ops.inner(X, X).tolist(), [[14.0, -24.0], [-24.0, 77.0]])
        self.assertEqual(ops.dot(X, ops.t(X)).tolist(), [[14.0, -24.0], [-24.0, 77.0]])
        self.assertEqual(ops.dot(M3, ms.ones((4, 2))).shape, (2, 3, 2))

    def test_tensor_and_batch_dots(self):
        # sum over dims 1, 2 of M3[i] * M3[j]: i = j = 0 is sum(k^2, k < 12) = 506
        self.assertEqual(ops.tensor_dot(M3, M3, ((1, 2), (1, 2))).tolist(), [[506.0, 1298.0], [1298.0, 3818.0]])
        self.assertEqual(ops.tensor_dot(M3, ms.ones((4, 5)), 1).shape, (2, 3, 5))
        self.assertEqual(ops.tensor_dot(V, V, 0).shape, (3, 3))
        # 2-D inputs: the row dot products, as (batch, 1)
        self.assertEqual(ops.batch_dot(X, X).tolist(), [[14.0], [77.0]])
        self.assertEqual(ops.batch_dot(M3, ops.swapaxes(M3, 1, 2)).shape, (2, 3, 3))
        self.assertEqual(ops.batch_dot(M3, M3, (2, 2)).shape, (2, 3, 3))
        self.assertEqual(ops.batch_dot(M3, ms.ones((2, 3, 5)), (1, 1)).shape, (2, 4, 5))

    def test_scaled_sums(self):
        # 2 * 1 + 3 * (2 * 3)
        self.assertEqual(ops.addmm(T([[1.0]]), T([[2.0]]), T([[3.0]]), beta=2, alpha=3).tolist(), [[20.0]])
        # beta 0 ignores input, its NaN included
        self.assertEqual(ops.addmm(T([[NAN]]), T([[2.0]]), T([[3.0]]), beta=0).tolist(), [[6.0]])
        self.assertEqual(ops.baddbmm(ms.ones((2, 3, 3)), M3, ops.swapaxes(M3, 1, 2), 0.5, 1)[0, 0, 0].item(), 14.5)
        self.assertEqual(ops.addbmm(T([[0.0]]), T([[[1.0]], [[2.0]]]), T([[[3.0]], [[4.0]]])).tolist(), [[11.0]])
        self.assertEqual(ops.addmv(T([1.0, 1.0]), X, V).tolist(), [7.0, -3.0])
        self.assertEqual(ops.addr(T([[0.0, 0.0]]), T([1.0]), T([1.0, 2.0]), alpha=2).tolist(), [[2.0, 4.0]])
        self.assertEqual(ops.addcmul(V, V, V, T(2.0)).tolist(), [3.0, 10.0, 21.0])
        self.assertEqual(ops.addcdiv(V, V, V, T(2.0)).tolist(), [3.0, 4.0, 5.0])
        self.assertEqual(ops.kron(T([[1, 2], [3, 4]]), T([[0, 1], [1, 0]])).tolist(),
                         [[0, 1, 0, 2], [1, 0, 2, 0], [0, 3, 0, 4], [3, 0, 4, 0]])
        self.assertEqual(ops.cross(T([1.0, 0.0, 0.0]), T([0.0, 1.0, 0.0])).tolist(), [0.0, 0.0, 1.0])
        self.assertEqual(ops.cross(T([[1, 2, 3]]), T([[4, 5, 6]])).tolist(), [[-3, 6, -3]])

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "For 'mm', both inputs must be 2-D"):
            ops.mm(V, X)
        with self.assertRaisesRegex(ValueError, "cannot be multiplied"):
            ops.mm(X, X)
        with self.assertRaisesRegex(ValueError, "For 'bmm', both inputs must have rank >= 3"):
            ops.bmm(X, X)
        with self.assertRaisesRegex(ValueError, "For 'outer', both inputs must be 1-D"):
            ops.outer(X, V)
        with self.assertRaisesRegex(ValueError, "cannot name the batch dim 0"):
            ops.batch_dot(M3, M3, (0, 1))
        with self.assertRaisesRegex(ValueError, "batch sizes 2 and 3 must match"):
            ops.batch_dot(X, ms.ones((3, 3)))
        with self.assertRaisesRegex(TypeError, "'axes' must be an int or a pair"):
            ops.tensor_dot(X, X, "x")
        with self.assertRaisesRegex(ValueError, "For 'cross', dim 0 must have size 3"):
            ops.cross(T([1.0, 2.0]), T([1.0, 2.0]), 0)
        with self.assertRaisesRegex(TypeError, "'beta' must be a number"):
            ops.addmm(T([[1.0]]), T([[1.0]]), T([[1.0]]), beta="1")


class Elementwise(Close):
    def test_classification(self):
        s = T([1.0, NAN, INF, -INF])
        self.assertEqual(ops.isnan(s).tolist(), [False, True, False, False])
        self.assertEqual(ops.isinf(s).tolist(), [False, False, True, True])
        self.assertEqual(ops.isfinite(s).tolist(), [True, False, False, False])
        self.assertEqual(ops.isposinf(s).tolist(), [False, False, True, False])
        self.assertEqual(ops.isneginf(s).tolist(), [False, False, False, True])
        self.assertEqual(ops.isreal(s).tolist(), [True] * 4)
        self.assertEqual(ops.isfinite(T([1, 2])).tolist(), [True, True])
        self.assertEqual(ops.signbit(T([-0.0, 0.0, -1.0, 2.0])).tolist(), [True, False, True, False])
        a, b = T([1.0, 2.0, INF, NAN, -INF]), T([1.0 + 1e-6, 2.1, INF, NAN, INF])
        self.assertEqual(ops.isclose(a, b).tolist(), [True, False, True, False, False])
        self.assertEqual(ops.isclose(a, b, equal_nan=True).tolist(), [True, False, True, True, False])
        self.assertEqual(ops.isclose(T([100]), T([101]), rtol=0.01).tolist(), [True])

    def test_math(self):
        self.close(ops.exp2(T([1.0, 3.0])), [2.0, 8.0])
        self.close(ops.log2(T([8.0])), [3.0])
        self.close(ops.log10(T([100, 1000])), [2.0, 3.0])
        self.close(ops.sinh(T([1.0])), [math.sinh(1.0)])
        self.close(ops.cosh(T([1.0])), [math.cosh(1.0)])
        self.close(ops.asinh(T([-1.0, 0.0, 1.0])), [math.asinh(-1.0), 0.0, math.asinh(1.0)])
        self.close(ops.arccosh(T([1.0, 2.0])), [0.0, math.acosh(2.0)])
        self.close(ops.atanh(T([0.5, -0.25])), [math.atanh(0.5), math.atanh(-0.25)])
        self.close(ops.erfc(T([0.0, 1.0])), [1.0, math.erfc(1.0)])
        self.close(ops.sinc(T([0.0, 0.5])), [1.0, 2 / math.pi])
        self.close(ops.deg2rad(T([180.0])), [math.pi])
        self.close(ops.rad2deg(T([math.pi])), [180.0], 1e-5)
        self.assertEqual(ops.trunc(T([-1.5, 1.5])).tolist(), [-1.0, 1.0])
        self.assertEqual(ops.frac(T([-1.5, 1.25])).tolist(), [-0.5, 0.25])
        self.assertEqual(ops.copysign(T([1.0, -2.0, 3.0]), T([-0.0, 3.0, -1.0])).tolist(), [-1.0, 2.0, -3.0])
        self.assertEqual(ops.fmod(T([-3.0, 3.0, 5.5]), 2.0).tolist(), [-1.0, 1.0, 1.5])
        self.assertEqual(values(ops.fmod(T([-7, 7]), T([2, -2]))), (ms.int64, (2,), [-1, 1]))
        self.assertEqual(ops.floor_mod(T([-3.0, 3.0]), 2.0).tolist(), [1.0, 1.0])
        self.assertEqual(ops.truncate_div(T([-7, 7]), 2).tolist(), [-3, 3])
        self.assertEqual(ops.xlogy(T([0.0, 2.0]), T([0.0, 1.0])).tolist(), [0.0, 0.0])
        self.assertEqual(ops.xdivy(T([0.0, 2.0]), T([0.0, 4.0])).tolist(), [0.0, 0.5])
        self.assertEqual(ops.hypot(T([3.0, 3e30]), T([4.0, 4e30])).tolist()[0], 5.0)
        self.close(ops.hypot(T([3e30]), T([4e30])), [5e30], 1e-6)  # no overflow in float32
        self.close(ops.lerp(T([0.0]), T([10.0]), 0.3), [3.0])
        self.close(ops.logaddexp(T([0.0, -INF, 1000.0]), T([0.0, -INF, 1000.0])), [math.log(2), -INF, 1000.0 + math.log(2)], 1e-6)
        self.close(ops.logaddexp2(T([1.0, 3.0]), T([1.0, 1.0])), [2.0, 3.0 + math.log2(1.25)])
        self.assertEqual(values(ops.float_power(T([2]), 3)), (ms.float64, (1,), [8.0]))
        self.assertEqual(ops.heaviside(T([-1.0, 0.0, 2.0, INF]), T([0.5])).tolist(), [0.0, 0.5, 1.0, 1.0])
        self.assertEqual(ops.ldexp(T([1.0, 3.0]), T([3, -1])).tolist(), [8.0, 1.5])
        self.close(ops.logit(T([0.5, 0.75])), [0.0, math.log(3.0)])
        self.close(ops.logit(T([0.0]), eps=0.25), [math.log(1 / 3)])
        self.assertEqual(ops.nan_to_num(T([NAN, INF, -INF, 1.0]), 0.0, 9.0).tolist(), [0.0, 9.0, -3.4028234663852886e38, 1.0])
        self.assertEqual(ops.fmax(T([NAN, 1.0, NAN]), T([2.0, NAN, NAN])).tolist()[:2], [2.0, 1.0])
        self.assertEqual(ops.fmin(T([NAN, 1.0]), T([2.0, 0.5])).tolist(), [2.0, 0.5])
        self.assertEqual(ops.bias_add(ms.zeros((1, 2, 1, 1)), T([1.0, 2.0])).reshape(2).tolist(), [1.0, 2.0])
        self.assertEqual(ops.bias_add(ms.zeros((1, 1, 2)), T([1.0, 2.0]), "NHWC").tolist(), [[[1.0, 2.0]]])
        self.assertEqual(ops.absolute(T([-2])).tolist(), [2])
        self.assertEqual(ops.positive(T([-2.0])).tolist(), [-2.0])
        self.assertEqual(ops.sgn(T([-2.0, 0.0, 3.0])).tolist(), [-1.0, 0.0, 1.0])

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "For 'isnan', the input 'input' must be a Tensor"):
            ops.isnan(1.0)
        with self.assertRaisesRegex(ValueError, "'rtol' and 'atol' must be >= 0"):
            ops.isclose(V, V, rtol=-1.0)
        with self.assertRaisesRegex(TypeError, "'equal_nan' must be a bool"):
            ops.isclose(V, V, equal_nan=1)
        with self.assertRaisesRegex(TypeError, "For 'positive'.*bool"):
            ops.positive(T([True]))
        with self.assertRaisesRegex(ValueError, "'data_format' must be"):
            ops.bias_add(X, V, "NCW")
        with self.assertRaisesRegex(ValueError, "'bias' must have 3 elements"):
            ops.bias_add(ms.zeros((1, 3, 2)), T([1.0, 2.0]))


class Reductions(Close):
    def test_counts_extremes_moments(self):
        c = T([[0, 1, 0], [1, 1, 0]])
        self.assertEqual(values(ops.count_nonzero(c)), (ms.int32, (), 3))
        self.assertEqual(ops.count_nonzero(c, [0]).tolist(), [1, 2, 0])
        self.assertEqual(values(ops.count_nonzero(c, 1, True, ms.int64)), (ms.int64, (2, 1), [[1], [2]]))
        self.assertEqual(values(ops.aminmax(X, axis=1)), values((T([-2.0, -6.0]), T([3.0, 5.0]))))
        self.assertEqual(values(ops.aminmax(X, axis=None)), values((T(-6.0), T(5.0))))
        s, m = ops.std_mean(V)
        self.close(s, math.sqrt(2 / 3))
        self.assertEqual(m.item(), 2.0)
        self.assertEqual([t.item() for t in ops.var_mean(V, ddof=1)], [1.0, 2.0])
        # the lower median of [1, 2, 3, 4] is 2, at index 2 of the input
        self.assertEqual(values(ops.median(T([[3.0, 1.0, 2.0, 4.0]]))), values((T([2.0]), T([2]))))
        self.assertEqual(values(ops.median(T([[3.0, 1.0], [2.0, 4.0]]), 0, True)), values((T([[2.0, 1.0]]), T([[1, 0]]))))

    def test_scans(self):
        self.assertEqual(ops.cumprod(T([1.0, 2.0, 3.0, 4.0, 5.0]), 0).tolist(), [1.0, 2.0, 6.0, 24.0, 120.0])
        self.assertEqual(values(ops.cumprod(T([[1, 2], [3, 4]]), 1)), (ms.int64, (2, 2), [[1, 2], [3, 12]]))
        self.assertEqual(ops.cumprod(T([1, 2]), 0, ms.float32).dtype, ms.float32)
        # ties take the later index
        self.assertEqual(values(ops.cummax(T([1.0, 3.0, 2.0, 3.0, 5.0]), 0)),
                         values((T([1.0, 3.0, 3.0, 3.0, 5.0]), T([0, 1, 1, 3, 4]))))
        self.assertEqual(values(ops.cummin(T([[3, 1], [2, 5]]), 0)), values((T([[3, 1], [2, 1]]), T([[0, 0], [1, 0]]))))
        self.assertEqual(ops.argsort(T([3.0, 1.0, 2.0])).tolist(), [1, 2, 0])
        self.assertEqual(ops.argsort(T([3.0, 1.0, 2.0]), descending=True).tolist(), [0, 2, 1])
        self.assertEqual(ops.msort(T([[2.0, 0.0], [1.0, 5.0]])).tolist(), [[1.0, 0.0], [2.0, 5.0]])
        self.assertEqual(ops.diff(T([1, 4, 9, 16]), 2).tolist(), [2, 2])
        self.assertEqual(ops.diff(T([1, 4]), prepend=T([0]), append=T([9])).tolist(), [1, 3, 5])
        self.assertEqual(ops.trapz(T([1.0, 2.0, 3.0])).item(), 4.0)
        self.assertEqual(ops.trapz(T([1.0, 2.0, 3.0]), T([0.0, 1.0, 3.0])).item(), 6.5)  # 1.5 + 2 * 2.5
        self.assertEqual(ops.trapz(T([1.0, 2.0, 3.0]), dx=2.0).item(), 8.0)

    def test_cov(self):
        self.assertEqual(ops.cov(T([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist(), [[1.0, -1.0], [-1.0, 1.0]])
        self.assertEqual(ops.cov(T([0.0, 1.0, 2.0]), correction=0).shape, ())
        # frequency weights 1, 2, 1: mean 1, sum w (x - 1)^2 = 2, over 4 - 1
        self.close(ops.cov(T([0.0, 1.0, 2.0]), fweights=T([1, 2, 1])), 2 / 3)

    def test_norms(self):
        a = T([3.0, 4.0, 12.0])
        self.assertEqual([ops.norm(a).item(), ops.norm(a, 1).item(), ops.norm(a, 0).item()], [13.0, 19.0, 3.0])
        self.assertEqual([ops.norm(a, INF).item(), ops.norm(a, -INF).item()], [12.0, 3.0])
        self.close(ops.norm(a, 3), (27 + 64 + 1728) ** (1 / 3), 1e-6)
        # matrices: 1 is the largest column sum of |x| (3 + 6), inf the largest row sum (4 + 5 + 6)
        self.assertEqual([ops.norm(X, 1).item(), ops.norm(X, -1).item()], [9.0, 5.0])
        self.assertEqual([ops.norm(X, INF).item(), ops.norm(X, -INF).item()], [15.0, 6.0])
        self.close(ops.norm(X, "fro"), math.sqrt(91))
        self.close(ops.norm(X, dim=1), [math.sqrt(14), math.sqrt(77)])
        self.assertEqual(ops.norm(X, 1, (0, 1), keepdim=True).shape, (1, 1))
        self.close(ops.dist(T([0.0, 0.0]), T([3.0, 4.0])), 5.0)
        self.close(ops.dist(T([0.0, 0.0]), T([3.0, 4.0]), 1), 7.0)
        self.close(ops.cdist(T([[0.0, 0.0]]), T([[3.0, 4.0], [1.0, 0.0]])), [[5.0, 1.0]])
        self.close(ops.pdist(T([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])), [5.0, 1.0, math.sqrt(18)])
        self.close(ops.cosine_similarity(T([[1.0, 0.0]]), T([[1.0, 1.0]])), [math.sqrt(0.5)])
        # rows with a 2-norm over 1 scaled down to 1 (less 1e-7), others unchanged
        self.close(ops.renorm(T([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0), [[0.6, 0.8], [0.3, 0.4]])

    def test_clipping(self):
        self.close(ops.clip_by_norm(T([3.0, 4.0]), 1.0), [3 / (5 + 1e-6), 4 / (5 + 1e-6)])
        self.assertEqual(ops.clip_by_norm(T([0.3, 0.4]), 1.0).tolist(), T([0.3, 0.4]).tolist())
        a, b = ops.clip_by_norm((T([3.0]), T([4.0])), 2.5)
        self.close([a.item(), b.item()], [1.5, 2.0], 1e-6)
        a, b = ops.clip_by_global_norm((T([3.0]), T([4.0])), 1.0)
        self.close([a.item(), b.item()], [0.6, 0.8])
        a, b = ops.clip_by_global_norm((T([3.0]), T([4.0])), 10.0)
        self.assertEqual([a.item(), b.item()], [3.0, 4.0])

    def test_errors(self):
        # the singular-value norms (ops.svd): of [[3, 0], [0, -4]] the values are 4 and 3
        A = T([[3.0, 0.0], [0.0, -4.0]])
        self.assertEqual([ops.norm(A, 2).item(), ops.norm(A, -2).item(), ops.norm(A, "nuc").item()], [4.0, 3.0, 7.0])
        self.close([ops.norm(T([[[1.0, 2.0], [3.0, 4.0]]]), "nuc", dim=(1, 2), keepdim=True).item()],
                   [5.830951894845301], 1e-5)  # s1 + s2 of [[1, 2], [3, 4]] = sqrt(30 + 2 * 2)
        with self.assertRaisesRegex(TypeError, "vector norm takes a number 'ord'"):
            ops.norm(V, "fro", 0)
        with self.assertRaisesRegex(ValueError, "must be 1-D or 2-D when 'dim' is None"):
            ops.norm(M3, 1)
        with self.assertRaisesRegex(ValueError, "'clip_norm' must be > 0"):
            ops.clip_by_global_norm((V,), 0.0)
        with self.assertRaisesRegex(ValueError, "'use_norm' only supports None"):
            ops.clip_by_global_norm((V,), 1.0, V)
        with self.assertRaisesRegex(TypeError, "For 'cummax'.*bool"):
            ops.cummax(T([True]), 0)
        with self.assertRaisesRegex(ValueError, "'n' must be >= 0"):
            ops.diff(V, -1)
        with self.assertRaisesRegex(ValueError, "rank >= 2 and one last dim"):
            ops.cdist(V, V)


class Activations(Close):
    def test_values(self):
        self.close(ops.softmin(T([0.0, math.log(3.0)])), [0.75, 0.25])
        self.close(ops.elu(T([-1.0, 1.0])), [math.expm1(-1.0), 1.0])
        self.close(ops.celu(T([-1.0, 1.0]), 2.0), [2 * math.expm1(-0.5), 1.0])
        self.close(ops.selu(T([-1.0, 1.0])), [1.0507009873554805 * 1.6732632423543772 * math.expm1(-1.0), 1.0507009873554805])
        self.assertEqual(ops.prelu(T([[-1.0, 2.0]]), T([0.5, 0.25])).tolist(), [[-0.5, 2.0]])
        self.assertEqual(ops.rrelu(T([1.0, 2.0])).tolist(), [1.0, 2.0])
        r = ops.rrelu(ms.full((1000,), -1.0), 0.2, 0.3)
        self.assertTrue(-0.3 <= ops.amin(r).item() and ops.amax(r).item() <= -0.2)
        self.assertEqual(ops.hardshrink(T([-1.0, 0.3, 0.5])).tolist(), [-1.0, 0.0, 0.0])
        self.assertEqual(ops.soft_shrink(T([-1.0, 0.3, 2.0])).tolist(), [-0.5, 0.0, 1.5])
        self.assertEqual(ops.hardtanh(T([-3.0, 0.5, 3.0])).tolist(), [-1.0, 0.5, 1.0])
        self.assertEqual(ops.threshold(T([1.0, 3.0]), 2.0, -1.0).tolist(), [-1.0, 3.0])
        self.close(ops.glu(T([1.0, 0.0])), [0.5])
        self.close(ops.tanhshrink(T([1.0])), [1 - math.tanh(1.0)])
        self.close(ops.logsigmoid(T([0.0, -100.0])), [-math.log(2.0), -100.0])
        self.close(ops.softsign(T([1.0, -3.0])), [0.5, -0.75])
        self.close(ops.mish(T([1.0])), [math.tanh(math.log1p(math.e))])
        self.close(ops.fast_gelu(T([1.0])), [1 / (1 + math.exp(-1.702))])

    def test_random_activations_and_dropout(self):
        g = ops.gumbel_softmax(X, hard=True)
        self.assertEqual(ops.sum(g, 1).tolist(), [1.0, 1.0])
        self.assertEqual(sorted(set(ops.ravel(g).tolist())), [0.0, 1.0])
        self.close(ops.sum(ops.gumbel_softmax(X, 0.5), 1), [1.0, 1.0], 1e-6)
        ones = ms.ones((4, 8, 3, 3))
        d = ops.dropout2d(ones, 0.5)
        # whole channels: each (n, c) plane is all 0 or all 2
        per_plane = ops.amax(d, (2, 3)) - ops.amin(d, (2, 3))
        self.assertEqual(ops.amax(per_plane).item(), 0.0)
        self.assertEqual(sorted(set(ops.ravel(d).tolist())) in ([0.0, 2.0], [2.0], [0.0]), True)
        self.assertEqual(ops.dropout2d(ones, 0.5, False).tolist(), ones.tolist())
        self.assertEqual(ops.dropout1d(ms.ones((2, 3, 2)), 1.0).tolist(), ms.zeros((2, 3, 2)).tolist())
        self.assertEqual(ops.dropout3d(ms.ones((2, 1, 1, 1, 1)), 0.0).shape, (2, 1, 1, 1, 1))

    def test_pixel_shuffles(self):
        x = ms.arange(8, dtype=ms.float32).reshape(1, 4, 1, 2)
        # out[0, 0, h*2 + i, w*2 + j] = x[0, i*2 + j, h, w]
        self.assertEqual(ops.pixel_shuffle(x, 2).tolist(), [[[[0.0, 2.0, 1.0, 3.0], [4.0, 6.0, 5.0, 7.0]]]])
        self.assertEqual(ops.pixel_unshuffle(ops.pixel_shuffle(x, 2), 2).tolist(), x.tolist())

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "For 'selu', the dtype of 'input_x' must be a floating type"):
            ops.selu(T([1]))
        with self.assertRaisesRegex(ValueError, "'alpha' must not be 0"):
            ops.celu(V, 0.0)
        with self.assertRaisesRegex(ValueError, "'min_val' .* must be <= 'max_val'"):
            ops.hardtanh(V, 1.0, -1.0)
        with self.assertRaisesRegex(ValueError, "dim 0 must have an even size"):
            ops.glu(V, 0)
        with self.assertRaisesRegex(ValueError, r"'p' must be in \[0, 1\]"):
            ops.dropout2d(ms.ones((1, 1, 1, 1)), 1.5)
        with self.assertRaisesRegex(ValueError, "rank of 'input' must be 3 or 4"):
            ops.dropout2d(V)
        with self.assertRaisesRegex(ValueError, "'tau' must be > 0"):
            ops.gumbel_softmax(X, 0.0)


class Losses(Close):
    def test_values(self):
        # 2 * 0.5 * (log 0.5 + 1)
        self.close(ops.kl_div(T([[-1.0, -1.0]]), T([[0.5, 0.5]]), "sum"), math.log(0.5) + 1)
        self.close(ops.kl_div(T([[-1.0, -1.0]]), T([[0.5, 0.0]]), "none"), [[0.5 * (math.log(0.5) + 1), 0.0]])
        self.close(ops.kl_div(T([[-2.0]]), T([[-1.0]]), "sum", True), math.exp(-1.0))
        self.close(ops.kl_div(T([[-1.0, -1.0], [-1.0, -1.0]]), T([[0.5, 0.5], [0.5, 0.5]]), "batchmean"), math.log(0.5) + 1)
        # |d| = 0.5 (0.125) and 3 (3 - 0.5)
        self.assertEqual(ops.huber_loss(T([0.0, 3.0]), T([0.5, 0.0])).item(), 1.3125)
        self.assertEqual(ops.huber_loss(T([0.0, 3.0]), T([0.5, 0.0]), "none", 2.0).tolist(), [0.125, 4.0])
        self.assertEqual(ops.margin_ranking_loss(T([1.0, 3.0]), T([2.0, 1.0]), T([1.0, 1.0]), 0.5, "none").tolist(), [1.5, 0.0])
        self.close(ops.hinge_embedding_loss(T([0.3, 2.0]), T([-1.0, 1.0])), 1.35)
        self.assertEqual(ops.cosine_embedding_loss(T([[1.0, 0.0], [1.0, 0.0]]), T([[0.0, 1.0], [1.0, 0.0]]), T([1.0, -1.0]), 0.5, "none").tolist(), [1.0, 0.5])
        self.close(ops.gaussian_nll_loss(T([1.0]), T([0.0]), T([1.0])), 0.5)
        self.close(ops.gaussian_nll_loss(T([1.0]), T([0.0]), T([1.0]), True), 0.5 + 0.5 * math.log(2 * math.pi))
        self.close(ops.triplet_margin_loss(T([[0.0, 0.0]]), T([[3.0, 4.0]]), T([[0.0, 1.0]])), 5.0, 1e-5)
        self.close(ops.multilabel_soft_margin_loss(T([[0.0, 0.0]]), T([[1, 0]])), math.log(2.0))

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "'reduction' must be 'none', 'mean', 'sum' or 'batchmean'"):
            ops.kl_div(X, X, "max")
        with self.assertRaisesRegex(ValueError, "'reduction' must be 'mean', 'sum' or 'none'"):
            ops.huber_loss(X, X, "batchmean")
        with self.assertRaisesRegex(ValueError, "'delta' must be > 0"):
            ops.huber_loss(X, X, delta=0.0)
        with self.assertRaisesRegex(ValueError, r"'margin' must be in \[-1, 1\]"):
            ops.cosine_embedding_loss(X, X, T([1.0, 1.0]), 2.0)


class ScattersAndSegments(Close):
    def test_segments(self):
        # id 5 is outside [0, 2): dropped
        self.assertEqual(ops.unsorted_segment_sum(T([1.0, 2.0, 3.0, 4.0]), T([0, 1, 0, 5]), 2).tolist(), [4.0, 2.0])
        self.assertEqual(values(ops.unsorted_segment_sum(T([[1, 2], [3, 4]]), T([1, 1]), 3)),
                         (ms.int64, (3, 2), [[0, 0], [4, 6], [0, 0]]))
        self.assertEqual(ops.unsorted_segment_sum(M3, T([[0, 1, 0], [1, 1, 0]]), 2).shape, (2, 4))

    def test_scatters(self):
        self.assertEqual(ops.tensor_scatter_elements(X, T([[2], [0]]), T([[9.0], [8.0]]), 1).tolist(),
                         [[1.0, -2.0, 9.0], [8.0, 5.0, -6.0]])
        self.assertEqual(ops.scatter(X, T([[-1], [0]]), T([[9.0], [8.0]]), 1).tolist(),
                         [[1.0, -2.0, 9.0], [8.0, 5.0, -6.0]])
        self.assertEqual(ops.tensor_scatter_elements(T([[0.0, 0.0]]), T([[1, 1]]), T([[2.0, 3.0]]), 1, "add").tolist(), [[0.0, 5.0]])
        # indices smaller than input_x on dim 0; integers
        self.assertEqual(values(ops.tensor_scatter_elements(T([[1, 2], [3, 4]]), T([[1]]), T([[9]]), 1)),
                         (ms.int64, (2, 2), [[1, 9], [3, 4]]))
        self.assertEqual(ops.tensor_scatter_add(V, T([[0], [0]]), T([1.0, 1.0])).tolist(), [3.0, 2.0, 3.0])
        self.assertEqual(ops.tensor_scatter_sub(V, T([[2]]), T([1.0])).tolist(), [1.0, 2.0, 2.0])
        self.assertEqual(ops.tensor_scatter_update(V, T([[1]]), T([7.0])).tolist(), [1.0, 7.0, 3.0])

    def test_in_place_on_parameters(self):
        p = ms.Parameter(T([[0.0], [0.0]]), name="p")
        out = ops.scatter_add(p, T([1, 1]), T([[1.0], [2.0]]))  # repeated rows add up
        self.assertIs(out, p)
        self.assertEqual(p.tolist(), [[0.0], [3.0]])
        q = ms.Parameter(T([[0.0, 0.0]]), name="q")
        ops.index_add(q, T([1]), T([[5.0]]), 1)
        self.assertEqual(q.tolist(), [[0.0, 5.0]])
        r = ms.Parameter(T([1.0, 1.0]), name="r")
        ops.scatter_nd_add(r, T([[0], [0]]), T([1.0, 2.0]))
        self.assertEqual(r.tolist(), [4.0, 1.0])

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "must be a prefix of input_x's"):
            ops.unsorted_segment_sum(X, T([0, 1, 2]), 3)
        with self.assertRaisesRegex(ValueError, "'num_segments' must be > 0"):
            ops.unsorted_segment_sum(V, T([0, 0, 0]), 0)
        with self.assertRaisesRegex(ValueError, "'reduction' must be 'none' or 'add'"):
            ops.tensor_scatter_elements(X, T([[0]]), T([[1.0]]), 1, "mul")
        with self.assertRaisesRegex(TypeError, "'updates' must have the dtype of 'input_x'"):
            ops.tensor_scatter_elements(X, T([[0], [0]]), T([[1], [1]]), 1)
        with self.assertRaisesRegex(ValueError, r"'updates' must have shape \(2, 1\)"):
            ops.scatter_add(ms.Parameter(T([[0.0], [0.0]]), name="s"), T([1, 1]), T([[1.0]]))


class DataDependent(unittest.TestCase):
    def test_values(self):
        self.assertEqual(values(ops.unique(T([1, 2, 5, 2], ms.int32))),
                         values((T([1, 2, 5], ms.int32), T([0, 1, 2, 1], ms.int32))))
        self.assertEqual(ops.unique(T([[3, 1], [1, 3]]))[1].tolist(), [[1, 0], [0, 1]])
        self.assertEqual(values(ops.unique_consecutive(T([1, 1, 2, 2, 3, 1]), True, True)),
                         values((T([1, 2, 3, 1]), T([0, 0, 1, 1, 2, 3]), T([2, 2, 1, 1]))))
        self.assertEqual(ops.unique_consecutive(T([[1, 1], [1, 1], [2, 0]]), axis=0).tolist(), [[1, 1], [2, 0]])
        self.assertEqual(ops.masked_select(X, X > 0).tolist(), [1.0, 3.0, 4.0, 5.0])
        self.assertEqual(ops.masked_select(V, T([[True], [False]])).tolist(), [1.0, 2.0, 3.0])
        self.assertEqual(values(ops.nonzero(T([[0, 1], [1, 0]]))), (ms.int64, (2, 2), [[0, 1], [1, 0]]))
        self.assertEqual([t.tolist() for t in ops.nonzero(T([0.0, 2.0, 3.0]), True)], [[1, 2]])
        self.assertEqual(ops.argwhere(T([0, 2])).tolist(), [[1]])

    def test_under_jit_equal_to_eager(self):
        def f(x):
            y, idx = ops.unique(x)
            return y * 2, idx, ops.nonzero(x > 1), ops.masked_select(x, x > 1)
        x = T([3, 1, 3, 2])
        want = values(f(x))
        jf = ms.jit(f)
        self.assertEqual(values(jf(x)), want)
        self.assertEqual(values(jf(x)), want)

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "'mask' must be a bool Tensor"):
            ops.masked_select(X, T([1]))
        with self.assertRaisesRegex(TypeError, "For 'unique', the input 'input' must be a Tensor"):
            ops.unique([1, 2])


class Random(Close):
    def test_shapes_dtypes_and_ranges(self):
        self.assertEqual((ops.rand_like(X).shape, ops.rand_like(X).dtype), ((2, 3), ms.float32))
        self.assertEqual(ops.rand_like(X, 3).tolist(), ops.rand_like(X, 3).tolist())  # seeded
        self.assertEqual(ops.randn_like(X, dtype=ms.float64).dtype, ms.float64)
        r = ops.randint_like(T([[1, 2, 3]] * 50), 2, 5)
        self.assertEqual((r.dtype, ops.amin(r).item() >= 2, ops.amax(r).item() <= 4), (ms.int64, True, True))
        self.assertEqual(ops.standard_normal((2, 3)).shape, (2, 3))
        self.assertEqual(ops.normal((2, 2), T(1.0), T(0.0)).tolist(), [[1.0, 1.0], [1.0, 1.0]])
        u = ops.uniform((500,), T(-1.0), T(3.0), seed=1)
        self.assertTrue(ops.amin(u).item() >= -1.0 and ops.amax(u).item() < 3.0)
        self.assertEqual(values(ops.uniform((3,), T(1), T(2), dtype=ms.int32)), (ms.int32, (3,), [1, 1, 1]))
        self.assertEqual(ops.bernoulli(X, 1.0).tolist(), [[1.0] * 3] * 2)
        self.assertEqual(ops.bernoulli(T([1, 2]), 0.0).tolist(), [0, 0])
        self.assertEqual(ops.multinomial(T([[0.0, 1.0, 0.0]]), 3).tolist(), [[1, 1, 1]])
        self.assertEqual(sorted(ops.multinomial(T([0.0, 1.0, 1.0]), 2, False).tolist()), [1, 2])
        m = ops.multinomial(T([1.0, 3.0]), 4000, seed=5)
        self.close(ops.mean(ops.cast(m, ms.float32)).item(), 0.75, 0.05)
        self.assertEqual(sorted(ops.shuffle(V).tolist()), [1.0, 2.0, 3.0])
        self.assertEqual(ops.laplace((3,), 1.0, 0.0).tolist(), [1.0, 1.0, 1.0])
        self.assertEqual(ops.standard_laplace((4, 2)).shape, (4, 2))

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "'seed' must be a non-negative int"):
            ops.rand_like(X, -1)
        with self.assertRaisesRegex(ValueError, r"'num_samples' must be in \[1, 3\]"):
            ops.multinomial(V, 4, False)
        with self.assertRaisesRegex(ValueError, r"'p' must be in \[0, 1\]"):
            ops.bernoulli(X, 2.0)
        with self.assertRaisesRegex(TypeError, "dtype must be a floating type"):
            ops.rand_like(X, dtype=ms.int32)


class CreationAndQueries(unittest.TestCase):
    def test_values(self):
        self.assertEqual(ops.logspace(0, 2, 3).tolist(), [1.0, 10.0, 100.0])
        self.assertEqual(ops.logspace(0, 3, 4, 2, dtype=ms.int32).tolist(), [1, 2, 4, 8])
        self.assertEqual(values(ops.range(0, 5, 2)), (ms.int64, (3,), [0, 2, 4]))
        self.assertEqual(values(ops.range(T(0.0), 1, 0.25)), (ms.float32, (4,), [0.0, 0.25, 0.5, 0.75]))
        self.assertEqual(ops.range(5, 0, -2).tolist(), [5, 3, 1])
        self.assertEqual(ops.cartesian_prod(T([1, 2]), T([3, 4])).tolist(), [[1, 3], [1, 4], [2, 3], [2, 4]])
        self.assertEqual(ops.block_diag(T([[1, 2]]), T(3), T([4, 5])).tolist(),
                         [[1, 2, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 4, 5]])
        self.assertEqual((ops.is_tensor(X), ops.is_tensor([1.0]), ops.is_tensor(ms.Parameter(V, name="w"))),
                         (True, False, True))
        self.assertEqual((ops.is_floating_point(X), ops.is_floating_point(T([1]))), (True, False))
        self.assertEqual((ops.is_complex(X), ops.is_complex(ops.cast(X, ms.complex64))), (False, True))
        self.assertEqual((ops.numel(M3), ops.numel(T(1.0))), (24, 1))
        self.assertEqual(values(ops.dyn_shape(M3)), (ms.int64, (3,), [2, 3, 4]))
        self.assertEqual((ops.scalar_cast(2.7, ms.int32), ops.scalar_cast(2, ms.float32), ops.scalar_cast(0.0, ms.bool_)),
                         (2, 2.0, False))

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "'step' must not be 0"):
            ops.range(0, 5, 0)
        with self.assertRaisesRegex(ValueError, "cannot reach 'end'"):
            ops.range(0, 5, -1)
        with self.assertRaisesRegex(ValueError, "one or more 1-D Tensors"):
            ops.cartesian_prod(X)
        with self.assertRaisesRegex(TypeError, "'input_x' must be a number"):
            ops.scalar_cast(T(1.0), ms.int32)


class Namespaces(unittest.TestCase):
    def test_functional_alias_holds_the_new_names(self):
        F = ops.functional
        for name in ("flip", "roll", "tril", "triu", "bmm", "isnan", "norm", "masked_fill", "unique",
                     "clip_by_global_norm", "unsorted_segment_sum", "meshgrid"):
            self.assertIs(getattr(F, name), getattr(ops, name), name)
        # functional's own code calls the builtins: they are not shadowed there
        self.assertFalse(hasattr(F, "range"))
        self.assertEqual(len(F.split(ms.arange(5), 2)), 3)

    def test_common_and_top_level(self):
        from pijit import common
        for name in ("float16", "bfloat16", "int8", "uint64", "complex64", "set_seed", "get_seed", "jit",
                     "jit_class", "ms_class", "ms_function", "dtype_to_nptype", "pytype_to_dtype", "Type"):
            self.assertTrue(hasattr(common, name), name)
        self.assertIs(common.float16, ms.float16)
        self.assertIs(common.set_seed, ms.set_seed)
        self.assertEqual((common.get_py_obj_dtype(X), common.get_py_obj_dtype(1), common.get_py_obj_dtype(1.0),
                          common.get_py_obj_dtype(True), common.get_py_obj_dtype(ms.int8)),
                         (ms.float32, ms.int64, ms.float64, ms.bool_, ms.int8))
        self.assertIs(ms.get_py_obj_dtype, common.get_py_obj_dtype)
        self.assertIs(ms.Type, ms.dtype.Type)
        self.assertIs(ms.single, ms.float32)
        from pijit.ops.primitive import constexpr
        self.assertIs(ms.constexpr, constexpr)


class Captured(unittest.TestCase):
    """Each function whose result does not depend on data: one graph, no break, equal to eager."""

    CASES = [
        ("flip", lambda x: ops.flip(x, (0, 1))), ("fliplr", ops.fliplr), ("flipud", ops.flipud),
        ("roll", lambda x: ops.roll(x, 1)), ("roll_dims", lambda x: ops.roll(x, (1, -1), (0, 1))),
        ("rot90", ops.rot90), ("tril", ops.tril), ("triu", lambda x: ops.triu(x, 1)),
        ("swapaxes", lambda x: ops.swapaxes(x, 0, 1)), ("t", ops.t), ("movedim", lambda x: ops.movedim(x, 0, 1)),
        ("unstack", lambda x: ops.unstack(x, 1)), ("meshgrid", lambda x: ops.meshgrid(x[0], x[1, :2])),
        ("repeat_elements", lambda x: ops.repeat_elements(x, 2, 1)), ("repeat_interleave", lambda x: ops.repeat_interleave(x, 2, 0)),
        ("narrow", lambda x: ops.narrow(x, 1, 1, 2)), ("tensor_split", lambda x: ops.tensor_split(x, 2, 1)),
        ("chunk", lambda x: ops.chunk(x, 2, 1)), ("hstack", lambda x: ops.hstack((x, x))),
        ("vstack", lambda x: ops.vstack((x[0], x[1]))), ("column_stack", lambda x: ops.column_stack((x[0], x[1]))),
        ("expand", lambda x: ops.expand(x[:, :1], (2, 4))), ("ravel", ops.ravel),
        ("diagonal", lambda x: ops.diagonal(x, 1)), ("diag", lambda x: ops.diag(x[0])),
        ("diagflat", lambda x: ops.diagflat(x[0], -1)), ("trace", ops.trace),
        ("sequence_mask", lambda x: ops.sequence_mask(ops.cast(x[0], ms.int64), 5)),
        ("gather_nd", lambda x: ops.gather_nd(x, ms.Tensor([[0, 1], [1, 2]]))),
        ("masked_fill", lambda x: ops.masked_fill(x, x > 2, 0.0)),
        ("index_fill", lambda x: ops.index_fill(x, 1, ms.Tensor([0, 2]), -1.0)),
        ("mm", lambda x: ops.mm(x, ops.t(x))), ("bmm", lambda x: ops.bmm(x[None], ops.t(x)[None])),
        ("outer", lambda x: ops.outer(x[0], x[1])), ("inner", lambda x: ops.inner(x, x)),
        ("dot", lambda x: ops.dot(x, ops.t(x))), ("tensor_dot", lambda x: ops.tensor_dot(x, x, ((1,), (1,)))),
        ("batch_dot", lambda x: ops.batch_dot(x, x)), ("addmm", lambda x: ops.addmm(x[:, :2], x, ops.t(x), beta=0.5)),
        ("addcmul", lambda x: ops.addcmul(x, x, x, ms.Tensor(0.5))), ("kron", lambda x: ops.kron(x, x)),
        ("cross", lambda x: ops.cross(x, x * 2 + 1)), ("isnan", ops.isnan), ("isinf", ops.isinf),
        ("isfinite", ops.isfinite), ("isclose", lambda x: ops.isclose(x, x + 1e-9)),
        ("math", lambda x: ops.exp2(x) + ops.log2(x) + ops.log10(x) + ops.sinh(x) + ops.asinh(x) + ops.acosh(x) + ops.atanh(x / 10)),
        ("fmod", lambda x: ops.fmod(x, 2.5)), ("frac", lambda x: ops.frac(x / 3)), ("hypot", lambda x: ops.hypot(x, x)),
        ("logaddexp", lambda x: ops.logaddexp(x, x * 2)), ("copysign", lambda x: ops.copysign(x, -x)),
        ("nan_to_num", lambda x: ops.nan_to_num(ops.log(x - 2))), ("xdivy", lambda x: ops.xdivy(x - 1, x)),
        ("count_nonzero", lambda x: ops.count_nonzero(x - 1, 1)), ("aminmax", lambda x: ops.aminmax(x, axis=1)),
        ("std_mean", lambda x: ops.std_mean(x, 1)), ("median", lambda x: ops.median(x, 1)),
        ("cumprod", lambda x: ops.cumprod(x, 1)), ("cummax", lambda x: ops.cummax(x, 1)), ("cummin", lambda x: ops.cummin(x, 0)),
        ("argsort", ops.argsort), ("diff", lambda x: ops.diff(x, 1, 1)), ("trapz", ops.trapz), ("cov", ops.cov),
        ("norm", lambda x: ops.norm(x) + ops.norm(x, 1) + ops.norm(x, float("inf"))),
        ("clip_by_global_norm", lambda x: ops.clip_by_global_norm((x, x * 2), 1.0)),
        ("clip_by_norm", lambda x: ops.clip_by_norm(x, 1.0)), ("cdist", lambda x: ops.cdist(x, x)),
        ("pdist", ops.pdist), ("cosine_similarity", lambda x: ops.cosine_similarity(x, x + 1)),
        ("renorm", lambda x: ops.renorm(x, 2, 0, 3.0)),
        ("activations", lambda x: ops.softmin(x) + ops.elu(-x) + ops.celu(-x) + ops.selu(-x) + ops.mish(x) + ops.softsign(x) + ops.logsigmoid(x)),
        ("shrinks", lambda x: ops.hardshrink(x - 3) + ops.soft_shrink(x - 3) + ops.hardtanh(x) + ops.threshold(x, 3.0, 0.0)),
        ("glu", lambda x: ops.glu(x, 0)), ("prelu", lambda x: ops.prelu(x - 3, ms.Tensor([0.5, 0.25, 0.1]))),
        ("pixel_shuffle", lambda x: ops.pixel_shuffle(ops.reshape(ops.tile(x, (2, 1)), (1, 4, 1, 3)), 2)),
        ("losses", lambda x: ops.kl_div(ops.log_softmax(x, -1), ops.softmax(x * 2, -1), "batchmean") + ops.huber_loss(x, x * 2)
         + ops.margin_ranking_loss(x, x * 2, ops.sign(x - 3)) + ops.cosine_embedding_loss(x, x + 1, ms.Tensor([1.0, -1.0]))
         + ops.gaussian_nll_loss(x, x * 2, x) + ops.triplet_margin_loss(x, x * 2, x + 1)),
        ("unsorted_segment_sum", lambda x: ops.unsorted_segment_sum(x, ms.Tensor([1, 0]), 3)),
        ("tensor_scatter_elements", lambda x: ops.tensor_scatter_elements(x, ms.Tensor([[2], [0]]), x[:, :1], 1)),
        ("tensor_scatter_elements_add", lambda x: ops.tensor_scatter_elements(x, ms.Tensor([[2, 2, 0], [0, 1, 1]]), x, 1, "add")),
        ("tensor_scatter_sub", lambda x: ops.tensor_scatter_sub(x, ms.Tensor([[0, 1]]), x[1, :1])),
        ("logspace_range", lambda x: x[0] + ops.logspace(0, 1, 3) + ops.range(0, 3, 1)),
        ("cartesian_block", lambda x: (ops.cartesian_prod(x[0], x[1]), ops.block_diag(x, x[0]))),
        ("queries", lambda x: x * ops.numel(x) + ops.is_floating_point(x)),
        ("dyn_shape", lambda x: ops.dyn_shape(x) + 1),
        ("rand_like_seeded", lambda x: x + ops.rand_like(x, seed=7)),
    ]

    def test_each_function_captures_into_one_graph(self):
        x = ms.Tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
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
