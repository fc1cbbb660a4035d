#include "kernels/random.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "kernels/threading.h"

namespace pj {

namespace {

std::mutex g_mu;          // guards the pair (seed, offset) against a concurrent set_seed
uint64_t g_seed = 0;
uint64_t g_offset = 0;    // next unused block

// The first block of a call needing `nblocks`.
uint64_t take_blocks(uint64_t nblocks, uint64_t* key) {
  std::lock_guard<std::mutex> lock(g_mu);
  *key = g_seed;
  uint64_t first = g_offset;
  g_offset += nblocks;
  return first;
}

inline void mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

// 53 random bits as a double in [0, 1).
inline double u53(uint32_t a, uint32_t b) {
  uint64_t v = (static_cast<uint64_t>(a) << 32) | b;
  return static_cast<double>(v >> 11) * 0x1.0p-53;
}

constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
constexpr int kLanes = 8;  // blocks computed together: the rounds' loops vectorise across them

// Philox4x32-10 of counters (first + l, carry) for l < kLanes, into w[word][lane]. The high
// counter word is 1 for a counter that wrapped past 2^64, so counters never repeat.
inline void philox_rounds(uint64_t key, uint32_t (&c0)[kLanes], uint32_t (&c1)[kLanes], uint32_t (&c2)[kLanes],
                          uint32_t (&c3)[kLanes], uint32_t w[4][kLanes]) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
#ifdef __AVX2__
  // GCC does not vectorise the 32x32->64 high halves; _mm256_mul_epu32 does 4 lanes at a time.
  static_assert(kLanes == 8, "one AVX2 register per counter word");
  auto load = [](const uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
  __m256i v0 = load(c0), v1 = load(c1), v2 = load(c2), v3 = load(c3);
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(kM0)), m1 = _mm256_set1_epi32(static_cast<int>(kM1));
  auto mulhilo = [](__m256i a, __m256i m, __m256i* hi, __m256i* lo) {
    __m256i even = _mm256_mul_epu32(a, m), odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  };
  for (int r = 0; r < 10; ++r) {
    __m256i hi0, lo0, hi1, lo1;
    mulhilo(v0, m0, &hi0, &lo0);
    mulhilo(v2, m1, &hi1, &lo1);
    __m256i kk0 = _mm256_set1_epi32(static_cast<int>(k0)), kk1 = _mm256_set1_epi32(static_cast<int>(k1));
    v0 = _mm256_xor_si256(_mm256_xor_si256(hi1, v1), kk0);
    v2 = _mm256_xor_si256(_mm256_xor_si256(hi0, v3), kk1);
    v1 = lo1;
    v3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w[0]), v0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w[1]), v1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w[2]), v2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w[3]), v3);
#else
  for (int r = 0; r < 10; ++r) {
    for (int l = 0; l < kLanes; ++l) {
      uint64_t p0 = static_cast<uint64_t>(kM0) * c0[l], p1 = static_cast<uint64_t>(kM1) * c2[l];
      uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[l] ^ k0;
      uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[l] ^ k1;
      c1[l] = static_cast<uint32_t>(p1);
      c3[l] = static_cast<uint32_t>(p0);
      c0[l] = n0;
      c2[l] = n2;
    }
    k0 += kW0;
    k1 += kW1;
  }
  for (int l = 0; l < kLanes; ++l) {
    w[0][l] = c0[l];
    w[1][l] = c1[l];
    w[2][l] = c2[l];
    w[3][l] = c3[l];
  }
#endif
}

inline void philox_lanes(uint64_t key, uint64_t first, uint32_t w[4][kLanes]) {
  uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    uint64_t c = first + static_cast<uint64_t>(l);
    c0[l] = static_cast<uint32_t>(c);
    c1[l] = static_cast<uint32_t>(c >> 32);
    c2[l] = c < first ? 1 : 0;
    c3[l] = 0;
  }
  philox_rounds(key, c0, c1, c2, c3, w);
}

