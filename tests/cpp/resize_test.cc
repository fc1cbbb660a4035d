// interpolate and pad against plain references written from PyTorch's definitions, plus a few
// results copied from PyTorch itself: nearest and bilinear (align_corners on and off, explicit
// scale factors) up and down, odd sizes, every dtype nearest and pad accept, non-contiguous
// inputs, every pad mode with positive, negative (cropping) and mixed pads over several dims; and
// every error with its exact text.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/resize.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

// x with the same values stored with its last two dims swapped in memory.
Tensor transposed_layout(const Tensor& x) {
  const int nd = x.ndim();
  Shape s = x.shape();
  std::swap(s[nd - 1], s[nd - 2]);
  Tensor b = Tensor::empty(s, x.dtype());
  Shape st = b.strides();
  std::swap(st[nd - 1], st[nd - 2]);
  Tensor v = b.as_strided(x.shape(), st, 0);
  copy_into(v, x);
  return v;
}

::testing::AssertionResult close(const Tensor& t, const Shape& shape, const std::vector<double>& want, double rtol) {
  if (t.shape() != shape)
    return ::testing::AssertionFailure() << "shape " << shape_str(t.shape()) << " want " << shape_str(shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double got = t.item_double(i);
    if (!(std::abs(got - want[i]) <= rtol * (std::abs(want[i]) + 4)))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got << " want " << want[i];
  }
  return ::testing::AssertionSuccess();
}

// ---- interpolate -------------------------------------------------------------------------------

// PyTorch's nearest source index (float math, as in UpSample.h).
int64_t ref_nearest(int64_t o, int64_t in, int64_t out, double scale) {
  if (out == in) return o;
  if (out == 2 * in) return o / 2;
  const float s = scale > 0 ? static_cast<float>(1.0 / scale) : static_cast<float>(in) / static_cast<float>(out);
  return std::min<int64_t>(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
}

// Source coordinate of bilinear interpolation, in double.
void ref_linear(int64_t o, int64_t in, int64_t out, bool align, double scale, int64_t* i0, int64_t* i1, double* l1) {
  double src;
  if (align) src = out > 1 ? o * static_cast<double>(in - 1) / (out - 1) : 0;
  else src = std::max(((o + 0.5) * (scale > 0 ? 1 / scale : static_cast<double>(in) / out)) - 0.5, 0.0);
  *i0 = std::min<int64_t>(static_cast<int64_t>(std::floor(src)), in - 1);
  *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
  *l1 = std::min(std::max(src - *i0, 0.0), 1.0);
}

std::vector<double> ref_interpolate(const Tensor& x, int64_t oh, int64_t ow, bool bilinear, bool align,
                                    const double* scales) {
  std::vector<double> r;
  const int64_t h = x.dim(2), w = x.dim(3);
  for (int64_t n = 0; n < x.dim(0); ++n)
    for (int64_t c = 0; c < x.dim(1); ++c)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          if (!bilinear) {
            r.push_back(testing::at(x, {n, c, ref_nearest(y, h, oh, scales ? scales[0] : 0),
                                        ref_nearest(xo, w, ow, scales ? scales[1] : 0)}));
            continue;
          }
          int64_t y0, y1, x0, x1;
          double ly, lx;
          ref_linear(y, h, oh, align, scales ? scales[0] : 0, &y0, &y1, &ly);
          ref_linear(xo, w, ow, align, scales ? scales[1] : 0, &x0, &x1, &lx);
          auto v = [&](int64_t a, int64_t b) { return testing::at(x, {n, c, a, b}); };
          r.push_back((1 - ly) * ((1 - lx) * v(y0, x0) + lx * v(y0, x1)) + ly * ((1 - lx) * v(y1, x0) + lx * v(y1, x1)));
        }
  return r;
}

TEST(Interpolate, KnownPyTorchResults) {
  Tensor x3 = testing::from_doubles({0, 1, 2}, {1, 1, 1, 3}, DType::Float32);
  Tensor y = call_op1("interpolate", {x3}, {{"size", IntList{1, 5}}});
  EXPECT_EQ(testing::values(y), (std::vector<double>{0, 0, 1, 1, 2}));
  Tensor x5 = testing::from_doubles({0, 1, 2, 3, 4}, {1, 1, 1, 5}, DType::Int64);
  EXPECT_EQ(testing::values(call_op1("interpolate", {x5}, {{"size", IntList{1, 3}}})), (std::vector<double>{0, 1, 3}));
  Tensor x2 = testing::from_doubles({0, 1}, {1, 1, 1, 2}, DType::Float64);
  EXPECT_EQ(testing::values(call_op1("interpolate", {x2}, {{"size", IntList{1, 4}}, {"mode", std::string("bilinear")}})),
            (std::vector<double>{0, 0.25, 0.75, 1}));
  Tensor ya = call_op1("interpolate", {x2}, {{"size", IntList{1, 4}}, {"mode", std::string("bilinear")}, {"align_corners", true}});
  EXPECT_TRUE(close(ya, {1, 1, 1, 4}, {0, 1.0 / 3, 2.0 / 3, 1}, 1e-15));
  // scale_factor 1.5 on 5 columns: PyTorch's output size 7, sources floor(o / 1.5).
  Tensor ys = call_op1("interpolate", {x5}, {{"size", IntList{1, 7}}, {"scale_h", 1.0}, {"scale_w", 1.5}});
  EXPECT_EQ(testing::values(ys), (std::vector<double>{0, 0, 1, 2, 2, 3, 4}));
  EXPECT_EQ(testing::values(call_op1("interpolate", {x5}, {{"size", IntList{1, 7}}})),
            (std::vector<double>{0, 0, 1, 2, 2, 3, 4}));
}

