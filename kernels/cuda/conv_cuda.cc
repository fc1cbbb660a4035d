#include "kernels/cuda/conv_cuda.h"

#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/check.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/cudnn.h"
#include "kernels/cuda/driver.h"

namespace pj::cuda {

namespace {

void check_shape(const ConvShape& s) {
  const int64_t sizes[] = {s.n, s.c, s.h, s.w, s.k, s.r, s.s};
  const char* names[] = {"batch", "input channels", "height", "width", "output channels", "kernel height", "kernel width"};
  for (int i = 0; i < 7; ++i)
    if (sizes[i] <= 0 || sizes[i] > INT_MAX) PJ_THROW(Value) << "conv2d: " << names[i] << " must be positive, got " << sizes[i];
  if (s.stride_h < 1 || s.stride_w < 1 || s.dil_h < 1 || s.dil_w < 1 || s.pad_h < 0 || s.pad_w < 0 || s.groups < 1)
    PJ_THROW(Value) << "conv2d: stride and dilation must be at least 1, padding at least 0 and groups at least 1, got stride ("
                    << s.stride_h << ", " << s.stride_w << "), dilation (" << s.dil_h << ", " << s.dil_w << "), padding ("
                    << s.pad_h << ", " << s.pad_w << "), groups " << s.groups;
  if (s.c % s.groups || s.k % s.groups)
    PJ_THROW(Value) << "conv2d: input channels (" << s.c << ") and output channels (" << s.k
                    << ") must be divisible by groups (" << s.groups << ")";
  if (s.out_h() < 1 || s.out_w() < 1)
    PJ_THROW(Value) << "conv2d: the kernel (" << s.r << "x" << s.s << ", dilation " << s.dil_h << "x" << s.dil_w
                    << ") is larger than the padded input (" << s.h + 2 * s.pad_h << "x" << s.w + 2 * s.pad_w << ")";
}

}  // namespace

#ifdef PIJIT_CUDA_BUILT
namespace {

using namespace cudnn;

// One shape's descriptors, and per direction the algorithm and its workspace size (chosen on the
// direction's first use), made once and kept, like oneDNN's primitive cache on the CPU.
enum Direction { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };
struct Plan {
  Desc x = nullptr, w = nullptr, conv = nullptr, y = nullptr, bias = nullptr;
  int algo[3] = {-1, -1, -1};
  size_t workspace[3] = {0, 0, 0};
};

Plan make_plan(const ConvShape& s) {
  const Api& d = api();
  Plan p;
  const int n = int(s.n), c = int(s.c), k = int(s.k);
  p.x = tensor(n, c, int(s.h), int(s.w));
  check(d.filter_create(&p.w), "cudnnCreateFilterDescriptor");
  check(d.filter_set(p.w, kFloat, kNchw, k, int(s.c / s.groups), int(s.r), int(s.s)), "cudnnSetFilter4dDescriptor");
  check(d.conv_create(&p.conv), "cudnnCreateConvolutionDescriptor");
  check(d.conv_set(p.conv, int(s.pad_h), int(s.pad_w), int(s.stride_h), int(s.stride_w), int(s.dil_h), int(s.dil_w),
                   kCrossCorrelation, kFloat),
        "cudnnSetConvolution2dDescriptor");
  check(d.conv_groups(p.conv, int(s.groups)), "cudnnSetConvolutionGroupCount");
  check(d.conv_math(p.conv, kFmaMath), "cudnnSetConvolutionMathType");
  p.y = tensor(n, k, int(s.out_h()), int(s.out_w()));
  p.bias = tensor(1, k, 1, 1);
  return p;
}

// The heuristic's best algorithm for `dir` that computes in float32 (FMA math, no TF32) and
// deterministically (the same bits on every run: eager and jitted agree), with its workspace.
void choose(Plan& p, Direction dir, const ConvShape& s) {
  if (p.algo[dir] >= 0) return;
  const Api& d = api();
  AlgoPerf perf[16] = {};
  int found = 0;
  if (dir == kForward)
    check(d.algorithm(d.handle, p.x, p.w, p.conv, p.y, 16, &found, perf), "cudnnGetConvolutionForwardAlgorithm_v7");
  else if (dir == kBackwardData)
    check(d.data_algorithm(d.handle, p.w, p.y, p.conv, p.x, 16, &found, perf),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  else
    check(d.filter_algorithm(d.handle, p.x, p.y, p.conv, p.w, 16, &found, perf),
          "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  int pick = -1;
  for (int i = 0; i < found && pick < 0; ++i)
    if (perf[i].status == 0 && perf[i].math_type == kFmaMath && perf[i].determinism == kDeterministic) pick = i;
  static const char* const names[] = {"forward", "backward-data", "backward-weights"};
  if (pick < 0)
    PJ_THROW(Runtime) << "cuDNN has no deterministic float32 " << names[dir] << " algorithm for a convolution of " << s.n
                      << "x" << s.c << "x" << s.h << "x" << s.w << " by " << s.k << "x" << s.c / s.groups << "x" << s.r
                      << "x" << s.s;
  const int algo = perf[pick].algo;
  size_t bytes = 0;
  if (dir == kForward)
    check(d.workspace_size(d.handle, p.x, p.w, p.conv, p.y, algo, &bytes), "cudnnGetConvolutionForwardWorkspaceSize");
  else if (dir == kBackwardData)
    check(d.data_workspace_size(d.handle, p.w, p.y, p.conv, p.x, algo, &bytes),
          "cudnnGetConvolutionBackwardDataWorkspaceSize");
  else
    check(d.filter_workspace_size(d.handle, p.x, p.y, p.conv, p.w, algo, &bytes),
          "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  p.algo[dir] = algo;
  p.workspace[dir] = bytes;
}

// Runs `f(plan, workspace)` for the shape's plan with `dir`'s algorithm chosen, under one lock (the
// handle, the plans and the workspace are shared).
template <typename F>
void with_plan(const ConvShape& s, Direction dir, F&& f) {
  static std::mutex mu;
  static std::map<std::vector<int64_t>, Plan> plans;
  static std::unique_ptr<DeviceBuffer> workspace;
  std::lock_guard<std::mutex> lock(mu);
  const std::vector<int64_t> key = {s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.pad_h, s.pad_w,
                                    s.stride_h, s.stride_w, s.dil_h, s.dil_w, s.groups};
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, make_plan(s)).first;
  Plan& p = it->second;
  choose(p, dir, s);
  if (p.workspace[dir] && (!workspace || workspace->bytes() < p.workspace[dir])) {
    if (workspace) synchronize();  // a running convolution may still use the old one
    workspace = std::make_unique<DeviceBuffer>(p.workspace[dir]);
  }
  f(p, workspace ? workspace->get() : nullptr, p.workspace[dir]);
}

}  // namespace

void conv2d_cuda(const ConvShape& s, const float* x, const float* w, const float* bias, float* y) {
  check_shape(s);
  if (s.bias && !bias) PJ_THROW(Value) << "conv2d with a bias needs the bias pointer";
  const Api& d = api();
  with_plan(s, kForward, [&](const Plan& p, void* ws, size_t ws_bytes) {
    const float one = 1.f, zero = 0.f;
    check(d.forward(d.handle, &one, p.x, x, p.w, w, p.conv, p.algo[kForward], ws, ws_bytes, &zero, p.y, y),
          "cudnnConvolutionForward");
    if (s.bias) check(d.add_tensor(d.handle, &one, p.bias, bias, &one, p.y, y), "cudnnAddTensor");
  });
}

void conv2d_backward_data_cuda(const ConvShape& s, const float* dy, const float* w, float* dx) {
  check_shape(s);
  const Api& d = api();
  with_plan(s, kBackwardData, [&](const Plan& p, void* ws, size_t ws_bytes) {
    const float one = 1.f, zero = 0.f;
    check(d.backward_data(d.handle, &one, p.w, w, p.y, dy, p.conv, p.algo[kBackwardData], ws, ws_bytes, &zero, p.x, dx),
          "cudnnConvolutionBackwardData");
  });
}

void conv2d_backward_weights_cuda(const ConvShape& s, const float* x, const float* dy, float* dw, float* dbias) {
  check_shape(s);
  if (s.bias && !dbias) PJ_THROW(Value) << "conv2d's backward with a bias needs the bias gradient's pointer";
  const Api& d = api();
  with_plan(s, kBackwardFilter, [&](const Plan& p, void* ws, size_t ws_bytes) {
    const float one = 1.f, zero = 0.f;
    check(d.backward_filter(d.handle, &one, p.x, x, p.y, dy, p.conv, p.algo[kBackwardFilter], ws, ws_bytes, &zero, p.w,
                            dw),
          "cudnnConvolutionBackwardFilter");
    if (s.bias) check(d.backward_bias(d.handle, &one, p.y, dy, &zero, p.bias, dbias), "cudnnConvolutionBackwardBias");
  });
}

#else

void conv2d_cuda(const ConvShape& s, const float*, const float*, const float*, float*) {
  check_shape(s);
  PJ_THROW(Runtime) << "no usable GPU: " << backend().why;
}

void conv2d_backward_data_cuda(const ConvShape& s, const float*, const float*, float*) {
  check_shape(s);
  PJ_THROW(Runtime) << "no usable GPU: " << backend().why;
}

void conv2d_backward_weights_cuda(const ConvShape& s, const float*, const float*, float*, float*) {
  check_shape(s);
  PJ_THROW(Runtime) << "no usable GPU: " << backend().why;
}

#endif

}  // namespace pj::cuda
