// Dense linear algebra ops with MindSpore's semantics (kernels/linalg.h has the algorithms). This
// file owns attribute parsing and every user-facing error; messages name MindSpore's primitive and
// the shape. Matrices are the last two dims; any leading dims are a batch. Inputs are float32 or
// float64 (TypeError otherwise); results keep the input's dtype (two inputs: promoted).
//
//   matrix_inverse(x [..., n, n]; adjoint=False)            singular: inf/nan, as MindSpore's CPU
//   matrix_determinant(x [..., n, n]) -> [...]
//   log_matrix_determinant(x) -> (sign [...], log|det| [...])
//   matrix_solve(matrix [..., n, n], rhs [..., n, k]; adjoint=False)
//                                     an exactly singular matrix: ValueError (MindSpore's CPU kernel)
//   lu_factor(a [..., n, n]) -> (lu, pivots Int32 [..., n], 1-based: torch.linalg.lu_factor's)
//   lu_solve(b [..., n, k], lu, pivots)     pivots outside [1, n]: ValueError
//   lu_permutation(lu, pivots) -> p with a = p l u (LuUnpack's first output)
//   cholesky(x [..., n, n]; upper=False)   not positive definite: ValueError
//   cholesky_solve(rhs [..., n, k], factor [..., n, n]; upper=False)
//   matrix_triangular_solve(matrix, rhs; lower=True, adjoint=False, unit_diagonal=False)
//   qr(x [..., m, n]; full_matrices=False) -> (q [..., m, p], r [..., p, n]), p = m or min(m, n)
//   geqrf(x [..., m, n]) -> (y [..., m, n], tau [..., min(m, n)])   LAPACK's packed Householder QR
//   orgqr(x [..., m, n], tau [..., k]) -> q [..., m, n]               m >= n >= k
//   svd(x [..., m, n]; full_matrices=False, compute_uv=True) -> (s, u, v) or (s,)
//                                     x = u diag(s) v^T (MindSpore returns v, not v^T)
//   eigh(x [..., n, n]; lower=True, compute_v=True) -> (w ascending, v) or (w,)
//   matrix_exp(x [..., n, n])
//   matrix_band_part(x [..., m, n]; lower, upper)  (any numeric dtype)
// Batch dims of two-input ops must be equal here; the Python forms broadcast them first.
#include "graph/ops/op_helpers.h"
#include "kernels/linalg.h"

namespace pj {
namespace {

void require_float(const char* prim, const char* what, DType t) {
  if (t != DType::Float32 && t != DType::Float64)
    PJ_THROW(Type) << "For '" << prim << "', the dtype of '" << what << "' must be float32 or float64, but got "
                   << dtype_name(t);
}

// [..., r, c] with at least two dims.
void require_matrix(const char* prim, const char* what, const TensorMeta& m) {
  require_float(prim, what, m.dtype);
  if (m.shape.size() < 2)
    PJ_THROW(Value) << "For '" << prim << "', the '" << what << "' must have at least 2 dimensions [..., M, N], but got shape "
                    << shape_str(m.shape);
}

void require_square(const char* prim, const char* what, const TensorMeta& m) {
  require_matrix(prim, what, m);
  const size_t d = m.shape.size();
  if (m.shape[d - 1] != m.shape[d - 2])
    PJ_THROW(Value) << "For '" << prim << "', the '" << what << "' must be a batch of square matrices [..., M, M], but got shape "
                    << shape_str(m.shape);
}

Shape batch_of(const Shape& s) { return Shape(s.begin(), s.end() - 2); }
Shape with_matrix(Shape b, int64_t r, int64_t c) {
  b.push_back(r);
  b.push_back(c);
  return b;
}

// A square matrix and a right-hand side [..., n, k] with the same batch dims.
DType check_system(const char* prim, const char* mname, const TensorMeta& a, const char* bname, const TensorMeta& b) {
  require_square(prim, mname, a);
  require_matrix(prim, bname, b);
  const int64_t n = a.shape.back();
  if (b.shape[b.shape.size() - 2] != n || batch_of(a.shape) != batch_of(b.shape))
    PJ_THROW(Value) << "For '" << prim << "', the '" << bname << "' must have shape [..., " << n << ", K] with the batch dims of '"
                    << mname << "' " << shape_str(a.shape) << ", but got " << shape_str(b.shape);
  return promote(a.dtype, b.dtype);
}

Tensor dense_in(const Tensor& t, DType dt) { return as_dtype(t, dt).contiguous(); }

// Runs f on contiguous stand-ins for the outputs, copied back into any that were views.
template <typename F>
void with_dense_outs(const Tensors& out, F f) {
  Tensors d;
  for (const Tensor& o : out) d.push_back(o.is_contiguous() ? o : Tensor::empty(o.shape(), o.dtype()));
  f(d);
  for (size_t i = 0; i < out.size(); ++i)
    if (!d[i].same_storage(out[i])) copy_into(out[i], d[i]);
}

// " (batch element (1, 0))" for matrix i of a batch, "" without batch dims.
std::string batch_index(const Shape& batch, int64_t i) {
  if (batch.empty()) return "";
  std::vector<int64_t> idx(batch.size());
  for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
    idx[d] = i % batch[d];
    i /= batch[d];
  }
  return " (batch element " + shape_str(Shape(idx.begin(), idx.end())) + ")";
}

PJ_REGISTER_OP("matrix_inverse")
    .inputs(1)
    .attrs({"adjoint"})
    .total()
    .infer([](const Metas& in, const Attrs&) {
      require_square("MatrixInverse", "x", in[0]);
      return one(in[0].shape, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) { linalg_inverse(dense_in(in[0], o[0].dtype()), o[0], a.b("adjoint")); });
    });

