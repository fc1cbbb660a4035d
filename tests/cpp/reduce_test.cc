// Reductions, cumsum and softmax against plain double-precision reference loops, over 0-d, empty,
// size-1 and odd shapes, every axis combination (negative too, keepdims both ways, axis=None),
// contiguous, transposed and strided inputs, and every dtype each op takes; plus numpy's error
// messages, NaN and empty-input rules, and large inputs that take the blocked/parallel paths.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/dnnl_context.h"
#include "kernels/threading.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

const DType kAllDTypes[] = {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- reference ---------------------------------------------------------------------------------

// The input values of each output's reduction group, both in logical (row-major) order.
std::vector<std::vector<double>> groups(const Tensor& x, const std::vector<int>& axes) {
  const int nd = x.ndim();
  std::vector<bool> red(nd, false);
  for (int a : axes) red[a] = true;
  int64_t kn = 1;
  for (int d = 0; d < nd; ++d)
    if (!red[d]) kn *= x.dim(d);
  std::vector<std::vector<double>> g(kn);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rem = i, o = 0, mul = 1;
    for (int d = nd - 1; d >= 0; --d) {
      int64_t idx = rem % x.dim(d);
      rem /= x.dim(d);
      if (!red[d]) {
        o += idx * mul;
        mul *= x.dim(d);
      }
    }
    g[o].push_back(x.item_double(i));
  }
  return g;
}

double ref_reduce(const std::string& op, const std::vector<double>& v, int64_t ddof = 0) {
  const double n = static_cast<double>(v.size());
  bool nan = false;
  for (double x : v) nan = nan || std::isnan(x);
  if (op == "sum" || op == "mean") {
    double s = 0;
    for (double x : v) s += x;
    return op == "sum" ? s : s / n;
  }
  if (op == "prod") {
    double p = 1;
    for (double x : v) p *= x;
    return p;
  }
  if (op == "max" || op == "min") {
    if (nan) return kNaN;
    double m = v[0];
    for (double x : v) m = op == "max" ? std::max(m, x) : std::min(m, x);
    return m;
  }
  if (op == "all" || op == "any") {
    bool r = op == "all";
    for (double x : v) r = op == "all" ? (r && x != 0) : (r || x != 0);
    return r;
  }
  if (op == "var" || op == "std") {
    double mean = ref_reduce("mean", v), ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    double var = ss / std::max(n - ddof, 0.0);
    return op == "var" ? var : std::sqrt(var);
  }
  if (op == "logsumexp") {
    if (nan) return kNaN;
    double m = -kInf;
    for (double x : v) m = std::max(m, x);
    if (std::isinf(m)) return m;
    double s = 0;
    for (double x : v) s += std::exp(x - m);
    return m + std::log(s);
  }
  if (op == "argmax" || op == "argmin") {
    size_t best = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (std::isnan(v[best])) break;
      if (std::isnan(v[i]) || (op == "argmax" ? v[i] > v[best] : v[i] < v[best])) best = i;
    }
    return static_cast<double>(best);
  }
  ADD_FAILURE() << "no reference for " << op;
  return kNaN;
}

// Integer sum/prod with numpy's int64 wrap-around (the double reference would round).
int64_t ref_int(const std::string& op, const std::vector<double>& v) {
  uint64_t r = op == "sum" ? 0 : 1;
  for (double x : v) {
    uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(x));
    r = op == "sum" ? r + u : r * u;
  }
  return static_cast<int64_t>(r);
}

DType expected_dtype(const std::string& op, DType in) {
  if (op == "sum" || op == "prod") return is_floating(in) ? in : DType::Int64;
  if (op == "mean" || op == "var" || op == "std" || op == "logsumexp") return to_floating(in);
  if (op == "all" || op == "any") return DType::Bool;
  if (op == "argmax" || op == "argmin") return DType::Int64;
  return in;
}

