"""Special functions, random draws, forward-mode autodiff and the misc primitives of
pijit/ops/special2.py (issue 42).

References are independent of the kernels: the Bessel functions' power series summed exactly in
Fractions (the kernels use Miller's recurrence, Hankel's expansion and a quadrature above x = 2),
zeta's closed forms (pi^2/6, pi^4/90, (2^s - 1) zeta(s)), betainc's closed forms, gradients by
central differences in float64, random draws by their distributions' moments over many samples,
the optimizers by per-row loops written here, Jacobians by hand."""
import math
import unittest
from fractions import Fraction as Fr

import pijit as ms
from pijit import ops, nn
from pijit.ops import operations as P
from jit_compare import CAPTURE_ON, assert_ran_eagerly

F64 = ms.float64
EULER = 0.5772156649015329


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


def series(x, order, kind):
    """J_order(x) (kind 'J'), or the series part of Y/K, exactly in Fractions."""
    x = Fr(x)
    y = x * x / 4
    total, term, h = Fr(0), Fr(1) if order == 0 else x / 2, Fr(0)
    sign = -1 if kind in ("J", "Y") else 1
    for k in range(0, 200):
        if k:
            term *= sign * y / (k * (k + order))
            h += Fr(1, k)
            if k > x and abs(term) < Fr(1, 10 ** 40):
                break
        if kind in ("J", "I"):
            total += term
        elif order == 0:
            total += (-h if kind == "Y" else h) * term
    return total


def j0(x):
    return float(series(x, 0, "J"))


def j1(x):
    return float(series(x, 1, "J"))


def y0(x):  # (2/pi)[(ln(x/2) + gamma) J0 - sum H_k t_k], t_k the J0 series' terms
    return 2 / math.pi * ((math.log(x / 2) + EULER) * j0(x) + float(series(x, 0, "Y")))


def k0(x):  # -(ln(x/2) + gamma) I0 + sum H_k y^k / (k!)^2
    return -(math.log(x / 2) + EULER) * float(series(x, 0, "I")) + float(series(x, 0, "K"))


def close(a, b, rel=1e-12, abs_=1e-14):
    return abs(a - b) <= max(rel * abs(b), abs_)


