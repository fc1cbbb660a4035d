// float32 activations between plain NCHW and oneDNN's nChw16c (channels in blocks of 16,
// innermost; the last block zero-padded), written here rather than by oneDNN's reorder primitives.
// oneDNN makes a reorder primitive, with JIT code of its own, per shape: a training loop over 12
// batch sizes ran a copy per size of every activation reorder around every convolution, and lost
// ~40 us a CNN training step to instruction-cache misses against a loop of one size. This is one
// piece of code for every shape (AVX2 8x8 transposes where the build has AVX2). The values are
// copied, so the result is oneDNN's bit for bit.
#pragma once

#include <cstdint>

#include "oneapi/dnnl/dnnl.hpp"

namespace pj {

// Reorders `from` into `to` and returns true when one is dense NCHW float32 and the other dense
// nChw16c of the same dims; false (nothing done) otherwise.
bool blocked_layout_reorder(const dnnl::memory& from, const dnnl::memory& to);

// The same copy between raw float32 buffers of dims (N, C, H, W): NCHW -> nChw16c when
// `to_blocked`, else back (the op-by-op path of a conv block's blocked_in / blocked_out).
void blocked_layout_copy(const float* src, float* dst, int64_t N, int64_t C, int64_t H, int64_t W, bool to_blocked);

// One block of 16 channels of one image: `blocked` (hw rows of 16 channels) into the channels' NCHW
// planes plane[c], c < valid (the rest of the block is padding). For kernels that compute in
// nChw16c and write NCHW (a pooled conv block).
void blocked_to_planes(const float* blocked, float* const* plane, int valid, int64_t hw);

}  // namespace pj