// got vs want for an output of dtype `t`; `scale` bounds the size of the terms summed.
::testing::AssertionResult close(double got, double want, DType t, double scale) {
  if (t == DType::Float32) want = static_cast<float>(want);  // overflow to inf like the kernel
  if (std::isnan(want)) {
    if (std::isnan(got)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want nan";
  }
  if (std::isinf(want) || !is_floating(t)) {
    if (got == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want " << want;
  }
  double rtol = t == DType::Float32 ? 2e-6 : 1e-13;
  double tol = rtol * (std::abs(want) + scale) + 1e-300;
  if (std::abs(got - want) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (tol " << tol << ")";
}

// ---- cases -------------------------------------------------------------------------------------

// None (as an empty optional: `all`), (), every single axis both signs, every pair and triple.
std::vector<std::pair<bool, IntList>> axis_specs(int nd) {
  std::vector<std::pair<bool, IntList>> specs = {{true, {}}, {false, {}}};
  for (int a = 0; a < nd; ++a) {
    specs.push_back({false, {a}});
    specs.push_back({false, {a - nd}});
  }
  for (int a = 0; a < nd; ++a)
    for (int b = a + 1; b < nd; ++b) {
      specs.push_back({false, {a, b}});
      specs.push_back({false, {b - nd, a}});
      for (int c = b + 1; c < nd; ++c) specs.push_back({false, {c, a - nd, b}});
    }
  return specs;
}

std::vector<Shape> test_shapes() {
  return {{},        {0},       {1},          {7},          {33},         {1000},
          {3, 5},    {0, 3},    {3, 0},       {1, 7},       {7, 1},       {2, 3, 4},
          {4, 1, 33}, {2, 0, 3}, {3, 4, 5, 2}, {17, 65}};
}

// The contiguous input, its reversed-dims view, and a stride-2 view, all of shape `s`.
std::vector<std::pair<std::string, Tensor>> inputs_of(const Shape& s, DType t, unsigned seed) {
  std::vector<std::pair<std::string, Tensor>> in;
  in.push_back({"contiguous", testing::random(s, t, seed)});
  if (s.size() >= 2) {
    Shape rs(s.rbegin(), s.rend());
    in.push_back({"transposed", testing::reversed_view(testing::random(rs, t, seed + 1))});
  }
  if (!s.empty()) in.push_back({"strided", testing::strided_random(s, t, seed + 2)});
  return in;
}

std::vector<int> normalised(const std::pair<bool, IntList>& spec, int nd) {
  std::vector<int> axes;
  if (spec.first) {
    for (int d = 0; d < nd; ++d) axes.push_back(d);
  } else {
    for (int64_t a : spec.second) axes.push_back(static_cast<int>(a < 0 ? a + nd : a));
  }
  return axes;
}

std::string spec_str(const std::pair<bool, IntList>& spec) {
  if (spec.first) return "None";
  std::string r = "(";
  for (int64_t a : spec.second) r += std::to_string(a) + ",";
  return r + ")";
}

Attrs reduce_attrs(const std::pair<bool, IntList>& spec, bool keepdims) {
  Attrs a;
  if (spec.first) a.set("axis", std::monostate{});
  else a.set("axis", spec.second);
  a.set("keepdims", keepdims);
  return a;
}

Shape expected_shape(const Shape& s, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  for (int d = 0; d < static_cast<int>(s.size()); ++d) {
    bool r = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!r) out.push_back(s[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

// Checks `op` on x over one axis spec against the reference; returns false after a failure.
bool check_reduce(const std::string& op, const Tensor& x, const std::pair<bool, IntList>& spec,
                  bool keepdims, const std::string& what, int64_t ddof = -1,
                  const std::vector<std::vector<double>>* groups_of_x = nullptr) {
  const int nd = x.ndim();
  Attrs attrs = reduce_attrs(spec, keepdims);
  if (ddof >= 0) attrs.set("ddof", ddof);
  std::vector<int> axes = normalised(spec, nd);
  const auto g = groups_of_x ? *groups_of_x : groups(x, axes);
  bool empty_group = !g.empty() && g[0].empty();
  if ((op == "max" || op == "min") && (x.numel() == 0 && !axes.empty()) &&
      std::any_of(axes.begin(), axes.end(), [&](int a) { return x.dim(a) == 0; })) {
    EXPECT_THROW(call_op1(op, {x}, attrs), Error) << op << " " << what;
    return true;
  }
  Tensor y = call_op1(op, {x}, attrs);
  std::string ctx = op + " " + what + " shape " + shape_str(x.shape()) + " dtype " +
                    dtype_name(x.dtype()) + " axis " + spec_str(spec) + " keepdims " +
                    std::to_string(keepdims);
  EXPECT_EQ(y.shape(), expected_shape(x.shape(), axes, keepdims)) << ctx;
  EXPECT_EQ(y.dtype(), expected_dtype(op, x.dtype())) << ctx;
  if (y.numel() != static_cast<int64_t>(g.size())) return false;
  for (size_t o = 0; o < g.size(); ++o) {
    double got = y.item_double(o);
    if (y.dtype() == DType::Int64 && (op == "sum" || op == "prod")) {
      if (y.item_int(o) != ref_int(op, g[o])) {
        ADD_FAILURE() << ctx << " output " << o << ": got " << y.item_int(o) << " want " << ref_int(op, g[o]);
        return false;
      }
      continue;
    }
    double want = ref_reduce(op, g[o], ddof < 0 ? 0 : ddof);
    double scale = 0;
    for (double v : g[o]) scale += std::abs(v) * (op == "var" || op == "std" ? std::abs(v) : 1);
    if (op == "std") scale = std::sqrt(scale);
    if (op == "mean") scale /= std::max<size_t>(g[o].size(), 1);
    if (op == "var") scale /= std::max<size_t>(g[o].size(), 1);
    if (op == "prod") scale = 0;
    if (op == "logsumexp") {  // c + log(sum): the terms are as big as the largest |x|
      scale = 0;
      for (double v : g[o]) scale = std::max(scale, std::abs(v));
    }
    auto r = close(got, want, y.dtype(), scale);
    if (!r) {
      ADD_FAILURE() << ctx << " output " << o << ": " << r.message() << (empty_group ? " (empty)" : "");
      return false;
    }
  }
  return true;
}

// ---- the sweep ---------------------------------------------------------------------------------

void sweep(const std::vector<std::string>& ops, const std::vector<DType>& dtypes) {
  unsigned seed = 10;
  for (const Shape& s : test_shapes()) {
    for (DType t : dtypes) {
      for (auto& [what, x] : inputs_of(s, t, seed += 7)) {
        for (auto& spec : axis_specs(static_cast<int>(s.size()))) {
          for (bool keepdims : {false, true}) {
            for (const std::string& op : ops)
              if (!check_reduce(op, x, spec, keepdims, what)) return;
          }
        }
      }
    }
  }
}

TEST(Reduce, SumMeanProdMatchReference) {
  sweep({"sum", "mean", "prod"}, {std::begin(kAllDTypes), std::end(kAllDTypes)});
}

TEST(Reduce, MaxMinAllAnyMatchReference) {
  sweep({"max", "min", "all", "any"}, {std::begin(kAllDTypes), std::end(kAllDTypes)});
}

TEST(Reduce, VarStdLogsumexpMatchReference) {
  sweep({"var", "std", "logsumexp"}, {std::begin(kAllDTypes), std::end(kAllDTypes)});
}

TEST(Reduce, VarStdDdof) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
    for (Shape s : {Shape{7}, Shape{3, 5}, Shape{1, 4}, Shape{2, 3, 4}}) {
      for (auto& [what, x] : inputs_of(s, t, 5)) {
        for (auto& spec : axis_specs(static_cast<int>(s.size())))
          for (int64_t ddof : {0, 1, 2, 7})
            for (const char* op : {"var", "std"})
              ASSERT_TRUE(check_reduce(op, x, spec, false, what, ddof));
      }
    }
  }
}

// Single axes (both signs) and None (flattened), with keepdims both ways.
TEST(Reduce, ArgmaxArgminMatchReference) {
  unsigned seed = 3;
  for (const Shape& s : test_shapes()) {
    const int nd = static_cast<int>(s.size());
    for (DType t : kAllDTypes) {
      for (auto& [what, x] : inputs_of(s, t, seed += 5)) {
        std::vector<std::pair<bool, IntList>> specs = {{true, {}}};
        for (int a = 0; a < nd; ++a) {
          specs.push_back({false, {a}});
          specs.push_back({false, {a - nd}});
        }
        for (auto& spec : specs) {
          std::vector<int> axes = normalised(spec, nd);
          bool empty = std::any_of(axes.begin(), axes.end(), [&](int a) { return s[a] == 0; });
          for (bool keepdims : {false, true}) {
            for (const char* op : {"argmax", "argmin"}) {
              Attrs attrs;
              if (spec.first) attrs.set("axis", std::monostate{});
              else attrs.set("axis", spec.second[0]);
              attrs.set("keepdims", keepdims);
              if (empty) {
                EXPECT_TRUE(testing::raises([&] { call_op1(op, {x}, attrs); }, ErrorKind::Value,
                                            std::string("attempt to get ") + op + " of an empty sequence"));
                continue;
              }
              ASSERT_TRUE(check_reduce(op, x, spec, keepdims, what));
            }
          }
        }
      }
    }
  }
}

// ---- numpy's rules on dtypes, empty inputs, NaN ------------------------------------------------

TEST(Reduce, ResultDtypes) {
  auto dt = [](const char* op, DType t) { return call_op1(op, {testing::iota({3}, t)}).dtype(); };
  EXPECT_EQ(dt("sum", DType::Bool), DType::Int64);
  EXPECT_EQ(dt("sum", DType::Int32), DType::Int64);
  EXPECT_EQ(dt("sum", DType::Float32), DType::Float32);
  EXPECT_EQ(dt("prod", DType::Int32), DType::Int64);
  EXPECT_EQ(dt("mean", DType::Int64), DType::Float32);
  EXPECT_EQ(dt("mean", DType::Bool), DType::Float32);
  EXPECT_EQ(dt("mean", DType::Float64), DType::Float64);
  EXPECT_EQ(dt("max", DType::Bool), DType::Bool);
  EXPECT_EQ(dt("min", DType::Int32), DType::Int32);
  EXPECT_EQ(dt("all", DType::Float32), DType::Bool);
  EXPECT_EQ(dt("any", DType::Int64), DType::Bool);
  EXPECT_EQ(dt("argmax", DType::Float32), DType::Int64);
  EXPECT_EQ(dt("var", DType::Int32), DType::Float32);
  EXPECT_EQ(dt("std", DType::Float64), DType::Float64);
  EXPECT_EQ(dt("logsumexp", DType::Int64), DType::Float32);
  EXPECT_EQ(dt("cumsum", DType::Bool), DType::Int64);
  EXPECT_EQ(dt("cumsum", DType::Int32), DType::Int64);
  EXPECT_EQ(dt("cumsum", DType::Float32), DType::Float32);
  EXPECT_EQ(dt("softmax", DType::Int32), DType::Float32);
  EXPECT_EQ(dt("log_softmax", DType::Float64), DType::Float64);
}

TEST(Reduce, EmptyReductions) {
  Tensor e = Tensor::empty({0}, DType::Float32);
  Tensor ei = Tensor::empty({2, 0}, DType::Int32);
  EXPECT_EQ(call_op1("sum", {e}).item_double(), 0);
  EXPECT_EQ(call_op1("prod", {e}).item_double(), 1);
  EXPECT_TRUE(std::isnan(call_op1("mean", {e}).item_double()));
  EXPECT_TRUE(std::isnan(call_op1("var", {e}).item_double()));
  EXPECT_EQ(call_op1("all", {e}).item_int(), 1);
  EXPECT_EQ(call_op1("any", {e}).item_int(), 0);
  EXPECT_EQ(call_op1("logsumexp", {e}).item_double(), -kInf);
  Tensor s = call_op1("sum", {ei}, Attrs{{"axis", IntList{1}}});
  ASSERT_EQ(s.shape(), Shape({2}));
  EXPECT_EQ(s.item_int(0), 0);
  EXPECT_EQ(s.item_int(1), 0);
  // max/min need an element in every reduced group; an empty *output* is fine.
  EXPECT_TRUE(testing::raises([&] { call_op1("max", {e}); }, ErrorKind::Value,
                              "zero-size array to reduction operation maximum which has no identity"));
  EXPECT_TRUE(testing::raises([&] { call_op1("min", {ei}, Attrs{{"axis", IntList{1}}}); }, ErrorKind::Value,
                              "zero-size array to reduction operation minimum which has no identity"));
  Tensor m = call_op1("max", {Tensor::empty({0, 3}, DType::Float32)}, Attrs{{"axis", IntList{1}}});
  EXPECT_EQ(m.shape(), Shape({0}));
  EXPECT_TRUE(testing::raises([&] { call_op1("argmin", {e}); }, ErrorKind::Value,
                              "attempt to get argmin of an empty sequence"));
}

TEST(Reduce, NaNPropagatesAndArgmaxFindsFirstNaN) {
  for (DType t : {DType::Float32, DType::Float64}) {
    for (int64_t n : {5, 40, 100000}) {
      Tensor x = testing::random({n}, t, 1);
      testing::set_item(x, n / 2, kNaN);
      testing::set_item(x, n - 1, kNaN);
      EXPECT_TRUE(std::isnan(call_op1("max", {x}).item_double()));
      EXPECT_TRUE(std::isnan(call_op1("min", {x}).item_double()));
      EXPECT_TRUE(std::isnan(call_op1("sum", {x}).item_double()));
      EXPECT_TRUE(std::isnan(call_op1("logsumexp", {x}).item_double()));
      EXPECT_EQ(call_op1("argmax", {x}).item_int(), n / 2);
      EXPECT_EQ(call_op1("argmin", {x}).item_int(), n / 2);
      // Down columns (outer mode) too.
      Tensor c = x.as_strided({n, 1}, {1, 1}, 0);
      EXPECT_EQ(call_op1("argmax", {c}, Attrs{{"axis", int64_t{0}}}).item_int(), n / 2);
      EXPECT_TRUE(std::isnan(call_op1("max", {c}, Attrs{{"axis", IntList{0}}}).item_double()));
    }
  }
}

TEST(Reduce, ArgmaxTakesFirstOfTies) {
  Tensor x = testing::from_doubles({1, 3, 0, 3, 3, -2, -2, 1}, DType::Float32);
  EXPECT_EQ(call_op1("argmax", {x}).item_int(), 1);
  EXPECT_EQ(call_op1("argmin", {x}).item_int(), 5);
  // A long run of equal values spreads over every lane; the first must still win.
  Tensor y = Tensor::zeros({1000}, DType::Int32);
  EXPECT_EQ(call_op1("argmax", {y}).item_int(), 0);
  testing::set_item(y, 517, 1);
  testing::set_item(y, 900, 1);
  EXPECT_EQ(call_op1("argmax", {y}).item_int(), 517);
  Tensor z = Tensor::zeros({4, 1000}, DType::Float64);
  testing::set_item(z, 2 * 1000 + 17, -1);
  testing::set_item(z, 3 * 1000 + 5, -1);
  EXPECT_EQ(call_op1("argmin", {z}).item_int(), 2017);
  Tensor zt = testing::reversed_view(z);  // (1000, 4), flattened in logical order
  EXPECT_EQ(call_op1("argmin", {zt}).item_int(), 5 * 4 + 3);
}

TEST(Reduce, IntegerSumWrapsLikeNumpy) {
  Tensor x = testing::from_ints({INT64_MAX, 1}, DType::Int64);
  EXPECT_EQ(call_op1("sum", {x}).item_int(), INT64_MIN);
  Tensor y = testing::from_ints({INT32_MAX, INT32_MAX}, DType::Int32);
  EXPECT_EQ(call_op1("sum", {y}).item_int(), 2 * int64_t{INT32_MAX});  // int64 accumulator
}

TEST(Reduce, VarIsTwoPassAccurate) {
  // A large mean and a small spread: E[x^2] - E[x]^2 in float32 would lose every digit.
  Tensor x = Tensor::empty({1001}, DType::Float32);
  for (int i = 0; i < 1001; ++i) testing::set_item(x, i, 10000.0 + (i % 7));
  std::vector<double> v = testing::to_doubles(x);
  double want = ref_reduce("var", v);
  EXPECT_NEAR(call_op1("var", {x}).item_double(), want, 1e-5 * want);
  EXPECT_NEAR(call_op1("std", {x}).item_double(), std::sqrt(want), 1e-5 * std::sqrt(want));
}

TEST(Reduce, LogsumexpIsStable) {
  Tensor x = testing::from_doubles({1000, 1000, -kInf}, DType::Float32);
  EXPECT_NEAR(call_op1("logsumexp", {x}).item_double(), 1000 + std::log(2.0), 1e-3);
  Tensor y = testing::from_doubles({-kInf, -kInf, -kInf, -kInf}, DType::Float64);
  Tensor r = call_op1("logsumexp", {y.as_strided({2, 2}, {2, 1}, 0)}, Attrs{{"axis", IntList{1}}});
  EXPECT_EQ(r.item_double(0), -kInf);
  EXPECT_EQ(r.item_double(1), -kInf);
  Tensor z = testing::from_doubles({1, kInf}, DType::Float64);
  EXPECT_EQ(call_op1("logsumexp", {z}).item_double(), kInf);
}

TEST(Reduce, AxisErrors) {
  Tensor x = testing::iota({2, 3}, DType::Float32);
  // normalize_axis (kernels/tensor.cc) says "tensor"; numpy says "array".
  EXPECT_TRUE(testing::raises([&] { call_op1("sum", {x}, Attrs{{"axis", IntList{3}}}); }, ErrorKind::Index,
                              "axis 3 is out of bounds for tensor of dimension 2"));
  EXPECT_TRUE(testing::raises([&] { call_op1("max", {x}, Attrs{{"axis", IntList{0, -3}}}); }, ErrorKind::Index,
                              "axis -3 is out of bounds for tensor of dimension 2"));
  EXPECT_TRUE(testing::raises([&] { call_op1("mean", {x}, Attrs{{"axis", IntList{1, -1}}}); }, ErrorKind::Value,
                              "duplicate value in 'axis'"));
  EXPECT_TRUE(testing::raises([&] { call_op1("argmax", {x}, Attrs{{"axis", int64_t{2}}}); }, ErrorKind::Index,
                              "axis 2 is out of bounds for tensor of dimension 2"));
  EXPECT_TRUE(testing::raises([&] { call_op1("argmax", {x}, Attrs{{"axis", IntList{0, 1}}}); }, ErrorKind::Type,
                              "argmax: 'axis' must be an integer or None"));
  EXPECT_TRUE(testing::raises([&] { call_op1("cumsum", {x}, Attrs{{"axis", int64_t{-3}}}); }, ErrorKind::Index,
                              "axis -3 is out of bounds for tensor of dimension 2"));
  EXPECT_TRUE(testing::raises([&] { call_op1("softmax", {x}, Attrs{{"axis", int64_t{2}}}); }, ErrorKind::Index,
                              "axis 2 is out of bounds for tensor of dimension 2"));
  // An int axis works like a one-element tuple; 0-d tensors take axis 0 / -1 (normalize_axis).
  EXPECT_EQ(call_op1("sum", {x}, Attrs{{"axis", int64_t{-1}}}).shape(), Shape({2}));
  Tensor s = Tensor::scalar(2.5, DType::Float64);
  EXPECT_EQ(call_op1("sum", {s}, Attrs{{"axis", IntList{0}}}).item_double(), 2.5);
}

// ---- big inputs: blocked partials, outer-mode tiles, threads ----------------------------------

TEST(Reduce, LargeInputsMatchReference) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
    for (Shape s : {Shape{131, 1031}, Shape{40000, 3}, Shape{3, 40000}}) {
      Tensor base = testing::random(s, t, 11);
      Shape rs(s.rbegin(), s.rend());
      Tensor tr = testing::reversed_view(testing::random(rs, t, 12));
      for (const Tensor& x : {base, tr}) {
        for (std::pair<bool, IntList> spec : {std::pair<bool, IntList>{true, {}}, {false, {0}}, {false, {1}}}) {
          const auto g = groups(x, normalised(spec, 2));
          for (const char* op : {"sum", "mean", "max", "argmin", "var", "logsumexp", "any"})
            ASSERT_TRUE(check_reduce(op, x, spec, false, "large", -1, &g));
        }
      }
    }
  }
}

TEST(Reduce, ResultDoesNotDependOnThreadCount) {
  const int saved = get_num_threads();
  Tensor x = testing::random({3001, 517}, DType::Float32, 4);
  std::vector<std::vector<double>> results;
  for (int threads : {1, 2, 3, 8}) {
    set_num_threads(threads);
    std::vector<double> r;
    for (std::pair<bool, IntList> spec : {std::pair<bool, IntList>{true, {}}, {false, {0}}, {false, {1}}})
      for (const char* op : {"sum", "var"}) {
        auto v = testing::to_doubles(call_op1(op, {x}, reduce_attrs(spec, false)));
        r.insert(r.end(), v.begin(), v.end());
      }
    results.push_back(r);
  }
  set_num_threads(saved);
  for (size_t i = 1; i < results.size(); ++i) EXPECT_EQ(results[i], results[0]) << "thread setting " << i;
}

// ---- cumsum ------------------------------------------------------------------------------------

TEST(Cumsum, MatchesReference) {
  unsigned seed = 1;
  for (const Shape& s : test_shapes()) {
    const int nd = static_cast<int>(s.size());
    for (DType t : kAllDTypes) {
      for (auto& [what, x] : inputs_of(s, t, seed += 3)) {
        std::vector<int64_t> axes = {-100};  // None
        for (int a = 0; a < nd; ++a) {
          axes.push_back(a);
          axes.push_back(a - nd);
        }
        for (int64_t axis : axes) {
          Attrs attrs;
          if (axis == -100) attrs.set("axis", std::monostate{});
          else attrs.set("axis", axis);
          Tensor y = call_op1("cumsum", {x}, attrs);
          std::string ctx = what + " " + shape_str(s) + " " + dtype_name(t) + " axis " + std::to_string(axis);
          ASSERT_EQ(y.dtype(), is_floating(t) ? t : DType::Int64) << ctx;
          std::vector<double> v = testing::to_doubles(x), want(v.size());
          if (axis == -100) {
            ASSERT_EQ(y.shape(), Shape({x.numel()})) << ctx;
            double acc = 0;
            for (size_t i = 0; i < v.size(); ++i) want[i] = acc += v[i];
          } else {
            ASSERT_EQ(y.shape(), s) << ctx;
            int ax = static_cast<int>(axis < 0 ? axis + nd : axis);
            int64_t inner = 1;
            for (int d = ax + 1; d < nd; ++d) inner *= s[d];
            for (size_t i = 0; i < v.size(); ++i) {
              int64_t pos = (static_cast<int64_t>(i) / inner) % s[ax];
              want[i] = v[i] + (pos > 0 ? want[i - inner] : 0);
            }
          }
          for (size_t i = 0; i < v.size(); ++i) {
            auto r = close(y.item_double(i), want[i], y.dtype(), static_cast<double>(i + 1) * 4);
            ASSERT_TRUE(r) << ctx << " element " << i << ": " << r.message();
          }
        }
      }
    }
  }
}

// ---- softmax -----------------------------------------------------------------------------------

TEST(Softmax, MatchesReferenceOnEveryAxis) {
  unsigned seed = 20;
  for (const Shape& s : test_shapes()) {
    const int nd = static_cast<int>(s.size());
    for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
      for (auto& [what, x] : inputs_of(s, t, seed += 3)) {
        std::vector<int64_t> axes;
        for (int a = 0; a < std::max(nd, 1); ++a) {
          axes.push_back(a);
          axes.push_back(a - std::max(nd, 1));
        }
        for (int64_t axis : axes) {
          for (bool log : {false, true}) {
            const char* op = log ? "log_softmax" : "softmax";
            Tensor y = call_op1(op, {x}, Attrs{{"axis", axis}});
            std::string ctx = std::string(op) + " " + what + " " + shape_str(s) + " " + dtype_name(t) +
                              " axis " + std::to_string(axis);
            ASSERT_EQ(y.shape(), s) << ctx;
            ASSERT_EQ(y.dtype(), to_floating(t)) << ctx;
            // Reference: group the elements along the axis (reduce over it), then normalise.
            std::vector<int> ax = nd ? std::vector<int>{static_cast<int>(axis < 0 ? axis + nd : axis)}
                                     : std::vector<int>{};
            std::vector<double> v = testing::to_doubles(x);
            std::vector<double> lse(v.size());
            auto g = groups(x, ax);
            // Map each element to its group's logsumexp.
            std::vector<double> glse(g.size());
            for (size_t o = 0; o < g.size(); ++o) glse[o] = ref_reduce("logsumexp", g[o]);
            for (size_t i = 0; i < v.size(); ++i) {
              int64_t rem = i, o = 0, mul = 1;
              for (int d = nd - 1; d >= 0; --d) {
                int64_t idx = rem % s[d];
                rem /= s[d];
                if (d != ax[0]) {
                  o += idx * mul;
                  mul *= s[d];
                }
              }
              double want = log ? v[i] - glse[o] : std::exp(v[i] - glse[o]);
              // log_softmax runs on pijit's loop (std::log), so both are held to float32 accuracy.
              double tol = (y.dtype() == DType::Float32 ? 3e-6 : 1e-13) * (1 + std::abs(want));
              ASSERT_NEAR(y.item_double(i), want, tol) << ctx << " element " << i;
            }
          }
        }
      }
    }
  }
}

TEST(Softmax, LargeValuesDoNotOverflowAndPrimitivesAreCached) {
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor x = testing::from_doubles({1000, 1001, 1002}, t);
    Tensor y = call_op1("softmax", {x});
    double e = std::exp(1.0), z = 1 + e + e * e;
    EXPECT_NEAR(y.item_double(0), 1 / z, 1e-6);
    EXPECT_NEAR(y.item_double(2), e * e / z, 1e-6);
    Tensor l = call_op1("log_softmax", {x});
    EXPECT_NEAR(l.item_double(0), -std::log(z), 1e-5);
  }
  // float32 over the innermost axis runs oneDNN's primitive, created once then reused.
  Tensor x = testing::random({5, 9}, DType::Float32, 1);
  call_op1("softmax", {x}, Attrs{{"axis", int64_t{-1}}});
  int64_t hits = PrimitiveCache::instance().hits(), misses = PrimitiveCache::instance().misses();
  call_op1("softmax", {x}, Attrs{{"axis", int64_t{1}}});
  EXPECT_EQ(PrimitiveCache::instance().hits(), hits + 1);
  // Other axes run the loop (oneDNN's kernel for them is its slow reference one).
  call_op1("log_softmax", {x}, Attrs{{"axis", int64_t{0}}});
  EXPECT_EQ(PrimitiveCache::instance().hits(), hits + 1);
  EXPECT_EQ(PrimitiveCache::instance().misses(), misses);
}

