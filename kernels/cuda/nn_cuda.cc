#include "kernels/cuda/nn_cuda.h"

#include <climits>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "common/check.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/cudnn.h"

namespace pj::cuda {

namespace {

void check_sizes(const char* what, std::initializer_list<int64_t> sizes) {
  for (int64_t v : sizes)
    if (v <= 0 || v > INT_MAX) PJ_THROW(Value) << what << ": every size must be positive (and fit in 32 bits), got " << v;
}

void check_bn(const BatchNormShape& s) {
  check_sizes("batch_norm", {s.n, s.c, s.h, s.w});
  if (!(s.eps > 0)) PJ_THROW(Value) << "batch_norm: eps must be positive, got " << s.eps;
}

void check_momentum(double momentum) {
  if (!(momentum >= 0 && momentum <= 1)) PJ_THROW(Value) << "batch_norm: momentum must be in [0, 1], got " << momentum;
}

void check_pool(const PoolShape& s) {
  check_sizes("pool2d", {s.n, s.c, s.h, s.w, s.kh, s.kw, s.stride_h, s.stride_w});
  if (s.pad_h < 0 || s.pad_w < 0 || 2 * s.pad_h > s.kh || 2 * s.pad_w > s.kw)
    PJ_THROW(Value) << "pool2d: padding must be between 0 and half the window, got (" << s.pad_h << ", " << s.pad_w
                    << ") for a " << s.kh << "x" << s.kw << " window";
  if (s.out_h() < 1 || s.out_w() < 1)
    PJ_THROW(Value) << "pool2d: the window (" << s.kh << "x" << s.kw << ") is larger than the padded input ("
                    << s.h + 2 * s.pad_h << "x" << s.w + 2 * s.pad_w << ")";
}

}  // namespace

#ifdef PIJIT_CUDA_BUILT
namespace {

using namespace cudnn;

std::mutex g_mu;  // the descriptor caches and the shared handle

// A cached NCHW float32 descriptor.
Desc tensor_of(int64_t n, int64_t c, int64_t h, int64_t w) {
  static std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, Desc> cache;
  Desc& d = cache[{n, c, h, w}];
  if (!d) d = tensor(int(n), int(c), int(h), int(w));
  return d;
}

Desc pooling_of(const PoolShape& s) {
  static std::map<std::vector<int64_t>, Desc> cache;
  const int mode = s.max ? kPoolMaxDeterministic : s.count_include_pad ? kPoolAvgWithPad : kPoolAvgNoPad;
  Desc& d = cache[{mode, s.kh, s.kw, s.pad_h, s.pad_w, s.stride_h, s.stride_w}];
  if (!d) {
    const Api& a = api();
    check(a.pool_create(&d), "cudnnCreatePoolingDescriptor");
    check(a.pool_set(d, mode, kPropagateNan, int(s.kh), int(s.kw), int(s.pad_h), int(s.pad_w), int(s.stride_h),
                     int(s.stride_w)),
          "cudnnSetPooling2dDescriptor");
  }
  return d;
}

const float kOne = 1.f, kZero = 0.f;

}  // namespace

void batch_norm_train_cuda(const BatchNormShape& s, const float* x, const float* gamma, const float* beta,
                           double momentum, float* running_mean, float* running_var, float* y, float* save_mean,
                           float* save_invstd) {
  check_bn(s);
  check_momentum(momentum);
  const Api& a = api();
  std::lock_guard<std::mutex> lock(g_mu);
  const Desc xd = tensor_of(s.n, s.c, s.h, s.w), pd = tensor_of(1, s.c, 1, 1);
  // cuDNN's factor weighs the batch: running = (1 - factor) * running + factor * batch
  check(a.bn_train(a.handle, kSpatial, &kOne, &kZero, xd, x, xd, y, pd, gamma, beta, 1.0 - momentum, running_mean,
                   running_var, s.eps, save_mean, save_invstd),
        "cudnnBatchNormalizationForwardTraining");
}

void batch_norm_infer_cuda(const BatchNormShape& s, const float* x, const float* gamma, const float* beta,
                           const float* mean, const float* var, float* y) {
  check_bn(s);
  const Api& a = api();
  std::lock_guard<std::mutex> lock(g_mu);
  const Desc xd = tensor_of(s.n, s.c, s.h, s.w), pd = tensor_of(1, s.c, 1, 1);
  check(a.bn_infer(a.handle, kSpatial, &kOne, &kZero, xd, x, xd, y, pd, gamma, beta, mean, var, s.eps),
        "cudnnBatchNormalizationForwardInference");
}

void batch_norm_backward_cuda(const BatchNormShape& s, const float* x, const float* dy, const float* gamma,
                              const float* save_mean, const float* save_invstd, float* dx, float* dgamma, float* dbeta) {
  check_bn(s);
  const Api& a = api();
  std::lock_guard<std::mutex> lock(g_mu);
  const Desc xd = tensor_of(s.n, s.c, s.h, s.w), pd = tensor_of(1, s.c, 1, 1);
  check(a.bn_backward(a.handle, kSpatial, &kOne, &kZero, &kOne, &kZero, xd, x, xd, dy, xd, dx, pd, gamma, dgamma, dbeta,
                      s.eps, save_mean, save_invstd),
        "cudnnBatchNormalizationBackward");
}

void pool2d_cuda(const PoolShape& s, const float* x, float* y) {
  check_pool(s);
  const Api& a = api();
  std::lock_guard<std::mutex> lock(g_mu);
  check(a.pool_forward(a.handle, pooling_of(s), &kOne, tensor_of(s.n, s.c, s.h, s.w), x, &kZero,
                       tensor_of(s.n, s.c, s.out_h(), s.out_w()), y),
        "cudnnPoolingForward");
}

void pool2d_backward_cuda(const PoolShape& s, const float* x, const float* y, const float* dy, float* dx) {
  check_pool(s);
  const Api& a = api();
  std::lock_guard<std::mutex> lock(g_mu);
  const Desc xd = tensor_of(s.n, s.c, s.h, s.w), yd = tensor_of(s.n, s.c, s.out_h(), s.out_w());
  check(a.pool_backward(a.handle, pooling_of(s), &kOne, yd, y, yd, dy, xd, x, &kZero, xd, dx), "cudnnPoolingBackward");
}

void softmax_cuda(int64_t rows, int64_t cols, bool log, const float* x, float* y) {
  check_sizes("softmax", {rows, cols});
  const Api& a = api();
  std::lock_guard<std::mutex> lock(g_mu);
  const Desc d = tensor_of(rows, cols, 1, 1);  // over C for each N: a row
  check(a.softmax(a.handle, log ? kSoftmaxLog : kSoftmaxAccurate, kSoftmaxChannel, &kOne, d, x, &kZero, d, y),
        "cudnnSoftmaxForward");
}

#else

namespace {
[[noreturn]] void no_gpu() { PJ_THROW(Runtime) << "no usable GPU: " << backend().why; }
}  // namespace

void batch_norm_train_cuda(const BatchNormShape& s, const float*, const float*, const float*, double momentum, float*,
                           float*, float*, float*, float*) {
  check_bn(s);
  check_momentum(momentum);
  no_gpu();
}
void batch_norm_infer_cuda(const BatchNormShape& s, const float*, const float*, const float*, const float*,
                           const float*, float*) {
  check_bn(s);
  no_gpu();
}
void batch_norm_backward_cuda(const BatchNormShape& s, const float*, const float*, const float*, const float*,
                              const float*, float*, float*, float*) {
  check_bn(s);
  no_gpu();
}
void pool2d_cuda(const PoolShape& s, const float*, float*) {
  check_pool(s);
  no_gpu();
}
void pool2d_backward_cuda(const PoolShape& s, const float*, const float*, const float*, float*) {
  check_pool(s);
  no_gpu();
}
void softmax_cuda(int64_t rows, int64_t cols, bool, const float*, float*) {
  check_sizes("softmax", {rows, cols});
  no_gpu();
}

#endif

}  // namespace pj::cuda
