// Detection and image-sampling ops (kernels in kernels/detection.cc). The Python layer
// (pijit/ops/detection.py) raises MindSpore's own messages for its primitives before calling
// these; the checks here keep direct registry calls safe and name the registry op.
//
//   nms_with_mask(bboxes (N, 5)) -> (boxes (N, 5), idx int32 (N,), mask bool (N,))
//     iou_threshold float (default 0.5).
//   roi_align(x (N, C, H, W), rois (R, 5)) -> (R, C, pooled_height, pooled_width)
//     pooled_height, pooled_width int > 0; spatial_scale float; sample_num int (default 2);
//     roi_end_mode 0 or 1 (default 1). Raises on a roi batch index outside [0, N).
//   roi_align_grad(dy, rois) -> dx of shape xdiff_shape: the adjoint of roi_align.
//   crop_and_resize(image float32 (B, H, W, C), boxes float32 (R, 4), box_index int32 (R,))
//     -> float32 (R, crop_height, crop_width, C); method 'bilinear' or 'nearest',
//     extrapolation_value float. Raises on a box index outside [0, B).
//   crop_and_resize_grad(dout, image, boxes, box_index) -> (dimage, dboxes), float32, same attributes.
//   grid_sample(x (N, C, H, W) | (N, C, D, H, W), grid (N, Ho, Wo, 2) | (N, Do, Ho, Wo, 3))
//     mode 'bilinear' | 'nearest', padding_mode 'zeros' | 'border' | 'reflection', align_corners.
//   grid_sample_grad(dout, x, grid) -> (dx, dgrid), same attributes.
#include "graph/ops/op_helpers.h"
#include "kernels/detection.h"

