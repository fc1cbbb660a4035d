#include "kernels/nn_misc.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/matmul.h"
#include "kernels/random.h"
#include "kernels/threading.h"

namespace pj {

namespace {

// `t` (contiguous) viewed as `shape`.
Tensor reshaped(const Tensor& t, const Shape& shape) {
  PJ_CHECK(t.is_contiguous()) << "reshaped: needs a contiguous tensor";
  return t.as_strided(shape, contiguous_strides(shape), t.offset());
}

// ---- dense ----------------------------------------------------------------------------------------

// Dims and strides of a 2-D operand for oneDNN: `t` itself when row- or column-major, else a
// contiguous copy replaces it.
dnnl::memory::dims operand_strides(Tensor* t) {
  if (t->is_contiguous()) return {t->dim(1), 1};
  Tensor tr = t->as_strided({t->dim(1), t->dim(0)}, {t->stride(1), t->stride(0)}, t->offset());
  if (tr.is_contiguous()) return {1, t->dim(0)};
  *t = t->contiguous();
  return {t->dim(1), 1};
}

std::string strides_key(const dnnl::memory::dims& s) { return std::to_string(s[0]) + "/" + std::to_string(s[1]); }

// out2 [M, N] (contiguous) = x2 [M, K] @ w[N, K].T + bias; false when oneDNN refuses.
bool dnnl_dense(const Tensor& out2, Tensor x2, Tensor w, const Tensor& bias) {
  const int64_t M = x2.dim(0), K = x2.dim(1), N = w.dim(0);
  using dt = dnnl::memory::data_type;
  dnnl::memory::dims xs = operand_strides(&x2);
  // weight [N, K] read as the [K, N] operand: swap the dims' strides.
  Tensor wt = w.as_strided({K, N}, {w.stride(1), w.stride(0)}, w.offset());
  dnnl::memory::dims ws = operand_strides(&wt);
  dnnl::memory::desc xmd({M, K}, dt::f32, xs), wmd({K, N}, dt::f32, ws), omd({M, N}, dt::f32, {N, 1});
  dnnl::memory::desc bmd({1, N}, dt::f32, {N, 1});
  Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  std::string key = "dense:" + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N) + ":" +
                    strides_key(xs) + ":" + strides_key(ws) + (b.defined() ? ":bias" : "");
  dnnl::primitive prim;
  try {
    prim = PrimitiveCache::instance().get(key, [&] {
      dnnl::matmul::desc d = b.defined() ? dnnl::matmul::desc(xmd, wmd, bmd, omd) : dnnl::matmul::desc(xmd, wmd, omd);
      return dnnl::matmul(dnnl::matmul::primitive_desc(d, dnnl_engine()));
    });
  } catch (const dnnl::error&) {
    return false;
  }
  auto& eng = dnnl_engine();
  dnnl::memory xm(xmd, eng, x2.raw_data()), wm(wmd, eng, wt.raw_data()), om(omd, eng, out2.raw_data());
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, om}};
  if (b.defined()) args.emplace(DNNL_ARG_BIAS, dnnl::memory(bmd, eng, b.raw_data()));
  prim.execute(dnnl_stream(), args);
  dnnl_stream().wait();
  return true;
}

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
    if (dst.dtype() == DType::Float32 && dnnl_dense(out2, x2, weight, bias)) return;
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
