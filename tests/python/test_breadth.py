"""The API-breadth names: mint's remaining top level, mindspore.numpy's histograms / interp /
convolve / gradient / grids / random draws, the initializers Identity / Sparse / Dirac /
Orthogonal / VarianceScaling, the optimizers of nn/optim2.py and the layers of nn/layers4.py.
Values worked out by hand (and one-step optimizer updates by their formulas in plain Python),
errors as MindSpore raises them, and under jit: one graph, no break, the eager result; a training
step with each new optimizer jitted gives exactly the eager weights. oracle/test_torch_breadth.py
compares them with numpy and PyTorch on random data."""
import math
import struct
import unittest

import pijit as ms
from pijit import mint, nn
import pijit.numpy as mnp
from pijit.common import initializer as init
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def values(out):
    if isinstance(out, (tuple, list)):
        return tuple(values(o) for o in out)
    if isinstance(out, ms.Tensor) or hasattr(out, "tolist"):
        return (out.dtype, out.shape, out.tolist())
    return out


def flat(t):
    out = t.tolist()
    while isinstance(out, list) and out and isinstance(out[0], list):
        out = [v for row in out for v in row]
    return out


def close(case, got, want, tol=1e-6):
    got = flat(got) if hasattr(got, "tolist") else got
    got = got if isinstance(got, list) else [got]
    case.assertEqual(len(got), len(want))
    for g, w in zip(got, want):
        case.assertAlmostEqual(g, w, delta=tol * max(1.0, abs(w)))


X = [[1.0, -2.0, 3.0], [4.0, 0.0, -6.0]]


