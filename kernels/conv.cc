#include "kernels/conv.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/weight_cache.h"
#include "kernels/matmul.h"
#include "kernels/threading.h"

namespace pj {

int64_t conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi, int64_t dilation) {
  const int64_t span = in + pad_lo + pad_hi - dilation * (k - 1) - 1;
  return (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
}

int64_t conv_transpose_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi,
                                int64_t dilation, int64_t output_padding) {
  return (in - 1) * stride - pad_lo - pad_hi + dilation * (k - 1) + output_padding + 1;
}

std::vector<int64_t> conv_same_pads(const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                                    const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation) {
  PJ_CHECK(kernel.size() == in.size() && stride.size() == in.size() && dilation.size() == in.size())
      << "conv_same_pads: one kernel, stride and dilation per spatial dim";
  std::vector<int64_t> pads;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t out = (in[d] + stride[d] - 1) / stride[d];
    const int64_t total = std::max<int64_t>((out - 1) * stride[d] + dilation[d] * (kernel[d] - 1) + 1 - in[d], 0);
    pads.push_back(total / 2);
    pads.push_back(total - total / 2);
  }
  return pads;
}

namespace {

// im2col / col2im buffers are processed this many elements at a time (batch chunks).
constexpr int64_t kColsBudget = int64_t(1) << 24;

// ---- loop path (float32 and float64) -----------------------------------------------------------

struct Geometry {
  int64_t N, C, H, W;      // input
  int64_t OC, OH, OW;      // output
  int64_t KH, KW, G;
  int64_t ICg, OCg;        // channels per group
};

Geometry geometry(const Shape& out, const Shape& x, const Shape& w, const Conv2dParams& p, bool transpose) {
  Geometry g;
  g.N = x[0], g.C = x[1], g.H = x[2], g.W = x[3];
  g.OC = out[1], g.OH = out[2], g.OW = out[3];
  g.KH = w[2], g.KW = w[3], g.G = p.groups;
  g.ICg = g.C / g.G;
  g.OCg = g.OC / g.G;
  PJ_CHECK(out[0] == g.N && (transpose ? w[0] == g.C && w[1] == g.OCg : w[0] == g.OC && w[1] == g.ICg))
      << "conv kernels: shapes are checked by graph/ops";
  return g;
}
Geometry geometry(const Tensor& out, const Tensor& x, const Tensor& w, const Conv2dParams& p, bool transpose) {
  return geometry(out.shape(), x.shape(), w.shape(), p, transpose);
}

// out[n, oc] (+)= bias[oc] over every output plane.
template <typename T>
void add_bias(T* out, const Tensor& bias, int64_t N, int64_t OC, int64_t plane, bool assign) {
  Tensor b = bias.contiguous();
  const T* B = b.data<T>();
  parallel_for(N * OC, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(plane, 1)), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      T* o = out + i * plane;
      const T v = B[i % OC];
      if (assign) std::fill(o, o + plane, v);
      else
        for (int64_t j = 0; j < plane; ++j) o[j] += v;
    }
  });
}

// Index range [lo, hi) of outputs o with 0 <= o*stride + shift < n.
inline void valid_range(int64_t shift, int64_t stride, int64_t n, int64_t count, int64_t* lo, int64_t* hi) {
  // o*stride + shift >= 0  <=>  o >= ceil(-shift / stride)
  *lo = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  // o*stride + shift <= n - 1  <=>  o <= floor((n - 1 - shift) / stride)
  const int64_t top = n - 1 - shift;
  *hi = top < 0 ? 0 : std::min(count, top / stride + 1);
  *lo = std::min(*lo, *hi);
}

