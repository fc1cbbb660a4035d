// conv2d's weight gradient (kernels/conv.h). float32 runs oneDNN's convolution_backward_weights
// with the activations in the layouts it asks for (reordered into this thread's scratch slots, the
// gradient reordered out), everything but the data made once per geometry; float64, and
// geometries oneDNN has only its reference kernel for, run a direct loop. Written as a convolution
// of the input's channels by the gradient's (what graph/grads did before), the batch became a
// channel and the gradient a 32x32 filter: oneDNN reordered that "filter" on every call and ran a
// kernel made for 3x3 ones, most of a small CNN's training step.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/conv.h"
#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/threading.h"

namespace pj {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

struct Geometry {
  int64_t N, C, H, W, OC, OH, OW, KH, KW, G, ICg, OCg;
};

Geometry geometry(const Shape& dw, const Shape& x, const Shape& dout, const Conv2dParams& p) {
  PJ_CHECK(dw.size() == 4 && x.size() == 4 && dout.size() == 4) << "conv2d_weight_grad_into: 4-D tensors only";
  Geometry g;
  g.N = x[0], g.C = x[1], g.H = x[2], g.W = x[3];
  g.OC = dout[1], g.OH = dout[2], g.OW = dout[3];
  g.KH = dw[2], g.KW = dw[3], g.G = p.groups;
  g.ICg = g.C / g.G, g.OCg = g.OC / g.G;
  PJ_CHECK(dout[0] == g.N && dw[0] == g.OC && dw[1] == g.ICg) << "conv2d_weight_grad: shapes are checked by graph/ops";
  return g;
}

// dw[o, i, ky, kx] = sum over n, oy, ox of dout[n, o, oy, ox] * x[n, g*ICg + i, iy, ix] (in that
// order), iy = oy*stride - pad + ky*dilation (and ix alike), outside the input contributing nothing.
template <typename T>
void weight_grad_loop(const Geometry& g, T* dw, const T* x, const T* d, const Conv2dParams& p) {
  const int64_t K2 = g.KH * g.KW;
  parallel_for(g.OC * g.ICg, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(g.N * g.OH * g.OW * K2, 1)),
               [&](int64_t s, int64_t e) {
    for (int64_t t = s; t < e; ++t) {
      const int64_t o = t / g.ICg, i = t % g.ICg, c = (o / g.OCg) * g.ICg + i;
      T* out = dw + t * K2;
      for (int64_t ky = 0; ky < g.KH; ++ky)
        for (int64_t kx = 0; kx < g.KW; ++kx) {
          // the outputs whose column ix = ox*stride + shift is inside the input: [lo, hi)
          const int64_t shift = kx * p.dilation[1] - p.pad[2], s = p.stride[1];
          const int64_t lo = std::min(g.OW, shift >= 0 ? 0 : (-shift + s - 1) / s);
          const int64_t hi = std::max(lo, g.W - 1 - shift < 0 ? 0 : std::min(g.OW, (g.W - 1 - shift) / s + 1));
          T acc = 0;
          for (int64_t n = 0; n < g.N; ++n) {
            const T* drow0 = d + (n * g.OC + o) * g.OH * g.OW;
            const T* xp = x + (n * g.C + c) * g.H * g.W;
            for (int64_t oy = 0; oy < g.OH; ++oy) {
              const int64_t iy = oy * p.stride[0] - p.pad[0] + ky * p.dilation[0];
              if (iy < 0 || iy >= g.H) continue;
              const T* drow = drow0 + oy * g.OW;
              const T* xrow = xp + iy * g.W;
              for (int64_t ox = lo; ox < hi; ++ox) acc += drow[ox] * xrow[ox * s + shift];
            }
          }
          out[ky * g.KW + kx] = acc;
        }
    }
  });
}

// Everything about one float32 geometry that does not depend on the data.
struct Plan {
  bool ok = false;  // false: the loop
  dnnl::memory::desc user_src, user_ddst, user_dw, src_md, ddst_md, dw_md;
  dnnl::primitive prim;
  dnnl::reorder src_reorder, ddst_reorder, dw_reorder;
  std::mutex mu;  // guards the memory objects below while a call uses them
  dnnl::memory src_buf, ddst_buf, dw_buf;  // over this thread's scratch slots
  BoundArgs bound;                         // the primitive's arguments (kernels/dnnl_context.h)
};

