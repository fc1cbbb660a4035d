// kernels/special_math.h by the identities its functions satisfy (recurrences, reflections,
// inverses, continuity where the Bessel evaluation switches method), plus a few tabulated values;
// and the integer ops of kernels/elementwise.h at widths a Python test cannot reach cheaply.
#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/special_math.h"
#include "kernels/tensor.h"

namespace pj {
namespace {

using special::kPi;

// |a - b| within `ulps` units of the larger magnitude's last place.
::testing::AssertionResult near_ulps(double a, double b, double ulps) {
  const double tol = ulps * std::numeric_limits<double>::epsilon() * std::max(std::fabs(a), std::fabs(b));
  if (std::fabs(a - b) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs " << b << " (" << std::fabs(a - b) / tol * ulps << " ulp)";
}

TEST(SpecialMath, DigammaRecurrenceAndReflection) {
  for (int i = 0; i < 108; ++i) {
    const double x = -9.75 + 0.37 * i, r = x - std::round(x);  // (the references reduce exactly too)
    if (std::fabs(r) < 0.01) continue;
    // psi(x + 1) = psi(x) + 1/x (absolute: psi crosses 0 near 1.46)
    EXPECT_NEAR(special::digamma(x + 1), special::digamma(x) + 1 / x, 1e-13 * (1 + std::fabs(special::digamma(x)))) << x;
    // psi(1 - x) - psi(x) = pi cot(pi x)
    const double cot = kPi / std::tan(kPi * r);
    EXPECT_NEAR(special::digamma(1 - x) - special::digamma(x), cot, 1e-13 * (1 + std::fabs(cot))) << x;
  }
  EXPECT_TRUE(near_ulps(special::digamma(1), -0.57721566490153286061, 8));
  EXPECT_EQ(special::digamma(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(special::digamma(-0.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(special::digamma(-4.0)));
  EXPECT_TRUE(near_ulps(special::digamma(-1e-30), 1e30, 2));  // -1/x dominates
}

TEST(SpecialMath, TrigammaRecurrenceAndReflection) {
  for (int i = 0; i < 108; ++i) {
    const double x = -9.75 + 0.37 * i, r = x - std::round(x);  // (the references reduce exactly too)
    if (std::fabs(r) < 0.01) continue;
    EXPECT_TRUE(near_ulps(special::trigamma(x + 1), special::trigamma(x) - 1 / (x * x), 64)) << x;
    const double s = std::sin(kPi * r);
    EXPECT_TRUE(near_ulps(special::trigamma(1 - x) + special::trigamma(x), kPi * kPi / (s * s), 64)) << x;
  }
  EXPECT_TRUE(near_ulps(special::trigamma(1), kPi * kPi / 6, 4));
  EXPECT_EQ(special::trigamma(-3.0), std::numeric_limits<double>::infinity());
}

TEST(SpecialMath, ErfinvInvertsErf) {
  for (double y = -0.999; y < 1; y += 0.0123) {
    const double x = special::erfinv(y);
    // one ulp of x moves erf by 2/sqrt(pi) e^{-x^2} ulp(x): allow two of those and two of y
    const double slack = 2 * 2 / std::sqrt(kPi) * std::exp(-x * x) * std::fabs(x) * 2.3e-16 + 4.5e-16 * std::fabs(y);
    EXPECT_NEAR(std::erf(x), y, slack) << y;
    EXPECT_EQ(special::erfinv(-y), -x);
  }
  // near 1, through erfc: erfc(x) = 1 - y (exact in double) to relative precision
  const double y = 1 - 1e-12, x = special::erfinv(y);
  EXPECT_NEAR(std::erfc(x), 1 - y, (1 - y) * 4.5e-16 + 2 * 2 / std::sqrt(kPi) * std::exp(-x * x) * x * 2.3e-16);
  EXPECT_EQ(special::erfinv(1.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(special::erfinv(1.0000001)));
  EXPECT_TRUE(std::signbit(special::erfinv(-0.0)));
}

TEST(SpecialMath, BesselValuesSymmetryAndTheSwitchAt20) {
  // Abramowitz & Stegun table 9.8: I0(1) = 1.266065877752008, I1(1) = 0.565159103992485
  EXPECT_TRUE(near_ulps(special::bessel_i0(1), 1.2660658777520082, 4));
  EXPECT_TRUE(near_ulps(special::bessel_i1(1), 0.5651591039924851, 4));
  for (double x : {0.3, 2.0, 19.5, 50.0}) {
    EXPECT_EQ(special::bessel_i0(-x), special::bessel_i0(x));
    EXPECT_EQ(special::bessel_i1(-x), -special::bessel_i1(x));
    EXPECT_TRUE(near_ulps(special::bessel_i0e(x), special::bessel_i0(x) * std::exp(-x), 8)) << x;
  }
  // the power series below 20 and Hankel's expansion above agree across the switch
  const double lo = std::nextafter(20.0, 0.0), hi = std::nextafter(20.0, 40.0);
  for (int nu = 0; nu < 2; ++nu) {
    EXPECT_TRUE(near_ulps(special::bessel_i_nonneg(nu, lo, true), special::bessel_i_nonneg(nu, hi, true), 16)) << nu;
  }
  // recurrence I0(x) - I2(x) = (2/x) I1(x) with I2 from the series: checks I1 against I0 (the
  // difference cancels: I0(25) - I2(25) is 13 times smaller than I0(25), hence the ulps)
  for (double x : {0.5, 5.0, 25.0}) {
    double q = x * x / 4, term = x * x / 8, i2 = term;
    for (int k = 1; k < 200; ++k) {
      term *= q / (k * (k + 2.0));
      i2 += term;
    }
    EXPECT_TRUE(near_ulps(special::bessel_i0(x) - i2, 2 / x * special::bessel_i1(x), 256)) << x;
  }
}

TEST(SpecialMath, IncompleteGammaRecurrenceAndComplement) {
  for (double a : {0.1, 0.5, 1.0, 3.7, 12.0, 40.0}) {
    for (double x : {0.01, 0.7, 3.0, 11.5, 39.0, 41.0, 90.0}) {
      // P + Q = 1, each computed on its own side of x = a + 1
      EXPECT_NEAR(special::igamma(a, x) + special::igammac(a, x), 1.0, 4e-16) << a << " " << x;
      // P(a + 1, x) = P(a, x) - x^a e^-x / Gamma(a + 1) (one series and one fraction across the switch)
      const double step = std::exp(a * std::log(x) - x - std::lgamma(a + 1));
      // (the prefactor x^a e^-x / Gamma(a) costs about |a log x - x| ulps: ~150 at a = 40)
      EXPECT_NEAR(special::igamma(a + 1, x), special::igamma(a, x) - step, 4e-14) << a << " " << x;
    }
  }
  // Q(1, x) = e^-x keeps its relative precision far in the tail (within the prefactor's ~x ulps)
  EXPECT_TRUE(near_ulps(special::igammac(1, 600), std::exp(-600.0), 256));
}

TEST(ElementwiseIntegers, ShiftsAndGcdAtEveryWidth) {
  auto shl = [](Tensor a, Tensor b) { return call_op1("bitwise_left_shift", {a, b}); };
  auto shr = [](Tensor a, Tensor b) { return call_op1("bitwise_right_shift", {a, b}); };
  // uint64 keeps its top bit: 2^63 >> 63 = 1, (2^64 - 1) << 63 = 2^63
  Tensor u = Tensor::empty({2}, DType::UInt64);
  static_cast<uint64_t*>(u.raw_data())[0] = uint64_t(1) << 63;
  static_cast<uint64_t*>(u.raw_data())[1] = ~uint64_t(0);
  Tensor s = Tensor::empty({2}, DType::UInt64);
  static_cast<uint64_t*>(s.raw_data())[0] = 63;
  static_cast<uint64_t*>(s.raw_data())[1] = 63;
  Tensor r = shr(u, s), l = shl(u, s);
  EXPECT_EQ(r.dtype(), DType::UInt64);
  EXPECT_EQ(static_cast<uint64_t*>(r.raw_data())[0], 1u);
  EXPECT_EQ(static_cast<uint64_t*>(r.raw_data())[1], 1u);
  EXPECT_EQ(static_cast<uint64_t*>(l.raw_data())[1], uint64_t(1) << 63);
  // int16: -1 >> 40 = -1, 1 << 16 = 0, 1 << 15 = -32768
  Tensor a = Tensor::empty({3}, DType::Int16), b = Tensor::empty({3}, DType::Int16);
  int16_t* pa = static_cast<int16_t*>(a.raw_data());
  int16_t* pb = static_cast<int16_t*>(b.raw_data());
  pa[0] = -1, pa[1] = 1, pa[2] = 1;
  pb[0] = 40, pb[1] = 16, pb[2] = 15;
  Tensor rs = shr(a, b), ls = shl(a, b);
  EXPECT_EQ(static_cast<int16_t*>(rs.raw_data())[0], -1);
  EXPECT_EQ(static_cast<int16_t*>(ls.raw_data())[1], 0);
  EXPECT_EQ(static_cast<int16_t*>(ls.raw_data())[2], -32768);
  // gcd of the most negative int64 (|x| = 2^63 only as unsigned) with 6 is 2; lcm(x, 0) = 0
  Tensor m = Tensor::empty({1}, DType::Int64), z = Tensor::empty({1}, DType::Int64);
  static_cast<int64_t*>(m.raw_data())[0] = std::numeric_limits<int64_t>::min();
  static_cast<int64_t*>(z.raw_data())[0] = 6;
  EXPECT_EQ(call_op1("gcd", {m, z}).item_int(0), 2);
  EXPECT_EQ(call_op1("lcm", {z, call_op1("bitwise_xor", {z, z})}).item_int(0), 0);
}

}  // namespace
}  // namespace pj