// The same for counters (lo[l], hi): an element's retries, lo its own counter, hi the attempt.
inline void philox_lanes_at(uint64_t key, const uint64_t (&lo)[kLanes], uint64_t hi, uint32_t w[4][kLanes]) {
  uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    c0[l] = static_cast<uint32_t>(lo[l]);
    c1[l] = static_cast<uint32_t>(lo[l] >> 32);
    c2[l] = static_cast<uint32_t>(hi);
    c3[l] = static_cast<uint32_t>(hi >> 32);
  }
  philox_rounds(key, c0, c1, c2, c3, w);
}

// Calls per_block(block_words, first_element, count) for every block of a call producing n
// elements at `per` elements per block, in parallel (chunks of whole lane groups).
template <typename F>
void for_blocks(int64_t n, int per, std::optional<uint64_t> seed, F&& per_block) {
  const uint64_t nblocks = static_cast<uint64_t>((n + per - 1) / per);
  uint64_t key = 0, first = 0;
  if (seed) key = *seed;
  else first = take_blocks(nblocks, &key);
  const int64_t groups = static_cast<int64_t>((nblocks + kLanes - 1) / kLanes);
  parallel_for(groups, kParallelGrain / (per * kLanes), [&](int64_t b, int64_t e) {
    uint32_t w[4][kLanes];
    for (int64_t g = b; g < e; ++g) {
      philox_lanes(key, first + static_cast<uint64_t>(g) * kLanes, w);
      for (int l = 0; l < kLanes; ++l) {
        int64_t at = (g * kLanes + l) * per;
        if (at >= n) break;
        per_block(std::array<uint32_t, 4>{w[0][l], w[1][l], w[2][l], w[3][l]}, at,
                  std::min<int64_t>(per, n - at));
      }
    }
  });
}

}  // namespace

void set_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_seed = seed;
  g_offset = 0;
}

uint64_t get_seed() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_seed;
}

std::pair<uint64_t, uint64_t> rng_state() {
  std::lock_guard<std::mutex> lock(g_mu);
  return {g_seed, g_offset};
}

void set_rng_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_seed = seed;
  g_offset = offset;
}

std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter_lo, uint64_t counter_hi) {
  uint32_t c0 = static_cast<uint32_t>(counter_lo), c1 = static_cast<uint32_t>(counter_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int r = 0; r < 10; ++r) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kM0, c0, &hi0, &lo0);
    mulhilo(kM1, c2, &hi1, &lo1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  return {c0, c1, c2, c3};
}

void uniform_into(const Tensor& out, std::optional<uint64_t> seed) {
  PJ_CHECK(out.is_contiguous());
  PJ_DISPATCH_FLOATING(out.dtype(), "rand", [&] {
    using T = scalar_t;
    T* o = out.data<T>();
    if constexpr (std::is_same_v<T, float>) {
      for_blocks(out.numel(), 4, seed, [&](const std::array<uint32_t, 4>& w, int64_t at, int64_t n) {
        for (int64_t j = 0; j < n; ++j) o[at + j] = static_cast<float>(w[j] >> 8) * 0x1.0p-24f;
      });
    } else {
      for_blocks(out.numel(), 2, seed, [&](const std::array<uint32_t, 4>& w, int64_t at, int64_t n) {
        for (int64_t j = 0; j < n; ++j) o[at + j] = u53(w[2 * j], w[2 * j + 1]);
      });
    }
  });
}

void normal_into(const Tensor& out, std::optional<uint64_t> seed) {
  PJ_CHECK(out.is_contiguous());
  PJ_DISPATCH_FLOATING(out.dtype(), "randn", [&] {
    using T = scalar_t;
    T* o = out.data<T>();
    for_blocks(out.numel(), 2, seed, [&](const std::array<uint32_t, 4>& w, int64_t at, int64_t n) {
      double u1 = 1.0 - u53(w[0], w[1]);  // (0, 1]: log is finite
      double u2 = u53(w[2], w[3]);
      double r = std::sqrt(-2.0 * std::log(u1));
      if constexpr (std::is_same_v<T, float>) {  // float trig is plenty for a float result
        float s, c;
        sincosf(static_cast<float>(2.0 * M_PI * u2), &s, &c);
        o[at] = static_cast<float>(r) * c;
        if (n > 1) o[at + 1] = static_cast<float>(r) * s;
      } else {
        double s, c;
        sincos(2.0 * M_PI * u2, &s, &c);  // glibc: both for the price of one
        o[at] = r * c;
        if (n > 1) o[at + 1] = r * s;
      }
    });
  });
}

