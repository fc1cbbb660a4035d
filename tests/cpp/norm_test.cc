// batch_norm, layer_norm and group_norm against plain double-precision loops: odd shapes (N = 1, 3;
// C = 1, 3, 17; spatial none, 1x1, 5x7), float32 and float64, contiguous and non-contiguous
// inputs, the oneDNN float32 path against the loop path, batch_norm's in-place running-statistics
// update (MindSpore momentum convention, unbiased variance), and every error message.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/norm.h"
#include "kernels/threading.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::all_close;
using testing::layouts;
using testing::uniform;
using testing::values;

const DType kFloats[] = {DType::Float32, DType::Float64};

Shape nc_shape(int64_t n, int64_t c, const Shape& spatial) {
  Shape s = {n, c};
  s.insert(s.end(), spatial.begin(), spatial.end());
  return s;
}

// ---- references ----------------------------------------------------------------------------------

struct NormRef {
  std::vector<double> y, mean, var;  // var: biased
};

// Statistics over the elements whose group(i) is g, then y = (x - mean) / sqrt(var + eps) * gamma + beta
// with the parameter index param(i).
template <typename G, typename P>
NormRef ref_norm(const std::vector<double>& x, int64_t ngroups, G group, const std::vector<double>& gamma,
                 const std::vector<double>& beta, P param, double eps) {
  NormRef r;
  r.mean.assign(ngroups, 0);
  r.var.assign(ngroups, 0);
  std::vector<double> cnt(ngroups, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    r.mean[group(i)] += x[i];
    cnt[group(i)] += 1;
  }
  for (int64_t g = 0; g < ngroups; ++g) r.mean[g] = cnt[g] ? r.mean[g] / cnt[g] : 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double d = x[i] - r.mean[group(i)];
    r.var[group(i)] += d * d;
  }
  for (int64_t g = 0; g < ngroups; ++g) r.var[g] = cnt[g] ? r.var[g] / cnt[g] : 0;
  r.y.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t g = group(i), p = param(i);
    r.y[i] = (x[i] - r.mean[g]) / std::sqrt(r.var[g] + eps) * gamma[p] + beta[p];
  }
  return r;
}

std::vector<double> rsqrt_plus(const std::vector<double>& v, double eps) {
  std::vector<double> r;
  for (double x : v) r.push_back(1 / std::sqrt(x + eps));
  return r;
}

// ---- batch_norm ------------------------------------------------------------------------------------

struct BnCase {
  Tensor x, gamma, beta, rm, rv;
};

BnCase bn_case(const Shape& s, DType t, unsigned seed) {
  const int64_t C = s[1];
  return {uniform(s, t, -3, 5, seed), uniform({C}, t, 0.5, 2, seed + 1), uniform({C}, t, -1, 1, seed + 2),
          uniform({C}, t, -1, 1, seed + 3), uniform({C}, t, 0.5, 3, seed + 4)};
}

Tensors run_batch_norm(const BnCase& c, const Tensor& x, bool training, double momentum, double eps) {
  return call_op(get_op("batch_norm"), {x, c.gamma, c.beta, c.rm, c.rv},
                 Attrs{{"training", training}, {"momentum", momentum}, {"eps", eps}});
}

void check_batch_norm(const Shape& s, DType t, const Tensor& x, const BnCase& c, bool training, double momentum,
                      double eps, const std::vector<double>& rm0, const std::vector<double>& rv0,
                      const Tensors& out) {
  const int64_t C = s[1], S = shape_numel(s) / std::max<int64_t>(s[0] * C, 1), M = s[0] * S;
  std::vector<double> xv = values(x), g = values(c.gamma), b = values(c.beta);
  SCOPED_TRACE(shape_str(s) + " " + dtype_name(t) + (training ? " training" : " inference"));
  auto chan = [&](size_t i) { return static_cast<int64_t>(i / S) % C; };
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), s);
  EXPECT_EQ(out[0].dtype(), t);
  EXPECT_EQ(out[1].shape(), Shape{C});
  EXPECT_EQ(out[2].dtype(), t);
  const double tol = testing::rtol_for(t);
  if (training) {
    NormRef r = ref_norm(xv, C, chan, g, b, chan, eps);
    EXPECT_TRUE(all_close(out[0], r.y, tol, tol * 4));
    EXPECT_TRUE(all_close(out[1], r.mean, tol, tol));
    EXPECT_TRUE(all_close(out[2], rsqrt_plus(r.var, eps), tol, tol));
    // running = momentum * running + (1 - momentum) * batch, with the unbiased variance.
    std::vector<double> wm, wv;
    for (int64_t k = 0; k < C; ++k) {
      wm.push_back(momentum * rm0[k] + (1 - momentum) * r.mean[k]);
      wv.push_back(momentum * rv0[k] + (1 - momentum) * r.var[k] * M / (M - 1));
    }
    EXPECT_TRUE(all_close(c.rm, wm, tol, tol));
    EXPECT_TRUE(all_close(c.rv, wv, tol, tol));
  } else {
    std::vector<double> y(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      int64_t k = chan(i);
      y[i] = (xv[i] - rm0[k]) / std::sqrt(rv0[k] + eps) * g[k] + b[k];
    }
    EXPECT_TRUE(all_close(out[0], y, tol, tol * 4));
    EXPECT_EQ(values(out[1]), rm0);
    EXPECT_TRUE(all_close(out[2], rsqrt_plus(rv0, eps), tol, tol));
    EXPECT_EQ(values(c.rm), rm0);  // untouched
    EXPECT_EQ(values(c.rv), rv0);
  }
}

