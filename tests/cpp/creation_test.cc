// Creation ops against plain formulas (numpy's arange length rule, linspace's endpoint, eye's
// diagonal), and the random ops: Philox known-answer vectors, determinism per seed and across
// thread counts, ranges and first moments.
#include <cmath>
#include <set>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/random.h"
#include "kernels/threading.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::values;

Tensor make(const char* op, Attrs a) { return call_op1(op, {}, a); }

TEST(Arange, IntegerLengthsAndValues) {
  struct C {
    int64_t start, stop, step;
  };
  for (C c : {C{0, 10, 1}, C{0, 10, 3}, C{10, 0, -3}, C{-5, 5, 2}, C{3, 3, 1}, C{5, 0, 1}, C{0, 5, -1},
              C{-7, -20, -4}, C{1, 2, 100}}) {
    Tensor y = make("arange", {{"start", c.start}, {"stop", c.stop}, {"step", c.step}});
    EXPECT_EQ(y.dtype(), DType::Int64);
    std::vector<double> want;
    for (int64_t v = c.start; c.step > 0 ? v < c.stop : v > c.stop; v += c.step) want.push_back(v);
    EXPECT_EQ(values(y), want) << c.start << " " << c.stop << " " << c.step;
  }
  Tensor one = make("arange", {{"start", int64_t(4)}});
  EXPECT_EQ(values(one), (std::vector<double>{0, 1, 2, 3}));
  Tensor i32 = make("arange", {{"start", int64_t(1)}, {"stop", int64_t(4)}, {"dtype", DType::Int32}});
  EXPECT_EQ(i32.dtype(), DType::Int32);
  EXPECT_EQ(values(i32), (std::vector<double>{1, 2, 3}));
  // Exact in int64 beyond 2^53.
  int64_t big = (int64_t(1) << 60) + 1;
  Tensor b = make("arange", {{"start", big}, {"stop", big + 3}});
  EXPECT_EQ(b.item_int(2), big + 2);
}

TEST(Arange, FloatLengthRuleAndErrors) {
  struct C {
    double start, stop, step;
    int64_t n;
  };
  // ceil((stop - start) / step), at least 0.
  for (C c : {C{0, 1, 0.1, 10}, C{0, 1, 0.3, 4}, C{1, 0, -0.25, 4}, C{0.5, 3, 1, 3}, C{0, -1, 0.5, 0},
              C{-1.5, 1.5, 1.5, 2}}) {
    Tensor y = make("arange", {{"start", c.start}, {"stop", c.stop}, {"step", c.step}});
    EXPECT_EQ(y.dtype(), DType::Float32);
    ASSERT_EQ(y.numel(), c.n);
    for (int64_t i = 0; i < c.n; ++i) EXPECT_FLOAT_EQ(y.item_double(i), c.start + i * c.step);
  }
  // One float makes the result float.
  Tensor m = make("arange", {{"start", int64_t(0)}, {"stop", 2.5}});
  EXPECT_EQ(m.dtype(), DType::Float32);
  EXPECT_EQ(values(m), (std::vector<double>{0, 1, 2}));
  Tensor f64 = make("arange", {{"start", int64_t(0)}, {"stop", int64_t(3)}, {"dtype", DType::Float64}});
  EXPECT_EQ(f64.dtype(), DType::Float64);
  EXPECT_EQ(values(f64), (std::vector<double>{0, 1, 2}));
  PJ_EXPECT_ERROR(make("arange", {{"start", int64_t(0)}, {"stop", int64_t(3)}, {"step", int64_t(0)}}), Value,
                  "arange(): step must not be zero");
  PJ_EXPECT_ERROR(make("arange", {{"start", 0.0}, {"stop", 3.0}, {"step", 0.0}}), Value,
                  "arange(): step must not be zero");
}

