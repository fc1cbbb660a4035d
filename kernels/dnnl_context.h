// The process-wide oneDNN engine and stream, and a cache of primitives keyed by descriptor so a
// repeated eager call (same op, shapes, dtypes, attributes) reuses the compiled primitive.
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pj {

dnnl::engine& dnnl_engine();
dnnl::stream& dnnl_stream();

class PrimitiveCache {
 public:
  static PrimitiveCache& instance();
  // The primitive for `key`, created with `make` on first use.
  dnnl::primitive get(const std::string& key, const std::function<dnnl::primitive()>& make);
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }
  size_t size() const;
  void clear();

 private:
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, dnnl::primitive> map_;
  int64_t hits_ = 0, misses_ = 0;
};

// dnnl::memory::dims from a pijit shape; a 0-d shape becomes {1}.
dnnl::memory::dims to_dnnl_dims(const int64_t* shape, int n);

}  // namespace pj
