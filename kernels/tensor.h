// Tensors in memory: a reference-counted Storage plus a strided view of it.
//
// A Tensor is a cheap handle (shared_ptr to TensorImpl); views (reshape of contiguous data,
// transpose, slicing, broadcast_to) share the Storage and differ in shape/strides/offset. Strides
// and offsets count elements, not bytes. Shapes are small inline vectors. Nothing here knows about
// Python; the buffer protocol and numpy interop live in pyext/.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/container/inlined_vector.h"
#include "common/check.h"
#include "kernels/dtype.h"

namespace pj {

using Shape = absl::InlinedVector<int64_t, 6>;

enum class Device : uint8_t { CPU = 0, GPU = 1 };

// A block of memory. Either owned (allocated 64-byte aligned here) or borrowed from an external
// owner (kept alive by `keepalive`), e.g. a Python buffer.
class Storage {
 public:
  // MemoryError (pj::Error Memory) naming the bytes when the block cannot be had.
  static std::shared_ptr<Storage> allocate(size_t nbytes, Device device = Device::CPU);
  // nullptr when the block cannot be had (the caller names what it was for).
  static std::shared_ptr<Storage> try_allocate(size_t nbytes);
  static std::shared_ptr<Storage> borrow(void* data, size_t nbytes, std::shared_ptr<void> keepalive);
  ~Storage();
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // Write versions. Whoever writes into data it did not just allocate (an in-place operator,
  // `t[...] = v`, an op that updates an input such as batch_norm's running statistics) calls
  // note_write(), so data derived from these bytes (oneDNN's reordered weights) is rebuilt only
  // when the version moved. A writable buffer export (numpy, memoryview) or borrowed memory can
  // change without telling: `versioned()` is false then, and such caches must not trust version().
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  void note_write() { version_.fetch_add(1, std::memory_order_acq_rel); }
  bool versioned() const { return !borrowed_ && external_writers_.load(std::memory_order_acquire) == 0; }
  void begin_external_write() { external_writers_.fetch_add(1, std::memory_order_acq_rel); }
  void end_external_write() {  // the writer may have written: a new version
    note_write();
    external_writers_.fetch_sub(1, std::memory_order_acq_rel);
  }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  size_t capacity_ = 0;  // owned: the block's size (the allocator's cache may give a larger one)
  Device device_ = Device::CPU;
  bool owned_ = false;
  bool borrowed_ = false;
  std::atomic<uint64_t> version_{0};
  std::atomic<int> external_writers_{0};
  std::shared_ptr<void> keepalive_;
};

// Storage blocks the allocator keeps for reuse (large ones: see tensor.cc), and giving them back.
size_t cached_storage_bytes();
void release_cached_storage();

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape;
  Shape strides;       // in elements; 0 for broadcast dimensions
  DType dtype = DType::Float32;
  int64_t numel = 1;
  // >= 0: a symbolic tensor standing for value `sym` of a graph being captured. It has shape and
  // dtype but no storage; capture/ records ops on it instead of running kernels, and the Python
  // boundary refuses to read its data (capture then stops with a data-dependence reason).
  int64_t sym = -1;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A new, uninitialised, contiguous tensor.
  static Tensor empty(const Shape& shape, DType dtype);
  static Tensor zeros(const Shape& shape, DType dtype);
  // A 0-d tensor holding a scalar converted to `dtype`.
  static Tensor scalar(double v, DType dtype);
  static Tensor scalar_int(int64_t v, DType dtype);
  // A view of existing storage.
  static Tensor view_of(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides,
                        int64_t offset, DType dtype);
  // A symbolic tensor (see TensorImpl::sym): contiguous geometry, no storage.
  static Tensor symbolic(const Shape& shape, DType dtype, int64_t sym);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl_->shape; }
  const Shape& strides() const { return impl_->strides; }
  int64_t dim(int i) const { return impl_->shape[i]; }
  int64_t stride(int i) const { return impl_->strides[i]; }
  int ndim() const { return static_cast<int>(impl_->shape.size()); }
  int64_t numel() const { return impl_->numel; }
  DType dtype() const { return impl_->dtype; }
  int64_t offset() const { return impl_->offset; }
  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  Device device() const { return impl_->storage ? impl_->storage->device() : Device::CPU; }
  bool is_symbolic() const { return impl_->sym >= 0; }
  int64_t sym() const { return impl_->sym; }
  int64_t nbytes() const { return numel() * itemsize(dtype()); }  // view_of checked it fits

  // Pointer to the first element of the view (storage base + offset).
  void* raw_data() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * itemsize(impl_->dtype);
  }
  template <typename T>
  T* data() const {
    PJ_DCHECK(dtype_of<T>::value == dtype()) << "data<T>() with wrong T";
    return static_cast<T*>(raw_data());
  }

  bool is_contiguous() const;
  // This tensor if contiguous, else a contiguous copy.
  Tensor contiguous() const;
  // A contiguous copy, always.
  Tensor clone() const;
  // Same storage, new geometry.
  Tensor as_strided(const Shape& shape, const Shape& strides, int64_t offset) const;
  bool same_storage(const Tensor& o) const { return storage() == o.storage(); }
  // Reads element `i` (row-major logical order) as double / int64, for tests and printing.
  double item_double(int64_t i = 0) const;
  int64_t item_int(int64_t i = 0) const;
  // Element storage offset (in elements, from raw_data) of logical linear index i.
  int64_t element_offset(int64_t i) const;

  const TensorImpl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// Shape and dtype without data: what op inference, graphs and guards reason about. The device and
// whether autodiff tracks the value are part of it (the execution plan picks kernels by device);
// layout is always strided row-major for now.
struct TensorMeta {
  Shape shape;
  DType dtype;
  Device device = Device::CPU;
  bool requires_grad = false;
  bool operator==(const TensorMeta& o) const {
    return shape == o.shape && dtype == o.dtype && device == o.device && requires_grad == o.requires_grad;
  }
};

// Every product of dims goes through these (STYLE: one mechanism, not a check per call site): a
// negative dim or an element or byte count that does not fit in int64 raises ValueError naming the
// shape, as numpy's "array is too big" does. Zero dims are skipped while checking, as numpy does:
// (2**31, 0) is an empty shape, (2**62, 2**62, 0) is still too big.
// A tensor has at most kMaxDims dims (numpy 2's limit): code that walks dims recursively (the
// printer, index plans) then has a bounded depth.
constexpr int kMaxDims = 64;
int64_t shape_numel(const Shape& s);
int64_t shape_nbytes(const Shape& s, DType dtype);
// a * b, or ValueError naming `what` when it does not fit in int64 (dims and counts are >= 0).
int64_t checked_mul(int64_t a, int64_t b, const char* what);
// Human-readable byte count for MemoryError messages ("8.00 TiB").
std::string bytes_str(uint64_t n);
Shape contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& s);       // "(2, 3)" as numpy prints it
std::string shape_list_str(const Shape& s);  // "[2, 3]" as MindSpore prints it
// Normalises a possibly negative axis against ndim; raises IndexError-like ValueError naming both.
int normalize_axis(int64_t axis, int ndim);
// numpy broadcasting of two shapes; raises ValueError naming both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Strides that view `t` as `shape` (numpy broadcasting, 0 strides for new/expanded dims).
Shape broadcast_strides(const Tensor& t, const Shape& shape);

}  // namespace pj
