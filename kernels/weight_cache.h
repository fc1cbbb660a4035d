// Weights in the layout a oneDNN primitive prefers, reordered once per weight version.
//
// oneDNN's fastest convolution and matmul kernels read weights in blocked layouts of their own.
// Reordering on every call costs a full pass over the weights plus a fresh buffer (page faults for
// big ones), so the reordered copy is kept, keyed by the weights' storage, view (offset, shape,
// strides) and the two layouts. A hit is taken only when the bytes cannot have changed since the
// copy was made: the storage is the same object and its write version (Storage::version, bumped by
// every in-place write) has not moved. Storage that a writer outside pijit may change (a live
// writable buffer export, borrowed memory) has no trustworthy version: there each entry keeps a
// private plain copy and a hit costs one memcmp (parallel when large), which is never stale either.
//
// Entries are immutable and shared, so a concurrent call never sees a half-made copy; an entry
// whose storage died is dropped; the cache is LRU, bounded by entries and bytes. A new version
// reorders into the stale entry's buffer when nothing else holds it: a fresh buffer of a big layer
// costs its page faults (300 ms for 9216x4096 here, against 16 ms for the reorder itself).
//
// Weights written before every use (a training loop) are better read in their own layout: a copy
// made for one use costs a pass over the weights per step. A prepared kernel tells from its
// WeightMemo; an eager call, which has no memo of its own, asks written_each_use().
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "kernels/tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pj {

// `mem` holds the weights in the wanted layout while the caller holds `keep`.
struct CachedWeights {
  dnnl::memory mem;
  std::shared_ptr<const void> keep;
};

// `w` in layout `want`: `user` describes w.contiguous() to oneDNN and `reorder` maps user -> want.
// When the layouts are equal, w's own bytes (no copy, no cache entry).
CachedWeights reordered_weights(const Tensor& w, const dnnl::memory::desc& user, const dnnl::memory::desc& want,
                                const dnnl::reorder& reorder);

// A prepared kernel's memo of the weights it used last: when the same storage comes back at the
// same view and version, the copy is reused without building a key or taking the cache's lock.
// Thread-safe; a miss goes to reordered_weights.
class WeightMemo {
 public:
  CachedWeights get(const Tensor& w, const dnnl::memory::desc& user, const dnnl::memory::desc& want,
                    const dnnl::reorder& reorder);
  // Called once per launch: written_each_use(w). A copy made for one use costs a full pass over
  // the weights per step (50 us for 784x256 here, as long as the matmul it feeds), so such a
  // caller reads the weights in their own layout instead. Tracked per weight, not per memo: a
  // compiled graph, and so its memo, serves every layer of its shape (two Dense layers of one
  // shape alternating reset a per-memo count at every launch).
  bool trained(const Tensor& w);

 private:
  std::mutex mu_;
  std::weak_ptr<Storage> owner_;
  const Storage* raw_ = nullptr;
  int64_t offset_ = -1;
  uint64_t version_ = 0;
  CachedWeights last_;
};

// For a caller without a memo of its own (an eager launch; call it once per launch): true when
// `w`'s storage got a new version before each of its last two uses, with at most two uses per
// version (a layer applied twice per step), as an optimizer's in-place update does.
// Tracked per storage and view offset; the reordered copy of weights found so is dropped (it is
// stale every step and would double their memory).
bool written_each_use(const Tensor& w);

struct WeightCacheStats {
  int64_t hits = 0;      // calls that reused a reordered copy
  int64_t reorders = 0;  // calls that reordered (first use, a new version, changed bytes, evicted)
  int64_t entries = 0;
  int64_t bytes = 0;     // reordered copies (and plain copies of unversioned weights) held
  int64_t recycled = 0;  // reorders into a stale entry's buffer (no fresh allocation)
};
WeightCacheStats weight_cache_stats();
void weight_cache_clear();

// A key of a memory descriptor (dims, blocking) in raw bytes: for cache keys, not for printing.
std::string md_key(const dnnl::memory::desc& md);

}  // namespace pj
