// Gradient rules of the 3-D convolution and pooling ops (graph/ops/conv3d_ops.cc). As in 2-D: a
// convolution's input gradient is the transposed convolution with the same weight, its weight
// gradient conv3d_weight_grad; a transposed convolution's are the convolution and
// conv3d_weight_grad with input and output swapped. Max pooling sends each output's gradient to
// the input position its indices output names (scatter_add over the flattened planes).
#include "graph/autodiff.h"
#include "graph/ops/conv3d_params.h"
#include "kernels/conv.h"
#include "kernels/index_ops.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

IntList triple(const int64_t* v) { return {v[0], v[1], v[2]}; }
IntList pads(const Conv3dParams& p) { return IntList(p.pad, p.pad + 6); }

Attrs conv_attrs(const Conv3dParams& p) {
  return Attrs{{"stride", triple(p.stride)}, {"padding", pads(p)}, {"dilation", triple(p.dilation)},
               {"groups", p.groups}};
}

Metas metas(GradContext& c, const GradArgs& g) {
  Metas ms;
  for (size_t k = 0; k < g.in.size(); ++k) ms.push_back(g.in_meta(c, static_cast<int>(k)));
  return ms;
}

// The gradient of conv3d(x (shape xs), w (shape ws)) with respect to x, given dout `d` (shape ds):
// the transposed convolution, its output_padding restoring what the forward's stride dropped.
int input_grad(GradContext& c, int d, int w, const Conv3dParams& p, const Shape& xs, const Shape& ws, const Shape& ds) {
  IntList op;
  for (int k = 0; k < 3; ++k)
    op.push_back(xs[2 + k] - conv_transpose_out_size(ds[2 + k], ws[2 + k], p.stride[k], p.pad[2 * k],
                                                     p.pad[2 * k + 1], p.dilation[k], 0));
  Attrs a = conv_attrs(p);
  a.set("output_padding", op);
  return c.op("conv_transpose3d", {d, w}, a);
}

int weight_grad(GradContext& c, int x, int d, const Conv3dParams& p, const Shape& ws) {
  Attrs a = conv_attrs(p);
  a.set("kernel_size", IntList{ws[2], ws[3], ws[4]});
  return c.op("conv3d_weight_grad", {x, d}, a);
}

int bias_grad(GradContext& c, int d) {
  return c.op("sum", {d}, Attrs{{"axis", IntList{0, 2, 3, 4}}, {"keepdims", false}});
}

PJ_REGISTER_GRAD("conv3d", [](GradContext& c, const GradArgs& g) -> Grads {
  const Metas ms = metas(c, g);
  Shape os;
  const Conv3dParams p = conv3d_params(ms, *g.attrs, &os);
  Grads out(g.in.size(), kNoGrad);
  if (g.needs[0]) out[0] = input_grad(c, g.dout[0], g.in[1], p, ms[0].shape, ms[1].shape, os);
  if (g.needs[1]) out[1] = weight_grad(c, g.in[0], g.dout[0], p, ms[1].shape);
  if (g.in.size() == 3 && g.needs[2]) out[2] = bias_grad(c, g.dout[0]);
  return out;
});

// conv_transpose3d(x, w) is the adjoint of conv3d(., w): its x gradient is that convolution of
// dout (cropped where output_padding added planes no input reaches), its w gradient conv3d's
// weight gradient with dout as the convolution's input and x as its output gradient.
PJ_REGISTER_GRAD("conv_transpose3d", [](GradContext& c, const GradArgs& g) -> Grads {
  const Metas ms = metas(c, g);
  Shape os;
  const Conv3dParams p = conv_transpose3d_params(ms, *g.attrs, &os);
  Grads out(g.in.size(), kNoGrad);
  if (g.needs[0]) {
    out[0] = c.op("conv3d", {g.dout[0], g.in[1]}, conv_attrs(p));
    const Shape &xs = ms[0].shape, gs = c.meta(out[0]).shape;
    if (gs != xs) {
      // an output_padding of at least the stride adds planes no input reaches: crop them
      IndexItems crop{IndexItem::slice(), IndexItem::slice()};
      for (int k = 2; k < 5; ++k) crop.push_back(IndexItem::slice(0, xs[k], 1));
      out[0] = c.op("basic_index", {out[0]}, Attrs{{"items", encode_index_items(crop)}});
    }
  }
  if (g.needs[1]) out[1] = weight_grad(c, g.dout[0], g.in[0], p, ms[1].shape);
  if (g.in.size() == 3 && g.needs[2]) out[2] = bias_grad(c, g.dout[0]);
  return out;
});

