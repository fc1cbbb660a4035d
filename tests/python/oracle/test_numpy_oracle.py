"""pijit ops against numpy as an oracle (system python3 with Debian's numpy; each test fails where
numpy is absent: requires.py). Inputs are made with numpy and passed through the buffer protocol; results
come back zero-copy with numpy.asarray."""
import itertools
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_numpy

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

import pijit as pj
from pijit import ops

SHAPE_PAIRS = [((), ()), ((5,), ()), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)),
               ((0,), (1,)), ((2, 0, 3), (1, 3)), ((17,), (17,)), ((64, 65), (65,))]
NP_DTYPES = ["float32", "float64", "int32", "int64"]


def rand(shape, dtype, seed, positive=False):
    rng = np.random.RandomState(seed)
    x = rng.uniform(0.5 if positive else -4, 4, size=shape)
    if dtype.startswith("int"):
        x = np.floor(x)
        if positive:
            x = np.maximum(x, 1)
    if dtype == "bool":
        return x > 0
    return x.astype(dtype)


def pjt(a):
    return pj.Tensor(a)


class OracleCase(unittest.TestCase):
    def setUp(self):
        require_numpy(self, np)

    def check(self, got, want, rtol=1e-5, atol=1e-6, rtol64=1e-12, atol64=1e-12, msg=""):
        """got equals want in dtype and shape, and in value: exactly for integers and bools, within
        (rtol, atol) for float32 and within (rtol64, atol64) for float64 (float32's tolerances
        would let a float64 op computed in float32 pass)."""
        g = np.asarray(got)
        want = np.asarray(want)
        self.assertEqual(g.shape, want.shape, msg)
        self.assertEqual(g.dtype, want.dtype, msg)
        if want.dtype.kind == "f":
            tol = (rtol64, atol64) if want.dtype == np.float64 else (rtol, atol)
            np.testing.assert_allclose(g, want, rtol=tol[0], atol=tol[1], err_msg=msg, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, want, err_msg=msg)


class TestElementwise(OracleCase):
    BIN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
           "floor_div": np.floor_divide, "mod": np.mod, "maximum": np.maximum,
           "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
           "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
           "logical_and": np.logical_and, "logical_or": np.logical_or,
           "logical_xor": np.logical_xor} if np is not None else {}

    def test_binary_ops_broadcast(self):
        for (sa, sb), dt in itertools.product(SHAPE_PAIRS, NP_DTYPES):
            a, b = rand(sa, dt, 1), rand(sb, dt, 2, positive=True)
            for name, f in self.BIN.items():
                got = getattr(ops, name)(pjt(a), pjt(b))
                want = f(a, b)
                if name == "div" and dt.startswith("int"):
                    want = want.astype("float32")
                self.check(got, want, msg="%s %s %s %s" % (name, sa, sb, dt))

    def test_unary_ops(self):
        import math
        fns = {"neg": np.negative, "abs": np.abs, "sign": np.sign, "square": np.square,
               "floor": np.floor, "ceil": np.ceil, "round": np.round, "exp": np.exp,
               "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
               "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
               "reciprocal": np.reciprocal,
               "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
               "relu": lambda x: np.maximum(x, 0),
               "erf": np.vectorize(math.erf, otypes=["float64"]),
               "silu": lambda x: x / (1 + np.exp(-x)),
               "softplus": lambda x: np.log1p(np.exp(x))}
        for dt in ("float32", "float64"):
            for shape in [(), (7,), (3, 5), (2, 3, 4), (1000,)]:
                pos = {"log", "log1p", "sqrt", "reciprocal"}
                for name, f in fns.items():
                    a = rand(shape, dt, 3, positive=name in pos)
                    want = np.asarray(f(a.astype("float64")))
                    self.check(getattr(ops, name)(pjt(a)), want.astype(dt), rtol=2e-5, atol=2e-6,
                               msg="%s %s %s" % (name, shape, dt))

    def test_transposed_views(self):
        a = rand((5, 7), "float32", 4)
        t = pjt(a).T
        self.check(ops.exp(t), np.exp(a.T))
        self.check(t + pjt(a).T, a.T + a.T)

    def test_where_and_clamp(self):
        c = rand((3, 4), "bool", 5)
        x, y = rand((3, 4), "float32", 6), rand((4,), "float64", 7)
        self.check(ops.where(pjt(c), pjt(x), pjt(y)), np.where(c, x, y))
        self.check(ops.clamp(pjt(x), -1.0, 2.0), np.clip(x, -1, 2))


