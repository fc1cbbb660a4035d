// Element types of pijit tensors and the rules that combine them.
//
// Promotion follows MindSpore's table for two tensors (PyTorch's rules: int8 + uint8 -> int16,
// float16 + bfloat16 -> float32, int64 + float32 -> float32, complex64 + float64 -> complex128;
// uint16/32/64 do not promote with other integer types and raise TypeError), and treats a Python
// scalar as "weak": it only changes the result when it is of a higher category (bool < integer <
// floating < complex) than the tensor, and then yields that category's default dtype (int64 for
// ints, float32 for floats, complex64 for complex), as MindSpore does.
//
// Compute dtypes: kernels are written for bool, int32, int64, float32, float64 (and complex where
// they say so). The other storage types run through the nearest compute dtype: float16 and
// bfloat16 compute in float32, the small integers in int32, uint32/uint64 in int64, and the result
// is rounded (or wrapped, as C integer conversion does) back once (graph/op.cc).
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/half.h"

namespace pj {

// Values are stable (checkpoints, caches and the Python dtype table use them): new types append.
enum class DType : uint8_t {
  Bool = 0, Int32, Int64, Float32, Float64,
  Float16, BFloat16, Int8, Int16, UInt8, UInt16, UInt32, UInt64, Complex64, Complex128
};
constexpr int kNumDTypes = 15;

enum class Category : uint8_t { Bool = 0, Integer = 1, Floating = 2, Complex = 3 };

inline int itemsize(DType t) {
  switch (t) {
    case DType::Bool: case DType::Int8: case DType::UInt8: return 1;
    case DType::Float16: case DType::BFloat16: case DType::Int16: case DType::UInt16: return 2;
    case DType::Int32: case DType::UInt32: case DType::Float32: return 4;
    case DType::Int64: case DType::UInt64: case DType::Float64: case DType::Complex64: return 8;
    case DType::Complex128: return 16;
  }
  return 0;
}

inline Category category(DType t) {
  switch (t) {
    case DType::Bool: return Category::Bool;
    case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
    case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::UInt64:
      return Category::Integer;
    case DType::Complex64: case DType::Complex128: return Category::Complex;
    default: return Category::Floating;
  }
}
inline bool is_floating(DType t) { return category(t) == Category::Floating; }
inline bool is_complex(DType t) { return category(t) == Category::Complex; }
inline bool is_integral(DType t, bool include_bool) {
  return category(t) == Category::Integer || (include_bool && t == DType::Bool);
}
inline bool is_unsigned(DType t) {
  return t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64;
}

// The dtype kernels compute a storage dtype in (see the top of this file).
inline DType compute_dtype(DType t) {
  switch (t) {
    case DType::Float16: case DType::BFloat16: return DType::Float32;
    case DType::Int8: case DType::Int16: case DType::UInt8: case DType::UInt16: return DType::Int32;
    case DType::UInt32: case DType::UInt64: return DType::Int64;
    default: return t;
  }
}
inline bool is_compute_dtype(DType t) { return compute_dtype(t) == t; }
// complex64 -> float32, complex128 -> float64; others unchanged.
inline DType real_dtype(DType t) {
  return t == DType::Complex64 ? DType::Float32 : t == DType::Complex128 ? DType::Float64 : t;
}

// MindSpore's spelling: "Float32", "Int64", "Bool".
const char* dtype_name(DType t);
// dtype_name's text back; false when unknown.
bool dtype_from_name(const std::string& name, DType* out);
// numpy's spelling: "float32", "int64", "bool".
const char* dtype_numpy_name(DType t);
// Buffer-protocol format ("f", "d", "e", "B", "Zf", ...); "" for bfloat16, which has none.
const char* dtype_format(DType t);
// Parses a struct-module format string ("<f", "=q", "l", ...); false when unsupported.
bool dtype_from_format(const std::string& fmt, int itemsize, DType* out);

// Raises TypeError for pairs MindSpore does not promote (uint16 with int8, ...).
DType promote(DType a, DType b);
// Result dtype of tensor `t` combined with a Python scalar of category `c` (weak scalar).
DType promote_with_scalar(DType t, Category c);
DType default_dtype(Category c);
// Dtype used for float-valued results of integer/bool inputs (exp, mean, true divide).
inline DType to_floating(DType t) { return is_floating(t) || is_complex(t) ? t : DType::Float32; }

// Calls f.template operator()<T>() with T the C++ type of `t`.
#define PJ_DISPATCH_CASE(ENUM, CT, ...) \
  case ::pj::DType::ENUM: {             \
    using scalar_t = CT;                \
    return __VA_ARGS__();               \
  }
#define PJ_DISPATCH_ALL(dt, ...)                          \
  [&] {                                                    \
    switch (dt) {                                          \
      PJ_DISPATCH_CASE(Bool, bool, __VA_ARGS__)            \
      PJ_DISPATCH_CASE(Int32, int32_t, __VA_ARGS__)        \
      PJ_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)        \
      PJ_DISPATCH_CASE(Float32, float, __VA_ARGS__)        \
      PJ_DISPATCH_CASE(Float64, double, __VA_ARGS__)       \
      default: ::pj::throw_no_kernel(dt, __FILE__);        \
    }                                                      \
    __builtin_unreachable();                               \
  }()
