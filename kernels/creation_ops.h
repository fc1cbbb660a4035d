// Tensors made from nothing: arange, linspace, eye (full/ones/zeros are Tensor::empty + fill).
//
// Values are computed in double (int64 for integer arange) per element and converted once, so
// each element is exact or off by one rounding, independent of the length and thread count.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace pj {

// numpy's length rule: ceil((stop - start) / step), at least 0. step 0 raises ValueError.
int64_t arange_length(double start, double stop, double step);
int64_t arange_length_int(int64_t start, int64_t stop, int64_t step);
// out[i] = start + i * step (computed in int64 when both are ints and out is integral).
void arange_into(const Tensor& out, double start, double step);
void arange_int_into(const Tensor& out, int64_t start, int64_t step);

// numpy.linspace(start, stop, num, endpoint): out[i] = start + i * (stop - start) / div with
// div = num - 1 (endpoint) or num; with the endpoint the last element is exactly stop. Integer
// outputs round toward -inf (numpy >= 2.0). A negative num raises ValueError.
void check_linspace_num(int64_t num);
void linspace_into(const Tensor& out, double start, double stop, bool endpoint);

// Ones on the k-th diagonal of a 2-D out, zeros elsewhere.
void eye_into(const Tensor& out, int64_t k);

}  // namespace pj