// numpy's softmax of one row, in double: the maximum propagates NaN; x - max, exp, sum, divide (or
// (x - max) - log(sum)), so a NaN or +inf makes the row NaN, -inf entries give 0 (log: -inf) and an
// all -inf row is NaN. PyTorch gives the same values.
std::vector<double> numpy_softmax(const std::vector<double>& x, bool log) {
  double mx = -kInf;
  for (double v : x) mx = (std::isnan(v) || v > mx) ? v : mx;
  double sum = 0;
  for (double v : x) sum += std::exp(v - mx);
  std::vector<double> y;
  for (double v : x) y.push_back(log ? (v - mx) - std::log(sum) : std::exp(v - mx) / sum);
  return y;
}

// Rows holding NaN, +inf or -inf, among finite rows: float32 over the innermost axis (oneDNN's
// softmax, whose maximum drops a NaN: [1, nan] gave [0, nan]), over another axis and log_softmax
// (the loop), and float64 all give numpy's values; few rows and many (the parallel scan), and the
// finite rows beside them are untouched.
TEST(Softmax, NonFiniteRowsGiveNumpysValuesOnEveryPath) {
  const std::vector<std::vector<double>> special = {
      {1, kNaN, 2, 0}, {1, kInf, 2, 0},      {1, -kInf, 2, 0}, {-kInf, -kInf, -kInf, -kInf},
      {kInf, kInf, 1, 0}, {kInf, -kInf, 0, 1}, {kNaN, kNaN, kNaN, kNaN}, {-kInf, 3, -kInf, 1}};
  for (int64_t rows : {8, 3000}) {
    for (int64_t n : {4, 4 * 37}) {  // n = 148: each special row tiled, so oneDNN's vector body sees it
      std::vector<double> v;
      std::vector<std::vector<double>> row_values;
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<double> row;
        for (int64_t i = 0; i < n; ++i)
          row.push_back(r % 5 == 2 ? special[(r / 5) % special.size()][i % 4] : std::sin(double(r * n + i)) * 3);
        row_values.push_back(row);
        v.insert(v.end(), row.begin(), row.end());
      }
      for (DType t : {DType::Float32, DType::Float64}) {
        Tensor x = testing::from_doubles(v, {rows, n}, t);
        for (bool log : {false, true}) {
          const char* op = log ? "log_softmax" : "softmax";
          for (bool transposed : {false, true}) {
            // transposed: the same rows as columns of an (n, rows) tensor, softmax over axis 0
            Tensor in = transposed ? testing::permuted(x, {1, 0}).contiguous() : x;
            Tensor y = call_op1(op, {in}, Attrs{{"axis", int64_t{transposed ? 0 : 1}}});
            for (int64_t r = 0; r < rows; ++r) {
              const std::vector<double> row_want = numpy_softmax(row_values[r], log);
              for (int64_t i = 0; i < n; ++i) {
                const double got = y.item_double(transposed ? i * rows + r : r * n + i), want = row_want[i];
                const std::string ctx = std::string(op) + " " + dtype_name(t) + " " + std::to_string(rows) + "x" +
                                        std::to_string(n) + (transposed ? " axis 0" : " axis 1") + " row " +
                                        std::to_string(r) + " element " + std::to_string(i);
                if (std::isnan(want) || std::isinf(want)) {
                  ASSERT_EQ(std::isnan(got), std::isnan(want)) << ctx << ": got " << got;
                  if (!std::isnan(want)) {
                    ASSERT_EQ(got, want) << ctx;
                  }
                } else {
                  const double tol = (t == DType::Float32 ? 3e-6 : 1e-13) * (1 + std::abs(want));
                  ASSERT_NEAR(got, want, tol) << ctx;
                  if (want == 0) {
                    ASSERT_EQ(got, 0.0) << ctx << ": exp(-inf) is exactly 0";
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  // The example, and its rows written out.
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor y = call_op1("softmax", {testing::from_doubles({1, kNaN}, {1, 2}, t)});
    EXPECT_TRUE(std::isnan(y.item_double(0)) && std::isnan(y.item_double(1))) << dtype_name(t);
    y = call_op1("softmax", {testing::from_doubles({1, kInf}, {1, 2}, t)});
    EXPECT_TRUE(std::isnan(y.item_double(0)) && std::isnan(y.item_double(1))) << dtype_name(t);
    y = call_op1("softmax", {testing::from_doubles({-kInf, -kInf}, {1, 2}, t)});
    EXPECT_TRUE(std::isnan(y.item_double(0)) && std::isnan(y.item_double(1))) << dtype_name(t);
    y = call_op1("softmax", {testing::from_doubles({0, -kInf}, {1, 2}, t)});
    EXPECT_EQ(y.item_double(0), 1.0) << dtype_name(t);
    EXPECT_EQ(y.item_double(1), 0.0) << dtype_name(t);
    y = call_op1("log_softmax", {testing::from_doubles({0, -kInf}, {1, 2}, t)});
    EXPECT_EQ(y.item_double(0), 0.0) << dtype_name(t);
    EXPECT_EQ(y.item_double(1), -kInf) << dtype_name(t);
  }
}

// float32 softmax over the innermost axis is oneDNN's on finite rows and the loop's on the rows
// holding NaN or an infinity: a float32 row gives the same bits alone as inside a tensor whose other
// rows are special, or inside a large tensor that oneDNN takes in chunks.
TEST(Softmax, FiniteRowsKeepTheirBitsBesideSpecialRows) {
  Tensor finite = testing::random({64, 33}, DType::Float32, 5);
  Tensor mixed = Tensor::empty(finite.shape(), DType::Float32);
  copy_into(mixed, finite);
  for (int64_t r = 0; r < 64; r += 3) testing::set_item(mixed, r * 33 + (r % 33), r % 2 ? kNaN : -kInf);
  Tensor a = call_op1("softmax", {finite}), b = call_op1("softmax", {mixed});
  for (int64_t r = 0; r < 64; ++r) {
    if (r % 3 == 0) continue;
    EXPECT_EQ(std::memcmp(a.data<float>() + r * 33, b.data<float>() + r * 33, 33 * sizeof(float)), 0) << "row " << r;
  }
  // oneDNN takes a large tensor in chunks of rows, per thread: a row gives the bits it gives alone.
  Tensor big = testing::random({3000, 100}, DType::Float32, 6);
  Tensor all = call_op1("softmax", {big});
  for (int64_t r : {0, 1, 654, 655, 1500, 2999}) {  // (655 rows to a chunk)
    Tensor one = call_op1("softmax", {big.as_strided({1, 100}, {100, 1}, big.offset() + r * 100)});
    EXPECT_EQ(std::memcmp(all.data<float>() + r * 100, one.data<float>(), 100 * sizeof(float)), 0) << "row " << r;
  }
}

}  // namespace
}  // namespace pj
