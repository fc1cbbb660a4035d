#include "kernels/pool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/blocked_layout.h"
#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/loops.h"
#include "kernels/nonfinite.h"
#include "kernels/threading.h"

namespace pj {

int64_t pool_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

namespace {

// ---- loops -------------------------------------------------------------------------------------

// Runs `row(plane, oy, dst_row)` for every output row, in parallel; x and out are contiguous.
template <typename F>
void for_rows(const Tensor& out, int64_t work_per_row, F row) {
  const int64_t planes = out.dim(0) * out.dim(1), oh = out.dim(2), ow = out.dim(3);
  parallel_for(planes * oh, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_row, 1)),
               [&](int64_t s, int64_t e) {
    for (int64_t r = s; r < e; ++r) row(r / oh, r % oh, r * ow);
  });
}

// Windows that tile the plane without overlap or padding (stride == kernel, no dilation, every
// window inside: the usual 2x2 pool).
bool tiles_plane(int64_t H, int64_t W, int64_t OH, int64_t OW, const Pool2dParams& p) {
  return p.stride[0] == p.kernel[0] && p.stride[1] == p.kernel[1] && p.dilation[0] == 1 && p.dilation[1] == 1 &&
         p.pad[0] == 0 && p.pad[1] == 0 && OH * p.kernel[0] <= H && OW * p.kernel[1] <= W;
}

// v replaces the running maximum m: the comparison of max_pool_loop (a NaN propagates, the last
// one), as a mask for select_bits, which the compiler vectorises where it would branch on ?:.
template <typename T>
uint8_t max_takes(T v, T m) {
  return static_cast<uint8_t>((v > m) | (v != v));
}

// One plane's maximum over tiles, bit for bit max_pool_loop's (its -inf start loses to, or equals,
// the first element).
template <typename T>
void max_pool_tiled(const T* src, T* o, int64_t W, int64_t OH, int64_t OW, const Pool2dParams& p) {
  const int64_t KH = p.kernel[0], KW = p.kernel[1];
  for (int64_t oy = 0; oy < OH; ++oy, o += OW) {
    const T* r = src + oy * KH * W;
    if (KH == 2 && KW == 2) {  // a window per vector lane
      for (int64_t ox = 0; ox < OW; ++ox) {
        T m = r[2 * ox];
        for (T v : {r[2 * ox + 1], r[W + 2 * ox], r[W + 2 * ox + 1]}) m = select_bits(max_takes(v, m), v, m);
        o[ox] = m;
      }
      continue;
    }
    for (int64_t ox = 0; ox < OW; ++ox) {
      T m = r[ox * KW];
      for (int64_t ky = 0; ky < KH; ++ky)
        for (int64_t kx = ky == 0; kx < KW; ++kx) {
          const T v = r[ky * W + ox * KW + kx];
          m = select_bits(max_takes(v, m), v, m);
        }
      o[ox] = m;
    }
  }
}

// Output row oy (OW values at o) of a plane src of H x W.
template <typename T>
void max_pool_row(const T* src, T* o, int64_t H, int64_t W, int64_t OW, int64_t oy, const Pool2dParams& p) {
  const int64_t h0 = oy * p.stride[0] - p.pad[0];
  for (int64_t ox = 0; ox < OW; ++ox) {
    const int64_t w0 = ox * p.stride[1] - p.pad[1];
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t ky = 0; ky < p.kernel[0]; ++ky) {
      const int64_t iy = h0 + ky * p.dilation[0];
      if (iy < 0 || iy >= H) continue;
      for (int64_t kx = 0; kx < p.kernel[1]; ++kx) {
        const int64_t ix = w0 + kx * p.dilation[1];
        if (ix < 0 || ix >= W) continue;
        const T v = src[iy * W + ix];
        if (v > m || std::isnan(v)) m = v;  // NaN propagates, as in PyTorch
      }
    }
    o[ox] = m;
  }
}

template <typename T>
void max_pool_loop(const Tensor& out, const Tensor& x, const Pool2dParams& p) {
  const int64_t H = x.dim(2), W = x.dim(3), OW = out.dim(3);
  const T* X = x.data<T>();
  T* O = out.data<T>();
  for_rows(out, OW * p.kernel[0] * p.kernel[1], [&](int64_t plane, int64_t oy, int64_t o) {
    max_pool_row(X + plane * H * W, O + o, H, W, OW, oy, p);
  });
}