// Depthwise (one input channel per group): direct accumulation, one output plane per task. im2col
// would write KH*KW copies of the input to feed a one-row matmul.
template <typename T>
void conv2d_depthwise(const Geometry& g, const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                      const Conv2dParams& p) {
  const T* X = x.data<T>();
  const T* Wt = w.data<T>();
  T* O = out.data<T>();
  Tensor bc = bias.defined() ? bias.contiguous() : Tensor();
  const T* B = bias.defined() ? bc.data<T>() : nullptr;
  const int64_t HW = g.H * g.W, OP = g.OH * g.OW, K2 = g.KH * g.KW;
  parallel_for(g.N * g.OC, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(OP * K2, 1)), [&](int64_t s, int64_t e) {
    for (int64_t t = s; t < e; ++t) {
      const int64_t n = t / g.OC, oc = t % g.OC;
      const T* src = X + (n * g.C + oc / g.OCg) * HW;
      const T* wk = Wt + oc * K2;
      T* dst = O + t * OP;
      std::fill(dst, dst + OP, B ? B[oc] : T(0));
      for (int64_t kx = 0; kx < g.KW; ++kx) {
        int64_t x_lo, x_hi;
        const int64_t xshift = kx * p.dilation[1] - p.pad[2];
        valid_range(xshift, p.stride[1], g.W, g.OW, &x_lo, &x_hi);
        for (int64_t ky = 0; ky < g.KH; ++ky) {
          const T wv = wk[ky * g.KW + kx];
          for (int64_t oy = 0; oy < g.OH; ++oy) {
            const int64_t iy = oy * p.stride[0] - p.pad[0] + ky * p.dilation[0];
            if (iy < 0 || iy >= g.H) continue;
            const T* srow = src + iy * g.W;
            T* drow = dst + oy * g.OW;
            if (p.stride[1] == 1)
              for (int64_t ox = x_lo; ox < x_hi; ++ox) drow[ox] += wv * srow[ox + xshift];
            else
              for (int64_t ox = x_lo; ox < x_hi; ++ox) drow[ox] += wv * srow[ox * p.stride[1] + xshift];
          }
        }
      }
    }
  });
}

template <typename T>
void conv2d_loop(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p) {
  const Geometry g = geometry(out, x, w, p, false);
  if (g.ICg == 1 && g.KH * g.KW > 1) return conv2d_depthwise<T>(g, out, x, w, bias, p);
  const int64_t K = g.ICg * g.KH * g.KW, P = g.OH * g.OW, HW = g.H * g.W;
  const bool direct = g.KH == 1 && g.KW == 1 && p.stride[0] == 1 && p.stride[1] == 1 && p.pad[0] == 0 &&
                      p.pad[1] == 0 && p.pad[2] == 0 && p.pad[3] == 0;
  const Tensor wv = w.as_strided({g.G, g.OCg, K}, {g.OCg * K, K, 1}, w.offset());
  const int64_t per_image = std::max<int64_t>(g.G * K * P, 1);
  const int64_t nb = std::max<int64_t>(1, std::min(g.N, kColsBudget / per_image));
  const T* X = x.data<T>();
  for (int64_t n0 = 0; n0 < g.N; n0 += nb) {
    const int64_t nn = std::min(nb, g.N - n0);
    Tensor cols;
    if (direct) {
      cols = x.as_strided({nn, g.G, K, P}, {g.C * HW, g.ICg * HW, HW, 1}, x.offset() + n0 * g.C * HW);
    } else {
      cols = Tensor::empty({nn, g.G, K, P}, x.dtype());
      T* COLS = cols.data<T>();
      // Row (n, c, ky, kx) of cols, in the same linear order as (n, g, (icg, ky, kx)).
      const int64_t rows = nn * g.C * g.KH * g.KW;
      parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(P, 1)), [&](int64_t s, int64_t e) {
        for (int64_t r = s; r < e; ++r) {
          const int64_t kx = r % g.KW, ky = (r / g.KW) % g.KH, c = (r / (g.KW * g.KH)) % g.C;
          const int64_t n = r / (g.KW * g.KH * g.C);
          const T* src = X + ((n0 + n) * g.C + c) * HW;
          T* dst = COLS + r * P;
          int64_t x_lo, x_hi;
          const int64_t xshift = kx * p.dilation[1] - p.pad[2];
          valid_range(xshift, p.stride[1], g.W, g.OW, &x_lo, &x_hi);
          for (int64_t oy = 0; oy < g.OH; ++oy) {
            T* d = dst + oy * g.OW;
            const int64_t iy = oy * p.stride[0] - p.pad[0] + ky * p.dilation[0];
            if (iy < 0 || iy >= g.H) {
              std::fill(d, d + g.OW, T(0));
              continue;
            }
            const T* srow = src + iy * g.W;
            std::fill(d, d + x_lo, T(0));
            if (p.stride[1] == 1) std::copy(srow + x_lo + xshift, srow + x_hi + xshift, d + x_lo);
            else
              for (int64_t ox = x_lo; ox < x_hi; ++ox) d[ox] = srow[ox * p.stride[1] + xshift];
            std::fill(d + x_hi, d + g.OW, T(0));
          }
        }
      });
    }
    const Tensor ov = out.as_strided({nn, g.G, g.OCg, P}, {g.OC * P, g.OCg * P, P, 1}, out.offset() + n0 * g.OC * P);
    matmul_into(ov, wv, cols);
  }
  if (bias.defined()) add_bias<T>(out.data<T>(), bias, g.N, g.OC, P, false);
}

