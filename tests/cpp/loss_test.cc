// Losses against plain double-precision references written the way PyTorch defines them (the
// label-smoothing term and its normalisation kept separate from nll, as PyTorch computes them):
// every reduction, ignore_index (default, custom, inside the class range, everything ignored),
// class weights, label smoothing, probability targets, 1-D / 2-D / N-D inputs, int32 and int64
// targets, float32 and float64, strided inputs, plus every error message.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/threading.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::all_close;
using testing::uniform;
using testing::values;

using testing::kFloats;
const char* kReductions[] = {"none", "mean", "sum"};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor loss(const char* op, Tensors in, Attrs a) { return call_op1(op, in, a); }

// The loss tensor's values, or the reference for reduction r given per-sample values and the
// mean's denominator.
std::vector<double> reduce_ref(const std::string& r, const std::vector<double>& per, double denom) {
  if (r == "none") return per;
  double s = 0;
  for (double v : per) s += v;
  return {r == "sum" ? s : s / denom};
}

// ---- class losses ----------------------------------------------------------------------------------

struct Geom {
  int64_t N, C, S;
};

Geom geom(const Shape& s) {
  if (s.size() == 1) return {1, s[0], 1};
  int64_t S = 1;
  for (size_t d = 2; d < s.size(); ++d) S *= s[d];
  return {s[0], s[1], S};
}

std::vector<double> ref_log_softmax(const std::vector<double>& x, Geom g) {
  std::vector<double> lp(x.size());
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t s = 0; s < g.S; ++s) {
      auto at = [&](int64_t c) { return (n * g.C + c) * g.S + s; };
      double mx = -INFINITY, sum = 0;
      for (int64_t c = 0; c < g.C; ++c) mx = std::max(mx, x[at(c)]);
      for (int64_t c = 0; c < g.C; ++c) sum += std::exp(x[at(c)] - mx);
      for (int64_t c = 0; c < g.C; ++c) lp[at(c)] = x[at(c)] - mx - std::log(sum);
    }
  return lp;
}

// PyTorch's index-target loss: nll_loss_nd, plus the label-smoothing term when eps > 0.
std::vector<double> ref_index_loss(const std::vector<double>& lp, Geom g, const std::vector<double>& tgt,
                                   const std::vector<double>& w, int64_t ignore, double eps, const std::string& r) {
  std::vector<double> nll, smooth;
  double wsum = 0, count = 0;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t s = 0; s < g.S; ++s) {
      const int64_t t = static_cast<int64_t>(tgt[n * g.S + s]);
      auto wt = [&](int64_t c) { return w.empty() ? 1.0 : w[c]; };
      if (t == ignore) {
        nll.push_back(0);
        smooth.push_back(0);
        continue;
      }
      nll.push_back(-wt(t) * lp[(n * g.C + t) * g.S + s]);
      double sm = 0;
      for (int64_t c = 0; c < g.C; ++c) sm -= wt(c) * lp[(n * g.C + c) * g.S + s];
      smooth.push_back(sm);
      wsum += wt(t);
      count += 1;
    }
  std::vector<double> a = reduce_ref(r, nll, wsum);
  if (eps == 0) return a;
  std::vector<double> b = reduce_ref(r, smooth, w.empty() ? count : wsum);
  for (size_t i = 0; i < a.size(); ++i) a[i] = (1 - eps) * a[i] + b[i] * (eps / g.C);
  return a;
}

// PyTorch's probability-target loss.
std::vector<double> ref_prob_loss(const std::vector<double>& lp, Geom g, const std::vector<double>& p,
                                  const std::vector<double>& w, double eps, const std::string& r) {
  std::vector<double> per;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t s = 0; s < g.S; ++s) {
      double a = 0;
      for (int64_t c = 0; c < g.C; ++c) {
        const int64_t i = (n * g.C + c) * g.S + s;
        double pv = eps > 0 ? p[i] * (1 - eps) + eps / g.C : p[i];
        a -= (w.empty() ? 1.0 : w[c]) * lp[i] * pv;
      }
      per.push_back(a);
    }
  return reduce_ref(r, per, static_cast<double>(g.N * g.S));
}

Shape sample_shape(const Shape& x) {
  Shape s;
  for (size_t d = 0; d < x.size(); ++d)
    if (d != (x.size() == 1 ? 0 : 1)) s.push_back(x[d]);
  return s;
}

// Targets in [0, C) with a few set to `ignore` (when it is not a class, so they stay out of range).
Tensor targets(const Shape& s, int64_t C, DType t, int64_t ignore, unsigned seed) {
  Tensor x = testing::randints(s, t, 0, C, seed);
  for (int64_t i = 0; i < x.numel(); i += 3) testing::set_item(x, i, static_cast<double>(ignore));
  return x;
}

