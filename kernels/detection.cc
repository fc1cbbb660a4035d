#include "kernels/detection.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/copy.h"
#include "kernels/threading.h"

// Positions round at each step, as TensorFlow's/MindSpore's float arithmetic does: a contracted
// multiply-add moves a crop position that lands exactly on the image edge to just outside it.
#pragma GCC optimize("fp-contract=off")

namespace pj {

namespace {

// ---- NMSWithMask ---------------------------------------------------------------------------------

template <typename T>
void nms(const Tensor& boxes_out, const Tensor& idx_out, const Tensor& mask_out, const Tensor& bboxes, double thr) {
  const int64_t n = bboxes.dim(0);
  const Tensor in = bboxes.contiguous();
  const T* B = in.data<T>();
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return B[a * 5 + 4] > B[b * 5 + 4]; });
  T* O = boxes_out.data<T>();
  for (int64_t i = 0; i < n; ++i) std::copy(B + order[i] * 5, B + order[i] * 5 + 5, O + i * 5);
  int32_t* idx = idx_out.data<int32_t>();
  bool* keep = mask_out.data<bool>();
  for (int64_t i = 0; i < n; ++i) idx[i] = static_cast<int32_t>(i), keep[i] = true;
  const T t = static_cast<T>(thr);
  for (int64_t i = 0; i + 1 < n; ++i) {
    if (!keep[i]) continue;
    const T* a = O + i * 5;
    const T area_a = (a[2] - a[0]) * (a[3] - a[1]);
    for (int64_t j = i + 1; j < n; ++j) {
      if (!keep[j]) continue;
      const T* b = O + j * 5;
      const T w = std::max(std::min(a[2], b[2]) - std::max(a[0], b[0]), T(0));
      const T h = std::max(std::min(a[3], b[3]) - std::max(a[1], b[1]), T(0));
      const T inter = w * h;
      const T area_b = (b[2] - b[0]) * (b[3] - b[1]);
      // MindSpore's test: suppressed when IoU > threshold (NaN keeps the box).
      if (inter / (area_a + area_b - inter) > t) keep[j] = false;
    }
  }
}

// ---- ROIAlign ------------------------------------------------------------------------------------

constexpr double kRoiEps = 0.00007;  // MindSpore's: batch index rounding and the lower edge

template <typename T>
struct RoiBox {
  int64_t batch;
  T start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
};

template <typename T>
RoiBox<T> roi_box(const T* roi, const RoiAlignParams& p, int64_t batches) {
  RoiBox<T> r;
  const double b = std::nearbyint(static_cast<double>(roi[0]) + kRoiEps);
  if (!(b >= 0 && b < static_cast<double>(batches)))
    PJ_THROW(Value) << "For 'ROIAlign', the batch index of each roi must be in [0, " << batches << "), but got "
                    << static_cast<double>(roi[0]);
  r.batch = static_cast<int64_t>(b);
  const T scale = static_cast<T>(p.spatial_scale), mode = static_cast<T>(p.roi_end_mode);
  r.start_w = roi[1] * scale;
  r.start_h = roi[2] * scale;
  T width = (roi[3] + mode) * scale - r.start_w;
  T height = (roi[4] + mode) * scale - r.start_h;
  if (p.roi_end_mode == 0) {  // legacy: malformed rois become 1x1
    width = std::max(width, T(1));
    height = std::max(height, T(1));
  }
  r.bin_h = height / static_cast<T>(p.pooled_h);
  r.bin_w = width / static_cast<T>(p.pooled_w);
  r.grid_h = p.sample_num > 0 ? p.sample_num : static_cast<int64_t>(std::floor(height / static_cast<T>(p.pooled_h)));
  r.grid_w = p.sample_num > 0 ? p.sample_num : static_cast<int64_t>(std::floor(width / static_cast<T>(p.pooled_w)));
  r.grid_h = std::max<int64_t>(r.grid_h, 0);
  r.grid_w = std::max<int64_t>(r.grid_w, 0);
  return r;
}

