// Strided elementwise iteration shared by every loop kernel.
//
// An ElementwiseIter holds one output shape and N operands given as (base pointer, byte strides
// per dim). Dims are coalesced (adjacent dims merged when every operand is linear across them) so
// that contiguous and broadcast operands end up with a long innermost row. The caller's row
// function gets the N row pointers, the N innermost byte strides and the row length; when those
// strides equal the element size (or 0 for a broadcast scalar) the row loop is a plain
// vectorisable loop. Large iterations are split across OpenMP threads by linear index ranges.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/tensor.h"
#include "kernels/threading.h"

namespace pj {

// c ? x : y on the values' bits: no branch to mispredict when c is random, as a
// mask or an argmax on real data is, and a loop of these vectorises.
template <typename T>
inline T select_bits(uint8_t c, T x, T y) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint8_t>>;
  static_assert(sizeof(T) == sizeof(U));
  U ux, uy;
  std::memcpy(&ux, &x, sizeof(T));
  std::memcpy(&uy, &y, sizeof(T));
  const U m = U(0) - static_cast<U>(c != 0);  // (any nonzero byte is true, as c ? x : y reads it)
  const U r = (ux & m) | (uy & ~m);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

template <int N>
class ElementwiseIter {
 public:
  ElementwiseIter(const Shape& shape, const std::array<char*, N>& base,
                  const std::array<Shape, N>& byte_strides)
      : base_(base) {
    // Drop size-1 dims, then merge dims that are linear for all operands.
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      if (!shape_.empty()) {
        bool merge = true;
        for (int k = 0; k < N; ++k)
          if (strides_[k].back() != byte_strides[k][d] * shape[d]) merge = false;
        if (merge) {
          shape_.back() *= shape[d];
          for (int k = 0; k < N; ++k) strides_[k].back() = byte_strides[k][d];
          continue;
        }
      }
      shape_.push_back(shape[d]);
      for (int k = 0; k < N; ++k) strides_[k].push_back(byte_strides[k][d]);
    }
    if (shape_.empty()) {
      shape_.push_back(1);
      for (int k = 0; k < N; ++k) strides_[k].push_back(0);
    }
    numel_ = shape_numel(shape_);
    for (int k = 0; k < N; ++k) inner_[k] = strides_[k].back();
  }

  int64_t numel() const { return numel_; }
  // Operand k's byte stride along the innermost (coalesced) dimension: what each row steps by.
  int64_t inner_stride(int k) const { return inner_[k]; }

