// max_pool2d, avg_pool2d and adaptive_avg_pool2d against plain references in double written from
// PyTorch's definitions: odd sizes, strides, padding, dilation (max), ceil_mode on and off,
// count_include_pad on and off, divisor_override, channel tails, batch 1 and 3, float32 (oneDNN and
// the loop path) and float64, non-contiguous inputs; PyTorch's output-size rule; every error.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/pool.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

struct PoolCase {
  int64_t n, c, h, w;
  int64_t kh, kw, sh, sw, ph, pw;
  bool ceil;
  int64_t dh = 1, dw = 1;
};

std::string describe(const PoolCase& k) {
  char buf[200];
  snprintf(buf, sizeof buf, "x(%ld,%ld,%ld,%ld) k=(%ld,%ld) s=(%ld,%ld) p=(%ld,%ld) d=(%ld,%ld) ceil=%d", k.n, k.c,
           k.h, k.w, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw, k.ceil);
  return buf;
}

// PyTorch's rule, written out independently of pool_out_size.
int64_t ref_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  const double span = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / s;
  int64_t o = static_cast<int64_t>(ceil ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil && (o - 1) * s >= in + p) --o;
  return o;
}

Pool2dParams params_of(const PoolCase& k) {
  Pool2dParams p;
  p.kernel[0] = k.kh, p.kernel[1] = k.kw, p.stride[0] = k.sh, p.stride[1] = k.sw;
  p.pad[0] = k.ph, p.pad[1] = k.pw, p.dilation[0] = k.dh, p.dilation[1] = k.dw;
  p.ceil_mode = k.ceil;
  return p;
}

Attrs pool_attrs(const PoolCase& k, bool is_max) {
  Attrs a{{"kernel_size", IntList{k.kh, k.kw}},
          {"stride", IntList{k.sh, k.sw}},
          {"padding", IntList{k.ph, k.pw}},
          {"ceil_mode", k.ceil}};
  if (is_max) a.set("dilation", IntList{k.dh, k.dw});
  return a;
}

// max (is_max) or average with include_pad / divisor (0: none) over the PyTorch windows.
std::vector<double> ref_pool(const Tensor& x, const PoolCase& k, bool is_max, bool include_pad, int64_t divisor,
                             Shape* shape) {
  const int64_t oh = ref_out(k.h, k.kh, k.sh, k.ph, k.dh, k.ceil), ow = ref_out(k.w, k.kw, k.sw, k.pw, k.dw, k.ceil);
  *shape = {k.n, k.c, oh, ow};
  std::vector<double> r;
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t c = 0; c < k.c; ++c)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double m = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t count = 0, pool_size = 0;
          for (int64_t ky = 0; ky < k.kh; ++ky)
            for (int64_t kx = 0; kx < k.kw; ++kx) {
              const int64_t iy = y * k.sh - k.ph + ky * k.dh, ix = xo * k.sw - k.pw + kx * k.dw;
              // PyTorch's include-pad divisor counts window cells inside input + padding only.
              if (iy < k.h + k.ph && ix < k.w + k.pw) ++pool_size;
              if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
              const double v = testing::at(x, {n, c, iy, ix});
              m = std::max(m, v);
              sum += v;
              ++count;
            }
          if (is_max) r.push_back(m);
          else r.push_back(sum / static_cast<double>(divisor ? divisor : include_pad ? pool_size : count));
        }
  return r;
}

::testing::AssertionResult close(const Tensor& t, const Shape& shape, const std::vector<double>& want) {
  if (t.shape() != shape)
    return ::testing::AssertionFailure() << "shape " << shape_str(t.shape()) << " want " << shape_str(shape);
  const double rtol = t.dtype() == DType::Float32 ? 2e-6 : 1e-14;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double got = t.item_double(i);
    if (!(std::abs(got - want[i]) <= rtol * (std::abs(want[i]) + 4)))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got << " want " << want[i];
  }
  return ::testing::AssertionSuccess();
}

