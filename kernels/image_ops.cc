#include "kernels/image_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/check.h"
#include "kernels/threading.h"

// Each step of the value chain rounds to float on its own, as MindSpore's separate ops (and
// numpy, the tests' reference) do: no multiply-add contracted into an FMA.
#pragma GCC optimize("fp-contract=off")

namespace pj {

namespace {

// cv::borderInterpolate for one coordinate; -1: the constant border.
int64_t border_index(int64_t i, int64_t n, ImageBorder b) {
  if (i >= 0 && i < n) return i;
  switch (b) {
    case ImageBorder::constant: return -1;
    case ImageBorder::edge: return i < 0 ? 0 : n - 1;
    case ImageBorder::reflect: {  // ... 2 1 | 0 1 2 ... n-1 | n-2 ...
      if (n == 1) return 0;
      const int64_t p = 2 * n - 2;
      i %= p;
      if (i < 0) i += p;
      return i < n ? i : p - i;
    }
    case ImageBorder::symmetric: {  // ... 1 0 | 0 1 2 ... n-1 | n-1 ...
      const int64_t p = 2 * n;
      i %= p;
      if (i < 0) i += p;
      return i < n ? i : p - 1 - i;
    }
  }
  return -1;
}

template <typename O>
inline O to_out(float v) { return static_cast<O>(v); }
template <>
inline float16 to_out<float16>(float v) { return float16(v); }

// The per-channel value chain of ImageMapPlan.
struct Chain {
  bool rescale, normalize;
  float scale, shift;
  const float* mean;
  const float* stdv;
  float operator()(float v, int64_t c) const {
    if (rescale) {
      const float t = v * scale;
      v = t + shift;
    }
    if (normalize) v = (v - mean[c]) / stdv[c];
    return v;
  }
};

// Runs `row(oy)` over output rows, in parallel only for very large images: a pipeline's workers
// already run one image each, and OpenMP teams forked from several worker threads oversubscribe
// the cores (a 224x299 resize took 10x longer on two threads of a busy machine than on one).
template <typename F>
void over_rows(int64_t rows, int64_t per_row, F row) {
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 23) / std::max<int64_t>(per_row, 1));
  parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) row(r);
  });
}

