// dropout, embedding and dense against plain references: dropout's mask is rand(shape, seed) < 1 - p
// (so determinism per seed, the global stream and set_seed, independence from the thread count and
// the layout, the exact 1/(1-p) scaling and the p == 0 / eval identities all follow); embedding
// gathers rows for every index dtype and shape; dense matches a double loop for odd shapes, both
// weight layouts oneDNN takes without a copy, a layout it does not, with and without bias; plus
// every error message.
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/copy.h"
#include "kernels/nn_misc.h"
#include "kernels/random.h"
#include "kernels/threading.h"
#include "kernels/weight_cache.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::uniform;
using testing::values;

using testing::kFloats;

// ---- dropout ---------------------------------------------------------------------------------------

Tensors dropout(const Tensor& x, Attrs a) { return call_op(get_op("dropout"), {x}, a); }

Attrs drop_attrs(double p, std::optional<int64_t> seed, bool training = true) {
  Attrs a{{"p", p}, {"training", training}};
  a.set("seed", seed ? AttrValue(*seed) : AttrValue());
  return a;
}

// The uniforms dropout draws: what rand(shape, Float32, seed) gives.
std::vector<double> draws(const Shape& s, std::optional<int64_t> seed) {
  Attrs a{{"shape", IntList(s.begin(), s.end())}, {"dtype", DType::Float32}};
  a.set("seed", seed ? AttrValue(*seed) : AttrValue());
  return values(call_op1("rand", {}, a));
}

TEST(Dropout, MaskIsRandBelowKeepProbAndKeptValuesScaleExactly) {
  for (DType t : kFloats)
    for (double p : {0.1, 0.5, 0.9})
      for (const Shape& s : {Shape{}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4}, Shape{301, 257}}) {
        Tensor x = uniform(s, t, -4, 4, 1);
        std::vector<double> u = draws(s, 42);
        for (const Tensor& xs : testing::layouts(x)) {
          Tensors out = dropout(xs, drop_attrs(p, 42));
          ASSERT_EQ(out.size(), 2u);
          EXPECT_EQ(out[0].dtype(), t);
          EXPECT_EQ(out[1].dtype(), DType::Bool);
          EXPECT_EQ(out[1].shape(), s);
          std::vector<double> xv = values(x), y = values(out[0]), m = values(out[1]);
          for (int64_t i = 0; i < x.numel(); ++i) {
            const bool keep = u[i] < 1 - p;
            ASSERT_EQ(m[i], keep ? 1 : 0) << shape_str(s) << " p " << p << " element " << i;
            const double want = t == DType::Float32
                                    ? static_cast<double>(static_cast<float>(xv[i]) * static_cast<float>(1 / (1 - p)))
                                    : xv[i] * (1 / (1 - p));
            ASSERT_EQ(y[i], keep ? want : 0.0) << shape_str(s) << " p " << p << " element " << i;
          }
        }
      }
}

TEST(Dropout, KeepsAboutOneMinusPAndSameMaskForEveryDtype) {
  Tensor x = uniform({1000, 1000}, DType::Float32, 1, 2, 1);
  Tensors a = dropout(x, drop_attrs(0.3, 7));
  std::vector<double> m = values(a[1]);
  double kept = 0;
  for (double v : m) kept += v;
  EXPECT_NEAR(kept / m.size(), 0.7, 0.003);
  Tensors b = dropout(testing::uniform({1000, 1000}, DType::Float64, 1, 2, 1), drop_attrs(0.3, 7));
  EXPECT_EQ(values(b[1]), m);
}

