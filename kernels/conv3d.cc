#include "kernels/conv3d.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>

#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/threading.h"

namespace pj {
namespace {

// Every size of one call: input (N, C, I[3]), output (N, OC, O[3]), kernel K[3], G groups.
struct Geo {
  int64_t N, C, OC, G, ICg, OCg;
  int64_t I[3], O[3], K[3];
  int64_t isz() const { return I[0] * I[1] * I[2]; }
  int64_t osz() const { return O[0] * O[1] * O[2]; }
  int64_t ksz() const { return K[0] * K[1] * K[2]; }
};

// `x` is the convolution's input side and `y` its output side (for conv_transpose3d, the
// transposed op's output is the convolution's input); w is (OC, C/G, K...) for conv3d.
Geo geo(const Shape& x, const Shape& y, const Shape& w, int64_t groups) {
  Geo g;
  g.N = x[0], g.C = x[1], g.OC = y[1], g.G = groups;
  g.ICg = g.C / g.G, g.OCg = g.OC / g.G;
  for (int d = 0; d < 3; ++d) g.I[d] = x[2 + d], g.O[d] = y[2 + d], g.K[d] = w[2 + d];
  return g;
}

int64_t grain_for(int64_t work_per_item) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_item, 1)); }

// Calls f(o, i) for every output position o (flat) of one plane and the input position i (flat) that
// kernel offset (kd, kh, kw) reads from it, skipping positions that fall into the padding.
template <typename F>
inline void for_taps(const Geo& g, const Conv3dParams& p, int64_t kd, int64_t kh, int64_t kw, int64_t o_lim[3], F&& f) {
  for (int64_t od = 0; od < o_lim[0]; ++od) {
    const int64_t id = od * p.stride[0] - p.pad[0] + kd * p.dilation[0];
    if (id < 0 || id >= g.I[0]) continue;
    for (int64_t oh = 0; oh < o_lim[1]; ++oh) {
      const int64_t ih = oh * p.stride[1] - p.pad[2] + kh * p.dilation[1];
      if (ih < 0 || ih >= g.I[1]) continue;
      const int64_t obase = (od * g.O[1] + oh) * g.O[2], ibase = (id * g.I[1] + ih) * g.I[2];
      for (int64_t ow = 0; ow < o_lim[2]; ++ow) {
        const int64_t iw = ow * p.stride[2] - p.pad[4] + kw * p.dilation[2];
        if (iw < 0 || iw >= g.I[2]) continue;
        f(obase + ow, ibase + iw);
      }
    }
  }
}

// conv3d: each (n, oc) output plane accumulates every tap of its group's input channels.
template <typename T>
void conv3d_loop(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv3dParams& p) {
  const Geo g = geo(x.shape(), out.shape(), w.shape(), p.groups);
  const T *X = x.data<T>(), *Wt = w.data<T>();
  const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  const T* B = b.defined() ? b.data<T>() : nullptr;
  T* Y = out.data<T>();
  int64_t lim[3] = {g.O[0], g.O[1], g.O[2]};
  parallel_for(g.N * g.OC, grain_for(g.osz() * g.ICg * g.ksz()), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      const int64_t n = i / g.OC, oc = i % g.OC, grp = oc / g.OCg;
      T* y = Y + i * g.osz();
      std::fill(y, y + g.osz(), B ? B[oc] : T(0));
      for (int64_t c = 0; c < g.ICg; ++c) {
        const T* xp = X + (n * g.C + grp * g.ICg + c) * g.isz();
        const T* wp = Wt + (oc * g.ICg + c) * g.ksz();
        for (int64_t kd = 0; kd < g.K[0]; ++kd)
          for (int64_t kh = 0; kh < g.K[1]; ++kh)
            for (int64_t kw = 0; kw < g.K[2]; ++kw) {
              const T wv = wp[(kd * g.K[1] + kh) * g.K[2] + kw];
              for_taps(g, p, kd, kh, kw, lim, [&](int64_t o, int64_t ii) { y[o] += wv * xp[ii]; });
            }
      }
    }
  });
}

