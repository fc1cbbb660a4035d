// fuse_conv: conv2d followed by a per-channel affine (a lowered inference batch_norm), a ReLU and a
// max_pool2d, each optional, becomes one conv2d_block node (graph/ops/conv_block_ops.cc), whose
// kernel keeps the activation in oneDNN's blocked layout between the steps.
// layout: where one conv2d_block's result is read by another alone, the activation stays in that
// blocked layout between them too (blocked_out / blocked_in): no reorder out and back.
#include <map>

#include "graph/ops/nn_params.h"
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
  explicit ChainFinder(const Graph& g) : g_(g), readers_(readers_of(g)) {}

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
    // the block runs where its last node was: nothing impure may lie between
    if (b.nodes.size() == 1 || impure_between(g_, b.nodes.front(), b.nodes.back())) return Block{};
    b.output = v;
    return b;
  }

 private:
  // The one node reading v, when it is op `name` and v is not also a graph output; else -1.
  int sole_reader(int v, const char* name) const {
    const int n = graph::sole_reader(readers_, v);
    return n >= 0 && g_.nodes()[n].op->name == name ? n : -1;
  }

  const Graph& g_;
  std::vector<std::vector<int>> readers_;
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

namespace {

bool is_block(const Node& n) { return n.op->name == "conv2d_block"; }

// Whether the fused kernel runs for node n with these layout flags (else it would run op by op,
// converting layouts: correct, but the reorders would not be saved).
bool runs_blocked(const Graph& g, const Node& n, bool in, bool out) {
  Metas ins, outs;
  for (int v : n.inputs) ins.push_back(g.value(v).meta);
  for (int v : n.outputs) outs.push_back(g.value(v).meta);
  Attrs a = n.attrs;
  a.set("blocked_in", in);
  a.set("blocked_out", out);
  try {
    return conv_block_plan(conv_block_spec(ins, a, outs)) != nullptr;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

int layout(Graph& g) {
  const size_t n = g.nodes().size();
  const std::vector<std::vector<int>> readers = readers_of(g);  // (a graph output is read in NCHW)
  std::vector<bool> in(n, false), out(n, false);
  int edges = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& a = g.nodes()[i];
    if (!is_block(a) || g.value(a.outputs[0]).meta.dtype != DType::Float32) continue;
    const int b = sole_reader(readers, a.outputs[0]);
    if (b < 0 || !is_block(g.nodes()[b])) continue;
    const Node& next = g.nodes()[b];
    if (next.inputs[0] != a.outputs[0] || std::count(next.inputs.begin(), next.inputs.end(), a.outputs[0]) != 1) continue;
    if (!runs_blocked(g, a, in[i], true) || !runs_blocked(g, next, true, out[b])) continue;
    out[i] = in[b] = true;
    ++edges;
  }
  if (!edges) return 0;
  g = rebuild(g, [&](int i, Graph& o, ValueMap& map) {
    if (!in[i] && !out[i]) return false;
    Attrs attrs = g.nodes()[i].attrs;
    if (in[i]) attrs.set("blocked_in", true);
    if (out[i]) attrs.set("blocked_out", true);
    copy_node(g, g.nodes()[i], attrs, o, map);
    return true;
  });
  return edges;
}

}  // namespace pj::graph
