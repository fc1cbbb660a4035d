// Gradient rules of the neural-network ops: losses, convolution, pooling, normalisation, dropout.
// Each is written in terms of registered ops (convolution's backward is a transposed convolution
// and a convolution of the input with the output gradient; pooling's has its own kernels).
#include "graph/autodiff.h"
#include "graph/ops/nn_params.h"
#include "kernels/conv.h"
#include "kernels/index_ops.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

IntList dims_of(const Shape& s) { return IntList(s.begin(), s.end()); }
int reshape(GradContext& c, int v, const Shape& s) { return c.op("reshape", {v}, Attrs{{"shape", dims_of(s)}}); }
int sum(GradContext& c, int v, IntList axes, bool keep) {
  return c.op("sum", {v}, Attrs{{"axis", std::move(axes)}, {"keepdims", keep}});
}
int scalar(GradContext& c, double v, int like) { return c.scalar_like(v, like); }
int64_t numel(const Shape& s) { return shape_numel(s); }

// "none", "mean" or "sum" (the ops' default: mean).
std::string reduction(const GradArgs& g) { return g.attrs->is_none("reduction") ? "mean" : g.attrs->s("reduction"); }

// The loss's output gradient as a per-element factor of `shape` (the unreduced loss's shape):
// dout itself (none), or dout / count (mean) or dout (sum) broadcast from 0-d.
int per_element(GradContext& c, const GradArgs& g, const Shape& shape, int64_t count) {
  const std::string r = reduction(g);
  int d = g.dout[0];
  if (r == "mean") d = c.op("div", {d, scalar(c, static_cast<double>(count), d)});
  if (r == "none") return d;
  return c.op("broadcast_to", {reshape(c, d, Shape(shape.size(), 1))}, Attrs{{"shape", dims_of(shape)}});
}

// ---- pointwise losses ---------------------------------------------------------------------------

// d loss / d input = f(input, target) * per-element dout; the target's gradient is its negation
// where the loss depends on input - target.
Grads pair_loss(GradContext& c, const GradArgs& g, int local, bool target_is_negation) {
  const Shape s = c.meta(local).shape;
  int d = c.op("mul", {local, per_element(c, g, s, numel(s))});
  Grads out(2, kNoGrad);
  if (g.needs[0]) out[0] = c.reduce_to(d, g.in_meta(c, 0));
  if (g.needs[1]) {
    if (!target_is_negation) PJ_THROW(Type) << "cannot differentiate a binary cross entropy with respect to its target";
    out[1] = c.reduce_to(c.op("neg", {d}), g.in_meta(c, 1));
  }
  return out;
}

// The loss's compute dtype: the inputs promoted (the ops cast both operands to it).
int as_out_dtype(GradContext& c, int v, const GradArgs& g) {
  const DType t = c.meta(g.out[0]).dtype;
  return c.meta(v).dtype == t ? v : c.op("cast", {v}, Attrs{{"dtype", t}});
}

int difference(GradContext& c, const GradArgs& g) {
  return c.op("sub", {as_out_dtype(c, g.in[0], g), as_out_dtype(c, g.in[1], g)});
}

PJ_REGISTER_GRAD("mse_loss", [](GradContext& c, const GradArgs& g) -> Grads {
  int diff = difference(c, g);
  return pair_loss(c, g, c.op("mul", {diff, scalar(c, 2, diff)}), true);
});
PJ_REGISTER_GRAD("l1_loss", [](GradContext& c, const GradArgs& g) -> Grads {
  return pair_loss(c, g, c.op("sign", {difference(c, g)}), true);
});
PJ_REGISTER_GRAD("smooth_l1_loss", [](GradContext& c, const GradArgs& g) -> Grads {
  // d/dx = d / beta where |d| < beta, else sign(d) (beta = 0: sign(d))
  const double beta = g.attrs->is_none("beta") ? 1.0 : g.attrs->f("beta");
  int diff = difference(c, g);
  int local = c.op("sign", {diff});
  if (beta > 0) {
    int inside = c.op("lt", {c.op("abs", {diff}), scalar(c, beta, diff)});
    local = c.op("where", {inside, c.op("div", {diff, scalar(c, beta, diff)}), local});
  }
  return pair_loss(c, g, local, true);
});

