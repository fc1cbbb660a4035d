// Gradient rules of the CTC ops (graph/ops/ctc_ops.cc). Only the log-probabilities (logits for
// ctc_loss_sparse) are differentiable; targets and lengths are integers, and log_alpha / the
// returned gradient are by-products whose own gradients are dropped, as MindSpore's bprops do.
#include "graph/autodiff.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

PJ_REGISTER_GRAD("ctc_loss", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(g.in.size(), kNoGrad);
  if (!g.needs[0] || g.dout[0] == kNoGrad) return out;
  out[0] = c.op("ctc_loss_grad", {g.dout[0], g.in[0], g.in[1], g.in[2], g.in[3], g.out[1]}, *g.attrs);
  return out;
});

// The op computed d loss[n] / d x itself: scale each sample's rows by its output gradient.
PJ_REGISTER_GRAD("ctc_loss_sparse", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(g.in.size(), kNoGrad);
  if (!g.needs[0] || g.dout[0] == kNoGrad) return out;
  const int64_t n = c.meta(g.out[0]).shape[0];
  int d = c.op("reshape", {g.dout[0]}, Attrs{{"shape", IntList{1, n, 1}}});
  out[0] = c.reduce_to(c.op("mul", {g.out[1], d}), g.in_meta(c, 0));
  return out;
});

}  // namespace
}  // namespace pj
