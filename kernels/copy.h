// Copies between tensors of any geometry and dtype (the cast and contiguous() kernel).
#pragma once

#include "kernels/tensor.h"

namespace pj {

// dst[...] = cast(src[...]); src broadcasts to dst's shape.
void copy_into(const Tensor& dst, const Tensor& src);
Tensor cast(const Tensor& src, DType dtype);
// Fills every element of dst with v (converted to dst's dtype).
void fill(const Tensor& dst, double v);

}  // namespace pj
