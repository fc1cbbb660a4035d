#include "kernels/cuda/cudnn.h"


#include <string>

#include "common/check.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/driver.h"

namespace pj::cuda::cudnn {

namespace {

struct Loaded {
  Api api;
  std::string why;
};

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded r;
    if (!backend().usable) return r.why = "no usable GPU: " + backend().why, r;
    void* lib = cuda_library("libcudnn", &r.why);
    if (!lib) return r;
    Symbols sym(lib);
    Api& a = r.api;
    sym(a.create, "cudnnCreate");
    sym(a.error_string, "cudnnGetErrorString");
    sym(a.tensor_create, "cudnnCreateTensorDescriptor");
    sym(a.tensor_set, "cudnnSetTensor4dDescriptor");
    sym(a.filter_create, "cudnnCreateFilterDescriptor");
    sym(a.filter_set, "cudnnSetFilter4dDescriptor");
    sym(a.conv_create, "cudnnCreateConvolutionDescriptor");
    sym(a.conv_set, "cudnnSetConvolution2dDescriptor");
    sym(a.conv_groups, "cudnnSetConvolutionGroupCount");
    sym(a.conv_math, "cudnnSetConvolutionMathType");
    sym(a.algorithm, "cudnnGetConvolutionForwardAlgorithm_v7");
    sym(a.workspace_size, "cudnnGetConvolutionForwardWorkspaceSize");
    sym(a.forward, "cudnnConvolutionForward");
    sym(a.add_tensor, "cudnnAddTensor");
    sym(a.data_algorithm, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    sym(a.data_workspace_size, "cudnnGetConvolutionBackwardDataWorkspaceSize");
    sym(a.backward_data, "cudnnConvolutionBackwardData");
    sym(a.filter_algorithm, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    sym(a.filter_workspace_size, "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    sym(a.backward_filter, "cudnnConvolutionBackwardFilter");
    sym(a.backward_bias, "cudnnConvolutionBackwardBias");
    sym(a.bn_train, "cudnnBatchNormalizationForwardTraining");
    sym(a.bn_infer, "cudnnBatchNormalizationForwardInference");
    sym(a.bn_backward, "cudnnBatchNormalizationBackward");
    sym(a.pool_create, "cudnnCreatePoolingDescriptor");
    sym(a.pool_set, "cudnnSetPooling2dDescriptor");
    sym(a.pool_forward, "cudnnPoolingForward");
    sym(a.pool_backward, "cudnnPoolingBackward");
    sym(a.softmax, "cudnnSoftmaxForward");
    if (!sym.all()) return r.why = "libcudnn lacks a function pijit calls", r;
    DeviceBuffer probe(1);  // the driver's context is current before cuDNN starts
    if (Status st = a.create(&a.handle)) r.why = std::string("cudnnCreate failed: ") + a.error_string(st);
    return r;
  }();
  return l;
}

}  // namespace

const Api& api() {
  const Loaded& l = loaded();
  if (!l.why.empty()) PJ_THROW(Runtime) << l.why;
  return l.api;
}

void check(Status st, const char* call) {
  if (st != 0) PJ_THROW(Runtime) << call << " failed: " << api().error_string(st);
}

Desc tensor(int n, int c, int h, int w) {
  const Api& a = api();
  Desc d = nullptr;
  check(a.tensor_create(&d), "cudnnCreateTensorDescriptor");
  check(a.tensor_set(d, kNchw, kFloat, n, c, h, w), "cudnnSetTensor4dDescriptor");
  return d;
}

}  // namespace pj::cuda::cudnn