PJ_REGISTER_OP("matrix_determinant")
    .inputs(1)
    .total()
    .infer([](const Metas& in, const Attrs&) {
      require_square("MatrixDeterminant", "x", in[0]);
      return one(batch_of(in[0].shape), in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) { linalg_det(dense_in(in[0], o[0].dtype()), o[0]); });
    });

PJ_REGISTER_OP("log_matrix_determinant")
    .inputs(1)
    .total()
    .infer([](const Metas& in, const Attrs&) {
      require_square("LogMatrixDeterminant", "x", in[0]);
      const Shape b = batch_of(in[0].shape);
      return Metas{TensorMeta{b, in[0].dtype}, TensorMeta{b, in[0].dtype}};
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) { linalg_slogdet(dense_in(in[0], o[0].dtype()), o[0], o[1]); });
    });

PJ_REGISTER_OP("matrix_solve")
    .inputs(2)
    .attrs({"adjoint"})
    .raises_on_values()
    .infer([](const Metas& in, const Attrs&) {
      return one(in[1].shape, check_system("MatrixSolve", "matrix", in[0], "rhs", in[1]));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        const DType t = o[0].dtype();
        const int64_t bad = linalg_solve(dense_in(in[0], t), dense_in(in[1], t), o[0], a.b("adjoint"));
        if (bad >= 0)
          PJ_THROW(Value) << "For 'MatrixSolve', the input 'matrix' is not invertible"
                          << batch_index(batch_of(in[0].shape()), bad) << ".";
      });
    });

void require_pivots(const char* prim, const TensorMeta& piv, const Shape& lu) {
  if (piv.dtype != DType::Int32 && piv.dtype != DType::Int64)
    PJ_THROW(Type) << "For '" << prim << "', the dtype of 'LU_pivots' must be int32 or int64, but got " << dtype_name(piv.dtype);
  Shape want = batch_of(lu);
  want.push_back(lu.back());
  if (piv.shape != want)
    PJ_THROW(Value) << "For '" << prim << "', the 'LU_pivots' must have shape " << shape_str(want) << " for 'LU_data' "
                    << shape_str(lu) << ", but got " << shape_str(piv.shape);
}

PJ_REGISTER_OP("lu_factor")
    .inputs(1)
    .total()
    .infer([](const Metas& in, const Attrs&) {
      require_square("LuFactor", "A", in[0]);
      Shape p = batch_of(in[0].shape);
      p.push_back(in[0].shape.back());
      return Metas{in[0], TensorMeta{p, DType::Int32}};
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) { linalg_lu_factor(dense_in(in[0], o[0].dtype()), o[0], o[1]); });
    });

