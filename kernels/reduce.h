// Reductions (sum, mean, prod, max, min, all, any, var, std, logsumexp, argmax, argmin) and cumsum.
//
// One strided engine serves every reduction. The input's dims are split into kept and reduced
// ones, size-1 dims dropped, each group sorted by stride and adjacent linear dims merged. Then:
//   - inner mode, when the innermost reduced dim has the smaller stride (e.g. reducing the last,
//     contiguous axis) and each output reduces at least 32 elements: each output is a run over
//     the reduced space, accumulated in 16 independent lanes so the loop vectorises without
//     reassociating one serial sum;
//   - outer mode otherwise (e.g. reducing axis 0 of a row-major matrix): a tile of up to 16384
//     outputs is accumulated row by row into a buffer, never a per-element strided gather.
// Long reductions are cut into blocks whose partial results are merged in order; block sizes
// depend only on the geometry, so work spreads over threads while the result does not depend on
// the thread count. Floating sums accumulate in double, integer ones in int64 with numpy's
// wrap-around. var/std and logsumexp take two passes (mean, resp. max, first); so do argmax and
// argmin (the extreme value, then its first index), except on int64, which is not exact in
// double and tracks (value, index) pairs in one pass.
//
// Kernels take inputs in their own dtype (sum reads int32 and writes int64 directly); graph/ops
// decides result dtypes (reduce_out_dtype) and checks user errors (bad axes, empty max).
#pragma once

#include <functional>
#include <vector>

#include "kernels/tensor.h"

namespace pj {

#define PJ_REDUCE_OPS(X) \
  X(sum)                 \
  X(mean)                \
  X(prod)                \
  X(max)                 \
  X(min)                 \
  X(all)                 \
  X(any)                 \
  X(var)                 \
  X(std)                 \
  X(logsumexp)           \
  X(argmax)              \
  X(argmin)

enum class ReduceOp {
#define PJ_X(name) name,
  PJ_REDUCE_OPS(PJ_X)
#undef PJ_X
};

const char* reduce_op_name(ReduceOp op);
// numpy's result dtype of `op` on a tensor of dtype `in`.
DType reduce_out_dtype(ReduceOp op, DType in);

// out = op(in) over `axes` (normalised, unique, any order). `out` has in's shape with the reduced
// dims dropped or kept as 1 (only the order of elements matters) and dtype reduce_out_dtype.
// var/std divide by max(n - ddof, 0). argmax/argmin need at most one reduced dim of size > 1 in
// logical order, or a contiguous input. logsumexp/var/std accept floating inputs only.
void reduce_into(ReduceOp op, const Tensor& out, const Tensor& in, const std::vector<int>& axes,
                 int64_t ddof = 0);

// A float32 value of shape [rows, n] computed block by block instead of read from memory (a fused
// elementwise kernel feeding its reduction): produce(row, r0, r1, buf) writes elements [r0, r1)
// of `row` to buf (at most 2048 of them at a time, so they are reduced while in L1).
using ProduceRow = std::function<void(int64_t row, int64_t r0, int64_t r1, float* buf)>;
// out[row] = op(value[row, :]) for sum, mean, max and min with reduce_into's operations in
// reduce_into's order on the materialized value, so the results are bit-equal. Returns false
// (having done nothing) where reduce_into would not reduce whole rows in lanes (n < 32 with several
// rows, n <= 1, another op): the caller materializes the value and calls reduce_into instead.
bool reduce_produced_rows(ReduceOp op, float* out, int64_t rows, int64_t n, const ProduceRow& produce);
// Whether reduce_into reduces a contiguous [rows, n] value row by row in lanes (inner mode): the
// geometries reduce_produced_rows takes (the fusion pass asks before fusing a reduction).
bool reduces_by_rows(int64_t rows, int64_t n);

// Inclusive prefix sum along `axis` (normalised); out dtype: int64 for bool/ints, else in's.
void cumsum_into(const Tensor& out, const Tensor& in, int axis);

}  // namespace pj