template <typename T>
void conv_transpose2d_loop(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Conv2dParams& p) {
  const Geometry g = geometry(out, x, w, p, true);
  const int64_t M = g.OCg * g.KH * g.KW, HW = g.H * g.W, OP = g.OH * g.OW;
  // w (C, OCg, KH, KW) = (G, ICg, M); its transpose per group is (G, M, ICg).
  const Tensor wt = w.as_strided({g.G, M, g.ICg}, {g.ICg * M, 1, M}, w.offset());
  const int64_t per_image = std::max<int64_t>(g.G * M * HW, 1);
  const int64_t nb = std::max<int64_t>(1, std::min(g.N, kColsBudget / per_image));
  T* O = out.data<T>();
  const T* B = nullptr;
  Tensor bc;
  if (bias.defined()) {
    bc = bias.contiguous();
    B = bc.data<T>();
  }
  for (int64_t n0 = 0; n0 < g.N; n0 += nb) {
    const int64_t nn = std::min(nb, g.N - n0);
    const Tensor xv = x.as_strided({nn, g.G, g.ICg, HW}, {g.C * HW, g.ICg * HW, HW, 1}, x.offset() + n0 * g.C * HW);
    Tensor cols = Tensor::empty({nn, g.G, M, HW}, x.dtype());
    matmul_into(cols, wt, xv);
    const T* COLS = cols.data<T>();
    // col2im: each task owns one output plane (n, oc), so the scatter-adds never race.
    parallel_for(nn * g.OC, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(g.KH * g.KW * HW, 1)),
                 [&](int64_t s, int64_t e) {
      for (int64_t t = s; t < e; ++t) {
        const int64_t n = t / g.OC, oc = t % g.OC, grp = oc / g.OCg, o = oc % g.OCg;
        T* dst = O + ((n0 + n) * g.OC + oc) * OP;
        std::fill(dst, dst + OP, B ? B[oc] : T(0));
        for (int64_t ky = 0; ky < g.KH; ++ky)
          for (int64_t kx = 0; kx < g.KW; ++kx) {
            const T* col = COLS + ((n * g.G + grp) * M + (o * g.KH + ky) * g.KW + kx) * HW;
            int64_t x_lo, x_hi;
            const int64_t xshift = kx * p.dilation[1] - p.pad[2];
            valid_range(xshift, p.stride[1], g.OW, g.W, &x_lo, &x_hi);
            for (int64_t iy = 0; iy < g.H; ++iy) {
              const int64_t oy = iy * p.stride[0] - p.pad[0] + ky * p.dilation[0];
              if (oy < 0 || oy >= g.OH) continue;
              T* drow = dst + oy * g.OW;
              const T* crow = col + iy * g.W;
              for (int64_t ix = x_lo; ix < x_hi; ++ix) drow[ix * p.stride[1] + xshift] += crow[ix];
            }
          }
      }
    });
  }
}

// ---- oneDNN path (float32) ---------------------------------------------------------------------

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// Everything about one float32 conv / deconv geometry that does not depend on the data.
struct DnnlPlan {
  bool ok = false;  // false: oneDNN refused or has only its reference kernel; use the loop path
  std::string key, impl;
  dnnl::memory::desc user_src, user_wei, user_dst, bias_md;  // pijit's plain layouts
  dnnl::memory::desc src_md, wei_md, dst_md;                 // the primitive's
  dnnl::primitive prim;
  dnnl::reorder src_reorder, dst_reorder, wei_reorder;
  bool reorder_src = false, reorder_wei = false, reorder_dst = false;
  std::mutex mu;                 // guards the memory objects below while a call uses them
  dnnl::memory src_buf, dst_buf; // blocked src/dst over this thread's scratch slots
  BoundArgs bound;               // the primitive's arguments (kernels/dnnl_context.h)
};

PlanCache<DnnlPlan>& plans() {
  static auto* c = new PlanCache<DnnlPlan>("convolution plans", "PIJIT_PLAN_CACHE", kDefaultPlanCache);
  return *c;
}

