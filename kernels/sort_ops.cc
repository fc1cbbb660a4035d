#include "kernels/sort_ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/threading.h"

namespace pj {

namespace {

// a < b with NaN above everything (and equal to itself).
template <typename T>
inline bool nan_last_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// One tensor's geometry split into "which row" (every dim but the axis) and "where in the row".
struct Rows {
  std::vector<int64_t> start;  // element offset of each row's first element
  int64_t stride = 0;          // along the axis
};

Rows rows_of(const Tensor& t, int axis) {
  Rows r;
  Shape s, st;
  for (int d = 0; d < t.ndim(); ++d) {
    if (d == axis) continue;
    s.push_back(t.dim(d));
    st.push_back(t.stride(d));
  }
  r.stride = t.ndim() ? t.stride(axis) : 0;
  int64_t n = shape_numel(s);
  r.start.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0, rem = i;
    for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
      o += (rem % s[d]) * st[d];
      rem /= s[d];
    }
    r.start[i] = o;
  }
  return r;
}

// Runs body(buf, perm, len, row) on every row of x, then writes the first `out_len` entries of
// perm (and the values they pick) to the outputs.
template <typename T, typename Order>
void by_rows(const Tensor& values, const Tensor& indices, const Tensor& x, int axis, Order order) {
  const int64_t len = x.ndim() ? x.dim(axis) : 1;
  const int64_t out_len = values.ndim() ? values.dim(axis) : 1;
  Rows rx = rows_of(x, axis), rv = rows_of(values, axis), ri = rows_of(indices, axis);
  const T* xp = x.data<T>();
  T* vp = values.data<T>();
  int64_t* ip = indices.data<int64_t>();
  const int64_t nrows = static_cast<int64_t>(rx.start.size());
  if (len == 0 || out_len == 0) return;
  parallel_for(nrows, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t b, int64_t e) {
    std::vector<T> buf(len);
    std::vector<int64_t> perm(len);
    for (int64_t r = b; r < e; ++r) {
      const T* src = xp + rx.start[r];
      for (int64_t j = 0; j < len; ++j) buf[j] = src[j * rx.stride];
      std::iota(perm.begin(), perm.end(), int64_t(0));
      order(buf, perm);
      T* vo = vp + rv.start[r];
      int64_t* io = ip + ri.start[r];
      for (int64_t j = 0; j < out_len; ++j) {
        vo[j * rv.stride] = buf[perm[j]];
        io[j * ri.stride] = perm[j];
      }
    }
  });
}

}  // namespace

void sort_into(const Tensor& values, const Tensor& indices, const Tensor& x, int axis, bool descending) {
  if (x.numel() == 0) return;
  PJ_DISPATCH_ALL(x.dtype(), [&] {
    using T = scalar_t;
    by_rows<T>(values, indices, x, axis, [descending](const std::vector<T>& buf, std::vector<int64_t>& perm) {
      if (descending)
        std::stable_sort(perm.begin(), perm.end(),
                         [&](int64_t i, int64_t j) { return nan_last_less(buf[j], buf[i]); });
      else
        std::stable_sort(perm.begin(), perm.end(),
                         [&](int64_t i, int64_t j) { return nan_last_less(buf[i], buf[j]); });
    });
  });
}

Shape topk_shape(const Shape& x, int64_t k, int64_t axis, int* axis_out) {
  const int nd = static_cast<int>(x.size());
  int a = normalize_axis(axis, nd);
  int64_t size = nd ? x[a] : 1;
  if (k < 0 || k > size)
    PJ_THROW(Value) << "topk(): k=" << k << " is out of range for axis " << a << " with size " << size;
  Shape out = x;
  if (nd) out[a] = k;
  if (axis_out) *axis_out = a;
  return out;
}

void topk_into(const Tensor& values, const Tensor& indices, const Tensor& x, int axis, bool largest,
               bool sorted) {
  if (values.numel() == 0) return;
  const int64_t k = values.ndim() ? values.dim(axis) : 1;
  PJ_DISPATCH_ALL(x.dtype(), [&] {
    using T = scalar_t;
    by_rows<T>(values, indices, x, axis, [&](const std::vector<T>& buf, std::vector<int64_t>& perm) {
      // Better value first; ties by lower index.
      auto before = [&](int64_t i, int64_t j) {
        bool bij = largest ? nan_last_less(buf[j], buf[i]) : nan_last_less(buf[i], buf[j]);
        bool bji = largest ? nan_last_less(buf[i], buf[j]) : nan_last_less(buf[j], buf[i]);
        return bij || (!bji && i < j);
      };
      std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), before);
      if (!sorted) std::sort(perm.begin(), perm.begin() + k);
    });
  });
}

}  // namespace pj
