"""pijit/ops/math2.py (issue 42) against PyTorch and numpy: the inverse trigonometric and hyperbolic
functions, lgamma, digamma, erfinv, the Bessel functions I0/I1 (plain and scaled), igamma/igammac,
atan2, hypot,
nextafter, signbit, and the integer ops (bitwise and/or/xor/not, shifts, gcd, lcm, population
count), at seeded random inputs of random sizes and at edge values (0, -0, +-inf, NaN, the poles
of lgamma/digamma, +-1 for erfinv), in float32 and float64, integers of every width.

Where pijit and PyTorch 1.13 differ on purpose, the case says so: torch's i0/i1 give NaN at +-inf
(scipy and pijit: +-inf)."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_torch

try:
    import numpy as np
    import torch
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import ops

INF, NAN = float("inf"), float("nan")
EDGES = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, -0.5, 1e-30, -1e-30, 2.0, -3.0, 1e30, -1e30]


class Case(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)
        self.rs = np.random.RandomState(7)

    def inputs(self, dtype, lo, hi, edges=EDGES):
        """A random shape's draws from [lo, hi), then the edge values."""
        n = int(np.prod(self.rs.randint(1, 6, size=2)))
        v = np.concatenate([self.rs.uniform(lo, hi, size=n), np.array(edges, dtype=np.float64)])
        return v.astype(dtype)

    def check(self, got, want, rtol, atol=0.0, msg=""):
        got = got.asnumpy()
        want = want.numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
        self.assertEqual(got.dtype, want.dtype, msg)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg)
        # infinities and NaN in the same places, with the same signs
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=msg)
        np.testing.assert_array_equal(np.isinf(got) * np.sign(got), np.isinf(want) * np.sign(want), err_msg=msg)


