// conv2d and conv_transpose2d over NCHW tensors (PyTorch / MindSpore semantics). Kernels live in
// kernels/conv.cc; this file owns attribute parsing and every user-facing error.
//
// Both ops take 2 or 3 tensor inputs (x, weight[, bias]): one variadic op rather than a *_nobias
// twin, so the Python layer and the graph compiler see a single name.
//   conv2d(x (N, C, H, W), weight (OC, C/groups, kH, kW)[, bias (OC,)]) -> (N, OC, OH, OW)
//   conv_transpose2d(x (N, C, H, W), weight (C, OC/groups, kH, kW)[, bias (OC,)]) -> (N, OC, OH, OW)
// Attributes (None or absent: the default):
//   stride    (sH, sW), default (1, 1); an int means both.
//   padding   (top, bottom, left, right) explicit zero padding, default 0; an int means all four, a
//             pair (pH, pW) means (pH, pH, pW, pW). conv2d also takes the strings 'valid' (no
//             padding) and 'same' (TensorFlow / MindSpore: ceil(in / stride) outputs, the odd extra
//             row/column at the bottom/right; see conv_same_pads).
//   dilation  (dH, dW), default (1, 1).
//   groups    int, default 1.
//   output_padding (conv_transpose2d only) (oH, oW), default (0, 0): extra output rows/cols at
//             the bottom/right, each smaller than the stride or the dilation of its dim.
// float32 and float64 only, one dtype for all inputs (no promotion, as in MindSpore / PyTorch).
#include "graph/ops/nn_params.h"
#include "graph/ops/op_helpers.h"
#include "kernels/conv.h"