const Shape kClassShapes[] = {{5}, {1, 1}, {1, 3}, {3, 1}, {3, 17}, {3, 5, 7}, {1, 3, 1, 1}, {3, 4, 5, 7}, {2, 3, 2, 2, 3}};

TEST(CrossEntropy, IndexTargetsEveryOption) {
  for (DType t : kFloats)
    for (const Shape& s : kClassShapes) {
      const Geom g = geom(s);
      Tensor x = uniform(s, t, -4, 4, 1);
      Tensor w = uniform({g.C}, t, 0.2, 2, 2);
      const std::vector<double> lp = ref_log_softmax(values(x), g);
      for (DType it : {DType::Int32, DType::Int64})
        for (int64_t ignore : {int64_t(-100), int64_t(1)})
          for (bool weighted : {false, true})
            for (double eps : {0.0, 0.1, 1.0})
              for (const char* r : kReductions) {
                Tensor tgt = targets(sample_shape(s), g.C, it, ignore, 3);
                Tensors in = {x, tgt};
                if (weighted) in.push_back(w);
                Tensor y = loss("cross_entropy", in,
                                {{"reduction", std::string(r)}, {"ignore_index", ignore}, {"label_smoothing", eps}});
                SCOPED_TRACE(shape_str(s) + " " + dtype_name(t) + " target " + dtype_name(it) + " ignore " +
                             std::to_string(ignore) + (weighted ? " weighted" : "") + " eps " + std::to_string(eps) +
                             " " + r);
                EXPECT_EQ(y.dtype(), t);
                EXPECT_EQ(y.shape(), std::string(r) == "none" ? sample_shape(s) : Shape{});
                std::vector<double> want =
                    ref_index_loss(lp, g, values(tgt), weighted ? values(w) : std::vector<double>{}, ignore, eps, r);
                EXPECT_TRUE(all_close(y, want, testing::rtol_for(t) * 2, testing::rtol_for(t) * 2));
              }
    }
}

TEST(CrossEntropy, ProbabilityTargetsEveryOption) {
  for (DType t : kFloats)
    for (const Shape& s : kClassShapes) {
      const Geom g = geom(s);
      Tensor x = uniform(s, t, -4, 4, 1), p = uniform(s, t, 0, 1, 5), w = uniform({g.C}, t, 0.2, 2, 2);
      const std::vector<double> lp = ref_log_softmax(values(x), g);
      for (bool weighted : {false, true})
        for (double eps : {0.0, 0.25})
          for (const char* r : kReductions)
            for (const Tensor& xs : testing::layouts(x)) {
              Tensors in = {xs, testing::fortran(p)};
              if (weighted) in.push_back(w);
              Tensor y = loss("cross_entropy", in, {{"reduction", std::string(r)}, {"label_smoothing", eps}});
              SCOPED_TRACE(shape_str(s) + " " + dtype_name(t) + (weighted ? " weighted" : "") + " eps " +
                           std::to_string(eps) + " " + r);
              EXPECT_EQ(y.shape(), std::string(r) == "none" ? sample_shape(s) : Shape{});
              std::vector<double> want =
                  ref_prob_loss(lp, g, values(p), weighted ? values(w) : std::vector<double>{}, eps, r);
              EXPECT_TRUE(all_close(y, want, testing::rtol_for(t) * 2, testing::rtol_for(t) * 2));
            }
    }
}

