#include "kernels/matmul.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>

#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/threading.h"

namespace pj {

namespace {

// ---- oneDNN (float32) --------------------------------------------------------------------------

// Dims and strides describing `t` to oneDNN, padded with leading 1s to `nd` dims. `t` is replaced
// by a contiguous copy unless it is row-major or column-major in its last two dims.
void dnnl_layout(Tensor* t, int nd, dnnl::memory::dims* dims, dnnl::memory::dims* strides) {
  const int tn = t->ndim();
  Shape shape = t->shape(), st;
  Shape sw_shape = shape, sw_strides = t->strides();
  std::swap(sw_shape[tn - 1], sw_shape[tn - 2]);
  std::swap(sw_strides[tn - 1], sw_strides[tn - 2]);
  if (!t->is_contiguous() && t->as_strided(sw_shape, sw_strides, t->offset()).is_contiguous()) {
    st = contiguous_strides(sw_shape);
    std::swap(st[tn - 1], st[tn - 2]);
  } else {
    *t = t->contiguous();
    st = contiguous_strides(shape);
  }
  const int64_t total = std::max<int64_t>(t->numel(), 1);
  dims->assign(nd - tn, 1);
  strides->assign(nd - tn, total);
  dims->insert(dims->end(), shape.begin(), shape.end());
  strides->insert(strides->end(), st.begin(), st.end());
}

std::string dims_key(const dnnl::memory::dims& d, const dnnl::memory::dims& s) {
  std::string k;
  for (size_t i = 0; i < d.size(); ++i) k += std::to_string(d[i]) + "/" + std::to_string(s[i]) + ",";
  return k;
}

// The oneDNN view of one product: operands as dnnl_layout passes them (a, b possibly copies).
struct Geometry {
  Tensor a, b;
  dnnl::memory::dims ad, as, bd, bs, od, os;
  bool operator==(const Geometry& g) const {
    return ad == g.ad && as == g.as && bd == g.bd && bs == g.bs && od == g.od && os == g.os;
  }
};

Geometry geometry(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int nd = out.ndim();
  Geometry g{a, b};
  dnnl_layout(&g.a, nd, &g.ad, &g.as);
  dnnl_layout(&g.b, nd, &g.bd, &g.bs);
  g.od.assign(out.shape().begin(), out.shape().end());
  Shape ost = contiguous_strides(out.shape());
  g.os.assign(ost.begin(), ost.end());
  return g;
}

// The cached primitive for `g`, or an empty one when oneDNN has no implementation for it.
dnnl::primitive matmul_primitive(const Geometry& g) {
  using dt = dnnl::memory::data_type;
  const std::string key = "matmul:" + dims_key(g.ad, g.as) + ";" + dims_key(g.bd, g.bs) + ";" + dims_key(g.od, g.os);
  try {
    return PrimitiveCache::instance().get(key, [&] {
      dnnl::matmul::desc d(dnnl::memory::desc(g.ad, dt::f32, g.as), dnnl::memory::desc(g.bd, dt::f32, g.bs),
                           dnnl::memory::desc(g.od, dt::f32, g.os));
      return dnnl::matmul(dnnl::matmul::primitive_desc(d, scratchpad_attr(), dnnl_engine()));
    });
  } catch (const dnnl::error&) {
    return dnnl::primitive();
  }
}

// False when oneDNN has no implementation for this geometry.
bool dnnl_matmul(const Tensor& out, const Tensor& a, const Tensor& b) {
  const Geometry g = geometry(out, a, b);
  const dnnl::primitive prim = matmul_primitive(g);
  if (!prim) return false;
  using dt = dnnl::memory::data_type;
  dnnl::memory am(dnnl::memory::desc(g.ad, dt::f32, g.as), dnnl_engine(), g.a.raw_data());
  dnnl::memory bm(dnnl::memory::desc(g.bd, dt::f32, g.bs), dnnl_engine(), g.b.raw_data());
  dnnl::memory om(dnnl::memory::desc(g.od, dt::f32, g.os), dnnl_engine(), out.raw_data());
  execute(prim, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, om}});
  return true;
}

// ---- loops (every dtype) -----------------------------------------------------------------------

// Blocking: a row block of the output reuses a KB x JB tile of b (about L2-sized), and each
// output row segment of JB elements stays in L1 while k runs.
constexpr int64_t kRowBlock = 8;
constexpr int64_t kKBlock = 128;
constexpr int64_t kJBlock = 256;

