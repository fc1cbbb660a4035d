#include "kernels/pool3d.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/copy.h"
#include "kernels/threading.h"

namespace pj {

int64_t pool3d_out_size(int64_t in, int64_t k, int64_t stride, int64_t lo, int64_t hi, int64_t dilation,
                        bool ceil_mode) {
  const int64_t span = in + lo + hi - dilation * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + lo) --out;
  return out;
}

namespace {

struct Planes {
  int64_t planes, I[3], O[3];
  int64_t isz() const { return I[0] * I[1] * I[2]; }
  int64_t osz() const { return O[0] * O[1] * O[2]; }
};
Planes planes_of(const Shape& x, const Shape& out) {
  Planes g;
  g.planes = x[0] * x[1];
  for (int d = 0; d < 3; ++d) g.I[d] = x[2 + d], g.O[d] = out[2 + d];
  return g;
}

int64_t grain(int64_t per_plane) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_plane, 1)); }

// The input range [lo, hi) of output cell o along dim d for average pooling, and the window's length
// counted with padding (PyTorch: the window clipped to input + padding, before clipping to input).
struct Span {
  int64_t lo, hi, padded;
};
Span avg_span(const Planes& g, const Pool3dParams& p, int d, int64_t o) {
  int64_t s = o * p.stride[d] - p.pad[2 * d];
  int64_t e = std::min(s + p.kernel[d], g.I[d] + p.pad[2 * d + 1]);
  Span r{std::max<int64_t>(s, 0), std::min(e, g.I[d]), e - s};
  return r;
}

Span adaptive_span(int64_t in, int64_t out, int64_t o) {
  const int64_t s = (o * in) / out, e = ((o + 1) * in + out - 1) / out;
  return {s, e, e - s};
}

template <typename T>
void max_pool_loop(const Tensor& out, const Tensor& idx, const Tensor& x, const Pool3dParams& p) {
  const Planes g = planes_of(x.shape(), out.shape());
  const T* X = x.data<T>();
  T* Y = out.data<T>();
  int64_t* IX = idx.data<int64_t>();
  parallel_for(g.planes, grain(g.osz() * p.kernel[0] * p.kernel[1] * p.kernel[2]), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* xp = X + pl * g.isz();
      T* yp = Y + pl * g.osz();
      int64_t* ip = IX + pl * g.osz();
      for (int64_t od = 0; od < g.O[0]; ++od)
        for (int64_t oh = 0; oh < g.O[1]; ++oh)
          for (int64_t ow = 0; ow < g.O[2]; ++ow) {
            const int64_t o[3] = {od, oh, ow};
            int64_t st[3], en[3];
            for (int d = 0; d < 3; ++d) {
              st[d] = o[d] * p.stride[d] - p.pad[2 * d];
              en[d] = std::min(st[d] + (p.kernel[d] - 1) * p.dilation[d] + 1, g.I[d]);
              while (st[d] < 0) st[d] += p.dilation[d];
            }
            T best = -std::numeric_limits<T>::infinity();
            int64_t bi = (st[0] * g.I[1] + st[1]) * g.I[2] + st[2];
            for (int64_t id = st[0]; id < en[0]; id += p.dilation[0])
              for (int64_t ih = st[1]; ih < en[1]; ih += p.dilation[1])
                for (int64_t iw = st[2]; iw < en[2]; iw += p.dilation[2]) {
                  const int64_t i = (id * g.I[1] + ih) * g.I[2] + iw;
                  const T v = xp[i];
                  if (v > best || std::isnan(v)) best = v, bi = i;
                }
            const int64_t k = (od * g.O[1] + oh) * g.O[2] + ow;
            yp[k] = best;
            ip[k] = bi;
          }
    }
  });
}

