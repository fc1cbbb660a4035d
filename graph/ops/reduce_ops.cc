// Reduction ops (numpy semantics for axes, keepdims, result dtypes and empty inputs), cumsum, and
// softmax / log_softmax. Kernels live in kernels/reduce.cc and kernels/softmax.cc; this file owns
// attribute parsing and every user-facing error.
//
// Attributes: "axis" is None (all axes), an int, or a tuple of ints (negative allowed); "keepdims"
// a bool (default False); var/std also take "ddof" (default 0). argmax/argmin take one axis or
// None (the flattened tensor); cumsum takes one axis or None (flattened); softmax takes one axis
// (default -1). As everywhere in pijit, axis 0 / -1 are accepted on a 0-d tensor (normalize_axis).
#include "graph/ops/nn_params.h"
#include "graph/ops/op_helpers.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"

namespace pj {

std::vector<int> reduce_axes(const Attrs& a, int ndim) {
  std::vector<int> axes;
  if (a.is_none("axis")) {
    for (int d = 0; d < ndim; ++d) axes.push_back(d);
    return axes;
  }
  const AttrValue& v = a.get("axis");
  if (auto* p = std::get_if<int64_t>(&v)) axes = normalize_axes({*p}, ndim);
  else axes = normalize_axes(a.ints("axis"), ndim);
  if (ndim == 0) axes.clear();
  return axes;
}

namespace {

// One axis or None, for argmax/argmin/cumsum; -1 stands for None.
int single_axis(const Attrs& a, const char* op, int ndim) {
  if (a.is_none("axis")) return -1;
  const AttrValue& v = a.get("axis");
  int64_t axis;
  if (auto* p = std::get_if<int64_t>(&v)) axis = *p;
  else if (auto* l = std::get_if<IntList>(&v); l && l->size() == 1) axis = (*l)[0];
  else PJ_THROW(Type) << op << ": 'axis' must be an integer or None";
  return normalize_axis(axis, ndim);
}

Shape reduced_shape(const Shape& in, const std::vector<int>& axes, bool keepdims) {
  std::vector<bool> red(in.size(), false);
  for (int a : axes) red[a] = true;
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!red[d]) out.push_back(in[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

bool reduces_empty_axis(const Shape& in, const std::vector<int>& axes) {
  for (int a : axes)
    if (in[a] == 0) return true;
  return false;
}

void register_reduce(const char* name, ReduceOp op) {
  const bool has_ddof = op == ReduceOp::var || op == ReduceOp::std;
  std::vector<std::string> attrs = {"axis", "keepdims"};
  if (has_ddof) attrs.push_back("ddof");
  OpRegistrar(name)
      .total()  // an empty max/min is refused by infer; the kernel cannot raise
      .inputs(1)
      .attrs(attrs)
      .infer([op](const Metas& in, const Attrs& a) {
        std::vector<int> axes = reduce_axes(a, static_cast<int>(in[0].shape.size()));
        if ((op == ReduceOp::max || op == ReduceOp::min) && reduces_empty_axis(in[0].shape, axes))
          PJ_THROW(Value) << "zero-size array to reduction operation "
                          << (op == ReduceOp::max ? "maximum" : "minimum") << " which has no identity";
        return one(reduced_shape(in[0].shape, axes, a.b("keepdims")), reduce_out_dtype(op, in[0].dtype));
      })
      .kernel([op](const Tensors& in, const Attrs& a, const Tensors& out) {
        reduce_into(op, out[0], in[0], reduce_axes(a, in[0].ndim()), a.i("ddof", 0));
      });
}

void register_arg_reduce(const char* name, ReduceOp op) {
  // The flattened case reduces every axis; reduce_into keeps logical order for it.
  auto axes_of = [name](const Attrs& a, int ndim) {
    int axis = single_axis(a, name, ndim);
    std::vector<int> axes;
    if (axis >= 0 && ndim > 0) axes.push_back(axis);
    else if (axis < 0)
      for (int d = 0; d < ndim; ++d) axes.push_back(d);
    return axes;
  };
  OpRegistrar(name)
      .total()
      .inputs(1)
      .attrs({"axis", "keepdims"})
      .infer([name, axes_of](const Metas& in, const Attrs& a) {
        std::vector<int> axes = axes_of(a, static_cast<int>(in[0].shape.size()));
        if (reduces_empty_axis(in[0].shape, axes))
          PJ_THROW(Value) << "attempt to get " << name << " of an empty sequence";
        return one(reduced_shape(in[0].shape, axes, a.b("keepdims")), DType::Int64);
      })
      .kernel([op, axes_of](const Tensors& in, const Attrs& a, const Tensors& out) {
        reduce_into(op, out[0], in[0], axes_of(a, in[0].ndim()));
      });
}

struct Registrations {
  Registrations() {
    register_reduce("sum", ReduceOp::sum);
    register_reduce("mean", ReduceOp::mean);
    register_reduce("prod", ReduceOp::prod);
    register_reduce("max", ReduceOp::max);
    register_reduce("min", ReduceOp::min);
    register_reduce("all", ReduceOp::all);
    register_reduce("any", ReduceOp::any);
    register_reduce("var", ReduceOp::var);
    register_reduce("std", ReduceOp::std);
    register_reduce("logsumexp", ReduceOp::logsumexp);
    register_arg_reduce("argmax", ReduceOp::argmax);
    register_arg_reduce("argmin", ReduceOp::argmin);
  }
} registrations;

// The tensor cumsum scans: a 0-d tensor or the flattened one (axis None) as 1-D.
Tensor cumsum_input(const Tensor& t, int axis) {
  if (axis >= 0 && t.ndim() > 0) return t;
  Tensor c = t.contiguous();
  return c.as_strided({c.numel()}, {1}, c.offset());
}

PJ_REGISTER_OP("cumsum")
    .inputs(1)
    .attrs({"axis"})
    .infer([](const Metas& in, const Attrs& a) {
      int axis = single_axis(a, "cumsum", static_cast<int>(in[0].shape.size()));
      Shape s = axis < 0 ? Shape{shape_numel(in[0].shape)} : in[0].shape;
      return one(std::move(s), is_floating(in[0].dtype) ? in[0].dtype : DType::Int64);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      int axis = single_axis(a, "cumsum", in[0].ndim());
      Tensor x = cumsum_input(in[0], axis);
      Tensor y = out[0].ndim() == x.ndim() ? out[0] : out[0].as_strided({1}, {1}, out[0].offset());
      cumsum_into(y, x, axis < 0 ? 0 : std::min(axis, x.ndim() - 1));
    });

void register_softmax(const char* name, bool log) {
  OpRegistrar(name)
      .inputs(1)
      .attrs({"axis"})
      .infer([name](const Metas& in, const Attrs& a) {
        if (is_complex(in[0].dtype))
          PJ_THROW(Type) << name << ": the input must be a real tensor, but got " << dtype_name(in[0].dtype);
        normalize_axis(a.i("axis", -1), static_cast<int>(in[0].shape.size()));
        return one(in[0].shape, to_floating(in[0].dtype));
      })
      .kernel([log](const Tensors& in, const Attrs& a, const Tensors& out) {
        int axis = normalize_axis(a.i("axis", -1), in[0].ndim());
        softmax_into(out[0], as_dtype(in[0], out[0].dtype()), axis, log);
      });
}

struct SoftmaxRegistrations {
  SoftmaxRegistrations() {
    register_softmax("softmax", false);
    register_softmax("log_softmax", true);
  }
} softmax_registrations;

}  // namespace
}  // namespace pj
