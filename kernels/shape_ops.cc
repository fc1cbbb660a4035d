#include "kernels/shape_ops.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/copy.h"
#include "kernels/threading.h"

namespace pj {

namespace {

// "(4, -1)": a requested shape, printed like shape_str but keeping the -1.
std::string ints_str(const Ints& v) {
  Shape s(v.begin(), v.end());
  return shape_str(s);
}

int64_t prod(const Shape& s, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e; ++i) n *= s[i];
  return n;
}

}  // namespace

// ---- views ------------------------------------------------------------------------------------

Shape reshape_shape(const Shape& in, const Ints& spec) {
  int64_t numel = shape_numel(in);
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == -1) {
      if (unknown >= 0) PJ_THROW(Value) << "can only specify one unknown dimension";
      unknown = static_cast<int>(i);
    } else if (spec[i] < 0) {
      PJ_THROW(Value) << "negative dimensions are not allowed";
    } else {
      known = checked_mul(known, spec[i], "reshape: the element count");
    }
  }
  Shape out(spec.begin(), spec.end());
  if (unknown >= 0) {
    // numpy refuses -1 when the other dims multiply to 0: any size would do, so none is implied.
    if (known == 0 || numel % known != 0)
      PJ_THROW(Value) << "cannot reshape tensor of size " << numel << " into shape " << ints_str(spec);
    out[unknown] = numel / known;
  } else if (known != numel) {
    PJ_THROW(Value) << "cannot reshape tensor of size " << numel << " into shape " << ints_str(spec);
  }
  return out;
}

bool reshape_view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape,
                          Shape* out) {
  const int newnd = static_cast<int>(new_shape.size());
  out->assign(newnd, 0);
  if (shape_numel(shape) == 0) {  // no element is ever read: any strides do
    *out = contiguous_strides(new_shape);
    return true;
  }
  // Size-1 dims carry no layout information: drop them from the old shape.
  Shape od, os;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) {
      od.push_back(shape[i]);
      os.push_back(strides[i]);
    }
  const int oldnd = static_cast<int>(od.size());
  int oi = 0, oj = 1, ni = 0, nj = 1;
  // Walk matching groups: old dims [oi, oj) hold exactly as many elements as new dims [ni, nj).
  while (ni < newnd && oi < oldnd) {
    int64_t np = new_shape[ni], op = od[oi];
    while (np != op) {
      if (np < op) np *= new_shape[nj++];
      else op *= od[oj++];
    }
    for (int ok = oi; ok < oj - 1; ++ok)
      if (os[ok] != od[ok + 1] * os[ok + 1]) return false;  // the group is not one linear run
    (*out)[nj - 1] = os[oj - 1];
    for (int nk = nj - 1; nk > ni; --nk) (*out)[nk - 1] = (*out)[nk] * new_shape[nk];
    ni = nj++;
    oi = oj++;
  }
  // Trailing size-1 dims of the new shape.
  int64_t last = ni >= 1 ? (*out)[ni - 1] : 1;
  for (int nk = ni; nk < newnd; ++nk) (*out)[nk] = last;
  return true;
}

Tensor reshape(const Tensor& x, const Ints& spec) {
  Shape ns = reshape_shape(x.shape(), spec);
  Shape st;
  if (reshape_view_strides(x.shape(), x.strides(), ns, &st)) return x.as_strided(ns, st, x.offset());
  Tensor c = x.clone();
  return c.as_strided(ns, contiguous_strides(ns), c.offset());
}

std::vector<int> check_permutation(const Ints& perm, int ndim) {
  if (static_cast<int>(perm.size()) != ndim) PJ_THROW(Value) << "axes don't match tensor";
  std::vector<int> p(ndim);
  std::vector<bool> seen(ndim, false);
  for (int i = 0; i < ndim; ++i) {
    int a = normalize_axis(perm[i], ndim);
    if (seen[a]) PJ_THROW(Value) << "repeated axis in transpose";
    seen[a] = true;
    p[i] = a;
  }
  return p;
}

Tensor permute(const Tensor& x, const Ints& perm) {
  std::vector<int> p = check_permutation(perm, x.ndim());
  Shape s(p.size()), st(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    s[i] = x.dim(p[i]);
    st[i] = x.stride(p[i]);
  }
  return x.as_strided(s, st, x.offset());
}

