#include "kernels/dtype.h"

#include "common/check.h"

namespace pj {

namespace {
struct DTypeNames {
  const char* ms;      // MindSpore's spelling
  const char* numpy;   // numpy's
  const char* format;  // buffer protocol ("" when the type has none)
};
// Indexed by DType's value.
constexpr DTypeNames kNames[kNumDTypes] = {
    {"Bool", "bool", "?"},          {"Int32", "int32", "i"},         {"Int64", "int64", "q"},
    {"Float32", "float32", "f"},    {"Float64", "float64", "d"},     {"Float16", "float16", "e"},
    {"BFloat16", "bfloat16", ""},   {"Int8", "int8", "b"},           {"Int16", "int16", "h"},
    {"UInt8", "uint8", "B"},        {"UInt16", "uint16", "H"},       {"UInt32", "uint32", "I"},
    {"UInt64", "uint64", "Q"},      {"Complex64", "complex64", "Zf"}, {"Complex128", "complex128", "Zd"},
};

int bits(DType t) { return itemsize(t) * 8; }
}  // namespace

void throw_no_kernel(DType t, const char* where) {
  PJ_THROW(Type) << "dtype " << dtype_name(t) << " is not supported by this operation (" << where << ")";
}

const char* dtype_name(DType t) { return kNames[static_cast<int>(t)].ms; }
const char* dtype_numpy_name(DType t) { return kNames[static_cast<int>(t)].numpy; }
const char* dtype_format(DType t) { return kNames[static_cast<int>(t)].format; }

bool dtype_from_name(const std::string& name, DType* out) {
  for (int k = 0; k < kNumDTypes; ++k)
    if (name == kNames[k].ms) {
      *out = static_cast<DType>(k);
      return true;
    }
  return false;
}

bool dtype_from_format(const std::string& fmt, int size, DType* out) {
  std::string f = fmt;
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@' || f[0] == '!' || f[0] == '>')) {
    if (f[0] == '>' || f[0] == '!') return false;  // big-endian data is not supported
    f = f.substr(1);
  }
  if (f == "Zf") { *out = DType::Complex64; return size == 8; }
  if (f == "Zd") { *out = DType::Complex128; return size == 16; }
  if (f.size() != 1) return false;
  const bool is_signed = f[0] == 'b' || f[0] == 'h' || f[0] == 'i' || f[0] == 'l' || f[0] == 'q' ||
                         f[0] == 'n';
  const bool is_unsigned = f[0] == 'B' || f[0] == 'H' || f[0] == 'I' || f[0] == 'L' || f[0] == 'Q' ||
                           f[0] == 'N';
  if (is_signed || is_unsigned) {  // the letter names a C type; the itemsize says how wide it is
    static const DType kSigned[] = {DType::Int8, DType::Int16, DType::Int32, DType::Int64};
    static const DType kUnsigned[] = {DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64};
    const int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
    if (k < 0) return false;
    *out = is_signed ? kSigned[k] : kUnsigned[k];
    return true;
  }
  switch (f[0]) {
    case '?': *out = DType::Bool; return size == 1;
    case 'e': *out = DType::Float16; return size == 2;
    case 'f': *out = DType::Float32; return size == 4;
    case 'd': *out = DType::Float64; return size == 8;
    default: return false;
  }
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const Category ca = category(a), cb = category(b);
  if (ca != cb) {  // the higher category wins; complex64 widens to hold a float64
    DType hi = ca > cb ? a : b, lo = ca > cb ? b : a;
    if (hi == DType::Complex64 && lo == DType::Float64) return DType::Complex128;
    return hi;
  }
  if (ca == Category::Integer) {
    const bool ua = is_unsigned(a), ub = is_unsigned(b);
    if (ua == ub) return bits(a) >= bits(b) ? a : b;
    // Mixed signedness: only uint8 promotes (to a signed type that holds it), as in MindSpore.
    const DType u = ua ? a : b, s = ua ? b : a;
    if (u == DType::UInt8) return s == DType::Int8 ? DType::Int16 : s;
    PJ_THROW(Type) << "the dtypes " << dtype_name(a) << " and " << dtype_name(b)
                   << " cannot be promoted to a common dtype (MindSpore has no implicit conversion "
                      "between them); cast one of the tensors first";
  }
  if (ca == Category::Floating) {
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return bits(a) >= bits(b) ? a : b;
  }
  return bits(a) >= bits(b) ? a : b;  // complex
}

DType default_dtype(Category c) {
  switch (c) {
    case Category::Bool: return DType::Bool;
    case Category::Integer: return DType::Int64;
    case Category::Floating: return DType::Float32;
    case Category::Complex: return DType::Complex64;
  }
  return DType::Float32;
}

DType promote_with_scalar(DType t, Category c) {
  if (c <= category(t)) return t;
  if (c == Category::Complex && t == DType::Float64) return DType::Complex128;
  return default_dtype(c);
}

}  // namespace pj
