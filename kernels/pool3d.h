// 3-D max / average / adaptive pooling over NCDHW tensors with PyTorch's semantics (window clipping,
// ceil_mode, count_include_pad, divisor_override, NaN propagating through max), plus MindSpore's
// asymmetric padding (pad_list / 'same'). Loops over (n, c) planes in parallel, float32 and
// float64: pooling reads each input element about once per window, so it is bound by memory, and
// the loops give one result for every geometry (no separate oneDNN path whose NaN handling would
// need patching as the 2-D path's does). 1-D and 2-D pools of other layers can run here with unit
// leading spatial dims.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace pj {

struct Pool3dParams {
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t pad[6] = {0, 0, 0, 0, 0, 0};  // (lo, hi) per spatial dim
  int64_t dilation[3] = {1, 1, 1};      // max pooling only
  bool count_include_pad = true;        // average pooling only
  int64_t divisor_override = 0;         // average pooling only; 0: none
};

// Output length of one dim: floor or ceil of (in + lo + hi - dilation*(k-1) - 1) / stride, plus one;
// with ceil_mode the last window must start inside the input or the low padding.
int64_t pool3d_out_size(int64_t in, int64_t k, int64_t stride, int64_t lo, int64_t hi, int64_t dilation,
                        bool ceil_mode);

// out and indices (N, C, OD, OH, OW); indices (int64) are flat positions d*H*W + h*W + w in x's plane
// (PyTorch's). A window's maximum is its first largest element; a NaN wins (its last NaN, as in
// PyTorch).
void max_pool3d_into(const Tensor& out, const Tensor& indices, const Tensor& x, const Pool3dParams& p);
void avg_pool3d_into(const Tensor& out, const Tensor& x, const Pool3dParams& p);
// dx (x's shape) from dout (the forward output's shape).
void avg_pool3d_backward_into(const Tensor& dx, const Tensor& dout, const Pool3dParams& p);
// Output cell i of a dim covers input [floor(i*I/O), ceil((i+1)*I/O)).
void adaptive_avg_pool3d_into(const Tensor& out, const Tensor& x);
void adaptive_avg_pool3d_backward_into(const Tensor& dx, const Tensor& dout);
void adaptive_max_pool3d_into(const Tensor& out, const Tensor& indices, const Tensor& x);

}  // namespace pj