template <typename T, typename O, bool kFloat>
void map_kernel(const Tensor& out, const Tensor& x, const ImageMapPlan& p, int64_t H, int64_t W, int64_t C) {
  const T* X = x.data<T>();
  O* Y = out.data<O>();
  const int64_t OH = p.out_h, OW = p.out_w, CO = C + (p.pad_channel ? 1 : 0);
  const int64_t sc = p.in_chw ? H * W : 1, sh = p.in_chw ? W : W * C, sw = p.in_chw ? 1 : C;
  // Source element offset of each output column within a row (-1: fill).
  std::vector<int64_t> xoff(OW);
  int64_t lin_lo = OW, lin_hi = OW;  // columns whose source is inside the image: a linear run
  for (int64_t ox = 0; ox < OW; ++ox) {
    const int64_t sx = p.left + (p.hflip ? OW - 1 - ox : ox);
    const int64_t i = border_index(sx, W, p.border);
    xoff[ox] = i < 0 ? -1 : i * sw;
    if (sx >= 0 && sx < W) {
      if (lin_lo == OW) lin_lo = ox;
      lin_hi = ox + 1;
    }
  }
  const Chain chain{p.rescale, p.normalize, p.scale, p.shift, p.mean.data(), p.std.data()};
  std::vector<O> fillv(C);
  for (int64_t c = 0; c < C; ++c) {
    const double f = c < static_cast<int64_t>(p.fill.size()) ? p.fill[c] : 0.0;
    if constexpr (kFloat) fillv[c] = to_out<O>(chain(static_cast<float>(static_cast<T>(f)), c));
    else fillv[c] = static_cast<O>(f);
  }
  const int64_t dstep = p.out_chw ? 1 : CO;
  const int64_t xstep = p.hflip ? -sw : sw;
  over_rows(OH, OW * CO, [&](int64_t oy) {
    const int64_t sy = border_index(p.top + (p.vflip ? OH - 1 - oy : oy), H, p.border);
    for (int64_t c = 0; c < C; ++c) {
      O* dst = p.out_chw ? Y + (c * OH + oy) * OW : Y + oy * OW * CO + c;
      if (sy < 0) {
        for (int64_t ox = 0; ox < OW; ++ox) dst[ox * dstep] = fillv[c];
        continue;
      }
      const T* src = X + sy * sh + c * sc;
      auto put = [&](int64_t ox, int64_t off) {
        if constexpr (kFloat) dst[ox * dstep] = to_out<O>(chain(static_cast<float>(src[off]), c));
        else dst[ox * dstep] = static_cast<O>(src[off]);
      };
      for (int64_t ox = 0; ox < lin_lo; ++ox) {
        if (xoff[ox] < 0) dst[ox * dstep] = fillv[c];
        else put(ox, xoff[ox]);
      }
      if (lin_lo < lin_hi) {  // the inside run: a strided walk the compiler can keep in registers
        const T* s = src + xoff[lin_lo];
        O* d = dst + lin_lo * dstep;
        const int64_t n = lin_hi - lin_lo;
        if constexpr (kFloat) {
          for (int64_t k = 0; k < n; ++k) d[k * dstep] = to_out<O>(chain(static_cast<float>(s[k * xstep]), c));
        } else {
          for (int64_t k = 0; k < n; ++k) d[k * dstep] = static_cast<O>(s[k * xstep]);
        }
      }
      for (int64_t ox = lin_hi; ox < OW; ++ox) {
        if (xoff[ox] < 0) dst[ox * dstep] = fillv[c];
        else put(ox, xoff[ox]);
      }
    }
    if (p.pad_channel) {
      O* dst = p.out_chw ? Y + (C * OH + oy) * OW : Y + oy * OW * CO + C;
      for (int64_t ox = 0; ox < OW; ++ox) dst[ox * dstep] = to_out<O>(0.0f);
    }
  });
}

#define PJ_IMAGE_DISPATCH(dt, ...)                      \
  [&] {                                                  \
    switch (dt) {                                        \
      PJ_DISPATCH_CASE(UInt8, uint8_t, __VA_ARGS__)      \
      PJ_DISPATCH_CASE(Int8, int8_t, __VA_ARGS__)        \
      PJ_DISPATCH_CASE(Int16, int16_t, __VA_ARGS__)      \
      PJ_DISPATCH_CASE(UInt16, uint16_t, __VA_ARGS__)    \
      PJ_DISPATCH_CASE(Int32, int32_t, __VA_ARGS__)      \
      PJ_DISPATCH_CASE(UInt32, uint32_t, __VA_ARGS__)    \
      PJ_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)      \
      PJ_DISPATCH_CASE(UInt64, uint64_t, __VA_ARGS__)    \
      PJ_DISPATCH_CASE(Bool, bool, __VA_ARGS__)          \
      PJ_DISPATCH_CASE(Float32, float, __VA_ARGS__)      \
      PJ_DISPATCH_CASE(Float64, double, __VA_ARGS__)     \
      default:                                           \
        PJ_THROW(Type) << "image kernels do not support dtype " << dtype_name(dt); \
    }                                                    \
  }()

// ---- resize ------------------------------------------------------------------------------------

constexpr int kCoefBits = 11;  // OpenCV's INTER_RESIZE_COEF_BITS
constexpr int kCoefScale = 1 << kCoefBits;

// One axis of a separable resize: for each output index, `taps` source indices and weights.
struct Axis {
  int taps = 0;
  std::vector<int64_t> idx;  // out * taps
  std::vector<float> w;      // out * taps
};

// OpenCV's cubic weights (A = -0.75) at fractional position f.
void cubic_coeffs(float x, float* c) {
  const float A = -0.75f;
  c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = 1.f - c[0] - c[1] - c[2];
}

