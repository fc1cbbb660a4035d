"""The API-breadth names (mint's remaining top level, mindspore.numpy's histograms / interp /
convolve / gradient / grids, the initializers Identity / Sparse / Dirac / Orthogonal /
VarianceScaling, the optimizers of nn/optim2.py and the layers of nn/layers4.py) against numpy and
PyTorch on random float32 data. Where MindSpore's formula differs from torch's (AdaMax's eps,
Adam's eps, ProximalAdagrad, which torch lacks) the reference is MindSpore's formula in numpy."""
import math
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_torch, require_numpy

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import mint, nn
import pijit.numpy as mnp
from pijit.common import initializer as init


def rand(shape, seed, lo=-2.0, hi=2.0):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype("float32")


def T(a):
    return pj.Tensor(np.asarray(a))


class Case(unittest.TestCase):
    def setUp(self):
        require_numpy(self, np)
        require_torch(self, torch)
        torch.set_num_threads(1)

    def check(self, got, want, rtol=1e-5, atol=1e-6, msg="", dtype=True):
        if isinstance(want, (tuple, list)):
            self.assertEqual(len(got), len(want), msg)
            for g, w in zip(got, want):
                self.check(g, w, rtol, atol, msg, dtype)
            return
        w = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
        g = got.asnumpy() if isinstance(got, pj.Tensor) or hasattr(got, "asnumpy") else np.asarray(got)
        self.assertEqual(g.shape, w.shape, msg)
        if dtype:
            self.assertEqual(str(g.dtype), str(w.dtype), msg)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=msg)


