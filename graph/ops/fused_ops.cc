// fused_elementwise: a group of float32 elementwise ops made one node by the fusion pass
// (graph/passes.cc); its `program` attribute is the group's code (kernels/fused.h). Inputs are
// broadcast to one shape; every output has it.
//
// fused_reduce: the same with a trailing reduction: the program's last output is reduced over the
// broadcast shape's dims from `dim` on by `reduce` (sum, mean, max, min) as the loop computes it;
// the node's outputs are the other program outputs, then the reduced value (the dims dropped, or
// kept as 1 with `keepdims`).
#include "graph/ops/op_helpers.h"
#include "kernels/fused.h"

namespace pj {
namespace {

// The broadcast shape of a fused node's inputs, checked against its program.
Shape fused_shape(const Metas& in, const FusedProgram& p) {
  if (static_cast<int>(in.size()) != p.num_inputs)
    PJ_THROW(Type) << "fused_elementwise takes " << p.num_inputs << " inputs, got " << in.size();
  Shape s;
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k].dtype != p.input_dtype(static_cast<int>(k)))
      PJ_THROW(Type) << "fused program input r" << k << " is " << dtype_name(p.input_dtype(static_cast<int>(k)))
                     << ", got " << dtype_name(in[k].dtype);
    s = broadcast_shapes(s, in[k].shape);
  }
  return s;
}

Metas fused_infer(const Metas& in, const Attrs& a) {
  FusedProgram p = FusedProgram::parse(a.s("program"));
  return Metas(p.outputs.size(), TensorMeta{fused_shape(in, p), DType::Float32});
}

ReduceOp fused_reduce_op(const Attrs& a) {
  const std::string& r = a.s("reduce");
  if (r == "sum") return ReduceOp::sum;
  if (r == "mean") return ReduceOp::mean;
  if (r == "max") return ReduceOp::max;
  if (r == "min") return ReduceOp::min;
  PJ_THROW(Value) << "fused_reduce: 'reduce' must be sum, mean, max or min, got '" << r << "'";
}

Metas fused_reduce_infer(const Metas& in, const Attrs& a) {
  FusedProgram p = FusedProgram::parse(a.s("program"));
  Shape s = fused_shape(in, p);
  fused_reduce_op(a);
  if (p.outputs.empty()) PJ_THROW(Value) << "fused_reduce: the program has no output to reduce";
  const int64_t dim = a.i("dim");
  if (dim < 0 || dim > static_cast<int64_t>(s.size()))
    PJ_THROW(Value) << "fused_reduce: 'dim' " << dim << " out of range for " << s.size() << " dims";
  Shape r(s.begin(), s.begin() + dim);
  if (a.b("keepdims")) r.resize(s.size(), 1);
  Metas out(p.outputs.size() - 1, TensorMeta{s, DType::Float32});
  out.push_back(TensorMeta{r, DType::Float32});
  return out;
}

void run_fused_reduce(const FusedKernel& k, ReduceOp op, int dim, const Tensors& in, const Tensors& out) {
  Tensors full(out.begin(), out.end() - 1);
  k.run_reduce(in, full, op, dim, out.back());
}

PJ_REGISTER_OP("fused_elementwise")
    .total()
    .elementwise()
    .variadic(1)
    .attrs({"program"})
    .infer(fused_infer)
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) { fused_kernel(a.s("program"))->run(in, out); })
    .prepare([](const Metas&, const Attrs& a, const Metas&) -> PreparedFn {
      std::shared_ptr<const FusedKernel> k = fused_kernel(a.s("program"));
      return [k](const Tensors& in, const Tensors& out) { k->run(in, out); };
    });

PJ_REGISTER_OP("fused_reduce")
    .total()
    .variadic(1)
    .attrs({"program", "reduce", "dim", "keepdims"})
    .infer(fused_reduce_infer)
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      run_fused_reduce(*fused_kernel(a.s("program")), fused_reduce_op(a), static_cast<int>(a.i("dim")), in, out);
    })
    .prepare([](const Metas&, const Attrs& a, const Metas&) -> PreparedFn {
      std::shared_ptr<const FusedKernel> k = fused_kernel(a.s("program"));
      const ReduceOp op = fused_reduce_op(a);
      const int dim = static_cast<int>(a.i("dim"));
      return [k, op, dim](const Tensors& in, const Tensors& out) { run_fused_reduce(*k, op, dim, in, out); };
    });

}  // namespace
}  // namespace pj
