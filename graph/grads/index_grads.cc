// Gradient rules of indexing, joining and splitting, and stop_gradient. Those that only move or
// add values are right on complex values too; index_select/gather/sort/topk scatter with kernels
// that are real-only and refuse them.
#include "graph/autodiff.h"
#include "kernels/index_ops.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

PJ_REGISTER_COMPLEX_GRAD("stop_gradient", [](GradContext&, const GradArgs&) -> Grads { return {kNoGrad}; });
// (its input gives only the shape)
PJ_REGISTER_COMPLEX_GRAD("full_like", [](GradContext&, const GradArgs&) -> Grads { return {kNoGrad}; });

// x[items] with constant items (a view): the gradient lands in those positions of zeros.
PJ_REGISTER_COMPLEX_GRAD("basic_index", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta m = g.in_meta(c, 0);
  int z = c.zeros(m);
  return {c.op("index_put", {z, g.dout[0]}, *g.attrs)};
});

// x[items] with index arrays: each element read gets its output gradient added back, repeated
// positions adding up.
PJ_REGISTER_COMPLEX_GRAD("index", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(g.in.size(), kNoGrad);
  Attrs a = *g.attrs;
  a.set("accumulate", true);
  auto put = [&](TensorMeta m, int d) {
    std::vector<int> in{c.zeros(m), d};
    in.insert(in.end(), g.in.begin() + 1, g.in.end());
    return c.op("index_put", in, a);
  };
  TensorMeta m = g.in_meta(c, 0);
  const int d = g.dout[0];
  if (!is_complex(m.dtype)) {
    out[0] = put(m, d);
  } else {  // (accumulating index_put is real-only: the two parts one at a time)
    m.dtype = real_dtype(m.dtype);
    out[0] = c.op("complex", {put(m, c.op("real", {d})), put(m, c.op("imag", {d}))});
  }
  return out;
});

// index_put(x, value, *arrays; items): x's gradient is dout with the written positions zeroed; the
// value's is dout at those positions, summed back to its (broadcast) shape.
PJ_REGISTER_COMPLEX_GRAD("index_put", [](GradContext& c, const GradArgs& g) -> Grads {
  Grads out(g.in.size(), kNoGrad);
  std::vector<int> arrays(g.in.begin() + 2, g.in.end());
  if (g.needs[0]) {
    std::vector<int> in{g.dout[0], c.scalar_like(0, g.dout[0])};
    in.insert(in.end(), arrays.begin(), arrays.end());
    out[0] = c.op("index_put", in, *g.attrs);
  }
  if (g.needs[1]) {
    // With index arrays a position can be written twice (numpy keeps the last write): the value's
    // gradient would have to know which write won.
    if (!arrays.empty())
      PJ_THROW(Type) << "cannot differentiate 'tensor[index] = value' with respect to value when the index has arrays";
    int picked = c.op("basic_index", {g.dout[0]}, *g.attrs);
    out[1] = c.reduce_to(picked, g.in_meta(c, 1));
  }
  return out;
});

IntList dims_of(const Shape& s) { return IntList(s.begin(), s.end()); }

// index_select(x, index; axis) and gather(params, indices; axis): the rows read get their output
// gradients added back (repeated indices accumulate).
PJ_REGISTER_GRAD("index_select", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta m = g.in_meta(c, 0);
  const int64_t axis = normalize_axis(g.attrs->i("axis"), static_cast<int>(m.shape.size()));
  return {c.op("index_add", {c.zeros(m), g.in[1], g.dout[0]}, Attrs{{"axis", axis}}), kNoGrad};
});
PJ_REGISTER_GRAD("gather", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta m = g.in_meta(c, 0);
  const int nd = static_cast<int>(m.shape.size());
  const int64_t axis = normalize_axis(g.attrs->i("axis", 0), nd);
  const int64_t n = shape_numel(c.meta(g.in[1]).shape);
  Shape rows(m.shape.begin(), m.shape.begin() + axis);
  rows.push_back(n);
  rows.insert(rows.end(), m.shape.begin() + axis + 1, m.shape.end());
  int idx = c.op("reshape", {g.in[1]}, Attrs{{"shape", IntList{n}}});
  int d = c.op("reshape", {g.dout[0]}, Attrs{{"shape", dims_of(rows)}});
  return {c.op("index_add", {c.zeros(m), idx, d}, Attrs{{"axis", axis}}), kNoGrad};
});

// sort and topk: each value's gradient goes back to where it came from (the indices output).
Grads scatter_back(GradContext& c, const GradArgs& g, int64_t axis_attr) {
  const TensorMeta m = g.in_meta(c, 0);
  const int64_t axis = normalize_axis(axis_attr, static_cast<int>(m.shape.size()));
  return {c.op("scatter_add", {c.zeros(m), g.out[1], g.dout[0]}, Attrs{{"axis", axis}})};
}
PJ_REGISTER_GRAD("sort", [](GradContext& c, const GradArgs& g) -> Grads {
  return scatter_back(c, g, g.attrs->i("axis", -1));
});
PJ_REGISTER_GRAD("topk", [](GradContext& c, const GradArgs& g) -> Grads {
  return scatter_back(c, g, g.attrs->i("axis", -1));
});

