// The graph's persistent form (graph/ir.h save_graph / load_graph), which the compile cache keeps:
// what is written reads back as the same graph (text, constants' bits, write-backs), values
// dead-code elimination left behind are dropped, and no truncated or flipped input crashes a load.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "graph/ir.h"

namespace pj::graph {
namespace {

Graph sample() {
  Graph g = parse_graph(
      "graph(%0: Float32[2, 3] x, %1: Float32[4, 3] self.fc.weight) {\n"
      "  %2: Float32[] = constant (1.5)\n"
      "  %3: Float32[2, 4] = dense(%0, %1)  # line 12\n"
      "  %4: Float32[2, 4] = add(%3, %2)\n"
      "  %5: Float32[2, 4] = clamp(%4) min=0.0, max=None\n"
      "  return (%5,)\n"
      "}\n");
  // a constant too large to print its values, and attributes of every kind
  Tensor big = Tensor::empty({3, 5}, DType::Float32);
  for (int i = 0; i < 15; ++i) big.data<float>()[i] = 0.1f * static_cast<float>(i) - 0.7f;
  const int c = g.add_const(big);
  Attrs attrs{{"flag", true}, {"n", int64_t{-7}}, {"scale", 0.25}, {"mode", std::string("floor")},
              {"dims", IntList{1, -1, 3}}, {"dtype", DType::Float64}, {"none", std::monostate()}};
  const int m = g.add_node(*find_op("mul"), {c, c}, attrs, {meta_of(big)}, 14)[0];
  g.set_outputs({g.outputs()[0], m});
  g.set_write_backs({{0, 0}});
  return g;
}

std::string bytes_of(const Graph& g) {
  ByteWriter w;
  std::string why;
  EXPECT_TRUE(save_graph(g, w, &why)) << why;
  return w.take();
}

TEST(IrPersistentForm, ReadsBackTheSameGraph) {
  const Graph g = sample();
  const std::string bytes = bytes_of(g);
  ByteReader r(bytes);
  Graph back;
  std::string why;
  ASSERT_TRUE(load_graph(r, &back, &why)) << why;
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(back.to_string(), g.to_string());
  ASSERT_EQ(back.consts().size(), g.consts().size());
  for (size_t i = 0; i < g.consts().size(); ++i) {
    ASSERT_EQ(back.consts()[i].nbytes(), g.consts()[i].nbytes());
    EXPECT_EQ(std::memcmp(back.consts()[i].raw_data(), g.consts()[i].raw_data(), g.consts()[i].nbytes()), 0);
  }
  EXPECT_EQ(back.write_backs(), g.write_backs());
  EXPECT_EQ(back.nodes().back().attrs.to_string(), g.nodes().back().attrs.to_string());
  EXPECT_EQ(back.nodes().back().line, 14);
  EXPECT_TRUE(back.value(back.inputs()[1]).name == "self.fc.weight");
  EXPECT_EQ(bytes_of(back), bytes);  // (a fixed point)
}

TEST(IrPersistentForm, DropsWhatDeadCodeEliminationLeftBehind) {
  Graph g = parse_graph(
      "graph(%0: Float32[4] x) {\n"
      "  %1: Float32[4] = neg(%0)\n"
      "  %2: Float32[4] = exp(%0)\n"
      "  %3: Float32[4] = add(%2, %0)\n"
      "  return (%3,)\n"
      "}\n");
  ASSERT_EQ(g.eliminate_dead_code(), 1);
  ByteWriter w;
  std::string why;
  ASSERT_TRUE(save_graph(g, w, &why)) << why;
  ByteReader r(w.bytes());
  Graph back;
  ASSERT_TRUE(load_graph(r, &back, &why)) << why;
  EXPECT_EQ(back.to_string(), g.to_string());
  EXPECT_EQ(back.values().size(), 3u);  // x, exp, add: the dead neg's value is gone
}

TEST(IrPersistentForm, TruncatedOrFlippedInputIsAMissNeverACrash) {
  const std::string bytes = bytes_of(sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    ByteReader r(std::string_view(bytes).substr(0, n));
    Graph back;
    std::string why;
    EXPECT_FALSE(load_graph(r, &back, &why) && r.at_end()) << "a prefix of " << n << " bytes loaded";
  }
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit : {0, 3, 7}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      ByteReader r(bad);
      Graph back;
      std::string why;
      if (load_graph(r, &back, &why)) (void)back.to_string();  // (a flip may still read as a graph: it must be one)
    }
}

}  // namespace
}  // namespace pj::graph
