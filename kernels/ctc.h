// Connectionist temporal classification (Graves et al., ICML 2006): the loss of a label
// sequence given per-frame class scores, summed over every alignment, by the alpha/beta
// recursions in log space over the extended label l' = (blank, l1, blank, l2, ..., lL, blank).
//
// Two conventions, as MindSpore has both:
//  - torch-like (CTCLossV2, ops.ctc_loss, nn.CTCLoss): log_probs [T, N, C] are log-probabilities,
//    targets [N, S] padded class indices, input_lengths / target_lengths [N], blank an attribute.
//    The forward gives nll [N] and log_alpha [N, T, 2S + 1] (-inf outside the reachable lattice
//    and past a sample's input length); the backward gives, like PyTorch's, exp(lp) - posterior
//    occupancy at t < input_length (0 after): the gradient through a log_softmax that produced
//    log_probs, which is how every caller uses it.
//  - TensorFlow-like (ops.CTCLoss): inputs [max_time, N, C] are unnormalised logits (softmax over
//    C inside), blank = C - 1, labels sparse (indices [n, 2], values [n]), and the op returns the
//    loss [N] and its gradient with respect to the logits (softmax - occupancy) in one pass.
//
// Sums over paths run in double whatever the storage dtype. Value errors (a length out of range,
// a label out of range) raise RuntimeError/ValueError from the kernel, naming the op.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace pj {

// nll [N] and log_alpha [N, T, 2S + 1] (both log_probs' dtype, float32 or float64). targets,
// input_lengths, target_lengths: Int32 or Int64. zero_infinity: an infinite nll is written as 0.
void ctc_loss_into(const Tensor& nll, const Tensor& log_alpha, const Tensor& log_probs, const Tensor& targets,
                   const Tensor& input_lengths, const Tensor& target_lengths, int64_t blank, bool zero_infinity);

// grad [T, N, C] = dnll[n] * (exp(lp) - occupancy) for t < input_lengths[n], else 0; samples whose
// likelihood is 0 give 0 with zero_infinity (NaN without, as PyTorch).
void ctc_loss_grad_into(const Tensor& grad, const Tensor& dnll, const Tensor& log_probs, const Tensor& targets,
                        const Tensor& input_lengths, const Tensor& target_lengths, const Tensor& log_alpha,
                        int64_t blank, bool zero_infinity);

struct CtcSparseOptions {
  bool preprocess_collapse_repeated = false;  // merge repeated labels before the loss
  bool ctc_merge_repeated = true;             // false: a repeated path symbol is a new label
  bool ignore_longer_outputs_than_inputs = false;  // such samples: loss 0, gradient 0
};

// ops.CTCLoss: loss [N] and gradient [max_time, N, C] (inputs' dtype) of logits inputs
// [max_time, N, C]; labels_indices [n, 2] Int64 (row i: batch, position), labels_values [n]
// Int32, sequence_length [N] Int32. Values of a batch are taken in order, counted by
// labels_indices[:, 0]; a value >= C - 1 (or negative) ends the sample's label.
void ctc_loss_sparse_into(const Tensor& loss, const Tensor& gradient, const Tensor& inputs,
                          const Tensor& labels_indices, const Tensor& labels_values, const Tensor& sequence_length,
                          const CtcSparseOptions& opt);

}  // namespace pj