class Unary(Case):
    # (pijit name, torch function, draw range, float64 rtol, float32 rtol, atol)
    CASES = [
        ("asin", torch.asin if torch else None, (-1.0, 1.0), 1e-15, 1e-6, 0),
        ("acos", torch.acos if torch else None, (-1.0, 1.0), 1e-15, 1e-6, 0),
        ("atan", torch.atan if torch else None, (-50.0, 50.0), 1e-15, 1e-6, 0),
        ("asinh", torch.asinh if torch else None, (-50.0, 50.0), 1e-15, 1e-6, 0),
        ("acosh", torch.acosh if torch else None, (1.0, 50.0), 1e-15, 1e-6, 0),
        ("atanh", torch.atanh if torch else None, (-1.0, 1.0), 1e-15, 1e-6, 0),
        ("lgamma", torch.lgamma if torch else None, (-20.0, 40.0), 1e-13, 1e-5, 1e-6),
        ("digamma", torch.digamma if torch else None, (-20.0, 40.0), 1e-12, 1e-5, 1e-6),
        ("erfinv", torch.erfinv if torch else None, (-1.0, 1.0), 1e-14, 1e-6, 0),
        ("bessel_i0e", torch.special.i0e if torch else None, (-100.0, 100.0), 1e-14, 1e-6, 0),
        ("bessel_i1e", torch.special.i1e if torch else None, (-100.0, 100.0), 1e-14, 1e-6, 0),
    ]

    def test_against_torch(self):
        for name, tfn, (lo, hi), rtol64, rtol32, atol in self.CASES:
            for dt, rtol in (("float64", rtol64), ("float32", rtol32)):
                with self.subTest(op=name, dtype=dt):
                    x = self.inputs(dt, lo, hi)
                    got = getattr(ops, name)(pj.Tensor(x))
                    want = tfn(torch.from_numpy(x))
                    # lgamma/digamma near their zeros: absolute error (the values cancel there)
                    self.check(got, want, rtol, atol if dt == "float64" else 10 * atol, name)

    def test_i0_i1_against_torch_except_infinity(self):
        for name, tfn in (("i0", torch.i0), ("bessel_i0", torch.i0), ("bessel_i1", torch.special.i1)):
            for dt, rtol in (("float64", 1e-14), ("float32", 1e-6)):
                with self.subTest(op=name, dtype=dt):
                    edges = [e for e in EDGES if abs(e) != INF and abs(e) < 100]
                    x = self.inputs(dt, -80.0, 80.0, edges)
                    self.check(getattr(ops, name)(pj.Tensor(x)), tfn(torch.from_numpy(x)), rtol, 0, name)
        # torch 1.13 gives NaN at +-inf; the functions grow without bound (scipy: inf)
        self.assertEqual(ops.i0(pj.Tensor([INF, -INF])).tolist(), [INF, INF])
        self.assertEqual(ops.bessel_i1(pj.Tensor([INF, -INF])).tolist(), [INF, -INF])
        self.assertTrue(np.isnan(torch.i0(torch.tensor([INF])).numpy()).all())

    def test_integer_inputs_against_torch(self):
        x = self.rs.randint(-3, 4, size=12).astype("int32")
        for name, tfn in (("atan", torch.atan), ("asinh", torch.asinh), ("lgamma", torch.lgamma),
                          ("digamma", torch.digamma), ("i0", torch.i0)):
            with self.subTest(op=name):
                self.check(getattr(ops, name)(pj.Tensor(x)), tfn(torch.from_numpy(x)), 1e-5, 1e-6, name)

    def test_signbit(self):
        x = np.array([e for e in EDGES if abs(e) < 1e4] + [-np.float64(NAN)], dtype=np.float64)
        for dt in ("float64", "float32", "float16"):
            xs = x.astype(dt)
            self.assertEqual(ops.signbit(pj.Tensor(xs)).tolist(), torch.signbit(torch.from_numpy(xs)).tolist(), dt)
            self.assertEqual(ops.signbit(pj.Tensor(xs)).tolist(), np.signbit(xs).tolist(), dt)
        for dt in ("int8", "int16", "int32", "int64", "uint8", "uint32"):
            xs = self.rs.randint(-100 if dt[0] == "i" else 0, 100, size=9).astype(dt)
            self.assertEqual(ops.signbit(pj.Tensor(xs)).tolist(), np.signbit(xs).tolist(), dt)

    def test_sinc_composition(self):
        # ops.sinc stays composed (functional2): sin(pi x) / (pi x), 1 at 0
        for dt, rtol in (("float64", 1e-13), ("float32", 2e-5)):
            x = self.inputs(dt, -10.0, 10.0, [0.0, -0.0, 1.0, -2.0, 0.5, 1e-20, 1e4, INF, NAN])
            self.check(ops.sinc(pj.Tensor(x)), torch.sinc(torch.from_numpy(x)), rtol, 1e-6, "sinc")


