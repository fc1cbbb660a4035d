"""NaN and infinities against numpy as the oracle (system python3 with Debian's numpy; every test
fails where numpy is absent): arrays with NaN, +inf and -inf scattered among random values, through
the ops that take a maximum, a minimum or exponentials, eager and jitted, float32 and float64.
numpy's own max/min/argmax/maximum/clip give the reference where numpy has the op; softmax,
logsumexp and pooling are written with numpy's operations in float64 (x - max, exp, sum), which is
what numpy's semantics mean for them (scipy.special.softmax computes the same)."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

import pijit as pj
from pijit import ops
from pijit.ops import nn_functional as NF


def specials(shape, dtype, seed):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-4, 4, size=shape)
    pick = rng.randint(0, 40, size=shape)
    x[pick == 0] = np.nan
    x[pick == 1] = np.inf
    x[pick == 2] = -np.inf
    flat = x.reshape(-1)
    flat[: shape[-1]] = -np.inf  # a row (or plane) of -inf
    return x.astype(dtype)


def np_softmax(x, axis, log=False):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True)  # numpy's max propagates NaN
        e = np.exp(x - m)
        s = np.sum(e, axis=axis, keepdims=True)
        return (x - m) - np.log(s) if log else e / s


def np_logsumexp(x, axis):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True)
        shift = np.where(np.isinf(m), 0.0, m)
        return np.squeeze(shift + np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)), axis)


def np_pool(x, k, s, p, is_max):
    x = x.astype(np.float64)
    fill = -np.inf if is_max else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s]
    with np.errstate(all="ignore"):
        return win.max(axis=(-2, -1)) if is_max else win.sum(axis=(-2, -1)) / (k * k)


class NonFiniteOracle(unittest.TestCase):
    def setUp(self):
        if np is None:
            self.fail("numpy is not installed for this Python: the numpy oracle needs it (python3-numpy)")

    def check(self, name, fn, x, want):
        wants = want if isinstance(want, tuple) else (want,)
        for mode in ("eager", "jit"):
            f = fn if mode == "eager" else pj.jit(lambda t: fn(t))
            got = f(pj.Tensor(x))
            gots = got if isinstance(got, tuple) else (got,)
            for g, w in zip(gots, wants):
                g, w = np.asarray(g), np.asarray(w)
                msg = "%s %s %s" % (name, x.dtype, mode)
                self.assertEqual(g.shape, w.shape, msg)
                if w.dtype.kind != "f":
                    np.testing.assert_array_equal(g, w, err_msg=msg)
                    continue
                self.assertEqual(g.dtype, x.dtype, msg)
                np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=msg + ": NaN positions")
                np.testing.assert_array_equal(g[np.isinf(w)], w[np.isinf(w)], err_msg=msg + ": infinities")
                tol = 1e-5 if x.dtype == np.float32 else 1e-12
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=msg)

    def test_softmax_logsumexp(self):
        for dt in ("float32", "float64"):
            for shape in ((64, 33), (300, 257)):
                x = specials(shape, dt, 1)
                for axis in (-1, 0):
                    self.check("softmax axis %d" % axis, lambda t, a=axis: ops.softmax(t, a), x, np_softmax(x, axis))
                    self.check("log_softmax axis %d" % axis, lambda t, a=axis: ops.log_softmax(t, a), x,
                               np_softmax(x, axis, log=True))
                self.check("logsumexp", lambda t: ops.logsumexp(t, 1), x, np_logsumexp(x, 1))

    def test_reductions(self):
        for dt in ("float32", "float64"):
            x = specials((64, 1000), dt, 2)
            with np.errstate(all="ignore"):
                for axis in (0, 1):
                    self.check("amax %d" % axis, lambda t, a=axis: ops.amax(t, a), x, np.max(x, axis))
                    self.check("amin %d" % axis, lambda t, a=axis: ops.amin(t, a), x, np.min(x, axis))
                    self.check("argmax %d" % axis, lambda t, a=axis: ops.argmax(t, a), x, np.argmax(x, axis))
                    self.check("argmin %d" % axis, lambda t, a=axis: ops.argmin(t, a), x, np.argmin(x, axis))

    def test_elementwise(self):
        for dt in ("float32", "float64"):
            for n in (37, 100003):
                x = specials((n,), dt, 3)
                y = x[::-1].copy()
                with np.errstate(all="ignore"):
                    self.check("maximum", lambda t: ops.maximum(t, pj.Tensor(y)), x, np.maximum(x, y))
                    self.check("minimum", lambda t: ops.minimum(pj.Tensor(y), t), x, np.minimum(y, x))
                    self.check("clip", lambda t: ops.clamp(t, -1.0, 2.0), x, np.clip(x, -1.0, 2.0))
                    self.check("relu", ops.relu, x, np.where(np.isnan(x), x, np.maximum(x, 0)).astype(dt))
                    self.check("exp", ops.exp, x, np.exp(x.astype(np.float64)))
                    self.check("tanh", ops.tanh, x, np.tanh(x.astype(np.float64)))
                    self.check("sigmoid", ops.sigmoid, x, 1 / (1 + np.exp(-x.astype(np.float64))))
                    self.check("fused max/relu", lambda t: ops.maximum(ops.relu(t * 2.0), pj.Tensor(y)) - 1.0, x,
                               np.maximum(np.where(np.isnan(x), x, np.maximum(x * 2, 0)), y) - 1.0)

    def test_pooling(self):
        for dt in ("float32", "float64"):
            x = specials((2, 5, 13, 13), dt, 4)
            for k, s, p in ((2, 2, 0), (3, 2, 1), (3, 1, 1)):
                self.check("max_pool2d %d/%d/%d" % (k, s, p), lambda t, k=k, s=s, p=p: NF.max_pool2d(t, k, s, p), x,
                           np_pool(x, k, s, p, True))
                self.check("avg_pool2d %d/%d/%d" % (k, s, p), lambda t, k=k, s=s, p=p: NF.avg_pool2d(t, k, s, p), x,
                           np_pool(x, k, s, p, False))


if __name__ == "__main__":
    unittest.main()
