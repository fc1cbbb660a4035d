"""Dense linear algebra (pijit/ops/linalg.py over kernels/linalg*.cc): inverse, det, slogdet,
logdet, matrix_solve, cholesky (+ inverse, solve), triangular solves, qr, svd, pinv, matrix_power,
matrix_exp, matrix_band_part, eigh; their primitives, Tensor methods and mint.linalg names.
Small cases are worked out by hand (comments give the arithmetic); random ones are checked by
identities (A A^-1 = I, Q^T Q = I, U S V^T = A, det against a plain-Python LU); errors are
MindSpore's classes and messages; gradients match central finite differences in float64; every
function is captured by @jit into one graph that computes what eager does."""
import math
import random
import unittest

import pijit as ms
from pijit import mint, ops
from pijit.ops import operations as P
from jit_compare import CAPTURE_ON, assert_ran_eagerly

T = ms.Tensor
F64 = ms.float64


def rand_lists(rng, shape):
    if not shape:
        return rng.uniform(-1.0, 1.0)
    return [rand_lists(rng, shape[1:]) for _ in range(shape[0])]


def well_conditioned(rng, batch, n, dtype=F64):
    """Random [-1, 1] entries plus n on the diagonal: diagonally dominant, cond(A) < ~5."""
    a = T(rand_lists(rng, tuple(batch) + (n, n)), dtype)
    return a + ms.ops.eye(n, n, dtype) * n


def flat(x):
    x = x.tolist() if isinstance(x, ms.Tensor) else x
    if isinstance(x, list):
        return [v for e in x for v in flat(e)]
    return [x]


def max_abs_diff(a, b):
    fa, fb = flat(a), flat(b)
    assert len(fa) == len(fb), (len(fa), len(fb))
    return max([abs(p - q) for p, q in zip(fa, fb)] or [0.0])


def mT(x):
    return ops.swapaxes(x, -1, -2)


def eye_like(x):
    n = x.shape[-1]
    return ops.broadcast_to(ops.eye(n, n, x.dtype), tuple(x.shape[:-2]) + (n, n))


def py_det(m):
    """det by Gaussian elimination with partial pivoting in plain Python (the reference)."""
    a = [list(r) for r in m]
    n, det = len(a), 1.0
    for k in range(n):
        p = max(range(k, n), key=lambda i: abs(a[i][k]))
        if a[p][k] == 0:
            return 0.0
        if p != k:
            a[k], a[p] = a[p], a[k]
            det = -det
        det *= a[k][k]
        for i in range(k + 1, n):
            f = a[i][k] / a[k][k]
            for j in range(k, n):
                a[i][j] -= f * a[k][j]
    return det


class Case(unittest.TestCase):
    def close(self, got, want, tol=1e-12):
        self.assertLessEqual(max_abs_diff(got, want), tol, (got, want))


