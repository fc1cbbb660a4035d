// Gradient rule of index_add, so ops built on it differentiate (MindSpore's ScatterNd and
// InplaceAdd in pijit/ops/primitives2.py; a second derivative through index_select's rule).
#include "graph/autodiff.h"

namespace pj {
namespace {

// index_add(base, index, src; axis) = base with src's slices added at index along axis: base's
// gradient is dout itself, src's is dout read back at those positions (index_select), index has
// none.
PJ_REGISTER_GRAD("index_add", [](GradContext& c, const GradArgs& g) -> std::vector<int> {
  std::vector<int> out(g.in.size(), kNoGrad);
  if (g.needs[0]) out[0] = g.dout[0];
  if (g.needs[2]) out[2] = c.op("index_select", {g.dout[0], g.in[1]}, *g.attrs);
  return out;
});

}  // namespace
}  // namespace pj