void check_randint_bounds(int64_t low, int64_t high, DType dtype) {
  if (dtype != DType::Int32 && dtype != DType::Int64)
    PJ_THROW(Type) << "randint(): dtype must be Int32 or Int64, but got " << dtype_name(dtype);
  if (low >= high) PJ_THROW(Value) << "randint(): low (" << low << ") must be less than high (" << high << ")";
  if (dtype == DType::Int32 && (low < INT32_MIN || high - 1 > INT32_MAX))
    PJ_THROW(Value) << "randint(): [" << low << ", " << high << ") is out of bounds for Int32";
}

void randint_into(const Tensor& out, int64_t low, int64_t high, std::optional<uint64_t> seed) {
  PJ_CHECK(out.is_contiguous());
  check_randint_bounds(low, high, out.dtype());
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  PJ_DISPATCH_NUMERIC(out.dtype(), "randint", [&] {
    using T = scalar_t;
    T* o = out.data<T>();
    for_blocks(out.numel(), 2, seed, [&](const std::array<uint32_t, 4>& w, int64_t at, int64_t n) {
      for (int64_t j = 0; j < n; ++j) {
        uint64_t v = (static_cast<uint64_t>(w[2 * j]) << 32) | w[2 * j + 1];
        uint64_t r = static_cast<uint64_t>((static_cast<unsigned __int128>(v) * range) >> 64);
        o[at + j] = static_cast<T>(static_cast<uint64_t>(low) + r);
      }
    });
  });
}

// ---- initialiser fills -------------------------------------------------------------------------

namespace {

// Like for_blocks, a group of kLanes blocks at a time, so the callback's loops over lanes
// vectorise: per_group(w, first element of the group). The global offset moves past
// max(blocks, reserve) counters: a call whose elements may retry from counters of their own
// (first + element index, attempt << 32) reserves one per element.
template <typename F>
void for_groups(int64_t n, int per, uint64_t reserve, std::optional<uint64_t> seed, uint64_t* key, uint64_t* first,
                F&& per_group) {
  const uint64_t nblocks = static_cast<uint64_t>((n + per - 1) / per);
  *key = 0;
  *first = 0;
  if (seed) *key = *seed;
  else *first = take_blocks(std::max(nblocks, reserve), key);
  const int64_t groups = static_cast<int64_t>((nblocks + kLanes - 1) / kLanes);
  const uint64_t k = *key, f0 = *first;
  parallel_for(groups, std::max<int64_t>(1, kParallelGrain / (per * kLanes)), [&](int64_t b, int64_t e) {
    uint32_t w[4][kLanes];
    for (int64_t g = b; g < e; ++g) {
      philox_lanes(k, f0 + static_cast<uint64_t>(g) * kLanes, w);
      per_group(w, g * kLanes * per);
    }
  });
}

// Writes a group's values v[j][lane] to o, up to n: word j of the group's blocks fills the j-th
// run of kLanes elements (contiguous stores).
template <typename T, typename V, int kPer>
inline void store_group(T* o, int64_t n, int64_t at, const V (&v)[kPer][kLanes]) {
  if (at + kLanes * kPer <= n) {
    for (int j = 0; j < kPer; ++j)
      for (int l = 0; l < kLanes; ++l) o[at + j * kLanes + l] = static_cast<T>(v[j][l]);
    return;
  }
  for (int j = 0; j < kPer; ++j)
    for (int l = 0; l < kLanes; ++l)
      if (at + j * kLanes + l < n) o[at + j * kLanes + l] = static_cast<T>(v[j][l]);
}

// Float32 Box-Muller pieces, without branches or selects (bit operations instead), so that the
// loops over lanes vectorise. 24-bit uniforms: k = word >> 8.

inline uint32_t float_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

inline float bits_float(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// -2 ln(u) for u = (k + 1) 2^-24 in (0, 1]: ln of the float k + 1 (exact) as exponent * ln 2
// plus ln of a mantissa in [sqrt(1/2), sqrt(2)) by the atanh series (error < 1e-9 there).
inline float minus2_log_u24(uint32_t k) {
  const uint32_t bits = float_bits(static_cast<float>(static_cast<int32_t>(k + 1)));
  uint32_t mbits = (bits & 0x7fffffu) | 0x3f800000u;  // the mantissa as a float in [1, 2)
  const uint32_t big = mbits > 0x3fb504f3u ? 1u : 0u;   // above sqrt(2): halve it
  mbits -= big << 23;
  const int32_t e = static_cast<int32_t>(bits >> 23) - 127 + static_cast<int32_t>(big);
  const float m = bits_float(mbits);
  const float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
  const float ln_m = 2.0f * s * (1.0f + s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7 + s2 * (1.0f / 9)))));
  return -2.0f * (static_cast<float>(e - 24) * 0.693147180559945f + ln_m);
}