// The four neighbours of (y, x) and their weights; false when the point lies more than a pixel
// outside the map (it then reads 0).
template <typename T>
bool roi_bilinear(int64_t H, int64_t W, T y, T x, int64_t* yl, int64_t* xl, int64_t* yh, int64_t* xh, T w[4]) {
  if (y < T(-1) || y > static_cast<T>(H) || x < T(-1) || x > static_cast<T>(W)) return false;
  if (y <= T(0)) y = T(0);
  if (x <= T(0)) x = T(0);
  *yl = y <= static_cast<T>(kRoiEps) ? 0 : static_cast<int64_t>(std::floor(y));
  *xl = x <= static_cast<T>(kRoiEps) ? 0 : static_cast<int64_t>(std::floor(x));
  if (*yl >= H - 1) *yh = *yl = H - 1, y = static_cast<T>(*yl);
  else *yh = *yl + 1;
  if (*xl >= W - 1) *xh = *xl = W - 1, x = static_cast<T>(*xl);
  else *xh = *xl + 1;
  const T ly = y - static_cast<T>(*yl), lx = x - static_cast<T>(*xl), hy = T(1) - ly, hx = T(1) - lx;
  w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
  return true;
}

// One roi's samples, computed once and shared by every channel: for each bin, its samples' four
// neighbour offsets (within a plane) and weights. Samples that read 0 are left out (they still count).
template <typename T>
struct RoiTaps {
  std::vector<int64_t> start;  // per bin: first tap; start[bins] = taps
  std::vector<int64_t> off;    // 4 per tap
  std::vector<T> w;            // 4 per tap
  T count;
};

template <typename T>
void roi_taps(RoiTaps<T>* t, const RoiBox<T>& b, const RoiAlignParams& p, int64_t H, int64_t W) {
  t->start.clear(), t->off.clear(), t->w.clear();
  t->count = static_cast<T>(b.grid_h * b.grid_w);
  for (int64_t ph = 0; ph < p.pooled_h; ++ph)
    for (int64_t pw = 0; pw < p.pooled_w; ++pw) {
      t->start.push_back(static_cast<int64_t>(t->off.size() / 4));
      for (int64_t iy = 0; iy < b.grid_h; ++iy) {
        const T y = b.start_h + static_cast<T>(ph) * b.bin_h +
                    (static_cast<T>(iy) + T(0.5)) * b.bin_h / static_cast<T>(b.grid_h);
        for (int64_t ix = 0; ix < b.grid_w; ++ix) {
          const T x = b.start_w + static_cast<T>(pw) * b.bin_w +
                      (static_cast<T>(ix) + T(0.5)) * b.bin_w / static_cast<T>(b.grid_w);
          int64_t yl, xl, yh, xh;
          T w[4];
          if (!roi_bilinear(H, W, y, x, &yl, &xl, &yh, &xh, w)) continue;
          const int64_t o[4] = {yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh};
          t->off.insert(t->off.end(), o, o + 4);
          t->w.insert(t->w.end(), w, w + 4);
        }
      }
    }
  t->start.push_back(static_cast<int64_t>(t->off.size() / 4));
}

