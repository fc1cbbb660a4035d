#include "kernels/weight_cache.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "kernels/dnnl_context.h"
#include "kernels/threading.h"

namespace pj {

namespace {
template <class T>
void put(std::string* k, const T* p, int n) {
  k->append(reinterpret_cast<const char*>(p), sizeof(T) * static_cast<size_t>(n));
}
}  // namespace

// (raw bytes, each count before what it counts, and no decimal formatting on an eager call's
// path: the kind, data type, dims, padding and blocking; not the `extra` a compensated int8
// layout adds, which pijit's cached weights never have)
std::string md_key(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  std::string k;
  k.reserve(32 + 24 * static_cast<size_t>(d.ndims));
  const int32_t head[3] = {static_cast<int32_t>(d.format_kind), static_cast<int32_t>(d.data_type), d.ndims};
  put(&k, head, 3);
  put(&k, &d.offset0, 1);
  put(&k, d.dims, d.ndims);
  put(&k, d.padded_dims, d.ndims);
  if (d.format_kind == dnnl_blocked) {
    const dnnl_blocking_desc_t& blk = d.format_desc.blocking;
    put(&k, blk.strides, d.ndims);
    put(&k, &blk.inner_nblks, 1);
    put(&k, blk.inner_blks, blk.inner_nblks);
    put(&k, blk.inner_idxs, blk.inner_nblks);
  }
  return k;
}

namespace {

// One reordered copy; immutable once published.
struct Entry {
  std::weak_ptr<Storage> owner;  // the weights' storage: once it dies the entry is dropped
  uint64_t version = 0;          // owner's version when the copy was made
  Tensor plain;                  // unversioned owners only: the bytes that were reordered
  dnnl::memory reordered;
  int64_t bytes = 0;
};

class Cache {
 public:
  static Cache& instance() {
    static auto* c = new Cache();
    return *c;
  }

  std::shared_ptr<const Entry> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    if (it->second.entry->owner.expired()) {  // a new tensor at a dead one's address
      bytes_ -= it->second.entry->bytes;
      map_.erase(it);
      return nullptr;
    }
    it->second.last_use = ++clock_;
    return it->second.entry;
  }

  // The buffer of `stale` (found under `key` and no longer valid) when the cache holds the only
  // reference to it: the entry leaves the cache and its buffer is reordered into again.
  dnnl::memory take_buffer(const std::string& key, const Entry* stale) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end() || it->second.entry.get() != stale || it->second.entry.use_count() != 1) return dnnl::memory();
    dnnl::memory m = stale->reordered;
    bytes_ -= it->second.entry->bytes;
    map_.erase(it);
    ++recycled_;
    return m;
  }

  // Drops every entry of `owner` (weights the caller will read in their own layout from now on).
  void drop(const Storage* owner) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto i = map_.begin(); i != map_.end();) {
      std::shared_ptr<Storage> o = i->second.entry->owner.lock();
      if (!o || o.get() == owner) {
        bytes_ -= i->second.entry->bytes;
        map_.erase(i++);
      } else {
        ++i;
      }
    }
  }

  void put(const std::string& key, std::shared_ptr<const Entry> e) {
    std::lock_guard<std::mutex> lock(mu_);
    ++reorders_;
    if (e->bytes > kMaxBytes) return;
    auto it = map_.find(key);
    if (it != map_.end()) {
      bytes_ -= it->second.entry->bytes;
      map_.erase(it);
    }
    // Drop the copies of weights that no longer exist, then the least recently used entries
    // until the new one fits.
    for (auto i = map_.begin(); i != map_.end();) {
      if (i->second.entry->owner.expired()) {
        bytes_ -= i->second.entry->bytes;
        map_.erase(i++);
      } else {
        ++i;
      }
    }
    while (!map_.empty() && (bytes_ + e->bytes > kMaxBytes || map_.size() >= kMaxEntries)) {
      auto lru = map_.begin();
      for (auto i = map_.begin(); i != map_.end(); ++i)
        if (i->second.last_use < lru->second.last_use) lru = i;
      bytes_ -= lru->second.entry->bytes;
      map_.erase(lru);
    }
    bytes_ += e->bytes;
    map_.emplace(key, Slot{std::move(e), ++clock_});
  }

  void hit() { hits_.fetch_add(1, std::memory_order_relaxed); }

  WeightCacheStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return {hits_.load(), reorders_, static_cast<int64_t>(map_.size()), bytes_, recycled_};
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    map_.clear();
    bytes_ = 0;
  }

 private:
  static constexpr int64_t kMaxBytes = int64_t(1) << 30;
  static constexpr size_t kMaxEntries = 1024;
  struct Slot {
    std::shared_ptr<const Entry> entry;
    uint64_t last_use;
  };
  std::mutex mu_;
  absl::flat_hash_map<std::string, Slot> map_;
  uint64_t clock_ = 0;
  std::atomic<int64_t> hits_{0};
  int64_t bytes_ = 0, reorders_ = 0, recycled_ = 0;
};