std::mutex last_impl_mu;
std::string& last_impl() {
  static auto* s = new std::string();
  return *s;
}
void set_last_impl(const std::string& s) {
  std::lock_guard<std::mutex> lock(last_impl_mu);
  last_impl() = s;
}

std::string plan_key(const Geometry& g, const Conv2dParams& p, bool transpose, bool with_bias) {
  std::string k = transpose ? "deconv2d:" : "conv2d:";
  for (int64_t v : {g.N, g.C, g.H, g.W, g.OC, g.OH, g.OW, g.KH, g.KW, g.G, p.stride[0], p.stride[1], p.pad[0],
                    p.pad[1], p.pad[2], p.pad[3], p.dilation[0], p.dilation[1], p.output_padding[0],
                    p.output_padding[1]})
    k += std::to_string(v) + ",";
  return k + (with_bias ? "b" : "nb");
}

// Geometry of a oneDNN conv / deconv descriptor, shared by its layout candidates.
struct DnnlArgs {
  dnnl::memory::dims src, wei, dst, strides, dil, pad_l, pad_r;
  dnnl::memory::desc bias_md;
};

// The primitive descriptor with activations in layout `act` (weights always format_tag::any);
// empty when oneDNN has no kernel for it, or only its reference kernel (far slower than im2col
// plus oneDNN's matmul, the loop path).
template <typename Prim>
typename Prim::primitive_desc try_pd(const DnnlArgs& a, tag act, tag act_dst) {
  const dnnl::memory::desc src(a.src, dt::f32, act), wei(a.wei, dt::f32, tag::any), dst(a.dst, dt::f32, act_dst);
  constexpr bool conv = std::is_same_v<Prim, dnnl::convolution_forward>;
  const dnnl::algorithm alg = conv ? dnnl::algorithm::convolution_direct : dnnl::algorithm::deconvolution_direct;
  try {
    typename Prim::desc d(dnnl::prop_kind::forward_inference, alg, src, wei, a.bias_md, dst, a.strides, a.dil,
                          a.pad_l, a.pad_r);
    typename Prim::primitive_desc pd(d, scratchpad_attr(), dnnl_engine());
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return {};
    return pd;
  } catch (const dnnl::error&) {
    return {};
  }
}

// Picks the activation layout and builds the primitive and reorders. Measured on AVX-512 (one
// core, ResNet-like shapes): with channels in multiples of 16, nChw16c (jit kernels) beats what
// format_tag::any picks (nhwc + brgconv) by 1.1-2.5x, mostly because oneDNN's nchw <-> nChw16c
// reorders are 2-5x faster than nchw <-> nhwc; with other channel counts (3, 24, ...) the padded
// blocks waste work and `any` wins. Elsewhere (AVX2 has no 16c kernels) `any` is the fallback.
// A first layer (few input channels, output channels in 16s) reads plain NCHW and writes nChw16c:
// no source reorder, and on the CNN bench's 3->16 conv 1.5x faster than nhwc + brgconv.
template <typename Prim>
void plan_with(DnnlPlan* plan, const DnnlArgs& a, bool prefer_blocked, bool first_layer) {
  typename Prim::primitive_desc pd;
  if (prefer_blocked) pd = try_pd<Prim>(a, tag::nChw16c, tag::nChw16c);
  if (!pd && first_layer) pd = try_pd<Prim>(a, tag::nchw, tag::nChw16c);
  if (!pd) pd = try_pd<Prim>(a, tag::any, tag::any);
  if (!pd) return;
  plan->impl = pd.impl_info_str();
  plan->src_md = pd.src_desc();
  plan->wei_md = pd.weights_desc();
  plan->dst_md = pd.dst_desc();
  plan->reorder_src = plan->src_md != plan->user_src;
  plan->reorder_wei = plan->wei_md != plan->user_wei;
  plan->reorder_dst = plan->dst_md != plan->user_dst;
  dnnl::engine& eng = dnnl_engine();
  plan->prim = PrimitiveCache::instance().get(plan->key, [&] { return dnnl::primitive(Prim(pd)); });
  auto reorder = [&](const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
    return dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to, scratchpad_attr()));
  };
  if (plan->reorder_src) plan->src_reorder = reorder(plan->user_src, plan->src_md);
  if (plan->reorder_dst) plan->dst_reorder = reorder(plan->dst_md, plan->user_dst);
  if (plan->reorder_wei) plan->wei_reorder = reorder(plan->user_wei, plan->wei_md);
  plan->ok = true;
}