TEST(CrossEntropy, KnownValuesAndEdgeCases) {
  // Two equal logits: log 2 per sample, whatever the class.
  Tensor x = testing::from_doubles({0, 0, 3, 3}, {2, 2}, DType::Float64);
  Tensor t = testing::from_ints({0, 1}, DType::Int64);
  EXPECT_NEAR(loss("cross_entropy", {x, t}, {}).item_double(), std::log(2.0), 1e-15);
  // Everything ignored: mean is 0/0 = NaN, sum is 0; weights of ignored targets do not count.
  Tensor ign = testing::from_ints({-100, -100}, DType::Int64);
  EXPECT_TRUE(std::isnan(loss("cross_entropy", {x, ign}, {}).item_double()));
  EXPECT_EQ(loss("cross_entropy", {x, ign}, {{"reduction", std::string("sum")}}).item_double(), 0);
  EXPECT_EQ(values(loss("cross_entropy", {x, ign}, {{"reduction", std::string("none")}})), (std::vector<double>{0, 0}));
  Tensor w = testing::from_doubles({2, 6}, DType::Float64);
  Tensor one_ign = testing::from_ints({1, -100}, DType::Int64);
  EXPECT_NEAR(loss("cross_entropy", {x, one_ign, w}, {}).item_double(), std::log(2.0), 1e-15);  // 6 log2 / 6
  Tensor both = testing::from_ints({0, 1}, DType::Int64);
  EXPECT_NEAR(loss("cross_entropy", {x, both, w}, {}).item_double(), std::log(2.0), 1e-15);  // 8 log2 / 8
  // Empty batch: mean NaN, sum 0, none empty.
  Tensor e = Tensor::empty({0, 3}, DType::Float32);
  Tensor et = Tensor::empty({0}, DType::Int64);
  EXPECT_TRUE(std::isnan(loss("cross_entropy", {e, et}, {}).item_double()));
  EXPECT_EQ(loss("cross_entropy", {e, et}, {{"reduction", std::string("sum")}}).item_double(), 0);
  EXPECT_EQ(loss("cross_entropy", {e, et}, {{"reduction", std::string("none")}}).shape(), Shape{0});
  // A 1-D input is one sample with a 0-d target.
  Tensor v = testing::from_doubles({1, 2, 3}, DType::Float32);
  Tensor y = loss("cross_entropy", {v, Tensor::scalar_int(2, DType::Int64)}, {{"reduction", std::string("none")}});
  EXPECT_EQ(y.shape(), Shape{});
  // float32 log_softmax runs through oneDNN, whose exp/log are polynomial: a few ulp, not 1.
  EXPECT_NEAR(y.item_double(), std::log(std::exp(1) + std::exp(2) + std::exp(3)) - 3, 1e-5);
  // Large logits do not overflow.
  Tensor big = testing::from_doubles({1000, 0}, {1, 2}, DType::Float32);
  EXPECT_NEAR(loss("cross_entropy", {big, testing::from_ints({1}, DType::Int32)}, {}).item_double(), 1000, 1e-3);
}