PJ_REGISTER_GRAD("binary_cross_entropy", [](GradContext& c, const GradArgs& g) -> Grads {
  // d/dp = w (p - t) / max(p (1 - p), 1e-12)
  int p = as_out_dtype(c, g.in[0], g), t = as_out_dtype(c, g.in[1], g);
  int one = scalar(c, 1, p);
  int denom = c.op("maximum", {c.op("mul", {p, c.op("sub", {one, p})}), scalar(c, 1e-12, p)});
  int local = c.op("div", {c.op("sub", {p, t}), denom});
  if (g.in.size() == 3) local = c.op("mul", {local, as_out_dtype(c, g.in[2], g)});
  if (g.in.size() == 3 && g.needs[2]) PJ_THROW(Type) << "cannot differentiate binary_cross_entropy with respect to weight";
  Grads out = pair_loss(c, g, local, false);
  out.resize(g.in.size(), kNoGrad);
  return out;
});

PJ_REGISTER_GRAD("binary_cross_entropy_with_logits", [](GradContext& c, const GradArgs& g) -> Grads {
  // loss = -w [pw t log s(x) + (1 - t) log(1 - s(x))]: d/dx = w ((pw t + 1 - t) s(x) - pw t)
  const int n = static_cast<int>(g.in.size());
  const bool has_pos = g.attrs->is_none("has_pos_weight") ? n == 4 : g.attrs->b("has_pos_weight");
  const bool has_w = n - 2 - (has_pos ? 1 : 0) == 1;
  int x = as_out_dtype(c, g.in[0], g), t = as_out_dtype(c, g.in[1], g);
  int s = c.op("sigmoid", {x});
  int local;
  if (has_pos) {
    int pt = c.op("mul", {as_out_dtype(c, g.in[has_w ? 3 : 2], g), t});
    int coef = c.op("add", {pt, c.op("sub", {scalar(c, 1, t), t})});
    local = c.op("sub", {c.op("mul", {coef, s}), pt});
  } else {
    local = c.op("sub", {s, t});
  }
  if (has_w) local = c.op("mul", {local, as_out_dtype(c, g.in[2], g)});
  for (int k = 2; k < n; ++k)
    if (g.needs[k]) PJ_THROW(Type) << "cannot differentiate binary_cross_entropy_with_logits with respect to its weights";
  Grads out = pair_loss(c, g, local, false);
  out.resize(n, kNoGrad);
  return out;
});

// ---- class losses -------------------------------------------------------------------------------

