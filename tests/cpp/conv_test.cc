// conv2d and conv_transpose2d against plain direct-loop references in double: odd sizes, strides,
// asymmetric padding, dilation, groups (depthwise included), channel tails, batch 1 and 3, float32
// (oneDNN and the loop path) and float64, non-contiguous inputs, bias on and off; the 'same'
// padding rule; every user error with its exact text; and the reordered-weights cache (reuse on a
// repeated call, no stale result after an in-place change of the weights).
#include <array>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/conv.h"
#include "kernels/weight_cache.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

struct ConvCase {
  int64_t n, c, h, w, oc, kh, kw;
  int64_t sh, sw;
  int64_t pt, pb, pl, pr;
  int64_t dh, dw, groups;
  int64_t oph = 0, opw = 0;  // conv_transpose2d only
};

std::string describe(const ConvCase& k) {
  char buf[256];
  snprintf(buf, sizeof buf, "x(%ld,%ld,%ld,%ld) oc=%ld k=(%ld,%ld) s=(%ld,%ld) p=(%ld,%ld,%ld,%ld) d=(%ld,%ld) g=%ld op=(%ld,%ld)",
           k.n, k.c, k.h, k.w, k.oc, k.kh, k.kw, k.sh, k.sw, k.pt, k.pb, k.pl, k.pr, k.dh, k.dw, k.groups, k.oph, k.opw);
  return buf;
}

Attrs conv_attrs(const ConvCase& k, bool transpose) {
  Attrs a{{"stride", IntList{k.sh, k.sw}},
          {"padding", IntList{k.pt, k.pb, k.pl, k.pr}},
          {"dilation", IntList{k.dh, k.dw}},
          {"groups", int64_t(k.groups)}};
  if (transpose) a.set("output_padding", IntList{k.oph, k.opw});
  return a;
}

Conv2dParams params_of(const ConvCase& k) {
  Conv2dParams p;
  p.stride[0] = k.sh, p.stride[1] = k.sw;
  p.pad[0] = k.pt, p.pad[1] = k.pb, p.pad[2] = k.pl, p.pad[3] = k.pr;
  p.dilation[0] = k.dh, p.dilation[1] = k.dw;
  p.output_padding[0] = k.oph, p.output_padding[1] = k.opw;
  p.groups = k.groups;
  return p;
}

struct Ref {
  Shape shape;
  std::vector<double> value, scale;  // scale: sum of |terms|, bounds the rounding error
};

// Row-major values of a 4-D tensor, read as v(i, j, k, l).
struct Values4 {
  std::vector<double> v;
  int64_t d1, d2, d3;
  explicit Values4(const Tensor& t) : v(testing::values(t)), d1(t.dim(1)), d2(t.dim(2)), d3(t.dim(3)) {}
  double operator()(int64_t i, int64_t j, int64_t k, int64_t l) const { return v[((i * d1 + j) * d2 + k) * d3 + l]; }
};

Ref ref_conv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvCase& k) {
  const Values4 xv(x), wv(w);
  const int64_t oh = (k.h + k.pt + k.pb - k.dh * (k.kh - 1) - 1) / k.sh + 1;
  const int64_t ow = (k.w + k.pl + k.pr - k.dw * (k.kw - 1) - 1) / k.sw + 1;
  const int64_t icg = k.c / k.groups, ocg = k.oc / k.groups;
  Ref r;
  r.shape = {k.n, k.oc, oh, ow};
  r.value.assign(shape_numel(r.shape), 0);
  r.scale.assign(r.value.size(), 0);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.oc; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double s = bias ? bias->item_double(o) : 0, sc = std::abs(s);
          const int64_t g = o / ocg;
          for (int64_t i = 0; i < icg; ++i)
            for (int64_t ky = 0; ky < k.kh; ++ky)
              for (int64_t kx = 0; kx < k.kw; ++kx) {
                const int64_t iy = y * k.sh - k.pt + ky * k.dh, ix = xo * k.sw - k.pl + kx * k.dw;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                const double t = xv(n, g * icg + i, iy, ix) * wv(o, i, ky, kx);
                s += t;
                sc += std::abs(t);
              }
          const int64_t idx = testing::ravel({n, o, y, xo}, r.shape);
          r.value[idx] = s;
          r.scale[idx] = sc;
        }
  return r;
}