class BesselTest(unittest.TestCase):
    XS = [1e-3, 0.5, 1.0, 1.9, 2.0, 3.7, 7.0, 12.5, 24.9, 25.0, 31.0]

    def test_first_kind_against_exact_series(self):
        got0 = ops.bessel_j0(T(self.XS, F64)).tolist()
        got1 = ops.bessel_j1(T(self.XS, F64)).tolist()
        for x, a, b in zip(self.XS, got0, got1):
            self.assertTrue(close(a, j0(x), 1e-11, 1e-15), (x, a, j0(x)))
            self.assertTrue(close(b, j1(x), 1e-11, 1e-15), (x, b, j1(x)))
        # even and odd
        self.assertEqual(ops.bessel_j0(T([-3.7], F64)).tolist(), ops.bessel_j0(T([3.7], F64)).tolist())
        self.assertEqual(ops.bessel_j1(T([-3.7], F64)).tolist()[0], -ops.bessel_j1(T([3.7], F64)).tolist()[0])

    def test_second_kind(self):
        xs = [0.5, 1.0, 2.0, 5.5, 11.0, 20.0, 30.0]
        got = ops.bessel_y0(T(xs, F64)).tolist()
        for x, a in zip(xs, got):
            self.assertTrue(close(a, y0(x), 1e-10, 1e-14), (x, a, y0(x)))
        # the Wronskian J1 Y0 - J0 Y1 = 2 / (pi x) ties Y1 to the others
        t = T(xs, F64)
        J0, J1, Y0, Y1 = [f(t).tolist() for f in (ops.bessel_j0, ops.bessel_j1, ops.bessel_y0, ops.bessel_y1)]
        for i, x in enumerate(xs):
            self.assertTrue(close(J1[i] * Y0[i] - J0[i] * Y1[i], 2 / (math.pi * x), 1e-12), x)
        self.assertEqual(ops.bessel_y0(T([0.0, -1.0])).tolist()[0], -math.inf)
        self.assertTrue(math.isnan(ops.bessel_y1(T([-1.0])).tolist()[0]))

    def test_modified_second_kind(self):
        xs = [0.01, 0.5, 1.0, 1.5, 3.0, 8.0, 20.0]
        got = ops.bessel_k0(T(xs, F64)).tolist()
        for x, a in zip(xs[:5], got):  # (the float series cancels beyond ~3)
            self.assertTrue(close(a, k0(x), 1e-11, 1e-300), (x, a, k0(x)))
        # x = 20: Hankel's asymptotic series, whose smallest term is ~e^-40
        for nu, f in ((0, ops.bessel_k0e), (1, ops.bessel_k1e)):
            term, total = 1.0, 1.0
            for k in range(1, 40):
                term *= (4 * nu * nu - (2 * k - 1) ** 2) / (k * 8 * 20.0)
                total += term
            want = math.sqrt(math.pi / 40.0) * total
            self.assertTrue(close(f(T([20.0], F64)).tolist()[0], want, 1e-13), nu)
        # K1 = -K0'; the scaled forms are e^x K
        t = T(xs, F64)
        k1 = ops.bessel_k1(t).tolist()
        for x, a in zip(xs[:5], k1):
            h = 1e-5 * x
            self.assertTrue(close(a, -(k0(x + h) - k0(x - h)) / (2 * h), 1e-8), x)
        for f, g in ((ops.bessel_k0e, ops.bessel_k0), (ops.bessel_k1e, ops.bessel_k1)):
            for x, a, b in zip(xs, f(t).tolist(), g(t).tolist()):
                self.assertTrue(close(a, b * math.exp(x), 1e-13), x)
        # large x: e^x K0(x) ~ sqrt(pi / 2x) (1 - 1/8x + 9/128x^2)
        x = 700.0
        want = math.sqrt(math.pi / (2 * x)) * (1 - 1 / (8 * x) + 9 / (128 * x * x) - 225 / (3072 * x ** 3))
        self.assertTrue(close(ops.bessel_k0e(T([x], F64)).tolist()[0], want, 1e-11))
        self.assertEqual(ops.bessel_k0(T([0.0])).tolist(), [math.inf])
        self.assertTrue(math.isnan(ops.bessel_k1(T([-2.0])).tolist()[0]))

    def test_dtypes_and_primitives(self):
        self.assertEqual(ops.bessel_j0(T([1, 2], ms.int32)).dtype, ms.float32)
        self.assertEqual(ops.bessel_k1e(T([1.0], ms.float16)).dtype, ms.float16)
        self.assertAlmostEqual(ops.BesselJ0()(T([1.0])).tolist()[0], 0.7651976865579666, places=6)
        for name in ("BesselJ1", "BesselY0", "BesselY1", "BesselK0", "BesselK0e", "BesselK1", "BesselK1e"):
            fn = getattr(ops, "bessel_" + name[6:].lower())
            self.assertEqual(getattr(ops, name)()(T([1.5])).tolist(), fn(T([1.5])).tolist())
        with self.assertRaises(TypeError):
            ops.bessel_j0([1.0])

    def test_gradients_by_central_differences(self):
        x = T([0.7, 1.3, 4.0, 9.0], F64)
        for fn in (ops.bessel_j0, ops.bessel_j1, ops.bessel_y0, ops.bessel_y1,
                   ops.bessel_k0, ops.bessel_k0e, ops.bessel_k1, ops.bessel_k1e):
            g = ms.grad(lambda t: fn(t).sum())(x).tolist()
            for xi, gi in zip(x.tolist(), g):
                h = 1e-6
                num = (fn(T([xi + h], F64)).tolist()[0] - fn(T([xi - h], F64)).tolist()[0]) / (2 * h)
                self.assertTrue(close(gi, num, 1e-6, 1e-9), (fn.__name__, xi, gi, num))
        self.assertEqual(ms.grad(lambda t: ops.bessel_j1(t).sum())(T([0.0], F64)).tolist(), [0.5])

    def test_capture_one_graph(self):
        def f(t):
            return ops.bessel_j0(t) + ops.bessel_y1(t) * ops.bessel_k0e(t) - ops.BesselK1()(t)
        x = T([0.5, 2.5, 30.0])
        want = f(x).tolist()
        jf = ms.jit(f)
        self.assertEqual(jf(x).tolist(), want)
        self.assertEqual(jf(x).tolist(), want)
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, jf)


