// Image kernels of mindspore.dataset.vision (pyscripts/pijit/dataset/vision): one fused
// "gather, then map values" pass for the crop/pad/flip/rescale/normalize/HWC2CHW family, and
// OpenCV-compatible resizing.
//
// image_map_into: every output pixel reads one source pixel (or a fill value) found by an affine
// index map with flips and a border rule, then runs that value through an optional per-channel
// chain `v = float(x); v = v * scale + shift; v = (v - mean[c]) / std[c]`, and writes it in the
// requested layout. A data pipeline's RandomCrop(padding) + RandomHorizontalFlip + Rescale +
// Normalize + HWC2CHW is one call and one pass over the output, with the same float rounding as
// running the steps one by one (MindSpore computes each step in float32; so does this).
//
// image_resize_into: cv::resize's arithmetic (MindSpore's C++ Resize calls it): source position
// (d + 0.5) * in / out - 0.5 for linear and cubic (A = -0.75), floor(d * in / out) for nearest,
// box averages for area; uint8 images use OpenCV's 11-bit fixed-point weights and its rounding,
// so results equal OpenCV's to the bit; float images compute in float.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/tensor.h"

namespace pj {

// cv::BorderTypes as MindSpore's Border names them: constant, edge (replicate), reflect
// (reflect-101: no repeated edge), symmetric (reflect with the edge repeated).
enum class ImageBorder : uint8_t { constant, edge, reflect, symmetric };

struct ImageMapPlan {
  // Source: (H, W, C) when !in_chw, (C, H, W) when in_chw; C = 1 for a 2-D image.
  bool in_chw = false;
  // Geometry. Output pixel (oy, ox) reads source row top + (vflip ? out_h - 1 - oy : oy) and
  // column left + (hflip ? out_w - 1 - ox : ox); coordinates outside the image go through
  // `border` (constant: fill[c]).
  int64_t out_h = 0, out_w = 0, top = 0, left = 0;
  bool hflip = false, vflip = false;
  ImageBorder border = ImageBorder::constant;
  std::vector<double> fill;  // per channel (missing channels: 0)
  // Values: when !to_float the elements are copied (fill cast to the dtype); otherwise float32 (or
  // the out tensor's float16) of the chain above.
  bool to_float = false;
  bool rescale = false;
  float scale = 1, shift = 0;
  bool normalize = false;
  std::vector<float> mean, std;  // per channel
  // Output: (C', OH, OW) when out_chw else (OH, OW, C'), C' = C (+1 zero channel when pad_channel,
  // NormalizePad's); a 2-D out tensor for a 2-D result.
  bool out_chw = false;
  bool pad_channel = false;
};

// out's shape and dtype were fixed by the op's infer (graph/ops/image_ops.cc).
void image_map_into(const Tensor& out, const Tensor& x, const ImageMapPlan& p);

enum class ImageInterp : uint8_t { nearest, linear, cubic, area };

// out (OH, OW[, C]) resampled from x (H, W[, C]); uint8 (fixed point, OpenCV's rounding),
// float32 or float64. Contiguous x.
void image_resize_into(const Tensor& out, const Tensor& x, ImageInterp mode);

}  // namespace pj