std::vector<PoolCase> cases() {
  return {
      {1, 3, 7, 9, 3, 3, 2, 2, 1, 1, false},
      {1, 3, 7, 9, 3, 3, 2, 2, 1, 1, true},
      {3, 5, 8, 8, 2, 2, 2, 2, 0, 0, false},
      {3, 5, 9, 9, 2, 2, 2, 2, 0, 0, true},   // ceil adds a window past the input
      {2, 17, 6, 6, 3, 3, 2, 2, 1, 1, true},  // ceil adds a window past the right padding
      {1, 16, 11, 13, 3, 2, 3, 2, 1, 0, true},
      {2, 3, 10, 7, 5, 3, 1, 2, 2, 1, false},
      {1, 2, 5, 5, 5, 5, 1, 1, 2, 2, false},  // padding = kernel / 2 all around
      {1, 4, 3, 3, 2, 2, 2, 2, 1, 1, true},   // ceil's "last window starts inside" rule
      {2, 32, 14, 14, 3, 3, 2, 2, 1, 1, false},
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false},
      {3, 3, 12, 12, 3, 3, 1, 1, 1, 1, false, 2, 2},  // dilation (max only)
      {1, 5, 9, 8, 2, 3, 2, 1, 0, 1, true, 3, 1},
      {0, 3, 5, 5, 2, 2, 2, 2, 0, 0, false},  // empty batch
  };
}

TEST(Pool, OutputSizeRule) {
  EXPECT_EQ(pool_out_size(5, 2, 2, 0, 1, false), 2);
  EXPECT_EQ(pool_out_size(5, 2, 2, 0, 1, true), 3);
  EXPECT_EQ(pool_out_size(6, 3, 2, 1, 1, true), 4);
  EXPECT_EQ(pool_out_size(3, 2, 2, 1, 1, true), 2);  // the window at 4 would start in the right padding
  EXPECT_EQ(pool_out_size(3, 2, 2, 1, 1, false), 2);
  EXPECT_EQ(pool_out_size(12, 3, 1, 1, 2, false), 10);
  EXPECT_EQ(pool_out_size(2, 3, 3, 0, 1, false), 0);
}

TEST(MaxPool2d, MatchesReference) {
  unsigned seed = 1;
  for (const PoolCase& k : cases())
    for (DType t : {DType::Float32, DType::Float64}) {
      Tensor x = testing::random({k.n, k.c, k.h, k.w}, t, seed++);
      Shape shape;
      std::vector<double> want = ref_pool(x, k, true, false, 0, &shape);
      const std::string what = describe(k) + " " + dtype_name(t);
      ASSERT_TRUE(close(call_op1("max_pool2d", {x}, pool_attrs(k, true)), shape, want)) << what;
      ASSERT_TRUE(close(call_op1("max_pool2d", {testing::hw_swapped(x)}, pool_attrs(k, true)), shape, want)) << what;
      Tensor out = Tensor::empty(shape, t);
      max_pool2d_loop_into(out, x, params_of(k));
      ASSERT_TRUE(close(out, shape, want)) << what << " loop path";
    }
}

TEST(AvgPool2d, MatchesReference) {
  unsigned seed = 100;
  for (const PoolCase& k : cases()) {
    if (k.dh != 1 || k.dw != 1) continue;
    for (DType t : {DType::Float32, DType::Float64})
      for (bool include : {true, false})
        for (int64_t divisor : {0, 3}) {
          Tensor x = testing::random({k.n, k.c, k.h, k.w}, t, seed++);
          Shape shape;
          std::vector<double> want = ref_pool(x, k, false, include, divisor, &shape);
          Attrs a = pool_attrs(k, false);
          a.set("count_include_pad", include);
          if (divisor) a.set("divisor_override", divisor);
          const std::string what = describe(k) + " " + dtype_name(t) + " include_pad=" + std::to_string(include) +
                                   " divisor=" + std::to_string(divisor);
          ASSERT_TRUE(close(call_op1("avg_pool2d", {x}, a), shape, want)) << what;
          ASSERT_TRUE(close(call_op1("avg_pool2d", {testing::hw_swapped(x)}, a), shape, want)) << what;
          Pool2dParams p = params_of(k);
          p.count_include_pad = include;
          p.divisor_override = divisor;
          Tensor out = Tensor::empty(shape, t);
          avg_pool2d_loop_into(out, x, p);
          ASSERT_TRUE(close(out, shape, want)) << what << " loop path";
        }
  }
}