// Logits holding NaN or infinities give PyTorch's losses in float32 and float64 alike (its
// log_softmax: a NaN or a +inf makes the sample's every log-probability NaN; a -inf logit has
// log-probability -inf, so its loss is +inf when it is the target and it costs nothing otherwise),
// and a NaN sample makes the mean and the sum NaN. nll_loss reads -inf log-probabilities as +inf.
TEST(CrossEntropy, NonFiniteLogitsGivePyTorchsLosses) {
  const double inf = INFINITY;
  // rows x targets -> torch.nn.functional.cross_entropy(..., reduction="none")
  const std::vector<double> logits = {1, kNaN, 2, 1, inf, 2, 1, -inf, 2, -inf, -inf, -inf, inf, inf, 1, 1, -inf, 2};
  const std::vector<int64_t> targets = {0, 0, 1, 0, 2, 2};
  const std::vector<double> want = {kNaN, kNaN, inf, kNaN, kNaN, 0.31326168751822286};
  for (DType t : kFloats) {
    for (int64_t copies : {1, 3000}) {  // one batch, and one large enough for the parallel paths
      std::vector<double> x;
      std::vector<int64_t> tg;
      for (int64_t c = 0; c < copies; ++c) {
        x.insert(x.end(), logits.begin(), logits.end());
        tg.insert(tg.end(), targets.begin(), targets.end());
      }
      const int64_t n = 6 * copies;
      Tensor xt = testing::from_doubles(x, {n, 3}, t), tt = testing::from_ints(tg, DType::Int64);
      std::vector<double> y = values(loss("cross_entropy", {xt, tt}, {{"reduction", std::string("none")}}));
      for (int64_t i = 0; i < n; ++i) {
        const double w = want[i % 6];
        if (std::isnan(w)) ASSERT_TRUE(std::isnan(y[i])) << dtype_name(t) << " sample " << i << ": " << y[i];
        else if (std::isinf(w)) ASSERT_EQ(y[i], w) << dtype_name(t) << " sample " << i;
        else ASSERT_NEAR(y[i], w, 1e-6 * (1 + std::abs(w))) << dtype_name(t) << " sample " << i;
      }
      EXPECT_TRUE(std::isnan(loss("cross_entropy", {xt, tt}, {}).item_double())) << dtype_name(t);
      EXPECT_TRUE(std::isnan(loss("cross_entropy", {xt, tt}, {{"reduction", std::string("sum")}}).item_double()));
      // Only the finite-loss samples: -inf at another class than the target costs nothing.
      Tensor fine = testing::from_doubles({1, -inf, 2, 3, 1, -inf}, {2, 3}, t);
      Tensor ft = testing::from_ints({2, 0}, DType::Int64);
      std::vector<double> fy = values(loss("cross_entropy", {fine, ft}, {{"reduction", std::string("none")}}));
      EXPECT_NEAR(fy[0], std::log(1 + std::exp(-1.0)), 1e-6) << dtype_name(t);
      EXPECT_NEAR(fy[1], std::log(1 + std::exp(-2.0)), 1e-6) << dtype_name(t);
      // Probability targets: a NaN or +inf sample is NaN whatever the target, and so is a -inf logit
      // of probability 0 (PyTorch's sum of p * log_softmax: 0 * -inf).
      Tensor probs = Tensor::zeros({n, 3}, t);
      for (int64_t i = 0; i < n; ++i) testing::set_item(probs, i * 3 + tg[i], 1.0);
      std::vector<double> py = values(loss("cross_entropy", {xt, probs}, {{"reduction", std::string("none")}}));
      for (int64_t i = 0; i < n; i += 6) {
        EXPECT_TRUE(std::isnan(py[i])) << dtype_name(t);
        EXPECT_TRUE(std::isnan(py[i + 1])) << dtype_name(t);
        EXPECT_TRUE(std::isnan(py[i + 5])) << dtype_name(t);
      }
      Tensor fp = testing::from_doubles({0, 0, 1, 1, 0, 0}, {2, 3}, t);
      Tensor fine_p = testing::from_doubles({1, -inf, 2, 3, 1, 0}, {2, 3}, t);
      std::vector<double> fpy = values(loss("cross_entropy", {fine_p, fp}, {{"reduction", std::string("none")}}));
      EXPECT_TRUE(std::isnan(fpy[0])) << dtype_name(t);
      EXPECT_NEAR(fpy[1], std::log(1 + std::exp(-2.0) + std::exp(-3.0)), 1e-6) << dtype_name(t);
    }
    // nll_loss of log-probabilities holding -inf and NaN.
    Tensor lp = testing::from_doubles({-inf, -1, kNaN, -2, -0.5, -inf}, {3, 2}, t);
    std::vector<double> ny = values(loss("nll_loss", {lp, testing::from_ints({0, 1, 0}, DType::Int64)},
                                         {{"reduction", std::string("none")}}));
    EXPECT_EQ(ny[0], inf) << dtype_name(t);
    EXPECT_EQ(ny[1], 2) << dtype_name(t);
    EXPECT_EQ(ny[2], 0.5) << dtype_name(t);
    Tensor lp2 = testing::from_doubles({-inf, -1, kNaN, -2}, {2, 2}, t);
    EXPECT_TRUE(std::isnan(loss("nll_loss", {lp2, testing::from_ints({1, 0}, DType::Int64)}, {}).item_double()));
  }
}

