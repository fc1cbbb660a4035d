// 3-D convolution and pooling over NCDHW tensors (PyTorch / MindSpore semantics). Kernels live in
// kernels/conv3d.cc and kernels/pool3d.cc; this file owns attribute parsing and every user-facing
// error. Gradients: graph/grads/conv3d_grads.cc.
//
//   conv3d(x (N, C, D, H, W), weight (OC, C/groups, kD, kH, kW)[, bias (OC,)]) -> (N, OC, OD, OH, OW)
//   conv_transpose3d(x (N, C, D, H, W), weight (C, OC/groups, kD, kH, kW)[, bias]) -> (N, OC, ...)
//   conv3d_weight_grad(x, dout) -> (OC, C/groups, kD, kH, kW)   (conv3d's weight gradient)
//   max_pool3d(x) -> (values, int64 indices d*H*W + h*W + w in each input plane)
//   avg_pool3d(x), avg_pool3d_grad(x, dout)
//   adaptive_avg_pool3d(x), adaptive_avg_pool3d_grad(x, dout), adaptive_max_pool3d(x) -> (values, indices)
// Triple attributes (stride, dilation, kernel_size, output_padding, output_size) take an int for all
// three dims. padding takes an int, a triple (symmetric per dim), six ints (front, back, top,
// bottom, left, right: MindSpore's pad_list), or for conv3d / the pools 'same' (TensorFlow /
// MindSpore: ceil(in / stride) outputs, the odd extra element at the back/bottom/right) and 'valid'.
// float32 and float64 (other floating dtypes run widened), one dtype for all inputs.
#include <cctype>

#include "graph/ops/conv3d_params.h"
#include "graph/ops/op_helpers.h"
#include "kernels/conv.h"

namespace pj {
namespace {

std::string tup(const int64_t* v, int n) {
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

IntList int_list(const Attrs& a, const char* op, const char* name) {
  const AttrValue& v = a.get(name);
  if (auto* i = std::get_if<int64_t>(&v)) return {*i};
  if (auto* l = std::get_if<IntList>(&v)) return *l;
  PJ_THROW(Type) << op << ": '" << name << "' must be an int or a tuple of ints";
}

// A triple attribute; None / absent / () gives `dflt` (false when there is none).
bool triple(const Attrs& a, const char* op, const char* name, int64_t* out, const int64_t* dflt, bool positive) {
  if (a.is_none(name)) {
    if (!dflt) return false;
    std::copy(dflt, dflt + 3, out);
    return true;
  }
  IntList l = int_list(a, op, name);
  if (l.empty()) {
    if (!dflt) return false;
    std::copy(dflt, dflt + 3, out);
    return true;
  }
  if (l.size() == 1) l.assign(3, l[0]);
  if (l.size() != 3) PJ_THROW(Value) << op << ": '" << name << "' must have 3 elements, got " << l.size();
  std::copy(l.begin(), l.end(), out);
  if (positive)
    for (int d = 0; d < 3; ++d)
      if (out[d] <= 0) PJ_THROW(Value) << op << ": " << name << " must be positive, got " << tup(out, 3);
  return true;
}

const int64_t kOnes[3] = {1, 1, 1}, kZeros[3] = {0, 0, 0};

// padding into pad[6]; returns the mode: "" for explicit ints, else "same" or "valid".
std::string padding(const Attrs& a, const char* op, bool modes_ok, int64_t* pad) {
  std::fill(pad, pad + 6, 0);
  if (a.is_none("padding")) return "";
  if (auto* m = std::get_if<std::string>(&a.get("padding"))) {
    std::string s = *m;
    for (auto& ch : s) ch = static_cast<char>(std::tolower(ch));
    if (modes_ok && (s == "same" || s == "valid")) return s;
    PJ_THROW(Value) << op << ": padding must be " << (modes_ok ? "'same', 'valid' or " : "") << "ints, got '" << *m
                    << "'";
  }
  IntList l = int_list(a, op, "padding");
  if (l.size() == 1) l.assign(6, l[0]);
  else if (l.size() == 3) l = {l[0], l[0], l[1], l[1], l[2], l[2]};
  if (l.size() != 6) PJ_THROW(Value) << op << ": padding must have 1, 3 or 6 elements, got " << l.size();
  std::copy(l.begin(), l.end(), pad);
  for (int i = 0; i < 6; ++i)
    if (pad[i] < 0) PJ_THROW(Value) << op << ": padding must be non-negative, got " << tup(pad, 6);
  return "";
}

void check_conv_inputs(const Metas& in, const char* op, bool transpose) {
  if (in.size() != 2 && in.size() != 3)
    PJ_THROW(Type) << op << "() takes 2 or 3 tensor inputs (x, weight[, bias]) but " << in.size() << " were given";
  const DType t = in[0].dtype;
  if (!is_floating(t)) PJ_THROW(Type) << op << " does not support dtype " << dtype_name(t);
  const char* names[] = {"input", "weight", "bias"};
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].dtype != t)
      PJ_THROW(Type) << op << ": " << names[i] << " dtype " << dtype_name(in[i].dtype) << " does not match input dtype "
                     << dtype_name(t);
  if (in[0].shape.size() != 5)
    PJ_THROW(Value) << op << ": expected a 5-D input (N, C, D, H, W), got shape " << shape_str(in[0].shape);
  if (in[1].shape.size() != 5)
    PJ_THROW(Value) << op << ": expected a 5-D weight "
                    << (transpose ? "(in_channels, out_channels/groups, kD, kH, kW)"
                                  : "(out_channels, in_channels/groups, kD, kH, kW)")
                    << ", got shape " << shape_str(in[1].shape);
}

void check_bias(const Metas& in, const char* op, int64_t oc) {
  if (in.size() == 3 && in[2].shape != Shape{oc})
    PJ_THROW(Value) << op << ": expected a bias of shape " << shape_str({oc}) << ", got " << shape_str(in[2].shape);
}

Conv3dParams common(const Attrs& a, const char* op, bool transpose, std::string* mode) {
  Conv3dParams p;
  triple(a, op, "stride", p.stride, kOnes, true);
  triple(a, op, "dilation", p.dilation, kOnes, true);
  *mode = padding(a, op, !transpose, p.pad);
  p.groups = a.i("groups", 1);
  if (p.groups <= 0) PJ_THROW(Value) << op << ": groups must be positive, got " << p.groups;
  return p;
}

}  // namespace

