// RNN-Transducer loss (Graves, "Sequence Transduction with Recurrent Neural Networks", 2012):
// the negative log-likelihood of a label sequence summed over every monotone alignment of a
// (T x (U + 1)) lattice, by the forward (alpha) and backward (beta) recursions in log space.
//
// MindSpore's ops.RNNTLoss convention: acts [B, T, U + 1, V] are unnormalised joint-network
// scores (a log-softmax over V is taken inside), labels [B, U] Int32 class indices,
// input_lengths / label_lengths [B] Int32, blank an attribute. The op returns the costs [B] and
// their gradient with respect to acts, softmax * occupancy(t, u) - emission occupancy, which is
// zero outside a sample's (input_length x label_length + 1) lattice.
//
// Sums run in double whatever the storage dtype (float32 or float64). A length or label out of
// range raises ValueError from the kernel, naming the op and the sample.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace pj {

void rnnt_loss_into(const Tensor& costs, const Tensor& grads, const Tensor& acts, const Tensor& labels,
                    const Tensor& input_lengths, const Tensor& label_lengths, int64_t blank);

}  // namespace pj