std::shared_ptr<DnnlPlan> make_plan(const std::string& key, const Geometry& g, const Conv2dParams& p,
                                    bool transpose, bool with_bias) {
  auto plan = std::make_shared<DnnlPlan>();
  plan->key = key;
  using dims = dnnl::memory::dims;
  DnnlArgs a;
  a.src = {g.N, g.C, g.H, g.W};
  a.dst = {g.N, g.OC, g.OH, g.OW};
  a.wei = g.G == 1 ? dims{g.OC, g.ICg, g.KH, g.KW} : dims{g.G, g.OCg, g.ICg, g.KH, g.KW};
  plan->user_src = dnnl::memory::desc(a.src, dt::f32, tag::nchw);
  plan->user_dst = dnnl::memory::desc(a.dst, dt::f32, tag::nchw);
  if (!transpose) {
    plan->user_wei = dnnl::memory::desc(a.wei, dt::f32, g.G == 1 ? tag::oihw : tag::goihw);
  } else {
    // pijit's (C, OCg, KH, KW) is oneDNN's (G, OCg, ICg, KH, KW) with i outer to o.
    const int64_t k2 = g.KH * g.KW;
    dims st = g.G == 1 ? dims{k2, g.OCg * k2, g.KW, 1} : dims{g.ICg * g.OCg * k2, k2, g.OCg * k2, g.KW, 1};
    plan->user_wei = dnnl::memory::desc(a.wei, dt::f32, st);
  }
  if (with_bias) plan->bias_md = dnnl::memory::desc({g.OC}, dt::f32, tag::a);
  a.bias_md = plan->bias_md;
  a.strides = {p.stride[0], p.stride[1]};
  a.dil = {p.dilation[0] - 1, p.dilation[1] - 1};  // oneDNN counts the gaps
  a.pad_l = {p.pad[0], p.pad[2]};
  // A transposed conv's output_padding is extra output on the bottom/right: less right padding.
  a.pad_r = {p.pad[1] - p.output_padding[0], p.pad[3] - p.output_padding[1]};
  const bool depthwise = g.ICg == 1 && g.OCg == 1;
  const bool blocked = depthwise ? g.C % 16 == 0 : g.ICg % 16 == 0 && g.OCg % 16 == 0;
  const bool first_layer = !depthwise && g.G == 1 && g.C < 16 && g.OC % 16 == 0;
  if (transpose) plan_with<dnnl::deconvolution_forward>(plan.get(), a, blocked, false);
  else plan_with<dnnl::convolution_forward>(plan.get(), a, blocked, first_layer);
  return plan;
}

std::shared_ptr<DnnlPlan> get_plan(const Geometry& g, const Conv2dParams& p, bool transpose, bool with_bias) {
  const std::string key = plan_key(g, p, transpose, with_bias);
  return plans().get(key, [&] { return make_plan(key, g, p, transpose, with_bias); });
}

// The weights as they are, where the primitive reads them in their own layout.
CachedWeights plain_weights(const DnnlPlan& plan, const Tensor& w) {
  Tensor wc = w.contiguous();
  return {dnnl::memory(plan.user_wei, dnnl_engine(), wc.raw_data()), wc.storage()};
}

void run_plan(DnnlPlan& plan, void* out, const Tensor& x, const CachedWeights& wa, const Tensor& bias, bool raw_dst,
              bool raw_src = false);

