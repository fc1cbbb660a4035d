// The initialiser fills (kernels/random.h: init_uniform, init_normal, init_truncated_normal):
// bounds that hold for every value, moments and quantiles against the distributions' formulas
// over large samples, the truncated normal in each sampling regime (the normal with retries, a
// narrow interval, both tails), determinism per seed and across thread counts, and errors.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/random.h"
#include "kernels/threading.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::values;

Tensor init(const char* op, DType t, int64_t n, std::vector<std::pair<const char*, double>> params) {
  Attrs a{{"shape", IntList{n}}, {"dtype", t}};
  for (auto& [k, v] : params) a.set(k, v);
  return call_op1(op, {}, a);
}

struct Stats {
  double mean = 0, sd = 0, lo = INFINITY, hi = -INFINITY;
};

Stats stats(const Tensor& x) {
  Stats s;
  double sum = 0, sq = 0;
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double v = x.item_double(i);
    sum += v;
    s.lo = std::min(s.lo, v);
    s.hi = std::max(s.hi, v);
  }
  s.mean = sum / n;
  for (int64_t i = 0; i < n; ++i) sq += (x.item_double(i) - s.mean) * (x.item_double(i) - s.mean);
  s.sd = std::sqrt(sq / n);
  return s;
}

double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }
double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Mean and standard deviation of N(mean, sigma^2) conditioned on [a, b].
void truncated_moments(double mean, double sigma, double a, double b, double* m, double* sd) {
  const double al = (a - mean) / sigma, be = (b - mean) / sigma;
  const double z = Phi(be) - Phi(al);
  const double pa = std::isinf(al) ? 0 : phi(al), pb = std::isinf(be) ? 0 : phi(be);
  const double aa = std::isinf(al) ? 0 : al * pa, bb = std::isinf(be) ? 0 : be * pb;
  *m = mean + sigma * (pa - pb) / z;
  *sd = sigma * std::sqrt(1 + (aa - bb) / z - ((pa - pb) / z) * ((pa - pb) / z));
}

constexpr int64_t kN = 400000;

TEST(InitFill, UniformStaysInItsBoundsAndIsFlat) {
  set_seed(3);
  for (DType t : {DType::Float32, DType::Float64}) {
    for (double bound : {0.07, 1.0 / std::sqrt(9216.0), 3.5}) {
      Tensor x = init("init_uniform", t, kN, {{"low", -bound}, {"high", bound}});
      ASSERT_EQ(x.dtype(), t);
      const Stats s = stats(x);
      const double b = t == DType::Float32 ? static_cast<double>(static_cast<float>(bound)) : bound;
      EXPECT_GE(s.lo, -b);
      EXPECT_LE(s.hi, b);
      EXPECT_GT(s.hi, b * (1 - 1e-4));  // the whole interval is reached
      EXPECT_LT(s.lo, -b * (1 - 1e-4));
      EXPECT_NEAR(s.mean, 0, 0.01 * bound);
      EXPECT_NEAR(s.sd, bound / std::sqrt(3.0), 0.01 * bound);
      // Flat: each tenth of the interval holds a tenth of the values.
      std::vector<int64_t> bins(10);
      for (int64_t i = 0; i < kN; ++i)
        ++bins[std::min<int64_t>(9, static_cast<int64_t>((x.item_double(i) + bound) / (2 * bound) * 10))];
      for (int64_t c : bins) EXPECT_NEAR(static_cast<double>(c) / kN, 0.1, 0.004);
    }
  }
  Tensor off = init("init_uniform", DType::Float32, kN, {{"low", 2.0}, {"high", 5.0}});
  const Stats s = stats(off);
  EXPECT_GE(s.lo, 2.0);
  EXPECT_LE(s.hi, 5.0);
  EXPECT_NEAR(s.mean, 3.5, 0.01);
}

TEST(InitFill, NormalHasItsMomentsAndQuantiles) {
  set_seed(5);
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor x = init("init_normal", t, kN, {{"mean", 0.5}, {"sigma", 0.02}});
    const Stats s = stats(x);
    EXPECT_NEAR(s.mean, 0.5, 0.02 * 0.01);
    EXPECT_NEAR(s.sd, 0.02, 0.02 * 0.01);
    // The standardised CDF at a few points (the float32 log and sincos polynomials included).
    for (double q : {-2.5, -1.5, -0.5, 0.0, 0.7, 1.96, 3.0}) {
      int64_t below = 0;
      for (int64_t i = 0; i < kN; ++i) below += (x.item_double(i) - 0.5) / 0.02 < q;
      EXPECT_NEAR(static_cast<double>(below) / kN, Phi(q), 0.003) << dtype_name(t) << " at " << q;
    }
  }
  Tensor zero = init("init_normal", DType::Float32, 100, {{"mean", 1.25}, {"sigma", 0.0}});
  EXPECT_EQ(values(zero), std::vector<double>(100, 1.25));
}