PJ_REGISTER_OP("lu_solve")
    .inputs(3)
    .raises_on_values()
    .infer([](const Metas& in, const Attrs&) {
      const DType t = check_system("LuSolve", "lu_data", in[1], "x", in[0]);
      require_pivots("LuSolve", in[2], in[1].shape);
      return one(in[0].shape, t);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        const DType t = o[0].dtype();
        const int64_t bad = linalg_lu_solve(dense_in(in[1], t), in[2].contiguous(), dense_in(in[0], t), o[0]);
        if (bad >= 0)
          PJ_THROW(Value) << "For 'LuSolve', the 'lu_pivots' must lie in [1, " << in[1].shape().back() << "]"
                          << batch_index(batch_of(in[1].shape()), bad) << ".";
      });
    });

PJ_REGISTER_OP("lu_permutation")
    .inputs(2)
    .raises_on_values()
    .infer([](const Metas& in, const Attrs&) {
      require_square("LuUnpack", "LU_data", in[0]);
      require_pivots("LuUnpack", in[1], in[0].shape);
      return one(in[0].shape, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        const int64_t bad = linalg_lu_permutation(in[1].contiguous(), o[0]);
        if (bad >= 0)
          PJ_THROW(Value) << "For 'LuUnpack', the 'LU_pivots' must lie in [1, " << in[0].shape().back() << "]"
                          << batch_index(batch_of(in[0].shape()), bad) << ".";
      });
    });

PJ_REGISTER_OP("cholesky")
    .inputs(1)
    .attrs({"upper"})
    .raises_on_values()
    .infer([](const Metas& in, const Attrs&) {
      require_square("Cholesky", "input_x", in[0]);
      return one(in[0].shape, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        const int64_t bad = linalg_cholesky(dense_in(in[0], o[0].dtype()), o[0], a.b("upper"));
        if (bad >= 0)
          PJ_THROW(Value) << "For 'Cholesky', the input matrix is not symmetric positive definite"
                          << batch_index(batch_of(in[0].shape()), bad) << ".";
      });
    });

PJ_REGISTER_OP("cholesky_solve")
    .inputs(2)
    .attrs({"upper"})
    .total()
    .infer([](const Metas& in, const Attrs&) {
      return one(in[0].shape, check_system("CholeskySolve", "x2", in[1], "x1", in[0]));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        const DType t = o[0].dtype();
        linalg_cholesky_solve(dense_in(in[0], t), dense_in(in[1], t), o[0], a.b("upper"));
      });
    });

PJ_REGISTER_OP("matrix_triangular_solve")
    .inputs(2)
    .attrs({"lower", "adjoint", "unit_diagonal"})
    .total()
    .infer([](const Metas& in, const Attrs&) {
      return one(in[1].shape, check_system("MatrixTriangularSolve", "matrix", in[0], "rhs", in[1]));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        const DType t = o[0].dtype();
        linalg_triangular_solve(dense_in(in[0], t), dense_in(in[1], t), o[0], a.b("lower", true), a.b("adjoint"),
                                a.b("unit_diagonal"));
      });
    });

PJ_REGISTER_OP("qr")
    .inputs(1)
    .attrs({"full_matrices"})
    .total()
    .infer([](const Metas& in, const Attrs& a) {
      require_matrix("Qr", "x", in[0]);
      const Shape& s = in[0].shape;
      const int64_t m = s[s.size() - 2], n = s.back(), p = a.b("full_matrices") ? m : std::min(m, n);
      const Shape b = batch_of(s);
      return Metas{TensorMeta{with_matrix(b, m, p), in[0].dtype}, TensorMeta{with_matrix(b, p, n), in[0].dtype}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        linalg_qr(dense_in(in[0], o[0].dtype()), o[0], o[1], a.b("full_matrices"));
      });
    });