// nll_loss / cross_entropy: the gradient with respect to the log-probabilities (kernels/loss.h has
// the forward formulas), shaped like the input.
int class_loss_dlogp(GradContext& c, const GradArgs& g, bool cross_entropy, int logp) {
  const TensorMeta x = c.meta(logp);
  const Shape& xs = x.shape;
  const bool one_d = xs.size() == 1;
  const int64_t C = xs[one_d ? 0 : 1];
  const int64_t N = one_d ? 1 : xs[0];
  const int64_t S = one_d ? 1 : numel(xs) / std::max<int64_t>(N * C, 1);
  const Shape ncs{N, C, S};
  const std::string r = reduction(g);
  const int64_t ignore = g.attrs->i("ignore_index", -100);
  const double e = cross_entropy && !g.attrs->is_none("label_smoothing") ? g.attrs->f("label_smoothing") : 0.0;
  const int t = g.in[1];
  int w = g.in.size() == 3 ? reshape(c, as_out_dtype(c, g.in[2], g), {1, C, 1}) : kNoGrad;
  if (g.in.size() == 3 && g.needs[2])
    PJ_THROW(Type) << (cross_entropy ? "cross_entropy" : "nll_loss") << ": cannot differentiate with respect to weight";
  // Per sample [N, 1, S]: dout (none), or dout / divisor (mean), or dout (sum).
  auto per_sample = [&](int divisor) {
    int d = g.dout[0];
    if (r == "none") d = reshape(c, d, {N, 1, S});
    else d = reshape(c, d, {1, 1, 1});
    if (r == "mean") d = c.op("div", {d, divisor});
    return d;
  };
  int dlogp;
  if (is_floating(c.meta(t).dtype)) {
    // class probabilities: loss_i = -sum_c w_c lp_c (p_c (1 - e) + e / C); mean over N * S samples
    int p = reshape(c, as_out_dtype(c, t, g), ncs);
    int q = c.op("add", {c.op("mul", {p, scalar(c, 1 - e, p)}), scalar(c, e / static_cast<double>(C), p)});
    if (w != kNoGrad) q = c.op("mul", {q, w});
    int d = per_sample(scalar(c, static_cast<double>(N * S), q));
    dlogp = c.op("neg", {c.op("mul", {q, d})});
  } else {
    // index targets: one-hot over the classes, ignored samples masked out
    int tt = reshape(c, t, {N, S});
    int keep = c.op("ne", {tt, c.scalar(static_cast<double>(ignore), c.meta(tt).dtype)});
    int safe = c.op("where", {keep, tt, c.scalar(0, c.meta(tt).dtype)});
    int hot = c.op("one_hot", {safe}, Attrs{{"depth", C}, {"axis", int64_t{1}}, {"dtype", x.dtype}});  // [N, C, S]
    int mask = reshape(c, c.op("cast", {keep}, Attrs{{"dtype", x.dtype}}), {N, 1, S});
    int wt = w != kNoGrad ? c.op("mul", {hot, w}) : hot;  // w[t] at the target class
    int counted = c.op("mul", {wt, mask});
    // mean divides by the weight of the samples not ignored
    int d = per_sample(c.op("sum", {counted}, Attrs{{"axis", std::monostate{}}, {"keepdims", false}}));
    int q = c.op("mul", {wt, scalar(c, 1 - e, wt)});
    if (e > 0) {  // smoothing: -(e / C) sum_c w_c lp_c per sample
      int spread = w != kNoGrad ? w : scalar(c, 1, wt);
      q = c.op("add", {q, c.op("mul", {spread, scalar(c, e / static_cast<double>(C), wt)})});
    }
    dlogp = c.op("neg", {c.op("mul", {c.op("mul", {q, mask}), d})});
  }
  return reshape(c, dlogp, xs);
}

PJ_REGISTER_GRAD("nll_loss", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(g.in.size(), kNoGrad);
  if (g.needs[0]) out[0] = c.reduce_to(class_loss_dlogp(c, g, false, as_out_dtype(c, g.in[0], g)), g.in_meta(c, 0));
  if (g.needs[1] && is_floating(g.in_meta(c, 1).dtype)) PJ_THROW(Type) << "cannot differentiate nll_loss with respect to target";
  return out;
});

