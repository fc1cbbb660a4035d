// Gradient rules of graph/ops/fft_ops.cc. Each transform is linear, so its gradient is its adjoint
// applied to the output's gradient (gradients of complex values as torch defines them, dL/dRe +
// i dL/dIm): the same transform with the sign flipped and the same scale, over the output's
// lengths, keeping the input's lengths (the adjoint of zero-padding is truncation and back).
//   c2c  -> c2c
//   r2c  -> c2r with `adjoint` (bins with a mirror partner halved: Re of a zero-extended spectrum)
//   c2r  -> r2c with `adjoint` (those bins doubled: each stands for itself and its mirror)
// and an `adjoint` variant's adjoint is the plain other one, so second derivatives follow.
#include "graph/autodiff.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

Attrs adjoint_attrs(GradContext& c, const GradArgs& g, bool real_pair) {
  const Attrs& a = *g.attrs;
  const Shape& in_shape = c.meta(g.in[0]).shape;
  const int nd = static_cast<int>(in_shape.size());
  IntList back;
  for (int64_t d : a.ints("dims")) back.push_back(in_shape[d < 0 ? d + nd : d]);
  Attrs r{{"dims", a.ints("dims")}, {"n", a.ints("n")}, {"out", back}, {"inverse", !a.b("inverse")},
          {"scale", a.f("scale")}};
  if (real_pair) r.set("adjoint", !a.b("adjoint"));
  return r;
}

PJ_REGISTER_COMPLEX_GRAD("fft_c2c", [](GradContext& c, const GradArgs& g) -> Grads {
  if (!g.needs[0] || g.dout[0] == kNoGrad) return {kNoGrad};
  return {c.op("fft_c2c", {g.dout[0]}, adjoint_attrs(c, g, false))};
});

PJ_REGISTER_COMPLEX_GRAD("fft_r2c", [](GradContext& c, const GradArgs& g) -> Grads {
  if (!g.needs[0] || g.dout[0] == kNoGrad) return {kNoGrad};
  return {c.op("fft_c2r", {g.dout[0]}, adjoint_attrs(c, g, true))};
});

PJ_REGISTER_COMPLEX_GRAD("fft_c2r", [](GradContext& c, const GradArgs& g) -> Grads {
  if (!g.needs[0] || g.dout[0] == kNoGrad) return {kNoGrad};
  return {c.op("fft_r2c", {g.dout[0]}, adjoint_attrs(c, g, true))};
});

}  // namespace
}  // namespace pj
