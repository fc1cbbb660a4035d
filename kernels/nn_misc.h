// Forward kernels of three small layers: dropout, embedding lookup and dense (linear).
//
// dropout draws one float32 uniform u[i] per element of x (row-major logical order) from
// kernels/random.h's Philox stream, exactly the values rand(x.shape, Float32, seed) would give, and
// keeps element i iff u[i] < 1 - p. The mask therefore depends only on (seed or global state,
// numel, p), not on the dtype or the thread count.
//
// dense is x @ weight.T + bias. float32 runs one oneDNN matmul primitive per geometry (a DensePlan,
// cached by (M, K, N, bias)) with the bias fused and the weights in the layout the primitive prefers
// (format_tag::any: blocked for its brgemm kernels), reordered once per weight version
// (kernels/weight_cache.h); eager calls and compiled graphs run the same plan, so their results
// are the same bits. float64 uses kernels/matmul.h's loop.
//
// Shapes, dtypes and attribute ranges are graph/ops/nn_misc_ops.cc's business; the kernels raise
// only the data-dependent error (an embedding index out of range).
#pragma once

#include <memory>

#include <cstdint>
#include <optional>

#include "kernels/tensor.h"

namespace pj {

// y = x * mask / (1 - p) and mask (Bool), both of x's shape. Not training, or p == 0: y = x and
// an all-true mask, and no random numbers are drawn. 0 <= p < 1. `seed` nullopt uses and advances
// the global generator (set_seed makes it reproducible); a seed uses that key from counter 0.
void dropout_into(const Tensor& y, const Tensor& mask, const Tensor& x, double p, bool training,
                  std::optional<uint64_t> seed);

// out[i..., :] = weight[indices[i...], :]. weight [V, D] floating; indices Int32/Int64 of any
// shape; out indices.shape + [D]. An index outside [0, V) raises IndexError naming it and V.
void embedding_into(const Tensor& out, const Tensor& weight, const Tensor& indices);

// out[..., o] = sum_k x[..., k] * weight[o, k] + bias[o]. x [..., in], weight [out, in], bias [out]
// or undefined, out [..., out]; one floating dtype for all.
void dense_into(const Tensor& out, const Tensor& x, const Tensor& weight, const Tensor& bias);

// The float32 plan for out [M, N] = x [M, K] @ weight [N, K].T (+ bias); null when oneDNN refuses
// the geometry. Graphs prepare it once per node (graph/ops/nn_misc_ops.cc).
struct DensePlan;
std::shared_ptr<const DensePlan> dense_plan(int64_t M, int64_t K, int64_t N, bool bias);
// dense_into's float32 path through `plan`: shapes must be the plan's, out contiguous. A graph node
// passes its own `memo` of the reordered weights (kernels/weight_cache.h).
class WeightMemo;
// A graph node's oneDNN memories for x, out and bias, made once and re-pointed at each launch's
// buffers (creating three memories was most of a small dense's launch). One launch at a time uses
// them; a concurrent launch of the same plan makes its own.
struct DenseBinding;
std::shared_ptr<DenseBinding> make_dense_binding();
void dense_run(const DensePlan& plan, const Tensor& out, const Tensor& x, const Tensor& weight, const Tensor& bias,
               WeightMemo* memo = nullptr, DenseBinding* binding = nullptr);

}  // namespace pj
