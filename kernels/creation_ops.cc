#include "kernels/creation_ops.h"

#include <cmath>
#include <cstring>

#include "kernels/copy.h"
#include "kernels/threading.h"

namespace pj {

int64_t arange_length(double start, double stop, double step) {
  if (step == 0) PJ_THROW(Value) << "arange(): step must not be zero";
  double n = std::ceil((stop - start) / step);
  if (!(n > 0)) return 0;  // also NaN
  if (n > 9.2e18) PJ_THROW(Value) << "arange(): too many elements (" << n << ")";
  return static_cast<int64_t>(n);
}

int64_t arange_length_int(int64_t start, int64_t stop, int64_t step) {
  if (step == 0) PJ_THROW(Value) << "arange(): step must not be zero";
  __int128 span = static_cast<__int128>(stop) - start, st = step;
  if ((step > 0 && span <= 0) || (step < 0 && span >= 0)) return 0;
  if (step < 0) {
    span = -span;
    st = -st;
  }
  __int128 n = (span + st - 1) / st;
  if (n > INT64_MAX) PJ_THROW(Value) << "arange(): too many elements (" << static_cast<double>(n) << ")";
  return static_cast<int64_t>(n);
}

void arange_into(const Tensor& out, double start, double step) {
  PJ_CHECK(out.is_contiguous());
  PJ_DISPATCH_ALL(out.dtype(), [&] {
    scalar_t* o = out.data<scalar_t>();
    parallel_for(out.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = static_cast<scalar_t>(start + static_cast<double>(i) * step);
    });
  });
}

void arange_int_into(const Tensor& out, int64_t start, int64_t step) {
  PJ_CHECK(out.is_contiguous());
  PJ_DISPATCH_ALL(out.dtype(), [&] {
    scalar_t* o = out.data<scalar_t>();
    parallel_for(out.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = static_cast<scalar_t>(start + i * step);
    });
  });
}

void check_linspace_num(int64_t num) {
  if (num < 0) PJ_THROW(Value) << "Number of samples, " << num << ", must be non-negative.";
}

void linspace_into(const Tensor& out, double start, double stop, bool endpoint) {
  PJ_CHECK(out.is_contiguous() && out.ndim() == 1);
  const int64_t num = out.numel();
  const int64_t div = endpoint ? num - 1 : num;
  const double step = div > 0 ? (stop - start) / div : 0;
  const bool integral = !is_floating(out.dtype());
  PJ_DISPATCH_ALL(out.dtype(), [&] {
    scalar_t* o = out.data<scalar_t>();
    auto conv = [&](double v) { return static_cast<scalar_t>(integral ? std::floor(v) : v); };
    parallel_for(num, kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = conv(start + static_cast<double>(i) * step);
    });
    if (endpoint && num > 1) o[num - 1] = conv(stop);
  });
}

void eye_into(const Tensor& out, int64_t k) {
  PJ_CHECK(out.is_contiguous() && out.ndim() == 2);
  std::memset(out.raw_data(), 0, out.nbytes());
  const int64_t n = out.dim(0), m = out.dim(1);
  PJ_DISPATCH_ALL(out.dtype(), [&] {
    scalar_t* o = out.data<scalar_t>();
    // The diagonal k: rows i with 0 <= i + k < m, written so no sum can overflow for any k.
    if (k >= m || (k < 0 && -(k + 1) >= n)) return;
    for (int64_t i = k < 0 ? -k : 0; i < n && i < m - k; ++i) o[i * m + i + k] = scalar_t(1);
  });
}

}  // namespace pj