std::vector<Shape> bn_shapes() {
  std::vector<Shape> shapes;
  for (int64_t n : {1, 3})
    for (int64_t c : {1, 3, 17})
      for (Shape sp : {Shape{}, Shape{1, 1}, Shape{5, 7}}) shapes.push_back(nc_shape(n, c, sp));
  // Big enough for oneDNN (float32), both the short-row and the long-row statistics paths.
  shapes.push_back({300, 17});
  shapes.push_back({4, 3, 33, 17});
  shapes.push_back({2, 5, 3});
  shapes.push_back({2, 3, 20000});  // rows longer than one statistics chunk
  return shapes;
}

TEST(BatchNorm, TrainingMatchesReferenceAndUpdatesRunningStats) {
  for (DType t : kFloats)
    for (const Shape& s : bn_shapes()) {
      if (shape_numel(s) / s[1] <= 1) continue;  // one value per channel: an error
      unsigned seed = 0;
      for (const Tensor& base : layouts(uniform(s, t, -3, 5, 7))) {
        BnCase c = bn_case(s, t, ++seed);
        std::vector<double> rm0 = values(c.rm), rv0 = values(c.rv);
        Tensors out = run_batch_norm(c, base, true, 0.9, 1e-5);
        check_batch_norm(s, t, base, c, true, 0.9, 1e-5, rm0, rv0, out);
      }
    }
}

TEST(BatchNorm, InferenceUsesRunningStatsAndLeavesThem) {
  for (DType t : kFloats)
    for (const Shape& s : bn_shapes())
      for (const Tensor& x : layouts(uniform(s, t, -3, 5, 11))) {
        BnCase c = bn_case(s, t, 3);
        std::vector<double> rm0 = values(c.rm), rv0 = values(c.rv);
        Tensors out = run_batch_norm(c, x, false, 0.9, 1e-3);
        check_batch_norm(s, t, x, c, false, 0.9, 1e-3, rm0, rv0, out);
      }
}