// pad with a constant: the gradient is dout with the padding taken off (pad by the negated
// amounts, which also gives zeros where the forward cropped).
PJ_REGISTER_COMPLEX_GRAD("pad", [](GradContext& c, const GradArgs& g) -> Grads {
  const std::string mode = g.attrs->is_none("mode") ? "constant" : g.attrs->s("mode");
  if (mode != "constant") PJ_THROW(Type) << "cannot differentiate through 'pad' with mode '" << mode << "'";
  IntList neg;
  for (int64_t p : g.attrs->ints("pads")) neg.push_back(-p);
  return {c.op("pad", {g.dout[0]}, Attrs{{"pads", neg}, {"mode", std::string("constant")}, {"value", 0.0}})};
});

int axis_of(const GradArgs& g, int ndim) {
  int64_t a = g.attrs->i("axis", 0);
  return static_cast<int>(a < 0 ? a + ndim : a);
}

// Elements [start, start+n) of `axis`, as a slice view of v.
int slice_axis(GradContext& c, int v, int axis, int64_t start, int64_t n) {
  IndexItems items;
  for (int d = 0; d < axis; ++d) items.push_back(IndexItem::slice());
  items.push_back(IndexItem::slice(start, start + n, 1));
  return c.op("basic_index", {v}, Attrs{{"items", encode_index_items(items)}});
}

PJ_REGISTER_COMPLEX_GRAD("concat", [](GradContext& c, const GradArgs& g) -> Grads {
  const int axis = axis_of(g, static_cast<int>(c.meta(g.out[0]).shape.size()));
  Grads out;
  int64_t at = 0;
  for (size_t k = 0; k < g.in.size(); ++k) {
    const TensorMeta m = g.in_meta(c, static_cast<int>(k));
    const int64_t n = m.shape[axis];
    out.push_back(g.needs[k] ? c.reduce_to(slice_axis(c, g.dout[0], axis, at, n), m) : kNoGrad);
    at += n;
  }
  return out;
});

PJ_REGISTER_COMPLEX_GRAD("stack", [](GradContext& c, const GradArgs& g) -> Grads {
  const int axis = axis_of(g, static_cast<int>(c.meta(g.out[0]).shape.size()));
  Grads out;
  for (size_t k = 0; k < g.in.size(); ++k) {
    if (!g.needs[k]) {
      out.push_back(kNoGrad);
      continue;
    }
    IndexItems items;
    for (int d = 0; d < axis; ++d) items.push_back(IndexItem::slice());
    items.push_back(IndexItem::integer(static_cast<int64_t>(k)));
    int part = c.op("basic_index", {g.dout[0]}, Attrs{{"items", encode_index_items(items)}});
    out.push_back(c.reduce_to(part, g.in_meta(c, static_cast<int>(k))));
  }
  return out;
});

// split: the pieces' gradients joined again (zeros for pieces nothing used).
PJ_REGISTER_COMPLEX_GRAD("split", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta m = g.in_meta(c, 0);
  const int axis = axis_of(g, static_cast<int>(m.shape.size()));
  std::vector<int> parts;
  for (size_t k = 0; k < g.out.size(); ++k)
    parts.push_back(g.dout[k] != kNoGrad ? g.dout[k] : c.zeros(c.meta(g.out[k])));
  if (parts.size() == 1) return {c.reduce_to(parts[0], m)};
  return {c.op("concat", parts, Attrs{{"axis", int64_t{axis}}})};
});

PJ_REGISTER_COMPLEX_GRAD("tile", [](GradContext& c, const GradArgs& g) -> Grads {
  // out viewed as [r0, s0, r1, s1, ...] (reps over the input's dims, leading reps for new dims):
  // the gradient sums the rep axes.
  const TensorMeta m = g.in_meta(c, 0);
  const Shape out = c.meta(g.out[0]).shape;
  const size_t nd = out.size();
  Shape in_full(nd - m.shape.size(), 1);
  in_full.insert(in_full.end(), m.shape.begin(), m.shape.end());
  IntList split_shape, rep_axes;
  for (size_t d = 0; d < nd; ++d) {
    const int64_t s = in_full[d], r = s ? out[d] / s : 0;
    rep_axes.push_back(static_cast<int64_t>(split_shape.size()));
    split_shape.push_back(r);
    split_shape.push_back(s);
  }
  int v = c.op("reshape", {g.dout[0]}, Attrs{{"shape", split_shape}});
  v = c.sum(v, rep_axes, false);
  return {c.op("reshape", {v}, Attrs{{"shape", dims_of(m.shape)}})};
});

}  // namespace
}  // namespace pj