TEST(Dropout, SeedsGlobalStreamAndThreadCounts) {
  Tensor x = uniform({513, 129}, DType::Float32, -1, 1, 1);
  // An explicit seed: the same mask every time, different seeds differ, the global stream untouched.
  set_seed(11);
  std::vector<double> g0 = draws({5}, std::nullopt);
  set_seed(11);
  std::vector<double> m1 = values(dropout(x, drop_attrs(0.5, 3))[1]);
  EXPECT_EQ(values(dropout(x, drop_attrs(0.5, 3))[1]), m1);
  EXPECT_NE(values(dropout(x, drop_attrs(0.5, 4))[1]), m1);
  EXPECT_EQ(draws({5}, std::nullopt), g0);
  // seed None: successive calls differ; set_seed replays them.
  set_seed(5);
  std::vector<double> a1 = values(dropout(x, drop_attrs(0.5, std::nullopt))[1]);
  std::vector<double> a2 = values(dropout(x, drop_attrs(0.5, std::nullopt))[1]);
  EXPECT_NE(a1, a2);
  set_seed(5);
  EXPECT_EQ(values(dropout(x, drop_attrs(0.5, std::nullopt))[1]), a1);
  EXPECT_EQ(values(dropout(x, drop_attrs(0.5, std::nullopt))[1]), a2);
  // The thread count changes nothing.
  const int saved = get_num_threads();
  for (int nt : {1, 2, 3, 4}) {
    set_num_threads(nt);
    EXPECT_EQ(values(dropout(x, drop_attrs(0.5, 3))[1]), m1) << nt << " threads";
    set_seed(5);
    Tensors r = dropout(x, drop_attrs(0.5, std::nullopt));
    EXPECT_EQ(values(r[1]), a1) << nt << " threads";
  }
  set_num_threads(saved);
}

TEST(Dropout, IdentityWhenNotTrainingOrPZeroAndDrawsNothing) {
  for (DType t : kFloats) {
    Tensor x = uniform({3, 17}, t, -4, 4, 2);
    for (const Tensor& xs : testing::layouts(x))
      for (Attrs a : {drop_attrs(0.0, std::nullopt), drop_attrs(0.5, std::nullopt, false), drop_attrs(0.0, 9, false)}) {
        set_seed(21);
        Tensors out = dropout(xs, a);
        EXPECT_EQ(values(out[0]), values(x));
        EXPECT_EQ(values(out[1]), std::vector<double>(x.numel(), 1.0));
        std::vector<double> after = draws({4}, std::nullopt);
        set_seed(21);
        EXPECT_EQ(after, draws({4}, std::nullopt)) << "the global stream advanced";
      }
  }
}

TEST(Dropout, DefaultsAndErrors) {
  Tensor x = uniform({100, 100}, DType::Float32, 1, 2, 1);
  set_seed(0);
  Tensors d = dropout(x, {});  // p = 0.5, training
  double kept = 0;
  for (double v : values(d[1])) kept += v;
  EXPECT_NEAR(kept / 1e4, 0.5, 0.03);
  PJ_EXPECT_ERROR(dropout(x, {{"p", 1.0}}), Value, "dropout: p must be in [0, 1), but got 1");
  PJ_EXPECT_ERROR(dropout(x, {{"p", -0.25}}), Value, "dropout: p must be in [0, 1), but got -0.25");
  PJ_EXPECT_ERROR(dropout(testing::iota({3}, DType::Int64), {}), Type, "dropout: x must be Float32 or Float64, but got Int64");
}

// ---- embedding -------------------------------------------------------------------------------------

TEST(Embedding, GathersRows) {
  for (DType t : kFloats)
    for (DType it : {DType::Int32, DType::Int64})
      for (const Shape& s : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 3, 2}, Shape{0}, Shape{40000}}) {
        const int64_t V = 17, D = 5;
        Tensor w = uniform({V, D}, t, -1, 1, 1);
        Tensor idx = testing::randints(s, it, 0, V, 2);
        for (const Tensor& ws : testing::layouts(w))
          for (const Tensor& is : testing::layouts(idx)) {
            Tensor y = call_op1("embedding", {ws, is}, {{"padding_idx", int64_t(-1)}});
            Shape want_shape = s;
            want_shape.push_back(D);
            ASSERT_EQ(y.shape(), want_shape);
            EXPECT_EQ(y.dtype(), t);
            std::vector<double> iv = values(idx), wv = values(w), yv = values(y);
            for (int64_t i = 0; i < idx.numel(); ++i)
              for (int64_t d = 0; d < D; ++d)
                ASSERT_EQ(yv[i * D + d], wv[static_cast<int64_t>(iv[i]) * D + d]) << shape_str(s);
          }
      }
}