// Average pooling's window for output (oy, ox), clipped to the input (rows [h0, h1), columns
// [w0, w1)), and the divisor PyTorch uses: the override, the window within input + padding, or
// the elements inside the input.
struct AvgWindow {
  int64_t h0, h1, w0, w1, div;
  bool empty() const { return h0 >= h1 || w0 >= w1; }
};

AvgWindow avg_window(int64_t oy, int64_t ox, int64_t H, int64_t W, const Pool2dParams& p) {
  const int64_t h0 = oy * p.stride[0] - p.pad[0], h1 = std::min(h0 + p.kernel[0], H + p.pad[0]);
  const int64_t w0 = ox * p.stride[1] - p.pad[1], w1 = std::min(w0 + p.kernel[1], W + p.pad[1]);
  AvgWindow a{std::max<int64_t>(h0, 0), std::min(h1, H), std::max<int64_t>(w0, 0), std::min(w1, W), 0};
  a.div = p.divisor_override ? p.divisor_override
          : p.count_include_pad ? (h1 - h0) * (w1 - w0)
                                : (a.h1 - a.h0) * (a.w1 - a.w0);
  return a;
}

template <typename T>
void avg_pool_loop(const Tensor& out, const Tensor& x, const Pool2dParams& p) {
  const int64_t H = x.dim(2), W = x.dim(3), OW = out.dim(3);
  const T* X = x.data<T>();
  T* O = out.data<T>();
  for_rows(out, OW * p.kernel[0] * p.kernel[1], [&](int64_t plane, int64_t oy, int64_t o) {
    const T* src = X + plane * H * W;
    for (int64_t ox = 0; ox < OW; ++ox) {
      const AvgWindow a = avg_window(oy, ox, H, W, p);
      if (a.empty()) {
        O[o + ox] = T(0);
        continue;
      }
      double sum = 0;
      for (int64_t iy = a.h0; iy < a.h1; ++iy)
        for (int64_t ix = a.w0; ix < a.w1; ++ix) sum += src[iy * W + ix];
      O[o + ox] = static_cast<T>(sum / static_cast<double>(a.div));
    }
  });
}

template <typename T>
void adaptive_avg_loop(const Tensor& out, const Tensor& x) {
  const int64_t H = x.dim(2), W = x.dim(3), OH = out.dim(2), OW = out.dim(3);
  const T* X = x.data<T>();
  T* O = out.data<T>();
  const int64_t work = OW * ((H + OH - 1) / std::max<int64_t>(OH, 1) + 1) * ((W + OW - 1) / std::max<int64_t>(OW, 1) + 1);
  for_rows(out, work, [&](int64_t plane, int64_t oy, int64_t o) {
    const T* src = X + plane * H * W;
    const int64_t h0 = oy * H / OH, h1 = ((oy + 1) * H + OH - 1) / OH;
    for (int64_t ox = 0; ox < OW; ++ox) {
      const int64_t w0 = ox * W / OW, w1 = ((ox + 1) * W + OW - 1) / OW;
      double sum = 0;
      for (int64_t iy = h0; iy < h1; ++iy)
        for (int64_t ix = w0; ix < w1; ++ix) sum += src[iy * W + ix];
      O[o + ox] = static_cast<T>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
    }
  });
}

// ---- oneDNN (float32) --------------------------------------------------------------------------

}  // namespace

void pool_dnnl_pads(const Shape& x, const Shape& out, const Pool2dParams& p, dnnl::memory::dims* pad_l,
                    dnnl::memory::dims* pad_r) {
  *pad_l = {p.pad[0], p.pad[1]};
  pad_r->assign(2, 0);
  for (int d = 0; d < 2; ++d)
    (*pad_r)[d] = std::max(p.pad[d], (out[2 + d] - 1) * p.stride[d] + p.kernel[d] - x[2 + d] - p.pad[d]);
}

