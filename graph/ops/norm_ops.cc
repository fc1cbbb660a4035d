// Normalisation ops: batch_norm, layer_norm, group_norm (eager forward; kernels/norm.h). This file
// owns attribute parsing and every user-facing error; messages name the op and the shapes.
//
//   batch_norm(x [N, C, *], gamma [C], beta [C], running_mean [C], running_var [C];
//              training=False, momentum=0.9, eps=1e-5) -> (y, save_mean [C], save_invstd [C])
//     momentum follows MindSpore: running = momentum * running + (1 - momentum) * batch
//     (PyTorch's momentum m corresponds to 1 - m here). In training the running statistics are
//     UPDATED IN PLACE (inputs 3 and 4), the variance with the unbiased batch variance.
//   layer_norm(x, gamma, beta; begin_norm_axis=-1, eps=1e-7) -> (y, mean, rstd)
//     normalises over dims [begin_norm_axis:]; gamma, beta: x.shape[begin_norm_axis:]; mean and
//     rstd: x.shape[:begin_norm_axis] + ones (keepdims). Defaults are MindSpore nn.LayerNorm's.
//   group_norm(x [N, C, *], gamma [C], beta [C]; num_groups, eps=1e-5) -> (y, mean [N, G], rstd [N, G])
//
// Every tensor input must be Float32 or Float64 (TypeError otherwise); x's dtype is the result's.
#include "graph/ops/op_helpers.h"
#include "kernels/norm.h"

