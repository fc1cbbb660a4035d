#include "kernels/index_ops.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <sstream>

#include "kernels/copy.h"
#include "kernels/threading.h"

namespace pj {

IndexItem IndexItem::integer(int64_t i) {
  IndexItem it;
  it.kind = Kind::Int;
  it.index = i;
  return it;
}
IndexItem IndexItem::slice(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  IndexItem it;
  it.kind = Kind::Slice;
  it.start = start;
  it.stop = stop;
  it.step = step;
  return it;
}
IndexItem IndexItem::new_axis() {
  IndexItem it;
  it.kind = Kind::NewAxis;
  return it;
}
IndexItem IndexItem::ellipsis() { return IndexItem(); }
IndexItem IndexItem::tensor(const Tensor& t) {
  IndexItem it;
  it.kind = Kind::Array;
  it.array = t;
  return it;
}

void check_index_dtype(const Tensor& t, const char* what) {
  if (!is_integral(t.dtype(), false))
    PJ_THROW(Type) << what << " must be an integer tensor, but got " << dtype_name(t.dtype());
}

namespace {

// ---- the row gather / scatter kernels -----------------------------------------------------------

// out[p, b, s] = x[base + p_off(p) + b_off[b] + s_off(s)] for a contiguous out of shape P + B + S.
struct RowPlan {
  Tensor src;                  // owns the storage; offsets count from its storage base
  int64_t base = 0;            // element offset of the first row in storage
  Shape p_shape, p_strides;    // outer dims, kept as they are
  Shape b_shape;               // the broadcast index shape
  std::vector<int64_t> b_off;  // element offset of each index position, size numel(b_shape)
  Shape s_shape, s_strides;    // inner dims: the block each (p, b) copies
  bool unique = false;         // no two index positions address the same place (mask indices)

