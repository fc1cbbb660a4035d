#include "kernels/tensor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include <sys/mman.h>

#include "kernels/copy.h"

namespace pj {

namespace {

// Freed blocks are kept and handed to the next allocation that fits. Large ones: glibc maps and
// unmaps each block above its mmap threshold, so a chain of ops on large tensors would page-fault
// on every byte of every output, every call; a large block is reused for a request of at least 3/4
// of its size. Small ones (under 64 KiB, sizes in 64-byte steps) by exact size: every eager op and
// graph output allocates one, and glibc's aligned allocation costs more than the op on a few
// elements (its large-bin path also consolidates the fast bins each time). What is kept is bounded
// (PIJIT_STORAGE_CACHE_MB, 1024 by default, small blocks 64 MiB of it; 0 keeps nothing), the
// largest given back first. Blocks of 2 MiB and more are huge-page aligned and advised (MADV_HUGEPAGE).
class BlockCache {
 public:
  static constexpr size_t kMinCached = size_t{1} << 16;  // 64 KiB
  static constexpr size_t kHuge = size_t{1} << 21;       // 2 MiB: a huge page
  static constexpr size_t kMaxSmall = size_t{64} << 20;  // small blocks kept: 64 MiB at most

  static BlockCache& get() {
    static BlockCache* cache = new BlockCache();  // never destroyed: storages may outlive statics
    return *cache;
  }
  BlockCache() {
    const char* mb = std::getenv("PIJIT_STORAGE_CACHE_MB");
    char* end = nullptr;
    long long v = mb && *mb ? std::strtoll(mb, &end, 10) : -1;
    if (v >= 0 && end && *end == '\0') max_cached_ = static_cast<size_t>(v) << 20;
  }
  static size_t rounded(size_t nbytes) {
    size_t r = (nbytes + 63) / 64 * 64;
    if (r >= kMinCached) r = (r + 4095) / 4096 * 4096;  // whole pages
    return r == 0 ? 64 : r;
  }
  // A block of at least `bytes`; *capacity: its size (give() takes it back with that).
  void* take(size_t bytes, size_t* capacity) {
    if (bytes < kMinCached) {
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<void*>& list = small_[bytes / 64];
      if (!list.empty()) {
        void* p = list.back();
        list.pop_back();
        cached_ -= bytes;
        small_bytes_ -= bytes;
        *capacity = bytes;
        return p;
      }
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.lower_bound(bytes);
      if (it != free_.end() && it->first / 4 * 3 <= bytes) {
        void* p = it->second;
        *capacity = it->first;
        cached_ -= it->first;
        free_.erase(it);
        return p;
      }
    }
    *capacity = bytes;
    if (bytes >= kHuge) {
      // 2 MiB-aligned and asked to be backed by transparent huge pages (where the kernel's THP mode
      // is "madvise"): a 64 MiB tensor takes ~40 page faults instead of 16384, and far fewer TLB
      // misses. The size is not rounded up: only the last partial 2 MiB uses small pages.
      void* p = nullptr;
      if (posix_memalign(&p, kHuge, bytes) != 0) return nullptr;
      madvise(p, bytes / kHuge * kHuge, MADV_HUGEPAGE);
      return p;
    }
    return std::aligned_alloc(64, bytes);
  }
  void give(void* p, size_t bytes) {
    if (bytes > max_cached_) {
      std::free(p);
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes < kMinCached) {
      // Small blocks are kept up to their own bound; past it they go back to malloc.
      if (small_bytes_ + bytes > std::min(kMaxSmall, max_cached_) || cached_ + bytes > max_cached_) {
        std::free(p);
        return;
      }
      small_[bytes / 64].push_back(p);
      small_bytes_ += bytes;
      cached_ += bytes;
      return;
    }
    while (cached_ + bytes > max_cached_ && !free_.empty()) {
      auto largest = std::prev(free_.end());
      std::free(largest->second);
      cached_ -= largest->first;
      free_.erase(largest);
    }
    free_.emplace(bytes, p);
    cached_ += bytes;
  }
  size_t cached() {
    std::lock_guard<std::mutex> lock(mu_);
    return cached_;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& kv : free_) std::free(kv.second);
    free_.clear();
    for (std::vector<void*>& list : small_) {
      for (void* p : list) std::free(p);
      list.clear();
    }
    small_bytes_ = 0;
    cached_ = 0;
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, void*> free_;  // size -> block
  std::vector<void*> small_[kMinCached / 64];  // blocks under 64 KiB, by size / 64 (sizes are rounded to 64)
  size_t small_bytes_ = 0;
  size_t cached_ = 0;
  size_t max_cached_ = size_t{1} << 30;
};

}  // namespace

std::shared_ptr<Storage> Storage::try_allocate(size_t nbytes) {
  auto s = std::make_shared<Storage>();
  s->data_ = BlockCache::get().take(BlockCache::rounded(nbytes), &s->capacity_);
  if (!s->data_) return nullptr;
  s->nbytes_ = nbytes;
  s->owned_ = true;
  return s;
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  PJ_CHECK(device == Device::CPU) << "GPU storage is allocated by the CUDA backend";
  std::shared_ptr<Storage> s = try_allocate(nbytes);
  if (!s) PJ_THROW(Memory) << "Unable to allocate " << bytes_str(nbytes) << " (" << nbytes << " bytes)";
  return s;
}

size_t cached_storage_bytes() { return BlockCache::get().cached(); }
void release_cached_storage() { BlockCache::get().release(); }

std::shared_ptr<Storage> Storage::borrow(void* data, size_t nbytes, std::shared_ptr<void> keepalive) {
  auto s = std::make_shared<Storage>();
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->borrowed_ = true;
  s->keepalive_ = std::move(keepalive);
  return s;
}

Storage::~Storage() {
  if (owned_) BlockCache::get().give(data_, capacity_);
}

namespace {

[[noreturn]] void too_big(const Shape& s, const char* what) {
  PJ_THROW(Value) << "tensor is too big: shape " << shape_str(s) << " has more " << what
                  << " than fit in 64 bits";
}

// The product of the nonzero dims, checked; *empty: a dim is 0.
int64_t nonzero_product(const Shape& s, bool* empty) {
  if (s.size() > static_cast<size_t>(kMaxDims))
    PJ_THROW(Value) << "maximum supported dimension for a tensor is " << kMaxDims << ", found " << s.size();
  int64_t n = 1;
  *empty = false;
  for (auto d : s) {
    if (d < 0) PJ_THROW(Value) << "negative dimensions are not allowed: " << shape_str(s);
    if (d == 0) {
      *empty = true;
      continue;
    }
    if (__builtin_mul_overflow(n, d, &n)) too_big(s, "elements");
  }
  return n;
}

}  // namespace

int64_t shape_numel(const Shape& s) {
  bool empty;
  int64_t n = nonzero_product(s, &empty);
  return empty ? 0 : n;
}

int64_t shape_nbytes(const Shape& s, DType dtype) {
  bool empty;
  int64_t n = nonzero_product(s, &empty), bytes;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(itemsize(dtype)), &bytes)) too_big(s, "bytes");
  return empty ? 0 : bytes;
}

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
    PJ_THROW(Value) << what << " " << a << " * " << b << " does not fit in 64 bits";
  return r;
}

