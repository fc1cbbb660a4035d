// 16-bit floating-point storage types: IEEE binary16 (float16) and bfloat16.
//
// Both are storage only: kernels never compute in them. An op on float16/bfloat16 tensors runs in
// float32 and rounds its result once (graph/op.cc, "compute dtypes"), as PyTorch and oneDNN's
// reference paths do on CPUs without native half arithmetic. So these types need exactly two
// things: a correctly rounded conversion from float (round to nearest even, overflow to inf, NaN
// kept quiet) and an exact conversion to float. Plain structs, not _Float16: the same header is
// read by nvcc and by compilers without the type, and the layout must be identical everywhere.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__F16C__) && !defined(__CUDACC__)
#include <immintrin.h>
#endif

namespace pj {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Portable conversions (what a CPU without F16C runs; tests compare them with F16C exhaustively).
inline uint16_t float_to_half_bits_soft(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)  // inf or NaN (NaN stays NaN: keep a payload bit set)
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (absx < 0x38800000u) {  // subnormal half (or zero): scale into the 10-bit mantissa
    // Adding 0.5 (as a float) aligns the mantissa so that the hardware's own round-to-even
    // lands the half's subnormal bits in the low bits.
    const float r = bits_float(absx) + 0.5f;
    return static_cast<uint16_t>(sign | (float_bits(r) - 0x3f000000u));
  }
  const uint32_t odd = (absx >> 13) & 1u;
  const uint32_t rounded = absx + 0xc8000fffu + odd;  // rebias exponent (-112 << 23) and round
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

inline float half_bits_to_float_soft(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in float
    const float v = static_cast<float>(man) * bits_float(0x33800000u);
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
}

inline uint16_t float_to_half_bits(float f) {
#if defined(__F16C__) && !defined(__CUDACC__)
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#else
  return float_to_half_bits_soft(f);
#endif
}

inline float half_bits_to_float(uint16_t h) {
#if defined(__F16C__) && !defined(__CUDACC__)
  return _cvtsh_ss(h);
#else
  return half_bits_to_float_soft(h);
#endif
}

inline uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7fffu + lsb) >> 16);  // round to nearest even
}
inline float bfloat16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

// Converting constructors go through float: a double is rounded to float first (double rounding
// can differ from a direct double->half rounding only on exact ties of the float, which numpy
// also accepts for its float16 casts from float64 on most platforms).
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  template <typename T>
  explicit float16(T v) : bits(float_to_half_bits(static_cast<float>(v))) {}
  explicit operator float() const { return half_bits_to_float(bits); }
  float value() const { return half_bits_to_float(bits); }
};

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  template <typename T>
  explicit bfloat16(T v) : bits(float_to_bfloat16_bits(static_cast<float>(v))) {}
  explicit operator float() const { return bfloat16_bits_to_float(bits); }
  float value() const { return bfloat16_bits_to_float(bits); }
};

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2, "16-bit storage types");

}  // namespace pj