  Shape out_shape() const {
    Shape s = p_shape;
    s.insert(s.end(), b_shape.begin(), b_shape.end());
    s.insert(s.end(), s_shape.begin(), s_shape.end());
    return s;
  }
};

// Calls f(i, offset) for every position i of (shape, strides) in row-major order, stepping the
// offset like an odometer (no division per element).
template <typename F>
void for_each_offset(const Shape& shape, const Shape& strides, F&& f) {
  const int64_t n = shape_numel(shape);
  if (n == 0) return;
  const int nd = static_cast<int>(shape.size());
  if (nd == 1) {
    for (int64_t i = 0; i < n; ++i) f(i, i * strides[0]);
    return;
  }
  int64_t idx[64] = {0};
  PJ_CHECK(nd <= 64) << "too many dims";
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (int d = nd - 1; d >= 0; --d) {
      off += strides[d];
      if (++idx[d] < shape[d]) break;
      off -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

// Element offsets of every position of (shape, strides), row-major.
std::vector<int64_t> all_offsets(const Shape& shape, const Shape& strides) {
  std::vector<int64_t> off(shape_numel(shape));
  for_each_offset(shape, strides, [&](int64_t i, int64_t o) { off[i] = o; });
  return off;
}

// True when (shape, strides) is one contiguous run starting at its first element.
bool is_linear(const Shape& shape, const Shape& strides) {
  int64_t expected = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

// Moves elements as raw words of the dtype's size: indexing never converts, so one copy per
// element width serves every dtype.
template <typename W, bool kScatter>
void run_rows(const RowPlan& plan, char* data, W* dense) {
  const std::vector<int64_t> p_off = all_offsets(plan.p_shape, plan.p_strides);
  const int64_t np = static_cast<int64_t>(p_off.size());
  const int64_t nb = static_cast<int64_t>(plan.b_off.size());
  const int64_t ns = shape_numel(plan.s_shape);
  if (np * nb * ns == 0) return;
  const bool linear = is_linear(plan.s_shape, plan.s_strides);
  std::vector<int64_t> s_off;
  if (!linear) s_off = all_offsets(plan.s_shape, plan.s_strides);
  W* x = reinterpret_cast<W*>(data) + plan.base;
  auto block = [&](int64_t p, int64_t b) {
    W* xs = x + p_off[p] + plan.b_off[b];
    W* d = dense + (p * nb + b) * ns;
    if (ns == 1) {
      if (kScatter) *xs = *d;
      else *d = *xs;
    } else if (linear) {
      if (kScatter) std::memcpy(xs, d, ns * sizeof(W));
      else std::memcpy(d, xs, ns * sizeof(W));
    } else {
      for (int64_t j = 0; j < ns; ++j) {
        if (kScatter) xs[s_off[j]] = d[j];
        else d[j] = xs[s_off[j]];
      }
    }
  };
  if (kScatter && !plan.unique) {
    // Rows of different p never overlap; within one p the index order is kept so that the last
    // of several writes to one place wins, whatever the thread count.
    parallel_for(np, std::max<int64_t>(1, kParallelGrain / (nb * ns)), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p)
        for (int64_t i = 0; i < nb; ++i) block(p, i);
    });
  } else {
    parallel_for(np * nb, std::max<int64_t>(1, kParallelGrain / ns), [&](int64_t b, int64_t e) {
      int64_t p = b / nb, i = b % nb;
      if (ns == 1 && linear) {  // one element per index: a plain gather (scatter) loop
        for (int64_t k = b; k < e; ++k) {
          if (kScatter) x[p_off[p] + plan.b_off[i]] = dense[k];
          else dense[k] = x[p_off[p] + plan.b_off[i]];
          if (++i == nb) i = 0, ++p;
        }
        return;
      }
      for (int64_t k = b; k < e; ++k) {
        block(p, i);
        if (++i == nb) i = 0, ++p;
      }
    });
  }
}

// complex128's element: moved as one 16-byte word.
struct Word16 {
  uint64_t lo, hi;
};

// Every itemsize a dtype has (dtype.h): bool/int8/uint8, float16/bfloat16/int16/uint16, 4, 8, and
// complex128's 16.
template <bool kScatter>
void dispatch_rows(const RowPlan& plan, const Tensor& dense) {
  char* data = static_cast<char*>(plan.src.storage()->data());
  switch (itemsize(plan.src.dtype())) {
    case 1: return run_rows<uint8_t, kScatter>(plan, data, static_cast<uint8_t*>(dense.raw_data()));
    case 2: return run_rows<uint16_t, kScatter>(plan, data, static_cast<uint16_t*>(dense.raw_data()));
    case 16: return run_rows<Word16, kScatter>(plan, data, static_cast<Word16*>(dense.raw_data()));
    case 4: return run_rows<uint32_t, kScatter>(plan, data, static_cast<uint32_t*>(dense.raw_data()));
    case 8: return run_rows<uint64_t, kScatter>(plan, data, static_cast<uint64_t*>(dense.raw_data()));
  }
  PJ_CHECK(false) << "unexpected itemsize";
}

Tensor gather_rows(const RowPlan& plan) {
  Tensor out = Tensor::empty(plan.out_shape(), plan.src.dtype());
  dispatch_rows<false>(plan, out);
  return out;
}

// `idx` (any integer dtype, broadcast to b_shape) times `stride`, added into b_off; negative
// indices wrap once, the rest must be in [0, size).
void add_offsets(std::vector<int64_t>& b_off, const Shape& b_shape, const Tensor& idx, int64_t size,
                 int64_t stride, int axis) {
  Tensor ix = cast(idx, DType::Int64);
  const int64_t* p = ix.data<int64_t>();
  for_each_offset(b_shape, broadcast_strides(ix, b_shape), [&](int64_t i, int64_t o) {
    int64_t v = p[o], w = v < 0 ? v + size : v;
    if (w < 0 || w >= size)
      PJ_THROW(Index) << "index " << v << " is out of bounds for axis " << axis << " with size " << size;
    b_off[i] += w * stride;
  });
}

// ---- numpy indexing ---------------------------------------------------------------------------

struct SliceRange {
  int64_t start, len, step;
};

// CPython's PySlice_AdjustIndices.
SliceRange normalize_slice(const IndexItem& it, int64_t len) {
  int64_t step = it.step;
  if (step == 0) PJ_THROW(Value) << "slice step cannot be zero";
  if (step < -INT64_MAX) step = -INT64_MAX;
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt) -> int64_t {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += len;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= len) {
      x = step < 0 ? len - 1 : len;
    }
    return x;
  };
  int64_t start = adjust(it.start, step < 0 ? len - 1 : 0);
  int64_t stop = adjust(it.stop, step < 0 ? -1 : len);
  int64_t n = 0;
  if (step < 0) {
    if (stop < start) n = (start - stop - 1) / (-step) + 1;
  } else if (start < stop) {
    n = (stop - start - 1) / step + 1;
  }
  return {start, n, step};
}

// x after the basic items, with the dims that advanced items index still in place.
struct Prepared {
  Shape shape, strides;
  int64_t offset = 0;
  std::vector<int> axis;      // x's axis of each dim, for error messages (-1: a new axis)
  std::vector<bool> fancy;    // the dim is indexed by an index array
  struct Index {
    int dim;                  // the dim it indexes, or -1 (0-d bool mask: indexes nothing)
    Tensor idx;               // integer indices
    bool from_mask;           // nonzero() of a mask: never repeats a position
  };
  std::vector<Index> indices;
  bool has_array = false;
  bool adjacent = true;       // advanced items are consecutive: B replaces them in place
  int consec = 0;             // when adjacent, how many kept dims come before B
};

// The k index arrays of nonzero(mask), each of shape (n,).
std::vector<Tensor> nonzero_of(const Tensor& mask) {
  Tensor m = mask.contiguous();
  const bool* p = m.data<bool>();
  const int64_t total = m.numel();
  int64_t n = 0;
  for (int64_t i = 0; i < total; ++i) n += p[i];
  const int k = m.ndim();
  PJ_CHECK(k <= 64) << "too many dims";
  // Each coordinate is written unconditionally and kept only where the mask is set (no branch to
  // mispredict on random masks), so the buffers get one spare slot.
  std::vector<Tensor> out;
  std::vector<int64_t*> dst;
  for (int j = 0; j < k; ++j) {
    out.push_back(Tensor::empty({n + 1}, DType::Int64).as_strided({n}, {1}, 0));
    dst.push_back(out.back().data<int64_t>());
  }
  int64_t w = 0;
  if (k == 1) {
    int64_t* d = dst[0];
    for (int64_t i = 0; i < total; ++i) {
      d[w] = i;
      w += p[i];
    }
    return out;
  }
  int64_t idx[64] = {0};
  for (int64_t i = 0; i < total; ++i) {
    for (int j = 0; j < k; ++j) dst[j][w] = idx[j];
    w += p[i];
    for (int j = k - 1; j >= 0 && ++idx[j] == m.dim(j); --j) idx[j] = 0;
  }
  return out;
}

// `with_data` false: only shapes are looked at, and bool masks raise NotImplemented.
Prepared prepare(const Tensor& x, const IndexItems& items, bool with_data) {
  const int ndim = x.ndim();
  int consumed = 0, ellipses = 0;
  bool has_array = false;
  for (const IndexItem& it : items) {
    switch (it.kind) {
      case IndexItem::Kind::Int:
      case IndexItem::Kind::Slice: ++consumed; break;
      case IndexItem::Kind::NewAxis: break;
      case IndexItem::Kind::Ellipsis:
        if (++ellipses > 1) PJ_THROW(Index) << "an index can only have a single ellipsis ('...')";
        break;
      case IndexItem::Kind::Array:
        PJ_CHECK(it.array.defined()) << "Array index item without a tensor";
        has_array = true;
        if (it.array.dtype() == DType::Bool) consumed += it.array.ndim();
        else if (is_integral(it.array.dtype(), false)) ++consumed;
        else PJ_THROW(Index) << "arrays used as indices must be of integer (or boolean) type";
        break;
    }
  }
  if (consumed > ndim)
    PJ_THROW(Index) << "too many indices for tensor: tensor is " << ndim << "-dimensional, but "
                    << consumed << " were indexed";

  Prepared P;
  P.has_array = has_array;
  P.offset = x.offset();
  auto keep = [&](int64_t size, int64_t stride, int axis, bool fancy) {
    P.shape.push_back(size);
    P.strides.push_back(stride);
    P.axis.push_back(axis);
    P.fancy.push_back(fancy);
  };
  int cur = 0;         // next dim of x
  int result_dim = 0;  // kept dims so far (numpy's mapiter_fill_info)
  int status = -1;     // -1: no advanced item yet, 0: in the first run of them, 1: after it, 2: split
  auto mark = [&](bool advanced) {
    if (advanced) {
      if (status == -1) {
        P.consec = result_dim;
        status = 0;
      } else if (status == 1) {
        status = 2;
      }
    } else if (status == 0) {
      status = 1;
    }
  };
  for (const IndexItem& it : items) {
    switch (it.kind) {
      case IndexItem::Kind::Int: {
        int64_t size = x.dim(cur);
        if (has_array) {  // numpy: with any array present, integers are advanced indices too
          mark(true);
          P.indices.push_back(
              {static_cast<int>(P.shape.size()), Tensor::scalar_int(it.index, DType::Int64), false});
          keep(size, x.stride(cur), cur, true);
        } else {
          int64_t w = it.index < 0 ? it.index + size : it.index;
          if (w < 0 || w >= size)
            PJ_THROW(Index) << "index " << it.index << " is out of bounds for axis " << cur
                            << " with size " << size;
          P.offset += w * x.stride(cur);
        }
        ++cur;
        break;
      }
      case IndexItem::Kind::Slice: {
        SliceRange r = normalize_slice(it, x.dim(cur));
        if (r.len > 0) P.offset += r.start * x.stride(cur);
        mark(false);
        keep(r.len, x.stride(cur) * r.step, cur, false);
        ++result_dim;
        ++cur;
        break;
      }
      case IndexItem::Kind::NewAxis:
        mark(false);
        keep(1, 0, -1, false);
        ++result_dim;
        break;
      case IndexItem::Kind::Ellipsis: {
        mark(false);
        int k = ndim - consumed;
        for (int j = 0; j < k; ++j, ++cur) keep(x.dim(cur), x.stride(cur), cur, false);
        result_dim += k;
        break;
      }
      case IndexItem::Kind::Array: {
        mark(true);
        const Tensor& a = it.array;
        if (a.dtype() != DType::Bool) {
          P.indices.push_back({static_cast<int>(P.shape.size()), a, false});
          keep(x.dim(cur), x.stride(cur), cur, true);
          ++cur;
          break;
        }
        for (int j = 0; j < a.ndim(); ++j)
          if (a.dim(j) != x.dim(cur + j))
            PJ_THROW(Index) << "boolean index did not match indexed tensor along axis " << cur + j
                            << "; size of axis is " << x.dim(cur + j)
                            << " but size of corresponding boolean axis is " << a.dim(j);
        if (!with_data)
          PJ_THROW(NotImplemented) << "the shape of an index by a boolean mask depends on its values";
        if (a.ndim() == 0) {  // x[True] adds a dim of size 1, x[False] one of size 0
          int64_t n = a.item_int() ? 1 : 0;
          P.indices.push_back({-1, Tensor::zeros({n}, DType::Int64), true});
          break;
        }
        std::vector<Tensor> nz = nonzero_of(a);
        for (int j = 0; j < a.ndim(); ++j, ++cur) {
          P.indices.push_back({static_cast<int>(P.shape.size()), nz[j], true});
          keep(x.dim(cur), x.stride(cur), cur, true);
        }
        break;
      }
    }
  }
  for (; cur < ndim; ++cur) keep(x.dim(cur), x.stride(cur), cur, false);
  P.adjacent = status != 2;
  if (!P.adjacent) P.consec = 0;
  return P;
}

Shape broadcast_index_shapes(const Prepared& P) {
  Shape b;
  try {
    for (auto& ix : P.indices) b = broadcast_shapes(b, ix.idx.shape());
  } catch (const Error&) {
    std::ostringstream os;
    os << "shape mismatch: indexing arrays could not be broadcast together with shapes";
    for (auto& ix : P.indices) os << " " << shape_str(ix.idx.shape());
    PJ_THROW(Index) << os.str();
  }
  return b;
}

// Splits the kept dims around B and, with data, computes the offsets of every index position.
RowPlan plan_rows(const Tensor& x, const Prepared& P, bool with_data) {
  RowPlan R;
  R.src = x;
  R.base = P.offset;
  R.b_shape = broadcast_index_shapes(P);
  int kept = 0;
  for (size_t d = 0; d < P.shape.size(); ++d) {
    if (P.fancy[d]) continue;
    bool outer = P.adjacent && kept < P.consec;
    (outer ? R.p_shape : R.s_shape).push_back(P.shape[d]);
    (outer ? R.p_strides : R.s_strides).push_back(P.strides[d]);
    ++kept;
  }
  // Several masks (or one mask of several dims) still address each position once; an integer
  // index anywhere may repeat one.
  R.unique = true;
  for (auto& ix : P.indices) R.unique = R.unique && ix.from_mask;
  if (with_data) {
    R.b_off.assign(shape_numel(R.b_shape), 0);
    for (auto& ix : P.indices) {
      if (ix.dim < 0) continue;
      add_offsets(R.b_off, R.b_shape, ix.idx, P.shape[ix.dim], P.strides[ix.dim], P.axis[ix.dim]);
    }
  }
  return R;
}

Tensor view_of_prepared(const Tensor& x, const Prepared& P) {
  return x.as_strided(P.shape, P.strides, P.offset);
}

}  // namespace