// sin and cos of 2 pi k 2^-24: the quadrant is k's top two bits (exact), the angle within it is
// below pi/2, where Taylor polynomials to degree 13 and 12 are within 1e-8.
inline void sincos_2pi_u24(uint32_t k, float* sn, float* cs) {
  const uint32_t q = k >> 22;
  const float t = static_cast<float>(static_cast<int32_t>(k & 0x3fffffu)) * (1.57079632679489662f / 4194304.0f);
  const float t2 = t * t;
  const float s = t * (1.0f + t2 * (-1.0f / 6 + t2 * (1.0f / 120 + t2 * (-1.0f / 5040 + t2 * (1.0f / 362880 +
                  t2 * (-1.0f / 39916800 + t2 * (1.0f / 6227020800.0f)))))));
  const float c = 1.0f + t2 * (-0.5f + t2 * (1.0f / 24 + t2 * (-1.0f / 720 + t2 * (1.0f / 40320 +
                  t2 * (-1.0f / 3628800 + t2 * (1.0f / 479001600))))));
  // Quadrant q: (sin, cos) = (s, c), (c, -s), (-s, -c), (-c, s).
  const uint32_t swap = 0u - (q & 1u), sb = float_bits(s), cb = float_bits(c);
  const uint32_t so = (sb & ~swap) | (cb & swap), co = (cb & ~swap) | (sb & swap);
  *sn = bits_float(so ^ ((q & 2u) << 30));
  *cs = bits_float(co ^ (((q + 1u) & 2u) << 30));
}

// sqrt(x) for x in [0, 34]: x / sqrt(x) from the bit-level estimate of 1 / sqrt(x) and three
// Newton steps (relative error 3e-11 before rounding). std::sqrt is a call that may set errno
// unless the file is built with -fno-math-errno, which keeps GCC from vectorising the loop.
inline float sqrt_small(float x) {
  float y = bits_float(0x5f3759dfu - (float_bits(x) >> 1));
  const float h = 0.5f * x;
  y = y * (1.5f - h * y * y);
  y = y * (1.5f - h * y * y);
  y = y * (1.5f - h * y * y);
  return x * y;  // 0 at x = 0: y stays finite
}

// Two standard normals from two words.
inline void normal_pair_f32(uint32_t a, uint32_t b, float* z0, float* z1) {
  const float r = sqrt_small(minus2_log_u24(a >> 8));
  float sn, cs;
  sincos_2pi_u24(b >> 8, &sn, &cs);
  *z0 = r * cs;
  *z1 = r * sn;
}