class MintAgainstTorch(Case):
    def test_reused_and_wrapped_functions(self):
        x, y = rand((4, 3, 5), 1), rand((4, 3, 5), 2)
        px, tx = T(x), torch.from_numpy(x)
        m, v = rand((3, 4), 3), rand((4,), 4)
        self.check(mint.addmv(T(v[:3]), T(m), T(v), beta=0.5, alpha=2),
                   torch.addmv(torch.from_numpy(v[:3]), torch.from_numpy(m), torch.from_numpy(v), beta=0.5, alpha=2))
        self.check(mint.mv(T(m), T(v)), torch.mv(torch.from_numpy(m), torch.from_numpy(v)))
        self.assertIs(mint.allclose(px, T(x + 1e-9)), True)
        self.assertIs(mint.allclose(px, T(y)), False)
        self.check(mint.cdist(px, T(y), 1.5), torch.cdist(tx, torch.from_numpy(y), 1.5), rtol=1e-4)
        self.check(mint.count_nonzero(T((x > 0.5) * x), dim=(0, 2)),
                   torch.count_nonzero(torch.from_numpy((x > 0.5) * x), dim=(0, 2)))
        self.check(mint.cross(T(m[:3, :3]), T(m[:3, 1:]), dim=0),
                   torch.cross(torch.from_numpy(m[:3, :3]), torch.from_numpy(m[:3, 1:]), dim=0))
        for name in ("cummax", "cummin"):
            got, want = getattr(mint, name)(px, 2), getattr(torch, name)(tx, 2)
            self.check(got[0], want.values, msg=name)
            self.check(got[1], want.indices, msg=name)
        self.check(mint.cumprod(px, 1), torch.cumprod(tx, 1), rtol=1e-5)
        self.check(mint.diff(px, 2, dim=1, prepend=T(y[:, :1])),
                   torch.diff(tx, 2, dim=1, prepend=torch.from_numpy(y[:, :1])))
        self.check(mint.dstack([T(m), T(m)]), torch.dstack([torch.from_numpy(m)] * 2))
        self.check(mint.einsum("ijk,ilk->ijl", px, T(y)), torch.einsum("ijk,ilk->ijl", tx, torch.from_numpy(y)), rtol=1e-5)
        self.check(mint.histc(px, 7, -1.0, 1.0), torch.histc(tx, 7, -1.0, 1.0))
        self.check(mint.median(px), torch.median(tx))
        got, want = mint.median(px, 2, keepdim=True), torch.median(tx, 2, keepdim=True)
        self.check(got, (want.values, want.indices))
        self.check(mint.meshgrid(T(v), T(v[:2])), torch.meshgrid(torch.from_numpy(v), torch.from_numpy(v[:2]), indexing="ij"))
        self.check(mint.meshgrid(T(v), T(v[:2]), indexing="xy"),
                   torch.meshgrid(torch.from_numpy(v), torch.from_numpy(v[:2]), indexing="xy"))
        xn = x.copy()
        xn[0, 0, :2] = np.nan
        self.check(mint.nansum(T(xn), 2, keepdim=True), torch.nansum(torch.from_numpy(xn), 2, keepdim=True), rtol=1e-5)
        for p in ("fro", 1, 3, 0.5, float("inf"), float("-inf"), 0):
            self.check(mint.norm(px, p, dim=2), torch.norm(tx, p, dim=2), rtol=1e-5, msg=str(p))
            self.check(mint.norm(px, p), torch.norm(tx, p), rtol=1e-5, msg=str(p))
        self.check(mint.ravel(px), torch.ravel(tx))
        self.check(mint.searchsorted(T(np.sort(v)), T(x[0]), right=True),
                   torch.searchsorted(torch.from_numpy(np.sort(v)), torch.from_numpy(x[0]), right=True))
        self.check(mint.select(px, 1, -1), torch.select(tx, 1, -1))
        for name in ("std_mean", "var_mean"):
            for kw in ({}, {"correction": 0, "keepdim": True}):
                self.check(getattr(mint, name)(px, (0, 2), **kw), getattr(torch, name)(tx, (0, 2), **kw),
                           rtol=1e-5, msg=name)
        self.check(mint.t(T(m)), torch.t(torch.from_numpy(m)))
        self.check(mint.trace(T(m)), torch.trace(torch.from_numpy(m)))
        self.check(mint.unbind(px, 1), torch.unbind(tx, 1))
        seq = np.array([1, 1, 2, 2, 3, 1, 1, 2], np.int64)
        self.check(mint.unique_consecutive(T(seq), True, True),
                   torch.unique_consecutive(torch.from_numpy(seq), True, True))
        self.check(mint.bincount(T(seq), minlength=6), torch.bincount(torch.from_numpy(seq), minlength=6))

    def test_scatter(self):
        inp = rand((3, 5), 5)
        idx = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
        uniq = np.array([[1, 3, 2], [4, 0, 1]])  # (repeated positions are undefined in MindSpore)
        src = rand((2, 5), 6)
        tinp, tidx, tsrc = torch.from_numpy(inp), torch.from_numpy(idx), torch.from_numpy(src)
        self.check(mint.scatter(T(inp), 1, T(uniq), T(src)),
                   tinp.scatter(1, torch.from_numpy(uniq), tsrc))
        self.check(mint.scatter(T(inp), 0, T(idx[:1]), T(src)), tinp.scatter(0, tidx[:1], tsrc))
        self.check(mint.scatter(T(inp), 1, T(idx), src=T(src), reduce="add"),
                   tinp.scatter(1, tidx, tsrc, reduce="add"))
        self.check(mint.scatter(T(inp), 1, T(idx[:, :2] * 2), value=2.5), tinp.scatter(1, tidx[:, :2] * 2, 2.5))
        self.check(mint.scatter(T(inp), 0, T(idx[:1]), 1.5), tinp.scatter(0, tidx[:1], 1.5))

    def test_conv2d(self):
        x, w, b = rand((2, 4, 7, 6), 7), rand((6, 2, 3, 3), 8), rand((6,), 9)
        tx, tw, tb = map(torch.from_numpy, (x, w, b))
        for kw in ({"padding": 1, "stride": 2, "groups": 2}, {"padding": "same", "dilation": 2, "groups": 2},
                   {"padding": "valid", "groups": 2}, {"padding": (1, 2), "stride": (2, 1), "groups": 2}):
            self.check(mint.conv2d(T(x), T(w), T(b), **kw), torch.nn.functional.conv2d(tx, tw, tb, **kw),
                       rtol=1e-4, atol=1e-4, msg=str(kw))

    def test_batch_norm_statistics(self):
        # torch has these for CUDA only: the reference is their definition in numpy
        x = rand((4, 3, 5, 2), 10)
        eps = 1e-5
        mean, invstd = mint.batch_norm_stats(T(x), eps)
        want_m, want_v = x.mean((0, 2, 3)), x.var((0, 2, 3))
        self.check(mean, want_m)
        self.check(invstd, 1 / np.sqrt(want_v + eps), rtol=1e-5)
        w, b = rand((3,), 11), rand((3,), 12)
        sh = (1, 3, 1, 1)
        self.check(mint.batch_norm_elemt(T(x), T(w), T(b), mean, invstd, eps),
                   (x - want_m.reshape(sh)) * (1 / np.sqrt(want_v + eps)).reshape(sh) * w.reshape(sh) + b.reshape(sh),
                   rtol=1e-5, atol=1e-5)
        ms, inv, c = rand((2, 3), 13), rand((2, 3), 14, 0.5, 2.0), np.array([4.0, 6.0], np.float32)
        rm, rv = pj.Parameter(T(np.zeros(3, np.float32)), name="rm"), pj.Parameter(T(np.ones(3, np.float32)), name="rv")
        gm, ginv = mint.batch_norm_gather_stats_with_counts(T(x), T(ms), T(inv), rm, rv, 0.1, eps, T(c))
        n = c.sum()
        wm = (ms * c[:, None]).sum(0) / n
        wv = ((1 / inv ** 2 - eps + (ms - wm) ** 2) * c[:, None]).sum(0) / n
        self.check(gm, wm, rtol=1e-5)
        self.check(ginv, 1 / np.sqrt(wv + eps), rtol=1e-5)
        self.check(rm, 0.1 * wm, rtol=1e-5)
        self.check(rv, 0.9 + 0.1 * wv * n / (n - 1), rtol=1e-5)

    def test_random_draws_have_their_distribution(self):
        pj.set_seed(3)
        p = T(np.full((20000,), 0.3, np.float32))
        b = mint.bernoulli(p).asnumpy()
        self.assertEqual(b.dtype, np.float32)
        self.assertTrue(set(np.unique(b)) <= {0.0, 1.0})
        self.assertAlmostEqual(b.mean(), 0.3, delta=0.02)
        z = mint.normal(2.0, 3.0, (40000,)).asnumpy()
        self.assertAlmostEqual(z.mean(), 2.0, delta=0.1)
        self.assertAlmostEqual(z.std(), 3.0, delta=0.1)
        z = mint.normal(T(np.full((40000,), -1.0, np.float32)), 0.5).asnumpy()
        self.assertAlmostEqual(z.mean(), -1.0, delta=0.03)
        self.assertAlmostEqual(z.std(), 0.5, delta=0.03)
        r = mint.randint_like(T(np.zeros((5000,), np.float32)), 3, 7).asnumpy()
        self.assertEqual((r.dtype, r.min(), r.max()), (np.int64, 3, 6))
        self.assertEqual(sorted(mint.randperm(9).tolist()), list(range(9)))
        s = mint.multinomial(T(np.array([[0.0, 1.0, 0.0, 3.0]], np.float32)), 2).asnumpy()
        self.assertEqual(sorted(s[0].tolist()), [1, 3])
        w = mint.multinomial(T(np.array([0.0, 1.0, 0.0, 3.0], np.float32)), 4000, True).asnumpy()
        self.assertAlmostEqual((w == 3).mean(), 0.75, delta=0.03)
        self.assertEqual(set(np.unique(w)), {1, 3})

    def test_polar(self):
        r, a = rand((5,), 15, 0.1, 2.0), rand((5,), 16, -3.0, 3.0)
        self.check(mint.polar(T(r), T(a)), torch.polar(torch.from_numpy(r), torch.from_numpy(a)), rtol=1e-5, atol=1e-6)


