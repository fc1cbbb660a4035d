// Gradient rules of elementwise ops. Binary ops broadcast: each input's gradient is reduced back
// to its shape and dtype (GradContext::reduce_to). Where an op is not differentiable at a point
// (relu at 0, abs at 0, max/min at ties) the rules follow PyTorch: relu'(0) = 0, abs'(0) = 0,
// ties split the gradient in half.
// On complex values (rules registered with PJ_REGISTER_COMPLEX_GRAD) a holomorphic f's gradient is
// dout * conj(f'(z)), PyTorch's convention; GradContext::conj is a no-op on real values.
#include <cmath>

#include "graph/autodiff.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

// dy * conj(f'(x)) for a unary op, f' built by `deriv` (from x and y = f(x)).
template <class D>
Grads unary(GradContext& c, const GradArgs& g, D deriv) {
  return {c.reduce_to(c.op("mul", {g.dout[0], c.conj(deriv(g.in[0], g.out[0]))}), g.in_meta(c, 0))};
}

// Gradients of a binary op given the local ones (kNoGrad when not needed).
Grads binary(GradContext& c, const GradArgs& g, int da, int db) {
  return {da == kNoGrad ? kNoGrad : c.reduce_to(da, g.in_meta(c, 0)),
          db == kNoGrad ? kNoGrad : c.reduce_to(db, g.in_meta(c, 1))};
}

int k(GradContext& c, double v, int like) { return c.scalar_like(v, like); }

PJ_REGISTER_COMPLEX_GRAD("add", [](GradContext& c, const GradArgs& g) -> Grads {
  return binary(c, g, g.needs[0] ? g.dout[0] : kNoGrad, g.needs[1] ? g.dout[0] : kNoGrad);
});
PJ_REGISTER_COMPLEX_GRAD("sub", [](GradContext& c, const GradArgs& g) -> Grads {
  return binary(c, g, g.needs[0] ? g.dout[0] : kNoGrad, g.needs[1] ? c.op("neg", {g.dout[0]}) : kNoGrad);
});
PJ_REGISTER_COMPLEX_GRAD("mul", [](GradContext& c, const GradArgs& g) -> Grads {
  const int d = g.dout[0];
  return binary(c, g, g.needs[0] ? c.op("mul", {d, c.conj(g.in[1])}) : kNoGrad,
                g.needs[1] ? c.op("mul", {d, c.conj(g.in[0])}) : kNoGrad);
});
PJ_REGISTER_COMPLEX_GRAD("div", [](GradContext& c, const GradArgs& g) -> Grads {
  const int d = g.dout[0], b = c.conj(g.in[1]);
  int da = g.needs[0] ? c.op("div", {d, b}) : kNoGrad;
  // d(a/b)/db = -(a/b)/b
  int db = g.needs[1] ? c.op("neg", {c.op("div", {c.op("mul", {d, c.conj(g.out[0])}), b})}) : kNoGrad;
  return binary(c, g, da, db);
});
PJ_REGISTER_COMPLEX_GRAD("pow", [](GradContext& c, const GradArgs& g) -> Grads {
  const int d = g.dout[0], a = g.in[0], b = g.in[1];
  // d/da = b a^(b-1); d/db = a^b log a
  int da = g.needs[0] ? c.op("mul", {d, c.conj(c.op("mul", {b, c.op("pow", {a, c.op("sub", {b, k(c, 1, b)})})}))}) : kNoGrad;
  int db = g.needs[1] ? c.op("mul", {d, c.conj(c.op("mul", {g.out[0], c.op("log", {a})}))}) : kNoGrad;
  return binary(c, g, da, db);
});

// floor division is piecewise constant; a mod b = a - floor(a / b) b.
PJ_REGISTER_GRAD("floor_div", [](GradContext& c, const GradArgs& g) -> Grads { return {kNoGrad, kNoGrad}; });
PJ_REGISTER_GRAD("mod", [](GradContext& c, const GradArgs& g) -> Grads {
  const int d = g.dout[0];
  int db = g.needs[1] ? c.op("neg", {c.op("mul", {d, c.op("floor_div", {g.in[0], g.in[1]})})}) : kNoGrad;
  return binary(c, g, g.needs[0] ? d : kNoGrad, db);
});