// Scatter form, straight from the definition of a transposed convolution.
Ref ref_conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvCase& k) {
  const Values4 xv(x), wv(w);
  const int64_t oh = (k.h - 1) * k.sh - k.pt - k.pb + k.dh * (k.kh - 1) + k.oph + 1;
  const int64_t ow = (k.w - 1) * k.sw - k.pl - k.pr + k.dw * (k.kw - 1) + k.opw + 1;
  const int64_t icg = k.c / k.groups, ocg = k.oc / k.groups;
  Ref r;
  r.shape = {k.n, k.oc, oh, ow};
  r.value.assign(shape_numel(r.shape), 0);
  r.scale.assign(r.value.size(), 0);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.oc; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          const int64_t idx = testing::ravel({n, o, y, xo}, r.shape);
          r.value[idx] = bias ? bias->item_double(o) : 0;
          r.scale[idx] = std::abs(r.value[idx]);
        }
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t c = 0; c < k.c; ++c)
      for (int64_t iy = 0; iy < k.h; ++iy)
        for (int64_t ix = 0; ix < k.w; ++ix)
          for (int64_t j = 0; j < ocg; ++j)
            for (int64_t ky = 0; ky < k.kh; ++ky)
              for (int64_t kx = 0; kx < k.kw; ++kx) {
                const int64_t y = iy * k.sh - k.pt + ky * k.dh, xo = ix * k.sw - k.pl + kx * k.dw;
                if (y < 0 || y >= oh || xo < 0 || xo >= ow) continue;
                const int64_t o = (c / icg) * ocg + j;
                const double t = xv(n, c, iy, ix) * wv(c, j, ky, kx);
                const int64_t idx = testing::ravel({n, o, y, xo}, r.shape);
                r.value[idx] += t;
                r.scale[idx] += std::abs(t);
              }
  return r;
}

::testing::AssertionResult matches(const Tensor& c, const Ref& r) {
  if (c.shape() != r.shape)
    return ::testing::AssertionFailure() << "shape " << shape_str(c.shape()) << " want " << shape_str(r.shape);
  const double rtol = c.dtype() == DType::Float32 ? 1e-5 : 1e-13;
  for (int64_t i = 0; i < c.numel(); ++i) {
    const double got = c.item_double(i), want = r.value[i];
    if (!(std::abs(got - want) <= rtol * r.scale[i] + 1e-30))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got << " want " << want;
  }
  return ::testing::AssertionSuccess();
}

