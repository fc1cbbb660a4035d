// Gradient rules of the dense linear algebra ops (graph/ops/linalg_ops.cc), written with registered
// ops so they serve eager tapes and graphs alike. Real matrices: adjoint is the transpose.
//   inverse  Y = M^-1:            dM = -Y^T dY Y^T
//   det      d = det A:           dA = dd d A^-T          (inf for a singular A)
//   slogdet  l = log|det A|:      dA = dl A^-T            (sign has no gradient)
//   solve    X = M^-1 B:          dB = M^-T dX, dM = -dB X^T
//   triangular solve: as solve, the matrix gradient kept to the triangle that was read
//   cholesky A = L L^T:           S = L^-T Phi(L^T dL) L^-1, dA = (S + S^T) / 2 (Phi: lower
//                                 triangle, diagonal halved; the symmetric part, as PyTorch's)
//   cholesky_solve X = (L L^T)^-1 B: dB = (L L^T)^-1 dX, dL = S L, S = -(dB X^T + X dB^T)
//   qr (square or tall, reduced): M = R dR^T - dQ^T Q, dA = (dQ + Q copyltu(M)) R^-T
//   svd (reduced u, v):           Townsend's formula; singular values only: dA = U diag(dS) V^T
//   eigh A = V diag(w) V^T:       dA = V (diag(dw) + F o (V^T dV)) V^T, symmetrised
//   matrix_band_part:             the same band of the output gradient
#include "graph/autodiff.h"