// mean + sigma * N(0, 1) for a group: v[j][l] from the words of block l (pairs (w0, w1), (w2, w3)).
inline void normal_group_f32(const uint32_t (&w)[4][kLanes], float mean, float sigma, float (&v)[4][kLanes]) {
  for (int l = 0; l < kLanes; ++l) {
    normal_pair_f32(w[0][l], w[1][l], &v[0][l], &v[1][l]);
    normal_pair_f32(w[2][l], w[3][l], &v[2][l], &v[3][l]);
  }
  for (int j = 0; j < 4; ++j)
    for (int l = 0; l < kLanes; ++l) v[j][l] = mean + sigma * v[j][l];
}

// Two standard normals from four words, in double (53-bit uniforms).
inline void normal_pair_f64(uint32_t a, uint32_t b, uint32_t c, uint32_t d, double* z0, double* z1) {
  const double r = std::sqrt(-2.0 * std::log(1.0 - u53(a, b)));  // (0, 1]: log is finite
  double sn, cs;
  sincos(2.0 * M_PI * u53(c, d), &sn, &cs);
  *z0 = r * cs;
  *z1 = r * sn;
}

constexpr uint32_t kMaxAttempts = 1000;  // each attempt succeeds with probability > 0.3

// A normal N(mean, sigma^2) in [lo, hi] for element counter `ctr` from its own counters, when the
// group's draw fell outside.
double normal_retry_f64(uint64_t key, uint64_t ctr, double mean, double sigma, double lo, double hi) {
  for (uint32_t attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    const std::array<uint32_t, 4> w = philox4x32(key, ctr, static_cast<uint64_t>(attempt) << 32);
    double z[2];
    normal_pair_f64(w[0], w[1], w[2], w[3], &z[0], &z[1]);
    for (double x : z) {
      x = mean + sigma * x;
      if (x >= lo && x <= hi) return x;
    }
  }
  return std::min(std::max(mean, lo), hi);
}

// Redraws float32 elements that fell outside [lo, hi], kLanes at a time: element i's attempt t
// draws four normals from counters (ctr0 + i, t << 32) and takes the first inside. Lanes are
// independent, so a value does not depend on which elements share a batch. Writes o[idx[k]].
template <typename T>
void normal_retry_batch_f32(uint64_t key, uint64_t ctr0, const int64_t* idx, int count, float mean, float sigma,
                            float lo, float hi, T* o) {
  uint64_t ctr[kLanes];
  bool done[kLanes];
  for (int k = 0; k < kLanes; ++k) {
    ctr[k] = ctr0 + static_cast<uint64_t>(idx[std::min(k, count - 1)]);
    done[k] = k >= count;
  }
  int left = count;
  for (uint32_t attempt = 1; attempt <= kMaxAttempts && left > 0; ++attempt) {
    uint32_t w[4][kLanes];
    float z[4][kLanes];
    philox_lanes_at(key, ctr, static_cast<uint64_t>(attempt) << 32, w);
    normal_group_f32(w, mean, sigma, z);
    for (int k = 0; k < count; ++k) {
      if (done[k]) continue;
      for (int j = 0; j < 4; ++j)
        if (z[j][k] >= lo && z[j][k] <= hi) {
          o[idx[k]] = static_cast<T>(z[j][k]);
          done[k] = true;
          --left;
          break;
        }
    }
  }
  for (int k = 0; k < count; ++k)
    if (!done[k]) o[idx[k]] = static_cast<T>(std::min(std::max(mean, lo), hi));
}

