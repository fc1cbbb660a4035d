"""mindspore.numpy (pijit.numpy) against numpy on random float32 data of a few shapes (system
python3 with Debian's numpy; fails where numpy is absent: requires.py). Values agree within
float32 tolerances; float results keep numpy's float32 dtype."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_numpy

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

import pijit as pj
import pijit.numpy as mnp

SHAPES = [(7,), (3, 5), (2, 3, 4), (16, 33)]


def rand(shape, seed, lo=-4.0, hi=4.0):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype(np.float32)


class OracleCase(unittest.TestCase):
    def setUp(self):
        require_numpy(self, np)

    def check(self, got, want, rtol=2e-5, atol=2e-5, msg=""):
        if isinstance(want, (tuple, list)):
            self.assertEqual(len(got), len(want), msg)
            for g, w in zip(got, want):
                self.check(g, w, rtol, atol, msg)
            return
        g, w = np.asarray(got), np.asarray(want)
        self.assertEqual(g.shape, w.shape, msg)
        if w.dtype == np.float32:
            self.assertEqual(g.dtype, np.float32, msg)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=msg)


class Elementwise(OracleCase):
    UNARY = ["exp", "expm1", "sin", "cos", "tanh", "sinh", "cosh", "arcsinh", "absolute", "negative",
             "square", "floor", "ceil", "trunc", "rint", "sign", "cbrt", "exp2", "deg2rad", "rad2deg"]
    POSITIVE = ["sqrt", "log", "log1p", "log2", "log10", "reciprocal", "arccosh"]
    BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "hypot", "logaddexp",
              "logaddexp2", "remainder", "fmod", "floor_divide", "heaviside"]

    def test_unary(self):
        for i, shape in enumerate(SHAPES):
            x = rand(shape, i)
            for name in self.UNARY:
                self.check(getattr(mnp, name)(pj.Tensor(x)), getattr(np, name)(x), msg=name)
            p = rand(shape, 10 + i, 1.0, 6.0)
            for name in self.POSITIVE:
                self.check(getattr(mnp, name)(pj.Tensor(p)), getattr(np, name)(p), msg=name)
            t = rand(shape, 20 + i, -0.9, 0.9)
            self.check(mnp.arctanh(pj.Tensor(t)), np.arctanh(t), msg="arctanh")

    def test_binary_with_broadcasting(self):
        for i, (sa, sb) in enumerate([((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((16, 33), (16, 33))]):
            a, b = rand(sa, i), rand(sb, 30 + i, 0.5, 3.0)
            for name in self.BINARY:
                self.check(getattr(mnp, name)(pj.Tensor(a), pj.Tensor(b)), getattr(np, name)(a, b),
                           rtol=1e-4, msg=name)
            self.check(mnp.power(pj.Tensor(b), pj.Tensor(a)), np.power(b, a), rtol=1e-4, msg="power")
            self.check(mnp.isclose(pj.Tensor(a), pj.Tensor(a + 1e-6)), np.isclose(a, a + 1e-6))


class Reductions(OracleCase):
    def test_axes_and_keepdims(self):
        for i, shape in enumerate(SHAPES):
            x = rand(shape, 40 + i)
            for axis in [None, 0, -1] + ([(0, -1)] if len(shape) > 1 else []):
                for keepdims in (False, True):
                    t = pj.Tensor(x)
                    msg = "%s axis=%s keepdims=%s" % (shape, axis, keepdims)
                    self.check(mnp.sum(t, axis, keepdims=keepdims), np.sum(x, axis, keepdims=keepdims), rtol=1e-4, msg=msg)
                    self.check(mnp.mean(t, axis, keepdims), np.mean(x, axis, keepdims=keepdims), rtol=1e-4, msg=msg)
                    self.check(mnp.var(t, axis, 1, keepdims), np.var(x, axis, ddof=1, keepdims=keepdims), rtol=1e-4, msg=msg)
                    self.check(mnp.std(t, axis, 0, keepdims), np.std(x, axis, keepdims=keepdims), rtol=1e-4, msg=msg)
                    self.check(mnp.amax(t, axis, keepdims), np.amax(x, axis, keepdims=keepdims), msg=msg)
                    self.check(mnp.amin(t, axis, keepdims), np.amin(x, axis, keepdims=keepdims), msg=msg)
                    self.check(mnp.ptp(t, axis, keepdims), np.ptp(x, axis, keepdims=keepdims), msg=msg)
            self.check(mnp.argmax(pj.Tensor(x)), np.argmax(x))
            self.check(mnp.argmin(pj.Tensor(x), -1), np.argmin(x, -1))
            self.check(mnp.cumsum(pj.Tensor(x), 0), np.cumsum(x, 0), rtol=1e-4)
            self.check(mnp.count_nonzero(pj.Tensor(np.floor(x)), 0), np.count_nonzero(np.floor(x), 0))

    def test_nan_reductions(self):
        x = rand((6, 7), 50)
        x[x > 2.5] = np.nan
        t = pj.Tensor(x)
        for name in ("nansum", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin"):
            for axis in (None, 0, 1):
                self.check(getattr(mnp, name)(t, axis), getattr(np, name)(x, axis), rtol=1e-4,
                           msg="%s axis=%s" % (name, axis))
        self.check(mnp.nancumsum(t, 1), np.nancumsum(x, 1), rtol=1e-4)


class LinearAlgebra(OracleCase):
    def test_products(self):
        a, b = rand((5, 7), 60), rand((7, 3), 61)
        self.check(mnp.matmul(pj.Tensor(a), pj.Tensor(b)), np.matmul(a, b), rtol=1e-4)
        self.check(mnp.dot(pj.Tensor(a), pj.Tensor(b)), np.dot(a, b), rtol=1e-4)
        c, d = rand((2, 3, 4), 62), rand((5, 4, 2), 63)
        self.check(mnp.dot(pj.Tensor(c), pj.Tensor(d)), np.dot(c, d), rtol=1e-4)
        self.check(mnp.inner(pj.Tensor(c), pj.Tensor(rand((6, 4), 64))), np.inner(c, rand((6, 4), 64)), rtol=1e-4)
        self.check(mnp.tensordot(pj.Tensor(c), pj.Tensor(d), ([2, 0], [1, 2])),
                   np.tensordot(c, d, ([2, 0], [1, 2])), rtol=1e-4)
        self.check(mnp.outer(pj.Tensor(a), pj.Tensor(b)), np.outer(a, b), rtol=1e-5)
        self.check(mnp.kron(pj.Tensor(a[:2, :3]), pj.Tensor(b[:3, :2])), np.kron(a[:2, :3], b[:3, :2]))
        e, f = rand((4, 3), 65), rand((4, 3), 66)
        self.check(mnp.cross(pj.Tensor(e), pj.Tensor(f)), np.cross(e, f), rtol=1e-4, atol=1e-4)
        self.check(mnp.cov(pj.Tensor(a)), np.cov(a).astype(np.float32), rtol=1e-4, atol=1e-4)
        self.check(mnp.corrcoef(pj.Tensor(a)), np.corrcoef(a).astype(np.float32), rtol=1e-4, atol=1e-4)
        for ord_ in (None, 1, np.inf, -np.inf, "fro"):
            self.check(mnp.norm(pj.Tensor(a), ord_), np.linalg.norm(a, ord_), rtol=1e-4, msg=str(ord_))
        for ord_ in (None, 1, 3, np.inf, 0):
            self.check(mnp.norm(pj.Tensor(a), ord_, axis=1), np.linalg.norm(a, ord_, axis=1), rtol=1e-4, msg=str(ord_))


class Shapes(OracleCase):
    def test_manipulation(self):
        x = rand((3, 4, 5), 70)
        t = pj.Tensor(x)
        self.check(mnp.transpose(t, (2, 0, 1)), np.transpose(x, (2, 0, 1)))
        self.check(mnp.moveaxis(t, 0, -1), np.moveaxis(x, 0, -1))
        self.check(mnp.rollaxis(t, 2, 1), np.rollaxis(x, 2, 1))
        for axis in (None, 0, (1, 2)):
            self.check(mnp.flip(t, axis), np.flip(x, axis))
        for shift, axis in ((3, None), (-2, 1), ((1, 2), (0, 2))):
            self.check(mnp.roll(t, shift, axis), np.roll(x, shift, axis))
        for k in range(-1, 4):
            self.check(mnp.rot90(t, k, (1, 2)), np.rot90(x, k, (1, 2)))
        self.check(mnp.tile(t, (2, 1, 1)), np.tile(x, (2, 1, 1)))
        self.check(mnp.repeat(t, 3, 1), np.repeat(x, 3, 1))
        for k in (-2, 0, 1):
            self.check(mnp.tril(t, k), np.tril(x, k))
            self.check(mnp.triu(t, k), np.triu(x, k))
            self.check(mnp.diagonal(t, k, 1, 2), np.diagonal(x, k, 1, 2))
            self.check(mnp.trace(t, k, 1, 2), np.trace(x, k, 1, 2), rtol=1e-4)
        self.check(mnp.split(t, [1, 3], 1), np.split(x, [1, 3], 1))
        self.check(mnp.array_split(t, 3, 2), np.array_split(x, 3, 2))
        idx = np.random.RandomState(71).randint(0, 4, size=(3, 6, 5))
        self.check(mnp.take_along_axis(t, pj.Tensor(idx), 1), np.take_along_axis(x, idx, 1))
        self.check(mnp.take(t, pj.Tensor(idx[0, :2]), 2), np.take(x, idx[0, :2], 2))
        self.check(mnp.diff(t, 2, 1), np.diff(x, 2, 1), rtol=1e-4, atol=1e-5)
        for mode in ("constant", "edge", "reflect", "symmetric"):
            self.check(mnp.pad(t, ((1, 2), (0, 3), (2, 2)), mode=mode),
                       np.pad(x, ((1, 2), (0, 3), (2, 2)), mode=mode), msg=mode)
        v = np.floor(rand((40,), 72))
        u, inv = mnp.unique(pj.Tensor(v), return_inverse=True)
        nu, ninv = np.unique(v, return_inverse=True)
        self.check(u, nu)
        self.check(inv, ninv)
        s = np.sort(rand((30,), 73))
        q = rand((4, 5), 74)
        for side in ("left", "right"):
            self.check(mnp.searchsorted(pj.Tensor(s), pj.Tensor(q), side), np.searchsorted(s, q, side))
        self.check(mnp.digitize(pj.Tensor(q), pj.Tensor(s)), np.digitize(q, s))
        self.check(mnp.isin(pj.Tensor(np.floor(q)), pj.Tensor(np.floor(s))), np.isin(np.floor(q), np.floor(s)))


if __name__ == "__main__":
    unittest.main()
