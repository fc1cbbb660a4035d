// Batch norm, pooling and softmax on the GPU through cuDNN (kernels/cuda/cudnn.h), NCHW float32 in
// device memory, with the meaning pijit's CPU kernels give them (kernels/norm.h, pool.h,
// softmax.h): MindSpore's momentum convention for the running statistics, NaN propagating through
// max pooling, PyTorch's output sizes. Descriptors are made once per shape and kept. Results agree
// with the CPU's to float32 rounding (cuDNN's reduction orders are its own). Asynchronous on the
// default stream, like the other GPU kernels. Every function raises pj::Error: ValueError naming a
// size out of range, RuntimeError when no GPU is usable or cuDNN refuses.
#pragma once

#include <cstdint>

namespace pj::cuda {

struct BatchNormShape {
  int64_t n = 0, c = 0, h = 1, w = 1;  // statistics per channel over N, H, W
  double eps = 1e-5;
};

// Training: y = (x - mean) * invstd * gamma + beta with the batch's mean and biased variance;
// running_mean = momentum * running_mean + (1 - momentum) * mean, and running_var the same with
// the unbiased variance (in place); save_mean and save_invstd ([C]) are what the backward reads.
void batch_norm_train_cuda(const BatchNormShape& s, const float* x, const float* gamma, const float* beta,
                           double momentum, float* running_mean, float* running_var, float* y, float* save_mean,
                           float* save_invstd);
// Inference: y = (x - mean) / sqrt(var + eps) * gamma + beta.
void batch_norm_infer_cuda(const BatchNormShape& s, const float* x, const float* gamma, const float* beta,
                           const float* mean, const float* var, float* y);
// The training forward's gradients: dx, dgamma and dbeta ([C]).
void batch_norm_backward_cuda(const BatchNormShape& s, const float* x, const float* dy, const float* gamma,
                              const float* save_mean, const float* save_invstd, float* dx, float* dgamma, float* dbeta);

struct PoolShape {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t kh = 0, kw = 0, pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  bool max = true;                 // else average
  bool count_include_pad = true;   // average: divide by the whole window, padding included

  int64_t out_h() const { return (h + 2 * pad_h - kh) / stride_h + 1; }
  int64_t out_w() const { return (w + 2 * pad_w - kw) / stride_w + 1; }
};

void pool2d_cuda(const PoolShape& s, const float* x, float* y);
// dx from dy (and, for max pooling, x and y: the gradient goes to each window's maximum).
void pool2d_backward_cuda(const PoolShape& s, const float* x, const float* y, const float* dy, float* dx);

// softmax (or log_softmax) of each of `rows` rows of `cols` floats.
void softmax_cuda(int64_t rows, int64_t cols, bool log, const float* x, float* y);

}  // namespace pj::cuda