namespace pj {
namespace {

std::string tuple_str(const int64_t* v, int n) {
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

// Attribute `name` as `n` ints: None/absent gives `dflt`; an int or a 1-element tuple repeats;
// `pair_ok` also accepts (a, b) for n == 4 as (a, a, b, b).
void int_attr(const Attrs& a, const char* op, const char* name, int n, const int64_t* dflt, int64_t* out,
              bool pair_ok = false) {
  if (a.is_none(name)) {
    std::copy(dflt, dflt + n, out);
    return;
  }
  const AttrValue& v = a.get(name);
  IntList l;
  if (auto* i = std::get_if<int64_t>(&v)) l = {*i};
  else if (auto* p = std::get_if<IntList>(&v)) l = *p;
  else PJ_THROW(Type) << op << ": '" << name << "' must be an int or a tuple of ints";
  if (l.size() == 1) l.assign(n, l[0]);
  else if (pair_ok && n == 4 && l.size() == 2) l = {l[0], l[0], l[1], l[1]};
  if (static_cast<int>(l.size()) != n)
    PJ_THROW(Value) << op << ": '" << name << "' must have " << n << " elements, got " << l.size();
  std::copy(l.begin(), l.end(), out);
}

void check_positive(const char* op, const char* name, const int64_t* v, int n) {
  for (int i = 0; i < n; ++i)
    if (v[i] <= 0) PJ_THROW(Value) << op << ": " << name << " must be positive, got " << tuple_str(v, n);
}

// Every attribute except 'same' padding (which needs the input and weight shapes).
Conv2dParams parse_params(const Attrs& a, const char* op, bool transpose, bool* same) {
  static const int64_t ones[2] = {1, 1}, zeros[4] = {0, 0, 0, 0};
  Conv2dParams p;
  int_attr(a, op, "stride", 2, ones, p.stride);
  int_attr(a, op, "dilation", 2, ones, p.dilation);
  check_positive(op, "stride", p.stride, 2);
  check_positive(op, "dilation", p.dilation, 2);
  *same = false;
  const std::string* mode = a.is_none("padding") ? nullptr : std::get_if<std::string>(&a.get("padding"));
  if (mode && !transpose && (*mode == "same" || *mode == "valid")) {
    *same = *mode == "same";
  } else {
    if (mode)
      PJ_THROW(Value) << op << ": padding must be " << (transpose ? "" : "'same', 'valid' or ") << "ints, got '" << *mode
                      << "'";
    int_attr(a, op, "padding", 4, zeros, p.pad, true);
    for (int i = 0; i < 4; ++i)
      if (p.pad[i] < 0) PJ_THROW(Value) << op << ": padding must be non-negative, got " << tuple_str(p.pad, 4);
  }
  p.groups = a.i("groups", 1);
  if (p.groups <= 0) PJ_THROW(Value) << op << ": groups must be positive, got " << p.groups;
  if (transpose) {
    int_attr(a, op, "output_padding", 2, zeros, p.output_padding);
    for (int i = 0; i < 2; ++i)
      if (p.output_padding[i] < 0 ||
          (p.output_padding[i] >= p.stride[i] && p.output_padding[i] >= p.dilation[i]))
        PJ_THROW(Value) << op << ": output_padding must be non-negative and smaller than either stride or "
                        << "dilation, got output_padding " << tuple_str(p.output_padding, 2) << ", stride "
                        << tuple_str(p.stride, 2) << ", dilation " << tuple_str(p.dilation, 2);
  }
  return p;
}

void check_inputs(const Metas& in, const char* op, bool transpose) {
  if (in.size() != 2 && in.size() != 3)
    PJ_THROW(Type) << op << "() takes 2 or 3 tensor inputs (x, weight[, bias]) but " << in.size() << " were given";
  const DType t = in[0].dtype;
  if (!is_floating(t)) PJ_THROW(Type) << op << " does not support dtype " << dtype_name(t);
  const char* names[] = {"input", "weight", "bias"};
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].dtype != t)
      PJ_THROW(Type) << op << ": " << names[i] << " dtype " << dtype_name(in[i].dtype) << " does not match input dtype "
                     << dtype_name(t);
  if (in[0].shape.size() != 4)
    PJ_THROW(Value) << op << ": expected a 4-D input (N, C, H, W), got shape " << shape_str(in[0].shape);
  if (in[1].shape.size() != 4)
    PJ_THROW(Value) << op << ": expected a 4-D weight "
                    << (transpose ? "(in_channels, out_channels/groups, kH, kW)" : "(out_channels, in_channels/groups, kH, kW)")
                    << ", got shape " << shape_str(in[1].shape);
}

void check_bias(const Metas& in, const char* op, int64_t oc) {
  if (in.size() == 3 && in[2].shape != Shape{oc})
    PJ_THROW(Value) << op << ": expected a bias of shape " << shape_str({oc}) << ", got " << shape_str(in[2].shape);
}

}  // namespace

// The parameters of conv2d(x, w) with 'same' padding resolved; checks every shape rule.
Conv2dParams conv2d_params(const Metas& in, const Attrs& a) {
  const char* op = "conv2d";
  check_inputs(in, op, false);
  bool same;
  Conv2dParams p = parse_params(a, op, false, &same);
  const Shape &x = in[0].shape, &w = in[1].shape;
  const int64_t c = x[1], oc = w[0], g = p.groups;
  if (oc % g) PJ_THROW(Value) << op << ": out_channels (" << oc << ") must be divisible by groups (" << g << ")";
  if (c % g) PJ_THROW(Value) << op << ": in_channels (" << c << ") must be divisible by groups (" << g << ")";
  if (c != w[1] * g)
    PJ_THROW(Value) << op << ": input has " << c << " channels but weight expects " << w[1] * g << " (groups=" << g
                    << ", weight shape " << shape_str(w) << ")";
  check_bias(in, op, oc);
  if (same) {
    std::vector<int64_t> pads = conv_same_pads({x[2], x[3]}, {w[2], w[3]}, {p.stride[0], p.stride[1]},
                                               {p.dilation[0], p.dilation[1]});
    std::copy(pads.begin(), pads.end(), p.pad);
  }
  const int64_t k[2] = {w[2], w[3]};
  const int64_t dk[2] = {p.dilation[0] * (k[0] - 1) + 1, p.dilation[1] * (k[1] - 1) + 1};
  const int64_t padded[2] = {x[2] + p.pad[0] + p.pad[1], x[3] + p.pad[2] + p.pad[3]};
  if (dk[0] > padded[0] || dk[1] > padded[1])
    PJ_THROW(Value) << op << ": kernel size " << tuple_str(k, 2) << " (dilated " << tuple_str(dk, 2)
                    << ") is larger than the padded input " << tuple_str(padded, 2);
  return p;
}

