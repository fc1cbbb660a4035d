// Indexing: numpy basic and advanced indexing (x[items], x[items] = value), gather, index_select
// and one_hot.
//
// Basic indexing (ints, slices, None, one Ellipsis) only computes a view. Advanced indexing
// follows numpy exactly: boolean masks become their nonzero() index arrays, all index arrays
// (and, once any array is present, the integer items too) broadcast together to a shape B, and B
// replaces the indexed dims in place when the advanced items are adjacent, or goes first when a
// slice, None or Ellipsis separates them. Every advanced read or write is one "row gather": the
// result is [P..., B..., S...] (P empty in the "go first" case), and for each (p, b) a block of
// S elements is copied from one place in x; the block is a memcpy when S is contiguous in x.
// gather and index_select are the same kernel with P = dims before the axis and S = after it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/tensor.h"

namespace pj {

// One item of a subscript, as Python spells it: x[1, 2:5:-1, None, ..., idx, mask].
struct IndexItem {
  enum class Kind : uint8_t { Int, Slice, NewAxis, Ellipsis, Array };
  Kind kind = Kind::Ellipsis;
  int64_t index = 0;                    // Int: negative counts from the end
  std::optional<int64_t> start, stop;   // Slice: nullopt is Python's None
  int64_t step = 1;                     // Slice: Python's None is 1; 0 raises ValueError
  Tensor array;                         // Array: integer indices, or a bool mask (0-d allowed)

  static IndexItem integer(int64_t i);
  static IndexItem slice(std::optional<int64_t> start = std::nullopt,
                         std::optional<int64_t> stop = std::nullopt, int64_t step = 1);
  static IndexItem new_axis();
  static IndexItem ellipsis();
  static IndexItem tensor(const Tensor& t);
};
using IndexItems = std::vector<IndexItem>;

// x[items] for items without arrays: always a view sharing x's storage.
Tensor basic_index_view(const Tensor& x, const IndexItems& items);
// x[items] for any items: a view when no item is an Array, else a new contiguous tensor.
Tensor advanced_index(const Tensor& x, const IndexItems& items);
// x[items] = value, in place: value broadcasts to the shape of x[items] and is cast to x's dtype.
// With repeated indices the last write wins (writes run in order for each row).
void index_put(const Tensor& x, const IndexItems& items, const Tensor& value);
// x[items] += value, in place, every occurrence of a repeated index adding (the gradient of
// advanced indexing). Floating x.
void index_put_accumulate(const Tensor& x, const IndexItems& items, const Tensor& value);
// Shape of x[items] from shapes alone (Array items' data is not read); NotImplemented for bool
// masks, whose result size depends on their data.
Shape index_shape(const Shape& x, const IndexItems& items);

// Items as plain integers (4 per item) plus the Array items' tensors in order, so that "index"
// and "index_put" ops can carry them as an attribute and extra inputs.
std::vector<int64_t> encode_index_items(const IndexItems& items);
IndexItems decode_index_items(const std::vector<int64_t>& code, const std::vector<Tensor>& arrays);

// MindSpore ops.gather(params, indices, axis): out = params.shape[:axis] + indices.shape +
// params.shape[axis+1:]; negative indices wrap once, out of range raises IndexError.
Shape gather_shape(const Shape& params, const Shape& indices, int64_t axis, int* axis_out);
void gather_into(const Tensor& out, const Tensor& params, const Tensor& indices, int axis);
Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis);
// index_select(x, axis, index): gather with a 1-D index.
Shape index_select_shape(const Shape& x, const Shape& index, int64_t axis, int* axis_out);
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);

// one_hot(indices, depth, on, off, axis): a new dim of size depth at `axis` (-1: last). Indices
// outside [0, depth), negative ones included, give a row of `off` (TensorFlow/MindSpore).
Shape one_hot_shape(const Shape& indices, int64_t depth, int64_t axis, int* axis_out);
void one_hot_into(const Tensor& out, const Tensor& indices, double on, double off, int axis);

// Checks that an index tensor has an integer dtype (TypeError otherwise).
void check_index_dtype(const Tensor& t, const char* what);

// out = base with src's slices added at `index` along `axis`: out[.., index[i], ..] += src[.., i, ..]
// for each i in order (repeated indices accumulate; the gradient of gathering rows). index: 1-D
// integers in [-D, D) (IndexError otherwise); src: base's shape with `index.numel()` along axis.
// Floating dtypes.
void index_add_into(const Tensor& out, const Tensor& base, const Tensor& index, const Tensor& src, int axis);
// out = base with each element of src added at the position whose coordinate along `axis` is
// index's element there (torch.scatter_add; the gradient of sort and topk): index and src have one
// shape, base that shape but along axis. Floating dtypes; IndexError on an index out of range.
void scatter_add_into(const Tensor& out, const Tensor& base, const Tensor& index, const Tensor& src, int axis);

}  // namespace pj
