// Complex-number ops (MindSpore's ops.real, imag, conj, complex, angle; abs of a complex tensor is the
// abs op's, graph/ops/elementwise_ops.cc).
// On real inputs real/conj are copies and imag is zeros, as in numpy and MindSpore.
#include <cmath>

#include "graph/ops/op_helpers.h"
#include "kernels/elementwise.h"
#include "kernels/loops.h"

namespace pj {
namespace {

PJ_REGISTER_OP("real")
    .storage_dtypes()
    .total()
    .inputs(1)
    .infer([](const Metas& in, const Attrs&) { return one(in[0].shape, real_dtype(in[0].dtype)); })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      if (!is_complex(in[0].dtype())) return copy_into(out[0], in[0]);
      complex_part_into(ComplexPart::real, out[0], in[0]);
    });

PJ_REGISTER_OP("imag")
    .storage_dtypes()
    .total()
    .inputs(1)
    .infer([](const Metas& in, const Attrs&) { return one(in[0].shape, real_dtype(in[0].dtype)); })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      if (!is_complex(in[0].dtype())) return fill(out[0], 0.0);
      complex_part_into(ComplexPart::imag, out[0], in[0]);
    });

PJ_REGISTER_OP("conj")
    .storage_dtypes()
    .total()
    .inputs(1)
    .infer([](const Metas& in, const Attrs&) { return one(in[0].shape, in[0].dtype); })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      if (in[0].dtype() == DType::Complex64)
        unary_kernel<complex64, complex64>(out[0], in[0], [](complex64 c) { return std::conj(c); });
      else if (in[0].dtype() == DType::Complex128)
        unary_kernel<complex128, complex128>(out[0], in[0], [](complex128 c) { return std::conj(c); });
      else
        copy_into(out[0], in[0]);
    });

// angle(z): the argument atan2(imag, real) in the real dtype; of a real tensor, pi where it is
// negative and 0 elsewhere (NaN stays NaN), as torch.angle (its gradient rule is
// graph/grads/complex_grads.cc: 0 at z = 0, where atan2's own would be NaN).
PJ_REGISTER_OP("angle")
    .total()
    .inputs(1)
    .infer([](const Metas& in, const Attrs&) {
      if (!is_complex(in[0].dtype)) require_floating("angle", "input", in[0].dtype);
      return one(in[0].shape, real_dtype(in[0].dtype));
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      switch (in[0].dtype()) {
        case DType::Complex64:
          return unary_kernel<float, complex64>(out[0], in[0], [](complex64 c) { return std::arg(c); });
        case DType::Complex128:
          return unary_kernel<double, complex128>(out[0], in[0], [](complex128 c) { return std::arg(c); });
        case DType::Float32:
          return unary_kernel<float, float>(out[0], in[0], [](float x) { return x < 0 ? float(M_PI) : x == x ? 0.f : x; });
        case DType::Float64:
          return unary_kernel<double, double>(out[0], in[0], [](double x) { return x < 0 ? M_PI : x == x ? 0.0 : x; });
        default:
          PJ_THROW(Type) << "angle does not support dtype " << dtype_name(in[0].dtype());
      }
    });

// complex(real, imag): float32 parts make complex64, float64 parts complex128 (MindSpore's
// ops.Complex wants both parts of one float dtype).
PJ_REGISTER_OP("complex")
    .total()
    .inputs(2)
    .infer([](const Metas& in, const Attrs&) {
      if (in[0].dtype != in[1].dtype || (in[0].dtype != DType::Float32 && in[0].dtype != DType::Float64))
        PJ_THROW(Type) << "complex: real and imag must both be float32 or both float64, got "
                       << dtype_name(in[0].dtype) << " and " << dtype_name(in[1].dtype);
      return one(broadcast_shapes(in[0].shape, in[1].shape),
                 in[0].dtype == DType::Float32 ? DType::Complex64 : DType::Complex128);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      if (out[0].dtype() == DType::Complex64)
        binary_kernel<complex64, float, float>(out[0], in[0], in[1], [](float r, float i) { return complex64(r, i); });
      else
        binary_kernel<complex128, double, double>(out[0], in[0], in[1],
                                                  [](double r, double i) { return complex128(r, i); });
    });

}  // namespace
}  // namespace pj
