#include "kernels/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/copy.h"
#include "kernels/threading.h"

namespace pj {
namespace {
// A 16-byte element (complex128) moved as its bits.
struct Bytes16 {
  uint64_t lo, hi;
};
}  // namespace


namespace {

// ---- interpolate -------------------------------------------------------------------------------

// PyTorch's nearest_idx (UpSample.h): float arithmetic whatever the dtype.
std::vector<int64_t> nearest_map(int64_t in, int64_t out, double scale) {
  std::vector<int64_t> m(out);
  const float s = scale > 0 ? static_cast<float>(1.0 / scale) : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) m[o] = o;
    else if (out == 2 * in) m[o] = o >> 1;
    else m[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
  }
  return m;
}

// Source rows/columns and weights of linear interpolation along one dim, in T as PyTorch's
// area_pixel_compute_scale / area_pixel_compute_source_index / guard_index_and_lambda.
template <typename T>
struct LinearMap {
  std::vector<int64_t> i0, i1;
  std::vector<T> l0, l1;
  LinearMap(int64_t in, int64_t out, bool align_corners, double scale) : i0(out), i1(out), l0(out), l1(out) {
    T s;
    if (align_corners) s = out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
    else s = scale > 0 ? static_cast<T>(1.0 / scale) : static_cast<T>(in) / static_cast<T>(out);
    for (int64_t o = 0; o < out; ++o) {
      T src;
      if (align_corners) src = s * static_cast<T>(o);
      else {
        src = s * (static_cast<T>(o) + T(0.5)) - T(0.5);
        if (src < T(0)) src = T(0);
      }
      const int64_t a = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
      const T lambda = std::min(std::max(src - static_cast<T>(a), T(0)), T(1));
      i0[o] = a;
      i1[o] = a + (a < in - 1 ? 1 : 0);
      l1[o] = lambda;
      l0[o] = T(1) - lambda;
    }
  }
};

// Output rows (n, c, oy) in parallel: row(src_plane, oy, dst_row).
template <typename T, typename F>
void for_rows(const Tensor& out, const Tensor& x, int64_t work_per_row, F row) {
  const int64_t C = out.dim(1), OH = out.dim(2), OW = out.dim(3);
  const T* X = x.data<T>();
  T* O = out.data<T>();
  parallel_for(out.dim(0) * C * OH, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_row, 1)),
               [&](int64_t s, int64_t e) {
    for (int64_t r = s; r < e; ++r) {
      const int64_t plane = r / OH, n = plane / C, c = plane % C;
      row(X + n * x.stride(0) + c * x.stride(1), r % OH, O + r * OW);
    }
  });
}

template <typename T>
void nearest(const Tensor& out, const Tensor& x, const double* scales) {
  const std::vector<int64_t> hm = nearest_map(x.dim(2), out.dim(2), scales ? scales[0] : 0);
  const std::vector<int64_t> wm = nearest_map(x.dim(3), out.dim(3), scales ? scales[1] : 0);
  const int64_t sh = x.stride(2), sw = x.stride(3), OW = out.dim(3);
  for_rows<T>(out, x, OW, [&](const T* plane, int64_t oy, T* o) {
    const T* src = plane + hm[oy] * sh;
    for (int64_t ox = 0; ox < OW; ++ox) o[ox] = src[wm[ox] * sw];
  });
}

template <typename T>
void bilinear(const Tensor& out, const Tensor& x, bool align_corners, const double* scales) {
  const LinearMap<T> hm(x.dim(2), out.dim(2), align_corners, scales ? scales[0] : 0);
  const LinearMap<T> wm(x.dim(3), out.dim(3), align_corners, scales ? scales[1] : 0);
  const int64_t sh = x.stride(2), sw = x.stride(3), OW = out.dim(3);
  for_rows<T>(out, x, 4 * OW, [&](const T* plane, int64_t oy, T* o) {
    const T* r0 = plane + hm.i0[oy] * sh;
    const T* r1 = plane + hm.i1[oy] * sh;
    const T h0 = hm.l0[oy], h1 = hm.l1[oy];
    for (int64_t ox = 0; ox < OW; ++ox) {
      const int64_t a = wm.i0[ox] * sw, b = wm.i1[ox] * sw;
      const T w0 = wm.l0[ox], w1 = wm.l1[ox];
      // PyTorch's order: along W within each source row, then along H.
      const T t0 = r0[a] * w0 + r0[b] * w1;
      const T t1 = r1[a] * w0 + r1[b] * w1;
      o[ox] = t0 * h0 + t1 * h1;
    }
  });
}

// ---- pad ---------------------------------------------------------------------------------------

// Source index along one dim for every output position (-1: the constant value).
std::vector<int64_t> pad_map(int64_t in, int64_t lo, int64_t hi, PadMode mode) {
  const int64_t out = in + lo + hi;
  std::vector<int64_t> m(std::max<int64_t>(out, 0));
  // Circular wraps around the cropped input [crop_lo, in - crop_hi).
  const int64_t crop_lo = std::max<int64_t>(-lo, 0), len = in - crop_lo - std::max<int64_t>(-hi, 0);
  for (int64_t j = 0; j < out; ++j) {
    int64_t x = j - lo;
    switch (mode) {
      case PadMode::constant: x = x >= 0 && x < in ? x : -1; break;
      case PadMode::reflect:
        if (x < 0) x = -x;
        if (x >= in) x = 2 * (in - 1) - x;
        break;
      case PadMode::replicate: x = std::min(std::max<int64_t>(x, 0), in - 1); break;
      case PadMode::circular: {
        int64_t y = (j - std::max<int64_t>(lo, 0)) % len;
        x = crop_lo + (y < 0 ? y + len : y);
        break;
      }
    }
    m[j] = x;
  }
  return m;
}

