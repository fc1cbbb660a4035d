// Spatial resampling and padding: interpolate (nearest, bilinear) over NCHW tensors and N-d pad
// (constant, reflect, replicate, circular), forward only, with PyTorch's semantics.
//
// Both are gathers: every output element reads input elements found through small per-dim index
// tables (and, for bilinear, weight tables) computed once per call, so any input strides are read
// in place. Loops run in parallel over output rows. interpolate computes its source coordinates
// in the element type, as PyTorch's CPU kernels do (float for float32), so the chosen neighbours
// match PyTorch's exactly, including its float rounding of in/out ratios.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/tensor.h"

namespace pj {

enum class InterpMode : uint8_t { nearest, bilinear };

// out (N, C, OH, OW) resampled from x (N, C, H, W), H, W, OH, OW > 0.
//   nearest: source index floor(o * scale) clamped to in - 1, scale = in / out computed in float
//            (PyTorch's legacy 'nearest'); any dtype.
//   bilinear: half-pixel centres (source (o + 0.5) * scale - 0.5, clamped at 0) unless
//            align_corners, where scale = (in - 1) / (out - 1) and source o * scale; floating only.
// `scales` (two values, or nullptr) are PyTorch's scale_factors: when given (> 0) the index
// computation uses 1 / scale instead of in / out (ignored under align_corners).
void interpolate_into(const Tensor& out, const Tensor& x, InterpMode mode, bool align_corners,
                      const double* scales = nullptr);

enum class PadMode : uint8_t { constant, reflect, replicate, circular };

// out = x padded by `pads` in torch.nn.functional.pad order: (left, right) of the last dim, then
// (top, bottom) of the one before, and so on; negative pads crop. out's shape is x's grown by the
// pads (checked by graph/ops). Out-of-range positions read, per mode: `value` (constant), the
// mirror image without repeating the edge (reflect), the edge (replicate), the other end
// (circular). As in PyTorch, reflect and replicate work relative to the uncropped input when the
// other side of a dim is cropped, circular wraps around the cropped input.
void pad_into(const Tensor& out, const Tensor& x, const std::vector<int64_t>& pads, PadMode mode, double value);

}  // namespace pj
