#include "kernels/blocked_layout.h"

#include <algorithm>

#include "kernels/threading.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace pj {
namespace {

constexpr int kBlock = 16;

struct Dims {
  int64_t N, C, H, W, Cb;  // Cb: channel blocks of 16 (the last one zero-padded)
};

bool f32_4d(const dnnl_memory_desc_t& d) {
  return d.ndims == 4 && d.data_type == dnnl_f32 && d.format_kind == dnnl_blocked && d.offset0 == 0;
}

// Plain (N, C, H, W), densely packed.
bool is_nchw(const dnnl_memory_desc_t& d) {
  const auto& b = d.format_desc.blocking;
  if (!f32_4d(d) || b.inner_nblks != 0) return false;
  for (int i = 0; i < 4; ++i)
    if (d.padded_dims[i] != d.dims[i]) return false;
  return b.strides[3] == 1 && b.strides[2] == d.dims[3] && b.strides[1] == d.dims[2] * d.dims[3] &&
         b.strides[0] == d.dims[1] * d.dims[2] * d.dims[3];
}

// oneDNN's nChw16c: channels in blocks of 16, innermost; blocks outside H and W; densely packed.
bool is_nchw16c(const dnnl_memory_desc_t& d) {
  const auto& b = d.format_desc.blocking;
  if (!f32_4d(d) || b.inner_nblks != 1 || b.inner_blks[0] != kBlock || b.inner_idxs[0] != 1) return false;
  const int64_t cp = (d.dims[1] + kBlock - 1) / kBlock * kBlock;
  if (d.padded_dims[0] != d.dims[0] || d.padded_dims[1] != cp || d.padded_dims[2] != d.dims[2] ||
      d.padded_dims[3] != d.dims[3])
    return false;
  const int64_t hw = d.dims[2] * d.dims[3];
  // (a blocked dim's stride steps from one block of 16 to the next)
  return b.strides[3] == kBlock && b.strides[2] == d.dims[3] * kBlock && b.strides[1] == hw * kBlock &&
         b.strides[0] == cp * hw;
}

#ifdef __AVX2__
// r[0..7] (8 rows of 8) transposed in place.
inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}
#endif

// One channel block of one image: plane[c] (c < valid) is channel c's H*W values; blocked is
// the block's H*W rows of 16 channels.
void to_blocked(const float* const* plane, int valid, float* blocked, int64_t hw) {
  int64_t i = 0;
#ifdef __AVX2__
  for (; i + 8 <= hw; i += 8)
    for (int half = 0; half < 2; ++half) {
      __m256 r[8];
      for (int c = 0; c < 8; ++c)
        r[c] = half * 8 + c < valid ? _mm256_loadu_ps(plane[half * 8 + c] + i) : _mm256_setzero_ps();
      transpose8(r);
      for (int j = 0; j < 8; ++j) _mm256_storeu_ps(blocked + (i + j) * kBlock + half * 8, r[j]);
    }
#endif
  for (; i < hw; ++i)
    for (int c = 0; c < kBlock; ++c) blocked[i * kBlock + c] = c < valid ? plane[c][i] : 0.f;
}

void from_blocked(const float* blocked, float* const* plane, int valid, int64_t hw) {
  int64_t i = 0;
#ifdef __AVX2__
  for (; i + 8 <= hw; i += 8)
    for (int half = 0; half < 2 && half * 8 < valid; ++half) {
      __m256 r[8];
      for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(blocked + (i + j) * kBlock + half * 8);
      transpose8(r);
      for (int c = 0; c < 8 && half * 8 + c < valid; ++c) _mm256_storeu_ps(plane[half * 8 + c] + i, r[c]);
    }
#endif
  for (; i < hw; ++i)
    for (int c = 0; c < valid; ++c) plane[c][i] = blocked[i * kBlock + c];
}

void reorder(const Dims& d, const float* src, float* dst, bool to) {
  const int64_t hw = d.H * d.W;
  parallel_for(d.N * d.Cb, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(kBlock * hw, 1)),
               [&](int64_t s, int64_t e) {
    for (int64_t t = s; t < e; ++t) {
      const int64_t n = t / d.Cb, cb = t % d.Cb;
      const int valid = static_cast<int>(std::min<int64_t>(kBlock, d.C - cb * kBlock));
      const float* plain_in[kBlock] = {};
      float* plain_out[kBlock] = {};
      for (int c = 0; c < valid; ++c) {
        const int64_t at = (n * d.C + cb * kBlock + c) * hw;
        if (to) plain_in[c] = src + at;
        else plain_out[c] = dst + at;
      }
      const int64_t block = (n * d.Cb + cb) * hw * kBlock;
      if (to) to_blocked(plain_in, valid, dst + block, hw);
      else from_blocked(src + block, plain_out, valid, hw);
    }
  });
}

}  // namespace

void blocked_to_planes(const float* blocked, float* const* plane, int valid, int64_t hw) {
  from_blocked(blocked, plane, valid, hw);
}

void blocked_layout_copy(const float* src, float* dst, int64_t N, int64_t C, int64_t H, int64_t W, bool to_blocked) {
  reorder(Dims{N, C, H, W, (C + kBlock - 1) / kBlock}, src, dst, to_blocked);
}

bool blocked_layout_reorder(const dnnl::memory& from, const dnnl::memory& to) {
  // (the descriptors read in place: every reorder around a convolution asks, on every call)
  const dnnl_memory_desc_t *pa = nullptr, *pb = nullptr;
  dnnl::error::wrap_c_api(dnnl_memory_get_memory_desc(from.get(), &pa), "reorder: source descriptor");
  dnnl::error::wrap_c_api(dnnl_memory_get_memory_desc(to.get(), &pb), "reorder: destination descriptor");
  const dnnl_memory_desc_t &a = *pa, &b = *pb;
  if (a.ndims != 4 || b.ndims != 4) return false;
  for (int i = 0; i < 4; ++i)
    if (a.dims[i] != b.dims[i]) return false;
  const bool to_blocked_layout = is_nchw(a) && is_nchw16c(b);
  if (!to_blocked_layout && !(is_nchw16c(a) && is_nchw(b))) return false;
  blocked_layout_copy(static_cast<const float*>(from.get_data_handle()), static_cast<float*>(to.get_data_handle()),
                      a.dims[0], a.dims[1], a.dims[2], a.dims[3], to_blocked_layout);
  return true;
}

}  // namespace pj
