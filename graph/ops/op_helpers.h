// Small helpers shared by the op declarations in graph/ops/.
#pragma once

#include "graph/op.h"
#include "kernels/copy.h"

namespace pj {

inline Metas one(Shape s, DType t) { return Metas{TensorMeta{std::move(s), t}}; }
// Casts `t` to `dtype` only when needed (no copy when it already matches).
inline Tensor as_dtype(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : cast(t, dtype); }
// TypeError "<op>: <what> must be Float32 or Float64, but got Int32" for non-floating dtypes.
void require_floating(const char* op, const char* what, DType t);
// Normalises a list of axes (negative allowed) and checks for duplicates.
std::vector<int> normalize_axes(const IntList& axes, int ndim);

}  // namespace pj
