// Batch norm, pooling and softmax on the GPU (kernels/cuda/nn_cuda.h) against float64 references of
// the meaning pijit's CPU kernels give them: batch statistics and MindSpore's momentum for the
// running ones, the backward's three gradients, max pooling that propagates NaN and sends the
// gradient to each window's maximum, average pooling with its padding counted, softmax and
// log_softmax per row. Everywhere: bad sizes are refused with a ValueError; without a GPU, the reason.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "common/check.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/driver.h"
#include "tests/cpp/cuda_test_util.h"
#include "kernels/cuda/nn_cuda.h"

namespace pj::cuda {
namespace {

using testing::on_device;
using testing::uniform;

struct Dev {  // a host vector's copy on the device
  DeviceBuffer b;
  explicit Dev(const std::vector<float>& v) : b(v.size() * 4) { b.upload(v.data(), v.size() * 4); }
  explicit Dev(size_t n) : b(n * 4) {}
  float* p() const { return static_cast<float*>(b.get()); }
  std::vector<float> host(size_t n) const {
    synchronize();
    std::vector<float> v(n);
    b.download(v.data(), n * 4);
    return v;
  }
};

// Counts the values off their reference by more than tol * (1 + |ref|); the first in words.
struct Near {
  int64_t bad = 0;
  std::string first;
  void check(const char* what, size_t i, float got, double ref, double tol) {
    const bool ok = std::isnan(ref) ? std::isnan(got) : std::fabs(got - ref) <= tol * (1 + std::fabs(ref));
    if (!ok && bad++ == 0) first = std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(got) +
                                   ", float64 " + std::to_string(ref);
  }
};

TEST(NnCuda, BatchNormTrainingInferenceAndBackwardAgreeWithFloat64) {
  if (!backend().usable) GTEST_SKIP() << "no usable GPU: " << backend().why;
  const BatchNormShape s{4, 16, 7, 9, 1e-5};
  const size_t nx = s.n * s.c * s.h * s.w, hw = s.h * s.w, m = s.n * hw;
  const std::vector<float> x = uniform(nx, 1, -2.f, 3.f), dy = uniform(nx, 2), gamma = uniform(s.c, 3, 0.5f, 1.5f),
                           beta = uniform(s.c, 4), rm0 = uniform(s.c, 5), rv0 = uniform(s.c, 6, 0.5f, 2.f);
  const double momentum = 0.9;
  Dev dx_in(x), ddy(dy), dg(gamma), db(beta), drm(rm0), drv(rv0), dyo(nx), dmean(s.c), dinv(s.c), ddx(nx), ddg(s.c),
      ddb(s.c), dinf(nx);
  batch_norm_train_cuda(s, dx_in.p(), dg.p(), db.p(), momentum, drm.p(), drv.p(), dyo.p(), dmean.p(), dinv.p());
  batch_norm_backward_cuda(s, dx_in.p(), ddy.p(), dg.p(), dmean.p(), dinv.p(), ddx.p(), ddg.p(), ddb.p());
  batch_norm_infer_cuda(s, dx_in.p(), dg.p(), db.p(), drm.p(), drv.p(), dinf.p());
  const std::vector<float> y = dyo.host(nx), rm = drm.host(s.c), rv = drv.host(s.c), mean = dmean.host(s.c),
                           inv = dinv.host(s.c), gx = ddx.host(nx), gg = ddg.host(s.c), gb = ddb.host(s.c),
                           yi = dinf.host(nx);
  Near near;
  for (int64_t c = 0; c < s.c; ++c) {
    auto at = [&](int64_t n, size_t i) { return (n * s.c + c) * hw + i; };
    double mu = 0, var = 0, sdy = 0, sdyx = 0;
    for (int64_t n = 0; n < s.n; ++n)
      for (size_t i = 0; i < hw; ++i) mu += x[at(n, i)];
    mu /= m;
    for (int64_t n = 0; n < s.n; ++n)
      for (size_t i = 0; i < hw; ++i) var += (x[at(n, i)] - mu) * (x[at(n, i)] - mu);
    var /= m;
    const double invstd = 1 / std::sqrt(var + s.eps);
    for (int64_t n = 0; n < s.n; ++n)
      for (size_t i = 0; i < hw; ++i) {
        const double xhat = (x[at(n, i)] - mu) * invstd;
        near.check("y", at(n, i), y[at(n, i)], xhat * gamma[c] + beta[c], 1e-5);
        sdy += dy[at(n, i)], sdyx += dy[at(n, i)] * xhat;
      }
    near.check("save_mean", c, mean[c], mu, 1e-5);
    near.check("save_invstd", c, inv[c], invstd, 1e-4);
    near.check("running_mean", c, rm[c], momentum * rm0[c] + (1 - momentum) * mu, 1e-5);
    near.check("running_var", c, rv[c], momentum * rv0[c] + (1 - momentum) * var * m / (m - 1), 1e-5);
    near.check("dgamma", c, gg[c], sdyx, 1e-4);
    near.check("dbeta", c, gb[c], sdy, 1e-4);
    const double rmn = momentum * rm0[c] + (1 - momentum) * mu, rvn = momentum * rv0[c] + (1 - momentum) * var * m / (m - 1);
    for (int64_t n = 0; n < s.n; ++n)
      for (size_t i = 0; i < hw; ++i) {
        const double xhat = (x[at(n, i)] - mu) * invstd;
        near.check("dx", at(n, i), gx[at(n, i)], gamma[c] * invstd / m * (m * dy[at(n, i)] - sdy - xhat * sdyx), 1e-4);
        near.check("y (inference)", at(n, i), yi[at(n, i)],
                   (x[at(n, i)] - rmn) / std::sqrt(rvn + s.eps) * gamma[c] + beta[c], 1e-5);
      }
  }
  EXPECT_EQ(near.bad, 0) << near.first;
}

TEST(NnCuda, PoolingForwardAndBackwardAsPytorchDefinesThem) {
  if (!backend().usable) GTEST_SKIP() << "no usable GPU: " << backend().why;
  struct Case {
    PoolShape s;
    const char* name;
  };
  auto pool = [](int64_t k, int64_t pad, int64_t stride, bool max) {
    PoolShape s;
    s.n = 2, s.c = 3, s.h = 9, s.w = 8, s.kh = s.kw = k, s.pad_h = s.pad_w = pad, s.stride_h = s.stride_w = stride;
    s.max = max;
    return s;
  };
  const Case cases[] = {{pool(2, 0, 2, true), "max 2x2"}, {pool(3, 1, 2, true), "max 3x3 pad 1"},
                        {pool(2, 0, 2, false), "avg 2x2"}, {pool(3, 1, 1, false), "avg 3x3 pad 1"}};
  unsigned seed = 20;
  for (const Case& k : cases) {
    const PoolShape& s = k.s;
    const int64_t oh = s.out_h(), ow = s.out_w();
    const size_t nx = s.n * s.c * s.h * s.w, ny = s.n * s.c * oh * ow;
    std::vector<float> x = uniform(nx, seed++);  // distinct values: one maximum per window
    if (s.max) x[5] = NAN;                       // window (0, 0, 0, ...) holding x[0][0][0][5]
    const std::vector<float> dy = uniform(ny, seed++);
    Dev dxin(x), dyo(ny), ddy(dy), ddx(nx);
    pool2d_cuda(s, dxin.p(), dyo.p());
    pool2d_backward_cuda(s, dxin.p(), dyo.p(), ddy.p(), ddx.p());
    const std::vector<float> y = dyo.host(ny), gx = ddx.host(nx);
    std::vector<double> rgx(nx, 0.0);
    std::vector<bool> in_nan_window(nx, false);  // where a window's maximum is NaN, dx is the device's
    Near near;
    for (int64_t p = 0; p < s.n * s.c; ++p)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double best = -INFINITY, sum = 0;
          int64_t arg = -1;
          for (int64_t r = 0; r < s.kh; ++r)
            for (int64_t q = 0; q < s.kw; ++q) {
              const int64_t hi = i * s.stride_h - s.pad_h + r, wi = j * s.stride_w - s.pad_w + q;
              if (hi < 0 || hi >= s.h || wi < 0 || wi >= s.w) continue;
              const int64_t at = (p * s.h + hi) * s.w + wi;
              sum += x[at];
              if (std::isnan(best)) continue;
              if (std::isnan(x[at]) || x[at] > best) best = x[at], arg = at;
            }
          const int64_t o = (p * oh + i) * ow + j;
          const double ref = s.max ? best : sum / (s.kh * s.kw);
          near.check(k.name, o, y[o], ref, 1e-6);
          if (s.max) {
            if (!std::isnan(best)) rgx[arg] += dy[o];
            else
              for (int64_t r = 0; r < s.kh; ++r)
                for (int64_t q = 0; q < s.kw; ++q) {
                  const int64_t hi = i * s.stride_h - s.pad_h + r, wi = j * s.stride_w - s.pad_w + q;
                  if (hi >= 0 && hi < s.h && wi >= 0 && wi < s.w) in_nan_window[(p * s.h + hi) * s.w + wi] = true;
                }
          } else {
            for (int64_t r = 0; r < s.kh; ++r)
              for (int64_t q = 0; q < s.kw; ++q) {
                const int64_t hi = i * s.stride_h - s.pad_h + r, wi = j * s.stride_w - s.pad_w + q;
                if (hi >= 0 && hi < s.h && wi >= 0 && wi < s.w) rgx[(p * s.h + hi) * s.w + wi] += dy[o] / (s.kh * s.kw);
              }
          }
        }
    for (size_t i = 0; i < nx; ++i)
      if (!in_nan_window[i]) near.check("dx", i, gx[i], rgx[i], 1e-5);
    EXPECT_EQ(near.bad, 0) << k.name << ": " << near.first;
  }
}

TEST(NnCuda, SoftmaxAndLogSoftmaxPerRow) {
  if (!backend().usable) GTEST_SKIP() << "no usable GPU: " << backend().why;
  const int64_t rows = 33, cols = 1000;
  std::vector<float> x = uniform(rows * cols, 30, -20.f, 20.f);
  x[7] = 88.f;  // exp would overflow without the row's maximum taken out
  Dev dx(x), dy(rows * cols), dl(rows * cols);
  softmax_cuda(rows, cols, false, dx.p(), dy.p());
  softmax_cuda(rows, cols, true, dx.p(), dl.p());
  const std::vector<float> y = dy.host(rows * cols), l = dl.host(rows * cols);
  Near near;
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, z = 0;
    for (int64_t c = 0; c < cols; ++c) mx = std::max<double>(mx, x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) z += std::exp(x[r * cols + c] - mx);
    for (int64_t c = 0; c < cols; ++c) {
      const double lref = x[r * cols + c] - mx - std::log(z);
      near.check("softmax", r * cols + c, y[r * cols + c], std::exp(lref), 1e-5);
      near.check("log_softmax", r * cols + c, l[r * cols + c], lref, 1e-5);
    }
  }
  EXPECT_EQ(near.bad, 0) << near.first;
}