class ExactSmall(Case):
    A2 = T([[4.0, 7.0], [2.0, 6.0]], F64)           # det = 24 - 14 = 10
    A3 = T([[2.0, 0.0, 1.0], [1.0, 3.0, 2.0], [1.0, 1.0, 2.0]], F64)  # det = 2*4 - 0 + 1*(1 - 3) = 6

    def test_inverse_and_det_by_hand(self):
        # [[a, b], [c, d]]^-1 = [[d, -b], [-c, a]] / det
        self.close(ops.inverse(self.A2), [[0.6, -0.7], [-0.2, 0.4]], 1e-15)
        self.assertEqual(ops.det(self.A2).item(), 10.0)
        # the adjugate (cofactors transposed) over 6
        adj = [[4, 1, -3], [0, 3, -3], [-2, -2, 6]]
        self.close(ops.inverse(self.A3), [[v / 6 for v in r] for r in adj], 1e-15)
        self.assertAlmostEqual(ops.det(self.A3).item(), 6.0, delta=1e-14)
        self.assertEqual(P.MatrixDeterminant()(self.A2).item(), 10.0)
        self.close(P.MatrixInverse()(self.A2), [[0.6, -0.7], [-0.2, 0.4]], 1e-15)
        self.close(P.MatrixInverse(adjoint=True)(self.A2), [[0.6, -0.2], [-0.7, 0.4]], 1e-15)
        self.close(self.A2.inverse(), [[0.6, -0.7], [-0.2, 0.4]], 1e-15)
        self.assertEqual(self.A2.det().item(), 10.0)
        self.assertEqual(ops.inverse(self.A2).dtype, F64)
        self.assertEqual(ops.inverse(T([[4.0, 7.0], [2.0, 6.0]])).dtype, ms.float32)

    def test_slogdet_logdet(self):
        swap = T([[0.0, 1.0], [1.0, 0.0]], F64)  # det -1
        sign, logabs = ops.slogdet(swap)
        self.assertEqual((sign.item(), logabs.item()), (-1.0, 0.0))
        sign, logabs = ops.slogdet(self.A2)
        self.assertEqual(sign.item(), 1.0)
        self.assertAlmostEqual(logabs.item(), math.log(10.0), delta=1e-15)
        self.assertTrue(math.isnan(ops.logdet(swap).item()))
        self.assertAlmostEqual(ops.logdet(self.A2).item(), math.log(10.0), delta=1e-15)
        sign, logabs = P.LogMatrixDeterminant()(T([[1.0, 2.0], [2.0, 4.0]], F64))  # singular
        self.assertEqual((sign.item(), logabs.item()), (0.0, -math.inf))
        self.assertEqual(ops.logdet(T([[1.0, 2.0], [2.0, 4.0]], F64)).item(), -math.inf)

    def test_singular_inverse_and_det(self):
        s = T([[1.0, 2.0], [2.0, 4.0]], F64)
        self.assertEqual(ops.det(s).item(), 0.0)
        # MindSpore's CPU kernel does not check: a zero pivot gives inf/nan
        self.assertTrue(all(math.isinf(v) or math.isnan(v) for v in flat(ops.inverse(s))))

    def test_solve(self):
        b = T([[1.0], [2.0]], F64)
        # A^-1 b = [0.6 - 1.4, -0.2 + 0.8]
        self.close(ops.matrix_solve(self.A2, b), [[-0.8], [0.6]], 1e-15)
        # A^T x = b: [[4, 2], [7, 6]] x = [1, 2] -> x = [0.6 - 0.4, -0.7 + 0.8]
        self.close(P.MatrixSolve(adjoint=True)(self.A2, b), [[0.2], [0.1]], 1e-15)

    def test_cholesky_family(self):
        a = T([[4.0, 2.0], [2.0, 3.0]], F64)
        # l11 = 2, l21 = 2 / 2 = 1, l22 = sqrt(3 - 1)
        r2 = math.sqrt(2.0)
        self.close(ops.cholesky(a), [[2.0, 0.0], [1.0, r2]], 1e-15)
        self.close(P.Cholesky(upper=True)(a), [[2.0, 1.0], [0.0, r2]], 1e-15)
        # only the named triangle is read
        self.close(ops.cholesky(T([[4.0, 99.0], [2.0, 3.0]], F64)), [[2.0, 0.0], [1.0, r2]], 1e-15)
        # inverse of [[4, 2], [2, 3]] = [[3, -2], [-2, 4]] / 8
        want = [[3 / 8, -2 / 8], [-2 / 8, 4 / 8]]
        self.close(ops.cholesky_inverse(ops.cholesky(a)), want, 1e-15)
        self.close(P.CholeskyInverse(upper=True)(ops.cholesky(a, upper=True)), want, 1e-15)
        b = T([[1.0], [1.0]], F64)  # A^-1 [1, 1] = [1/8, 2/8]
        self.close(ops.cholesky_solve(b, ops.cholesky(a)), [[0.125], [0.25]], 1e-15)
        self.close(P.CholeskySolve(upper=True)(b, ops.cholesky(a, upper=True)), [[0.125], [0.25]], 1e-15)

    def test_triangular_solve(self):
        m = T([[2.0, 99.0], [1.0, 1.0]], F64)  # 99 is outside the lower triangle: never read
        b = T([[2.0], [3.0]], F64)
        # [[2, 0], [1, 1]] x = [2, 3]: x0 = 1, x1 = 3 - 1 = 2
        self.close(P.MatrixTriangularSolve()(m, b), [[1.0], [2.0]], 0)
        # upper of m is [[2, 99], [0, 1]]: x1 = 3, x0 = (2 - 297) / 2
        self.close(P.MatrixTriangularSolve(lower=False)(m, b), [[-147.5], [3.0]], 0)
        # adjoint of the lower triangle: [[2, 1], [0, 1]] x = [2, 3]: x1 = 3, x0 = (2 - 3) / 2
        self.close(ops.solve_triangular(m, b, adjoint=True), [[-0.5], [3.0]], 0)
        self.close(ops.solve_triangular(m, b, unit_diagonal=True), [[2.0], [1.0]], 0)

    def test_qr_by_hand(self):
        # Householder on the column [3, 4]: beta = -5, so Q's first column is -[3, 4] / 5 and
        # Q is the reflection [[-0.6, -0.8], [-0.8, 0.6]]; R = Q^T A = [[-5, -4], [0, 3]]
        q, r = ops.qr(T([[3.0, 0.0], [4.0, 5.0]], F64))
        self.close(q, [[-0.6, -0.8], [-0.8, 0.6]], 1e-15)
        self.close(r, [[-5.0, -4.0], [0.0, 3.0]], 1e-14)
        q, r = P.Qr(full_matrices=True)(T([[3.0], [4.0]], F64))
        self.assertEqual((q.shape, r.shape), ((2, 2), (2, 1)))
        self.close(r, [[-5.0], [0.0]], 1e-15)

    def test_geqrf_orgqr_lstsq_by_hand(self):
        # the reflector of [3, 4]: beta = -5, v = [1, 4 / (3 + 5)], tau = (beta - alpha) / beta = 1.6;
        # the last column's one-element reflector is the identity (tau 0)
        y, tau = P.Geqrf()(T([[3.0, 0.0], [4.0, 5.0]], F64))
        self.close(y, [[-5.0, -4.0], [0.5, 3.0]], 1e-14)
        self.close(tau, [1.6, 0.0], 1e-15)
        self.close(ops.orgqr(y, tau), [[-0.6, -0.8], [-0.8, 0.6]], 1e-15)
        self.close(P.Orgqr()(y, tau), [[-0.6, -0.8], [-0.8, 0.6]], 1e-15)
        # min |[1, 1]^T x - [1, 3]|: the mean, 2; with l2 = 2: (2 + 2) x = 4
        a, b = T([[1.0], [1.0]], F64), T([[1.0], [3.0]], F64)
        self.close(P.Lstsq()(a, b), [[2.0]], 1e-15)
        self.close(P.Lstsq(l2_regularizer=2.0)(a, b), [[1.0]], 1e-15)
        # wide: the minimum-norm solution of x0 + x1 = 2 is [1, 1]
        self.close(P.Lstsq()(T([[1.0, 1.0]], F64), T([2.0], F64)), [1.0, 1.0], 1e-15)
        with self.assertRaisesRegex(ValueError, r"Orgqr.*M >= N.*\(2, 3\)"):
            ops.orgqr(ms.ones((2, 3)), ms.ones((2,)))
        with self.assertRaisesRegex(ValueError, r"Orgqr.*'tau'.*\(3,\)"):
            ops.orgqr(ms.ones((3, 2)), ms.ones((3,)))

    def test_lu_by_hand(self):
        # [[1, 2], [3, 4]]: row 2 pivots (|3| > |1|), l = 1/3, u22 = 2 - 4/3
        lu, piv = ops.lu_factor(T([[1.0, 2.0], [3.0, 4.0]], F64))
        self.close(lu, [[3.0, 4.0], [1 / 3, 2 / 3]], 1e-15)
        self.assertEqual((piv.dtype, piv.tolist()), (ms.int32, [2, 2]))
        p, l, u = P.LuUnpack()(lu, piv)
        self.assertEqual(p.tolist(), [[0.0, 1.0], [1.0, 0.0]])
        self.close(l, [[1.0, 0.0], [1 / 3, 1.0]], 1e-15)
        self.close(u, [[3.0, 4.0], [0.0, 2 / 3]], 1e-15)
        # [[1, 2], [3, 4]] x = [5, 11]: x = [1, 2]
        self.close(P.LuSolve()(T([[5.0], [11.0]], F64), lu, piv), [[1.0], [2.0]], 1e-15)
        p, l, u = ops.lu_unpack(lu, piv, unpack_data=False)
        self.assertEqual((l.shape, u.shape), ((0,), (0,)))
        with self.assertRaisesRegex(ValueError, r"For 'LuSolve', the 'lu_pivots' must lie in \[1, 2\]"):
            ops.lu_solve(T([[5.0], [11.0]], F64), lu, T([3, 2], ms.int32))
        with self.assertRaisesRegex(TypeError, "'LU_pivots' must be int32 or int64"):
            ops.lu_unpack(lu, T([2.0, 2.0], F64))

    def test_svd_by_hand(self):
        s, u, v = ops.svd(T([[3.0, 0.0], [0.0, -4.0]], F64))
        self.close(s, [4.0, 3.0], 1e-15)  # descending
        # u diag(s) v^T reproduces the matrix whatever the signs
        self.close(ops.matmul(u * s.reshape(1, 2), mT(v)), [[3.0, 0.0], [0.0, -4.0]], 1e-15)
        # [[1, 1], [1, 1]] = 2 * ([1, 1] / sqrt 2)([1, 1] / sqrt 2)^T: rank one
        s = ops.svd(T([[1.0, 1.0], [1.0, 1.0]], F64), compute_uv=False)
        self.close(s, [2.0, 0.0], 1e-15)
        # MindSpore's Svd primitive returns zeros of u's and v's shapes without compute_uv
        s, u, v = P.Svd(compute_uv=False)(T([[3.0, 0.0, 1.0], [0.0, -4.0, 0.0]], F64))
        self.assertEqual((u.tolist(), v.tolist()), ([[0.0, 0.0]] * 2, [[0.0, 0.0]] * 3))
        s, u, v = P.Svd(full_matrices=True, compute_uv=False)(T([[3.0, 0.0, 1.0], [0.0, -4.0, 0.0]], F64))
        self.assertEqual((u.shape, v.shape), ((2, 2), (3, 3)))
        w, v = P.Eigh()(T([[2.0, 1.0], [1.0, 2.0]], F64))
        self.close(w, [1.0, 3.0], 1e-15)
        w, v = P.Eigh(compute_eigenvectors=False, lower=False)(T([[2.0, 1.0], [99.0, 2.0]], F64))
        self.close(w, [1.0, 3.0], 1e-15)  # the upper triangle was read
        self.assertEqual(v.tolist(), [[0.0, 0.0], [0.0, 0.0]])

    def test_matrix_exp_power_pinv_eigh_band(self):
        self.close(ops.matrix_exp(T([[0.0, 1.0], [0.0, 0.0]], F64)), [[1.0, 1.0], [0.0, 1.0]], 1e-15)
        self.close(ops.matrix_exp(T([[1.0, 0.0], [0.0, 2.0]], F64)), [[math.e, 0.0], [0.0, math.exp(2)]], 1e-14)
        t = 7.5  # exp of a skew matrix is a rotation; |A| > theta_13 exercises the squaring
        rot = ops.matrix_exp(T([[0.0, -t], [t, 0.0]], F64))
        self.close(rot, [[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]], 1e-13)
        self.close(P.MatrixExp()(T([[0.0]], F64)), [[1.0]], 0)
        j = T([[1.0, 1.0], [0.0, 1.0]], F64)
        self.close(ops.matrix_power(j, 5), [[1.0, 5.0], [0.0, 1.0]], 0)
        self.close(P.MatrixPower(0)(j), [[1.0, 0.0], [0.0, 1.0]], 0)
        self.close(j.matrix_power(-3), [[1.0, -3.0], [0.0, 1.0]], 0)
        # pinv of a column [1, 2]: its transpose over |.|^2 = 5
        self.close(ops.pinv(T([[1.0], [2.0]], F64)), [[0.2, 0.4]], 1e-15)
        self.close(ops.pinv(T([[1.0, 0.0], [0.0, 0.0]], F64)), [[1.0, 0.0], [0.0, 0.0]], 1e-15)
        w, v = ops.eigh(T([[2.0, 1.0], [1.0, 2.0]], F64))
        self.close(w, [1.0, 3.0], 1e-15)  # ascending
        self.close(ops.matmul(ops.matmul(v, ops.diag(w)), mT(v)), [[2.0, 1.0], [1.0, 2.0]], 1e-15)
        x = ms.arange(1, 10, dtype=ms.float32).reshape(3, 3)
        self.assertEqual(ops.matrix_band_part(x, 0, 1).tolist(), [[1, 2, 0], [0, 5, 6], [0, 0, 9]])
        self.assertEqual(P.MatrixBandPart()(x, -1, 0).tolist(), [[1, 0, 0], [4, 5, 0], [7, 8, 9]])
        self.assertEqual(ops.matrix_band_part(x.astype(ms.int32), 1, -1).tolist(), [[1, 2, 3], [4, 5, 6], [0, 8, 9]])
        self.assertEqual(ops.adjoint(T([[1.0, 2.0]])).tolist(), [[1.0], [2.0]])

    def test_import_paths(self):
        from pijit.ops.operations import linalg_ops, math_ops
        self.assertIs(linalg_ops.Svd, ops.Svd)
        self.assertIs(linalg_ops.Eigh, ops.Eigh)
        self.assertIs(linalg_ops.Geqrf, P.Geqrf)
        for name in ("MatrixInverse", "MatrixSolve", "Cholesky", "CholeskySolve", "MatrixExp", "Qr", "Orgqr"):
            self.assertIs(getattr(math_ops, name), getattr(P, name))

    def test_mint_linalg(self):
        self.close(mint.linalg.inv(self.A2), [[0.6, -0.7], [-0.2, 0.4]], 1e-15)
        self.close(mint.inverse(self.A2), [[0.6, -0.7], [-0.2, 0.4]], 1e-15)
        q, r = mint.linalg.qr(T([[3.0, 0.0], [4.0, 5.0]], F64), mode="r")
        self.assertEqual(q.shape, (0,))
        self.close(r, [[-5.0, -4.0], [0.0, 3.0]], 1e-14)