PJ_REGISTER_GRAD("cross_entropy", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(g.in.size(), kNoGrad);
  const TensorMeta m = g.in_meta(c, 0);
  const int64_t axis = m.shape.size() == 1 ? 0 : 1;
  int x = as_out_dtype(c, g.in[0], g);
  int lp = c.op("log_softmax", {x}, Attrs{{"axis", axis}});
  if (g.needs[0]) {
    // through log_softmax: dx = dlp - softmax(x) sum_c dlp
    int dlp = class_loss_dlogp(c, g, true, lp);
    int total = c.op("sum", {dlp}, Attrs{{"axis", IntList{axis}}, {"keepdims", true}});
    out[0] = c.reduce_to(c.op("sub", {dlp, c.op("mul", {c.op("exp", {lp}), total})}), m);
  }
  if (g.needs[1] && is_floating(g.in_meta(c, 1).dtype)) {
    // class probabilities (a label-smoothed one-hot built from tensors lands here):
    // loss_i = -sum_c w_c lp_c (p_c (1 - e) + e / C), so d/dp_c = -(1 - e) w_c lp_c dout_i
    const bool one_d = m.shape.size() == 1;
    const int64_t C = m.shape[one_d ? 0 : 1], N = one_d ? 1 : m.shape[0];
    const int64_t S = one_d ? 1 : numel(m.shape) / std::max<int64_t>(N * C, 1);
    const double e = g.attrs->is_none("label_smoothing") ? 0.0 : g.attrs->f("label_smoothing");
    const std::string r = reduction(g);
    int d = reshape(c, g.dout[0], r == "none" ? Shape{N, 1, S} : Shape{1, 1, 1});
    if (r == "mean") d = c.op("div", {d, scalar(c, static_cast<double>(N * S), d)});
    int k = c.op("mul", {reshape(c, lp, {N, C, S}), scalar(c, -(1 - e), lp)});
    if (g.in.size() == 3) k = c.op("mul", {k, reshape(c, as_out_dtype(c, g.in[2], g), {1, C, 1})});
    int dp = reshape(c, c.op("mul", {k, d}), m.shape);
    const DType td = g.in_meta(c, 1).dtype;
    if (c.meta(dp).dtype != td) dp = c.op("cast", {dp}, Attrs{{"dtype", td}});
    out[1] = c.reduce_to(dp, g.in_meta(c, 1));
  }
  return out;
});

// ---- convolution --------------------------------------------------------------------------------

IntList pads(const Conv2dParams& p) { return {p.pad[0], p.pad[1], p.pad[2], p.pad[3]}; }

IntList conv_attr(const int64_t* v) { return {v[0], v[1]}; }

// The weight gradient of a convolution of `input` whose output gradient is `dout`, written as a
// convolution: dw[o, i] = conv(input[:, i] as a batch of planes, dout[:, o] as filters) with stride
// and dilation exchanged, cropped to the kernel; per group. Only where dout has fewer rows or
// columns than the convolution of `input` gives (a transposed convolution's output_padding at
// least its stride): conv2d_weight_grad takes the whole output.
int conv_weight_grad_by_conv(GradContext& c, int input, int dout, const Conv2dParams& p, const Shape& ws) {
  const Shape xs = c.meta(input).shape;
  const int64_t G = p.groups, icg = xs[1] / G, ocg = ws[0] / G;
  IntList swap{1, 0, 2, 3};
  std::vector<int> parts;
  for (int64_t gi = 0; gi < G; ++gi) {
    auto channels = [&](int v, int64_t start, int64_t n) {
      IndexItems items{IndexItem::slice(), IndexItem::slice(start, start + n, 1)};
      int s = G == 1 ? v : c.op("basic_index", {v}, Attrs{{"items", encode_index_items(items)}});
      return c.op("transpose", {s}, Attrs{{"perm", swap}});
    };
    int xt = channels(input, gi * icg, icg), dt = channels(dout, gi * ocg, ocg);
    int r = c.op("conv2d", {xt, dt},
                 Attrs{{"stride", conv_attr(p.dilation)}, {"padding", pads(p)}, {"dilation", conv_attr(p.stride)},
                       {"groups", int64_t{1}}});
    const Shape rs = c.meta(r).shape;  // [icg, ocg, >= kH, >= kW]
    if (rs[2] != ws[2] || rs[3] != ws[3]) {
      IndexItems crop{IndexItem::slice(), IndexItem::slice(), IndexItem::slice(0, ws[2], 1), IndexItem::slice(0, ws[3], 1)};
      r = c.op("basic_index", {r}, Attrs{{"items", encode_index_items(crop)}});
    }
    parts.push_back(c.op("transpose", {r}, Attrs{{"perm", swap}}));
  }
  int dw = parts.size() == 1 ? parts[0] : c.op("concat", parts, Attrs{{"axis", int64_t{0}}});
  return c.op("contiguous", {dw});
}

