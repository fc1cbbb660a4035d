// Matrix products on the GPU (kernels/cuda/matmul_cuda.h): dense-layer shapes agree with a float64
// reference to float32 rounding, bias and relu included, relu keeps NaN as pijit's relu does, and
// a shape's second run gives the first's bits. Without a GPU: the reason, and bad sizes refused.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "common/check.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/driver.h"
#include "tests/cpp/cuda_test_util.h"
#include "kernels/cuda/matmul_cuda.h"

namespace pj::cuda {
namespace {

using testing::on_device;
using testing::uniform;

// C = A @ op(B) (+ bias) (relu) on the GPU, back on the host.
std::vector<float> run(const MatmulShape& s, const std::vector<float>& a, const std::vector<float>& b,
                       const std::vector<float>& bias) {
  DeviceBuffer da = on_device(a), db = on_device(b), dbias = on_device(bias.empty() ? std::vector<float>{0} : bias);
  DeviceBuffer dc(s.m * s.n * 4);
  matmul_cuda(s, static_cast<const float*>(da.get()), static_cast<const float*>(db.get()),
              s.bias ? static_cast<const float*>(dbias.get()) : nullptr, static_cast<float*>(dc.get()));
  synchronize();
  std::vector<float> c(s.m * s.n);
  dc.download(c.data(), c.size() * 4);
  return c;
}

TEST(MatmulCuda, DenseLayerShapesAgreeWithFloat64ToFloat32Rounding) {
  if (!backend().usable) GTEST_SKIP() << "no usable GPU: " << backend().why;
  const MatmulShape shapes[] = {
      {32, 256, 784, true, true, true},  // an MLP's first layer: W[256, 784], bias, relu
      {32, 10, 256, true, true, false},  // its last
      {7, 5, 3, false, false, false},    // odd sizes, B[k, n]
      {1, 1, 1, false, true, false},
      {33, 65, 129, true, false, true},
      {256, 512, 1024, false, true, false},
  };
  unsigned seed = 1;
  for (const MatmulShape& s : shapes) {
    const std::vector<float> a = uniform(s.m * s.k, seed++), b = uniform(s.k * s.n, seed++),
                             bias = s.bias ? uniform(s.n, seed++) : std::vector<float>{};
    const std::vector<float> c = run(s, a, b, bias);
    int64_t bad = 0;
    std::string first;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double ref = s.bias ? bias[j] : 0.0, mag = std::fabs(ref);
        for (int64_t p = 0; p < s.k; ++p) {
          const double bv = s.trans_b ? b[j * s.k + p] : b[p * s.n + j];
          ref += static_cast<double>(a[i * s.k + p]) * bv;
          mag += std::fabs(a[i * s.k + p] * bv);
        }
        if (s.relu) ref = ref > 0 ? ref : 0;
        // float32 summation in any order: within (k + 1) ulps of the magnitudes summed
        const double tol = (s.k + 1) * std::ldexp(mag, -23);
        if (!(std::fabs(c[i * s.n + j] - ref) <= tol) && bad++ == 0)
          first = "C[" + std::to_string(i) + "," + std::to_string(j) + "] = " + std::to_string(c[i * s.n + j]) +
                  ", float64 " + std::to_string(ref);
      }
    EXPECT_EQ(bad, 0) << s.m << "x" << s.k << " @ " << (s.trans_b ? "T " : "") << s.k << "x" << s.n << ": " << first;
    EXPECT_EQ(std::memcmp(run(s, a, b, bias).data(), c.data(), c.size() * 4), 0) << "a second run differs";
  }
}

TEST(MatmulCuda, ReluKeepsNanAsPijitsReluDoes) {
  if (!backend().usable) GTEST_SKIP() << "no usable GPU: " << backend().why;
  const MatmulShape s{4, 8, 16, true, true, true};
  std::vector<float> a = uniform(s.m * s.k, 7), b = uniform(s.n * s.k, 8), bias = uniform(s.n, 9);
  a[2 * s.k + 3] = NAN;  // row 2 of C is NaN, not 0
  const std::vector<float> c = run(s, a, b, bias);
  for (int64_t j = 0; j < s.n; ++j) {
    EXPECT_TRUE(std::isnan(c[2 * s.n + j])) << j;
    EXPECT_FALSE(std::isnan(c[1 * s.n + j])) << j;
    EXPECT_GE(c[1 * s.n + j], 0.f);
  }
}

TEST(MatmulCuda, WithoutAGpuRaisesWhyAndBadSizesAreRefused) {
  float dummy = 0;
  try {
    matmul_cuda({-1, 2, 3, false, false, false}, &dummy, &dummy, nullptr, &dummy);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_NE(std::string(e.what()).find("must not be negative, got m=-1"), std::string::npos) << e.what();
  }
  if (backend().usable) GTEST_SKIP() << "a GPU is usable here";
  try {
    matmul_cuda({2, 2, 2, false, false, false}, &dummy, &dummy, nullptr, &dummy);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("no usable GPU: " + backend().why), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pj::cuda