// Every storage type, for code that only moves or converts elements (cast, printing, item
// access, buffers). scalar_t is float16/bfloat16/std::complex for those: use convert_scalar.
#define PJ_DISPATCH_STORAGE(dt, ...)                                  \
  [&] {                                                                \
    switch (dt) {                                                      \
      PJ_DISPATCH_CASE(Bool, bool, __VA_ARGS__)                        \
      PJ_DISPATCH_CASE(Int32, int32_t, __VA_ARGS__)                    \
      PJ_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)                    \
      PJ_DISPATCH_CASE(Float32, float, __VA_ARGS__)                    \
      PJ_DISPATCH_CASE(Float64, double, __VA_ARGS__)                   \
      PJ_DISPATCH_CASE(Float16, ::pj::float16, __VA_ARGS__)            \
      PJ_DISPATCH_CASE(BFloat16, ::pj::bfloat16, __VA_ARGS__)          \
      PJ_DISPATCH_CASE(Int8, int8_t, __VA_ARGS__)                      \
      PJ_DISPATCH_CASE(Int16, int16_t, __VA_ARGS__)                    \
      PJ_DISPATCH_CASE(UInt8, uint8_t, __VA_ARGS__)                    \
      PJ_DISPATCH_CASE(UInt16, uint16_t, __VA_ARGS__)                  \
      PJ_DISPATCH_CASE(UInt32, uint32_t, __VA_ARGS__)                  \
      PJ_DISPATCH_CASE(UInt64, uint64_t, __VA_ARGS__)                  \
      PJ_DISPATCH_CASE(Complex64, ::pj::complex64, __VA_ARGS__)        \
      PJ_DISPATCH_CASE(Complex128, ::pj::complex128, __VA_ARGS__)      \
    }                                                                  \
    __builtin_unreachable();                                           \
  }()
#define PJ_DISPATCH_NUMERIC(dt, what, ...)                                            \
  [&] {                                                                                \
    switch (dt) {                                                                      \
      PJ_DISPATCH_CASE(Int32, int32_t, __VA_ARGS__)                                    \
      PJ_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)                                    \
      PJ_DISPATCH_CASE(Float32, float, __VA_ARGS__)                                    \
      PJ_DISPATCH_CASE(Float64, double, __VA_ARGS__)                                   \
      default:                                                                         \
        PJ_THROW(Type) << what << " does not support dtype " << ::pj::dtype_name(dt); \
    }                                                                                  \
  }()
#define PJ_DISPATCH_FLOATING(dt, what, ...)                                           \
  [&] {                                                                                \
    switch (dt) {                                                                      \
      PJ_DISPATCH_CASE(Float32, float, __VA_ARGS__)                                    \
      PJ_DISPATCH_CASE(Float64, double, __VA_ARGS__)                                   \
      default:                                                                         \
        PJ_THROW(Type) << what << " does not support dtype " << ::pj::dtype_name(dt); \
    }                                                                                  \
  }()

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;
// TypeError: a kernel met a dtype it has no loop for (normally widened before: see the top).
[[noreturn]] void throw_no_kernel(DType t, const char* where);

template <typename T> struct is_complex_t : std::false_type {};
template <typename T> struct is_complex_t<std::complex<T>> : std::true_type {};
template <typename T>
constexpr bool is_half_t = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Element conversion between any two storage types, as numpy's casts do: complex to real keeps
// the real part, anything to bool is "!= 0", floats to unsigned go through int64 (so -1.0 wraps
// to the type's maximum instead of being undefined), 16-bit floats through float.
template <typename O, typename I>
inline O convert_scalar(I v) {
  if constexpr (std::is_same_v<O, I>) {
    return v;
  } else if constexpr (is_half_t<I>) {
    return convert_scalar<O, float>(static_cast<float>(v));
  } else if constexpr (is_complex_t<I>::value) {
    if constexpr (is_complex_t<O>::value) return O(v.real(), v.imag());
    else if constexpr (std::is_same_v<O, bool>) return v != I(0);
    else return convert_scalar<O>(v.real());
  } else if constexpr (std::is_same_v<O, bool>) {
    return v != I(0);
  } else if constexpr (is_complex_t<O>::value) {
    return O(static_cast<typename O::value_type>(v), 0);
  } else if constexpr (is_half_t<O>) {
    return O(static_cast<float>(v));
  } else if constexpr (std::is_unsigned_v<O> && std::is_floating_point_v<I> && sizeof(O) < 8) {
    return static_cast<O>(static_cast<int64_t>(v));
  } else {
    return static_cast<O>(v);
  }
}

template <typename T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<float16> { static constexpr DType value = DType::Float16; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct dtype_of<uint16_t> { static constexpr DType value = DType::UInt16; };
template <> struct dtype_of<uint32_t> { static constexpr DType value = DType::UInt32; };
template <> struct dtype_of<uint64_t> { static constexpr DType value = DType::UInt64; };
template <> struct dtype_of<complex64> { static constexpr DType value = DType::Complex64; };
template <> struct dtype_of<complex128> { static constexpr DType value = DType::Complex128; };

}  // namespace pj
