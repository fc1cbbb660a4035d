// softmax and log_softmax along one axis.
//
// float32 goes through oneDNN's softmax_forward / logsoftmax_forward primitives on a contiguous
// plain-layout descriptor (cached in PrimitiveCache by dims and axis); float64 uses a three-pass
// loop (max, sum of exp, normalise) that walks the axis as rows so the inner loop stays
// contiguous. Both subtract the max first, so large inputs do not overflow.
#pragma once

#include "kernels/tensor.h"

namespace pj {

// out = softmax(in) (or log_softmax when `log`) along `axis` (normalised; 0 for a 0-d tensor).
// in and out: the same shape and floating dtype.
void softmax_into(const Tensor& out, const Tensor& in, int axis, bool log);

}  // namespace pj
