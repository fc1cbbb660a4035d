// Loss ops with PyTorch's semantics (kernels/loss.h has the formulas). This file owns attribute
// parsing and every user-facing error; messages name the op and the shapes.
//
// Every loss takes attribute reduction in {'none', 'mean', 'sum'} (default 'mean'); 'none' keeps
// one value per sample (class losses) or per element (pointwise losses), the others give a 0-d
// result. The result dtype is the promotion of the floating tensor inputs; integer or bool
// inputs where floats are expected raise TypeError. Optional tensor inputs come last, in order:
//   nll_loss(log_probs [N, C, *] or [C], target [N, *] int, weight [C]?; reduction, ignore_index=-100)
//   cross_entropy(logits [N, C, *] or [C], target, weight [C]?; reduction, ignore_index=-100,
//                 label_smoothing=0.0): target is class indices (Int32/Int64, shape [N, *]) or class
//                 probabilities (floating, logits' shape; ignore_index must then be negative)
//   mse_loss(input, target; reduction)                 input and target broadcast together
//   l1_loss(input, target; reduction)
//   smooth_l1_loss(input, target; reduction, beta=1.0)
//   binary_cross_entropy(probs, target, weight?; reduction)   target: probs' shape; weight
//                 broadcasts to it
//   binary_cross_entropy_with_logits(logits, target, weight?, pos_weight?; reduction, has_weight,
//                 has_pos_weight): with three inputs the third is weight unless has_pos_weight=True;
//                 the flags default to what the input count implies and must agree with it.
#include "graph/ops/op_helpers.h"
#include "kernels/loss.h"