Conv2dParams conv_transpose2d_params(const Metas& in, const Attrs& a, Shape* out) {
  const char* op = "conv_transpose2d";
  check_inputs(in, op, true);
  bool same;
  Conv2dParams p = parse_params(a, op, true, &same);
  const Shape &x = in[0].shape, &w = in[1].shape;
  const int64_t c = x[1], g = p.groups;
  if (c % g) PJ_THROW(Value) << op << ": in_channels (" << c << ") must be divisible by groups (" << g << ")";
  if (c != w[0])
    PJ_THROW(Value) << op << ": input has " << c << " channels but weight expects " << w[0] << " (groups=" << g
                    << ", weight shape " << shape_str(w) << ")";
  const int64_t oc = w[1] * g;
  check_bias(in, op, oc);
  int64_t o[2];
  for (int d = 0; d < 2; ++d)
    o[d] = conv_transpose_out_size(x[2 + d], w[2 + d], p.stride[d], p.pad[2 * d], p.pad[2 * d + 1], p.dilation[d],
                                   p.output_padding[d]);
  if (o[0] <= 0 || o[1] <= 0)
    PJ_THROW(Value) << op << ": calculated output size " << tuple_str(o, 2) << " is too small (input "
                    << tuple_str(&x[2], 2) << ", kernel " << tuple_str(&w[2], 2) << ", stride "
                    << tuple_str(p.stride, 2) << ", padding " << tuple_str(p.pad, 4) << ")";
  *out = {x[0], oc, o[0], o[1]};
  return p;
}

// conv2d_weight_grad's parameters and output shape (OC, C/groups, KH, KW); checks every rule.
Conv2dParams conv2d_weight_grad_params(const Metas& in, const Attrs& a, Shape* out) {
  const char* op = "conv2d_weight_grad";
  if (in.size() != 2)
    PJ_THROW(Type) << op << "() takes 2 tensor inputs (x, dout) but " << in.size() << " were given";
  const DType t = in[0].dtype;
  if (!is_floating(t)) PJ_THROW(Type) << op << " does not support dtype " << dtype_name(t);
  if (in[1].dtype != t)
    PJ_THROW(Type) << op << ": dout dtype " << dtype_name(in[1].dtype) << " does not match input dtype " << dtype_name(t);
  const Shape &x = in[0].shape, &d = in[1].shape;
  if (x.size() != 4 || d.size() != 4)
    PJ_THROW(Value) << op << ": expected a 4-D input and a 4-D dout, got shapes " << shape_str(x) << " and "
                    << shape_str(d);
  bool same;
  Conv2dParams p = parse_params(a, op, false, &same);
  if (same) PJ_THROW(Value) << op << ": padding must be explicit, got 'same'";
  if (a.is_none("kernel_size")) PJ_THROW(Type) << op << ": 'kernel_size' (kH, kW) is required";
  static const int64_t ones[2] = {1, 1};
  int64_t k[2];
  int_attr(a, op, "kernel_size", 2, ones, k);
  check_positive(op, "kernel_size", k, 2);
  const int64_t c = x[1], oc = d[1], g = p.groups;
  if (c % g || oc % g)
    PJ_THROW(Value) << op << ": in_channels (" << c << ") and out_channels (" << oc << ") must be divisible by groups ("
                    << g << ")";
  int64_t o[2];
  for (int i = 0; i < 2; ++i) {
    if (p.dilation[i] * (k[i] - 1) + 1 > x[2 + i] + p.pad[2 * i] + p.pad[2 * i + 1])
      PJ_THROW(Value) << op << ": kernel size " << tuple_str(k, 2) << " is larger than the padded input";
    o[i] = conv_out_size(x[2 + i], k[i], p.stride[i], p.pad[2 * i], p.pad[2 * i + 1], p.dilation[i]);
  }
  if (d[0] != x[0] || d[2] != o[0] || d[3] != o[1])
    PJ_THROW(Value) << op << ": dout has shape " << shape_str(d) << " but the convolution of an input of shape "
                    << shape_str(x) << " gives (" << x[0] << ", " << oc << ", " << o[0] << ", " << o[1] << ")";
  *out = {oc, c / g, k[0], k[1]};
  return p;
}