// Elements moved as unsigned integers of the same size: padding only copies.
template <typename U>
void pad_rows(const Tensor& out, const Tensor& x, const std::vector<std::vector<int64_t>>& maps, U fill) {
  const int nd = out.ndim();
  const int64_t inner = out.dim(nd - 1), rows = out.numel() / std::max<int64_t>(inner, 1);
  const std::vector<int64_t>& last = maps[nd - 1];
  const int64_t s_last = x.stride(nd - 1);
  // The run of `last` that is an identity shift (constant mode's middle), copied as a block.
  int64_t mid_lo = 0, mid_hi = 0;
  while (mid_lo < inner && last[mid_lo] < 0) ++mid_lo;
  mid_hi = mid_lo;
  while (mid_hi < inner && last[mid_hi] >= 0 && last[mid_hi] - last[mid_lo] == mid_hi - mid_lo) ++mid_hi;
  const bool block = s_last == 1 && std::all_of(last.begin() + mid_hi, last.end(), [](int64_t v) { return v < 0; });
  const U* X = static_cast<const U*>(x.raw_data());
  U* O = static_cast<U*>(out.raw_data());
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner, 1)), [&](int64_t s, int64_t e) {
    for (int64_t r = s; r < e; ++r) {
      int64_t off = 0, rem = r;
      bool valid = true;
      for (int d = nd - 2; d >= 0; --d) {
        const int64_t i = rem % out.dim(d);
        rem /= out.dim(d);
        const int64_t m = maps[d][i];
        if (m < 0) valid = false;
        off += m * x.stride(d);
      }
      U* o = O + r * inner;
      if (!valid) {
        std::fill(o, o + inner, fill);
      } else if (block) {
        std::fill(o, o + mid_lo, fill);
        if (mid_hi > mid_lo) std::memcpy(o + mid_lo, X + off + last[mid_lo], (mid_hi - mid_lo) * sizeof(U));
        std::fill(o + mid_hi, o + inner, fill);
      } else {
        const U* src = X + off;
        for (int64_t j = 0; j < inner; ++j) o[j] = last[j] < 0 ? fill : src[last[j] * s_last];
      }
    }
  });
}

}  // namespace

void interpolate_into(const Tensor& out, const Tensor& x, InterpMode mode, bool align_corners, const double* scales) {
  PJ_CHECK(out.ndim() == 4 && x.ndim() == 4 && out.dim(0) == x.dim(0) && out.dim(1) == x.dim(1) &&
           out.dtype() == x.dtype())
      << "interpolate_into: (N, C, H, W) in and out with one dtype";
  if (out.numel() == 0) return;
  PJ_CHECK(x.dim(2) > 0 && x.dim(3) > 0) << "interpolate_into: empty input planes";
  with_contiguous_out(out, [&](const Tensor& dst) {
    if (mode == InterpMode::nearest) {
      PJ_DISPATCH_ALL(x.dtype(), [&] { nearest<scalar_t>(dst, x, scales); });
    } else {
      PJ_DISPATCH_FLOATING(x.dtype(), "interpolate (bilinear)", [&] { bilinear<scalar_t>(dst, x, align_corners, scales); });
    }
  });
}

void pad_into(const Tensor& out, const Tensor& x, const std::vector<int64_t>& pads, PadMode mode, double value) {
  const int nd = x.ndim();
  PJ_CHECK(pads.size() % 2 == 0 && static_cast<int>(pads.size()) <= 2 * nd && out.ndim() == nd &&
           out.dtype() == x.dtype())
      << "pad_into: pads and shapes are checked by graph/ops";
  if (out.numel() == 0) return;
  if (nd == 0) {
    copy_into(out, x);
    return;
  }
  std::vector<std::vector<int64_t>> maps(nd);
  for (int d = 0; d < nd; ++d) {
    const size_t i = static_cast<size_t>(nd - 1 - d);  // pads[2i], pads[2i+1] belong to dim nd-1-i
    const int64_t lo = 2 * i < pads.size() ? pads[2 * i] : 0, hi = 2 * i < pads.size() ? pads[2 * i + 1] : 0;
    PJ_CHECK(out.dim(d) == x.dim(d) + lo + hi) << "pad_into: output shape";
    maps[d] = pad_map(x.dim(d), lo, hi, mode);
  }
  // The fill value's bits in the element type.
  const Tensor v = Tensor::scalar(value, x.dtype());
  with_contiguous_out(out, [&](const Tensor& dst) {
    switch (itemsize(x.dtype())) {
      case 1: pad_rows<uint8_t>(dst, x, maps, *static_cast<const uint8_t*>(v.raw_data())); break;
      case 2: pad_rows<uint16_t>(dst, x, maps, *static_cast<const uint16_t*>(v.raw_data())); break;
      case 4: pad_rows<uint32_t>(dst, x, maps, *static_cast<const uint32_t*>(v.raw_data())); break;
      case 8: pad_rows<uint64_t>(dst, x, maps, *static_cast<const uint64_t*>(v.raw_data())); break;
      case 16: pad_rows<Bytes16>(dst, x, maps, *static_cast<const Bytes16*>(v.raw_data())); break;  // complex128
      default: PJ_CHECK(false) << "pad_into: item size " << itemsize(x.dtype());
    }
  });
}

}  // namespace pj