TEST(CrossEntropy, Errors) {
  Tensor x = uniform({2, 5}, DType::Float32, -1, 1, 1);
  Tensor t = testing::from_ints({1, 4}, DType::Int64);
  auto ce = [&](Tensors in, Attrs a = {}) { return loss("cross_entropy", in, a); };
  PJ_EXPECT_ERROR(ce({x, t}, {{"reduction", std::string("avg")}}), Value,
                  "cross_entropy: reduction must be 'none', 'mean' or 'sum', but got 'avg'");
  PJ_EXPECT_ERROR(ce({testing::iota({2, 5}, DType::Int32), t}), Type,
                  "cross_entropy: input must be Float32 or Float64, but got Int32");
  PJ_EXPECT_ERROR(ce({x, testing::from_ints({1, 0}, DType::Bool)}), Type,
                  "cross_entropy: target must be Int32 or Int64 class indices or floating class probabilities, but got Bool");
  PJ_EXPECT_ERROR(ce({x, testing::from_ints({1, 2, 3}, DType::Int64)}), Value,
                  "cross_entropy: target has shape (3,) but expected (2,) for input of shape (2, 5)");
  PJ_EXPECT_ERROR(ce({uniform({2, 5, 3}, DType::Float32, 0, 1, 1), t}), Value,
                  "cross_entropy: target has shape (2,) but expected (2, 3) for input of shape (2, 5, 3)");
  PJ_EXPECT_ERROR(ce({x, uniform({2, 4}, DType::Float32, 0, 1, 1)}), Value,
                  "cross_entropy: class-probability target has shape (2, 4) but expected (2, 5), the shape of input");
  PJ_EXPECT_ERROR(ce({x, uniform({2, 5}, DType::Float32, 0, 1, 1)}, {{"ignore_index", int64_t(0)}}), Value,
                  "cross_entropy: ignore_index is not supported for class-probability targets (got 0)");
  PJ_EXPECT_ERROR(ce({x, t, uniform({4}, DType::Float32, 0, 1, 1)}), Value,
                  "cross_entropy: weight has shape (4,) but expected (5,) (one per class of input with shape (2, 5))");
  PJ_EXPECT_ERROR(ce({x, t, testing::iota({5}, DType::Int64)}), Type,
                  "cross_entropy: weight must be Float32 or Float64, but got Int64");
  PJ_EXPECT_ERROR(ce({x, t}, {{"label_smoothing", 1.5}}), Value, "cross_entropy: label_smoothing must be in [0, 1], but got 1.5");
  PJ_EXPECT_ERROR(ce({x, t}, {{"label_smoothing", -0.1}}), Value, "cross_entropy: label_smoothing must be in [0, 1], but got -0.1");
  PJ_EXPECT_ERROR(ce({Tensor::scalar(1, DType::Float32), Tensor::scalar_int(0, DType::Int64)}), Value,
                  "cross_entropy: input must have at least 1 dim (the classes), but got shape ()");
  PJ_EXPECT_ERROR(ce({x}), Type, "cross_entropy() takes 2 or 3 tensor inputs but 1 were given");
  PJ_EXPECT_ERROR(ce({x, t, x, x}), Type, "cross_entropy() takes 2 or 3 tensor inputs but 4 were given");
  // Data-dependent: a class index out of range (ignore_index itself is fine).
  PJ_EXPECT_ERROR(ce({x, testing::from_ints({1, 5}, DType::Int64)}), Index,
                  "cross_entropy: target 5 is out of bounds for 5 classes");
  PJ_EXPECT_ERROR(ce({x, testing::from_ints({-1, 5}, DType::Int32)}), Index,
                  "cross_entropy: target -1 is out of bounds for 5 classes");
  EXPECT_NO_THROW(ce({x, testing::from_ints({-1, 2}, DType::Int32)}, {{"ignore_index", int64_t(-1)}}));
}

TEST(NllLoss, EveryOption) {
  for (DType t : kFloats)
    for (const Shape& s : kClassShapes) {
      const Geom g = geom(s);
      Tensor lp = uniform(s, t, -5, 0, 4), w = uniform({g.C}, t, 0.2, 2, 2);
      for (int64_t ignore : {int64_t(-100), int64_t(0)})
        for (bool weighted : {false, true})
          for (const char* r : kReductions)
            for (const Tensor& x : testing::layouts(lp)) {
              Tensor tgt = targets(sample_shape(s), g.C, DType::Int64, ignore, 6);
              Tensors in = {x, tgt};
              if (weighted) in.push_back(testing::gapped(w));
              Attrs a{{"reduction", std::string(r)}};
              if (ignore != -100) a.set("ignore_index", ignore);
              Tensor y = loss("nll_loss", in, a);
              SCOPED_TRACE(shape_str(s) + " " + dtype_name(t) + (weighted ? " weighted " : " ") + r);
              std::vector<double> want =
                  ref_index_loss(values(lp), g, values(tgt), weighted ? values(w) : std::vector<double>{}, ignore, 0, r);
              EXPECT_TRUE(all_close(y, want, testing::rtol_for(t), testing::rtol_for(t)));
            }
    }
}

TEST(NllLoss, Errors) {
  Tensor x = uniform({2, 3}, DType::Float64, -1, 0, 1);
  PJ_EXPECT_ERROR(loss("nll_loss", {x, uniform({2, 3}, DType::Float64, 0, 1, 1)}, {}), Type,
                  "nll_loss: target must be Int32 or Int64 class indices, but got Float64");
  PJ_EXPECT_ERROR(loss("nll_loss", {x, testing::from_ints({0, 3}, DType::Int64)}, {}), Index,
                  "nll_loss: target 3 is out of bounds for 3 classes");
  PJ_EXPECT_ERROR(loss("nll_loss", {x, testing::from_ints({0, 1}, DType::Int64)}, {{"reduction", std::string("mean ")}}),
                  Value, "nll_loss: reduction must be 'none', 'mean' or 'sum', but got 'mean '");
}

// ---- pointwise losses ------------------------------------------------------------------------------

double ref_pointwise(const std::string& op, double a, double b, double beta) {
  double d = a - b;
  if (op == "mse_loss") return d * d;
  if (op == "l1_loss") return std::abs(d);
  double ad = std::abs(d);
  if (beta == 0) return ad;
  return ad < beta ? 0.5 * d * d / beta : ad - 0.5 * beta;
}