class RandomIdentities(Case):
    def setUp(self):
        self.rng = random.Random(1234)

    def test_inverse_solve_det(self):
        for n in (1, 2, 5, 17, 40):
            for batch in ((), (3,), (2, 2)):
                a = well_conditioned(self.rng, batch, n)
                inv = ops.inverse(a)
                self.assertEqual(inv.shape, a.shape)
                self.close(ops.matmul(a, inv), eye_like(a), 1e-13)
                b = T(rand_lists(self.rng, tuple(batch) + (n, 3)), F64)
                x = ops.matrix_solve(a, b)
                self.close(ops.matmul(a, x), b, 1e-13)
                d = ops.det(a)
                self.assertEqual(d.shape, tuple(batch))
                mats = a.reshape(-1, n, n).tolist()
                for got, m in zip(flat(d.reshape(-1)), mats):
                    want = py_det(m)
                    self.assertLessEqual(abs(got - want), 1e-12 * abs(want), (n, got, want))
                sign, logabs = ops.slogdet(a)
                self.close(sign * ops.exp(logabs), d, 1e-10 * max(1.0, max(abs(v) for v in flat(d))))

    def test_float32_accuracy(self):
        a = well_conditioned(self.rng, (4,), 30, ms.float32)
        inv = ops.inverse(a)
        self.assertEqual(inv.dtype, ms.float32)
        # computed in double, rounded once: float32's rounding of the entries is all that is left
        self.close(ops.matmul(a.astype(F64), inv.astype(F64)), eye_like(a.astype(F64)), 1e-6)

    def test_broadcast_solve(self):
        a = well_conditioned(self.rng, (), 4)
        b = T(rand_lists(self.rng, (3, 4, 2)), F64)
        x = ops.matrix_solve(a, b)
        self.assertEqual(x.shape, (3, 4, 2))
        self.close(ops.matmul(a, x), b, 1e-13)

    def test_qr(self):
        for shape in ((5, 3), (3, 5), (4, 4), (2, 6, 2), (1, 1)):
            a = T(rand_lists(self.rng, shape), F64)
            m, n = shape[-2:]
            for mode, p in (("reduced", min(m, n)), ("complete", m)):
                q, r = ops.qr(a, mode)
                self.assertEqual((q.shape[-2:], r.shape[-2:]), ((m, p), (p, n)))
                self.close(ops.matmul(mT(q), q), eye_like(ops.matmul(mT(q), q)), 1e-14)
                self.close(ops.matmul(q, r), a, 1e-14)
                self.assertEqual(flat(ops.matrix_band_part(r, 0, -1)), flat(r))  # upper triangular

    def test_svd(self):
        for shape in ((6, 4), (4, 6), (5, 5), (3, 2, 7), (1, 3)):
            a = T(rand_lists(self.rng, shape), F64)
            m, n = shape[-2:]
            k = min(m, n)
            s, u, v = ops.svd(a)
            self.assertEqual((s.shape[-1], u.shape[-2:], v.shape[-2:]), (k, (m, k), (n, k)))
            self.close(ops.matmul(u * ops.expand_dims(s, -2), mT(v)), a, 1e-14)
            self.close(ops.matmul(mT(u), u), eye_like(ops.matmul(mT(u), u)), 1e-14)
            self.close(ops.matmul(mT(v), v), eye_like(ops.matmul(mT(v), v)), 1e-14)
            vals = s.reshape(-1, k).tolist()
            for row in vals:
                self.assertEqual(row, sorted(row, reverse=True))
                self.assertGreaterEqual(min(row), 0.0)
            s2, uf, vf = ops.svd(a, full_matrices=True)
            self.assertEqual((uf.shape[-2:], vf.shape[-2:]), ((m, m), (n, n)))
            self.close(ops.matmul(mT(uf), uf), eye_like(uf), 1e-14)
            self.close(ops.matmul(mT(vf), vf), eye_like(vf), 1e-14)
            self.close(s2, s, 0)
            self.close(ops.svd(a, compute_uv=False), s, 1e-14)

    def test_rank_deficient_svd_keeps_orthonormal_vectors(self):
        col = T(rand_lists(self.rng, (5, 1)), F64)
        a = ops.matmul(col, T([[1.0, 2.0, -1.0]], F64))  # rank 1
        s, u, v = ops.svd(a)
        self.assertLess(max(flat(s)[1:]), 1e-14)
        self.close(ops.matmul(mT(u), u), ops.eye(3, 3, F64), 1e-13)
        self.close(ops.matmul(mT(v), v), ops.eye(3, 3, F64), 1e-13)
        self.close(ops.matmul(ops.pinv(a), a), ops.matmul(ops.pinv(a), a).tolist(), 0)
        self.close(ops.matmul(ops.matmul(a, ops.pinv(a)), a), a, 1e-13)  # A A+ A = A

    def test_cholesky_eigh_exp(self):
        b = T(rand_lists(self.rng, (2, 6, 6)), F64)
        a = ops.matmul(b, mT(b)) + ops.eye(6, 6, F64) * 6
        l = ops.cholesky(a)
        self.close(ops.matmul(l, mT(l)), a, 1e-13)
        self.assertEqual(flat(ops.matrix_band_part(l, -1, 0)), flat(l))
        self.close(ops.matmul(a, ops.cholesky_inverse(l)), eye_like(a), 1e-13)
        w, v = ops.eigh(a)
        self.close(ops.matmul(v * ops.expand_dims(w, -2), mT(v)), a, 1e-12)
        self.close(ops.matmul(mT(v), v), eye_like(a), 1e-13)
        # exp(A) exp(-A) = I
        m = T(rand_lists(self.rng, (3, 5, 5)), F64) * 3
        self.close(ops.matmul(ops.matrix_exp(m), ops.matrix_exp(-m)), eye_like(m), 1e-11)