class NumpyAgainstNumpy(Case):
    def test_histograms(self):
        x, y = rand((200,), 20), rand((200,), 21)
        w = rand((200,), 22, 0.0, 1.0)
        for kw in ({}, {"bins": 7, "range": (-1.0, 1.5)}, {"bins": [-2.0, -0.3, 0.0, 0.1, 2.0]},
                   {"bins": 4, "weights": w}, {"bins": 5, "density": True}, {"bins": 3, "weights": w, "density": True}):
            args = dict(kw)
            if "weights" in args:
                args["weights"] = T(args["weights"])
            h, e = mnp.histogram(T(x), **args)
            nh, ne = np.histogram(x, **kw)
            self.check(h, nh, rtol=1e-5, dtype=False, msg=str(kw))
            self.check(e, ne.astype(np.float32), rtol=1e-6, dtype=False, msg=str(kw))
            self.assertEqual(str(h.dtype), "Float32" if ("weights" in kw or kw.get("density")) else "Int32")
        h = mnp.histogram(T(np.array([1, 1, 2, 5], np.int32)))[0]
        self.check(h, np.histogram(np.array([1, 1, 2, 5]))[0], dtype=False)
        H, xe, ye = mnp.histogram2d(T(x), T(y), bins=(3, 5), weights=T(w))
        nH, nxe, nye = np.histogram2d(x, y, bins=(3, 5), weights=w)
        self.check(H, nH, rtol=1e-5, dtype=False)
        self.check((xe, ye), (nxe.astype(np.float32), nye.astype(np.float32)), dtype=False)
        s = np.stack([x, y, x * y], 1)
        H, E = mnp.histogramdd(T(s), bins=(2, 3, 4), density=True)
        nH, nE = np.histogramdd(s, bins=(2, 3, 4), density=True)
        self.check(H, nH, rtol=1e-4, dtype=False)
        self.check(E, [e.astype(np.float32) for e in nE], dtype=False)
        self.check(mnp.bincount(T(np.array([0, 3, 3, 1], np.int32)), T(np.array([0.5, 1.0, 2.0, 1.0], np.float32)), 6),
                   np.bincount([0, 3, 3, 1], [0.5, 1.0, 2.0, 1.0], 6), dtype=False)

    def test_convolve_correlate_interp(self):
        a, v = rand((9,), 30), rand((4,), 31)
        for mode in ("full", "same", "valid"):
            self.check(mnp.convolve(T(a), T(v), mode), np.convolve(a, v, mode), rtol=1e-5, atol=1e-6, msg=mode)
            self.check(mnp.convolve(T(v), T(a), mode), np.convolve(v, a, mode), rtol=1e-5, atol=1e-6, msg=mode)
            self.check(mnp.correlate(T(a), T(v), mode), np.correlate(a, v, mode), rtol=1e-5, atol=1e-6, msg=mode)
            self.check(mnp.correlate(T(v), T(a), mode), np.correlate(v, a, mode), rtol=1e-5, atol=1e-6, msg=mode)
        xp = np.cumsum(rand((6,), 32, 0.1, 1.0))
        fp = rand((6,), 33)
        xq = rand((30,), 34, -0.5, 5.0)
        xq[:2] = xp[[0, -1]]
        self.check(mnp.interp(T(xq), T(xp), T(fp)), np.interp(xq, xp, fp).astype(np.float32), rtol=1e-5, atol=1e-6)
        self.check(mnp.interp(T(xq), T(xp), T(fp), left=-7.0, right=8.0),
                   np.interp(xq, xp, fp, -7.0, 8.0).astype(np.float32), rtol=1e-5, atol=1e-6)

    def test_gradient_unwrap_cumprod_grids(self):
        f = rand((5, 7), 40)
        self.check(mnp.gradient(T(f)), np.gradient(f), rtol=1e-5, atol=1e-6)
        self.check(mnp.gradient(T(f), 0.5, edge_order=2), np.gradient(f, 0.5, edge_order=2), rtol=1e-5, atol=1e-5)
        cx = np.cumsum(rand((7,), 41, 0.2, 1.0))
        self.check(mnp.gradient(T(f), 2.0, T(cx)), np.gradient(f, 2.0, cx), rtol=1e-4, atol=1e-5)
        self.check(mnp.gradient(T(f), axis=1), np.gradient(f, axis=1), rtol=1e-5, atol=1e-6)
        ph = np.cumsum(rand((40,), 42, -4.0, 4.0))
        wrapped = ((ph + np.pi) % (2 * np.pi) - np.pi).astype(np.float32)
        self.check(mnp.unwrap(T(wrapped)), np.unwrap(wrapped), rtol=1e-5, atol=1e-4)
        self.check(mnp.unwrap(T(np.stack([wrapped, wrapped * 0.5])), axis=1),
                   np.unwrap(np.stack([wrapped, wrapped * 0.5]), axis=1), rtol=1e-5, atol=1e-4)
        c = rand((3, 4), 43)
        self.check(mnp.cumprod(T(c)), np.cumprod(c), rtol=1e-5)
        self.check(mnp.cumprod(T(c), axis=0), np.cumprod(c, axis=0), rtol=1e-5)
        self.check(mnp.mgrid[0:3, 1:5:2], np.mgrid[0:3, 1:5:2].astype(np.int32))
        self.check(mnp.mgrid[-1:1:5j, 0:1:3j], np.mgrid[-1:1:5j, 0:1:3j].astype(np.float32), rtol=1e-6)
        self.check(mnp.ogrid[0:3, 0:4], [g.astype(np.int32) for g in np.ogrid[0:3, 0:4]])
        self.check(mnp.mgrid[0:1:0.25], np.mgrid[0:1:0.25].astype(np.float32))