TEST(Pool, DefaultsAndIntAttributes) {
  Tensor x = testing::random({2, 3, 7, 6}, DType::Float64, 9);
  // stride defaults to kernel_size; an int stands for both dims.
  PoolCase k{2, 3, 7, 6, 2, 2, 2, 2, 0, 0, false};
  Shape shape;
  std::vector<double> want = ref_pool(x, k, true, true, 0, &shape);
  EXPECT_TRUE(close(call_op1("max_pool2d", {x}, {{"kernel_size", int64_t(2)}}), shape, want));
  EXPECT_TRUE(close(call_op1("max_pool2d", {x}, {{"kernel_size", IntList{2, 2}}, {"stride", IntList{}}}), shape, want));
  want = ref_pool(x, k, false, true, 0, &shape);
  EXPECT_TRUE(close(call_op1("avg_pool2d", {x}, {{"kernel_size", int64_t(2)}}), shape, want));
}

TEST(MaxPool2d, NanPropagatesOnTheLoopPath) {
  Tensor x = testing::random({1, 1, 4, 4}, DType::Float64, 3);
  testing::set_item(x, 5, NAN);
  Tensor y = call_op1("max_pool2d", {x}, {{"kernel_size", int64_t(2)}});
  EXPECT_TRUE(std::isnan(y.item_double(0)));
  EXPECT_FALSE(std::isnan(y.item_double(1)));
}

// Windows that tile the plane (stride == kernel, no padding) run pijit's own kernel in both dtypes:
// the loop path's result bit for bit, on data full of ties, -0.0, infinities and NaNs (which
// propagate, in float32 too: oneDNN's pooling drops them).
TEST(MaxPool2d, TilesGiveTheLoopPathsBitsWithNanPropagating) {
  const std::vector<PoolCase> tiles = {
      {2, 3, 9, 11, 2, 2, 2, 2, 0, 0, false},   // a row and a column no window covers
      {1, 2, 9, 9, 3, 3, 3, 3, 0, 0, false},    // 3x3
      {1, 3, 8, 9, 2, 3, 2, 3, 0, 0, false},    // 2x3
      {3, 5, 1, 7, 1, 2, 1, 2, 0, 0, false},    // one row
      {8, 16, 32, 32, 2, 2, 2, 2, 0, 0, false}  // the CNN's pool
  };
  for (DType t : {DType::Float32, DType::Float64})
    for (const PoolCase& k : tiles) {
      Tensor x = testing::random({k.n, k.c, k.h, k.w}, t, 11);
      for (int64_t i = 0; i < x.numel(); ++i) {
        testing::set_item(x, i, std::floor(x.item_double(i) / 2));  // ties: -2 .. 1
        if (i % 11 == 4) testing::set_item(x, i, i % 3 ? -0.0 : 0.0);
        if (i % 17 == 6) testing::set_item(x, i, -INFINITY);
        if (i % 29 == 3 || i % 31 == 8) testing::set_item(x, i, NAN);
      }
      Tensor fast = call_op1("max_pool2d", {x}, pool_attrs(k, true));
      Tensor loop = Tensor::empty(fast.shape(), t);
      max_pool2d_loop_into(loop, x, params_of(k));
      EXPECT_EQ(std::memcmp(fast.raw_data(), loop.raw_data(), fast.nbytes()), 0) << describe(k) << " " << dtype_name(t);
      int64_t nans = 0;
      for (int64_t i = 0; i < fast.numel(); ++i) nans += std::isnan(fast.item_double(i));
      EXPECT_GT(nans, 0) << describe(k) << ": the data has NaNs in some windows";
    }
}

