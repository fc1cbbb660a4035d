// Scans for values that are not finite (NaN, +inf, -inf), for kernels that hand finite work to a
// library whose special-value rules differ from numpy's.
//
// oneDNN's softmax and max pooling start their maximum at -FLT_MAX and take it with vmaxps, so a
// NaN is dropped (softmax [1, nan] gave [0, nan] where numpy gives [nan, nan]) and an all -inf
// window gives -FLT_MAX. Kernels run the library, then scan each independent piece of the input
// (a softmax row, a pooling plane) with these and recompute the pieces that hold a non-finite
// value with pijit's own loop, whose result on them is numpy's and on finite pieces is the
// library's bit for bit. A scan reads the piece once as integers: an AND and an unsigned max per
// element, which the compiler vectorises; it costs a fraction of the library kernel it guards.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace pj {

// The largest |x| of x[0..n) as the bits of a magnitude: an unsigned order in which every finite
// value sorts below +inf's bits and every NaN above them.
template <typename T>
inline auto max_magnitude_bits(const T* x, int64_t n) {
  static_assert(std::is_floating_point_v<T>, "floating values only");
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  constexpr U kMagnitude = ~U(0) >> 1;  // every bit but the sign
  U m = 0;
  for (int64_t i = 0; i < n; ++i) {
    U b;
    std::memcpy(&b, x + i, sizeof(T));
    b &= kMagnitude;
    m = b > m ? b : m;
  }
  return m;
}

// The bits of +inf's magnitude (all exponent bits set, no mantissa).
template <typename T>
constexpr auto inf_bits() {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  return sizeof(T) == 8 ? U(0x7ff0000000000000ull) : U(0x7f800000u);
}

// Whether x[0..n) holds a NaN, +inf or -inf.
template <typename T>
inline bool any_nonfinite(const T* x, int64_t n) {
  return max_magnitude_bits(x, n) >= inf_bits<T>();
}

// Whether x[0..n) holds a NaN.
template <typename T>
inline bool any_nan(const T* x, int64_t n) {
  return max_magnitude_bits(x, n) > inf_bits<T>();
}

}  // namespace pj
