// Special functions, samplers, Eig and the matrix logarithm (see special2.h for the methods).
#include "kernels/special2.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "common/check.h"
#include "kernels/dtype.h"
#include "kernels/loops.h"
#include "kernels/random.h"
#include "kernels/threading.h"

namespace pj {
namespace special2 {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kEuler = 0.57721566490153286061;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct JY {
  double j0, j1, y0, y1;
};

// x < 2: the power series (no cancellation worth a digit there).
JY jy_series(double x) {
  const double y = x * x / 4, L = std::log(x / 2) + kEuler;
  double t0 = 1, t1 = 1, j0 = 1, j1 = 1, h = 0, sy0 = 0;
  double sy1 = 1 - 2 * kEuler;  // k = 0: psi(1) + psi(2) = -2 gamma + 1
  for (int k = 1; k < 40; ++k) {
    t0 *= -y / (double(k) * k);
    t1 *= -y / (double(k) * (k + 1));
    h += 1.0 / k;
    j0 += t0;
    j1 += t1;
    sy0 += h * t0;
    sy1 += (2 * (h - kEuler) + 1.0 / (k + 1)) * t1;  // psi(k+1) + psi(k+2)
    if (std::fabs(t0) < 1e-18 && std::fabs(t1) < 1e-18) break;
  }
  j1 *= x / 2;
  JY r;
  r.j0 = j0;
  r.j1 = j1;
  r.y0 = 2 / kPi * (L * j0 - sy0);
  r.y1 = -2 / (kPi * x) + 2 / kPi * std::log(x / 2) * j1 - x / (2 * kPi) * sy1;
  return r;
}

// 2 <= x < 25: Miller's backward recurrence f_{n-1} = (2n/x) f_n - f_{n+1}, normalised by
// J0 + 2 sum_k J_2k = 1; Y from Neumann's series (and its derivative for Y1).
JY jy_miller(double x) {
  const int N = 2 * static_cast<int>((x + 50) / 2);
  double f[128];
  f[N + 1] = 0;
  f[N] = 1e-30;
  for (int n = N; n >= 1; --n) {
    f[n - 1] = 2.0 * n / x * f[n] - f[n + 1];
    if (std::fabs(f[n - 1]) > 1e250)
      for (int m = n - 1; m <= N + 1; ++m) f[m] *= 1e-250;
  }
  double norm = f[0], sy0 = 0, sy1 = 0;
  for (int k = 1; 2 * k <= N; ++k) {
    norm += 2 * f[2 * k];
    const double sg = (k % 2) ? 1.0 : -1.0;
    sy0 += sg * f[2 * k] / k;
    sy1 += sg * (f[2 * k - 1] - f[2 * k + 1]) / k;
  }
  JY r;
  r.j0 = f[0] / norm;
  r.j1 = f[1] / norm;
  const double L = std::log(x / 2) + kEuler;
  r.y0 = 2 / kPi * (L * r.j0 + 2 * sy0 / norm);
  r.y1 = -2 / kPi * (r.j0 / x - L * r.j1 + sy1 / norm);
  return r;
}

// x >= 25: Hankel's expansion, summed until its terms stop shrinking.
void hankel(int nu, double x, double* P, double* Q) {
  const double mu = 4.0 * nu * nu;
  double term = 1, p = 1, q = 0, last = kInf;
  for (int k = 1; k < 60; ++k) {
    term *= (mu - double(2 * k - 1) * (2 * k - 1)) / (k * 8 * x);
    if (std::fabs(term) >= last || std::fabs(term) < 1e-18) break;
    last = std::fabs(term);
    const int m = k / 2;
    const double sg = (m % 2) ? -1.0 : 1.0;
    if (k % 2) q += sg * term;
    else p += sg * term;
  }
  *P = p;
  *Q = q;
}

JY jy_asymptotic(double x) {
  const double s = std::sin(x), c = std::cos(x), amp = std::sqrt(2 / (kPi * x)), r2 = std::sqrt(0.5);
  double P0, Q0, P1, Q1;
  hankel(0, x, &P0, &Q0);
  hankel(1, x, &P1, &Q1);
  // chi0 = x - pi/4, chi1 = x - 3pi/4, expanded so the phase keeps x's precision
  const double c0 = (c + s) * r2, s0 = (s - c) * r2, c1 = (s - c) * r2, s1 = -(s + c) * r2;
  JY r;
  r.j0 = amp * (P0 * c0 - Q0 * s0);
  r.y0 = amp * (P0 * s0 + Q0 * c0);
  r.j1 = amp * (P1 * c1 - Q1 * s1);
  r.y1 = amp * (P1 * s1 + Q1 * c1);
  return r;
}

JY jy(double ax) {  // ax > 0, finite
  if (ax < 2) return jy_series(ax);
  if (ax < 25) return jy_miller(ax);
  return jy_asymptotic(ax);
}

// e^x K_nu(x) for nu = 0, 1 and x > 0.
double k_scaled(int nu, double x) {
  if (x <= 1) {  // series: K0 = -(ln(x/2) + gamma) I0 + sum H_k y^k/(k!)^2, K1 likewise
    const double y = x * x / 4, L = std::log(x / 2);
    double t0 = 1, t1 = 1, i0 = 1, i1 = 1, h = 0, s0 = 0, s1 = 1 - 2 * kEuler;
    for (int k = 1; k < 40; ++k) {
      t0 *= y / (double(k) * k);
      t1 *= y / (double(k) * (k + 1));
      h += 1.0 / k;
      i0 += t0;
      i1 += t1;
      s0 += h * t0;
      s1 += (2 * (h - kEuler) + 1.0 / (k + 1)) * t1;
      if (t0 < 1e-18 * i0) break;
    }
    i1 *= x / 2;
    const double k = nu == 0 ? -(L + kEuler) * i0 + s0 : 1 / x + L * i1 - x / 4 * s1;
    return k * std::exp(x);
  }
  // trapezoidal rule on int_0^inf e^{-x (cosh t - 1)} cosh(nu t) dt
  const double h = std::min(0.15, 0.5 / std::sqrt(x));
  double sum = 0.5;
  for (int i = 1; i < 100000; ++i) {
    const double t = i * h, sh = std::sinh(t / 2);
    const double e = std::exp(-x * 2 * sh * sh) * (nu ? std::cosh(t) : 1.0);
    sum += e;
    if (e < 1e-18 * sum) break;
  }
  return sum * h;
}

// B_2j / (2j)!, j = 1..12 (Euler-Maclaurin's tail coefficients).
constexpr double kBernoulli[] = {
    0.08333333333333333,    -0.001388888888888889,  3.306878306878307e-05,  -8.267195767195768e-07,
    2.08767569878681e-08,   -5.284190138687493e-10, 1.3382536530684679e-11, -3.3896802963225827e-13,
    8.586062056277845e-15,  -2.174868698558062e-16, 5.5090028283602295e-18, -1.3954464685812522e-19};

}  // namespace

double bessel_j0(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return 0;
  if (x == 0) return 1;
  return jy(std::fabs(x)).j0;
}
double bessel_j1(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x) || x == 0) return 0;
  double r = jy(std::fabs(x)).j1;
  return x < 0 ? -r : r;
}
double bessel_y0(double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (std::isinf(x)) return 0;
  return jy(x).y0;
}
double bessel_y1(double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (std::isinf(x)) return 0;
  return jy(x).y1;
}
double bessel_k0e(double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (std::isinf(x)) return 0;
  return k_scaled(0, x);
}
double bessel_k1e(double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (std::isinf(x)) return 0;
  return k_scaled(1, x);
}
double bessel_k0(double x) {
  double e = bessel_k0e(x);
  return std::isfinite(e) && x > 0 ? e * std::exp(-x) : (std::isinf(x) ? 0 : e);
}
double bessel_k1(double x) {
  double e = bessel_k1e(x);
  return std::isfinite(e) && x > 0 ? e * std::exp(-x) : (std::isinf(x) ? 0 : e);
}