class TestReductions(OracleCase):
    def test_reductions_every_axis(self):
        for dt in NP_DTYPES:
            a = rand((3, 4, 5), dt, 8)
            axes = [None, 0, 1, 2, -1, (0, 2), (1, 2), (0, 1, 2)]
            for axis, kd in itertools.product(axes, (False, True)):
                t = pjt(a)
                self.check(t.sum(axis=axis, keepdims=kd), a.sum(axis=axis, keepdims=kd), msg="sum")
                # MindSpore's Tensor.max/min ignore keepdims when axis is None.
                kdm = kd and axis is not None
                self.check(t.max(axis=axis, keepdims=kd), a.max(axis=axis, keepdims=kdm), msg="max")
                self.check(t.min(axis=axis, keepdims=kd), a.min(axis=axis, keepdims=kdm), msg="min")
                self.check(t.prod(axis=axis, keepdims=kd), a.prod(axis=axis, keepdims=kd),
                           rtol=1e-4, msg="prod")
                want_mean = a.mean(axis=axis, keepdims=kd)
                if dt.startswith("int"):
                    want_mean = want_mean.astype("float32")
                self.check(t.mean(axis=axis, keepdims=kd), want_mean, msg="mean")
                self.check(t.var(axis=axis, keepdims=kd), a.var(axis=axis, keepdims=kd)
                           .astype("float64" if dt == "float64" else "float32"), rtol=1e-4, msg="var")
                self.check(t.any(axis=axis, keepdims=kd), a.any(axis=axis, keepdims=kd), msg="any")
                self.check(t.all(axis=axis, keepdims=kd), a.all(axis=axis, keepdims=kd), msg="all")
            for axis in (None, 0, 1, -1):
                self.check(pjt(a).argmax(axis=axis), a.argmax(axis=axis))
                self.check(pjt(a).argmin(axis=axis), a.argmin(axis=axis))

    def test_large_and_strided(self):
        a = rand((300, 257), "float32", 9)
        self.check(pjt(a).T.sum(axis=0), a.T.sum(axis=0), rtol=1e-4, atol=1e-4)
        self.check(pjt(a).sum(), a.astype("float64").sum().astype("float32"), rtol=1e-5, atol=1e-3)  # (summed exactly)
        self.check(pjt(a).std(axis=1, ddof=1), a.std(axis=1, ddof=1), rtol=1e-4)

    def test_cumsum_logsumexp_softmax(self):
        a = rand((4, 6), "float32", 10)
        self.check(ops.cumsum(pjt(a), 1), np.cumsum(a, 1), rtol=1e-5)
        m = a.max(axis=1, keepdims=True)
        lse = (np.log(np.exp(a - m).sum(axis=1, keepdims=True)) + m)
        self.check(ops.logsumexp(pjt(a), 1, keepdims=True), lse, rtol=1e-5)
        e = np.exp(a - m)
        self.check(ops.softmax(pjt(a), -1), e / e.sum(axis=1, keepdims=True), rtol=1e-5)
        self.check(ops.log_softmax(pjt(a), -1), a - lse, rtol=1e-5, atol=1e-5)


class TestMatmul(OracleCase):
    def test_matmul_shapes(self):
        cases = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (6, 3, 4)),
                 ((2, 1, 4, 3), (5, 3, 2)), ((0, 3), (3, 2)), ((64, 300), (300, 33))]
        for dt in NP_DTYPES:
            for sa, sb in cases:
                a, b = rand(sa, dt, 11), rand(sb, dt, 12)
                self.check(pjt(a) @ pjt(b), a @ b, rtol=1e-4, atol=1e-4, msg="%s %s %s" % (sa, sb, dt))

    def test_transposed_operands(self):
        a, b = rand((33, 17), "float32", 13), rand((29, 33), "float32", 14)
        self.check(pjt(a).T @ pjt(b).T, a.T @ b.T, rtol=1e-4, atol=1e-4)