TEST(Linspace, EndpointAndNum) {
  Tensor y = make("linspace", {{"start", 2.0}, {"stop", 3.0}, {"num", int64_t(5)}});
  EXPECT_EQ(y.dtype(), DType::Float32);
  EXPECT_EQ(values(y), (std::vector<double>{2, 2.25, 2.5, 2.75, 3}));
  Tensor n = make("linspace", {{"start", 2.0}, {"stop", 3.0}, {"num", int64_t(4)}, {"endpoint", false}});
  EXPECT_EQ(values(n), (std::vector<double>{2, 2.25, 2.5, 2.75}));
  EXPECT_EQ(values(make("linspace", {{"start", 2.0}, {"stop", 3.0}, {"num", int64_t(1)}})), (std::vector<double>{2}));
  EXPECT_EQ(make("linspace", {{"start", 2.0}, {"stop", 3.0}, {"num", int64_t(0)}}).numel(), 0);
  // The endpoint is exact even where start + i * step rounds.
  Tensor d = make("linspace", {{"start", 0.1}, {"stop", 0.7}, {"num", int64_t(7)}, {"dtype", DType::Float64}});
  EXPECT_EQ(d.item_double(6), 0.7);
  for (int64_t i = 0; i < 7; ++i) EXPECT_NEAR(d.item_double(i), 0.1 + i * 0.1, 1e-15);
  Tensor desc = make("linspace", {{"start", int64_t(5)}, {"stop", int64_t(-5)}, {"num", int64_t(3)}});
  EXPECT_EQ(values(desc), (std::vector<double>{5, 0, -5}));
  // Integer outputs round toward -inf.
  Tensor i = make("linspace", {{"start", -1.0}, {"stop", 1.0}, {"num", int64_t(5)}, {"dtype", DType::Int32}});
  EXPECT_EQ(values(i), (std::vector<double>{-1, -1, 0, 0, 1}));
  PJ_EXPECT_ERROR(make("linspace", {{"start", 0.0}, {"stop", 1.0}, {"num", int64_t(-1)}}), Value,
                  "Number of samples, -1, must be non-negative.");
}

TEST(Eye, DiagonalsAndDtypes) {
  for (DType t : testing::all_dtypes()) {
    for (int64_t n : {0, 1, 3}) {
      for (int64_t m : {0, 2, 4}) {
        for (int64_t k : {-2, 0, 1, 5}) {
          Tensor y = make("eye", {{"n", n}, {"m", m}, {"k", k}, {"dtype", t}});
          ASSERT_EQ(y.shape(), Shape({n, m}));
          ASSERT_EQ(y.dtype(), t);
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < m; ++j) ASSERT_EQ(testing::at(y, {i, j}), j - i == k ? 1 : 0);
        }
      }
    }
  }
  Tensor sq = make("eye", {{"n", int64_t(3)}});
  EXPECT_EQ(sq.shape(), Shape({3, 3}));
  EXPECT_EQ(sq.dtype(), DType::Float32);
  PJ_EXPECT_ERROR(make("eye", {{"n", int64_t(-1)}}), Value, "negative dimensions are not allowed");
}

TEST(Full, OnesZerosAndDtypeInference) {
  for (DType t : testing::all_dtypes()) {
    for (Shape s : {Shape{}, Shape{0}, Shape{3}, Shape{2, 3}}) {
      IntList sl(s.begin(), s.end());
      Tensor o = make("ones", {{"shape", sl}, {"dtype", t}});
      Tensor z = make("zeros", {{"shape", sl}, {"dtype", t}});
      Tensor f = make("full", {{"shape", sl}, {"value", 2.5}, {"dtype", t}});
      ASSERT_EQ(o.shape(), s);
      ASSERT_EQ(f.dtype(), t);
      double fv = t == DType::Bool ? 1 : is_floating(t) ? 2.5 : 2;
      for (int64_t i = 0; i < o.numel(); ++i) {
        ASSERT_EQ(o.item_double(i), 1);
        ASSERT_EQ(z.item_double(i), 0);
        ASSERT_EQ(f.item_double(i), fv);
      }
    }
  }
  EXPECT_EQ(make("ones", {{"shape", IntList{2}}}).dtype(), DType::Float32);
  EXPECT_EQ(make("full", {{"shape", int64_t(2)}, {"value", int64_t(7)}}).dtype(), DType::Int64);
  EXPECT_EQ(make("full", {{"shape", IntList{2}}, {"value", true}}).dtype(), DType::Bool);
  EXPECT_EQ(make("full", {{"shape", IntList{2}}, {"value", 7.0}}).dtype(), DType::Float32);
  int64_t big = (int64_t(1) << 62) + 3;
  EXPECT_EQ(make("full", {{"shape", IntList{2}}, {"value", big}}).item_int(1), big);
  PJ_EXPECT_ERROR(make("zeros", {{"shape", IntList{2, -1}}}), Value, "negative dimensions are not allowed");
}