namespace {

Tensor bias_of(const Tensors& in) { return in.size() > 2 ? in[2] : Tensor(); }

// conv2d_weight_grad(x, dout; stride, padding, dilation, groups, kernel_size) -> the gradient of
// conv2d(x, w) with respect to w (OC, C/groups, KH, KW) when its output's gradient is dout
// (graph/grads/nn_grads.cc emits it; padding explicit).
PJ_REGISTER_OP("conv2d_weight_grad")
    .inputs(2)
    .attrs({"stride", "padding", "dilation", "groups", "kernel_size"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape out;
      conv2d_weight_grad_params(in, a, &out);
      return one(out, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Shape s;
      conv2d_weight_grad_into(out[0], in[0], in[1], conv2d_weight_grad_params({meta_of(in[0]), meta_of(in[1])}, a, &s));
    })
    .prepare([](const Metas& in, const Attrs& a, const Metas& out) -> PreparedFn {
      Shape s;
      std::shared_ptr<const WeightGradPrepared> c = conv2d_weight_grad_prepare(
          out[0].shape, in[0].shape, in[1].shape, conv2d_weight_grad_params(in, a, &s), out[0].dtype);
      return [c](const Tensors& i, const Tensors& o) { conv2d_weight_grad_run(*c, o[0], i[0], i[1]); };
    });

PJ_REGISTER_OP("conv2d")
    .inputs(-1)
    .attrs({"stride", "padding", "dilation", "groups"})
    .infer([](const Metas& in, const Attrs& a) {
      Conv2dParams p = conv2d_params(in, a);
      const Shape &x = in[0].shape, &w = in[1].shape;
      return one({x[0], w[0], conv_out_size(x[2], w[2], p.stride[0], p.pad[0], p.pad[1], p.dilation[0]),
                  conv_out_size(x[3], w[3], p.stride[1], p.pad[2], p.pad[3], p.dilation[1])},
                 in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Metas ms;
      for (auto& t : in) ms.push_back(meta_of(t));
      conv2d_into(out[0], in[0], in[1], bias_of(in), conv2d_params(ms, a));
    })
    .prepare([](const Metas& in, const Attrs& a, const Metas& out) -> PreparedFn {
      // (the attributes read and the oneDNN plan found once)
      std::shared_ptr<const ConvPrepared> c = conv_prepare(out[0].shape, in[0].shape, in[1].shape, conv2d_params(in, a),
                                                           false, in.size() == 3, out[0].dtype);
      return [c](const Tensors& i, const Tensors& o) { conv_run(*c, o[0], i[0], i[1], bias_of(i)); };
    });

PJ_REGISTER_OP("conv_transpose2d")
    .inputs(-1)
    .attrs({"stride", "padding", "output_padding", "dilation", "groups"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape out;
      conv_transpose2d_params(in, a, &out);
      return one(out, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Metas ms;
      for (auto& t : in) ms.push_back(meta_of(t));
      Shape s;
      conv_transpose2d_into(out[0], in[0], in[1], bias_of(in), conv_transpose2d_params(ms, a, &s));
    })
    .prepare([](const Metas& in, const Attrs& a, const Metas& out) -> PreparedFn {
      Shape s;
      std::shared_ptr<const ConvPrepared> c = conv_prepare(out[0].shape, in[0].shape, in[1].shape,
                                                           conv_transpose2d_params(in, a, &s), true, in.size() == 3,
                                                           out[0].dtype);
      return [c](const Tensors& i, const Tensors& o) { conv_run(*c, o[0], i[0], i[1], bias_of(i)); };
    });

}  // namespace
}  // namespace pj
