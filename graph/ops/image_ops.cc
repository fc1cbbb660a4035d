// Image ops behind mindspore.dataset.vision (kernels/image_ops.h). The Python transforms check
// their arguments and the image with MindSpore's messages and then call one of these; the checks
// here keep the kernels safe whatever a caller passes.
//
//   image_map(x (H, W[, C]) or (C, H, W) [, params float64 (nfill + 2 * nmean)]) -> image
//     One gather + per-channel value chain (ImageMapPlan). Attributes: in_chw, out_h, out_w, top,
//     left, hflip, vflip, border ('constant' | 'edge' | 'reflect' | 'symmetric'), to_float,
//     rescale, scale, shift, normalize, out_chw, pad_channel, dtype (float32 or float16 output
//     when to_float), nfill, nmean, op (the transform's name, for messages). params holds the
//     fill values, then the means, then the stds; one mean/std applies to every channel.
//     Output: (C', OH, OW) when out_chw else (OH, OW, C'), C' = C + pad_channel, 2-D for a
//     2-D input without pad_channel; input dtype unless to_float.
//   image_resize(x (H, W[, C])) -> (out_h, out_w[, C]), same dtype: cv::resize's arithmetic;
//     mode 'nearest' | 'linear' | 'cubic' | 'area'; uint8, float32, float64.
#include "graph/ops/op_helpers.h"
#include "kernels/image_ops.h"

