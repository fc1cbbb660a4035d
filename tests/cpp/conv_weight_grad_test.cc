// conv2d_weight_grad (conv2d's weight gradient) against a direct reference in double, over strides,
// asymmetric padding, dilation, groups (depthwise included), channels in 16s (oneDNN's blocked
// layouts) and not, batch sizes 1 to 16, float32 (oneDNN) and float64 (the loop), non-contiguous
// inputs and an empty batch; the op's shape rules with their messages.
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/conv.h"
#include "kernels/copy.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

struct Case {
  int64_t n, c, h, w, oc, kh, kw, sh, sw, pt, pb, pl, pr, dh, dw, groups;
};

std::string describe(const Case& k) {
  char buf[256];
  snprintf(buf, sizeof buf, "x(%ld,%ld,%ld,%ld) oc=%ld k=(%ld,%ld) s=(%ld,%ld) p=(%ld,%ld,%ld,%ld) d=(%ld,%ld) g=%ld",
           k.n, k.c, k.h, k.w, k.oc, k.kh, k.kw, k.sh, k.sw, k.pt, k.pb, k.pl, k.pr, k.dh, k.dw, k.groups);
  return buf;
}

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t lo, int64_t hi, int64_t d) {
  return (in + lo + hi - d * (k - 1) - 1) / s + 1;
}

Attrs attrs_of(const Case& k) {
  return Attrs{{"stride", IntList{k.sh, k.sw}},
               {"padding", IntList{k.pt, k.pb, k.pl, k.pr}},
               {"dilation", IntList{k.dh, k.dw}},
               {"groups", int64_t(k.groups)},
               {"kernel_size", IntList{k.kh, k.kw}}};
}

// dw[o, i, ky, kx] = sum over n, y, x of dout[n, o, y, x] * input[n, g*icg + i, iy, ix], in double;
// `scale` gets the sum of the terms' magnitudes (a bound on float rounding).
std::vector<double> reference(const Tensor& x, const Tensor& d, const Case& k, std::vector<double>* scale) {
  const std::vector<double> xv = testing::values(x), dv = testing::values(d);
  const int64_t oh = d.dim(2), ow = d.dim(3), icg = k.c / k.groups, ocg = k.oc / k.groups;
  std::vector<double> r;
  for (int64_t o = 0; o < k.oc; ++o)
    for (int64_t i = 0; i < icg; ++i)
      for (int64_t ky = 0; ky < k.kh; ++ky)
        for (int64_t kx = 0; kx < k.kw; ++kx) {
          double s = 0, sc = 0;
          const int64_t c = (o / ocg) * icg + i;
          for (int64_t n = 0; n < k.n; ++n)
            for (int64_t y = 0; y < oh; ++y)
              for (int64_t xo = 0; xo < ow; ++xo) {
                const int64_t iy = y * k.sh - k.pt + ky * k.dh, ix = xo * k.sw - k.pl + kx * k.dw;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                const double t = dv[((n * k.oc + o) * oh + y) * ow + xo] * xv[((n * k.c + c) * k.h + iy) * k.w + ix];
                s += t;
                sc += std::abs(t);
              }
          r.push_back(s);
          scale->push_back(sc);
        }
  return r;
}

