#include "kernels/random.h"

#include <atomic>
#include <cmath>
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
inline void philox_lanes(uint64_t key, uint64_t first, uint32_t w[4][kLanes]) {
  uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    uint64_t c = first + static_cast<uint64_t>(l);
    c0[l] = static_cast<uint32_t>(c);
    c1[l] = static_cast<uint32_t>(c >> 32);
    c2[l] = c < first ? 1 : 0;
    c3[l] = 0;
  }
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

}  // namespace pj