TEST(Embedding, Errors) {
  Tensor w = uniform({5, 3}, DType::Float32, -1, 1, 1);
  auto emb = [](Tensors in, Attrs a = {}) { return call_op1("embedding", in, a); };
  PJ_EXPECT_ERROR(emb({w, testing::from_ints({0, 5}, DType::Int64)}), Index,
                  "embedding: index 5 is out of range for 5 embeddings (weight shape (5, 3))");
  PJ_EXPECT_ERROR(emb({w, testing::from_ints({-1}, DType::Int32)}), Index,
                  "embedding: index -1 is out of range for 5 embeddings (weight shape (5, 3))");
  // The first bad index in logical order is named, also when the check runs in parallel.
  Tensor many = Tensor::zeros({300000}, DType::Int64);
  testing::set_item(many, 290000, 9);
  testing::set_item(many, 100001, 7);
  PJ_EXPECT_ERROR(emb({w, many}), Index, "embedding: index 7 is out of range for 5 embeddings (weight shape (5, 3))");
  PJ_EXPECT_ERROR(emb({w, testing::from_ints({0}, DType::Int64)}, {{"padding_idx", int64_t(5)}}), Value,
                  "embedding: padding_idx 5 is out of range for 5 embeddings (weight shape (5, 3))");
  PJ_EXPECT_ERROR(emb({w, testing::from_ints({0}, DType::Int64)}, {{"padding_idx", int64_t(-6)}}), Value,
                  "embedding: padding_idx -6 is out of range for 5 embeddings (weight shape (5, 3))");
  PJ_EXPECT_ERROR(emb({w, testing::from_doubles({0}, DType::Float32)}), Type,
                  "embedding: indices must be Int32 or Int64, but got Float32");
  PJ_EXPECT_ERROR(emb({testing::iota({5, 3}, DType::Int32), testing::from_ints({0}, DType::Int64)}), Type,
                  "embedding: weight must be Float32 or Float64, but got Int32");
  PJ_EXPECT_ERROR(emb({uniform({5}, DType::Float32, 0, 1, 1), testing::from_ints({0}, DType::Int64)}), Value,
                  "embedding: weight must be 2-D (num_embeddings, embedding_dim), but got shape (5,)");
}

// ---- dense -----------------------------------------------------------------------------------------

// x [..., K] @ w[N, K].T + b, in double, with the sum of |terms| for the tolerance.
void ref_dense(const Tensor& x, const Tensor& w, const Tensor* b, std::vector<double>* y, std::vector<double>* mag) {
  const int64_t K = w.dim(1), N = w.dim(0), M = K ? x.numel() / K : x.numel();
  std::vector<double> xv = values(x), wv = values(w), bv = b ? values(*b) : std::vector<double>(N, 0);
  y->assign(M * N, 0);
  mag->assign(M * N, 0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = bv[n], a = std::abs(bv[n]);
      for (int64_t k = 0; k < K; ++k) {
        s += xv[m * K + k] * wv[n * K + k];
        a += std::abs(xv[m * K + k] * wv[n * K + k]);
      }
      (*y)[m * N + n] = s;
      (*mag)[m * N + n] = a;
    }
}

::testing::AssertionResult dense_close(const Tensor& got, const std::vector<double>& want, const std::vector<double>& mag) {
  const double tol = got.dtype() == DType::Float32 ? 2e-6 : 1e-14;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.item_double(i);
    if (!(std::abs(g - want[i]) <= tol * (mag[i] + 1)))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << want[i];
  }
  return ::testing::AssertionSuccess();
}

// A weight whose rows are neither contiguous nor columns of a contiguous block.
Tensor odd_layout(const Tensor& w) { return testing::gapped(w); }

