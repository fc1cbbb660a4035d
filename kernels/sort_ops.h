// sort and topk along one axis, returning (values, int64 indices).
//
// Each row along the axis is copied out, ordered through an index permutation, and written back;
// rows run in parallel. NaN orders above every number (last when ascending, first when
// descending), as in PyTorch. sort is stable in both directions (equal values keep their order);
// topk breaks ties by the lower index, so its output is deterministic too.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace pj {

// out shapes equal x's; `axis` already normalised (a 0-d x is one row of one element).
void sort_into(const Tensor& values, const Tensor& indices, const Tensor& x, int axis, bool descending);
// Output shape of topk (x's shape with the axis cut to k); checks 0 <= k <= size.
Shape topk_shape(const Shape& x, int64_t k, int64_t axis, int* axis_out);
// sorted=false returns the k selected elements in ascending index order (numpy's unspecified
// order made deterministic).
void topk_into(const Tensor& values, const Tensor& indices, const Tensor& x, int axis, bool largest,
               bool sorted);

}  // namespace pj
