#include "kernels/cuda/backend.h"

#include <dlfcn.h>

#ifdef PIJIT_CUDA_BUILT
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cudnn_version.h>
#endif

namespace pj::cuda {

std::string cuda_version_text(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

#ifdef PIJIT_CUDA_BUILT
namespace {

#define PJ_STR2(x) #x
#define PJ_STR(x) PJ_STR2(x)

// A library by its versioned soname (the major version pijit was built against), then in the
// toolkit's library folder seen at configure time.
void* open_library(const std::string& stem, int major, std::string* error) {
  const std::string so = stem + ".so." + std::to_string(major);
  for (const std::string& path : {so, std::string(PIJIT_CUDA_LIBDIR) + "/" + so}) {
    if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    if (error->empty() && e) *error = e;
  }
  return nullptr;
}

template <typename F>
F symbol(void* lib, const char* name) {
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

std::string missing(const std::string& what, const std::string& so, const std::string& error) {
  return what + " (" + so + ") was not found: " + error;
}

BackendInfo probe() {
  BackendInfo b;
  b.built = true;
  b.built_with = "CUDA " + cuda_version_text(CUDART_VERSION) + ", cuDNN " PJ_STR(CUDNN_MAJOR) "." PJ_STR(CUDNN_MINOR) "." PJ_STR(
      CUDNN_PATCHLEVEL) ", cuBLAS " PJ_STR(CUBLAS_VER_MAJOR) "." PJ_STR(CUBLAS_VER_MINOR) "." PJ_STR(CUBLAS_VER_PATCH);
  const int cuda_major = CUDART_VERSION / 1000;
  std::vector<std::string> problems;

  std::string err;
  void* cudart = open_library("libcudart", cuda_major, &err);
  if (!cudart) problems.push_back(missing("the CUDA runtime", "libcudart.so." + std::to_string(cuda_major), err));
  auto runtime_version = symbol<cudaError_t (*)(int*)>(cudart, "cudaRuntimeGetVersion");
  auto driver_version = symbol<cudaError_t (*)(int*)>(cudart, "cudaDriverGetVersion");
  auto device_count = symbol<cudaError_t (*)(int*)>(cudart, "cudaGetDeviceCount");
  auto error_name = symbol<const char* (*)(cudaError_t)>(cudart, "cudaGetErrorName");
  auto error_string = symbol<const char* (*)(cudaError_t)>(cudart, "cudaGetErrorString");
  auto properties = symbol<cudaError_t (*)(cudaDeviceProp*, int)>(cudart, "cudaGetDeviceProperties_v2");
  if (!properties) properties = symbol<cudaError_t (*)(cudaDeviceProp*, int)>(cudart, "cudaGetDeviceProperties");
  if (cudart && !(runtime_version && driver_version && device_count && error_name && error_string && properties))
    problems.push_back("libcudart.so." + std::to_string(cuda_major) + " lacks a function pijit calls (cudaRuntimeGetVersion, "
                       "cudaDriverGetVersion, cudaGetDeviceCount, cudaGetErrorName/String, cudaGetDeviceProperties)");

  err.clear();
  void* cublaslt = open_library("libcublasLt", CUBLAS_VER_MAJOR, &err);
  if (auto v = symbol<size_t (*)()>(cublaslt, "cublasLtGetVersion")) {
    const size_t n = v();
    b.cublas = std::to_string(n / 10000) + "." + std::to_string(n / 100 % 100) + "." + std::to_string(n % 100);
  } else {
    problems.push_back(missing("cuBLASLt", "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR), err));
  }
  err.clear();
  void* nvrtc = open_library("libnvrtc", cuda_major, &err);
  if (auto v = symbol<int (*)(int*, int*)>(nvrtc, "nvrtcVersion")) {
    int major = 0, minor = 0;
    v(&major, &minor);
    b.nvrtc = std::to_string(major) + "." + std::to_string(minor);
  } else {
    problems.push_back(missing("NVRTC", "libnvrtc.so." + std::to_string(cuda_major), err));
  }
  err.clear();
  void* cudnn = open_library("libcudnn", CUDNN_MAJOR, &err);
  if (auto v = symbol<size_t (*)()>(cudnn, "cudnnGetVersion")) {
    const size_t n = v();  // 91900: 9.19.0
    b.cudnn = std::to_string(n / 10000) + "." + std::to_string(n / 100 % 100) + "." + std::to_string(n % 100);
  } else {
    problems.push_back(missing("cuDNN", "libcudnn.so." + std::to_string(CUDNN_MAJOR), err));
  }

  if (runtime_version && driver_version && device_count && error_name && error_string && properties) {
    runtime_version(&b.runtime_version);
    driver_version(&b.driver_version);
    int n = 0;
    const cudaError_t rc = device_count(&n);
    if (b.driver_version == 0) {
      problems.insert(problems.begin(), "no NVIDIA driver is installed (the CUDA runtime finds no libcuda.so.1)");
    } else if (rc != cudaSuccess) {
      problems.insert(problems.begin(), std::string("cudaGetDeviceCount failed: ") + error_name(rc) + ": " + error_string(rc));
    } else if (n == 0) {
      problems.insert(problems.begin(), "the NVIDIA driver sees no GPU");
    } else {
      for (int i = 0; i < n; ++i) {
        cudaDeviceProp p{};
        if (properties(&p, i) != cudaSuccess) continue;
        b.devices.push_back({i, p.name, p.major, p.minor, p.totalGlobalMem, p.multiProcessorCount});
      }
    }
    if (b.driver_version > 0 && b.driver_version < b.runtime_version)
      problems.push_back("the NVIDIA driver supports CUDA " + cuda_version_text(b.driver_version) +
                         ", older than the runtime's " + cuda_version_text(b.runtime_version));
  }
  b.usable = problems.empty() && !b.devices.empty();
  for (size_t k = 0; k < problems.size(); ++k) b.why += (k ? "; " : "") + problems[k];
  return b;
}

}  // namespace
#endif

void* cuda_library(const std::string& stem, std::string* error) {
#ifdef PIJIT_CUDA_BUILT
  const int major = stem == "libcudnn" ? CUDNN_MAJOR : stem == "libcublasLt" ? CUBLAS_VER_MAJOR : CUDART_VERSION / 1000;
  error->clear();
  return open_library(stem, major, error);  // (dlopen counts references: the same handle each time)
#else
  *error = backend().why;
  return nullptr;
#endif
}

void* Symbols::lookup(const char* name) const { return lib_ ? dlsym(lib_, name) : nullptr; }

const BackendInfo& backend() {
  static const BackendInfo info = [] {
#ifdef PIJIT_CUDA_BUILT
    return probe();
#else
    BackendInfo b;
    b.why = "this pijit was built without the GPU backend (CMake PIJIT_CUDA=OFF, or no CUDA toolkit and "
            "cuDNN were found when it was configured)";
    return b;
#endif
  }();
  return info;
}

}  // namespace pj::cuda
