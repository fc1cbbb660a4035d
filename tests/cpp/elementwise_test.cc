// Elementwise kernels against plain reference loops, over shapes that exercise broadcasting,
// empty tensors, 0-d tensors, non-contiguous views and every dtype.
#include <cmath>
#include <cstring>
#include <random>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

TEST(Elementwise, AddBroadcastsLikeNumpy) {
  Tensor a = testing::iota({2, 3}, DType::Float32);
  Tensor b = testing::iota({3}, DType::Float32);
  Tensor c = call_op1("add", {a, b});
  EXPECT_EQ(c.shape(), Shape({2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.item_double(i), i + (i % 3));
}

TEST(Elementwise, BroadcastErrorNamesBothShapes) {
  Tensor a = testing::iota({2, 3}, DType::Float32);
  Tensor b = testing::iota({4}, DType::Float32);
  try {
    call_op1("add", {a, b});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_STREQ(e.what(), "operands could not be broadcast together with shapes (2, 3) (4,)");
  }
}

TEST(Elementwise, PromotionRules) {
  Tensor i32 = testing::iota({2}, DType::Int32), i64 = testing::iota({2}, DType::Int64);
  Tensor f32 = testing::iota({2}, DType::Float32), f64 = testing::iota({2}, DType::Float64);
  Tensor b = testing::iota({2}, DType::Bool);
  EXPECT_EQ(call_op1("add", {i32, i64}).dtype(), DType::Int64);
  EXPECT_EQ(call_op1("add", {i64, f32}).dtype(), DType::Float32);
  EXPECT_EQ(call_op1("add", {f32, f64}).dtype(), DType::Float64);
  EXPECT_EQ(call_op1("add", {b, i32}).dtype(), DType::Int32);
  EXPECT_EQ(call_op1("div", {i32, i32}).dtype(), DType::Float32);
  EXPECT_EQ(call_op1("lt", {i32, f64}).dtype(), DType::Bool);
  EXPECT_EQ(call_op1("exp", {i64}).dtype(), DType::Float32);
  EXPECT_EQ(call_op1("abs", {i64}).dtype(), DType::Int64);
}

// The dtype a binary op gives for two operands of dtype t: comparisons and logical ops give Bool,
// true division of integers Float32 (MindSpore's rule), the rest t.
DType binary_result_dtype(const std::string& op, DType t) {
  if (op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge" || op.rfind("logical_", 0) == 0)
    return DType::Bool;
  if (op == "div" && !is_floating(t)) return DType::Float32;
  return t;
}

// How far a result of dtype t may be from the reference computed in double, relative to 1 + |want|:
// a few float32 roundings, a few float64 roundings, integers and Bool exactly.
double tolerance(DType t, double float32_tol, double float64_tol) {
  return t == DType::Float32 ? float32_tol : t == DType::Float64 ? float64_tol : 0.0;
}

// Every binary op on every dtype, many shapes (with views), against a scalar reference.
TEST(Elementwise, BinaryOpsMatchReference) {
  const char* ops[] = {"add", "sub", "mul", "div", "floor_div", "mod", "maximum", "minimum",
                       "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"};
  for (DType t : {DType::Int32, DType::Int64, DType::Float32, DType::Float64}) {
    for (auto& sh : testing::broadcast_pairs()) {
      Tensor a = testing::random(sh.first, t, 1), b = testing::random(sh.second, t, 2);
      for (const char* op : ops) {
        Tensor c = call_op1(op, {a, b});
        Shape s = broadcast_shapes(a.shape(), b.shape());
        ASSERT_EQ(c.shape(), s);
        ASSERT_EQ(c.dtype(), binary_result_dtype(op, t)) << op << " of " << dtype_name(t);
        const double tol = tolerance(c.dtype(), 1e-5, 1e-14);
        for (int64_t i = 0; i < c.numel(); ++i) {
          double x = testing::bcast_item(a, s, i), y = testing::bcast_item(b, s, i);
          double want = testing::ref_binary(op, x, y, t);
          double got = c.item_double(i);
          if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << op;
          else if (std::isinf(want)) EXPECT_EQ(got, want) << op;
          else EXPECT_NEAR(got, want, tol * (1 + std::abs(want))) << op << " " << x << " " << y
                                                                  << " dtype " << dtype_name(t);
        }
      }
    }
  }
}

TEST(Elementwise, UnaryOpsMatchReferenceOnViews) {
  const char* ops[] = {"neg", "abs", "sign", "square", "relu", "floor", "ceil", "round", "exp",
                       "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "gelu",
                       "silu", "softplus", "erf", "expm1"};
  for (DType t : {DType::Float32, DType::Float64}) {
    for (Shape s : {Shape{}, Shape{0}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4}, Shape{1000}}) {
      Tensor base = testing::random(s, t, 3);
      std::vector<Tensor> inputs = {base};
      if (s.size() == 2) inputs.push_back(base.as_strided({s[1], s[0]}, {1, s[1]}, 0));  // .T
      for (const Tensor& a : inputs) {
        for (const char* op : ops) {
          Tensor c = call_op1(op, {a});
          ASSERT_EQ(c.dtype(), t) << op;
          const double tol = tolerance(t, 2e-6, 1e-13);
          for (int64_t i = 0; i < c.numel(); ++i) {
            double x = a.item_double(i);
            double want = testing::ref_unary(op, x);
            double got = c.item_double(i);
            if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << op << " " << x;
            else EXPECT_NEAR(got, want, tol * (1 + std::abs(want))) << op << " " << x << " dtype " << dtype_name(t);
          }
        }
      }
    }
  }
}

TEST(Elementwise, IntegerEdgeCasesNeverTrap) {
  Tensor a = testing::from_ints({7, -7, 7, -7, 5, INT64_MIN}, DType::Int64);
  Tensor b = testing::from_ints({2, 2, -2, -2, 0, -1}, DType::Int64);
  Tensor q = call_op1("floor_div", {a, b});
  Tensor r = call_op1("mod", {a, b});
  int64_t wq[] = {3, -4, -4, 3, 0, INT64_MIN};
  int64_t wr[] = {1, 1, -1, -1, 0, 0};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(q.item_int(i), wq[i]) << i;
    EXPECT_EQ(r.item_int(i), wr[i]) << i;
  }
}

TEST(Elementwise, IntegerPowRejectsNegativeExponent) {
  Tensor a = testing::from_ints({2, 3}, DType::Int64);
  Tensor b = testing::from_ints({3, -1}, DType::Int64);
  EXPECT_THROW(call_op1("pow", {a, b}), Error);
  Tensor c = call_op1("pow", {a, testing::from_ints({3, 2}, DType::Int64)});
  EXPECT_EQ(c.item_int(0), 8);
  EXPECT_EQ(c.item_int(1), 9);
}

TEST(Elementwise, WhereAndClamp) {
  Tensor c = testing::from_ints({1, 0, 1}, DType::Bool);
  Tensor x = testing::iota({3}, DType::Float32);
  Tensor y = Tensor::scalar(-1, DType::Int64);
  Tensor w = call_op1("where", {c, x, y});
  EXPECT_EQ(w.dtype(), DType::Float32);
  EXPECT_EQ(w.item_double(0), 0);
  EXPECT_EQ(w.item_double(1), -1);
  EXPECT_EQ(w.item_double(2), 2);
  Tensor k = call_op1("clamp", {x}, Attrs{{"min", 0.5}, {"max", AttrValue{}}});
  EXPECT_EQ(k.item_double(0), 0.5);
  EXPECT_EQ(k.item_double(2), 2);
}

// where's kernel is a branch-free select over the values' bits: every layout it takes a fast loop
// for (all rows, a or b one value) and the strided one give each element of the chosen operand
// bit for bit (NaN payloads, -0.0 and all), in place too, for every dtype.
// Whether element i of `out` (contiguous) has the bits of `src`'s element at the same index,
// broadcast (a one-element src stands for every index).
bool has_bits_of(const Tensor& out, int64_t i, const Tensor& src) {
  const std::vector<int64_t> idx = testing::unravel(i, out.shape());
  const int64_t at = src.numel() == 1 ? 0 : src.element_offset(testing::ravel(idx, src.shape()));
  const size_t item = itemsize(out.dtype());
  return std::memcmp(static_cast<const char*>(out.raw_data()) + i * item,
                     static_cast<const char*>(src.raw_data()) + at * item, item) == 0;
}

TEST(Elementwise, WhereGivesTheChosenOperandsBitsOnEveryLayout) {
  const Shape shape{5, 67};  // rows of 67: vector bodies and tails
  for (DType t : testing::all_dtypes()) {
    Tensor c = testing::random(shape, DType::Bool, 1), x = testing::random(shape, t, 2);
    Tensor y = testing::random(shape, t, 3);
    if (t == DType::Float32 || t == DType::Float64) {
      testing::set_item(x, 3, -0.0);
      testing::set_item(y, 4, std::nan(""));
      if (t == DType::Float32) {
        const uint32_t payload = 0x7fc01234u;  // a NaN with a payload: copied, never recomputed
        std::memcpy(static_cast<char*>(x.raw_data()) + 8 * 4, &payload, 4);
      }
    }
    const std::vector<std::pair<Tensor, Tensor>> operands = {
        {x, y}, {x, Tensor::scalar(0, t)}, {Tensor::scalar(1, t), y}, {Tensor::scalar(1, t), Tensor::scalar(0, t)},
        {testing::fortran(x), testing::gapped(y)}, {x.as_strided({5, 67}, {0, 1}, 0), y}};
    for (const auto& [a, b] : operands)
      for (const Tensor& cond : testing::layouts(c)) {
        Tensor out = Tensor::empty(shape, t);
        where_into(out, cond, a, b);
        for (int64_t i = 0; i < out.numel(); ++i)
          ASSERT_TRUE(has_bits_of(out, i, testing::at(cond, testing::unravel(i, shape)) != 0 ? a : b))
              << dtype_name(t) << " element " << i << " of a " << shape_str(a.shape()) << " / "
              << shape_str(b.shape()) << " select";
      }
    // in place over the chosen operand (a graph's buffers are reused so)
    Tensor inplace = x.clone(), want = Tensor::empty(shape, t);
    where_into(want, c, x, y);
    where_into(inplace, c, inplace, y);
    EXPECT_EQ(std::memcmp(inplace.raw_data(), want.raw_data(), want.numel() * itemsize(t)), 0) << dtype_name(t);
  }
}

// relu_grad(g, x) = x > 0 ? g : 0, ReLU's gradient: g's bits where x > 0 (NaN and -0.0 in g
// included), +0 elsewhere (x NaN, -0.0, 0 or negative), in every dtype and layout, broadcasting;
// float32 through the one-op fused kernel, as a fused graph runs it.
TEST(Elementwise, ReluGradPassesTheGradientsBitsWhereXIsPositive) {
  const Shape shape{5, 67};
  for (DType t : {DType::Int32, DType::Int64, DType::Float32, DType::Float64}) {
    Tensor g = testing::random(shape, t, 4), x = testing::random(shape, t, 5);
    if (is_floating(t)) {
      for (int64_t i = 0; i < x.numel(); i += 7) testing::set_item(x, i, i % 3 ? -0.0 : std::nan(""));
      for (int64_t i = 1; i < x.numel(); i += 11) testing::set_item(g, i, i % 2 ? -0.0 : std::nan(""));
      testing::set_item(x, 2, 0.0);
      testing::set_item(x, 5, 1e-40);  // a positive denormal lets the gradient through
    }
    const std::vector<std::pair<Tensor, Tensor>> operands = {
        {g, x}, {testing::fortran(g), testing::gapped(x)}, {g, x.as_strided({5, 67}, {0, 1}, 0)},
        {Tensor::scalar(3, t), x}};
    for (const auto& [gv, xv] : operands) {
      Tensor out = call_op1("relu_grad", {gv, xv});
      ASSERT_EQ(out.shape(), shape);
      ASSERT_EQ(out.dtype(), t);
      const Tensor zero = Tensor::scalar(0, t);
      for (int64_t i = 0; i < out.numel(); ++i)
        ASSERT_TRUE(has_bits_of(out, i, testing::at(xv, testing::unravel(i, shape)) > 0 ? gv : zero))
            << dtype_name(t) << " element " << i << " of relu_grad(" << shape_str(gv.shape()) << ", "
            << shape_str(xv.shape()) << ")";
    }
  }
}

// A mask whose bytes are other than 0 and 1 (a bool buffer from raw memory) selects where any bit
// is set, as c ? x : y does.
TEST(Elementwise, WhereReadsAnyNonzeroMaskByteAsTrue) {
  Tensor c = Tensor::zeros({4}, DType::Bool);
  const uint8_t bytes[4] = {0, 2, 255, 1};
  std::memcpy(c.raw_data(), bytes, 4);
  // low bits that a mask made from the byte itself would mix: x's all clear, y's all set
  const uint32_t xb = 0x40000000u, yb = 0x411000FFu;
  Tensor x = Tensor::empty({4}, DType::Float32), y = Tensor::empty({4}, DType::Float32);
  for (int i = 0; i < 4; ++i) {
    std::memcpy(static_cast<char*>(x.raw_data()) + 4 * i, &xb, 4);
    std::memcpy(static_cast<char*>(y.raw_data()) + 4 * i, &yb, 4);
  }
  for (const Tensor& b : {y, Tensor::scalar(0, DType::Float32)}) {
    if (b.numel() == 1) std::memcpy(b.raw_data(), &yb, 4);
    Tensor out = Tensor::empty({4}, DType::Float32);
    where_into(out, c, x, b);
    for (int i = 0; i < 4; ++i) {
      uint32_t got;
      std::memcpy(&got, static_cast<char*>(out.raw_data()) + 4 * i, 4);
      EXPECT_EQ(got, bytes[i] ? xb : yb) << "mask byte " << int(bytes[i]);
    }
  }
}

TEST(Elementwise, CastTruncatesAndBoolIsNonzero) {
  Tensor x = testing::from_doubles({-1.7, 0.0, 2.5, 0.25}, DType::Float32);
  Tensor i = call_op1("cast", {x}, Attrs{{"dtype", DType::Int32}});
  Tensor b = call_op1("cast", {x}, Attrs{{"dtype", DType::Bool}});
  EXPECT_EQ(i.item_int(0), -1);
  EXPECT_EQ(i.item_int(2), 2);
  EXPECT_EQ(b.item_int(1), 0);
  EXPECT_EQ(b.item_int(3), 1);
}

}  // namespace
}  // namespace pj

