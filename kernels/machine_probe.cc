#include "kernels/machine_probe.h"

#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <immintrin.h>

namespace pj {

namespace {
constexpr int kChains = 10;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

// AVX-512 FMA chains, compiled for that ISA only here and used when the CPU has it (oneDNN picks
// the widest ISA at run time, so the limit must too).
__attribute__((target("avx512f"))) static float fma_chains_avx512(long iters) {
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  __m512 a0 = _mm512_set1_ps(1.0f), a1 = _mm512_set1_ps(1.1f), a2 = _mm512_set1_ps(1.2f),
         a3 = _mm512_set1_ps(1.3f), a4 = _mm512_set1_ps(1.4f), a5 = _mm512_set1_ps(1.5f),
         a6 = _mm512_set1_ps(1.6f), a7 = _mm512_set1_ps(1.7f), a8 = _mm512_set1_ps(1.8f),
         a9 = _mm512_set1_ps(1.9f);
  for (long it = 0; it < iters / kChains; ++it) {
    a0 = _mm512_fmadd_ps(a0, m, c); a1 = _mm512_fmadd_ps(a1, m, c);
    a2 = _mm512_fmadd_ps(a2, m, c); a3 = _mm512_fmadd_ps(a3, m, c);
    a4 = _mm512_fmadd_ps(a4, m, c); a5 = _mm512_fmadd_ps(a5, m, c);
    a6 = _mm512_fmadd_ps(a6, m, c); a7 = _mm512_fmadd_ps(a7, m, c);
    a8 = _mm512_fmadd_ps(a8, m, c); a9 = _mm512_fmadd_ps(a9, m, c);
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                           _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(a8, a9));
  alignas(64) float lanes[16];  // (not _mm512_reduce_add_ps: GCC 12's header warns inside it)
  _mm512_store_ps(lanes, s);
  float sum = 0.f;
  for (float v : lanes) sum += v;
  return sum;
}

#if defined(__AVX2__) && defined(__FMA__)
static float fma_chains_avx2(long iters) {
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  __m256 a0 = _mm256_set1_ps(1.0f), a1 = _mm256_set1_ps(1.1f), a2 = _mm256_set1_ps(1.2f),
         a3 = _mm256_set1_ps(1.3f), a4 = _mm256_set1_ps(1.4f), a5 = _mm256_set1_ps(1.5f),
         a6 = _mm256_set1_ps(1.6f), a7 = _mm256_set1_ps(1.7f), a8 = _mm256_set1_ps(1.8f),
         a9 = _mm256_set1_ps(1.9f);
  for (long it = 0; it < iters / kChains; ++it) {
    a0 = _mm256_fmadd_ps(a0, m, c); a1 = _mm256_fmadd_ps(a1, m, c);
    a2 = _mm256_fmadd_ps(a2, m, c); a3 = _mm256_fmadd_ps(a3, m, c);
    a4 = _mm256_fmadd_ps(a4, m, c); a5 = _mm256_fmadd_ps(a5, m, c);
    a6 = _mm256_fmadd_ps(a6, m, c); a7 = _mm256_fmadd_ps(a7, m, c);
    a8 = _mm256_fmadd_ps(a8, m, c); a9 = _mm256_fmadd_ps(a9, m, c);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(a8, a9));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}
#endif

static float fma_chains_scalar(long iters) {
  float a[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  for (long it = 0; it < iters / 8; ++it)
    for (auto& v : a) v = v * 0.999999f + 1e-7f;
  return a[0] + a[7];
}

double probe_peak_gflops(int threads) {
  // One driver; the chain function and its float32 lanes follow the widest ISA available.
  float (*chains)(long) = fma_chains_scalar;
  int lanes = 1;
#if defined(__AVX2__) && defined(__FMA__)
  chains = fma_chains_avx2;
  lanes = 8;
#endif
  if (__builtin_cpu_supports("avx512f")) {
    chains = fma_chains_avx512;
    lanes = 16;
  }
  const long iters = 20000000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now();
    float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += chains(iters);
    double dt = now() - t0;
    volatile float keep = sink;
    (void)keep;
    double fmas = lanes == 1 ? double(iters / 8) * 8 : double(iters / kChains) * kChains * lanes;
    best = std::max(best, fmas * 2 * threads / dt / 1e9);
  }
  return best;
}

// A copy that streams its stores past the caches (what glibc's memcpy may or may not do at this
// size): no line of dst is read before it is written.
__attribute__((target("avx"))) void stream_copy(char* dst, const char* src, size_t n) {  // (32-byte aligned, n % 128 == 0)
  for (size_t i = 0; i < n; i += 128)
    for (size_t k = 0; k < 128; k += 32)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + k),
                          _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i + k)));
  _mm_sfence();
}

double probe_copy_bandwidth_gbs(int threads) {
  const size_t n = size_t(64) << 20;  // 64 MiB each way
  char* src = static_cast<char*>(std::aligned_alloc(64, n));
  char* dst = static_cast<char*>(std::aligned_alloc(64, n));
  std::memset(src, 1, n);
  std::memset(dst, 0, n);
  double best = 0;
  for (int rep = 0; rep < 10; ++rep) {
    const bool streamed = rep % 2 && __builtin_cpu_supports("avx");  // the faster of memcpy and a streaming copy
    double t0 = now();
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      size_t b = n * t / nt / 128 * 128, e = t + 1 == nt ? n : n * (t + 1) / nt / 128 * 128;
      if (streamed) stream_copy(dst + b, src + b, e - b);
      else std::memcpy(dst + b, src + b, e - b);
    }
    double dt = now() - t0;
    best = std::max(best, 2.0 * n / dt / 1e9);
  }
  std::free(src);
  std::free(dst);
  return best;
}

}  // namespace pj
