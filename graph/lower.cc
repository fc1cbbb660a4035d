// Lowering: ops whose graph form is better expressed by other registered ops, so later passes
// (fuse above all) see through them. Each rewrite computes the same bits as the op's kernel.
//
//   batch_norm(x, gamma, beta, mean, var) training=False, its statistics outputs unused
//     -> m, a, sh = batch_norm_coeffs(gamma, beta, mean, var)      [C], computed once per call
//        y = add(mul(sub(x, m'), a'), sh')                           m' = reshape(m, [C, 1, ...])
//   which is batch_norm's own affine pass, op for op (kernels/norm.h), and now fuses with the
//   ReLU after it into one loop over x.
#include "graph/pass_impl.h"

namespace pj::graph {
namespace {

const OpDef& op(const char* name) { return get_op(name); }

bool lowerable_batch_norm(const Graph& g, const Node& n, const std::vector<int>& readers) {
  if (n.op->name != "batch_norm" || n.attrs.b("training")) return false;
  return readers[n.outputs[1]] == 0 && readers[n.outputs[2]] == 0 &&
         std::find(g.outputs().begin(), g.outputs().end(), n.outputs[1]) == g.outputs().end() &&
         std::find(g.outputs().begin(), g.outputs().end(), n.outputs[2]) == g.outputs().end();
}

}  // namespace

int lower(Graph& g) {
  std::vector<int> readers(g.values().size(), 0);
  for (const Node& n : g.nodes())
    for (int v : n.inputs) ++readers[v];
  int lowered = 0;
  g = rebuild(g, [&](int i, Graph& out, ValueMap& map) {
    const Node& n = g.nodes()[i];
    if (!lowerable_batch_norm(g, n, readers)) return false;
    const TensorMeta& x = g.value(n.inputs[0]).meta;
    const int64_t C = x.shape[1];
    const TensorMeta cm{Shape{C}, x.dtype};
    Attrs ca{{"eps", n.attrs.has("eps") && !n.attrs.is_none("eps") ? n.attrs.f("eps") : 1e-5}, {"dtype", x.dtype}};
    std::vector<int> k = out.add_node(op("batch_norm_coeffs"),
                                      {map[n.inputs[1]], map[n.inputs[2]], map[n.inputs[3]], map[n.inputs[4]]}, ca,
                                      {cm, cm, cm}, n.line);
    IntList per_channel(x.shape.size() - 1, 1);
    per_channel[0] = C;
    const TensorMeta pm{Shape(per_channel.begin(), per_channel.end()), x.dtype};
    for (int& v : k) v = out.add_node(op("reshape"), {v}, Attrs{{"shape", per_channel}}, {pm}, n.line)[0];
    int y = out.add_node(op("sub"), {map[n.inputs[0]], k[0]}, {}, {x}, n.line)[0];
    y = out.add_node(op("mul"), {y, k[1]}, {}, {x}, n.line)[0];
    y = out.add_node(op("add"), {y, k[2]}, {}, {x}, n.line)[0];
    map[n.outputs[0]] = y;
    ++lowered;
    return true;
  });
  return lowered;
}

}  // namespace pj::graph
