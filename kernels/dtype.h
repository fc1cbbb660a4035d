// Element types of pijit tensors and the rules that combine them.
//
// Promotion follows numpy for two tensors (bool < int32 < int64 < float32 < float64, with
// int64 + float32 -> float32 as in MindSpore/PyTorch rather than numpy's float64), and treats a
// Python scalar as "weak": it only changes the result when it is of a higher category
// (bool < integer < floating) than the tensor, and then yields that category's default dtype
// (int64 for ints, float32 for floats), as MindSpore does.
#pragma once

#include <cstdint>
#include <string>

namespace pj {

// Order matters: promotion uses it (checked by static_asserts in dtype.cc).
enum class DType : uint8_t { Bool = 0, Int32, Int64, Float32, Float64 };
constexpr int kNumDTypes = 5;

enum class Category : uint8_t { Bool = 0, Integer = 1, Floating = 2 };

inline int itemsize(DType t) {
  switch (t) {
    case DType::Bool: return 1;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Float32: return 4;
    case DType::Float64: return 8;
  }
  return 0;
}

inline Category category(DType t) {
  switch (t) {
    case DType::Bool: return Category::Bool;
    case DType::Int32:
    case DType::Int64: return Category::Integer;
    default: return Category::Floating;
  }
}
inline bool is_floating(DType t) { return category(t) == Category::Floating; }
inline bool is_integral(DType t, bool include_bool) {
  return category(t) == Category::Integer || (include_bool && t == DType::Bool);
}

// MindSpore's spelling: "Float32", "Int64", "Bool".
const char* dtype_name(DType t);
// dtype_name's text back; false when unknown.
bool dtype_from_name(const std::string& name, DType* out);
// numpy's spelling: "float32", "int64", "bool".
const char* dtype_numpy_name(DType t);
// Buffer-protocol format character ('f', 'd', 'i', 'q', '?').
char dtype_format_char(DType t);
// Parses a struct-module format string ("<f", "=q", "l", ...); false when unsupported.
bool dtype_from_format(const std::string& fmt, int itemsize, DType* out);

DType promote(DType a, DType b);
// Result dtype of tensor `t` combined with a Python scalar of category `c` (weak scalar).
DType promote_with_scalar(DType t, Category c);
DType default_dtype(Category c);
// Dtype used for float-valued results of integer/bool inputs (exp, mean, true divide).
inline DType to_floating(DType t) { return is_floating(t) ? t : DType::Float32; }

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
    }                                                      \
    __builtin_unreachable();                               \
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

template <typename T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };

}  // namespace pj