class ZetaBetaincTest(unittest.TestCase):
    def test_zeta_closed_forms(self):
        x = T([2.0, 4.0, 2.0, 3.0, 1.0, 0.5], F64)
        q = T([1.0, 1.0, 0.5, 2.0, 1.0, 1.0], F64)
        got = ops.Zeta()(x, q).tolist()
        want = [math.pi ** 2 / 6, math.pi ** 4 / 90, math.pi ** 2 / 2, 1.2020569031595942 - 1]
        for a, b in zip(got, want):
            self.assertTrue(close(a, b, 1e-14), (a, b))
        self.assertEqual(got[4], math.inf)
        self.assertTrue(math.isnan(got[5]))
        # d/dq zeta(x, q) = -x zeta(x + 1, q)
        g = ms.grad(lambda t: ops.Zeta()(T([2.0], F64), t).sum())(T([1.0], F64)).tolist()[0]
        self.assertTrue(close(g, -2 * 1.2020569031595942, 1e-13))
        with self.assertRaises(TypeError):
            ops.Zeta()(T([2.0]), T([1.0], F64))

    def test_betainc_closed_forms(self):
        a = T([2.0, 2.5, 1.0, 3.0, 7.0], F64)
        b = T([3.0, 1.0, 4.0, 3.0, 0.5], F64)
        x = T([0.4, 0.3, 0.2, 0.5, 0.99], F64)
        got = ops.Betainc()(a, b, x).tolist()
        want = [0.5248, 0.3 ** 2.5, 1 - 0.8 ** 4, 0.5]
        for u, v in zip(got, want):
            self.assertTrue(close(u, v, 1e-13), (u, v))
        # I_x(a, 1/2) with a = 7: compare by the symmetry I_x(a, b) = 1 - I_{1-x}(b, a)
        self.assertTrue(close(got[4], 1 - ops.Betainc()(T([0.5], F64), T([7.0], F64), T([0.01], F64)).tolist()[0], 1e-13))
        nan = ops.Betainc()(T([-1.0, 1.0], F64), T([1.0, 1.0], F64), T([0.5, 1.5], F64)).tolist()
        self.assertTrue(all(math.isnan(v) for v in nan))
        g = ms.grad(lambda t: ops.Betainc()(T([2.0], F64), T([3.0], F64), t).sum())(T([0.4], F64)).tolist()[0]
        self.assertTrue(close(g, 12 * 0.4 * 0.6 ** 2, 1e-12))  # x (1-x)^2 / B(2, 3)

    def test_mvlgamma(self):
        x = T([2.5, 3.0, 10.0], F64)
        for got, v in zip(ops.mvlgamma(x, 1).tolist(), (2.5, 3.0, 10.0)):
            self.assertTrue(close(got, math.lgamma(v), 1e-14))
        for v, got in zip((2.5, 3.0, 10.0), ops.Mvlgamma(3)(x).tolist()):
            want = 3 * 2 / 4 * math.log(math.pi) + sum(math.lgamma(v - j / 2) for j in range(3))
            self.assertTrue(close(got, want, 1e-14))
        with self.assertRaises(ValueError):
            ops.mvlgamma(T([0.9]), 3)
        with self.assertRaises(ValueError):
            ops.Mvlgamma(0)

    def test_angle_and_polar(self):
        c = ops.complex(T([1.0, -1.0, 0.0], F64), T([1.0, 0.0, -2.0], F64))
        self.assertEqual(ops.angle(c).tolist(), [math.pi / 4, math.pi, -math.pi / 2])
        with self.assertRaises(TypeError):
            ops.angle(T([1.0]))
        z = ops.Polar()(T([2.0, 1.0], F64), T([math.pi / 2, 0.0], F64))
        self.assertEqual(z.dtype, ms.complex128)
        self.assertTrue(close(ops.real(z).tolist()[0], 0.0, 0, 1e-15))
        self.assertEqual(ops.imag(z).tolist(), [2.0, 0.0])


def cmat(rows):
    return ops.complex(T([[complex(v).real for v in r] for r in rows], F64),
                       T([[complex(v).imag for v in r] for r in rows], F64))


