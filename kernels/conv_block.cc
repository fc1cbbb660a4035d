#include "kernels/conv_block.h"


#include <atomic>

#include "kernels/blocked_layout.h"
#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/fused_math.h"
#include "kernels/nonfinite.h"
#include "kernels/threading.h"

namespace pj {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct ConvBlockPlan {
  ConvBlockSpec spec;
  std::shared_ptr<const ConvPrepared> conv;  // the convolution, prepared once
  dnnl::memory::desc conv_md, out_md;  // the conv's nChw16c result; the block's NCHW output
  bool own_pool = false;               // tiles: max_pool2d_tiles_nchw16c straight into `out`
  dnnl::primitive pool;                // oneDNN's, for other pools
  dnnl::memory::desc pool_dst_md;      // what the pooling writes (NCHW, or nChw16c then reordered)
  dnnl::reorder to_nchw;               // nChw16c -> NCHW, when the last step leaves nChw16c
};

namespace {

dnnl::memory::dims dims_of(const Shape& s) { return dnnl::memory::dims(s.begin(), s.end()); }

// oneDNN's max pooling primitive from `src` (nChw16c) to dst in `dst_tag`, or empty.
dnnl::primitive make_pool(const ConvBlockSpec& s, const dnnl::memory::desc& src, tag dst_tag,
                          dnnl::memory::desc* dst) {
  const Pool2dParams& p = *s.pool;
  dnnl::memory::dims pad_l, pad_r;
  pool_dnnl_pads(s.conv_out, s.out, p, &pad_l, &pad_r);
  *dst = dnnl::memory::desc(dims_of(s.out), dt::f32, dst_tag);
  try {
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, src, *dst,
                                  {p.stride[0], p.stride[1]}, {p.kernel[0], p.kernel[1]}, pad_l, pad_r);
    dnnl::pooling_forward::primitive_desc pd(d, scratchpad_attr(), dnnl_engine());
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return {};
    return dnnl::pooling_forward(pd);
  } catch (const dnnl::error&) {
    return {};
  }
}

// y = relu?((y - m) * a + sh) over an nChw16c buffer, in place: lane l of a 16-wide block is
// channel 16 * cb + l. The same operations, in the same order, as sub, mul, add and relu.
// Returns whether a result is not finite (NaN or an infinity), found as the values are written.
bool affine_relu_nchw16c(float* y, const ConvBlockSpec& s, const float* m, const float* a, const float* sh) {
  const int64_t N = s.conv_out[0], CB = s.conv_out[1] / 16, HW = s.conv_out[2] * s.conv_out[3];
  const bool affine = s.affine, relu = s.relu;
  std::atomic<bool> nonfinite{false};
  parallel_for(N * CB, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(HW * 16, 1)), [&](int64_t b, int64_t e) {
    uint32_t mag[16] = {};  // per lane, the largest |result| as bits (kernels/nonfinite.h)
    for (int64_t r = b; r < e; ++r) {
      const int64_t cb = r % CB;
      float mv[16], av[16], sv[16];
      for (int l = 0; l < 16; ++l) {
        mv[l] = affine ? m[cb * 16 + l] : 0.f;
        av[l] = affine ? a[cb * 16 + l] : 1.f;
        sv[l] = affine ? sh[cb * 16 + l] : 0.f;
      }
      float* row = y + r * HW * 16;
      for (int64_t i = 0; i < HW; ++i) {
        float* v = row + i * 16;
        for (int l = 0; l < 16; ++l) {
          float t = v[l];
          if (affine) t = (t - mv[l]) * av[l] + sv[l];
          if (relu) t = fused_math::relu(t);
          v[l] = t;
          const uint32_t bits = fused_math::bits(t) & 0x7fffffffu;
          mag[l] = bits > mag[l] ? bits : mag[l];
        }
      }
    }
    uint32_t top = 0;
    for (uint32_t v : mag) top = v > top ? v : top;
    if (top >= inf_bits<float>()) nonfinite.store(true, std::memory_order_relaxed);
  });
  return nonfinite.load();
}

}  // namespace

