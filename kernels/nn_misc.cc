#include "kernels/nn_misc.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/matmul.h"
#include "kernels/random.h"
#include "kernels/weight_cache.h"
#include "kernels/threading.h"

namespace pj {

namespace {

// `t` (contiguous) viewed as `shape`.
Tensor reshaped(const Tensor& t, const Shape& shape) {
  PJ_CHECK(t.is_contiguous()) << "reshaped: needs a contiguous tensor";
  return t.as_strided(shape, contiguous_strides(shape), t.offset());
}

// ---- dense ----------------------------------------------------------------------------------------

// f(I{}) with I the index type of an Int32 / Int64 tensor.
template <typename F>
void with_index_type(DType t, F f) {
  if (t == DType::Int32) f(int32_t{});
  else f(int64_t{});
}

template <typename T>
void add_bias_rows(T* out, const T* bias, int64_t M, int64_t N) {
  parallel_for(M, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(N, 1)), [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m)
      for (int64_t n = 0; n < N; ++n) out[m * N + n] += bias[n];
  });
}

}  // namespace

void dropout_into(const Tensor& y, const Tensor& mask, const Tensor& x, double p, bool training,
                  std::optional<uint64_t> seed) {
  PJ_CHECK(y.shape() == x.shape() && mask.shape() == x.shape() && y.dtype() == x.dtype() &&
           mask.dtype() == DType::Bool)
      << "dropout_into: outputs";
  PJ_CHECK(p >= 0 && p < 1) << "dropout_into: p out of [0, 1)";
  if (!training || p == 0) {
    copy_into(y, x);
    fill(mask, 1);
    return;
  }
  if (x.numel() == 0) return;
  const Tensor xc = x.contiguous();
  const double keep = 1.0 - p;
  PJ_DISPATCH_FLOATING(x.dtype(), "dropout", [&] {
    using T = scalar_t;
    const T scale = static_cast<T>(1.0 / keep);
    with_contiguous_out(y, [&](const Tensor& yd) {
      with_contiguous_out(mask, [&](const Tensor& md) {
        // The uniforms go straight into y when it is float32 (element i is read before it is
        // overwritten), saving a temporary as large as x.
        Tensor u = std::is_same_v<T, float> && !yd.same_storage(xc) ? reshaped(yd, {x.numel()})
                                                                    : Tensor::empty({x.numel()}, DType::Float32);
        uniform_into(u, seed);
        const float* up = u.data<float>();
        const T* xp = xc.data<T>();
        T* yp = yd.data<T>();
        bool* mp = md.data<bool>();
        parallel_for(x.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            const bool k = static_cast<double>(up[i]) < keep;
            mp[i] = k;
            yp[i] = k ? xp[i] * scale : T(0);
          }
        });
      });
    });
  });
}

void embedding_into(const Tensor& out, const Tensor& weight, const Tensor& indices) {
  PJ_CHECK(weight.ndim() == 2 && out.dtype() == weight.dtype()) << "embedding_into: weight";
  PJ_CHECK(indices.dtype() == DType::Int32 || indices.dtype() == DType::Int64) << "embedding_into: indices";
  const int64_t V = weight.dim(0), D = weight.dim(1), n = indices.numel();
  const Tensor idx = indices.contiguous();
  // Validate first: an error cannot leave an OpenMP region. The first bad index in logical order
  // is reported, whatever the thread count.
  constexpr int64_t kBlock = 65536;
  const int64_t nblk = (n + kBlock - 1) / kBlock;
  std::vector<int64_t> bad(nblk, -1);
  with_index_type(idx.dtype(), [&](auto tag) {
    using I = decltype(tag);
    const I* ip = idx.data<I>();
    parallel_for(nblk, 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k)
        for (int64_t i = k * kBlock; i < std::min(n, (k + 1) * kBlock); ++i)
          if (ip[i] < 0 || ip[i] >= V) {
            bad[k] = i;
            break;
          }
    });
    for (int64_t k = 0; k < nblk; ++k)
      if (bad[k] >= 0)
        PJ_THROW(Index) << "embedding: index " << static_cast<int64_t>(ip[bad[k]]) << " is out of range for "
                        << V << " embeddings (weight shape " << shape_str(weight.shape()) << ")";
  });
  if (out.numel() == 0) return;
  const Tensor w = weight.contiguous();
  const size_t row_bytes = static_cast<size_t>(D) * itemsize(w.dtype());
  with_contiguous_out(out, [&](const Tensor& dst) {
    const char* wp = static_cast<const char*>(w.raw_data());
    char* op = static_cast<char*>(dst.raw_data());
    with_index_type(idx.dtype(), [&](auto tag) {
      using I = decltype(tag);
      const I* ip = idx.data<I>();
      parallel_for(n, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) std::memcpy(op + i * row_bytes, wp + ip[i] * row_bytes, row_bytes);
      });
    });
  });
}