double zeta(double x, double q) {
  if (std::isnan(x) || std::isnan(q)) return kNaN;
  if (x == 1) return kInf;
  if (x < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;       // a pole of a term
    if (x != std::floor(x)) return kNaN;       // a negative base to a fractional power
    if (q < -1e7) return kNaN;                 // the direct sum would run too long
  }
  double s = 0, a = q;
  for (int n = 0; n < 9 || a < 9; ++n, a += 1.0) {
    const double t = std::pow(a, -x);
    s += t;
    if (a > 0 && t < 1e-18 * s && n >= 9) return s;
  }
  s += std::pow(a, 1 - x) / (x - 1) + 0.5 * std::pow(a, -x);
  double p = x * std::pow(a, -x - 1);
  for (int j = 0; j < 12; ++j) {
    const double t = kBernoulli[j] * p;
    s += t;
    if (std::fabs(t) < 1e-17 * std::fabs(s)) break;
    p *= (x + 2 * j + 1) * (x + 2 * j + 2) / (a * a);
  }
  return s;
}

namespace {
// I_x(a, b) by the continued fraction of DLMF 8.17.22, for x below its turning point.
double betainc_cf(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-16;
  const double pre = std::exp(a * std::log(x) + b * std::log1p(-x) - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b))) / a;
  double f = 1, C = 1, D = 0;
  for (int i = 1; i < 10000; ++i) {
    const int m = i / 2;
    const double d = (i % 2) ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                              : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    D = 1 + d * D;
    if (std::fabs(D) < tiny) D = tiny;
    C = 1 + d / C;
    if (std::fabs(C) < tiny) C = tiny;
    D = 1 / D;
    const double delta = C * D;
    f *= delta;
    if (std::fabs(delta - 1) < eps) break;
  }
  return pre / f;
}
}  // namespace