// The weight gradient (shape ws) of conv2d(input, w) whose output gradient is `dout`.
int conv_weight_grad(GradContext& c, int input, int dout, const Conv2dParams& p, const Shape& ws) {
  const Shape xs = c.meta(input).shape, ds = c.meta(dout).shape;
  for (int k = 0; k < 2; ++k)
    if (ds[2 + k] != conv_out_size(xs[2 + k], ws[2 + k], p.stride[k], p.pad[2 * k], p.pad[2 * k + 1], p.dilation[k]))
      return conv_weight_grad_by_conv(c, input, dout, p, ws);
  return c.op("conv2d_weight_grad", {input, dout},
              Attrs{{"stride", conv_attr(p.stride)}, {"padding", pads(p)}, {"dilation", conv_attr(p.dilation)},
                    {"groups", p.groups}, {"kernel_size", IntList{ws[2], ws[3]}}});
}

// The input gradient (shape xs) of conv2d(x, w (shape ws)) whose output gradient `d` has shape ds:
// the transposed convolution with the same weight; output_padding restores rows the forward's
// stride dropped.
int conv_input_grad(GradContext& c, int d, int w, const Conv2dParams& p, const Shape& xs, const Shape& ws,
                    const Shape& ds) {
  IntList op;
  for (int k = 0; k < 2; ++k)
    op.push_back(xs[2 + k] - conv_transpose_out_size(ds[2 + k], ws[2 + k], p.stride[k], p.pad[2 * k],
                                                     p.pad[2 * k + 1], p.dilation[k], 0));
  return c.op("conv_transpose2d", {d, w},
              Attrs{{"stride", conv_attr(p.stride)}, {"padding", pads(p)}, {"output_padding", op},
                    {"dilation", conv_attr(p.dilation)}, {"groups", p.groups}});
}

PJ_REGISTER_GRAD("conv2d", [](GradContext& c, const GradArgs& g) -> Grads {
  Metas ms;
  for (size_t k = 0; k < g.in.size(); ++k) ms.push_back(g.in_meta(c, static_cast<int>(k)));
  const Conv2dParams p = conv2d_params(ms, *g.attrs);
  const Shape &xs = ms[0].shape, &ws = ms[1].shape;
  const int d = g.dout[0];
  Grads out(g.in.size(), kNoGrad);
  if (g.needs[0]) out[0] = conv_input_grad(c, d, g.in[1], p, xs, ws, c.meta(g.out[0]).shape);
  if (g.needs[1]) out[1] = conv_weight_grad(c, g.in[0], d, p, ws);
  if (g.in.size() == 3 && g.needs[2]) out[2] = sum(c, d, IntList{0, 2, 3}, false);
  return out;
});

// conv2d_weight_grad is linear in each input: its adjoint in dout is the convolution of x by the
// incoming gradient (as a weight), in x the transposed convolution of dout by it.
PJ_REGISTER_GRAD("conv2d_weight_grad", [](GradContext& c, const GradArgs& g) -> Grads {
  Shape ws;
  const Conv2dParams p = conv2d_weight_grad_params({g.in_meta(c, 0), g.in_meta(c, 1)}, *g.attrs, &ws);
  const int ddw = g.dout[0];
  Grads out(2, kNoGrad);
  if (g.needs[0]) out[0] = conv_input_grad(c, g.in[1], ddw, p, g.in_meta(c, 0).shape, ws, g.in_meta(c, 1).shape);
  if (g.needs[1])
    out[1] = c.op("conv2d", {g.in[0], ddw},
                  Attrs{{"stride", conv_attr(p.stride)}, {"padding", pads(p)}, {"dilation", conv_attr(p.dilation)},
                        {"groups", p.groups}});
  return out;
});