template <typename T>
void roi_align(const Tensor& out, const Tensor& xin, const Tensor& rin, const RoiAlignParams& p) {
  const Tensor x = xin.contiguous(), rois = rin.contiguous();
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), R = rois.dim(0);
  const int64_t bins = p.pooled_h * p.pooled_w;
  const T* X = x.data<T>();
  const T* RO = rois.data<T>();
  std::vector<RoiBox<T>> boxes(R);
  for (int64_t r = 0; r < R; ++r) boxes[r] = roi_box(RO + r * 5, p, N);
  T* O = out.data<T>();
  parallel_for(R, 1, [&](int64_t s, int64_t e) {
    RoiTaps<T> t;
    for (int64_t r = s; r < e; ++r) {
      const RoiBox<T>& b = boxes[r];
      roi_taps(&t, b, p, H, W);
      for (int64_t c = 0; c < C; ++c) {
        const T* plane = X + (b.batch * C + c) * H * W;
        T* o = O + (r * C + c) * bins;
        for (int64_t k = 0; k < bins; ++k) {
          T acc = 0;
          for (int64_t i = t.start[k]; i < t.start[k + 1]; ++i) {
            const int64_t* of = &t.off[4 * i];
            const T* w = &t.w[4 * i];
            acc += w[0] * plane[of[0]] + w[1] * plane[of[1]] + w[2] * plane[of[2]] + w[3] * plane[of[3]];
          }
          o[k] = t.count > 0 ? acc / t.count : T(0);
        }
      }
    }
  });
}

template <typename T>
void roi_align_grad(const Tensor& dx, const Tensor& din, const Tensor& rin, const RoiAlignParams& p) {
  const Tensor dy = din.contiguous(), rois = rin.contiguous();
  const int64_t N = dx.dim(0), C = dx.dim(1), H = dx.dim(2), W = dx.dim(3), R = rois.dim(0);
  const int64_t bins = p.pooled_h * p.pooled_w;
  const T* DY = dy.data<T>();
  const T* RO = rois.data<T>();
  std::vector<RoiBox<T>> boxes(R);
  std::vector<RoiTaps<T>> taps(R);
  for (int64_t r = 0; r < R; ++r) {
    boxes[r] = roi_box(RO + r * 5, p, N);
    roi_taps(&taps[r], boxes[r], p, H, W);
  }
  T* DX = dx.data<T>();
  std::fill(DX, DX + dx.numel(), T(0));
  // One channel per task: every write of a task lands in that channel's planes.
  parallel_for(C, 1, [&](int64_t s, int64_t e) {
    for (int64_t c = s; c < e; ++c)
      for (int64_t r = 0; r < R; ++r) {
        const RoiTaps<T>& t = taps[r];
        if (!(t.count > 0)) continue;
        T* plane = DX + (boxes[r].batch * C + c) * H * W;
        const T* g = DY + (r * C + c) * bins;
        for (int64_t k = 0; k < bins; ++k) {
          const T gk = g[k] / t.count;
          for (int64_t i = t.start[k]; i < t.start[k + 1]; ++i)
            for (int j = 0; j < 4; ++j) plane[t.off[4 * i + j]] += gk * t.w[4 * i + j];
        }
      }
  });
}

// ---- CropAndResize -------------------------------------------------------------------------------

