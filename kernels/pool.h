// 2-D max / average pooling and adaptive average pooling over NCHW tensors, forward only, with
// PyTorch's semantics (output sizes, ceil_mode, count_include_pad, NaN propagation in max).
//
// Max pooling over windows that tile the plane (stride == kernel, no padding or dilation: the
// usual 2x2 pool) runs a kernel of pijit's own in both dtypes, the loop path's result bit for bit
// (2-3x faster than oneDNN's on the CNN's pools, and no primitive per batch size). Otherwise
// float32 goes through oneDNN's pooling_forward on the plain NCHW layout wherever its result is
// the same as PyTorch's: max pooling without dilation, average pooling excluding padding, and
// average pooling including padding when no ceil_mode window hangs past the right padding (there
// PyTorch divides by the part of the window inside input + padding, oneDNN by the whole window).
// Primitives are cached by descriptor in PrimitiveCache. Everything else (float64, dilation,
// divisor_override, the cases above, geometries oneDNN refuses or runs on its reference kernel)
// runs the loops here, in parallel over output rows. oneDNN's max pooling drops a NaN (vmaxps from
// -FLT_MAX) and gives -FLT_MAX for a window of -inf, so after it the planes holding a NaN or an
// infinity are pooled again by the loop (kernels/nonfinite.h): every path propagates NaN as
// PyTorch does and gives the loop's bits.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pj {

struct Pool2dParams {
  int64_t kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1};
  int64_t pad[2] = {0, 0};     // symmetric: rows above and below, columns left and right
  int64_t dilation[2] = {1, 1};  // max pooling only
  bool ceil_mode = false;
  bool count_include_pad = true;  // average pooling only
  int64_t divisor_override = 0;   // average pooling only; 0: none
};

// PyTorch's pooling output length: floor or ceil of (in + 2*pad - dilation*(k-1) - 1) / stride, plus
// one; with ceil_mode the last window must start inside the input or the left padding.
int64_t pool_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode);

// out (N, C, OH, OW) from x (N, C, H, W); one floating dtype. Parameters are checked by graph/ops.
// oneDNN's left and right padding that make its pooling produce exactly `out`'s size from x (more
// on the right than on the left when ceil_mode adds a window).
void pool_dnnl_pads(const Shape& x, const Shape& out, const Pool2dParams& p, dnnl::memory::dims* pad_l,
                    dnnl::memory::dims* pad_r);

void max_pool2d_into(const Tensor& out, const Tensor& x, const Pool2dParams& p);
void avg_pool2d_into(const Tensor& out, const Tensor& x, const Pool2dParams& p);
// Output cell (i, j) averages rows [floor(i*H/OH), ceil((i+1)*H/OH)) and the same for columns.
void adaptive_avg_pool2d_into(const Tensor& out, const Tensor& x);

// Backward: dx (x's shape, zeroed here) from dout (the forward output's shape), contiguous, one
// floating dtype. Max pooling sends each output's gradient to the first maximum of its window (a
// NaN wins, as in the forward loop); average pooling spreads it over the window with the forward's
// divisor.
void max_pool2d_backward_into(const Tensor& dx, const Tensor& x, const Tensor& dout, const Pool2dParams& p);
void avg_pool2d_backward_into(const Tensor& dx, const Tensor& dout, const Pool2dParams& p);
void adaptive_avg_pool2d_backward_into(const Tensor& dx, const Tensor& dout);

// True when max pooling x (N, C, H, W) to out tiles each plane: stride == kernel, no padding or
// dilation, every window inside. Then max_pool2d_into runs pijit's own kernel, and
// max_pool2d_tiles_nchw16c gives the same bits from and to the blocked layout.
bool max_pool2d_tiles(const Shape& x, const Shape& out, const Pool2dParams& p);
// The tiled max pool of float32 `src` (x's shape, nChw16c bytes: C a multiple of 16) into `dst`
// (out's shape; nChw16c bytes when dst_blocked, else NCHW).
void max_pool2d_tiles_nchw16c(const float* src, float* dst, const Shape& x, const Shape& out, const Pool2dParams& p,
                              bool dst_blocked);

// The loop paths, exposed so tests can check them against oneDNN's.
void max_pool2d_loop_into(const Tensor& out, const Tensor& x, const Pool2dParams& p);
void avg_pool2d_loop_into(const Tensor& out, const Tensor& x, const Pool2dParams& p);

}  // namespace pj