TEST(Interpolate, MatchesReference) {
  struct Case { int64_t n, c, h, w, oh, ow; };
  const Case cs[] = {{1, 3, 7, 9, 14, 18}, {3, 5, 8, 8, 3, 5}, {2, 17, 5, 6, 5, 6},  {1, 2, 4, 4, 8, 8},
                     {1, 1, 1, 1, 3, 4},   {2, 3, 10, 3, 7, 11}, {1, 4, 9, 13, 1, 1}, {1, 2, 3, 5, 17, 2}};
  unsigned seed = 1;
  for (const Case& k : cs)
    for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool}) {
      Tensor x = testing::random({k.n, k.c, k.h, k.w}, t, seed++);
      const Shape shape{k.n, k.c, k.oh, k.ow};
      const std::string what = shape_str(x.shape()) + "->" + shape_str(shape) + " " + dtype_name(t);
      std::vector<double> want = ref_interpolate(x, k.oh, k.ow, false, false, nullptr);
      const Attrs a{{"size", IntList{k.oh, k.ow}}, {"mode", std::string("nearest")}};
      ASSERT_TRUE(close(call_op1("interpolate", {x}, a), shape, want, 0)) << what;
      ASSERT_TRUE(close(call_op1("interpolate", {transposed_layout(x)}, a), shape, want, 0)) << what;
      if (!is_floating(t)) continue;
      // float32 source coordinates (as PyTorch computes them) are off by a few ulp of up to ~20,
      // which moves the weights by ~2e-6 and the result by that times a difference of values.
      const double rtol = t == DType::Float32 ? 5e-6 : 1e-14;
      for (bool align : {false, true}) {
        want = ref_interpolate(x, k.oh, k.ow, true, align, nullptr);
        Attrs b{{"size", IntList{k.oh, k.ow}}, {"mode", std::string("bilinear")}, {"align_corners", align}};
        ASSERT_TRUE(close(call_op1("interpolate", {x}, b), shape, want, rtol)) << what << " align " << align;
        ASSERT_TRUE(close(call_op1("interpolate", {transposed_layout(x)}, b), shape, want, rtol)) << what;
      }
      // Explicit scale factors (what PyTorch uses when given scale_factor).
      const double scales[2] = {static_cast<double>(k.oh) / k.h * 1.1, static_cast<double>(k.ow) / k.w * 0.9};
      want = ref_interpolate(x, k.oh, k.ow, true, false, scales);
      Attrs b{{"size", IntList{k.oh, k.ow}}, {"mode", std::string("bilinear")}, {"scale_h", scales[0]}, {"scale_w", scales[1]}};
      ASSERT_TRUE(close(call_op1("interpolate", {x}, b), shape, want, rtol)) << what << " scales";
    }
}

