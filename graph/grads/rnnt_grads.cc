// Gradient of rnnt_loss (graph/ops/rnnt_ops.cc): the op already computed d costs[b] / d acts,
// so the rule scales each sample's block by its output gradient. Labels and lengths are
// integers; the returned grads output is a by-product whose own gradient is dropped, as
// MindSpore's bprop does.
#include "graph/autodiff.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

PJ_REGISTER_GRAD("rnnt_loss", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(g.in.size(), kNoGrad);
  if (!g.needs[0] || g.dout[0] == kNoGrad) return out;
  const int64_t b = c.meta(g.out[0]).shape[0];
  int d = c.op("reshape", {g.dout[0]}, Attrs{{"shape", IntList{b, 1, 1, 1}}});
  out[0] = c.reduce_to(c.op("mul", {g.out[1], d}), g.in_meta(c, 0));
  return out;
});

}  // namespace
}  // namespace pj
