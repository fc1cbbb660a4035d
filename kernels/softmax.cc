#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/nonfinite.h"
#include "kernels/threading.h"

namespace pj {

namespace {

constexpr int64_t kTile = 256;  // columns handled together when the axis is not innermost

// Elements of input per oneDNN call (256 KiB): each chunk is scanned for NaN and infinities just
// before oneDNN reads it, so the scan brings it into L2 rather than adding a pass over memory.
constexpr int64_t kDnnlChunk = 65536;

// oneDNN's softmax of `rows` contiguous rows of n (the innermost axis: its jit kernels need that).
void dnnl_softmax_rows(float* y, const float* x, int64_t rows, int64_t n) {
  dnnl::memory::desc md({rows, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  std::string key = "softmax:" + std::to_string(rows) + "x" + std::to_string(n);
  dnnl::primitive prim = PrimitiveCache::instance().get(key, [&]() -> dnnl::primitive {
    dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, 1);
    return dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(d, scratchpad_attr(), dnnl_engine()));
  });
  dnnl::memory src(md, dnnl_engine(), const_cast<float*>(x));
  dnnl::memory dst(md, dnnl_engine(), y);
  execute(prim, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
}

// One contiguous row of n.
template <typename T>
void softmax_row(T* y, const T* x, int64_t n, bool log) {
  T mx = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    T m = x[i] > mx ? x[i] : mx;
    mx = x[i] != x[i] ? x[i] : m;
  }
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    T ex = std::exp(x[i] - mx);
    sum += ex;
    if (!log) y[i] = ex;
  }
  if (log) {
    // (x - max) is exact; folding max into the shift first would round at max's magnitude.
    const T lse = std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mx) - lse;
  } else {
    const T inv = T(1) / sum;
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

// Contiguous in/out viewed as [outer, n, inner]; softmax over n.
template <typename T>
void softmax_loop(T* y, const T* x, int64_t outer, int64_t n, int64_t inner, bool log) {
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) softmax_row(y + o * n, x + o * n, n, log);
    });
    return;
  }
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
        for (int64_t j = 0; j < jn; ++j) sum[j] = std::log(sum[j]);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < jn; ++j) ys[i * inner + j] = (xs[i * inner + j] - mx[j]) - sum[j];
      } else {
        for (int64_t j = 0; j < jn; ++j) sum[j] = T(1) / sum[j];
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < jn; ++j) ys[i * inner + j] *= sum[j];
      }
    }
  });
}

// Contiguous [outer, n] with softmax over n, by oneDNN. Its row maximum starts from -FLT_MAX and
// takes vmaxps, which drops a NaN ([1, nan] gave [0, nan]): the rows holding a NaN or an infinity
// are computed again by the loop, so every row is what the loop (and float64) gives, numpy's and
// PyTorch's values. Each thread runs oneDNN on its rows chunk by chunk (inside the parallel region
// oneDNN runs on the calling thread); a row's result does not depend on the chunk it is in.
void dnnl_softmax(float* y, const float* x, int64_t outer, int64_t n) {
  const int64_t per = std::max<int64_t>(1, kDnnlChunk / n);
  parallel_for(outer, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t b, int64_t e) {
    for (int64_t r0 = b; r0 < e; r0 += per) {
      const int64_t rows = std::min(per, e - r0);
      const float* xs = x + r0 * n;
      float* ys = y + r0 * n;
      const bool special = any_nonfinite(xs, rows * n);
      dnnl_softmax_rows(ys, xs, rows, n);
      if (!special) continue;
      for (int64_t r = 0; r < rows; ++r)
        if (any_nonfinite(xs + r * n, n)) softmax_row(ys + r * n, xs + r * n, n, false);
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
  int64_t outer = 1, inner = 1, n = src.ndim() ? src.dim(axis) : 1;
  for (int d = 0; d < axis && d < src.ndim(); ++d) outer *= src.dim(d);
  for (int d = axis + 1; d < src.ndim(); ++d) inner *= src.dim(d);
  if (src.dtype() == DType::Float32) {
    // oneDNN 2.6 runs a non-innermost axis of a plain layout through its reference kernel,
    // ~100x slower than the loop, so only the innermost case goes to oneDNN.
    // log_softmax stays on the loop too: oneDNN 2.6's float32 log is ~50 ulp off (a cross-entropy
    // of two equal logits came out 24 ulp from ln 2), and losses are built on it.
    if (inner == 1 && !log) {
      dnnl_softmax(dst.data<float>(), src.data<float>(), outer, n);
    } else {
      softmax_loop<float>(dst.data<float>(), src.data<float>(), outer, n, inner, log);
    }
  } else {
    softmax_loop<double>(dst.data<double>(), src.data<double>(), outer, n, inner, log);
  }
  if (!dst.same_storage(out)) copy_into(out, dst);
}

}  // namespace pj