std::vector<ConvCase> conv_cases() {
  return {
      {1, 3, 7, 9, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {3, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 5, 8, 8, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
      {2, 17, 9, 7, 3, 5, 3, 2, 1, 2, 1, 0, 3, 1, 2, 1},     // asymmetric padding, dilation
      {2, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16}, // depthwise
      {1, 5, 7, 9, 10, 3, 3, 2, 2, 1, 0, 1, 0, 1, 1, 5},     // depthwise, multiplier 2
      {2, 6, 9, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2, 2, 2},      // groups 2, dilation 2
      {3, 17, 5, 6, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},    // 1x1
      {1, 8, 7, 7, 8, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},      // 1x1, stride 2
      {1, 3, 12, 11, 4, 3, 3, 1, 1, 0, 0, 0, 0, 3, 2, 1},    // big dilation
      {1, 2, 3, 3, 2, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1},      // kernel == padded input
      {2, 32, 16, 16, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // blocked layouts
      {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 64}, // depthwise, blocked
      {1, 16, 15, 15, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4},  // groups 4, stride 2
      {3, 5, 11, 4, 7, 2, 4, 3, 1, 0, 2, 3, 0, 1, 1, 1},     // stride 3, even kernel
      {1, 3, 9, 9, 6, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},      // stem-like 7x7 stride 2
      {0, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},      // empty batch
  };
}

std::vector<ConvCase> transpose_cases() {
  return {
      {1, 3, 5, 7, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {2, 4, 5, 5, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 6, 4, 6, 4, 4, 3, 2, 3, 1, 2, 0, 1, 1, 1, 2, 0, 2},
      {3, 5, 3, 4, 5, 3, 3, 1, 1, 1, 1, 1, 1, 2, 2, 5},      // depthwise, dilation
      {1, 16, 7, 7, 32, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 1},    // blocked layouts
      {1, 17, 6, 5, 3, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 1},
      {2, 4, 5, 6, 4, 3, 3, 1, 1, 0, 0, 0, 0, 2, 2, 1, 1, 1},  // output_padding < dilation only
      {1, 32, 8, 8, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1},
      {0, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},      // empty batch
  };
}

void run_cases(bool transpose) {
  const char* op = transpose ? "conv_transpose2d" : "conv2d";
  unsigned seed = 1;
  for (const ConvCase& k : transpose ? transpose_cases() : conv_cases()) {
    for (DType t : {DType::Float32, DType::Float64}) {
      const Shape ws = transpose ? Shape{k.c, k.oc / k.groups, k.kh, k.kw} : Shape{k.oc, k.c / k.groups, k.kh, k.kw};
      Tensor x = testing::random({k.n, k.c, k.h, k.w}, t, seed++);
      Tensor w = testing::random(ws, t, seed++);
      Tensor b = testing::random({k.oc}, t, seed++);
      for (bool with_bias : {false, true}) {
        Ref r = transpose ? ref_conv_transpose2d(x, w, with_bias ? &b : nullptr, k)
                          : ref_conv2d(x, w, with_bias ? &b : nullptr, k);
        Tensors in = {x, w};
        if (with_bias) in.push_back(b);
        std::string what = std::string(op) + " " + describe(k) + " " + dtype_name(t) + (with_bias ? " bias" : "");
        const Tensor got = call_op1(op, in, conv_attrs(k, transpose));
        ASSERT_TRUE(matches(got, r)) << what;
        // A graph's prepared kernel (plan found once) gives the op's bits.
        Tensor prepared = Tensor::empty(r.shape, t);
        conv_run(*conv_prepare(r.shape, x.shape(), w.shape(), params_of(k), transpose, with_bias, t), prepared, x, w,
                 with_bias ? b : Tensor());
        ASSERT_EQ(testing::values(prepared), testing::values(got)) << what << " prepared";
        // A non-contiguous input.
        Tensors in2 = in;
        in2[0] = testing::hw_swapped(x);
        ASSERT_TRUE(x.numel() == 0 || !in2[0].is_contiguous());
        ASSERT_TRUE(matches(call_op1(op, in2, conv_attrs(k, transpose)), r)) << what << " transposed input";
        // The loop path (what float32 falls back to), against the same reference.
        Tensor out = Tensor::empty(r.shape, t);
        if (transpose) conv_transpose2d_loop_into(out, x, w, with_bias ? b : Tensor(), params_of(k));
        else conv2d_loop_into(out, x, w, with_bias ? b : Tensor(), params_of(k));
        ASSERT_TRUE(matches(out, r)) << what << " loop path";
      }
    }
  }
}

TEST(Conv2d, MatchesReference) { run_cases(false); }
TEST(ConvTranspose2d, MatchesReference) { run_cases(true); }

TEST(Conv2d, NonContiguousWeightAndOutput) {
  ConvCase k{2, 6, 8, 7, 8, 3, 3, 1, 2, 1, 0, 2, 1, 1, 1, 2};
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor x = testing::random({k.n, k.c, k.h, k.w}, t, 3), w = testing::random({8, 3, 3, 3}, t, 4);
    Ref r = ref_conv2d(x, w, nullptr, k);
    Tensor wt = testing::hw_swapped(w);
    EXPECT_TRUE(matches(call_op1("conv2d", {x, wt}, conv_attrs(k, false)), r)) << dtype_name(t);
    Tensor out = testing::hw_swapped(Tensor::zeros(r.shape, t));
    conv2d_into(out, testing::gapped(x), wt, Tensor(), params_of(k));
    EXPECT_TRUE(matches(out, r)) << dtype_name(t);
  }
}

TEST(Conv2d, EmptyInputs) {
  for (DType t : {DType::Float32, DType::Float64}) {
    // No input channels: every output is the bias.
    Tensor b = testing::random({3}, t, 1);
    Tensor y = call_op1("conv2d", {Tensor::zeros({2, 0, 4, 4}, t), Tensor::zeros({3, 0, 3, 3}, t), b},
                        {{"padding", int64_t(1)}});
    ASSERT_EQ(y.shape(), (Shape{2, 3, 4, 4}));
    for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(y.item_double(i), b.item_double((i / 16) % 3));
    Tensor yt = call_op1("conv_transpose2d", {Tensor::zeros({2, 0, 4, 4}, t), Tensor::zeros({0, 3, 3, 3}, t), b});
    ASSERT_EQ(yt.shape(), (Shape{2, 3, 6, 6}));
    for (int64_t i = 0; i < yt.numel(); ++i) ASSERT_EQ(yt.item_double(i), b.item_double((i / 36) % 3));
    // Zero rows, padded: the output rows see only padding.
    Tensor y2 = call_op1("conv2d", {testing::random({1, 2, 0, 3}, t, 2), testing::random({4, 2, 1, 1}, t, 3)},
                         {{"padding", IntList{1, 1, 0, 0}}});
    ASSERT_EQ(y2.shape(), (Shape{1, 4, 2, 3}));
    for (int64_t i = 0; i < y2.numel(); ++i) ASSERT_EQ(y2.item_double(i), 0);
  }
}

TEST(Conv2d, SamePadding) {
  EXPECT_EQ(conv_same_pads({7, 9}, {3, 3}, {1, 1}, {1, 1}), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv_same_pads({7, 7}, {3, 4}, {2, 2}, {1, 1}), (std::vector<int64_t>{1, 1, 1, 2}));
  EXPECT_EQ(conv_same_pads({8, 8}, {3, 3}, {2, 2}, {1, 1}), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(conv_same_pads({5, 5}, {1, 1}, {3, 3}, {1, 1}), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(conv_same_pads({10, 10}, {3, 3}, {1, 1}, {2, 3}), (std::vector<int64_t>{2, 2, 3, 3}));
  for (auto [h, w, s] : std::vector<std::array<int64_t, 3>>{{7, 9, 1}, {7, 8, 2}, {8, 8, 2}, {9, 5, 3}}) {
    Tensor x = testing::random({1, 3, h, w}, DType::Float64, 5), wt = testing::random({4, 3, 3, 4}, DType::Float64, 6);
    Tensor y = call_op1("conv2d", {x, wt}, {{"stride", IntList{s, s}}, {"padding", std::string("same")}});
    EXPECT_EQ(y.shape(), (Shape{1, 4, (h + s - 1) / s, (w + s - 1) / s}));
    std::vector<int64_t> p = conv_same_pads({h, w}, {3, 4}, {s, s}, {1, 1});
    ConvCase k{1, 3, h, w, 4, 3, 4, s, s, p[0], p[1], p[2], p[3], 1, 1, 1};
    EXPECT_TRUE(matches(y, ref_conv2d(x, wt, nullptr, k)));
    Tensor v = call_op1("conv2d", {x, wt}, {{"padding", std::string("valid")}});
    EXPECT_EQ(v.shape(), (Shape{1, 4, h - 2, w - 3}));
  }
}

TEST(Conv2d, AttributeForms) {
  Tensor x = testing::random({1, 2, 6, 6}, DType::Float64, 1), w = testing::random({3, 2, 3, 3}, DType::Float64, 2);
  ConvCase k{1, 2, 6, 6, 3, 3, 3, 2, 2, 1, 1, 2, 2, 1, 1, 1};
  Ref r = ref_conv2d(x, w, nullptr, k);
  EXPECT_TRUE(matches(call_op1("conv2d", {x, w}, {{"stride", int64_t(2)}, {"padding", IntList{1, 2}}}), r));
  EXPECT_TRUE(matches(call_op1("conv2d", {x, w}, conv_attrs(k, false)), r));
  // Every attribute omitted: stride 1, no padding, dilation 1, groups 1.
  EXPECT_EQ(call_op1("conv2d", {x, w}).shape(), (Shape{1, 3, 4, 4}));
}

TEST(Conv2d, Errors) {
  const DType f = DType::Float32;
  auto conv = [](Tensors in, Attrs a = {}) { return call_op1("conv2d", in, a); };
  Tensor x = Tensor::zeros({2, 3, 5, 5}, f);
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 4, 3, 3}, f)}), Value,
                  "conv2d: input has 3 channels but weight expects 4 (groups=1, weight shape (8, 4, 3, 3))");
  PJ_EXPECT_ERROR(conv({Tensor::zeros({2, 6, 5, 5}, f), Tensor::zeros({8, 2, 3, 3}, f)}, {{"groups", int64_t(2)}}),
                  Value, "conv2d: input has 6 channels but weight expects 4 (groups=2, weight shape (8, 2, 3, 3))");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 1, 3, 3}, f)}, {{"groups", int64_t(3)}}), Value,
                  "conv2d: out_channels (8) must be divisible by groups (3)");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 1, 3, 3}, f)}, {{"groups", int64_t(2)}}), Value,
                  "conv2d: in_channels (3) must be divisible by groups (2)");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 3, 3, 3}, f)}, {{"groups", int64_t(0)}}), Value,
                  "conv2d: groups must be positive, got 0");
  PJ_EXPECT_ERROR(conv({Tensor::zeros({1, 2, 3, 3}, f), Tensor::zeros({4, 2, 5, 5}, f)}), Value,
                  "conv2d: kernel size (5, 5) (dilated (5, 5)) is larger than the padded input (3, 3)");
  PJ_EXPECT_ERROR(conv({Tensor::zeros({1, 2, 7, 7}, f), Tensor::zeros({4, 2, 3, 3}, f)},
                       {{"dilation", IntList{4, 1}}, {"padding", IntList{1, 0, 0, 0}}}),
                  Value, "conv2d: kernel size (3, 3) (dilated (9, 3)) is larger than the padded input (8, 7)");
  PJ_EXPECT_ERROR(conv({Tensor::zeros({3, 5, 5}, f), Tensor::zeros({8, 3, 3, 3}, f)}), Value,
                  "conv2d: expected a 4-D input (N, C, H, W), got shape (3, 5, 5)");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 3, 3}, f)}), Value,
                  "conv2d: expected a 4-D weight (out_channels, in_channels/groups, kH, kW), got shape (8, 3, 3)");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 3, 3, 3}, f), Tensor::zeros({4}, f)}), Value,
                  "conv2d: expected a bias of shape (8,), got (4,)");
  PJ_EXPECT_ERROR(conv({Tensor::zeros({2, 3, 5, 5}, DType::Int32), Tensor::zeros({8, 3, 3, 3}, DType::Int32)}), Type,
                  "conv2d does not support dtype Int32");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 3, 3, 3}, DType::Float64)}), Type,
                  "conv2d: weight dtype Float64 does not match input dtype Float32");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 3, 3, 3}, f), Tensor::zeros({8}, DType::Int64)}), Type,
                  "conv2d: bias dtype Int64 does not match input dtype Float32");
  PJ_EXPECT_ERROR(conv({x}), Type, "conv2d() takes 2 or 3 tensor inputs (x, weight[, bias]) but 1 were given");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 3, 3, 3}, f)}, {{"stride", IntList{0, 1}}}), Value,
                  "conv2d: stride must be positive, got (0, 1)");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 3, 3, 3}, f)}, {{"dilation", IntList{1, 2, 3}}}), Value,
                  "conv2d: 'dilation' must have 2 elements, got 3");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 3, 3, 3}, f)}, {{"padding", IntList{1, -1, 0, 0}}}), Value,
                  "conv2d: padding must be non-negative, got (1, -1, 0, 0)");
  PJ_EXPECT_ERROR(conv({x, Tensor::zeros({8, 3, 3, 3}, f)}, {{"padding", std::string("full")}}), Value,
                  "conv2d: padding must be 'same', 'valid' or ints, got 'full'");
}

