// Forward kernels of batch, layer and group normalisation.
//
// Every kernel reads x as a contiguous [rows, cols]-like block (a non-contiguous x is copied
// first), computes statistics in double with a fixed partition of the data into chunks (so the
// result does not depend on the thread count), and normalises in x's dtype as
// y = (x - mean) * (invstd * gamma) + beta, which keeps the cancellation in x - mean exact-ish.
//
// float32 goes through oneDNN where it has the primitive: batch_normalization_forward (training:
// oneDNN computes the batch statistics; inference: use_global_stats with the running ones) and
// layer_normalization_forward (training kind, for mean and variance). oneDNN 2.6 has no group
// normalisation, and float64 has no oneDNN path at all: those use the loops. Statistics are
// biased (divide by the element count); rstd/invstd = 1 / sqrt(var + eps).
//
// Shapes and dtypes are checked by graph/ops/norm_ops.cc; kernels only PJ_CHECK invariants.
#pragma once

#include "kernels/tensor.h"

namespace pj {

// Which implementation a float32 call takes (tests compare the two; float64 always loops).
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
                     const Tensor& running_var, bool training, double momentum, double eps,
                     NormPath path = NormPath::Auto);

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
