// 2-D convolution on the GPU (kernels/cuda/conv_cuda.h): the CNN shapes pijit's benches and seeds
// use, strides, padding, dilation and groups agree with a float64 reference to float32 rounding
// (TF32 would not), bias included, forward and both backward passes, and a shape's second run
// gives the first's bits. Everywhere:
// bad shapes are refused with a ValueError that names the size; without a GPU, the reason.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "common/check.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/conv_cuda.h"
#include "kernels/cuda/driver.h"
#include "tests/cpp/cuda_test_util.h"

namespace pj::cuda {
namespace {

using testing::download;
using testing::on_device;
using testing::uniform;

std::vector<float> run(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                       const std::vector<float>& bias) {
  DeviceBuffer dx = on_device(x), dw = on_device(w), db = on_device(bias.empty() ? std::vector<float>{0} : bias);
  const size_t ny = s.n * s.k * s.out_h() * s.out_w();
  DeviceBuffer dy(ny * 4);
  conv2d_cuda(s, static_cast<const float*>(dx.get()), static_cast<const float*>(dw.get()),
              s.bias ? static_cast<const float*>(db.get()) : nullptr, static_cast<float*>(dy.get()));
  synchronize();
  std::vector<float> y(ny);
  dy.download(y.data(), ny * 4);
  return y;
}

ConvShape shape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t pad, int64_t stride,
                int64_t dil, int64_t groups, bool bias) {
  ConvShape s;
  s.n = n, s.c = c, s.h = h, s.w = w, s.k = k, s.r = r, s.s = r;
  s.pad_h = s.pad_w = pad, s.stride_h = s.stride_w = stride, s.dil_h = s.dil_w = dil, s.groups = groups, s.bias = bias;
  return s;
}

TEST(ConvCuda, CnnShapesAgreeWithFloat64ToFloat32Rounding) {
  if (!backend().usable) GTEST_SKIP() << "no usable GPU: " << backend().why;
  const ConvShape shapes[] = {
      shape(8, 1, 28, 28, 6, 5, 0, 1, 1, 1, true),    // LeNet's first
      shape(8, 3, 32, 32, 16, 3, 1, 1, 1, 1, true),   // the compiler bench's CNN
      shape(64, 16, 16, 16, 32, 3, 1, 1, 1, 1, false),
      shape(4, 16, 15, 17, 32, 3, 1, 2, 1, 1, true),  // stride 2, odd sizes
      shape(2, 8, 12, 12, 8, 3, 2, 1, 2, 2, true),    // dilation 2, groups 2
      shape(3, 64, 7, 7, 10, 1, 0, 1, 1, 1, false),   // 1x1
  };
  unsigned seed = 11;
  for (const ConvShape& s : shapes) {
    const int64_t cg = s.c / s.groups, kg = s.k / s.groups, oh = s.out_h(), ow = s.out_w();
    const std::vector<float> x = uniform(s.n * s.c * s.h * s.w, seed++), w = uniform(s.k * cg * s.r * s.s, seed++),
                             bias = s.bias ? uniform(s.k, seed++) : std::vector<float>{};
    const std::vector<float> y = run(s, x, w, bias);
    int64_t bad = 0;
    std::string first;
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t k = 0; k < s.k; ++k)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            double ref = s.bias ? bias[k] : 0.0, mag = std::fabs(ref);
            const int64_t g = k / kg;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t r = 0; r < s.r; ++r)
                for (int64_t q = 0; q < s.s; ++q) {
                  const int64_t hi = i * s.stride_h - s.pad_h + r * s.dil_h, wi = j * s.stride_w - s.pad_w + q * s.dil_w;
                  if (hi < 0 || hi >= s.h || wi < 0 || wi >= s.w) continue;
                  const double p = static_cast<double>(x[((n * s.c + g * cg + c) * s.h + hi) * s.w + wi]) *
                                   w[((k * cg + c) * s.r + r) * s.s + q];
                  ref += p, mag += std::fabs(p);
                }
            const float got = y[((n * s.k + k) * oh + i) * ow + j];
            const double tol = (cg * s.r * s.s + 2) * std::ldexp(mag, -23);
            if (!(std::fabs(got - ref) <= tol) && bad++ == 0)
              first = "y[" + std::to_string(n) + "," + std::to_string(k) + "," + std::to_string(i) + "," +
                      std::to_string(j) + "] = " + std::to_string(got) + ", float64 " + std::to_string(ref);
          }
    EXPECT_EQ(bad, 0) << s.n << "x" << s.c << "x" << s.h << "x" << s.w << " by " << s.k << "x" << s.r << "x" << s.s
                      << ": " << first;
    EXPECT_EQ(std::memcmp(run(s, x, w, bias).data(), y.data(), y.size() * 4), 0) << "a second run differs";
  }
}

// A float32 result against its float64 reference and the magnitude summed into it.
struct Checked {
  int64_t bad = 0;
  std::string first;
  void check(const char* what, int64_t at, float got, double ref, double mag, int64_t terms) {
    if (!(std::fabs(got - ref) <= (terms + 2) * std::ldexp(mag, -23)) && bad++ == 0)
      first = std::string(what) + "[" + std::to_string(at) + "] = " + std::to_string(got) + ", float64 " +
              std::to_string(ref);
  }
};