// conv_transpose2d is the adjoint of conv2d with the same weight: its input gradient is that
// convolution of dout, and its weight gradient a convolution's with input and output swapped.
PJ_REGISTER_GRAD("conv_transpose2d", [](GradContext& c, const GradArgs& g) -> Grads {
  Metas ms;
  for (size_t k = 0; k < g.in.size(); ++k) ms.push_back(g.in_meta(c, static_cast<int>(k)));
  Shape out_shape;
  const Conv2dParams p = conv_transpose2d_params(ms, *g.attrs, &out_shape);
  const int d = g.dout[0];
  Grads out(g.in.size(), kNoGrad);
  if (g.needs[0]) {
    out[0] = c.op("conv2d", {d, g.in[1]},
                  Attrs{{"stride", conv_attr(p.stride)}, {"padding", pads(p)}, {"dilation", conv_attr(p.dilation)},
                        {"groups", p.groups}});
    // An output_padding of at least the stride adds output rows (columns) no input reaches: the
    // convolution then gives rows past the input's, which have no input to go to.
    const Shape &xs = ms[0].shape, gs = c.meta(out[0]).shape;
    if (gs[2] != xs[2] || gs[3] != xs[3]) {
      IndexItems crop{IndexItem::slice(), IndexItem::slice(), IndexItem::slice(0, xs[2], 1), IndexItem::slice(0, xs[3], 1)};
      out[0] = c.op("basic_index", {out[0]}, Attrs{{"items", encode_index_items(crop)}});
    }
  }
  if (g.needs[1]) out[1] = conv_weight_grad(c, d, g.in[0], p, ms[1].shape);
  if (g.in.size() == 3 && g.needs[2]) out[2] = sum(c, d, IntList{0, 2, 3}, false);
  return out;
});

// ---- pooling ------------------------------------------------------------------------------------

PJ_REGISTER_GRAD("max_pool2d", [](GradContext& c, const GradArgs& g) -> Grads {
  return {c.op("max_pool2d_grad", {g.in[0], g.dout[0]}, *g.attrs)};
});
PJ_REGISTER_GRAD("avg_pool2d", [](GradContext& c, const GradArgs& g) -> Grads {
  return {c.op("avg_pool2d_grad", {g.in[0], g.dout[0]}, *g.attrs)};
});
PJ_REGISTER_GRAD("adaptive_avg_pool2d", [](GradContext& c, const GradArgs& g) -> Grads {
  return {c.op("adaptive_avg_pool2d_grad", {g.in[0], g.dout[0]})};
});

// ---- normalisation ------------------------------------------------------------------------------

// x normalised: (x - mean) * invstd, the statistics broadcast from `stat_shape`.
int normalised(GradContext& c, int x, int mean, int invstd, const Shape& stat_shape) {
  return c.op("mul", {c.op("sub", {x, reshape(c, mean, stat_shape)}), reshape(c, invstd, stat_shape)});
}

// dx of y = xhat * gamma' + beta' where xhat normalises over M elements (gamma' = gamma broadcast,
// already multiplied into gdy = dy * gamma'): invstd / M (M gdy - sum(gdy) - xhat sum(gdy xhat)).
int normalise_backward(GradContext& c, int gdy, int xhat, int invstd_b, const IntList& axes, int64_t M) {
  int s1 = sum(c, gdy, axes, true), s2 = sum(c, c.op("mul", {gdy, xhat}), axes, true);
  int inner = c.op("sub", {c.op("sub", {c.op("mul", {gdy, scalar(c, static_cast<double>(M), gdy)}), s1}),
                           c.op("mul", {xhat, s2})});
  return c.op("mul", {inner, c.op("div", {invstd_b, scalar(c, static_cast<double>(M), invstd_b)})});
}

