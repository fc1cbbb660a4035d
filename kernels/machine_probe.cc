#include "kernels/machine_probe.h"

#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace pj {

namespace {
constexpr int kChains = 12;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

double probe_peak_gflops(int threads) {
  const long iters = 20000000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now();
    float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    {
#if defined(__AVX2__) && defined(__FMA__)
      // 12 independent accumulators cover the FMA latency (4-5 cycles) times 2 ports.
      __m256 a[kChains];
      for (int i = 0; i < kChains; ++i) a[i] = _mm256_set1_ps(1.0f + i * 1e-3f);
      const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
      for (long it = 0; it < iters / kChains; ++it)
        for (int i = 0; i < kChains; ++i) a[i] = _mm256_fmadd_ps(a[i], m, c);
      float out[8];
      __m256 s = a[0];
      for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, a[i]);
      _mm256_storeu_ps(out, s);
      for (float v : out) sink += v;
#else
      float a[8] = {1, 1, 1, 1, 1, 1, 1, 1};
      for (long it = 0; it < iters; ++it)
        for (auto& v : a) v = v * 0.999999f + 1e-7f;
      for (float v : a) sink += v;
#endif
    }
    double dt = now() - t0;
    volatile float keep = sink;
    (void)keep;
#if defined(__AVX2__) && defined(__FMA__)
    double flops = double(iters / kChains) * kChains * 8 * 2 * threads;
#else
    double flops = double(iters) * 8 * 2 * threads;
#endif
    best = std::max(best, flops / dt / 1e9);
  }
  return best;
}

double probe_copy_bandwidth_gbs(int threads) {
  const size_t n = size_t(64) << 20;  // 64 MiB each way
  char* src = static_cast<char*>(std::aligned_alloc(64, n));
  char* dst = static_cast<char*>(std::aligned_alloc(64, n));
  std::memset(src, 1, n);
  std::memset(dst, 0, n);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    double t0 = now();
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      size_t b = n * t / nt, e = n * (t + 1) / nt;
      std::memcpy(dst + b, src + b, e - b);
    }
    double dt = now() - t0;
    best = std::max(best, 2.0 * n / dt / 1e9);
  }
  std::free(src);
  std::free(dst);
  return best;
}

}  // namespace pj
