"""mindspore.numpy (pijit.numpy): MindSpore's numpy-style functions over tensors. Each name is
called as MindSpore documents it against values worked out by hand (numpy's own results, checked
on paper), dtypes included (Python data becomes int32/float32, as MindSpore's numpy makes it);
UnderJit checks that the common ones capture into one graph with no break and give the eager
result; ImportPaths checks that `import mindspore.numpy` gives this package while `import numpy`
still gives the real numpy (or pijit's stand-in). oracle/test_ms_numpy_oracle.py compares the
whole module with numpy on random data."""
import math
import os
import struct
import subprocess
import sys
import textwrap
import unittest

from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY  # noqa: E402

import pijit as ms
import pijit.numpy as mnp

HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.join(HERE, "..", "..", "pyscripts")


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


def f32(v):
    """v rounded to float32, as a float32 tensor holds it."""
    return struct.unpack("f", struct.pack("f", v))[0]


def values(out):
    if isinstance(out, (tuple, list)):
        return tuple(values(o) for o in out)
    return (out.dtype, out.shape, out.tolist())


X = [[1.0, -2.5, 3.0], [4.0, 0.5, -6.0]]


class Creation(unittest.TestCase):
    def test_python_data_becomes_32_bit(self):
        self.assertEqual(values(mnp.array([[1, 2], [3, 4]])), (ms.int32, (2, 2), [[1, 2], [3, 4]]))
        self.assertEqual(mnp.array([1.5, 2.0]).dtype, ms.float32)
        self.assertEqual(mnp.asarray([True, False]).dtype, ms.bool_)
        self.assertEqual(mnp.array(T([1, 2], ms.int64)).dtype, ms.int64)  # tensors keep theirs
        self.assertEqual(values(mnp.array([1, 2], dtype=mnp.float64, ndmin=3)),
                         (ms.float64, (1, 1, 2), [[[1.0, 2.0]]]))
        self.assertEqual(mnp.asfarray([1, 2]).dtype, ms.float32)

    def test_array_copies_asarray_does_not(self):
        t = T([1.0, 2.0])
        self.assertIsNot(mnp.array(t), t)
        self.assertIs(mnp.asarray(t), t)
        self.assertIsNot(mnp.copy(t), t)

    def test_fills(self):
        self.assertEqual(values(mnp.zeros((2, 1))), (ms.float32, (2, 1), [[0.0], [0.0]]))
        self.assertEqual(values(mnp.ones(2, mnp.int32)), (ms.int32, (2,), [1, 1]))
        self.assertEqual(values(mnp.full((2,), 7)), (ms.int32, (2,), [7, 7]))
        self.assertEqual(values(mnp.full((2, 2), [1.0, 2.0])), (ms.float32, (2, 2), [[1.0, 2.0], [1.0, 2.0]]))
        self.assertEqual(values(mnp.full_like(T(X), 2)), (ms.float32, (2, 3), [[2.0] * 3] * 2))
        self.assertEqual(values(mnp.zeros_like(T([1, 2]), shape=(1, 2))), (ms.int64, (1, 2), [[0, 0]]))
        self.assertEqual(mnp.empty((1, 2)).tolist(), [[0.0, 0.0]])

    def test_ranges(self):
        self.assertEqual(values(mnp.arange(1, 10, 3)), (ms.int32, (3,), [1, 4, 7]))
        self.assertEqual(values(mnp.arange(4)), (ms.int32, (4,), [0, 1, 2, 3]))
        self.assertEqual(values(mnp.arange(0, 1, 0.25)), (ms.float32, (4,), [0.0, 0.25, 0.5, 0.75]))
        self.assertEqual(values(mnp.linspace(0, 1, 5)), (ms.float32, (5,), [0.0, 0.25, 0.5, 0.75, 1.0]))
        out, step = mnp.linspace(0, 1, 4, endpoint=False, retstep=True)
        self.assertEqual((out.tolist(), step), ([0.0, 0.25, 0.5, 0.75], 0.25))
        self.assertEqual(mnp.logspace(0, 2, 3).tolist(), [1.0, 10.0, 100.0])
        self.assertEqual(mnp.geomspace(1, 1000, 4).tolist(), [1.0, 10.0, 100.0, 1000.0])
        with self.assertRaisesRegex(ValueError, "step must not be 0"):
            mnp.arange(0, 3, 0)

    def test_eye_tri(self):
        self.assertEqual(mnp.eye(2, 3, 1).tolist(), [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        self.assertEqual(mnp.eye(3, k=-2).tolist(), [[0.0] * 3, [0.0] * 3, [1.0, 0.0, 0.0]])
        self.assertEqual(mnp.identity(2, mnp.int32).tolist(), [[1, 0], [0, 1]])
        self.assertEqual(mnp.tri(2, 3, 1).tolist(), [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
        self.assertEqual(mnp.tril(T(X), -1).tolist(), [[0.0, 0.0, 0.0], [4.0, 0.0, 0.0]])
        self.assertEqual(mnp.triu(T(X), 1).tolist(), [[0.0, -2.5, 3.0], [0.0, 0.0, -6.0]])
        self.assertEqual(mnp.triu([1, 2, 3]).tolist(), [[1, 2, 3], [0, 2, 3], [0, 0, 3]])  # 1-D: square
        self.assertEqual([t.tolist() for t in mnp.triu_indices(3, 1)], [[0, 0, 1], [1, 2, 2]])
        self.assertEqual([t.tolist() for t in mnp.tril_indices_from(mnp.ones((2, 2)))],
                         [[0, 1, 1], [0, 0, 1]])

    def test_diagonals(self):
        self.assertEqual(mnp.diag([1, 2], 1).tolist(), [[0, 1, 0], [0, 0, 2], [0, 0, 0]])
        self.assertEqual(mnp.diag([1, 2], -1).tolist(), [[0, 0, 0], [1, 0, 0], [0, 2, 0]])
        self.assertEqual(mnp.diag(T(X)).tolist(), [1.0, 0.5])
        self.assertEqual(mnp.diagonal(T(X), 1).tolist(), [-2.5, -6.0])
        self.assertEqual(mnp.trace(T(X), -1).tolist(), 4.0)
        self.assertEqual(mnp.diagflat([[1, 2]]).tolist(), [[1, 0], [0, 2]])
        self.assertEqual([t.tolist() for t in mnp.diag_indices(2)], [[0, 1], [0, 1]])

    def test_grids(self):
        xs, ys = mnp.meshgrid([1, 2, 3], [4, 5])
        self.assertEqual((xs.tolist(), ys.tolist()), ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]]))
        xs, ys = mnp.meshgrid([1, 2, 3], [4, 5], indexing="ij")
        self.assertEqual((xs.shape, ys.tolist()), ((3, 2), [[4, 5], [4, 5], [4, 5]]))
        xs, ys = mnp.meshgrid([1, 2, 3], [4, 5], sparse=True)
        self.assertEqual((xs.shape, ys.shape), ((1, 3), (2, 1)))
        self.assertEqual(mnp.indices((2, 3)).tolist(), [[[0, 0, 0], [1, 1, 1]], [[0, 1, 2], [0, 1, 2]]])
        self.assertEqual([t.shape for t in mnp.ix_([0, 1], [2, 4, 5])], [(2, 1), (1, 3)])
        self.assertEqual(mnp.vander([1, 2, 3], 3).tolist(), [[1, 1, 1], [4, 2, 1], [9, 3, 1]])

    def test_windows(self):
        for got, want in ((mnp.hanning(5), [0.0, 0.5, 1.0, 0.5, 0.0]),
                          (mnp.hamming(3), [0.08, 1.0, 0.08]),
                          (mnp.bartlett(5), [0.0, 0.5, 1.0, 0.5, 0.0]),
                          (mnp.blackman(3), [0.0, 1.0, 0.0])):
            for g, w in zip(got.tolist(), want):
                self.assertAlmostEqual(g, w, places=6)
        self.assertEqual(mnp.hanning(1).tolist(), [1.0])

    def test_pad(self):
        x = T([[1, 2], [3, 4]], ms.int32)
        self.assertEqual(mnp.pad(x, ((1, 0), (0, 2)), constant_values=9).tolist(),
                         [[9, 9, 9, 9], [1, 2, 9, 9], [3, 4, 9, 9]])
        self.assertEqual(mnp.pad([1, 2, 3], 2, mode="edge").tolist(), [1, 1, 1, 2, 3, 3, 3])
        self.assertEqual(mnp.pad([1, 2, 3], (2, 3), mode="reflect").tolist(),
                         [3, 2, 1, 2, 3, 2, 1, 2])
        self.assertEqual(mnp.pad([1, 2, 3], (2, 2), mode="symmetric").tolist(),
                         [2, 1, 1, 2, 3, 3, 2])
        with self.assertRaisesRegex(NotImplementedError, "mode 'wrap' is not supported"):
            mnp.pad([1, 2], 1, mode="wrap")

    def test_histogram_bin_edges(self):
        self.assertEqual(mnp.histogram_bin_edges([1.0, 2.0, 5.0], 4).tolist(), [1.0, 2.0, 3.0, 4.0, 5.0])


class ArrayOps(unittest.TestCase):
    def test_axes(self):
        x = mnp.ones((2, 3, 4))
        self.assertEqual(mnp.transpose(x).shape, (4, 3, 2))
        self.assertEqual(mnp.transpose(x, (1, 0, 2)).shape, (3, 2, 4))
        self.assertEqual(mnp.swapaxes(x, 0, 2).shape, (4, 3, 2))
        self.assertEqual(mnp.rollaxis(x, 2).shape, (4, 2, 3))
        self.assertEqual(mnp.moveaxis(x, [0, 1], [-1, -2]).shape, (4, 3, 2))
        self.assertEqual(mnp.expand_dims(x, (0, 4)).shape, (1, 2, 3, 4, 1))
        self.assertEqual(mnp.squeeze(mnp.ones((1, 2, 1))).shape, (2,))
        self.assertEqual(mnp.squeeze(mnp.ones((1, 2, 1)), -1).shape, (1, 2))
        self.assertEqual(mnp.reshape(x, (6, -1)).shape, (6, 4))
        self.assertEqual(mnp.ravel(x).shape, (24,))
        with self.assertRaisesRegex(ValueError, "cannot select an axis to squeeze out"):
            mnp.squeeze(x, 1)
        with self.assertRaisesRegex(ValueError, "axis 3 is out of bounds for array of dimension 3"):
            mnp.swapaxes(x, 0, 3)

    def test_joining(self):
        a, b = T([[1, 2]]), T([[3, 4]])
        self.assertEqual(mnp.concatenate((a, b)).tolist(), [[1, 2], [3, 4]])
        self.assertEqual(mnp.concatenate((a, b), axis=None).tolist(), [1, 2, 3, 4])
        self.assertEqual(mnp.stack((a, b), axis=-1).tolist(), [[[1, 3], [2, 4]]])
        self.assertEqual(mnp.hstack(([1, 2], [3])).tolist(), [1, 2, 3])
        self.assertEqual(mnp.vstack(([1, 2], [3, 4])).tolist(), [[1, 2], [3, 4]])
        self.assertEqual(mnp.dstack(([1, 2], [3, 4])).tolist(), [[[1, 3], [2, 4]]])
        self.assertEqual(mnp.column_stack(([1, 2], [3, 4])).tolist(), [[1, 3], [2, 4]])
        self.assertEqual(mnp.append([1, 2], [[3]]).tolist(), [1, 2, 3])
        self.assertEqual([t.shape for t in mnp.atleast_3d(1, [1, 2], [[1]])], [(1, 1, 1), (1, 2, 1), (1, 1, 1)])

    def test_splitting(self):
        self.assertEqual([t.tolist() for t in mnp.split(mnp.arange(6), 3)], [[0, 1], [2, 3], [4, 5]])
        self.assertEqual([t.tolist() for t in mnp.split(mnp.arange(6), [1, 4])], [[0], [1, 2, 3], [4, 5]])
        self.assertEqual([t.tolist() for t in mnp.array_split(mnp.arange(7), 3)],
                         [[0, 1, 2], [3, 4], [5, 6]])
        self.assertEqual([t.shape for t in mnp.hsplit(mnp.ones((2, 4)), 2)], [(2, 2), (2, 2)])
        self.assertEqual([t.shape for t in mnp.vsplit(mnp.ones((4, 2)), [1])], [(1, 2), (3, 2)])
        self.assertEqual([t.shape for t in mnp.dsplit(mnp.ones((1, 1, 4)), 4)], [(1, 1, 1)] * 4)
        with self.assertRaisesRegex(ValueError, "does not result in an equal division"):
            mnp.split(mnp.arange(5), 2)

    def test_reordering(self):
        x = T([[1, 2, 3], [4, 5, 6]])
        self.assertEqual(mnp.flip(x).tolist(), [[6, 5, 4], [3, 2, 1]])
        self.assertEqual(mnp.fliplr(x).tolist(), [[3, 2, 1], [6, 5, 4]])
        self.assertEqual(mnp.flipud(x).tolist(), [[4, 5, 6], [1, 2, 3]])
        self.assertEqual(mnp.roll(x, 1).tolist(), [[6, 1, 2], [3, 4, 5]])
        self.assertEqual(mnp.roll(x, (1, -1), (0, 1)).tolist(), [[5, 6, 4], [2, 3, 1]])
        self.assertEqual(mnp.rot90(x).tolist(), [[3, 6], [2, 5], [1, 4]])
        self.assertEqual(mnp.rot90(x, 2).tolist(), [[6, 5, 4], [3, 2, 1]])
        self.assertEqual(mnp.rot90(x, -1).tolist(), [[4, 1], [5, 2], [6, 3]])
        self.assertEqual(mnp.tile([1, 2], (2, 2)).tolist(), [[1, 2, 1, 2], [1, 2, 1, 2]])
        self.assertEqual(mnp.repeat(x, 2).tolist(), [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6])
        self.assertEqual(mnp.repeat(x, [1, 2], axis=0).tolist(), [[1, 2, 3], [4, 5, 6], [4, 5, 6]])
        self.assertEqual([t.shape for t in mnp.broadcast_arrays([[1], [2]], [3, 4, 5])], [(2, 3), (2, 3)])
        self.assertEqual(mnp.broadcast_to([1, 2], (2, 2)).tolist(), [[1, 2], [1, 2]])

    def test_picking(self):
        x = T([[1, 2, 3], [4, 5, 6]])
        self.assertEqual(mnp.take_along_axis(x, T([[2, 0], [1, 1]]), 1).tolist(), [[3, 1], [5, 5]])
        self.assertEqual(mnp.take(x, T([[0, 5], [9, 1]])).tolist(), [[1, 6], [6, 2]])  # 'clip'
        self.assertEqual(mnp.take(x, T([2, 0]), axis=1).tolist(), [[3, 1], [6, 4]])
        self.assertEqual(mnp.take(x, T([7]), mode="wrap").tolist(), [2])
        self.assertEqual(mnp.select([x < 3, x > 4], [x * 10, x * 100], -1).tolist(),
                         [[10, 20, -1], [-1, 500, 600]])
        self.assertEqual(mnp.choose([0, 1, 2], [[1, 2, 3], [4, 5, 6], [7, 8, 9]]).tolist(), [1, 5, 9])
        self.assertEqual(mnp.where(x > 2, x, 0).tolist(), [[0, 0, 3], [4, 5, 6]])
        self.assertEqual([t.tolist() for t in mnp.where(x > 4)], [[1, 1], [1, 2]])
        self.assertEqual([t.tolist() for t in mnp.unravel_index(T([1, 5]), (2, 3))], [[0, 1], [1, 2]])
        self.assertEqual(mnp.size(x), 6)
        self.assertEqual(mnp.size(x, 1), 3)

    def test_unique(self):
        self.assertEqual(mnp.unique([3, 1, 3, 2, 1]).tolist(), [1, 2, 3])
        u, inv = mnp.unique(T([[3, 1], [3, 2]]), return_inverse=True)
        self.assertEqual((u.tolist(), inv.tolist(), inv.dtype), ([1, 2, 3], [2, 0, 2, 1], ms.int32))

    def test_apply(self):
        x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        self.assertEqual(mnp.apply_along_axis(lambda r: r.sum(), 1, x).tolist(), [6.0, 15.0])
        self.assertEqual(mnp.apply_over_axes(mnp.sum, x, [0, 1]).tolist(), [[21.0]])
        self.assertEqual(mnp.piecewise(T([-1.0, 0.0, 2.0]), [T([-1.0, 0.0, 2.0]) < 0], [lambda v: -v, 5.0]).tolist(),
                         [1.0, 5.0, 5.0])


class MathOps(unittest.TestCase):
    def test_arithmetic(self):
        self.assertEqual(values(mnp.add([1, 2], 3)), (ms.int32, (2,), [4, 5]))
        self.assertEqual(mnp.subtract(T([1.0]), [3]).tolist(), [-2.0])
        self.assertEqual(values(mnp.divide([1, 2], 4)), (ms.float32, (2,), [0.25, 0.5]))
        self.assertEqual(mnp.true_divide([3], [2]).tolist(), [1.5])
        self.assertEqual(mnp.floor_divide([7, -7], 2).tolist(), [3, -4])
        self.assertEqual(mnp.remainder([7, -7], 3).tolist(), [1, 2])
        self.assertEqual(mnp.mod([-7], 3).tolist(), [2])
        self.assertEqual(mnp.fmod([7, -7], 3).tolist(), [1, -1])
        self.assertEqual(mnp.fmod(T([-3.5, 3.5]), 2.0).tolist(), [-1.5, 1.5])
        q, r = mnp.divmod([7, -7], 3)
        self.assertEqual((q.tolist(), r.tolist()), ([2, -3], [1, 2]))
        self.assertEqual(mnp.power([2, 3], 2).tolist(), [4, 9])
        self.assertEqual(values(mnp.float_power([2], 3)), (ms.float64, (1,), [8.0]))
        self.assertEqual(mnp.multiply([1, 2], [3, 4], dtype=mnp.float32).tolist(), [3.0, 8.0])
        self.assertEqual(mnp.maximum([1, 5], [3, 2]).tolist(), [3, 5])
        self.assertEqual(mnp.heaviside([-1.5, 0.0, 2.0], 0.5).tolist(), [0.0, 0.5, 1.0])
        self.assertEqual(mnp.hypot([3.0], [4.0]).tolist(), [5.0])
        self.assertEqual(mnp.clip([1, 5, 9], 2, 6).tolist(), [2, 5, 6])
        self.assertEqual(mnp.clip(T([1.0, 5.0]), T([2.0, 0.0]), None).tolist(), [2.0, 5.0])

    def test_functions(self):
        self.assertEqual(mnp.absolute([-1, 2]).tolist(), [1, 2])
        self.assertEqual(mnp.abs is mnp.absolute and mnp.fabs is mnp.absolute, True)
        self.assertEqual(mnp.sqrt([4, 9]).tolist(), [2.0, 3.0])
        self.assertEqual(mnp.cbrt([-8.0, 27.0]).tolist(), [-2.0, 3.0])
        self.assertEqual(mnp.exp2([3.0]).tolist(), [8.0])
        self.assertEqual(mnp.log2([8.0]).tolist(), [3.0])
        self.assertAlmostEqual(mnp.log10([1000.0]).tolist()[0], 3.0, places=5)
        self.assertEqual(mnp.trunc([-1.5, 1.5]).tolist(), [-1.0, 1.0])
        self.assertEqual(mnp.fix([-1.5]).tolist(), [-1.0])
        self.assertEqual(mnp.rint([0.5, 1.5, -2.5]).tolist(), [0.0, 2.0, -2.0])
        self.assertEqual(mnp.round([0.25, 1.35], 1).tolist(), [f32(0.2), f32(1.4)])
        self.assertEqual(mnp.sign([-3, 0, 2]).tolist(), [-1, 0, 1])
        self.assertEqual(mnp.positive([1]).tolist(), [1])
        self.assertEqual(mnp.negative([1]).tolist(), [-1])
        self.assertAlmostEqual(mnp.sinh([1e-8]).tolist()[0], 1e-8, delta=1e-14)  # expm1: no cancellation
        self.assertAlmostEqual(mnp.cosh([1.0]).tolist()[0], math.cosh(1.0), places=6)
        self.assertAlmostEqual(mnp.arcsinh([2.0]).tolist()[0], math.asinh(2.0), places=6)
        self.assertAlmostEqual(mnp.arccosh([2.0]).tolist()[0], math.acosh(2.0), places=6)
        self.assertAlmostEqual(mnp.arctanh([0.5]).tolist()[0], math.atanh(0.5), places=6)
        self.assertAlmostEqual(mnp.deg2rad([180.0]).tolist()[0], math.pi, places=6)
        self.assertAlmostEqual(mnp.rad2deg([math.pi]).tolist()[0], 180.0, places=4)
        self.assertAlmostEqual(mnp.logaddexp([1000.0], [1000.0]).tolist()[0], 1000.0 + math.log(2), places=3)
        self.assertAlmostEqual(mnp.logaddexp2([1.0], [1.0]).tolist()[0], 2.0, places=6)

    def test_reductions(self):
        x = T(X)
        self.assertEqual(mnp.sum(x, 1).tolist(), [1.5, -1.5])
        self.assertEqual(mnp.sum(x, (0, 1), keepdims=True, initial=1).tolist(), [[1.0]])
        self.assertEqual(values(mnp.sum([True, True, False])), (ms.int32, (), 2))
        self.assertEqual(values(mnp.mean([1, 2])), (ms.float32, (), 1.5))
        self.assertEqual(mnp.mean(x, 0).tolist(), [2.5, -1.0, -1.5])
        self.assertEqual(mnp.var([1.0, 3.0]).tolist(), 1.0)
        self.assertEqual(mnp.std([1.0, 3.0], ddof=1).tolist(), f32(math.sqrt(2.0)))
        self.assertEqual(mnp.amax(x, 0, initial=2.0).tolist(), [4.0, 2.0, 3.0])
        self.assertEqual(mnp.amin(x, 1, initial=5.0, where=x > 0).tolist(), [1.0, 0.5])
        self.assertEqual(mnp.max(x).tolist(), 4.0)
        self.assertEqual(mnp.min(x).tolist(), -6.0)
        self.assertEqual(mnp.ptp(x, 1).tolist(), [5.5, 10.0])
        self.assertEqual(values(mnp.argmax(x)), (ms.int32, (), 3))
        self.assertEqual(mnp.argmin(x, 1).tolist(), [1, 2])
        self.assertEqual(mnp.average(x, 1, [2.0, 0.0, 2.0]).tolist(), [2.0, -1.0])
        avg, wsum = mnp.average([1.0, 3.0], returned=True)
        self.assertEqual((avg.tolist(), wsum.tolist()), (2.0, 2.0))
        self.assertEqual(mnp.count_nonzero([[0, 1], [2, 0]], 0).tolist(), [1, 1])
        self.assertEqual(values(mnp.cumsum([[1, 2], [3, 4]])), (ms.int32, (4,), [1, 3, 6, 10]))
        self.assertEqual(mnp.cumsum([[1, 2], [3, 4]], 1).tolist(), [[1, 3], [3, 7]])
        with self.assertRaisesRegex(ValueError, "where mask one has to specify 'initial'"):
            mnp.amax(x, where=x > 0)

    def test_nan_reductions(self):
        nan = float("nan")
        y = T([[1.0, nan], [2.0, 4.0]])
        self.assertEqual(mnp.nansum(y).tolist(), 7.0)
        self.assertEqual(mnp.nanmean(y, 0).tolist(), [1.5, 4.0])
        self.assertEqual(mnp.nanvar(y, 1).tolist(), [0.0, 1.0])
        self.assertEqual(mnp.nanstd(T([1.0, nan, 3.0]), ddof=1).tolist(), f32(math.sqrt(2.0)))
        self.assertEqual(mnp.nanmax(y, 1).tolist(), [1.0, 4.0])
        self.assertTrue(math.isnan(mnp.nanmin(T([[nan, nan]]), 1).tolist()[0]))
        self.assertEqual(mnp.nancumsum(T([1.0, nan, 2.0])).tolist(), [1.0, 1.0, 3.0])

    def test_products(self):
        a, b = T([[1.0, 2.0], [3.0, 4.0]]), T([[5.0, 6.0], [7.0, 8.0]])
        self.assertEqual(mnp.matmul(a, b).tolist(), [[19.0, 22.0], [43.0, 50.0]])
        self.assertEqual(mnp.dot(a, b).tolist(), [[19.0, 22.0], [43.0, 50.0]])
        self.assertEqual(mnp.dot([1, 2], [3, 4]).tolist(), 11)
        self.assertEqual(mnp.dot(2, [3, 4]).tolist(), [6, 8])
        self.assertEqual(mnp.dot(mnp.ones((2, 3, 4)), mnp.ones((5, 4, 2))).shape, (2, 3, 5, 2))
        self.assertEqual(mnp.inner(a, b).tolist(), [[17.0, 23.0], [39.0, 53.0]])
        self.assertEqual(mnp.outer([1, 2], [3, 4, 5]).tolist(), [[3, 4, 5], [6, 8, 10]])
        self.assertEqual(mnp.tensordot(a, b).tolist(), 70.0)
        self.assertEqual(mnp.tensordot(a, b, ([0], [1])).tolist(), [[23.0, 31.0], [34.0, 46.0]])
        self.assertEqual(mnp.kron([1, 10], [[1, 2]]).tolist(), [[1, 2, 10, 20]])
        self.assertEqual(mnp.cross([1, 0, 0], [0, 1, 0]).tolist(), [0, 0, 1])
        self.assertEqual(mnp.cross([1, 2], [3, 4]).tolist(), -2)
        self.assertEqual(mnp.multi_dot([a, b, [1.0, 0.0]]).tolist(), [19.0, 43.0])
        with self.assertRaisesRegex(ValueError, "shape-mismatch for sum"):
            mnp.tensordot(a, mnp.ones((3, 3)), 1)

    def test_differences_and_searching(self):
        self.assertEqual(mnp.diff([1, 4, 9, 16], 2).tolist(), [2, 2])
        self.assertEqual(mnp.diff([1, 4, 9], prepend=0, append=[20]).tolist(), [1, 3, 5, 11])
        self.assertEqual(mnp.ediff1d([1, 4, 9], to_begin=[-1]).tolist(), [-1, 3, 5])
        self.assertEqual(mnp.trapz([1.0, 2.0, 3.0]).tolist(), 4.0)
        self.assertEqual(mnp.trapz([1.0, 2.0, 3.0], [0.0, 1.0, 3.0]).tolist(), 6.5)
        self.assertEqual(mnp.searchsorted([1, 2, 2, 4], [2, 3, 5]).tolist(), [1, 3, 4])
        self.assertEqual(mnp.searchsorted([1, 2, 2, 4], [2, 3, 5], "right").tolist(), [3, 3, 4])
        self.assertEqual(mnp.digitize([0.2, 6.4, 3.0, 1.6], [0.0, 1.0, 2.5, 4.0, 10.0]).tolist(),
                         [1, 4, 3, 2])
        self.assertEqual(mnp.digitize([0.2, 6.4, 3.0, 1.6], [10.0, 4.0, 2.5, 1.0, 0.0]).tolist(),
                         [4, 1, 2, 3])

    def test_statistics_and_norms(self):
        c = mnp.cov([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
        self.assertEqual(c.tolist(), [[1.0, -1.0], [-1.0, 1.0]])
        self.assertEqual(mnp.corrcoef([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]).tolist(), [[1.0, -1.0], [-1.0, 1.0]])
        self.assertEqual(mnp.norm([3.0, 4.0]).tolist(), 5.0)
        self.assertEqual(mnp.norm([[1.0, -2.0], [3.0, 4.0]], 1).tolist(), 6.0)
        self.assertEqual(mnp.norm([[1.0, -2.0], [3.0, 4.0]], math.inf).tolist(), 7.0)
        self.assertEqual(mnp.norm([[3.0, -4.0]], axis=1).tolist(), [5.0])
        self.assertEqual(mnp.norm([1.0, -2.0, 0.0], 0).tolist(), 2.0)
        self.assertEqual(mnp.ravel_multi_index(([1, 0], [2, 1]), (2, 3)).tolist(), [5, 1])
        with self.assertRaisesRegex(NotImplementedError, "singular values"):
            mnp.norm(mnp.ones((2, 2)), 2)

    def test_polynomials(self):
        self.assertEqual(mnp.polyadd([1, 2], [9, 5, 4]).tolist(), [9, 6, 6])
        self.assertEqual(mnp.polysub([1, 2], [9, 5, 4]).tolist(), [-9, -4, -2])
        self.assertEqual(mnp.polyval([3.0, 0.0, 1.0], [5.0, 2.0]).tolist(), [76.0, 13.0])
        self.assertEqual(mnp.polyder([1.0, 1.0, 1.0, 1.0], 2).tolist(), [6.0, 2.0])
        self.assertEqual(mnp.polyint([3.0, 2.0, 1.0]).tolist(), [1.0, 1.0, 1.0, 0.0])
        self.assertEqual(mnp.polymul([1.0, 2.0, 3.0], [9.0, 5.0, 1.0]).tolist(),
                         [9.0, 23.0, 38.0, 17.0, 3.0])

    def test_types(self):
        self.assertIs(mnp.result_type(mnp.int32, mnp.float32), ms.float32)
        self.assertIs(mnp.promote_types("int32", "int64"), ms.int64)
        self.assertIs(mnp.result_type(T([1], ms.int64), [1.0]), ms.float32)
        self.assertIs(mnp.float_, ms.float32)
        self.assertIs(mnp.int_, ms.int32)
        self.assertEqual((mnp.pi, mnp.inf, mnp.NINF), (math.pi, math.inf, -math.inf))
        self.assertTrue(math.isnan(mnp.nan))


class LogicOps(unittest.TestCase):
    def test_comparisons(self):
        self.assertEqual(values(mnp.equal([1, 2], 2)), (ms.bool_, (2,), [False, True]))
        self.assertEqual(mnp.not_equal([1, 2], 2).tolist(), [True, False])
        self.assertEqual(mnp.less([1, 2], [2, 2]).tolist(), [True, False])
        self.assertEqual(mnp.less_equal([1, 2], [2, 2]).tolist(), [True, True])
        self.assertEqual(mnp.greater([1, 3], 2).tolist(), [False, True])
        self.assertEqual(mnp.greater_equal([1, 2], 2).tolist(), [False, True])
        self.assertEqual(mnp.logical_and([0, 1, 2], [1, 1, 0]).tolist(), [False, True, False])
        self.assertEqual(mnp.logical_or([0, 0], [0, 3]).tolist(), [False, True])
        self.assertEqual(mnp.logical_xor([0, 1, 2], [1, 1, 0]).tolist(), [True, False, True])
        self.assertEqual(mnp.logical_not([0, 2]).tolist(), [True, False])

    def test_special_values(self):
        inf, nan = float("inf"), float("nan")
        v = T([1.0, nan, inf, -inf])
        self.assertEqual(mnp.isnan(v).tolist(), [False, True, False, False])
        self.assertEqual(mnp.isinf(v).tolist(), [False, False, True, True])
        self.assertEqual(mnp.isposinf(v).tolist(), [False, False, True, False])
        self.assertEqual(mnp.isneginf(v).tolist(), [False, False, False, True])
        self.assertEqual(mnp.isfinite(v).tolist(), [True, False, False, False])
        self.assertEqual(mnp.isfinite([1, 2]).tolist(), [True, True])

    def test_closeness_and_membership(self):
        inf, nan = float("inf"), float("nan")
        self.assertEqual(mnp.isclose(T([1.0, 1.1, nan, inf]), T([1.0, 1.0, nan, inf])).tolist(),
                         [True, False, False, True])
        self.assertEqual(mnp.isclose(T([nan]), T([nan]), equal_nan=True).tolist(), [True])
        self.assertEqual(mnp.isclose([100.0], [101.0], rtol=0.01).tolist(), [True])
        self.assertEqual(mnp.isin([[1, 2], [3, 4]], [2, 4]).tolist(), [[False, True], [False, True]])
        self.assertEqual(mnp.in1d([[1, 2], [3, 4]], [2, 4], invert=True).tolist(), [True, False, True, False])
        self.assertEqual(mnp.sometrue([[0, 0], [0, 1]], 1).tolist(), [False, True])
        self.assertIs(mnp.array_equal([1, 2], [1, 2]), True)
        self.assertIs(mnp.array_equal([1, 2], [1, 3]), False)
        self.assertIs(mnp.array_equal([1, 2], [[1, 2]]), False)
        self.assertIs(mnp.array_equiv([1, 2], [[1, 2], [1, 2]]), True)
        self.assertIs(mnp.array_equiv([1, 2], [[1, 3]]), False)
        self.assertIs(mnp.isscalar(1.5), True)
        self.assertIs(mnp.isscalar(T(1.5)), False)


class Module(unittest.TestCase):
    def test_all_lists_only_defined_names(self):
        self.assertEqual([n for n in mnp.__all__ if not hasattr(mnp, n)], [])
        self.assertEqual(len(mnp.__all__), len(set(mnp.__all__)))
        for name in ("array", "tril", "where", "concatenate", "isclose", "einsum" if False else "dot"):
            self.assertIn(name, mnp.__all__)
        for name in ("histogram", "interp", "convolve"):  # pijit/numpy/stats_ops.py
            self.assertIn(name, mnp.__all__)
        for name in ("arcsin", "bitwise_and", "gcd"):  # kernels now (pijit/ops/math2.py)
            self.assertIn(name, mnp.__all__)


class ImportPaths(unittest.TestCase):
    """`import mindspore.numpy` is this package; `import numpy` is still numpy (a subprocess run
    under `python -m pijit run`, so the MindSpore alias and the numpy stand-in's finder are
    installed as a user's script sees them)."""

    def run_script(self, body, *flags):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "script.py")
            with open(path, "w") as f:
                f.write(textwrap.dedent(body))
            env = dict(os.environ, PYTHONPATH=os.path.abspath(PYSCRIPTS))
            env.pop("PIJIT_STRESS", None)
            out = subprocess.run([sys.executable, "-m", "pijit", "run"] + list(flags) + [path],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                 cwd=d, timeout=120)
            self.assertEqual(out.returncode, 0, out.stdout.decode())
            return out.stdout.decode().split()

    def test_mindspore_numpy_and_numpy_are_different_modules(self):
        lines = self.run_script("""
            import numpy
            import mindspore.numpy as mnp
            import mindspore
            import pijit.numpy
            print(mnp is pijit.numpy, mindspore.numpy is mnp, numpy is mnp)
            print(numpy.__name__, mnp.__name__)
            print(getattr(numpy, "__pijit_numpy_lite__", False) == (numpy.__name__ == "pijit.numpy_lite"))
            print(hasattr(numpy, "ndarray") or hasattr(numpy, "array"), mnp.array([1, 2]).dtype)
            import numpy as again
            print(again is numpy)
        """)
        self.assertEqual(lines[:3], ["True", "True", "False"])
        # the real numpy, or pijit's stand-in where numpy is not installed: never this package
        self.assertIn(lines[3], ("numpy", "pijit.numpy_lite"))
        self.assertEqual(lines[4], "pijit.numpy")
        self.assertEqual(lines[5:], ["True", "True", "Int32", "True"])

    def test_numpy_first_then_mindspore_numpy(self):
        lines = self.run_script("""
            import mindspore.numpy as mnp
            import numpy
            print(numpy is mnp, mnp.__name__, numpy.__name__)
        """)
        self.assertEqual(lines[:2], ["False", "pijit.numpy"])
        self.assertIn(lines[2], ("numpy", "pijit.numpy_lite"))

    def test_without_the_numpy_stand_in(self):
        lines = self.run_script("""
            try:
                import numpy
                print("numpy", getattr(numpy, "__pijit_numpy_lite__", False))
            except ImportError:
                print("no-numpy")
            import mindspore.numpy as mnp
            print(mnp.__name__)
        """, "--no-numpy-lite")
        self.assertIn(lines[0], ("numpy", "no-numpy"))
        if lines[0] == "numpy":
            self.assertEqual(lines[1], "False")  # a real numpy, never this package
        self.assertEqual(lines[-1], "pijit.numpy")


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class UnderJit(unittest.TestCase):
    """One call of each inside @jit: one graph, no break, the eager result (twice: the second
    call runs the cached graph). where(cond) and unique have data-dependent sizes: they break
    the graph with B017 and still give the eager result."""

    CASES = [
        ("array", lambda x: mnp.array([[1, 2, 3], [4, 5, 6]]) * x),
        ("zeros_ones_full", lambda x: mnp.zeros((2, 3)) + mnp.ones((2, 3)) + mnp.full((2, 3), 2.0) + x),
        ("arange_linspace", lambda x: x * mnp.arange(3) + mnp.linspace(0, 1, 3)),
        ("eye", lambda x: mnp.eye(2, 3, 1) * x),
        ("tril_triu", lambda x: mnp.tril(x, 1) - mnp.triu(x)),
        ("diag", lambda x: mnp.diag(mnp.diag(x))),
        ("trace", lambda x: mnp.trace(x)),
        ("meshgrid", lambda x: mnp.meshgrid(x[0], x[1])),
        ("pad", lambda x: mnp.pad(x, 1, mode="edge") + mnp.pad(x, 1)),
        ("where", lambda x: mnp.where(x > 2, x, 0.0)),
        ("concatenate_stack", lambda x: (mnp.concatenate((x, x), axis=1), mnp.stack((x, x)))),
        ("reshape_transpose", lambda x: mnp.transpose(mnp.reshape(x, (3, 2)))),
        ("expand_squeeze", lambda x: mnp.squeeze(mnp.expand_dims(x, 0))),
        ("reductions", lambda x: (mnp.mean(x, 0), mnp.sum(x), mnp.std(x, 1), mnp.var(x),
                                  mnp.amax(x, 1), mnp.amin(x), mnp.argmax(x, 1), mnp.argmin(x))),
        ("products", lambda x: (mnp.matmul(x, mnp.transpose(x)), mnp.dot(x[0], x[1]),
                                mnp.outer(x[0], x[1]), mnp.tensordot(x, x), mnp.kron(x, x))),
        ("elementwise", lambda x: (mnp.exp(x), mnp.log(mnp.abs(x) + 1), mnp.sqrt(mnp.abs(x)),
                                   mnp.maximum(x, 2), mnp.minimum(x, 2), mnp.clip(x, 1, 4),
                                   mnp.power(x, 2))),
        ("logic", lambda x: (mnp.isnan(x), mnp.isinf(x), mnp.isclose(x, x + 1e-7),
                             mnp.isin(x, [1.0, 5.0]))),
        ("tile_repeat_flip_roll", lambda x: (mnp.tile(x, 2), mnp.repeat(x, 2, 1), mnp.flip(x),
                                             mnp.roll(x, 1, 1))),
        ("cumsum_diff", lambda x: (mnp.cumsum(x, 1), mnp.diff(x))),
        ("split", lambda x: mnp.split(x, 3, 1)),
        ("take_along_axis", lambda x: mnp.take_along_axis(x, mnp.array([[2, 0, 1], [0, 0, 0]]), 1)),
        ("nan_reductions", lambda x: (mnp.nansum(x), mnp.nanmean(x, 1), mnp.nanmax(x, 0))),
        ("norm_cov", lambda x: (mnp.norm(x), mnp.cov(x))),
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

    def test_data_dependent_sizes_break_with_the_eager_result(self):
        x = T([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
        for name, fn in (("where_one_arg", lambda x: mnp.where(x > 2)),
                         ("unique", lambda x: mnp.unique(x, return_inverse=True))):
            with self.subTest(name=name):
                want = values(fn(x))
                jf = ms.jit(fn)
                self.assertEqual(values(jf(x)), want)
                st = ms.jit_stats(jf)
                self.assertEqual(len(st["break_reasons"]), 1)
                self.assertIn("B017 DataDependentShape", st["break_reasons"][0])


if __name__ == "__main__":
    unittest.main()
