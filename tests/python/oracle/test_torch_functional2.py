"""mindspore.ops functional names of issue 42 (pijit/ops/functional2.py) against PyTorch and numpy
on random inputs of random sizes: flips and rolls, triangles, splits, diagonals, the products,
elementwise math, norms and distances, scans (cummax, cumprod), activations, losses, segment
sums and scatters. Values come from seeded numpy draws; torch is Debian's python3-torch."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_torch

try:
    import numpy as np
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import ops


class Case(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)
        self.rs = np.random.RandomState(42)

    def rand(self, *shape, lo=-2.0, hi=2.0):
        return self.rs.uniform(lo, hi, size=shape).astype("float32")

    def dims(self, n, lo=1, hi=6):
        return tuple(int(v) for v in self.rs.randint(lo, hi, size=n))

    def check(self, got, want, rtol=1e-5, atol=1e-6, msg=""):
        if isinstance(got, (tuple, list)):
            self.assertEqual(len(got), len(want), msg)
            for g, w in zip(got, want):
                self.check(g, w, rtol, atol, msg)
            return
        if isinstance(want, torch.Tensor):
            want = want.detach().numpy()
        np.testing.assert_allclose(np.asarray(got.asnumpy() if hasattr(got, "asnumpy") else got), want,
                                   rtol=rtol, atol=atol, err_msg=msg)


class Shapes(Case):
    def test_flip_roll_rot_tri(self):
        for trial in range(5):
            shape = self.dims(3)
            x = self.rand(*shape)
            tx, px = torch.from_numpy(x), pj.Tensor(x)
            self.check(ops.flip(px, (0, 2)), torch.flip(tx, (0, 2)), msg=str(shape))
            s = int(self.rs.randint(-7, 8))
            self.check(ops.roll(px, s), torch.roll(tx, s), msg=str(shape))
            self.check(ops.roll(px, (s, 1), (1, 2)), torch.roll(tx, (s, 1), (1, 2)), msg=str(shape))
            for k in range(-1, 5):
                self.check(ops.rot90(px, k, (0, 2)), torch.rot90(tx, k, (0, 2)), msg="k %d" % k)
            d = int(self.rs.randint(-3, 4))
            self.check(ops.tril(px, d), torch.tril(tx, d))
            self.check(ops.triu(px, d), torch.triu(tx, d))

    def test_splits_diagonals_moves(self):
        for trial in range(5):
            shape = self.dims(3, 2, 8)
            x = self.rand(*shape)
            tx, px = torch.from_numpy(x), pj.Tensor(x)
            for n in (1, 2, 3, 5):
                self.check(ops.tensor_split(px, n, 1), torch.tensor_split(tx, n, 1), msg="%s %d" % (shape, n))
                self.check(ops.chunk(px, n, 2), torch.chunk(tx, n, 2), msg="%s %d" % (shape, n))
            cuts = sorted(int(v) for v in self.rs.randint(0, shape[0] + 1, size=2))
            self.check(ops.tensor_split(px, cuts, 0), torch.tensor_split(tx, cuts, 0))
            for off in (-2, 0, 1, 3):
                self.check(ops.diagonal(px, off, 2, 0), torch.diagonal(tx, off, 2, 0), msg="off %d" % off)
            self.check(ops.movedim(px, (0, 2), (1, 0)), torch.movedim(tx, (0, 2), (1, 0)))
            v = self.rand(shape[0])
            self.check(ops.diagflat(pj.Tensor(v), 2), torch.diagflat(torch.from_numpy(v), 2))
            self.check(ops.diag(pj.Tensor(v)), torch.diag(torch.from_numpy(v)))
            self.check(ops.repeat_interleave(px, 3, 1), torch.repeat_interleave(tx, 3, 1))


class Products(Case):
    def test_products(self):
        for trial in range(4):
            b, n, k, m = self.dims(4, 1, 7)
            a1, a2, c = self.rand(b, n, k), self.rand(b, k, m), self.rand(b, n, m)
            t1, t2, tc = map(torch.from_numpy, (a1, a2, c))
            p1, p2, pc = map(pj.Tensor, (a1, a2, c))
            self.check(ops.bmm(p1, p2), torch.bmm(t1, t2), 1e-5, 1e-5)
            self.check(ops.baddbmm(pc, p1, p2, 0.5, 2.0), torch.baddbmm(tc, t1, t2, beta=0.5, alpha=2.0), 1e-5, 1e-5)
            self.check(ops.addbmm(pc[0], p1, p2, beta=0.5, alpha=2.0), torch.addbmm(tc[0], t1, t2, beta=0.5, alpha=2.0), 1e-5, 1e-4)
            self.check(ops.addmm(pc[0], p1[0], p2[0], beta=2, alpha=0.5), torch.addmm(tc[0], t1[0], t2[0], beta=2, alpha=0.5), 1e-5, 1e-5)
            self.check(ops.tensor_dot(p1, p2, ((0, 2), (0, 1))), torch.tensordot(t1, t2, ((0, 2), (0, 1))), 1e-5, 1e-4)
            self.check(ops.inner(p1, p1), torch.inner(t1, t1), 1e-5, 1e-4)
            self.check(ops.kron(p1[0], p2[0]), torch.kron(t1[0], t2[0]), 1e-5, 1e-6)
            self.check(ops.outer(p1[0, 0], p2[0, 0]), torch.outer(t1[0, 0], t2[0, 0]))
            self.check(ops.mv(p1[0], p2[0, :, 0]), torch.mv(t1[0], t2[0, :, 0]), 1e-5, 1e-5)
            # batch_dot of (B, N, K) and (B, K, M): the per-sample matrix product
            self.check(ops.batch_dot(p1, p2), torch.bmm(t1, t2), 1e-5, 1e-5)
            x3, y3 = self.rand(b, 3, n), self.rand(b, 3, n)
            self.check(ops.cross(pj.Tensor(x3), pj.Tensor(y3), 1), torch.cross(torch.from_numpy(x3), torch.from_numpy(y3), 1), 1e-5, 1e-5)


class Elementwise(Case):
    def test_unary_and_binary(self):
        x = self.rand(64, lo=-3, hi=3)
        y = self.rand(64, lo=0.5, hi=3) * np.where(self.rs.rand(64) < 0.5, -1, 1).astype("float32")
        tx, ty, px, py = torch.from_numpy(x), torch.from_numpy(y), pj.Tensor(x), pj.Tensor(y)
        pos = np.abs(x) + 1.0
        for name, got, want in [
            ("exp2", ops.exp2(px), torch.exp2(tx)), ("log2", ops.log2(pj.Tensor(pos)), torch.log2(torch.from_numpy(pos))),
            ("log10", ops.log10(pj.Tensor(pos)), torch.log10(torch.from_numpy(pos))),
            ("sinh", ops.sinh(px), torch.sinh(tx)), ("cosh", ops.cosh(px), torch.cosh(tx)),
            ("asinh", ops.asinh(px), torch.asinh(tx)), ("acosh", ops.acosh(pj.Tensor(pos)), torch.acosh(torch.from_numpy(pos))),
            ("atanh", ops.atanh(px / 3.5), torch.atanh(tx / 3.5)), ("erfc", ops.erfc(px), torch.erfc(tx)),
            ("sinc", ops.sinc(px), torch.sinc(tx)), ("trunc", ops.trunc(px), torch.trunc(tx)), ("frac", ops.frac(px), torch.frac(tx)),
            ("fmod", ops.fmod(px, py), torch.fmod(tx, ty)), ("floor_mod", ops.floor_mod(px, py), torch.remainder(tx, ty)),
            ("copysign", ops.copysign(px, py), torch.copysign(tx, ty)), ("hypot", ops.hypot(px, py), torch.hypot(tx, ty)),
            ("logaddexp", ops.logaddexp(px, py), torch.logaddexp(tx, ty)), ("logaddexp2", ops.logaddexp2(px, py), torch.logaddexp2(tx, ty)),
            ("xlogy", ops.xlogy(px, pj.Tensor(pos)), torch.xlogy(tx, torch.from_numpy(pos))),
            ("lerp", ops.lerp(px, py, 0.3), torch.lerp(tx, ty, 0.3)), ("logit", ops.logit(pj.Tensor(pos / 5)), torch.logit(torch.from_numpy(pos / 5))),
            ("float_power", ops.float_power(pj.Tensor(pos), py), torch.float_power(torch.from_numpy(pos), ty)),
            ("heaviside", ops.heaviside(px, py), torch.heaviside(tx, ty)), ("signbit", ops.signbit(px), torch.signbit(tx)),
            ("deg2rad", ops.deg2rad(px), torch.deg2rad(tx)), ("rad2deg", ops.rad2deg(px), torch.rad2deg(tx)),
        ]:
            self.check(got, want, 2e-6, 2e-6, msg=name)
        s = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0])
        ps = pj.Tensor(s.numpy())
        self.check(ops.nan_to_num(ps), torch.nan_to_num(s))
        self.check(ops.isclose(ps, ps + 1e-7), torch.isclose(s, s + 1e-7))
        self.check(ops.fmax(ps, pj.Tensor([2.0] * 5)), torch.fmax(s, torch.full((5,), 2.0)))

    def test_integer_fmod(self):
        a = self.rs.randint(-50, 50, size=40)
        b = self.rs.randint(1, 9, size=40) * np.where(self.rs.rand(40) < 0.5, -1, 1)
        self.check(ops.fmod(pj.Tensor(a), pj.Tensor(b)), torch.fmod(torch.from_numpy(a), torch.from_numpy(b)))


class Reductions(Case):
    def test_norms_and_distances(self):
        for trial in range(4):
            n, m, k = self.dims(3, 2, 7)
            x, y = self.rand(n, k), self.rand(m, k)
            tx, ty, px, py = torch.from_numpy(x), torch.from_numpy(y), pj.Tensor(x), pj.Tensor(y)
            for p in (1.0, 2.0, 3.0, float("inf")):
                self.check(ops.cdist(px, py, p), torch.cdist(tx, ty, p), 1e-5, 1e-5, msg="p %r" % p)
                self.check(ops.pdist(px, p), TF.pdist(tx, p), 1e-5, 1e-5, msg="p %r" % p)
                self.check(ops.norm(px, p, 1), torch.linalg.vector_norm(tx, p, 1), 1e-5, 1e-5)
            for o in (None, "fro", 1, -1, float("inf"), -float("inf")):
                self.check(ops.norm(px, o), torch.linalg.norm(tx, o), 1e-5, 1e-5, msg="ord %r" % o)
            self.check(ops.cosine_similarity(px, px * 2 + 1, 1), TF.cosine_similarity(tx, tx * 2 + 1, 1), 1e-5, 1e-6)
            self.check(ops.renorm(px, 2, 0, 1.0), torch.renorm(tx, 2, 0, 1.0), 1e-5, 1e-6)
            self.check(ops.cov(px), torch.cov(tx), 1e-5, 1e-5)
            fw = self.rs.randint(1, 4, size=k)
            aw = self.rs.uniform(0.5, 2, size=k).astype("float32")
            self.check(ops.cov(px, fweights=pj.Tensor(fw), aweights=pj.Tensor(aw)),
                       torch.cov(tx, fweights=torch.from_numpy(fw), aweights=torch.from_numpy(aw)), 1e-4, 1e-5)

    def test_scans_and_medians(self):
        for trial in range(4):
            shape = self.dims(2, 1, 12)
            x = np.round(self.rand(*shape) * 2) / 2  # repeated values: ties
            tx, px = torch.from_numpy(x), pj.Tensor(x)
            for d in (0, 1):
                v, i = ops.cummax(px, d)
                tv, ti = torch.cummax(tx, d)
                self.check(v, tv, msg="cummax %s" % (shape,))
                self.check(i, ti, msg="cummax %s" % (shape,))
                v, i = ops.cummin(px, d)
                tv, ti = torch.cummin(tx, d)
                self.check((v, i), (tv, ti), msg="cummin %s" % (shape,))
                self.check(ops.cumprod(px / 2 + 1, d), torch.cumprod(tx / 2 + 1, d), 1e-5, 1e-6)
                self.check(ops.median(px, d)[0], torch.median(tx, d)[0])
                self.check(ops.diff(px, 1, d), torch.diff(tx, 1, d))
                self.check(ops.trapz(px, dim=d), torch.trapezoid(tx, dim=d), 1e-5, 1e-6)
                self.check(ops.logsumexp(px, d), torch.logsumexp(tx, d), 1e-5, 1e-6)


class ActivationsAndLosses(Case):
    def test_activations(self):
        x = self.rand(5, 6, lo=-4, hi=4)
        tx, px = torch.from_numpy(x), pj.Tensor(x)
        for name, got, want in [
            ("softmin", ops.softmin(px, 1), TF.softmin(tx, 1)), ("elu", ops.elu(px, 0.7), TF.elu(tx, 0.7)),
            ("celu", ops.celu(px, 1.5), TF.celu(tx, 1.5)), ("selu", ops.selu(px), TF.selu(tx)),
            ("mish", ops.mish(px), TF.mish(tx)), ("softsign", ops.softsign(px), TF.softsign(tx)),
            ("logsigmoid", ops.logsigmoid(px), TF.logsigmoid(tx)), ("hardshrink", ops.hardshrink(px, 0.7), TF.hardshrink(tx, 0.7)),
            ("soft_shrink", ops.soft_shrink(px, 0.7), TF.softshrink(tx, 0.7)), ("hardtanh", ops.hardtanh(px, -2, 1.5), TF.hardtanh(tx, -2, 1.5)),
            ("tanhshrink", ops.tanhshrink(px), TF.tanhshrink(tx)), ("threshold", ops.threshold(px, 0.5, -1.0), TF.threshold(tx, 0.5, -1.0)),
            ("glu", ops.glu(px, 1), TF.glu(tx, 1)),
        ]:
            self.check(got, want, 1e-5, 2e-6, msg=name)
        w = self.rand(6)
        self.check(ops.prelu(px, pj.Tensor(w)), TF.prelu(tx, torch.from_numpy(w)))
        y = self.rand(2, 8, 4, 6)  # (H and W divisible by the factor, as pixel_unshuffle needs)
        self.check(ops.pixel_unshuffle(pj.Tensor(y), 2), TF.pixel_unshuffle(torch.from_numpy(y), 2))

    def test_losses(self):
        n, c = self.dims(2, 2, 9)
        x, y = self.rand(n, c), self.rand(n, c)
        tx, ty, px, py = torch.from_numpy(x), torch.from_numpy(y), pj.Tensor(x), pj.Tensor(y)
        sign = np.where(self.rs.rand(n) < 0.5, -1.0, 1.0).astype("float32")
        ts, ps = torch.from_numpy(sign), pj.Tensor(sign)
        for red in ("mean", "sum", "none"):
            self.check(ops.huber_loss(px, py, red, 0.7), TF.huber_loss(tx, ty, red, 0.7), 1e-5, 1e-6, msg=red)
            self.check(ops.margin_ranking_loss(px[:, 0], py[:, 0], ps, 0.3, red),
                       TF.margin_ranking_loss(tx[:, 0], ty[:, 0], ts, 0.3, reduction=red), 1e-5, 1e-6)
            self.check(ops.hinge_embedding_loss(px, pj.Tensor(np.sign(y)), 0.8, red),
                       TF.hinge_embedding_loss(tx, torch.sign(ty), 0.8, reduction=red), 1e-5, 1e-6)
            self.check(ops.cosine_embedding_loss(px, py, ps, 0.2, red),
                       TF.cosine_embedding_loss(tx, ty, ts, 0.2, reduction=red), 1e-5, 1e-6)
            var = np.abs(y) + 0.1
            self.check(ops.gaussian_nll_loss(px, py, pj.Tensor(var), True, 1e-6, red),
                       TF.gaussian_nll_loss(tx, ty, torch.from_numpy(var), True, 1e-6, red), 1e-5, 1e-6)
            self.check(ops.triplet_margin_loss(px, py, px * 0.5, 1.0, 2, 1e-6, True, red),
                       TF.triplet_margin_loss(tx, ty, tx * 0.5, 1.0, 2, 1e-6, True, reduction=red), 1e-5, 1e-5)
            lab = (self.rs.rand(n, c) < 0.5).astype("float32")
            self.check(ops.multilabel_soft_margin_loss(px, pj.Tensor(lab), reduction=red),
                       TF.multilabel_soft_margin_loss(tx, torch.from_numpy(lab), reduction=red), 1e-5, 1e-6)
        lp = TF.log_softmax(tx, 1)
        for red in ("mean", "sum", "batchmean", "none"):
            self.check(ops.kl_div(pj.Tensor(lp.numpy()), pj.Tensor(TF.softmax(ty, 1).numpy()), red),
                       TF.kl_div(lp, TF.softmax(ty, 1), reduction=red), 1e-5, 1e-6, msg=red)
            self.check(ops.kl_div(pj.Tensor(lp.numpy()), pj.Tensor(TF.log_softmax(ty, 1).numpy()), red, True),
                       TF.kl_div(lp, TF.log_softmax(ty, 1), reduction=red, log_target=True), 1e-5, 1e-6, msg=red)


class Scatters(Case):
    def test_segment_sum_and_scatter_elements(self):
        for trial in range(4):
            n, k, s = self.dims(3, 2, 9)
            x = self.rand(n, k)
            ids = self.rs.randint(0, s, size=n)
            want = torch.zeros(s, k).index_add_(0, torch.from_numpy(ids), torch.from_numpy(x))
            self.check(ops.unsorted_segment_sum(pj.Tensor(x), pj.Tensor(ids), s), want, 1e-5, 1e-6)
            base = self.rand(n, k)
            idx = self.rs.randint(0, k, size=(n, k))
            upd = self.rand(n, k)
            want = torch.from_numpy(base).scatter_add(1, torch.from_numpy(idx), torch.from_numpy(upd))
            self.check(ops.tensor_scatter_elements(pj.Tensor(base), pj.Tensor(idx), pj.Tensor(upd), 1, "add"), want, 1e-5, 1e-6)
            # distinct positions per row: a permutation's first columns
            perm = np.stack([self.rs.permutation(k) for _ in range(n)])[:, :max(1, k // 2)]
            upd2 = self.rand(*perm.shape)
            want = torch.from_numpy(base).scatter(1, torch.from_numpy(perm), torch.from_numpy(upd2))
            self.check(ops.tensor_scatter_elements(pj.Tensor(base), pj.Tensor(perm), pj.Tensor(upd2), 1), want)
            nd = self.rs.randint(0, n, size=(5, 1))
            self.check(ops.gather_nd(pj.Tensor(x), pj.Tensor(nd)), x[nd[:, 0]])


if __name__ == "__main__":
    unittest.main()