Tensor transpose_all(const Tensor& x) {
  Shape s(x.shape().rbegin(), x.shape().rend()), st(x.strides().rbegin(), x.strides().rend());
  return x.as_strided(s, st, x.offset());
}

namespace {
// Which dims squeeze removes.
std::vector<bool> squeezed_dims(const Shape& in, const std::optional<Ints>& axes) {
  const int nd = static_cast<int>(in.size());
  std::vector<bool> drop(nd, false);
  if (!axes) {
    for (int i = 0; i < nd; ++i) drop[i] = in[i] == 1;
    return drop;
  }
  for (int64_t a : *axes) {
    if (nd == 0)
      PJ_THROW(Index) << "axis " << a << " is out of bounds for tensor of dimension 0";
    int n = normalize_axis(a, nd);
    if (drop[n]) PJ_THROW(Value) << "duplicate value in 'axis'";
    if (in[n] != 1)
      PJ_THROW(Value) << "cannot select an axis to squeeze out which has size not equal to one";
    drop[n] = true;
  }
  return drop;
}
}  // namespace

Shape squeeze_shape(const Shape& in, const std::optional<Ints>& axes) {
  std::vector<bool> drop = squeezed_dims(in, axes);
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

Tensor squeeze(const Tensor& x, const std::optional<Ints>& axes) {
  std::vector<bool> drop = squeezed_dims(x.shape(), axes);
  Shape s, st;
  for (int i = 0; i < x.ndim(); ++i)
    if (!drop[i]) {
      s.push_back(x.dim(i));
      st.push_back(x.stride(i));
    }
  return x.as_strided(s, st, x.offset());
}

int expand_dims_axis(int64_t axis, int ndim) { return normalize_axis(axis, ndim + 1); }

Tensor expand_dims(const Tensor& x, int64_t axis) {
  int a = expand_dims_axis(axis, x.ndim());
  Shape s = x.shape(), st = x.strides();
  // Any stride works for a size-1 dim; this one keeps contiguous inputs looking contiguous.
  int64_t stride = a < x.ndim() ? x.stride(a) * std::max<int64_t>(x.dim(a), 1) : 1;
  s.insert(s.begin() + a, 1);
  st.insert(st.begin() + a, stride);
  return x.as_strided(s, st, x.offset());
}

Shape flatten_shape(const Shape& in, int64_t start_dim, int64_t end_dim) {
  const int nd = static_cast<int>(in.size());
  int s = normalize_axis(start_dim, nd), e = normalize_axis(end_dim, nd);
  if (nd == 0) return Shape{1};
  if (s > e) PJ_THROW(Value) << "flatten() has invalid args: start_dim cannot come after end_dim";
  Shape out(in.begin(), in.begin() + s);
  out.push_back(prod(in, s, e + 1));
  out.insert(out.end(), in.begin() + e + 1, in.end());
  return out;
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  Shape s = flatten_shape(x.shape(), start_dim, end_dim);
  return reshape(x, Ints(s.begin(), s.end()));
}

Shape broadcast_to_shape(const Shape& in, const Ints& shape) {
  const int nd = static_cast<int>(in.size()), n = static_cast<int>(shape.size());
  Shape out(shape.begin(), shape.end());
  if (n < nd)
    PJ_THROW(Value) << "cannot broadcast a tensor of shape " << shape_str(in) << " to shape "
                    << ints_str(shape);
  for (int j = 0; j < n; ++j) {
    int i = j - (n - nd);  // the input dim that lines up with j, if any
    if (shape[j] == -1 && i >= 0) out[j] = in[i];
    else if (shape[j] < 0) PJ_THROW(Value) << "all elements of broadcast shape must be non-negative";
    if (i >= 0 && in[i] != out[j] && in[i] != 1)
      PJ_THROW(Value) << "cannot broadcast a tensor of shape " << shape_str(in) << " to shape "
                      << ints_str(shape);
  }
  return out;
}

Tensor broadcast_to(const Tensor& x, const Ints& shape) {
  Shape s = broadcast_to_shape(x.shape(), shape);
  return x.as_strided(s, broadcast_strides(x, s), x.offset());
}

namespace {
// Python slice bounds with step 1, clamped to [0, len].
int64_t clamp_bound(int64_t v, int64_t len) {
  if (v < 0) v += len;
  return std::min(std::max<int64_t>(v, 0), len);
}
}  // namespace

std::vector<std::pair<int64_t, int64_t>> split_ranges_sections(int64_t len, int64_t sections) {
  if (sections <= 0) PJ_THROW(Value) << "number sections must be larger than 0.";
  if (len % sections != 0) PJ_THROW(Value) << "array split does not result in an equal division";
  std::vector<std::pair<int64_t, int64_t>> r;
  int64_t n = len / sections;
  for (int64_t i = 0; i < sections; ++i) r.emplace_back(i * n, n);
  return r;
}

std::vector<std::pair<int64_t, int64_t>> split_ranges_indices(int64_t len, const Ints& indices) {
  std::vector<std::pair<int64_t, int64_t>> r;
  int64_t prev = 0;
  for (size_t i = 0; i <= indices.size(); ++i) {
    int64_t st = clamp_bound(prev, len);
    int64_t en = i < indices.size() ? clamp_bound(indices[i], len) : len;
    r.emplace_back(st, std::max<int64_t>(en - st, 0));
    if (i < indices.size()) prev = indices[i];
  }
  return r;
}

std::vector<Tensor> split_views(const Tensor& x, int axis,
                                const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  std::vector<Tensor> out;
  out.reserve(ranges.size());
  for (auto& [start, n] : ranges) {
    Shape s = x.shape();
    s[axis] = n;
    out.push_back(x.as_strided(s, x.strides(), x.offset() + (n > 0 ? start * x.stride(axis) : 0)));
  }
  return out;
}

// ---- copies -----------------------------------------------------------------------------------

DType promote_all(const std::vector<DType>& dts) {
  PJ_CHECK(!dts.empty());
  DType t = dts[0];
  for (DType d : dts) t = promote(t, d);
  return t;
}

Shape concat_shape(const std::vector<Shape>& in, int64_t axis, int* axis_out) {
  if (in.empty()) PJ_THROW(Value) << "need at least one tensor to concatenate";
  const int nd = static_cast<int>(in[0].size());
  if (nd == 0) PJ_THROW(Value) << "zero-dimensional tensors cannot be concatenated";
  int a = normalize_axis(axis, nd);
  Shape out = in[0];
  for (size_t k = 1; k < in.size(); ++k) {
    if (static_cast<int>(in[k].size()) != nd)
      PJ_THROW(Value) << "all the input tensors must have same number of dimensions, but the tensor "
                         "at index 0 has "
                      << nd << " dimension(s) and the tensor at index " << k << " has "
                      << in[k].size() << " dimension(s)";
    for (int d = 0; d < nd; ++d) {
      if (d == a) continue;
      if (in[k][d] != in[0][d])
        PJ_THROW(Value) << "all the input tensor dimensions except for the concatenation axis must "
                           "match exactly, but along dimension "
                        << d << ", the tensor at index 0 has size " << in[0][d]
                        << " and the tensor at index " << k << " has size " << in[k][d];
    }
    out[a] += in[k][a];
  }
  if (axis_out) *axis_out = a;
  return out;
}

void concat_into(const Tensor& out, const std::vector<Tensor>& in, int axis) {
  const int64_t outer = prod(out.shape(), 0, axis);
  const int64_t inner = prod(out.shape(), axis + 1, out.ndim());
  const bool out_contig = out.is_contiguous();
  const int isz = itemsize(out.dtype());
  int64_t pos = 0;  // where the current input starts along `axis`
  for (const Tensor& t : in) {
    const int64_t len = t.dim(axis);
    if (t.numel() > 0) {
      if (out_contig && t.dtype() == out.dtype() && t.is_contiguous()) {
        // Each of the `outer` rows of t is one contiguous run in both t and out.
        const int64_t run = len * inner, out_row = out.dim(axis) * inner;
        char* dst = static_cast<char*>(out.raw_data()) + pos * inner * isz;
        const char* src = static_cast<const char*>(t.raw_data());
        parallel_for(outer, std::max<int64_t>(1, kParallelGrain / run), [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r)
            std::memcpy(dst + r * out_row * isz, src + r * run * isz, run * isz);
        });
      } else {
        Tensor slab = out.as_strided(t.shape(), out.strides(), out.offset() + pos * out.stride(axis));
        copy_into(slab, t);
      }
    }
    pos += len;
  }
}