// c + a * b in T, with numpy's wrap-around for integers and or-of-ands for bool.
template <typename T>
inline T mac(T c, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return c | (a & b);
  else if constexpr (std::is_floating_point_v<T>) return c + a * b;
  else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(c) + static_cast<U>(a) * static_cast<U>(b));
  }
}

// Strides of `t`'s batch dims broadcast to `batch` (0 where t is broadcast).
Shape batch_strides(const Tensor& t, const Shape& batch) {
  const int nb = static_cast<int>(batch.size()), tb = t.ndim() - 2;
  Shape st(nb, 0);
  for (int i = 0; i < tb; ++i) {
    int j = nb - tb + i;
    st[j] = t.dim(i) == 1 ? 0 : t.stride(i);
  }
  return st;
}

template <typename T>
void matmul_loop(const Tensor& out, const Tensor& a, Tensor b) {
  const int nd = out.ndim();
  const int64_t n = out.dim(nd - 2), m = out.dim(nd - 1), k = a.dim(a.ndim() - 1);
  if (m > 1 && b.stride(b.ndim() - 1) != 1) b = b.contiguous();  // the inner loop walks b's rows
  const Shape batch(out.shape().begin(), out.shape().end() - 2);
  const Shape abs = batch_strides(a, batch), bbs = batch_strides(b, batch);
  const int64_t nbatch = shape_numel(batch), nrb = (n + kRowBlock - 1) / kRowBlock;
  const int64_t sa0 = a.stride(a.ndim() - 2), sa1 = a.stride(a.ndim() - 1);
  const int64_t sb0 = b.stride(b.ndim() - 2);
  const T* A = a.data<T>();
  const T* B = b.data<T>();
  T* C = out.data<T>();
  const int64_t flops_per_item = kRowBlock * k * m;
  parallel_for(nbatch * nrb, std::max<int64_t>(1, kParallelGrain * 4 / std::max<int64_t>(flops_per_item, 1)),
               [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) {
      int64_t bi = w / nrb, i0 = (w % nrb) * kRowBlock, i1 = std::min(n, i0 + kRowBlock);
      int64_t aoff = 0, boff = 0, rem = bi;
      for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
        int64_t x = rem % batch[d];
        rem /= batch[d];
        aoff += x * abs[d];
        boff += x * bbs[d];
      }
      const T* Ab = A + aoff;
      const T* Bb = B + boff;
      T* Cb = C + bi * n * m;
      std::fill(Cb + i0 * m, Cb + i1 * m, T(0));
      for (int64_t jb = 0; jb < m; jb += kJBlock) {
        const int64_t jn = std::min(kJBlock, m - jb);
        for (int64_t kb = 0; kb < k; kb += kKBlock) {
          const int64_t ke = std::min(k, kb + kKBlock);
          for (int64_t i = i0; i < i1; ++i) {
            T* c = Cb + i * m + jb;
            for (int64_t kk = kb; kk < ke; ++kk) {
              const T aik = Ab[i * sa0 + kk * sa1];
              const T* brow = Bb + kk * sb0 + jb;
              for (int64_t j = 0; j < jn; ++j) c[j] = mac(c[j], aik, brow[j]);
            }
          }
        }
      }
    }
  });
}

void check_operands(const Tensor& out, const Tensor& a, const Tensor& b) {
  PJ_CHECK(a.ndim() >= 2 && b.ndim() >= 2 && out.ndim() >= 2) << "matmul_into takes ndim >= 2";
  PJ_CHECK(a.dtype() == out.dtype() && b.dtype() == out.dtype()) << "matmul_into takes one dtype";
  PJ_CHECK(a.dim(a.ndim() - 1) == b.dim(b.ndim() - 2)) << "matmul_into: k mismatch";
  PJ_CHECK(out.dim(out.ndim() - 2) == a.dim(a.ndim() - 2) && out.dim(out.ndim() - 1) == b.dim(b.ndim() - 1))
      << "matmul_into: output core dims";
}

// Runs `f(dst)` on out when contiguous, else on a temporary copied back; handles empty and k = 0.
template <typename F>
void with_contiguous_out(const Tensor& out, const Tensor& a, F f) {
  if (out.numel() == 0) return;
  Tensor dst = out.is_contiguous() ? out : Tensor::empty(out.shape(), out.dtype());
  if (a.dim(a.ndim() - 1) == 0) std::memset(dst.raw_data(), 0, dst.nbytes());  // empty sums
  else f(dst);
  if (!dst.same_storage(out)) copy_into(out, dst);
}

}  // namespace

