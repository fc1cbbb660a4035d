// The CUDA backend's view of the machine: what pijit was built with, which CUDA libraries load,
// the driver, and each visible device.
//
// The libraries (cudart, cuBLASLt, NVRTC, cuDNN) are opened at run time (dlopen), never linked:
// a build with the backend imports and runs everything on the CPU on a machine without a driver,
// a GPU or the libraries, and backend().why says which is missing. A build without it (CMake
// PIJIT_CUDA=OFF, or AUTO with no toolkit or cuDNN found) says that instead.
//
// Status (issue 19): the probe, the device queries (pijit.hal, device_context, sysinfo), the fused
// kernels (fused_cuda.h, nvrtc.h), matmul (matmul_cuda.h) and convolution (conv_cuda.h) run on a
// GPU from C++ (driver.h); no Python-visible tensor lives on the device yet, so
// device_target="GPU" is refused even where a device is usable (ops would silently run on the CPU).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pj::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;             // "NVIDIA H100 80GB HBM3"
  int major = 0, minor = 0;     // compute capability
  size_t total_memory = 0;      // bytes
  int multiprocessors = 0;
};

struct BackendInfo {
  bool built = false;           // the backend is in this build
  std::string built_with;       // "CUDA 13.0, cuDNN 9.19.0, cuBLAS 13.1.0" (empty: not built)
  bool usable = false;          // a device, a driver and every library are there
  std::string why;              // !usable: what is missing, in a sentence
  int runtime_version = 0;      // cudart found at run time (13000 for 13.0); 0: not loaded
  int driver_version = 0;       // the newest CUDA version the driver supports; 0: no driver
  std::string cudnn, cublas, nvrtc;  // versions of the libraries found ("" when not loaded)
  std::vector<DeviceInfo> devices;
};

// Probed once, on first use (thread-safe).
const BackendInfo& backend();

// "13.0" from 13000, "" from 0.
std::string cuda_version_text(int v);

// A CUDA library of the version pijit was built against ("libnvrtc", "libcudart", ...), opened
// once (dlopen); null with *error set when it cannot be, or when the backend is not built.
void* cuda_library(const std::string& stem, std::string* error);

// The functions a loader takes from an opened library: sym(f, "name") sets the function pointer f
// (null when the library lacks it), all() says whether every one was found.
class Symbols {
 public:
  explicit Symbols(void* lib) : lib_(lib) {}
  template <typename F>
  void operator()(F& f, const char* name) {
    f = reinterpret_cast<F>(lookup(name));
    all_ = all_ && f;
  }
  bool all() const { return all_; }

 private:
  void* lookup(const char* name) const;
  void* lib_;
  bool all_ = true;
};

}  // namespace pj::cuda