// The tables cv::resize builds for linear, cubic and (upscaling) area: scale = in / out as
// OpenCV computes it (1 / (out / in) in double), source position in float. Outside the image
// the x axis reads the edge pixel with weight 1; the y axis keeps its weights and reads the
// edge row twice (OpenCV clamps only the row index), which rounds differently for uint8.
Axis interp_axis(int64_t in, int64_t out, ImageInterp mode, bool is_x) {
  Axis a;
  a.taps = mode == ImageInterp::cubic ? 4 : 2;
  a.idx.resize(out * a.taps);
  a.w.resize(out * a.taps);
  const double inv_scale = static_cast<double>(out) / static_cast<double>(in);
  const double scale = 1.0 / inv_scale;
  for (int64_t d = 0; d < out; ++d) {
    float f;
    int64_t s;
    if (mode == ImageInterp::area) {
      s = static_cast<int64_t>(std::floor(d * scale));
      f = static_cast<float>((d + 1) - (s + 1) * inv_scale);
      f = f <= 0 ? 0.f : f - std::floor(f);
    } else {
      f = static_cast<float>((d + 0.5) * scale - 0.5);
      s = static_cast<int64_t>(std::floor(f));
      f -= static_cast<float>(s);
    }
    if (mode != ImageInterp::cubic && is_x) {
      if (s < 0) f = 0, s = 0;
      if (s >= in - 1) f = 0, s = in - 1;
    }
    float* w = &a.w[d * a.taps];
    int64_t* ix = &a.idx[d * a.taps];
    if (mode == ImageInterp::cubic) {
      cubic_coeffs(f, w);
      for (int k = 0; k < 4; ++k) ix[k] = std::min(std::max<int64_t>(s - 1 + k, 0), in - 1);
    } else {
      w[0] = 1.f - f;
      w[1] = f;
      ix[0] = std::min(std::max<int64_t>(s, 0), in - 1);
      ix[1] = std::min(std::max<int64_t>(s + 1, 0), in - 1);
    }
  }
  return a;
}

inline int16_t fixed_coef(float w) {
  return static_cast<int16_t>(std::lrint(w * static_cast<float>(kCoefScale)));
}