std::string plan_key(const Geometry& g, const Conv2dParams& p) {
  std::string k = "conv2d_wgrad:";
  for (int64_t v : {g.N, g.C, g.H, g.W, g.OC, g.OH, g.OW, g.KH, g.KW, g.G, p.stride[0], p.stride[1], p.pad[0],
                    p.pad[1], p.pad[2], p.pad[3], p.dilation[0], p.dilation[1]})
    k += std::to_string(v) + ",";
  return k;
}

// The primitive descriptor with activations in `act` (weights: format_tag::any), or empty when
// oneDNN has no kernel for it or only its reference one.
dnnl::convolution_backward_weights::primitive_desc try_pd(const Geometry& g, const Conv2dParams& p, tag act) {
  const dims src{g.N, g.C, g.H, g.W}, dst{g.N, g.OC, g.OH, g.OW};
  const dims wei = g.G == 1 ? dims{g.OC, g.ICg, g.KH, g.KW} : dims{g.G, g.OCg, g.ICg, g.KH, g.KW};
  const dims strides{p.stride[0], p.stride[1]}, dil{p.dilation[0] - 1, p.dilation[1] - 1};  // (gaps)
  const dims pad_l{p.pad[0], p.pad[2]}, pad_r{p.pad[1], p.pad[3]};
  const dnnl::memory::desc s(src, dt::f32, act), w(wei, dt::f32, tag::any), d(dst, dt::f32, act);
  try {
    dnnl::convolution_forward::primitive_desc hint(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, s, w,
                                        d, strides, dil, pad_l, pad_r),
        dnnl_engine());
    dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, s, w, d, strides, dil, pad_l,
                                                 pad_r),
        scratchpad_attr(), dnnl_engine(), hint);
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return {};
    return pd;
  } catch (const dnnl::error&) {
    return {};
  }
}

std::shared_ptr<Plan> make_plan(const std::string& key, const Geometry& g, const Conv2dParams& p) {
  auto plan = std::make_shared<Plan>();
  // nChw16c where the channels per group come in 16s (the forward's choice: kernels/conv.cc), else
  // whatever oneDNN picks
  dnnl::convolution_backward_weights::primitive_desc pd;
  if (g.ICg % 16 == 0 && g.OCg % 16 == 0) pd = try_pd(g, p, tag::nChw16c);
  if (!pd) pd = try_pd(g, p, tag::any);
  if (!pd) return plan;
  dnnl::engine& eng = dnnl_engine();
  plan->user_src = dnnl::memory::desc({g.N, g.C, g.H, g.W}, dt::f32, tag::nchw);
  plan->user_ddst = dnnl::memory::desc({g.N, g.OC, g.OH, g.OW}, dt::f32, tag::nchw);
  plan->user_dw = g.G == 1 ? dnnl::memory::desc({g.OC, g.ICg, g.KH, g.KW}, dt::f32, tag::oihw)
                           : dnnl::memory::desc({g.G, g.OCg, g.ICg, g.KH, g.KW}, dt::f32, tag::goihw);
  plan->src_md = pd.src_desc();
  plan->ddst_md = pd.diff_dst_desc();
  plan->dw_md = pd.diff_weights_desc();
  plan->prim = PrimitiveCache::instance().get(key, [&] { return dnnl::primitive(dnnl::convolution_backward_weights(pd)); });
  auto reorder = [&](const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
    return from == to ? dnnl::reorder() : dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to, scratchpad_attr()));
  };
  plan->src_reorder = reorder(plan->user_src, plan->src_md);
  plan->ddst_reorder = reorder(plan->user_ddst, plan->ddst_md);
  plan->dw_reorder = reorder(plan->dw_md, plan->user_dw);
  plan->ok = true;
  return plan;
}

std::shared_ptr<Plan> get_plan(const Geometry& g, const Conv2dParams& p) {
  static auto* plans = new PlanCache<Plan>("convolution weight-gradient plans", "PIJIT_PLAN_CACHE", kDefaultPlanCache);
  const std::string key = plan_key(g, p);
  return plans->get(key, [&] { return make_plan(key, g, p); });
}