class Binary(Case):
    def test_atan2_hypot_nextafter_against_torch(self):
        pairs = [(a, b) for a in (0.0, -0.0, INF, -INF, NAN, 1.0, -2.5) for b in (0.0, -0.0, INF, -INF, NAN, 3.0, -1e-30)]
        ea = np.array([p[0] for p in pairs])
        eb = np.array([p[1] for p in pairs])
        for name, tfn in (("atan2", torch.atan2), ("hypot", torch.hypot), ("nextafter", torch.nextafter)):
            for dt, rtol in (("float64", 1e-15), ("float32", 1e-6)):
                with self.subTest(op=name, dtype=dt):
                    n = 20
                    a = np.concatenate([self.rs.uniform(-1e3, 1e3, n), ea]).astype(dt)
                    b = np.concatenate([self.rs.uniform(-1e3, 1e3, n), eb]).astype(dt)
                    got = getattr(ops, name)(pj.Tensor(a), pj.Tensor(b))
                    want = tfn(torch.from_numpy(a), torch.from_numpy(b))
                    self.check(got, want, 0 if name == "nextafter" else rtol, 0, name)
                    if name == "atan2":  # signed zeros too (a NaN's sign is no result)
                        g, w = got.asnumpy(), want.numpy()
                        keep = ~np.isnan(w)
                        np.testing.assert_array_equal(np.signbit(g[keep]), np.signbit(w[keep]))
        # broadcasting and promotion: int with float64 -> float64
        a = self.rs.uniform(-2, 2, (3, 1))
        b = self.rs.randint(-3, 3, (4,)).astype("int32")
        self.check(ops.atan2(pj.Tensor(a), pj.Tensor(b)), torch.atan2(torch.from_numpy(a), torch.from_numpy(b)), 1e-15)

    def test_igamma_igammac_against_torch(self):
        for dt, rtol in (("float64", 1e-11), ("float32", 2e-5)):
            a = np.concatenate([self.rs.uniform(0.05, 20, 40), [0.0, 0.0, 1.0, 2.0, INF, 3.0, NAN, 1.0]]).astype(dt)
            x = np.concatenate([self.rs.uniform(0.0, 40, 40), [0.0, 1.0, 0.0, INF, 1.0, 0.0, 1.0, NAN]]).astype(dt)
            for name, tfn in (("igamma", torch.igamma), ("igammac", torch.igammac)):
                with self.subTest(op=name, dtype=dt):
                    got = getattr(ops, name)(pj.Tensor(a), pj.Tensor(x))
                    self.check(got, tfn(torch.from_numpy(a), torch.from_numpy(x)), rtol, 1e-14 if dt == "float64" else 1e-7, name)

    def test_bitwise_gcd_lcm_against_numpy_and_torch(self):
        for dt in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
            info = np.iinfo(dt)
            a = self.rs.randint(max(info.min, -2 ** 62), min(info.max, 2 ** 62), size=(3, 4), dtype=np.int64).astype(dt)
            b = self.rs.randint(max(info.min, -2 ** 62), min(info.max, 2 ** 62), size=(4,), dtype=np.int64).astype(dt)
            a[0, 0], b[1] = 0, 0
            for name, nfn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                              ("bitwise_xor", np.bitwise_xor), ("gcd", np.gcd), ("lcm", np.lcm)):
                with self.subTest(op=name, dtype=dt):
                    got = getattr(ops, name)(pj.Tensor(a), pj.Tensor(b))
                    want = nfn(a, b)
                    self.assertEqual(got.asnumpy().dtype, want.dtype)
                    np.testing.assert_array_equal(got.asnumpy(), want)
            if dt in ("int32", "int64", "uint8"):  # torch's integer types
                ta, tb = torch.from_numpy(a), torch.from_numpy(b)
                np.testing.assert_array_equal(ops.bitwise_xor(pj.Tensor(a), pj.Tensor(b)).asnumpy(),
                                              torch.bitwise_xor(ta, tb).numpy())
                np.testing.assert_array_equal(ops.gcd(pj.Tensor(a), pj.Tensor(b)).asnumpy(), torch.gcd(ta, tb).numpy())
            np.testing.assert_array_equal(ops.invert(pj.Tensor(a)).asnumpy(), np.invert(a))
            np.testing.assert_array_equal((~pj.Tensor(a)).asnumpy(), ~a)
            np.testing.assert_array_equal((pj.Tensor(a) & pj.Tensor(b)).asnumpy(), a & b)

    def test_shifts_against_numpy(self):
        for dt in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
            info = np.iinfo(dt)
            bits = info.bits
            a = self.rs.randint(max(info.min, -2 ** 62), min(info.max, 2 ** 62), size=24, dtype=np.int64).astype(dt)
            # counts inside the width, at it, past it, and (signed) negative
            lo = -3 if info.min < 0 else 0
            s = self.rs.randint(lo, bits + 3, size=24).astype(dt)
            s[:4] = np.array([0, bits - 1, bits, bits + 1]).astype(dt)
            with np.errstate(all="ignore"):
                for name, nfn in (("bitwise_left_shift", np.left_shift), ("bitwise_right_shift", np.right_shift)):
                    with self.subTest(op=name, dtype=dt):
                        got = getattr(ops, name)(pj.Tensor(a), pj.Tensor(s)).asnumpy()
                        np.testing.assert_array_equal(got, nfn(a, s))
                        self.assertEqual(got.dtype, np.dtype(dt))
                np.testing.assert_array_equal((pj.Tensor(a) << pj.Tensor(s)).asnumpy(), a << s)
                np.testing.assert_array_equal((pj.Tensor(a) >> pj.Tensor(s)).asnumpy(), a >> s)

    def test_population_count(self):
        for dt in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
            info = np.iinfo(dt)
            a = self.rs.randint(max(info.min, -2 ** 62), min(info.max, 2 ** 62), size=20, dtype=np.int64).astype(dt)
            a[:3] = np.array([0, info.max, info.min], dtype=dt)
            want = [bin(int(v) & ((1 << info.bits) - 1)).count("1") for v in a]
            got = ops.population_count(pj.Tensor(a)).asnumpy()
            self.assertEqual(got.dtype, np.uint8)
            self.assertEqual(got.tolist(), want, dt)

    def test_bool_logic(self):
        a = self.rs.rand(5, 3) > 0.5
        b = self.rs.rand(3) > 0.5
        for name, nfn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)):
            got = getattr(ops, name)(pj.Tensor(a), pj.Tensor(b)).asnumpy()
            self.assertEqual(got.dtype, np.bool_)
            np.testing.assert_array_equal(got, nfn(a, b))
        np.testing.assert_array_equal(ops.invert(pj.Tensor(a)).asnumpy(), ~a)