TEST(Interpolate, Errors) {
  Tensor x = Tensor::zeros({1, 2, 4, 4}, DType::Float32);
  PJ_EXPECT_ERROR(call_op1("interpolate", {x}, {{"size", IntList{4, 4}}, {"mode", std::string("bicubic")}}), Value,
                  "interpolate: mode must be 'nearest' or 'bilinear', got 'bicubic'");
  PJ_EXPECT_ERROR(call_op1("interpolate", {Tensor::zeros({1, 2, 4, 4}, DType::Int32)},
                           {{"size", IntList{4, 4}}, {"mode", std::string("bilinear")}}),
                  Type, "interpolate (bilinear) does not support dtype Int32");
  PJ_EXPECT_ERROR(call_op1("interpolate", {x}, {{"size", IntList{4, 4}}, {"align_corners", true}}), Value,
                  "interpolate: align_corners can only be set with mode 'bilinear'");
  PJ_EXPECT_ERROR(call_op1("interpolate", {x}, {{"size", IntList{0, 4}}}), Value,
                  "interpolate: size must be positive, got (0, 4)");
  PJ_EXPECT_ERROR(call_op1("interpolate", {x}, {{"size", IntList{2, 3, 4}}}), Value,
                  "interpolate: 'size' must have 2 elements for a 4-D input, got 3");
  PJ_EXPECT_ERROR(call_op1("interpolate", {x}, {}), Value, "interpolate: 'size' is required");
  PJ_EXPECT_ERROR(call_op1("interpolate", {Tensor::zeros({2, 4, 4}, DType::Float32)}, {{"size", IntList{4, 4}}}), Value,
                  "interpolate: expected a 4-D input (N, C, H, W), got shape (2, 4, 4)");
  PJ_EXPECT_ERROR(call_op1("interpolate", {Tensor::zeros({1, 2, 0, 4}, DType::Float32)}, {{"size", IntList{4, 4}}}),
                  Value, "interpolate: expected an input with non-empty H and W, got shape (1, 2, 0, 4)");
  PJ_EXPECT_ERROR(call_op1("interpolate", {x}, {{"size", IntList{4, 4}}, {"scale_h", -1.0}}), Value,
                  "interpolate: scale_h must be positive, got -1");
}

// ---- pad ---------------------------------------------------------------------------------------

// The PyTorch source index along one dim (-1: the constant), from the per-mode definitions.
int64_t ref_pad_index(int64_t j, int64_t in, int64_t lo, int64_t hi, const std::string& mode) {
  const int64_t x = j - lo;
  if (mode == "constant") return x >= 0 && x < in ? x : -1;
  if (mode == "reflect") return x < 0 ? -x : x >= in ? 2 * (in - 1) - x : x;
  if (mode == "replicate") return x < 0 ? 0 : x >= in ? in - 1 : x;
  // circular: the cropped input repeated.
  const int64_t c0 = std::max<int64_t>(-lo, 0), len = in - c0 - std::max<int64_t>(-hi, 0);
  const int64_t y = j - std::max<int64_t>(lo, 0);
  return c0 + ((y % len) + len) % len;
}

std::vector<double> ref_pad(const Tensor& x, const IntList& pads, const std::string& mode, double value, Shape* shape) {
  const int nd = x.ndim();
  std::vector<int64_t> lo(nd, 0), hi(nd, 0);
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    lo[nd - 1 - i] = pads[2 * i];
    hi[nd - 1 - i] = pads[2 * i + 1];
  }
  *shape = x.shape();
  for (int d = 0; d < nd; ++d) (*shape)[d] += lo[d] + hi[d];
  std::vector<double> r;
  for (int64_t i = 0; i < shape_numel(*shape); ++i) {
    std::vector<int64_t> idx = testing::unravel(i, *shape);
    bool inside = true;
    for (int d = 0; d < nd; ++d) {
      idx[d] = ref_pad_index(idx[d], x.dim(d), lo[d], hi[d], mode);
      inside &= idx[d] >= 0;
    }
    r.push_back(inside ? testing::at(x, idx) : value);
  }
  return r;
}

TEST(Pad, KnownPyTorchResults) {
  Tensor x = testing::from_doubles({0, 1, 2}, DType::Float32);
  auto pad = [&](const Tensor& t, IntList p, const char* mode, double v = 0) {
    return testing::values(call_op1("pad", {t}, {{"pads", p}, {"mode", std::string(mode)}, {"value", v}}));
  };
  EXPECT_EQ(pad(x, {2, 2}, "reflect"), (std::vector<double>{2, 1, 0, 1, 2, 1, 0}));
  EXPECT_EQ(pad(x, {2, 2}, "replicate"), (std::vector<double>{0, 0, 0, 1, 2, 2, 2}));
  EXPECT_EQ(pad(x, {2, 2}, "circular"), (std::vector<double>{1, 2, 0, 1, 2, 0, 1}));
  EXPECT_EQ(pad(x, {-1, 2}, "constant", 7), (std::vector<double>{1, 2, 7, 7}));
  Tensor x4 = testing::from_doubles({0, 1, 2, 3}, DType::Int64);
  EXPECT_EQ(pad(x4, {2, -1}, "reflect"), (std::vector<double>{2, 1, 0, 1, 2}));
  EXPECT_EQ(pad(x4, {1, -1}, "circular"), (std::vector<double>{2, 0, 1, 2}));
  EXPECT_EQ(pad(x4, {-2, -2}, "constant"), (std::vector<double>{}));
}

