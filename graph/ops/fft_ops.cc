// The Fourier transform ops behind pijit/ops/fft.py (kernels/fft.h):
//   fft_c2c(x complex)  dims, n, out, inverse, scale
//   fft_r2c(x real)     dims, n, out, inverse, scale, adjoint -> complex; the last of dims is real
//   fft_c2r(x complex)  dims, n, out, inverse, scale, adjoint -> real; the last of dims is real
// `dims` are the transformed axes (in order), `n` the transform length of each (the input along it
// is zero-padded or truncated to n), `out` the length each keeps in the output. `scale` is the
// whole normalisation (the Python layer turns MindSpore's norm names into it), so an op and its
// adjoint (graph/grads/fft_grads.cc) share it. Inputs of other dtypes are cast by the Python layer,
// as MindSpore promotes them.
#include "graph/ops/op_helpers.h"
#include "kernels/fft.h"

namespace pj {
namespace {

std::vector<FftAxis> fft_axes(const char* op, const Shape& shape, const Attrs& a) {
  const IntList& dims = a.ints("dims");
  const IntList& n = a.ints("n");
  const IntList& out = a.ints("out");
  if (dims.empty() || dims.size() != n.size() || dims.size() != out.size())
    PJ_THROW(Value) << op << ": dims, n and out must have one entry per transformed axis";
  std::vector<int> axes = normalize_axes(dims, static_cast<int>(shape.size()));
  std::vector<FftAxis> r;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (n[i] < 1) PJ_THROW(Value) << op << ": invalid number of data points (" << n[i] << ") specified";
    // Plans and work buffers are sized by n; past 2^31 points a transform would not fit anyway.
    if (n[i] > (int64_t(1) << 31)) PJ_THROW(Value) << op << ": transform length " << n[i] << " is too large";
    if (out[i] < 0) PJ_THROW(Value) << op << ": output length must be non-negative, got " << out[i];
    r.push_back(FftAxis{axes[i], n[i], out[i]});
  }
  return r;
}

Shape out_shape(Shape s, const std::vector<FftAxis>& axes) {
  for (const FftAxis& x : axes) s[x.axis] = x.out;
  return s;
}

DType complex_of(DType t) { return t == DType::Float64 ? DType::Complex128 : DType::Complex64; }

void require_complex(const char* op, DType t) {
  if (!is_complex(t))
    PJ_THROW(Type) << op << ": input must be complex64 or complex128, but got " << dtype_name(t);
}

PJ_REGISTER_OP("fft_c2c")
    .total()
    .inputs(1)
    .attrs({"dims", "n", "out", "inverse", "scale"})
    .infer([](const Metas& in, const Attrs& a) {
      require_complex("fft_c2c", in[0].dtype);
      return one(out_shape(in[0].shape, fft_axes("fft_c2c", in[0].shape, a)), in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      fft_c2c(in[0], out[0], fft_axes("fft_c2c", in[0].shape(), a), a.b("inverse"), a.f("scale"));
    });

PJ_REGISTER_OP("fft_r2c")
    .total()
    .inputs(1)
    .attrs({"dims", "n", "out", "inverse", "scale", "adjoint"})
    .infer([](const Metas& in, const Attrs& a) {
      require_floating("fft_r2c", "input", in[0].dtype);
      return one(out_shape(in[0].shape, fft_axes("fft_r2c", in[0].shape, a)), complex_of(in[0].dtype));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      fft_r2c(in[0], out[0], fft_axes("fft_r2c", in[0].shape(), a), a.b("inverse"), a.f("scale"),
              a.b("adjoint"));
    });

PJ_REGISTER_OP("fft_c2r")
    .total()
    .inputs(1)
    .attrs({"dims", "n", "out", "inverse", "scale", "adjoint"})
    .infer([](const Metas& in, const Attrs& a) {
      require_complex("fft_c2r", in[0].dtype);
      return one(out_shape(in[0].shape, fft_axes("fft_c2r", in[0].shape, a)), real_dtype(in[0].dtype));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      fft_c2r(in[0], out[0], fft_axes("fft_c2r", in[0].shape(), a), a.b("inverse"), a.f("scale"),
              a.b("adjoint"));
    });

}  // namespace
}  // namespace pj