std::string bytes_str(uint64_t n) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

Shape contiguous_strides(const Shape& shape) {
  Shape st(shape.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return st;
}

namespace {

// A tensor over `storage` whose checked byte count (shape_nbytes) the caller has.
Tensor make_tensor(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides, int64_t offset,
                   DType dtype, int64_t nbytes) {
  PJ_CHECK(shape.size() == strides.size());
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = dtype;
  impl->numel = nbytes / itemsize(dtype);
  return Tensor(std::move(impl));
}

}  // namespace

Tensor Tensor::view_of(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides,
                       int64_t offset, DType dtype) {
  // A view's geometry must be addressable too (numpy's "array is too big"): one checked pass.
  return make_tensor(std::move(storage), shape, strides, offset, dtype, shape_nbytes(shape, dtype));
}

Tensor Tensor::symbolic(const Shape& shape, DType dtype, int64_t sym) {
  PJ_CHECK(sym >= 0) << "symbolic tensor needs a value id";
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  impl->numel = shape_nbytes(shape, dtype) / itemsize(dtype);
  impl->sym = sym;
  return Tensor(std::move(impl));
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  const int64_t nbytes = shape_nbytes(shape, dtype);
  std::shared_ptr<Storage> storage = Storage::try_allocate(static_cast<size_t>(nbytes));
  if (!storage)
    PJ_THROW(Memory) << "Unable to allocate " << bytes_str(nbytes) << " (" << nbytes << " bytes) for a tensor with shape "
                     << shape_str(shape) << " and data type " << dtype_numpy_name(dtype);
  return make_tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype, nbytes);  // (checked above)
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memset(t.raw_data(), 0, t.nbytes());
  return t;
}