double betainc(double a, double b, double x) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(x)) return kNaN;
  if (!(a > 0) || !(b > 0) || x < 0 || x > 1) return kNaN;
  if (x == 0) return 0;
  if (x == 1) return 1;
  if (std::isinf(a) || std::isinf(b)) return kNaN;
  if (x < (a + 1) / (a + b + 2)) return betainc_cf(a, b, x);
  return 1 - betainc_cf(b, a, 1 - x);
}

}  // namespace special2

namespace {

template <typename F>
void float_unary(const Tensor& out, const Tensor& in, F f) {
  if (out.dtype() == DType::Float32)
    unary_kernel<float, float>(out, in, [&](float x) { return static_cast<float>(f(x)); });
  else if (out.dtype() == DType::Float64)
    unary_kernel<double, double>(out, in, f);
  else
    PJ_THROW(Type) << "special functions compute in float32 or float64, got " << dtype_name(out.dtype());
}

}  // namespace

void special2_unary_into(Special2Unary op, const Tensor& out, const Tensor& in) {
  switch (op) {
#define PJ_X(n) \
  case Special2Unary::n: return float_unary(out, in, [](double x) { return special2::n(x); });
    PJ_SPECIAL2_UNARY(PJ_X)
#undef PJ_X
  }
}

void zeta_into(const Tensor& out, const Tensor& x, const Tensor& q) {
  if (out.dtype() == DType::Float32)
    binary_kernel<float, float, float>(out, x, q, [](float a, float b) { return static_cast<float>(special2::zeta(a, b)); });
  else
    binary_kernel<double, double, double>(out, x, q, [](double a, double b) { return special2::zeta(a, b); });
}