TEST(PointwiseLosses, EveryReductionBroadcastAndLayout) {
  const std::pair<Shape, Shape> shapes[] = {{{}, {}}, {{7}, {7}}, {{3, 5}, {3, 5}}, {{3, 5}, {5}}, {{3, 1}, {1, 4}},
                                            {{2, 3, 4}, {2, 3, 4}}, {{0, 3}, {3}}, {{300, 301}, {300, 301}}};
  for (const char* op : {"mse_loss", "l1_loss", "smooth_l1_loss"})
    for (double beta : {1.0, 0.5, 0.0})
      for (DType t : kFloats)
        for (auto& [sa, sb] : shapes)
          for (const char* r : kReductions) {
            if (std::string(op) != "smooth_l1_loss" && beta != 1.0) continue;
            Tensor a = uniform(sa, t, -2, 2, 1), b = uniform(sb, t, -2, 2, 2);
            Shape out = broadcast_shapes(sa, sb);
            std::vector<double> per;
            for (int64_t i = 0; i < shape_numel(out); ++i)
              per.push_back(ref_pointwise(op, testing::bcast_item(a, out, i), testing::bcast_item(b, out, i), beta));
            std::vector<double> want = reduce_ref(r, per, static_cast<double>(per.size()));
            for (const Tensor& x : testing::layouts(a)) {
              Attrs at{{"reduction", std::string(r)}};
              if (std::string(op) == "smooth_l1_loss") at.set("beta", beta);
              Tensor y = loss(op, {x, testing::layouts(b).back()}, at);
              SCOPED_TRACE(std::string(op) + " " + shape_str(sa) + " " + shape_str(sb) + " " + dtype_name(t) + " " + r +
                           " beta " + std::to_string(beta));
              EXPECT_EQ(y.shape(), std::string(r) == "none" ? out : Shape{});
              EXPECT_EQ(y.dtype(), t);
              EXPECT_TRUE(all_close(y, want, testing::rtol_for(t), testing::rtol_for(t)));
            }
          }
}

TEST(PointwiseLosses, MixedDtypesPromoteAndErrors) {
  Tensor a = uniform({3}, DType::Float32, -1, 1, 1), b = uniform({3}, DType::Float64, -1, 1, 2);
  EXPECT_EQ(loss("mse_loss", {a, b}, {}).dtype(), DType::Float64);
  PJ_EXPECT_ERROR(loss("mse_loss", {a, testing::iota({3}, DType::Int64)}, {}), Type,
                  "mse_loss: target must be Float32 or Float64, but got Int64");
  PJ_EXPECT_ERROR(loss("l1_loss", {testing::iota({3}, DType::Bool), a}, {}), Type,
                  "l1_loss: input must be Float32 or Float64, but got Bool");
  PJ_EXPECT_ERROR(loss("l1_loss", {a, uniform({4}, DType::Float32, 0, 1, 1)}, {}), Value,
                  "l1_loss: input shape (3,) and target shape (4,) cannot be broadcast together");
  PJ_EXPECT_ERROR(loss("smooth_l1_loss", {a, a}, {{"beta", -1.0}}), Value,
                  "smooth_l1_loss: beta must be non-negative, but got -1");
  PJ_EXPECT_ERROR(loss("smooth_l1_loss", {a, a}, {{"reduction", std::string("Mean")}}), Value,
                  "smooth_l1_loss: reduction must be 'none', 'mean' or 'sum', but got 'Mean'");
  // The default reduction is the mean.
  EXPECT_DOUBLE_EQ(loss("mse_loss", {testing::from_doubles({1, 2}, DType::Float64), testing::from_doubles({0, 0}, DType::Float64)}, {})
                       .item_double(),
                   2.5);
}

double ref_bce(double p, double t, double w) {
  return -w * (t * std::max(std::log(p), -100.0) + (1 - t) * std::max(std::log(1 - p), -100.0));
}

double ref_bce_logits(double x, double t, double w, double pw) {
  // Written as PyTorch defines it, with log(sigmoid) computed stably in double.
  double log_sig = x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x));
  double log_one_minus_sig = log_sig - x;
  return -w * (pw * t * log_sig + (1 - t) * log_one_minus_sig);
}