Tensor basic_index_view(const Tensor& x, const IndexItems& items) {
  for (auto& it : items)
    PJ_CHECK(it.kind != IndexItem::Kind::Array) << "basic_index_view given an index array";
  return view_of_prepared(x, prepare(x, items, true));
}

Tensor advanced_index(const Tensor& x, const IndexItems& items) {
  Prepared P = prepare(x, items, true);
  if (!P.has_array) return view_of_prepared(x, P);
  return gather_rows(plan_rows(x, P, true));
}

Shape index_shape(const Shape& x, const IndexItems& items) {
  // Only x's shape matters: a zero-stride placeholder stands in for its data.
  Tensor meta = Tensor::view_of(Storage::allocate(0), x, Shape(x.size(), 0), 0, DType::Bool);
  Prepared P = prepare(meta, items, false);
  if (!P.has_array) return P.shape;
  return plan_rows(meta, P, false).out_shape();
}

namespace {
// `value` as numpy assigns it to a target of shape `to`: leading size-1 dims may be dropped.
Tensor assignable(const Tensor& value, const Shape& to) {
  Tensor v = value;
  while (v.ndim() > static_cast<int>(to.size()) && v.dim(0) == 1)
    v = v.as_strided(Shape(v.shape().begin() + 1, v.shape().end()),
                     Shape(v.strides().begin() + 1, v.strides().end()), v.offset());
  bool ok = v.ndim() <= static_cast<int>(to.size());
  for (int i = 0; ok && i < v.ndim(); ++i) {
    int64_t d = v.dim(i), t = to[to.size() - v.ndim() + i];
    ok = d == t || d == 1;
  }
  if (!ok)
    PJ_THROW(Value) << "could not broadcast input tensor from shape " << shape_str(value.shape())
                    << " into shape " << shape_str(to);
  return v;
}
}  // namespace

