#include "kernels/copy.h"

#include <cstring>

#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#endif

#include "kernels/loops.h"

namespace pj {

namespace {
// Dense float32 <-> float16/bfloat16 conversions: every op on a 16-bit float tensor runs in
// float32 between two of these (graph/op.cc), so they run at memory speed, 8 lanes at a time
// (F16C for float16; plain integer arithmetic the compiler vectorises for bfloat16).
void f32_to_f16(const float* s, uint16_t* d, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) d[i] = float_to_half_bits(s[i]);
}
void f16_to_f32(const uint16_t* s, float* d, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
#endif
  for (; i < n; ++i) d[i] = half_bits_to_float(s[i]);
}
void f32_to_bf16(const float* s, uint16_t* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x;
    std::memcpy(&x, s + i, 4);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const uint32_t nan = (x >> 16) | 0x40u;  // quiet NaN, as float_to_bfloat16_bits
    d[i] = static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}
void bf16_to_f32(const uint16_t* s, float* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t x = static_cast<uint32_t>(s[i]) << 16;
    std::memcpy(d + i, &x, 4);
  }
}

// True when it did the copy: both dense, same shape, one of the four 16-bit float conversions.
bool convert_dense_16bit(const Tensor& dst, const Tensor& src) {
  const DType d = dst.dtype(), s = src.dtype();
  if (d != DType::Float16 && d != DType::BFloat16 && s != DType::Float16 && s != DType::BFloat16)
    return false;  // (every copy asks: the dtype test first, the geometry walk only for 16-bit ones)
  if (!(dst.is_contiguous() && src.is_contiguous() && dst.shape() == src.shape())) return false;
  using Fn = void (*)(const void*, void*, int64_t);
  Fn fn = nullptr;
  if (s == DType::Float32 && d == DType::Float16)
    fn = [](const void* a, void* b, int64_t n) { f32_to_f16(static_cast<const float*>(a), static_cast<uint16_t*>(b), n); };
  else if (s == DType::Float16 && d == DType::Float32)
    fn = [](const void* a, void* b, int64_t n) { f16_to_f32(static_cast<const uint16_t*>(a), static_cast<float*>(b), n); };
  else if (s == DType::Float32 && d == DType::BFloat16)
    fn = [](const void* a, void* b, int64_t n) { f32_to_bf16(static_cast<const float*>(a), static_cast<uint16_t*>(b), n); };
  else if (s == DType::BFloat16 && d == DType::Float32)
    fn = [](const void* a, void* b, int64_t n) { bf16_to_f32(static_cast<const uint16_t*>(a), static_cast<float*>(b), n); };
  if (!fn) return false;
  const char* a = static_cast<const char*>(src.raw_data());
  char* b = static_cast<char*>(dst.raw_data());
  const int sa = itemsize(s), sb = itemsize(d);
  parallel_for(dst.numel(), kParallelGrain, [&](int64_t lo, int64_t hi) { fn(a + lo * sa, b + lo * sb, hi - lo); });
  return true;
}
}  // namespace

void copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() &&
      dst.shape() == src.shape()) {
    std::memmove(dst.raw_data(), src.raw_data(), dst.nbytes());
    return;
  }
  if (convert_dense_16bit(dst, src)) return;
  PJ_DISPATCH_STORAGE(dst.dtype(), [&] {
    using O = scalar_t;
    PJ_DISPATCH_STORAGE(src.dtype(), [&] {
      using I = scalar_t;
      unary_kernel<O, I>(dst, src, [](I v) { return convert_scalar<O, I>(v); });
    });
  });
}

Tensor cast(const Tensor& src, DType dtype) {
  if (src.dtype() == dtype) return src;
  Tensor out = Tensor::empty(src.shape(), dtype);
  copy_into(out, src);
  return out;
}

void fill(const Tensor& dst, double v) {
  copy_into(dst, Tensor::scalar(v, dst.dtype()));
}

}  // namespace pj