TEST(BinaryCrossEntropy, EveryOption) {
  const Shape shapes[] = {{}, {5}, {3, 4}, {2, 3, 5}, {0, 2}, {200, 301}};
  for (DType t : kFloats)
    for (const Shape& s : shapes)
      for (int weighting = 0; weighting < 3; ++weighting)  // none, full shape, broadcast last dim
        for (const char* r : kReductions) {
          Tensor p = uniform(s, t, 0.01, 0.99, 1), tg = uniform(s, t, 0, 1, 2);
          Shape ws = weighting == 1 || s.empty() ? s : Shape{s.back()};
          Tensor w = uniform(ws, t, 0, 2, 3);
          std::vector<double> per;
          for (int64_t i = 0; i < p.numel(); ++i)
            per.push_back(ref_bce(p.item_double(i), tg.item_double(i), weighting ? testing::bcast_item(w, s, i) : 1.0));
          std::vector<double> want = reduce_ref(r, per, static_cast<double>(per.size()));
          Tensors in = {testing::fortran(p), testing::gapped(tg)};
          if (weighting) in.push_back(w);
          Tensor y = loss("binary_cross_entropy", in, {{"reduction", std::string(r)}});
          SCOPED_TRACE(shape_str(s) + " " + dtype_name(t) + " weighting " + std::to_string(weighting) + " " + r);
          EXPECT_TRUE(all_close(y, want, testing::rtol_for(t) * 2, testing::rtol_for(t) * 2));
        }
}

TEST(BinaryCrossEntropy, LogIsClampedAndRangeChecked) {
  // p = 0 and p = 1 give log terms of -100, not inf.
  Tensor p = testing::from_doubles({0, 1, 0, 1}, DType::Float32), t = testing::from_doubles({1, 0, 0, 1}, DType::Float32);
  EXPECT_EQ(values(loss("binary_cross_entropy", {p, t}, {{"reduction", std::string("none")}})),
            (std::vector<double>{100, 100, 0, 0}));
  auto bce = [](Tensors in, Attrs a = {}) { return loss("binary_cross_entropy", in, a); };
  PJ_EXPECT_ERROR(bce({testing::from_doubles({0.5, 1.5}, DType::Float32), testing::from_doubles({0, 1}, DType::Float32)}),
                  Value, "binary_cross_entropy: all elements of input must be between 0 and 1");
  PJ_EXPECT_ERROR(bce({testing::from_doubles({kNaN}, DType::Float64), testing::from_doubles({0}, DType::Float64)}, {{"reduction", std::string("none")}}),
                  Value, "binary_cross_entropy: all elements of input must be between 0 and 1");
  PJ_EXPECT_ERROR(bce({uniform({3, 1}, DType::Float32, 0, 1, 1), uniform({3}, DType::Float32, 0, 1, 1)}), Value,
                  "binary_cross_entropy: target shape (3,) must be the same as input shape (3, 1)");
  PJ_EXPECT_ERROR(bce({uniform({3, 2}, DType::Float32, 0, 1, 1), uniform({3, 2}, DType::Float32, 0, 1, 1),
                       uniform({3}, DType::Float32, 0, 1, 1)}),
                  Value, "binary_cross_entropy: weight of shape (3,) cannot be broadcast to input shape (3, 2)");
  PJ_EXPECT_ERROR(bce({uniform({3}, DType::Float32, 0, 1, 1), testing::iota({3}, DType::Int32)}), Type,
                  "binary_cross_entropy: target must be Float32 or Float64, but got Int32");
  PJ_EXPECT_ERROR(bce({p}), Type, "binary_cross_entropy() takes 2 or 3 tensor inputs but 1 were given");
}

TEST(BinaryCrossEntropyWithLogits, EveryOption) {
  const Shape shapes[] = {{}, {5}, {3, 4}, {2, 3, 5}, {0, 2}, {200, 301}};
  for (DType t : kFloats)
    for (const Shape& s : shapes)
      for (bool weighted : {false, true})
        for (bool pos : {false, true})
          for (const char* r : kReductions) {
            Tensor x = uniform(s, t, -30, 30, 1), tg = uniform(s, t, 0, 1, 2);
            Shape last = s.empty() ? s : Shape{s.back()};
            Tensor w = uniform(s, t, 0, 2, 3), pw = uniform(last, t, 0.5, 3, 4);
            std::vector<double> per;
            for (int64_t i = 0; i < x.numel(); ++i)
              per.push_back(ref_bce_logits(x.item_double(i), tg.item_double(i), weighted ? w.item_double(i) : 1.0,
                                           pos ? testing::bcast_item(pw, s, i) : 1.0));
            std::vector<double> want = reduce_ref(r, per, static_cast<double>(per.size()));
            Tensors in = {testing::fortran(x), tg};
            Attrs a{{"reduction", std::string(r)}};
            if (weighted) in.push_back(testing::gapped(w));
            if (pos) in.push_back(pw);
            if (pos && !weighted) a.set("has_pos_weight", true);
            Tensor y = loss("binary_cross_entropy_with_logits", in, a);
            SCOPED_TRACE(shape_str(s) + " " + dtype_name(t) + (weighted ? " weighted" : "") + (pos ? " pos" : "") + " " + r);
            EXPECT_TRUE(all_close(y, want, testing::rtol_for(t) * 4, testing::rtol_for(t) * 4));
          }
}

