// Internal to kernels/linalg*.cc: moving matrices between tensors and double buffers, and the
// batch loop. Not for use outside the linalg kernels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/tensor.h"
#include "kernels/threading.h"

namespace pj {
namespace linalg_detail {

using Buf = std::vector<double>;

// Matrices in a [..., r, c] tensor.
inline int64_t batch_of(const Tensor& t) {
  int64_t b = 1;
  for (int i = 0; i + 2 < t.ndim(); ++i) b *= t.dim(i);
  return b;
}

// Copies matrix `i` of t ([r, c]) into dst, transposed (dst [c, r]) when `trans`.
template <typename T>
void load_as(const Tensor& t, int64_t i, int64_t r, int64_t c, bool trans, double* dst) {
  const T* src = t.data<T>() + i * r * c;
  if (!trans) {
    for (int64_t k = 0; k < r * c; ++k) dst[k] = static_cast<double>(src[k]);
  } else {
    for (int64_t y = 0; y < r; ++y)
      for (int64_t x = 0; x < c; ++x) dst[x * r + y] = static_cast<double>(src[y * c + x]);
  }
}
inline void load(const Tensor& t, int64_t i, int64_t r, int64_t c, bool trans, double* dst) {
  if (t.dtype() == DType::Float32) load_as<float>(t, i, r, c, trans, dst);
  else load_as<double>(t, i, r, c, trans, dst);
}

// Writes dst ([r, c]) as matrix `i` of t, transposed from src [c, r] when `trans`.
template <typename T>
void store_as(const Tensor& t, int64_t i, int64_t r, int64_t c, bool trans, const double* src) {
  T* dst = t.data<T>() + i * r * c;
  if (!trans) {
    for (int64_t k = 0; k < r * c; ++k) dst[k] = static_cast<T>(src[k]);
  } else {
    for (int64_t y = 0; y < r; ++y)
      for (int64_t x = 0; x < c; ++x) dst[y * c + x] = static_cast<T>(src[x * r + y]);
  }
}
inline void store(const Tensor& t, int64_t i, int64_t r, int64_t c, bool trans, const double* src) {
  if (t.dtype() == DType::Float32) store_as<float>(t, i, r, c, trans, src);
  else store_as<double>(t, i, r, c, trans, src);
}
inline void store_value(const Tensor& t, int64_t i, double v) {
  if (t.dtype() == DType::Float32) t.data<float>()[i] = static_cast<float>(v);
  else t.data<double>()[i] = v;
}

// f(i) for every matrix; in parallel over the batch when there are several, so a lone large
// matrix keeps the threads for its own inner loops. `flops`: the rough cost of one matrix.
template <typename F>
void each_matrix(int64_t batch, double flops, F&& f) {
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kParallelGrain / std::max(flops, 1.0)));
  if (batch == 1) {
    f(int64_t(0));
    return;
  }
  parallel_for(batch, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

// Rows [0, n) in parallel when each costs `per_row` and the whole is worth forking for.
template <typename F>
void rows_parallel(int64_t n, int64_t per_row, F&& f) {
  parallel_for(n, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_row, 1)), f);
}

// Eight partial sums: the compiler vectorises them (a single running sum it may not reorder).
inline double dot(const double* x, const double* y, int64_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += x[i + k] * y[i + k];
  double s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

// c [n, m] = a [n, k] b [k, m] (row-major, i-k-j so the inner loop is contiguous).
void gemm(const double* a, const double* b, double* c, int64_t n, int64_t k, int64_t m);

}  // namespace linalg_detail
}  // namespace pj
