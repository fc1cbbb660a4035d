// Gradient rules of reductions, shape ops, matmul/dense and softmax-like ops. The linear ones and
// matmul (with the other factor conjugated) are right on complex values too.
#include "graph/autodiff.h"
#include "graph/ops/nn_params.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

IntList dims_of(const Shape& s) { return IntList(s.begin(), s.end()); }

int reshape(GradContext& c, int v, const Shape& s) { return c.op("reshape", {v}, Attrs{{"shape", dims_of(s)}}); }

// A reduction's output gradient (or value) with its reduced dims back as 1s, so it broadcasts
// against the input.
int kept(GradContext& c, int v, const Shape& in, const std::vector<int>& axes) {
  Shape s = in;
  for (int a : axes) s[a] = 1;
  return reshape(c, v, s);
}

int64_t reduced_count(const Shape& in, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= in[a];
  return n;
}

int broadcast(GradContext& c, int v, const Shape& s) { return c.op("broadcast_to", {v}, Attrs{{"shape", dims_of(s)}}); }

PJ_REGISTER_COMPLEX_GRAD("sum", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta m = g.in_meta(c, 0);
  std::vector<int> axes = reduce_axes(*g.attrs, static_cast<int>(m.shape.size()));
  return {c.reduce_to(broadcast(c, kept(c, g.dout[0], m.shape, axes), m.shape), m)};
});
PJ_REGISTER_COMPLEX_GRAD("mean", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta m = g.in_meta(c, 0);
  std::vector<int> axes = reduce_axes(*g.attrs, static_cast<int>(m.shape.size()));
  const int d = g.dout[0];
  int scaled = c.op("div", {d, c.scalar_like(static_cast<double>(reduced_count(m.shape, axes)), d)});
  return {c.reduce_to(broadcast(c, kept(c, scaled, m.shape, axes), m.shape), m)};
});
// max/min over axes: the gradient is shared by the elements equal to the result (PyTorch's amax).
Grads extreme_grad(GradContext& c, const GradArgs& g) {
  const TensorMeta m = g.in_meta(c, 0);
  std::vector<int> axes = reduce_axes(*g.attrs, static_cast<int>(m.shape.size()));
  int hit = c.op("eq", {g.in[0], kept(c, g.out[0], m.shape, axes)});
  int hits = c.op("cast", {hit}, Attrs{{"dtype", m.dtype}});
  IntList ax(axes.begin(), axes.end());
  int count = c.op("sum", {hits}, Attrs{{"axis", ax}, {"keepdims", true}});
  int share = c.op("div", {kept(c, g.dout[0], m.shape, axes), count});
  return {c.reduce_to(c.op("mul", {hits, share}), m)};
}
PJ_REGISTER_GRAD("max", extreme_grad);
PJ_REGISTER_GRAD("min", extreme_grad);
// var = sum((x - mean)^2) / (N - ddof): d/dx = 2 (x - mean) / (N - ddof); std = sqrt(var):
// d/dx = (x - mean) / ((N - ddof) std).
Grads spread_grad(GradContext& c, const GradArgs& g, bool is_std) {
  const TensorMeta m = g.in_meta(c, 0);
  std::vector<int> axes = reduce_axes(*g.attrs, static_cast<int>(m.shape.size()));
  IntList ax(axes.begin(), axes.end());
  const double n = static_cast<double>(reduced_count(m.shape, axes) - g.attrs->i("ddof", 0));
  const int x = g.in[0];
  int centred = c.op("sub", {x, c.op("mean", {x}, Attrs{{"axis", ax}, {"keepdims", true}})});
  int d = kept(c, g.dout[0], m.shape, axes);
  int local = is_std ? c.op("div", {centred, c.op("mul", {kept(c, g.out[0], m.shape, axes), c.scalar_like(n, x)})})
                     : c.op("mul", {centred, c.scalar_like(2.0 / n, x)});
  return {c.reduce_to(c.op("mul", {local, d}), m)};
}
PJ_REGISTER_GRAD("var", [](GradContext& c, const GradArgs& g) -> Grads { return spread_grad(c, g, false); });
PJ_REGISTER_GRAD("std", [](GradContext& c, const GradArgs& g) -> Grads { return spread_grad(c, g, true); });
// prod over axes: the product of the other elements. Without a zero that is prod / x; with one zero
// the zero gets the product of the rest and the others nothing; with two or more, all nothing.
PJ_REGISTER_GRAD("prod", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta m = g.in_meta(c, 0);
  std::vector<int> axes = reduce_axes(*g.attrs, static_cast<int>(m.shape.size()));
  IntList ax(axes.begin(), axes.end());
  const int x = g.in[0];
  int zero = c.op("eq", {x, c.scalar_like(0, x)});
  int zeros = c.op("sum", {c.op("cast", {zero}, Attrs{{"dtype", m.dtype}})}, Attrs{{"axis", ax}, {"keepdims", true}});
  int rest = c.op("prod", {c.op("where", {zero, c.scalar_like(1, x), x})}, Attrs{{"axis", ax}, {"keepdims", true}});
  int none = c.op("eq", {zeros, c.scalar_like(0, x)}), one = c.op("eq", {zeros, c.scalar_like(1, x)});
  int local = c.op("where", {none, c.op("div", {kept(c, g.out[0], m.shape, axes), x}),
                             c.op("where", {c.op("logical_and", {one, zero}), rest, c.scalar_like(0, x)})});
  return {c.reduce_to(c.op("mul", {local, kept(c, g.dout[0], m.shape, axes)}), m)};
});

