// Running code on the GPU through the CUDA driver API (libcuda.so.1, opened at run time like the
// other CUDA libraries: kernels/cuda/backend.h): device 0's primary context, device memory, modules
// loaded from PTX (the driver compiles them for the device it has) and kernel launches.
//
// This is the first layer the GPU ops stand on: the fused elementwise kernels launch through it
// (fused_cuda.h). The stream-ordered allocator, streams and CUDA graphs come with the ops that need
// them. Every call raises pj::Error (RuntimeError) naming the failing driver call and its error,
// or why no device is usable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pj::cuda {

// Device memory (cuMemAlloc), freed with the object.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = 0, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return reinterpret_cast<void*>(ptr_); }
  size_t bytes() const { return bytes_; }
  void upload(const void* host, size_t bytes);  // synchronous copies, bytes <= bytes()
  void download(void* host, size_t bytes) const;

 private:
  uintptr_t ptr_ = 0;
  size_t bytes_ = 0;
};

// A kernel of a module loaded from PTX, by its (extern "C") name. Modules are kept for the life of
// the process, one per PTX text: the same text gives the same function without reloading.
void* kernel_function(const std::string& ptx, const std::string& name);

// Launches `function` on `stream` (null: the default stream); `params` as cuLaunchKernel takes them
// (one pointer per kernel parameter, to its value).
void launch(void* function, unsigned grid, unsigned block, void** params, void* stream = nullptr);

// A stream of its own, not ordered with the default stream (CUDA graphs are captured on one).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* get() const { return stream_; }
  void synchronize() const;

 private:
  void* stream_ = nullptr;
};

// The kernels launched on a stream between begin() and end(), recorded once as a CUDA graph and
// replayed by launch(): a sequence of kernels for the price of one launch. Replays read and write
// the pointers the kernels were recorded with.
class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  void begin(const Stream& s);  // launches on s are recorded, not run, until end()
  void end();
  void launch(const Stream& s) const;
  bool ready() const { return exec_ != nullptr; }

 private:
  void* capturing_ = nullptr;  // the stream being recorded
  void* graph_ = nullptr;
  void* exec_ = nullptr;
};

// Waits for the device's work; raises what a kernel's failure left.
void synchronize();

// Device-to-device copy, asynchronous on the default stream (benchmarks: the memory's speed).
void copy_on_device(void* dst, const void* src, size_t bytes);

// Device 0's compute capability as 10 * major + minor (90 on an H100) and its multiprocessors.
int device_arch();
int device_multiprocessors();

// Elapsed device time of `fn`'s launches in ms (CUDA events around it, synchronized).
template <typename F>
float time_on_device(F&& fn);

namespace detail {
void* event_record();                       // a new event, recorded on the default stream
float event_elapsed_ms(void* start, void* stop);  // synchronizes on stop, destroys both
}  // namespace detail

template <typename F>
float time_on_device(F&& fn) {
  void* start = detail::event_record();
  fn();
  return detail::event_elapsed_ms(start, detail::event_record());
}

}  // namespace pj::cuda