namespace pj {
namespace {

double attr_f(const Attrs& a, const char* k, double dflt) { return a.is_none(k) ? dflt : a.f(k); }

// Checks a per-channel parameter: floating, shape (C,).
void check_channel_param(const char* op, const char* what, const TensorMeta& p, const Shape& x) {
  require_floating(op, what, p.dtype);
  if (p.shape != Shape{x[1]})
    PJ_THROW(Value) << op << ": " << what << " has shape " << shape_str(p.shape) << " but expected ("
                    << x[1] << ",) (the channels of x with shape " << shape_str(x) << ")";
}

void check_nc_input(const char* op, const TensorMeta& x) {
  require_floating(op, "x", x.dtype);
  if (x.shape.size() < 2)
    PJ_THROW(Value) << op << ": expected x with at least 2 dims (N, C, ...), but got shape " << shape_str(x.shape);
}

double checked_eps(const char* op, const Attrs& a, double dflt) {
  double eps = attr_f(a, "eps", dflt);
  if (!(eps >= 0)) PJ_THROW(Value) << op << ": eps must be non-negative, but got " << eps;
  return eps;
}

// NOTE: batch_norm mutates its inputs 3 (running_mean) and 4 (running_var) when training=True.
// OpDef has no field for that yet (it needs `mutates`, a list of input indices); until then the
// graph compiler must treat batch_norm as having side effects: never dedupe, reorder or drop it.
PJ_REGISTER_OP("batch_norm")
    .impure()
    .inputs(5)
    .attrs({"training", "momentum", "eps"})
    .infer([](const Metas& in, const Attrs& a) {
      check_nc_input("batch_norm", in[0]);
      const Shape& x = in[0].shape;
      const char* names[] = {"gamma", "beta", "running_mean", "running_var"};
      for (int i = 0; i < 4; ++i) check_channel_param("batch_norm", names[i], in[i + 1], x);
      double momentum = attr_f(a, "momentum", 0.9);
      if (!(momentum >= 0 && momentum <= 1))
        PJ_THROW(Value) << "batch_norm: momentum must be in [0, 1], but got " << momentum;
      checked_eps("batch_norm", a, 1e-5);
      int64_t per_channel = x[0];
      for (size_t d = 2; d < x.size(); ++d) per_channel *= x[d];
      if (a.b("training") && per_channel <= 1)
        PJ_THROW(Value) << "batch_norm: expected more than 1 value per channel when training, but got x with shape "
                        << shape_str(x);
      const DType t = in[0].dtype;
      return Metas{{x, t}, {Shape{x[1]}, t}, {Shape{x[1]}, t}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      batch_norm_into(out[0], out[1], out[2], in[0], in[1], in[2], in[3], in[4], a.b("training"),
                      attr_f(a, "momentum", 0.9), attr_f(a, "eps", 1e-5));
    });

// batch_norm_coeffs(gamma, beta, running_mean, running_var; eps, dtype) -> m, a, sh [C] of dtype:
// inference batch_norm is (x - m) * a + sh (kernels/norm.h). Made by the graph compiler only.
PJ_REGISTER_OP("batch_norm_coeffs")
    .total()
    .inputs(4)
    .attrs({"eps", "dtype"})
    .infer([](const Metas& in, const Attrs& a) {
      const Shape c = in[0].shape;
      for (const TensorMeta& m : in)
        if (m.shape != c || !is_floating(m.dtype))
          PJ_THROW(Value) << "batch_norm_coeffs: expected 4 floating [C] parameters, got " << shape_str(m.shape);
      const DType t = a.dtype("dtype");
      return Metas{{c, t}, {c, t}, {c, t}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      batch_norm_coeffs_into(out[0], out[1], out[2], in[0], in[1], in[2], in[3], attr_f(a, "eps", 1e-5));
    });

int begin_norm_axis(const Attrs& a, const Shape& x) {
  const int64_t nd = static_cast<int64_t>(x.size()), axis = a.i("begin_norm_axis", -1);
  if (axis < -nd || axis >= nd)
    PJ_THROW(Value) << "layer_norm: begin_norm_axis " << axis << " is out of range for x with " << nd
                    << " dims (shape " << shape_str(x) << ")";
  return static_cast<int>(axis < 0 ? axis + nd : axis);
}

PJ_REGISTER_OP("layer_norm")
    .inputs(3)
    .attrs({"begin_norm_axis", "eps"})
    .infer([](const Metas& in, const Attrs& a) {
      require_floating("layer_norm", "x", in[0].dtype);
      const Shape& x = in[0].shape;
      const int axis = begin_norm_axis(a, x);
      const Shape normalized(x.begin() + axis, x.end());
      const char* names[] = {"gamma", "beta"};
      for (int i = 0; i < 2; ++i) {
        require_floating("layer_norm", names[i], in[i + 1].dtype);
        if (in[i + 1].shape != normalized)
          PJ_THROW(Value) << "layer_norm: " << names[i] << " has shape " << shape_str(in[i + 1].shape)
                          << " but expected " << shape_str(normalized) << " (x.shape[" << axis
                          << ":] of x with shape " << shape_str(x) << ")";
      }
      checked_eps("layer_norm", a, 1e-7);
      Shape stat = x;
      for (size_t d = axis; d < stat.size(); ++d) stat[d] = 1;
      const DType t = in[0].dtype;
      return Metas{{x, t}, {stat, t}, {stat, t}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      layer_norm_into(out[0], out[1], out[2], in[0], in[1], in[2], begin_norm_axis(a, in[0].shape()),
                      attr_f(a, "eps", 1e-7));
    });

PJ_REGISTER_OP("group_norm")
    .inputs(3)
    .attrs({"num_groups", "eps"})
    .infer([](const Metas& in, const Attrs& a) {
      check_nc_input("group_norm", in[0]);
      const Shape& x = in[0].shape;
      check_channel_param("group_norm", "gamma", in[1], x);
      check_channel_param("group_norm", "beta", in[2], x);
      const int64_t g = a.i("num_groups", 0);
      if (g <= 0) PJ_THROW(Value) << "group_norm: num_groups must be positive, but got " << g;
      if (x[1] % g != 0)
        PJ_THROW(Value) << "group_norm: num_channels " << x[1] << " must be divisible by num_groups " << g
                        << " (x shape " << shape_str(x) << ")";
      checked_eps("group_norm", a, 1e-5);
      const DType t = in[0].dtype;
      return Metas{{x, t}, {Shape{x[0], g}, t}, {Shape{x[0], g}, t}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      group_norm_into(out[0], out[1], out[2], in[0], in[1], in[2], a.i("num_groups"), attr_f(a, "eps", 1e-5));
    });

}  // namespace
}  // namespace pj