Tensor concat(const std::vector<Tensor>& in, int64_t axis) {
  std::vector<Shape> shapes;
  std::vector<DType> dts;
  for (auto& t : in) {
    shapes.push_back(t.shape());
    dts.push_back(t.dtype());
  }
  int a = 0;
  Shape s = concat_shape(shapes, axis, &a);
  Tensor out = Tensor::empty(s, promote_all(dts));
  concat_into(out, in, a);
  return out;
}

Shape stack_shape(const std::vector<Shape>& in, int64_t axis, int* axis_out) {
  if (in.empty()) PJ_THROW(Value) << "need at least one tensor to stack";
  for (size_t k = 1; k < in.size(); ++k)
    if (in[k] != in[0]) PJ_THROW(Value) << "all input tensors must have the same shape";
  const int nd = static_cast<int>(in[0].size());
  int a = expand_dims_axis(axis, nd);
  Shape out = in[0];
  out.insert(out.begin() + a, static_cast<int64_t>(in.size()));
  if (axis_out) *axis_out = a;
  return out;
}

void stack_into(const Tensor& out, const std::vector<Tensor>& in, int axis) {
  std::vector<Tensor> ex;
  ex.reserve(in.size());
  for (auto& t : in) ex.push_back(expand_dims(t, axis));
  concat_into(out, ex, axis);
}