// `user` in the primitive's layout `md`: itself, or reordered into this thread's scratch `slot`.
dnnl::memory in_layout(const dnnl::memory& user, const dnnl::reorder& r, const dnnl::memory::desc& md,
                       dnnl::memory* mem, int slot, bool locked) {
  if (!r) return user;
  dnnl::memory buf = thread_slot_memory(mem, md, slot, locked);
  execute_reorder(r, user, buf);
  return buf;
}

void run_plan(Plan& plan, float* dw, const Tensor& x, const Tensor& dout) {
  dnnl::engine& eng = dnnl_engine();
  std::unique_lock<std::mutex> lock(plan.mu, std::try_to_lock);
  const bool locked = lock.owns_lock();
  // the plan's memory objects (kernels/dnnl_context.h), unless another thread is using them
  auto user = [&](const dnnl::memory::desc& md, const void* p) {
    return locked ? plan.bound.at(md, p) : dnnl::memory(md, eng, const_cast<void*>(p));
  };
  const dnnl::memory src = in_layout(user(plan.user_src, x.raw_data()), plan.src_reorder, plan.src_md, &plan.src_buf,
                                     kSrcSlot, locked);
  const dnnl::memory ddst = in_layout(user(plan.user_ddst, dout.raw_data()), plan.ddst_reorder, plan.ddst_md,
                                      &plan.ddst_buf, kDstSlot, locked);
  const dnnl::memory udw = user(plan.user_dw, dw);
  const dnnl::memory out = plan.dw_reorder ? thread_slot_memory(&plan.dw_buf, plan.dw_md, kAuxSlot, locked) : udw;
  if (locked)
    plan.bound.execute(plan.prim, {{DNNL_ARG_SRC, &src}, {DNNL_ARG_DIFF_DST, &ddst}, {DNNL_ARG_DIFF_WEIGHTS, &out}});
  else
    execute(plan.prim, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_DIFF_WEIGHTS, out}});
  if (plan.dw_reorder) execute_reorder(plan.dw_reorder, out, udw);
}

}  // namespace

struct WeightGradPrepared {
  Conv2dParams params;
  Geometry g;
  std::shared_ptr<Plan> plan;  // null: the loop
};

std::shared_ptr<const WeightGradPrepared> conv2d_weight_grad_prepare(const Shape& dw, const Shape& x, const Shape& dout,
                                                                     const Conv2dParams& p, DType dtype) {
  auto c = std::make_shared<WeightGradPrepared>();
  c->params = p;
  c->g = geometry(dw, x, dout, p);
  if (dtype == DType::Float32 && shape_numel(dw) > 0 && shape_numel(x) > 0 && shape_numel(dout) > 0) {
    std::shared_ptr<Plan> plan = get_plan(c->g, p);
    if (plan->ok) c->plan = std::move(plan);
  }
  return c;
}

void conv2d_weight_grad_run(const WeightGradPrepared& c, const Tensor& dw, const Tensor& x, const Tensor& dout) {
  PJ_CHECK(is_floating(dw.dtype()) && x.dtype() == dw.dtype() && dout.dtype() == dw.dtype())
      << "conv2d_weight_grad_into: one floating dtype";
  if (dw.numel() == 0) return;
  with_contiguous_out(dw, [&](const Tensor& out) {
    const Tensor xc = x.contiguous(), dc = dout.contiguous();
    if (xc.numel() == 0 || dc.numel() == 0) {  // an empty batch: nothing to sum
      fill(out, 0);
      return;
    }
    if (c.plan) return run_plan(*c.plan, out.data<float>(), xc, dc);
    PJ_DISPATCH_FLOATING(out.dtype(), "conv2d_weight_grad", [&] {
      weight_grad_loop<scalar_t>(c.g, out.data<scalar_t>(), xc.data<scalar_t>(), dc.data<scalar_t>(), c.params);
    });
  });
}

void conv2d_weight_grad_into(const Tensor& dw, const Tensor& x, const Tensor& dout, const Conv2dParams& p) {
  conv2d_weight_grad_run(*conv2d_weight_grad_prepare(dw.shape(), x.shape(), dout.shape(), p, dw.dtype()), dw, x, dout);
}

}  // namespace pj
