// Dense linear algebra on the CPU, in pijit's own code (no LAPACK): LU with partial pivoting
// (inverse, determinant, solve), Cholesky, triangular solves, Householder QR, one-sided Jacobi SVD,
// cyclic Jacobi for symmetric eigenproblems, and the Padé matrix exponential.
//
// Every function takes contiguous float32 or float64 tensors shaped [..., rows, cols] (one batch
// of matrices, batch dims already equal) and writes into contiguous outputs the caller allocated
// (graph/ops/linalg_ops.cc owns shapes and user errors). Each matrix is loaded into a double
// buffer, computed in double and rounded once into the output's dtype, so float32 results are
// float32-rounded double results. Batches run in parallel (kernels/threading.h); a single large
// matrix parallelises only where one fork buys a lot of work (LU's trailing update per panel
// past n ~ 600, right-hand-side columns, products): a fork per column stalls on a busy machine.
//
// Singular inputs follow LAPACK: a zero pivot is not eliminated, the determinant is 0 and solving
// with it gives inf/nan. The functions that report a failure return the first failing batch
// index (-1: none), so the op can raise MindSpore's error.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace pj {

// out = inverse(a) (of a^T when adjoint: real matrices only).
void linalg_inverse(const Tensor& a, const Tensor& out, bool adjoint);
// LAPACK's getrf for square a: lu holds L (unit diagonal, below) and U; piv [..., n] (Int32 or
// Int64) the 1-based row swapped with row i at step i (a = P L U, P from the swaps in order).
void linalg_lu_factor(const Tensor& a, const Tensor& lu, const Tensor& piv);
// out solves a x = b from lu_factor's lu and 1-based piv. Returns the first batch whose pivots
// are out of range [1, n], or -1.
int64_t linalg_lu_solve(const Tensor& lu, const Tensor& piv, const Tensor& b, const Tensor& out);
// p [..., n, n] (p's dtype) with a = p l u for lu_factor's 1-based piv. Returns as lu_solve.
int64_t linalg_lu_permutation(const Tensor& piv, const Tensor& p);
// out[...] = det(a).
void linalg_det(const Tensor& a, const Tensor& out);
// sign[...] in {-1, 0, 1} and logabs[...] = log|det(a)| (-inf for a singular matrix).
void linalg_slogdet(const Tensor& a, const Tensor& sign, const Tensor& logabs);
// out [..., n, k] solves a x = b (a^T x = b when adjoint). Returns the first batch index whose
// matrix has an exactly zero pivot (its result is not written), or -1.
int64_t linalg_solve(const Tensor& a, const Tensor& b, const Tensor& out, bool adjoint);
// out = L with L L^T = a from a's lower triangle (upper: U with U^T U = a, from the upper
// triangle). Returns the first batch index that is not positive definite, or -1.
int64_t linalg_cholesky(const Tensor& a, const Tensor& out, bool upper);
// out solves (L L^T) x = b, L the lower factor (upper: the factor U, A = U^T U).
void linalg_cholesky_solve(const Tensor& b, const Tensor& factor, const Tensor& out, bool upper);
// out solves T x = b, T the lower (or upper) triangle of a, transposed when adjoint; the other
// triangle is not read. unit_diagonal: T's diagonal is taken as ones.
void linalg_triangular_solve(const Tensor& a, const Tensor& b, const Tensor& out, bool lower, bool adjoint,
                             bool unit_diagonal);
// a [m, n] = q [m, p] r [p, n], p = m (full) or min(m, n). Householder reflections with LAPACK's
// sign convention (r's diagonal may be negative, as numpy's and torch's).
void linalg_qr(const Tensor& a, const Tensor& q, const Tensor& r, bool full);
// LAPACK's geqrf: y holds R on and above the diagonal and the reflectors' vectors below it (v[0] =
// 1 implied), tau [min(m, n)] their scales. orgqr: q [m, n] (n <= m), the first n columns of
// H_0 ... H_{k-1} from such a y and tau [k] (k <= n).
void linalg_geqrf(const Tensor& a, const Tensor& y, const Tensor& tau);
void linalg_orgqr(const Tensor& h, const Tensor& tau, const Tensor& q);
// a [m, n] = u diag(s) v^T, s [k] descending (k = min(m, n)), u [m, k or m], v [n, k or n].
// u and v may be undefined tensors (compute_uv=False).
void linalg_svd(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& v, bool full);
// Symmetric a (its lower triangle, or upper) = v diag(w) v^T, w ascending. v may be undefined.
void linalg_eigh(const Tensor& a, const Tensor& w, const Tensor& v, bool lower);
// out = exp(a): scaling and squaring with the degree-13 Padé approximant.
void linalg_matrix_exp(const Tensor& a, const Tensor& out);
// out = a with the elements outside the band lower >= i - j, j - i <= upper zeroed (negative: no
// limit on that side). Any numeric dtype.
void linalg_band_part(const Tensor& a, const Tensor& out, int64_t lower, int64_t upper);

}  // namespace pj
