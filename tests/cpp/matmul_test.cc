// matmul against a plain double-precision reference: numpy's 1-D promotion and batch broadcasting,
// every dtype and mixed dtypes, contiguous / transposed / strided operands, empty and k = 0
// products, a large product for accuracy, oneDNN vs loop agreement, and numpy's error messages.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/dnnl_context.h"
#include "kernels/matmul.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

struct Ref {
  Shape shape;
  std::vector<double> value, scale;  // scale: sum of |a_ik * b_kj|, bounds rounding error
};

Ref ref_matmul(const Tensor& a, const Tensor& b) {
  std::vector<double> av = testing::to_doubles(a), bv = testing::to_doubles(b);
  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t n = as[as.size() - 2], k = as.back(), m = bs.back();
  Shape ba(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  Shape batch = broadcast_shapes(ba, bb);
  Ref r;
  r.shape = batch;
  if (a.ndim() > 1) r.shape.push_back(n);
  if (b.ndim() > 1) r.shape.push_back(m);
  const int64_t nbatch = shape_numel(batch);
  r.value.assign(nbatch * n * m, 0);
  r.scale.assign(nbatch * n * m, 0);
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    // Linear batch index of a and b (size-1 dims broadcast).
    int64_t rem = bi, ia = 0, ib = 0, mula = 1, mulb = 1;
    for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
      int64_t x = rem % batch[d];
      rem /= batch[d];
      int da = d - static_cast<int>(batch.size() - ba.size()), db = d - static_cast<int>(batch.size() - bb.size());
      if (da >= 0) {
        ia += (ba[da] == 1 ? 0 : x) * mula;
        mula *= ba[da];
      }
      if (db >= 0) {
        ib += (bb[db] == 1 ? 0 : x) * mulb;
        mulb *= bb[db];
      }
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double s = 0, sc = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          double p = av[(ia * n + i) * k + kk] * bv[(ib * k + kk) * m + j];
          s += p;
          sc += std::abs(p);
        }
        r.value[(bi * n + i) * m + j] = s;
        r.scale[(bi * n + i) * m + j] = sc;
      }
  }
  return r;
}

::testing::AssertionResult matches(const Tensor& c, const Ref& r, double rtol) {
  if (c.shape() != r.shape)
    return ::testing::AssertionFailure() << "shape " << shape_str(c.shape()) << " want " << shape_str(r.shape);
  for (int64_t i = 0; i < c.numel(); ++i) {
    double want = r.value[i], got = c.item_double(i);
    if (c.dtype() == DType::Bool) want = want != 0;
    double tol = is_floating(c.dtype()) ? rtol * r.scale[i] + 1e-30 : 0;
    if (!(std::abs(got - want) <= tol))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got << " want " << want;
  }
  return ::testing::AssertionSuccess();
}

double rtol_of(DType t) { return t == DType::Float32 ? 2e-6 : 1e-14; }

std::vector<std::pair<Shape, Shape>> shape_pairs() {
  return {{{3}, {3}},           {{2, 3}, {3}},          {{3}, {3, 4}},        {{2, 3}, {3, 4}},
          {{5, 2, 3}, {3, 4}},  {{2, 3}, {5, 3, 4}},    {{5, 1, 2, 3}, {4, 3, 2}},
          {{1, 2, 3}, {5, 3, 4}}, {{5, 2, 3}, {1, 3, 4}}, {{0, 3}, {3, 4}},  {{2, 0}, {0, 4}},
          {{2, 3}, {3, 0}},     {{3}, {5, 3, 4}},       {{5, 2, 3}, {3}},     {{7, 33}, {33, 1}},
          {{1, 1}, {1, 1}},     {{1, 33}, {33, 7}},     {{0, 2, 3}, {3, 4}},  {{17, 65}, {65, 9}},
          {{2, 3, 1, 4}, {3, 4, 5}}, {{1}, {1, 7}},      {{0}, {0}}};
}

// Operand variants of shape s: contiguous, last two dims transposed, stride-2, all dims reversed.
std::vector<std::pair<std::string, Tensor>> operands(const Shape& s, DType t, unsigned seed) {
  std::vector<std::pair<std::string, Tensor>> v = {{"contiguous", testing::random(s, t, seed)}};
  const int nd = static_cast<int>(s.size());
  if (nd >= 2) {
    Shape sw = s;
    std::swap(sw[nd - 1], sw[nd - 2]);
    Tensor base = testing::random(sw, t, seed + 1);
    Shape st = base.strides();
    std::swap(st[nd - 1], st[nd - 2]);
    v.push_back({"transposed", base.as_strided(s, st, 0)});
  }
  v.push_back({"strided", testing::strided_random(s, t, seed + 2)});
  if (nd >= 3) {
    Shape rs(s.rbegin(), s.rend());
    v.push_back({"reversed", testing::reversed_view(testing::random(rs, t, seed + 3))});
  }
  return v;
}