void matmul_loop_into(const Tensor& out, const Tensor& a, const Tensor& b) {
  check_operands(out, a, b);
  with_contiguous_out(out, a, [&](const Tensor& dst) {
    PJ_DISPATCH_ALL(out.dtype(), [&] { matmul_loop<scalar_t>(dst, a, b); });
  });
}

struct MatmulState {
  std::mutex mu;
  bool ready = false;
  Geometry g;  // the last launch's layouts (its tensors dropped)
  dnnl::primitive prim;
  dnnl::memory am, bm, om, scratch;
  size_t scratch_bytes = 0;
};

std::shared_ptr<MatmulState> make_matmul_state() { return std::make_shared<MatmulState>(); }

void matmul_prepared_into(MatmulState& st, const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t k = a.dim(a.ndim() - 1);
  std::unique_lock<std::mutex> lock(st.mu, std::try_to_lock);
  if (!lock.owns_lock() || out.dtype() != DType::Float32 || !out.is_contiguous() || out.numel() == 0 || k == 0 ||
      out.numel() * k < kTinyMatmulMacs || a.dtype() != out.dtype() || b.dtype() != out.dtype())
    return matmul_into(out, a, b);
  check_operands(out, a, b);
  Geometry g = geometry(out, a, b);
  if (!st.ready || !(g == st.g)) {
    dnnl::primitive prim = matmul_primitive(g);
    if (!prim) return matmul_into(out, a, b);
    using dt = dnnl::memory::data_type;
    auto& eng = dnnl_engine();
    st.prim = prim;
    st.am = dnnl::memory(dnnl::memory::desc(g.ad, dt::f32, g.as), eng, DNNL_MEMORY_NONE);
    st.bm = dnnl::memory(dnnl::memory::desc(g.bd, dt::f32, g.bs), eng, DNNL_MEMORY_NONE);
    st.om = dnnl::memory(dnnl::memory::desc(g.od, dt::f32, g.os), eng, DNNL_MEMORY_NONE);
    const_dnnl_primitive_desc_t pd = nullptr;
    dnnl::error::wrap_c_api(dnnl_primitive_get_primitive_desc(prim.get(), &pd), "matmul: primitive desc");
    const dnnl_memory_desc_t* smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    st.scratch_bytes = smd ? dnnl_memory_desc_get_size(smd) : 0;
    st.scratch = st.scratch_bytes ? dnnl::memory(dnnl::memory::desc(*smd), eng, DNNL_MEMORY_NONE) : dnnl::memory();
    st.g = Geometry{Tensor(), Tensor(), g.ad, g.as, g.bd, g.bs, g.od, g.os};
    st.ready = true;
  }
  auto bind = [](const dnnl::memory& m, void* ptr) {
    dnnl::error::wrap_c_api(dnnl_memory_set_data_handle(m.get(), ptr), "matmul: bind a buffer");
  };
  bind(st.am, g.a.raw_data());
  bind(st.bm, g.b.raw_data());
  bind(st.om, out.raw_data());
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, st.am.get()}, {DNNL_ARG_WEIGHTS, st.bm.get()}, {DNNL_ARG_DST, st.om.get()}};
  int nargs = 3;
  if (st.scratch_bytes) {
    bind(st.scratch, thread_scratch_buffer(st.scratch_bytes));  // this thread's (kernels/dnnl_context.h)
    args[nargs++] = {DNNL_ARG_SCRATCHPAD, st.scratch.get()};
  }
  dnnl::error::wrap_c_api(dnnl_primitive_execute(st.prim.get(), dnnl_stream().get(), nargs, args), "matmul: execute");
  dnnl_stream().wait();
}

void matmul_into(const Tensor& out, const Tensor& a, const Tensor& b) {
  check_operands(out, a, b);
  with_contiguous_out(out, a, [&](const Tensor& dst) {
    // Tiny products stay on the loop: oneDNN's per-call execute overhead (~6 us measured on 4x4)
    // dwarfs a few hundred multiply-adds.
    const int64_t k = a.ndim() ? a.dim(a.ndim() - 1) : 1;
    const bool tiny = dst.numel() * k < kTinyMatmulMacs;
    if (dst.dtype() == DType::Float32 && !tiny && dnnl_matmul(dst, a, b)) return;
    PJ_DISPATCH_ALL(out.dtype(), [&] { matmul_loop<scalar_t>(dst, a, b); });
  });
}

}  // namespace pj