// Average pooling forward (backward = false: y from x) or backward (dx from dy; dx zeroed first).
template <typename T>
void avg_pool_loop(const Tensor& in, const Tensor& out, const Planes& g, const Pool3dParams& p, bool backward) {
  const T* A = in.data<T>();
  T* B = out.data<T>();
  parallel_for(g.planes, grain(g.osz() * p.kernel[0] * p.kernel[1] * p.kernel[2]), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* a = A + pl * (backward ? g.osz() : g.isz());
      T* o = B + pl * (backward ? g.isz() : g.osz());
      if (backward) std::fill(o, o + g.isz(), T(0));
      for (int64_t od = 0; od < g.O[0]; ++od) {
        const Span sd = avg_span(g, p, 0, od);
        for (int64_t oh = 0; oh < g.O[1]; ++oh) {
          const Span sh = avg_span(g, p, 1, oh);
          for (int64_t ow = 0; ow < g.O[2]; ++ow) {
            const Span sw = avg_span(g, p, 2, ow);
            const int64_t k = (od * g.O[1] + oh) * g.O[2] + ow;
            const int64_t inside = std::max<int64_t>(sd.hi - sd.lo, 0) * std::max<int64_t>(sh.hi - sh.lo, 0) *
                                   std::max<int64_t>(sw.hi - sw.lo, 0);
            const int64_t div = p.divisor_override ? p.divisor_override
                                : p.count_include_pad ? sd.padded * sh.padded * sw.padded
                                                      : inside;
            if (inside == 0) {
              if (!backward) o[k] = T(0);
              continue;
            }
            if (backward) {
              const T v = a[k] / static_cast<T>(div);
              for (int64_t id = sd.lo; id < sd.hi; ++id)
                for (int64_t ih = sh.lo; ih < sh.hi; ++ih)
                  for (int64_t iw = sw.lo; iw < sw.hi; ++iw) o[(id * g.I[1] + ih) * g.I[2] + iw] += v;
            } else {
              T acc = 0;
              for (int64_t id = sd.lo; id < sd.hi; ++id)
                for (int64_t ih = sh.lo; ih < sh.hi; ++ih)
                  for (int64_t iw = sw.lo; iw < sw.hi; ++iw) acc += a[(id * g.I[1] + ih) * g.I[2] + iw];
              o[k] = acc / static_cast<T>(div);
            }
          }
        }
      }
    }
  });
}

// Adaptive pooling: mode 0 average forward, 1 average backward, 2 max forward (with indices).
template <typename T>
void adaptive_loop(const Tensor& in, const Tensor& out, const Tensor& idx, const Planes& g, int mode) {
  const T* A = in.data<T>();
  T* B = out.data<T>();
  int64_t* IX = mode == 2 ? idx.data<int64_t>() : nullptr;
  const bool backward = mode == 1;
  parallel_for(g.planes, grain(g.isz() + g.osz()), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* a = A + pl * (backward ? g.osz() : g.isz());
      T* o = B + pl * (backward ? g.isz() : g.osz());
      if (backward) std::fill(o, o + g.isz(), T(0));
      for (int64_t od = 0; od < g.O[0]; ++od) {
        const Span sd = adaptive_span(g.I[0], g.O[0], od);
        for (int64_t oh = 0; oh < g.O[1]; ++oh) {
          const Span sh = adaptive_span(g.I[1], g.O[1], oh);
          for (int64_t ow = 0; ow < g.O[2]; ++ow) {
            const Span sw = adaptive_span(g.I[2], g.O[2], ow);
            const int64_t k = (od * g.O[1] + oh) * g.O[2] + ow;
            const T cnt = static_cast<T>(sd.padded * sh.padded * sw.padded);
            T acc = mode == 2 ? -std::numeric_limits<T>::infinity() : T(0);
            int64_t bi = (sd.lo * g.I[1] + sh.lo) * g.I[2] + sw.lo;
            const T share = backward ? a[k] / cnt : T(0);
            for (int64_t id = sd.lo; id < sd.hi; ++id)
              for (int64_t ih = sh.lo; ih < sh.hi; ++ih)
                for (int64_t iw = sw.lo; iw < sw.hi; ++iw) {
                  const int64_t i = (id * g.I[1] + ih) * g.I[2] + iw;
                  if (mode == 0) acc += a[i];
                  else if (mode == 1) o[i] += share;
                  else if (a[i] > acc || std::isnan(a[i])) acc = a[i], bi = i;
                }
            if (mode == 0) o[k] = acc / cnt;
            else if (mode == 2) o[k] = acc, IX[pl * g.osz() + k] = bi;
          }
        }
      }
    }
  });
}