void crop_and_resize(const Tensor& out, const Tensor& img, const Tensor& bx, const Tensor& bi, CropMethod method,
                     float extrap) {
  const Tensor image = img.contiguous(), boxes = bx.contiguous(), index = bi.contiguous();
  const int64_t B = image.dim(0), H = image.dim(1), W = image.dim(2), C = image.dim(3);
  const int64_t R = boxes.dim(0), CH = out.dim(1), CW = out.dim(2);
  const float* I = image.data<float>();
  const float* BX = boxes.data<float>();
  const int32_t* BI = index.data<int32_t>();
  for (int64_t r = 0; r < R; ++r)
    if (BI[r] < 0 || BI[r] >= B)
      PJ_THROW(Value) << "For 'CropAndResize', the values of 'box_index' must be in [0, " << B << "), but got "
                      << BI[r] << " at position " << r;
  float* O = out.data<float>();
  parallel_for(R * CH, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(CW * C * 4, 1)), [&](int64_t s, int64_t e) {
    for (int64_t row = s; row < e; ++row) {
      const int64_t r = row / CH, y = row % CH;
      const float* box = BX + r * 4;
      const float y1 = box[0], x1 = box[1], y2 = box[2], x2 = box[3];
      const float* im = I + static_cast<int64_t>(BI[r]) * H * W * C;
      float* o = O + row * CW * C;
      const float hs = CH > 1 ? (y2 - y1) * static_cast<float>(H - 1) / static_cast<float>(CH - 1) : 0.f;
      const float ws = CW > 1 ? (x2 - x1) * static_cast<float>(W - 1) / static_cast<float>(CW - 1) : 0.f;
      const float in_y = CH > 1 ? y1 * static_cast<float>(H - 1) + static_cast<float>(y) * hs
                                : 0.5f * (y1 + y2) * static_cast<float>(H - 1);
      if (in_y < 0 || in_y > static_cast<float>(H - 1)) {
        std::fill(o, o + CW * C, extrap);
        continue;
      }
      const int64_t ty = static_cast<int64_t>(std::floor(in_y)), by = static_cast<int64_t>(std::ceil(in_y));
      const float ly = in_y - static_cast<float>(ty);
      for (int64_t x = 0; x < CW; ++x) {
        float* ox = o + x * C;
        const float in_x = CW > 1 ? x1 * static_cast<float>(W - 1) + static_cast<float>(x) * ws
                                  : 0.5f * (x1 + x2) * static_cast<float>(W - 1);
        if (in_x < 0 || in_x > static_cast<float>(W - 1)) {
          std::fill(ox, ox + C, extrap);
          continue;
        }
        if (method == CropMethod::nearest) {
          const float* src = im + (static_cast<int64_t>(std::round(in_y)) * W + static_cast<int64_t>(std::round(in_x))) * C;
          std::copy(src, src + C, ox);
          continue;
        }
        const int64_t lx = static_cast<int64_t>(std::floor(in_x)), rx = static_cast<int64_t>(std::ceil(in_x));
        const float fx = in_x - static_cast<float>(lx);
        const float* tl = im + (ty * W + lx) * C;
        const float* tr = im + (ty * W + rx) * C;
        const float* bl = im + (by * W + lx) * C;
        const float* br = im + (by * W + rx) * C;
        for (int64_t c = 0; c < C; ++c) {
          const float top = tl[c] + (tr[c] - tl[c]) * fx;
          const float bottom = bl[c] + (br[c] - bl[c]) * fx;
          ox[c] = top + (bottom - top) * ly;
        }
      }
    }
  });
}