// One matmul primitive and what its launch needs to know.
struct DensePrimitive {
  dnnl::matmul prim;
  std::string impl;  // oneDNN's implementation ("brg:avx512_core")
  dnnl::memory::desc w_md;
};

DensePrimitive make_dense_primitive(const dnnl::memory::desc& x, const dnnl::memory::desc& w,
                                    const dnnl::memory::desc* bias, const dnnl::memory::desc& out) {
  dnnl::matmul::desc d = bias ? dnnl::matmul::desc(x, w, *bias, out) : dnnl::matmul::desc(x, w, out);
  dnnl::matmul::primitive_desc pd(d, scratchpad_attr(), dnnl_engine());
  DensePrimitive p;
  p.w_md = pd.weights_desc();
  p.impl = pd.impl_info_str();
  p.prim = dnnl::matmul(pd);
  return p;
}

struct DenseBinding {
  std::mutex mu;
  BoundArgs args[2];  // per primitive (best, plain): made at the first launch, rebound at every one
};

struct DensePlan {
  dnnl::memory::desc x_md, w_user, b_md, out_md;
  // Eager calls' memories, as a graph node has its own (one call at a time; another makes its own)
  mutable DenseBinding eager;
  bool bias = false;
  DensePrimitive best;      // weights in the layout the primitive prefers (best.w_md)
  dnnl::reorder w_reorder;  // w_user -> best.w_md, when they differ
  // The same product reading the weights as they are (w_user), for weights written before every
  // launch (WeightMemo::trained): made on first use. Same bits as `best` (oneDNN's brgemm and
  // gemm kernels sum k in the same order whatever the weights' layout; GoogleTest checks it).
  mutable std::once_flag plain_once;
  mutable DensePrimitive plain;
  // Null when oneDNN refuses that layout, or picks another implementation for it (which may sum
  // in another order: the weights stay reordered then).
  const DensePrimitive* plain_primitive() const {
    std::call_once(plain_once, [this] {
      try {
        plain = best.w_md == w_user ? best : make_dense_primitive(x_md, w_user, bias ? &b_md : nullptr, out_md);
        if (plain.impl != best.impl) plain = DensePrimitive();
      } catch (const dnnl::error&) {
        plain = DensePrimitive();
      }
    });
    return plain.prim ? &plain : nullptr;
  }
};

std::shared_ptr<const DensePlan> make_dense_plan(int64_t M, int64_t K, int64_t N, bool bias);

std::shared_ptr<const DensePlan> dense_plan(int64_t M, int64_t K, int64_t N, bool bias) {
  static auto* plans = new PlanCache<const DensePlan>("dense plans", "PIJIT_PLAN_CACHE", kDefaultPlanCache);
  const std::string key = std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N) + (bias ? "+b" : "");
  return plans->get(key, [&] { return make_dense_plan(M, K, N, bias); });
}

std::shared_ptr<const DensePlan> make_dense_plan(int64_t M, int64_t K, int64_t N, bool bias) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  auto p = std::make_shared<DensePlan>();
  p->x_md = dnnl::memory::desc({M, K}, dt::f32, tag::ab);
  p->w_user = dnnl::memory::desc({K, N}, dt::f32, tag::ba);  // weight [N, K] row-major is [K, N] column-major
  p->b_md = dnnl::memory::desc({1, N}, dt::f32, tag::ab);
  p->out_md = dnnl::memory::desc({M, N}, dt::f32, tag::ab);
  const dnnl::memory::desc w_any({K, N}, dt::f32, tag::any);
  p->bias = bias;
  try {
    p->best = make_dense_primitive(p->x_md, w_any, bias ? &p->b_md : nullptr, p->out_md);
    if (p->best.w_md != p->w_user)
      p->w_reorder = dnnl::reorder(
          dnnl::reorder::primitive_desc(dnnl_engine(), p->w_user, dnnl_engine(), p->best.w_md, scratchpad_attr()));
  } catch (const dnnl::error&) {
    p = nullptr;
  }
  return p;
}