void index_put(const Tensor& x, const IndexItems& items, const Tensor& value) {
  Prepared P = prepare(x, items, true);
  // Reading from the storage being written would see half-written data: copy first.
  Tensor val = value.same_storage(x) ? value.clone() : value;
  if (!P.has_array) {
    Tensor view = view_of_prepared(x, P);
    copy_into(view, assignable(val, view.shape()));
    return;
  }
  RowPlan R = plan_rows(x, P, true);
  Shape shape = R.out_shape();
  Tensor dense = Tensor::empty(shape, x.dtype());
  copy_into(dense, assignable(val, shape));
  dispatch_rows<true>(R, dense);
}

void index_put_accumulate(const Tensor& x, const IndexItems& items, const Tensor& value) {
  PJ_CHECK(is_floating(x.dtype())) << "index_put_accumulate on " << dtype_name(x.dtype());
  Prepared P = prepare(x, items, true);
  if (!P.has_array) {  // a view: every position once
    Tensor view = view_of_prepared(x, P);
    Tensor v = assignable(value, view.shape()).contiguous();
    const std::vector<int64_t> off = all_offsets(view.shape(), view.strides());
    PJ_DISPATCH_FLOATING(x.dtype(), "index_put accumulate", [&] {
      scalar_t* base = static_cast<scalar_t*>(view.raw_data());
      const scalar_t* d = v.data<scalar_t>();
      for (size_t j = 0; j < off.size(); ++j) base[off[j]] += d[j];
    });
    return;
  }
  RowPlan R = plan_rows(x, P, true);
  Shape shape = R.out_shape();
  Tensor dense = Tensor::empty(shape, x.dtype());
  copy_into(dense, assignable(value, shape));
  const std::vector<int64_t> p_off = all_offsets(R.p_shape, R.p_strides);
  const std::vector<int64_t> s_off = all_offsets(R.s_shape, R.s_strides);
  const int64_t nb = static_cast<int64_t>(R.b_off.size()), ns = static_cast<int64_t>(s_off.size());
  // In order, one thread: repeated positions add up the same way every time.
  PJ_DISPATCH_FLOATING(x.dtype(), "index_put accumulate", [&] {
    scalar_t* base = static_cast<scalar_t*>(R.src.storage()->data()) + R.base;
    const scalar_t* d = dense.data<scalar_t>();
    for (size_t p = 0; p < p_off.size(); ++p)
      for (int64_t b = 0; b < nb; ++b) {
        scalar_t* xs = base + p_off[p] + R.b_off[b];
        const scalar_t* row = d + (static_cast<int64_t>(p) * nb + b) * ns;
        for (int64_t j = 0; j < ns; ++j) xs[s_off[j]] += row[j];
      }
  });
}