// The adjoint of crop_and_resize (bilinear; nearest has none, as in MindSpore: zeros), and the
// gradient in the boxes through the sample positions (TensorFlow's CropAndResizeGradBoxes).
void crop_and_resize_grad(const Tensor& dimage, const Tensor& dboxes, const Tensor& dout, const Tensor& img,
                          const Tensor& bx, const Tensor& bi, CropMethod method) {
  const Tensor image = img.contiguous(), boxes = bx.contiguous(), index = bi.contiguous(), dy = dout.contiguous();
  const int64_t B = image.dim(0), H = image.dim(1), W = image.dim(2), C = image.dim(3);
  const int64_t R = boxes.dim(0), CH = dy.dim(1), CW = dy.dim(2);
  const float* I = image.data<float>();
  const float* BX = boxes.data<float>();
  const int32_t* BI = index.data<int32_t>();
  const float* G = dy.data<float>();
  float* DI = dimage.data<float>();
  float* DB = dboxes.data<float>();
  std::fill(DI, DI + dimage.numel(), 0.f);
  std::fill(DB, DB + dboxes.numel(), 0.f);
  if (method != CropMethod::bilinear) return;
  for (int64_t r = 0; r < R; ++r)
    if (BI[r] < 0 || BI[r] >= B)
      PJ_THROW(Value) << "For 'CropAndResize', the values of 'box_index' must be in [0, " << B << "), but got "
                      << BI[r] << " at position " << r;
  const float hr = CH > 1 ? static_cast<float>(H - 1) / static_cast<float>(CH - 1) : 0.f;
  const float wr = CW > 1 ? static_cast<float>(W - 1) / static_cast<float>(CW - 1) : 0.f;
  for (int64_t r = 0; r < R; ++r) {
    const float* box = BX + r * 4;
    const float y1 = box[0], x1 = box[1], y2 = box[2], x2 = box[3];
    const int64_t b = BI[r];
    const float* im = I + b * H * W * C;
    float* di = DI + b * H * W * C;
    const float hs = CH > 1 ? (y2 - y1) * static_cast<float>(H - 1) / static_cast<float>(CH - 1) : 0.f;
    const float ws = CW > 1 ? (x2 - x1) * static_cast<float>(W - 1) / static_cast<float>(CW - 1) : 0.f;
    float d[4] = {0, 0, 0, 0};
    for (int64_t y = 0; y < CH; ++y) {
      const float in_y = CH > 1 ? y1 * static_cast<float>(H - 1) + static_cast<float>(y) * hs
                                : 0.5f * (y1 + y2) * static_cast<float>(H - 1);
      if (in_y < 0 || in_y > static_cast<float>(H - 1)) continue;
      const int64_t ty = static_cast<int64_t>(std::floor(in_y)), by = static_cast<int64_t>(std::ceil(in_y));
      const float ly = in_y - static_cast<float>(ty);
      for (int64_t x = 0; x < CW; ++x) {
        const float in_x = CW > 1 ? x1 * static_cast<float>(W - 1) + static_cast<float>(x) * ws
                                  : 0.5f * (x1 + x2) * static_cast<float>(W - 1);
        if (in_x < 0 || in_x > static_cast<float>(W - 1)) continue;
        const int64_t lx = static_cast<int64_t>(std::floor(in_x)), rx = static_cast<int64_t>(std::ceil(in_x));
        const float fx = in_x - static_cast<float>(lx);
        const float* g = G + ((r * CH + y) * CW + x) * C;
        float gy = 0, gx = 0;
        for (int64_t c = 0; c < C; ++c) {
          const float tl = im[(ty * W + lx) * C + c], tr = im[(ty * W + rx) * C + c];
          const float bl = im[(by * W + lx) * C + c], br = im[(by * W + rx) * C + c];
          gy += g[c] * ((1 - fx) * (bl - tl) + fx * (br - tr));
          gx += g[c] * ((1 - ly) * (tr - tl) + ly * (br - bl));
          di[(ty * W + lx) * C + c] += (1 - ly) * (1 - fx) * g[c];
          di[(ty * W + rx) * C + c] += (1 - ly) * fx * g[c];
          di[(by * W + lx) * C + c] += ly * (1 - fx) * g[c];
          di[(by * W + rx) * C + c] += ly * fx * g[c];
        }
        // d in_y / d y1 = (H - 1) - y * hr, d in_y / d y2 = y * hr (both (H - 1) / 2 for one row)
        if (CH > 1) {
          d[0] += gy * (static_cast<float>(H - 1) - static_cast<float>(y) * hr);
          d[2] += gy * (static_cast<float>(y) * hr);
        } else {
          d[0] += gy * 0.5f * static_cast<float>(H - 1);
          d[2] += gy * 0.5f * static_cast<float>(H - 1);
        }
        if (CW > 1) {
          d[1] += gx * (static_cast<float>(W - 1) - static_cast<float>(x) * wr);
          d[3] += gx * (static_cast<float>(x) * wr);
        } else {
          d[1] += gx * 0.5f * static_cast<float>(W - 1);
          d[3] += gx * 0.5f * static_cast<float>(W - 1);
        }
      }
    }
    std::copy(d, d + 4, DB + r * 4);
  }
}

// ---- grid sampling -------------------------------------------------------------------------------

// Source coordinate of a normalised grid value along a dim of `size`, and d(source)/d(grid).
template <typename T>
T clip_coord(T in, int64_t size, T* g) {
  if (in <= T(0)) return *g = 0, T(0);
  const T mx = static_cast<T>(size - 1);
  if (in >= mx) return *g = 0, mx;
  *g = 1;
  return in;
}