// cumsum along an axis: each input adds to its own and every later sum, so the gradient is the
// reversed cumulative sum of dout: sum(d) - cumsum(d) + d. Without an axis the input is flattened.
PJ_REGISTER_GRAD("cumsum", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta m = g.in_meta(c, 0);
  const Shape ds = c.meta(g.dout[0]).shape;
  const int64_t axis = g.attrs->is_none("axis") ? 0 : normalize_axis(g.attrs->i("axis"), static_cast<int>(ds.size()));
  const int d = g.dout[0];
  int total = c.op("sum", {d}, Attrs{{"axis", IntList{axis}}, {"keepdims", true}});
  int rev = c.op("add", {c.op("sub", {total, c.op("cumsum", {d}, Attrs{{"axis", axis}})}), d});
  return {c.reduce_to(reshape(c, rev, m.shape), m)};
});
PJ_REGISTER_GRAD("logsumexp", [](GradContext& c, const GradArgs& g) -> Grads {
  const TensorMeta m = g.in_meta(c, 0);
  std::vector<int> axes = reduce_axes(*g.attrs, static_cast<int>(m.shape.size()));
  int p = c.op("exp", {c.op("sub", {g.in[0], kept(c, g.out[0], m.shape, axes)})});
  return {c.reduce_to(c.op("mul", {p, kept(c, g.dout[0], m.shape, axes)}), m)};
});

int softmax_axis(const GradArgs& g, const TensorMeta& m) {
  const int nd = static_cast<int>(m.shape.size());
  int64_t a = g.attrs->i("axis", -1);
  return static_cast<int>(nd == 0 ? 0 : (a < 0 ? a + nd : a));
}
PJ_REGISTER_GRAD("softmax", [](GradContext& c, const GradArgs& g) -> Grads {
  // y (dy - sum(dy y))
  const TensorMeta m = g.in_meta(c, 0);
  const int y = g.out[0], d = g.dout[0];
  if (m.shape.empty()) return {c.zeros(m)};
  int dot = c.op("sum", {c.op("mul", {d, y})}, Attrs{{"axis", IntList{softmax_axis(g, m)}}, {"keepdims", true}});
  return {c.op("mul", {y, c.op("sub", {d, dot})})};
});
PJ_REGISTER_GRAD("log_softmax", [](GradContext& c, const GradArgs& g) -> Grads {
  // dy - e^y sum(dy)
  const TensorMeta m = g.in_meta(c, 0);
  const int y = g.out[0], d = g.dout[0];
  if (m.shape.empty()) return {c.zeros(m)};
  int total = c.op("sum", {d}, Attrs{{"axis", IntList{softmax_axis(g, m)}}, {"keepdims", true}});
  return {c.op("sub", {d, c.op("mul", {c.op("exp", {y}), total})})};
});

// Ops that only rearrange: the gradient takes the input's shape back.
Grads reshape_grad(GradContext& c, const GradArgs& g) { return {reshape(c, g.dout[0], g.in_meta(c, 0).shape)}; }
PJ_REGISTER_COMPLEX_GRAD("reshape", reshape_grad);
PJ_REGISTER_COMPLEX_GRAD("flatten", reshape_grad);
PJ_REGISTER_COMPLEX_GRAD("squeeze", reshape_grad);
PJ_REGISTER_COMPLEX_GRAD("unsqueeze", reshape_grad);
PJ_REGISTER_COMPLEX_GRAD("expand_dims", reshape_grad);
PJ_REGISTER_COMPLEX_GRAD("broadcast_to", [](GradContext& c, const GradArgs& g) -> Grads {
  return {c.reduce_to(g.dout[0], g.in_meta(c, 0))};
});

