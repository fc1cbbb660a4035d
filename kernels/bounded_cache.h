// Caches keyed by geometry (shapes, strides, dtypes, layouts) gain an entry for every new shape a
// program meets: a loop over batch sizes would grow them without end. Each is a BoundedCache: at
// most `capacity` entries, the least recently used dropped first (an entry in use lives on through
// its shared handle), the capacity read once from an environment variable, and hit / miss /
// eviction counters that pijit.kernel_cache_stats() and `python -m pijit sysinfo` list for every
// cache made. Values are cheap handles (shared_ptr, dnnl::primitive).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace pj {

struct CacheInfo {
  std::string name;  // what it holds
  std::string env;   // the variable that sizes it (entries)
  size_t size = 0, capacity = 0;
  int64_t hits = 0, misses = 0, evictions = 0;
};

class CacheBase {
 public:
  CacheBase(const char* name, const char* env, size_t default_capacity);
  virtual ~CacheBase() = default;
  virtual CacheInfo info() = 0;
  size_t capacity() const { return capacity_; }

 protected:
  const char* name_;
  const char* env_;
  size_t capacity_;
};

// Every BoundedCache made so far (they are made once and never destroyed).
std::vector<CacheInfo> cache_infos();
// Reads a capacity variable: a whole number >= 1, else `fallback` (with a warning on stderr when
// the variable is set but not a number).
size_t capacity_from_env(const char* env, size_t fallback);

template <typename V>
class BoundedCache : public CacheBase {
 public:
  using CacheBase::CacheBase;

  // The value for `key`, made with make() on a miss. make() runs outside the lock (making a
  // oneDNN primitive JIT-compiles code); two threads missing at once both make one, the first
  // stored wins.
  template <typename Make>
  V get(const std::string& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        ++hits_;
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
    }
    V v = make();
    std::lock_guard<std::mutex> lock(mu_);
    ++misses_;
    auto it = index_.find(key);
    if (it != index_.end()) return it->second->second;
    lru_.emplace_front(key, v);
    index_.emplace(key, lru_.begin());
    while (lru_.size() > capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
      ++evictions_;
    }
    return v;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return lru_.size();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    index_.clear();
    lru_.clear();
  }
  int64_t hits() {
    std::lock_guard<std::mutex> lock(mu_);
    return hits_;
  }
  int64_t misses() {
    std::lock_guard<std::mutex> lock(mu_);
    return misses_;
  }
  CacheInfo info() override {
    std::lock_guard<std::mutex> lock(mu_);
    return CacheInfo{name_, env_, lru_.size(), capacity_, hits_, misses_, evictions_};
  }

 private:
  std::mutex mu_;
  std::list<std::pair<std::string, V>> lru_;  // most recently used first
  absl::flat_hash_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> index_;
  int64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

}  // namespace pj
