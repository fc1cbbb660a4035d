// A convolution block kept in oneDNN's blocked layout: conv2d -> per-channel affine
// (y - m) * a + sh (an inference batch_norm) -> ReLU -> max pool, each optional after the conv.
//
// Run op by op, every step reads and writes NCHW, and the conv's result is reordered out of its
// nChw16c layout at full size. Here the conv writes nChw16c, the affine and ReLU run in place on
// that buffer while it is in cache, the pooling reads it in the same layout, and only the (pooled)
// result is converted to NCHW. The values are those of the ops run one by one, bit for bit: the
// same oneDNN conv plan (conv2d_dst_is_nchw16c), the same IEEE operations in the same order
// (this file is compiled without multiply-add contraction), the max pooling max_pool2d runs (its own
// tiled kernel, or oneDNN's, and max_pool2d itself when a value is NaN or infinite, since oneDNN's
// pooling drops NaN: kernels/nonfinite.h). The graph compiler makes these from matching chains (graph/passes.h: fuse_conv).
//
// Between two blocks the activation may stay blocked (graph/passes.h: layout): the first leaves its
// result in nChw16c (blocked_out), the next reads it as it is (blocked_in), and neither reorders.
// Such a tensor keeps its NCHW shape and size (C is a multiple of 16); only its bytes are ordered
// (n, c / 16, h, w, c % 16).
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
  bool blocked_in = false, blocked_out = false;  // x's / out's bytes are nChw16c
};

class ConvBlockPlan;
// Null when the block cannot run in nChw16c (conv2d would not write that layout, or read it for
// blocked_in, or oneDNN has no fast pooling for it): then run the ops one by one.
std::shared_ptr<const ConvBlockPlan> conv_block_plan(const ConvBlockSpec& spec);
// out (NCHW, contiguous) = the block on x; m, a, sh: C floats each (undefined without affine).
void conv_block_run(const ConvBlockPlan& plan, const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                    const Tensor& m, const Tensor& a, const Tensor& sh);

// Float32 (N, C, H, W) with C a multiple of 16, contiguous, between NCHW bytes and nChw16c bytes
// (the op-by-op path of a block with blocked_in / blocked_out, and tests).
Tensor nchw16c_to_nchw(const Tensor& blocked);
Tensor nchw_to_nchw16c(const Tensor& plain);

}  // namespace pj