TEST(InitFill, TruncatedNormalInEachRegime) {
  set_seed(9);
  struct Case {
    double mean, sigma, a, b;
    const char* what;
  };
  for (const Case& c : {Case{0, 0.01, -2, 2, "MindSpore's default: bounds far out, a plain normal"},
                        Case{0, 0.01, -0.02, 0.02, "two sigmas: the normal, 5% redrawn"},
                        Case{0.1, 1, -1.2, 1.4, "just wide enough for the normal, many redrawn"},
                        Case{0, 1, -0.5, 1.0, "narrow around the mean: uniform proposal"},
                        Case{0, 1, 0.5, 0.6, "narrow off the mean: uniform proposal"},
                        Case{0, 1, 3.0, INFINITY, "right tail: exponential proposal"},
                        Case{2, 0.5, -INFINITY, 0.0, "left tail, mirrored"},
                        Case{0, 1, 2.0, 2.5, "a tail slice"}}) {
    for (DType t : {DType::Float32, DType::Float64}) {
      Tensor x = init("init_truncated_normal", t, kN, {{"mean", c.mean}, {"sigma", c.sigma}, {"a", c.a}, {"b", c.b}});
      const Stats s = stats(x);
      const double af = t == DType::Float32 ? static_cast<double>(static_cast<float>(c.a)) : c.a;
      const double bf = t == DType::Float32 ? static_cast<double>(static_cast<float>(c.b)) : c.b;
      EXPECT_GE(s.lo, af) << c.what;
      EXPECT_LE(s.hi, bf) << c.what;
      double m, sd;
      truncated_moments(c.mean, c.sigma, c.a, c.b, &m, &sd);
      EXPECT_NEAR(s.mean, m, 0.01 * sd + 1e-7) << c.what << " " << dtype_name(t);
      EXPECT_NEAR(s.sd, sd, 0.01 * sd) << c.what << " " << dtype_name(t);
    }
  }
}

TEST(InitFill, SameSeedSameValuesAnyThreadCount) {
  const int saved = get_num_threads();
  struct Op {
    const char* name;
    std::vector<std::pair<const char*, double>> params;
  };
  for (const Op& op : {Op{"init_uniform", {{"low", -1.0}, {"high", 1.0}}}, Op{"init_normal", {{"mean", 0.0}, {"sigma", 1.0}}},
                       Op{"init_truncated_normal", {{"mean", 0.0}, {"sigma", 1.0}, {"a", -1.3}, {"b", 1.3}}},
                       Op{"init_truncated_normal", {{"mean", 0.0}, {"sigma", 1.0}, {"a", 2.0}, {"b", 2.5}}}}) {
    for (DType t : {DType::Float32, DType::Float64}) {
      for (int64_t n : {int64_t{1}, int64_t{37}, int64_t{155217}}) {  // partial groups and blocks
        set_num_threads(1);
        set_seed(42);
        Tensor x1 = init(op.name, t, n, op.params), x2 = init(op.name, t, n, op.params);
        set_num_threads(4);
        set_seed(42);
        Tensor y1 = init(op.name, t, n, op.params), y2 = init(op.name, t, n, op.params);
        EXPECT_EQ(values(x1), values(y1)) << op.name;
        EXPECT_EQ(values(x2), values(y2)) << op.name;
        if (n > 1) EXPECT_NE(values(x1), values(x2)) << op.name;  // the state advances
        Attrs a{{"shape", IntList{n}}, {"dtype", t}, {"seed", int64_t(7)}};
        for (auto& [k, v] : op.params) a.set(k, v);
        EXPECT_EQ(values(call_op1(op.name, {}, a)), values(call_op1(op.name, {}, a))) << op.name;
      }
    }
  }
  set_num_threads(saved);
}

TEST(InitFill, Errors) {
  PJ_EXPECT_ERROR(init("init_normal", DType::Float32, 4, {{"mean", 0.0}, {"sigma", -1.0}}), Value,
                  "normal initializer: sigma must be >= 0, got -1");
  PJ_EXPECT_ERROR(init("init_truncated_normal", DType::Float32, 4, {{"mean", 0.0}, {"sigma", 0.0}, {"a", -2.0}, {"b", 2.0}}),
                  Value, "truncated normal initializer: sigma must be > 0, got 0");
  PJ_EXPECT_ERROR(init("init_truncated_normal", DType::Float32, 4, {{"mean", 0.0}, {"sigma", 1.0}, {"a", 2.0}, {"b", 2.0}}),
                  Value, "truncated normal initializer: a must be less than b, got a = 2, b = 2");
  PJ_EXPECT_ERROR(init("init_uniform", DType::Int32, 4, {{"low", 0.0}, {"high", 1.0}}), Type,
                  "init_uniform does not support dtype Int32");
  EXPECT_EQ(init("init_uniform", DType::Float32, 0, {{"low", 0.0}, {"high", 1.0}}).numel(), 0);
}

}  // namespace
}  // namespace pj
