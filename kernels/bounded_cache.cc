#include "kernels/bounded_cache.h"

#include <cstdio>
#include <cstdlib>

namespace pj {

namespace {

std::mutex& registry_mu() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::vector<CacheBase*>& registry() {
  static auto* r = new std::vector<CacheBase*>;
  return *r;
}

}  // namespace

size_t capacity_from_env(const char* env, size_t fallback) {
  const char* v = std::getenv(env);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (end && *end == '\0' && n >= 1) return static_cast<size_t>(n);
  std::fprintf(stderr, "pijit: warning: %s=%s is not a whole number >= 1; using %zu\n", env, v, fallback);
  return fallback;
}

CacheBase::CacheBase(const char* name, const char* env, size_t default_capacity)
    : name_(name), env_(env), capacity_(capacity_from_env(env, default_capacity)) {
  std::lock_guard<std::mutex> lock(registry_mu());
  registry().push_back(this);
}

std::vector<CacheInfo> cache_infos() {
  std::vector<CacheBase*> caches;
  {
    std::lock_guard<std::mutex> lock(registry_mu());
    caches = registry();
  }
  std::vector<CacheInfo> out;
  for (CacheBase* c : caches) out.push_back(c->info());
  return out;
}

}  // namespace pj