namespace pj {
namespace {

using Grads = std::vector<int>;

IntList dims_of(const Shape& s) { return IntList(s.begin(), s.end()); }
int reshape(GradContext& c, int v, const Shape& s) { return c.op("reshape", {v}, Attrs{{"shape", dims_of(s)}}); }

int mT(GradContext& c, int v) {  // the last two dims swapped
  const int nd = static_cast<int>(c.meta(v).shape.size());
  IntList perm;
  for (int d = 0; d < nd; ++d) perm.push_back(d);
  std::swap(perm[nd - 1], perm[nd - 2]);
  return c.op("transpose", {v}, Attrs{{"perm", perm}});
}
int mm(GradContext& c, int a, int b) { return c.op("matmul", {a, b}); }
int band(GradContext& c, int v, int64_t lower, int64_t upper) {
  return c.op("matrix_band_part", {v}, Attrs{{"lower", lower}, {"upper", upper}});
}
int tri_solve(GradContext& c, int a, int b, bool lower, bool adjoint) {
  return c.op("matrix_triangular_solve", {a, b}, Attrs{{"lower", lower}, {"adjoint", adjoint}});
}
// [..., 1, 1] view of a [...] value, to scale a batch of matrices.
int per_matrix(GradContext& c, int v) {
  Shape s = c.meta(v).shape;
  s.push_back(1);
  s.push_back(1);
  return reshape(c, v, s);
}
int inverse_t(GradContext& c, int a) {  // A^-T
  return c.op("matrix_inverse", {a}, Attrs{{"adjoint", true}});
}
int zeros_like(GradContext& c, int v) { return c.zeros(c.meta(v)); }
int or_zeros(GradContext& c, int d, int like) { return d == kNoGrad ? zeros_like(c, like) : d; }

PJ_REGISTER_GRAD("matrix_inverse", [](GradContext& c, const GradArgs& g) -> Grads {
  const int yt = mT(c, g.out[0]);
  const int dm = c.op("neg", {mm(c, mm(c, yt, g.dout[0]), yt)});
  return {g.attrs->b("adjoint") ? mT(c, dm) : dm};
});

PJ_REGISTER_GRAD("matrix_determinant", [](GradContext& c, const GradArgs& g) -> Grads {
  const int scale = per_matrix(c, c.op("mul", {g.dout[0], g.out[0]}));
  return {c.op("mul", {scale, inverse_t(c, g.in[0])})};
});

PJ_REGISTER_GRAD("log_matrix_determinant", [](GradContext& c, const GradArgs& g) -> Grads {
  if (g.dout[1] == kNoGrad) return {kNoGrad};
  return {c.op("mul", {per_matrix(c, g.dout[1]), inverse_t(c, g.in[0])})};
});

PJ_REGISTER_GRAD("matrix_solve", [](GradContext& c, const GradArgs& g) -> Grads {
  const bool adjoint = g.attrs->b("adjoint");
  const int db = c.op("matrix_solve", {g.in[0], g.dout[0]}, Attrs{{"adjoint", !adjoint}});
  Grads out{kNoGrad, g.needs[1] ? db : kNoGrad};
  if (g.needs[0]) {
    const int x = g.out[0];
    out[0] = c.op("neg", {adjoint ? mm(c, x, mT(c, db)) : mm(c, db, mT(c, x))});
  }
  return out;
});

PJ_REGISTER_GRAD("matrix_triangular_solve", [](GradContext& c, const GradArgs& g) -> Grads {
  const bool lower = g.attrs->b("lower", true), adjoint = g.attrs->b("adjoint");
  if (g.attrs->b("unit_diagonal") && g.needs[0])
    PJ_THROW(Type) << "For 'MatrixTriangularSolve', the gradient with unit_diagonal=True is not implemented";
  const int db = tri_solve(c, g.in[0], g.dout[0], lower, !adjoint);
  Grads out{kNoGrad, g.needs[1] ? db : kNoGrad};
  if (g.needs[0]) {
    const int x = g.out[0];
    const int dm = c.op("neg", {adjoint ? mm(c, x, mT(c, db)) : mm(c, db, mT(c, x))});
    out[0] = lower ? band(c, dm, -1, 0) : band(c, dm, 0, -1);
  }
  return out;
});

PJ_REGISTER_GRAD("cholesky", [](GradContext& c, const GradArgs& g) -> Grads {
  const bool upper = g.attrs->b("upper");
  const int l = upper ? mT(c, g.out[0]) : g.out[0];
  const int dl = upper ? mT(c, g.dout[0]) : g.dout[0];
  const int x = mm(c, mT(c, l), dl);
  const int phi = c.op("sub", {band(c, x, -1, 0), c.op("mul", {band(c, x, 0, 0), c.scalar_like(0.5, x)})});
  const int z = tri_solve(c, l, phi, true, true);         // L^-T Phi
  const int st = tri_solve(c, l, mT(c, z), true, true);   // (Z L^-1)^T = L^-T Z^T
  const int s = c.op("add", {st, mT(c, st)});
  return {c.op("mul", {s, c.scalar_like(0.5, s)})};
});

PJ_REGISTER_GRAD("cholesky_solve", [](GradContext& c, const GradArgs& g) -> Grads {
  // X = A^-1 B, A = L L^T (U^T U): dB = A^-1 dX; dA = -dB X^T, whose symmetric part S gives
  // dL = S L (dU = U S), kept to the triangle the kernel reads
  const bool upper = g.attrs->b("upper");
  const int db = c.op("cholesky_solve", {g.dout[0], g.in[1]}, Attrs{{"upper", upper}});
  Grads out{g.needs[0] ? db : kNoGrad, kNoGrad};
  if (g.needs[1]) {
    const int da = c.op("neg", {mm(c, db, mT(c, g.out[0]))});
    const int sym = c.op("add", {da, mT(c, da)});
    out[1] = upper ? band(c, mm(c, g.in[1], sym), 0, -1) : band(c, mm(c, sym, g.in[1]), -1, 0);
  }
  return out;
});

PJ_REGISTER_GRAD("qr", [](GradContext& c, const GradArgs& g) -> Grads {
  const Shape s = g.in_meta(c, 0).shape;
  const int64_t m = s[s.size() - 2], n = s.back();
  if (m < n || (g.attrs->b("full_matrices") && m != n))
    PJ_THROW(Value) << "For 'Qr', the gradient is implemented for square inputs and for tall inputs with "
                    << "full_matrices=False, but got shape " << shape_str(s)
                    << (g.attrs->b("full_matrices") ? " with full_matrices=True" : "");
  const int q = g.out[0], r = g.out[1];
  const int dq = or_zeros(c, g.dout[0], q), dr = or_zeros(c, g.dout[1], r);
  const int mmat = c.op("sub", {mm(c, r, mT(c, dr)), mm(c, mT(c, dq), q)});
  const int low = band(c, mmat, -1, 0);
  const int copyltu = c.op("sub", {c.op("add", {low, mT(c, low)}), band(c, mmat, 0, 0)});
  const int b = c.op("add", {dq, mm(c, q, copyltu)});
  // B R^-T: X R^T = B  <=>  R X^T = B^T
  return {mT(c, tri_solve(c, r, mT(c, b), false, false))};
});

PJ_REGISTER_GRAD("svd", [](GradContext& c, const GradArgs& g) -> Grads {
  const Shape shape = g.in_meta(c, 0).shape;
  const int64_t m = shape[shape.size() - 2], n = shape.back();
  const bool full = g.attrs->b("full_matrices");
  const bool has_uv = g.out.size() == 3;
  const int du = has_uv ? g.dout[1] : kNoGrad, dv = has_uv ? g.dout[2] : kNoGrad;
  if (full && m != n && (du != kNoGrad || dv != kNoGrad))
    PJ_THROW(Value) << "For 'Svd', the gradient through u or v with full_matrices=True is only defined for square "
                    << "inputs (the extra singular vectors are arbitrary), but got shape " << shape_str(shape);
  int s = g.out[0], u, v;
  if (has_uv && (!full || m == n)) {
    u = g.out[1];
    v = g.out[2];
  } else {  // the reduced vectors (recomputed when they were not asked for)
    std::vector<int> r = c.emit(get_op("svd"), {g.in[0]}, Attrs{{"full_matrices", false}, {"compute_uv", true}});
    u = r[1];
    v = r[2];
  }
  Shape row = c.meta(s).shape, col = row;  // [..., k] -> [..., 1, k] and [..., k, 1]
  row.insert(row.end() - 1, 1);
  col.push_back(1);
  const int s_row = reshape(c, s, row), s_col = reshape(c, s, col);
  const int64_t k = std::min(m, n);
  Shape kk = row;
  kk[kk.size() - 2] = k;
  auto add = [&](int acc, int t) { return acc == kNoGrad ? t : c.op("add", {acc, t}); };
  // inner [..., k, k], the part of dA between U and V^T
  int inner = kNoGrad;
  if (g.dout[0] != kNoGrad) {
    Shape srow = c.meta(g.dout[0]).shape;
    srow.insert(srow.end() - 1, 1);
    const int ds_row = reshape(c, g.dout[0], srow);
    inner = band(c, c.op("broadcast_to", {ds_row}, Attrs{{"shape", dims_of(kk)}}), 0, 0);  // diag(dS)
  }
  if (du != kNoGrad || dv != kNoGrad) {
    // F_ij = 1 / (s_j^2 - s_i^2) off the diagonal (and 0 where values repeat: PyTorch gives inf)
    const int s2r = c.op("mul", {s_row, s_row}), s2c = c.op("mul", {s_col, s_col});
    const int diff = c.op("sub", {s2r, s2c});
    const int zero = c.scalar_like(0, diff);
    const int same = c.op("eq", {diff, zero});
    const int f = c.op("where", {same, zero, c.op("div", {c.scalar_like(1, diff), diff})});
    auto skew = [&](int x, int dx) {  // F o (X^T dX - dX^T X)
      const int t = mm(c, mT(c, x), dx);
      return c.op("mul", {f, c.op("sub", {t, mT(c, t)})});
    };
    if (du != kNoGrad) inner = add(inner, c.op("mul", {skew(u, du), s_row}));
    if (dv != kNoGrad) inner = add(inner, c.op("mul", {s_col, skew(v, dv)}));
  }
  int da = inner == kNoGrad ? kNoGrad : mm(c, mm(c, u, inner), mT(c, v));
  if (du != kNoGrad && m > k) {  // (I - U U^T) dU S^-1 V^T
    const int us = c.op("div", {du, s_row});
    da = add(da, mm(c, c.op("sub", {us, mm(c, u, mm(c, mT(c, u), us))}), mT(c, v)));
  }
  if (dv != kNoGrad && n > k) {  // U S^-1 dV^T (I - V V^T)
    const int vs = c.op("div", {dv, s_row});
    da = add(da, mm(c, u, mT(c, c.op("sub", {vs, mm(c, v, mm(c, mT(c, v), vs))}))));
  }
  return {da};
});

PJ_REGISTER_GRAD("eigh", [](GradContext& c, const GradArgs& g) -> Grads {
  // A = V diag(w) V^T: dA = V (diag(dw) + F o (V^T dV)) V^T, F_ij = 1 / (w_j - w_i) off the
  // diagonal (0 where eigenvalues repeat), symmetrised as the input is read as symmetric
  const bool has_v = g.out.size() == 2;
  const int dv = has_v ? g.dout[1] : kNoGrad;
  const int w = g.out[0];
  const int v = has_v ? g.out[1]
                      : c.emit(get_op("eigh"), {g.in[0]}, Attrs{{"lower", g.attrs->b("lower", true)}, {"compute_v", true}})[1];
  Shape row = c.meta(w).shape, col = row;
  row.insert(row.end() - 1, 1);
  col.push_back(1);
  const int64_t n = row.back();
  Shape nn = row;
  nn[nn.size() - 2] = n;
  int inner = kNoGrad;
  if (g.dout[0] != kNoGrad)
    inner = band(c, c.op("broadcast_to", {reshape(c, g.dout[0], row)}, Attrs{{"shape", dims_of(nn)}}), 0, 0);
  if (dv != kNoGrad) {
    const int diff = c.op("sub", {reshape(c, w, row), reshape(c, w, col)});
    const int zero = c.scalar_like(0, diff);
    const int f = c.op("where", {c.op("eq", {diff, zero}), zero, c.op("div", {c.scalar_like(1, diff), diff})});
    const int t = c.op("mul", {f, mm(c, mT(c, v), dv)});
    inner = inner == kNoGrad ? t : c.op("add", {inner, t});
  }
  const int da = mm(c, mm(c, v, inner), mT(c, v));
  const int s = c.op("add", {da, mT(c, da)});
  return {c.op("mul", {s, c.scalar_like(0.5, s)})};
});

PJ_REGISTER_GRAD("matrix_band_part", [](GradContext& c, const GradArgs& g) -> Grads {
  return {band(c, g.dout[0], g.attrs->i("lower", -1), g.attrs->i("upper", -1))};
});

}  // namespace
}  // namespace pj
