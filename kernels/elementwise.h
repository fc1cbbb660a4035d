// Elementwise kernels. Inputs arrive already cast to the op's compute dtype (graph/ops decides
// promotion); outputs are preallocated with the broadcast shape. float32 transcendental and
// activation functions go through oneDNN eltwise primitives (cached by descriptor); the rest are
// vectorisable loops over kernels/loops.h.
#pragma once

#include "kernels/tensor.h"

namespace pj {

// name, kind: F = result is floating (ints are computed in float32), S = same dtype as input.
#define PJ_UNARY_OPS(X) \
  X(neg, S)             \
  X(abs, S)             \
  X(sign, S)            \
  X(square, S)          \
  X(relu, S)            \
  X(floor, S)           \
  X(ceil, S)            \
  X(round, S)           \
  X(exp, F)             \
  X(log, F)             \
  X(log1p, F)           \
  X(expm1, F)           \
  X(sqrt, F)            \
  X(rsqrt, F)           \
  X(reciprocal, F)      \
  X(sin, F)             \
  X(cos, F)             \
  X(tan, F)             \
  X(tanh, F)            \
  X(sigmoid, F)         \
  X(gelu, F)            \
  X(gelu_tanh, F)       \
  X(silu, F)            \
  X(softplus, F)        \
  X(erf, F)

enum class UnaryOp {
#define PJ_X(name, kind) name,
  PJ_UNARY_OPS(PJ_X)
#undef PJ_X
};

// name, kind: A = arithmetic (promoted dtype), C = comparison (bool out), L = logical (bool out).
// relu_grad(g, x) = x > 0 ? g : 0, ReLU's gradient (graph/grads): one pass and no boolean mask
// where where(gt(x, 0), g, 0) took two, and fusable (kernels/fused.h) with what reads it.
#define PJ_BINARY_OPS(X) \
  X(add, A)              \
  X(sub, A)              \
  X(mul, A)              \
  X(div, A)              \
  X(floor_div, A)        \
  X(mod, A)              \
  X(pow, A)              \
  X(maximum, A)          \
  X(minimum, A)          \
  X(eq, C)               \
  X(ne, C)               \
  X(lt, C)               \
  X(le, C)               \
  X(gt, C)               \
  X(ge, C)               \
  X(logical_and, L)      \
  X(logical_or, L)       \
  X(logical_xor, L)      \
  X(relu_grad, A)

enum class BinaryOp {
#define PJ_X(name, kind) name,
  PJ_BINARY_OPS(PJ_X)
#undef PJ_X
};

const char* unary_op_name(UnaryOp op);
const char* binary_op_name(BinaryOp op);

// out = real part / imaginary part / magnitude of complex `in` (out has its real dtype).
enum class ComplexPart { real, imag, abs };
void complex_part_into(ComplexPart part, const Tensor& out, const Tensor& in);

// out = op(in); in has the compute dtype (== out dtype).
void unary_into(UnaryOp op, const Tensor& out, const Tensor& in);
// The TypeError the kernel raises for a dtype it refuses (several ops refuse Bool), thrown from
// shape inference too: an op that would raise is never recorded, so no graph can drop the error.
void check_unary_dtype(UnaryOp op, DType computed_in);
void check_binary_dtype(BinaryOp op, DType computed_in);
// out = op(a, b); a and b share the compute dtype; out is that dtype or bool (C/L ops).
void binary_into(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b);
// out = clamp(in, lo, hi) with optional bounds (NaN bound = absent).
void clamp_into(const Tensor& out, const Tensor& in, double lo, double hi, bool has_lo, bool has_hi);
// out = cond ? a : b (cond bool, a/b the out dtype).
void where_into(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
// Raises ValueError when an integer `exponent` tensor has a negative element (numpy's rule).
void check_integer_pow(const Tensor& exponent);

}  // namespace pj