// maximum/minimum: the chosen input gets the gradient, ties half each.
Grads extremum_grad(GradContext& c, const GradArgs& g, const char* wins) {
  const int d = g.dout[0], a = g.in[0], b = g.in[1];
  int half = c.op("mul", {d, k(c, 0.5, d)});
  int tie = c.op("eq", {a, b});
  auto share = [&](int x, int y) { return c.op("add", {c.masked(c.op(wins, {x, y}), d), c.masked(tie, half)}); };
  return binary(c, g, g.needs[0] ? share(a, b) : kNoGrad, g.needs[1] ? share(b, a) : kNoGrad);
}
PJ_REGISTER_GRAD("maximum", [](GradContext& c, const GradArgs& g) { return extremum_grad(c, g, "gt"); });
PJ_REGISTER_GRAD("minimum", [](GradContext& c, const GradArgs& g) { return extremum_grad(c, g, "lt"); });

PJ_REGISTER_COMPLEX_GRAD("neg", [](GradContext& c, const GradArgs& g) -> Grads { return {c.op("neg", {g.dout[0]})}; });
PJ_REGISTER_COMPLEX_GRAD("exp", [](GradContext& c, const GradArgs& g) { return unary(c, g, [](int, int y) { return y; }); });
PJ_REGISTER_GRAD("expm1", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int, int y) { return c.op("add", {y, k(c, 1, y)}); });
});
PJ_REGISTER_COMPLEX_GRAD("log", [](GradContext& c, const GradArgs& g) -> Grads {
  return {c.reduce_to(c.op("div", {g.dout[0], c.conj(g.in[0])}), g.in_meta(c, 0))};
});
PJ_REGISTER_GRAD("log1p", [](GradContext& c, const GradArgs& g) -> Grads {
  const int x = g.in[0];
  return {c.reduce_to(c.op("div", {g.dout[0], c.op("add", {x, k(c, 1, x)})}), g.in_meta(c, 0))};
});
PJ_REGISTER_COMPLEX_GRAD("square", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("mul", {x, k(c, 2, x)}); });
});
PJ_REGISTER_COMPLEX_GRAD("sqrt", [](GradContext& c, const GradArgs& g) -> Grads {
  const int y = c.conj(g.out[0]);
  return {c.op("div", {g.dout[0], c.op("mul", {y, k(c, 2, y)})})};
});
PJ_REGISTER_GRAD("rsqrt", [](GradContext& c, const GradArgs& g) {
  // y = x^-1/2: y' = -y / (2x)
  return unary(c, g, [&](int x, int y) { return c.op("div", {c.op("mul", {y, k(c, -0.5, y)}), x}); });
});
PJ_REGISTER_COMPLEX_GRAD("reciprocal", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int, int y) { return c.op("neg", {c.op("mul", {y, y})}); });
});
PJ_REGISTER_COMPLEX_GRAD("tanh", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int, int y) { return c.op("sub", {k(c, 1, y), c.op("mul", {y, y})}); });
});
PJ_REGISTER_GRAD("sigmoid", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int, int y) { return c.op("mul", {y, c.op("sub", {k(c, 1, y), y})}); });
});
PJ_REGISTER_GRAD("softplus", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("sigmoid", {x}); });
});
PJ_REGISTER_GRAD("silu", [](GradContext& c, const GradArgs& g) {
  // s (1 + x (1 - s)), s = sigmoid(x)
  return unary(c, g, [&](int x, int) {
    int s = c.op("sigmoid", {x});
    return c.op("mul", {s, c.op("add", {k(c, 1, x), c.op("mul", {x, c.op("sub", {k(c, 1, x), s})})})});
  });
});
// 2/sqrt(pi) e^{-x^2}
int erf_deriv(GradContext& c, int x) {
  return c.op("mul", {k(c, 2 / std::sqrt(M_PI), x), c.op("exp", {c.op("neg", {c.op("mul", {x, x})})})});
}
PJ_REGISTER_GRAD("erf", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return erf_deriv(c, x); });
});
PJ_REGISTER_GRAD("gelu", [](GradContext& c, const GradArgs& g) {
  // Phi(x) + x phi(x): Phi = (1 + erf(x/sqrt 2)) / 2, phi = e^{-x^2/2} / sqrt(2 pi)
  return unary(c, g, [&](int x, int) {
    int cdf = c.op("mul", {k(c, 0.5, x), c.op("add", {k(c, 1, x), c.op("erf", {c.op("mul", {x, k(c, M_SQRT1_2, x)})})})});
    int pdf = c.op("mul", {k(c, 1 / std::sqrt(2 * M_PI), x),
                           c.op("exp", {c.op("mul", {c.op("mul", {x, x}), k(c, -0.5, x)})})});
    return c.op("add", {cdf, c.op("mul", {x, pdf})});
  });
});
PJ_REGISTER_GRAD("gelu_tanh", [](GradContext& c, const GradArgs& g) {
  // y = x/2 (1 + t), t = tanh(u), u = a (x + b x^3): y' = (1 + t)/2 + x/2 (1 - t^2) a (1 + 3 b x^2)
  return unary(c, g, [&](int x, int) {
    const double a = std::sqrt(2 / M_PI), b = 0.044715;
    int x2 = c.op("mul", {x, x});
    int u = c.op("mul", {k(c, a, x), c.op("add", {x, c.op("mul", {k(c, b, x), c.op("mul", {x2, x})})})});
    int t = c.op("tanh", {u});
    int left = c.op("mul", {k(c, 0.5, x), c.op("add", {k(c, 1, x), t})});
    int du = c.op("mul", {k(c, a, x), c.op("add", {k(c, 1, x), c.op("mul", {k(c, 3 * b, x), x2})})});
    int right = c.op("mul", {c.op("mul", {k(c, 0.5, x), x}), c.op("mul", {c.op("sub", {k(c, 1, x), c.op("mul", {t, t})}), du})});
    return c.op("add", {left, right});
  });
});
PJ_REGISTER_COMPLEX_GRAD("sin", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("cos", {x}); });
});
PJ_REGISTER_COMPLEX_GRAD("cos", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("neg", {c.op("sin", {x})}); });
});
PJ_REGISTER_COMPLEX_GRAD("tan", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int, int y) { return c.op("add", {k(c, 1, y), c.op("mul", {y, y})}); });
});
// Inverse trigonometric and hyperbolic functions: 1/sqrt(1 - x^2), ..., written from x.
int one_minus_square(GradContext& c, int x) { return c.op("sub", {k(c, 1, x), c.op("mul", {x, x})}); }
PJ_REGISTER_GRAD("asin", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("rsqrt", {one_minus_square(c, x)}); });
});
PJ_REGISTER_GRAD("acos", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("neg", {c.op("rsqrt", {one_minus_square(c, x)})}); });
});
PJ_REGISTER_GRAD("atan", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("reciprocal", {c.op("add", {k(c, 1, x), c.op("mul", {x, x})})}); });
});
PJ_REGISTER_GRAD("asinh", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("rsqrt", {c.op("add", {c.op("mul", {x, x}), k(c, 1, x)})}); });
});
PJ_REGISTER_GRAD("acosh", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("rsqrt", {c.op("sub", {c.op("mul", {x, x}), k(c, 1, x)})}); });
});
PJ_REGISTER_GRAD("atanh", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("reciprocal", {one_minus_square(c, x)}); });
});
// log|Gamma|' = psi, psi' = psi_1 (trigamma, whose own derivative pijit does not provide).
PJ_REGISTER_GRAD("lgamma", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("digamma", {x}); });
});
PJ_REGISTER_GRAD("digamma", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("trigamma", {x}); });
});
// erfinv' = sqrt(pi)/2 e^{y^2}, y = erfinv(x)
PJ_REGISTER_GRAD("erfinv", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int, int y) { return c.op("mul", {k(c, std::sqrt(M_PI) / 2, y), c.op("exp", {c.op("mul", {y, y})})}); });
});
// I0' = I1; I1' = I0 - I1/x (1/2 at 0); the scaled forms e^-|x| I add -sign(x) times themselves.
int bessel_i1_deriv(GradContext& c, int x, const char* i0, const char* i1) {
  int zero = c.op("eq", {x, k(c, 0, x)});
  int safe_x = c.op("where", {zero, k(c, 1, x), x});
  int d = c.op("sub", {c.op(i0, {x}), c.op("div", {c.op(i1, {x}), safe_x})});
  return c.op("where", {zero, k(c, 0.5, x), d});
}
PJ_REGISTER_GRAD("bessel_i0", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return c.op("bessel_i1", {x}); });
});
PJ_REGISTER_GRAD("bessel_i0e", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int y) { return c.op("sub", {c.op("bessel_i1e", {x}), c.op("mul", {c.op("sign", {x}), y})}); });
});
PJ_REGISTER_GRAD("bessel_i1", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int) { return bessel_i1_deriv(c, x, "bessel_i0", "bessel_i1"); });
});
PJ_REGISTER_GRAD("bessel_i1e", [](GradContext& c, const GradArgs& g) {
  return unary(c, g, [&](int x, int y) {
    return c.op("sub", {bessel_i1_deriv(c, x, "bessel_i0e", "bessel_i1e"), c.op("mul", {c.op("sign", {x}), y})});
  });
});
// atan2(a, b)' = (b, -a) / (a^2 + b^2); hypot(a, b)' = (a, b) / hypot(a, b).
PJ_REGISTER_GRAD("atan2", [](GradContext& c, const GradArgs& g) -> Grads {
  const int d = g.dout[0], a = g.in[0], b = g.in[1];
  int scale = c.op("div", {d, c.op("add", {c.op("mul", {a, a}), c.op("mul", {b, b})})});
  return binary(c, g, g.needs[0] ? c.op("mul", {scale, b}) : kNoGrad,
                g.needs[1] ? c.op("neg", {c.op("mul", {scale, a})}) : kNoGrad);
});
PJ_REGISTER_GRAD("hypot", [](GradContext& c, const GradArgs& g) -> Grads {
  const int scale = c.op("div", {g.dout[0], g.out[0]});
  return binary(c, g, g.needs[0] ? c.op("mul", {scale, g.in[0]}) : kNoGrad,
                g.needs[1] ? c.op("mul", {scale, g.in[1]}) : kNoGrad);
});
// d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) = -d/dx Q(a, x), computed as exp((a-1) log x - x - lgamma(a)).
// The derivative in a has no closed form; pijit refuses it rather than give a wrong zero.
Grads igamma_grad(GradContext& c, const GradArgs& g, bool upper) {
  if (g.needs[0])
    PJ_THROW(Type) << (upper ? "igammac" : "igamma") << " is not differentiable with respect to its first input (a) in pijit";
  const int a = g.in[0], x = g.in[1];
  int logd = c.op("sub", {c.op("sub", {c.op("mul", {c.op("sub", {a, k(c, 1, a)}), c.op("log", {x})}), x}), c.op("lgamma", {a})});
  int d = c.op("mul", {g.dout[0], c.op("exp", {logd})});
  return binary(c, g, kNoGrad, upper ? c.op("neg", {d}) : d);
}
PJ_REGISTER_GRAD("igamma", [](GradContext& c, const GradArgs& g) { return igamma_grad(c, g, false); });
PJ_REGISTER_GRAD("igammac", [](GradContext& c, const GradArgs& g) { return igamma_grad(c, g, true); });
// nextafter moves by one ulp: piecewise constant, as PyTorch's rule says (no gradient to either).
PJ_REGISTER_GRAD("nextafter", [](GradContext& c, const GradArgs& g) -> Grads {
  return {g.needs[0] ? c.zeros(g.in_meta(c, 0)) : kNoGrad, g.needs[1] ? c.zeros(g.in_meta(c, 1)) : kNoGrad};
});