// Overlapping or padded windows run oneDNN's pooling in float32, whose maximum starts at -FLT_MAX
// with vmaxps: it dropped a NaN and gave -FLT_MAX for a window of -inf. The planes holding NaN or an
// infinity are pooled again by the loop, so every geometry gives the loop path's bits, and float32
// the float64 values (NaN where a window holds one, as in PyTorch; -inf for a window of -inf). The
// average pools, on oneDNN's kernels as well, give float64's NaN and infinities.
TEST(MaxPool2d, NonFinitePlanesGiveTheLoopPathsBitsOnEveryGeometry) {
  std::vector<PoolCase> all = cases();
  all.push_back({4, 128, 24, 24, 3, 3, 2, 2, 1, 1, false});  // oneDNN runs it in chunks of planes
  for (const PoolCase& k : all) {
    if (k.n == 0) continue;
    Tensor x = testing::random({k.n, k.c, k.h, k.w}, DType::Float32, 13);
    const int64_t hw = k.h * k.w;
    for (int64_t pl = 0; pl < k.n * k.c; ++pl) {
      switch (pl % 4) {
        case 0: testing::set_item(x, pl * hw + (pl * 7) % hw, NAN); break;
        case 1:
          for (int64_t i = 0; i < hw; ++i) testing::set_item(x, pl * hw + i, -INFINITY);
          break;
        case 2:
          testing::set_item(x, pl * hw + (pl * 5) % hw, INFINITY);
          testing::set_item(x, pl * hw + (pl * 3 + 1) % hw, -INFINITY);
          break;
        default: break;  // finite: oneDNN's bits
      }
    }
    const Tensor x64 = testing::from_doubles(testing::values(x), x.shape(), DType::Float64);
    Tensor fast = call_op1("max_pool2d", {x}, pool_attrs(k, true));
    Tensor loop = Tensor::empty(fast.shape(), DType::Float32);
    max_pool2d_loop_into(loop, x, params_of(k));
    EXPECT_EQ(std::memcmp(fast.raw_data(), loop.raw_data(), fast.nbytes()), 0) << describe(k);
    Tensor wide = call_op1("max_pool2d", {x64}, pool_attrs(k, true));
    int64_t nans = 0, neg_inf = 0;
    for (int64_t i = 0; i < fast.numel(); ++i) {
      const double got = fast.item_double(i), want = wide.item_double(i);
      nans += std::isnan(want);
      neg_inf += want == -INFINITY;
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << describe(k) << " element " << i;
      else EXPECT_EQ(got, want) << describe(k) << " element " << i;
    }
    EXPECT_GT(nans, 0) << describe(k);
    if (k.n * k.c > 1) {
      EXPECT_GT(neg_inf, 0) << describe(k) << ": the -inf planes pool to -inf";
    }
    for (bool include_pad : {false, true}) {
      Attrs a = pool_attrs(k, false);
      a.set("count_include_pad", include_pad);
      Tensor avg = call_op1("avg_pool2d", {x}, a), avg64 = call_op1("avg_pool2d", {x64}, a);
      for (int64_t i = 0; i < avg.numel(); ++i) {
        const double got = avg.item_double(i), want = avg64.item_double(i);
        if (std::isnan(want) || std::isinf(want)) {
          EXPECT_EQ(std::isnan(got), std::isnan(want)) << describe(k) << " avg element " << i << ": " << got;
          if (std::isinf(want)) {
            EXPECT_EQ(got, want) << describe(k) << " avg element " << i;
          }
        } else {
          EXPECT_NEAR(got, want, 2e-6 * (std::abs(want) + 4)) << describe(k) << " avg element " << i;
        }
      }
    }
  }
}

// max_pool2d's gradient goes to each window's first maximum, or its first NaN (rows, then
// columns), added into zeros in window order: the reference below, bit for bit, on data full of
// ties and NaNs and on gradients with -0.0 and NaN. The windows that tile the plane (stride ==
// kernel, no padding: a written-once path with selects) and every other kind, with uncovered rows
// and columns left at 0.
template <typename T>
std::vector<T> ref_max_pool_backward(const Tensor& x, const Tensor& dy, const PoolCase& k) {
  const int64_t oh = dy.dim(2), ow = dy.dim(3);
  std::vector<T> g(static_cast<size_t>(x.numel()), T(0));
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t c = 0; c < k.c; ++c)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          int64_t best = -1;
          T m = 0;
          for (int64_t ky = 0; ky < k.kh; ++ky)
            for (int64_t kx = 0; kx < k.kw; ++kx) {
              const int64_t iy = y * k.sh - k.ph + ky * k.dh, ix = xo * k.sw - k.pw + kx * k.dw;
              if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
              const T v = static_cast<T>(testing::at(x, {n, c, iy, ix}));
              if (best < 0 || (!std::isnan(m) && (std::isnan(v) || v > m))) {
                m = v;
                best = ((n * k.c + c) * k.h + iy) * k.w + ix;
              }
            }
          if (best >= 0) g[best] += static_cast<T>(testing::at(dy, {n, c, y, xo}));
        }
  return g;
}