std::vector<int64_t> encode_index_items(const IndexItems& items) {
  constexpr int64_t kNone = INT64_MIN;
  std::vector<int64_t> code;
  for (const IndexItem& it : items) {
    code.push_back(static_cast<int64_t>(it.kind));
    switch (it.kind) {
      case IndexItem::Kind::Int: code.insert(code.end(), {it.index, 0, 0}); break;
      case IndexItem::Kind::Slice:
        code.insert(code.end(), {it.start.value_or(kNone), it.stop.value_or(kNone), it.step});
        break;
      default: code.insert(code.end(), {0, 0, 0}); break;
    }
  }
  return code;
}

IndexItems decode_index_items(const std::vector<int64_t>& code, const std::vector<Tensor>& arrays) {
  constexpr int64_t kNone = INT64_MIN;
  if (!(code.size() % 4 == 0)) PJ_THROW(Value) << "index code has " << code.size() << " ints";
  IndexItems items;
  size_t next = 0;
  for (size_t i = 0; i < code.size(); i += 4) {
    auto opt = [&](int64_t v) { return v == kNone ? std::nullopt : std::optional<int64_t>(v); };
    switch (static_cast<IndexItem::Kind>(code[i])) {
      case IndexItem::Kind::Int: items.push_back(IndexItem::integer(code[i + 1])); break;
      case IndexItem::Kind::Slice:
        items.push_back(IndexItem::slice(opt(code[i + 1]), opt(code[i + 2]), code[i + 3]));
        break;
      case IndexItem::Kind::NewAxis: items.push_back(IndexItem::new_axis()); break;
      case IndexItem::Kind::Ellipsis: items.push_back(IndexItem::ellipsis()); break;
      case IndexItem::Kind::Array:
        if (!(next < arrays.size())) PJ_THROW(Value) << "index code names more arrays than were given";
        items.push_back(IndexItem::tensor(arrays[next++]));
        break;
      default: PJ_THROW(Value) << "bad index item kind " << code[i];
    }
  }
  if (!(next == arrays.size())) PJ_THROW(Value) << "index code names fewer arrays than were given";
  return items;
}