namespace {

dnnl::memory::desc nchw_desc(const Shape& s) {
  return dnnl::memory::desc(dnnl::memory::dims(s.begin(), s.end()), dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::nchw);
}

// oneDNN's pooling primitive from NCHW `src` to NCHW `dst` (dims), or an empty one when oneDNN has
// no fast kernel for this geometry (then the loops run).
dnnl::primitive pool_primitive(const Shape& src, const Shape& dst, const Pool2dParams& p, dnnl::algorithm alg) {
  dnnl::memory::dims pad_l, pad_r;
  pool_dnnl_pads(src, dst, p, &pad_l, &pad_r);
  std::string key = "pool2d:" + std::to_string(static_cast<int>(alg));
  for (int64_t v : {src[0], src[1], src[2], src[3], dst[2], dst[3], p.kernel[0], p.kernel[1], p.stride[0], p.stride[1],
                    pad_l[0], pad_l[1], pad_r[0], pad_r[1]})
    key += "," + std::to_string(v);
  // An empty primitive records "no fast kernel" so the check is not repeated.
  return PrimitiveCache::instance().get(key, [&]() -> dnnl::primitive {
    try {
      const dnnl::memory::desc smd(nchw_desc(src)), dmd(nchw_desc(dst));
      dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, smd, dmd, {p.stride[0], p.stride[1]},
                                    {p.kernel[0], p.kernel[1]}, pad_l, pad_r);
      dnnl::pooling_forward::primitive_desc pd(d, scratchpad_attr(), dnnl_engine());
      if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return dnnl::primitive();
      return dnnl::pooling_forward(pd);
    } catch (const dnnl::error&) {
      return dnnl::primitive();
    }
  });
}

void run_pool(const dnnl::primitive& prim, const Shape& src, const Shape& dst, const float* x, float* y) {
  const dnnl::memory::desc smd(nchw_desc(src)), dmd(nchw_desc(dst));
  dnnl::memory sm(smd, dnnl_engine(), const_cast<float*>(x)), dm(dmd, dnnl_engine(), y);
  execute(prim, {{DNNL_ARG_SRC, sm}, {DNNL_ARG_DST, dm}});
}

// False when oneDNN has no fast kernel for this geometry; x and out contiguous.
bool dnnl_pool(const Tensor& out, const Tensor& x, const Pool2dParams& p, dnnl::algorithm alg) {
  dnnl::primitive prim = pool_primitive(x.shape(), out.shape(), p, alg);
  if (!prim) return false;
  run_pool(prim, x.shape(), out.shape(), x.data<float>(), out.data<float>());
  return true;
}

// Input elements per oneDNN max pooling call (512 KiB): each chunk of planes is scanned for NaN and
// infinities just before oneDNN reads it, so the scan brings it into L2 rather than adding a pass
// over memory.
constexpr int64_t kDnnlChunk = 131072;

// Float32 max pooling by oneDNN, x and out contiguous. oneDNN's maximum starts from -FLT_MAX and
// takes vmaxps, so it drops a NaN and turns a window of -inf into -FLT_MAX: the planes holding a NaN
// or an infinity are pooled again by the loop, which gives numpy's and PyTorch's values there and
// oneDNN's bits on finite planes. Each thread runs oneDNN on its planes chunk by chunk, as (1, planes,
// H, W) (inside the parallel region oneDNN runs on the calling thread); a plane's maxima do not
// depend on the chunk it is in. Where oneDNN has no fast kernel for a chunk, the loop pools it.
void dnnl_max_pool(const Tensor& out, const Tensor& x, const Pool2dParams& p) {
  const int64_t H = x.dim(2), W = x.dim(3), OH = out.dim(2), OW = out.dim(3), HW = std::max<int64_t>(H * W, 1);
  const int64_t per = std::max<int64_t>(1, kDnnlChunk / HW);
  const float* X = x.data<float>();
  float* O = out.data<float>();
  parallel_for(out.dim(0) * out.dim(1), std::max<int64_t>(1, kParallelGrain / HW), [&](int64_t b, int64_t e) {
    for (int64_t k0 = b; k0 < e; k0 += per) {
      const int64_t np = std::min(per, e - k0);
      const float* xs = X + k0 * H * W;
      float* ys = O + k0 * OH * OW;
      const bool special = any_nonfinite(xs, np * H * W);
      const Shape src{1, np, H, W}, dst{1, np, OH, OW};
      dnnl::primitive prim = pool_primitive(src, dst, p, dnnl::algorithm::pooling_max);
      if (prim) run_pool(prim, src, dst, xs, ys);
      if (prim && !special) continue;
      for (int64_t k = 0; k < np; ++k) {
        const float* plane = xs + k * H * W;
        if (prim && !any_nonfinite(plane, H * W)) continue;
        for (int64_t oy = 0; oy < OH; ++oy) max_pool_row(plane, ys + (k * OH + oy) * OW, H, W, OW, oy, p);
      }
    }
  });
}