PJ_REGISTER_GRAD("batch_norm", [](GradContext& c, const GradArgs& g) -> Grads {
  // outputs: y, save_mean, save_invstd (batch statistics when training, running ones otherwise)
  const Shape xs = g.in_meta(c, 0).shape;
  Shape stat(xs.size(), 1);
  stat[1] = xs[1];
  IntList axes;
  int64_t M = 1;
  for (int d = 0; d < static_cast<int>(xs.size()); ++d)
    if (d != 1) {
      axes.push_back(d);
      M *= xs[d];
    }
  const int dy = g.dout[0];
  Grads out(5, kNoGrad);
  if (dy == kNoGrad) return out;
  int xhat = normalised(c, g.in[0], g.out[1], g.out[2], stat);
  int invstd_b = reshape(c, g.out[2], stat);
  if (g.attrs->b("training")) {
    // PyTorch's order: sum(dy) (dbeta) and sum(dy xhat) (dgamma) once per channel, and dx from
    // them, sum(dy gamma) being gamma sum(dy): two full-size sums and products fewer than
    // normalise_backward on gdy. dx = invstd / M (M gdy - gamma sum(dy) - xhat gamma sum(dy xhat)).
    const int sdy = sum(c, dy, axes, true), sdyx = sum(c, c.op("mul", {dy, xhat}), axes, true);
    if (g.needs[0]) {
      const int gamma_b = reshape(c, g.in[1], stat);
      const int gdy = c.op("mul", {dy, gamma_b});
      const int s1 = c.op("mul", {sdy, gamma_b}), s2 = c.op("mul", {sdyx, gamma_b});
      int inner = c.op("sub", {c.op("sub", {c.op("mul", {gdy, scalar(c, static_cast<double>(M), gdy)}), s1}),
                               c.op("mul", {xhat, s2})});
      out[0] = c.op("mul", {inner, c.op("div", {invstd_b, scalar(c, static_cast<double>(M), invstd_b)})});
    }
    if (g.needs[1]) out[1] = reshape(c, sdyx, Shape{xs[1]});
    if (g.needs[2]) out[2] = reshape(c, sdy, Shape{xs[1]});
    return out;  // (the running statistics it updates get no gradient)
  }
  if (g.needs[0]) out[0] = c.op("mul", {c.op("mul", {dy, reshape(c, g.in[1], stat)}), invstd_b});
  if (g.needs[1]) out[1] = sum(c, c.op("mul", {dy, xhat}), axes, false);
  if (g.needs[2]) out[2] = sum(c, dy, axes, false);
  if (g.needs[3] || g.needs[4]) {
    // inference reads the running statistics: y = (x - rm) invstd gamma + beta, invstd = (rv + eps)^-1/2
    int gdy = c.op("mul", {dy, reshape(c, g.in[1], stat)});
    if (g.needs[3]) out[3] = c.op("neg", {sum(c, c.op("mul", {gdy, invstd_b}), axes, false)});
    if (g.needs[4]) {
      int cube = c.op("mul", {c.op("mul", {invstd_b, invstd_b}), scalar(c, -0.5, invstd_b)});
      out[4] = sum(c, c.op("mul", {c.op("mul", {gdy, xhat}), cube}), axes, false);
    }
  }
  return out;
});

PJ_REGISTER_GRAD("layer_norm", [](GradContext& c, const GradArgs& g) -> Grads {
  // outputs: y, mean, rstd (x.shape[:axis] + ones)
  const Shape xs = g.in_meta(c, 0).shape;
  const Shape stat = c.meta(g.out[1]).shape;
  IntList lead, norm;
  int64_t M = 1;
  for (int d = 0; d < static_cast<int>(xs.size()); ++d) {
    if (stat[d] == 1 && (d >= static_cast<int>(xs.size()) - static_cast<int>(g.in_meta(c, 1).shape.size()))) {
      norm.push_back(d);
      M *= xs[d];
    } else {
      lead.push_back(d);
    }
  }
  const int dy = g.dout[0];
  Grads out(3, kNoGrad);
  if (dy == kNoGrad) return out;
  int xhat = normalised(c, g.in[0], g.out[1], g.out[2], stat);
  if (g.needs[0]) {
    int gdy = c.op("mul", {dy, g.in[1]});
    out[0] = normalise_backward(c, gdy, xhat, reshape(c, g.out[2], stat), norm, M);
  }
  if (g.needs[1]) out[1] = c.reduce_to(sum(c, c.op("mul", {dy, xhat}), lead, false), g.in_meta(c, 1));
  if (g.needs[2]) out[2] = c.reduce_to(sum(c, dy, lead, false), g.in_meta(c, 2));
  return out;
});