TEST(BinaryCrossEntropyWithLogits, StableForLargeLogitsAndErrors) {
  Tensor x = testing::from_doubles({1000, -1000, 0}, DType::Float32), t = testing::from_doubles({0, 1, 1}, DType::Float32);
  std::vector<double> y = values(loss("binary_cross_entropy_with_logits", {x, t}, {{"reduction", std::string("none")}}));
  EXPECT_EQ(y[0], 1000);
  EXPECT_EQ(y[1], 1000);
  EXPECT_NEAR(y[2], std::log(2.0), 1e-7);
  // The same on a tensor large enough for oneDNN's vectorised softplus.
  Tensor bx = Tensor::empty({3 * 20000}, DType::Float32), bt = Tensor::empty({3 * 20000}, DType::Float32);
  for (int64_t i = 0; i < bx.numel(); ++i) {
    testing::set_item(bx, i, x.item_double(i % 3));
    testing::set_item(bt, i, t.item_double(i % 3));
  }
  std::vector<double> by = values(loss("binary_cross_entropy_with_logits", {bx, bt}, {{"reduction", std::string("none")}}));
  for (int64_t i = 0; i < bx.numel(); ++i) ASSERT_NEAR(by[i], y[i % 3], 1e-6 * (1 + y[i % 3])) << i;
  auto bl = [](Tensors in, Attrs a = {}) { return loss("binary_cross_entropy_with_logits", in, a); };
  Tensor a = uniform({3, 2}, DType::Float32, -1, 1, 1);
  PJ_EXPECT_ERROR(bl({a, uniform({2, 3}, DType::Float32, 0, 1, 1)}), Value,
                  "binary_cross_entropy_with_logits: target shape (2, 3) must be the same as input shape (3, 2)");
  PJ_EXPECT_ERROR(bl({a, a, uniform({3}, DType::Float32, 0, 1, 1)}), Value,
                  "binary_cross_entropy_with_logits: weight of shape (3,) cannot be broadcast to input shape (3, 2)");
  PJ_EXPECT_ERROR(bl({a, a, uniform({4, 3, 2}, DType::Float32, 0, 1, 1)}, {{"has_pos_weight", true}}), Value,
                  "binary_cross_entropy_with_logits: pos_weight of shape (4, 3, 2) cannot be broadcast to input shape (3, 2)");
  PJ_EXPECT_ERROR(bl({a, a, a}, {{"has_weight", false}}), Type,
                  "binary_cross_entropy_with_logits() got 3 tensor inputs but has_weight=False and "
                  "has_pos_weight=False need 2");
  PJ_EXPECT_ERROR(bl({a, a, a, a}, {{"has_pos_weight", false}}), Type,
                  "binary_cross_entropy_with_logits() got 4 tensor inputs but has_weight=True and "
                  "has_pos_weight=False need 3");
  PJ_EXPECT_ERROR(bl({a}), Type, "binary_cross_entropy_with_logits() takes 2 to 4 tensor inputs but 1 were given");
  PJ_EXPECT_ERROR(bl({a, a, testing::iota({2}, DType::Int64)}), Type,
                  "binary_cross_entropy_with_logits: weight must be Float32 or Float64, but got Int64");
}

TEST(Losses, SumsDoNotDependOnThreadCount) {
  const int saved = get_num_threads();
  auto run_all = [] {
    std::vector<double> r;
    for (DType t : kFloats) {
      Tensor x = uniform({3000, 7, 11}, t, -3, 3, 1);
      Tensor tgt = targets({3000, 11}, 7, DType::Int64, -100, 2);
      for (const char* red : {"mean", "sum"}) {
        Attrs a{{"reduction", std::string(red)}, {"label_smoothing", 0.1}};
        r.push_back(loss("cross_entropy", {x, tgt}, a).item_double());
        r.push_back(loss("mse_loss", {x, uniform({11}, t, 0, 1, 3)}, {{"reduction", std::string(red)}}).item_double());
        r.push_back(loss("binary_cross_entropy_with_logits", {x, uniform({3000, 7, 11}, t, 0, 1, 4)},
                         {{"reduction", std::string(red)}})
                        .item_double());
      }
    }
    return r;
  };
  set_num_threads(1);
  auto one = run_all();
  set_num_threads(std::max(saved, 3));
  auto many = run_all();
  set_num_threads(saved);
  EXPECT_EQ(one, many);
}

}  // namespace
}  // namespace pj