void betainc_into(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& x) {
  if (out.dtype() == DType::Float32)
    ternary_kernel<float, float, float, float>(out, a, b, x, [](float p, float q, float v) {
      return static_cast<float>(special2::betainc(p, q, v));
    });
  else
    ternary_kernel<double, double, double, double>(out, a, b, x, special2::betainc);
}

// ----- samplers -----------------------------------------------------------------------------

namespace {

// A key for one call: from the given seed, or the next block of the global stream.
uint64_t call_key(std::optional<uint64_t> seed) {
  if (seed) {
    uint64_t z = *seed + 0x9E3779B97F4A7C15ull;  // splitmix64: nearby seeds, unrelated keys
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  Tensor t = Tensor::empty({1}, DType::Int64);
  randint_into(t, 0, std::numeric_limits<int64_t>::max());
  return static_cast<uint64_t>(t.data<int64_t>()[0]);
}

// Two uniforms in (0, 1] (53 bits each) from block (i, hi).
inline void uniforms(uint64_t key, uint64_t i, uint64_t hi, double* u0, double* u1) {
  auto w = philox4x32(key, i, hi);
  const double s = 1.0 / 9007199254740992.0;
  *u0 = (double((uint64_t(w[0]) << 21) ^ (w[1] >> 11)) + 1) * s;
  *u1 = (double((uint64_t(w[2]) << 21) ^ (w[3] >> 11)) + 1) * s;
}

// Marsaglia and Tsang's squeeze (ACM TOMS 26(3), 2000); alpha < 1 via G(alpha+1) U^{1/alpha}.
double gamma_draw(uint64_t key, uint64_t i, double alpha) {
  if (!(alpha > 0) || std::isinf(alpha)) return std::numeric_limits<double>::quiet_NaN();
  double boost = 1, u0, u1;
  uint64_t hi = 0;
  if (alpha < 1) {
    uniforms(key, i, hi++, &u0, &u1);
    boost = std::pow(u0, 1 / alpha);
    alpha += 1;
  }
  const double d = alpha - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    uniforms(key, i, hi++, &u0, &u1);
    const double z = std::sqrt(-2 * std::log(u0)) * std::cos(2 * 3.14159265358979323846 * u1);
    const double v = 1 + c * z;
    if (v <= 0) continue;
    const double v3 = v * v * v;
    uniforms(key, i, hi++, &u0, &u1);
    if (std::log(u0) < 0.5 * z * z + d - d * v3 + d * std::log(v3)) return d * v3 * boost;
  }
}

// Knuth's product of uniforms below rate 10; Hoermann's PTRS (transformed rejection with
// squeeze, Insurance: Mathematics and Economics 12, 1993) above.
double poisson_draw(uint64_t key, uint64_t i, double rate) {
  if (!(rate >= 0) || std::isinf(rate)) return std::numeric_limits<double>::quiet_NaN();
  if (rate == 0) return 0;
  double u0, u1;
  uint64_t hi = 0;
  if (rate < 10) {
    const double limit = std::exp(-rate);
    double p = 1;
    for (int64_t k = 0;; k += 2) {
      uniforms(key, i, hi++, &u0, &u1);
      p *= u0;
      if (p <= limit) return double(k);
      p *= u1;
      if (p <= limit) return double(k + 1);
    }
  }
  const double lr = std::log(rate), b = 0.931 + 2.53 * std::sqrt(rate), a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    uniforms(key, i, hi++, &u0, &u1);
    const double U = u0 - 0.5, V = u1, us = 0.5 - std::fabs(U);
    const double k = std::floor((2 * a / us + b) * U + rate + 0.43);
    if (us >= 0.07 && V <= vr) return k;
    if (k < 0 || (us < 0.013 && V > us)) continue;
    if (std::log(V) + std::log(inv_alpha) - std::log(a / (us * us) + b) <= -rate + k * lr - std::lgamma(k + 1))
      return k;
  }
}