def to_complex_lists(t):
    re, im = ops.real(t).tolist(), ops.imag(t).tolist()
    if isinstance(re[0], list):
        return [[complex(a, b) for a, b in zip(r, i)] for r, i in zip(re, im)]
    return [complex(a, b) for a, b in zip(re, im)]


class EigTest(unittest.TestCase):
    def check_pairs(self, A, w, v):
        n = len(A)
        for k in range(n):
            col = [v[i][k] for i in range(n)]
            self.assertTrue(abs(sum(abs(c) ** 2 for c in col) - 1) < 1e-12)
            big = max(col, key=abs)
            self.assertTrue(abs(big.imag) < 1e-12 and big.real > 0)
            for i in range(n):
                av = sum(A[i][j] * col[j] for j in range(n))
                self.assertTrue(abs(av - w[k] * col[i]) < 1e-10, (i, k))

    def test_real_and_complex_matrices(self):
        A = [[4.0, 1.0, -2.0], [3.0, 0.5, 1.0], [-1.0, 2.0, 7.0]]
        w, v = ops.Eig(compute_v=True)(T(A, F64))
        self.assertEqual((w.dtype, w.shape, v.shape), (ms.complex128, (3,), (3, 3)))
        ws = to_complex_lists(w)
        self.check_pairs(A, ws, to_complex_lists(v))
        self.assertTrue(abs(sum(ws) - 11.5) < 1e-12)  # the trace
        rot = ops.Eig()(T([[0.0, -1.0], [1.0, 0.0]]))
        self.assertEqual(rot[0].dtype, ms.complex64)
        self.assertEqual(sorted(to_complex_lists(rot[0]), key=lambda z: z.imag), [-1j, 1j])
        self.assertEqual(rot[1].shape, (0,))
        B = [[1 + 2j, 0.5, 0], [0, -1j, 2], [1, 0, 3]]
        w, v = ops.Eig(True)(cmat(B))
        self.check_pairs(B, to_complex_lists(w), to_complex_lists(v))
        batch = ops.Eig(True)(T([[[2.0, 0.0], [0.0, 5.0]], [[1.0, 1.0], [0.0, 1.0]]], F64))
        self.assertEqual(batch[0].shape, (2, 2))
        self.assertEqual(sorted(z.real for z in to_complex_lists(batch[0][0])), [2.0, 5.0])
        with self.assertRaises(ValueError):
            ops.Eig()(T([[1.0, 2.0, 3.0]]))
        with self.assertRaises(TypeError):
            ops.Eig()(T([[1, 2], [3, 4]], ms.int32))

    def test_matrix_logarithm(self):
        L = ops.MatrixLogarithm()(cmat([[2.0, 0.0], [0.0, 3.0]]))
        self.assertEqual(to_complex_lists(L), [[math.log(2), 0], [0, math.log(3)]])
        # log of a Jordan block: log(I + N) = N (N^2 = 0)
        J = to_complex_lists(ops.MatrixLogarithm()(cmat([[1.0, 1.0], [0.0, 1.0]])))
        self.assertTrue(all(abs(a - b) < 1e-14 for a, b in zip(sum(J, []), [0, 1, 0, 0])))
        # log of a rotation by t is [[0, -t], [t, 0]]
        t = 0.7
        R = to_complex_lists(ops.MatrixLogarithm()(cmat([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])))
        self.assertTrue(all(abs(a - b) < 1e-13 for a, b in zip(sum(R, []), [0, -t, t, 0])))
        with self.assertRaises(TypeError):
            ops.MatrixLogarithm()(T([[1.0]]))


def moments(t):
    v = [float(e) for e in t.reshape((-1,)).tolist()]
    m = math.fsum(v) / len(v)
    return m, math.fsum((e - m) ** 2 for e in v) / (len(v) - 1)


