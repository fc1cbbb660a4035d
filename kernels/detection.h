// Detection and image-sampling kernels with MindSpore's CPU semantics: non-maximum suppression
// (NMSWithMask), ROIAlign and its input gradient, CropAndResize, and grid sampling (2-D and 3-D,
// torch.nn.functional.grid_sample's rules) with gradients for the input and the grid.
//
// Every kernel reads its inputs through contiguous copies where needed, writes contiguous outputs
// (graph/ops hands it contiguous ones) and computes in the element type
// of its floating inputs. Shapes and attributes are checked in graph/ops/detection_ops.cc; errors
// that depend on values (a box index out of range) are raised here.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace pj {

// bboxes (N, 5): x1, y1, x2, y2, score. boxes_out (N, 5) the rows sorted by score, highest first
// (stable: equal scores keep their order); idx_out int32 (N,) 0..N-1, the positions in boxes_out
// (MindSpore's CPU/GPU kernels return exactly that); mask_out bool (N,) greedy suppression over the
// sorted rows: a row is dropped when its IoU (areas without +1) with a kept earlier row is greater
// than iou_threshold.
void nms_with_mask_into(const Tensor& boxes_out, const Tensor& idx_out, const Tensor& mask_out,
                        const Tensor& bboxes, double iou_threshold);

struct RoiAlignParams {
  int64_t pooled_h, pooled_w;
  double spatial_scale;
  int64_t sample_num;    // > 0: samples per bin side; else floor(roi size / pooled size)
  int64_t roi_end_mode;  // 0 or 1: added to x2, y2 before scaling; 0 also forces rois >= 1x1
};
// x (N, C, H, W), rois (R, 5): batch index, x1, y1, x2, y2. out (R, C, pooled_h, pooled_w): the
// average of bilinear samples on a regular grid in each bin (Caffe2/Detectron's legacy sampling:
// points beyond one pixel outside the map read 0 but count). A batch index outside [0, N) raises.
void roi_align_into(const Tensor& out, const Tensor& x, const Tensor& rois, const RoiAlignParams& p);
// dx (N, C, H, W) = the adjoint of roi_align_into applied to dy (R, C, pooled_h, pooled_w).
void roi_align_grad_into(const Tensor& dx, const Tensor& dy, const Tensor& rois, const RoiAlignParams& p);

enum class CropMethod : uint8_t { bilinear, nearest };
// image (B, H, W, C) floating, boxes (R, 4) normalised y1, x1, y2, x2, box_index int32 (R,).
// out float32 (R, crop_h, crop_w, C), TensorFlow's CropAndResize sampling: y maps to
// y * (H - 1); positions outside the image read extrapolation_value.
void crop_and_resize_into(const Tensor& out, const Tensor& image, const Tensor& boxes, const Tensor& box_index,
                          CropMethod method, double extrapolation_value);

// dimage (B, H, W, C) and dboxes (R, 4), float32, from dout (R, crop_h, crop_w, C): the image's
// gradient (the adjoint of the bilinear sampling) and the boxes' (through the sample positions).
// Zeros for 'nearest' (MindSpore differentiates bilinear only).
void crop_and_resize_grad_into(const Tensor& dimage, const Tensor& dboxes, const Tensor& dout, const Tensor& image,
                               const Tensor& boxes, const Tensor& box_index, CropMethod method);

enum class GridMode : uint8_t { bilinear, nearest };
enum class GridPad : uint8_t { zeros, border, reflection };
// x (N, C, *S) with S two or three spatial dims, grid (N, *O, len(S)) holding (x, y[, z]) in
// [-1, 1]; out (N, C, *O). torch.nn.functional.grid_sample's rules (nearest rounds half to even).
void grid_sample_into(const Tensor& out, const Tensor& x, const Tensor& grid, GridMode mode, GridPad pad,
                      bool align_corners);
// dx like x, dgrid like grid (zero for nearest), from dout like out.
void grid_sample_grad_into(const Tensor& dx, const Tensor& dgrid, const Tensor& dout, const Tensor& x,
                           const Tensor& grid, GridMode mode, GridPad pad, bool align_corners);

}  // namespace pj
