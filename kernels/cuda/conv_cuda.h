// 2-D convolution on the GPU through cuDNN (opened at run time: kernels/cuda/backend.h), as
// torch.nn.functional.conv2d computes it: y[N, K, OH, OW] = x[N, C, H, W] (*) w[K, C/groups, R, S]
// (cross-correlation), + bias[K], NCHW float32 in device memory, with padding, stride, dilation
// and groups; and its two backward passes, for training.
//
// Float32 computed in float32 (CUDNN_FMA_MATH: no TF32), deterministically: each direction's
// algorithm is the first of cuDNN's heuristic (cudnnGet*Algorithm_v7) that is both, chosen once
// per shape and cached with the descriptors and its workspace size, as oneDNN's primitives are on
// the CPU. Results agree with the CPU's to float32 rounding (summation orders differ), not bit for
// bit, and are the same bits on every run. Asynchronous on the default stream, like the other GPU
// kernels.
#pragma once

#include <cstdint>

namespace pj::cuda {

struct ConvShape {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t k = 0, r = 0, s = 0;         // output channels, kernel height and width
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, groups = 1;
  bool bias = false;

  int64_t out_h() const { return (h + 2 * pad_h - dil_h * (r - 1) - 1) / stride_h + 1; }
  int64_t out_w() const { return (w + 2 * pad_w - dil_w * (s - 1) - 1) / stride_w + 1; }
};

// Raises pj::Error: ValueError naming the size that is wrong (channels not divisible by groups, a
// kernel larger than the padded input, a size or stride out of range); RuntimeError when no GPU is
// usable or cuDNN refuses, with its status.
void conv2d_cuda(const ConvShape& s, const float* x, const float* w, const float* bias, float* y);
// dx[N, C, H, W] from dy[N, K, OH, OW] and w.
void conv2d_backward_data_cuda(const ConvShape& s, const float* dy, const float* w, float* dx);
// dw[K, C/groups, R, S] from x and dy, and with s.bias, dbias[K] (dy summed over N, OH, OW).
void conv2d_backward_weights_cuda(const ConvShape& s, const float* x, const float* dy, float* dw, float* dbias);

}  // namespace pj::cuda
