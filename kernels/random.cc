#include "kernels/random.h"

#include <atomic>
#include <cmath>
#include <mutex>

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

// Calls per_block(block_words, first_element, count) for every block of a call producing n
// elements at `per` elements per block, in parallel.
template <typename F>
void for_blocks(int64_t n, int per, std::optional<uint64_t> seed, F&& per_block) {
  const uint64_t nblocks = static_cast<uint64_t>((n + per - 1) / per);
  uint64_t key = 0, first = 0;
  if (seed) key = *seed;
  else first = take_blocks(nblocks, &key);
  parallel_for(static_cast<int64_t>(nblocks), kParallelGrain / per, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      uint64_t c = first + static_cast<uint64_t>(i);
      // The high counter word carries the wrap of the low one, so counters never repeat.
      std::array<uint32_t, 4> w = philox4x32(key, c, c < first ? 1 : 0);
      int64_t at = i * per;
      per_block(w, at, std::min<int64_t>(per, n - at));
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
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
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
      double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * M_PI * u2;
      o[at] = static_cast<T>(r * std::cos(th));
      if (n > 1) o[at + 1] = static_cast<T>(r * std::sin(th));
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
