// Dynamic shapes in the IR: a captured graph planned for other input sizes (with_input_metas),
// symbolic int attributes filled per plan, and a tape's sweep emitted again for new sizes
// (replay_sweep) computing what the eager tape computes.
#include <gtest/gtest.h>

#include "common/check.h"
#include "graph/autodiff.h"
#include "graph/ir.h"
#include "graph/tape.h"
#include "test_util.h"

namespace pj::graph {
namespace {

TEST(WithInputMetas, InfersEveryNodeForTheNewSizes) {
  Graph g = parse_graph(
      "graph(%0: Float32[4, 3] x, %1: Float32[3] b) {\n"
      "  %2: Float32[4, 3] = add(%0, %1)\n"
      "  %3: Float32[4] = sum(%2) axis=(1,), keepdims=False\n"
      "  return (%3,)\n"
      "}\n");
  Graph h = with_input_metas(g, {TensorMeta{{7, 3}, DType::Float32}, TensorMeta{{3}, DType::Float32}});
  EXPECT_EQ(h.value(h.outputs()[0]).meta.shape, (Shape{7}));
  // a size an op rejects raises, as the eager op would
  EXPECT_THROW(with_input_metas(g, {TensorMeta{{7, 4}, DType::Float32}, TensorMeta{{3}, DType::Float32}}), Error);
}

TEST(WithInputMetas, FillsSymbolicAttributesWithThePlansValues) {
  Graph g = parse_graph(
      "graph(%0: Float32[24] x, %1: Int64[] n) {\n"
      "  %2: Float32[3, 8] = reshape(%0) shape=(3, -1)\n"
      "  return (%2,)\n"
      "}\n");
  const Metas in = {TensorMeta{{24}, DType::Float32}, TensorMeta{{}, DType::Int64}};
  const std::vector<SymbolicAttr> attrs = {{0, "shape", 0, 0}};
  Graph h = with_input_metas(g, in, {}, attrs, {{0, 4}});
  EXPECT_EQ(h.value(h.outputs()[0]).meta.shape, (Shape{4, 6}));
  EXPECT_NE(h.to_string().find("shape=(4, -1)"), std::string::npos) << h.to_string();
  EXPECT_THROW(with_input_metas(g, in, {}, attrs, {{0, 5}}), Error);  // 24 is not a multiple of 5
}

// The sweep of d/dx sum(tanh(x) * w) recorded by an eager tape at one batch size, replayed into a
// graph for another: the graph's gradient equals the eager tape's at that size, bit for bit.
TEST(ReplaySweep, EmitsTheBackwardForNewSizes) {
  auto eager_grad = [](const Tensor& x, const Tensor& w) {
    Tape tape;
    const int leaf = tape.watch(x);
    tape.start();
    Tensor y = call_op1("mul", {call_op1("tanh", {x}), w});
    Tensor s = call_op1("sum", {y}, Attrs{{"axis", std::monostate{}}, {"keepdims", false}});
    tape.stop();
    return tape.gradient({s}, {Tensor::scalar(1.0, DType::Float32)}, {leaf}, {Tensor::zeros(x.shape(), x.dtype())})[0];
  };
  // The captured graph: the forward, a seed, and the backward at batch 4, with its sweep's plan
  // written as capture would record it (handles: 0 x, 1 tanh, 2 w, 3 mul, 4 sum).
  Graph g = parse_graph(
      "graph(%0: Float32[4, 3] x, %1: Float32[3] w) {\n"
      "  %2: Float32[] = constant (1.0)\n"
      "  %3: Float32[4, 3] = tanh(%0)\n"
      "  %4: Float32[4, 3] = mul(%3, %1)\n"
      "  %5: Float32[] = sum(%4) axis=None, keepdims=False\n"
      "  return (%5,)\n"
      "}\n");
  SweepPlan p;
  p.node_begin = p.node_end = g.nodes().size();
  p.handle_values = {0, 3, 1, 4, 5};
  p.nodes = {{&get_op("tanh"), Attrs{}, {0}, {1}},
             {&get_op("mul"), Attrs{}, {1, 2}, {3}},
             {&get_op("sum"), Attrs{{"axis", std::monostate{}}, {"keepdims", false}}, {3}, {4}}};
  p.carries = {true, true, false, true, true};
  p.out_handles = {4};
  p.seed_values = {2};
  p.leaves = {0};
  p.zeros_values = {-1};
  p.result_values = {0};  // (replay maps this value to the gradient it makes: read back below)
  std::vector<int> map(g.values().size());
  for (size_t v = 0; v < map.size(); ++v) map[v] = static_cast<int>(v);
  replay_sweep(g, p, map);  // at the traced size: the captured graph's backward
  p.node_end = g.nodes().size();
  p.result_values = {map[0]};
  g.set_outputs({g.outputs()[0], p.result_values[0]});

  const Tensor w = testing::random({3}, DType::Float32, 7);
  for (int64_t n : {4, 2, 9}) {
    const Tensor x = testing::random({n, 3}, DType::Float32, static_cast<unsigned>(n));
    Graph h = with_input_metas(g, {meta_of(x), meta_of(w)}, {p});
    Tensors out = execute(h, {x, w});
    Tensor want = eager_grad(x, w);
    ASSERT_EQ(out[1].shape(), want.shape()) << n;
    for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(out[1].item_double(i), want.item_double(i)) << n << " " << i;
  }
}

}  // namespace
}  // namespace pj::graph
