// The approximated float32 functions of fused kernels, in scalar form: the exact operation
// sequence the machine code (codegen/asm/fused_x86.cc) performs per lane, with the same constants,
// so that the interpreter, the machine code and the eager kernels (which run these too) agree bit
// for bit. Compiled without FMA contraction (CMakeLists.txt): every fmaf here is one on purpose.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace pj::fused_math {

constexpr float kExpLo = -104.f, kExpHi = 89.f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693147182464599609375f, kLn2Lo = -1.904654323148236e-09f;
// e^r, r in [-ln2/2, ln2/2]: Taylor coefficients, highest degree first.
constexpr float kExpPoly[] = {1.f / 5040, 1.f / 720, 1.f / 120, 1.f / 24, 1.f / 6, 0.5f, 1.f, 1.f};
// tanh(x) = sign(x) m / (m + 2), m = expm1(2|x|) = 2^n (expm1(r) + 1) - 1, r = 2|x| - n ln2, with
// expm1(r) = r + r^2 Q(r) (Q a minimax fit of relative error 1.3e-8 on [-ln2/2, ln2/2], highest
// degree first): no cancellation near 0, one division, no second branch. 2|x| is clamped to
// kTanhClamp, past which tanh rounds to 1.
constexpr float kTanhClamp = 20.f;
constexpr float kExpm1Poly[] = {0.00138825201f, 0.008366514f, 0.0416672006f, 0.166665435f, 0.49999997f};
// erf(x) = x P(x^2) for |x| < kErfSmall (Taylor, highest degree first); above,
// erf(x) = 1 - e^{-x^2} R(t), t = 1 / (1 + x/2), x clamped to 4 (erf(4) rounds to 1), R a
// least-squares fit of erfc(x) e^{x^2} on [0.5, 4] (relative error 2e-9 before float rounding).
constexpr float kErfSmall = 0.5f, kErfBig = 4.f;
constexpr float kErfPoly[] = {0.000120553326f, -0.000854832702f, 0.00522397785f, -0.0268661715f,
                              0.112837918f,    -0.376126379f,    1.12837923f};
constexpr float kErfcPoly[] = {-0.0210939404f, 0.207365468f, -0.630183876f, 0.725599229f,  -0.206067294f,
                               0.388728142f,   0.249585196f, 0.286321521f,  -0.000239192319f};
// gelu(x) = x/2 (1 + erf(x / sqrt 2)); gelu_tanh(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
constexpr float kSqrtHalf = 0.707106781f, kGeluTanhK = 0.797884561f, kGeluTanhC = 0.044715f;
// log(m) = 2s + s (s^2 Q(s^2)), s = (m-1)/(m+1): Q from 2 atanh(s)'s series, highest degree first.
constexpr float kLogPoly[] = {2.f / 11, 2.f / 9, 2.f / 7, 2.f / 5, 2.f / 3};
constexpr float kLogLn2Hi = 0.693359375f, kLogLn2Lo = -2.12194440e-4f;
constexpr float kSqrt2 = 1.41421356f, kFltMin = 1.17549435e-38f, kTwo23 = 8388608.f;

// numpy's maximum/minimum: NaN if either is NaN, else the larger (smaller); one definition for the
// eager loops (any dtype) and the fused interpreter.
template <typename T>
inline T nan_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a > b ? a : b;
}
template <typename T>
inline T nan_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? a : b;
}

inline uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
// x86 vmaxps/vminps: the first operand when it compares greater (smaller), else the second.
inline float vmax(float a, float b) { return a > b ? a : b; }
inline float vmin(float a, float b) { return a < b ? a : b; }
// vcvtps2dq of an integral value; NaN gives the "integer indefinite" value.
inline int32_t to_int(float f) { return std::isnan(f) ? INT32_MIN : static_cast<int32_t>(f); }

template <size_t N>
inline float horner(float x, const float (&c)[N]) {
  float p = c[0];
  for (size_t k = 1; k < N; ++k) p = std::fmaf(p, x, c[k]);
  return p;
}

// numpy's relu: a when a > 0 or a is NaN, else +0 (also for -0).
inline float relu(float a) { return a > 0.f ? a : (std::isnan(a) ? a : 0.f); }