// uint8 separable resize in OpenCV's fixed point: horizontal sums in int (weights * 2^11), then
// the vertical pass; linear rounds as OpenCV's uchar specialisation, cubic as FixedPtCast<22>.
void resize_sep_u8(const Tensor& out, const Tensor& x, const Axis& ax, const Axis& ay, bool linear) {
  const int64_t C = x.ndim() == 3 ? x.dim(2) : 1;
  const int64_t OH = out.dim(0), OW = out.dim(1);
  const uint8_t* X = x.data<uint8_t>();
  uint8_t* Y = out.data<uint8_t>();
  std::vector<int16_t> wx(ax.w.size()), wy(ay.w.size());
  for (size_t i = 0; i < wx.size(); ++i) wx[i] = fixed_coef(ax.w[i]);
  for (size_t i = 0; i < wy.size(); ++i) wy[i] = fixed_coef(ay.w[i]);
  over_rows(OH, OW * C * ay.taps, [&](int64_t oy) {
    std::vector<int32_t> rows(static_cast<size_t>(ay.taps * OW * C));
    for (int t = 0; t < ay.taps; ++t) {
      const uint8_t* src = X + ay.idx[oy * ay.taps + t] * x.dim(1) * C;
      int32_t* r = &rows[t * OW * C];
      if (ax.taps == 2) {
        for (int64_t ox = 0; ox < OW; ++ox) {
          const uint8_t* s0 = src + ax.idx[2 * ox] * C;
          const uint8_t* s1 = src + ax.idx[2 * ox + 1] * C;
          const int32_t w0 = wx[2 * ox], w1 = wx[2 * ox + 1];
          for (int64_t c = 0; c < C; ++c) r[ox * C + c] = s0[c] * w0 + s1[c] * w1;
        }
      } else {
        for (int64_t ox = 0; ox < OW; ++ox) {
          const int64_t* ix = &ax.idx[ox * ax.taps];
          const int16_t* w = &wx[ox * ax.taps];
          for (int64_t c = 0; c < C; ++c) {
            int32_t s = 0;
            for (int k = 0; k < ax.taps; ++k) s += static_cast<int32_t>(src[ix[k] * C + c]) * w[k];
            r[ox * C + c] = s;
          }
        }
      }
    }
    uint8_t* dst = Y + oy * OW * C;
    const int16_t* b = &wy[oy * ay.taps];
    const int64_t n = OW * C;
    if (linear) {
      const int32_t* r0 = rows.data();
      const int32_t* r1 = rows.data() + n;
      for (int64_t i = 0; i < n; ++i) {
        const int32_t v = (((b[0] * (r0[i] >> 4)) >> 16) + ((b[1] * (r1[i] >> 4)) >> 16) + 2) >> 2;
        dst[i] = static_cast<uint8_t>(std::min(std::max(v, 0), 255));
      }
    } else {  // cubic: OpenCV's vector path sums in float, innermost tap first, rounds to even
      const float sc = 1.f / static_cast<float>(kCoefScale * kCoefScale);
      float bf[4];
      for (int t = 0; t < 4; ++t) bf[t] = static_cast<float>(b[t]) * sc;
      const int32_t *r0 = rows.data(), *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
      for (int64_t i = 0; i < n; ++i) {
        float v = static_cast<float>(r3[i]) * bf[3];
        v = static_cast<float>(r2[i]) * bf[2] + v;
        v = static_cast<float>(r1[i]) * bf[1] + v;
        v = static_cast<float>(r0[i]) * bf[0] + v;
        dst[i] = static_cast<uint8_t>(std::min(std::max(std::lrint(v), 0L), 255L));
      }
    }
  });
}

template <typename T>
void resize_sep_float(const Tensor& out, const Tensor& x, const Axis& ax, const Axis& ay) {
  const int64_t C = x.ndim() == 3 ? x.dim(2) : 1, rowlen = x.dim(1) * C;
  const int64_t OH = out.dim(0), OW = out.dim(1);
  const T* X = x.data<T>();
  T* Y = out.data<T>();
  over_rows(OH, OW * C * ay.taps, [&](int64_t oy) {
    std::vector<T> rows(static_cast<size_t>(ay.taps * OW * C));
    for (int t = 0; t < ay.taps; ++t) {
      const T* src = X + ay.idx[oy * ay.taps + t] * rowlen;
      T* r = &rows[t * OW * C];
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int64_t* ix = &ax.idx[ox * ax.taps];
        const float* w = &ax.w[ox * ax.taps];
        for (int64_t c = 0; c < C; ++c) {
          T s = src[ix[0] * C + c] * static_cast<T>(w[0]);
          for (int k = 1; k < ax.taps; ++k) s += src[ix[k] * C + c] * static_cast<T>(w[k]);
          r[ox * C + c] = s;
        }
      }
    }
    T* dst = Y + oy * OW * C;
    const float* b = &ay.w[oy * ay.taps];
    const int64_t n = OW * C;
    for (int64_t i = 0; i < n; ++i) {
      T s = rows[i] * static_cast<T>(b[0]);
      for (int t = 1; t < ay.taps; ++t) s += rows[t * n + i] * static_cast<T>(b[t]);
      dst[i] = s;
    }
  });
}

