#include "graph/ops/op_helpers.h"

namespace pj {

void require_floating(const char* op, const char* what, DType t) {
  if (!is_floating(t))
    PJ_THROW(Type) << op << ": " << what << " must be Float32 or Float64, but got " << dtype_name(t);
}

std::vector<int> normalize_axes(const IntList& axes, int ndim) {
  std::vector<int> out;
  std::vector<bool> seen(std::max(ndim, 1), false);
  for (int64_t a : axes) {
    int n = normalize_axis(a, ndim);
    if (seen[n]) PJ_THROW(Value) << "duplicate value in 'axis'";
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

}  // namespace pj
