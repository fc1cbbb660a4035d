// What the GPU kernels' tests share: seeded inputs and copies to and from device memory.
#pragma once

#include <random>
#include <vector>

#include "kernels/cuda/driver.h"

namespace pj::cuda::testing {

// n floats uniform in [lo, hi), the same for the same seed.
inline std::vector<float> uniform(size_t n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

inline DeviceBuffer on_device(const std::vector<float>& v) {
  DeviceBuffer b(v.size() * 4);
  b.upload(v.data(), v.size() * 4);
  return b;
}

// The first n floats of b, after the device's work is done.
inline std::vector<float> download(const DeviceBuffer& b, size_t n) {
  synchronize();
  std::vector<float> v(n);
  b.download(v.data(), n * 4);
  return v;
}

}  // namespace pj::cuda::testing