class Initializers(Case):
    def test_values(self):
        self.check(init.initializer(init.Identity(), (3, 5)), np.eye(3, 5, dtype=np.float32))
        w = torch.empty(6, 4, 3, 3)
        torch.nn.init.dirac_(w, 2)
        self.check(init.initializer(init.Dirac(2), (6, 4, 3, 3)), w)
        w = torch.empty(4, 2, 5)
        torch.nn.init.dirac_(w)
        self.check(init.initializer("dirac", (4, 2, 5)), w)
        for shape in ((3, 8), (8, 2, 2), (5, 5)):
            q = init.initializer(init.Orthogonal(1.5), shape).asnumpy().reshape(shape[0], -1)
            small = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
            np.testing.assert_allclose(small, 2.25 * np.eye(small.shape[0]), atol=1e-5)
        pj.set_seed(1)
        s = init.initializer(init.Sparse(0.3, 2.0), (10, 400)).asnumpy()
        self.assertEqual(((s == 0).sum(0) == 3).all(), True)
        self.assertAlmostEqual(s[s != 0].std(), 2.0, delta=0.1)
        for dist, mode in (("untruncated_normal", "fan_in"), ("uniform", "fan_out"),
                           ("truncated_normal", "fan_avg")):
            v = init.initializer(init.VarianceScaling(3.0, mode, dist), (400, 60)).asnumpy()
            fan_in, fan_out = 60, 400
            n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
            self.assertAlmostEqual(v.var(), 3.0 / n, delta=0.05 * 3.0 / n, msg=dist)
            if dist == "uniform":
                self.assertLessEqual(np.abs(v).max(), math.sqrt(9.0 / n))
            if dist == "truncated_normal":
                self.assertLessEqual(np.abs(v).max(), 2 * math.sqrt(3.0 / n) / 0.87962566103423978 + 1e-6)


