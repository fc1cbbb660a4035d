"""Elementwise maths with kernels of their own (issue 42; pijit/ops/math2.py, kernels/elementwise.h,
kernels/special_math.h): asin/acos/atan and the inverse hyperbolics, lgamma, digamma (trigamma,
internal), erfinv, the Bessel functions I0/I1 and their scaled forms, igamma/igammac, atan2,
hypot, nextafter,
signbit, and the integer ops (bitwise and/or/xor/not, shifts, gcd, lcm, population count) with
the Tensor operators &, |, ^, <<, >>, ~ that use them.

Values come from Python's math module, from series summed here with math.fsum, or by hand (the
comments give the arithmetic); gradients from central differences in float64; every op runs inside
jit as one graph with no break and gives what eager gives."""
import math
import struct
import unittest

import pijit as ms
from pijit import ops
from pijit.ops import operations as P
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


F64 = ms.float64
INF, NAN = float("inf"), float("nan")


def same(a, b):
    """Equal floats, NaN equal to NaN and the sign of zero compared."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def i_series(nu, x):
    """I_nu(x) by its power series, summed exactly rounded (math.fsum)."""
    q = x * x / 4
    term = (x / 2) ** nu / math.factorial(nu)
    terms = [term]
    for k in range(1, 200):
        term *= q / (k * (k + nu))
        terms.append(term)
    return math.fsum(terms)


class Values(unittest.TestCase):
    def close(self, got, want, rel=1e-14, abs_=0.0, msg=""):
        self.assertEqual(len(got), len(want), msg)
        for g, w in zip(got, want):
            if math.isnan(w) or math.isinf(w):
                self.assertTrue(same(float(g), float(w)), "%s: %r != %r" % (msg, g, w))
            else:
                self.assertLessEqual(abs(g - w), max(rel * abs(w), abs_), "%s: %r != %r" % (msg, g, w))

    def test_inverse_trig_and_hyperbolic_match_math(self):
        xs = [-1.0, -0.7, -1e-300, -0.0, 0.0, 0.25, 0.5, 0.999, 1.0]
        for name, ref in (("asin", math.asin), ("acos", math.acos), ("atan", math.atan),
                          ("asinh", math.asinh)):
            got = getattr(ops, name)(T(xs, F64)).tolist()
            self.close(got, [ref(x) for x in xs], 2e-16, msg=name)
        big = [-1e300, -3.0, 1e-20, 2.5, 1e300, INF]
        self.close(ops.atan(T(big, F64)).tolist(), [math.atan(x) for x in big], 2e-16, msg="atan")
        self.close(ops.asinh(T(big, F64)).tolist(), [math.asinh(x) for x in big], 2e-16, msg="asinh")
        ys = [1.0, 1.0 + 1e-12, 2.0, 1e10, 1e300, INF]
        self.close(ops.acosh(T(ys, F64)).tolist(), [math.acosh(y) for y in ys], 2e-16, msg="acosh")
        zs = [-0.999999, -0.5, -1e-30, 0.0, 0.3, 0.75]
        self.close(ops.atanh(T(zs, F64)).tolist(), [math.atanh(z) for z in zs], 2e-16, msg="atanh")
        # precision where the old compositions lost it: asinh(1e-20) = 1e-20 (log(1 + ...) gave 0)
        self.assertEqual(ops.asinh(T([1e-20], F64)).tolist(), [1e-20])
        self.assertEqual(ops.atanh(T([1e-20], F64)).tolist(), [1e-20])

    def test_inverse_trig_edges(self):
        got = ops.asin(T([2.0, -1.5, NAN], F64)).tolist()
        self.assertTrue(all(math.isnan(v) for v in got))
        self.assertTrue(math.isnan(ops.acos(T([1.0001])).tolist()[0]))
        self.assertEqual(ops.atanh(T([1.0, -1.0], F64)).tolist(), [INF, -INF])
        self.assertTrue(math.isnan(ops.atanh(T([2.0])).tolist()[0]))
        self.assertTrue(math.isnan(ops.acosh(T([0.5])).tolist()[0]))
        self.assertEqual(ops.atan(T([INF, -INF], F64)).tolist(), [math.pi / 2, -math.pi / 2])

    def test_lgamma(self):
        xs = [0.5, 1.0, 2.0, 3.5, 10.0, 171.5, 1e300, -0.5, -2.5, -1e-3]
        # (absolute near lgamma's zeros: Python's own lgamma is 5e-16 off at -2.5, glibc's is not)
        self.close(ops.lgamma(T(xs, F64)).tolist(), [math.lgamma(x) for x in xs], 1e-15, 1e-15, msg="lgamma")
        # poles: 0 and the negative integers; log|Gamma| of -inf is inf, as PyTorch's
        self.assertEqual(ops.lgamma(T([0.0, -0.0, -1.0, -7.0, INF, -INF], F64)).tolist(), [INF] * 6)
        # log Gamma(1/2) = log sqrt(pi)
        self.assertAlmostEqual(ops.lgamma(T([0.5])).tolist()[0], 0.5 * math.log(math.pi), places=6)

    def test_digamma(self):
        euler = 0.57721566490153286061
        # psi(1) = -gamma; psi(1/2) = -gamma - 2 log 2; psi(n + 1) = H_n - gamma
        xs = [1.0, 0.5, 5.0, 11.0, 100.0]
        want = [-euler, -euler - 2 * math.log(2), 1 + 1 / 2 + 1 / 3 + 1 / 4 - euler,
                math.fsum(1.0 / k for k in range(1, 11)) - euler,
                math.fsum(1.0 / k for k in range(1, 100)) - euler]
        self.close(ops.digamma(T(xs, F64)).tolist(), want, 1e-15, 1e-15, msg="digamma")
        # reflection: psi(1 - x) - psi(x) = pi cot(pi x): psi(-1/2) = psi(3/2) = psi(1/2) + 2
        self.close(ops.digamma(T([-0.5, -2.5], F64)).tolist(),
                   [-euler - 2 * math.log(2) + 2, -euler - 2 * math.log(2) + 2 + 2 / 3 + 2 / 5 * 1 + 0],
                   1e-14, 1e-15, msg="digamma reflection")  # (absolute: psi(1.5) = 0.036 cancels)
        # a tiny negative x: psi(x) ~ -1/x (the reflection must not round x - floor(x) to 1)
        self.close(ops.digamma(T([-1e-30, -1e-300], F64)).tolist(), [1e30, 1e300], 1e-15, msg="digamma tiny")
        self.close(ms._C.op("trigamma", (T([-1e-30], F64),)).tolist(), [1e60], 1e-15, msg="trigamma tiny")
        # PyTorch's edges: -inf at +0, +inf at -0, NaN at the negative integers and -inf
        got = ops.digamma(T([0.0, -0.0, -1.0, -3.0, -INF, INF, NAN], F64)).tolist()
        self.assertEqual(got[:2], [-INF, INF])
        self.assertTrue(all(math.isnan(v) for v in got[2:5]))
        self.assertEqual(got[5], INF)
        self.assertTrue(math.isnan(got[6]))

    def test_trigamma_internal_op(self):
        # psi'(1) = pi^2/6, psi'(1/2) = pi^2/2, psi'(n + 1) = pi^2/6 - sum_{k<=n} 1/k^2
        got = ms._C.op("trigamma", (T([1.0, 0.5, 4.0, 0.0, -2.0], F64),)).tolist()
        want = [math.pi ** 2 / 6, math.pi ** 2 / 2, math.pi ** 2 / 6 - (1 + 1 / 4 + 1 / 9), INF, INF]
        self.close(got, want, 1e-15, msg="trigamma")
        # reflection: psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x): psi'(-1/2) = pi^2 - psi'(3/2)
        self.close(ms._C.op("trigamma", (T([-0.5], F64),)).tolist(),
                   [math.pi ** 2 - (math.pi ** 2 / 2 - 4)], 1e-14, msg="trigamma reflection")

    def test_erfinv(self):
        ys = [1e-300, 1e-10, 1e-3, 0.1, 0.5, 0.5000001, 0.9, 0.999, 1 - 1e-10, 1 - 2 ** -53, -0.7]
        got = ops.erfinv(T(ys, F64)).tolist()
        for y, x in zip(ys, got):
            # the residual is what rounding x (2 ulp) and erf/erfc (2 ulp) leave
            slack = 2 * abs(x) * 2 ** -52 * 2 / math.sqrt(math.pi) * math.exp(-x * x)
            if abs(y) > 0.5:  # erfc keeps the relative precision of 1 - y
                self.assertLessEqual(abs(math.erfc(abs(x)) - (1 - abs(y))), slack + 4.5e-16 * (1 - abs(y)), (y, x))
            else:
                self.assertLessEqual(abs(math.erf(x) - y), slack + 4.5e-16 * abs(y), (y, x))
        # erfinv(0.999) = 2.32675376551352449386... (mpmath), correctly rounded
        self.assertEqual(ops.erfinv(T([0.999], F64)).tolist(), [2.3267537655135246])
        self.assertEqual(ops.erfinv(T([1.0, -1.0, 0.0, -0.0], F64)).tolist(), [INF, -INF, 0.0, -0.0])
        self.assertTrue(same(ops.erfinv(T([-0.0], F64)).tolist()[0], -0.0))
        self.assertTrue(all(math.isnan(v) for v in ops.erfinv(T([1.5, -1.0001, NAN], F64)).tolist()))
        # float32: erf of the result gives the input back to float32 precision
        y32 = ops.erfinv(T([0.25, 0.75, 0.99])).tolist()
        self.close([math.erf(v) for v in y32], [0.25, 0.75, 0.99], 3e-7, msg="erfinv float32")

    def test_bessel_functions(self):
        xs = [0.0, 1e-5, 0.5, 1.0, 3.0, 7.5, 15.0, 19.99, 20.01, 30.0, 60.0]
        for x in xs:
            i0, i1 = i_series(0, x), i_series(1, x)
            self.close(ops.bessel_i0(T([x, -x], F64)).tolist(), [i0, i0], 1e-14, msg="i0(%r)" % x)
            self.close(ops.i0(T([x], F64)).tolist(), [i0], 1e-14, msg="i0")
            self.close(ops.bessel_i1(T([x, -x], F64)).tolist(), [i1, -i1], 1e-14, msg="i1(%r)" % x)
            e = math.exp(-x)
            self.close(ops.bessel_i0e(T([x, -x], F64)).tolist(), [i0 * e] * 2, 1e-14, msg="i0e(%r)" % x)
            self.close(ops.bessel_i1e(T([x, -x], F64)).tolist(), [i1 * e, -i1 * e], 1e-14, msg="i1e(%r)" % x)
        # large x, Hankel's expansion: I0e(x) ~ (1 + 1/(8x) + 9/(128x^2)) / sqrt(2 pi x)
        x = 1e6
        self.close(ops.bessel_i0e(T([x], F64)).tolist(),
                   [(1 + 1 / (8 * x) + 9 / (128 * x * x)) / math.sqrt(2 * math.pi * x)], 1e-15)
        self.assertEqual(ops.bessel_i0(T([INF, -INF], F64)).tolist(), [INF, INF])
        self.assertEqual(ops.bessel_i1(T([INF, -INF], F64)).tolist(), [INF, -INF])
        self.assertEqual(ops.bessel_i0e(T([INF], F64)).tolist(), [0.0])
        self.assertEqual(ops.bessel_i0(T([800.0], F64)).tolist(), [INF])
        self.assertTrue(math.isfinite(ops.bessel_i0(T([700.0], F64)).tolist()[0]))
        self.assertTrue(math.isnan(ops.bessel_i1e(T([NAN], F64)).tolist()[0]))

    def test_integer_and_bool_inputs_compute_in_float32(self):
        for name in ("asin", "acos", "atan", "asinh", "acosh", "atanh", "lgamma", "digamma",
                     "erfinv", "i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
            fn = getattr(ops, name)
            r = fn(T([0, 1], ms.int32))
            self.assertEqual(r.dtype, ms.float32, name)
            self.assertTrue(all(same(a, b) for a, b in zip(r.tolist(), fn(T([0.0, 1.0])).tolist())), name)
            self.assertEqual(fn(T([True])).dtype, ms.float32, name)
            self.assertEqual(fn(T([0.5], F64)).dtype, F64, name)
            self.assertEqual(fn(T([0.5], ms.float16)).dtype, ms.float16, name)
        # float16 computes in float32 and rounds once: asin(0.5) = pi/6 -> 0.5234375 in float16
        self.assertEqual(ops.asin(T([0.5], ms.float16)).tolist(), [0.5234375])

    def test_complex_refused(self):
        for name in ("asin", "lgamma", "erfinv", "signbit"):
            with self.assertRaisesRegex(TypeError, "does not support dtype Complex64"):
                getattr(ops, name)(T([1 + 1j]))
        with self.assertRaises(TypeError):
            ops.asin([0.5])  # not a Tensor

    def test_atan2_hypot_nextafter(self):
        ys = [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, INF, 3.0, -2.0]
        xs = [0.0, 0.0, -0.0, -0.0, 0.0, -INF, INF, 4.0, -7.0]
        got = ops.atan2(T(ys, F64), T(xs, F64)).tolist()
        for g, y, x in zip(got, ys, xs):
            self.assertTrue(same(g, math.atan2(y, x)), (y, x, g))
        self.assertEqual(ops.arctan2(T([1.0]), 1).dtype, ms.float32)
        self.assertEqual(ops.atan2(T([1], ms.int32), T([1], ms.int64)).dtype, ms.float32)
        self.assertEqual(ops.atan2(T([1.0], F64), T([1.0])).dtype, F64)
        a = [3.0, 1e300, 1e-300, INF, NAN, -5.0, 0.0]
        b = [4.0, 1e300, 1e-300, NAN, -INF, 12.0, 0.0]
        got = ops.hypot(T(a, F64), T(b, F64)).tolist()
        self.assertEqual(got[0], 5.0)
        self.close(got[1:3], [math.sqrt(2) * 1e300, math.sqrt(2) * 1e-300], 3e-16, msg="hypot")
        self.assertEqual(got[3:], [INF, INF, 13.0, 0.0])  # hypot(inf, nan) is inf (C99, numpy)
        # one ulp: 1 + 2^-52 in float64, 1 + 2^-23 in float32; towards itself it stays
        self.assertEqual(ops.nextafter(T([1.0, 1.0, 0.0], F64), T([2.0, 1.0, -1.0], F64)).tolist(),
                         [1 + 2 ** -52, 1.0, -5e-324])
        self.assertEqual(ops.nextafter(T([1.0]), T([2.0])).tolist(), [1 + 2 ** -23])
        self.assertTrue(math.isnan(ops.nextafter(T([NAN]), T([1.0])).tolist()[0]))
        with self.assertRaises(TypeError):
            ops.hypot(1.0, 2.0)

    def test_igamma_igammac(self):
        xs = [1e-3, 0.3, 1.0, 2.5, 7.0, 30.0]
        for x in xs:
            # P(1, x) = 1 - e^-x; P(1/2, x) = erf(sqrt x); P(n, x) = 1 - e^-x sum_{k<n} x^k / k!
            p4 = 1 - math.exp(-x) * math.fsum(x ** k / math.factorial(k) for k in range(4))
            q4 = math.exp(-x) * math.fsum(x ** k / math.factorial(k) for k in range(4))
            got = ops.igamma(T([1.0, 0.5, 4.0], F64), T([x] * 3, F64)).tolist()
            self.close(got, [-math.expm1(-x), math.erf(math.sqrt(x)), p4], 1e-14, 1e-16, msg="igamma(%r)" % x)
            got = ops.igammac(T([1.0, 0.5, 4.0], F64), T([x] * 3, F64)).tolist()
            self.close(got, [math.exp(-x), math.erfc(math.sqrt(x)), q4], 1e-13, msg="igammac(%r)" % x)
        # each side computed directly: Q(1, 30) = e^-30 keeps its relative precision (not 1 - P)
        self.close(ops.igammac(T([1.0], F64), T([700.0], F64)).tolist(), [math.exp(-700)], 1e-13)
        self.close(ops.igamma(T([30.0], F64), T([1.0], F64)).tolist(),
                   [math.exp(-1) * math.fsum(1 / math.factorial(k) for k in range(30, 60))], 1e-13)
        # PyTorch's edges: NaN for a < 0, x < 0, a = x = 0, a = x = inf
        a = [0.0, 0.0, 1.0, 1.0, -1.0, 2.0, INF, INF]
        x = [0.0, 1.0, 0.0, -1.0, 1.0, INF, 1.0, INF]
        got = ops.igamma(T(a, F64), T(x, F64)).tolist()
        want = [NAN, 1.0, 0.0, NAN, NAN, 1.0, 0.0, NAN]
        self.assertTrue(all(same(g, w) for g, w in zip(got, want)), got)
        got = ops.igammac(T(a, F64), T(x, F64)).tolist()
        want = [NAN, 0.0, 1.0, NAN, NAN, 0.0, 1.0, NAN]
        self.assertTrue(all(same(g, w) for g, w in zip(got, want)), got)
        self.assertEqual(ops.igamma(T([2], ms.int32), T([1], ms.int32)).dtype, ms.float32)
        self.assertEqual(P.Igamma()(T([1.0]), T([1.0])).tolist(), ops.igamma(T([1.0]), T([1.0])).tolist())
        self.assertEqual(P.Igammac()(T([1.0]), T([1.0])).tolist(), ops.igammac(T([1.0]), T([1.0])).tolist())

    def test_signbit(self):
        neg_nan = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]
        got = ops.signbit(T([-0.0, 0.0, -1.5, 2.0, -INF, INF, neg_nan, NAN], F64)).tolist()
        self.assertEqual(got, [True, False, True, False, True, False, True, False])
        self.assertEqual(ops.signbit(T([-0.0, 1.0, -3.0], ms.float16)).tolist(), [True, False, True])
        self.assertEqual(ops.signbit(T([-0.0, 1.0], ms.bfloat16)).tolist(), [True, False])
        self.assertEqual(ops.signbit(T([-3, 0, 4], ms.int8)).tolist(), [True, False, False])
        self.assertEqual(ops.signbit(T([2 ** 63, 1], ms.uint64)).tolist(), [False, False])
        self.assertEqual(ops.signbit(T([True, False])).tolist(), [False, False])
        self.assertEqual(ops.signbit(T([1.0])).dtype, ms.bool_)


class Integers(unittest.TestCase):
    def test_bitwise_and_or_xor(self):
        a, b = T([12, -7, 255, 0], ms.int32), T([10, 3, 1, -1], ms.int32)
        # 12 = 0b1100, 10 = 0b1010; -7 = ...11001, 3 = 0b11
        self.assertEqual(ops.bitwise_and(a, b).tolist(), [8, 1, 1, 0])
        self.assertEqual(ops.bitwise_or(a, b).tolist(), [14, -5, 255, -1])
        self.assertEqual(ops.bitwise_xor(a, b).tolist(), [6, -6, 254, -1])
        self.assertEqual(ops.bitwise_and(a, b).dtype, ms.int32)
        # int8 with uint8 promotes to int16 (MindSpore's table)
        r = ops.bitwise_or(T([-128], ms.int8), T([255], ms.uint8))
        self.assertEqual((r.dtype, r.tolist()), (ms.int16, [-1]))
        # uint64 keeps all its bits
        self.assertEqual(ops.bitwise_xor(T([2 ** 64 - 1], ms.uint64), T([1], ms.uint64)).tolist(), [2 ** 64 - 2])
        # with a Python int: the tensor's dtype (weak scalar)
        self.assertEqual(ops.bitwise_and(T([7, 12], ms.uint8), 5).dtype, ms.uint8)
        # bool: logical
        t, f = T([True, True, False]), T([True, False, False])
        self.assertEqual(ops.bitwise_and(t, f).tolist(), [True, False, False])
        self.assertEqual(ops.bitwise_or(t, f).tolist(), [True, True, False])
        self.assertEqual(ops.bitwise_xor(t, f).tolist(), [False, True, False])
        self.assertEqual(ops.bitwise_xor(t, f).dtype, ms.bool_)

    def test_floats_refused(self):
        with self.assertRaisesRegex(TypeError, "bitwise_and does not support dtype Float32: it takes integers or bool"):
            ops.bitwise_and(T([1.0]), T([1.0]))
        with self.assertRaisesRegex(TypeError, "gcd does not support dtype Bool: it takes integers"):
            ops.gcd(T([True]), T([True]))
        with self.assertRaisesRegex(TypeError, "bitwise_left_shift does not support dtype Float64"):
            ops.bitwise_left_shift(T([1.0], F64), 1)
        with self.assertRaisesRegex(TypeError, "bitwise_not does not support dtype Float32"):
            ops.invert(T([1.0]))
        with self.assertRaisesRegex(TypeError, "population_count does not support dtype Float32"):
            ops.population_count(T([1.0]))

    def test_shifts_numpy_semantics(self):
        x = T([1, -8, 5, 1, -1], ms.int32)
        self.assertEqual(ops.bitwise_left_shift(x, T([3, 1, 0, 31, 4], ms.int32)).tolist(),
                         [8, -16, 5, -2 ** 31, -16])
        self.assertEqual(ops.bitwise_right_shift(x, T([0, 1, 1, 3, 30], ms.int32)).tolist(),
                         [1, -4, 2, 0, -1])
        # counts at or past the width, or negative: 0 (-1 for a negative number shifted right)
        self.assertEqual(ops.bitwise_left_shift(T([1, 1, 1], ms.int32), T([32, 100, -1], ms.int32)).tolist(), [0, 0, 0])
        self.assertEqual(ops.bitwise_right_shift(T([-5, 5, -5], ms.int64), T([64, 64, -1], ms.int64)).tolist(), [-1, 0, -1])
        # at the dtype's own width: int8 1 << 7 = -128, 1 << 8 = 0; uint8 200 << 1 = 400 mod 256
        self.assertEqual(ops.bitwise_left_shift(T([1, 1], ms.int8), T([7, 8], ms.int8)).tolist(), [-128, 0])
        self.assertEqual(ops.bitwise_left_shift(T([200], ms.uint8), 1).tolist(), [144])
        self.assertEqual(ops.bitwise_right_shift(T([-128], ms.int8), 10).tolist(), [-1])
        # uint64 shifts right logically: 2^63 >> 1 = 2^62 (an int64 would keep the sign bit)
        self.assertEqual(ops.bitwise_right_shift(T([2 ** 63], ms.uint64), T([1], ms.uint64)).tolist(), [2 ** 62])
        self.assertEqual(ops.bitwise_left_shift(T([3], ms.uint32), T([31], ms.uint32)).tolist(), [2 ** 31])

    def test_gcd_lcm(self):
        a = T([12, -12, 0, 0, 7, 2 ** 40], ms.int64)
        b = T([18, 18, 0, -5, 13, 2 ** 20 * 3], ms.int64)
        self.assertEqual(ops.gcd(a, b).tolist(), [6, 6, 0, 5, 1, 2 ** 20])
        self.assertEqual(ops.lcm(a, b).tolist(), [36, 36, 0, 0, 91, 2 ** 40 * 3])
        self.assertEqual(ops.gcd(T([-4, 9], ms.int16), T([6, 6], ms.int16)).dtype, ms.int16)
        self.assertEqual(ops.lcm(T([-4, 9], ms.int8), 6).tolist(), [12, 18])
        self.assertEqual(ops.gcd(T([2 ** 64 - 2], ms.uint64), T([2 ** 63], ms.uint64)).tolist(), [2])

    def test_invert_and_population_count(self):
        self.assertEqual(ops.invert(T([0, 5, -1], ms.int32)).tolist(), [-1, -6, 0])
        self.assertEqual(ops.bitwise_not(T([0, 200], ms.uint8)).tolist(), [255, 55])
        self.assertEqual(ops.invert(T([True, False])).tolist(), [False, True])
        r = ops.population_count(T([0, 1, 7, -1, -128], ms.int8))
        self.assertEqual((r.dtype, r.tolist()), (ms.uint8, [0, 1, 3, 8, 1]))
        self.assertEqual(ops.population_count(T([-1, 2 ** 40 + 3], ms.int64)).tolist(), [64, 3])
        self.assertEqual(ops.population_count(T([-1], ms.int16)).tolist(), [16])
        self.assertEqual(ops.population_count(T([2 ** 64 - 1], ms.uint64)).tolist(), [64])

    def test_tensor_operators(self):
        a, b = T([12, -7, 5], ms.int64), T([10, 3, 1], ms.int64)
        self.assertEqual((a & b).tolist(), [8, 1, 1])
        self.assertEqual((a | b).tolist(), [14, -5, 5])
        self.assertEqual((a ^ b).tolist(), [6, -6, 4])
        self.assertEqual((a << 2).tolist(), [48, -28, 20])
        self.assertEqual((a >> 1).tolist(), [6, -4, 2])
        self.assertEqual((1 << b).tolist(), [1024, 8, 2])
        self.assertEqual((~a).tolist(), [-13, 6, -6])
        self.assertEqual((a & 6).dtype, ms.int64)
        # bool stays logical and bool
        t, f = T([True, False]), T([True, True])
        self.assertEqual(((t & f).dtype, (t & f).tolist()), (ms.bool_, [True, False]))
        self.assertEqual((t | f).tolist(), [True, True])
        self.assertEqual((t ^ f).tolist(), [False, True])
        self.assertEqual((~t).tolist(), [False, True])
        # numpy: a bool mask with a Python int is an int64 operation
        self.assertEqual((t & 1).tolist(), [1, 0])
        for op in (lambda x: x & x, lambda x: x | 1, lambda x: x << 1, lambda x: ~x):
            with self.assertRaises(TypeError):
                op(T([1.0, 2.0]))


class Primitives(unittest.TestCase):
    def test_classes_at_mindspore_paths(self):
        from pijit.ops.operations import math_ops
        x = T([0.25, -0.5], F64)
        for cls, fn in (("Asin", ops.asin), ("ACos", ops.acos), ("Atan", ops.atan), ("Asinh", ops.asinh),
                        ("Acosh", ops.acosh), ("Atanh", ops.atanh), ("Lgamma", ops.lgamma),
                        ("Digamma", ops.digamma), ("Erfinv", ops.erfinv), ("BesselI0", ops.bessel_i0),
                        ("BesselI0e", ops.bessel_i0e), ("BesselI1", ops.bessel_i1),
                        ("BesselI1e", ops.bessel_i1e)):
            self.assertIs(getattr(P, cls), getattr(ops, cls))
            self.assertTrue(all(same(a, b) for a, b in zip(getattr(P, cls)()(x).tolist(), fn(x).tolist())), cls)
            self.assertEqual(repr(getattr(P, cls)()), "Prim[%s]" % cls)
        for cls in ("Asin", "Atan2", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Erfinv", "BesselI0e"):
            self.assertIs(getattr(math_ops, cls), getattr(ops, cls))
        i, j = T([12, -7], ms.int32), T([18, 2], ms.int32)
        for cls, fn in (("BitwiseAnd", ops.bitwise_and), ("BitwiseOr", ops.bitwise_or),
                        ("BitwiseXor", ops.bitwise_xor), ("LeftShift", ops.bitwise_left_shift),
                        ("RightShift", ops.bitwise_right_shift), ("Gcd", ops.gcd), ("Lcm", ops.lcm)):
            self.assertEqual(getattr(P, cls)()(i, j).tolist(), fn(i, j).tolist(), cls)
        self.assertEqual(P.Atan2()(x, x).tolist(), ops.atan2(x, x).tolist())
        self.assertEqual(P.NextAfter()(x, x + 1).tolist(), ops.nextafter(x, x + 1).tolist())
        self.assertEqual(P.PopulationCount()(i).tolist(), [2, 30])
        # Rint: nearest, halves to even
        self.assertEqual(P.Rint()(T([0.5, 1.5, 2.5, -0.5, -1.7])).tolist(), [0.0, 2.0, 2.0, -0.0, -2.0])
        self.assertEqual(P.Rint()(T([3], ms.int32)).tolist(), [3])
        with self.assertRaisesRegex(TypeError, "Asin takes 1 inputs but 2 were given"):
            P.Asin()(x, x)


def numeric_grad(fn, xs, k, h=1e-6):
    """d fn(*xs)[i] / d xs[k][i] by central differences (elementwise ops; float64 lists)."""
    out = []
    for i in range(len(xs[k])):
        def at(d):
            args = [list(v) for v in xs]
            args[k][i] += d
            return fn(*[T(a, F64) for a in args]).tolist()[i]
        out.append((at(h) - at(-h)) / (2 * h))
    return out


class Gradients(unittest.TestCase):
    CASES = [
        ("asin", ops.asin, [[-0.6, 0.1, 0.8]]),
        ("acos", ops.acos, [[-0.6, 0.1, 0.8]]),
        ("atan", ops.atan, [[-3.0, 0.1, 2.0]]),
        ("asinh", ops.asinh, [[-3.0, 0.1, 2.0]]),
        ("acosh", ops.acosh, [[1.5, 3.0, 10.0]]),
        ("atanh", ops.atanh, [[-0.6, 0.1, 0.8]]),
        ("lgamma", ops.lgamma, [[0.3, 2.5, -1.5, 7.0]]),
        ("digamma", ops.digamma, [[0.3, 2.5, -1.5, 7.0]]),
        ("erfinv", ops.erfinv, [[-0.9, 0.1, 0.5, 0.99]]),
        ("i0", ops.i0, [[-2.0, 0.0, 0.7, 25.0]]),
        ("bessel_i0e", ops.bessel_i0e, [[-2.0, 0.3, 0.7, 25.0]]),
        ("bessel_i1", ops.bessel_i1, [[-2.0, 0.3, 0.7, 25.0]]),
        ("bessel_i1e", ops.bessel_i1e, [[-2.0, 0.3, 0.7, 25.0]]),
        ("atan2", ops.atan2, [[1.0, -2.0, 0.5], [3.0, 1.5, -4.0]]),
        ("hypot", ops.hypot, [[1.0, -2.0, 0.5], [3.0, 1.5, -4.0]]),
    ]
    # (a, x) pairs: the gradient in x only
    IGAMMA = [("igamma", ops.igamma), ("igammac", ops.igammac)]

    def test_against_central_differences(self):
        for name, fn, xs in self.CASES:
            with self.subTest(op=name):
                pos = tuple(range(len(xs)))
                g = ms.grad(lambda *a: fn(*a).sum(), grad_position=pos if len(pos) > 1 else 0)(
                    *[T(v, F64) for v in xs])
                gs = g if isinstance(g, tuple) else (g,)
                for k in pos:
                    want = numeric_grad(fn, xs, k)
                    for a, b in zip(gs[k].tolist(), want):
                        self.assertAlmostEqual(a, b, delta=1e-6 * max(1.0, abs(b)), msg=name)

    def test_igamma_gradient_in_x_and_refused_in_a(self):
        a, x = [0.5, 2.0, 7.5], [0.3, 2.5, 6.0]
        for name, fn in self.IGAMMA:
            with self.subTest(op=name):
                g = ms.grad(lambda u, v: fn(u, v).sum(), grad_position=1)(T(a, F64), T(x, F64))
                for got, want in zip(g.tolist(), numeric_grad(fn, [a, x], 1)):
                    self.assertAlmostEqual(got, want, delta=1e-7)
                with self.assertRaisesRegex(TypeError, "%s is not differentiable with respect to its first input" % name):
                    ms.grad(lambda u, v: fn(u, v).sum(), grad_position=0)(T(a, F64), T(x, F64))

    def test_bessel_i1_gradient_at_zero_is_one_half(self):
        for fn in (ops.bessel_i1, ops.bessel_i1e):
            g = ms.grad(lambda x: fn(x).sum())(T([0.0], F64))
            self.assertEqual(g.tolist(), [0.5])
        # I0'(0) = I1(0) = 0; I0e'(0) = I1e(0) - sign(0) I0e(0) = 0
        self.assertEqual(ms.grad(lambda x: ops.i0(x).sum())(T([0.0], F64)).tolist(), [0.0])

    def test_nextafter_has_zero_gradient(self):
        g = ms.grad(lambda a, b: ops.nextafter(a, b).sum(), grad_position=(0, 1))(T([1.0]), T([2.0]))
        self.assertEqual([v.tolist() for v in g], [[0.0], [0.0]])

    def test_second_derivative_of_lgamma(self):
        # d/dx digamma = trigamma: psi'(1) = pi^2/6
        g2 = ms.grad(lambda x: ms.grad(lambda y: ops.lgamma(y).sum())(x).sum())(T([1.0], F64))
        self.assertAlmostEqual(g2.tolist()[0], math.pi ** 2 / 6, places=12)


class Jitted(unittest.TestCase):
    FLOAT = [ops.asin, ops.acos, ops.atan, ops.asinh, ops.acosh, ops.atanh, ops.lgamma, ops.digamma,
             ops.erfinv, ops.i0, ops.bessel_i0e, ops.bessel_i1, ops.bessel_i1e, ops.signbit,
             lambda x: ops.atan2(x, 0.5), lambda x: ops.hypot(x, x * 2), lambda x: ops.nextafter(x, 0.0),
             lambda x: P.Asin()(x) + P.Erfinv()(x) * P.Lgamma()(x + 2), lambda x: P.Rint()(x * 3),
             lambda x: ops.igamma(2.0, ops.abs(x)) + ops.igammac(ops.abs(x) + 1, 0.5)]
    INT = [ops.invert, ops.population_count, lambda x: ops.bitwise_and(x, 6), lambda x: ops.bitwise_or(x, x * 3),
           lambda x: ops.bitwise_xor(x, 5), lambda x: ops.bitwise_left_shift(x, 2),
           lambda x: ops.bitwise_right_shift(x, 1), lambda x: ops.gcd(x, 12), lambda x: ops.lcm(x, 4),
           lambda x: (x & 3) | (x << 1) ^ (~x >> 1), lambda x: P.Gcd()(x, x + 6) + P.LeftShift()(x, x % 3)]

    def check_one_graph(self, fns, x):
        for i, fn in enumerate(fns):
            with self.subTest(case=i):
                want = fn(x)
                # a code object of its own per case: jit_stats counts per code object
                ns = {"fn": fn}
                exec(compile("def case_%d(t):\n    return fn(t)\n" % i, "<case %d>" % i, "exec"), ns)
                jf = ms.jit(ns["case_%d" % i])
                for _ in range(2):
                    got = jf(x)
                    self.assertEqual((got.dtype, got.shape), (want.dtype, want.shape))
                    for a, b in zip(got.tolist(), want.tolist()):
                        self.assertTrue(same(a, b), (a, b))
                if CAPTURE_ON:
                    st = ms.jit_stats(jf)
                    self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []))
                else:  # (no capture: jf ran eagerly, equal to eager above)
                    assert_ran_eagerly(self, jf)

    def test_float_ops_capture_into_one_graph(self):
        self.check_one_graph(self.FLOAT, T([-0.75, -0.0, 0.25, 0.5, 0.9]))
        self.check_one_graph(self.FLOAT[:6], T([0.1, 0.4], F64))

    def test_integer_ops_capture_into_one_graph(self):
        self.check_one_graph(self.INT, T([-7, 0, 3, 12, 100], ms.int32))
        self.check_one_graph(self.INT[:4], T([0, 3, 200], ms.uint8))

    def test_gradient_jitted_equals_eager(self):
        def loss(x, y):
            return (ops.asin(x) * ops.atan2(x, y) + ops.lgamma(y) + ops.erfinv(x * 0.5)).sum()

        x, y = T([0.1, -0.3, 0.6], F64), T([1.5, 2.0, 0.7], F64)
        gf = ms.grad(loss, grad_position=(0, 1))
        want = [g.tolist() for g in gf(x, y)]
        jg = ms.jit(lambda a, b: gf(a, b))
        self.assertEqual([g.tolist() for g in jg(x, y)], want)
        self.assertEqual(ms.jit_stats(jg)["break_reasons"], [])


if __name__ == "__main__":
    unittest.main()