Conv3dParams conv3d_params(const Metas& in, const Attrs& a, Shape* out) {
  const char* op = "conv3d";
  check_conv_inputs(in, op, false);
  std::string mode;
  Conv3dParams p = common(a, op, false, &mode);
  const Shape &x = in[0].shape, &w = in[1].shape;
  const int64_t c = x[1], oc = w[0], g = p.groups;
  if (oc % g) PJ_THROW(Value) << op << ": out_channels (" << oc << ") must be divisible by groups (" << g << ")";
  if (c % g) PJ_THROW(Value) << op << ": in_channels (" << c << ") must be divisible by groups (" << g << ")";
  if (c != w[1] * g)
    PJ_THROW(Value) << op << ": input has " << c << " channels but weight expects " << w[1] * g << " (groups=" << g
                    << ", weight shape " << shape_str(w) << ")";
  check_bias(in, op, oc);
  if (mode == "same") {
    std::vector<int64_t> pads = conv_same_pads({x[2], x[3], x[4]}, {w[2], w[3], w[4]},
                                               {p.stride[0], p.stride[1], p.stride[2]},
                                               {p.dilation[0], p.dilation[1], p.dilation[2]});
    std::copy(pads.begin(), pads.end(), p.pad);
  }
  Shape o{x[0], oc};
  for (int d = 0; d < 3; ++d) {
    const int64_t dk = p.dilation[d] * (w[2 + d] - 1) + 1, padded = x[2 + d] + p.pad[2 * d] + p.pad[2 * d + 1];
    if (dk > padded)
      PJ_THROW(Value) << op << ": kernel size " << tup(&w[2], 3) << " (dilated in dim " << d << ": " << dk
                      << ") is larger than the padded input " << padded;
    o.push_back(conv_out_size(x[2 + d], w[2 + d], p.stride[d], p.pad[2 * d], p.pad[2 * d + 1], p.dilation[d]));
  }
  *out = o;
  return p;
}