// ---- gather, index_select, one_hot --------------------------------------------------------------

Shape gather_shape(const Shape& params, const Shape& indices, int64_t axis, int* axis_out) {
  const int nd = static_cast<int>(params.size());
  if (nd == 0) PJ_THROW(Value) << "gather(): input_params must be at least 1-D";
  int a = normalize_axis(axis, nd);
  Shape out(params.begin(), params.begin() + a);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), params.begin() + a + 1, params.end());
  if (axis_out) *axis_out = a;
  return out;
}

namespace {
RowPlan gather_plan(const Tensor& params, const Tensor& indices, int axis) {
  RowPlan R;
  R.src = params;
  R.base = params.offset();
  for (int d = 0; d < params.ndim(); ++d) {
    if (d == axis) continue;
    (d < axis ? R.p_shape : R.s_shape).push_back(params.dim(d));
    (d < axis ? R.p_strides : R.s_strides).push_back(params.stride(d));
  }
  R.b_shape = indices.shape();
  R.b_off.assign(indices.numel(), 0);
  add_offsets(R.b_off, R.b_shape, indices, params.dim(axis), params.stride(axis), axis);
  return R;
}
}  // namespace

void gather_into(const Tensor& out, const Tensor& params, const Tensor& indices, int axis) {
  PJ_CHECK(out.is_contiguous() && out.dtype() == params.dtype());
  check_index_dtype(indices, "gather(): input_indices");
  dispatch_rows<false>(gather_plan(params, indices, axis), out);
}

Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis) {
  int a = 0;
  Tensor out = Tensor::empty(gather_shape(params.shape(), indices.shape(), axis, &a), params.dtype());
  gather_into(out, params, indices, a);
  return out;
}