// `out` is NCHW, or (raw_dst) the primitive's own destination layout; x is NCHW, or (raw_src) the
// primitive's own source layout.
void run_plan(DnnlPlan& planr, void* out, const Tensor& x, const CachedWeights& wa, const Tensor& bias, bool raw_dst,
              bool raw_src) {
  DnnlPlan* plan = &planr;
  set_last_impl(plan->impl);
  dnnl::engine& eng = dnnl_engine();
  const Tensor xc = x.contiguous();
  Tensor bc;
  if (bias.defined()) bc = bias.contiguous();
  const bool reorder_src = plan->reorder_src && !raw_src, reorder_dst = plan->reorder_dst && !raw_dst;
  const dnnl::memory::desc& src_md = raw_src ? plan->src_md : plan->user_src;
  const dnnl::memory::desc& dst_md = raw_dst ? plan->dst_md : plan->user_dst;
  // The plan's memory objects, unless another thread is using them right now.
  std::unique_lock<std::mutex> lock(plan->mu, std::try_to_lock);
  const bool own = lock.owns_lock();
  dnnl::memory usrc = own ? plan->bound.at(src_md, xc.raw_data()) : dnnl::memory(src_md, eng, xc.raw_data());
  dnnl::memory udst = own ? plan->bound.at(dst_md, out) : dnnl::memory(dst_md, eng, out);
  dnnl::memory sbuf = usrc, dbuf = udst;
  if (reorder_src) {
    sbuf = thread_slot_memory(&plan->src_buf, plan->src_md, kSrcSlot, own);
    execute_reorder(plan->src_reorder, usrc, sbuf);
  }
  if (reorder_dst) dbuf = thread_slot_memory(&plan->dst_buf, plan->dst_md, kDstSlot, own);
  if (own) {
    plan->bound.execute(plan->prim, {{DNNL_ARG_SRC, &sbuf}, {DNNL_ARG_WEIGHTS, &wa.mem}, {DNNL_ARG_DST, &dbuf},
                                     {DNNL_ARG_BIAS, bc.defined() ? &plan->bound.at(plan->bias_md, bc.raw_data()) : nullptr}});
  } else {
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, sbuf}, {DNNL_ARG_WEIGHTS, wa.mem}, {DNNL_ARG_DST, dbuf}};
    if (bc.defined()) args.emplace(DNNL_ARG_BIAS, dnnl::memory(plan->bias_md, eng, bc.raw_data()));
    execute(plan->prim, std::move(args));
  }
  if (reorder_dst) execute_reorder(plan->dst_reorder, dbuf, udst);
}

void check_args(const char* what, const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias) {
  PJ_CHECK(out.ndim() == 4 && x.ndim() == 4 && w.ndim() == 4) << what << ": 4-D tensors only";
  PJ_CHECK(is_floating(x.dtype()) && x.dtype() == out.dtype() && w.dtype() == out.dtype() &&
           (!bias.defined() || bias.dtype() == out.dtype()))
      << what << ": one floating dtype";
}

void run_loop(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p,
              bool transpose) {
  with_contiguous_out(out, [&](const Tensor& dst) {
    const Tensor xc = x.contiguous(), wc = w.contiguous();
    PJ_DISPATCH_FLOATING(out.dtype(), (transpose ? "conv_transpose2d" : "conv2d"), [&] {
      if (transpose) conv_transpose2d_loop<scalar_t>(dst, xc, wc, bias, p);
      else conv2d_loop<scalar_t>(dst, xc, wc, bias, p);
    });
  });
}

}  // namespace

struct ConvPrepared {
  Conv2dParams params;
  bool transpose = false;
  std::shared_ptr<DnnlPlan> plan;  // null: the loop path
  // This node's weights: the last reordered copy while they stay the same (inference), or, when
  // every launch finds them written (training), a buffer of the node's own that each launch
  // reorders into: no cache key, entry or fresh buffer per step.
  mutable WeightMemo memo;
  mutable std::mutex trained_mu;  // held from the reorder to the end of the convolution
  mutable dnnl::memory trained;
  mutable BoundArgs trained_args;  // the reorder's
};

namespace {

// The weights in the primitive's layout for one launch of `c`; `*hold` keeps the node's own buffer
// for the caller until its convolution is done.
CachedWeights node_weights(const ConvPrepared& c, const Tensor& w, std::unique_lock<std::mutex>* hold) {
  const DnnlPlan& plan = *c.plan;
  if (!plan.reorder_wei) return plain_weights(plan, w);
  if (c.memo.trained(w)) {
    std::unique_lock<std::mutex> lock(c.trained_mu, std::try_to_lock);
    if (lock.owns_lock()) {
      if (!c.trained) c.trained = dnnl::memory(plan.wei_md, dnnl_engine());
      Tensor wc = w.contiguous();
      const dnnl::memory& user = c.trained_args.at(plan.user_wei, wc.raw_data());
      c.trained_args.execute(plan.wei_reorder, {{DNNL_ARG_FROM, &user}, {DNNL_ARG_TO, &c.trained}});
      *hold = std::move(lock);
      return {c.trained, nullptr};
    }
  }
  return c.memo.get(w, plan.user_wei, plan.wei_md, plan.wei_reorder);
}

}  // namespace

