// softmax and log_softmax along one axis.
//
// float32 softmax over the innermost axis goes through oneDNN's softmax_forward primitive on a
// contiguous plain-layout descriptor (cached in PrimitiveCache by dims); everything else (other
// axes, log_softmax, float64) uses a three-pass loop (max, sum of exp, normalise) that walks the
// axis as rows so the inner loop stays contiguous. Both subtract the max first, so large inputs do
// not overflow. The loop's maximum propagates NaN, so NaN, +inf and -inf give numpy's and
// PyTorch's values (a NaN or +inf makes the row NaN, -inf gives 0); oneDNN's maximum drops a NaN,
// so the rows holding one of those are computed again by the loop (kernels/nonfinite.h).
#pragma once

#include "kernels/tensor.h"

namespace pj {

// out = softmax(in) (or log_softmax when `log`) along `axis` (normalised; 0 for a 0-d tensor).
// in and out: the same shape and floating dtype.
void softmax_into(const Tensor& out, const Tensor& in, int axis, bool log);

}  // namespace pj