class MintFunctions(unittest.TestCase):
    def test_same_objects_as_ops(self):
        from pijit import ops
        for name in ("addmv", "bincount", "cross", "cumprod", "einsum", "histc", "ravel",
                     "searchsorted", "t", "trace", "unbind"):
            self.assertIs(getattr(mint, name), getattr(ops, name), name)
            self.assertIn(name, mint.__all__)

    def test_values(self):
        x = T(X)
        self.assertIs(mint.allclose(x, T(X)), True)
        self.assertIs(mint.allclose(x, x + 1e-3), False)
        self.assertIs(mint.allclose(T([1.0, float("nan")]), T([1.0, float("nan")]), equal_nan=True), True)
        self.assertEqual(values(mint.count_nonzero(x, dim=1)), (ms.int64, (2,), [3, 2]))
        self.assertEqual(values(mint.count_nonzero(x)), (ms.int64, (), 5))
        self.assertEqual(values(mint.cummax(T([1, 3, 2, 5]), 0)),
                         ((ms.int64, (4,), [1, 3, 3, 5]), (ms.int64, (4,), [0, 1, 1, 3])))
        self.assertEqual(mint.cummin(T([3.0, 1.0, 2.0]), dim=0)[0].tolist(), [3.0, 1.0, 1.0])
        self.assertEqual(mint.diff(T([1, 4, 9, 16]), n=2).tolist(), [2, 2])
        self.assertEqual(mint.diff(x, dim=0).tolist(), [[3.0, 2.0, -9.0]])
        self.assertEqual(mint.dstack([T([1, 2]), T([3, 4])]).tolist(), [[[1, 3], [2, 4]]])
        self.assertEqual(mint.median(x).tolist(), 0.0)
        self.assertEqual(values(mint.median(x, 1)), ((ms.float32, (2,), [1.0, 0.0]), (ms.int64, (2,), [0, 1])))
        self.assertEqual([g.tolist() for g in mint.meshgrid(T([1, 2]), T([3, 4, 5]))],
                         [[[1, 1, 1], [2, 2, 2]], [[3, 4, 5], [3, 4, 5]]])
        self.assertEqual(mint.meshgrid(T([1, 2]), T([3, 4, 5]), indexing="xy")[0].shape, (3, 2))
        self.assertEqual(mint.mv(T([[1.0, 2.0], [3.0, 4.0]]), T([1.0, -1.0])).tolist(), [-1.0, -1.0])
        self.assertEqual(mint.nansum(T([[1.0, float("nan")], [2.0, 3.0]]), 1).tolist(), [1.0, 5.0])
        close(self, mint.norm(x), [math.sqrt(66.0)])
        close(self, mint.norm(x, 1, dim=1), [6.0, 10.0])
        close(self, mint.norm(x, float("inf"), dim=0), [4.0, 2.0, 6.0])
        close(self, mint.norm(x, 0), [5.0])
        close(self, mint.norm(x, 3, dim=1, keepdim=True), [36.0 ** (1 / 3), 280.0 ** (1 / 3)], 1e-6)
        self.assertEqual(mint.select(x, 1, -1).tolist(), [3.0, -6.0])
        self.assertEqual(mint.select(x, 0, 1).tolist(), [4.0, 0.0, -6.0])
        s, m = mint.std_mean(T([[1.0, 3.0], [5.0, 7.0]]), 1)
        self.assertEqual((s.tolist(), m.tolist()), ([f32(math.sqrt(2.0)), f32(math.sqrt(2.0))], [2.0, 6.0]))
        v, m = mint.var_mean(T([[1.0, 3.0], [5.0, 7.0]]), correction=0, keepdim=True)
        self.assertEqual((v.tolist(), m.tolist()), ([[5.0]], [[4.0]]))
        self.assertEqual(mint.unique_consecutive(T([1, 1, 2, 2, 3, 1])).tolist(), [1, 2, 3, 1])
        out, inv, cnt = mint.unique_consecutive(T([1, 1, 2, 2, 3, 1]), return_inverse=True, return_counts=True)
        self.assertEqual((inv.tolist(), cnt.tolist()), ([0, 0, 1, 1, 2, 3], [2, 2, 1, 1]))
        base = mint.zeros(2, 4)
        self.assertEqual(mint.scatter(base, 1, T([[3, 0], [1, 2]]), T([[1.0, 2.0, 9.0], [3.0, 4.0, 9.0]])).tolist(),
                         [[2.0, 0.0, 0.0, 1.0], [0.0, 3.0, 4.0, 0.0]])
        self.assertEqual(mint.scatter(base, 0, T([[1, 0, 1]]), value=5.0).tolist(),
                         [[0.0, 5.0, 0.0, 0.0], [5.0, 0.0, 5.0, 0.0]])
        self.assertEqual(mint.scatter(mint.ones(1, 3), 1, T([[0, 0, 2]]), T([[1.0, 2.0, 3.0]]), reduce="add").tolist(),
                         [[4.0, 1.0, 4.0]])
        self.assertEqual(mint.polar(T([2.0]), T([0.0])).tolist(), [complex(2.0, 0.0)])
        self.assertEqual(mint.polar(T([1.0]), T([0.5])).dtype, ms.complex64)

    def test_batch_norm_statistics(self):
        x = T([[[1.0, 3.0]], [[5.0, 7.0]]])  # (N=2, C=1, L=2): mean 4, variance 5
        mean, invstd = mint.batch_norm_stats(x, 0.0)
        self.assertEqual((mean.tolist(), invstd.tolist()), ([4.0], [f32(1 / math.sqrt(5.0))]))
        y = mint.batch_norm_elemt(x, T([2.0]), T([1.0]), T([4.0]), T([0.5]), 1e-5)
        self.assertEqual(y.tolist(), [[[-2.0, 0.0]], [[2.0, 4.0]]])
        self.assertEqual(mint.batch_norm_elemt(x, None, None, T([4.0]), T([0.5]), 1e-5).tolist(),
                         [[[-1.5, -0.5]], [[0.5, 1.5]]])
        # two replicas: means 1 and 4, variances 1 and 4 (invstd 1, 0.5 with eps 0), 1 and 3 each
        rm = ms.Parameter(T([0.0]), name="rm")
        rv = ms.Parameter(T([1.0]), name="rv")
        m, inv = mint.batch_norm_gather_stats_with_counts(x, T([[1.0], [4.0]]), T([[1.0], [0.5]]),
                                                          rm, rv, 0.5, 0.0, T([1.0, 3.0]))
        # mean 13/4; var (1 + 2.25^2 + 3 (4 + 0.75^2)) / 4 = 4.9375
        self.assertEqual(m.tolist(), [3.25])
        close(self, inv, [1 / math.sqrt(4.9375)])
        close(self, rm, [1.625])
        close(self, rv, [0.5 + 0.5 * 4.9375 * 4 / 3])
        with self.assertRaisesRegex(TypeError, "counts"):
            mint.batch_norm_gather_stats_with_counts(x, T([[1.0]]), T([[1.0]]))

    def test_random_draws(self):
        ms.set_seed(1)
        b = mint.bernoulli(T([0.0, 1.0, 0.0, 1.0]))
        self.assertEqual(values(b), (ms.float32, (4,), [0.0, 1.0, 0.0, 1.0]))
        self.assertEqual(mint.normal(0.0, 1.0, (2, 3)).shape, (2, 3))
        self.assertEqual(mint.normal(T([0.0, 1.0]), T([[1.0], [2.0]])).shape, (2, 2))
        self.assertEqual(mint.normal(T([5.0, 5.0]), 0.0).tolist(), [5.0, 5.0])
        r = mint.randint_like(T([[0.0] * 50]), 2)
        self.assertEqual((r.dtype, r.shape), (ms.int64, (1, 50)))
        self.assertTrue(set(flat(r)) <= {0, 1})
        self.assertTrue(set(flat(mint.randint_like(T([0] * 50), 4, 6))) <= {4, 5})
        p = mint.randperm(6)
        self.assertEqual((p.dtype, sorted(p.tolist())), (ms.int64, list(range(6))))
        self.assertEqual(mint.randperm(3, dtype=ms.int32).dtype, ms.int32)
        self.assertEqual(sorted(mint.multinomial(T([0.0, 2.0, 0.0, 1.0]), 2).tolist()), [1, 3])

    def test_errors(self):
        x = T(X)
        with self.assertRaisesRegex(TypeError, "'size' is required"):
            mint.normal(0.0, 1.0)
        with self.assertRaisesRegex(ValueError, "'std' must be >= 0"):
            mint.normal(0.0, -1.0, (2,))
        with self.assertRaisesRegex(TypeError, "'mean' must be a float or a Tensor"):
            mint.normal("0", 1.0, (2,))
        with self.assertRaisesRegex(ValueError, "'indexing' must be 'xy' or 'ij'"):
            mint.meshgrid(T([1]), T([2]), indexing="ji")
        with self.assertRaisesRegex(IndexError, "out of range"):
            mint.select(x, 1, 3)
        with self.assertRaisesRegex(ValueError, "'reduce' must be None or 'add'"):
            mint.scatter(x, 1, T([[0]]), T([[1.0]]), reduce="mean")
        with self.assertRaisesRegex(ValueError, "at least as large as 'index'"):
            mint.scatter(x, 1, T([[0, 1]]), T([[1.0]]))
        with self.assertRaisesRegex(ValueError, "'padding' must be 'same', 'valid'"):
            mint.conv2d(mint.ones(1, 1, 3, 3), mint.ones(1, 1, 1, 1), padding="full")
        with self.assertRaisesRegex(ValueError, "'p' must be 'fro', 'nuc' or a number"):
            mint.norm(x, "max")
        with self.assertRaisesRegex(TypeError, "'abs' and 'angle' must be float tensors"):
            mint.polar(T([1]), T([0]))
        with self.assertRaisesRegex(TypeError, "randint_like"):
            mint.randint_like(x)

    CASES = [
        ("linalg", lambda x: (mint.addmv(x[:, 0], x, x[0], beta=0.5), mint.mv(x, x[0]), mint.t(x),
                              mint.trace(x), mint.einsum("ij,kj->ik", x, x), mint.cdist(x, x),
                              mint.cross(x[:, :3], x[:, 1:], dim=1))),
        ("scans", lambda x: (mint.cummax(x, 1), mint.cummin(x, 0), mint.cumprod(x, 1),
                             mint.diff(x, dim=1), mint.median(x, 1))),
        ("reductions", lambda x: (mint.count_nonzero(x, 1), mint.nansum(x, 0), mint.norm(x, 2, 1),
                                  mint.norm(x), mint.std_mean(x, 1), mint.var_mean(x, correction=0))),
        ("shapes", lambda x: (mint.ravel(x), mint.select(x, 1, 2), mint.unbind(x, 0),
                              mint.dstack([x, x]), mint.meshgrid(x[0], x[1]))),
        ("scatter", lambda x: (mint.scatter(x, 1, T([[2, 0], [1, 3]]), x[:, :2] * 10),
                               mint.searchsorted(T([0.0, 2.0, 4.0]), x))),
        ("batch_norm", lambda x: mint.batch_norm_elemt(mint.reshape(x, (2, 2, 2)), None, x[0, :2],
                                                       *mint.batch_norm_stats(mint.reshape(x, (2, 2, 2)), 1e-5),
                                                       1e-5)),
        ("conv2d", lambda x: mint.conv2d(mint.reshape(x, (1, 1, 2, 4)), T([[[[1.0, -1.0]]]]), padding="same")),
    ]

    def test_each_captures_into_one_graph(self):
        x = T([[1.0, 5.0, 3.0, 2.0], [4.0, 2.0, 6.0, 0.5]])
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