template <typename T>
T reflect_coord(T in, int64_t twice_low, int64_t twice_high, T* g) {
  if (twice_low == twice_high) return *g = 0, T(0);
  const T mn = static_cast<T>(twice_low) / 2, span = static_cast<T>(twice_high - twice_low) / 2;
  in -= mn;
  T sign = 1;
  if (in < 0) sign = -1, in = -in;
  const T extra = std::fmod(in, span);
  const int64_t flips = static_cast<int64_t>(std::floor(in / span));
  if (flips % 2 == 0) return *g = sign, extra + mn;
  return *g = -sign, span - extra + mn;
}

template <typename T>
T source_coord(T c, int64_t size, GridPad pad, bool ac, T* g) {
  T mult = ac ? static_cast<T>(size - 1) / 2 : static_cast<T>(size) / 2;
  T s = ac ? (c + 1) / 2 * static_cast<T>(size - 1) : ((c + 1) * static_cast<T>(size) - 1) / 2;
  T g1, g2;
  if (pad == GridPad::border) {
    s = clip_coord(s, size, &g1);
    mult *= g1;
  } else if (pad == GridPad::reflection) {
    s = ac ? reflect_coord(s, 0, 2 * (size - 1), &g1) : reflect_coord(s, -1, 2 * size - 1, &g1);
    s = clip_coord(s, size, &g2);
    mult *= g1 * g2;
  }
  *g = mult;
  return s;
}

// One output point: K source coordinates (dims in x's order), their d/d grid factors, and the
// 2^K corners (bilinear) or the one nearest point.
template <typename T, int K>
struct Point {
  T s[K], gm[K];
  int64_t lo[K];
  T t[K];
};

template <typename T, int K>
void make_point(Point<T, K>* pt, const T* gp, const int64_t* S, GridMode mode, GridPad pad, bool ac) {
  for (int k = 0; k < K; ++k) {
    // The grid's last dim holds (x, y[, z]): coordinate K-1-k belongs to spatial dim k.
    pt->s[k] = source_coord(gp[K - 1 - k], S[k], pad, ac, &pt->gm[k]);
    if (mode == GridMode::nearest) {
      pt->lo[k] = static_cast<int64_t>(std::nearbyint(pt->s[k]));
      pt->t[k] = 0;
    } else {
      const T f = std::floor(pt->s[k]);
      pt->lo[k] = static_cast<int64_t>(f);
      pt->t[k] = pt->s[k] - f;
    }
  }
}

// The offset of corner `m` (bit k: +1 along dim k) within a plane, or -1 when outside; `w` its weight.
template <typename T, int K>
int64_t corner(const Point<T, K>& pt, int m, const int64_t* S, T* w) {
  int64_t off = 0;
  T weight = 1;
  for (int k = 0; k < K; ++k) {
    const int bit = (m >> (K - 1 - k)) & 1;
    const int64_t i = pt.lo[k] + bit;
    if (pt.s[k] != pt.s[k] || i < 0 || i >= S[k]) return -1;  // (NaN coordinates read 0)
    off = off * S[k] + i;
    weight *= bit ? pt.t[k] : T(1) - pt.t[k];
  }
  *w = weight;
  return off;
}

