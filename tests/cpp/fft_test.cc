// kernels/fft.h: how lengths are planned, and the paths a plan can take (Stockham over blocks of
// lines, four-step for one long line, Bluestein) agreeing with each other and with a direct DFT.
// The Python suites (tests/python/test_fft.py, oracle/test_torch_fft.py) check the ops' values.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "kernels/fft.h"
#include "kernels/threading.h"
#include "test_util.h"

namespace pj {
namespace {

using cd = std::complex<double>;

Tensor random_c128(Shape s, unsigned seed) {
  Tensor t = Tensor::empty(s, DType::Complex128);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  cd* p = t.data<cd>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = cd(u(rng), u(rng));
  return t;
}

Tensor fft1(const Tensor& x, int axis, bool inverse = false) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  fft_c2c(x, out, {FftAxis{axis, x.dim(axis), x.dim(axis)}}, inverse, 1.0);
  return out;
}

TEST(FftPlan, Summaries) {
  EXPECT_EQ(fft_plan_summary(1), "1");
  EXPECT_EQ(fft_plan_summary(1024), "4x4x4x4x4");
  EXPECT_EQ(fft_plan_summary(12), "4x3");
  EXPECT_EQ(fft_plan_summary(2 * 3 * 5 * 7 * 61), "2x3x5x7x61");
  // 67 > kFftMaxRadix: Bluestein over 144 = 2^4 3^2, cheaper than 256 or 135 = 3^3 5.
  EXPECT_EQ(fft_plan_summary(67), "bluestein(144)");
  EXPECT_EQ(fft_plan_summary(int64_t(1) << 20), "4x4x4x4x4x4x4x4x4x4 four-step(1024x1024)");
  EXPECT_EQ(fft_plan_summary(1000003).rfind("bluestein(", 0), 0u);
  EXPECT_GE(fft_cached_plans(), 5);
}

TEST(FftPaths, SmallAgainstDirectDft) {
  for (int64_t n : {1, 2, 3, 5, 6, 8, 9, 30, 61, 67, 100, 127}) {
    Tensor x = random_c128({n}, static_cast<unsigned>(n));
    Tensor y = fft1(x, 0);
    const cd* a = x.data<cd>();
    const cd* b = y.data<cd>();
    double err = 0, big = 0;
    for (int64_t k = 0; k < n; ++k) {
      cd s = 0;
      for (int64_t j = 0; j < n; ++j) s += a[j] * std::polar(1.0, -2 * M_PI * double((j * k) % n) / double(n));
      err = std::max(err, std::abs(s - b[k]));
      big = std::max(big, std::abs(s));
    }
    EXPECT_LT(err / big, 1e-13) << n;
  }
}

// One long line (four-step, v = 1) against the same length as two interleaved columns (plain
// Stockham stages over blocks) and against its inverse; equal for any thread count.
TEST(FftPaths, FourStepMatchesStockhamAndThreads) {
  for (int64_t n : {int64_t(1) << 15, int64_t(3) * 5 * 4096, int64_t(40009)}) {
    Tensor col = random_c128({n, 2}, 7);
    Tensor line = Tensor::empty({n}, DType::Complex128);
    for (int64_t i = 0; i < n; ++i) line.data<cd>()[i] = col.data<cd>()[2 * i];
    Tensor a = fft1(line, 0), b = fft1(col, 0);
    double err = 0, big = 0;
    for (int64_t i = 0; i < n; ++i) {
      err = std::max(err, std::abs(a.data<cd>()[i] - b.data<cd>()[2 * i]));
      big = std::max(big, std::abs(b.data<cd>()[2 * i]));
    }
    EXPECT_LT(err / big, 1e-13) << n;
    Tensor back = fft1(a, 0, true);
    double rt = 0;
    for (int64_t i = 0; i < n; ++i) rt = std::max(rt, std::abs(back.data<cd>()[i] / double(n) - line.data<cd>()[i]));
    EXPECT_LT(rt, 1e-13) << n;
    const int nt = get_num_threads();
    set_num_threads(1);
    Tensor one = fft1(line, 0);
    set_num_threads(std::max(2, nt));
    Tensor many = fft1(line, 0);
    set_num_threads(nt);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(one.data<cd>()[i], many.data<cd>()[i]) << n << " " << i;
  }
}

}  // namespace
}  // namespace pj
