#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/threading.h"

namespace pj {

namespace {

constexpr int64_t kTile = 256;  // columns handled together when the axis is not innermost

void dnnl_softmax(const Tensor& out, const Tensor& in, int axis, bool log) {
  const int nd = in.ndim();
  dnnl::memory::dims dims = to_dnnl_dims(in.shape().data(), nd);
  if (nd == 0) axis = 0;
  Shape st = contiguous_strides(nd == 0 ? Shape{1} : in.shape());
  dnnl::memory::desc md(dims, dnnl::memory::data_type::f32, dnnl::memory::dims(st.begin(), st.end()));
  std::string key = std::string(log ? "logsoftmax:" : "softmax:") + std::to_string(axis);
  for (auto d : dims) key += ":" + std::to_string(d);
  dnnl::primitive prim = PrimitiveCache::instance().get(key, [&]() -> dnnl::primitive {
    if (log) {
      dnnl::logsoftmax_forward::desc d(dnnl::prop_kind::forward_inference, md, axis);
      return dnnl::logsoftmax_forward(dnnl::logsoftmax_forward::primitive_desc(d, dnnl_engine()));
    }
    dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, axis);
    return dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(d, dnnl_engine()));
  });
  dnnl::memory src(md, dnnl_engine(), in.raw_data());
  dnnl::memory dst(md, dnnl_engine(), out.raw_data());
  prim.execute(dnnl_stream(), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  dnnl_stream().wait();
}

// Contiguous in/out viewed as [outer, n, inner]; softmax over n.
template <typename T>
void softmax_loop(T* y, const T* x, int64_t outer, int64_t n, int64_t inner, bool log) {
  const int64_t ntile = (inner + kTile - 1) / kTile;
  const int64_t per_item = std::min(inner, kTile) * n;
  parallel_for(outer * ntile, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_item, 1)),
               [&](int64_t b, int64_t e) {
    T mx[kTile], sum[kTile];
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / ntile, j0 = (w % ntile) * kTile, jn = std::min(kTile, inner - j0);
      const T* xs = x + o * n * inner + j0;
      T* ys = y + o * n * inner + j0;
      std::fill(mx, mx + jn, -std::numeric_limits<T>::infinity());
      std::fill(sum, sum + jn, T(0));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < jn; ++j) {
          T v = xs[i * inner + j];
          mx[j] = (v > mx[j] || v != v) ? v : mx[j];
        }
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < jn; ++j) {
          T ex = std::exp(xs[i * inner + j] - mx[j]);
          sum[j] += ex;
          if (!log) ys[i * inner + j] = ex;
        }
      if (log) {
        for (int64_t j = 0; j < jn; ++j) sum[j] = mx[j] + std::log(sum[j]);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < jn; ++j) ys[i * inner + j] = xs[i * inner + j] - sum[j];
      } else {
        for (int64_t j = 0; j < jn; ++j) sum[j] = T(1) / sum[j];
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < jn; ++j) ys[i * inner + j] *= sum[j];
      }
    }
  });
}

}  // namespace

void softmax_into(const Tensor& out, const Tensor& in, int axis, bool log) {
  PJ_CHECK(out.shape() == in.shape() && out.dtype() == in.dtype()) << "softmax_into: mismatched output";
  PJ_CHECK(is_floating(in.dtype())) << "softmax_into: inputs arrive cast to a floating dtype";
  if (out.numel() == 0) return;
  Tensor src = in.contiguous();
  Tensor dst = out.is_contiguous() ? out : Tensor::empty(out.shape(), out.dtype());
  if (src.dtype() == DType::Float32) {
    dnnl_softmax(dst, src, axis, log);
  } else {
    int64_t outer = 1, inner = 1, n = src.ndim() ? src.dim(axis) : 1;
    for (int d = 0; d < axis && d < src.ndim(); ++d) outer *= src.dim(d);
    for (int d = axis + 1; d < src.ndim(); ++d) inner *= src.dim(d);
    softmax_loop<double>(dst.data<double>(), src.data<double>(), outer, n, inner, log);
  }
  if (!dst.same_storage(out)) copy_into(out, dst);
}

}  // namespace pj