// conv_transpose3d: the adjoint of conv3d. Each (n, oc) plane of the transposed output (the
// convolution's input side) gathers the taps that read it; the convolution's "output" is x.
template <typename T>
void conv_transpose3d_loop(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Conv3dParams& p) {
  // In convolution terms: input side = out (N, OC_t, ...), output side = x (N, C_t, ...).
  const Geo g = geo(out.shape(), x.shape(), w.shape(), p.groups);  // g.C = OC_t, g.OC = C_t
  const T *X = x.data<T>(), *Wt = w.data<T>();
  const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  const T* B = b.defined() ? b.data<T>() : nullptr;
  T* Y = out.data<T>();
  int64_t lim[3] = {g.O[0], g.O[1], g.O[2]};
  // w is (C_t, OC_t/G, K...) = (g.OC, g.ICg, K...): the conv3d weight layout of the adjoint.
  parallel_for(g.N * g.C, grain_for(g.isz() * g.OCg * g.ksz()), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      const int64_t n = i / g.C, c = i % g.C, grp = c / g.ICg, cg = c % g.ICg;
      T* y = Y + i * g.isz();
      std::fill(y, y + g.isz(), B ? B[c] : T(0));
      for (int64_t o = 0; o < g.OCg; ++o) {
        const int64_t oc = grp * g.OCg + o;
        const T* xp = X + (n * g.OC + oc) * g.osz();
        const T* wp = Wt + (oc * g.ICg + cg) * g.ksz();
        for (int64_t kd = 0; kd < g.K[0]; ++kd)
          for (int64_t kh = 0; kh < g.K[1]; ++kh)
            for (int64_t kw = 0; kw < g.K[2]; ++kw) {
              const T wv = wp[(kd * g.K[1] + kh) * g.K[2] + kw];
              for_taps(g, p, kd, kh, kw, lim, [&](int64_t oo, int64_t ii) { y[ii] += wv * xp[oo]; });
            }
      }
    }
  });
}

template <typename T>
void weight_grad_loop(const Tensor& dw, const Tensor& x, const Tensor& dout, const Conv3dParams& p) {
  Geo g = geo(x.shape(), dout.shape(), dw.shape(), p.groups);
  const T *X = x.data<T>(), *D = dout.data<T>();
  T* DW = dw.data<T>();
  int64_t lim[3] = {g.O[0], g.O[1], g.O[2]};
  parallel_for(g.OC * g.ICg, grain_for(g.N * g.osz() * g.ksz()), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      const int64_t oc = i / g.ICg, c = i % g.ICg, grp = oc / g.OCg;
      T* wp = DW + i * g.ksz();
      for (int64_t kd = 0; kd < g.K[0]; ++kd)
        for (int64_t kh = 0; kh < g.K[1]; ++kh)
          for (int64_t kw = 0; kw < g.K[2]; ++kw) {
            T acc = 0;
            for (int64_t n = 0; n < g.N; ++n) {
              const T* xp = X + (n * g.C + grp * g.ICg + c) * g.isz();
              const T* dp = D + (n * g.OC + oc) * g.osz();
              for_taps(g, p, kd, kh, kw, lim, [&](int64_t o, int64_t ii) { acc += dp[o] * xp[ii]; });
            }
            wp[(kd * g.K[1] + kh) * g.K[2] + kw] = acc;
          }
    }
  });
}

// ---- oneDNN (float32) ---------------------------------------------------------------------------

using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

dnnl::memory::desc md(const dims& d, tag t) { return dnnl::memory::desc(d, dnnl::memory::data_type::f32, t); }

dims shape_dims(const Shape& s) { return dims(s.begin(), s.end()); }

// oneDNN's strides, dilations (minus one), and padding (right padding recomputed so that the
// input side and output side sizes agree exactly); false when that padding would be negative.
struct DnnlGeom {
  dims strides, dil, pad_l, pad_r;
};
bool dnnl_geom(const Geo& g, const Conv3dParams& p, DnnlGeom* out) {
  for (int d = 0; d < 3; ++d) {
    const int64_t dk = p.dilation[d] * (g.K[d] - 1) + 1;
    const int64_t pr = (g.O[d] - 1) * p.stride[d] + dk - g.I[d] - p.pad[2 * d];
    if (pr < 0) return false;
    out->strides.push_back(p.stride[d]);
    out->dil.push_back(p.dilation[d] - 1);
    out->pad_l.push_back(p.pad[2 * d]);
    out->pad_r.push_back(pr);
  }
  return true;
}