// ---- random -------------------------------------------------------------------------------------

TEST(Random, PhiloxKnownAnswers) {
  // The Philox4x32-10 known-answer tests of Random123 (kat_vectors).
  auto a = philox4x32(0, 0, 0);
  EXPECT_EQ(a, (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  auto b = philox4x32(0xffffffffffffffffull, 0xffffffffffffffffull, 0xffffffffffffffffull);
  EXPECT_EQ(b, (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  auto c = philox4x32(0x299f31d0a4093822ull, 0x85a308d3243f6a88ull, 0x0370734413198a2eull);
  EXPECT_EQ(c, (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// The documented mapping from the Philox stream to values (what a GPU backend must reproduce):
// element i of a call with an explicit seed comes from block i / per_block under key = seed.
TEST(Random, ValuesAreThePhiloxStream) {
  const uint64_t seed = 0x1234567890abcdefull;
  Tensor f = make("rand", {{"shape", IntList{37}}, {"seed", int64_t(seed)}});
  for (int64_t i = 0; i < 37; ++i) {
    auto w = philox4x32(seed, i / 4, 0);
    ASSERT_EQ(f.item_double(i), static_cast<double>(w[i % 4] >> 8) * 0x1.0p-24) << i;
  }
  Tensor d = make("rand", {{"shape", IntList{19}}, {"dtype", DType::Float64}, {"seed", int64_t(seed)}});
  for (int64_t i = 0; i < 19; ++i) {
    auto w = philox4x32(seed, i / 2, 0);
    uint64_t v = (static_cast<uint64_t>(w[2 * (i % 2)]) << 32) | w[2 * (i % 2) + 1];
    ASSERT_EQ(d.item_double(i), static_cast<double>(v >> 11) * 0x1.0p-53) << i;
  }
  Tensor r = make("randint", {{"low", int64_t(10)}, {"high", int64_t(17)}, {"shape", IntList{19}}, {"seed", int64_t(seed)}});
  for (int64_t i = 0; i < 19; ++i) {
    auto w = philox4x32(seed, i / 2, 0);
    uint64_t v = (static_cast<uint64_t>(w[2 * (i % 2)]) << 32) | w[2 * (i % 2) + 1];
    ASSERT_EQ(r.item_int(i), 10 + static_cast<int64_t>((static_cast<unsigned __int128>(v) * 7) >> 64)) << i;
  }
  Tensor g = make("randn", {{"shape", IntList{9}}, {"dtype", DType::Float64}, {"seed", int64_t(seed)}});
  for (int64_t i = 0; i < 9; ++i) {
    auto w = philox4x32(seed, i / 2, 0);
    double u1 = 1.0 - static_cast<double>(((static_cast<uint64_t>(w[0]) << 32) | w[1]) >> 11) * 0x1.0p-53;
    double u2 = static_cast<double>(((static_cast<uint64_t>(w[2]) << 32) | w[3]) >> 11) * 0x1.0p-53;
    double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * M_PI * u2;
    ASSERT_NEAR(g.item_double(i), i % 2 ? r * std::sin(th) : r * std::cos(th), 1e-12) << i;
  }
  // The global stream: set_seed(s) then rand equals rand with seed=s, and the next call continues.
  set_seed(seed);
  Tensor a = make("rand", {{"shape", IntList{6}}});  // 2 blocks
  Tensor b = make("rand", {{"shape", IntList{4}}});  // block 2
  EXPECT_EQ(a.item_double(5), f.item_double(5));
  EXPECT_EQ(b.item_double(0), f.item_double(8));
}

TEST(Random, SameSeedSameValuesAnyThreadCount) {
  const int saved = get_num_threads();
  for (const char* op : {"rand", "randn", "randint"}) {
    for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
      if ((std::string(op) == "randint") == is_floating(t)) continue;
      Attrs a{{"shape", IntList{301, 517}}, {"dtype", t}};  // odd: partial last blocks
      if (std::string(op) == "randint") {
        a.set("low", int64_t(-3));
        a.set("high", int64_t(1000));
      }
      set_num_threads(1);
      set_seed(42);
      Tensor x1 = make(op, a), x2 = make(op, a);
      set_num_threads(4);
      set_seed(42);
      Tensor y1 = make(op, a), y2 = make(op, a);
      EXPECT_EQ(values(x1), values(y1)) << op;
      EXPECT_EQ(values(x2), values(y2)) << op;
      EXPECT_NE(values(x1), values(x2)) << op;  // the state advances
      set_seed(43);
      EXPECT_NE(values(make(op, a)), values(x1)) << op;
      // An explicit seed draws from its own stream and leaves the global one alone.
      set_seed(42);
      a.set("seed", int64_t(42));
      Tensor s1 = make(op, a), s2 = make(op, a);
      EXPECT_EQ(values(s1), values(s2));
      a.set("seed", AttrValue{});
      EXPECT_EQ(values(make(op, a)), values(x1)) << op;
    }
  }
  set_num_threads(saved);
}

TEST(Random, RangesAndMoments) {
  set_seed(7);
  const int64_t n = 200000;
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor u = make("rand", {{"shape", IntList{n}}, {"dtype", t}});
    double sum = 0, sq = 0, lo = 1, hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = u.item_double(i);
      sum += v;
      sq += v * v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    EXPECT_GE(lo, 0);
    EXPECT_LT(hi, 1);
    EXPECT_NEAR(sum / n, 0.5, 0.005);
    EXPECT_NEAR(sq / n - 0.25, 1.0 / 12, 0.003);
    Tensor g = make("randn", {{"shape", IntList{n}}, {"dtype", t}});
    sum = sq = 0;
    double tail = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = g.item_double(i);
      ASSERT_TRUE(std::isfinite(v));
      sum += v;
      sq += v * v;
      tail += std::abs(v) > 1.96;
    }
    EXPECT_NEAR(sum / n, 0, 0.01);
    EXPECT_NEAR(sq / n, 1, 0.02);
    EXPECT_NEAR(tail / n, 0.05, 0.005);
  }
  Tensor r = make("randint", {{"low", int64_t(-2)}, {"high", int64_t(3)}, {"shape", IntList{1000}}});
  EXPECT_EQ(r.dtype(), DType::Int64);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < r.numel(); ++i) seen.insert(r.item_int(i));
  EXPECT_EQ(seen, (std::set<int64_t>{-2, -1, 0, 1, 2}));
  Tensor wide = make("randint", {{"low", INT64_MIN}, {"high", INT64_MAX}, {"shape", IntList{64}}});
  EXPECT_EQ(wide.numel(), 64);
  EXPECT_EQ(make("rand", {{"shape", IntList{0, 3}}}).numel(), 0);
  EXPECT_EQ(make("randn", {{"shape", IntList{}}}).ndim(), 0);
}

TEST(Random, Errors) {
  PJ_EXPECT_ERROR(make("randint", {{"low", int64_t(3)}, {"high", int64_t(3)}, {"shape", IntList{2}}}), Value,
                  "randint(): low (3) must be less than high (3)");
  PJ_EXPECT_ERROR(make("randint", {{"low", int64_t(0)}, {"high", int64_t(1) << 40}, {"shape", IntList{2}},
                                   {"dtype", DType::Int32}}),
                  Value, "randint(): [0, 1099511627776) is out of bounds for Int32");
  PJ_EXPECT_ERROR(make("randint", {{"low", int64_t(0)}, {"high", int64_t(2)}, {"shape", IntList{2}},
                                   {"dtype", DType::Float32}}),
                  Type, "randint(): dtype must be Int32 or Int64, but got Float32");
  PJ_EXPECT_ERROR(make("rand", {{"shape", IntList{2}}, {"dtype", DType::Int64}}), Type,
                  "rand does not support dtype Int64");
  PJ_EXPECT_ERROR(make("randn", {{"shape", IntList{-2}}}), Value, "negative dimensions are not allowed");
}

}  // namespace
}  // namespace pj