namespace pj {
namespace {

void check_input_count(const char* op, size_t n, size_t lo, size_t hi) {
  if (n < lo || n > hi)
    PJ_THROW(Type) << op << "() takes " << lo << (hi == lo + 1 ? " or " : " to ") << hi << " tensor inputs but "
                   << n << " were given";
}

Reduction reduction_of(const char* op, const Attrs& a) {
  if (a.is_none("reduction")) return Reduction::Mean;
  const std::string& r = a.s("reduction");
  if (r == "none") return Reduction::None;
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  PJ_THROW(Value) << op << ": reduction must be 'none', 'mean' or 'sum', but got '" << r << "'";
}

// The result for a per-sample (or per-element) shape.
Metas loss_result(Reduction r, const Shape& per_sample, DType t) {
  return one(r == Reduction::None ? per_sample : Shape{}, t);
}

// ---- class losses ---------------------------------------------------------------------------------

// logits.shape without the class dim (dim 1, or dim 0 of a 1-D input).
Shape sample_shape(const Shape& x) {
  Shape s;
  for (size_t d = 0; d < x.size(); ++d)
    if (d != (x.size() == 1 ? 0 : 1)) s.push_back(x[d]);
  return s;
}

ClassLossOptions class_options(const char* op, const Attrs& a, bool cross_entropy) {
  ClassLossOptions o;
  o.reduction = reduction_of(op, a);
  o.ignore_index = a.i("ignore_index", -100);
  o.label_smoothing = !cross_entropy || a.is_none("label_smoothing") ? 0.0 : a.f("label_smoothing");
  if (!(o.label_smoothing >= 0 && o.label_smoothing <= 1))
    PJ_THROW(Value) << op << ": label_smoothing must be in [0, 1], but got " << o.label_smoothing;
  return o;
}

// Checks (input, target, weight?) of nll_loss / cross_entropy; returns the result dtype.
DType check_class_loss(const char* op, const Metas& in, const ClassLossOptions& o, bool allow_probs) {
  check_input_count(op, in.size(), 2, 3);
  const TensorMeta &x = in[0], &t = in[1];
  require_floating(op, "input", x.dtype);
  if (x.shape.empty()) PJ_THROW(Value) << op << ": input must have at least 1 dim (the classes), but got shape ()";
  const int64_t C = x.shape[x.shape.size() == 1 ? 0 : 1];
  DType result = x.dtype;
  if (is_floating(t.dtype) && allow_probs) {
    if (t.shape != x.shape)
      PJ_THROW(Value) << op << ": class-probability target has shape " << shape_str(t.shape) << " but expected "
                      << shape_str(x.shape) << ", the shape of input";
    if (o.ignore_index >= 0)
      PJ_THROW(Value) << op << ": ignore_index is not supported for class-probability targets (got "
                      << o.ignore_index << ")";
    result = promote(result, t.dtype);
  } else {
    if (t.dtype != DType::Int32 && t.dtype != DType::Int64)
      PJ_THROW(Type) << op << ": target must be Int32 or Int64 class indices"
                     << (allow_probs ? " or floating class probabilities" : "") << ", but got " << dtype_name(t.dtype);
    const Shape want = sample_shape(x.shape);
    if (t.shape != want)
      PJ_THROW(Value) << op << ": target has shape " << shape_str(t.shape) << " but expected " << shape_str(want)
                      << " for input of shape " << shape_str(x.shape);
  }
  if (in.size() == 3) {
    require_floating(op, "weight", in[2].dtype);
    if (in[2].shape != Shape{C})
      PJ_THROW(Value) << op << ": weight has shape " << shape_str(in[2].shape) << " but expected (" << C
                      << ",) (one per class of input with shape " << shape_str(x.shape) << ")";
    result = promote(result, in[2].dtype);
  }
  return result;
}

void register_class_loss(const char* op, bool cross_entropy) {
  std::vector<std::string> attrs = {"reduction", "ignore_index"};
  if (cross_entropy) attrs.push_back("label_smoothing");
  OpRegistrar(op)
      .inputs(-1)
      .raises_on_values()  // a target outside [0, classes)
      .attrs(attrs)
      .infer([op, cross_entropy](const Metas& in, const Attrs& a) {
        ClassLossOptions o = class_options(op, a, cross_entropy);
        DType t = check_class_loss(op, in, o, cross_entropy);
        return loss_result(o.reduction, sample_shape(in[0].shape), t);
      })
      .kernel([op, cross_entropy](const Tensors& in, const Attrs& a, const Tensors& out) {
        ClassLossOptions o = class_options(op, a, cross_entropy);
        const DType t = out[0].dtype();
        Tensor x = as_dtype(in[0], t);
        Tensor target = is_floating(in[1].dtype()) ? as_dtype(in[1], t) : in[1];
        Tensor w = in.size() == 3 ? as_dtype(in[2], t) : Tensor();
        if (cross_entropy) cross_entropy_into(out[0], x, target, w, o);
        else nll_loss_into(out[0], x, target, w, o, op);
      });
}

// ---- pointwise losses -----------------------------------------------------------------------------

// Checks two floating operands that broadcast together; returns the broadcast shape.
Shape check_pair(const char* op, const Metas& in) {
  require_floating(op, "input", in[0].dtype);
  require_floating(op, "target", in[1].dtype);
  try {
    return broadcast_shapes(in[0].shape, in[1].shape);
  } catch (const Error&) {
    PJ_THROW(Value) << op << ": input shape " << shape_str(in[0].shape) << " and target shape "
                    << shape_str(in[1].shape) << " cannot be broadcast together";
  }
}

// A weight-like operand must broadcast to the input's shape without growing it.
void check_broadcasts_to(const char* op, const char* what, const TensorMeta& w, const Shape& x) {
  require_floating(op, what, w.dtype);
  bool ok = w.shape.size() <= x.size();
  for (size_t i = 0; ok && i < w.shape.size(); ++i) {
    int64_t d = w.shape[w.shape.size() - 1 - i], xd = x[x.size() - 1 - i];
    ok = d == xd || d == 1;
  }
  if (!ok)
    PJ_THROW(Value) << op << ": " << what << " of shape " << shape_str(w.shape) << " cannot be broadcast to input shape "
                    << shape_str(x);
}

using PairKernel = void (*)(const Tensor&, const Tensor&, const Tensor&, Reduction r);

void register_pair_loss(const char* op, PairKernel k) {
  OpRegistrar(op)
      .inputs(2)
      .attrs({"reduction"})
      .infer([op](const Metas& in, const Attrs& a) {
        Shape s = check_pair(op, in);
        return loss_result(reduction_of(op, a), s, promote(in[0].dtype, in[1].dtype));
      })
      .kernel([op, k](const Tensors& in, const Attrs& a, const Tensors& out) {
        const DType t = out[0].dtype();
        k(out[0], as_dtype(in[0], t), as_dtype(in[1], t), reduction_of(op, a));
      });
}

double smooth_l1_beta(const Attrs& a) {
  double beta = a.is_none("beta") ? 1.0 : a.f("beta");
  if (!(beta >= 0)) PJ_THROW(Value) << "smooth_l1_loss: beta must be non-negative, but got " << beta;
  return beta;
}

struct Registrations {
  Registrations() {
    register_class_loss("nll_loss", false);
    register_class_loss("cross_entropy", true);
    register_pair_loss("mse_loss", mse_loss_into);
    register_pair_loss("l1_loss", l1_loss_into);
  }
} registrations;

PJ_REGISTER_OP("smooth_l1_loss")
    .inputs(2)
    .attrs({"reduction", "beta"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape s = check_pair("smooth_l1_loss", in);
      smooth_l1_beta(a);
      return loss_result(reduction_of("smooth_l1_loss", a), s, promote(in[0].dtype, in[1].dtype));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      const DType t = out[0].dtype();
      smooth_l1_loss_into(out[0], as_dtype(in[0], t), as_dtype(in[1], t), reduction_of("smooth_l1_loss", a),
                          smooth_l1_beta(a));
    });

// The target of the binary losses has exactly the input's shape (PyTorch refuses to broadcast it).
void check_same_shape(const char* op, const Metas& in) {
  require_floating(op, "input", in[0].dtype);
  require_floating(op, "target", in[1].dtype);
  if (in[0].shape != in[1].shape)
    PJ_THROW(Value) << op << ": target shape " << shape_str(in[1].shape) << " must be the same as input shape "
                    << shape_str(in[0].shape);
}

DType promote_all(const Metas& in) {
  DType t = in[0].dtype;
  for (auto& m : in) t = promote(t, m.dtype);
  return t;
}

PJ_REGISTER_OP("binary_cross_entropy")
    .raises_on_values()
    .inputs(-1)
    .attrs({"reduction"})
    .infer([](const Metas& in, const Attrs& a) {
      const char* op = "binary_cross_entropy";
      check_input_count(op, in.size(), 2, 3);
      check_same_shape(op, in);
      if (in.size() == 3) check_broadcasts_to(op, "weight", in[2], in[0].shape);
      return loss_result(reduction_of(op, a), in[0].shape, promote_all(in));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      const DType t = out[0].dtype();
      binary_cross_entropy_into(out[0], as_dtype(in[0], t), as_dtype(in[1], t),
                                in.size() == 3 ? as_dtype(in[2], t) : Tensor(),
                                reduction_of("binary_cross_entropy", a));
    });

// Which optional inputs (weight, pos_weight) a binary_cross_entropy_with_logits call carries.
std::pair<bool, bool> bce_logits_optionals(size_t n, const Attrs& a) {
  const char* op = "binary_cross_entropy_with_logits";
  check_input_count(op, n, 2, 4);
  const int extra = static_cast<int>(n) - 2;
  const bool has_pos = a.is_none("has_pos_weight") ? extra == 2 : a.b("has_pos_weight");
  const bool has_w = a.is_none("has_weight") ? extra - (has_pos ? 1 : 0) >= 1 : a.b("has_weight");
  if ((has_w ? 1 : 0) + (has_pos ? 1 : 0) != extra)
    PJ_THROW(Type) << op << "() got " << n << " tensor inputs but has_weight=" << (has_w ? "True" : "False")
                   << " and has_pos_weight=" << (has_pos ? "True" : "False") << " need "
                   << 2 + (has_w ? 1 : 0) + (has_pos ? 1 : 0);
  return {has_w, has_pos};
}

PJ_REGISTER_OP("binary_cross_entropy_with_logits")
    .inputs(-1)
    .attrs({"reduction", "has_weight", "has_pos_weight"})
    .infer([](const Metas& in, const Attrs& a) {
      const char* op = "binary_cross_entropy_with_logits";
      auto [has_w, has_pos] = bce_logits_optionals(in.size(), a);
      check_same_shape(op, in);
      if (has_w) check_broadcasts_to(op, "weight", in[2], in[0].shape);
      if (has_pos) check_broadcasts_to(op, "pos_weight", in[has_w ? 3 : 2], in[0].shape);
      return loss_result(reduction_of(op, a), in[0].shape, promote_all(in));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      auto [has_w, has_pos] = bce_logits_optionals(in.size(), a);
      const DType t = out[0].dtype();
      Tensor w = has_w ? as_dtype(in[2], t) : Tensor();
      Tensor pw = has_pos ? as_dtype(in[has_w ? 3 : 2], t) : Tensor();
      binary_cross_entropy_with_logits_into(out[0], as_dtype(in[0], t), as_dtype(in[1], t), w, pw,
                                            reduction_of("binary_cross_entropy_with_logits", a));
    });

}  // namespace
}  // namespace pj