TEST(MaxPool2dBackward, RoutesEachGradientToTheFirstMaximumBitForBit) {
  std::vector<PoolCase> all = cases();
  all.push_back({2, 3, 9, 11, 2, 2, 2, 2, 0, 0, false});  // tiles, a row and a column uncovered
  all.push_back({1, 2, 9, 9, 3, 3, 3, 3, 0, 0, false});   // 3x3 tiles
  all.push_back({1, 3, 8, 9, 2, 3, 2, 3, 0, 0, false});   // 2x3 tiles
  all.push_back({8, 16, 32, 32, 2, 2, 2, 2, 0, 0, false});  // the CNN's pool
  for (DType t : {DType::Float32, DType::Float64})
    for (const PoolCase& k : all) {
      if (k.n == 0) continue;
      Tensor x = testing::random({k.n, k.c, k.h, k.w}, t, 7);
      for (int64_t i = 0; i < x.numel(); ++i) {
        testing::set_item(x, i, std::floor(x.item_double(i) / 2));  // ties: -2 .. 1
        if (i % 13 == 5 || i % 29 == 3) testing::set_item(x, i, NAN);
      }
      const int64_t oh = ref_out(k.h, k.kh, k.sh, k.ph, k.dh, k.ceil), ow = ref_out(k.w, k.kw, k.sw, k.pw, k.dw, k.ceil);
      Tensor dy = testing::random({k.n, k.c, oh, ow}, t, 8);
      for (int64_t i = 0; i < dy.numel(); ++i)
        if (i % 7 == 2) testing::set_item(dy, i, i % 2 ? -0.0 : NAN);
      Tensor dx = Tensor::empty(x.shape(), t);
      max_pool2d_backward_into(dx, x, dy, params_of(k));
      const size_t item = itemsize(t);
      if (t == DType::Float32) {
        const std::vector<float> want = ref_max_pool_backward<float>(x, dy, k);
        EXPECT_EQ(std::memcmp(dx.raw_data(), want.data(), want.size() * item), 0) << "float32 " << describe(k);
      } else {
        const std::vector<double> want = ref_max_pool_backward<double>(x, dy, k);
        EXPECT_EQ(std::memcmp(dx.raw_data(), want.data(), want.size() * item), 0) << "float64 " << describe(k);
      }
    }
}

double ref_adaptive(const Tensor& x, int64_t n, int64_t c, int64_t i, int64_t j, int64_t oh, int64_t ow) {
  const int64_t h = x.dim(2), w = x.dim(3);
  const int64_t h0 = static_cast<int64_t>(std::floor(static_cast<double>(i * h) / oh));
  const int64_t h1 = static_cast<int64_t>(std::ceil(static_cast<double>((i + 1) * h) / oh));
  const int64_t w0 = static_cast<int64_t>(std::floor(static_cast<double>(j * w) / ow));
  const int64_t w1 = static_cast<int64_t>(std::ceil(static_cast<double>((j + 1) * w) / ow));
  double s = 0;
  for (int64_t y = h0; y < h1; ++y)
    for (int64_t xx = w0; xx < w1; ++xx) s += testing::at(x, {n, c, y, xx});
  return s / static_cast<double>((h1 - h0) * (w1 - w0));
}

TEST(AdaptiveAvgPool2d, MatchesReference) {
  struct Case { int64_t n, c, h, w, oh, ow; };
  const Case cs[] = {{1, 3, 7, 9, 3, 4}, {3, 5, 8, 8, 1, 1}, {2, 17, 5, 5, 7, 7}, {1, 2, 10, 3, 4, 3},
                     {1, 1, 1, 1, 2, 3}, {2, 3, 14, 14, 7, 7}, {1, 4, 9, 13, 5, 6}, {2, 3, 4, 4, 0, 2}};
  unsigned seed = 7;
  for (const Case& k : cs)
    for (DType t : {DType::Float32, DType::Float64}) {
      Tensor x = testing::random({k.n, k.c, k.h, k.w}, t, seed++);
      Shape shape{k.n, k.c, k.oh, k.ow};
      std::vector<double> want;
      for (int64_t n = 0; n < k.n; ++n)
        for (int64_t c = 0; c < k.c; ++c)
          for (int64_t i = 0; i < k.oh; ++i)
            for (int64_t j = 0; j < k.ow; ++j) want.push_back(ref_adaptive(x, n, c, i, j, k.oh, k.ow));
      const Attrs a{{"output_size", IntList{k.oh, k.ow}}};
      ASSERT_TRUE(close(call_op1("adaptive_avg_pool2d", {x}, a), shape, want)) << k.h << "x" << k.w << "->" << k.oh << "x" << k.ow;
      ASSERT_TRUE(close(call_op1("adaptive_avg_pool2d", {testing::hw_swapped(x)}, a), shape, want));
    }
}