  // row(ptrs, inner_strides, n) for linear indices [begin, end).
  template <typename Row>
  void run_range(int64_t begin, int64_t end, Row&& row) const {
    const int nd = static_cast<int>(shape_.size());
    const int64_t inner_n = shape_.back();
    int64_t idx[16];
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % shape_[d];
      rem /= shape_[d];
    }
    int64_t pos = begin;
    while (pos < end) {
      std::array<char*, N> p;
      for (int k = 0; k < N; ++k) {
        char* ptr = base_[k];
        for (int d = 0; d < nd; ++d) ptr += idx[d] * strides_[k][d];
        p[k] = ptr;
      }
      int64_t n = std::min(inner_n - idx[nd - 1], end - pos);
      row(p, inner_, n);
      pos += n;
      idx[nd - 1] += n;
      for (int d = nd - 1; d > 0 && idx[d] >= shape_[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  }

  template <typename Row>
  void run(Row&& row, int64_t grain = kParallelGrain) const {
    if (numel_ == 0) return;
    parallel_for(numel_, grain, [&](int64_t b, int64_t e) { run_range(b, e, row); });
  }

 private:
  std::array<char*, N> base_;
  Shape shape_;
  std::array<Shape, N> strides_;
  std::array<int64_t, N> inner_;
  int64_t numel_ = 0;
};

inline Shape byte_strides(const Shape& elem_strides, int item) {
  Shape s(elem_strides.size());
  for (size_t i = 0; i < s.size(); ++i) s[i] = elem_strides[i] * item;
  return s;
}

// out[i] = f(a[i]) with `a` broadcast to out's shape.
template <typename O, typename A, typename F>
void unary_kernel(const Tensor& out, const Tensor& a, F f) {
  const Shape& shape = out.shape();
  ElementwiseIter<2> it(shape, {static_cast<char*>(out.raw_data()), static_cast<char*>(a.raw_data())},
                        {byte_strides(out.strides(), sizeof(O)),
                         byte_strides(broadcast_strides(a, shape), sizeof(A))});
  it.run([&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* x = reinterpret_cast<const A*>(p[1]);
    if (s[0] == sizeof(O) && s[1] == sizeof(A)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
    } else if (s[0] == sizeof(O) && s[1] == 0) {
      const O v = f(x[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = v;
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) = f(*reinterpret_cast<const A*>(p[1] + i * s[1]));
    }
  });
}

// out[i] = f(a[i], b[i]) with a and b broadcast to out's shape.
template <typename O, typename A, typename B, typename F>
void binary_kernel(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  const Shape& shape = out.shape();
  ElementwiseIter<3> it(shape,
                        {static_cast<char*>(out.raw_data()), static_cast<char*>(a.raw_data()),
                         static_cast<char*>(b.raw_data())},
                        {byte_strides(out.strides(), sizeof(O)),
                         byte_strides(broadcast_strides(a, shape), sizeof(A)),
                         byte_strides(broadcast_strides(b, shape), sizeof(B))});
  it.run([&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* x = reinterpret_cast<const A*>(p[1]);
    const B* y = reinterpret_cast<const B*>(p[2]);
    if (s[0] == sizeof(O) && s[1] == sizeof(A) && s[2] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (s[0] == sizeof(O) && s[1] == sizeof(A) && s[2] == 0) {
      const B yv = y[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
    } else if (s[0] == sizeof(O) && s[1] == 0 && s[2] == sizeof(B)) {
      const A xv = x[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) = f(*reinterpret_cast<const A*>(p[1] + i * s[1]),
                                                   *reinterpret_cast<const B*>(p[2] + i * s[2]));
    }
  });
}

// out[i] = f(c[i], a[i], b[i]) (where/select, clamp with tensor bounds).
template <typename O, typename C, typename A, typename B, typename F>
void ternary_kernel(const Tensor& out, const Tensor& c, const Tensor& a, const Tensor& b, F f) {
  const Shape& shape = out.shape();
  ElementwiseIter<4> it(shape,
                        {static_cast<char*>(out.raw_data()), static_cast<char*>(c.raw_data()),
                         static_cast<char*>(a.raw_data()), static_cast<char*>(b.raw_data())},
                        {byte_strides(out.strides(), sizeof(O)),
                         byte_strides(broadcast_strides(c, shape), sizeof(C)),
                         byte_strides(broadcast_strides(a, shape), sizeof(A)),
                         byte_strides(broadcast_strides(b, shape), sizeof(B))});
  it.run([&](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const C* z = reinterpret_cast<const C*>(p[1]);
    const A* x = reinterpret_cast<const A*>(p[2]);
    const B* y = reinterpret_cast<const B*>(p[3]);
    // Contiguous rows with a and b each a row or one value (relu's gradient is where(m, g, 0)):
    // plain loops the compiler vectorises.
    if (s[0] == sizeof(O) && s[1] == sizeof(C) && s[2] == sizeof(A) && s[3] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(z[i], x[i], y[i]);
    } else if (s[0] == sizeof(O) && s[1] == sizeof(C) && s[2] == sizeof(A) && s[3] == 0) {
      const B yv = y[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(z[i], x[i], yv);
    } else if (s[0] == sizeof(O) && s[1] == sizeof(C) && s[2] == 0 && s[3] == sizeof(B)) {
      const A xv = x[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(z[i], xv, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) = f(*reinterpret_cast<const C*>(p[1] + i * s[1]),
                                                   *reinterpret_cast<const A*>(p[2] + i * s[2]),
                                                   *reinterpret_cast<const B*>(p[3] + i * s[3]));
    }
  });
}

}  // namespace pj