// memcmp of two equally sized buffers, in parallel chunks when large.
bool bytes_equal(const void* a, const void* b, int64_t n) {
  constexpr int64_t kChunk = int64_t(1) << 18;
  const char* pa = static_cast<const char*>(a);
  const char* pb = static_cast<const char*>(b);
  if (n <= 4 * kChunk) return std::memcmp(pa, pb, n) == 0;
  std::atomic<bool> equal{true};
  parallel_for((n + kChunk - 1) / kChunk, 2, [&](int64_t s, int64_t e) {
    for (int64_t c = s; c < e && equal.load(std::memory_order_relaxed); ++c) {
      const int64_t off = c * kChunk, len = std::min(kChunk, n - off);
      if (std::memcmp(pa + off, pb + off, len) != 0) equal.store(false, std::memory_order_relaxed);
    }
  });
  return equal.load();
}

std::string key_of(const Tensor& w, const dnnl::memory::desc& user, const dnnl::memory::desc& want) {
  std::string k;
  k.reserve(160);
  const int64_t head[3] = {static_cast<int64_t>(reinterpret_cast<uintptr_t>(w.storage()->data())), w.offset(), w.ndim()};
  put(&k, head, 3);
  for (int i = 0; i < w.ndim(); ++i) {
    const int64_t geo[2] = {w.dim(i), w.stride(i)};
    put(&k, geo, 2);
  }
  return k + md_key(user) + md_key(want);
}

bool still_valid(const Entry& e, const Tensor& w, const Tensor& wc, bool versioned) {
  if (e.owner.lock() != w.storage()) return false;
  if (versioned) return e.plain.defined() ? false : e.version == w.storage()->version();
  return e.plain.defined() && e.plain.nbytes() == wc.nbytes() && bytes_equal(e.plain.raw_data(), wc.raw_data(), wc.nbytes());
}

}  // namespace

CachedWeights reordered_weights(const Tensor& w, const dnnl::memory::desc& user, const dnnl::memory::desc& want,
                                const dnnl::reorder& reorder) {
  dnnl::engine& eng = dnnl_engine();
  // Read the version before the bytes: a write racing with the copy moves it past the entry's.
  const bool versioned = w.storage()->versioned();
  const uint64_t version = w.storage()->version();
  Tensor wc = w.contiguous();
  if (user == want) return {dnnl::memory(user, eng, wc.raw_data()), wc.storage()};
  Cache& cache = Cache::instance();
  const std::string key = key_of(w, user, want);
  dnnl::memory buffer;
  if (std::shared_ptr<const Entry> e = cache.find(key)) {
    if (still_valid(*e, w, wc, versioned)) {
      cache.hit();
      return {e->reordered, e};
    }
    const Entry* stale = e.get();
    e.reset();  // our reference would keep the buffer from being taken
    buffer = cache.take_buffer(key, stale);
  }
  auto ne = std::make_shared<Entry>();
  ne->owner = w.storage();
  ne->version = version;
  if (!versioned) ne->plain = wc.same_storage(w) ? wc.clone() : wc;
  ne->reordered = buffer ? buffer : dnnl::memory(want, eng);
  ne->bytes = static_cast<int64_t>(want.get_size()) + (ne->plain.defined() ? ne->plain.nbytes() : 0);
  const Tensor& src = ne->plain.defined() ? ne->plain : wc;
  dnnl::memory um(user, eng, src.raw_data());
  execute_reorder(reorder, um, ne->reordered);
  cache.put(key, ne);
  return {ne->reordered, ne};
}