Tensor stack(const std::vector<Tensor>& in, int64_t axis) {
  std::vector<Shape> shapes;
  std::vector<DType> dts;
  for (auto& t : in) {
    shapes.push_back(t.shape());
    dts.push_back(t.dtype());
  }
  int a = 0;
  Shape s = stack_shape(shapes, axis, &a);
  Tensor out = Tensor::empty(s, promote_all(dts));
  stack_into(out, in, a);
  return out;
}

Shape tile_shape(const Shape& in, const Ints& reps) {
  for (int64_t r : reps)
    if (r < 0) PJ_THROW(Value) << "negative dimensions are not allowed";
  size_t n = std::max(in.size(), reps.size());
  Shape out(n);
  for (size_t j = 0; j < n; ++j) {
    int64_t d = j < n - in.size() ? 1 : in[j - (n - in.size())];
    int64_t r = j < n - reps.size() ? 1 : reps[j - (n - reps.size())];
    out[j] = checked_mul(d, r, "tile: the output size");
  }
  return out;
}

void tile_into(const Tensor& out, const Tensor& x) {
  if (out.numel() == 0) return;
  PJ_CHECK(out.is_contiguous() && out.dtype() == x.dtype());
  const int n = out.ndim();
  // x with leading 1s, lined up with out.
  Shape xs(n, 1), xst(n, 0);
  for (int i = 0; i < x.ndim(); ++i) {
    xs[n - x.ndim() + i] = x.dim(i);
    xst[n - x.ndim() + i] = x.stride(i);
  }
  const Shape& ost = out.strides();
  // 1. x into the first tile.
  copy_into(out.as_strided(xs, ost, out.offset()), x.as_strided(xs, xst, x.offset()));
  // 2. From the last dim to the first: the first tile along dim k is now complete over all later
  //    dims, and is one contiguous run per index of the dims before k; repeat it reps[k] - 1 times.
  const int isz = itemsize(out.dtype());
  char* base = static_cast<char*>(out.raw_data());
  for (int k = n - 1; k >= 0; --k) {
    const int64_t reps = out.dim(k) / xs[k];
    if (reps == 1) continue;
    const int64_t run = xs[k] * ost[k] * isz;  // bytes
    const int64_t rows = prod(xs, 0, k);
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain * isz / (run * reps)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t r = b; r < e; ++r) {
                     int64_t off = 0, rem = r;
                     for (int j = k - 1; j >= 0; --j) {
                       off += (rem % xs[j]) * ost[j];
                       rem /= xs[j];
                     }
                     char* src = base + off * isz;
                     for (int64_t t = 1; t < reps; ++t) std::memcpy(src + t * run, src, run);
                   }
                 });
  }
}

Tensor tile(const Tensor& x, const Ints& reps) {
  Tensor out = Tensor::empty(tile_shape(x.shape(), reps), x.dtype());
  tile_into(out, x);
  return out;
}

}  // namespace pj