template <typename Draw>
void sample_into(const Tensor& out, const Tensor& param, std::optional<uint64_t> seed, const char* who, Draw draw) {
  PJ_CHECK(out.is_contiguous() && param.is_contiguous());
  const int64_t m = param.numel(), n = out.numel();
  if (n == 0) return;
  PJ_CHECK(m > 0);
  std::vector<double> p(m);
  for (int64_t k = 0; k < m; ++k) p[k] = param.item_double(k);
  const uint64_t key = call_key(seed);
  PJ_DISPATCH_NUMERIC(out.dtype(), who, [&] {
    using T = scalar_t;
    T* o = out.data<T>();
    parallel_for(n, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const double v = draw(key, uint64_t(i), p[i % m]);
        if constexpr (std::is_integral_v<T>) o[i] = std::isnan(v) ? T(0) : static_cast<T>(v);
        else o[i] = static_cast<T>(v);
      }
    });
  });
}

}  // namespace

void random_gamma_into(const Tensor& out, const Tensor& alpha, std::optional<uint64_t> seed) {
  sample_into(out, alpha, seed, "random_gamma", gamma_draw);
}

void random_poisson_into(const Tensor& out, const Tensor& rate, std::optional<uint64_t> seed) {
  sample_into(out, rate, seed, "random_poisson", poisson_draw);
}

// ----- Eig and the matrix logarithm -----------------------------------------------------------