namespace pj {
namespace {

// Runs f on contiguous stand-ins for the outputs, copied back where an output was a view.
template <typename F>
void with_contiguous_outs(const Tensors& out, F f) {
  Tensors dst;
  for (const Tensor& t : out) dst.push_back(t.is_contiguous() ? t : Tensor::empty(t.shape(), t.dtype()));
  f(dst);
  for (size_t i = 0; i < out.size(); ++i)
    if (!dst[i].same_storage(out[i])) copy_into(out[i], dst[i]);
}

// ---- nms_with_mask -------------------------------------------------------------------------------

PJ_REGISTER_OP("nms_with_mask")
    .inputs(1)
    .attrs({"iou_threshold"})
    .infer([](const Metas& in, const Attrs&) {
      const TensorMeta& b = in[0];
      if (b.shape.size() != 2 || b.shape[1] != 5)
        PJ_THROW(Value) << "nms_with_mask: 'bboxes' must have shape (N, 5), but got " << shape_str(b.shape);
      require_floating("nms_with_mask", "bboxes", b.dtype);
      const int64_t n = b.shape[0];
      return Metas{{{n, 5}, b.dtype}, {{n}, DType::Int32}, {{n}, DType::Bool}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      const double thr = a.is_none("iou_threshold") ? 0.5 : a.f("iou_threshold");
      with_contiguous_outs(out, [&](const Tensors& o) { nms_with_mask_into(o[0], o[1], o[2], in[0], thr); });
    })
    .total();

// ---- roi_align -----------------------------------------------------------------------------------

RoiAlignParams roi_params(const Attrs& a) {
  const char* op = "roi_align";
  RoiAlignParams p;
  if (a.is_none("pooled_height") || a.is_none("pooled_width"))
    PJ_THROW(Value) << op << ": 'pooled_height' and 'pooled_width' are required";
  p.pooled_h = a.i("pooled_height");
  p.pooled_w = a.i("pooled_width");
  if (p.pooled_h <= 0 || p.pooled_w <= 0)
    PJ_THROW(Value) << op << ": 'pooled_height' and 'pooled_width' must be positive, but got " << p.pooled_h
                    << " and " << p.pooled_w;
  p.spatial_scale = a.is_none("spatial_scale") ? 1.0 : a.f("spatial_scale");
  p.sample_num = a.i("sample_num", 2);
  p.roi_end_mode = a.i("roi_end_mode", 1);
  if (p.roi_end_mode != 0 && p.roi_end_mode != 1)
    PJ_THROW(Value) << op << ": 'roi_end_mode' must be 0 or 1, but got " << p.roi_end_mode;
  return p;
}

void check_rois(const char* op, const TensorMeta& rois, DType x) {
  if (rois.shape.size() != 2 || rois.shape[1] != 5)
    PJ_THROW(Value) << op << ": 'rois' must have shape (R, 5), but got " << shape_str(rois.shape);
  if (rois.dtype != x)
    PJ_THROW(Type) << op << ": 'rois' must have the dtype of the features (" << dtype_name(x) << "), but got "
                   << dtype_name(rois.dtype);
}

PJ_REGISTER_OP("roi_align")
    .inputs(2)
    .attrs({"pooled_height", "pooled_width", "spatial_scale", "sample_num", "roi_end_mode"})
    .infer([](const Metas& in, const Attrs& a) {
      const char* op = "roi_align";
      const RoiAlignParams p = roi_params(a);
      if (in[0].shape.size() != 4)
        PJ_THROW(Value) << op << ": 'features' must be 4-D (N, C, H, W), but got " << shape_str(in[0].shape);
      require_floating(op, "features", in[0].dtype);
      check_rois(op, in[1], in[0].dtype);
      return one({in[1].shape[0], in[0].shape[1], p.pooled_h, p.pooled_w}, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      const RoiAlignParams p = roi_params(a);
      with_contiguous_out(out[0], [&](const Tensor& o) { roi_align_into(o, in[0], in[1], p); });
    })
    .raises_on_values();

PJ_REGISTER_OP("roi_align_grad")
    .inputs(2)
    .attrs({"xdiff_shape", "pooled_height", "pooled_width", "spatial_scale", "sample_num", "roi_end_mode"})
    .infer([](const Metas& in, const Attrs& a) {
      const char* op = "roi_align_grad";
      const RoiAlignParams p = roi_params(a);
      const IntList& xs = a.ints("xdiff_shape");
      if (xs.size() != 4) PJ_THROW(Value) << op << ": 'xdiff_shape' must have 4 elements";
      require_floating(op, "dy", in[0].dtype);
      check_rois(op, in[1], in[0].dtype);
      const Shape want{in[1].shape[0], xs[1], p.pooled_h, p.pooled_w};
      if (in[0].shape != want)
        PJ_THROW(Value) << op << ": 'dy' must have shape " << shape_str(want) << ", but got " << shape_str(in[0].shape);
      return one(Shape(xs.begin(), xs.end()), in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      const RoiAlignParams p = roi_params(a);
      with_contiguous_out(out[0], [&](const Tensor& o) { roi_align_grad_into(o, in[0], in[1], p); });
    })
    .raises_on_values();

// ---- crop_and_resize -----------------------------------------------------------------------------

CropMethod crop_method(const Attrs& a) {
  const std::string m = a.is_none("method") ? "bilinear" : a.s("method");
  if (m != "bilinear" && m != "nearest")
    PJ_THROW(Value) << "crop_and_resize: 'method' must be 'bilinear' or 'nearest', but got '" << m << "'";
  return m == "nearest" ? CropMethod::nearest : CropMethod::bilinear;
}

PJ_REGISTER_OP("crop_and_resize")
    .inputs(3)
    .attrs({"crop_height", "crop_width", "method", "extrapolation_value"})
    .infer([](const Metas& in, const Attrs& a) {
      const char* op = "crop_and_resize";
      crop_method(a);
      const int64_t ch = a.i("crop_height"), cw = a.i("crop_width");
      if (ch <= 0 || cw <= 0) PJ_THROW(Value) << op << ": the crop size must be positive, but got " << ch << ", " << cw;
      if (in[0].shape.size() != 4 || in[0].dtype != DType::Float32)
        PJ_THROW(Value) << op << ": 'image' must be a 4-D float32 tensor, but got " << shape_str(in[0].shape) << " "
                        << dtype_name(in[0].dtype);
      if (in[1].shape.size() != 2 || in[1].shape[1] != 4 || in[1].dtype != DType::Float32)
        PJ_THROW(Value) << op << ": 'boxes' must be a float32 (R, 4) tensor, but got " << shape_str(in[1].shape);
      if (in[2].shape != Shape{in[1].shape[0]} || in[2].dtype != DType::Int32)
        PJ_THROW(Value) << op << ": 'box_index' must be an int32 (R,) tensor, but got " << shape_str(in[2].shape);
      return one({in[1].shape[0], ch, cw, in[0].shape[3]}, DType::Float32);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      const CropMethod m = crop_method(a);
      const double ev = a.is_none("extrapolation_value") ? 0.0 : a.f("extrapolation_value");
      with_contiguous_out(out[0], [&](const Tensor& o) { crop_and_resize_into(o, in[0], in[1], in[2], m, ev); });
    })
    .raises_on_values();

PJ_REGISTER_OP("crop_and_resize_grad")
    .inputs(4)
    .attrs({"crop_height", "crop_width", "method", "extrapolation_value"})
    .infer([](const Metas& in, const Attrs& a) {
      const Metas fwd = get_op("crop_and_resize").infer({in[1], in[2], in[3]}, a);
      if (in[0].shape != fwd[0].shape || in[0].dtype != DType::Float32)
        PJ_THROW(Value) << "crop_and_resize_grad: 'dout' must be float32 of shape " << shape_str(fwd[0].shape)
                        << ", but got " << shape_str(in[0].shape);
      return Metas{{in[1].shape, DType::Float32}, {in[2].shape, DType::Float32}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      const CropMethod m = crop_method(a);
      with_contiguous_outs(out, [&](const Tensors& o) {
        crop_and_resize_grad_into(o[0], o[1], in[0], in[1], in[2], in[3], m);
      });
    })
    .raises_on_values();

// ---- grid_sample ---------------------------------------------------------------------------------

struct GridArgs {
  GridMode mode;
  GridPad pad;
  bool align_corners;
};

GridArgs grid_args(const Attrs& a) {
  const char* op = "grid_sample";
  GridArgs r;
  const std::string m = a.is_none("mode") ? "bilinear" : a.s("mode");
  if (m == "bilinear") r.mode = GridMode::bilinear;
  else if (m == "nearest") r.mode = GridMode::nearest;
  else PJ_THROW(Value) << op << ": 'mode' must be 'bilinear' or 'nearest', but got '" << m << "'";
  const std::string p = a.is_none("padding_mode") ? "zeros" : a.s("padding_mode");
  if (p == "zeros") r.pad = GridPad::zeros;
  else if (p == "border") r.pad = GridPad::border;
  else if (p == "reflection") r.pad = GridPad::reflection;
  else PJ_THROW(Value) << op << ": 'padding_mode' must be 'zeros', 'border' or 'reflection', but got '" << p << "'";
  r.align_corners = a.b("align_corners", false);
  return r;
}

Shape grid_out_shape(const TensorMeta& x, const TensorMeta& g) {
  const char* op = "grid_sample";
  const size_t nd = x.shape.size();
  if (nd != 4 && nd != 5) PJ_THROW(Value) << op << ": 'input' must be 4-D or 5-D, but got " << shape_str(x.shape);
  require_floating(op, "input", x.dtype);
  if (g.shape.size() != nd || g.shape.back() != static_cast<int64_t>(nd) - 2 || g.shape[0] != x.shape[0])
    PJ_THROW(Value) << op << ": 'grid' must have shape (N, ..., " << nd - 2 << ") with " << nd
                    << " dims and the input's batch, but got " << shape_str(g.shape) << " for input "
                    << shape_str(x.shape);
  if (g.dtype != x.dtype)
    PJ_THROW(Type) << op << ": 'grid' must have the input's dtype " << dtype_name(x.dtype) << ", but got "
                   << dtype_name(g.dtype);
  for (size_t d = 2; d < nd; ++d)
    if (x.shape[d] == 0) PJ_THROW(Value) << op << ": 'input' must have non-empty spatial dims, got " << shape_str(x.shape);
  Shape out{x.shape[0], x.shape[1]};
  for (size_t d = 1; d + 1 < nd; ++d) out.push_back(g.shape[d]);
  return out;
}

PJ_REGISTER_OP("grid_sample")
    .inputs(2)
    .attrs({"mode", "padding_mode", "align_corners"})
    .infer([](const Metas& in, const Attrs& a) {
      grid_args(a);
      return one(grid_out_shape(in[0], in[1]), in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      const GridArgs r = grid_args(a);
      with_contiguous_out(out[0], [&](const Tensor& o) { grid_sample_into(o, in[0], in[1], r.mode, r.pad, r.align_corners); });
    })
    .total();

PJ_REGISTER_OP("grid_sample_grad")
    .inputs(3)
    .attrs({"mode", "padding_mode", "align_corners"})
    .infer([](const Metas& in, const Attrs& a) {
      grid_args(a);
      const Shape o = grid_out_shape(in[1], in[2]);
      if (in[0].shape != o || in[0].dtype != in[1].dtype)
        PJ_THROW(Value) << "grid_sample_grad: 'dout' must have shape " << shape_str(o) << ", but got "
                        << shape_str(in[0].shape);
      return Metas{{in[1].shape, in[1].dtype}, {in[2].shape, in[2].dtype}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      const GridArgs r = grid_args(a);
      with_contiguous_outs(out, [&](const Tensors& o) {
        grid_sample_grad_into(o[0], o[1], in[0], in[1], in[2], r.mode, r.pad, r.align_corners);
      });
    })
    .total();

}  // namespace
}  // namespace pj