// Weights as oneDNN sees them: (OC, ICg, K...) for conv, (G, OCg, ICg, K...) with groups; the
// transposed op's (C_t, OC_t/G, K...) are (G, OCg_t, ICg_t, K...) stored input-major (giodhw).
dnnl::memory::desc weights_md(const Geo& g, bool transpose) {
  const dims k{g.K[0], g.K[1], g.K[2]};
  if (!transpose) {
    if (g.G == 1) return md({g.OC, g.ICg, k[0], k[1], k[2]}, tag::oidhw);
    return md({g.G, g.OCg, g.ICg, k[0], k[1], k[2]}, tag::goidhw);
  }
  // transposed: the deconvolution's output channels are the conv's input side (g.C)
  if (g.G == 1) return md({g.C, g.OC, k[0], k[1], k[2]}, tag::iodhw);
  return md({g.G, g.ICg, g.OCg, k[0], k[1], k[2]}, tag::giodhw);
}

std::string key_of(const char* kind, const Geo& g, const DnnlGeom& dg, bool bias) {
  std::string k = kind;
  for (int64_t v : {g.N, g.C, g.OC, g.G, g.I[0], g.I[1], g.I[2], g.O[0], g.O[1], g.O[2], g.K[0], g.K[1], g.K[2],
                    int64_t(bias)})
    k += "," + std::to_string(v);
  for (const dims* d : {&dg.strides, &dg.dil, &dg.pad_l, &dg.pad_r})
    for (auto v : *d) k += ";" + std::to_string(v);
  return k;
}

// A float32 primitive for one geometry with the layouts oneDNN chose (format_tag::any: blocked
// nCdhw16c / 8c activations and blocked weights run its jit kernels, several times faster than
// its gemm kernel on plain ncdhw), and the reorders between those and the plain tensors (empty
// where a layout is already plain). No primitive: oneDNN refused the geometry (the loop runs it).
struct Plan {
  dnnl::primitive prim;
  dnnl::memory::desc user_src, user_wei, user_dst, bias;  // plain layouts
  dnnl::memory::desc src, wei, dst;                        // the primitive's
  dnnl::reorder src_r, wei_r, dst_r;  // plain -> src, plain -> wei (weight grad: wei -> plain), dst -> plain
};

PlanCache<Plan>& plans() {
  static auto* c = new PlanCache<Plan>("3-D convolution plans", "PIJIT_PLAN_CACHE", kDefaultPlanCache);
  return *c;
}

dnnl::reorder reorder_between(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  if (from == to) return dnnl::reorder();
  dnnl::engine& eng = dnnl_engine();
  return dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to, scratchpad_attr()));
}

dnnl::memory::desc any_like(const dnnl::memory::desc& d) {
  return dnnl::memory::desc(d.dims(), dnnl::memory::data_type::f32, tag::any);
}

// `t`'s data as a memory of layout `want`: the tensor itself, or a reordered copy.
dnnl::memory as_layout(const Tensor& t, const dnnl::memory::desc& user, const dnnl::memory::desc& want,
                       const dnnl::reorder& r) {
  dnnl::memory plain(user, dnnl_engine(), t.raw_data());
  if (!r) return plain;
  dnnl::memory m(want, dnnl_engine());
  execute_reorder(r, plain, m);
  return m;
}