std::shared_ptr<const ConvPrepared> conv_prepare(const Shape& out, const Shape& x, const Shape& w,
                                                 const Conv2dParams& p, bool transpose, bool bias, DType dtype) {
  PJ_CHECK(out.size() == 4 && x.size() == 4 && w.size() == 4) << "conv kernels: 4-D tensors only";
  auto c = std::make_shared<ConvPrepared>();
  c->params = p;
  c->transpose = transpose;
  if (dtype == DType::Float32 && shape_numel(out) > 0 && shape_numel(x) > 0 && shape_numel(w) > 0) {
    std::shared_ptr<DnnlPlan> plan = get_plan(geometry(out, x, w, p, transpose), p, transpose, bias);
    if (plan->ok) c->plan = std::move(plan);
  }
  return c;
}

void conv_run(const ConvPrepared& c, const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias) {
  check_args(c.transpose ? "conv_transpose2d_into" : "conv2d_into", out, x, w, bias);
  if (out.numel() == 0) return;
  if (!c.plan) {
    set_last_impl("");
    return run_loop(out, x, w, bias, c.params, c.transpose);
  }
  std::unique_lock<std::mutex> hold;
  const CachedWeights wa = node_weights(c, w, &hold);
  with_contiguous_out(out, [&](const Tensor& dst) { run_plan(*c.plan, dst.raw_data(), x, wa, bias, false); });
}

void conv2d_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p) {
  conv_run(*conv_prepare(out.shape(), x.shape(), w.shape(), p, false, bias.defined(), out.dtype()), out, x, w, bias);
}

void conv_transpose2d_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Conv2dParams& p) {
  conv_run(*conv_prepare(out.shape(), x.shape(), w.shape(), p, true, bias.defined(), out.dtype()), out, x, w, bias);
}

void conv2d_loop_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p) {
  check_args("conv2d_loop_into", out, x, w, bias);
  if (out.numel() > 0) run_loop(out, x, w, bias, p, false);
}

void conv_transpose2d_loop_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                                const Conv2dParams& p) {
  check_args("conv_transpose2d_loop_into", out, x, w, bias);
  if (out.numel() > 0) run_loop(out, x, w, bias, p, true);
}

namespace {

// The plan conv2d_into uses for this float32 geometry, when it has oneDNN's; else null.
std::shared_ptr<DnnlPlan> blocked_candidate(const Shape& out, const Shape& x, const Shape& w, const Conv2dParams& p,
                                            bool bias) {
  const Geometry g = geometry(out, x, w, p, false);
  if (g.OC % 16 || shape_numel(out) == 0 || shape_numel(x) == 0 || shape_numel(w) == 0) return nullptr;
  std::shared_ptr<DnnlPlan> plan = get_plan(g, p, false, bias);
  return plan->ok ? plan : nullptr;
}

bool is_nchw16c(const dnnl::memory::desc& md, const Shape& s) {
  return md == dnnl::memory::desc({s[0], s[1], s[2], s[3]}, dt::f32, tag::nChw16c);
}

}  // namespace

bool conv2d_dst_is_nchw16c(const Shape& out, const Shape& x, const Shape& w, const Conv2dParams& p, bool bias) {
  std::shared_ptr<DnnlPlan> plan = blocked_candidate(out, x, w, p, bias);
  return plan && is_nchw16c(plan->dst_md, out);
}

bool conv2d_src_is_nchw16c(const Shape& out, const Shape& x, const Shape& w, const Conv2dParams& p, bool bias) {
  std::shared_ptr<DnnlPlan> plan = blocked_candidate(out, x, w, p, bias);
  return plan && x[1] % 16 == 0 && is_nchw16c(plan->src_md, x);
}

void conv2d_nchw16c_run(const ConvPrepared& c, float* out, const Tensor& x, const Tensor& w, const Tensor& bias,
                        bool x_blocked) {
  PJ_CHECK(c.plan && !c.transpose) << "conv2d_nchw16c_run: no oneDNN plan (ask conv2d_dst_is_nchw16c first)";
  std::unique_lock<std::mutex> hold;
  const CachedWeights wa = node_weights(c, w, &hold);
  run_plan(*c.plan, out, x, wa, bias, true, x_blocked);
}

std::string conv_last_impl() {
  std::lock_guard<std::mutex> lock(last_impl_mu);
  return last_impl();
}

}  // namespace pj