// A standard normal conditioned on [lo, hi] (standardised) for element counter `ctr`, where the
// normal itself is a poor proposal: [lo, hi] narrow, or off to one side of 0. Robert (1995):
// a uniform proposal on a narrow interval, an exponential one of rate lambda on a tail.
double truncated_standard(uint64_t key, uint64_t ctr, double lo, double hi) {
  const bool flip = hi <= 0;  // sample the mirror image on the right
  if (flip) {
    const double t = lo;
    lo = -hi;
    hi = -t;
  }
  const bool straddle = lo < 0;
  const double lambda = straddle ? 0 : 0.5 * (lo + std::sqrt(lo * lo + 4));
  const bool uniform = straddle || lambda * (hi - lo) <= 1;
  for (uint32_t attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    const std::array<uint32_t, 4> w = philox4x32(key, ctr, static_cast<uint64_t>(attempt) << 32);
    const double u = u53(w[0], w[1]), v = u53(w[2], w[3]);
    double x, accept;
    if (uniform) {
      x = lo + (hi - lo) * u;
      accept = straddle ? std::exp(-0.5 * x * x) : std::exp(0.5 * (lo - x) * (lo + x));
    } else {
      x = lo - std::log1p(-u) / lambda;
      if (x > hi) continue;
      accept = std::exp(-0.5 * (x - lambda) * (x - lambda));
    }
    if (v < accept) return flip ? -x : x;
  }
  return flip ? -lo : lo;
}

}  // namespace

void uniform_range_into(const Tensor& out, double low, double high, std::optional<uint64_t> seed) {
  PJ_CHECK(out.is_contiguous());
  const int64_t n = out.numel();
  PJ_DISPATCH_FLOATING(out.dtype(), "uniform initializer", [&] {
    using T = scalar_t;
    T* o = out.data<T>();
    uint64_t key, first;
    if constexpr (std::is_same_v<T, double>) {
      const double span = high - low;
      for_groups(n, 2, 0, seed, &key, &first, [&](const uint32_t (&w)[4][kLanes], int64_t at) {
        double v[2][kLanes];
        for (int l = 0; l < kLanes; ++l) {
          v[0][l] = low + span * u53(w[0][l], w[1][l]);
          v[1][l] = low + span * u53(w[2][l], w[3][l]);
        }
        store_group(o, n, at, v);
      });
    } else {
      const float lo = static_cast<float>(low), span = static_cast<float>(high - low);
      for_groups(n, 4, 0, seed, &key, &first, [&](const uint32_t (&w)[4][kLanes], int64_t at) {
        float v[4][kLanes];
        for (int j = 0; j < 4; ++j)
          for (int l = 0; l < kLanes; ++l) v[j][l] = lo + span * (static_cast<float>(w[j][l] >> 8) * 0x1.0p-24f);
        store_group(o, n, at, v);
      });
    }
  });
}

void normal_scaled_into(const Tensor& out, double mean, double sigma, std::optional<uint64_t> seed) {
  PJ_CHECK(out.is_contiguous());
  if (!(sigma >= 0)) PJ_THROW(Value) << "normal initializer: sigma must be >= 0, got " << sigma;
  const int64_t n = out.numel();
  PJ_DISPATCH_FLOATING(out.dtype(), "normal initializer", [&] {
    using T = scalar_t;
    T* o = out.data<T>();
    uint64_t key, first;
    if constexpr (std::is_same_v<T, double>) {
      for_groups(n, 2, 0, seed, &key, &first, [&](const uint32_t (&w)[4][kLanes], int64_t at) {
        double v[2][kLanes];
        for (int l = 0; l < kLanes; ++l) {
          normal_pair_f64(w[0][l], w[1][l], w[2][l], w[3][l], &v[0][l], &v[1][l]);
          v[0][l] = mean + sigma * v[0][l];
          v[1][l] = mean + sigma * v[1][l];
        }
        store_group(o, n, at, v);
      });
    } else {
      const float m = static_cast<float>(mean), sd = static_cast<float>(sigma);
      for_groups(n, 4, 0, seed, &key, &first, [&](const uint32_t (&w)[4][kLanes], int64_t at) {
        float v[4][kLanes];
        normal_group_f32(w, m, sd, v);
        store_group(o, n, at, v);
      });
    }
  });
}

