#include "kernels/sort_ops.h"

#include <algorithm>
#include <cmath>
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

template <typename T>
struct Item {
  T v;
  int64_t i;  // position in the row
};

// Copies each row of x into (value, position) pairs, lets `order` rearrange them (sorting pairs
// in place beats sorting indices that point into the row), and writes the first `out_len`.
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
    std::vector<Item<T>> buf(len);
    for (int64_t r = b; r < e; ++r) {
      const T* src = xp + rx.start[r];
      for (int64_t j = 0; j < len; ++j) buf[j] = {src[j * rx.stride], j};
      order(buf);
      T* vo = vp + rv.start[r];
      int64_t* io = ip + ri.start[r];
      for (int64_t j = 0; j < out_len; ++j) {
        vo[j * rv.stride] = buf[j].v;
        io[j * ri.stride] = buf[j].i;
      }
    }
  });
}

}  // namespace

void sort_into(const Tensor& values, const Tensor& indices, const Tensor& x, int axis, bool descending) {
  if (x.numel() == 0) return;
  PJ_DISPATCH_ALL(x.dtype(), [&] {
    using T = scalar_t;
    by_rows<T>(values, indices, x, axis, [descending](std::vector<Item<T>>& buf) {
      if (descending)
        std::stable_sort(buf.begin(), buf.end(),
                         [](const Item<T>& a, const Item<T>& b) { return nan_last_less(b.v, a.v); });
      else
        std::stable_sort(buf.begin(), buf.end(),
                         [](const Item<T>& a, const Item<T>& b) { return nan_last_less(a.v, b.v); });
    });
  });
}

Shape topk_shape(const Shape& x, int64_t k, int64_t axis, int* axis_out) {
  const int nd = static_cast<int>(x.size());
  int a = normalize_axis(axis, nd);
  if (nd == 0 && k != 1) PJ_THROW(Value) << "topk(): k must be 1 for a 0-d tensor, but got " << k;
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
    by_rows<T>(values, indices, x, axis, [&](std::vector<Item<T>>& buf) {
      // Better value first; ties by lower position.
      auto before = [&](const Item<T>& a, const Item<T>& b) {
        bool ab = largest ? nan_last_less(b.v, a.v) : nan_last_less(a.v, b.v);
        bool ba = largest ? nan_last_less(a.v, b.v) : nan_last_less(b.v, a.v);
        return ab || (!ba && a.i < b.i);
      };
      std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), before);
      if (!sorted)
        std::sort(buf.begin(), buf.begin() + k, [](const Item<T>& a, const Item<T>& b) { return a.i < b.i; });
    });
  });
}

}  // namespace pj