class Gradients(Case):
    def test_against_torch_autograd(self):
        fns = [("asin", torch.asin, (-0.9, 0.9)), ("acos", torch.acos, (-0.9, 0.9)), ("atan", torch.atan, (-5, 5)),
               ("asinh", torch.asinh, (-5, 5)), ("acosh", torch.acosh, (1.1, 5)), ("atanh", torch.atanh, (-0.9, 0.9)),
               ("lgamma", torch.lgamma, (0.1, 8)), ("digamma", torch.digamma, (0.1, 8)),
               ("erfinv", torch.erfinv, (-0.95, 0.95)), ("i0", torch.i0, (-5, 5)),
               ("bessel_i0e", torch.special.i0e, (-5, 5)), ("bessel_i1", torch.special.i1, (-5, 5)),
               ("bessel_i1e", torch.special.i1e, (-5, 5))]
        for name, tfn, (lo, hi) in fns:
            with self.subTest(op=name):
                x = self.rs.uniform(lo, hi, size=7)
                w = self.rs.uniform(-1, 1, size=7)
                g = pj.grad(lambda t: (getattr(ops, name)(t) * pj.Tensor(w)).sum())(pj.Tensor(x))
                tx = torch.from_numpy(x).requires_grad_()
                (tfn(tx) * torch.from_numpy(w)).sum().backward()
                # torch's trigamma (digamma's gradient) is 1e-10 off (mpmath: psi'(0.3) =
                # 12.245364546107732, torch 12.245364544940365, pijit 12.24536454610773)
                rtol = 1e-9 if name == "digamma" else 1e-12
                np.testing.assert_allclose(g.asnumpy(), tx.grad.numpy(), rtol=rtol, atol=1e-14, err_msg=name)
        for name, tfn in (("atan2", torch.atan2), ("hypot", torch.hypot)):
            with self.subTest(op=name):
                a, b = self.rs.uniform(-3, 3, size=6), self.rs.uniform(-3, 3, size=6)
                ga, gb = pj.grad(lambda x, y: getattr(ops, name)(x, y).sum(), grad_position=(0, 1))(pj.Tensor(a), pj.Tensor(b))
                ta, tb = torch.from_numpy(a).requires_grad_(), torch.from_numpy(b).requires_grad_()
                tfn(ta, tb).sum().backward()
                np.testing.assert_allclose(ga.asnumpy(), ta.grad.numpy(), rtol=1e-13)
                np.testing.assert_allclose(gb.asnumpy(), tb.grad.numpy(), rtol=1e-13)


if __name__ == "__main__":
    unittest.main()