template <typename T>
void resize_nearest(const Tensor& out, const Tensor& x) {
  const int64_t H = x.dim(0), W = x.dim(1), C = x.ndim() == 3 ? x.dim(2) : 1;
  const int64_t OH = out.dim(0), OW = out.dim(1);
  const double fx = 1.0 / (static_cast<double>(OW) / W), fy = 1.0 / (static_cast<double>(OH) / H);
  std::vector<int64_t> xs(OW);
  for (int64_t ox = 0; ox < OW; ++ox) xs[ox] = std::min(static_cast<int64_t>(std::floor(ox * fx)), W - 1) * C;
  const T* X = x.data<T>();
  T* Y = out.data<T>();
  over_rows(OH, OW * C, [&](int64_t oy) {
    const int64_t sy = std::min(static_cast<int64_t>(std::floor(oy * fy)), H - 1);
    const T* src = X + sy * W * C;
    T* dst = Y + oy * OW * C;
    for (int64_t ox = 0; ox < OW; ++ox)
      for (int64_t c = 0; c < C; ++c) dst[ox * C + c] = src[xs[ox] + c];
  });
}

// Downscaling area: each output pixel the mean of the input cells it covers, with fractional
// weights at the cell edges (cv::resize's computeResizeAreaTab), summed in float per output row.
struct AreaTab {
  std::vector<int64_t> di, si;
  std::vector<float> alpha;
};
AreaTab area_tab(int64_t in, int64_t out, double scale) {
  AreaTab t;
  auto add = [&](int64_t d, int64_t s, double alpha) {
    t.di.push_back(d);
    t.si.push_back(s);
    t.alpha.push_back(static_cast<float>(alpha));
  };
  for (int64_t d = 0; d < out; ++d) {
    const double f1 = d * scale, f2 = f1 + scale;
    const double cell = std::min(scale, static_cast<double>(in) - f1);
    int64_t s1 = static_cast<int64_t>(std::ceil(f1)), s2 = static_cast<int64_t>(std::floor(f2));
    s2 = std::min(s2, in - 1);
    s1 = std::min(s1, s2);
    if (s1 - f1 > 1e-3) add(d, s1 - 1, (s1 - f1) / cell);
    for (int64_t s = s1; s < s2; ++s) add(d, s, 1.0 / cell);
    if (f2 - s2 > 1e-3) add(d, s2, std::min(std::min(f2 - s2, 1.0), cell) / cell);
  }
  return t;
}

template <typename T>
inline T round_out(float v) {
  if constexpr (std::is_same_v<T, uint8_t>) return static_cast<uint8_t>(std::min(std::max(std::lrint(v), 0L), 255L));
  else return static_cast<T>(v);
}

template <typename T>
void resize_area_down(const Tensor& out, const Tensor& x) {
  const int64_t H = x.dim(0), W = x.dim(1), C = x.ndim() == 3 ? x.dim(2) : 1;
  const int64_t OH = out.dim(0), OW = out.dim(1);
  const double sx = 1.0 / (static_cast<double>(OW) / W), sy = 1.0 / (static_cast<double>(OH) / H);
  const T* X = x.data<T>();
  T* Y = out.data<T>();
  const int isx = static_cast<int>(std::lrint(sx)), isy = static_cast<int>(std::lrint(sy));
  if (std::abs(sx - isx) < 2.2204460492503131e-16 && std::abs(sy - isy) < 2.2204460492503131e-16) {
    // Integer factors: the plain block mean (OpenCV's fast path; 2x2 uint8 rounds half up).
    const float inv = 1.f / static_cast<float>(isx * isy);
    over_rows(OH, OW * C * isx * isy, [&](int64_t oy) {
      for (int64_t ox = 0; ox < OW; ++ox)
        for (int64_t c = 0; c < C; ++c) {
          float fs = 0;
          int64_t is = 0;
          for (int64_t j = 0; j < isy; ++j)
            for (int64_t i = 0; i < isx; ++i) {
              const T v = X[((oy * isy + j) * W + ox * isx + i) * C + c];
              if constexpr (std::is_same_v<T, uint8_t>) is += v;
              else fs += static_cast<float>(v);
            }
          T* d = &Y[(oy * OW + ox) * C + c];
          if constexpr (std::is_same_v<T, uint8_t>) {
            if (isx == 2 && isy == 2) *d = static_cast<uint8_t>((is + 2) >> 2);
            else *d = round_out<uint8_t>(static_cast<float>(is) * inv);
          } else {
            *d = static_cast<T>(fs * inv);
          }
        }
    });
    return;
  }
  const AreaTab tx = area_tab(W, OW, sx), ty = area_tab(H, OH, sy);
  // Rows of ty grouped by output row (ty.di is non-decreasing).
  std::vector<int64_t> ybeg(OH + 1, static_cast<int64_t>(ty.di.size()));
  for (int64_t k = static_cast<int64_t>(ty.di.size()) - 1; k >= 0; --k) ybeg[ty.di[k]] = k;
  for (int64_t d = OH - 1; d >= 0; --d) ybeg[d] = std::min(ybeg[d], ybeg[d + 1]);
  over_rows(OH, OW * C * static_cast<int64_t>(sx * sy + 1), [&](int64_t oy) {
    std::vector<float> buf(OW * C), sum(OW * C, 0.f);
    for (int64_t k = ybeg[oy]; k < ybeg[oy + 1]; ++k) {
      std::fill(buf.begin(), buf.end(), 0.f);
      const T* src = X + ty.si[k] * W * C;
      for (size_t j = 0; j < tx.di.size(); ++j)
        for (int64_t c = 0; c < C; ++c)
          buf[tx.di[j] * C + c] += static_cast<float>(src[tx.si[j] * C + c]) * tx.alpha[j];
      const float beta = ty.alpha[k];
      for (int64_t i = 0; i < OW * C; ++i) sum[i] += beta * buf[i];
    }
    T* dst = Y + oy * OW * C;
    for (int64_t i = 0; i < OW * C; ++i) dst[i] = round_out<T>(sum[i]);
  });
}

}  // namespace

