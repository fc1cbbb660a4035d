"""pijit/ops/special2.py against PyTorch in float64: the Bessel functions (torch.special's
bessel_j0/j1/y0/y1, modified_bessel_k0/k1 and their scaled forms), Hurwitz zeta
(torch.special.zeta), Eig (torch.linalg.eig: the same eigenvalues; eigenvectors equal up to each
column's phase), the matrix logarithm (torch.linalg.matrix_exp of it gives the input back), and
jvp/jacfwd/jacrev (torch.autograd.functional's jvp and jacobian)."""
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

import pijit as ms
from pijit import ops


def arr(t):
    return np.array(t.tolist())


class TorchSpecial2Test(unittest.TestCase):
    def setUp(self):
        require_numpy(self, np)
        require_torch(self, torch)

    def test_bessel_functions(self):
        xs = np.concatenate([np.linspace(1e-4, 3, 150), np.linspace(3, 80, 400), [150.0, 600.0]])
        x = ms.Tensor(xs)
        tx = torch.tensor(xs, dtype=torch.float64)
        pairs = [(ops.bessel_j0, torch.special.bessel_j0), (ops.bessel_j1, torch.special.bessel_j1),
                 (ops.bessel_y0, torch.special.bessel_y0), (ops.bessel_y1, torch.special.bessel_y1),
                 (ops.bessel_k0, torch.special.modified_bessel_k0), (ops.bessel_k1, torch.special.modified_bessel_k1),
                 (ops.bessel_k0e, torch.special.scaled_modified_bessel_k0),
                 (ops.bessel_k1e, torch.special.scaled_modified_bessel_k1)]
        for ours, theirs in pairs:
            with self.subTest(fn=ours.__name__):
                a, b = arr(ours(x)), theirs(tx).numpy()
                # torch's J/Y (CPU, as of 1.13) are good to ~3e-7 absolute; its K to ~1e-15
                tol = 1e-6 if "k" not in ours.__name__ else 0.0
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=tol + 1e-300)
        # float32 inputs compute in double, rounded once
        a = arr(ops.bessel_k1(ms.Tensor(xs[:100].astype("float32"))))
        b = torch.special.modified_bessel_k1(torch.tensor(xs[:100].astype("float32")).double()).numpy()
        np.testing.assert_allclose(a, b, rtol=2e-7)

    def test_zeta(self):
        rng = np.random.RandomState(0)
        x = rng.uniform(1.1, 12, 300)
        q = rng.uniform(0.05, 40, 300)
        a = arr(ops.Zeta()(ms.Tensor(x), ms.Tensor(q)))
        b = torch.special.zeta(torch.tensor(x), torch.tensor(q)).numpy()
        np.testing.assert_allclose(a, b, rtol=1e-13)

    def test_eig(self):
        rng = np.random.RandomState(1)
        for n in (1, 2, 5, 12):
            A = rng.standard_normal((3, n, n))
            w, v = ops.Eig(compute_v=True)(ms.Tensor(A))
            wr = arr(ops.real(w)) + 1j * arr(ops.imag(w))
            vr = arr(ops.real(v)) + 1j * arr(ops.imag(v))
            tw = torch.linalg.eigvals(torch.tensor(A)).numpy()
            for b in range(3):
                left = list(wr[b])  # match each of torch's eigenvalues to the nearest of ours
                for z in tw[b]:
                    k = int(np.argmin([abs(z - u) for u in left]))
                    self.assertLess(abs(z - left.pop(k)), 1e-10)
                np.testing.assert_allclose(A[b] @ vr[b], vr[b] * wr[b][None, :], atol=1e-10)
                np.testing.assert_allclose(np.linalg.norm(vr[b], axis=0), 1.0, rtol=1e-12)

    def test_matrix_logarithm(self):
        rng = np.random.RandomState(2)
        A = rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4)) + 3 * np.eye(4)
        L = ops.MatrixLogarithm()(ops.complex(ms.Tensor(A.real), ms.Tensor(A.imag)))
        Lc = arr(ops.real(L)) + 1j * arr(ops.imag(L))
        back = torch.linalg.matrix_exp(torch.tensor(Lc)).numpy()
        np.testing.assert_allclose(back, A, atol=1e-11)

    def test_forward_mode_against_torch(self):
        rng = np.random.RandomState(3)
        W = rng.standard_normal((4, 3))
        xv, vv = rng.standard_normal(3), rng.standard_normal(3)

        def f_ms(x):
            return ops.tanh(ops.matmul(ms.Tensor(W), x)) * ops.sum(x * x)

        def f_t(x):
            return torch.tanh(torch.tensor(W) @ x) * torch.sum(x * x)
        out, t = ops.jvp(f_ms, ms.Tensor(xv), ms.Tensor(vv))
        tout, tt = torch.autograd.functional.jvp(f_t, torch.tensor(xv), torch.tensor(vv))
        np.testing.assert_allclose(arr(out), tout.numpy(), rtol=1e-13)
        np.testing.assert_allclose(arr(t), tt.numpy(), rtol=1e-12)
        J = torch.autograd.functional.jacobian(f_t, torch.tensor(xv)).numpy()
        np.testing.assert_allclose(arr(ops.jacfwd(f_ms)(ms.Tensor(xv))), J, rtol=1e-12)
        np.testing.assert_allclose(arr(ops.jacrev(f_ms)(ms.Tensor(xv))), J, rtol=1e-12)


if __name__ == "__main__":
    unittest.main()