class RandomTest(unittest.TestCase):
    N = 40000

    def test_gamma_moments_shapes_and_seeds(self):
        for alpha, beta in ((0.4, 1.0), (3.0, 2.0), (25.0, 0.5)):
            d = ops.gamma((self.N,), T([alpha]), T([beta]), seed=7)
            m, v = moments(d)
            self.assertTrue(abs(m - alpha / beta) < 4 * math.sqrt(alpha / beta ** 2 / self.N), (alpha, m))
            self.assertTrue(abs(v / (alpha / beta ** 2) - 1) < 0.06, (alpha, v))
        self.assertEqual(ops.gamma((3, 1, 2), T([[3.0, 4.0], [5.0, 6.0]]), T([1.0]), seed=5).shape, (3, 2, 2))
        self.assertEqual(ops.random_gamma((4, 3), T([1.0, 2.0])).shape, (4, 3, 2))
        a = ops.random_gamma((5,), T([2.0]), seed=3, seed2=1).tolist()
        self.assertEqual(ops.random_gamma((5,), T([2.0]), seed=3, seed2=1).tolist(), a)
        self.assertNotEqual(ops.random_gamma((5,), T([2.0]), seed=3, seed2=2).tolist(), a)
        ms.set_seed(11)
        g1 = ops.Gamma()((6,), T([1.5]), T([1.0])).tolist()
        ms.set_seed(11)
        self.assertEqual(ops.Gamma()((6,), T([1.5]), T([1.0])).tolist(), g1)
        self.assertTrue(all(v > 0 for v in g1))
        self.assertTrue(math.isnan(ops.random_gamma((1,), T([-1.0])).tolist()[0][0]))

    def test_poisson(self):
        for rate in (0.7, 4.0, 60.0):
            d = ops.random_poisson((self.N,), T([rate]), seed=2)
            self.assertEqual(d.dtype, ms.float32)
            m, v = moments(d)
            self.assertTrue(abs(m - rate) < 4 * math.sqrt(rate / self.N), (rate, m))
            self.assertTrue(abs(v / rate - 1) < 0.06, (rate, v))
            self.assertTrue(all(float(e).is_integer() and e >= 0 for e in d.reshape((-1,)).tolist()[:200]))
        r = ops.RandomPoisson(seed=1)((2, 3), T([1.0, 0.0]))
        self.assertEqual((r.dtype, r.shape), (ms.int64, (2, 3, 2)))
        self.assertEqual([row[1] for row in sum(r.tolist(), [])], [0] * 6)
        self.assertEqual(ops.RandomPoisson(seed=1)((2, 3), T([1.0, 0.0])).tolist(), r.tolist())
        self.assertEqual(ops.random_poisson((3,), T([2.0]), dtype=ms.int32).dtype, ms.int32)

    def test_cauchy_lognormal_truncated_ints(self):
        c = ops.Cauchy([20001], median=1.5, sigma=2.0)()
        self.assertEqual(c.dtype, ms.float32)
        v = sorted(c.tolist())
        self.assertTrue(abs(v[10000] - 1.5) < 0.1)            # the median
        self.assertTrue(abs((v[15000] - v[5000]) / 2 - 2.0) < 0.15)  # half the IQR = sigma
        ln = ops.LogNormalReverse(mean=0.5, std=0.25)(ms.ops.zeros((self.N,), ms.float32))
        m, s2 = moments(ops.log(ln))
        self.assertTrue(abs(m - 0.5) < 0.01 and abs(s2 - 0.0625) < 0.004, (m, s2))
        p = ops.ParameterizedTruncatedNormal(seed=4)((2, 20000), T([0.0, 5.0]), T([1.0, 2.0]), T([-1.0, 4.0]),
                                                   T([1.0, 8.0]))
        rows = p.tolist()
        self.assertTrue(all(-1.0 <= e <= 1.0 for e in rows[0]) and all(4.0 <= e <= 8.0 for e in rows[1]))
        self.assertTrue(abs(sum(rows[0]) / 20000) < 0.02)  # symmetric bounds: mean 0
        # N(5, 4) on [4, 8]: mean 5 + 2 (phi(-0.5) - phi(1.5)) / (Phi(1.5) - Phi(-0.5))
        phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
        Phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
        want = 5 + 2 * (phi(-0.5) - phi(1.5)) / (Phi(1.5) - Phi(-0.5))
        self.assertTrue(abs(sum(rows[1]) / 20000 - want) < 0.03)
        ints = ops.NonDeterministicInts()((4000,))
        self.assertEqual(ints.dtype, ms.int64)
        vals = ints.tolist()
        self.assertTrue(min(vals) < -2 ** 60 and max(vals) > 2 ** 60)
        self.assertEqual(ops.NonDeterministicInts(ms.int32)((3,)).dtype, ms.int32)

    def test_candidate_samplers(self):
        tc = T([[1], [3], [4], [6], [3]], ms.int64)
        s, te, se = ops.UniformCandidateSampler(1, 3, False, 4, 1)(tc)
        self.assertEqual((s.shape, te.shape, se.shape, s.dtype, te.dtype), ((3,), (5, 1), (3,), ms.int64, ms.float32))
        self.assertTrue(all(0 <= k < 4 for k in s.tolist()))
        self.assertEqual(te.tolist(), [[0.75]] * 5)  # num_sampled / range_max
        s2 = ops.uniform_candidate_sampler(tc, 1, 3, False, 4, 1)[0]
        self.assertEqual(s2.tolist(), s.tolist())
        s, te, se = ops.uniform_candidate_sampler(T([[0], [1]], ms.int64), 1, 5, True, 10, 3, True)
        picked = s.tolist()
        self.assertEqual(len(set(picked)), 5)
        self.assertTrue(0 not in picked and 1 not in picked)
        s, te, se = ops.LogUniformCandidateSampler(1, 4, True, 20, seed=9)(T([[2]], ms.int64))
        self.assertEqual(len(set(s.tolist())), 4)
        p2 = math.log(4 / 3) / math.log(21)
        self.assertTrue(0 < te.tolist()[0][0] <= 1 and te.tolist()[0][0] >= p2)
        with self.assertRaises(ValueError):
            ops.UniformCandidateSampler(1, 5, True, 4)(tc)


