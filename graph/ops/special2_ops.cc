// Ops of pijit/ops/special2.py: the Bessel functions J0, J1, Y0, Y1, K0, K1 (and e^x K),
// Hurwitz zeta, the regularized incomplete beta, Gamma and Poisson draws, Eig and the matrix
// logarithm (kernels/special2.h says how each computes).
#include "graph/ops/op_helpers.h"
#include "kernels/special2.h"

namespace pj {
namespace {

DType special_dtype(const char* who, DType t) {
  if (is_complex(t)) PJ_THROW(Type) << who << " does not support dtype " << dtype_name(t);
  return to_floating(t);
}

void register_unary(const char* name, Special2Unary op) {
  OpRegistrar(name)
      .total()
      .elementwise()
      .inputs(1)
      .infer([name](const Metas& in, const Attrs&) { return one(in[0].shape, special_dtype(name, in[0].dtype)); })
      .kernel([op](const Tensors& in, const Attrs&, const Tensors& out) {
        special2_unary_into(op, out[0], as_dtype(in[0], out[0].dtype()));
      });
}

struct Registrations {
  Registrations() {
#define PJ_X(n) register_unary(#n, Special2Unary::n);
    PJ_SPECIAL2_UNARY(PJ_X)
#undef PJ_X
  }
} registrations;

// Inputs of one floating dtype (MindSpore's Zeta and Betainc refuse mixed ones).
DType same_floating(const char* who, const Metas& in) {
  for (auto& m : in) {
    if (!is_floating(m.dtype))
      PJ_THROW(Type) << "For '" << who << "', the inputs must be float32 or float64, but got " << dtype_name(m.dtype);
    if (m.dtype != in[0].dtype)
      PJ_THROW(Type) << "For '" << who << "', the inputs must have one dtype, but got " << dtype_name(in[0].dtype)
                     << " and " << dtype_name(m.dtype);
  }
  return in[0].dtype;
}

PJ_REGISTER_OP("zeta")
    .total()
    .elementwise()
    .inputs(2)
    .infer([](const Metas& in, const Attrs&) {
      return one(broadcast_shapes(in[0].shape, in[1].shape), same_floating("Zeta", in));
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { zeta_into(out[0], in[0], in[1]); });

PJ_REGISTER_OP("betainc")
    .total()
    .elementwise()
    .inputs(3)
    .infer([](const Metas& in, const Attrs&) {
      return one(broadcast_shapes(broadcast_shapes(in[0].shape, in[1].shape), in[2].shape),
                 same_floating("Betainc", in));
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { betainc_into(out[0], in[0], in[1], in[2]); });

std::optional<uint64_t> seed_of(const Attrs& a) {
  if (a.is_none("seed")) return std::nullopt;
  return static_cast<uint64_t>(a.i("seed"));
}

Shape prefixed(const Attrs& a, const Shape& s) {
  Shape r(a.ints("shape").begin(), a.ints("shape").end());
  for (auto d : r)
    if (d < 0) PJ_THROW(Value) << "random draws: the shape must hold non-negative ints";
  r.insert(r.end(), s.begin(), s.end());
  return r;
}

// random_gamma(alpha; shape, seed): Gamma(alpha, 1) draws of shape + alpha's shape.
PJ_REGISTER_OP("random_gamma")
    .impure()
    .inputs(1)
    .attrs({"shape", "seed"})
    .infer([](const Metas& in, const Attrs& a) {
      if (!is_floating(in[0].dtype))
        PJ_THROW(Type) << "For 'random_gamma', the 'alpha' must be a floating Tensor, but got " << dtype_name(in[0].dtype);
      return one(prefixed(a, in[0].shape), in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs& a) {
      Tensor out = Tensor::empty(prefixed(a, in[0].shape()), in[0].dtype());
      random_gamma_into(out, in[0].contiguous(), seed_of(a));
      return Tensors{out};
    });

// random_poisson(rate; shape, seed, dtype): Poisson(rate) draws of shape + rate's shape.
PJ_REGISTER_OP("random_poisson")
    .impure()
    .inputs(1)
    .attrs({"shape", "seed", "dtype"})
    .infer([](const Metas& in, const Attrs& a) {
      if (!is_floating(in[0].dtype) && !is_integral(in[0].dtype, false))
        PJ_THROW(Type) << "For 'random_poisson', the 'rate' must be a real Tensor, but got " << dtype_name(in[0].dtype);
      return one(prefixed(a, in[0].shape), a.dtype("dtype"));
    })
    .run([](const Tensors& in, const Attrs& a) {
      DType t = a.dtype("dtype");
      Tensor out = Tensor::empty(prefixed(a, in[0].shape()), is_compute_dtype(t) ? t : DType::Float32);
      random_poisson_into(out, in[0].contiguous(), seed_of(a));
      return Tensors{out.dtype() == t ? out : cast(out, t)};
    });

DType complex_of(DType t) {
  return (t == DType::Float32 || t == DType::Complex64 || t == DType::Float16 || t == DType::BFloat16)
             ? DType::Complex64 : DType::Complex128;
}

void require_square_batch(const char* who, const TensorMeta& m) {
  if (m.shape.size() < 2 || m.shape.back() != m.shape[m.shape.size() - 2])
    PJ_THROW(Value) << "For '" << who << "', the input must be a batch of square matrices [..., n, n], but got shape "
                    << shape_str(m.shape);
}

PJ_REGISTER_OP("eig")
    .inputs(1)
    .attrs({"compute_v"})
    .raises_on_values()
    .infer([](const Metas& in, const Attrs&) {
      require_square_batch("Eig", in[0]);
      if (!is_floating(in[0].dtype) && !is_complex(in[0].dtype))
        PJ_THROW(Type) << "For 'Eig', the input must be float or complex, but got " << dtype_name(in[0].dtype);
      const DType c = complex_of(in[0].dtype);
      Shape w(in[0].shape.begin(), in[0].shape.end() - 1);
      return Metas{TensorMeta{w, c}, TensorMeta{in[0].shape, c}};
    })
    .run([](const Tensors& in, const Attrs& a) {
      Tensor x = in[0];
      if (x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16) x = cast(x, DType::Float32);
      auto r = eig(x, a.b("compute_v", true));
      return Tensors{r.first, r.second};
    });

PJ_REGISTER_OP("matrix_log")
    .inputs(1)
    .total()
    .infer([](const Metas& in, const Attrs&) {
      require_square_batch("MatrixLogarithm", in[0]);
      if (!is_complex(in[0].dtype))
        PJ_THROW(Type) << "For 'MatrixLogarithm', the input must be complex64 or complex128, but got "
                       << dtype_name(in[0].dtype);
      return one(in[0].shape, in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs&) { return Tensors{matrix_log(in[0])}; });

}  // namespace
}  // namespace pj
