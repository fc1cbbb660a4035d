// Shared by the host-side sequence losses (kernels/ctc.cc, kernels/rnnt.cc): their recursions run
// in double over copies of the inputs, whatever the storage dtype.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/copy.h"
#include "kernels/tensor.h"

namespace pj::loss_host {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// log(exp(a) + exp(b)), exact at -inf.
inline double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

// An integer tensor's values in logical order.
inline std::vector<int64_t> ints_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<int64_t> v(static_cast<size_t>(c.numel()));
  if (c.dtype() == DType::Int64) {
    const int64_t* p = c.data<int64_t>();
    std::copy(p, p + c.numel(), v.begin());
  } else if (c.dtype() == DType::Int32) {
    const int32_t* p = c.data<int32_t>();
    std::copy(p, p + c.numel(), v.begin());
  } else {
    for (int64_t i = 0; i < c.numel(); ++i) v[i] = c.item_int(i);
  }
  return v;
}

// A floating tensor's values as double, contiguous in logical order.
inline std::vector<double> doubles_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<double> v(static_cast<size_t>(c.numel()));
  if (c.dtype() == DType::Float32) {
    const float* p = c.data<float>();
    std::copy(p, p + c.numel(), v.begin());
  } else if (c.dtype() == DType::Float64) {
    const double* p = c.data<double>();
    std::copy(p, p + c.numel(), v.begin());
  } else {
    for (int64_t i = 0; i < c.numel(); ++i) v[i] = c.item_double(i);
  }
  return v;
}

// Writes doubles into a float32/float64 tensor of the same numel (logical order); `who` names the
// kernel in the invariant's message.
inline void store(const Tensor& out, const std::vector<double>& v, const char* who) {
  with_contiguous_out(out, [&](const Tensor& dst) {
    if (dst.dtype() == DType::Float32) {
      float* p = dst.data<float>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<float>(v[i]);
    } else {
      PJ_CHECK(dst.dtype() == DType::Float64) << who << " writes float32 or float64";
      std::copy(v.begin(), v.end(), dst.data<double>());
    }
  });
}

}  // namespace pj::loss_host