TEST(BatchNorm, RunningStatsUpdateInPlaceExactly) {
  // Values whose statistics are exact in binary: x over N=2, C=2, S=2.
  Tensor x = testing::from_doubles({1, 3, 10, 10, 5, 7, 20, 30}, {2, 2, 2}, DType::Float64);
  Tensor g = testing::from_doubles({1, 1}, DType::Float64), b = testing::from_doubles({0, 0}, DType::Float64);
  // Non-contiguous running statistics of another dtype: updated through their own strides.
  Tensor rm_buf = testing::from_doubles({0.5, -1, 2, -1}, DType::Float32);
  Tensor rm = rm_buf.as_strided({2}, {2}, 0);
  Tensor rv = testing::from_doubles({1, 4}, DType::Float32);
  const void* rm_data = rm.raw_data();
  Tensors out = call_op(get_op("batch_norm"), {x, g, b, rm, rv},
                        Attrs{{"training", true}, {"momentum", 0.75}, {"eps", 0.0}});
  // channel 0: {1, 3, 5, 7}: mean 4, biased var 5, unbiased 20/3; channel 1: {10, 10, 20, 30}:
  // mean 17.5, biased var 68.75, unbiased 91.666...
  EXPECT_EQ(values(out[1]), (std::vector<double>{4, 17.5}));
  EXPECT_TRUE(all_close(out[2], {1 / std::sqrt(5.0), 1 / std::sqrt(68.75)}, 1e-15, 0));
  EXPECT_EQ(rm.raw_data(), rm_data);
  EXPECT_EQ(values(rm), (std::vector<double>{0.75 * 0.5 + 0.25 * 4, 0.75 * 2 + 0.25 * 17.5}));
  EXPECT_EQ(values(rm_buf)[1], -1);  // the gaps stay untouched
  EXPECT_TRUE(all_close(rv, {0.75 * 1 + 0.25 * 20.0 / 3, 0.75 * 4 + 0.25 * 275.0 / 3}, 1e-7, 0));
  EXPECT_TRUE(all_close(out[0], {-3 / std::sqrt(5.0), -1 / std::sqrt(5.0), -7.5 / std::sqrt(68.75),
                                 -7.5 / std::sqrt(68.75), 1 / std::sqrt(5.0), 3 / std::sqrt(5.0),
                                 2.5 / std::sqrt(68.75), 12.5 / std::sqrt(68.75)},
                        1e-14, 1e-15));
  // momentum 1 keeps the running statistics; momentum 0 replaces them by the batch's.
  Tensor rm2 = testing::from_doubles({9, 9}, DType::Float64), rv2 = testing::from_doubles({9, 9}, DType::Float64);
  call_op(get_op("batch_norm"), {x, g, b, rm2, rv2}, Attrs{{"training", true}, {"momentum", 1.0}});
  EXPECT_EQ(values(rm2), (std::vector<double>{9, 9}));
  call_op(get_op("batch_norm"), {x, g, b, rm2, rv2}, Attrs{{"training", true}, {"momentum", 0.0}});
  EXPECT_EQ(values(rm2), (std::vector<double>{4, 17.5}));
  EXPECT_TRUE(all_close(rv2, {20.0 / 3, 275.0 / 3}, 1e-15, 0));
}

TEST(BatchNorm, DefaultsAreInferenceMomentum09Eps1e5) {
  BnCase c = bn_case({3, 2, 4}, DType::Float64, 1);
  std::vector<double> rm0 = values(c.rm), rv0 = values(c.rv);
  Tensors out = call_op(get_op("batch_norm"), {c.x, c.gamma, c.beta, c.rm, c.rv});
  check_batch_norm({3, 2, 4}, DType::Float64, c.x, c, false, 0.9, 1e-5, rm0, rv0, out);
  Tensors tr = call_op(get_op("batch_norm"), {c.x, c.gamma, c.beta, c.rm, c.rv}, Attrs{{"training", true}});
  check_batch_norm({3, 2, 4}, DType::Float64, c.x, c, true, 0.9, 1e-5, rm0, rv0, tr);
}

TEST(BatchNorm, Errors) {
  BnCase c = bn_case({2, 3, 4}, DType::Float32, 1);
  auto bn = [&](Tensors in, Attrs a = {}) { return call_op(get_op("batch_norm"), in, a); };
  Tensor xi = testing::iota({2, 3, 4}, DType::Int32);
  PJ_EXPECT_ERROR(bn({xi, c.gamma, c.beta, c.rm, c.rv}), Type, "batch_norm: x must be Float32 or Float64, but got Int32");
  PJ_EXPECT_ERROR(bn({c.x, testing::iota({3}, DType::Int64), c.beta, c.rm, c.rv}), Type,
                  "batch_norm: gamma must be Float32 or Float64, but got Int64");
  PJ_EXPECT_ERROR(bn({testing::iota({3}, DType::Float32), c.gamma, c.beta, c.rm, c.rv}), Value,
                  "batch_norm: expected x with at least 2 dims (N, C, ...), but got shape (3,)");
  PJ_EXPECT_ERROR(bn({c.x, c.gamma, c.beta, c.rm, testing::iota({4}, DType::Float32)}), Value,
                  "batch_norm: running_var has shape (4,) but expected (3,) (the channels of x with shape (2, 3, 4))");
  PJ_EXPECT_ERROR(bn({c.x, c.gamma, testing::iota({1, 3}, DType::Float32), c.rm, c.rv}), Value,
                  "batch_norm: beta has shape (1, 3) but expected (3,) (the channels of x with shape (2, 3, 4))");
  PJ_EXPECT_ERROR(bn({testing::iota({1, 3}, DType::Float32), c.gamma, c.beta, c.rm, c.rv}, {{"training", true}}), Value,
                  "batch_norm: expected more than 1 value per channel when training, but got x with shape (1, 3)");
  PJ_EXPECT_ERROR(bn({testing::iota({1, 3, 1, 1}, DType::Float32), c.gamma, c.beta, c.rm, c.rv}, {{"training", true}}),
                  Value, "batch_norm: expected more than 1 value per channel when training, but got x with shape (1, 3, 1, 1)");
  PJ_EXPECT_ERROR(bn({c.x, c.gamma, c.beta, c.rm, c.rv}, {{"momentum", 1.5}}), Value,
                  "batch_norm: momentum must be in [0, 1], but got 1.5");
  PJ_EXPECT_ERROR(bn({c.x, c.gamma, c.beta, c.rm, c.rv}, {{"eps", -1.0}}), Value,
                  "batch_norm: eps must be non-negative, but got -1");
  PJ_EXPECT_ERROR(bn({c.x, c.gamma, c.beta, c.rm}), Type, "batch_norm() takes 5 tensor inputs but 4 were given");
  // One value per channel is fine for inference.
  EXPECT_EQ(bn({testing::iota({1, 3}, DType::Float32), c.gamma, c.beta, c.rm, c.rv})[0].shape(), (Shape{1, 3}));
}