// PyTorch's include-padding divisor is the window clipped to input + padding; oneDNN's is the
// whole window. They agree when no window reaches past the right/bottom padding.
bool windows_inside_padding(const Tensor& out, const Tensor& x, const Pool2dParams& p) {
  for (int d = 0; d < 2; ++d)
    if ((out.dim(2 + d) - 1) * p.stride[d] + p.kernel[d] > x.dim(2 + d) + 2 * p.pad[d]) return false;
  return true;
}

enum class Kind { max, avg, adaptive };

void run(Kind kind, const Tensor& out, const Tensor& x, const Pool2dParams* p, bool allow_dnnl) {
  PJ_CHECK(out.ndim() == 4 && x.ndim() == 4 && out.dim(0) == x.dim(0) && out.dim(1) == x.dim(1))
      << "pool kernels take (N, C, H, W) with matching N and C";
  PJ_CHECK(is_floating(x.dtype()) && x.dtype() == out.dtype()) << "pool kernels: one floating dtype";
  if (out.numel() == 0) return;
  const Tensor src = x.contiguous();
  Tensor dst = out.is_contiguous() ? out : Tensor::empty(out.shape(), out.dtype());
  bool done = false;
  const int64_t H = src.dim(2), W = src.dim(3), OH = dst.dim(2), OW = dst.dim(3);
  if (allow_dnnl && kind == Kind::max && tiles_plane(H, W, OH, OW, *p)) {
    // Ours before oneDNN's: NaN propagates as on the loop path (oneDNN's drops it), one piece of
    // code for every shape, and no primitive per batch size to keep warm.
    PJ_DISPATCH_FLOATING(x.dtype(), "max_pool2d", [&] {
      const scalar_t* X = src.data<scalar_t>();
      scalar_t* O = dst.data<scalar_t>();
      parallel_for(dst.dim(0) * dst.dim(1), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(H * W, 1)),
                   [&](int64_t s, int64_t e) {
                     for (int64_t k = s; k < e; ++k) max_pool_tiled(X + k * H * W, O + k * OH * OW, W, OH, OW, *p);
                   });
    });
    done = true;
  }
  if (!done && allow_dnnl && kind != Kind::adaptive && x.dtype() == DType::Float32 && x.numel() > 0) {
    if (kind == Kind::max && p->dilation[0] == 1 && p->dilation[1] == 1) {
      dnnl_max_pool(dst, src, *p);
      done = true;
    } else if (kind == Kind::avg && !p->divisor_override && !p->count_include_pad)
      done = dnnl_pool(dst, src, *p, dnnl::algorithm::pooling_avg_exclude_padding);
    else if (kind == Kind::avg && !p->divisor_override && windows_inside_padding(dst, src, *p))
      done = dnnl_pool(dst, src, *p, dnnl::algorithm::pooling_avg_include_padding);
  }
  if (!done) {
    PJ_DISPATCH_FLOATING(x.dtype(), "pool2d", [&] {
      if (kind == Kind::max) max_pool_loop<scalar_t>(dst, src, *p);
      else if (kind == Kind::avg) avg_pool_loop<scalar_t>(dst, src, *p);
      else adaptive_avg_loop<scalar_t>(dst, src);
    });
  }
  if (!dst.same_storage(out)) copy_into(out, dst);
}

}  // namespace

bool max_pool2d_tiles(const Shape& x, const Shape& out, const Pool2dParams& p) {
  return x.size() == 4 && out.size() == 4 && tiles_plane(x[2], x[3], out[2], out[3], p);
}

namespace {

// acc[l] = the running maximum with v[l], over a block's 16 lanes (memory operands and a loop the
// compiler vectorises; a 16-float array carried in registers through the window came out scalar).
inline void max_lanes16(float* __restrict acc, const float* __restrict v) {
  for (int l = 0; l < 16; ++l) acc[l] = select_bits(max_takes(v[l], acc[l]), v[l], acc[l]);
}

// A 2x2 window's maxima in one pass: rows a and c, each two blocks of 16 lanes.
inline void max_2x2_lanes16(float* __restrict o, const float* __restrict a, const float* __restrict c) {
  for (int l = 0; l < 16; ++l) {
    float m = a[l];
    m = select_bits(max_takes(a[16 + l], m), a[16 + l], m);
    m = select_bits(max_takes(c[l], m), c[l], m);
    o[l] = select_bits(max_takes(c[16 + l], m), c[16 + l], m);
  }
}

}  // namespace

