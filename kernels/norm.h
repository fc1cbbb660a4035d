// Forward kernels of batch, layer and group normalisation.
//
// Every kernel reads x as a contiguous block (a non-contiguous x is copied first), computes
// statistics in double, two-pass (mean, then squared deviations), over a fixed partition of the
// data (so results do not depend on the thread count), and normalises in x's dtype as
// y = (x - mean) * (invstd * gamma) + beta, which keeps the cancellation in x - mean small.
// layer_norm and group_norm rows of up to 64K elements are normalised one at a time while they
// sit in cache (one read of x from memory instead of three).
//
// float32 layer_norm goes through oneDNN's layer_normalization_forward (training kind, for the
// mean and variance), 2x faster than the loop. batch_norm does not use oneDNN: 2.6 has no jit
// implementation for plain layouts, and measured on [32, 64, 56, 56] its ncsp_bnorm takes 13 ms
// (training) / 9 ms (inference) against the loop's 4.4 / 2.2 ms, while 3-D / 2-D inputs fall to
// bnorm_ref (40x slower). oneDNN 2.6 has no group normalisation; float64 always loops.
// Statistics are biased (divide by the element count); rstd/invstd = 1 / sqrt(var + eps).
//
// Shapes and dtypes are checked by graph/ops/norm_ops.cc; kernels only PJ_CHECK invariants.
#pragma once

#include "kernels/tensor.h"

namespace pj {

// Which implementation a float32 layer_norm takes (tests compare the two; float64 always loops).
enum class NormPath { Auto, Loop };

// batch_norm over x [N, C, *] (statistics per channel over N and the trailing dims).
// y: x's shape and dtype; save_mean, save_invstd: [C], x's dtype. gamma, beta, running_mean,
// running_var: [C], any floating dtype, any strides.
// training: normalise with the batch mean and biased batch variance, then update the running
//   statistics IN PLACE with MindSpore's momentum convention (PyTorch's momentum is 1 - this):
//     running_mean = momentum * running_mean + (1 - momentum) * batch_mean
//     running_var  = momentum * running_var  + (1 - momentum) * batch_var * M / (M - 1)
//   where M = N * prod(x.shape[2:]) (the unbiased variance, as PyTorch and MindSpore do);
//   save_mean = batch_mean, save_invstd = 1 / sqrt(biased batch_var + eps). Needs M > 1.
// inference: normalise with the running statistics, which stay untouched; save_mean =
//   running_mean and save_invstd = 1 / sqrt(running_var + eps) (what an eval-mode backward uses).
void batch_norm_into(const Tensor& y, const Tensor& save_mean, const Tensor& save_invstd, const Tensor& x,
                     const Tensor& gamma, const Tensor& beta, const Tensor& running_mean,
                     const Tensor& running_var, bool training, double momentum, double eps);

// The per-channel coefficients batch_norm normalises with: y = (x - m) * a + sh, each operation
// rounded in x's dtype (no multiply-add contraction: norm.cc is compiled with -ffp-contract=off).
// m = mean, a = gamma / sqrt(var + eps) and sh = beta, computed in double and rounded once, where
// mean and var are the running statistics (inference). m, a, sh: [C], in their own dtype.
// The graph compiler lowers an inference batch_norm to these and three elementwise ops, which
// then fuse with what follows (graph/lower.cc); eager batch_norm uses the same numbers.
void batch_norm_coeffs_into(const Tensor& m, const Tensor& a, const Tensor& sh, const Tensor& gamma,
                            const Tensor& beta, const Tensor& running_mean, const Tensor& running_var, double eps);

// layer_norm over dims [begin_axis:] of x (normalised, 0 <= begin_axis < ndim). gamma, beta:
// x.shape[begin_axis:], any floating dtype. y: x's shape and dtype; mean, rstd: x.shape[:begin_axis]
// followed by ones (keepdims), x's dtype.
void layer_norm_into(const Tensor& y, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                     const Tensor& gamma, const Tensor& beta, int begin_axis, double eps,
                     NormPath path = NormPath::Auto);

// group_norm over x [N, C, *] with C split into `groups` consecutive groups (C % groups == 0):
// statistics per (sample, group) over the group's channels and the trailing dims; gamma, beta:
// [C]. y: x's shape and dtype; mean, rstd: [N, groups], x's dtype.
void group_norm_into(const Tensor& y, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                     const Tensor& gamma, const Tensor& beta, int64_t groups, double eps);

}  // namespace pj