TEST(Dense, MatchesReferenceOverShapesLayoutsAndBias) {
  for (DType t : kFloats)
    for (const Shape& lead : {Shape{}, Shape{1}, Shape{3}, Shape{2, 3}, Shape{0}, Shape{257}})
      for (int64_t K : {1, 17, 300})
        for (int64_t N : {1, 3, 17, 129}) {
          Shape xs = lead;
          xs.push_back(K);
          Tensor x = uniform(xs, t, -1, 1, 1), w = uniform({N, K}, t, -1, 1, 2), b = uniform({N}, t, -1, 1, 3);
          for (bool with_bias : {false, true}) {
            std::vector<double> want, mag;
            ref_dense(x, w, with_bias ? &b : nullptr, &want, &mag);
            Shape ys = lead;
            ys.push_back(N);
            for (const Tensor& xl : testing::layouts(x))
              for (const Tensor& wl : {w, testing::fortran(w), odd_layout(w)}) {
                Tensors in = {xl, wl};
                if (with_bias) in.push_back(testing::gapped(b));
                Tensor y = call_op1("dense", in, {});
                SCOPED_TRACE(shape_str(xs) + " N " + std::to_string(N) + " " + dtype_name(t) + (with_bias ? " bias" : ""));
                ASSERT_EQ(y.shape(), ys);
                EXPECT_EQ(y.dtype(), t);
                EXPECT_TRUE(dense_close(y, want, mag));
              }
          }
        }
}

TEST(Dense, ZeroFeaturesGiveTheBiasAndPrimitivesAreCached) {
  Tensor x = Tensor::empty({3, 0}, DType::Float32), w = Tensor::empty({2, 0}, DType::Float32);
  Tensor b = testing::from_doubles({1.5, -2}, DType::Float32);
  EXPECT_EQ(values(call_op1("dense", {x, w, b}, {})), (std::vector<double>{1.5, -2, 1.5, -2, 1.5, -2}));
  EXPECT_EQ(values(call_op1("dense", {x, w}, {})), std::vector<double>(6, 0.0));
  Tensor x2 = uniform({33, 20}, DType::Float32, -1, 1, 1), w2 = uniform({7, 20}, DType::Float32, -1, 1, 2);
  Tensor b2 = uniform({7}, DType::Float32, -1, 1, 3);
  call_op1("dense", {x2, w2, b2}, {});
  // One plan per geometry, and the weights are not reordered again for a new input.
  const WeightCacheStats s = weight_cache_stats();
  Tensor y = call_op1("dense", {uniform({33, 20}, DType::Float32, -1, 1, 4), w2, b2}, {});
  EXPECT_EQ(dense_plan(33, 20, 7, true), dense_plan(33, 20, 7, true));
  EXPECT_NE(dense_plan(33, 20, 7, true), dense_plan(33, 20, 7, false));
  EXPECT_EQ(weight_cache_stats().reorders, s.reorders);
  // Mixed dtypes promote.
  EXPECT_EQ(call_op1("dense", {x2, cast(w2, DType::Float64)}, {}).dtype(), DType::Float64);
}

TEST(Dense, Errors) {
  Tensor x = uniform({2, 5}, DType::Float32, -1, 1, 1), w = uniform({3, 4}, DType::Float32, -1, 1, 2);
  auto dense = [](Tensors in) { return call_op1("dense", in, {}); };
  PJ_EXPECT_ERROR(dense({x, w}), Value, "dense: input has 5 features but weight expects 4 (weight shape (3, 4))");
  Tensor x4 = uniform({2, 4}, DType::Float32, -1, 1, 1);
  PJ_EXPECT_ERROR(dense({x4, w, uniform({2}, DType::Float32, 0, 1, 1)}), Value,
                  "dense: bias has shape (2,) but expected (3,) (weight shape (3, 4))");
  PJ_EXPECT_ERROR(dense({x4, uniform({4}, DType::Float32, 0, 1, 1)}), Value,
                  "dense: weight must be 2-D (out_features, in_features), but got shape (4,)");
  PJ_EXPECT_ERROR(dense({Tensor::scalar(1, DType::Float32), w}), Value, "dense: input must have at least 1 dim, but got shape ()");
  PJ_EXPECT_ERROR(dense({testing::iota({2, 4}, DType::Int64), w}), Type, "dense: input must be Float32 or Float64, but got Int64");
  PJ_EXPECT_ERROR(dense({x4, testing::iota({3, 4}, DType::Int32)}), Type, "dense: weight must be Float32 or Float64, but got Int32");
  PJ_EXPECT_ERROR(dense({x4, w, testing::iota({3}, DType::Bool)}), Type, "dense: bias must be Float32 or Float64, but got Bool");
  PJ_EXPECT_ERROR(dense({x4}), Type, "dense() takes 2 or 3 tensor inputs but 1 were given");
  PJ_EXPECT_ERROR(dense({x4, w, w, w}), Type, "dense() takes 2 or 3 tensor inputs but 4 were given");
}

