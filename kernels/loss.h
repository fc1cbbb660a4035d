// Forward kernels of the loss functions, with PyTorch's semantics for every option.
//
// Class losses (nll_loss, cross_entropy) view the input as [N, C, S]: N samples, C classes on
// dim 1, S = the product of the trailing dims (a 1-D input [C] is one sample, S = 1); the target
// is [N, S] class indices or, for cross_entropy, [N, C, S] class probabilities. cross_entropy
// runs kernels/softmax.h's log_softmax over the class dim, then the same code as nll_loss.
// Pointwise losses (mse, l1, smooth_l1, binary_cross_entropy[_with_logits]) walk their operands
// with kernels/loops.h's ElementwiseIter, so broadcast and strided operands need no copies.
//
// Reductions sum in double over fixed chunks of samples merged in order, so a result does not
// depend on the thread count. A mean over nothing (no samples, or only ignored ones, or zero
// total weight) is 0/0 = NaN, as in PyTorch.
//
// All floating operands arrive in the output's dtype (graph/ops casts); shapes, dtypes and
// attribute ranges are checked there. Kernels raise only the data-dependent errors: a class
// index out of range (IndexError) and a binary_cross_entropy probability outside [0, 1].
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace pj {

enum class Reduction { None, Mean, Sum };

// Options of the class losses. weight: [C] or undefined (all ones).
struct ClassLossOptions {
  Reduction reduction = Reduction::Mean;
  int64_t ignore_index = -100;   // index targets equal to it contribute nothing, not even weight
  double label_smoothing = 0.0;  // cross_entropy only, in [0, 1]
};

// nll_loss: loss[i] = -weight[t_i] * log_probs[n, t_i, s] (0 where t_i == ignore_index).
// Mean: sum(loss) / sum(weight[t_i] over non-ignored i). `op` names the op in errors.
// out: target's shape for Reduction::None, else 0-d.
void nll_loss_into(const Tensor& out, const Tensor& log_probs, const Tensor& target, const Tensor& weight,
                   const ClassLossOptions& opt, const char* op = "nll_loss");

// cross_entropy with index targets (integer dtype, [N, *]) or class-probability targets (floating,
// logits' shape). With label smoothing e over C classes:
//   index targets:  (1 - e) * nll + (e / C) * smooth, smooth_i = -sum_c weight[c] * lp[n, c, s]
//                   (0 where ignored); Mean divides both sums by sum(weight[t_i]) (non-ignored).
//   probabilities:  loss_i = -sum_c weight[c] * lp[n, c, s] * (p[n, c, s] * (1 - e) + e / C);
//                   Mean divides by the number of samples N * S (not by weights).
void cross_entropy_into(const Tensor& out, const Tensor& logits, const Tensor& target, const Tensor& weight,
                        const ClassLossOptions& opt);

// Pointwise losses of input and target broadcast together; out: the broadcast shape (None) or 0-d.
void mse_loss_into(const Tensor& out, const Tensor& input, const Tensor& target, Reduction r);
void l1_loss_into(const Tensor& out, const Tensor& input, const Tensor& target, Reduction r);
// 0.5 * d^2 / beta where |d| < beta, else |d| - 0.5 * beta (beta == 0: |d|).
void smooth_l1_loss_into(const Tensor& out, const Tensor& input, const Tensor& target, Reduction r,
                         double beta);

// -weight * (t * max(log p, -100) + (1 - t) * max(log(1 - p), -100)); every p must be in [0, 1]
// (ValueError otherwise, NaN included). weight: broadcast to input's shape, or undefined.
void binary_cross_entropy_into(const Tensor& out, const Tensor& probs, const Tensor& target,
                               const Tensor& weight, Reduction r);

// weight * ((1 - t) * x - (1 + (pos_weight - 1) * t) * log_sigmoid(x)), with the stable
// -log_sigmoid(x) = softplus(-x) = max(-x, 0) + log1p(exp(-|x|)). weight, pos_weight: broadcast
// to input's shape, or undefined.
void binary_cross_entropy_with_logits_into(const Tensor& out, const Tensor& logits, const Tensor& target,
                                           const Tensor& weight, const Tensor& pos_weight, Reduction r);

}  // namespace pj