TEST(Matmul, EveryDtypeShapeAndLayoutMatchesReference) {
  const DType dtypes[] = {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64};
  unsigned seed = 1;
  for (auto& [sa, sb] : shape_pairs()) {
    for (DType t : dtypes) {
      for (auto& [wa, a] : operands(sa, t, seed += 5)) {
        for (auto& [wb, b] : operands(sb, t, seed += 5)) {
          Tensor c = call_op1("matmul", {a, b});
          ASSERT_EQ(c.dtype(), t);
          ASSERT_TRUE(matches(c, ref_matmul(a, b), rtol_of(t)))
              << shape_str(sa) << " " << wa << " @ " << shape_str(sb) << " " << wb << " " << dtype_name(t);
        }
      }
    }
  }
}

TEST(Matmul, MixedDtypesPromote) {
  const std::pair<DType, DType> pairs[] = {{DType::Int32, DType::Float64}, {DType::Bool, DType::Int32},
                                           {DType::Float32, DType::Int64}, {DType::Int32, DType::Int64},
                                           {DType::Float32, DType::Float64}};
  for (auto [ta, tb] : pairs) {
    Tensor a = testing::random({4, 5}, ta, 1), b = testing::random({5, 3}, tb, 2);
    Tensor c = call_op1("matmul", {a, b});
    ASSERT_EQ(c.dtype(), promote(ta, tb));
    EXPECT_TRUE(matches(c, ref_matmul(a, b), rtol_of(c.dtype()))) << dtype_name(ta) << " @ " << dtype_name(tb);
  }
}

TEST(Matmul, LargeProductIsAccurate) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor a = testing::random({256, 300}, t, 7), b = testing::random({300, 200}, t, 8);
    Ref r = ref_matmul(a, b);
    EXPECT_TRUE(matches(call_op1("matmul", {a, b}), r, t == DType::Float32 ? 1e-5 : 1e-14)) << dtype_name(t);
    // b.T stored row-major, used through a transposed view.
    Tensor bt = testing::reversed_view(testing::reversed_view(b).contiguous());
    EXPECT_TRUE(matches(call_op1("matmul", {a, bt}), r, t == DType::Float32 ? 1e-5 : 1e-14)) << dtype_name(t);
  }
}

TEST(Matmul, BatchedBroadcastLarge) {
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor a = testing::random({4, 1, 64, 100}, t, 3), b = testing::random({3, 100, 70}, t, 4);
    EXPECT_TRUE(matches(call_op1("matmul", {a, b}), ref_matmul(a, b), t == DType::Float32 ? 1e-5 : 1e-14));
    EXPECT_TRUE(matches(call_op1("matmul", {b.as_strided({100}, {1}, 0), b}), ref_matmul(b.as_strided({100}, {1}, 0), b),
                        t == DType::Float32 ? 1e-5 : 1e-14));
  }
}

TEST(Matmul, OneDnnAndLoopAgreeOnFloat32) {
  Tensor a = testing::random({3, 40, 50}, DType::Float32, 5), b = testing::random({50, 60}, DType::Float32, 6);
  Tensor via_dnnl = call_op1("matmul", {a, b});
  Tensor via_loop = Tensor::empty({3, 40, 60}, DType::Float32);
  matmul_loop_into(via_loop, a, b);
  Ref r = ref_matmul(a, b);
  EXPECT_TRUE(matches(via_dnnl, r, 2e-6));
  EXPECT_TRUE(matches(via_loop, r, 2e-6));
}

// A graph node's prepared matmul gives the eager op's bits for every shape pair and layout (the
// kept primitive re-pointed when the layouts repeat, a new one when they change between launches),
// with every dtype and 1-D operand going the eager way.
TEST(Matmul, PreparedKernelGivesTheEagerBitsAcrossLayouts) {
  const OpDef& op = get_op("matmul");
  unsigned seed = 900;
  std::vector<std::pair<Shape, Shape>> pairs = shape_pairs();  // (most below oneDNN's threshold)
  pairs.insert(pairs.end(), {{{40, 70}, {70, 50}}, {{3, 40, 50}, {50, 60}}, {{2, 1, 33, 64}, {3, 64, 20}}});
  for (auto& [sa, sb] : pairs) {
    for (DType t : {DType::Float32, DType::Float64}) {
      Metas in = {{sa, t}, {sb, t}};
      Metas out = op.infer(in, Attrs());
      PreparedFn run = op.prepare[static_cast<int>(Device::CPU)](in, Attrs(), out);
      ASSERT_TRUE(static_cast<bool>(run));
      for (int round = 0; round < 2; ++round)
        for (auto& [wa, a] : operands(sa, t, seed += 3))
          for (auto& [wb, b] : operands(sb, t, seed += 3)) {
            Tensor want = call_op1("matmul", {a, b});
            Tensor got = Tensor::empty(out[0].shape, t);
            run({a, b}, {got});
            ASSERT_EQ(0, std::memcmp(got.raw_data(), want.raw_data(), got.nbytes()))
                << shape_str(sa) << " " << wa << " @ " << shape_str(sb) << " " << wb << " " << dtype_name(t);
          }
    }
  }
}

