// Pooling ops over NCHW tensors with PyTorch's semantics. Kernels live in kernels/pool.cc; this
// file owns attribute parsing and every user-facing error. Inputs are 4-D (N, C, H, W) with
// non-empty H and W; float32 and float64 only.
//
//   max_pool2d(x)  attrs: kernel_size (kH, kW); stride (sH, sW), None or () = kernel_size;
//                  padding (pH, pW) symmetric, default 0, at most half the effective kernel
//                  (dilation*(k-1)+1); dilation (dH, dW), default 1; ceil_mode bool, default False.
//   avg_pool2d(x)  attrs: kernel_size, stride, padding (at most half the kernel), ceil_mode as
//                  above; count_include_pad bool, default True; divisor_override int or None.
//   adaptive_avg_pool2d(x)  attr output_size (OH, OW), each >= 0: output cell i averages input
//                  rows [floor(i*H/OH), ceil((i+1)*H/OH)), likewise for columns.
// An int stands for both spatial dims in every pair attribute.
#include "graph/ops/nn_params.h"
#include "graph/ops/op_helpers.h"
#include "kernels/pool.h"

namespace pj {
namespace {

std::string pair_str(const int64_t* v) { return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")"; }

// Pair attribute `name` into out[0..1]; false (out untouched) when it is None or ().
bool pair_attr(const Attrs& a, const char* op, const char* name, int64_t* out) {
  if (a.is_none(name)) return false;
  const AttrValue& v = a.get(name);
  if (auto* i = std::get_if<int64_t>(&v)) {
    out[0] = out[1] = *i;
    return true;
  }
  auto* l = std::get_if<IntList>(&v);
  if (!l) PJ_THROW(Type) << op << ": '" << name << "' must be an int or a tuple of ints";
  if (l->empty()) return false;
  if (l->size() == 1) out[0] = out[1] = (*l)[0];
  else if (l->size() == 2) out[0] = (*l)[0], out[1] = (*l)[1];
  else PJ_THROW(Value) << op << ": '" << name << "' must have 2 elements, got " << l->size();
  return true;
}

void check_input(const TensorMeta& x, const char* op) {
  if (!is_floating(x.dtype)) PJ_THROW(Type) << op << " does not support dtype " << dtype_name(x.dtype);
  if (x.shape.size() != 4)
    PJ_THROW(Value) << op << ": expected a 4-D input (N, C, H, W), got shape " << shape_str(x.shape);
  if (x.shape[2] == 0 || x.shape[3] == 0)
    PJ_THROW(Value) << op << ": expected an input with non-empty H and W, got shape " << shape_str(x.shape);
}

}  // namespace

Pool2dParams pool_params(const Attrs& a, const char* op, bool is_max) {
  Pool2dParams p;
  if (!pair_attr(a, op, "kernel_size", p.kernel)) PJ_THROW(Value) << op << ": 'kernel_size' is required";
  if (!pair_attr(a, op, "stride", p.stride)) std::copy(p.kernel, p.kernel + 2, p.stride);
  pair_attr(a, op, "padding", p.pad);
  if (is_max) pair_attr(a, op, "dilation", p.dilation);
  p.ceil_mode = a.b("ceil_mode", false);
  for (auto [name, v] : {std::pair<const char*, int64_t*>{"kernel_size", p.kernel}, {"stride", p.stride},
                         {"dilation", p.dilation}})
    if (v[0] <= 0 || v[1] <= 0) PJ_THROW(Value) << op << ": " << name << " must be positive, got " << pair_str(v);
  for (int d = 0; d < 2; ++d) {
    const int64_t effective = p.dilation[d] * (p.kernel[d] - 1) + 1;
    if (p.pad[d] < 0 || p.pad[d] > effective / 2)
      PJ_THROW(Value) << op << ": pad should be at most half of " << (is_max ? "effective " : "")
                      << "kernel size, but got pad=" << pair_str(p.pad) << ", kernel_size=" << pair_str(p.kernel)
                      << (is_max ? " and dilation=" + pair_str(p.dilation) : std::string());
  }
  if (!is_max) {
    p.count_include_pad = a.b("count_include_pad", true);
    p.divisor_override = a.i("divisor_override", 0);
    if (!a.is_none("divisor_override") && p.divisor_override <= 0)
      PJ_THROW(Value) << op << ": divisor_override must be positive, got " << p.divisor_override;
  }
  return p;
}

Shape pool_shape(const Shape& x, const Pool2dParams& p, const char* op) {
  int64_t o[2];
  for (int d = 0; d < 2; ++d) o[d] = pool_out_size(x[2 + d], p.kernel[d], p.stride[d], p.pad[d], p.dilation[d], p.ceil_mode);
  if (o[0] <= 0 || o[1] <= 0)
    PJ_THROW(Value) << op << ": calculated output size " << pair_str(o) << " is too small for input "
                    << shape_str(x) << " (kernel_size=" << pair_str(p.kernel) << ", stride=" << pair_str(p.stride)
                    << ", padding=" << pair_str(p.pad) << ")";
  return {x[0], x[1], o[0], o[1]};
}

namespace {

std::vector<std::string> pool_attrs(bool is_max) {
  std::vector<std::string> attrs = {"kernel_size", "stride", "padding"};
  if (is_max) attrs.push_back("dilation");
  attrs.push_back("ceil_mode");
  if (!is_max) {
    attrs.push_back("count_include_pad");
    attrs.push_back("divisor_override");
  }
  return attrs;
}

void register_pool(const char* name, bool is_max) {
  OpRegistrar(name)
      .inputs(1)
      .attrs(pool_attrs(is_max))
      .infer([name, is_max](const Metas& in, const Attrs& a) {
        check_input(in[0], name);
        return one(pool_shape(in[0].shape, pool_params(a, name, is_max), name), in[0].dtype);
      })
      .kernel([name, is_max](const Tensors& in, const Attrs& a, const Tensors& out) {
        Pool2dParams p = pool_params(a, name, is_max);
        if (is_max) max_pool2d_into(out[0], in[0], p);
        else avg_pool2d_into(out[0], in[0], p);
      });
}

// name_grad(x, dout; the forward's attrs): the gradient with respect to x (graph/grads/nn_grads.cc).
void register_pool_grad(const char* name, const char* fwd, bool is_max) {
  OpRegistrar(name)
      .inputs(2)
      .attrs(pool_attrs(is_max))
      .total()
      .infer([fwd, is_max](const Metas& in, const Attrs& a) {
        check_input(in[0], fwd);
        Shape o = pool_shape(in[0].shape, pool_params(a, fwd, is_max), fwd);
        if (in[1].shape != o || in[1].dtype != in[0].dtype)
          PJ_THROW(Value) << fwd << " backward: the output gradient has shape " << shape_str(in[1].shape)
                          << ", expected " << shape_str(o);
        return one(in[0].shape, in[0].dtype);
      })
      .kernel([fwd, is_max](const Tensors& in, const Attrs& a, const Tensors& out) {
        Pool2dParams p = pool_params(a, fwd, is_max);
        if (is_max) max_pool2d_backward_into(out[0], in[0], in[1], p);
        else avg_pool2d_backward_into(out[0], in[1], p);
      });
}

struct Registrations {
  Registrations() {
    register_pool("max_pool2d", true);
    register_pool("avg_pool2d", false);
    register_pool_grad("max_pool2d_grad", "max_pool2d", true);
    register_pool_grad("avg_pool2d_grad", "avg_pool2d", false);
  }
} registrations;

PJ_REGISTER_OP("adaptive_avg_pool2d")
    .inputs(1)
    .attrs({"output_size"})
    .infer([](const Metas& in, const Attrs& a) {
      const char* op = "adaptive_avg_pool2d";
      check_input(in[0], op);
      int64_t o[2];
      if (!pair_attr(a, op, "output_size", o)) PJ_THROW(Value) << op << ": 'output_size' is required";
      if (o[0] < 0 || o[1] < 0) PJ_THROW(Value) << op << ": output_size must be non-negative, got " << pair_str(o);
      const Shape& x = in[0].shape;
      return one({x[0], x[1], o[0], o[1]}, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { adaptive_avg_pool2d_into(out[0], in[0]); });

}  // namespace
// adaptive_avg_pool2d_grad(x, dout): the gradient with respect to x.
PJ_REGISTER_OP("adaptive_avg_pool2d_grad")
    .inputs(2)
    .total()
    .infer([](const Metas& in, const Attrs&) {
      check_input(in[0], "adaptive_avg_pool2d");
      if (in[1].shape.size() != 4 || in[1].shape[0] != in[0].shape[0] || in[1].shape[1] != in[0].shape[1])
        PJ_THROW(Value) << "adaptive_avg_pool2d backward: the output gradient has shape " << shape_str(in[1].shape);
      return one(in[0].shape, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { adaptive_avg_pool2d_backward_into(out[0], in[1]); });

}  // namespace pj
