// Copies between tensors of any geometry and dtype (the cast and contiguous() kernel).
#pragma once

#include "kernels/tensor.h"

namespace pj {

// dst[...] = cast(src[...]); src broadcasts to dst's shape.
void copy_into(const Tensor& dst, const Tensor& src);
Tensor cast(const Tensor& src, DType dtype);
// Fills every element of dst with v (converted to dst's dtype).
void fill(const Tensor& dst, double v);

// Runs f(dst) with dst = out when out is contiguous, else a contiguous temporary that is copied
// into out afterwards: lets kernels that need dense output write into any view.
template <typename F>
void with_contiguous_out(const Tensor& out, F f) {
  Tensor dst = out.is_contiguous() ? out : Tensor::empty(out.shape(), out.dtype());
  f(dst);
  if (!dst.same_storage(out)) copy_into(out, dst);
}

}  // namespace pj
