// interpolate and pad (torch.nn.functional semantics). Kernels live in kernels/resize.cc; this file
// owns attribute parsing and every user-facing error.
//
//   interpolate(x (N, C, H, W)) -> (N, C, OH, OW)
//     size (OH, OW) required (an int means both); mode 'nearest' (default, PyTorch's legacy
//     nearest: floor(o * in / out)) or 'bilinear'; align_corners bool or None (bilinear only:
//     True maps corner pixel centres onto each other); scale_h / scale_w float or None: the
//     scale_factor the Python layer turned into `size`, which PyTorch then uses for the source
//     coordinates (1 / scale instead of in / out) unless recompute_scale_factor is set; pass None
//     to get in / out. nearest takes any dtype (it only copies), bilinear floating only.
//   pad(x) -> x grown by pads
//     pads IntList in F.pad order: (left, right) of the last dim, (top, bottom) of the one
//     before, ...; at most two per dim; negative values crop. mode 'constant' (default),
//     'reflect', 'replicate' or 'circular'; value float (constant only, default 0). Any dtype and
//     any rank for every mode (PyTorch limits reflect/replicate/circular to the last 1-3 dims of
//     batched inputs; the rules per dim are the same).
#include "graph/ops/op_helpers.h"
#include "kernels/resize.h"