// Every function returns a NaN argument as it is (libm's rule), as the machine code's final blend.
// u = n ln2 + r with n = round(u / ln2), |r| <= ln2/2 (ln2 in two parts); returns n.
inline float reduce_ln2(float u, float* r) {
  float n = std::nearbyintf(u * kLog2e);
  *r = std::fmaf(-n, kLn2Lo, std::fmaf(-n, kLn2Hi, u));
  return n;
}

inline float exp_core(float x) {
  float u = vmin(kExpHi, vmax(kExpLo, x));  // NaN stays NaN
  float r;
  float n = reduce_ln2(u, &r);
  float p = horner(r, kExpPoly);
  int32_t ni = to_int(n);
  int32_t n1 = ni >> 1;
  int32_t n2 = static_cast<int32_t>(static_cast<uint32_t>(ni) - static_cast<uint32_t>(n1));
  p = p * from_bits((static_cast<uint32_t>(n1) + 127u) << 23);
  return p * from_bits((static_cast<uint32_t>(n2) + 127u) << 23);
}

inline float exp(float x) { return std::isnan(x) ? x : exp_core(x); }

inline float tanh(float a) {
  float ax = from_bits(bits(a) & 0x7fffffffu);
  float u = vmin(ax + ax, kTanhClamp);
  float r;
  float n = reduce_ln2(u, &r);
  float q = horner(r, kExpm1Poly);
  float m = std::fmaf(r * r, q, r);  // expm1(r)
  float s = from_bits((static_cast<uint32_t>(to_int(n)) + 127u) << 23);  // 2^n, n in [0, 29]
  m = std::fmaf(m, s, s - 1.f);
  float t = m / (m + 2.f);
  t = from_bits(bits(t) | (bits(a) & 0x80000000u));
  return std::isnan(a) ? a : t;
}

inline float sigmoid(float a) {
  float e = exp_core(from_bits(bits(a) | 0x80000000u));  // e^-|a|
  float d = e + 1.f;
  float pos = 1.f / d, neg = e / d;
  float r = a >= 0.f ? pos : neg;
  return std::isnan(a) ? a : r;
}

inline float silu(float a) { return a * fused_math::sigmoid(a); }

inline float erf(float a) {
  float ax = from_bits(bits(a) & 0x7fffffffu);
  float small = a * horner(a * a, kErfPoly);
  float xc = vmin(kErfBig, ax);
  float t = 1.f / (1.f + xc * 0.5f);
  float r = horner(t, kErfcPoly);
  float e = exp_core(from_bits(bits(xc * xc) | 0x80000000u));  // e^{-x^2}
  float big = 1.f - e * r;
  big = from_bits(bits(big) | (bits(a) & 0x80000000u));
  float res = ax < kErfSmall ? small : big;
  return std::isnan(a) ? a : res;
}

// The formulas as PyTorch evaluates them in float32 (x/2 first), with the fused erf and tanh.
inline float gelu(float a) { return (a * 0.5f) * (1.f + fused_math::erf(a * kSqrtHalf)); }
inline float gelu_tanh(float a) {
  float c = kGeluTanhC * a;
  c = c * a;
  c = c * a;
  return (a * 0.5f) * (1.f + fused_math::tanh(kGeluTanhK * (a + c)));
}

inline float log(float a) {
  bool tiny = a < kFltMin;  // subnormal, zero or negative
  float x = tiny ? a * kTwo23 : a;
  float adj = tiny ? 23.f : 0.f;
  int32_t ei = static_cast<int32_t>((bits(x) >> 23) & 0xffu) - 127;
  float e = static_cast<float>(ei) - adj;
  float m = from_bits((bits(x) & 0x007fffffu) | 0x3f800000u);
  bool big = m > kSqrt2;
  if (big) m = m * 0.5f;
  e = e + (big ? 1.f : 0.f);
  float f = m - 1.f;
  float s = f / (f + 2.f);
  float s2 = s * s;
  float rr = horner(s2, kLogPoly) * s2;
  float l = std::fmaf(s, rr, s + s);
  l = std::fmaf(e, kLogLn2Lo, l);
  l = std::fmaf(e, kLogLn2Hi, l);
  if (a == 0.f) l = -INFINITY;
  if (a < 0.f) l = NAN;
  if (a == INFINITY) l = INFINITY;
  if (std::isnan(a)) l = a;
  return l;
}

}  // namespace pj::fused_math
