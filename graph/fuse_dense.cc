// fuse_dense: a dense whose result only a relu reads becomes one dense node with relu=True, whose
// kernel runs the eager relu in place on the result right after the matmul, while it is in cache:
// one step and one pass over memory fewer, the same bits (graph/ops/nn_misc_ops.cc). oneDNN's own
// ReLU post-op is not used: it maps NaN to 0, where relu keeps NaN.
#include "graph/pass_impl.h"

namespace pj::graph {

int fuse_dense(Graph& g) {
  const size_t n = g.nodes().size();
  std::vector<std::vector<int>> readers(g.values().size());
  for (size_t i = 0; i < n; ++i)
    for (int v : g.nodes()[i].inputs) readers[v].push_back(static_cast<int>(i));
  for (int v : g.outputs()) readers[v].push_back(-1);
  std::vector<int> relu_of(n, -1);  // dense node -> the relu it absorbs
  std::vector<bool> absorbed(n, false);
  int fused = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& d = g.nodes()[i];
    if (d.op->name != "dense" || (d.attrs.has("relu") && d.attrs.b("relu"))) continue;
    const std::vector<int>& r = readers[d.outputs[0]];
    if (r.size() != 1 || r[0] < 0 || g.nodes()[r[0]].op->name != "relu") continue;
    const Node& relu = g.nodes()[r[0]];
    if (g.value(relu.outputs[0]).meta.dtype != g.value(d.outputs[0]).meta.dtype) continue;
    // the dense runs where the relu was: nothing impure may lie between
    bool impure = false;
    for (int k = static_cast<int>(i) + 1; k < r[0]; ++k) impure = impure || g.nodes()[k].op->impure;
    if (impure) continue;
    relu_of[i] = r[0];
    absorbed[r[0]] = true;
    ++fused;
  }
  if (!fused) return 0;
  std::vector<int> dense_of(n, -1);
  for (size_t i = 0; i < n; ++i)
    if (relu_of[i] >= 0) dense_of[relu_of[i]] = static_cast<int>(i);
  g = rebuild(g, [&](int i, Graph& out, ValueMap& map) {
    if (relu_of[i] >= 0) return true;  // emitted where its relu was
    if (!absorbed[i]) return false;
    const Node& d = g.nodes()[dense_of[i]];
    Attrs a = d.attrs;
    a.set("relu", true);
    std::vector<int> ins;
    for (int v : d.inputs) ins.push_back(map[v]);
    const Node& relu = g.nodes()[i];
    map[relu.outputs[0]] = out.add_node(*d.op, ins, a, {g.value(relu.outputs[0]).meta}, d.line)[0];
    return true;
  });
  return fused;
}

}  // namespace pj::graph
