// Special functions the elementwise kernels need beyond libm: digamma, trigamma, erfinv, the
// modified Bessel functions I0, I1 (plain and scaled by e^-|x|) and the regularized incomplete
// gamma functions, for elementwise.cc's loops.
//
// Each is evaluated in double; float32 callers round the double result once, so float results are
// correctly rounded but for rare ties. The methods are the textbook ones, chosen for being short and
// checkable rather than fast: the polygammas climb the recurrence to x >= 10 and finish with their
// asymptotic (Bernoulli) series, negative x by reflection; erfinv starts from a closed-form guess
// and refines with Halley's method on erf (on erfc near +-1, where erf has no relative precision
// left); I0/I1 sum their power series (all terms positive, so nothing cancels) up to x = 20 and use
// Hankel's asymptotic expansion beyond, where its smallest term is below e^-40.
// Edge values follow PyTorch (tests/python/oracle/test_torch_math2.py).
#pragma once

#include <cmath>
#include <limits>

namespace pj {
namespace special {

constexpr double kPi = 3.14159265358979323846;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// psi(x) = d/dx log Gamma(x): -inf at +0 (+inf at -0), NaN at negative integers and -inf.
inline double digamma(double x) {
  if (std::isnan(x)) return x;
  if (x == 0) return std::signbit(x) ? kInf : -kInf;
  if (x < 0) {
    if (x == std::trunc(x)) return kNaN;
    // psi(1 - x) - psi(x) = pi cot(pi x). cot(pi x) has period 1: x - round(x) is exact, in
    // [-1/2, 1/2], and keeps a tiny x tiny; at +-1/2 the cotangent is 0 (tan would give 1e16).
    const double r = x - std::round(x);
    return digamma(1 - x) - (std::fabs(r) == 0.5 ? 0.0 : kPi / std::tan(kPi * r));
  }
  double acc = 0;
  for (; x < 10; x += 1) acc -= 1 / x;
  const double z = 1 / x, z2 = z * z;
  // log x - 1/(2x) - sum B_2k / (2k x^2k), k = 1..7: the next term is below 1e-16 at x = 10
  const double series =
      z2 * (1.0 / 12 - z2 * (1.0 / 120 - z2 * (1.0 / 252 - z2 * (1.0 / 240 - z2 * (1.0 / 132 - z2 * (691.0 / 32760 - z2 / 12))))));
  return acc + std::log(x) - 0.5 * z - series;
}

// psi'(x): +inf at 0, at the negative integers and at -inf.
inline double trigamma(double x) {
  if (std::isnan(x)) return x;
  if (x <= 0 && x == std::trunc(x)) return kInf;
  if (x < 0) {
    // psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x)
    const double s = std::sin(kPi * (x - std::round(x)));  // (period 1 for sin^2, as above)
    return -trigamma(1 - x) + kPi * kPi / (s * s);
  }
  double acc = 0;
  for (; x < 10; x += 1) acc += 1 / (x * x);
  const double z = 1 / x, z2 = z * z;
  // 1/x + 1/(2x^2) + sum B_2k / x^(2k+1), k = 1..7
  const double series =
      z * z2 * (1.0 / 6 - z2 * (1.0 / 30 - z2 * (1.0 / 42 - z2 * (1.0 / 30 - z2 * (5.0 / 66 - z2 * (691.0 / 2730 - z2 * 7.0 / 6))))));
  return acc + z + 0.5 * z2 + series;
}

// The inverse of erf on [-1, 1]: +-inf at +-1, NaN outside.
inline double erfinv(double y) {
  if (std::isnan(y)) return y;
  const double a = std::fabs(y);
  if (a > 1) return kNaN;
  if (a == 1) return std::copysign(kInf, y);
  if (a == 0) return y;  // keeps -0.0
  const double two_over_sqrt_pi = 1.12837916709551257390;
  double x;
  if (a < 1e-3) {
    x = a / two_over_sqrt_pi;  // erf(x) = 2x/sqrt(pi) (1 - x^2/3 + ...)
  } else {
    // Winitzki's approximation (relative error < 2e-3); log(1 - a^2) without cancellation.
    const double k = 0.147, l = std::log1p(-a) + std::log1p(a);
    const double c = 2 / (kPi * k) + l / 2;
    x = std::sqrt(std::sqrt(c * c - l / k) - c);
  }
  // Halley on f(x) = erf(x) - a, f'' = -2x f'. Above 0.5, 1 - a is exact and erfc keeps the
  // precision that erf(x) - a would lose to cancellation.
  const double one_minus_a = 1 - a;
  for (int i = 0; i < 4; ++i) {
    const double f = a <= 0.5 ? std::erf(x) - a : one_minus_a - std::erfc(x);
    const double fp = two_over_sqrt_pi * std::exp(-x * x);
    const double t = f / fp;
    if (!std::isfinite(t) || t == 0) break;
    x -= t / (1 + x * t);
    // Halley converges cubically: after a step below 1e-7 relative, the error is ~1e-20
    if (std::fabs(t) < 1e-7 * x) break;
  }
  return std::copysign(x, y);
}

// I_nu(x) for nu = 0 or 1 and x >= 0 (not NaN), times e^-x when `scaled`.
inline double bessel_i_nonneg(int nu, double x, bool scaled) {
  if (x == kInf) return scaled ? 0 : kInf;
  if (x <= 20) {
    // sum_k (x/2)^(2k+nu) / (k! (k+nu)!)
    const double q = x * x / 4;
    double term = nu ? x / 2 : 1, sum = term;
    for (int k = 1; k < 200 && term > sum * 1e-17; ++k) {
      term *= q / (k * static_cast<double>(k + nu));
      sum += term;
    }
    return scaled ? sum * std::exp(-x) : sum;
  }
  // e^x / sqrt(2 pi x) sum_k (-1)^k prod_{j<=k} (4 nu^2 - (2j-1)^2) / (k! (8x)^k)
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    const double odd = 2.0 * k - 1;
    term *= -(mu - odd * odd) / (8.0 * k * x);
    sum += term;
    if (std::fabs(term) <= std::fabs(sum) * 1e-17) break;
  }
  const double s = sum / std::sqrt(2 * kPi * x);
  if (scaled) return s;
  const double h = std::exp(x / 2);  // e^x in two halves: finite up to where the result is
  return h * s * h;
}

// I0 is even, I1 odd; so are their scaled forms (the scale is e^-|x|).
inline double bessel_i0(double x) { return std::isnan(x) ? x : bessel_i_nonneg(0, std::fabs(x), false); }
inline double bessel_i0e(double x) { return std::isnan(x) ? x : bessel_i_nonneg(0, std::fabs(x), true); }
inline double bessel_i1(double x) {
  return std::isnan(x) ? x : std::copysign(bessel_i_nonneg(1, std::fabs(x), false), x);
}
inline double bessel_i1e(double x) {
  return std::isnan(x) ? x : std::copysign(bessel_i_nonneg(1, std::fabs(x), true), x);
}

// The regularized incomplete gamma functions P(a, x) (lower, igamma) and Q(a, x) = 1 - P (upper,
// igammac), each computed directly where it is the smaller one so that neither is a difference
// near 1: P by its power series for x < a + 1, Q by its continued fraction (modified Lentz)
// above. Both converge in O(sqrt(a)) steps around x ~ a, so very large a is slow but still exact
// to the iteration cap. The prefactor x^a e^-x / Gamma(a) is evaluated as one exp, so the relative
// error grows with |a log x - x| (about that many ulps). Edges as PyTorch: NaN for a < 0, x < 0,
// a = x = 0 and a = x = inf.
// log |Gamma(a)| without glibc's lgamma writing the global signgam (the loops run on many threads).
inline double log_gamma(double a) {
  int sign;
  return ::lgamma_r(a, &sign);
}
inline double igamma_series(double a, double x) {  // P, for 0 < x < a + 1
  double term = 1 / a, sum = term;
  for (int n = 1; n < 100000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * 1e-17) break;
  }
  return sum * std::exp(a * std::log(x) - x - log_gamma(a));
}
inline double igammac_fraction(double a, double x) {  // Q, for x >= a + 1
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int n = 1; n < 100000; ++n) {
    const double an = -n * (n - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return h * std::exp(a * std::log(x) - x - log_gamma(a));
}
// 0: P, 1: Q; NaN when the edge rules say so, else -1 (compute).
inline double igamma_edge(double a, double x, bool upper) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if ((a == 0 && x == 0) || (a == kInf && x == kInf)) return kNaN;
  if (a == 0 || x == kInf) return upper ? 0 : 1;
  if (x == 0 || a == kInf) return upper ? 1 : 0;
  return -1;
}
inline double igamma(double a, double x) {
  const double e = igamma_edge(a, x, false);
  if (!(e == -1)) return e;
  return x < a + 1 ? igamma_series(a, x) : 1 - igammac_fraction(a, x);
}
inline double igammac(double a, double x) {
  const double e = igamma_edge(a, x, true);
  if (!(e == -1)) return e;
  return x < a + 1 ? 1 - igamma_series(a, x) : igammac_fraction(a, x);
}

}  // namespace special
}  // namespace pj
