// Gradient rules of the complex-number ops (graph/ops/complex_ops.cc), with PyTorch's convention:
// a complex value's gradient is dL/dRe + i dL/dIm. So real(z) passes dout back as the real part,
// imag(z) as the imaginary part, conj conjugates it, complex(re, im) splits it, and angle(z) =
// atan2(Im z, Re z) gives i z dout / |z|^2 (0 at z = 0, as torch.angle's rule).
#include "graph/autodiff.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

// (a real dout made complex by reduce_to's cast: zero imaginary part; on a real input, a copy)
PJ_REGISTER_COMPLEX_GRAD("real", [](GradContext& c, const GradArgs& g) -> Grads {
  return {c.reduce_to(g.dout[0], g.in_meta(c, 0))};
});

PJ_REGISTER_COMPLEX_GRAD("imag", [](GradContext& c, const GradArgs& g) -> Grads {
  if (!is_complex(g.in_meta(c, 0).dtype)) return {kNoGrad};  // the imaginary part of a real value is 0
  const int d = g.dout[0];
  return {c.op("complex", {c.zeros(c.meta(d)), d})};
});

PJ_REGISTER_COMPLEX_GRAD("conj", [](GradContext& c, const GradArgs& g) -> Grads { return {c.conj(g.dout[0])}; });

PJ_REGISTER_COMPLEX_GRAD("complex", [](GradContext& c, const GradArgs& g) -> Grads {
  const int d = g.dout[0];
  return {g.needs[0] ? c.reduce_to(c.op("real", {d}), g.in_meta(c, 0)) : kNoGrad,
          g.needs[1] ? c.reduce_to(c.op("imag", {d}), g.in_meta(c, 1)) : kNoGrad};
});

PJ_REGISTER_COMPLEX_GRAD("angle", [](GradContext& c, const GradArgs& g) -> Grads {
  const int z = g.in[0];
  if (!is_complex(c.meta(z).dtype)) return {kNoGrad};  // piecewise constant on real values
  const int d = g.dout[0], re = c.op("real", {z}), im = c.op("imag", {z});
  int r2 = c.op("add", {c.op("mul", {re, re}), c.op("mul", {im, im})});
  int zero = c.op("eq", {r2, c.scalar_like(0, r2)});
  int s = c.op("div", {d, c.op("where", {zero, c.scalar_like(1, r2), r2})});  // 0 at z = 0: re = im = 0
  return {c.op("complex", {c.op("neg", {c.op("mul", {im, s})}), c.op("mul", {re, s})})};
});

}  // namespace
}  // namespace pj