PJ_REGISTER_GRAD("relu", [](GradContext& c, const GradArgs& g) -> Grads {
  const int x = g.in[0], y = g.out[0], d = g.dout[0];
  // x > 0 ? d : 0 in one op (fusable, no boolean mask) where the two agree in shape and dtype,
  // read from y = relu(x) (y > 0 exactly where x > 0, NaN and -0.0 included): x may then die at
  // the relu, which runs in place, and a training step keeps one activation per layer, not two.
  if (c.meta(d) == c.meta(y)) return {c.op("relu_grad", {d, y})};
  return {c.masked(c.op("gt", {x, k(c, 0, x)}), d)};
});
// relu_grad(d, x) = x > 0 ? d : 0 is linear in d, piecewise constant in x.
PJ_REGISTER_GRAD("relu_grad", [](GradContext& c, const GradArgs& g) -> Grads {
  return binary(c, g, g.needs[0] ? c.op("relu_grad", {g.dout[0], g.in[1]}) : kNoGrad, kNoGrad);
});
// abs of a complex z: dout z/|z| (0 at 0, PyTorch's sgn); z / 1 is already 0 where |z| is.
PJ_REGISTER_COMPLEX_GRAD("abs", [](GradContext& c, const GradArgs& g) -> Grads {
  const int x = g.in[0];
  if (!is_complex(c.meta(x).dtype)) return unary(c, g, [&](int v, int) { return c.op("sign", {v}); });
  const int y = g.out[0];
  int safe = c.op("where", {c.op("eq", {y, k(c, 0, y)}), k(c, 1, y), y});
  return {c.op("mul", {g.dout[0], c.op("div", {x, safe})})};
});
// Piecewise constant: zero almost everywhere.
Grads zero_grad(GradContext& c, const GradArgs& g) { return {c.zeros(g.in_meta(c, 0))}; }
PJ_REGISTER_GRAD("sign", zero_grad);
PJ_REGISTER_GRAD("floor", zero_grad);
PJ_REGISTER_GRAD("ceil", zero_grad);
PJ_REGISTER_GRAD("round", zero_grad);
PJ_REGISTER_GRAD("clamp", [](GradContext& c, const GradArgs& g) -> Grads {
  // The gradient passes where min <= x <= max (PyTorch's rule; NaN passes nothing).
  const int x = g.in[0];
  int keep = c.op("eq", {x, x});
  if (!g.attrs->is_none("min")) keep = c.op("logical_and", {keep, c.op("ge", {x, k(c, g.attrs->f("min"), x)})});
  if (!g.attrs->is_none("max")) keep = c.op("logical_and", {keep, c.op("le", {x, k(c, g.attrs->f("max"), x)})});
  return {c.masked(keep, g.dout[0])};
});
PJ_REGISTER_GRAD("where", [](GradContext& c, const GradArgs& g) -> Grads {
  const int cond = g.in[0], d = g.dout[0];
  int dx = g.needs[1] ? c.reduce_to(c.masked(cond, d), g.in_meta(c, 1)) : kNoGrad;
  int dy = g.needs[2] ? c.reduce_to(c.masked(c.op("logical_not", {cond}), d), g.in_meta(c, 2)) : kNoGrad;
  return {kNoGrad, dx, dy};
});
// (complex -> real through reduce_to's cast keeps the real part: PyTorch's gradient of a real
// value made complex; real -> complex gives the real gradient a zero imaginary part)
PJ_REGISTER_COMPLEX_GRAD("cast", [](GradContext& c, const GradArgs& g) -> Grads { return {c.reduce_to(g.dout[0], g.in_meta(c, 0))}; });
PJ_REGISTER_COMPLEX_GRAD("copy", [](GradContext&, const GradArgs& g) -> Grads { return {g.dout[0]}; });
PJ_REGISTER_COMPLEX_GRAD("contiguous", [](GradContext&, const GradArgs& g) -> Grads { return {g.dout[0]}; });

}  // namespace
}  // namespace pj
