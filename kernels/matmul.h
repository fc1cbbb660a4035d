// Batched matrix product with numpy's broadcasting of batch dims.
//
// float32 goes through oneDNN's matmul primitive, cached by the operands' dims and strides.
// Operands that are row-major or transposed (column-major) in their last two dims are passed as
// they are, with strides in the memory descriptor; anything else is made contiguous first. Batch
// dims of size 1 are broadcast by oneDNN itself. Other dtypes (and float32 should oneDNN refuse a
// geometry) use a blocked i-k-j loop: each output row is an axpy over rows of b, so the inner loop
// is contiguous and vectorises; it runs in parallel over (batch, row block). Integer products wrap
// like numpy's; bool gives the logical or-of-ands, as numpy does.
#pragma once

#include <memory>

#include "kernels/tensor.h"

namespace pj {

// Below this many multiply-adds float32 matmul runs on pijit's loop instead of oneDNN.
constexpr int64_t kTinyMatmulMacs = 4096;

// out[..., n, m] = a[..., n, k] @ b[..., k, m]. All three have ndim >= 2 and one dtype; the batch
// dims of a and b broadcast to out's. 1-D operands and shape errors are graph/ops' business.
void matmul_into(const Tensor& out, const Tensor& a, const Tensor& b);

// A graph node's matmul (graph/ops/matmul_ops.cc prepares one per node): the oneDNN primitive and
// memories for the operands' layouts at the last launch are kept, so a launch with the same
// layouts only re-points three buffers (no descriptor, key or cache lookup); other layouts, dtypes
// and tiny products take matmul_into. One launch at a time uses the kept state; a concurrent one
// takes matmul_into. Same primitive as matmul_into's for those layouts: the same bits.
struct MatmulState;
std::shared_ptr<MatmulState> make_matmul_state();
void matmul_prepared_into(MatmulState& state, const Tensor& out, const Tensor& a, const Tensor& b);

// The loop path for any dtype, exposed so tests can check it against oneDNN's float32 path.
void matmul_loop_into(const Tensor& out, const Tensor& a, const Tensor& b);

}  // namespace pj