class OptimizerTest(unittest.TestCase):
    def test_sparse_apply_adagrad_v2_with_repeated_rows(self):
        var = ms.Parameter(T([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], F64))
        acc = ms.Parameter(T([[0.1, 0.1], [0.2, 0.2], [0.3, 0.3]], F64))
        grad = T([[0.5, -1.0], [1.0, 2.0], [0.25, 0.5]], F64)
        idx = T([2, 0, 2], ms.int32)
        ops.SparseApplyAdagradV2(lr=0.1, epsilon=1e-6)(var, acc, grad, idx)
        v, a = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[0.1, 0.1], [0.2, 0.2], [0.3, 0.3]]
        for r, g in zip([2, 0, 2], grad.tolist()):
            for j in range(2):
                a[r][j] += g[j] ** 2
                v[r][j] -= 0.1 * g[j] / (math.sqrt(a[r][j]) + 1e-6)
        for got, want in ((var.tolist(), v), (acc.tolist(), a)):
            for x, y in zip(sum(got, []), sum(want, [])):
                self.assertTrue(close(x, y, 1e-14), (x, y))

    def ftrl_reference(self, v, a, l, g, lr, l1, l2, p, shrink=0.0):
        na = a + g * g
        gs = g + 2 * shrink * v
        l = l + gs - (na ** -p - a ** -p) / lr * v
        quad = na ** -p / lr + 2 * l2
        v = (math.copysign(l1, l) - l) / quad if abs(l) > l1 else 0.0
        return v, na, l

    def test_sparse_apply_ftrl_and_v2(self):
        for cls, extra in ((ops.SparseApplyFtrl, ()), (ops.SparseApplyFtrlV2, (0.05,))):
            var = ms.Parameter(T([[0.5, -0.2], [1.0, 0.3]], F64))
            acc = ms.Parameter(T([[0.1, 0.2], [0.3, 0.4]], F64))
            lin = ms.Parameter(T([[0.01, -0.5], [0.2, 0.1]], F64))
            grad = T([[0.3, -0.7]], F64)
            op = cls(0.01, 0.1, 0.02, *(extra + (-0.5,)))
            op(var, acc, lin, grad, T([1], ms.int64))
            for j, (v0, a0, l0, g) in enumerate(zip([1.0, 0.3], [0.3, 0.4], [0.2, 0.1], [0.3, -0.7])):
                v, a, l = self.ftrl_reference(v0, a0, l0, g, 0.01, 0.1, 0.02, -0.5, extra[0] if extra else 0.0)
                self.assertTrue(close(var.tolist()[1][j], v, 1e-12) and close(acc.tolist()[1][j], a, 1e-14)
                                and close(lin.tolist()[1][j], l, 1e-12), (cls.__name__, j))
            self.assertEqual(var.tolist()[0], [0.5, -0.2])  # rows not named stay

    def test_sparse_apply_proximal_adagrad_and_adagrad_da(self):
        var = ms.Parameter(T([[1.0, -2.0]], F64))
        acc = ms.Parameter(T([[0.5, 0.5]], F64))
        ops.SparseApplyProximalAdagrad()(var, acc, 0.1, 0.05, 0.2, T([[0.4, -0.6]], F64), T([0], ms.int32))
        for j, (v0, g) in enumerate(zip([1.0, -2.0], [0.4, -0.6])):
            a = 0.5 + g * g
            prox = v0 - 0.1 * g / math.sqrt(a)
            want = math.copysign(1, prox) / (1 + 0.1 * 0.2) * max(abs(prox) - 0.1 * 0.05, 0)
            self.assertTrue(close(var.tolist()[0][j], want, 1e-14))
        var = ms.Parameter(T([1.0, -1.0], F64))
        ga = ms.Parameter(T([0.2, -0.3], F64))
        gsa = ms.Parameter(T([0.1, 0.1], F64))
        ops.ApplyAdagradDA()(var, ga, gsa, T([0.5, 0.1], F64), 0.01, 0.3, 0.1, 2)
        for j, (g0, s0, g) in enumerate(zip([0.2, -0.3], [0.1, 0.1], [0.5, 0.1])):
            gnew, snew = g0 + g, s0 + g * g
            tmp = math.copysign(1, gnew) * max(abs(gnew) - 0.3 * 2, 0)
            want = -0.01 * tmp / (0.1 * 2 * 0.01 + math.sqrt(snew))
            self.assertTrue(close(var.tolist()[j], want, 1e-14, 1e-17), (j, var.tolist()[j], want))
            self.assertTrue(close(ga.tolist()[j], gnew, 1e-15))

    def test_lars_update(self):
        w, g = T([3.0, 4.0], F64), T([0.6, 0.8], F64)
        out = ops.LARSUpdate(epsilon=0.0, hyperpara=0.5)(w, g, T(25.0, F64), T(1.0, F64), T(0.1, F64), T(0.01, F64))
        lam = 0.5 * 5 / (1 + 0.1 * 5)
        self.assertTrue(all(close(a, lam * (b + 0.1 * c), 1e-14) for a, b, c in zip(out.tolist(), [0.6, 0.8], [3, 4])))
        clipped = ops.LARSUpdate(1e-5, 0.001, True)(w, g, T(25.0, F64), T(1.0, F64), T(0.0, F64), T(1.0, F64))
        lam = min(0.001 * 5 / (1 + 1e-5) / 1.0, 1.0)
        self.assertTrue(all(close(a, lam * b, 1e-12) for a, b in zip(clipped.tolist(), [0.6, 0.8])))