// ---- embeddings ------------------------------------------------------------------------------------

// embedding(weight [V, D], indices): each row read adds its output gradient to dweight (rows at
// padding_idx get none).
PJ_REGISTER_GRAD("embedding", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta w = g.in_meta(c, 0);
  const int64_t D = w.shape[1];
  int d = g.dout[0], idx = g.in[1];
  if (!g.attrs->is_none("padding_idx")) {
    int64_t pad = g.attrs->i("padding_idx");
    if (pad < 0) pad += w.shape[0];
    Shape is = c.meta(idx).shape;
    is.push_back(1);
    int hit = reshape(c, c.op("eq", {idx, c.scalar(static_cast<double>(pad), c.meta(idx).dtype)}), is);
    d = c.op("where", {hit, c.scalar_like(0, d), d});
  }
  int flat_idx = reshape(c, idx, {shape_numel(c.meta(idx).shape)});
  int rows = reshape(c, d, {shape_numel(c.meta(idx).shape), D});
  return {c.op("index_add", {c.zeros(w), flat_idx, rows}, Attrs{{"axis", int64_t{0}}}), kNoGrad};
});

PJ_REGISTER_GRAD("group_norm", [](GradContext& c, const GradArgs& g) -> Grads {
  // outputs: y, mean [N, G], rstd [N, G]; each group of C/G channels (and the spatial dims) is
  // normalised as one: the layer-norm gradient on x viewed as [N, G, M]
  const Shape xs = g.in_meta(c, 0).shape;
  const int64_t N = xs[0], C = xs[1], G = c.meta(g.out[1]).shape[1];
  const int64_t M = shape_numel(xs) / std::max<int64_t>(N * G, 1);
  const Shape grouped{N, G, M}, stat{N, G, 1};
  Shape cshape(xs.size(), 1);
  cshape[1] = C;
  IntList axes;
  for (int d = 0; d < static_cast<int>(xs.size()); ++d)
    if (d != 1) axes.push_back(d);
  const int dy = g.dout[0];
  Grads out(3, kNoGrad);
  if (dy == kNoGrad) return out;
  int xhat_g = normalised(c, reshape(c, g.in[0], grouped), g.out[1], g.out[2], stat);
  int xhat = reshape(c, xhat_g, xs);
  if (g.needs[0]) {
    int gdy = reshape(c, c.op("mul", {dy, reshape(c, g.in[1], cshape)}), grouped);
    out[0] = reshape(c, normalise_backward(c, gdy, xhat_g, reshape(c, g.out[2], stat), IntList{2}, M), xs);
  }
  if (g.needs[1]) out[1] = sum(c, c.op("mul", {dy, xhat}), axes, false);
  if (g.needs[2]) out[2] = sum(c, dy, axes, false);
  return out;
});

// ---- dropout ------------------------------------------------------------------------------------

PJ_REGISTER_GRAD("dropout", [](GradContext& c, const GradArgs& g) -> Grads {
  // outputs: y, mask (Bool); y = x * mask / (1 - p) when training, x otherwise
  const double p = g.attrs->is_none("p") ? 0.5 : g.attrs->f("p");
  const int d = g.dout[0];
  if (!g.attrs->b("training", true) || p == 0) return {d};
  if (p >= 1) return {c.zeros(g.in_meta(c, 0))};
  int kept = c.op("cast", {g.out[1]}, Attrs{{"dtype", c.meta(d).dtype}});
  return {c.op("mul", {c.op("mul", {d, kept}), scalar(c, 1.0 / (1.0 - p), d)})};
});

}  // namespace
}  // namespace pj
