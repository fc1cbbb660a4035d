// A convolution block kept in oneDNN's blocked layout: conv2d -> per-channel affine
// (y - m) * a + sh (an inference batch_norm) -> ReLU -> max pool, each optional after the conv.
//
// Run op by op, every step reads and writes NCHW, and the conv's result is reordered out of its
// nChw16c layout at full size. Here the conv writes nChw16c, the affine and ReLU run in place on
// that buffer while it is in cache, the pooling reads it in the same layout, and only the (pooled)
// result is converted to NCHW. The values are those of the ops run one by one, bit for bit: the
// same oneDNN conv plan (conv2d_dst_is_nchw16c), the same IEEE operations in the same order
// (this file is compiled without multiply-add contraction), oneDNN's max pooling as max_pool2d
// uses it. The graph compiler makes these from matching chains (graph/passes.h: fuse_conv).
#pragma once

#include <memory>
#include <optional>

#include "kernels/conv.h"
#include "kernels/pool.h"

namespace pj {

struct ConvBlockSpec {
  Shape x, w, conv_out, out;  // out: conv_out, or pooled
  Conv2dParams conv;
  bool bias = false, affine = false, relu = false;
  std::optional<Pool2dParams> pool;  // max pooling
};

class ConvBlockPlan;
// Null when the block cannot run in nChw16c (conv2d would not write that layout, or oneDNN has
// no fast pooling for it): then run the ops one by one.
std::shared_ptr<const ConvBlockPlan> conv_block_plan(const ConvBlockSpec& spec);
// out (NCHW, contiguous) = the block on x; m, a, sh: C floats each (undefined without affine).
void conv_block_run(const ConvBlockPlan& plan, const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                    const Tensor& m, const Tensor& a, const Tensor& sh);

}  // namespace pj