// conv3d_weight_grad(x, dout) is linear in each input (second-order gradients).
PJ_REGISTER_GRAD("conv3d_weight_grad", [](GradContext& c, const GradArgs& g) -> Grads {
  const Metas ms = metas(c, g);
  Shape ws;
  const Conv3dParams p = conv3d_weight_grad_params(ms, *g.attrs, &ws);
  Grads out(2, kNoGrad);
  if (g.needs[0]) out[0] = input_grad(c, g.in[1], g.dout[0], p, ms[0].shape, ws, ms[1].shape);
  if (g.needs[1]) out[1] = c.op("conv3d", {g.in[0], g.dout[0]}, conv_attrs(p));
  return out;
});

// ---- pooling ------------------------------------------------------------------------------------

// dout (N, C, O...) sent to the flat positions `indices` names in each (N, C) plane of x.
int scatter_to_planes(GradContext& c, int x, int indices, int dout) {
  const TensorMeta m = c.meta(x);
  const Shape& s = m.shape;
  const int64_t plane = s[2] * s[3] * s[4];
  const Shape os = c.meta(dout).shape;
  const int64_t oplane = os[2] * os[3] * os[4];
  auto flat = [&](int v, int64_t n) { return c.op("reshape", {v}, Attrs{{"shape", IntList{s[0], s[1], n}}}); };
  int zeros = c.zeros(TensorMeta{Shape{s[0], s[1], plane}, m.dtype});
  int r = c.op("scatter_add", {zeros, flat(indices, oplane), flat(dout, oplane)}, Attrs{{"axis", int64_t{2}}});
  return c.op("reshape", {r}, Attrs{{"shape", IntList(s.begin(), s.end())}});
}

PJ_REGISTER_GRAD("max_pool3d", [](GradContext& c, const GradArgs& g) -> Grads {
  if (g.dout[0] == kNoGrad) return {kNoGrad};
  return {scatter_to_planes(c, g.in[0], g.out[1], g.dout[0])};
});
PJ_REGISTER_GRAD("adaptive_max_pool3d", [](GradContext& c, const GradArgs& g) -> Grads {
  if (g.dout[0] == kNoGrad) return {kNoGrad};
  return {scatter_to_planes(c, g.in[0], g.out[1], g.dout[0])};
});

PJ_REGISTER_GRAD("avg_pool3d", [](GradContext& c, const GradArgs& g) -> Grads {
  return {c.op("avg_pool3d_grad", {g.in[0], g.dout[0]}, *g.attrs)};
});
// avg_pool3d_grad is linear in dout, the adjoint of avg_pool3d: its gradient is the pooling.
PJ_REGISTER_GRAD("avg_pool3d_grad", [](GradContext& c, const GradArgs& g) -> Grads {
  return {kNoGrad, g.needs[1] ? c.op("avg_pool3d", {g.dout[0]}, *g.attrs) : kNoGrad};
});
PJ_REGISTER_GRAD("adaptive_avg_pool3d", [](GradContext& c, const GradArgs& g) -> Grads {
  return {c.op("adaptive_avg_pool3d_grad", {g.in[0], g.dout[0]}, *g.attrs)};
});
PJ_REGISTER_GRAD("adaptive_avg_pool3d_grad", [](GradContext& c, const GradArgs& g) -> Grads {
  return {kNoGrad, g.needs[1] ? c.op("adaptive_avg_pool3d", {g.dout[0]}, *g.attrs) : kNoGrad};
});

}  // namespace
}  // namespace pj