class MiscTest(unittest.TestCase):
    def test_gathers(self):
        p = T([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        self.assertEqual(ops.SparseGatherV2()(p, T([2, 0], ms.int32), 0).tolist(), [[5.0, 6.0], [1.0, 2.0]])
        out = ops.EmbeddingLookup()(p, T([[5, 2], [4, 9]], ms.int32), 3)
        self.assertEqual(out.tolist(), [[[5.0, 6.0], [0.0, 0.0]], [[3.0, 4.0], [0.0, 0.0]]])

    def test_check_numerics_and_assert(self):
        x = T([1.0, 2.0])
        self.assertIs(ops.CheckNumerics()(x), x)
        with self.assertRaises(ValueError):
            ops.CheckNumerics()(T([1.0, math.inf]))
        ops.Assert()(T([True, True]), [x])
        with self.assertRaisesRegex(ValueError, r"\[1.0, 2.0\]"):
            ops.Assert(2)(T(False), [T([1.0, 2.0, 3.0])])
        with self.assertRaises(TypeError):
            ops.Assert()(1, [x])

    def test_gradient_hooks(self):
        seen = []

        def hook(g):
            seen.append(g.tolist())

        hb = ops.HookBackward(hook)

        def f(x):
            return (hb(x * 2) ** 2).sum()
        g = ms.grad(f)(T([1.0, 3.0]))
        self.assertEqual(g.tolist(), [8.0, 24.0])
        self.assertEqual(seen, [[4.0, 12.0]])
        ig = ops.InsertGradientOf(lambda d: d * 10)
        self.assertEqual(ms.grad(lambda x: (ig(x) * 3).sum())(T([1.0, 2.0])).tolist(), [30.0, 30.0])
        self.assertEqual(ig(T([1.0])).tolist(), [1.0])
        with self.assertRaises(TypeError):
            ops.HookBackward(3)

    def test_map(self):
        self.assertEqual(ops.Map()(lambda a, b: a + b, (1, 2), (10, 20)), (11, 22))
        add = ops.Map(ops.add)
        out = add([T([1.0]), T([2.0])], [T([3.0]), T([4.0])])
        self.assertEqual([t.tolist() for t in out], [[4.0], [6.0]])
        with self.assertRaises(ValueError):
            ops.Map()(lambda a, b: a, (1, 2), (1,))


class ForwardModeTest(unittest.TestCase):
    def test_jvp(self):
        x, v = T([1.0, 2.0], F64), T([0.5, -1.0], F64)
        out, t = ops.jvp(lambda a: a ** 3, x, v)
        self.assertEqual((out.tolist(), t.tolist()), ([1.0, 8.0], [1.5, -12.0]))
        out, t = ops.jvp(lambda a, b: (a * b, a.sum()), (x, T([3.0, 4.0], F64)), (v, T([1.0, 1.0], F64)))
        self.assertEqual([o.tolist() for o in out], [[3.0, 8.0], 3.0])
        self.assertEqual([o.tolist() for o in t], [[1.5 + 1.0, -4.0 + 2.0], -0.5])
        out, t, aux = ops.jvp(lambda a: (ops.sin(a), a * 2), x, v, has_aux=True)
        self.assertEqual(aux.tolist(), [2.0, 4.0])
        self.assertTrue(all(close(p, q, 1e-15) for p, q in zip(t.tolist(), [0.5 * math.cos(1.0), -math.cos(2.0)])))
        with self.assertRaises(ValueError):
            ops.jvp(lambda a: a, x, T([1.0], F64))

    def test_jacobians_mindspore_example(self):
        class Net(nn.Cell):
            def construct(self, x, y, z):
                return x ** 2 + y ** 2 + z ** 2, x * y * z
        x = T([[1.0, 2.0], [3.0, 4.0]])
        y = T([[1.0, 2.0], [3.0, 4.0]])
        z = T([[1.0, 1.0], [1.0, 1.0]])
        want = [[[[2.0, 0.0], [0.0, 0.0]], [[0.0, 4.0], [0.0, 0.0]]],
                [[[0.0, 0.0], [6.0, 0.0]], [[0.0, 0.0], [0.0, 8.0]]]]
        for jac_of in (ops.jacfwd, ops.jacrev):
            jac, aux = jac_of(Net(), grad_position=0, has_aux=True)(x, y, z)
            self.assertEqual(jac.tolist(), want)
            self.assertEqual(aux.tolist(), [[1.0, 4.0], [9.0, 16.0]])

    def test_jacobian_structures(self):
        a, b = T([1.0, 2.0], F64), T([3.0, 4.0, 5.0], F64)

        def f(p, q):
            return p.sum() * q, (p * p).sum()
        for jac_of in (ops.jacfwd, ops.jacrev):
            J = jac_of(f, grad_position=(0, 1))(a, b)
            self.assertEqual(len(J), 2)
            self.assertEqual([t.shape for t in J[0]], [(3, 2), (3, 3)])
            self.assertEqual([t.shape for t in J[1]], [(2,), (3,)])
            self.assertEqual(J[0][0].tolist(), [[3.0, 3.0], [4.0, 4.0], [5.0, 5.0]])
            self.assertEqual(J[0][1].tolist(), [[3.0, 0, 0], [0, 3.0, 0], [0, 0, 3.0]])
            self.assertEqual(J[1][0].tolist(), [2.0, 4.0])
            self.assertEqual(J[1][1].tolist(), [0.0, 0.0, 0.0])
        with self.assertRaises(TypeError):
            ops.jacfwd(f, grad_position=1.5)(a, b)


if __name__ == "__main__":
    unittest.main()