PJ_REGISTER_OP("geqrf")
    .inputs(1)
    .total()
    .infer([](const Metas& in, const Attrs&) {
      require_matrix("Geqrf", "x", in[0]);
      const Shape& s = in[0].shape;
      Shape t = batch_of(s);
      t.push_back(std::min(s[s.size() - 2], s.back()));
      return Metas{in[0], TensorMeta{t, in[0].dtype}};
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) { linalg_geqrf(dense_in(in[0], o[0].dtype()), o[0], o[1]); });
    });

PJ_REGISTER_OP("orgqr")
    .inputs(2)
    .total()
    .infer([](const Metas& in, const Attrs&) {
      require_matrix("Orgqr", "x", in[0]);
      require_float("Orgqr", "tau", in[1].dtype);
      const Shape& s = in[0].shape;
      const int64_t m = s[s.size() - 2], n = s.back();
      Shape want = batch_of(s);
      if (n > m)
        PJ_THROW(Value) << "For 'Orgqr', the 'x' must have at least as many rows as columns [..., M, N], M >= N, but got shape "
                        << shape_str(s);
      const Shape& t = in[1].shape;
      if (t.size() != s.size() - 1 || Shape(t.begin(), t.end() - 1) != want || t.back() > n)
        PJ_THROW(Value) << "For 'Orgqr', the 'tau' must have shape [..., K] with the batch dims of 'x' " << shape_str(s)
                        << " and K <= " << n << ", but got " << shape_str(in[1].shape);
      return one(s, promote(in[0].dtype, in[1].dtype));
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        const DType t = o[0].dtype();
        linalg_orgqr(dense_in(in[0], t), dense_in(in[1], t), o[0]);
      });
    });

PJ_REGISTER_OP("svd")
    .inputs(1)
    .attrs({"full_matrices", "compute_uv"})
    .total()
    .infer([](const Metas& in, const Attrs& a) {
      require_matrix("Svd", "input_x", in[0]);
      const Shape& s = in[0].shape;
      const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
      const bool full = a.b("full_matrices");
      Shape sv = batch_of(s);
      Metas r{TensorMeta{sv, in[0].dtype}};
      sv.push_back(k);
      r[0].shape = sv;
      if (!a.b("compute_uv", true)) return r;
      r.push_back(TensorMeta{with_matrix(batch_of(s), m, full ? m : k), in[0].dtype});
      r.push_back(TensorMeta{with_matrix(batch_of(s), n, full ? n : k), in[0].dtype});
      return r;
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        const bool uv = o.size() == 3;
        linalg_svd(dense_in(in[0], o[0].dtype()), o[0], uv ? o[1] : Tensor(), uv ? o[2] : Tensor(),
                   a.b("full_matrices"));
      });
    });

PJ_REGISTER_OP("eigh")
    .inputs(1)
    .attrs({"lower", "compute_v"})
    .total()
    .infer([](const Metas& in, const Attrs& a) {
      require_square("Eigh", "a", in[0]);
      Shape w = batch_of(in[0].shape);
      w.push_back(in[0].shape.back());
      Metas r{TensorMeta{w, in[0].dtype}};
      if (a.b("compute_v", true)) r.push_back(in[0]);
      return r;
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        linalg_eigh(dense_in(in[0], o[0].dtype()), o[0], o.size() == 2 ? o[1] : Tensor(), a.b("lower", true));
      });
    });

PJ_REGISTER_OP("matrix_exp")
    .inputs(1)
    .total()
    .infer([](const Metas& in, const Attrs&) {
      require_square("MatrixExp", "x", in[0]);
      return one(in[0].shape, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) { linalg_matrix_exp(dense_in(in[0], o[0].dtype()), o[0]); });
    });

PJ_REGISTER_OP("matrix_band_part")
    .inputs(1)
    .attrs({"lower", "upper"})
    .total()
    .infer([](const Metas& in, const Attrs&) {
      if (in[0].shape.size() < 2)
        PJ_THROW(Value) << "For 'MatrixBandPart', the 'x' must have at least 2 dimensions, but got shape "
                        << shape_str(in[0].shape);
      return one(in[0].shape, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      with_dense_outs(out, [&](const Tensors& o) {
        linalg_band_part(in[0].contiguous(), o[0], a.i("lower", -1), a.i("upper", -1));
      });
    });

}  // namespace
}  // namespace pj