void max_pool2d_tiles_nchw16c(const float* src, float* dst, const Shape& x, const Shape& out, const Pool2dParams& p,
                              bool dst_blocked) {
  PJ_CHECK(max_pool2d_tiles(x, out, p) && x[1] % 16 == 0 && x[0] == out[0] && x[1] == out[1])
      << "max_pool2d_tiles_nchw16c: windows that tile (N, C, H, W) planes, C a multiple of 16";
  const int64_t CB = x[1] / 16, H = x[2], W = x[3], OH = out[2], OW = out[3], KH = p.kernel[0], KW = p.kernel[1];
  parallel_for(x[0] * CB, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(H * W * 16, 1)),
               [&](int64_t b, int64_t e) {
    std::vector<float> block(dst_blocked ? 0 : OH * OW * 16);
    for (int64_t r = b; r < e; ++r) {  // r = n * CB + cb: 16 channels, a lane each
      // the block's maxima in nChw16c: in place in dst, or in `block` and then transposed to NCHW
      float* pooled = dst_blocked ? dst + r * OH * OW * 16 : block.data();
      for (int64_t oy = 0; oy < OH; ++oy) {
        float* acc = pooled + oy * OW * 16;
        const float* in = src + (r * H + oy * KH) * W * 16;
        if (KH == 2 && KW == 2) {
          for (int64_t ox = 0; ox < OW; ++ox) max_2x2_lanes16(acc + ox * 16, in + ox * 32, in + (W + 2 * ox) * 16);
          continue;
        }
        for (int64_t ox = 0; ox < OW; ++ox) std::copy(in + ox * KW * 16, in + ox * KW * 16 + 16, acc + ox * 16);
        for (int64_t ky = 0; ky < KH; ++ky)  // the window in max_pool_tiled's order
          for (int64_t kx = ky == 0; kx < KW; ++kx)
            for (int64_t ox = 0; ox < OW; ++ox) max_lanes16(acc + ox * 16, in + (ky * W + ox * KW + kx) * 16);
      }
      if (dst_blocked) continue;
      float* planes[16];
      for (int l = 0; l < 16; ++l) planes[l] = dst + (r * 16 + l) * OH * OW;
      blocked_to_planes(pooled, planes, 16, OH * OW);
    }
  });
}

void max_pool2d_into(const Tensor& out, const Tensor& x, const Pool2dParams& p) { run(Kind::max, out, x, &p, true); }
void avg_pool2d_into(const Tensor& out, const Tensor& x, const Pool2dParams& p) { run(Kind::avg, out, x, &p, true); }
void adaptive_avg_pool2d_into(const Tensor& out, const Tensor& x) { run(Kind::adaptive, out, x, nullptr, false); }
void max_pool2d_loop_into(const Tensor& out, const Tensor& x, const Pool2dParams& p) {
  run(Kind::max, out, x, &p, false);
}
void avg_pool2d_loop_into(const Tensor& out, const Tensor& x, const Pool2dParams& p) {
  run(Kind::avg, out, x, &p, false);
}

// ---- backward ----------------------------------------------------------------------------------

namespace {

// Runs `plane(k)` for every (n, c) plane in parallel: each plane's gradient is one thread's.
template <typename F>
void for_planes(const Tensor& dx, int64_t work_per_plane, F plane) {
  parallel_for(dx.dim(0) * dx.dim(1), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_plane, 1)),
               [&](int64_t s, int64_t e) {
                 for (int64_t k = s; k < e; ++k) plane(k);
               });
}

// Over tiles (tiles_plane) each input element is in at most one window: it is written once, the
// window's maximum element 0 + its gradient (as the general loop's accumulation into zeros gives)
// and the others 0, and the argmax is found with selects, since on real data which element wins is
// random and a branch on it mispredicts half the time.