def _steps(cls, kw, tcls=None, tkw=None, steps=5, seed=0):
    """The parameters after `steps` updates by pijit's optimizer and, if given, torch's."""
    r = np.random.RandomState(seed)
    w0 = [r.randn(3, 4).astype(np.float32), r.randn(4).astype(np.float32)]
    grads = [[r.randn(3, 4).astype(np.float32), r.randn(4).astype(np.float32)] for _ in range(steps)]
    ps = [pj.Parameter(T(w.copy()), name="w%d" % i) for i, w in enumerate(w0)]
    opt = cls(ps, **kw)
    for g in grads:
        opt(tuple(T(x) for x in g))
    got = [p.asnumpy() for p in ps]
    if tcls is None:
        return got, w0, grads
    tps = [torch.nn.Parameter(torch.tensor(w.copy())) for w in w0]
    topt = tcls(tps, **tkw)
    for g in grads:
        for p, x in zip(tps, g):
            p.grad = torch.tensor(x)
        topt.step()
    return got, [p.detach().numpy() for p in tps]


class Optimizers(Case):
    def test_against_torch(self):
        cases = [
            (nn.ASGD, dict(learning_rate=0.05, lambd=0.01, alpha=0.75, t0=2.0, weight_decay=0.1),
             torch.optim.ASGD, dict(lr=0.05, lambd=0.01, alpha=0.75, t0=2.0, weight_decay=0.1)),
            (nn.Adadelta, dict(learning_rate=0.5, rho=0.8, epsilon=1e-6, weight_decay=0.01),
             torch.optim.Adadelta, dict(lr=0.5, rho=0.8, eps=1e-6, weight_decay=0.01)),
            (nn.Rprop, dict(learning_rate=0.01, etas=(0.4, 1.3), step_sizes=(1e-3, 0.05)),
             torch.optim.Rprop, dict(lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-3, 0.05))),
            # AdaMax: torch adds eps inside the max, MindSpore to the denominator; equal here to
            # well below float32 rounding as |g| >> eps
            (nn.AdaMax, dict(learning_rate=0.01, beta1=0.8, beta2=0.95),
             torch.optim.Adamax, dict(lr=0.01, betas=(0.8, 0.95), eps=1e-8)),
        ]
        for cls, kw, tcls, tkw in cases:
            got, want = _steps(cls, kw, tcls, tkw)
            self.check(got, want, rtol=1e-5, atol=1e-6, msg=cls.__name__)

    def test_against_mindspore_formulas(self):
        got, w0, grads = _steps(nn.ProximalAdagrad, dict(learning_rate=0.1, accum=0.2, l1=0.05, l2=0.1))
        for k, w in enumerate(w0):
            p, a = w.astype(np.float64), np.full(w.shape, 0.2)
            for g in grads:
                g = g[k].astype(np.float64)
                a = a + g * g
                v = p - 0.1 * g / np.sqrt(a)
                p = np.sign(v) * np.maximum(np.abs(v) - 0.1 * 0.05, 0) / (1 + 0.1 * 0.1)
            np.testing.assert_allclose(got[k], p, rtol=1e-5, atol=1e-6)
        for cls in (nn.LazyAdam, nn.AdamOffload):
            got, w0, grads = _steps(cls, dict(learning_rate=0.01, beta1=0.8, beta2=0.9, eps=1e-6))
            for k, w in enumerate(w0):
                p, m, v = w.astype(np.float64), 0.0, 0.0
                for t, g in enumerate(grads, 1):
                    g = g[k].astype(np.float64)
                    m, v = 0.8 * m + 0.2 * g, 0.9 * v + 0.1 * g * g
                    p = p - 0.01 * math.sqrt(1 - 0.9 ** t) / (1 - 0.8 ** t) * m / (np.sqrt(v) + 1e-6)
                np.testing.assert_allclose(got[k], p, rtol=1e-5, atol=1e-6, err_msg=cls.__name__)
        got, w0, grads = _steps(nn.AdaMax, dict(learning_rate=0.01, beta1=0.8, beta2=0.95, eps=1e-3))
        for k, w in enumerate(w0):
            p, m, u = w.astype(np.float64), 0.0, 0.0
            for t, g in enumerate(grads, 1):
                g = g[k].astype(np.float64)
                m, u = 0.8 * m + 0.2 * g, np.maximum(0.95 * u, np.abs(g))
                p = p - 0.01 / (1 - 0.8 ** t) * m / (u + 1e-3)
            np.testing.assert_allclose(got[k], p, rtol=1e-5, atol=1e-6)