template <typename T, int K>
void grid_sample_k(const Tensor& out, const Tensor& xin, const Tensor& gin, GridMode mode, GridPad pad, bool ac) {
  const Tensor x = xin.contiguous(), grid = gin.contiguous();
  const int64_t N = x.dim(0), C = x.dim(1);
  int64_t S[K], P = 1;
  for (int k = 0; k < K; ++k) S[k] = x.dim(2 + k), P *= S[k];
  const int64_t Q = grid.numel() / std::max<int64_t>(N * K, 1);
  const T* X = x.data<T>();
  const T* G = grid.data<T>();
  T* O = out.data<T>();
  const int corners = mode == GridMode::nearest ? 1 : 1 << K;
  parallel_for(N * Q, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(C * corners, 1)), [&](int64_t s, int64_t e) {
    for (int64_t nq = s; nq < e; ++nq) {
      const int64_t n = nq / Q, q = nq % Q;
      Point<T, K> pt;
      make_point<T, K>(&pt, G + nq * K, S, mode, pad, ac);
      int64_t offs[1 << K];
      T ws[1 << K];
      for (int m = 0; m < corners; ++m) offs[m] = corner<T, K>(pt, m, S, &ws[m]);
      for (int64_t c = 0; c < C; ++c) {
        const T* plane = X + (n * C + c) * P;
        T acc = 0;
        for (int m = 0; m < corners; ++m)
          if (offs[m] >= 0) acc += ws[m] * plane[offs[m]];
        O[(n * C + c) * Q + q] = acc;
      }
    }
  });
}

template <typename T, int K>
void grid_sample_grad_k(const Tensor& dx, const Tensor& dgrid, const Tensor& dout, const Tensor& xin,
                        const Tensor& gin, GridMode mode, GridPad pad, bool ac) {
  const Tensor x = xin.contiguous(), grid = gin.contiguous(), dy = dout.contiguous();
  const int64_t N = x.dim(0), C = x.dim(1);
  int64_t S[K], P = 1;
  for (int k = 0; k < K; ++k) S[k] = x.dim(2 + k), P *= S[k];
  const int64_t Q = grid.numel() / std::max<int64_t>(N * K, 1);
  const T* X = x.data<T>();
  const T* G = grid.data<T>();
  const T* DY = dy.data<T>();
  T* DX = dx.data<T>();
  T* DG = dgrid.data<T>();
  std::fill(DX, DX + dx.numel(), T(0));
  std::fill(DG, DG + dgrid.numel(), T(0));
  const int corners = mode == GridMode::nearest ? 1 : 1 << K;
  // One batch item per task: its dx planes and grid rows are its own.
  parallel_for(N, 1, [&](int64_t s, int64_t e) {
    for (int64_t n = s; n < e; ++n)
      for (int64_t q = 0; q < Q; ++q) {
        Point<T, K> pt;
        make_point<T, K>(&pt, G + (n * Q + q) * K, S, mode, pad, ac);
        T ds[K] = {};
        for (int m = 0; m < corners; ++m) {
          T w;
          const int64_t off = corner<T, K>(pt, m, S, &w);
          if (off < 0) continue;
          // d weight / d s[k]: the other dims' factors, signed by the corner's side along k.
          T dw[K];
          if (mode == GridMode::bilinear)
            for (int k = 0; k < K; ++k) {
              T f = 1;
              for (int j = 0; j < K; ++j) {
                if (j == k) continue;
                const int bj = (m >> (K - 1 - j)) & 1;
                f *= bj ? pt.t[j] : T(1) - pt.t[j];
              }
              dw[k] = ((m >> (K - 1 - k)) & 1) ? f : -f;
            }
          for (int64_t c = 0; c < C; ++c) {
            const T g = DY[(n * C + c) * Q + q];
            DX[(n * C + c) * P + off] += w * g;
            if (mode == GridMode::bilinear) {
              const T v = X[(n * C + c) * P + off] * g;
              for (int k = 0; k < K; ++k) ds[k] += dw[k] * v;
            }
          }
        }
        if (mode == GridMode::bilinear)
          for (int k = 0; k < K; ++k) DG[(n * Q + q) * K + (K - 1 - k)] = ds[k] * pt.gm[k];
      }
  });
}

}  // namespace

void nms_with_mask_into(const Tensor& boxes_out, const Tensor& idx_out, const Tensor& mask_out, const Tensor& bboxes,
                        double iou_threshold) {
  PJ_CHECK(bboxes.ndim() == 2 && bboxes.dim(1) == 5) << "nms_with_mask_into: (N, 5) boxes";
  PJ_DISPATCH_FLOATING(bboxes.dtype(), "NMSWithMask", [&] { nms<scalar_t>(boxes_out, idx_out, mask_out, bboxes, iou_threshold); });
}