namespace pj {
namespace {

// float32 add/sub/mul/div/maximum/minimum run as one-op fused kernels at every size and
// broadcast: each element is the single IEEE operation, and when both operands are NaN the first
// operand's NaN comes out (x86's rule), as in a fused graph.
TEST(Elementwise, Float32BinaryIsOneIeeeOperationWithTheFirstOperandsNaN) {
  Tensor a = testing::random({300, 257}, DType::Float32, 5);
  for (Shape bs : {Shape{300, 257}, Shape{257}, Shape{300, 1}, Shape{}}) {
    Tensor b = testing::random(bs, DType::Float32, 6);
    for (const char* op : {"add", "sub", "mul", "div"}) {
      Tensor c = call_op1(op, {a, b});
      for (int64_t i = 0; i < c.numel(); i += 97) {
        float x = static_cast<float>(a.item_double(i));
        float y = static_cast<float>(testing::bcast_item(b, c.shape(), i));
        float want = op[0] == 'a' ? x + y : op[0] == 's' ? x - y : op[0] == 'm' ? x * y : x / y;
        ASSERT_EQ(static_cast<float>(c.item_double(i)), want) << op << " at " << i;
      }
    }
  }
  const uint32_t na = 0xffc00000u, nb = 0x7fc12345u;
  for (int64_t n : {int64_t{5}, int64_t{100000}}) {  // the loop's tail and its vector body, on threads
    Tensor x = Tensor::empty({n}, DType::Float32), y = Tensor::empty({n}, DType::Float32);
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(x.data<float>() + i, &na, 4);
      std::memcpy(y.data<float>() + i, &nb, 4);
    }
    for (const char* op : {"add", "sub", "mul", "div"}) {
      uint32_t xy, yx;
      Tensor r1 = call_op1(op, {x, y}), r2 = call_op1(op, {y, x});
      std::memcpy(&xy, r1.data<float>() + n - 1, 4);
      std::memcpy(&yx, r2.data<float>() + n - 1, 4);
      EXPECT_EQ(xy, na) << op;
      EXPECT_EQ(yx, nb) << op;
    }
  }
}

// NaN, +inf and -inf through each activation, clamp and maximum/minimum give numpy's (and
// PyTorch's) values in float32 and float64, on a few elements and on enough for the vector bodies,
// the threads and oneDNN's eltwise kernels (softplus): a NaN comes out NaN everywhere (max/min
// propagate it, as numpy's maximum does), and the limits at the infinities are exact.
TEST(Elementwise, NaNAndInfinitiesGiveNumpysValues) {
  const double nan = NAN, inf = INFINITY;
  struct Row {
    const char* op;
    double at_nan, at_inf, at_neg_inf;
  };
  const Row rows[] = {
      {"relu", nan, inf, 0},       {"sigmoid", nan, 1, 0},    {"tanh", nan, 1, -1},     {"gelu", nan, inf, nan},
      {"gelu_tanh", nan, inf, nan}, {"silu", nan, inf, nan},   {"softplus", nan, inf, 0}, {"exp", nan, inf, 0},
      {"log", nan, inf, nan},       {"erf", nan, 1, -1},       {"sqrt", nan, inf, nan},  {"abs", nan, inf, inf},
      {"sign", nan, 1, -1},         {"expm1", nan, inf, -1},   {"log1p", nan, inf, nan}, {"neg", nan, -inf, inf},
  };
  const double specials[] = {nan, inf, -inf};
  for (DType t : {DType::Float32, DType::Float64})
    for (int64_t n : {int64_t{3}, int64_t{3 * 40000}}) {
      Tensor x = Tensor::empty({n}, t);
      for (int64_t i = 0; i < n; ++i) testing::set_item(x, i, specials[i % 3]);
      auto expect = [&](const Tensor& y, const std::string& what, const double (&want)[3]) {
        for (int64_t i = 0; i < n; ++i) {
          const double got = y.item_double(i), w = want[i % 3];
          if (std::isnan(w)) ASSERT_TRUE(std::isnan(got)) << what << " " << dtype_name(t) << " n=" << n << " at " << i << ": " << got;
          else ASSERT_EQ(got, w) << what << " " << dtype_name(t) << " n=" << n << " at " << i;
        }
      };
      for (const Row& r : rows) expect(call_op1(r.op, {x}), r.op, {r.at_nan, r.at_inf, r.at_neg_inf});
      expect(call_op1("clamp", {x}, Attrs{{"min", -1.0}, {"max", 1.0}}), "clamp", {nan, 1, -1});
      expect(call_op1("clamp", {x}, Attrs{{"min", 0.0}, {"max", 6.0}}), "relu6", {nan, 6, 0});
      const Tensor zero = Tensor::zeros({}, t), nan0 = testing::from_doubles({nan}, {}, t);
      expect(call_op1("maximum", {x, zero}), "maximum(x, 0)", {nan, inf, 0});
      expect(call_op1("maximum", {zero, x}), "maximum(0, x)", {nan, inf, 0});
      expect(call_op1("minimum", {x, zero}), "minimum(x, 0)", {nan, 0, -inf});
      expect(call_op1("minimum", {zero, x}), "minimum(0, x)", {nan, 0, -inf});
      expect(call_op1("maximum", {nan0, x}), "maximum(nan, x)", {nan, nan, nan});
      expect(call_op1("minimum", {x, nan0}), "minimum(x, nan)", {nan, nan, nan});
      // leaky_relu as pijit.nn builds it: where(x >= 0, x, x * 0.2)
      Tensor lk = call_op1("where", {call_op1("ge", {x, zero}), x, call_op1("mul", {x, testing::from_doubles({0.2}, {}, t)})});
      expect(lk, "leaky_relu", {nan, inf, -inf});
    }
}

}  // namespace
}  // namespace pj
