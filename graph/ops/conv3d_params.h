// Attribute parsing of the 3-D convolution and pooling ops (graph/ops/conv3d_ops.cc), shared with
// their gradient rules (graph/grads/conv3d_grads.cc).
#pragma once

#include "graph/op.h"
#include "kernels/conv3d.h"
#include "kernels/pool3d.h"

namespace pj {

// conv3d(x, weight[, bias]) with 'same' / 'valid' padding resolved; `out` gets the output shape.
Conv3dParams conv3d_params(const Metas& in, const Attrs& a, Shape* out);
// conv_transpose3d(x, weight[, bias]); `out` gets the output shape.
Conv3dParams conv_transpose3d_params(const Metas& in, const Attrs& a, Shape* out);
// conv3d_weight_grad(x, dout); `out` gets (OC, C/groups, kD, kH, kW).
Conv3dParams conv3d_weight_grad_params(const Metas& in, const Attrs& a, Shape* out);
// max_pool3d / avg_pool3d on x: the parameters with 'same' / 'valid' padding resolved and the
// pooled shape (N, C, OD, OH, OW); raises the user-facing errors.
Pool3dParams pool3d_params(const TensorMeta& x, const Attrs& a, const char* op, bool is_max, Shape* out);

}  // namespace pj
