// Shape and layout ops: views (reshape when strides allow, permute, squeeze, expand_dims, flatten,
// broadcast_to, split) and the copy kernels that move whole rows (concat, stack, tile).
//
// Views share the input's Storage and only compute a new shape/strides/offset, with numpy's
// rules; reshape (and flatten, which is a reshape) copies only when no strides can express the
// new shape. The copy kernels work on contiguous runs: they memcpy the longest run both sides
// share and parallelise over runs, and fall back to copy_into (strided, casting) otherwise.
// Each *_shape function validates user input (pj::Error, numpy's wording with "tensor" for
// "array") and is what the ops' `infer` calls; the *_into kernels assume validated arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/tensor.h"

namespace pj {

using Ints = std::vector<int64_t>;

// ---- views ------------------------------------------------------------------------------------

// Resolves one -1 and checks the element count ("cannot reshape tensor of size 6 into shape (4,)").
Shape reshape_shape(const Shape& in, const Ints& spec);
// Strides that view (shape, strides) as new_shape without copying; false when none exist
// (numpy's _attempt_nocopy_reshape: only runs of dims that are contiguous among themselves merge).
bool reshape_view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape,
                          Shape* out);
// A view when reshape_view_strides allows, else a contiguous copy (check with same_storage).
Tensor reshape(const Tensor& x, const Ints& spec);

// Validates a permutation of range(ndim) ("axes don't match tensor", "repeated axis in transpose").
std::vector<int> check_permutation(const Ints& perm, int ndim);
Tensor permute(const Tensor& x, const Ints& perm);
// Reverses the dims (transpose with perm=None).
Tensor transpose_all(const Tensor& x);

// Shape after squeezing `axes` (all size-1 dims when nullopt); a named axis must have size 1.
Shape squeeze_shape(const Shape& in, const std::optional<Ints>& axes);
Tensor squeeze(const Tensor& x, const std::optional<Ints>& axes);
// axis in [-ndim-1, ndim], as numpy.expand_dims.
int expand_dims_axis(int64_t axis, int ndim);
Tensor expand_dims(const Tensor& x, int64_t axis);
// Merges dims start..end (inclusive, negative allowed) into one; a 0-d input becomes (1,).
Shape flatten_shape(const Shape& in, int64_t start_dim, int64_t end_dim);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);

// Target shape of broadcast_to; -1 keeps the input's size for that dim (MindSpore's rule).
Shape broadcast_to_shape(const Shape& in, const Ints& shape);
Tensor broadcast_to(const Tensor& x, const Ints& shape);

// numpy.split: `sections` equal parts (an unequal division raises "array split does not result in
// an equal division"), or split points `indices`, clamped like slice bounds. (start, length) pairs.
std::vector<std::pair<int64_t, int64_t>> split_ranges_sections(int64_t len, int64_t sections);
std::vector<std::pair<int64_t, int64_t>> split_ranges_indices(int64_t len, const Ints& indices);
// Views of x along `axis` (already normalised) for the given ranges.
std::vector<Tensor> split_views(const Tensor& x, int axis,
                                const std::vector<std::pair<int64_t, int64_t>>& ranges);

// ---- copies -----------------------------------------------------------------------------------

// Output shape of concat; sets *axis_out to the normalised axis. Errors name the mismatching dim.
Shape concat_shape(const std::vector<Shape>& in, int64_t axis, int* axis_out);
// out's dtype is the promoted dtype; inputs of other dtypes are cast while copying.
void concat_into(const Tensor& out, const std::vector<Tensor>& in, int axis);
Tensor concat(const std::vector<Tensor>& in, int64_t axis);

Shape stack_shape(const std::vector<Shape>& in, int64_t axis, int* axis_out);
void stack_into(const Tensor& out, const std::vector<Tensor>& in, int axis);
Tensor stack(const std::vector<Tensor>& in, int64_t axis);

// numpy.tile: reps shorter than ndim are padded with leading 1s, and the shape with leading 1s
// when reps is longer.
Shape tile_shape(const Shape& in, const Ints& reps);
void tile_into(const Tensor& out, const Tensor& x);
Tensor tile(const Tensor& x, const Ints& reps);

// Promoted dtype of several tensors (concat, stack).
DType promote_all(const std::vector<DType>& dts);

}  // namespace pj