std::shared_ptr<DenseBinding> make_dense_binding() { return std::make_shared<DenseBinding>(); }

void dense_run(const DensePlan& p, const Tensor& out, const Tensor& x, const Tensor& weight, const Tensor& bias,
               WeightMemo* memo, DenseBinding* binding) {
  auto& eng = dnnl_engine();
  const Tensor xc = x.contiguous();
  // Trained weights are read where they are; others in the primitive's layout, reordered once
  // per version. An eager call has no memo: the weight cache tracks its weights' writes.
  const bool trained = memo ? memo->trained(weight) : written_each_use(weight);
  const DensePrimitive* plain_prim = trained ? p.plain_primitive() : nullptr;
  const bool plain = plain_prim != nullptr;
  const DensePrimitive& prim = plain ? *plain_prim : p.best;
  Tensor wc;
  CachedWeights cached;
  if (plain) wc = weight.contiguous();
  else cached = memo ? memo->get(weight, p.w_user, p.best.w_md, p.w_reorder)
                     : reordered_weights(weight, p.w_user, p.best.w_md, p.w_reorder);
  Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  std::unique_lock<std::mutex> lock;
  if (binding) lock = std::unique_lock<std::mutex>(binding->mu, std::try_to_lock);
  if (lock.owns_lock()) {  // the node's memory objects, rebound (kernels/dnnl_context.h)
    BoundArgs& a = binding->args[plain];
    const dnnl::memory& w = plain ? a.at(p.w_user, wc.raw_data()) : cached.mem;
    a.execute(prim.prim, {{DNNL_ARG_SRC, &a.at(p.x_md, xc.raw_data())}, {DNNL_ARG_WEIGHTS, &w},
                          {DNNL_ARG_DST, &a.at(p.out_md, out.raw_data())},
                          {DNNL_ARG_BIAS, b.defined() ? &a.at(p.b_md, b.raw_data()) : nullptr}});
    return;
  }
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, dnnl::memory(p.x_md, eng, xc.raw_data())},
                                             {DNNL_ARG_WEIGHTS, plain ? dnnl::memory(p.w_user, eng, wc.raw_data()) : cached.mem},
                                             {DNNL_ARG_DST, dnnl::memory(p.out_md, eng, out.raw_data())}};
  if (b.defined()) args.emplace(DNNL_ARG_BIAS, dnnl::memory(p.b_md, eng, b.raw_data()));
  execute(prim.prim, std::move(args));
}

void dense_into(const Tensor& out, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  PJ_CHECK(x.ndim() >= 1 && weight.ndim() == 2 && x.dim(x.ndim() - 1) == weight.dim(1)) << "dense_into: shapes";
  PJ_CHECK(x.dtype() == out.dtype() && weight.dtype() == out.dtype() && (!bias.defined() || bias.dtype() == out.dtype()))
      << "dense_into: one dtype";
  const int64_t K = weight.dim(1), N = weight.dim(0), M = x.numel() / std::max<int64_t>(K, 1);
  if (out.numel() == 0) return;
  if (K == 0) {  // empty sums: just the bias
    if (bias.defined()) copy_into(out, bias);
    else fill(out, 0);
    return;
  }
  Tensor x2 = x.ndim() == 2 ? x : reshaped(x.contiguous(), {M, K});
  with_contiguous_out(out, [&](const Tensor& dst) {
    Tensor out2 = reshaped(dst, {M, N});
    if (dst.dtype() == DType::Float32) {
      if (std::shared_ptr<const DensePlan> plan = dense_plan(M, K, N, bias.defined())) {
        dense_run(*plan, out2, x2, weight, bias, nullptr, &plan->eager);
        return;
      }
    }
    Tensor wt = weight.as_strided({K, N}, {weight.stride(1), weight.stride(0)}, weight.offset());
    matmul_into(out2, x2, wt);
    if (!bias.defined()) return;
    Tensor b = bias.contiguous();
    PJ_DISPATCH_FLOATING(dst.dtype(), "dense", [&] {
      add_bias_rows<scalar_t>(out2.data<scalar_t>(), b.data<scalar_t>(), M, N);
    });
  });
}

}  // namespace pj
