// Gradient rules of the detection ops: ROIAlign (features only: the rois are coordinates MindSpore
// does not differentiate), CropAndResize (image and boxes) and grid sampling (input and grid), each
// through its backward op.
#include "graph/autodiff.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

PJ_REGISTER_GRAD("roi_align", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(2, kNoGrad);
  if (!g.needs[0] || g.dout[0] == kNoGrad) return out;
  Attrs a = *g.attrs;
  const Shape xs = g.in_meta(c, 0).shape;
  a.set("xdiff_shape", IntList(xs.begin(), xs.end()));
  out[0] = c.op("roi_align_grad", {g.dout[0], g.in[1]}, a);
  return out;
});

// The image and the boxes (MindSpore's CropAndResizeGradImage / GradBoxes); box_index has none.
PJ_REGISTER_GRAD("crop_and_resize", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(3, kNoGrad);
  if ((!g.needs[0] && !g.needs[1]) || g.dout[0] == kNoGrad) return out;
  const std::vector<int> r = c.emit(get_op("crop_and_resize_grad"), {g.dout[0], g.in[0], g.in[1], g.in[2]}, *g.attrs);
  if (g.needs[0]) out[0] = r[0];
  if (g.needs[1]) out[1] = r[1];
  return out;
});

PJ_REGISTER_GRAD("grid_sample", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(2, kNoGrad);
  if ((!g.needs[0] && !g.needs[1]) || g.dout[0] == kNoGrad) return out;
  const std::vector<int> r = c.emit(get_op("grid_sample_grad"), {g.dout[0], g.in[0], g.in[1]}, *g.attrs);
  if (g.needs[0]) out[0] = r[0];
  if (g.needs[1]) out[1] = r[1];
  return out;
});

}  // namespace
}  // namespace pj