// Runs the float32 oneDNN convolution (transpose: deconvolution) of x into out; false when oneDNN
// has no kernel for the geometry (the caller runs the loop). x, w, out contiguous.
bool dnnl_fwd(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv3dParams& p,
              bool transpose) {
  // conv: input side x, output side out; deconv: input side out, output side x
  const Geo g = transpose ? geo(out.shape(), x.shape(), w.shape(), p.groups)
                          : geo(x.shape(), out.shape(), w.shape(), p.groups);
  DnnlGeom dg;
  if (!dnnl_geom(g, p, &dg)) return false;
  const std::string key = key_of(transpose ? "conv3d_t" : "conv3d", g, dg, bias.defined());
  std::shared_ptr<Plan> plan = plans().get(key, [&] {
    auto pl = std::make_shared<Plan>();
    pl->user_src = md(shape_dims(x.shape()), tag::ncdhw);
    pl->user_dst = md(shape_dims(out.shape()), tag::ncdhw);
    pl->user_wei = weights_md(g, transpose);
    if (bias.defined()) pl->bias = md({out.dim(1)}, tag::a);
    try {
      const dnnl::memory::desc s = any_like(pl->user_src), wd = any_like(pl->user_wei), d = any_like(pl->user_dst);
      if (transpose) {
        dnnl::deconvolution_forward::desc dd(dnnl::prop_kind::forward_training, dnnl::algorithm::deconvolution_direct,
                                             s, wd, pl->bias, d, dg.strides, dg.dil, dg.pad_l, dg.pad_r);
        dnnl::deconvolution_forward::primitive_desc pd(dd, scratchpad_attr(), dnnl_engine());
        pl->src = pd.src_desc(), pl->wei = pd.weights_desc(), pl->dst = pd.dst_desc();
        pl->prim = dnnl::deconvolution_forward(pd);
      } else {
        dnnl::convolution_forward::desc dd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, s,
                                           wd, pl->bias, d, dg.strides, dg.dil, dg.pad_l, dg.pad_r);
        dnnl::convolution_forward::primitive_desc pd(dd, scratchpad_attr(), dnnl_engine());
        pl->src = pd.src_desc(), pl->wei = pd.weights_desc(), pl->dst = pd.dst_desc();
        pl->prim = dnnl::convolution_forward(pd);
      }
      pl->src_r = reorder_between(pl->user_src, pl->src);
      pl->wei_r = reorder_between(pl->user_wei, pl->wei);
      pl->dst_r = reorder_between(pl->dst, pl->user_dst);
    } catch (const dnnl::error&) {
      pl->prim = dnnl::primitive();  // remembered: the loop runs this geometry
    }
    return pl;
  });
  if (!plan->prim) return false;
  dnnl::engine& eng = dnnl_engine();
  dnnl::memory user_dst(plan->user_dst, eng, out.raw_data());
  dnnl::memory dst = plan->dst_r ? dnnl::memory(plan->dst, eng) : user_dst;
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, as_layout(x, plan->user_src, plan->src, plan->src_r)},
                                             {DNNL_ARG_WEIGHTS, as_layout(w, plan->user_wei, plan->wei, plan->wei_r)},
                                             {DNNL_ARG_DST, dst}};
  Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  if (b.defined()) args.emplace(DNNL_ARG_BIAS, dnnl::memory(plan->bias, eng, b.raw_data()));
  execute(plan->prim, std::move(args));
  if (plan->dst_r) execute_reorder(plan->dst_r, dst, user_dst);
  return true;
}

bool dnnl_bwd_weights(const Tensor& dw, const Tensor& x, const Tensor& dout, const Conv3dParams& p) {
  const Geo g = geo(x.shape(), dout.shape(), dw.shape(), p.groups);
  DnnlGeom dg;
  if (!dnnl_geom(g, p, &dg)) return false;
  const std::string key = key_of("conv3d_bwd_w", g, dg, false);
  std::shared_ptr<Plan> plan = plans().get(key, [&] {
    auto pl = std::make_shared<Plan>();
    pl->user_src = md(shape_dims(x.shape()), tag::ncdhw);
    pl->user_dst = md(shape_dims(dout.shape()), tag::ncdhw);
    pl->user_wei = weights_md(g, false);
    try {
      const dnnl::memory::desc s = any_like(pl->user_src), wd = any_like(pl->user_wei), d = any_like(pl->user_dst);
      dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, s, wd,
                                         d, dg.strides, dg.dil, dg.pad_l, dg.pad_r);
      dnnl::convolution_forward::primitive_desc fpd(fd, scratchpad_attr(), dnnl_engine());
      dnnl::convolution_backward_weights::desc bd(dnnl::algorithm::convolution_direct, s, wd, d, dg.strides, dg.dil,
                                                  dg.pad_l, dg.pad_r);
      dnnl::convolution_backward_weights::primitive_desc pd(bd, scratchpad_attr(), dnnl_engine(), fpd);
      pl->src = pd.src_desc(), pl->wei = pd.diff_weights_desc(), pl->dst = pd.diff_dst_desc();
      pl->prim = dnnl::convolution_backward_weights(pd);
      pl->src_r = reorder_between(pl->user_src, pl->src);
      pl->dst_r = reorder_between(pl->user_dst, pl->dst);  // here: plain dout -> the primitive's
      pl->wei_r = reorder_between(pl->wei, pl->user_wei);  // here: the primitive's dw -> plain
    } catch (const dnnl::error&) {
      pl->prim = dnnl::primitive();
    }
    return pl;
  });
  if (!plan->prim) return false;
  dnnl::engine& eng = dnnl_engine();
  dnnl::memory user_w(plan->user_wei, eng, dw.raw_data());
  dnnl::memory wmem = plan->wei_r ? dnnl::memory(plan->wei, eng) : user_w;
  execute(plan->prim, {{DNNL_ARG_SRC, as_layout(x, plan->user_src, plan->src, plan->src_r)},
                       {DNNL_ARG_DIFF_DST, as_layout(dout, plan->user_dst, plan->dst, plan->dst_r)},
                       {DNNL_ARG_DIFF_WEIGHTS, wmem}});
  if (plan->wei_r) execute_reorder(plan->wei_r, wmem, user_w);
  return true;
}