Conv3dParams conv_transpose3d_params(const Metas& in, const Attrs& a, Shape* out) {
  const char* op = "conv_transpose3d";
  check_conv_inputs(in, op, true);
  std::string mode;
  Conv3dParams p = common(a, op, true, &mode);
  triple(a, op, "output_padding", p.output_padding, kZeros, false);
  for (int d = 0; d < 3; ++d)
    if (p.output_padding[d] < 0 || (p.output_padding[d] >= p.stride[d] && p.output_padding[d] >= p.dilation[d]))
      PJ_THROW(Value) << op << ": output_padding must be non-negative and smaller than either stride or dilation, "
                      << "got output_padding " << tup(p.output_padding, 3) << ", stride " << tup(p.stride, 3)
                      << ", dilation " << tup(p.dilation, 3);
  const Shape &x = in[0].shape, &w = in[1].shape;
  const int64_t c = x[1], g = p.groups;
  if (c % g) PJ_THROW(Value) << op << ": in_channels (" << c << ") must be divisible by groups (" << g << ")";
  if (c != w[0])
    PJ_THROW(Value) << op << ": input has " << c << " channels but weight expects " << w[0] << " (groups=" << g
                    << ", weight shape " << shape_str(w) << ")";
  const int64_t oc = w[1] * g;
  check_bias(in, op, oc);
  Shape o{x[0], oc};
  for (int d = 0; d < 3; ++d) {
    const int64_t s = conv_transpose_out_size(x[2 + d], w[2 + d], p.stride[d], p.pad[2 * d], p.pad[2 * d + 1],
                                              p.dilation[d], p.output_padding[d]);
    if (s <= 0)
      PJ_THROW(Value) << op << ": calculated output size " << s << " in spatial dim " << d
                      << " is too small (input " << tup(&x[2], 3) << ", kernel " << tup(&w[2], 3) << ", stride "
                      << tup(p.stride, 3) << ", padding " << tup(p.pad, 6) << ")";
    o.push_back(s);
  }
  *out = o;
  return p;
}

Conv3dParams conv3d_weight_grad_params(const Metas& in, const Attrs& a, Shape* out) {
  const char* op = "conv3d_weight_grad";
  if (in.size() != 2) PJ_THROW(Type) << op << "() takes 2 tensor inputs (x, dout) but " << in.size() << " were given";
  const DType t = in[0].dtype;
  if (!is_floating(t)) PJ_THROW(Type) << op << " does not support dtype " << dtype_name(t);
  if (in[1].dtype != t)
    PJ_THROW(Type) << op << ": dout dtype " << dtype_name(in[1].dtype) << " does not match input dtype " << dtype_name(t);
  const Shape &x = in[0].shape, &d = in[1].shape;
  if (x.size() != 5 || d.size() != 5)
    PJ_THROW(Value) << op << ": expected a 5-D input and a 5-D dout, got shapes " << shape_str(x) << " and "
                    << shape_str(d);
  std::string mode;
  Conv3dParams p = common(a, op, true, &mode);
  int64_t k[3];
  if (!triple(a, op, "kernel_size", k, nullptr, true)) PJ_THROW(Type) << op << ": 'kernel_size' is required";
  const int64_t c = x[1], oc = d[1], g = p.groups;
  if (c % g || oc % g)
    PJ_THROW(Value) << op << ": in_channels (" << c << ") and out_channels (" << oc << ") must be divisible by groups ("
                    << g << ")";
  if (d[0] != x[0]) PJ_THROW(Value) << op << ": dout batch " << d[0] << " does not match the input's " << x[0];
  for (int i = 0; i < 3; ++i) {
    if (p.dilation[i] * (k[i] - 1) + 1 > x[2 + i] + p.pad[2 * i] + p.pad[2 * i + 1])
      PJ_THROW(Value) << op << ": kernel size " << tup(k, 3) << " is larger than the padded input";
    // dout may be shorter than the convolution's output (see kernels/conv3d.h), never longer
    if (d[2 + i] > conv_out_size(x[2 + i], k[i], p.stride[i], p.pad[2 * i], p.pad[2 * i + 1], p.dilation[i]))
      PJ_THROW(Value) << op << ": dout has shape " << shape_str(d) << ", longer than the convolution of an input of "
                      << "shape " << shape_str(x) << " gives";
  }
  *out = {oc, c / g, k[0], k[1], k[2]};
  return p;
}