TEST(Matmul, PrimitivesAreCached) {
  Tensor a = testing::random({32, 33}, DType::Float32, 1), b = testing::random({33, 34}, DType::Float32, 2);
  call_op1("matmul", {a, b});
  int64_t hits = PrimitiveCache::instance().hits();
  call_op1("matmul", {a, b});
  EXPECT_EQ(PrimitiveCache::instance().hits(), hits + 1);
}

// Transposed operands and size-1 batch dims go to oneDNN as they are: no silent loop fallback.
TEST(Matmul, Float32GeometriesStayOnOneDnn) {
  const std::pair<Shape, Shape> pairs[] = {{{29, 31}, {31, 33}}, {{1, 29, 31}, {5, 31, 33}},
                                           {{4, 1, 29, 31}, {3, 31, 33}}, {{29, 31}, {6, 31, 33}}};
  for (auto& [sa, sb] : pairs) {
    for (auto& [wa, a] : operands(sa, DType::Float32, 1)) {
      for (auto& [wb, b] : operands(sb, DType::Float32, 2)) {
        PrimitiveCache::instance().clear();
        int64_t misses = PrimitiveCache::instance().misses();
        Tensor c = call_op1("matmul", {a, b});
        EXPECT_EQ(PrimitiveCache::instance().misses(), misses + 1) << wa << " @ " << wb;
        EXPECT_EQ(PrimitiveCache::instance().size(), 1u) << wa << " @ " << wb;
        EXPECT_TRUE(matches(c, ref_matmul(a, b), 2e-6)) << wa << " @ " << wb;
      }
    }
  }
}

// Below kTinyMatmulMacs the loop is faster than oneDNN's per-call overhead: no primitive is made.
TEST(Matmul, TinyFloat32ProductsUseTheLoop) {
  Tensor a = testing::random({4, 4}, DType::Float32, 1), b = testing::random({4, 4}, DType::Float32, 2);
  PrimitiveCache::instance().clear();
  Tensor c = call_op1("matmul", {a, b});
  EXPECT_EQ(PrimitiveCache::instance().size(), 0u);
  EXPECT_TRUE(matches(c, ref_matmul(a, b), 2e-6));
}

TEST(Matmul, BoolIsOrOfAnds) {
  Tensor a = testing::from_ints({1, 0, 0, 0}, DType::Bool).as_strided({2, 2}, {2, 1}, 0);
  Tensor b = testing::from_ints({0, 1, 1, 1}, DType::Bool).as_strided({2, 2}, {2, 1}, 0);
  Tensor c = call_op1("matmul", {a, b});
  ASSERT_EQ(c.dtype(), DType::Bool);
  EXPECT_EQ(c.item_int(0), 0);
  EXPECT_EQ(c.item_int(1), 1);
  EXPECT_EQ(c.item_int(2), 0);
  EXPECT_EQ(c.item_int(3), 0);
}

TEST(Matmul, IntegersWrapLikeNumpy) {
  Tensor a = testing::from_ints({65536, 3}, DType::Int32);
  Tensor c = call_op1("matmul", {a, a});  // 2^32 + 9 in int32
  EXPECT_EQ(c.item_int(), 9);
  Tensor d = testing::from_ints({INT64_MAX, 1}, DType::Int64);
  EXPECT_EQ(call_op1("matmul", {d, testing::from_ints({1, 1}, DType::Int64)}).item_int(), INT64_MIN);
}

TEST(Matmul, NumpyErrors) {
  Tensor s = Tensor::scalar(1, DType::Float32);
  Tensor v = testing::iota({3}, DType::Float32);
  EXPECT_TRUE(testing::raises([&] { call_op1("matmul", {s, v}); }, ErrorKind::Value,
                              "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core "
                              "with signature (n?,k),(k,m?)->(n?,m?) requires 1)"));
  EXPECT_TRUE(testing::raises([&] { call_op1("matmul", {v, s}); }, ErrorKind::Value,
                              "matmul: Input operand 1 does not have enough dimensions (has 0, gufunc core "
                              "with signature (n?,k),(k,m?)->(n?,m?) requires 1)"));
  Tensor a = testing::iota({2, 4}, DType::Float32), b = testing::iota({3, 5}, DType::Float32);
  EXPECT_TRUE(testing::raises([&] { call_op1("matmul", {a, b}); }, ErrorKind::Value,
                              "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                              "signature (n?,k),(k,m?)->(n?,m?) (size 3 is different from 4)"));
  EXPECT_TRUE(testing::raises([&] { call_op1("matmul", {v, testing::iota({4}, DType::Int32)}); }, ErrorKind::Value,
                              "(size 4 is different from 3)", true));
  Tensor x = testing::iota({2, 2, 3}, DType::Float32), y = testing::iota({3, 3, 4}, DType::Float32);
  EXPECT_TRUE(testing::raises([&] { call_op1("matmul", {x, y}); }, ErrorKind::Value,
                              "operands could not be broadcast together with remapped shapes [original->remapped]: "
                              "(2,2,3)->(2,newaxis,newaxis) (3,3,4)->(3,newaxis,newaxis)  and requested shape (2,4)"));
}

}  // namespace
}  // namespace pj
