#include "kernels/copy.h"

#include <cstring>

#include "kernels/loops.h"

namespace pj {

void copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() &&
      dst.shape() == src.shape()) {
    std::memmove(dst.raw_data(), src.raw_data(), dst.nbytes());
    return;
  }
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