template <typename T>
void max_pool_backward_tiled(const T* src, const T* d, T* g, int64_t H, int64_t W, int64_t OH, int64_t OW,
                             const Pool2dParams& p) {
  const int64_t KH = p.kernel[0], KW = p.kernel[1];
  for (int64_t oy = 0; oy < OH; ++oy) {
    for (int64_t ox = 0; ox < OW; ++ox) {
      const int64_t base = oy * KH * W + ox * KW;
      T m = src[base];
      int64_t at = 0;  // the first maximum, or the first NaN (the general loop's order: rows, then columns)
      for (int64_t ky = 0; ky < KH; ++ky)
        for (int64_t kx = 0; kx < KW; ++kx) {
          const T v = src[base + ky * W + kx];
          // (bitwise operators and selects on bits: a compiler turns ?: and || into branches)
          const uint8_t take = static_cast<uint8_t>((v > m) | ((v != v) & (m == m)));
          m = select_bits(take, v, m);
          at += (ky * W + kx - at) & -static_cast<int64_t>(take);
        }
      const T dv = T(0) + d[oy * OW + ox];
      for (int64_t ky = 0; ky < KH; ++ky)
        for (int64_t kx = 0; kx < KW; ++kx)
          g[base + ky * W + kx] = select_bits(static_cast<uint8_t>(ky * W + kx == at), dv, T(0));
    }
    // columns no window covers
    for (int64_t ky = 0; ky < KH; ++ky) std::fill(g + (oy * KH + ky) * W + OW * KW, g + (oy * KH + ky + 1) * W, T(0));
  }
  std::fill(g + OH * KH * W, g + H * W, T(0));  // rows no window covers
}

// The 2x2 tiles, a window per vector lane across a row's windows (the loop above carries its
// maximum from element to element: a chain of latencies per window).
template <typename T>
void max_pool_backward_2x2(const T* src, const T* d, T* g, int64_t H, int64_t W, int64_t OH, int64_t OW) {
  using I = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;  // a lane's index, of T's width
  // (selects on bits throughout: the compiler vectorises those, not ?: on floats)
  auto pick = [](T v, T m) { return static_cast<uint8_t>((v > m) | ((v != v) & (m == m))); };
  for (int64_t oy = 0; oy < OH; ++oy) {
    const T *r0 = src + 2 * oy * W, *r1 = r0 + W, *dr = d + oy * OW;
    T *g0 = g + 2 * oy * W, *g1 = g0 + W;
    for (int64_t ox = 0; ox < OW; ++ox) {
      const T a = r0[2 * ox], b = r0[2 * ox + 1], c = r1[2 * ox], e = r1[2 * ox + 1];
      T m = a;
      I at = 0;
      uint8_t take = pick(b, m);
      m = select_bits(take, b, m);
      at = select_bits(take, I(1), at);
      take = pick(c, m);
      m = select_bits(take, c, m);
      at = select_bits(take, I(2), at);
      at = select_bits(pick(e, m), I(3), at);
      const T dv = T(0) + dr[ox];
      g0[2 * ox] = select_bits(static_cast<uint8_t>(at == 0), dv, T(0));
      g0[2 * ox + 1] = select_bits(static_cast<uint8_t>(at == 1), dv, T(0));
      g1[2 * ox] = select_bits(static_cast<uint8_t>(at == 2), dv, T(0));
      g1[2 * ox + 1] = select_bits(static_cast<uint8_t>(at == 3), dv, T(0));
    }
    std::fill(g0 + 2 * OW, g0 + W, T(0));  // a column no window covers
    std::fill(g1 + 2 * OW, g1 + W, T(0));
  }
  std::fill(g + 2 * OH * W, g + H * W, T(0));  // a row no window covers
}

