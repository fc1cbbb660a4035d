// 3-D convolution, transposed convolution and the convolution's weight gradient over NCDHW tensors.
//
// float32 runs through oneDNN (convolution_forward, deconvolution_forward,
// convolution_backward_weights) with the layouts it picks (format_tag::any: blocked activations
// and weights for its jit kernels: 13x faster than its gemm kernel on plain ncdhw, measured on
// a (4, 32, 16, 32, 32) x (64, 32, 3, 3, 3) forward), plain NCDHW
// tensors reordered in and out around the primitive; a plan per geometry (primitive and
// reorders) is kept in a PlanCache. float64, and float32 geometries oneDNN refuses, run direct
// loops here, in parallel over output planes. The weight layouts are PyTorch's / MindSpore's:
// conv3d (OC, C/groups, kD, kH, kW), conv_transpose3d (C, OC/groups, kD, kH, kW).
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace pj {

// Geometry of one conv3d / conv_transpose3d call; spatial triples are (depth, height, width).
struct Conv3dParams {
  int64_t stride[3] = {1, 1, 1};
  int64_t pad[6] = {0, 0, 0, 0, 0, 0};  // (lo, hi) per spatial dim: front, back, top, bottom, left, right
  int64_t dilation[3] = {1, 1, 1};
  int64_t output_padding[3] = {0, 0, 0};  // conv_transpose3d only: extra planes at the back/bottom/right
  int64_t groups = 1;
};

// out (N, OC, OD, OH, OW) = conv3d(x (N, C, D, H, W), w (OC, C/groups, kD, kH, kW)) + bias (OC,)
// when defined. One floating dtype; shapes are checked by graph/ops/conv3d_ops.cc.
void conv3d_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv3dParams& p);
// out (N, OC, OD, OH, OW) = conv_transpose3d(x (N, C, D, H, W), w (C, OC/groups, kD, kH, kW)) + bias.
void conv_transpose3d_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Conv3dParams& p);
// dw (OC, C/groups, kD, kH, kW): the gradient of conv3d(x, w) with respect to w given the output's
// gradient dout (N, OC, OD', OH', OW'). dout may be shorter in a spatial dim than the convolution's
// output (a transposed convolution's output_padding dropped what no input reached): only the
// positions it has contribute.
void conv3d_weight_grad_into(const Tensor& dw, const Tensor& x, const Tensor& dout, const Conv3dParams& p);

// The loop paths, for either floating dtype, exposed so tests can check them against oneDNN's.
void conv3d_loop_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv3dParams& p);
void conv_transpose3d_loop_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                                const Conv3dParams& p);
void conv3d_weight_grad_loop_into(const Tensor& dw, const Tensor& x, const Tensor& dout, const Conv3dParams& p);

}  // namespace pj
