// The process-wide oneDNN engine, a stream per thread, and a cache of primitives keyed by
// descriptor so a repeated eager call (same op, shapes, dtypes, attributes) reuses the compiled
// primitive.
//
// Threads. Primitives are cached and shared, so one made on one thread runs on others (a Python
// program's threads, concurrent launches of one graph, vmap with the GIL released). Debian's oneDNN
// is built without DNNL_ENABLE_CONCURRENT_EXEC: its library-managed scratchpad is sized on the
// thread that created the primitive and shared by all primitives, so a primitive may neither
// migrate between threads nor run concurrently with another. Every primitive pijit makes therefore
// has a user-managed scratchpad (primitive_attr from scratchpad_attr()) and runs through
// execute(), which hands it this thread's scratch buffer.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "kernels/bounded_cache.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pj {

dnnl::engine& dnnl_engine();
dnnl::stream& dnnl_stream();  // this thread's

// `attr` with a user-managed scratchpad: what every primitive pijit creates is made with.
dnnl::primitive_attr scratchpad_attr(dnnl::primitive_attr attr = dnnl::primitive_attr());
// This thread's scratch buffer `slot`, at least `bytes` long (64-byte aligned; valid until the next
// call on this thread asks that slot for more). Primitives' scratchpads use slot 0; kernels that
// reorder activations into a primitive's layout hold them in the other slots for the length of one
// call. Every geometry then reuses the same memory, still in cache, where buffers of their own per
// geometry multiplied what a loop over batch sizes touches (measured: a CNN training step 14%
// slower alternating two batch sizes than repeating one).
enum ScratchSlot { kScratchpadSlot = 0, kSrcSlot = 1, kDstSlot = 2, kAuxSlot = 3, kNumScratchSlots = 4 };
void* thread_scratch_buffer(size_t bytes, int slot = kScratchpadSlot);
// `*mem` (made on first use) over `md` in this thread's scratch `slot`: a memory object reused when
// the caller owns it for the call (`reuse`), else a new one.
dnnl::memory thread_slot_memory(dnnl::memory* mem, const dnnl::memory::desc& md, int slot, bool reuse);
// This thread's scratchpad for `prim` (a memory over a thread-local buffer grown as needed), or an
// empty memory when it needs none.
dnnl::memory thread_scratchpad(const dnnl::primitive& prim);
// Runs `prim` on this thread's stream with this thread's scratchpad, and waits.
void execute(const dnnl::primitive& prim, std::unordered_map<int, dnnl::memory> args);
// The same for a reorder from `src` to `dst`.
void execute_reorder(const dnnl::reorder& r, const dnnl::memory& src, const dnnl::memory& dst);

// A plan's argument memory objects, made once per layout and rebound to each call's buffers, and
// an execute without per-call allocations (making a memory object, the argument map and the
// scratchpad's memory cost ~2 us of a small convolution). One primitive per BoundArgs; the caller
// owns it for the call (its plan's lock).
class BoundArgs {
 public:
  // The memory object over `md` (one per md object, which must outlive this) bound to `ptr`.
  const dnnl::memory& at(const dnnl::memory::desc& md, const void* ptr);
  // Runs `prim` with these arguments (a null memory: the argument is left out, an optional bias)
  // and this thread's scratchpad, and waits.
  void execute(const dnnl::primitive& prim, std::initializer_list<std::pair<int, const dnnl::memory*>> args);

 private:
  std::deque<std::pair<const dnnl::memory::desc*, dnnl::memory>> mems_;  // (references stay valid)
  dnnl::memory scratch_;
  size_t scratch_bytes_ = 0;
  bool scratch_known_ = false;
};

// Plans of one kind (everything about a geometry but the data) by their descriptor key, made with
// `make` on first use; bounded, least recently used out first (kernels/bounded_cache.h; plans in
// use live on through their shared_ptr). conv2d / conv_transpose2d, conv2d_weight_grad and dense
// keep theirs in one each, sized by PIJIT_PLAN_CACHE.
template <typename Plan>
using PlanCache = BoundedCache<std::shared_ptr<Plan>>;
constexpr size_t kDefaultPlanCache = 256;

// oneDNN primitives by descriptor key, sized by PIJIT_PRIMITIVE_CACHE (oneDNN's own primitive
// cache gets the same capacity unless DNNL_PRIMITIVE_CACHE_CAPACITY sets it).
class PrimitiveCache {
 public:
  static constexpr size_t kDefaultCapacity = 512;
  static PrimitiveCache& instance();
  // The primitive for `key`, created with `make` on first use.
  dnnl::primitive get(const std::string& key, const std::function<dnnl::primitive()>& make) {
    return cache_.get(key, make);
  }
  int64_t hits() { return cache_.hits(); }
  int64_t misses() { return cache_.misses(); }
  size_t size() { return cache_.size(); }
  size_t capacity() const { return cache_.capacity(); }
  void clear() { cache_.clear(); }

 private:
  BoundedCache<dnnl::primitive> cache_{"oneDNN primitives", "PIJIT_PRIMITIVE_CACHE", kDefaultCapacity};
};

// dnnl::memory::dims from a pijit shape; a 0-d shape becomes {1}.
dnnl::memory::dims to_dnnl_dims(const int64_t* shape, int n);

}  // namespace pj