class Layers(Case):
    def test_against_torch(self):
        bd = nn.BiDense(3, 4, 5)
        tb = torch.nn.Bilinear(3, 4, 5)
        tb.weight.data = torch.tensor(bd.weight.asnumpy())
        tb.bias.data = torch.tensor(bd.bias.asnumpy())
        a, b = rand((2, 6, 3), 50), rand((2, 6, 4), 51)
        self.check(bd(T(a), T(b)), tb(torch.tensor(a), torch.tensor(b)), rtol=1e-5, atol=1e-5)
        x = rand((2, 6, 3, 3), 52)
        self.check(nn.ChannelShuffle(3)(T(x)), torch.nn.ChannelShuffle(3)(torch.tensor(x)))
        # MindSpore's alpha multiplies the plain sum; torch's is divided by the window size
        self.check(nn.LRN(2, 1.5, 0.5, 0.75)(T(x)),
                   torch.nn.LocalResponseNorm(5, 0.5 * 5, 0.75, 1.5)(torch.tensor(x)), rtol=1e-5)
        xl = rand((2, 3, 9), 53, 0.1, 2.0)
        self.check(nn.LPPool1d(2, 3, 2)(T(xl)), torch.nn.LPPool1d(2, 3, 2)(torch.tensor(xl)), rtol=1e-5)
        x2 = rand((2, 3, 8, 8), 54, 0.1, 2.0)
        self.check(nn.LPPool2d(3, (2, 3), 2)(T(x2)), torch.nn.LPPool2d(3, (2, 3), 2)(torch.tensor(x2)), rtol=1e-5)
        for nd in (1, 2, 3):
            xx = rand((2, 3) + (6,) * nd, 55 + nd)
            pool = getattr(torch.nn, "MaxPool%dd" % nd)(2, 2, return_indices=True)
            y, i = pool(torch.tensor(xx))
            want = getattr(torch.nn, "MaxUnpool%dd" % nd)(2, 2)(y, i)
            got = getattr(nn, "MaxUnpool%dd" % nd)(2, 2)(T(y.numpy()), T(i.numpy()))
            self.check(got, want, msg="unpool%d" % nd)
            big = (2, 3) + (7,) * nd
            self.check(getattr(nn, "MaxUnpool%dd" % nd)(2)(T(y.numpy()), T(i.numpy()), big),
                       getattr(torch.nn, "MaxUnpool%dd" % nd)(2)(y, i, big), msg="unpool%d size" % nd)
        self.check(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)(T(x2)),
                   torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)(torch.tensor(x2)), rtol=1e-5, atol=1e-6)
        self.check(nn.ResizeBilinear()(T(x2), size=(5, 7), align_corners=True),
                   torch.nn.functional.interpolate(torch.tensor(x2), (5, 7), mode="bilinear", align_corners=True),
                   rtol=1e-5, atol=1e-6)
        self.check(nn.ResizeBilinear(half_pixel_centers=True)(T(x2), scale_factor=2),
                   torch.nn.functional.interpolate(torch.tensor(x2), scale_factor=2, mode="bilinear", align_corners=False),
                   rtol=1e-5, atol=1e-6)
        xu = rand((2, 3, 6, 5), 60)
        got = nn.Unfold([1, 2, 3, 1], [1, 2, 1, 1], [1, 2, 1, 1])(T(xu))
        t = torch.nn.functional.unfold(torch.tensor(xu), (2, 3), dilation=(2, 1), stride=(2, 1))
        want = t.numpy().reshape(2, 3, 6, 2, 3).transpose(0, 2, 1, 3, 4).reshape(2, 18, 2, 3)
        self.check(got, want)
        m = rand((2, 3, 4), 61)
        self.check(nn.MatrixDiagPart()(T(m)), torch.diagonal(torch.tensor(m), 0, -2, -1))
        self.check(nn.MatrixDiag()(T(m)), torch.diag_embed(torch.tensor(m)))
        d = rand((2, 3), 62)
        ref = torch.tensor(m).clone()
        torch.diagonal(ref, 0, -2, -1).copy_(torch.tensor(d))
        self.check(nn.MatrixSetDiag()(T(m), T(d)), ref)
        self.check(nn.L1Regularizer(0.3)(T(m)), np.float32(0.3 * np.abs(m).sum()), rtol=1e-5)
        r = nn.RReLU(0.2, 0.4)(T(x)).asnumpy()
        neg = x < 0
        slope = r[neg] / x[neg]
        self.assertTrue(((slope >= 0.2 - 1e-6) & (slope <= 0.4 + 1e-6)).all())
        self.check(r[~neg], x[~neg])


if __name__ == "__main__":
    unittest.main()