std::vector<Case> cases() {
  return {
      {1, 3, 7, 9, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {3, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 5, 8, 8, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
      {2, 17, 9, 7, 3, 5, 3, 2, 1, 2, 1, 0, 3, 1, 2, 1},      // asymmetric padding, dilation
      {2, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16},  // depthwise
      {2, 6, 9, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2, 2, 2},       // groups 2, dilation 2
      {3, 17, 5, 6, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},     // 1x1
      {1, 16, 15, 15, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4},   // groups 4, stride 2
      {3, 5, 11, 4, 7, 2, 4, 3, 1, 0, 2, 3, 0, 1, 1, 1},      // stride 3, rows the stride drops
      {1, 2, 3, 3, 2, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1},       // kernel == padded input
      {8, 3, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    // the CNN bench's layers
      {5, 16, 16, 16, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {16, 32, 8, 8, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {0, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},       // empty batch: zeros
  };
}

TEST(Conv2dWeightGrad, MatchesReference) {
  unsigned seed = 1;
  for (const Case& k : cases())
    for (DType t : {DType::Float32, DType::Float64}) {
      const int64_t oh = out_size(k.h, k.kh, k.sh, k.pt, k.pb, k.dh), ow = out_size(k.w, k.kw, k.sw, k.pl, k.pr, k.dw);
      Tensor x = testing::random({k.n, k.c, k.h, k.w}, t, seed++);
      Tensor d = testing::random({k.n, k.oc, oh, ow}, t, seed++);
      std::vector<double> scale;
      const std::vector<double> want = reference(x, d, k, &scale);
      const double rtol = t == DType::Float32 ? 1e-5 : 1e-13;
      const std::string what = describe(k) + " " + dtype_name(t);
      for (bool strided : {false, true}) {
        const Tensors in = strided ? Tensors{testing::hw_swapped(x), testing::hw_swapped(d)} : Tensors{x, d};
        Tensor dw = call_op1("conv2d_weight_grad", in, attrs_of(k));
        ASSERT_EQ(dw.shape(), (Shape{k.oc, k.c / k.groups, k.kh, k.kw})) << what;
        Tensor prepared = Tensor::empty(dw.shape(), t);  // a graph's prepared kernel: the op's bits
        Conv2dParams p;
        p.stride[0] = k.sh, p.stride[1] = k.sw, p.pad[0] = k.pt, p.pad[1] = k.pb, p.pad[2] = k.pl, p.pad[3] = k.pr;
        p.dilation[0] = k.dh, p.dilation[1] = k.dw, p.groups = k.groups;
        conv2d_weight_grad_run(*conv2d_weight_grad_prepare(dw.shape(), x.shape(), d.shape(), p, t), prepared, in[0],
                               in[1]);
        ASSERT_EQ(testing::values(prepared), testing::values(dw)) << what << " prepared";
        for (int64_t i = 0; i < dw.numel(); ++i)
          ASSERT_LE(std::abs(dw.item_double(i) - want[i]), rtol * scale[i] + 1e-30)
              << what << (strided ? " strided" : "") << " element " << i;
      }
    }
}

// The plan's memory objects are one thread's at a time; the blocked buffers are each thread's own
// scratch slots (kernels/dnnl_context.h). Threads running the same geometry, and another geometry
// in between (the slots regrown), give the sequential bits.
TEST(Conv2dWeightGrad, ThreadsShareThePlanAndKeepTheirOwnBuffers) {
  const Case k{4, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, big{8, 16, 20, 20, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  Tensor x = testing::random({4, 16, 12, 12}, DType::Float32, 5), d = testing::random({4, 32, 12, 12}, DType::Float32, 6);
  Tensor bx = testing::random({8, 16, 20, 20}, DType::Float32, 7), bd = testing::random({8, 32, 20, 20}, DType::Float32, 8);
  const std::vector<double> want = testing::values(call_op1("conv2d_weight_grad", {x, d}, attrs_of(k)));
  const std::vector<double> want_big = testing::values(call_op1("conv2d_weight_grad", {bx, bd}, attrs_of(big)));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 30; ++i) {
        if (testing::values(call_op1("conv2d_weight_grad", {x, d}, attrs_of(k))) != want) ++wrong;
        if ((i + t) % 7 == 0 && testing::values(call_op1("conv2d_weight_grad", {bx, bd}, attrs_of(big))) != want_big)
          ++wrong;
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Conv2dWeightGrad, RaisesOnBadInput) {
  const Case k{2, 4, 6, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2};
  Tensor x = testing::random({2, 4, 6, 6}, DType::Float32, 1), d = testing::random({2, 8, 6, 6}, DType::Float32, 2);
  EXPECT_TRUE(testing::raises([&] { call_op1("conv2d_weight_grad", {x}, attrs_of(k)); }, ErrorKind::Type,
                              "conv2d_weight_grad() takes 2 tensor inputs but 1 were given"));
  EXPECT_TRUE(testing::raises([&] { call_op1("conv2d_weight_grad", {x, cast(d, DType::Float64)}, attrs_of(k)); },
                              ErrorKind::Type, "conv2d_weight_grad: dout dtype Float64 does not match input dtype Float32"));
  Tensor short_d = testing::random({2, 8, 5, 6}, DType::Float32, 3);
  EXPECT_TRUE(testing::raises([&] { call_op1("conv2d_weight_grad", {x, short_d}, attrs_of(k)); }, ErrorKind::Value,
                              "conv2d_weight_grad: dout has shape (2, 8, 5, 6) but the convolution of an input of "
                              "shape (2, 4, 6, 6) gives (2, 8, 6, 6)"));
  Attrs no_kernel = attrs_of(k);
  no_kernel.set("kernel_size", AttrValue{});
  EXPECT_TRUE(testing::raises([&] { call_op1("conv2d_weight_grad", {x, d}, no_kernel); }, ErrorKind::Type,
                              "conv2d_weight_grad: 'kernel_size' (kH, kW) is required"));
  Attrs same = attrs_of(k);
  same.set("padding", std::string("same"));
  EXPECT_TRUE(testing::raises([&] { call_op1("conv2d_weight_grad", {x, d}, same); }, ErrorKind::Value,
                              "conv2d_weight_grad: padding must be explicit, got 'same'"));
  Attrs groups = attrs_of(k);
  groups.set("groups", int64_t(3));
  EXPECT_TRUE(testing::raises([&] { call_op1("conv2d_weight_grad", {x, d}, groups); }, ErrorKind::Value,
                              "conv2d_weight_grad: in_channels (4) and out_channels (8) must be divisible by groups (3)"));
}

}  // namespace
}  // namespace pj