void index_add_into(const Tensor& out, const Tensor& base, const Tensor& index, const Tensor& src, int axis) {
  check_index_dtype(index, "index_add(): index");
  PJ_CHECK(out.is_contiguous() && out.dtype() == base.dtype() && src.dtype() == base.dtype());
  copy_into(out, base);
  const Shape& s = out.shape();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[d];
  for (int d = axis + 1; d < static_cast<int>(s.size()); ++d) inner *= s[d];
  const int64_t D = s[axis], n = index.numel();
  std::vector<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = index.item_int(i);
    if (v < -D || v >= D) PJ_THROW(Index) << "index " << v << " is out of bounds for axis " << axis << " with size " << D;
    idx[i] = v < 0 ? v + D : v;
  }
  Tensor sc = src.contiguous();
  PJ_DISPATCH_FLOATING(out.dtype(), "index_add", [&] {
    scalar_t* o = out.data<scalar_t>();
    const scalar_t* x = sc.data<scalar_t>();
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t i = 0; i < n; ++i) {
        scalar_t* dst = o + (a * D + idx[i]) * inner;
        const scalar_t* row = x + (a * n + i) * inner;
        for (int64_t k = 0; k < inner; ++k) dst[k] += row[k];
      }
  });
}

void scatter_add_into(const Tensor& out, const Tensor& base, const Tensor& index, const Tensor& src, int axis) {
  check_index_dtype(index, "scatter_add(): index");
  PJ_CHECK(out.is_contiguous() && out.dtype() == base.dtype() && src.dtype() == base.dtype());
  copy_into(out, base);
  const Shape& s = src.shape();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[d];
  for (int d = axis + 1; d < static_cast<int>(s.size()); ++d) inner *= s[d];
  const int64_t n = s[axis], D = out.dim(axis);
  Tensor ic = index.contiguous(), sc = src.contiguous();
  PJ_DISPATCH_FLOATING(out.dtype(), "scatter_add", [&] {
    scalar_t* o = out.data<scalar_t>();
    const scalar_t* x = sc.data<scalar_t>();
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < inner; ++k) {
          const int64_t at = (a * n + i) * inner + k;
          int64_t v = ic.item_int(at);
          if (v < -D || v >= D)
            PJ_THROW(Index) << "index " << v << " is out of bounds for axis " << axis << " with size " << D;
          if (v < 0) v += D;
          o[(a * D + v) * inner + k] += x[at];
        }
  });
}