class Errors(Case):
    def test_shapes_and_dtypes(self):
        with self.assertRaisesRegex(ValueError, r"MatrixInverse.*square matrices.*\(2, 3\)"):
            ops.inverse(T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        with self.assertRaisesRegex(ValueError, r"MatrixDeterminant.*\(3,\)"):
            ops.det(T([1.0, 2.0, 3.0]))
        with self.assertRaisesRegex(ValueError, r"Cholesky.*\(2, 2, 3\)"):
            ops.cholesky(ms.ones((2, 2, 3)))
        with self.assertRaisesRegex(TypeError, "MatrixInverse.*float32 or float64.*Int32"):
            ops.inverse(T([[1, 2], [3, 4]], ms.int32))
        with self.assertRaisesRegex(ValueError, r"MatrixSolve.*rhs.*\[\.\.\., 2, K\]"):
            ops.matrix_solve(ms.ones((2, 2)), ms.ones((3, 1)))
        with self.assertRaisesRegex(ValueError, "batch dims"):
            ops.matrix_solve(ms.ones((2, 2, 2)), ms.ones((3, 2, 1)))
        with self.assertRaisesRegex(ValueError, "'mode' must be"):
            ops.qr(ms.ones((2, 2)), "r")
        with self.assertRaisesRegex(TypeError, "'adjoint' must be a bool"):
            P.MatrixSolve(adjoint=1)
        with self.assertRaisesRegex(TypeError, "'n' must be an int"):
            ops.matrix_power(ms.ones((2, 2)), 1.5)

    def test_values(self):
        with self.assertRaisesRegex(ValueError, r"For 'MatrixSolve', the input 'matrix' is not invertible\.$"):
            ops.matrix_solve(T([[1.0, 2.0], [2.0, 4.0]]), T([[1.0], [1.0]]))
        batch = ms.ones((2, 3, 2, 2)) * ops.eye(2, 2, ms.float32)
        batch[1, 2] = T([[1.0, 1.0], [1.0, 1.0]])
        with self.assertRaisesRegex(ValueError, r"not invertible \(batch element \(1, 2\)\)"):
            ops.matrix_solve(batch, ms.ones((2, 3, 2, 1)))
        with self.assertRaisesRegex(ValueError, "For 'Cholesky', the input matrix is not symmetric positive definite"):
            ops.cholesky(T([[1.0, 2.0], [2.0, 1.0]]))

    def test_gradient_limits(self):
        x = T(rand_lists(random.Random(5), (2, 4)), F64)
        with self.assertRaisesRegex(ValueError, r"For 'Qr', the gradient.*\(2, 4\)"):
            ms.grad(lambda t: ops.qr(t)[0].sum())(x)
        with self.assertRaisesRegex(ValueError, r"For 'Svd'.*full_matrices=True.*\(2, 4\)"):
            ms.grad(lambda t: ops.svd(t, full_matrices=True)[1].sum())(x)


class Gradients(Case):
    """Analytic gradients of sum(f(x) * w) (w random: every output element counts) against
    central differences in float64."""

    def setUp(self):
        self.rng = random.Random(99)

    def check(self, f, x, tol=1e-7):
        out = f(x)
        w = T(rand_lists(self.rng, tuple(out.shape)), F64)
        loss = lambda t: (f(t) * w).sum()
        got = flat(ms.grad(loss)(x))
        base = x.reshape(-1).tolist()
        eps = 1e-6
        for i in range(len(base)):
            hi, lo = list(base), list(base)
            hi[i] += eps
            lo[i] -= eps
            fd = (loss(T(hi, F64).reshape(x.shape)).item() - loss(T(lo, F64).reshape(x.shape)).item()) / (2 * eps)
            self.assertAlmostEqual(got[i], fd, delta=tol * max(1.0, abs(fd)), msg=(i, got, fd))

    def test_lu_family(self):
        a = well_conditioned(self.rng, (2,), 3)
        b = T(rand_lists(self.rng, (2, 3, 2)), F64)
        self.check(ops.inverse, a)
        self.check(lambda t: P.MatrixInverse(True)(t), a)
        self.check(ops.det, a)
        self.check(lambda t: ops.slogdet(t)[1], a)
        self.check(lambda t: ops.matrix_solve(t, b), a)
        self.check(lambda t: ops.matrix_solve(t, b, adjoint=True), a)
        self.check(lambda t: ops.matrix_solve(a, t), b)
        self.check(lambda t: ops.solve_triangular(t, b), a)
        self.check(lambda t: ops.solve_triangular(t, b, lower=False, adjoint=True), a)
        self.check(lambda t: ops.matrix_power(t, -2), a)

    def test_cholesky(self):
        b = T(rand_lists(self.rng, (3, 3)), F64)
        a = ops.matmul(b, mT(b)) + ops.eye(3, 3, F64) * 3
        sym = lambda t: (t + mT(t)) * 0.5  # perturb symmetrically, as the gradient is symmetric
        self.check(lambda t: ops.cholesky(sym(t)), a)
        self.check(lambda t: ops.cholesky(sym(t), upper=True), a)
        l = ops.cholesky(a)
        rhs = T(rand_lists(self.rng, (3, 2)), F64)
        self.check(lambda t: ops.cholesky_solve(t, l), rhs)
        self.check(lambda t: ops.cholesky_solve(rhs, ops.matrix_band_part(t, -1, 0)), l)
        self.check(lambda t: ops.cholesky_solve(rhs, ops.matrix_band_part(t, 0, -1), upper=True), mT(l))
        self.check(lambda t: ops.cholesky_inverse(ops.matrix_band_part(t, -1, 0)), l)

    def test_qr(self):
        self.check(lambda t: ops.qr(t)[0], T(rand_lists(self.rng, (4, 3)), F64))
        self.check(lambda t: ops.qr(t)[1], T(rand_lists(self.rng, (2, 4, 3)), F64))
        sq = T(rand_lists(self.rng, (3, 3)), F64)
        self.check(lambda t: ops.qr(t, "complete")[0] + ops.qr(t, "complete")[1], sq)

    def test_svd(self):
        tall = T(rand_lists(self.rng, (2, 4, 3)), F64)
        wide = T(rand_lists(self.rng, (3, 5)), F64)
        self.check(lambda t: ops.svd(t, compute_uv=False), tall)
        self.check(lambda t: ops.svd(t, full_matrices=True)[0], wide)
        # u and v up to sign: products that do not depend on the signs
        self.check(lambda t: ops.svd(t)[1] * ops.svd(t)[1], tall)
        self.check(lambda t: ops.svd(t)[2] * ops.svd(t)[2], wide)
        self.check(lambda t: ops.matmul(ops.svd(t)[1], mT(ops.svd(t)[2])), T(rand_lists(self.rng, (3, 3)), F64))
        self.check(ops.pinv, tall)

    def test_eigh(self):
        b = T(rand_lists(self.rng, (2, 4, 4)), F64)
        sym = lambda t: (t + mT(t)) * 0.5
        self.check(lambda t: ops.eigh(sym(t), eigvals_only=True), b)
        self.check(lambda t: ops.eigh(sym(t))[1] * ops.eigh(sym(t))[1], b)  # sign-free


class Captured(Case):
    def test_one_graph_equals_eager(self):
        rng = random.Random(7)
        a = well_conditioned(rng, (2,), 4)
        b = T(rand_lists(rng, (2, 4, 2)), F64)

        def f(a, b):
            inv = ops.inverse(a)
            x = ops.matrix_solve(a, b)
            sign, logabs = ops.slogdet(a)
            q, r = ops.qr(a)
            s, u, v = ops.svd(a)
            l = ops.cholesky(ops.matmul(a, mT(a)))
            y, tau = ops.geqrf(a)
            lu, piv = ops.lu_factor(a)
            pm, lm, um = ops.lu_unpack(lu, piv)
            e = ops.matrix_exp(a * 0.1)
            p = ops.matrix_power(a, 3)
            return (inv.sum() + x.sum() + (sign * logabs).sum() + ops.det(a).sum() + r.sum() + s.sum()
                    + l.sum() + e.sum() + p.sum() + ops.pinv(a).sum() + ops.orgqr(y, tau).sum()
                    + P.Lstsq()(a, b).sum() + ops.lu_solve(b, lu, piv).sum() + ops.matmul(pm, lm).sum()
                    + um.sum())

        want = f(a, b).item()
        jf = ms.jit(f)
        self.assertEqual(jf(a, b).item(), want)
        self.assertEqual(jf(a, b).item(), want)
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))
        else:
            assert_ran_eagerly(self, jf)

    def test_tensor_methods_capture(self):
        a = T([[4.0, 7.0], [2.0, 6.0]], F64)

        def f(a):
            return a.inverse() + a.det() + a.matrix_power(2) + a.slogdet()[1] + a.logdet()

        jf = ms.jit(f)
        self.assertEqual(jf(a).tolist(), f(a).tolist())
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))
        else:
            assert_ran_eagerly(self, jf)

    def test_gradient_in_a_graph(self):
        rng = random.Random(8)
        a = well_conditioned(rng, (), 3)

        def loss(t):
            return ops.inverse(t).sum() + ops.det(t) + ops.svd(t, compute_uv=False).sum()

        g = ms.grad(loss)
        want = g(a).tolist()
        jg = ms.jit(g)
        self.assertLess(max_abs_diff(jg(a), want), 1e-12)

    def test_singular_solve_raises_under_jit(self):
        @ms.jit
        def f(a, b):
            return ops.matrix_solve(a, b) * 2

        with self.assertRaisesRegex(ValueError, "not invertible"):
            f(T([[1.0, 2.0], [2.0, 4.0]]), T([[1.0], [1.0]]))
        self.assertEqual(f(T([[2.0, 0.0], [0.0, 4.0]]), T([[1.0], [1.0]])).tolist(), [[1.0], [0.5]])


if __name__ == "__main__":
    unittest.main()