Pool3dParams pool3d_params(const TensorMeta& x, const Attrs& a, const char* op, bool is_max, Shape* out) {
  if (!is_floating(x.dtype)) PJ_THROW(Type) << op << " does not support dtype " << dtype_name(x.dtype);
  const Shape& s = x.shape;
  if (s.size() != 5) PJ_THROW(Value) << op << ": expected a 5-D input (N, C, D, H, W), got shape " << shape_str(s);
  if (s[2] == 0 || s[3] == 0 || s[4] == 0)
    PJ_THROW(Value) << op << ": expected an input with non-empty D, H and W, got shape " << shape_str(s);
  Pool3dParams p;
  if (!triple(a, op, "kernel_size", p.kernel, nullptr, true)) PJ_THROW(Value) << op << ": 'kernel_size' is required";
  if (!triple(a, op, "stride", p.stride, nullptr, true)) std::copy(p.kernel, p.kernel + 3, p.stride);
  if (is_max) triple(a, op, "dilation", p.dilation, kOnes, true);
  const bool ceil_mode = a.b("ceil_mode", false);
  const std::string mode = padding(a, op, true, p.pad);
  Shape o{s[0], s[1]};
  for (int d = 0; d < 3; ++d) {
    const int64_t dk = p.dilation[d] * (p.kernel[d] - 1) + 1;
    if (mode == "same") {
      const int64_t n = (s[2 + d] + p.stride[d] - 1) / p.stride[d];
      const int64_t total = std::max<int64_t>((n - 1) * p.stride[d] + dk - s[2 + d], 0);
      p.pad[2 * d] = total / 2, p.pad[2 * d + 1] = total - total / 2;
      o.push_back(n);
      continue;
    }
    if (p.pad[2 * d] > dk / 2 || p.pad[2 * d + 1] > dk / 2)
      PJ_THROW(Value) << op << ": pad should be at most half of " << (is_max ? "effective " : "")
                      << "kernel size, but got pad=" << tup(p.pad, 6) << ", kernel_size=" << tup(p.kernel, 3)
                      << (is_max ? " and dilation=" + tup(p.dilation, 3) : std::string());
    o.push_back(pool3d_out_size(s[2 + d], p.kernel[d], p.stride[d], p.pad[2 * d], p.pad[2 * d + 1], p.dilation[d],
                                ceil_mode));
    if (o.back() <= 0)
      PJ_THROW(Value) << op << ": calculated output size " << shape_str(o) << "... is too small for input "
                      << shape_str(s) << " (kernel_size=" << tup(p.kernel, 3) << ", stride=" << tup(p.stride, 3)
                      << ", padding=" << tup(p.pad, 6) << ")";
  }
  if (!is_max) {
    p.count_include_pad = a.b("count_include_pad", true);
    p.divisor_override = a.i("divisor_override", 0);
    if (!a.is_none("divisor_override") && p.divisor_override <= 0)
      PJ_THROW(Value) << op << ": divisor_override must be positive, got " << p.divisor_override;
  }
  *out = o;
  return p;
}