Shape index_select_shape(const Shape& x, const Shape& index, int64_t axis, int* axis_out) {
  if (index.size() != 1)
    PJ_THROW(Value) << "index_select(): index must be a 1-D tensor, but got a " << index.size()
                    << "-D tensor";
  return gather_shape(x, index, axis, axis_out);
}

Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index) {
  int a = 0;
  Tensor out = Tensor::empty(index_select_shape(x.shape(), index.shape(), axis, &a), x.dtype());
  check_index_dtype(index, "index_select(): index");
  gather_into(out, x, index, a);
  return out;
}

Shape one_hot_shape(const Shape& indices, int64_t depth, int64_t axis, int* axis_out) {
  if (depth < 0) PJ_THROW(Value) << "one_hot(): depth must be non-negative, but got " << depth;
  const int nd = static_cast<int>(indices.size());
  int a = axis == -1 ? nd : normalize_axis(axis, nd + 1);
  Shape out = indices;
  out.insert(out.begin() + a, depth);
  if (axis_out) *axis_out = a;
  return out;
}

void one_hot_into(const Tensor& out, const Tensor& indices, double on, double off, int axis) {
  check_index_dtype(indices, "one_hot(): indices");
  PJ_CHECK(out.is_contiguous());
  fill(out, off);
  if (indices.numel() == 0) return;
  const int64_t depth = out.dim(axis);
  int64_t inner = 1;
  for (int d = axis + 1; d < out.ndim(); ++d) inner *= out.dim(d);
  Tensor ix = cast(indices, DType::Int64).contiguous();
  const int64_t* p = ix.data<int64_t>();
  PJ_DISPATCH_ALL(out.dtype(), [&] {
    scalar_t* o = out.data<scalar_t>();
    const scalar_t v = static_cast<scalar_t>(on);
    const int64_t outer = ix.numel() / inner;
    parallel_for(outer, std::max<int64_t>(1, kParallelGrain / inner), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t* pr = p + r * inner;
        scalar_t* orow = o + r * depth * inner;
        for (int64_t j = 0; j < inner; ++j) {
          int64_t k = pr[j];
          if (k >= 0 && k < depth) orow[k * inner + j] = v;
        }
      }
    });
  });
}

}  // namespace pj
