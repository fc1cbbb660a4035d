#include "kernels/cuda/driver.h"

#include <dlfcn.h>

#include <mutex>
#include <unordered_map>

#include "common/check.h"
#include "kernels/cuda/backend.h"

namespace pj::cuda {

namespace {

// The driver API's C types, spelled out (cuda.h's values): no header is needed to build this file.
using Result = int;
using Ptr = unsigned long long;
enum : int { kAttrMultiprocessors = 16, kAttrMajor = 75, kAttrMinor = 76 };
enum : int { kJitErrorLog = 5, kJitErrorLogBytes = 6 };
enum : int { kStreamNonBlocking = 1, kCaptureThreadLocal = 1 };

struct Driver {
  Result (*init)(unsigned) = nullptr;
  Result (*device_get)(int*, int) = nullptr;
  Result (*attribute)(int*, int, int) = nullptr;
  Result (*primary_retain)(void**, int) = nullptr;
  Result (*set_current)(void*) = nullptr;
  Result (*alloc)(Ptr*, size_t) = nullptr;      // cuMemAlloc_v2
  Result (*free)(Ptr) = nullptr;                // cuMemFree_v2
  Result (*htod)(Ptr, const void*, size_t) = nullptr;
  Result (*dtoh)(void*, Ptr, size_t) = nullptr;
  Result (*dtod_async)(Ptr, Ptr, size_t, void*) = nullptr;
  Result (*load)(void**, const void*, unsigned, int*, void**) = nullptr;  // cuModuleLoadDataEx
  Result (*function)(void**, void*, const char*) = nullptr;
  Result (*launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                   void**) = nullptr;
  Result (*sync)() = nullptr;
  Result (*event_create)(void**, unsigned) = nullptr;
  Result (*event_record)(void*, void*) = nullptr;
  Result (*event_sync)(void*) = nullptr;
  Result (*event_elapsed)(float*, void*, void*) = nullptr;
  Result (*event_destroy)(void*) = nullptr;
  Result (*stream_create)(void**, unsigned) = nullptr;
  Result (*stream_destroy)(void*) = nullptr;
  Result (*stream_sync)(void*) = nullptr;
  Result (*begin_capture)(void*, int) = nullptr;
  Result (*end_capture)(void*, void**) = nullptr;
  Result (*instantiate)(void**, void*, unsigned long long) = nullptr;
  Result (*graph_launch)(void*, void*) = nullptr;
  Result (*graph_destroy)(void*) = nullptr;
  Result (*exec_destroy)(void*) = nullptr;
  Result (*error_name)(Result, const char**) = nullptr;
  Result (*error_string)(Result, const char**) = nullptr;
  void* context = nullptr;  // device 0's primary context
  int device = 0;
  std::string why;          // not empty: the driver cannot be used, and why
};

std::string describe(const Driver& d, Result rc) {
  const char *name = "?", *text = "";
  if (d.error_name) d.error_name(rc, &name);
  if (d.error_string) d.error_string(rc, &text);
  return std::string(name) + " (" + text + ")";
}

const Driver& driver() {
  static const Driver drv = [] {
    Driver d;
    if (!backend().usable) return d.why = "no usable GPU: " + backend().why, d;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return d.why = std::string("the NVIDIA driver's libcuda.so.1 does not load: ") + dlerror(), d;
    Symbols sym(lib);
    sym(d.error_name, "cuGetErrorName");
    sym(d.error_string, "cuGetErrorString");
    sym(d.init, "cuInit");
    sym(d.device_get, "cuDeviceGet");
    sym(d.attribute, "cuDeviceGetAttribute");
    sym(d.primary_retain, "cuDevicePrimaryCtxRetain");
    sym(d.set_current, "cuCtxSetCurrent");
    sym(d.alloc, "cuMemAlloc_v2");
    sym(d.free, "cuMemFree_v2");
    sym(d.htod, "cuMemcpyHtoD_v2");
    sym(d.dtoh, "cuMemcpyDtoH_v2");
    sym(d.dtod_async, "cuMemcpyDtoDAsync_v2");
    sym(d.load, "cuModuleLoadDataEx");
    sym(d.function, "cuModuleGetFunction");
    sym(d.launch, "cuLaunchKernel");
    sym(d.sync, "cuCtxSynchronize");
    sym(d.event_create, "cuEventCreate");
    sym(d.event_record, "cuEventRecord");
    sym(d.event_sync, "cuEventSynchronize");
    sym(d.event_elapsed, "cuEventElapsedTime_v2");
    sym(d.event_destroy, "cuEventDestroy_v2");
    sym(d.stream_create, "cuStreamCreate");
    sym(d.stream_destroy, "cuStreamDestroy_v2");
    sym(d.stream_sync, "cuStreamSynchronize");
    sym(d.begin_capture, "cuStreamBeginCapture_v2");
    sym(d.end_capture, "cuStreamEndCapture");
    sym(d.instantiate, "cuGraphInstantiateWithFlags");
    sym(d.graph_launch, "cuGraphLaunch");
    sym(d.graph_destroy, "cuGraphDestroy");
    sym(d.exec_destroy, "cuGraphExecDestroy");
    if (!sym.all()) return d.why = "libcuda.so.1 lacks a driver function pijit calls", d;
    Result rc = d.init(0);
    if (rc == 0) rc = d.device_get(&d.device, 0);
    if (rc == 0) rc = d.primary_retain(&d.context, d.device);
    if (rc != 0) d.why = "the CUDA driver does not start on device 0: " + describe(d, rc);
    return d;
  }();
  return drv;
}

// The driver, with its context current on this thread; raises why it cannot be used.
const Driver& driver_ready() {
  const Driver& d = driver();
  if (!d.why.empty()) PJ_THROW(Runtime) << d.why;
  thread_local bool current = false;
  if (!current) {
    if (Result rc = d.set_current(d.context)) PJ_THROW(Runtime) << "cuCtxSetCurrent failed: " << describe(d, rc);
    current = true;
  }
  return d;
}

void check(const Driver& d, Result rc, const char* call) {
  if (rc != 0) PJ_THROW(Runtime) << call << " failed: " << describe(d, rc);
}

int attribute(int which) {
  const Driver& d = driver_ready();
  int v = 0;
  check(d, d.attribute(&v, which, d.device), "cuDeviceGetAttribute");
  return v;
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  const Driver& d = driver_ready();
  Ptr p = 0;
  if (Result rc = d.alloc(&p, bytes ? bytes : 1))
    PJ_THROW(Runtime) << "cuMemAlloc of " << bytes << " bytes failed: " << describe(d, rc);
  ptr_ = static_cast<uintptr_t>(p);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) driver().free(static_cast<Ptr>(ptr_));  // (a failure here has nowhere to go)
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) driver().free(static_cast<Ptr>(ptr_));
    ptr_ = o.ptr_, bytes_ = o.bytes_;
    o.ptr_ = 0, o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, size_t bytes) {
  PJ_CHECK(bytes <= bytes_) << "upload of " << bytes << " bytes into a buffer of " << bytes_;
  const Driver& d = driver_ready();
  check(d, d.htod(static_cast<Ptr>(ptr_), host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, size_t bytes) const {
  PJ_CHECK(bytes <= bytes_) << "download of " << bytes << " bytes from a buffer of " << bytes_;
  const Driver& d = driver_ready();
  check(d, d.dtoh(host, static_cast<Ptr>(ptr_), bytes), "cuMemcpyDtoH");
}

void* kernel_function(const std::string& ptx, const std::string& name) {
  const Driver& d = driver_ready();
  static std::mutex mu;
  static std::unordered_map<std::string, void*> modules;  // PTX -> module, kept loaded
  std::lock_guard<std::mutex> lock(mu);
  void*& module = modules[ptx];
  if (!module) {
    char log[8192] = {0};
    int options[] = {kJitErrorLog, kJitErrorLogBytes};
    void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log))};
    if (Result rc = d.load(&module, ptx.c_str(), 2, options, values)) {
      module = nullptr;
      PJ_THROW(Runtime) << "the driver does not load the PTX of " << name << ": " << describe(d, rc) << "\n" << log;
    }
  }
  void* fn = nullptr;
  if (Result rc = d.function(&fn, module, name.c_str()))
    PJ_THROW(Runtime) << "no kernel " << name << " in the module: " << describe(d, rc);
  return fn;
}