// ---- layer_norm ------------------------------------------------------------------------------------

void check_layer_norm(const Tensor& x, int axis_attr, const Tensor& gamma, const Tensor& beta, double eps,
                      const Tensors& out) {
  const Shape& s = x.shape();
  const int nd = static_cast<int>(s.size()), axis = axis_attr < 0 ? axis_attr + nd : axis_attr;
  int64_t D = 1;
  for (int d = axis; d < nd; ++d) D *= s[d];
  const int64_t R = shape_numel(s) / std::max<int64_t>(D, 1);
  SCOPED_TRACE(shape_str(s) + " axis " + std::to_string(axis_attr) + " " + dtype_name(x.dtype()));
  NormRef r = ref_norm(
      values(x), R, [&](size_t i) { return static_cast<int64_t>(i) / D; }, values(gamma), values(beta),
      [&](size_t i) { return static_cast<int64_t>(i) % D; }, eps);
  Shape stat = s;
  for (int d = axis; d < nd; ++d) stat[d] = 1;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), s);
  EXPECT_EQ(out[1].shape(), stat);
  EXPECT_EQ(out[2].shape(), stat);
  const double tol = testing::rtol_for(x.dtype());
  EXPECT_TRUE(all_close(out[0], r.y, tol, tol * 4));
  EXPECT_TRUE(all_close(out[1], r.mean, tol, tol));
  EXPECT_TRUE(all_close(out[2], rsqrt_plus(r.var, eps), tol, tol));
}

TEST(LayerNorm, MatchesReferenceOverAxesLayoutsAndDtypes) {
  const Shape shapes[] = {{3, 5}, {1, 17}, {3, 1},       {17},      {3, 5, 7}, {1, 3, 1, 1},
                          {2, 3, 5, 7}, {64, 257}, {8, 9, 67}, {2, 70000}};
  for (DType t : kFloats)
    for (const Shape& s : shapes)
      for (int axis = -static_cast<int>(s.size()); axis < static_cast<int>(s.size()); ++axis) {
        const int a = axis < 0 ? axis + static_cast<int>(s.size()) : axis;
        const Shape ps(s.begin() + a, s.end());
        Tensor g = uniform(ps, t, 0.5, 2, 1), b = uniform(ps, t, -1, 1, 2);
        for (const Tensor& x : layouts(uniform(s, t, -3, 5, 3))) {
          Tensors out = call_op(get_op("layer_norm"), {x, g, b},
                                Attrs{{"begin_norm_axis", int64_t(axis)}, {"eps", 1e-5}});
          check_layer_norm(x, axis, g, b, 1e-5, out);
        }
      }
}

TEST(LayerNorm, DefaultsAreLastAxisEps1e7AndParamsMayBeStrided) {
  Tensor x = uniform({4, 6}, DType::Float64, -2, 2, 4);
  Tensor g = testing::gapped(uniform({6}, DType::Float64, 0.5, 2, 5)), b = testing::gapped(uniform({6}, DType::Float64, -1, 1, 6));
  check_layer_norm(x, -1, g, b, 1e-7, call_op(get_op("layer_norm"), {x, g, b}));
}