class TestShapesAndData(OracleCase):
    def test_views(self):
        a = rand((2, 3, 4), "float32", 15)
        t = pjt(a)
        self.check(t.reshape(4, 6), a.reshape(4, 6))
        self.check(t.reshape((-1, 4)), a.reshape(-1, 4))
        self.check(t.transpose(2, 0, 1), a.transpose(2, 0, 1))
        self.check(t.T, a.T)
        self.check(t.T.reshape(-1), a.T.reshape(-1))
        self.check(t[:, None].squeeze(1), a)
        self.check(t.expand_dims(1), np.expand_dims(a, 1))
        self.check(t.flatten(), a.flatten())
        self.check(ops.broadcast_to(pjt(a[0, 0]), (3, 4)), np.broadcast_to(a[0, 0], (3, 4)))

    def test_concat_stack_split_tile(self):
        a, b = rand((2, 3), "float32", 16), rand((4, 3), "float64", 17)
        self.check(ops.concat((pjt(a), pjt(b)), 0), np.concatenate((a, b), 0))
        self.check(ops.stack((pjt(a), pjt(a)), 1), np.stack((a, a), 1))
        # MindSpore's split takes chunk sizes; numpy's takes a count or cut points.
        for got, want in zip(ops.split(pjt(b), 2, 0), np.split(b, 2, 0)):
            self.check(got, want)
        for got, want in zip(ops.split(pjt(b), [1, 2, 1], 0), np.split(b, [1, 3], 0)):
            self.check(got, want)
        self.check(ops.tile(pjt(a), (2, 1, 3)), np.tile(a, (2, 1, 3)))

    def test_sort_topk_gather_onehot(self):
        a = rand((4, 9), "float32", 18)
        v, i = ops.sort(pjt(a), axis=1)
        self.check(v, np.sort(a, axis=1))
        self.check(i, np.argsort(a, axis=1, kind="stable"))
        v, i = ops.topk(pjt(a), 3)
        self.check(v, -np.sort(-a, axis=1)[:, :3])
        idx = np.array([[0, 2], [8, -1]])
        self.check(ops.gather(pjt(a), pjt(idx), 1), np.take(a, idx, axis=1))
        self.check(ops.index_select(pjt(a), 0, pjt(np.array([3, 0]))), a[[3, 0]])
        oh = ops.one_hot(pjt(np.array([0, 2, 1])), 3)
        self.check(oh, np.eye(3, dtype="float32")[[0, 2, 1]])


class TestIndexing(OracleCase):
    KEYS = [0, -1, (1, 2), slice(None), slice(1, None), slice(None, None, -1), slice(-2, 0, -1),
            (slice(None), 1), (Ellipsis, 0), (None, 0), (0, None, slice(1, 3)), (Ellipsis, None),
            (slice(None, None, 2), slice(1, None, 2)), [0, 2], ([0, 1], [1, 2]),
            (slice(None), [0, 0, 3]), ([[0], [1]], [1, 2, 3]), (0, slice(None), [1, 2]),
            ([0, 1], slice(None), [1, 2]), (slice(None), None, [1, 2]),
            (Ellipsis, [True, False, True, False, True]), ([True, False, True],),
            ]

    def test_getitem_matches_numpy(self):
        a = rand((3, 4, 5), "float32", 19)
        for key in self.KEYS:
            np_key = tuple(np.array(k) if isinstance(k, list) else k for k in key) \
                if isinstance(key, tuple) else (np.array(key) if isinstance(key, list) else key)
            self.check(pjt(a)[key], a[np_key], msg=repr(key))

    def test_mask_indexing(self):
        a = rand((3, 4), "float32", 20)
        t = pjt(a)
        self.check(t[t > 0], a[a > 0])
        self.check(t[pjt(a[:, 0] > 0)], a[a[:, 0] > 0])

    def test_setitem_matches_numpy(self):
        for key in self.KEYS:
            np_key = tuple(np.array(k) if isinstance(k, list) else k for k in key) \
                if isinstance(key, tuple) else (np.array(key) if isinstance(key, list) else key)
            a = rand((3, 4, 5), "float32", 21)
            t = pjt(a)
            a[np_key] = 7.5
            t[key] = 7.5
            self.check(t, a, msg=repr(key))
        a = rand((3, 4), "float32", 22)
        t = pjt(a)
        a[a > 0] = 0
        t[t > 0] = 0
        self.check(t, a)


class TestPrinting(OracleCase):
    def test_str_matches_numpy(self):
        arrays = [np.ones((3, 3), "float32") * 1024, np.array([1.5, 2.25, 3.0], "float32"),
                  np.array([0.1, 1e-5], "float32"), np.arange(12).reshape(2, 2, 3),
                  np.array([True, False]), np.array(3.5, "float64"),
                  np.linspace(-1, 1, 2000).astype("float32"), np.zeros((2, 0)),
                  np.array([np.nan, np.inf, -np.inf, 1.0], "float32")]
        for a in arrays:
            self.assertEqual(str(pjt(a)), str(a))


class TestInterop(OracleCase):
    def test_zero_copy_both_ways(self):
        t = pj.Tensor([[1.0, 2.0], [3.0, 4.0]])
        a = np.asarray(t)
        a[0, 0] = 9
        self.assertEqual(t.tolist()[0][0], 9.0)
        self.assertEqual(t.asnumpy().dtype, np.float32)
        self.check(pj.Tensor(np.arange(6, dtype="int64").reshape(2, 3)[:, ::2]),
                   np.arange(6).reshape(2, 3)[:, ::2])
        self.assertIs(pj.Tensor(np.float64(1.5)).dtype, pj.float64)
        self.assertIs(pj.Tensor([1], dtype=np.float64).dtype, pj.float64)


if __name__ == "__main__":
    unittest.main()