TEST(Pad, MatchesReference) {
  struct Case { Shape shape; IntList pads; };
  const std::vector<Case> cs = {
      {{1, 3, 7, 9}, {1, 1, 1, 1}},     {{1, 3, 7, 9}, {2, 0, 1, 3}},      {{3, 5, 4, 4}, {-1, 2, 3, -2}},
      {{2, 3, 5}, {1, 2, 2, 1, 1, 0}},  {{17}, {3, 4}},                    {{2, 3, 6, 5}, {0, 0, 2, 2}},
      {{2, 4, 5, 6}, {4, 5}},           {{1, 2, 3, 4}, {-1, -1, -1, -1}}, {{4, 4}, {3, 3, 3, 3}},
      {{2, 0, 3}, {1, 1}},              {{3, 3}, {}},                      {{2, 3, 4, 5}, {1, 1, 1, 1, 1, 1, 1, 1}}};
  unsigned seed = 1;
  for (const Case& k : cs)
    for (const std::string mode : {"constant", "reflect", "replicate", "circular"})
      for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool}) {
        // Skip pads a mode refuses (checked by Pad.Errors).
        bool ok = true;
        for (size_t i = 0; i < k.pads.size() / 2; ++i) {
          const int64_t in = k.shape[k.shape.size() - 1 - i], lo = k.pads[2 * i], hi = k.pads[2 * i + 1];
          if (mode == "reflect" && (lo >= in || hi >= in) && (lo > 0 || hi > 0)) ok = false;
          if (mode == "replicate" && in == 0 && in + lo + hi > 0) ok = false;
          if (mode == "circular" && (lo > in || hi > in)) ok = false;
        }
        if (!ok) continue;
        const double value = mode == "constant" ? -2.5 : 0;
        Tensor x = testing::random(k.shape, t, seed++);
        Shape shape;
        std::vector<double> want = ref_pad(x, k.pads, mode, value, &shape);
        if (t == DType::Int32 || t == DType::Int64) for (double& v : want) v = std::trunc(v);
        if (t == DType::Bool) for (double& v : want) v = v != 0;
        const Attrs a{{"pads", k.pads}, {"mode", mode}, {"value", value}};
        const std::string what = shape_str(k.shape) + " " + mode + " " + dtype_name(t);
        ASSERT_TRUE(close(call_op1("pad", {x}, a), shape, want, 0)) << what;
        if (x.ndim() >= 2 && x.numel() > 0) {
          ASSERT_TRUE(close(call_op1("pad", {transposed_layout(x)}, a), shape, want, 0)) << what << " transposed";
        }
      }
}

TEST(Pad, Errors) {
  Tensor x = Tensor::zeros({1, 1, 3, 3}, DType::Float32);
  auto pad = [&](const Tensor& t, IntList p, const char* mode, double v = 0) {
    return call_op1("pad", {t}, {{"pads", p}, {"mode", std::string(mode)}, {"value", v}});
  };
  PJ_EXPECT_ERROR(pad(x, {1, 1, 1}, "constant"), Value, "pad: padding length must be divisible by 2, got 3");
  PJ_EXPECT_ERROR(call_op1("pad", {x}, {}), Value, "pad: 'pads' is required");
  // Only the pads: constant mode, value 0.
  EXPECT_EQ(testing::values(call_op1("pad", {testing::from_doubles({1, 2}, DType::Int32)}, {{"pads", IntList{1, 0}}})),
            (std::vector<double>{0, 1, 2}));
  PJ_EXPECT_ERROR(pad(Tensor::zeros({3, 3}, DType::Float32), {1, 1, 1, 1, 1, 1}, "constant"), Value,
                  "pad: padding length 6 is too large for a 2-D input (at most 4)");
  PJ_EXPECT_ERROR(pad(x, {-2, -2}, "constant"), Value,
                  "pad: the input size 3, plus negative padding -2 and -2 resulted in a negative output size, which "
                  "is invalid. Check dimension 3 of your input.");
  PJ_EXPECT_ERROR(pad(x, {1, 1}, "edge"), Value,
                  "pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got 'edge'");
  PJ_EXPECT_ERROR(pad(x, {1, 1}, "reflect", 1.5), Value, "pad: padding mode 'reflect' doesn't take in value argument");
  PJ_EXPECT_ERROR(pad(x, {0, 0, 3, 1}, "reflect"), Value,
                  "pad: padding size should be less than the corresponding input dimension, but got padding (3, 1) "
                  "at dimension 2 of input (1, 1, 3, 3)");
  PJ_EXPECT_ERROR(pad(Tensor::zeros({2, 0}, DType::Float32), {1, 0}, "replicate"), Value,
                  "pad: replicate padding needs a non-empty dimension 1, got input shape (2, 0)");
  PJ_EXPECT_ERROR(pad(x, {4, 0}, "circular"), Value,
                  "pad: padding value causes wrapping around more than once (padding (4, 0) at dimension 3 of input "
                  "(1, 1, 3, 3))");
}

}  // namespace
}  // namespace pj