TEST(Pool, Errors) {
  const DType f = DType::Float32;
  Tensor x = Tensor::zeros({1, 2, 5, 5}, f);
  PJ_EXPECT_ERROR(call_op1("max_pool2d", {x}, {{"kernel_size", int64_t(3)}, {"padding", IntList{2, 1}}}), Value,
                  "max_pool2d: pad should be at most half of effective kernel size, but got pad=(2, 1), "
                  "kernel_size=(3, 3) and dilation=(1, 1)");
  // With dilation the effective kernel is larger, so the same padding is fine.
  EXPECT_EQ(call_op1("max_pool2d", {x}, {{"kernel_size", int64_t(3)}, {"padding", int64_t(2)}, {"dilation", int64_t(2)}})
                .shape(),
            (Shape{1, 2, 2, 2}));
  PJ_EXPECT_ERROR(call_op1("avg_pool2d", {x}, {{"kernel_size", IntList{3, 2}}, {"padding", IntList{1, 2}}}), Value,
                  "avg_pool2d: pad should be at most half of kernel size, but got pad=(1, 2), kernel_size=(3, 2)");
  PJ_EXPECT_ERROR(call_op1("max_pool2d", {Tensor::zeros({1, 2, 5, 5}, DType::Int64)}, {{"kernel_size", int64_t(2)}}),
                  Type, "max_pool2d does not support dtype Int64");
  PJ_EXPECT_ERROR(call_op1("avg_pool2d", {Tensor::zeros({1, 2, 5, 5}, DType::Bool)}, {{"kernel_size", int64_t(2)}}),
                  Type, "avg_pool2d does not support dtype Bool");
  PJ_EXPECT_ERROR(call_op1("adaptive_avg_pool2d", {Tensor::zeros({2, 5, 5}, DType::Int32)}, {{"output_size", int64_t(2)}}),
                  Type, "adaptive_avg_pool2d does not support dtype Int32");
  PJ_EXPECT_ERROR(call_op1("max_pool2d", {Tensor::zeros({2, 5, 5}, f)}, {{"kernel_size", int64_t(2)}}), Value,
                  "max_pool2d: expected a 4-D input (N, C, H, W), got shape (2, 5, 5)");
  PJ_EXPECT_ERROR(call_op1("avg_pool2d", {Tensor::zeros({1, 1, 0, 5}, f)}, {{"kernel_size", int64_t(2)}}), Value,
                  "avg_pool2d: expected an input with non-empty H and W, got shape (1, 1, 0, 5)");
  PJ_EXPECT_ERROR(call_op1("max_pool2d", {Tensor::zeros({1, 1, 2, 2}, f)}, {{"kernel_size", int64_t(3)}}), Value,
                  "max_pool2d: calculated output size (0, 0) is too small for input (1, 1, 2, 2) "
                  "(kernel_size=(3, 3), stride=(3, 3), padding=(0, 0))");
  PJ_EXPECT_ERROR(call_op1("max_pool2d", {x}, {{"kernel_size", IntList{0, 2}}}), Value,
                  "max_pool2d: kernel_size must be positive, got (0, 2)");
  PJ_EXPECT_ERROR(call_op1("avg_pool2d", {x}, {{"kernel_size", int64_t(2)}, {"stride", IntList{1, -1}}}), Value,
                  "avg_pool2d: stride must be positive, got (1, -1)");
  PJ_EXPECT_ERROR(call_op1("max_pool2d", {x}, {{"kernel_size", IntList{2, 2, 2}}}), Value,
                  "max_pool2d: 'kernel_size' must have 2 elements, got 3");
  PJ_EXPECT_ERROR(call_op1("max_pool2d", {x}, {}), Value, "max_pool2d: 'kernel_size' is required");
  PJ_EXPECT_ERROR(call_op1("avg_pool2d", {x}, {{"kernel_size", int64_t(2)}, {"divisor_override", int64_t(0)}}), Value,
                  "avg_pool2d: divisor_override must be positive, got 0");
  PJ_EXPECT_ERROR(call_op1("adaptive_avg_pool2d", {x}, {{"output_size", IntList{-1, 2}}}), Value,
                  "adaptive_avg_pool2d: output_size must be non-negative, got (-1, 2)");
  PJ_EXPECT_ERROR(call_op1("adaptive_avg_pool2d", {Tensor::zeros({1, 2, 5}, f)}, {{"output_size", int64_t(2)}}), Value,
                  "adaptive_avg_pool2d: expected a 4-D input (N, C, H, W), got shape (1, 2, 5)");
}

}  // namespace
}  // namespace pj
