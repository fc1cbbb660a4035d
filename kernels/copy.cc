#include "kernels/copy.h"

#include <cstring>

#include "kernels/loops.h"

namespace pj {

namespace {
template <typename O, typename I>
inline O convert(I v) {
  if constexpr (std::is_same_v<O, bool>) return v != I(0);
  else return static_cast<O>(v);
}
}  // namespace

void copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() &&
      dst.shape() == src.shape()) {
    std::memmove(dst.raw_data(), src.raw_data(), dst.nbytes());
    return;
  }
  PJ_DISPATCH_ALL(dst.dtype(), [&] {
    using O = scalar_t;
    PJ_DISPATCH_ALL(src.dtype(), [&] {
      using I = scalar_t;
      unary_kernel<O, I>(dst, src, [](I v) { return convert<O, I>(v); });
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