void launch(void* function, unsigned grid, unsigned block, void** params, void* stream) {
  const Driver& d = driver_ready();
  check(d, d.launch(function, grid, 1, 1, block, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
}

Stream::Stream() {
  const Driver& d = driver_ready();
  check(d, d.stream_create(&stream_, kStreamNonBlocking), "cuStreamCreate");
}

Stream::~Stream() {
  if (stream_) driver().stream_destroy(stream_);
}

void Stream::synchronize() const {
  const Driver& d = driver_ready();
  check(d, d.stream_sync(stream_), "cuStreamSynchronize");
}

CudaGraph::~CudaGraph() {
  if (exec_) driver().exec_destroy(exec_);
  if (graph_) driver().graph_destroy(graph_);
}

void CudaGraph::begin(const Stream& s) {
  PJ_CHECK(!capturing_ && !exec_) << "a CUDA graph is recorded once";
  const Driver& d = driver_ready();
  // thread-local mode: other threads' unrelated CUDA calls do not break this capture
  check(d, d.begin_capture(s.get(), kCaptureThreadLocal), "cuStreamBeginCapture");
  capturing_ = s.get();
}

void CudaGraph::end() {
  PJ_CHECK(capturing_) << "CudaGraph::end without begin";
  const Driver& d = driver_ready();
  void* stream = capturing_;
  capturing_ = nullptr;
  check(d, d.end_capture(stream, &graph_), "cuStreamEndCapture");
  check(d, d.instantiate(&exec_, graph_, 0), "cuGraphInstantiate");
}

void CudaGraph::launch(const Stream& s) const {
  PJ_CHECK(exec_) << "CudaGraph::launch before the graph was recorded";
  const Driver& d = driver_ready();
  check(d, d.graph_launch(exec_, s.get()), "cuGraphLaunch");
}

void synchronize() {
  const Driver& d = driver_ready();
  check(d, d.sync(), "cuCtxSynchronize");
}

void copy_on_device(void* dst, const void* src, size_t bytes) {
  const Driver& d = driver_ready();
  check(d, d.dtod_async(reinterpret_cast<Ptr>(dst), reinterpret_cast<Ptr>(src), bytes, nullptr), "cuMemcpyDtoDAsync");
}

int device_arch() { return attribute(kAttrMajor) * 10 + attribute(kAttrMinor); }
int device_multiprocessors() { return attribute(kAttrMultiprocessors); }

namespace detail {

void* event_record() {
  const Driver& d = driver_ready();
  void* e = nullptr;
  check(d, d.event_create(&e, 0), "cuEventCreate");
  check(d, d.event_record(e, nullptr), "cuEventRecord");
  return e;
}

float event_elapsed_ms(void* start, void* stop) {
  const Driver& d = driver_ready();
  float ms = 0;
  Result rc = d.event_sync(stop);
  if (rc == 0) rc = d.event_elapsed(&ms, start, stop);
  d.event_destroy(start);
  d.event_destroy(stop);
  check(d, rc, "cuEventElapsedTime");
  return ms;
}

}  // namespace detail

}  // namespace pj::cuda