class Numpy(unittest.TestCase):
    def test_histograms(self):
        h, e = mnp.histogram(T([0.0, 0.5, 1.0, 1.5, 2.0, 2.0]), bins=4)
        self.assertEqual(values(h), (ms.int32, (4,), [1, 1, 1, 3]))
        self.assertEqual(e.tolist(), [0.0, 0.5, 1.0, 1.5, 2.0])
        h, e = mnp.histogram(T([1, 2, 2, 9]), bins=[0, 2, 3], weights=T([1.0, 0.5, 0.5, 7.0]))
        self.assertEqual(values(h), (ms.float32, (2,), [1.0, 1.0]))
        h, _ = mnp.histogram(T([1.0, 1.0]), bins=2)  # a zero-width range widens to +-0.5
        self.assertEqual(h.tolist(), [0, 2])
        h, _ = mnp.histogram(T([0.0, 1.0, 1.0, 3.0]), bins=2, density=True)  # bins 1.5 wide
        self.assertEqual(h.tolist(), [0.5, f32(1 / 6)])
        H, xe, ye = mnp.histogram2d(T([0.0, 1.0, 1.0]), T([0.0, 0.0, 1.0]), bins=2)
        self.assertEqual((H.tolist(), xe.tolist(), ye.tolist()),
                         ([[1, 0], [1, 1]], [0.0, 0.5, 1.0], [0.0, 0.5, 1.0]))
        H, edges = mnp.histogramdd(T([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=(1, 2))
        self.assertEqual((H.tolist(), len(edges)), ([[2, 1]], 2))
        self.assertEqual(values(mnp.bincount(T([0, 2, 2]))), (ms.int32, (3,), [1, 0, 2]))
        self.assertEqual(mnp.bincount(T([0, 2, 2]), minlength=5).tolist(), [1, 0, 2, 0, 0])
        self.assertEqual(mnp.bincount(T([0, 2, 7]), length=3).tolist(), [1, 0, 1])
        with self.assertRaisesRegex(ValueError, "must be non-negative"):
            mnp.bincount(T([0, -1]))
        with self.assertRaisesRegex(TypeError, "1-D tensor of integers"):
            mnp.bincount(T([0.5]))
        with self.assertRaisesRegex(ValueError, "increase monotonically"):
            mnp.histogram(T([1.0]), bins=[2.0, 1.0])
        with self.assertRaisesRegex(ValueError, "positive int"):
            mnp.histogram(T([1.0]), bins=0)

    def test_convolve_correlate_interp(self):
        self.assertEqual(mnp.convolve(T([1.0, 2.0, 3.0]), T([0.0, 1.0, 0.5])).tolist(),
                         [0.0, 1.0, 2.5, 4.0, 1.5])
        self.assertEqual(mnp.convolve(T([1.0, 2.0, 3.0]), T([0.0, 1.0, 0.5]), "same").tolist(), [1.0, 2.5, 4.0])
        self.assertEqual(mnp.convolve(T([1, 2, 3]), T([0, 1, 0]), "valid").tolist(), [2])
        self.assertEqual(mnp.correlate(T([1.0, 2.0, 3.0]), T([0.0, 1.0, 0.5])).tolist(), [3.5])
        self.assertEqual(mnp.correlate(T([1.0, 2.0, 3.0]), T([0.0, 1.0, 0.5]), "full").tolist(),
                         [0.5, 2.0, 3.5, 3.0, 0.0])
        # v longer than a: numpy swaps them and reverses the result
        self.assertEqual(mnp.correlate(T([0.0, 1.0]), T([1.0, 2.0, 3.0]), "full").tolist(),
                         [0.0, 3.0, 2.0, 1.0])
        with self.assertRaisesRegex(ValueError, "'mode' must be"):
            mnp.correlate(T([1.0]), T([1.0]), "wide")
        self.assertEqual(mnp.interp(T([-1.0, 0.5, 1.5, 2.0, 3.0]), T([0.0, 1.0, 2.0]), T([0.0, 10.0, 0.0])).tolist(),
                         [0.0, 5.0, 5.0, 0.0, 0.0])
        self.assertEqual(mnp.interp(T([-1.0, 3.0]), T([0.0, 2.0]), T([1.0, 2.0]), left=-5.0, right=5.0).tolist(),
                         [-5.0, 5.0])

    def test_gradient_unwrap_cumprod(self):
        self.assertEqual(mnp.gradient(T([1.0, 2.0, 4.0, 7.0])).tolist(), [1.0, 1.5, 2.5, 3.0])
        self.assertEqual(mnp.gradient(T([1.0, 2.0, 4.0, 7.0]), 2.0).tolist(), [0.5, 0.75, 1.25, 1.5])
        self.assertEqual(mnp.gradient(T([1.0, 2.0, 4.0, 7.0]), edge_order=2).tolist(), [0.5, 1.5, 2.5, 3.5])
        gy, gx = mnp.gradient(T([[1.0, 2.0], [3.0, 5.0]]))
        self.assertEqual((gy.tolist(), gx.tolist()), ([[2.0, 3.0], [2.0, 3.0]], [[1.0, 1.0], [2.0, 2.0]]))
        # uneven coordinates: x = 0, 1, 3 and f = x^2 has the exact centred derivative 2
        self.assertEqual(mnp.gradient(T([0.0, 1.0, 9.0]), T([0.0, 1.0, 3.0])).tolist(), [1.0, 2.0, 4.0])
        with self.assertRaisesRegex(ValueError, "'edge_order' must be 1 or 2"):
            mnp.gradient(T([1.0, 2.0]), edge_order=3)
        with self.assertRaisesRegex(ValueError, "at least edge_order \\+ 1"):
            mnp.gradient(T([1.0]))
        u = mnp.unwrap(T([0.0, 4.0, 8.0]))  # jumps of 4 > pi: each taken back by 2 pi
        close(self, u, [0.0, 4.0 - 2 * math.pi, 8.0 - 4 * math.pi], 1e-6)
        self.assertEqual(mnp.unwrap(T([0.0, 1.0, 0.5])).tolist(), [0.0, 1.0, 0.5])
        self.assertEqual(mnp.cumprod(T([[1, 2], [3, 4]])).tolist(), [1, 2, 6, 24])
        self.assertEqual(mnp.cumprod(T([[1, 2], [3, 4]]), axis=1).tolist(), [[1, 2], [3, 12]])

    def test_grids_random_and_str(self):
        g = mnp.mgrid[0:2, 0:3]
        self.assertEqual(values(g), (ms.int32, (2, 2, 3), [[[0, 0, 0], [1, 1, 1]], [[0, 1, 2], [0, 1, 2]]]))
        self.assertEqual(mnp.mgrid[0:1:3j].tolist(), [0.0, 0.5, 1.0])
        self.assertEqual([a.tolist() for a in mnp.ogrid[0:2, 0:3]], [[[0], [1]], [[0, 1, 2]]])
        self.assertEqual(values(mnp.rand(2, 3))[:2], (ms.float32, (2, 3)))
        self.assertEqual(mnp.randn((4,), dtype=ms.float64).dtype, ms.float64)
        r = mnp.randint(2, 5, (100,))
        self.assertEqual(r.dtype, ms.int32)
        self.assertTrue(set(flat(r)) <= {2, 3, 4})
        self.assertEqual(mnp.randint(3).shape, ())
        with self.assertRaisesRegex(ValueError, "less than 'maxval'"):
            mnp.randint(5, 2)
        with self.assertRaisesRegex(TypeError, "must be a float type"):
            mnp.rand(2, dtype=ms.int32)
        self.assertEqual(mnp.array_str(T([1.0, 2.0])), str(T([1.0, 2.0])))
        with self.assertRaisesRegex(TypeError, "must be a Tensor"):
            mnp.array_str([1, 2])


class Initializers(unittest.TestCase):
    def test_values(self):
        self.assertEqual(init.initializer("identity", (2, 3)).tolist(), [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
        d = init.initializer(init.Dirac(2), (4, 1, 3))
        self.assertEqual(d.tolist(), [[[0.0, 1.0, 0.0]], [[0.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]], [[0.0, 0.0, 0.0]]])
        q = init.initializer(init.Orthogonal(), (2, 2))
        a, b = q.tolist()
        close(self, [a[0] * b[0] + a[1] * b[1], a[0] ** 2 + a[1] ** 2], [0.0, 1.0], 1e-6)
        s = init.initializer(init.Sparse(0.5), (4, 3))
        for c in range(3):
            self.assertEqual(sum(1 for r in range(4) if s.tolist()[r][c] == 0.0), 2)
        v = init.initializer(init.VarianceScaling(1.0, "fan_in", "uniform"), (30, 12))
        self.assertLessEqual(max(abs(e) for e in flat(v)), math.sqrt(3.0 / 12))
        self.assertEqual(init.initializer("variancescaling", (3, 4)).shape, (3, 4))
        self.assertEqual(init.initializer(init.Identity(), (2, 2), ms.float64).dtype, ms.float64)

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "For Identity initializer, the dimension of the initialized tensor should be 2"):
            init.initializer("identity", (2, 2, 2))
        with self.assertRaisesRegex(ValueError, "For Sparse initializer, the dimension"):
            init.initializer(init.Sparse(0.1), (4,))
        with self.assertRaisesRegex(ValueError, "only support to initialize tensor with dimension of 3, 4 or 5"):
            init.initializer(init.Dirac(), (2, 2))
        with self.assertRaisesRegex(ValueError, "must be divisible by groups"):
            init.initializer(init.Dirac(3), (4, 1, 3))
        with self.assertRaisesRegex(ValueError, "should be no less than 2"):
            init.initializer("orthogonal", (3,))
        with self.assertRaisesRegex(ValueError, "'scale' must be greater than 0"):
            init.VarianceScaling(0.0)
        with self.assertRaisesRegex(ValueError, "'mode' must be fan_in, fan_out or fan_avg"):
            init.VarianceScaling(mode="fan")
        with self.assertRaisesRegex(ValueError, "'distribution' must be uniform"):
            init.VarianceScaling(distribution="normal")


def _one_param_steps(opt_cls, kw, grads, w=(1.0, -2.0)):
    p = ms.Parameter(T(list(w)), name="w")
    opt = opt_cls([p], **kw)
    for g in grads:
        opt((T(g),))
    return p.tolist()


class Optimizers(unittest.TestCase):
    G = [[0.5, -1.0], [0.25, 0.5], [-1.0, 2.0]]

    def test_update_formulas(self):
        # each one by its formula, in float64 Python, element by element
        def run(update, state):
            out = []
            for k, w in enumerate((1.0, -2.0)):
                st = dict(state)
                p = w
                for t, g in enumerate(self.G, 1):
                    p = update(p, g[k], t, st)
                out.append(p)
            return out

        def asgd(p, g, t, st):
            lr, lambd, alpha, t0 = 0.1, 0.01, 0.75, 1.0
            eta = lr if t == 1 else st["eta"]
            p = p * (1 - lambd * eta) - eta * g
            st["ax"] = p if st["mu"] == 1 else st["ax"] + (p - st["ax"]) * st["mu"]
            st["eta"] = lr / (1 + lambd * lr * t) ** alpha
            st["mu"] = 1 / max(1, t - t0)
            return p
        close(self, _one_param_steps(nn.ASGD, dict(learning_rate=0.1, lambd=0.01, t0=1.0), self.G),
              run(asgd, {"mu": 1.0, "ax": 0.0, "eta": 0.0}), 1e-6)

        def adamax(p, g, t, st):
            st["m"] = 0.9 * st["m"] + 0.1 * g
            st["v"] = max(0.999 * st["v"], abs(g))
            return p - 0.01 / (1 - 0.9 ** t) * st["m"] / (st["v"] + 1e-8)
        close(self, _one_param_steps(nn.AdaMax, dict(learning_rate=0.01), self.G), run(adamax, {"m": 0.0, "v": 0.0}))

        def adadelta(p, g, t, st):
            st["a"] = 0.9 * st["a"] + 0.1 * g * g
            u = math.sqrt(st["d"] + 1e-6) / math.sqrt(st["a"] + 1e-6) * g
            st["d"] = 0.9 * st["d"] + 0.1 * u * u
            return p - 1.0 * u
        close(self, _one_param_steps(nn.Adadelta, {}, self.G), run(adadelta, {"a": 0.0, "d": 0.0}), 1e-5)

        def rprop(p, g, t, st):
            size = 0.1 if t == 1 else st["size"]
            s = g * st["prev"]
            f = 1.2 if s > 0 else (0.5 if s < 0 else 1.0)
            size = min(max(size * f, 1e-6), 50.0)
            g = 0.0 if s < 0 else g
            st["prev"], st["size"] = g, size
            return p - (math.copysign(1.0, g) if g else 0.0) * size
        close(self, _one_param_steps(nn.Rprop, {}, self.G), run(rprop, {"prev": 0.0, "size": 0.0}))

        def prox(p, g, t, st):
            st["a"] += g * g
            v = p - 0.1 * g / math.sqrt(st["a"])
            return math.copysign(max(abs(v) - 0.1 * 0.2, 0.0), v) / (1 + 0.1 * 0.3)
        close(self, _one_param_steps(nn.ProximalAdagrad, dict(learning_rate=0.1, l1=0.2, l2=0.3), self.G),
              run(prox, {"a": 0.1}))

        def adam(p, g, t, st):
            st["m"] = 0.9 * st["m"] + 0.1 * g
            st["v"] = 0.999 * st["v"] + 0.001 * g * g
            return p - 0.01 * math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * st["m"] / (math.sqrt(st["v"]) + 1e-8)
        for cls in (nn.LazyAdam, nn.AdamOffload):
            close(self, _one_param_steps(cls, dict(learning_rate=0.01), self.G), run(adam, {"m": 0.0, "v": 0.0}))

    def test_groups_weight_decay_and_learning_rate_tables(self):
        a, b = ms.Parameter(T([1.0]), name="a"), ms.Parameter(T([1.0]), name="b")
        opt = nn.Adadelta([{"params": [a], "lr": 0.0}, {"params": [b], "weight_decay": 0.5}], learning_rate=1.0)
        opt((T([1.0]), T([1.0])))
        self.assertEqual(a.tolist(), [1.0])  # a group's own learning rate of 0
        # b's gradient is 1 + 0.5 * 1 (weight decay): u = sqrt(1e-6) / sqrt(0.1 * 2.25 + 1e-6) * 1.5
        close(self, b, [1.0 - math.sqrt(1e-6) / math.sqrt(0.225 + 1e-6) * 1.5])
        p = ms.Parameter(T([0.0]), name="p")
        opt = nn.Rprop([p], learning_rate=[0.5, 0.1])  # the first step's size is the table's first
        opt((T([1.0]),))
        self.assertEqual(p.tolist(), [-0.5])
        p = ms.Parameter(T([0.0]), name="p")
        opt = nn.AdaMax([p], learning_rate=0.1, loss_scale=4.0)
        opt((T([4.0]),))  # the gradient is 1 after unscaling: p = -0.1 / 0.1 * 0.1 / (1 + 1e-8)
        close(self, p, [-0.1 / (1 + 1e-8)])

    def test_errors(self):
        p = [ms.Parameter(T([1.0]), name="p")]
        with self.assertRaisesRegex(TypeError, "For 'ASGD', the type of 'lambd' must be float"):
            nn.ASGD(p, lambd=1)
        with self.assertRaisesRegex(ValueError, "For 'AdaMax', the 'beta1' must be < 1.0"):
            nn.AdaMax(p, beta1=1.0)
        with self.assertRaisesRegex(ValueError, "For 'Adadelta', the 'rho' must be <= 1.0"):
            nn.Adadelta(p, rho=1.5)
        with self.assertRaisesRegex(TypeError, "For Rprop, etas must be a tuple"):
            nn.Rprop(p, etas=[0.5, 1.2])
        with self.assertRaisesRegex(ValueError, "etaplus must be greater than 1.0"):
            nn.Rprop(p, etas=(0.5, 1.0))
        with self.assertRaisesRegex(ValueError, "maximal step size should not be less than minimal"):
            nn.Rprop(p, step_sizes=(1.0, 0.5))
        with self.assertRaisesRegex(ValueError, "For 'ProximalAdagrad', the 'l1' must be >= 0.0"):
            nn.ProximalAdagrad(p, l1=-0.1)
        with self.assertRaisesRegex(TypeError, "For 'LazyAdam', the type of 'eps' must be float"):
            nn.LazyAdam(p, eps=1)
        with self.assertRaisesRegex(TypeError, "For 'AdamOffload', the type of 'use_nesterov' must be bool"):
            nn.AdamOffload(p, use_nesterov=1)

    def test_a_jitted_training_step_gives_the_eager_weights(self):
        kinds = {
            "ASGD": lambda ps: nn.ASGD(ps, learning_rate=0.05, t0=1.0),
            "AdaMax": lambda ps: nn.AdaMax(ps, learning_rate=0.01),
            "Adadelta": lambda ps: nn.Adadelta(ps, weight_decay=0.01),
            "Rprop": lambda ps: nn.Rprop(ps, learning_rate=0.01),
            "ProximalAdagrad": lambda ps: nn.ProximalAdagrad(ps, learning_rate=0.05, l1=0.001),
            "LazyAdam": lambda ps: nn.LazyAdam(ps, learning_rate=0.01),
            "AdamOffload": lambda ps: nn.AdamOffload(ps, learning_rate=0.01),
        }

        def train(kind, jit):
            ms.set_seed(7)
            net = nn.Dense(4, 3)
            params = net.trainable_params()
            opt = kinds[kind](params)
            loss_fn = nn.MSELoss()
            grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, params)

            def step(x, y):
                loss, grads = grad_fn(x, y)
                opt(grads)
                return loss

            run = ms.jit(step) if jit else step
            # step is one code object for every run: count what this run adds
            before = ms.jit_stats(run) if jit else None
            x = T([[0.5, -1.0, 2.0, 0.0], [1.0, 1.0, -0.5, 0.25]])
            y = T([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
            losses = [run(x, y).tolist() for _ in range(4)]
            added = None
            if jit:
                st = ms.jit_stats(run)
                added = [st[k] - before[k] for k in ("compiles", "cache_hits", "breaks")]
            return net, losses, added

        for kind in kinds:
            with self.subTest(optimizer=kind):
                eager, le, _ = train(kind, False)
                jitted, lj, added = train(kind, True)
                self.assertEqual(le, lj)
                self.assertLess(lj[-1], lj[0])
                for a, b in zip(eager.get_parameters(), jitted.get_parameters()):
                    self.assertEqual(flat(a), flat(b), "%s %s" % (kind, a.name))
                # one capture (compiles: under stress the eager runs fill the same code object's
                # cache too, so entries get evicted), three hits; none where capture is off
                self.assertEqual(added, [1, 3, 0] if CAPTURE_ON else [0, 0, 0])


class Layers(unittest.TestCase):
    def test_values(self):
        bd = nn.BiDense(2, 2, 1, weight_init=T([[[1.0, 2.0], [3.0, 4.0]]]), bias_init=T([0.5]))
        # x1 A x2 = [1, 1] [[1, 2], [3, 4]] [1, -1]^T = 4 - 6 = -2
        self.assertEqual(bd(T([[1.0, 1.0]]), T([[1.0, -1.0]])).tolist(), [[-1.5]])
        self.assertEqual(nn.BiDense(2, 3, 4, has_bias=False)(T([[[1.0, 0.0]]]), T([[[0.0, 1.0, 0.0]]])).shape, (1, 1, 4))
        x = T([[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]]])
        self.assertEqual(flat(nn.ChannelShuffle(2)(mint.reshape(x, (1, 6, 1)))), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0])
        lrn = nn.LRN(1, 1.0, 1.0, 1.0)(T([[[[1.0]], [[2.0]]]]))  # 1 / (1 + 5), 2 / (1 + 5)
        close(self, lrn, [1 / 6, 2 / 6])
        close(self, nn.LPPool1d(2, 2)(T([[[3.0, 4.0, 1.0, 1.0]]])), [5.0, math.sqrt(2.0)])
        close(self, nn.LPPool2d(1, 2)(T([[[[1.0, 2.0], [3.0, 4.0]]]])), [10.0])
        self.assertEqual(nn.MaxUnpool1d(2)(T([[[5.0, 7.0]]]), T([[[1, 2]]])).tolist(), [[[0.0, 5.0, 7.0, 0.0]]])
        self.assertEqual(nn.MaxUnpool2d(2)(T([[[[9.0]]]]), T([[[[3]]]])).tolist(), [[[[0.0, 0.0], [0.0, 9.0]]]])
        self.assertEqual(flat(nn.MaxUnpool3d(2)(T([[[[[9.0]]]]]), T([[[[[5]]]]]))), [0.0] * 5 + [9.0, 0.0, 0.0])
        self.assertEqual(nn.MaxUnpool2d(2)(T([[[[9.0]]]]), T([[[[4]]]]), (3, 3)).shape, (1, 1, 3, 3))
        r = nn.ResizeBilinear()(T([[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]]), size=(5, 5))
        close(self, r[0, 0, 0], [1.0, 1.8, 2.6, 3.4, 4.0], 1e-6)
        close(self, r[0, 0, :, 0], [1.0, 2.6, 4.2, 5.0, 5.0], 1e-6)
        self.assertEqual(nn.ResizeBilinear()(T([[[[1.0, 2.0]]]]), scale_factor=2).shape, (1, 1, 2, 4))
        self.assertEqual(nn.Upsample(scale_factor=2)(T([[[[1.0, 2.0]]]])).tolist(), [[[[1.0, 1.0, 2.0, 2.0]] * 2]])
        img = mint.reshape(mint.arange(18, dtype=ms.float32), (1, 2, 3, 3))
        u = nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])(img)
        self.assertEqual(u.shape, (1, 8, 2, 2))
        # depth (window row, window column, channel), channel fastest: the window at (0, 0)
        self.assertEqual([u[0, k, 0, 0].tolist() for k in range(8)], [0.0, 9.0, 1.0, 10.0, 3.0, 12.0, 4.0, 13.0])
        self.assertEqual(nn.Unfold([1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME")(img).shape, (1, 8, 2, 2))
        self.assertEqual(nn.Unfold([1, 2, 2, 1], [1, 2, 2, 1], [1, 2, 2, 1])(mint.ones(2, 3, 6, 6)).shape, (2, 12, 2, 2))
        self.assertEqual(nn.MatrixDiag()(T([[1.0, 2.0]])).tolist(), [[[1.0, 0.0], [0.0, 2.0]]])
        self.assertEqual(nn.MatrixDiagPart()(T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).tolist(), [1.0, 5.0])
        self.assertEqual(nn.MatrixSetDiag()(T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), T([-1.0, -2.0])).tolist(),
                         [[-1.0, 2.0, 3.0], [4.0, -2.0, 6.0]])
        self.assertEqual(nn.MatrixSetDiag()(T([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), T([0.0, 0.0])).tolist(),
                         [[0.0, 2.0], [3.0, 0.0], [5.0, 6.0]])
        self.assertEqual(nn.L1Regularizer(0.5)(T([[1.0, -2.0], [3.0, -4.0]])).tolist(), 5.0)
        r = nn.RReLU(0.25, 0.25)(T([-4.0, 2.0, 0.0]))
        self.assertEqual(r.tolist(), [-1.0, 2.0, 0.0])
        lin = nn.Linear(3, 2, weight_init="ones", bias_init="zeros")
        self.assertEqual(lin(T([[1.0, 2.0, 3.0]])).tolist(), [[6.0, 6.0]])
        self.assertIs(nn.Linear, mint.nn.Linear)
        d = nn.DropoutExt(0.5)
        d.set_train(False)
        self.assertEqual(d(T([1.0, 2.0])).tolist(), [1.0, 2.0])
        d2 = nn.Dropout2dExt(1.0)
        d2.set_train(True)
        self.assertEqual(d2(mint.ones(1, 2, 2, 2)).tolist(), [[[[0.0, 0.0]] * 2] * 2])
        p = ms.Parameter(T([0.0, 0.0]), name="pu")
        self.assertEqual(nn.ParameterUpdate(p)(T([1.0, 2.0])).tolist(), [1.0, 2.0])
        self.assertEqual(p.tolist(), [1.0, 2.0])
        out, grads = nn.Vjp(lambda a, b: a * b)(T([1.0, 2.0]), T([3.0, 4.0]), T([1.0, 0.5]))
        self.assertEqual((out.tolist(), [g.tolist() for g in grads]), ([3.0, 8.0], [[3.0, 2.0], [1.0, 1.0]]))
        out, j = nn.Jvp(lambda a, b: a * b)(T([1.0, 2.0]), T([3.0, 4.0]), (T([1.0, 0.0]), T([0.0, 1.0])))
        self.assertEqual((out.tolist(), j.tolist()), ([3.0, 8.0], [3.0, 2.0]))  # b da + a db
        out, j = nn.Jvp(lambda a: a * a * a)(T([1.0, 2.0]), T([1.0, 0.5]))
        self.assertEqual((out.tolist(), j.tolist()), ([1.0, 8.0], [3.0, 6.0]))  # 3 a^2 v
        self.assertEqual(nn.DistributedGradReducer([p])((T([1.0]),))[0].tolist(), [1.0])

    def test_time_distributed_and_embedding_lookup(self):
        dense = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
        x = T([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])  # (N=1, T=3, 2)
        for kw in ({}, {"reshape_with_axis": 0}):
            out = nn.TimeDistributed(dense, time_axis=1, **kw)(x)
            self.assertEqual(out.tolist(), [[[3.0], [7.0], [11.0]]], kw)
        self.assertEqual(nn.TimeDistributed(dense, time_axis=0)(mint.ones(4, 2, 2)).shape, (4, 2, 1))
        mf = nn.MultiFieldEmbeddingLookup(4, 2, 3, param_init="ones", operator="SUM")
        idx, vals, fid = T([[0, 1, 2]], ms.int32), T([[1.0, 2.0, 3.0]]), T([[0, 0, 2]], ms.int32)
        self.assertEqual(mf(idx, vals, fid).tolist(), [[[3.0, 3.0], [0.0, 0.0], [3.0, 3.0]]])
        mf = nn.MultiFieldEmbeddingLookup(4, 2, 3, param_init="ones", operator="MEAN")
        self.assertEqual(mf(idx, vals, fid).tolist(), [[[1.5, 1.5], [0.0, 0.0], [3.0, 3.0]]])
        mf = nn.MultiFieldEmbeddingLookup(4, 2, 3, param_init="ones", operator="MAX")
        self.assertEqual(mf(idx, vals, fid).tolist(), [[[2.0, 2.0], [0.0, 0.0], [3.0, 3.0]]])

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "For ChannelShuffle, the param `groups` must be int"):
            nn.ChannelShuffle(2.0)
        with self.assertRaisesRegex(ValueError, "must be larger than 0"):
            nn.ChannelShuffle(0)
        with self.assertRaisesRegex(ValueError, "number of channels must be divisible by groups"):
            nn.ChannelShuffle(4)(mint.ones(1, 6, 2))
        with self.assertRaisesRegex(ValueError, "For 'ResizeBilinear', the 'size' and 'scale' both none"):
            nn.ResizeBilinear()(mint.ones(1, 1, 2, 2))
        with self.assertRaisesRegex(ValueError, "both not none"):
            nn.ResizeBilinear()(mint.ones(1, 1, 2, 2), (3, 3), 2)
        with self.assertRaisesRegex(ValueError, "the format of 'ksizes' must be \\[1, ksize_row, ksize_col, 1\\]"):
            nn.Unfold([2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])
        with self.assertRaisesRegex(TypeError, "the 'layer' must be Cell or Primitive"):
            nn.TimeDistributed(lambda x: x, 1)
        with self.assertRaisesRegex(ValueError, "at least 3 dims"):
            nn.TimeDistributed(nn.ReLU(), 1)(mint.ones(2, 2))
        with self.assertRaisesRegex(TypeError, "For 'L1Regularizer', the type of 'scale' must be float or int"):
            nn.L1Regularizer("1")
        with self.assertRaisesRegex(ValueError, "the 'scale' must be greater than 0"):
            nn.L1Regularizer(0)
        with self.assertRaisesRegex(ValueError, "can not be INF or NAN"):
            nn.L1Regularizer(float("inf"))
        with self.assertRaisesRegex(ValueError, "the value of 'upper' must be greater than 'lower'"):
            nn.RReLU(0.5, 0.25)
        with self.assertRaisesRegex(ValueError, "the 'operator' must be 'SUM', 'MAX' or 'MEAN'"):
            nn.MultiFieldEmbeddingLookup(4, 2, 3, operator="MIN")
        with self.assertRaisesRegex(ValueError, "For 'Vjp', give the inputs of fn and then v"):
            nn.Vjp(lambda a: a)(T([1.0]))
        with self.assertRaisesRegex(TypeError, "For 'Jvp', 'fn' must be a Cell or a function"):
            nn.Jvp(3)
        with self.assertRaisesRegex(TypeError, "For 'ParameterUpdate', 'param' must be 'Parameter'"):
            nn.ParameterUpdate(T([1.0]))
        with self.assertRaisesRegex(ValueError, "must be in1_channels"):
            nn.BiDense(2, 3, 1)(mint.ones(1, 3), mint.ones(1, 3))
        with self.assertRaisesRegex(ValueError, "'indices' must have the shape of 'x'|must have"):
            nn.MaxUnpool2d(2)(mint.ones(1, 1, 2, 2), T([[[[0]]]]))

    def test_jitted_equals_eager(self):
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.bd = nn.BiDense(4, 4, 3)
                self.shuffle = nn.ChannelShuffle(2)
                self.lrn = nn.LRN(1)
                self.lp = nn.LPPool2d(2, 2)
                self.unpool = nn.MaxUnpool2d(2)
                self.resize = nn.ResizeBilinear()
                self.unfold = nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])
                self.td = nn.TimeDistributed(nn.Dense(4, 2), time_axis=1, reshape_with_axis=0)
                self.diag = nn.MatrixDiag()
                self.part = nn.MatrixDiagPart()
                self.setdiag = nn.MatrixSetDiag()
                self.l1 = nn.L1Regularizer(0.1)
                self.lin = nn.Linear(4, 2)

            def construct(self, x, idx):
                img = mint.reshape(x, (1, 4, 2, 2))
                return (self.bd(x, x), self.shuffle(img), self.lrn(img), self.lp(mint.abs(img)),
                        self.unpool(img, idx), self.resize(img, size=(3, 5)), self.unfold(img),
                        self.td(mint.reshape(x, (2, 2, 4))), self.diag(x), self.part(x),
                        self.setdiag(x, x[:, 0]), self.l1(x), self.lin(x))

        ms.set_seed(3)
        net = Net()
        x = T([[1.0, -2.0, 3.0, 0.5], [0.25, 4.0, -1.0, 2.0], [1.5, 0.0, -3.0, 1.0], [2.0, 1.0, 0.5, -0.5]])
        idx = T([[[[0, 3], [1, 2]], [[2, 0], [3, 1]], [[1, 1], [0, 0]], [[3, 2], [1, 0]]]])
        want = values(net(x, idx))
        jf = ms.jit(net)
        self.assertEqual(values(jf(x, idx)), want)
        self.assertEqual(values(jf(x, idx)), want)
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, jf)


if __name__ == "__main__":
    unittest.main()