TEST(ConvTranspose2d, Errors) {
  const DType f = DType::Float64;
  auto convt = [](Tensors in, Attrs a = {}) { return call_op1("conv_transpose2d", in, a); };
  Tensor x = Tensor::zeros({2, 4, 5, 5}, f);
  PJ_EXPECT_ERROR(convt({x, Tensor::zeros({3, 8, 3, 3}, f)}), Value,
                  "conv_transpose2d: input has 4 channels but weight expects 3 (groups=1, weight shape (3, 8, 3, 3))");
  PJ_EXPECT_ERROR(convt({x, Tensor::zeros({4, 8, 3, 3}, f)}, {{"groups", int64_t(3)}}), Value,
                  "conv_transpose2d: in_channels (4) must be divisible by groups (3)");
  PJ_EXPECT_ERROR(convt({x, Tensor::zeros({4, 8, 3, 3}, f)}, {{"stride", IntList{2, 2}}, {"output_padding", IntList{2, 0}}}),
                  Value,
                  "conv_transpose2d: output_padding must be non-negative and smaller than either stride or dilation, "
                  "got output_padding (2, 0), stride (2, 2), dilation (1, 1)");
  PJ_EXPECT_ERROR(convt({Tensor::zeros({1, 4, 2, 2}, f), Tensor::zeros({4, 8, 3, 3}, f)}, {{"padding", IntList{2, 2, 0, 0}}}),
                  Value,
                  "conv_transpose2d: calculated output size (0, 4) is too small (input (2, 2), kernel (3, 3), "
                  "stride (1, 1), padding (2, 2, 0, 0))");
  PJ_EXPECT_ERROR(convt({x, Tensor::zeros({4, 8, 3, 3}, f), Tensor::zeros({4}, f)}), Value,
                  "conv_transpose2d: expected a bias of shape (8,), got (4,)");
  PJ_EXPECT_ERROR(convt({x, Tensor::zeros({4, 8, 3}, f)}), Value,
                  "conv_transpose2d: expected a 4-D weight (in_channels, out_channels/groups, kH, kW), got shape (4, 8, 3)");
  PJ_EXPECT_ERROR(convt({Tensor::zeros({2, 4, 5, 5}, DType::Int64), Tensor::zeros({4, 8, 3, 3}, DType::Int64)}), Type,
                  "conv_transpose2d does not support dtype Int64");
  PJ_EXPECT_ERROR(convt({x, Tensor::zeros({4, 8, 3, 3}, f)}, {{"padding", std::string("same")}}), Value,
                  "conv_transpose2d: padding must be ints, got 'same'");
}

