// fused_elementwise: a group of float32 elementwise ops made one node by the fusion pass
// (graph/passes.cc); its `program` attribute is the group's code (kernels/fused.h). Inputs are
// broadcast to one shape; every output has it.
#include "graph/ops/op_helpers.h"
#include "kernels/fused.h"

namespace pj {
namespace {

Metas fused_infer(const Metas& in, const Attrs& a) {
  FusedProgram p = FusedProgram::parse(a.s("program"));
  if (static_cast<int>(in.size()) != p.num_inputs)
    PJ_THROW(Type) << "fused_elementwise takes " << p.num_inputs << " inputs, got " << in.size();
  Shape s;
  for (const TensorMeta& m : in) {
    if (m.dtype != DType::Float32) PJ_THROW(Type) << "fused_elementwise computes in Float32, got " << dtype_name(m.dtype);
    s = broadcast_shapes(s, m.shape);
  }
  return Metas(p.outputs.size(), TensorMeta{s, DType::Float32});
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

}  // namespace
}  // namespace pj