void roi_align_into(const Tensor& out, const Tensor& x, const Tensor& rois, const RoiAlignParams& p) {
  PJ_CHECK(x.ndim() == 4 && rois.ndim() == 2 && rois.dim(1) == 5) << "roi_align_into: shapes";
  if (out.numel() == 0) {
    PJ_DISPATCH_FLOATING(x.dtype(), "ROIAlign", [&] {
      const Tensor r = rois.contiguous();
      for (int64_t i = 0; i < r.dim(0); ++i) roi_box(r.data<scalar_t>() + i * 5, p, x.dim(0));
    });
    return;
  }
  PJ_DISPATCH_FLOATING(x.dtype(), "ROIAlign", [&] { roi_align<scalar_t>(out, x, rois, p); });
}

void roi_align_grad_into(const Tensor& dx, const Tensor& dy, const Tensor& rois, const RoiAlignParams& p) {
  PJ_CHECK(dx.ndim() == 4 && dy.ndim() == 4) << "roi_align_grad_into: shapes";
  PJ_DISPATCH_FLOATING(dx.dtype(), "ROIAlignGrad", [&] { roi_align_grad<scalar_t>(dx, dy, rois, p); });
}

void crop_and_resize_into(const Tensor& out, const Tensor& image, const Tensor& boxes, const Tensor& box_index,
                          CropMethod method, double extrapolation_value) {
  PJ_CHECK(out.dtype() == DType::Float32 && image.dtype() == DType::Float32 &&
           boxes.dtype() == DType::Float32 && box_index.dtype() == DType::Int32)
      << "crop_and_resize_into: float32 image and boxes, int32 box_index, contiguous float32 out";
  crop_and_resize(out, image, boxes, box_index, method, static_cast<float>(extrapolation_value));
}

void crop_and_resize_grad_into(const Tensor& dimage, const Tensor& dboxes, const Tensor& dout, const Tensor& image,
                               const Tensor& boxes, const Tensor& box_index, CropMethod method) {
  PJ_CHECK(dimage.dtype() == DType::Float32 && dboxes.dtype() == DType::Float32 && dout.dtype() == DType::Float32 &&
           image.dtype() == DType::Float32 && boxes.dtype() == DType::Float32 && box_index.dtype() == DType::Int32)
      << "crop_and_resize_grad_into: float32 tensors, int32 box_index";
  crop_and_resize_grad(dimage, dboxes, dout, image, boxes, box_index, method);
}

void grid_sample_into(const Tensor& out, const Tensor& x, const Tensor& grid, GridMode mode, GridPad pad,
                      bool align_corners) {
  PJ_CHECK((x.ndim() == 4 || x.ndim() == 5)) << "grid_sample_into: shapes";
  if (out.numel() == 0) return;
  PJ_DISPATCH_FLOATING(x.dtype(), "grid_sample", [&] {
    if (x.ndim() == 4) grid_sample_k<scalar_t, 2>(out, x, grid, mode, pad, align_corners);
    else grid_sample_k<scalar_t, 3>(out, x, grid, mode, pad, align_corners);
  });
}

void grid_sample_grad_into(const Tensor& dx, const Tensor& dgrid, const Tensor& dout, const Tensor& x,
                           const Tensor& grid, GridMode mode, GridPad pad, bool align_corners) {
  PJ_CHECK((x.ndim() == 4 || x.ndim() == 5))
      << "grid_sample_grad_into: shapes";
  PJ_DISPATCH_FLOATING(x.dtype(), "grid_sample", [&] {
    if (x.ndim() == 4) grid_sample_grad_k<scalar_t, 2>(dx, dgrid, dout, x, grid, mode, pad, align_corners);
    else grid_sample_grad_k<scalar_t, 3>(dx, dgrid, dout, x, grid, mode, pad, align_corners);
  });
}

}  // namespace pj
