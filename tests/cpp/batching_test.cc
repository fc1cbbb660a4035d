// Batching (graph/batching.h): the batched graph's text for a small function, and its results
// against running the one-example graph per example.
#include <gtest/gtest.h>

#include "graph/batching.h"
#include "graph/ir.h"
#include "test_util.h"

namespace pj::graph {
namespace {

const char* kExample =
    "graph(%0: Float32[3, 4] x, %1: Float32[4, 2] w, %2: Float32[3] v) {\n"
    "  %3: Float32[3, 2] = matmul(%0, %1)  # line 2\n"
    "  %4: Float32[3] = sum(%3) axis=(1,), keepdims=False  # line 3\n"
    "  %5: Float32[3] = mul(%4, %2)  # line 4\n"
    "  %6: Float32[3] = softmax(%5) axis=0  # line 5\n"
    "  return (%6, %3)\n"
    "}\n";

TEST(Batching, RulesShiftAxesAndAlignBatchDims) {
  // x and v batched (5 examples), w shared
  Graph b = batch_graph(parse_graph(kExample), {true, false, true}, 5);
  EXPECT_EQ(b.to_string(),
            "graph(%0: Float32[5, 3, 4] x, %1: Float32[4, 2] w, %2: Float32[5, 3] v) {\n"
            "  %3: Float32[5, 3, 2] = matmul(%0, %1)  # line 2\n"
            "  %4: Float32[5, 3] = sum(%3) axis=(2,), keepdims=False  # line 3\n"
            "  %5: Float32[5, 3] = mul(%4, %2)  # line 4\n"
            "  %6: Float32[5, 3] = softmax(%5) axis=1  # line 5\n"
            "  return (%6, %3)\n"
            "}\n");
  EXPECT_EQ(unrolled_nodes(), 0);
  EXPECT_EQ(batched_outputs(), (std::vector<bool>{true, true}));
}

TEST(Batching, EqualsOneRunPerExample) {
  Graph g = parse_graph(kExample);
  Tensor x = testing::random({5, 3, 4}, DType::Float32, 1), w = testing::random({4, 2}, DType::Float32, 2);
  Tensor v = testing::random({5, 3}, DType::Float32, 3);
  Tensors got = execute(batch_graph(g, {true, false, true}, 5), {x, w, v});
  for (int64_t i = 0; i < 5; ++i) {
    Tensor xi = x.as_strided({3, 4}, {4, 1}, i * 12), vi = v.as_strided({3}, {1}, i * 3);
    Tensors want = execute(g, {xi, w, vi});
    for (size_t k = 0; k < want.size(); ++k)
      for (int64_t e = 0; e < want[k].numel(); ++e)
        EXPECT_EQ(got[k].item_double(i * want[k].numel() + e), want[k].item_double(e)) << "output " << k;
  }
}

TEST(Batching, AnOpWithoutARuleRunsPerExampleAndUnbatchedOutputsAreBroadcast) {
  Graph g = parse_graph(
      "graph(%0: Float32[2, 5] x, %1: Float32[3] c) {\n"
      "  %2: Float32[2, 5], %3: Int64[2, 5] = sort(%0) axis=-1, descending=False\n"
      "  %4: Float32[3] = exp(%1)\n"
      "  return (%2, %4)\n"
      "}\n");
  Graph b = batch_graph(g, {true, false}, 4);
  EXPECT_EQ(unrolled_nodes(), 1);
  EXPECT_EQ(batched_outputs(), (std::vector<bool>{true, false}));
  EXPECT_EQ(b.value(b.outputs()[1]).meta.shape, (Shape{4, 3}));
  EXPECT_THROW(batch_graph(g, {true, false}, 0), Error);
}

}  // namespace
}  // namespace pj::graph