void check(const char* what, const Tensor& out, const Tensor& x, const Tensor& w) {
  PJ_CHECK(out.ndim() == 5 && x.ndim() == 5 && w.ndim() == 5) << what << ": 5-D tensors only";
  PJ_CHECK(is_floating(x.dtype()) && x.dtype() == out.dtype() && w.dtype() == out.dtype())
      << what << ": one floating dtype";
}

bool empty_shape(const Tensor& t) { return t.numel() == 0; }

}  // namespace

void conv3d_loop_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv3dParams& p) {
  check("conv3d", out, x, w);
  with_contiguous_out(out, [&](const Tensor& dst) {
    const Tensor xc = x.contiguous(), wc = w.contiguous();
    PJ_DISPATCH_FLOATING(out.dtype(), "conv3d", [&] { conv3d_loop<scalar_t>(dst, xc, wc, bias, p); });
  });
}

void conv_transpose3d_loop_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                                const Conv3dParams& p) {
  check("conv_transpose3d", out, x, w);
  with_contiguous_out(out, [&](const Tensor& dst) {
    const Tensor xc = x.contiguous(), wc = w.contiguous();
    PJ_DISPATCH_FLOATING(out.dtype(), "conv_transpose3d", [&] { conv_transpose3d_loop<scalar_t>(dst, xc, wc, bias, p); });
  });
}

void conv3d_weight_grad_loop_into(const Tensor& dw, const Tensor& x, const Tensor& dout, const Conv3dParams& p) {
  check("conv3d_weight_grad", dw, x, dout);
  with_contiguous_out(dw, [&](const Tensor& dst) {
    const Tensor xc = x.contiguous(), dc = dout.contiguous();
    PJ_DISPATCH_FLOATING(dw.dtype(), "conv3d_weight_grad", [&] { weight_grad_loop<scalar_t>(dst, xc, dc, p); });
  });
}

void conv3d_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv3dParams& p) {
  check("conv3d", out, x, w);
  if (out.dtype() == DType::Float32 && !empty_shape(out) && !empty_shape(x)) {
    bool done = false;
    with_contiguous_out(out, [&](const Tensor& dst) {
      done = dnnl_fwd(dst, x.contiguous(), w.contiguous(), bias, p, false);
      if (!done) conv3d_loop_into(dst, x, w, bias, p);
    });
    return;
  }
  conv3d_loop_into(out, x, w, bias, p);
}

void conv_transpose3d_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Conv3dParams& p) {
  check("conv_transpose3d", out, x, w);
  if (out.dtype() == DType::Float32 && !empty_shape(out) && !empty_shape(x)) {
    with_contiguous_out(out, [&](const Tensor& dst) {
      if (!dnnl_fwd(dst, x.contiguous(), w.contiguous(), bias, p, true)) conv_transpose3d_loop_into(dst, x, w, bias, p);
    });
    return;
  }
  conv_transpose3d_loop_into(out, x, w, bias, p);
}

void conv3d_weight_grad_into(const Tensor& dw, const Tensor& x, const Tensor& dout, const Conv3dParams& p) {
  check("conv3d_weight_grad", dw, x, dout);
  if (dw.dtype() == DType::Float32 && !empty_shape(dout) && !empty_shape(x)) {
    with_contiguous_out(dw, [&](const Tensor& dst) {
      if (!dnnl_bwd_weights(dst, x.contiguous(), dout.contiguous(), p)) conv3d_weight_grad_loop_into(dst, x, dout, p);
    });
    return;
  }
  conv3d_weight_grad_loop_into(dw, x, dout, p);
}

}  // namespace pj