template <typename T>
void max_pool_backward(const Tensor& dx, const Tensor& x, const Tensor& dout, const Pool2dParams& p) {
  const int64_t H = x.dim(2), W = x.dim(3), OH = dout.dim(2), OW = dout.dim(3);
  const T *X = x.data<T>(), *D = dout.data<T>();
  T* G = dx.data<T>();
  if (tiles_plane(H, W, OH, OW, p)) {
    const bool two = p.kernel[0] == 2 && p.kernel[1] == 2;
    for_planes(dx, H * W, [&](int64_t k) {
      if (two) max_pool_backward_2x2(X + k * H * W, D + k * OH * OW, G + k * H * W, H, W, OH, OW);
      else max_pool_backward_tiled(X + k * H * W, D + k * OH * OW, G + k * H * W, H, W, OH, OW, p);
    });
    return;
  }
  for_planes(dx, OH * OW * p.kernel[0] * p.kernel[1], [&](int64_t k) {
    const T* src = X + k * H * W;
    const T* d = D + k * OH * OW;
    T* g = G + k * H * W;
    std::fill(g, g + H * W, T(0));
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int64_t h0 = oy * p.stride[0] - p.pad[0], w0 = ox * p.stride[1] - p.pad[1];
        T m = -std::numeric_limits<T>::infinity();
        int64_t at = -1;
        for (int64_t ky = 0; ky < p.kernel[0]; ++ky) {
          const int64_t iy = h0 + ky * p.dilation[0];
          if (iy < 0 || iy >= H) continue;
          for (int64_t kx = 0; kx < p.kernel[1]; ++kx) {
            const int64_t ix = w0 + kx * p.dilation[1];
            if (ix < 0 || ix >= W) continue;
            const T v = src[iy * W + ix];
            if (at < 0 || v > m || (std::isnan(v) && !std::isnan(m))) {  // the first maximum, or first NaN
              m = v;
              at = iy * W + ix;
            }
          }
        }
        if (at >= 0) g[at] += d[oy * OW + ox];
      }
  });
}

template <typename T>
void avg_pool_backward(const Tensor& dx, const Tensor& dout, const Pool2dParams& p) {
  const int64_t H = dx.dim(2), W = dx.dim(3), OH = dout.dim(2), OW = dout.dim(3);
  const T* D = dout.data<T>();
  T* G = dx.data<T>();
  for_planes(dx, OH * OW * p.kernel[0] * p.kernel[1], [&](int64_t k) {
    const T* d = D + k * OH * OW;
    T* g = G + k * H * W;
    std::fill(g, g + H * W, T(0));
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        const AvgWindow a = avg_window(oy, ox, H, W, p);
        if (a.empty()) continue;
        const T share = static_cast<T>(static_cast<double>(d[oy * OW + ox]) / static_cast<double>(a.div));
        for (int64_t iy = a.h0; iy < a.h1; ++iy)
          for (int64_t ix = a.w0; ix < a.w1; ++ix) g[iy * W + ix] += share;
      }
  });
}

template <typename T>
void adaptive_avg_backward(const Tensor& dx, const Tensor& dout) {
  const int64_t H = dx.dim(2), W = dx.dim(3), OH = dout.dim(2), OW = dout.dim(3);
  const T* D = dout.data<T>();
  T* G = dx.data<T>();
  for_planes(dx, H * W + OH * OW, [&](int64_t k) {
    const T* d = D + k * OH * OW;
    T* g = G + k * H * W;
    std::fill(g, g + H * W, T(0));
    for (int64_t oy = 0; oy < OH; ++oy) {
      const int64_t h0 = oy * H / OH, h1 = ((oy + 1) * H + OH - 1) / OH;
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int64_t w0 = ox * W / OW, w1 = ((ox + 1) * W + OW - 1) / OW;
        const T share = static_cast<T>(static_cast<double>(d[oy * OW + ox]) / static_cast<double>((h1 - h0) * (w1 - w0)));
        for (int64_t iy = h0; iy < h1; ++iy)
          for (int64_t ix = w0; ix < w1; ++ix) g[iy * W + ix] += share;
      }
    }
  });
}

}  // namespace

void max_pool2d_backward_into(const Tensor& dx, const Tensor& x, const Tensor& dout, const Pool2dParams& p) {
  Tensor xc = x.contiguous(), dc = dout.contiguous();
  PJ_DISPATCH_FLOATING(dx.dtype(), "max_pool2d backward", [&] { max_pool_backward<scalar_t>(dx, xc, dc, p); });
}
void avg_pool2d_backward_into(const Tensor& dx, const Tensor& dout, const Pool2dParams& p) {
  Tensor dc = dout.contiguous();
  PJ_DISPATCH_FLOATING(dx.dtype(), "avg_pool2d backward", [&] { avg_pool_backward<scalar_t>(dx, dc, p); });
}
void adaptive_avg_pool2d_backward_into(const Tensor& dx, const Tensor& dout) {
  Tensor dc = dout.contiguous();
  PJ_DISPATCH_FLOATING(dx.dtype(), "adaptive_avg_pool2d backward", [&] { adaptive_avg_backward<scalar_t>(dx, dc); });
}

}  // namespace pj