namespace {

Tensor bias_of(const Tensors& in) { return in.size() > 2 ? in[2] : Tensor(); }
Metas metas(const Tensors& in) {
  Metas m;
  for (auto& t : in) m.push_back(meta_of(t));
  return m;
}

PJ_REGISTER_OP("conv3d")
    .inputs(-1)
    .attrs({"stride", "padding", "dilation", "groups"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape o;
      conv3d_params(in, a, &o);
      return one(o, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Shape o;
      conv3d_into(out[0], in[0], in[1], bias_of(in), conv3d_params(metas(in), a, &o));
    });

PJ_REGISTER_OP("conv_transpose3d")
    .inputs(-1)
    .attrs({"stride", "padding", "output_padding", "dilation", "groups"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape o;
      conv_transpose3d_params(in, a, &o);
      return one(o, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Shape o;
      conv_transpose3d_into(out[0], in[0], in[1], bias_of(in), conv_transpose3d_params(metas(in), a, &o));
    });

PJ_REGISTER_OP("conv3d_weight_grad")
    .inputs(2)
    .attrs({"stride", "padding", "dilation", "groups", "kernel_size"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape o;
      conv3d_weight_grad_params(in, a, &o);
      return one(o, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Shape o;
      conv3d_weight_grad_into(out[0], in[0], in[1], conv3d_weight_grad_params(metas(in), a, &o));
    });

PJ_REGISTER_OP("max_pool3d")
    .inputs(1)
    .attrs({"kernel_size", "stride", "padding", "dilation", "ceil_mode"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape o;
      pool3d_params(in[0], a, "max_pool3d", true, &o);
      return Metas{{o, in[0].dtype}, {o, DType::Int64}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Shape o;
      max_pool3d_into(out[0], out[1], in[0], pool3d_params(meta_of(in[0]), a, "max_pool3d", true, &o));
    });

const std::vector<std::string> kAvgAttrs = {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                                            "divisor_override"};

PJ_REGISTER_OP("avg_pool3d")
    .inputs(1)
    .attrs(kAvgAttrs)
    .infer([](const Metas& in, const Attrs& a) {
      Shape o;
      pool3d_params(in[0], a, "avg_pool3d", false, &o);
      return one(o, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Shape o;
      avg_pool3d_into(out[0], in[0], pool3d_params(meta_of(in[0]), a, "avg_pool3d", false, &o));
    });

// avg_pool3d_grad(x, dout; avg_pool3d's attrs): the gradient with respect to x (x gives the shape).
PJ_REGISTER_OP("avg_pool3d_grad")
    .inputs(2)
    .attrs(kAvgAttrs)
    .infer([](const Metas& in, const Attrs& a) {
      Shape o;
      pool3d_params(in[0], a, "avg_pool3d", false, &o);
      if (in[1].shape != o || in[1].dtype != in[0].dtype)
        PJ_THROW(Value) << "avg_pool3d backward: the output gradient has shape " << shape_str(in[1].shape)
                        << ", expected " << shape_str(o);
      return one(in[0].shape, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Shape o;
      avg_pool3d_backward_into(out[0], in[1], pool3d_params(meta_of(in[0]), a, "avg_pool3d", false, &o));
    });

Shape adaptive_shape(const TensorMeta& x, const Attrs& a, const char* op) {
  if (!is_floating(x.dtype)) PJ_THROW(Type) << op << " does not support dtype " << dtype_name(x.dtype);
  const Shape& s = x.shape;
  if (s.size() != 5) PJ_THROW(Value) << op << ": expected a 5-D input (N, C, D, H, W), got shape " << shape_str(s);
  int64_t o[3];
  if (!triple(a, op, "output_size", o, nullptr, false)) PJ_THROW(Value) << op << ": 'output_size' is required";
  for (int d = 0; d < 3; ++d) {
    if (o[d] < 0) PJ_THROW(Value) << op << ": output_size must be non-negative, got " << tup(o, 3);
    if (s[2 + d] == 0 && o[d] > 0)
      PJ_THROW(Value) << op << ": expected an input with non-empty D, H and W, got shape " << shape_str(s);
  }
  return {s[0], s[1], o[0], o[1], o[2]};
}

PJ_REGISTER_OP("adaptive_avg_pool3d")
    .inputs(1)
    .attrs({"output_size"})
    .infer([](const Metas& in, const Attrs& a) { return one(adaptive_shape(in[0], a, "adaptive_avg_pool3d"), in[0].dtype); })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { adaptive_avg_pool3d_into(out[0], in[0]); });

PJ_REGISTER_OP("adaptive_avg_pool3d_grad")
    .inputs(2)
    .attrs({"output_size"})
    .infer([](const Metas& in, const Attrs& a) {
      const Shape o = adaptive_shape(in[0], a, "adaptive_avg_pool3d");
      if (in[1].shape != o || in[1].dtype != in[0].dtype)
        PJ_THROW(Value) << "adaptive_avg_pool3d backward: the output gradient has shape " << shape_str(in[1].shape)
                        << ", expected " << shape_str(o);
      return one(in[0].shape, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      adaptive_avg_pool3d_backward_into(out[0], in[1]);
    });

PJ_REGISTER_OP("adaptive_max_pool3d")
    .inputs(1)
    .attrs({"output_size"})
    .infer([](const Metas& in, const Attrs& a) {
      const Shape o = adaptive_shape(in[0], a, "adaptive_max_pool3d");
      for (int d = 2; d < 5; ++d)
        if (in[0].shape[d] == 0)
          PJ_THROW(Value) << "adaptive_max_pool3d: expected an input with non-empty D, H and W, got shape "
                          << shape_str(in[0].shape);
      return Metas{{o, in[0].dtype}, {o, DType::Int64}};
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { adaptive_max_pool3d_into(out[0], out[1], in[0]); });

}  // namespace
}  // namespace pj