// The reordered copy of the weights is reused by a repeated call, and an in-place change of the
// weights is seen by the next call (never a stale copy).
TEST(Conv2d, ReorderedWeightsAreCachedAndNeverStale) {
  ConvCase k{2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  Tensor x = testing::random({k.n, k.c, k.h, k.w}, DType::Float32, 11);
  Tensor w = testing::random({32, 16, 3, 3}, DType::Float32, 12);
  const Attrs a = conv_attrs(k, false);
  WeightCacheStats s0 = weight_cache_stats();
  Tensor y1 = call_op1("conv2d", {x, w}, a);
  WeightCacheStats s1 = weight_cache_stats();
  if (conv_last_impl().empty() || s1.reorders == s0.reorders)
    GTEST_SKIP() << "oneDNN reads plain weights on this machine (impl '" << conv_last_impl()
                 << "'): nothing to cache";
  EXPECT_EQ(s1.reorders, s0.reorders + 1);
  EXPECT_TRUE(matches(y1, ref_conv2d(x, w, nullptr, k)));
  Tensor y2 = call_op1("conv2d", {x, w}, a);
  WeightCacheStats s2 = weight_cache_stats();
  EXPECT_EQ(s2.reorders, s1.reorders);
  EXPECT_EQ(s2.hits, s1.hits + 1);
  EXPECT_EQ(testing::values(y1), testing::values(y2));
  // A different view of the same storage (same bytes) also hits.
  Tensor wv = w.as_strided(w.shape(), w.strides(), w.offset());
  call_op1("conv2d", {x, wv}, a);
  EXPECT_EQ(weight_cache_stats().hits, s2.hits + 1);
  // Change one weight in place: the next call must see it.
  testing::set_item(w, 100, 3.25);
  Tensor y3 = call_op1("conv2d", {x, w}, a);
  WeightCacheStats s3 = weight_cache_stats();
  EXPECT_EQ(s3.reorders, s2.reorders + 1);
  EXPECT_TRUE(matches(y3, ref_conv2d(x, w, nullptr, k)));
  EXPECT_NE(testing::values(y3), testing::values(y1));
  // And the new copy is reused again.
  call_op1("conv2d", {x, w}, a);
  EXPECT_EQ(weight_cache_stats().hits, s3.hits + 1);
  weight_cache_clear();
  EXPECT_EQ(weight_cache_stats().entries, 0);
  // The copy of weights that no longer exist is dropped when the next one is made.
  {
    Tensor w1 = testing::random({32, 16, 3, 3}, DType::Float32, 13);
    call_op1("conv2d", {x, w1}, a);
    EXPECT_EQ(weight_cache_stats().entries, 1);
  }
  call_op1("conv2d", {x, w}, a);
  EXPECT_EQ(weight_cache_stats().entries, 1);
}

// oneDNN primitives are cached and shared: one made on the main thread runs on others, several at
// once (kernels/dnnl_context.h: user-managed scratchpads). Each thread's results are the main
// thread's, bit for bit.
TEST(Conv2d, SharedPrimitivesRunOnOtherThreadsAndConcurrently) {
  ConvCase k{2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  Tensor x = testing::random({k.n, k.c, k.h, k.w}, DType::Float32, 5);
  Tensor w = testing::random({32, 16, 3, 3}, DType::Float32, 6);
  const std::vector<double> want = testing::values(call_op1("conv2d", {x, w}, conv_attrs(k, false)));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (testing::values(call_op1("conv2d", {x, w}, conv_attrs(k, false))) != want) ++wrong;
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace pj