TEST(LayerNorm, OneDnnAndLoopPathsAgree) {
  for (const Shape& s : {Shape{64, 257}, Shape{5000, 3}, Shape{2, 70000}}) {
    Tensor x = uniform(s, DType::Float32, -3, 5, 9);
    Shape ps = {s[1]};
    Tensor g = uniform(ps, DType::Float32, 0.5, 2, 1), b = uniform(ps, DType::Float32, -1, 1, 2);
    Shape st = {s[0], 1};
    Tensor ya = Tensor::empty(s, DType::Float32), yb = Tensor::empty(s, DType::Float32);
    Tensor ma = Tensor::empty(st, DType::Float32), mb = Tensor::empty(st, DType::Float32);
    Tensor ra = Tensor::empty(st, DType::Float32), rb = Tensor::empty(st, DType::Float32);
    layer_norm_into(ya, ma, ra, x, g, b, 1, 1e-5, NormPath::Auto);
    layer_norm_into(yb, mb, rb, x, g, b, 1, 1e-5, NormPath::Loop);
    EXPECT_TRUE(all_close(ya, values(yb), 1e-5, 2e-5)) << shape_str(s);
    EXPECT_TRUE(all_close(ma, values(mb), 1e-5, 1e-6));
    EXPECT_TRUE(all_close(ra, values(rb), 1e-5, 1e-6));
  }
}

TEST(LayerNorm, Errors) {
  Tensor x = uniform({2, 5}, DType::Float32, -1, 1, 1), g = uniform({5}, DType::Float32, 0, 1, 2);
  auto ln = [&](Tensors in, Attrs a = {}) { return call_op(get_op("layer_norm"), in, a); };
  PJ_EXPECT_ERROR(ln({testing::iota({2, 5}, DType::Int64), g, g}), Type,
                  "layer_norm: x must be Float32 or Float64, but got Int64");
  PJ_EXPECT_ERROR(ln({x, g, testing::iota({5}, DType::Int32)}), Type,
                  "layer_norm: beta must be Float32 or Float64, but got Int32");
  PJ_EXPECT_ERROR(ln({x, uniform({4}, DType::Float32, 0, 1, 2), g}), Value,
                  "layer_norm: gamma has shape (4,) but expected (5,) (x.shape[1:] of x with shape (2, 5))");
  PJ_EXPECT_ERROR(ln({x, g, g}, {{"begin_norm_axis", int64_t(0)}}), Value,
                  "layer_norm: gamma has shape (5,) but expected (2, 5) (x.shape[0:] of x with shape (2, 5))");
  PJ_EXPECT_ERROR(ln({x, g, g}, {{"begin_norm_axis", int64_t(2)}}), Value,
                  "layer_norm: begin_norm_axis 2 is out of range for x with 2 dims (shape (2, 5))");
  PJ_EXPECT_ERROR(ln({x, g, g}, {{"begin_norm_axis", int64_t(-3)}}), Value,
                  "layer_norm: begin_norm_axis -3 is out of range for x with 2 dims (shape (2, 5))");
  PJ_EXPECT_ERROR(ln({Tensor::scalar(1, DType::Float32), g, g}), Value,
                  "layer_norm: begin_norm_axis -1 is out of range for x with 0 dims (shape ())");
  PJ_EXPECT_ERROR(ln({x, g, g}, {{"eps", -0.5}}), Value, "layer_norm: eps must be non-negative, but got -0.5");
}

// ---- group_norm ------------------------------------------------------------------------------------

void check_group_norm(const Tensor& x, int64_t G, const Tensor& gamma, const Tensor& beta, double eps,
                      const Tensors& out) {
  const Shape& s = x.shape();
  const int64_t N = s[0], C = s[1], S = shape_numel(s) / std::max<int64_t>(N * C, 1), cpg = C / G;
  SCOPED_TRACE(shape_str(s) + " groups " + std::to_string(G) + " " + dtype_name(x.dtype()));
  NormRef r = ref_norm(
      values(x), N * G,
      [&](size_t i) {
        int64_t n = static_cast<int64_t>(i) / (C * S), c = (static_cast<int64_t>(i) / S) % C;
        return n * G + c / cpg;
      },
      values(gamma), values(beta), [&](size_t i) { return (static_cast<int64_t>(i) / S) % C; }, eps);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), s);
  EXPECT_EQ(out[1].shape(), (Shape{N, G}));
  EXPECT_EQ(out[2].shape(), (Shape{N, G}));
  const double tol = testing::rtol_for(x.dtype());
  EXPECT_TRUE(all_close(out[0], r.y, tol, tol * 4));
  EXPECT_TRUE(all_close(out[1], r.mean, tol, tol));
  EXPECT_TRUE(all_close(out[2], rsqrt_plus(r.var, eps), tol, tol));
}

