// fuse_dense: a dense whose result only a relu reads becomes one dense node with relu=True, whose
// kernel runs the eager relu in place on the result right after the matmul, while it is in cache:
// one step and one pass over memory fewer, the same bits (graph/ops/nn_misc_ops.cc). oneDNN's
// post-ops are not used: its ReLU maps NaN to 0, where relu keeps NaN, and so do its clip and
// clip_v2 (oneDNN 2.6, measured: a NaN row came out 0).
#include "graph/pass_impl.h"

namespace pj::graph {

int fuse_dense(Graph& g) {
  const size_t n = g.nodes().size();
  const std::vector<std::vector<int>> readers = readers_of(g);
  std::vector<int> dense_of(n, -1);  // relu node -> the dense that absorbs it
  std::vector<bool> moved(n, false);  // a dense emitted where its relu was
  int fused = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& d = g.nodes()[i];
    if (d.op->name != "dense" || (d.attrs.has("relu") && d.attrs.b("relu"))) continue;
    const int r = sole_reader(readers, d.outputs[0]);
    if (r < 0 || g.nodes()[r].op->name != "relu") continue;
    if (g.value(g.nodes()[r].outputs[0]).meta.dtype != g.value(d.outputs[0]).meta.dtype) continue;
    if (impure_between(g, static_cast<int>(i), r)) continue;  // the dense runs where the relu was
    dense_of[r] = static_cast<int>(i);
    moved[i] = true;
    ++fused;
  }
  if (!fused) return 0;
  g = rebuild(g, [&](int i, Graph& out, ValueMap& map) {
    if (moved[i]) return true;
    if (dense_of[i] < 0) return false;
    const Node& d = g.nodes()[dense_of[i]];
    Attrs a = d.attrs;
    a.set("relu", true);
    copy_node(g, d, a, out, map);
    map[g.nodes()[i].outputs[0]] = map[d.outputs[0]];  // the relu's readers read the dense
    return true;
  });
  return fused;
}

}  // namespace pj::graph