// A graph node's prepared dense keeps its oneDNN memories and re-points them at each launch's
// buffers: launches with new buffers, and concurrent launches of one prepared kernel (the plan's
// pool gives each its own arena), must each compute their own result.
TEST(Dense, PreparedKernelRebindsBuffersAndRunsConcurrently) {
  const OpDef& op = get_op("dense");
  const int64_t M = 8, K = 24, N = 5;
  Metas in = {{{M, K}, DType::Float32}, {{N, K}, DType::Float32}, {{N}, DType::Float32}};
  Metas out = {{{M, N}, DType::Float32}};
  PreparedFn run = op.prepare[static_cast<int>(Device::CPU)](in, Attrs(), out);
  ASSERT_TRUE(static_cast<bool>(run));
  Tensor w = uniform({N, K}, DType::Float32, -1, 1, 2), b = uniform({N}, DType::Float32, -1, 1, 3);
  auto check = [&](int seed) {
    Tensor x = uniform({M, K}, DType::Float32, -1, 1, 10 + seed);
    Tensor y = Tensor::empty({M, N}, DType::Float32);
    run({x, w, b}, {y});
    std::vector<double> want, mag;
    ref_dense(x, w, &b, &want, &mag);
    return dense_close(y, want, mag);
  };
  for (int s = 0; s < 5; ++s) EXPECT_TRUE(check(s)) << "launch " << s;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int s = 0; s < 200; ++s)
        if (!check(100 * t + s)) ++wrong;
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// A training loop writes the weights before every launch: from the third such launch the prepared
// kernel reads them in their own layout (no reordered copy per step). Every launch gives the bits
// the eager kernel gives for the same weights, before the switch, after it, and back once the
// weights stop changing (an inference loop after training).
TEST(Dense, TrainedWeightsGiveTheEagerBits) {
  const OpDef& op = get_op("dense");
  struct Geometry { int64_t M, K, N; };
  for (const Geometry& g : {Geometry{1, 784, 256}, Geometry{7, 784, 256}, Geometry{32, 784, 256},
                            Geometry{33, 784, 256}, Geometry{32, 256, 10}, Geometry{16, 33, 17}, Geometry{5, 1, 1},
                            Geometry{64, 100, 37}, Geometry{3, 2048, 64}}) {
    const int64_t M = g.M, K = g.K, N = g.N;
    Metas in = {{{M, K}, DType::Float32}, {{N, K}, DType::Float32}, {{N}, DType::Float32}};
    Metas out = {{{M, N}, DType::Float32}};
    PreparedFn run = op.prepare[static_cast<int>(Device::CPU)](in, Attrs(), out);
    Tensor w = uniform({N, K}, DType::Float32, -1, 1, 2), b = uniform({N}, DType::Float32, -1, 1, 3);
    for (int step = 0; step < 8; ++step) {
      if (step < 5) {  // an SGD-like update, in place, as write_back makes it
        copy_into(w, uniform({N, K}, DType::Float32, -1, 1, 20 + step));
        w.storage()->note_write();
      }
      Tensor x = uniform({M, K}, DType::Float32, -1, 1, 10 + step);
      Tensor y = Tensor::empty({M, N}, DType::Float32), want = Tensor::empty({M, N}, DType::Float32);
      run({x, w, b}, {y});
      dense_into(want, x, w, b);
      EXPECT_EQ(0, std::memcmp(y.raw_data(), want.raw_data(), y.nbytes()))
          << M << "x" << K << "x" << N << ", step " << step;
    }
  }
}

}  // namespace
}  // namespace pj
