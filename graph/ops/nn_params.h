// Attribute parsing that several op declarations and passes share (conv2d and max_pool2d by
// conv2d_block, a block's kernel spec by the layout pass, a reduction's axes by the fusion pass).
#pragma once

#include "graph/op.h"
#include "kernels/conv.h"
#include "kernels/conv_block.h"
#include "kernels/pool.h"

namespace pj {

// conv2d(x, weight[, bias]) with 'same' padding resolved; raises the user-facing shape errors.
Conv2dParams conv2d_params(const Metas& in, const Attrs& a);
// conv_transpose2d(x, weight[, bias]); `out` gets the output shape.
Conv2dParams conv_transpose2d_params(const Metas& in, const Attrs& a, Shape* out);
// conv2d_weight_grad(x, dout) (conv2d's weight gradient); `out` gets its shape (OC, C/groups, KH, KW).
Conv2dParams conv2d_weight_grad_params(const Metas& in, const Attrs& a, Shape* out);
// max_pool2d / avg_pool2d attributes; raises on invalid ones.
Pool2dParams pool_params(const Attrs& a, const char* op, bool is_max);
// The pooled (N, C, OH, OW) of x, or ValueError when a window does not fit.
Shape pool_shape(const Shape& x, const Pool2dParams& p, const char* op);

// A conv2d_block node's kernel spec (its inputs', attributes' and output's metas); raises as its
// infer does.
ConvBlockSpec conv_block_spec(const Metas& in, const Attrs& a, const Metas& out);

// The axes a reduction's "axis" attribute names (None: all), normalised; none on a 0-d tensor.
std::vector<int> reduce_axes(const Attrs& a, int ndim);

}  // namespace pj
