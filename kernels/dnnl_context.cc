#include "kernels/dnnl_context.h"

namespace pj {

dnnl::engine& dnnl_engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::stream& dnnl_stream() {
  static dnnl::stream* s = new dnnl::stream(dnnl_engine());
  return *s;
}

PrimitiveCache& PrimitiveCache::instance() {
  static PrimitiveCache* c = new PrimitiveCache();
  return *c;
}

dnnl::primitive PrimitiveCache::get(const std::string& key, const std::function<dnnl::primitive()>& make) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) {
      ++hits_;
      return it->second;
    }
  }
  dnnl::primitive p = make();
  std::lock_guard<std::mutex> lock(mu_);
  ++misses_;
  map_.emplace(key, p);
  return p;
}

size_t PrimitiveCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return map_.size();
}

void PrimitiveCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  map_.clear();
}

dnnl::memory::dims to_dnnl_dims(const int64_t* shape, int n) {
  if (n == 0) return {1};
  return dnnl::memory::dims(shape, shape + n);
}

}  // namespace pj