CachedWeights WeightMemo::get(const Tensor& w, const dnnl::memory::desc& user, const dnnl::memory::desc& want,
                              const dnnl::reorder& reorder) {
  const Storage* st = w.storage().get();
  const bool versioned = st->versioned() && w.is_contiguous() && user != want;
  const uint64_t version = st->version();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (versioned && st == raw_ && w.offset() == offset_ && version == version_ && !owner_.expired()) {
      Cache::instance().hit();
      return last_;
    }
  }
  {
    // A new version: the last copy is stale, and held here it could not be reordered into.
    std::lock_guard<std::mutex> lock(mu_);
    if (st == raw_ && w.offset() == offset_) last_ = CachedWeights();
  }
  CachedWeights c = reordered_weights(w, user, want, reorder);
  if (versioned) {
    std::lock_guard<std::mutex> lock(mu_);
    owner_ = w.storage();
    raw_ = st;
    offset_ = w.offset();
    version_ = version;
    last_ = c;
  }
  return c;
}

namespace {

// written_each_use's record of each weight view's recent uses.
class WriteTracker {
 public:
  static WriteTracker& instance() {
    static auto* t = new WriteTracker();
    return *t;
  }

  // True when trained; *first is set on the use that found it so.
  bool use(const Tensor& w, bool* first) {
    const std::shared_ptr<Storage>& st = w.storage();
    const uint64_t version = st->version();
    std::lock_guard<std::mutex> lock(mu_);
    const Key key{st.get(), w.offset()};
    auto it = map_.find(key);
    if (it != map_.end() && it->second.owner.expired()) {  // a new storage at a dead one's address
      map_.erase(it);
      it = map_.end();
    }
    if (it == map_.end()) {
      if (map_.size() >= kMaxViews) prune();
      map_.emplace(key, State{st, version, 1, 0, false});
      return false;
    }
    State& s = it->second;
    if (version != s.version) {
      s.steps = s.uses <= kUsesPerVersion ? s.steps + 1 : 1;
      s.version = version;
      s.uses = 1;
    } else {
      ++s.uses;
    }
    const bool trained = st->versioned() && s.steps >= 2 && s.uses <= kUsesPerVersion;
    *first = trained && !s.trained;
    s.trained = trained;
    return trained;
  }

 private:
  // A layer applied twice a step (tied weights) still trains. From three uses a version on, one
  // reorder (a pass over the weights, recycled buffer) costs less than reading the plain layout
  // each time (~20% slower for a big dense).
  static constexpr int kUsesPerVersion = 2;
  static constexpr size_t kMaxViews = 4096;
  using Key = std::pair<const Storage*, int64_t>;
  struct State {
    std::weak_ptr<Storage> owner;
    uint64_t version;
    int uses;       // at this version
    int steps;      // consecutive new versions, each after at most kUsesPerVersion uses
    bool trained;   // what the last use answered
  };

  // Forgets dead storages, then (a heuristic's state only) everything when still full.
  void prune() {
    for (auto i = map_.begin(); i != map_.end();) {
      if (i->second.owner.expired()) map_.erase(i++);
      else ++i;
    }
    if (map_.size() >= kMaxViews) map_.clear();
  }

  std::mutex mu_;
  absl::flat_hash_map<Key, State> map_;
};

}  // namespace

bool written_each_use(const Tensor& w) {
  bool first = false;
  const bool trained = WriteTracker::instance().use(w, &first);
  if (first) Cache::instance().drop(w.storage().get());
  return trained;
}

bool WeightMemo::trained(const Tensor& w) { return written_each_use(w); }

WeightCacheStats weight_cache_stats() { return Cache::instance().stats(); }
void weight_cache_clear() { Cache::instance().clear(); }

}  // namespace pj