Tensor Tensor::scalar(double v, DType dtype) {
  Tensor t = empty({}, dtype);
  PJ_DISPATCH_STORAGE(dtype, [&] { *t.data<scalar_t>() = convert_scalar<scalar_t>(v); });
  return t;
}

Tensor Tensor::scalar_int(int64_t v, DType dtype) {
  Tensor t = empty({}, dtype);
  PJ_DISPATCH_STORAGE(dtype, [&] { *t.data<scalar_t>() = convert_scalar<scalar_t>(v); });
  return t;
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    if (dim(i) == 1) continue;
    if (stride(i) != expected) return numel() == 0;
    expected *= dim(i);
  }
  return true;
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  Tensor out = empty(shape(), dtype());
  copy_into(out, *this);
  return out;
}

Tensor Tensor::as_strided(const Shape& shape, const Shape& strides, int64_t offset) const {
  return view_of(storage(), shape, strides, offset, dtype());
}

int64_t Tensor::element_offset(int64_t i) const {
  int64_t off = 0;
  for (int d = ndim() - 1; d >= 0; --d) {
    int64_t n = dim(d);
    off += (i % n) * stride(d);
    i /= n;
  }
  return off;
}

double Tensor::item_double(int64_t i) const {
  int64_t off = element_offset(i);
  return PJ_DISPATCH_STORAGE(dtype(), [&]() -> double {
    return convert_scalar<double>(static_cast<const scalar_t*>(raw_data())[off]);
  });
}

int64_t Tensor::item_int(int64_t i) const {
  int64_t off = element_offset(i);
  return PJ_DISPATCH_STORAGE(dtype(), [&]() -> int64_t {
    return convert_scalar<int64_t>(static_cast<const scalar_t*>(raw_data())[off]);
  });
}

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += std::to_string(s[i]);
  }
  if (s.size() == 1) r += ",";
  return r + ")";
}

std::string shape_list_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

int normalize_axis(int64_t axis, int ndim) {
  int64_t lim = std::max(ndim, 1);
  if (axis < -lim || axis >= lim)
    PJ_THROW(Index) << "axis " << axis << " is out of bounds for tensor of dimension " << ndim;
  return static_cast<int>(axis < 0 ? axis + lim : axis);
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else
      PJ_THROW(Value) << "operands could not be broadcast together with shapes " << shape_str(a)
                      << " " << shape_str(b);
  }
  return out;
}

Shape broadcast_strides(const Tensor& t, const Shape& shape) {
  size_t n = shape.size();
  int nd = t.ndim();
  PJ_CHECK(static_cast<int>(n) >= nd) << "broadcast to fewer dims";
  Shape st(n, 0);
  for (int i = 0; i < nd; ++i) {
    size_t j = n - nd + i;
    if (t.dim(i) == shape[j]) st[j] = t.stride(i);
    else if (t.dim(i) == 1) st[j] = 0;
    else
      PJ_THROW(Value) << "cannot broadcast a tensor of shape " << shape_str(t.shape())
                      << " to shape " << shape_str(shape);
  }
  return st;
}

}  // namespace pj