namespace pj {
namespace {

std::string pair_str(int64_t a, int64_t b) { return "(" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

// ---- interpolate -------------------------------------------------------------------------------

struct InterpArgs {
  int64_t size[2];
  InterpMode mode;
  bool align_corners;
  double scales[2];  // 0: none
  bool has_scales;
};

InterpArgs interp_args(const TensorMeta& x, const Attrs& a) {
  const char* op = "interpolate";
  InterpArgs r;
  if (x.shape.size() != 4)
    PJ_THROW(Value) << op << ": expected a 4-D input (N, C, H, W), got shape " << shape_str(x.shape);
  if (x.shape[2] == 0 || x.shape[3] == 0)
    PJ_THROW(Value) << op << ": expected an input with non-empty H and W, got shape " << shape_str(x.shape);
  if (a.is_none("size")) PJ_THROW(Value) << op << ": 'size' is required";
  const AttrValue& sv = a.get("size");
  if (auto* i = std::get_if<int64_t>(&sv)) r.size[0] = r.size[1] = *i;
  else {
    const IntList& l = a.ints("size");
    if (l.size() != 2) PJ_THROW(Value) << op << ": 'size' must have 2 elements for a 4-D input, got " << l.size();
    r.size[0] = l[0], r.size[1] = l[1];
  }
  if (r.size[0] <= 0 || r.size[1] <= 0)
    PJ_THROW(Value) << op << ": size must be positive, got " << pair_str(r.size[0], r.size[1]);
  const std::string mode = a.is_none("mode") ? "nearest" : a.s("mode");
  if (mode == "nearest") r.mode = InterpMode::nearest;
  else if (mode == "bilinear") r.mode = InterpMode::bilinear;
  else PJ_THROW(Value) << op << ": mode must be 'nearest' or 'bilinear', got '" << mode << "'";
  r.align_corners = a.b("align_corners", false);
  if (r.align_corners && r.mode != InterpMode::bilinear)
    PJ_THROW(Value) << op << ": align_corners can only be set with mode 'bilinear'";
  if (r.mode == InterpMode::bilinear && !is_floating(x.dtype))
    PJ_THROW(Type) << op << " (bilinear) does not support dtype " << dtype_name(x.dtype);
  const char* names[2] = {"scale_h", "scale_w"};
  r.has_scales = false;
  for (int d = 0; d < 2; ++d) {
    r.scales[d] = a.is_none(names[d]) ? 0 : a.f(names[d]);
    if (!a.is_none(names[d]) && !(r.scales[d] > 0))
      PJ_THROW(Value) << op << ": " << names[d] << " must be positive, got " << r.scales[d];
    r.has_scales |= r.scales[d] > 0;
  }
  return r;
}

PJ_REGISTER_OP("interpolate")
    .inputs(1)
    .attrs({"size", "mode", "align_corners", "scale_h", "scale_w"})
    .infer([](const Metas& in, const Attrs& a) {
      InterpArgs r = interp_args(in[0], a);
      const Shape& x = in[0].shape;
      return one({x[0], x[1], r.size[0], r.size[1]}, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      InterpArgs r = interp_args(meta_of(in[0]), a);
      interpolate_into(out[0], in[0], r.mode, r.align_corners, r.has_scales ? r.scales : nullptr);
    });

// ---- pad ---------------------------------------------------------------------------------------

struct PadArgs {
  IntList pads;
  PadMode mode;
  double value;
};

PadArgs pad_args(const TensorMeta& x, const Attrs& a, Shape* out) {
  const char* op = "pad";
  PadArgs r;
  if (a.is_none("pads")) PJ_THROW(Value) << op << ": 'pads' is required";
  r.pads = a.ints("pads");
  const int nd = static_cast<int>(x.shape.size());
  if (r.pads.size() % 2) PJ_THROW(Value) << op << ": padding length must be divisible by 2, got " << r.pads.size();
  if (static_cast<int>(r.pads.size()) > 2 * nd)
    PJ_THROW(Value) << op << ": padding length " << r.pads.size() << " is too large for a " << nd
                    << "-D input (at most " << 2 * nd << ")";
  const std::string mode = a.is_none("mode") ? "constant" : a.s("mode");
  if (mode == "constant") r.mode = PadMode::constant;
  else if (mode == "reflect") r.mode = PadMode::reflect;
  else if (mode == "replicate") r.mode = PadMode::replicate;
  else if (mode == "circular") r.mode = PadMode::circular;
  else PJ_THROW(Value) << op << ": mode must be 'constant', 'reflect', 'replicate' or 'circular', got '" << mode << "'";
  r.value = a.is_none("value") ? 0 : a.f("value");
  if (r.mode != PadMode::constant && r.value != 0)
    PJ_THROW(Value) << op << ": padding mode '" << mode << "' doesn't take in value argument";
  *out = x.shape;
  for (size_t i = 0; i < r.pads.size() / 2; ++i) {
    const int d = nd - 1 - static_cast<int>(i);
    const int64_t lo = r.pads[2 * i], hi = r.pads[2 * i + 1], in = x.shape[d];
    const __int128 size = static_cast<__int128>(in) + lo + hi;  // (exact: paddings may be near +-2**63)
    if (size < 0)
      PJ_THROW(Value) << op << ": the input size " << in << ", plus negative padding " << lo << " and " << hi
                      << " resulted in a negative output size, which is invalid. Check dimension " << d
                      << " of your input.";
    if (size > INT64_MAX)
      PJ_THROW(Value) << op << ": the input size " << in << " plus padding " << lo << " and " << hi
                      << " does not fit in 64 bits (dimension " << d << ")";
    (*out)[d] = static_cast<int64_t>(size);
    if (r.mode == PadMode::reflect && (lo >= in || hi >= in) && (lo > 0 || hi > 0))
      PJ_THROW(Value) << op << ": padding size should be less than the corresponding input dimension, but got "
                      << "padding " << pair_str(lo, hi) << " at dimension " << d << " of input "
                      << shape_str(x.shape);
    if (r.mode == PadMode::replicate && in == 0 && in + lo + hi > 0)
      PJ_THROW(Value) << op << ": replicate padding needs a non-empty dimension " << d << ", got input shape "
                      << shape_str(x.shape);
    if (r.mode == PadMode::circular) {
      const int64_t cropped = in - std::max<int64_t>(-lo, 0) - std::max<int64_t>(-hi, 0);
      if (lo > in || hi > in || ((lo > 0 || hi > 0) && cropped <= 0))
        PJ_THROW(Value) << op << ": padding value causes wrapping around more than once (padding "
                        << pair_str(lo, hi) << " at dimension " << d << " of input " << shape_str(x.shape) << ")";
    }
  }
  return r;
}

PJ_REGISTER_OP("pad")
    .inputs(1)
    .attrs({"pads", "mode", "value"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape out;
      pad_args(in[0], a, &out);
      return one(out, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      Shape s;
      PadArgs r = pad_args(meta_of(in[0]), a, &s);
      pad_into(out[0], in[0], r.pads, r.mode, r.value);
    });

}  // namespace
}  // namespace pj
