#include "kernels/dtype.h"

#include "common/check.h"

namespace pj {

static_assert(DType::Bool < DType::Int32 && DType::Int32 < DType::Int64 &&
                  DType::Int64 < DType::Float32 && DType::Float32 < DType::Float64,
              "promote() relies on the DType order");

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "Bool";
    case DType::Int32: return "Int32";
    case DType::Int64: return "Int64";
    case DType::Float32: return "Float32";
    case DType::Float64: return "Float64";
  }
  return "?";
}

bool dtype_from_name(const std::string& name, DType* out) {
  for (int k = 0; k < kNumDTypes; ++k)
    if (name == dtype_name(static_cast<DType>(k))) {
      *out = static_cast<DType>(k);
      return true;
    }
  return false;
}

const char* dtype_numpy_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

char dtype_format_char(DType t) {
  switch (t) {
    case DType::Bool: return '?';
    case DType::Int32: return 'i';
    case DType::Int64: return 'q';
    case DType::Float32: return 'f';
    case DType::Float64: return 'd';
  }
  return '?';
}

bool dtype_from_format(const std::string& fmt, int size, DType* out) {
  std::string f = fmt;
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@' || f[0] == '!' || f[0] == '>')) {
    if (f[0] == '>' || f[0] == '!') return false;  // big-endian data is not supported
    f = f.substr(1);
  }
  if (f.size() != 1) return false;
  switch (f[0]) {
    case '?': *out = DType::Bool; return size == 1;
    case 'f': *out = DType::Float32; return size == 4;
    case 'd': *out = DType::Float64; return size == 8;
    case 'i': case 'l': case 'q': case 'h': case 'b':
      if (size == 4) { *out = DType::Int32; return true; }
      if (size == 8) { *out = DType::Int64; return true; }
      return false;
    default: return false;
  }
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  // int64 with float32 stays float32 (MindSpore/PyTorch), so the max of the order works.
  return a > b ? a : b;
}

DType default_dtype(Category c) {
  switch (c) {
    case Category::Bool: return DType::Bool;
    case Category::Integer: return DType::Int64;
    case Category::Floating: return DType::Float32;
  }
  return DType::Float32;
}

DType promote_with_scalar(DType t, Category c) {
  if (c <= category(t)) return t;
  return default_dtype(c);
}

}  // namespace pj