void check5(const char* what, const Tensor& a, const Tensor& b) {
  PJ_CHECK(a.ndim() == 5 && b.ndim() == 5 && a.dtype() == b.dtype() && is_floating(a.dtype()))
      << what << ": 5-D tensors of one floating dtype (checked by graph/ops)";
}

}  // namespace

void max_pool3d_into(const Tensor& out, const Tensor& indices, const Tensor& x, const Pool3dParams& p) {
  check5("max_pool3d", out, x);
  const Tensor xc = x.contiguous();
  Tensor o = out.is_contiguous() ? out : Tensor::empty(out.shape(), out.dtype());
  Tensor ix = indices.is_contiguous() ? indices : Tensor::empty(indices.shape(), indices.dtype());
  PJ_DISPATCH_FLOATING(x.dtype(), "max_pool3d", [&] { max_pool_loop<scalar_t>(o, ix, xc, p); });
  if (!o.same_storage(out)) copy_into(out, o);
  if (!ix.same_storage(indices)) copy_into(indices, ix);
}

void avg_pool3d_into(const Tensor& out, const Tensor& x, const Pool3dParams& p) {
  check5("avg_pool3d", out, x);
  const Tensor xc = x.contiguous();
  with_contiguous_out(out, [&](const Tensor& dst) {
    PJ_DISPATCH_FLOATING(x.dtype(), "avg_pool3d",
                         [&] { avg_pool_loop<scalar_t>(xc, dst, planes_of(x.shape(), out.shape()), p, false); });
  });
}

void avg_pool3d_backward_into(const Tensor& dx, const Tensor& dout, const Pool3dParams& p) {
  check5("avg_pool3d_grad", dx, dout);
  const Tensor dc = dout.contiguous();
  with_contiguous_out(dx, [&](const Tensor& dst) {
    PJ_DISPATCH_FLOATING(dx.dtype(), "avg_pool3d_grad",
                         [&] { avg_pool_loop<scalar_t>(dc, dst, planes_of(dx.shape(), dout.shape()), p, true); });
  });
}

void adaptive_avg_pool3d_into(const Tensor& out, const Tensor& x) {
  check5("adaptive_avg_pool3d", out, x);
  const Tensor xc = x.contiguous();
  with_contiguous_out(out, [&](const Tensor& dst) {
    PJ_DISPATCH_FLOATING(x.dtype(), "adaptive_avg_pool3d",
                         [&] { adaptive_loop<scalar_t>(xc, dst, Tensor(), planes_of(x.shape(), out.shape()), 0); });
  });
}

void adaptive_avg_pool3d_backward_into(const Tensor& dx, const Tensor& dout) {
  check5("adaptive_avg_pool3d_grad", dx, dout);
  const Tensor dc = dout.contiguous();
  with_contiguous_out(dx, [&](const Tensor& dst) {
    PJ_DISPATCH_FLOATING(dx.dtype(), "adaptive_avg_pool3d_grad",
                         [&] { adaptive_loop<scalar_t>(dc, dst, Tensor(), planes_of(dx.shape(), dout.shape()), 1); });
  });
}

void adaptive_max_pool3d_into(const Tensor& out, const Tensor& indices, const Tensor& x) {
  check5("adaptive_max_pool3d", out, x);
  const Tensor xc = x.contiguous();
  Tensor o = out.is_contiguous() ? out : Tensor::empty(out.shape(), out.dtype());
  Tensor ix = indices.is_contiguous() ? indices : Tensor::empty(indices.shape(), indices.dtype());
  PJ_DISPATCH_FLOATING(x.dtype(), "adaptive_max_pool3d",
                       [&] { adaptive_loop<scalar_t>(xc, o, ix, planes_of(x.shape(), out.shape()), 2); });
  if (!o.same_storage(out)) copy_into(out, o);
  if (!ix.same_storage(indices)) copy_into(indices, ix);
}

}  // namespace pj
