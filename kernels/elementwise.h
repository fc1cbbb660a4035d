// Elementwise kernels. Inputs arrive already cast to the op's compute dtype (graph/ops decides
// promotion); outputs are preallocated with the broadcast shape. float32 transcendental and
// activation functions go through oneDNN eltwise primitives (cached by descriptor); the rest are
// vectorisable loops over kernels/loops.h.
#pragma once

#include "kernels/tensor.h"

namespace pj {

// name, kind: F = result is floating (ints are computed in float32), S = same dtype as input,
// I = integers and bool only, same dtype, B = bool result. I and B ops run on every storage dtype
// as it is (numpy's bit patterns: uint64 is not widened to int64), the others in compute dtypes.
// Fusion (kernels/fused.h) goes by name: an op its PJ_FUSED_OPS table lacks is simply not fused.
// trigamma is internal: digamma's gradient.
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
  X(erf, F)             \
  X(asin, F)            \
  X(acos, F)            \
  X(atan, F)            \
  X(asinh, F)           \
  X(acosh, F)           \
  X(atanh, F)           \
  X(lgamma, F)          \
  X(digamma, F)         \
  X(trigamma, F)        \
  X(erfinv, F)          \
  X(bessel_i0, F)       \
  X(bessel_i0e, F)      \
  X(bessel_i1, F)       \
  X(bessel_i1e, F)      \
  X(bitwise_not, I)     \
  X(signbit, B)

enum class UnaryOp {
#define PJ_X(name, kind) name,
  PJ_UNARY_OPS(PJ_X)
#undef PJ_X
};

// name, kind: A = arithmetic (promoted dtype), C = comparison (bool out), L = logical (bool out),
// F = floating (the promoted dtype, ints and bool computed in float32), I = integers (and bool for
// and/or/xor) on every storage dtype as it is, numpy's results (shifts past the width give 0, or
// -1 for a negative number shifted right; gcd/lcm are non-negative).
// relu_grad(g, x) = x > 0 ? g : 0, ReLU's gradient (graph/grads): one pass and no boolean mask
// where where(gt(x, 0), g, 0) took two, and fusable (kernels/fused.h) with what reads it.
#define PJ_BINARY_OPS(X)     \
  X(add, A)                  \
  X(sub, A)                  \
  X(mul, A)                  \
  X(div, A)                  \
  X(floor_div, A)            \
  X(mod, A)                  \
  X(pow, A)                  \
  X(maximum, A)              \
  X(minimum, A)              \
  X(eq, C)                   \
  X(ne, C)                   \
  X(lt, C)                   \
  X(le, C)                   \
  X(gt, C)                   \
  X(ge, C)                   \
  X(logical_and, L)          \
  X(logical_or, L)           \
  X(logical_xor, L)          \
  X(relu_grad, A)            \
  X(atan2, F)                \
  X(hypot, F)                \
  X(nextafter, F)            \
  X(igamma, F)               \
  X(igammac, F)              \
  X(bitwise_and, I)          \
  X(bitwise_or, I)           \
  X(bitwise_xor, I)          \
  X(bitwise_left_shift, I)   \
  X(bitwise_right_shift, I)  \
  X(gcd, I)                  \
  X(lcm, I)

enum class BinaryOp {
#define PJ_X(name, kind) name,
  PJ_BINARY_OPS(PJ_X)
#undef PJ_X
};

const char* unary_op_name(UnaryOp op);
const char* binary_op_name(BinaryOp op);
// The kind letter of the tables above.
char unary_op_kind(UnaryOp op);
char binary_op_kind(BinaryOp op);

// out = real part / imaginary part / magnitude of complex `in` (out has its real dtype).
enum class ComplexPart { real, imag, abs };
void complex_part_into(ComplexPart part, const Tensor& out, const Tensor& in);

// out = op(in); in has the compute dtype (== out dtype); for I and B ops any storage dtype.
void unary_into(UnaryOp op, const Tensor& out, const Tensor& in);
// The TypeError the kernel raises for a dtype it refuses (several ops refuse Bool), thrown from
// shape inference too: an op that would raise is never recorded, so no graph can drop the error.
void check_unary_dtype(UnaryOp op, DType computed_in);
void check_binary_dtype(BinaryOp op, DType computed_in);
// out = op(a, b); a and b share the compute dtype (any storage dtype for I ops); out is that
// dtype or bool (C/L ops).
void binary_into(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b);
// Eager calls' common case (graph/op.h OpDef::eager): a float32 op (kinds S/F; A/F) on contiguous
// float32 input(s) of one shape, run as unary_into / binary_into run it (the one-op fused kernel)
// into a new tensor *out. false: not that case, nothing done.
bool unary_fast(UnaryOp op, const Tensor& in, Tensor* out);
bool binary_fast(BinaryOp op, const Tensor& a, const Tensor& b, Tensor* out);
// out = clamp(in, lo, hi) with optional bounds (NaN bound = absent).
void clamp_into(const Tensor& out, const Tensor& in, double lo, double hi, bool has_lo, bool has_hi);
// out = cond ? a : b (cond bool, a/b the out dtype).
void where_into(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
// out (uint8) = the number of set bits of each element of the integer tensor `in` (its own width).
void population_count_into(const Tensor& out, const Tensor& in);
// Raises ValueError when an integer `exponent` tensor has a negative element (numpy's rule).
void check_integer_pow(const Tensor& exponent);

}  // namespace pj
