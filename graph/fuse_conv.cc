// fuse_conv: conv2d followed by a per-channel affine (a lowered inference batch_norm), a ReLU and a
// max_pool2d, each optional, becomes one conv2d_block node (graph/ops/conv_block_ops.cc), whose
// kernel keeps the activation in oneDNN's blocked layout between the steps.
#include <map>

#include "graph/pass_impl.h"

namespace pj::graph {
namespace {

struct Block {
  std::vector<int> nodes;  // conv first, in program order
  std::vector<int> inputs;
  Attrs attrs;
  int output = -1;
};

bool per_channel(const Graph& g, int v, int64_t C) {
  const TensorMeta& m = g.value(v).meta;
  // [C, 1, 1] against (N, C, H, W) is per channel; a [C] would broadcast along W instead.
  return m.dtype == DType::Float32 && m.shape == Shape({C, 1, 1});
}

class ChainFinder {
 public:
  explicit ChainFinder(const Graph& g) : g_(g), readers_(g.values().size()), is_output_(g.values().size(), false) {
    for (size_t i = 0; i < g.nodes().size(); ++i)
      for (int v : g.nodes()[i].inputs) readers_[v].push_back(static_cast<int>(i));
    for (int v : g.outputs()) is_output_[v] = true;
  }

  // The block starting at conv node i, or one with no nodes.
  Block from(int i) const {
    Block b;
    const Node& conv = g_.nodes()[i];
    if (conv.op->name != "conv2d" || g_.value(conv.outputs[0]).meta.dtype != DType::Float32) return b;
    const int64_t C = g_.value(conv.outputs[0]).meta.shape[1];
    b.nodes = {i};
    b.inputs = conv.inputs;
    b.attrs = conv.attrs;
    b.attrs.set("bias", conv.inputs.size() == 3);
    int v = conv.outputs[0];
    // sub(v, m) -> mul(., a) -> add(., sh): the chained value first, as batch_norm computes it.
    std::vector<int> affine;
    int u = v;
    for (const char* name : {"sub", "mul", "add"}) {
      const int n = sole_reader(u, name);
      if (n < 0 || g_.nodes()[n].inputs[0] != u || !per_channel(g_, g_.nodes()[n].inputs[1], C)) break;
      affine.push_back(n);
      u = g_.nodes()[n].outputs[0];
    }
    const bool has_affine = affine.size() == 3;
    if (has_affine) {
      for (int n : affine) {
        b.nodes.push_back(n);
        b.inputs.push_back(g_.nodes()[n].inputs[1]);
      }
      v = u;
    }
    b.attrs.set("affine", has_affine);
    const int relu = sole_reader(v, "relu");
    b.attrs.set("relu", relu >= 0);
    if (relu >= 0) {
      b.nodes.push_back(relu);
      v = g_.nodes()[relu].outputs[0];
    }
    const int pool = sole_reader(v, "max_pool2d");
    if (pool >= 0) {
      b.nodes.push_back(pool);
      for (const auto& [k, val] : g_.nodes()[pool].attrs.items()) b.attrs.set("pool_" + k, val);
      v = g_.nodes()[pool].outputs[0];
    }
    if (b.nodes.size() == 1 || crosses_impure(b)) return Block{};
    b.output = v;
    return b;
  }

 private:
  // The one node reading v, when it is op `name` and v is not also a graph output; else -1.
  int sole_reader(int v, const char* name) const {
    if (readers_[v].size() != 1 || is_output_[v]) return -1;
    const int n = readers_[v][0];
    return g_.nodes()[n].op->name == name ? n : -1;
  }

  // The block runs where its last node was: nothing impure may lie between.
  bool crosses_impure(const Block& b) const {
    for (int i = b.nodes.front(); i <= b.nodes.back(); ++i)
      if (g_.nodes()[i].op->impure) return true;
    return false;
  }

  const Graph& g_;
  std::vector<std::vector<int>> readers_;
  std::vector<bool> is_output_;
};

}  // namespace

int fuse_conv(Graph& g) {
  ChainFinder finder(g);
  std::vector<int> owner(g.nodes().size(), -1);
  std::vector<Block> blocks;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    Block b = finder.from(static_cast<int>(i));
    if (b.nodes.empty()) continue;
    for (int n : b.nodes) owner[n] = static_cast<int>(blocks.size());
    blocks.push_back(std::move(b));
  }
  if (blocks.empty()) return 0;
  const OpDef& block_op = get_op("conv2d_block");
  g = rebuild(g, [&](int i, Graph& out, ValueMap& map) {
    if (owner[i] < 0) return false;
    const Block& b = blocks[owner[i]];
    if (i != b.nodes.back()) return true;  // emitted with the block's last node
    std::vector<int> ins;
    for (int v : b.inputs) ins.push_back(map[v]);
    map[b.output] = out.add_node(block_op, ins, b.attrs, {g.value(b.output).meta}, g.nodes()[b.nodes.front()].line)[0];
    return true;
  });
  return static_cast<int>(blocks.size());
}

}  // namespace pj::graph
