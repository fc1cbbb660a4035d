// cuDNN's C API as pijit calls it, opened at run time (kernels/cuda/backend.h) with one handle on
// the default stream: the functions of the convolution (conv_cuda.h) and of batch norm, pooling
// and softmax (nn_cuda.h). Types and values are spelled out (cudnn_*.h's): these functions are
// marked deprecated in cuDNN 9, still supported, and naming them through the headers would warn.
#pragma once

#include <cstddef>

namespace pj::cuda::cudnn {

using Status = int;
using Desc = void*;
enum : int { kNchw = 0, kFloat = 0, kCrossCorrelation = 1, kFmaMath = 3, kDeterministic = 1 };
enum : int { kSpatial = 1 };                                       // cudnnBatchNormMode_t
enum : int { kPoolMax = 0, kPoolAvgWithPad = 1, kPoolAvgNoPad = 2, kPoolMaxDeterministic = 3 };
enum : int { kPropagateNan = 1 };
enum : int { kSoftmaxAccurate = 1, kSoftmaxLog = 2, kSoftmaxChannel = 1 };

struct AlgoPerf {  // cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism, math_type;
  int reserved[3];
};

struct Api {
  Status (*create)(void**) = nullptr;
  const char* (*error_string)(Status) = nullptr;
  Status (*tensor_create)(Desc*) = nullptr;
  Status (*tensor_set)(Desc, int, int, int, int, int, int) = nullptr;
  Status (*filter_create)(Desc*) = nullptr;
  Status (*filter_set)(Desc, int, int, int, int, int, int) = nullptr;
  Status (*conv_create)(Desc*) = nullptr;
  Status (*conv_set)(Desc, int, int, int, int, int, int, int, int) = nullptr;
  Status (*conv_groups)(Desc, int) = nullptr;
  Status (*conv_math)(Desc, int) = nullptr;
  Status (*algorithm)(void*, Desc, Desc, Desc, Desc, int, int*, AlgoPerf*) = nullptr;
  Status (*workspace_size)(void*, Desc, Desc, Desc, Desc, int, size_t*) = nullptr;
  Status (*forward)(void*, const void*, Desc, const void*, Desc, const void*, Desc, int, void*, size_t, const void*, Desc,
                    void*) = nullptr;
  Status (*add_tensor)(void*, const void*, Desc, const void*, const void*, Desc, void*) = nullptr;
  Status (*data_algorithm)(void*, Desc, Desc, Desc, Desc, int, int*, AlgoPerf*) = nullptr;
  Status (*data_workspace_size)(void*, Desc, Desc, Desc, Desc, int, size_t*) = nullptr;
  Status (*backward_data)(void*, const void*, Desc, const void*, Desc, const void*, Desc, int, void*, size_t, const void*,
                          Desc, void*) = nullptr;
  Status (*filter_algorithm)(void*, Desc, Desc, Desc, Desc, int, int*, AlgoPerf*) = nullptr;
  Status (*filter_workspace_size)(void*, Desc, Desc, Desc, Desc, int, size_t*) = nullptr;
  Status (*backward_filter)(void*, const void*, Desc, const void*, Desc, const void*, Desc, int, void*, size_t,
                            const void*, Desc, void*) = nullptr;
  Status (*backward_bias)(void*, const void*, Desc, const void*, const void*, Desc, void*) = nullptr;
  // batch norm (spatial: per channel over N, H, W)
  Status (*bn_train)(void*, int, const void*, const void*, Desc, const void*, Desc, void*, Desc, const void*, const void*,
                     double, void*, void*, double, void*, void*) = nullptr;
  Status (*bn_infer)(void*, int, const void*, const void*, Desc, const void*, Desc, void*, Desc, const void*, const void*,
                     const void*, const void*, double) = nullptr;
  Status (*bn_backward)(void*, int, const void*, const void*, const void*, const void*, Desc, const void*, Desc,
                        const void*, Desc, void*, Desc, const void*, void*, void*, double, const void*,
                        const void*) = nullptr;
  // pooling
  Status (*pool_create)(Desc*) = nullptr;
  Status (*pool_set)(Desc, int, int, int, int, int, int, int, int) = nullptr;
  Status (*pool_forward)(void*, Desc, const void*, Desc, const void*, const void*, Desc, void*) = nullptr;
  Status (*pool_backward)(void*, Desc, const void*, Desc, const void*, Desc, const void*, Desc, const void*, const void*,
                          Desc, void*) = nullptr;
  // softmax
  Status (*softmax)(void*, int, int, const void*, Desc, const void*, const void*, Desc, void*) = nullptr;
  void* handle = nullptr;
};

// The API with its handle; raises pj::Error (RuntimeError) saying why when no GPU is usable or
// cuDNN does not load.
const Api& api();
// Raises "<call> failed: <cuDNN's message>" unless st is success.
void check(Status st, const char* call);
// A new NCHW float32 tensor descriptor (kept for the process: plans cache theirs).
Desc tensor(int n, int c, int h, int w);

}  // namespace pj::cuda::cudnn
