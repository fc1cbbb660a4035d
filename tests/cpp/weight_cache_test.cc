// The reordered-weights cache under a training loop's writes (kernels/weight_cache.h): an eager
// dense whose weights are written before each of two calls in a row stops reordering them
// and drops their stale copy; a new version reorders into the old copy's buffer when nothing else
// holds it; weights that stop changing are reordered once more and then hit. Every call gives the
// bits a dense over a fresh copy of the same weights gives.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/copy.h"
#include "kernels/weight_cache.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::uniform;

// y = dense(x, w, b) must equal the dense of an unrelated copy of w (no cached state of w's).
void expect_fresh_bits(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& what) {
  auto dense = [&](const Tensor& weights) {
    return b.defined() ? call_op1("dense", {x, weights, b}, {}) : call_op1("dense", {x, weights}, {});
  };
  Tensor y = dense(w), want = dense(w.clone());
  ASSERT_EQ(y.nbytes(), want.nbytes());
  EXPECT_EQ(0, std::memcmp(y.raw_data(), want.raw_data(), y.nbytes())) << what;
}

TEST(WeightCache, EagerDenseStopsReorderingWeightsWrittenBeforeEveryCall) {
  const int64_t M = 32, K = 784, N = 256;
  Tensor x = uniform({M, K}, DType::Float32, -1, 1, 1), b = uniform({N}, DType::Float32, -1, 1, 2);
  // Each step's expected result, from weights of their own (made before: no entries left over).
  std::vector<Tensor> want;
  for (int step = 0; step < 6; ++step)
    want.push_back(call_op1("dense", {x, uniform({N, K}, DType::Float32, -1, 1, 10 + step), b}, {}));
  Tensor w = uniform({N, K}, DType::Float32, -1, 1, 3);
  weight_cache_clear();
  const WeightCacheStats s0 = weight_cache_stats();
  call_op1("dense", {x, w, b}, {});
  if (weight_cache_stats().reorders == s0.reorders)
    GTEST_SKIP() << "oneDNN reads plain weights for this geometry on this machine: nothing is reordered";
  int64_t reorders_at_step[6];
  for (int step = 0; step < 6; ++step) {  // an optimizer's in-place update, then the next forward
    copy_into(w, uniform({N, K}, DType::Float32, -1, 1, 10 + step));
    w.storage()->note_write();
    const WeightCacheStats before = weight_cache_stats();
    Tensor y = call_op1("dense", {x, w, b}, {});
    reorders_at_step[step] = weight_cache_stats().reorders - before.reorders;
    EXPECT_EQ(0, std::memcmp(y.raw_data(), want[step].raw_data(), y.nbytes())) << "step " << step;
  }
  // Step 0 finds one new version: reordered, into the stale copy's buffer. Step 1 finds a second
  // write in a row: the weights count as trained from there and are read where they are.
  EXPECT_EQ(reorders_at_step[0], 1);
  for (int step = 1; step < 6; ++step) EXPECT_EQ(reorders_at_step[step], 0) << "step " << step;
  EXPECT_GE(weight_cache_stats().recycled - s0.recycled, 1);
  // The trained weights' stale copy is gone.
  EXPECT_EQ(weight_cache_stats().entries, 0);
  EXPECT_EQ(weight_cache_stats().bytes, 0);
  // Inference after training: a few calls still read the weights in place, then one reorder, then
  // cache hits.
  int64_t reorders = weight_cache_stats().reorders;
  for (int call = 0; call < 8; ++call) expect_fresh_bits(x, w, b, "inference call " + std::to_string(call));
  EXPECT_EQ(weight_cache_stats().reorders - reorders, 1 + 8);  // w once, each fresh clone once
  reorders = weight_cache_stats().reorders;
  const int64_t hits = weight_cache_stats().hits;
  call_op1("dense", {x, w, b}, {});
  EXPECT_EQ(weight_cache_stats().reorders, reorders);
  EXPECT_EQ(weight_cache_stats().hits, hits + 1);
}

// A layer applied twice per step (the same weights, two inputs) is still a training loop.
TEST(WeightCache, TwoUsesPerWriteStillCountAsTraining) {
  const int64_t M = 16, K = 784, N = 256;
  Tensor x1 = uniform({M, K}, DType::Float32, -1, 1, 1), x2 = uniform({M, K}, DType::Float32, -1, 1, 4);
  Tensor w = uniform({N, K}, DType::Float32, -1, 1, 3), b = uniform({N}, DType::Float32, -1, 1, 2);
  weight_cache_clear();
  const WeightCacheStats s0 = weight_cache_stats();
  call_op1("dense", {x1, w, b}, {});
  if (weight_cache_stats().reorders == s0.reorders) GTEST_SKIP() << "no reorder for this geometry here";
  int64_t last = 0;
  for (int step = 0; step < 6; ++step) {
    copy_into(w, uniform({N, K}, DType::Float32, -1, 1, 30 + step));
    w.storage()->note_write();
    const int64_t before = weight_cache_stats().reorders;
    call_op1("dense", {x1, w, b}, {});
    call_op1("dense", {x2, w, b}, {});
    last = weight_cache_stats().reorders - before;
  }
  EXPECT_EQ(last, 0);
}

// The same weights reordered for a new version reuse the stale copy's buffer, unless a caller
// still holds the copy.
TEST(WeightCache, NewVersionReordersIntoTheStaleBuffer) {
  const int64_t M = 4, K = 784, N = 256;
  Tensor x = uniform({M, K}, DType::Float32, -1, 1, 1), w = uniform({N, K}, DType::Float32, -1, 1, 3);
  weight_cache_clear();
  const WeightCacheStats s0 = weight_cache_stats();
  call_op1("dense", {x, w}, {});
  if (weight_cache_stats().reorders == s0.reorders) GTEST_SKIP() << "no reorder for this geometry here";
  testing::set_item(w, 5, 0.5);  // one write, then enough uses that it is not a training loop
  for (int i = 0; i < 6; ++i) expect_fresh_bits(x, w, Tensor(), "after one write");
  EXPECT_EQ(weight_cache_stats().recycled - s0.recycled, 1);
}

}  // namespace
}  // namespace pj