void image_map_into(const Tensor& out, const Tensor& x, const ImageMapPlan& p) {
  const int64_t H = p.in_chw ? x.dim(x.ndim() - 2) : x.dim(0);
  const int64_t W = p.in_chw ? x.dim(x.ndim() - 1) : x.dim(1);
  const int64_t C = x.ndim() == 3 ? (p.in_chw ? x.dim(0) : x.dim(2)) : 1;
  if (out.numel() == 0) return;
  PJ_IMAGE_DISPATCH(x.dtype(), [&] {
    using T = scalar_t;
    if (!p.to_float) {
      PJ_CHECK(out.dtype() == x.dtype());
      map_kernel<T, T, false>(out, x, p, H, W, C);
    } else if (out.dtype() == DType::Float16) {
      map_kernel<T, float16, true>(out, x, p, H, W, C);
    } else {
      PJ_CHECK(out.dtype() == DType::Float32);
      map_kernel<T, float, true>(out, x, p, H, W, C);
    }
  });
}

void image_resize_into(const Tensor& out, const Tensor& x, ImageInterp mode) {
  const int64_t H = x.dim(0), W = x.dim(1), OH = out.dim(0), OW = out.dim(1);
  const DType dt = x.dtype();
  if (dt != DType::UInt8 && dt != DType::Float32 && dt != DType::Float64)
    PJ_THROW(Type) << "image resize does not support dtype " << dtype_name(dt);
  if (OH == H && OW == W) {  // cv::resize copies when the size does not change
    std::memcpy(out.raw_data(), x.raw_data(), static_cast<size_t>(x.nbytes()));
    return;
  }
  auto run = [&](auto tag) {
    using T = decltype(tag);
    if (mode == ImageInterp::nearest) return resize_nearest<T>(out, x);
    if (mode == ImageInterp::area && OW <= W && OH <= H) return resize_area_down<T>(out, x);
    const Axis ax = interp_axis(W, OW, mode, true), ay = interp_axis(H, OH, mode, false);
    if constexpr (std::is_same_v<T, uint8_t>) resize_sep_u8(out, x, ax, ay, mode != ImageInterp::cubic);
    else resize_sep_float<T>(out, x, ax, ay);
  };
  if (dt == DType::UInt8) run(uint8_t{});
  else if (dt == DType::Float32) run(float{});
  else run(double{});
}

}  // namespace pj