TEST(GroupNorm, MatchesReference) {
  struct C {
    int64_t c;
    std::vector<int64_t> groups;
  };
  for (DType t : kFloats)
    for (int64_t n : {1, 3})
      for (C cg : {C{1, {1}}, C{3, {1, 3}}, C{17, {1, 17}}, C{6, {2, 3}}, C{32, {4}}})
        for (Shape sp : {Shape{}, Shape{1, 1}, Shape{5, 7}, Shape{40}, Shape{100, 700}}) {
          if (sp.size() == 2 && sp[0] == 100 && (n > 1 || cg.c > 3)) continue;  // rows > 64K: a few suffice
          Shape s = nc_shape(n, cg.c, sp);
          Tensor g = uniform({cg.c}, t, 0.5, 2, 1), b = uniform({cg.c}, t, -1, 1, 2);
          for (int64_t groups : cg.groups)
            for (const Tensor& x : layouts(uniform(s, t, -3, 5, 3))) {
              Tensors out = call_op(get_op("group_norm"), {x, g, b},
                                    Attrs{{"num_groups", groups}, {"eps", 1e-4}});
              check_group_norm(x, groups, g, b, 1e-4, out);
            }
        }
}

TEST(GroupNorm, Errors) {
  Tensor x = uniform({2, 6, 3}, DType::Float32, -1, 1, 1), g = uniform({6}, DType::Float32, 0, 1, 2);
  auto gn = [&](Tensors in, Attrs a) { return call_op(get_op("group_norm"), in, a); };
  PJ_EXPECT_ERROR(gn({x, g, g}, {{"num_groups", int64_t(4)}}), Value,
                  "group_norm: num_channels 6 must be divisible by num_groups 4 (x shape (2, 6, 3))");
  PJ_EXPECT_ERROR(gn({x, g, g}, {{"num_groups", int64_t(0)}}), Value, "group_norm: num_groups must be positive, but got 0");
  PJ_EXPECT_ERROR(gn({x, g, g}, {}), Value, "group_norm: num_groups must be positive, but got 0");
  PJ_EXPECT_ERROR(gn({testing::iota({2, 6}, DType::Int32), g, g}, {{"num_groups", int64_t(2)}}), Type,
                  "group_norm: x must be Float32 or Float64, but got Int32");
  PJ_EXPECT_ERROR(gn({x, uniform({3}, DType::Float32, 0, 1, 2), g}, {{"num_groups", int64_t(2)}}), Value,
                  "group_norm: gamma has shape (3,) but expected (6,) (the channels of x with shape (2, 6, 3))");
  PJ_EXPECT_ERROR(gn({uniform({6}, DType::Float32, 0, 1, 2), g, g}, {{"num_groups", int64_t(2)}}), Value,
                  "group_norm: expected x with at least 2 dims (N, C, ...), but got shape (6,)");
}

// ---- across thread counts ----------------------------------------------------------------------------

TEST(Norms, ResultsDoNotDependOnThreadCount) {
  const int saved = get_num_threads();
  auto run_all = [] {
    std::vector<std::vector<double>> r;
    for (DType t : kFloats) {
      BnCase c = bn_case({40, 3, 50, 41}, t, 2);
      for (auto& o : run_batch_norm(c, c.x, true, 0.9, 1e-5)) r.push_back(values(o));
      r.push_back(values(c.rm));
      Tensor x = uniform({3, 200000}, t, -1, 1, 3), g = uniform({200000}, t, 0, 1, 4);
      for (auto& o : call_op(get_op("layer_norm"), {x, g, g}, Attrs{{"begin_norm_axis", int64_t(1)}}))
        r.push_back(values(o));
      Tensor gx = uniform({2, 4, 300, 100}, t, -1, 1, 5), gg = uniform({4}, t, 0, 1, 6);
      for (auto& o : call_op(get_op("group_norm"), {gx, gg, gg}, Attrs{{"num_groups", int64_t(2)}}))
        r.push_back(values(o));
    }
    return r;
  };
  set_num_threads(1);
  auto one = run_all();
  set_num_threads(std::max(saved, 3));
  auto many = run_all();
  set_num_threads(saved);
  ASSERT_EQ(one.size(), many.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i], many[i]) << "output " << i;
}

}  // namespace
}  // namespace pj