TEST(NnCuda, BadSizesAreRefusedAndWithoutAGpuTheReason) {
  float f = 0;
  auto message = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const Error& e) {
      return (e.kind() == ErrorKind::Value ? "ValueError: " : "RuntimeError: ") + std::string(e.what());
    }
    return "no error";
  };
  PoolShape big;
  big.n = 1, big.c = 1, big.h = 2, big.w = 2, big.kh = big.kw = 3;
  EXPECT_EQ(message([&] { pool2d_cuda(big, &f, &f); }),
            "ValueError: pool2d: the window (3x3) is larger than the padded input (2x2)");
  EXPECT_EQ(message([&] { softmax_cuda(0, 4, false, &f, &f); }),
            "ValueError: softmax: every size must be positive (and fit in 32 bits), got 0");
  EXPECT_EQ(message([&] { batch_norm_train_cuda({2, 3, 1, 1, 1e-5}, &f, &f, &f, 1.5, &f, &f, &f, &f, &f); }),
            "ValueError: batch_norm: momentum must be in [0, 1], got 1.5");
  if (backend().usable) GTEST_SKIP() << "a GPU is usable here";
  EXPECT_EQ(message([&] { softmax_cuda(2, 4, false, &f, &f); }), "RuntimeError: no usable GPU: " + backend().why);
  EXPECT_EQ(message([&] { batch_norm_infer_cuda({2, 3, 1, 1, 1e-5}, &f, &f, &f, &f, &f, &f); }),
            "RuntimeError: no usable GPU: " + backend().why);
}

}  // namespace
}  // namespace pj::cuda