void truncated_normal_into(const Tensor& out, double mean, double sigma, double a, double b,
                           std::optional<uint64_t> seed) {
  PJ_CHECK(out.is_contiguous());
  if (!(sigma > 0)) PJ_THROW(Value) << "truncated normal initializer: sigma must be > 0, got " << sigma;
  if (!(a < b)) PJ_THROW(Value) << "truncated normal initializer: a must be less than b, got a = " << a << ", b = " << b;
  const int64_t n = out.numel();
  const double lo = (a - mean) / sigma, hi = (b - mean) / sigma;
  // The normal is the proposal when [lo, hi] holds 0 and is wide: at least half its draws land.
  const bool by_normal = lo <= 0 && hi >= 0 && hi - lo >= 2.5;
  PJ_DISPATCH_FLOATING(out.dtype(), "truncated normal initializer", [&] {
    using T = scalar_t;
    T* o = out.data<T>();
    uint64_t key, first;
    if (!by_normal) {
      // Every element from its own counters; the bounds clamp only rounding of mean + sigma * z.
      if (seed) key = *seed, first = 0;
      else first = take_blocks(static_cast<uint64_t>(n), &key);
      parallel_for(n, 256, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          const double x = mean + sigma * truncated_standard(key, first + static_cast<uint64_t>(i), lo, hi);
          o[i] = static_cast<T>(std::min(std::max(x, a), b));
        }
      });
      return;
    }
    if constexpr (std::is_same_v<T, double>) {
      for_groups(n, 2, static_cast<uint64_t>(n), seed, &key, &first, [&](const uint32_t (&w)[4][kLanes], int64_t at) {
        double v[2][kLanes];
        for (int l = 0; l < kLanes; ++l) {
          normal_pair_f64(w[0][l], w[1][l], w[2][l], w[3][l], &v[0][l], &v[1][l]);
          v[0][l] = mean + sigma * v[0][l];
          v[1][l] = mean + sigma * v[1][l];
        }
        for (int j = 0; j < 2; ++j)
          for (int l = 0; l < kLanes; ++l) {
            const int64_t i = at + j * kLanes + l;
            if (i < n && !(v[j][l] >= a && v[j][l] <= b))
              v[j][l] = normal_retry_f64(key, first + static_cast<uint64_t>(i), mean, sigma, a, b);
          }
        store_group(o, n, at, v);
      });
    } else {
      const float m = static_cast<float>(mean), sd = static_cast<float>(sigma);
      const float af = static_cast<float>(a), bf = static_cast<float>(b);
      // Groups as for_groups makes them; the elements outside gather per thread and are redrawn
      // a full batch of lanes at a time (a group has ~1.5 of them at two sigmas).
      const uint64_t nblocks = static_cast<uint64_t>((n + 3) / 4);
      if (seed) key = *seed, first = 0;
      else first = take_blocks(std::max(nblocks, static_cast<uint64_t>(n)), &key);
      const int64_t groups = static_cast<int64_t>((nblocks + kLanes - 1) / kLanes);
      parallel_for(groups, std::max<int64_t>(1, kParallelGrain / (4 * kLanes)), [&](int64_t gb, int64_t ge) {
        uint32_t w[4][kLanes];
        float v[4][kLanes];
        int64_t pending[5 * kLanes];
        int np = 0;
        for (int64_t g = gb; g < ge; ++g) {
          const int64_t at = g * kLanes * 4;
          philox_lanes(key, first + static_cast<uint64_t>(g) * kLanes, w);
          normal_group_f32(w, m, sd, v);
          uint32_t out = 0;
          for (int j = 0; j < 4; ++j)
            for (int l = 0; l < kLanes; ++l)
              out |= static_cast<uint32_t>(!(v[j][l] >= af)) | static_cast<uint32_t>(!(v[j][l] <= bf));
          store_group(o, n, at, v);
          if (!out) continue;
          for (int j = 0; j < 4; ++j)
            for (int l = 0; l < kLanes; ++l)
              if (at + j * kLanes + l < n && !(v[j][l] >= af && v[j][l] <= bf)) pending[np++] = at + j * kLanes + l;
          for (; np >= kLanes; np -= kLanes)
            normal_retry_batch_f32(key, first, pending + np - kLanes, kLanes, m, sd, af, bf, o);
        }
        if (np) normal_retry_batch_f32(key, first, pending, np, m, sd, af, bf, o);
      });
    }
  });
}

}  // namespace pj
