// Gradient rules of graph/ops/special2_ops.cc: the Bessel functions (written with each other),
// zeta in q, betainc in x. The derivatives in zeta's x and betainc's a and b have no closed form
// in these functions: pijit refuses them rather than give a wrong zero.
#include "graph/autodiff.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

int k(GradContext& c, double v, int like) { return c.scalar_like(v, like); }

template <typename F>
Grads unary(GradContext& c, const GradArgs& g, F deriv) {
  if (!g.needs[0]) return {kNoGrad};
  return {c.op("mul", {g.dout[0], deriv(g.in[0], g.out[0])})};
}

// f1(x)/x with its limit `at0` at x = 0.
int over_x(GradContext& c, int x, int f1, double at0) {
  int zero = c.op("eq", {x, k(c, 0, x)});
  int safe = c.op("where", {zero, k(c, 1, x), x});
  return c.op("where", {zero, k(c, at0, x), c.op("div", {f1, safe})});
}

// J0' = -J1, J1' = J0 - J1/x (1/2 at 0), Y0' = -Y1, Y1' = Y0 - Y1/x, K0' = -K1,
// K1' = -K0 - K1/x; the scaled e^x K add themselves: K0e' = K0e - K1e, K1e' = K1e - K0e - K1e/x.
PJ_REGISTER_GRAD("bessel_j0", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("neg", {c.op("bessel_j1", {x})}); });
});
PJ_REGISTER_GRAD("bessel_j1", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int y) { return c.op("sub", {c.op("bessel_j0", {x}), over_x(c, x, y, 0.5)}); });
});
PJ_REGISTER_GRAD("bessel_y0", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("neg", {c.op("bessel_y1", {x})}); });
});
PJ_REGISTER_GRAD("bessel_y1", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int y) { return c.op("sub", {c.op("bessel_y0", {x}), c.op("div", {y, x})}); });
});
PJ_REGISTER_GRAD("bessel_k0", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("neg", {c.op("bessel_k1", {x})}); });
});
PJ_REGISTER_GRAD("bessel_k1", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int y) {
    return c.op("neg", {c.op("add", {c.op("bessel_k0", {x}), c.op("div", {y, x})})});
  });
});
PJ_REGISTER_GRAD("bessel_k0e", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int y) { return c.op("sub", {y, c.op("bessel_k1e", {x})}); });
});
PJ_REGISTER_GRAD("bessel_k1e", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int y) {
    return c.op("sub", {c.op("sub", {y, c.op("bessel_k0e", {x})}), c.op("div", {y, x})});
  });
});

// d/dq zeta(x, q) = -x zeta(x + 1, q).
PJ_REGISTER_GRAD("zeta", [](GradContext& c, const GradArgs& g) -> Grads {
  if (g.needs[0]) PJ_THROW(Type) << "zeta is not differentiable with respect to its first input (x) in pijit";
  if (!g.needs[1]) return {kNoGrad, kNoGrad};
  const int x = g.in[0], q = g.in[1];
  int d = c.op("neg", {c.op("mul", {x, c.op("zeta", {c.op("add", {x, k(c, 1, x)}), q})})});
  return {kNoGrad, c.reduce_to(c.op("mul", {g.dout[0], d}), g.in_meta(c, 1))};
});

// d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b).
PJ_REGISTER_GRAD("betainc", [](GradContext& c, const GradArgs& g) -> Grads {
  if (g.needs[0] || g.needs[1])
    PJ_THROW(Type) << "betainc is not differentiable with respect to a or b in pijit (only x)";
  if (!g.needs[2]) return {kNoGrad, kNoGrad, kNoGrad};
  const int a = g.in[0], b = g.in[1], x = g.in[2];
  int lbeta = c.op("sub", {c.op("add", {c.op("lgamma", {a}), c.op("lgamma", {b})}), c.op("lgamma", {c.op("add", {a, b})})});
  int t1 = c.op("mul", {c.op("sub", {a, k(c, 1, a)}), c.op("log", {x})});
  int t2 = c.op("mul", {c.op("sub", {b, k(c, 1, b)}), c.op("log1p", {c.op("neg", {x})})});
  int d = c.op("exp", {c.op("sub", {c.op("add", {t1, t2}), lbeta})});
  return {kNoGrad, kNoGrad, c.reduce_to(c.op("mul", {g.dout[0], d}), g.in_meta(c, 2))};
});

}  // namespace
}  // namespace pj
