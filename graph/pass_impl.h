// What graph passes share (not part of the passes' public interface, graph/passes.h): the rebuild
// step, and the passes implemented outside passes.cc, registered there in pipeline order.
#pragma once

#include <algorithm>
#include <vector>

#include "graph/ir.h"

namespace pj::graph {

// Old value id -> new value id while a graph is rebuilt. A constant is added to the new graph the
// first time something reads it, so a constant all of whose readers were folded away disappears.
class ValueMap {
 public:
  ValueMap(const Graph& g, Graph& out) : g_(g), out_(out), map_(g.values().size(), -1) {}
  int& operator[](int v) {
    if (map_[v] < 0 && g_.value(v).kind == ValueKind::Const) map_[v] = out_.add_const(g_.consts()[g_.value(v).index]);
    return map_[v];
  }

 private:
  const Graph& g_;
  Graph& out_;
  std::vector<int> map_;
};

// Adds node n of g to `out` with these attributes, its inputs and outputs mapped through `map`.
inline void copy_node(const Graph& g, const Node& n, const Attrs& attrs, Graph& out, ValueMap& map) {
  std::vector<int> ins;
  for (int v : n.inputs) ins.push_back(map[v]);
  Metas metas;
  for (int o : n.outputs) metas.push_back(g.value(o).meta);
  std::vector<int> ids = out.add_node(*n.op, ins, attrs, metas, n.line);
  for (size_t k = 0; k < ids.size(); ++k) map[n.outputs[k]] = ids[k];
}

// Per value, the nodes reading it, in node order; a graph output is also read by -1 (the caller).
inline std::vector<std::vector<int>> readers_of(const Graph& g) {
  std::vector<std::vector<int>> r(g.values().size());
  for (size_t i = 0; i < g.nodes().size(); ++i)
    for (int v : g.nodes()[i].inputs) r[v].push_back(static_cast<int>(i));
  for (int v : g.outputs()) r[v].push_back(-1);
  return r;
}

// The one node reading v when nothing else does (nor the caller, as a graph output); else -1.
inline int sole_reader(const std::vector<std::vector<int>>& readers, int v) {
  return readers[v].size() == 1 ? readers[v][0] : -1;
}

// Whether an impure node lies strictly between nodes `from` and `to`: work moved from one to the
// other would cross it (it may write in place what that work reads).
inline bool impure_between(const Graph& g, int from, int to) {
  for (int k = from + 1; k < to; ++k)
    if (g.nodes()[k].op->impure) return true;
  return false;
}

// Copies `g` node by node into a new graph. `emit(i, out, map)` decides what node i becomes:
// return false to copy it as it is; otherwise it adds nodes itself (or none) and sets map[] for
// node i's outputs to values of `out`.
template <typename Emit>
Graph rebuild(const Graph& g, Emit&& emit) {
  Graph out;
  ValueMap map(g, out);
  for (int v : g.inputs()) map[v] = out.add_input(g.value(v).meta, g.value(v).name, g.value(v).parameter);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (emit(static_cast<int>(i), out, map)) continue;
    copy_node(g, g.nodes()[i], g.nodes()[i].attrs, out, map);
  }
  std::vector<int> outs;
  for (int v : g.outputs()) outs.push_back(map[v]);
  out.set_outputs(outs);
  out.set_write_backs(g.write_backs());
  return out;
}

// graph/lower.cc
int lower(Graph& g);     // inference batch_norm -> per-channel coefficients and sub, mul, add

// graph/fuse_conv.cc
int fuse_conv(Graph& g); // conv2d -> affine -> relu -> max_pool2d chains -> conv2d_block
int layout(Graph& g);    // conv2d_block -> conv2d_block edges keep oneDNN's blocked layout

// graph/fuse_dense.cc
int fuse_dense(Graph& g);  // dense -> relu (its sole reader) -> one dense with relu=True

// graph/algebra.cc
int fold(Graph& g);      // nodes whose inputs are all constants -> constants (the eager kernels run once)
int simplify(Graph& g);  // x * 1, x / 1, x + (-0.0), x - 0, cast to its own dtype, ... -> x

}  // namespace pj::graph
