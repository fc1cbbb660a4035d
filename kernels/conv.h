// 2-D convolution and transposed convolution over NCHW tensors, forward only.
//
// float32 runs through oneDNN (convolution_forward / deconvolution_forward) with format_tag::any
// for the weights, so oneDNN picks its blocked weight layout, and a blocked activation layout:
// nChw16c when the channels per group are multiples of 16 (its jit kernels, and cheap
// nchw <-> nChw16c reorders), else whatever format_tag::any picks (nhwc + brgconv on AVX-512,
// nothing padded to 16). Plain NCHW tensors are reordered in and out around the primitive.
// Everything that does not depend on the data (primitive descriptor, primitive, reorder
// primitives) is built once per geometry and kept in a plan cache keyed by the descriptor string;
// the primitive also goes through PrimitiveCache. The blocked activations live in this thread's
// scratch slots (kernels/dnnl_context.h), the same memory for every geometry.
// float64, and float32 geometries oneDNN refuses or would run on its slow reference kernel, use
// the loop path: im2col (skipped for 1x1 / stride 1 / unpadded kernels) plus the batched matmul
// kernel for conv2d, direct accumulation for depthwise conv2d, matmul plus col2im for
// conv_transpose2d, all in parallel.
//
// The weights are reordered into oneDNN's blocked layout once per weight version
// (kernels/weight_cache.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/tensor.h"

namespace pj {

// Geometry of one conv2d / conv_transpose2d call; spatial pairs are (height, width).
struct Conv2dParams {
  int64_t stride[2] = {1, 1};
  int64_t pad[4] = {0, 0, 0, 0};        // top, bottom, left, right (explicit, >= 0)
  int64_t dilation[2] = {1, 1};
  int64_t output_padding[2] = {0, 0};   // conv_transpose2d only: extra rows/cols at bottom/right
  int64_t groups = 1;
};

// Output length of one spatial dim: floor((in + lo + hi - dilation*(k-1) - 1) / stride) + 1.
int64_t conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi, int64_t dilation);
// (in - 1)*stride - lo - hi + dilation*(k-1) + output_padding + 1 (PyTorch's ConvTranspose rule).
int64_t conv_transpose_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi,
                                int64_t dilation, int64_t output_padding);

// TensorFlow / MindSpore 'same' padding for each spatial dim: the output has ceil(in / stride)
// elements and the total padding max((out-1)*stride + dilation*(k-1) + 1 - in, 0) is split with the
// extra element on the bottom/right. Returns (lo, hi) pairs in dim order: for 2-D inputs
// {top, bottom, left, right}, the order conv2d's "padding" attribute takes.
std::vector<int64_t> conv_same_pads(const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                                    const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation);

// out (N, OC, OH, OW) = conv2d(x (N, C, H, W), w (OC, C/groups, KH, KW)) + bias (OC,) when defined.
// One floating dtype for all; shapes and parameters are checked by graph/ops/conv_ops.cc.
void conv2d_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p);
// out (N, OC, OH, OW) = conv_transpose2d(x (N, C, H, W), w (C, OC/groups, KH, KW)) + bias.
void conv_transpose2d_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Conv2dParams& p);

// The loop paths for either floating dtype, exposed so tests can check them against oneDNN's.
void conv2d_loop_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p);
void conv_transpose2d_loop_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                                const Conv2dParams& p);

// A conv2d / conv_transpose2d call resolved once for fixed shapes and parameters (a graph's
// prepared kernel): its float32 oneDNN plan, or none (the loop path). conv_run then does what
// conv2d_into / conv_transpose2d_into do, without building the plan's key or reading attributes.
struct ConvPrepared;
std::shared_ptr<const ConvPrepared> conv_prepare(const Shape& out, const Shape& x, const Shape& w,
                                                 const Conv2dParams& p, bool transpose, bool bias, DType dtype);
void conv_run(const ConvPrepared& c, const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias);

// dw (OC, C/groups, KH, KW) = the gradient of conv2d(x (N, C, H, W), w) with respect to w, given
// that output's gradient dout (N, OC, OH, OW): float32 through oneDNN's backward-weights primitive,
// else a direct loop (kernels/conv_weight_grad.cc). One floating dtype; shapes are checked by
// graph/ops/conv_ops.cc.
void conv2d_weight_grad_into(const Tensor& dw, const Tensor& x, const Tensor& dout, const Conv2dParams& p);
// The same resolved once for fixed shapes (a graph's prepared kernel), then run.
struct WeightGradPrepared;
std::shared_ptr<const WeightGradPrepared> conv2d_weight_grad_prepare(const Shape& dw, const Shape& x, const Shape& dout,
                                                                     const Conv2dParams& p, DType dtype);
void conv2d_weight_grad_run(const WeightGradPrepared& c, const Tensor& dw, const Tensor& x, const Tensor& dout);

// For graph kernels that keep activations in oneDNN's blocked layout (kernels/conv_block.h):
// whether conv2d_into's float32 oneDNN plan for this geometry writes nChw16c (so the values in
// that layout are exactly conv2d_into's), and the run that leaves them there: `out` holds
// N*OC*OH*OW floats laid out (n, c / 16, h, w, c % 16). With x_blocked, x's bytes are already in
// that layout (what the plan reorders x into): allowed where conv2d_src_is_nchw16c.
bool conv2d_dst_is_nchw16c(const Shape& out, const Shape& x, const Shape& w, const Conv2dParams& p, bool bias);
bool conv2d_src_is_nchw16c(const Shape& out, const Shape& x, const Shape& w, const Conv2dParams& p, bool bias);
// The run, for a kernel prepared once (conv_prepare, not transposed, float32, where
// conv2d_dst_is_nchw16c): no plan lookup per call, and the node's weights memo (inference keeps
// its reordered weights without a cache key per call).
void conv2d_nchw16c_run(const ConvPrepared& c, float* out, const Tensor& x, const Tensor& w, const Tensor& bias,
                        bool x_blocked = false);

// Which implementation oneDNN chose for the last float32 conv / deconv planned ("" when the loop
// path ran); for tests and benchmarks.
std::string conv_last_impl();

}  // namespace pj