namespace {

using C = std::complex<double>;

struct Mat {
  int n;
  std::vector<C> a;
  explicit Mat(int n_) : n(n_), a(size_t(n_) * n_) {}
  C& operator()(int i, int j) { return a[size_t(i) * n + j]; }
};

// A = Q H Q^H with H upper Hessenberg (Householder reflections).
void hessenberg(Mat& H, Mat& Q) {
  const int n = H.n;
  for (int i = 0; i < n; ++i) Q(i, i) = 1;
  std::vector<C> v(n);
  for (int k = 0; k + 2 < n; ++k) {
    double xn = 0;
    for (int i = k + 1; i < n; ++i) xn += std::norm(H(i, k));
    xn = std::sqrt(xn);
    if (xn == 0) continue;
    const C x0 = H(k + 1, k);
    const C alpha = -(std::abs(x0) > 0 ? x0 / std::abs(x0) : C(1)) * xn;
    const int m = n - k - 1;
    double vn = 0;
    for (int i = 0; i < m; ++i) {
      v[i] = H(k + 1 + i, k) - (i == 0 ? alpha : C(0));
      vn += std::norm(v[i]);
    }
    vn = std::sqrt(vn);
    if (vn == 0) continue;
    for (int i = 0; i < m; ++i) v[i] /= vn;
    for (int j = 0; j < n; ++j) {  // H = P H
      C s = 0;
      for (int i = 0; i < m; ++i) s += std::conj(v[i]) * H(k + 1 + i, j);
      for (int i = 0; i < m; ++i) H(k + 1 + i, j) -= 2.0 * v[i] * s;
    }
    for (int i = 0; i < n; ++i) {  // H = H P, Q = Q P
      C s = 0, t = 0;
      for (int j = 0; j < m; ++j) {
        s += H(i, k + 1 + j) * v[j];
        t += Q(i, k + 1 + j) * v[j];
      }
      for (int j = 0; j < m; ++j) {
        H(i, k + 1 + j) -= 2.0 * s * std::conj(v[j]);
        Q(i, k + 1 + j) -= 2.0 * t * std::conj(v[j]);
      }
    }
    for (int i = k + 2; i < n; ++i) H(i, k) = 0;
  }
}

// H (Hessenberg) -> T upper triangular, Q accumulating: A = Q T Q^H.
void schur(Mat& H, Mat& Q) {
  const int n = H.n;
  double norm = 0;
  for (auto& z : H.a) norm = std::max(norm, std::abs(z));
  const double eps = std::numeric_limits<double>::epsilon();
  int hi = n - 1, iter = 0, total = 0;
  while (hi > 0) {
    int l = hi;
    for (; l > 0; --l) {
      double s = std::abs(H(l - 1, l - 1)) + std::abs(H(l, l));
      if (s == 0) s = norm;
      if (std::abs(H(l, l - 1)) <= eps * s) {
        H(l, l - 1) = 0;
        break;
      }
    }
    if (l == hi) {
      --hi;
      iter = 0;
      continue;
    }
    if (++total > 60 * n) PJ_THROW(Value) << "Eig: the QR iteration did not converge";
    ++iter;
    C mu;
    if (iter % 10 == 0) {  // an exceptional shift breaks a cycle
      mu = H(hi, hi) + 0.75 * std::abs(H(hi, hi - 1));
    } else {  // Wilkinson's: the eigenvalue of the trailing 2x2 nearer its last diagonal entry
      const C a = H(hi - 1, hi - 1), b = H(hi - 1, hi), c = H(hi, hi - 1), d = H(hi, hi);
      const C half = (a - d) / 2.0, disc = std::sqrt(half * half + b * c);
      const C m1 = (a + d) / 2.0 + disc, m2 = (a + d) / 2.0 - disc;
      mu = std::abs(m1 - d) < std::abs(m2 - d) ? m1 : m2;
    }
    C x = H(l, l) - mu, y = H(l + 1, l);
    for (int k = l; k < hi; ++k) {
      if (k > l) {
        x = H(k, k - 1);
        y = H(k + 1, k - 1);
      }
      const double ax = std::abs(x), r = std::hypot(ax, std::abs(y));
      if (r == 0) continue;
      double c;
      C s;
      if (ax == 0) {
        c = 0;
        s = std::conj(y) / std::abs(y);
      } else {
        c = ax / r;
        s = (x / ax) * std::conj(y) / r;
      }
      for (int j = std::max(l, k - 1); j < n; ++j) {  // rows k, k+1: M H
        const C p = H(k, j), q = H(k + 1, j);
        H(k, j) = c * p + s * q;
        H(k + 1, j) = -std::conj(s) * p + c * q;
      }
      if (k > l) H(k + 1, k - 1) = 0;
      const int last = std::min(k + 2, hi);
      for (int i = 0; i <= last; ++i) {  // columns k, k+1: H M^H
        const C p = H(i, k), q = H(i, k + 1);
        H(i, k) = c * p + std::conj(s) * q;
        H(i, k + 1) = -s * p + c * q;
      }
      for (int i = 0; i < n; ++i) {
        const C p = Q(i, k), q = Q(i, k + 1);
        Q(i, k) = c * p + std::conj(s) * q;
        Q(i, k + 1) = -s * p + c * q;
      }
    }
  }
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < i; ++j) H(i, j) = 0;
}

Mat read_matrix(const Tensor& a, int64_t batch, int n) {
  Mat m(n);
  const int64_t base = batch * int64_t(n) * n;
  const bool cplx = is_complex(a.dtype());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const int64_t e = base + int64_t(i) * n + j;
      if (!cplx) m(i, j) = a.item_double(e);
      else if (a.dtype() == DType::Complex64) m(i, j) = C(a.data<complex64>()[e]);
      else m(i, j) = a.data<complex128>()[e];
    }
  return m;
}

void write(const Tensor& out, int64_t at, C v) {
  if (out.dtype() == DType::Complex64) out.data<complex64>()[at] = complex64(v);
  else out.data<complex128>()[at] = v;
}

void check_square(const char* who, const Tensor& a) {
  if (a.ndim() < 2 || a.dim(a.ndim() - 1) != a.dim(a.ndim() - 2))
    PJ_THROW(Value) << who << ": the input must be a batch of square matrices [..., n, n]";
}

}  // namespace

