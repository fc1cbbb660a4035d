"""pijit's dense linear algebra (pijit/ops/linalg.py) against torch.linalg and numpy.linalg on
random inputs of random sizes and batches, float32 and float64: values (QR's signs are LAPACK's,
so Q and R match exactly; SVD and eigh vectors are compared up to sign), errors, and gradients
against torch.autograd. torch is Debian's python3-torch."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_numpy, require_torch

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import ops

TOL = {"float32": (2e-4, 2e-5), "float64": (1e-10, 1e-12)}  # (rtol, atol)


class Case(unittest.TestCase):
    def setUp(self):
        require_numpy(self, np)
        require_torch(self, torch)
        torch.set_num_threads(1)
        self.rs = np.random.RandomState(2024)

    def mats(self, dtype, square=True, spd=False, well=True):
        """A few (array, description) cases: random batch dims and sizes."""
        out = []
        for trial in range(4):
            batch = tuple(int(v) for v in self.rs.randint(1, 4, size=self.rs.randint(0, 3)))
            m = int(self.rs.randint(1, 9))
            n = m if square else int(self.rs.randint(1, 9))
            a = self.rs.uniform(-1, 1, size=batch + (m, n))
            if spd:
                a = a @ np.swapaxes(a, -1, -2) + m * np.eye(m)
            elif square and well:
                a = a + m * np.eye(m)
            out.append((a.astype(dtype), "%s %s" % (batch + (m, n), dtype)))
        return out

    def check(self, got, want, dtype, msg, scale=1.0):
        rtol, atol = TOL[dtype]
        if isinstance(want, torch.Tensor):
            want = want.detach().numpy()
        np.testing.assert_allclose(got.asnumpy() if hasattr(got, "asnumpy") else got, want,
                                   rtol=rtol * scale, atol=atol * scale, err_msg=msg)


class Values(Case):
    def test_inverse_det_slogdet_solve(self):
        for dtype in ("float32", "float64"):
            for a, msg in self.mats(dtype):
                ta, pa = torch.from_numpy(a), pj.Tensor(a)
                self.check(ops.inverse(pa), torch.linalg.inv(ta), dtype, msg)
                self.check(ops.det(pa), torch.linalg.det(ta), dtype, msg, scale=10)
                self.check(ops.det(pa), np.linalg.det(a.astype("float64")), dtype, msg, scale=10)
                sign, logabs = ops.slogdet(pa)
                tsign, tlog = torch.linalg.slogdet(ta)
                self.check(sign, tsign, dtype, msg)
                self.check(logabs, tlog, dtype, msg)
                b = self.rs.uniform(-1, 1, size=a.shape[:-1] + (3,)).astype(dtype)
                self.check(ops.matrix_solve(pa, pj.Tensor(b)), torch.linalg.solve(ta, torch.from_numpy(b)), dtype, msg)
                self.check(ops.matrix_solve(pa, pj.Tensor(b), adjoint=True),
                           np.linalg.solve(np.swapaxes(a, -1, -2).astype("float64"), b), dtype, msg)

    def test_cholesky_family_and_triangular(self):
        for dtype in ("float32", "float64"):
            for a, msg in self.mats(dtype, spd=True):
                ta, pa = torch.from_numpy(a), pj.Tensor(a)
                l = torch.linalg.cholesky(ta)
                self.check(ops.cholesky(pa), l, dtype, msg)
                self.check(ops.cholesky(pa, upper=True), torch.linalg.cholesky(ta, upper=True), dtype, msg)
                self.check(ops.cholesky_inverse(pj.Tensor(l.numpy())), torch.cholesky_inverse(l), dtype, msg)
                b = self.rs.uniform(-1, 1, size=a.shape[:-1] + (2,)).astype(dtype)
                tb = torch.from_numpy(b)
                self.check(ops.cholesky_solve(pj.Tensor(b), pj.Tensor(l.numpy())), torch.cholesky_solve(tb, l),
                           dtype, msg)
                for lower in (True, False):
                    for adjoint in (False, True):
                        # torch: upper=not lower reads that triangle; adjoint: solve with its transpose
                        tri = l if lower else l.transpose(-1, -2)
                        want = torch.linalg.solve_triangular(tri.transpose(-1, -2) if adjoint else tri, tb,
                                                             upper=lower == adjoint)
                        got = ops.solve_triangular(pj.Tensor(tri.numpy()), pj.Tensor(b), lower=lower,
                                                   adjoint=adjoint)
                        self.check(got, want, dtype, "%s lower=%s adjoint=%s" % (msg, lower, adjoint))

    def test_qr_matches_lapack(self):
        for dtype in ("float32", "float64"):
            for a, msg in self.mats(dtype, square=False):
                ta, pa = torch.from_numpy(a), pj.Tensor(a)
                for mode in ("reduced", "complete"):
                    q, r = ops.qr(pa, mode)
                    tq, tr = torch.linalg.qr(ta, mode=mode)
                    # Householder with LAPACK's sign convention: the same factors, signs included
                    self.check(q, tq, dtype, msg + " " + mode, scale=10)
                    self.check(r, tr, dtype, msg + " " + mode, scale=10)

    def test_geqrf_orgqr_lstsq(self):
        for dtype in ("float32", "float64"):
            for a, msg in self.mats(dtype, square=False):
                ta, pa = torch.from_numpy(a), pj.Tensor(a)
                y, tau = ops.geqrf(pa)
                ty, ttau = torch.geqrf(ta)
                self.check(y, ty, dtype, msg, scale=10)
                self.check(tau, ttau, dtype, msg, scale=10)
                if a.shape[-2] >= a.shape[-1]:
                    self.check(ops.orgqr(y, tau), torch.linalg.householder_product(ty, ttau), dtype, msg, scale=10)
                    b = self.rs.uniform(-1, 1, size=a.shape[:-1] + (2,)).astype(dtype)
                    want = torch.linalg.lstsq(ta.double(), torch.from_numpy(b).double()).solution
                    self.check(ops.Lstsq()(pa, pj.Tensor(b)), want, dtype, msg, scale=100)

    def test_lu_factor_unpack_solve(self):
        for dtype in ("float32", "float64"):
            for a, msg in self.mats(dtype, well=False):
                ta, pa = torch.from_numpy(a), pj.Tensor(a)
                lu, piv = ops.lu_factor(pa)
                tlu, tpiv = torch.linalg.lu_factor(ta)
                self.check(lu, tlu, dtype, msg, scale=100)
                np.testing.assert_array_equal(piv.asnumpy(), tpiv.numpy(), err_msg=msg)
                for got, want in zip(ops.lu_unpack(lu, piv), torch.lu_unpack(tlu, tpiv)):
                    self.check(got, want, dtype, msg, scale=100)
                b = self.rs.uniform(-1, 1, size=a.shape[:-1] + (2,)).astype(dtype)
                self.check(ops.lu_solve(pj.Tensor(b), lu, piv), torch.linalg.lu_solve(tlu, tpiv, torch.from_numpy(b)),
                           dtype, msg, scale=1000)

    def test_svd_pinv_eigh(self):
        for dtype in ("float32", "float64"):
            for a, msg in self.mats(dtype, square=False):
                ta, pa = torch.from_numpy(a), pj.Tensor(a)
                s, u, v = ops.svd(pa)
                ts = torch.linalg.svdvals(ta)
                self.check(s, ts, dtype, msg)
                self.check(s, np.linalg.svd(a.astype("float64"), compute_uv=False), dtype, msg)
                # singular vectors up to sign: |u^T u_torch| is the identity for distinct values
                tu, _, tvh = torch.linalg.svd(ta.double(), full_matrices=False)
                cu = np.abs(np.swapaxes(u.asnumpy().astype("float64"), -1, -2) @ tu.numpy())
                cv = np.abs(np.swapaxes(v.asnumpy().astype("float64"), -1, -2) @ tvh.numpy().swapaxes(-1, -2))
                k = s.shape[-1]
                self.check(cu, np.broadcast_to(np.eye(k), cu.shape), dtype, msg, scale=100)
                self.check(cv, np.broadcast_to(np.eye(k), cv.shape), dtype, msg, scale=100)
                self.check(ops.pinv(pa), torch.linalg.pinv(ta), dtype, msg, scale=100)
            for a, msg in self.mats(dtype, spd=True):
                w, v = ops.eigh(pj.Tensor(a))
                tw, tv = torch.linalg.eigh(torch.from_numpy(a))
                self.check(w, tw, dtype, msg, scale=10)
                self.check(np.abs(np.swapaxes(v.asnumpy(), -1, -2) @ tv.numpy()),
                           np.broadcast_to(np.eye(a.shape[-1]), a.shape), dtype, msg, scale=100)

    def test_exp_and_power(self):
        for dtype in ("float32", "float64"):
            for a, msg in self.mats(dtype, well=False):
                a = a * 3  # norms past theta_13 for the larger ones: scaling and squaring
                ta, pa = torch.from_numpy(a), pj.Tensor(a)
                want = torch.linalg.matrix_exp(ta.double())
                self.check(ops.matrix_exp(pa), want, dtype, msg, scale=float(want.abs().max()) + 1)
                for n in (0, 1, 2, 5):
                    self.check(ops.matrix_power(pa, n), np.linalg.matrix_power(a.astype("float64"), n),
                               dtype, "%s n=%d" % (msg, n), scale=10 ** n)
            for a, msg in self.mats(dtype):
                self.check(ops.matrix_power(pj.Tensor(a), -2), torch.linalg.matrix_power(torch.from_numpy(a), -2),
                           dtype, msg)

    def test_large_matrix_against_numpy(self):
        # one matrix large enough for the blocked LU's panels and the parallel trailing update
        a = self.rs.uniform(-1, 1, size=(150, 150)) + 12 * np.eye(150)
        b = self.rs.uniform(-1, 1, size=(150, 7))
        pa = pj.Tensor(a)
        self.check(ops.inverse(pa), np.linalg.inv(a), "float64", "150x150", scale=10)
        self.check(ops.matrix_solve(pa, pj.Tensor(b)), np.linalg.solve(a, b), "float64", "150x150", scale=10)
        self.check(ops.det(pa) / np.linalg.det(a), np.ones(()), "float64", "150x150", scale=10)
        self.check(ops.svd(pa, compute_uv=False), np.linalg.svd(a, compute_uv=False), "float64", "150x150", scale=100)
        q, r = ops.qr(pa)
        self.check(r, np.linalg.qr(a)[1], "float64", "150x150", scale=100)


class Errors(Case):
    def test_singular_and_not_positive_definite(self):
        s = np.array([[1.0, 2.0], [2.0, 4.0]])
        with self.assertRaises(torch.linalg.LinAlgError):
            torch.linalg.solve(torch.from_numpy(s), torch.ones(2, 1, dtype=torch.float64))
        with self.assertRaisesRegex(ValueError, "not invertible"):  # MindSpore's class: ValueError
            ops.matrix_solve(pj.Tensor(s), pj.Tensor(np.ones((2, 1))))
        with self.assertRaisesRegex(ValueError, "not symmetric positive definite"):
            ops.cholesky(pj.Tensor(-np.eye(3)))
        self.assertEqual(ops.det(pj.Tensor(s)).item(), float(np.linalg.det(s)))


class Grads(Case):
    def grads(self, pfn, tfn, a, msg, tol=1e-8):
        ta = torch.from_numpy(a).requires_grad_(True)
        out = tfn(ta)
        w = self.rs.uniform(-1, 1, size=tuple(out.shape))
        (out * torch.from_numpy(w)).sum().backward()
        tw = pj.Tensor(w)
        got = pj.grad(lambda t: (pfn(t) * tw).sum())(pj.Tensor(a))
        np.testing.assert_allclose(got.asnumpy(), ta.grad.numpy(), rtol=tol, atol=tol, err_msg=msg)

    def test_against_autograd(self):
        for a, msg in self.mats("float64"):
            self.grads(ops.inverse, torch.linalg.inv, a, msg)
            self.grads(ops.det, torch.linalg.det, a, msg)
            self.grads(lambda t: ops.slogdet(t)[1], lambda t: torch.linalg.slogdet(t)[1], a, msg)
            b = self.rs.uniform(-1, 1, size=a.shape[:-1] + (2,))
            self.grads(lambda t: ops.matrix_solve(t, pj.Tensor(b)), lambda t: torch.linalg.solve(t, torch.from_numpy(b)),
                       a, msg)
        for a, msg in self.mats("float64", spd=True):
            self.grads(ops.cholesky, torch.linalg.cholesky, a, msg, tol=1e-7)
            self.grads(lambda t: ops.eigh(t, eigvals_only=True), torch.linalg.eigvalsh, a, msg)
            l = np.linalg.cholesky(a)
            b = self.rs.uniform(-1, 1, size=a.shape[:-1] + (2,))
            self.grads(lambda t: ops.cholesky_solve(pj.Tensor(b), ops.matrix_band_part(t, -1, 0)),
                       lambda t: torch.cholesky_solve(torch.from_numpy(b), t.tril()), l, msg)
        for a, msg in self.mats("float64", square=False):
            m, n = a.shape[-2:]
            self.grads(lambda t: ops.svd(t, compute_uv=False), torch.linalg.svdvals, a, msg)
            if m >= n:
                self.grads(lambda t: ops.qr(t)[1], lambda t: torch.linalg.qr(t)[1], a, msg, tol=1e-7)
                self.grads(lambda t: ops.qr(t)[0], lambda t: torch.linalg.qr(t)[0], a, msg, tol=1e-7)


if __name__ == "__main__":
    unittest.main()