// transpose/permute by perm (None: reversed): the gradient is permuted back.
Grads permute_grad(GradContext& c, const GradArgs& g) {
  const int nd = static_cast<int>(g.in_meta(c, 0).shape.size());
  IntList perm;
  if (g.attrs->is_none("perm")) {
    for (int d = nd - 1; d >= 0; --d) perm.push_back(d);
  } else {
    perm = g.attrs->ints("perm");
  }
  IntList inv(nd);
  for (int d = 0; d < nd; ++d) inv[perm[d] < 0 ? perm[d] + nd : perm[d]] = d;
  return {c.op("transpose", {g.dout[0]}, Attrs{{"perm", inv}})};
}
PJ_REGISTER_COMPLEX_GRAD("transpose", permute_grad);
PJ_REGISTER_COMPLEX_GRAD("permute", permute_grad);

// The last two dims swapped.
int swap_last(GradContext& c, int v) {
  const int nd = static_cast<int>(c.meta(v).shape.size());
  IntList perm;
  for (int d = 0; d < nd; ++d) perm.push_back(d);
  std::swap(perm[nd - 1], perm[nd - 2]);
  return c.op("transpose", {v}, Attrs{{"perm", perm}});
}

PJ_REGISTER_COMPLEX_GRAD("matmul", [](GradContext& c, const GradArgs& g) -> Grads {
  // A 1-d operand is a row (left) or a column (right) matrix, as in the product itself.
  const TensorMeta ma = g.in_meta(c, 0), mb = g.in_meta(c, 1);
  int a = g.in[0], b = g.in[1];
  if (ma.shape.size() == 1) a = reshape(c, a, {1, ma.shape[0]});
  if (mb.shape.size() == 1) b = reshape(c, b, {mb.shape[0], 1});
  Metas m{c.meta(a), c.meta(b)};
  Shape full = get_op("matmul").infer(m, Attrs{})[0].shape;
  int d = reshape(c, g.dout[0], full);
  // The gradient of a matrix made from a 1-d operand loses that made dim again.
  auto drop = [&](int v, int dim) {
    Shape s = c.meta(v).shape;
    s.erase(s.begin() + (static_cast<int>(s.size()) + dim));
    return reshape(c, v, s);
  };
  int da = kNoGrad, db = kNoGrad;
  if (g.needs[0]) {
    da = c.op("matmul", {d, swap_last(c, c.conj(b))});
    da = c.reduce_to(ma.shape.size() == 1 ? drop(da, -2) : da, ma);
  }
  if (g.needs[1]) {
    db = c.op("matmul", {swap_last(c, c.conj(a)), d});
    db = c.reduce_to(mb.shape.size() == 1 ? drop(db, -1) : db, mb);
  }
  return {da, db};
});

PJ_REGISTER_GRAD("dense", [](GradContext& c, const GradArgs& g) -> Grads {
  // y = x W^T (+ b); x [..., K], W [N, K]
  const TensorMeta mx = g.in_meta(c, 0), mw = g.in_meta(c, 1);
  const int d = g.dout[0];
  Grads out(g.in.size(), kNoGrad);
  if (g.needs[0]) out[0] = c.reduce_to(c.op("matmul", {d, g.in[1]}), mx);
  if (g.needs[1]) {
    // rows: the product of the batch dims (not numel / K, which loses the rows when K is 0)
    auto rows = [](const Shape& s) {
      int64_t r = 1;
      for (size_t i = 0; i + 1 < s.size(); ++i) r *= s[i];
      return r;
    };
    const int64_t n = mw.shape[0], k = mw.shape[1];
    int d2 = reshape(c, d, {rows(c.meta(d).shape), n});
    int x2 = reshape(c, g.in[0], {rows(mx.shape), k});
    out[1] = c.reduce_to(c.op("matmul", {swap_last(c, d2), x2}), mw);
  }
  if (g.in.size() > 2 && g.needs[2]) out[2] = c.reduce_to(d, g.in_meta(c, 2));
  return out;
});

}  // namespace
}  // namespace pj