std::pair<Tensor, Tensor> eig(const Tensor& a_in, bool vectors) {
  check_square("Eig", a_in);
  const Tensor a = a_in.contiguous();
  const int n = int(a.dim(a.ndim() - 1));
  const DType ct = (a.dtype() == DType::Float32 || a.dtype() == DType::Complex64) ? DType::Complex64 : DType::Complex128;
  Shape ws(a.shape().begin(), a.shape().end() - 1);
  const int64_t batch = n ? a.numel() / (int64_t(n) * n) : 0;
  Tensor w = Tensor::empty(ws, ct), v = Tensor::zeros(a.shape(), ct);
  for (int64_t b = 0; b < batch; ++b) {
    Mat H = read_matrix(a, b, n), Q(n);
    for (auto& z : H.a)
      if (!std::isfinite(z.real()) || !std::isfinite(z.imag())) PJ_THROW(Value) << "Eig: the input holds inf or NaN";
    hessenberg(H, Q);
    schur(H, Q);
    for (int k = 0; k < n; ++k) write(w, b * n + k, H(k, k));
    if (!vectors) continue;
    double norm = 0;
    for (auto& z : H.a) norm = std::max(norm, std::abs(z));
    const double small = std::max(norm * std::numeric_limits<double>::epsilon(), std::numeric_limits<double>::min());
    std::vector<C> x(n), y(n);
    for (int k = 0; k < n; ++k) {
      std::fill(x.begin(), x.end(), C(0));
      x[k] = 1;
      for (int i = k - 1; i >= 0; --i) {
        C s = 0;
        for (int j = i + 1; j <= k; ++j) s += H(i, j) * x[j];
        C d = H(i, i) - H(k, k);
        if (std::abs(d) < small) d = small;
        x[i] = -s / d;
      }
      double nrm = 0;
      int big = 0;
      for (int i = 0; i < n; ++i) {
        C s = 0;
        for (int j = 0; j <= k; ++j) s += Q(i, j) * x[j];
        y[i] = s;
        nrm += std::norm(s);
        if (std::norm(s) > std::norm(y[big])) big = i;
      }
      nrm = std::sqrt(nrm);
      const C phase = std::abs(y[big]) > 0 ? std::conj(y[big]) / std::abs(y[big]) : C(1);
      for (int i = 0; i < n; ++i) write(v, b * int64_t(n) * n + int64_t(i) * n + k, y[i] * phase / nrm);
    }
  }
  return {w, v};
}

Tensor matrix_log(const Tensor& a_in) {
  check_square("MatrixLogarithm", a_in);
  const Tensor a = a_in.contiguous();
  const int n = int(a.dim(a.ndim() - 1));
  const int64_t batch = n ? a.numel() / (int64_t(n) * n) : 0;
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  for (int64_t b = 0; b < batch; ++b) {
    Mat T = read_matrix(a, b, n), Q(n), F(n);
    hessenberg(T, Q);
    schur(T, Q);
    for (int j = 0; j < n; ++j) F(j, j) = std::log(T(j, j));
    for (int d = 1; d < n; ++d)
      for (int i = 0; i + d < n; ++i) {
        const int j = i + d;
        C s = 0;
        for (int k = i + 1; k < j; ++k) s += T(i, k) * F(k, j) - F(i, k) * T(k, j);  // from F T = T F
        const C den = T(j, j) - T(i, i);
        const double scale = std::max(std::abs(T(i, i)), std::abs(T(j, j)));
        if (std::abs(den) > 1e-8 * scale) F(i, j) = (T(i, j) * (F(j, j) - F(i, i)) + s) / den;
        else F(i, j) = T(i, j) / T(i, i);  // the divided difference's limit, f'(lambda)
      }
    for (int i = 0; i < n; ++i)  // Q F Q^H
      for (int j = 0; j < n; ++j) {
        C s = 0;
        for (int k = 0; k < n; ++k)
          for (int m = k; m < n; ++m) s += Q(i, k) * F(k, m) * std::conj(Q(j, m));
        write(out, b * int64_t(n) * n + int64_t(i) * n + j, s);
      }
  }
  return out;
}

}  // namespace pj