namespace pj {
namespace {

std::string op_name(const Attrs& a, const char* dflt) { return a.is_none("op") ? dflt : a.s("op"); }

void check_image_rank(const std::string& op, const TensorMeta& x) {
  const size_t r = x.shape.size();
  if (r != 2 && r != 3)
    PJ_THROW(Runtime) << op << ": input tensor is not in shape of <H,W> or <H,W,C>, but got rank: " << r
                      << (r == 1 ? ". You may need to perform Decode first." : "");
}

ImageBorder parse_border(const std::string& op, const Attrs& a) {
  const std::string b = a.is_none("border") ? "constant" : a.s("border");
  if (b == "constant") return ImageBorder::constant;
  if (b == "edge") return ImageBorder::edge;
  if (b == "reflect") return ImageBorder::reflect;
  if (b == "symmetric") return ImageBorder::symmetric;
  PJ_THROW(Value) << op << ": unknown border '" << b << "'";
}

struct MapShape {
  int64_t H, W, C;
  Shape out;
  DType dtype;
};

MapShape map_shape(const Metas& in, const Attrs& a, ImageMapPlan* p) {
  const std::string op = op_name(a, "image_map");
  const TensorMeta& x = in[0];
  check_image_rank(op, x);
  const bool rank3 = x.shape.size() == 3;
  p->in_chw = a.b("in_chw", false);
  MapShape m;
  m.H = p->in_chw && rank3 ? x.shape[1] : x.shape[0];
  m.W = p->in_chw && rank3 ? x.shape[2] : x.shape[1];
  m.C = rank3 ? (p->in_chw ? x.shape[0] : x.shape[2]) : 1;
  p->out_h = a.i("out_h", m.H);
  p->out_w = a.i("out_w", m.W);
  if (p->out_h < 0 || p->out_w < 0) PJ_THROW(Value) << op << ": negative output size";
  // (sizes whose element count could overflow are refused before any allocation)
  if (p->out_h > (int64_t(1) << 31) || p->out_w > (int64_t(1) << 31) ||
      static_cast<double>(p->out_h) * static_cast<double>(p->out_w) * static_cast<double>(m.C + 1) > 1e12)
    PJ_THROW(Value) << op << ": output size " << p->out_h << " x " << p->out_w << " is too large";
  p->top = a.i("top", 0);
  p->left = a.i("left", 0);
  p->hflip = a.b("hflip", false);
  p->vflip = a.b("vflip", false);
  p->border = parse_border(op, a);
  if (p->border != ImageBorder::constant && (m.H == 0 || m.W == 0) && p->out_h > 0 && p->out_w > 0)
    PJ_THROW(Runtime) << op << ": cannot pad an empty image";
  p->to_float = a.b("to_float", false);
  p->rescale = a.b("rescale", false);
  p->scale = static_cast<float>(a.is_none("scale") ? 1.0 : a.f("scale"));
  p->shift = static_cast<float>(a.is_none("shift") ? 0.0 : a.f("shift"));
  p->normalize = a.b("normalize", false);
  p->out_chw = a.b("out_chw", false);
  p->pad_channel = a.b("pad_channel", false);
  if ((p->rescale || p->normalize || p->pad_channel) && !p->to_float)
    PJ_THROW(Value) << op << ": rescale, normalize and pad_channel produce floats (to_float=True)";
  m.dtype = x.dtype;
  if (p->to_float) {
    m.dtype = a.is_none("dtype") ? DType::Float32 : a.dtype("dtype");
    if (m.dtype != DType::Float32 && m.dtype != DType::Float16)
      PJ_THROW(Type) << op << ": output dtype must be float32 or float16, got " << dtype_name(m.dtype);
  }
  const int64_t CO = m.C + (p->pad_channel ? 1 : 0);
  if (!rank3 && !p->pad_channel) m.out = {p->out_h, p->out_w};
  else if (p->out_chw || (p->in_chw && rank3)) m.out = {CO, p->out_h, p->out_w};
  else m.out = {p->out_h, p->out_w, CO};
  if (p->in_chw && rank3) p->out_chw = true;  // a CHW image stays CHW
  return m;
}

void read_params(const Tensor* params, const Attrs& a, const MapShape& m, ImageMapPlan* p) {
  const std::string op = op_name(a, "image_map");
  const int64_t nfill = a.i("nfill", 0), nmean = a.i("nmean", 0);
  if (nfill < 0 || nmean < 0) PJ_THROW(Value) << op << ": negative parameter counts";
  if (p->normalize && nmean == 0) PJ_THROW(Value) << op << ": normalize needs nmean >= 1 means and stds";
  const int64_t need = nfill + 2 * nmean;
  if (need == 0) return;
  if (!params || params->dtype() != DType::Float64 || params->ndim() != 1 || params->dim(0) != need)
    PJ_THROW(Value) << op << ": expected a float64 parameter vector of " << need << " values";
  const Tensor pc = params->contiguous();
  const double* v = pc.data<double>();
  p->fill.assign(v, v + nfill);
  if (nfill == 1) p->fill.assign(m.C, v[0]);
  if (p->normalize) {
    if (nmean != 1 && nmean != m.C)
      PJ_THROW(Runtime) << op << ": number of channels does not match the size of mean and std vectors, got channels: "
                        << m.C << ", size of mean: " << nmean;
    for (int64_t c = 0; c < m.C; ++c) {
      const int64_t k = nmean == 1 ? 0 : c;
      p->mean.push_back(static_cast<float>(v[nfill + k]));
      p->std.push_back(static_cast<float>(v[nfill + nmean + k]));
    }
  }
}

PJ_REGISTER_OP("image_map")
    .variadic(1)
    .attrs({"in_chw", "out_h", "out_w", "top", "left", "hflip", "vflip", "border", "to_float", "rescale", "scale",
            "shift", "normalize", "out_chw", "pad_channel", "dtype", "nfill", "nmean", "op"})
    .storage_dtypes()
    .infer([](const Metas& in, const Attrs& a) {
      if (in.size() > 2) PJ_THROW(Type) << "image_map takes an image and an optional parameter vector";
      ImageMapPlan p;
      MapShape m = map_shape(in, a, &p);
      return one(m.out, m.dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      ImageMapPlan p;
      MapShape m = map_shape({meta_of(in[0])}, a, &p);
      read_params(in.size() > 1 ? &in[1] : nullptr, a, m, &p);
      image_map_into(out[0], in[0].contiguous(), p);
    });

ImageInterp parse_interp(const std::string& op, const Attrs& a) {
  const std::string s = a.is_none("mode") ? "linear" : a.s("mode");
  if (s == "nearest") return ImageInterp::nearest;
  if (s == "linear") return ImageInterp::linear;
  if (s == "cubic") return ImageInterp::cubic;
  if (s == "area") return ImageInterp::area;
  PJ_THROW(Value) << op << ": unknown interpolation '" << s << "'";
}

Shape resize_shape(const TensorMeta& x, const Attrs& a) {
  const std::string op = op_name(a, "Resize");
  check_image_rank(op, x);
  const int64_t oh = a.i("out_h"), ow = a.i("out_w");
  if (oh <= 0 || ow <= 0)
    PJ_THROW(Runtime) << op << ": the input value of 'resize' is invalid, width or height is zero.";
  if (x.shape[0] == 0 || x.shape[1] == 0) PJ_THROW(Runtime) << op << ": the input image is empty";
  if (oh > x.shape[0] * 1000 || ow > x.shape[1] * 1000)
    PJ_THROW(Runtime) << op << ": the resizing width or height is too big, it's 1000 times bigger than the original "
                      << "image, got output height: " << oh << ", width: " << ow
                      << ", and original image size:" << x.shape[0] << ", " << x.shape[1];
  parse_interp(op, a);
  if (x.dtype != DType::UInt8 && x.dtype != DType::Float32 && x.dtype != DType::Float64)
    PJ_THROW(Runtime) << op << ": unsupported image dtype " << dtype_numpy_name(x.dtype)
                      << ", expected uint8, float32 or float64";
  Shape s{oh, ow};
  if (x.shape.size() == 3) s.push_back(x.shape[2]);
  return s;
}

PJ_REGISTER_OP("image_resize")
    .inputs(1)
    .attrs({"out_h", "out_w", "mode", "op"})
    .storage_dtypes()
    .infer([](const Metas& in, const Attrs& a) { return one(resize_shape(in[0], a), in[0].dtype); })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      image_resize_into(out[0], in[0].contiguous(), parse_interp(op_name(a, "Resize"), a));
    });

}  // namespace
}  // namespace pj