TEST(ConvCuda, BackwardPassesAgreeWithFloat64AndRepeatTheirBits) {
  if (!backend().usable) GTEST_SKIP() << "no usable GPU: " << backend().why;
  const ConvShape shapes[] = {
      shape(8, 1, 28, 28, 6, 5, 0, 1, 1, 1, true),
      shape(8, 16, 16, 16, 32, 3, 1, 1, 1, 1, true),
      shape(4, 16, 15, 17, 32, 3, 1, 2, 1, 1, false),
      shape(2, 8, 12, 12, 8, 3, 2, 1, 2, 2, true),
  };
  unsigned seed = 101;
  for (const ConvShape& s : shapes) {
    const int64_t cg = s.c / s.groups, kg = s.k / s.groups, oh = s.out_h(), ow = s.out_w();
    const size_t nx = s.n * s.c * s.h * s.w, nw = s.k * cg * s.r * s.s, ny = s.n * s.k * oh * ow;
    const std::vector<float> x = uniform(nx, seed++), w = uniform(nw, seed++), dy = uniform(ny, seed++);
    DeviceBuffer ddx(nx * 4), ddw(nw * 4), ddb(s.k * 4);
    DeviceBuffer dx_in = on_device(x), dw_in = on_device(w), ddy = on_device(dy);
    auto run_both = [&] {
      conv2d_backward_data_cuda(s, static_cast<const float*>(ddy.get()), static_cast<const float*>(dw_in.get()),
                                static_cast<float*>(ddx.get()));
      conv2d_backward_weights_cuda(s, static_cast<const float*>(dx_in.get()), static_cast<const float*>(ddy.get()),
                                   static_cast<float*>(ddw.get()), s.bias ? static_cast<float*>(ddb.get()) : nullptr);
      synchronize();
    };
    run_both();
    const std::vector<float> gx = download(ddx, nx), gw = download(ddw, nw), gb = download(ddb, s.k);
    // float64 references: every (input, weight, output) triple a forward term multiplies
    std::vector<double> rx(nx), mx(nx), rw(nw), mw(nw), rb(s.k), mb(s.k);
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t k = 0; k < s.k; ++k)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            const double g = dy[((n * s.k + k) * oh + i) * ow + j];
            rb[k] += g, mb[k] += std::fabs(g);
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t r = 0; r < s.r; ++r)
                for (int64_t q = 0; q < s.s; ++q) {
                  const int64_t hi = i * s.stride_h - s.pad_h + r * s.dil_h, wi = j * s.stride_w - s.pad_w + q * s.dil_w;
                  if (hi < 0 || hi >= s.h || wi < 0 || wi >= s.w) continue;
                  const int64_t xi = ((n * s.c + (k / kg) * cg + c) * s.h + hi) * s.w + wi, wi_ = ((k * cg + c) * s.r + r) * s.s + q;
                  rx[xi] += g * w[wi_], mx[xi] += std::fabs(g * w[wi_]);
                  rw[wi_] += g * x[xi], mw[wi_] += std::fabs(g * x[xi]);
                }
          }
    Checked ck;
    for (size_t i = 0; i < nx; ++i) ck.check("dx", i, gx[i], rx[i], mx[i], kg * s.r * s.s);
    for (size_t i = 0; i < nw; ++i) ck.check("dw", i, gw[i], rw[i], mw[i], s.n * oh * ow);
    if (s.bias)
      for (int64_t k = 0; k < s.k; ++k) ck.check("dbias", k, gb[k], rb[k], mb[k], s.n * oh * ow);
    EXPECT_EQ(ck.bad, 0) << s.n << "x" << s.c << "x" << s.h << "x" << s.w << " by " << s.k << "x" << s.r << "x" << s.s
                         << ": " << ck.first;
    run_both();  // deterministic algorithms: the same bits again
    EXPECT_EQ(download(ddx, nx), gx);
    EXPECT_EQ(std::memcmp(download(ddw, nw).data(), gw.data(), nw * 4), 0);
  }
}

TEST(ConvCuda, BadShapesAreRefusedWithTheSizeAndWithoutAGpuTheReason) {
  float dummy = 0;
  auto message = [&](const ConvShape& s) -> std::string {
    try {
      conv2d_cuda(s, &dummy, &dummy, nullptr, &dummy);
    } catch (const Error& e) {
      return (e.kind() == ErrorKind::Value ? "ValueError: " : "other: ") + std::string(e.what());
    }
    return "no error";
  };
  EXPECT_EQ(message(shape(2, 6, 8, 8, 4, 3, 0, 1, 1, 4, false)),
            "ValueError: conv2d: input channels (6) and output channels (4) must be divisible by groups (4)");
  EXPECT_EQ(message(shape(2, 3, 4, 4, 4, 7, 1, 1, 1, 1, false)),
            "ValueError: conv2d: the kernel (7x7, dilation 1x1) is larger than the padded input (6x6)");
  EXPECT_EQ(message(shape(0, 3, 4, 4, 4, 3, 1, 1, 1, 1, false)), "ValueError: conv2d: batch must be positive, got 0");
  EXPECT_NE(message(shape(2, 3, 8, 8, 4, 3, 1, 0, 1, 1, false)).find("ValueError: conv2d: stride and dilation"),
            std::string::npos);
  if (backend().usable) GTEST_SKIP() << "a GPU is usable here";
  EXPECT_EQ(message(shape(2, 3, 8, 8, 4, 3, 1, 1, 1, 1, false)), "other: no usable GPU: " + backend().why);
}

}  // namespace
}  // namespace pj::cuda