std::shared_ptr<const ConvBlockPlan> conv_block_plan(const ConvBlockSpec& spec) {
  if (!conv2d_dst_is_nchw16c(spec.conv_out, spec.x, spec.w, spec.conv, spec.bias)) return nullptr;
  auto p = std::make_shared<ConvBlockPlan>();
  p->spec = spec;
  p->conv_md = dnnl::memory::desc(dims_of(spec.conv_out), dt::f32, tag::nChw16c);
  if (spec.blocked_in && !conv2d_src_is_nchw16c(spec.conv_out, spec.x, spec.w, spec.conv, spec.bias)) return nullptr;
  p->conv = conv_prepare(spec.conv_out, spec.x, spec.w, spec.conv, false, spec.bias, DType::Float32);
  const tag out_tag = spec.blocked_out ? tag::nChw16c : tag::nchw;
  p->out_md = dnnl::memory::desc(dims_of(spec.out), dt::f32, out_tag);
  dnnl::memory::desc last = p->conv_md;
  if (spec.pool) {
    if (spec.pool->dilation[0] != 1 || spec.pool->dilation[1] != 1) return nullptr;  // max_pool2d loops then
    if (max_pool2d_tiles(spec.conv_out, spec.out, *spec.pool)) {  // max_pool2d's own kernel, in this layout
      p->own_pool = true;
      return p;
    }
    p->pool = make_pool(spec, p->conv_md, out_tag, &p->pool_dst_md);
    if (!p->pool && !spec.blocked_out) p->pool = make_pool(spec, p->conv_md, tag::nChw16c, &p->pool_dst_md);
    if (!p->pool) return nullptr;
    last = p->pool_dst_md;
  }
  if (last != p->out_md)
    p->to_nchw = dnnl::reorder(dnnl::reorder::primitive_desc(dnnl_engine(), last, dnnl_engine(), p->out_md, scratchpad_attr()));
  return p;
}

void conv_block_run(const ConvBlockPlan& p, const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                    const Tensor& m, const Tensor& a, const Tensor& sh) {
  PJ_CHECK(out.is_contiguous() && out.shape() == p.spec.out) << "conv_block_run: out";
  const ConvBlockSpec& s = p.spec;
  // The conv's nChw16c result: straight into `out` when that is the block's result.
  const bool direct = !p.pool && !p.own_pool && p.out_md == p.conv_md;
  Tensor conv = direct ? out : Tensor::empty(s.conv_out, DType::Float32);
  conv2d_nchw16c_run(*p.conv, conv.data<float>(), x, w, bias, s.blocked_in);
  bool nonfinite = false;
  if (s.affine || s.relu) {
    Tensor mc, ac, shc;
    if (s.affine) mc = m.contiguous(), ac = a.contiguous(), shc = sh.contiguous();
    nonfinite = affine_relu_nchw16c(conv.data<float>(), s, s.affine ? mc.data<float>() : nullptr,
                                    s.affine ? ac.data<float>() : nullptr, s.affine ? shc.data<float>() : nullptr);
  } else if (p.pool) {
    nonfinite = any_nonfinite(conv.data<float>(), conv.numel());
  }
  if (direct) return;
  if (p.pool && nonfinite) {
    // oneDNN's max pooling drops NaN and turns -inf windows into -FLT_MAX (kernels/nonfinite.h):
    // such a result is pooled by max_pool2d itself, as the ops run one by one pool it.
    Tensor pooled = Tensor::empty(s.out, DType::Float32);
    max_pool2d_into(pooled, nchw16c_to_nchw(conv), *s.pool);
    copy_into(out, s.blocked_out ? nchw_to_nchw16c(pooled) : pooled);
    return;
  }
  if (p.own_pool) {
    max_pool2d_tiles_nchw16c(conv.data<float>(), out.data<float>(), s.conv_out, s.out, *s.pool, s.blocked_out);
    return;
  }
  dnnl::engine& eng = dnnl_engine();
  dnnl::memory cm(p.conv_md, eng, conv.raw_data()), om(p.out_md, eng, out.raw_data());
  dnnl::memory last = cm;
  Tensor pooled;
  if (p.pool) {
    if (p.pool_dst_md == p.out_md) {
      last = om;
    } else {
      pooled = Tensor::empty(s.out, DType::Float32);
      last = dnnl::memory(p.pool_dst_md, eng, pooled.raw_data());
    }
    execute(p.pool, {{DNNL_ARG_SRC, cm}, {DNNL_ARG_DST, last}});
  }
  if (p.to_nchw) execute_reorder(p.to_nchw, last, om);
}

namespace {

// Copies between the two orders; `to_blocked` says which way (blocked_layout's copy).
Tensor reordered(const Tensor& t, bool to_blocked) {
  PJ_CHECK(t.ndim() == 4 && t.dtype() == DType::Float32 && t.dim(1) % 16 == 0)
      << "nChw16c: a Float32 (N, C, H, W) with C a multiple of 16";
  const Tensor src = t.contiguous();
  Tensor dst = Tensor::empty(t.shape(), DType::Float32);
  blocked_layout_copy(src.data<float>(), dst.data<float>(), t.dim(0), t.dim(1), t.dim(2), t.dim(3), to_blocked);
  return dst;
}

}  // namespace

Tensor nchw16c_to_nchw(const Tensor& blocked) { return reordered(blocked, false); }
Tensor nchw_to_nchw16c(const Tensor& plain) { return reordered(plain, true); }

}  // namespace pj
