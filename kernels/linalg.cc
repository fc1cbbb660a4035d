// LU-based kernels (inverse, determinant, solve), Cholesky, triangular solves, the matrix
// exponential and band masks. QR, SVD and eigh are in linalg_decomp.cc. See linalg.h.
#include "kernels/linalg.h"

#include <cmath>
#include <limits>

#include "common/check.h"
#include "kernels/linalg_detail.h"

namespace pj {

using namespace linalg_detail;

namespace linalg_detail {

void gemm(const double* a, const double* b, double* c, int64_t n, int64_t k, int64_t m) {
  rows_parallel(n, k * m, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      double* ci = c + i * m;
      std::fill(ci, ci + m, 0.0);
      for (int64_t p = 0; p < k; ++p) {
        const double aip = a[i * k + p];
        if (aip == 0) continue;
        const double* bp = b + p * m;
        for (int64_t j = 0; j < m; ++j) ci[j] += aip * bp[j];
      }
    }
  });
}

}  // namespace linalg_detail

namespace {

// r_t[j] -= sum_{q in [q0, q1)} c_t[q] * src[q * stride + j] for four rows r_0..r_3 and j in
// [j0, j1): each source row is read once for all four (the inner kernel of a matrix product).
// The source rows are never the destination rows.
void sub_products4(double* __restrict__ r0, double* __restrict__ r1, double* __restrict__ r2, double* __restrict__ r3,
                   const double* c0, const double* c1, const double* c2, const double* c3, const double* src,
                   int64_t stride, int64_t q0, int64_t q1, int64_t j0, int64_t j1) {
  for (int64_t q = q0; q < q1; ++q) {
    const double l0 = c0[q], l1 = c1[q], l2 = c2[q], l3 = c3[q];
    if (l0 == 0 && l1 == 0 && l2 == 0 && l3 == 0) continue;
    const double* __restrict__ u = src + q * stride;
    for (int64_t j = j0; j < j1; ++j) {
      const double v = u[j];
      r0[j] -= l0 * v;
      r1[j] -= l1 * v;
      r2[j] -= l2 * v;
      r3[j] -= l3 * v;
    }
  }
}

// In place P a = L U for a row-major n x n matrix: L (unit diagonal) below the diagonal, U on and
// above it; piv[k] is the row swapped with row k at step k. Returns the permutation's sign. A zero
// pivot column is left as it is (LAPACK's getrf with info > 0), so U has a zero on its diagonal.
// Blocked right-looking: a panel of kBlock columns is factored on its own, then the rows to its
// right are solved and the trailing matrix updated in one pass (the only parallel step, for large
// matrices: a fork per panel, not per column, so a busy machine does not stall on barriers).
int lu_factor(double* a, int64_t n, int64_t* piv) {
  constexpr int64_t kBlock = 48;
  int sign = 1;
  for (int64_t kb = 0; kb < n; kb += kBlock) {
    const int64_t pe = std::min(n, kb + kBlock);  // panel columns [kb, pe)
    for (int64_t k = kb; k < pe; ++k) {
      int64_t p = k;
      double best = std::fabs(a[k * n + k]);
      for (int64_t i = k + 1; i < n; ++i) {
        const double v = std::fabs(a[i * n + k]);
        if (v > best || std::isnan(v)) {
          best = v;
          p = i;
          if (std::isnan(v)) break;
        }
      }
      piv[k] = p;
      if (p != k) {
        std::swap_ranges(a + k * n, a + (k + 1) * n, a + p * n);
        sign = -sign;
      }
      const double d = a[k * n + k];
      if (d == 0) continue;  // the column below is all zero: nothing to eliminate
      const double* rk = a + k * n;
      for (int64_t i = k + 1; i < n; ++i) {
        double* ri = a + i * n;
        const double l = ri[k] / d;
        ri[k] = l;
        if (l == 0) continue;
        for (int64_t j = k + 1; j < pe; ++j) ri[j] -= l * rk[j];
      }
    }
    if (pe == n) break;
    // U12 = L11^-1 A12 (rows of the panel, columns right of it)
    for (int64_t r = kb; r < pe; ++r) {
      double* rr = a + r * n;
      for (int64_t q = kb; q < r; ++q) {
        const double l = rr[q];
        if (l == 0) continue;
        const double* rq = a + q * n;
        for (int64_t j = pe; j < n; ++j) rr[j] -= l * rq[j];
      }
    }
    // A22 -= L21 U12; in parallel only from ~64M flops a panel (n >~ 600): below that a fork that
    // meets a busy core costs more than the update (512x512: 5 ms on one thread, 80 ms when the
    // other core was taken)
    const int64_t rest = n - pe;
    const double flops = 2.0 * (pe - kb) * rest * rest;
    auto update = [&](int64_t b, int64_t e) {
      int64_t i = pe + b;
      for (; i + 4 <= pe + e; i += 4) {
        double *r0 = a + i * n, *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
        sub_products4(r0, r1, r2, r3, r0, r1, r2, r3, a, n, kb, pe, pe, n);
      }
      for (; i < pe + e; ++i) {
        double* ri = a + i * n;
        for (int64_t q = kb; q < pe; ++q) {
          const double l = ri[q];
          if (l == 0) continue;
          const double* rq = a + q * n;
          for (int64_t j = pe; j < n; ++j) ri[j] -= l * rq[j];
        }
      }
    };
    if (flops < 6.4e7) update(0, rest);
    else parallel_for(rest, 8, update);
  }
  return sign;
}

// Solves T x = b in place for b [n, k] (row-major), T triangular and row-major n x n: lower or
// upper, with a unit diagonal when `unit`. Columns of b are independent: chunks of them run in
// parallel.
void tri_solve(const double* t, int64_t n, bool lower, bool unit, double* b, int64_t k) {
  parallel_for(k, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n * n, 1)), [&](int64_t c0, int64_t c1) {
    // one row: subtract the solved rows [j0, j1), then divide by the diagonal
    auto finish_row = [&](int64_t i, int64_t j0, int64_t j1) {
      double* bi = b + i * k;
      for (int64_t j = j0; j < j1; ++j) {
        const double tij = t[i * n + j];
        if (tij == 0) continue;
        const double* bj = b + j * k;
        for (int64_t c = c0; c < c1; ++c) bi[c] -= tij * bj[c];
      }
      if (!unit) {
        const double d = t[i * n + i];
        for (int64_t c = c0; c < c1; ++c) bi[c] /= d;
      }
    };
    // groups of four rows: what the rows solved before the group contribute is subtracted from
    // all four at once, then the group's own small triangle is solved row by row
    for (int64_t s = 0; s < n; s += 4) {
      const int64_t g = std::min<int64_t>(4, n - s);
      if (lower) {
        const int64_t i = s;
        if (g == 4) {
          double* r0 = b + i * k;
          sub_products4(r0, r0 + k, r0 + 2 * k, r0 + 3 * k, t + i * n, t + (i + 1) * n, t + (i + 2) * n,
                        t + (i + 3) * n, b, k, 0, i, c0, c1);
          for (int64_t r = 0; r < 4; ++r) finish_row(i + r, i, i + r);
        } else {
          for (int64_t r = 0; r < g; ++r) finish_row(i + r, 0, i + r);
        }
      } else {
        const int64_t top = n - s - g;  // rows [top, top + g), solved bottom up
        if (g == 4) {
          double* r0 = b + top * k;
          sub_products4(r0, r0 + k, r0 + 2 * k, r0 + 3 * k, t + top * n, t + (top + 1) * n, t + (top + 2) * n,
                        t + (top + 3) * n, b, k, top + 4, n, c0, c1);
          for (int64_t r = 3; r >= 0; --r) finish_row(top + r, top + r + 1, top + 4);
        } else {
          for (int64_t r = g - 1; r >= 0; --r) finish_row(top + r, top + r + 1, n);
        }
      }
    }
  });
}

// Solves a x = b in place with a's LU factors (b [n, k]).
void lu_solve(const double* lu, const int64_t* piv, int64_t n, double* b, int64_t k) {
  for (int64_t i = 0; i < n; ++i)
    if (piv[i] != i) std::swap_ranges(b + i * k, b + (i + 1) * k, b + piv[i] * k);
  tri_solve(lu, n, true, true, b, k);
  tri_solve(lu, n, false, false, b, k);
}

double lu_cost(int64_t n) { return 2.0 / 3.0 * static_cast<double>(n) * n * n; }

}  // namespace

void linalg_inverse(const Tensor& a, const Tensor& out, bool adjoint) {
  const int64_t n = a.dim(a.ndim() - 1);
  each_matrix(batch_of(a), 3 * lu_cost(n), [&](int64_t i) {
    Buf m(n * n), x(n * n, 0.0);
    std::vector<int64_t> piv(n);
    load(a, i, n, n, adjoint, m.data());
    lu_factor(m.data(), n, piv.data());
    for (int64_t d = 0; d < n; ++d) x[d * n + d] = 1;
    lu_solve(m.data(), piv.data(), n, x.data(), n);
    store(out, i, n, n, false, x.data());
  });
}

namespace {
int64_t pivot_at(const Tensor& piv, int64_t i) {
  return piv.dtype() == DType::Int32 ? piv.data<int32_t>()[i] : piv.data<int64_t>()[i];
}
// Matrix i's pivots, 0-based; false when one is outside [1, n].
bool load_pivots(const Tensor& piv, int64_t i, int64_t n, std::vector<int64_t>& out) {
  out.resize(n);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t p = pivot_at(piv, i * n + k);
    if (p < 1 || p > n) return false;
    out[k] = p - 1;
  }
  return true;
}
int64_t first_failed(const std::vector<char>& failed) {
  for (size_t i = 0; i < failed.size(); ++i)
    if (failed[i]) return static_cast<int64_t>(i);
  return -1;
}
}  // namespace

void linalg_lu_factor(const Tensor& a, const Tensor& lu, const Tensor& piv) {
  const int64_t n = a.dim(a.ndim() - 1);
  each_matrix(batch_of(a), lu_cost(n), [&](int64_t i) {
    Buf m(n * n);
    std::vector<int64_t> p(n);
    load(a, i, n, n, false, m.data());
    lu_factor(m.data(), n, p.data());
    store(lu, i, n, n, false, m.data());
    for (int64_t k = 0; k < n; ++k) {
      if (piv.dtype() == DType::Int32) piv.data<int32_t>()[i * n + k] = static_cast<int32_t>(p[k] + 1);
      else piv.data<int64_t>()[i * n + k] = p[k] + 1;
    }
  });
}

int64_t linalg_lu_solve(const Tensor& lu, const Tensor& piv, const Tensor& b, const Tensor& out) {
  const int64_t n = lu.dim(lu.ndim() - 1), k = b.dim(b.ndim() - 1), batch = batch_of(lu);
  std::vector<char> failed(batch, 0);
  each_matrix(batch, 2.0 * n * n * k, [&](int64_t i) {
    Buf m(n * n), x(n * k);
    std::vector<int64_t> p;
    if (!load_pivots(piv, i, n, p)) {
      failed[i] = 1;
      return;
    }
    load(lu, i, n, n, false, m.data());
    load(b, i, n, k, false, x.data());
    lu_solve(m.data(), p.data(), n, x.data(), k);
    store(out, i, n, k, false, x.data());
  });
  return first_failed(failed);
}

int64_t linalg_lu_permutation(const Tensor& piv, const Tensor& p) {
  const int64_t n = p.dim(p.ndim() - 1), batch = batch_of(p);
  std::vector<char> failed(batch, 0);
  each_matrix(batch, static_cast<double>(n) * n, [&](int64_t i) {
    std::vector<int64_t> pv, perm(n);
    if (!load_pivots(piv, i, n, pv)) {
      failed[i] = 1;
      return;
    }
    // the swaps in order applied to the identity's rows give Q (Q a = L U); P = Q^T
    for (int64_t k = 0; k < n; ++k) perm[k] = k;
    for (int64_t k = 0; k < n; ++k) std::swap(perm[k], perm[pv[k]]);
    Buf m(n * n, 0.0);
    for (int64_t k = 0; k < n; ++k) m[perm[k] * n + k] = 1;
    store(p, i, n, n, false, m.data());
  });
  return first_failed(failed);
}

namespace {
// sign and log|det| of matrix i (sign 0, log -inf when singular).
std::pair<double, double> slogdet_one(const Tensor& a, int64_t i, int64_t n) {
  Buf m(n * n);
  std::vector<int64_t> piv(n);
  load(a, i, n, n, false, m.data());
  double sign = lu_factor(m.data(), n, piv.data()), logabs = 0;
  for (int64_t d = 0; d < n; ++d) {
    const double u = m[d * n + d];
    if (std::isnan(u)) return {std::nan(""), std::nan("")};
    if (u == 0) return {0.0, -std::numeric_limits<double>::infinity()};
    if (u < 0) sign = -sign;
    logabs += std::log(std::fabs(u));
  }
  return {sign, logabs};
}
}  // namespace

void linalg_det(const Tensor& a, const Tensor& out) {
  const int64_t n = a.dim(a.ndim() - 1);
  each_matrix(batch_of(a), lu_cost(n), [&](int64_t i) {
    // The diagonal's product (LAPACK's users' way), not exp(logabs): exact for small integer
    // matrices and overflowing where the true value does.
    Buf m(n * n);
    std::vector<int64_t> piv(n);
    load(a, i, n, n, false, m.data());
    double det = lu_factor(m.data(), n, piv.data());
    for (int64_t d = 0; d < n; ++d) det *= m[d * n + d];
    store_value(out, i, det);
  });
}

void linalg_slogdet(const Tensor& a, const Tensor& sign, const Tensor& logabs) {
  const int64_t n = a.dim(a.ndim() - 1);
  each_matrix(batch_of(a), lu_cost(n), [&](int64_t i) {
    auto [s, l] = slogdet_one(a, i, n);
    store_value(sign, i, s);
    store_value(logabs, i, l);
  });
}

int64_t linalg_solve(const Tensor& a, const Tensor& b, const Tensor& out, bool adjoint) {
  const int64_t n = a.dim(a.ndim() - 1), k = b.dim(b.ndim() - 1);
  const int64_t batch = batch_of(a);
  std::vector<char> failed(batch, 0);
  each_matrix(batch, lu_cost(n) + 2.0 * n * n * k, [&](int64_t i) {
    Buf m(n * n), x(n * k);
    std::vector<int64_t> piv(n);
    load(a, i, n, n, adjoint, m.data());
    lu_factor(m.data(), n, piv.data());
    for (int64_t d = 0; d < n; ++d)
      if (!(std::fabs(m[d * n + d]) > 0)) {  // MindSpore: a zero (or nan) pivot is not invertible
        failed[i] = 1;
        return;
      }
    load(b, i, n, k, false, x.data());
    lu_solve(m.data(), piv.data(), n, x.data(), k);
    store(out, i, n, k, false, x.data());
  });
  for (int64_t i = 0; i < batch; ++i)
    if (failed[i]) return i;
  return -1;
}

namespace {
// In place lower Cholesky factor of a row-major n x n matrix (its lower triangle is read; the
// upper is zeroed). False when a pivot is not positive (or nan).
bool cholesky_lower(double* a, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    double* rj = a + j * n;
    const double s = rj[j] - dot(rj, rj, j);
    if (!(s > 0)) return false;
    const double d = std::sqrt(s);
    rj[j] = d;
    for (int64_t i = j + 1; i < n; ++i) {  // (one thread: a fork per column stalls a busy machine)
      double* ri = a + i * n;
      ri[j] = (ri[j] - dot(ri, rj, j)) / d;
    }
  }
  for (int64_t i = 0; i < n; ++i) std::fill(a + i * n + i + 1, a + (i + 1) * n, 0.0);
  return true;
}
}  // namespace

int64_t linalg_cholesky(const Tensor& a, const Tensor& out, bool upper) {
  const int64_t n = a.dim(a.ndim() - 1), batch = batch_of(a);
  std::vector<char> failed(batch, 0);
  each_matrix(batch, static_cast<double>(n) * n * n / 3, [&](int64_t i) {
    Buf m(n * n);
    // upper: U^T U = a from the upper triangle, i.e. the lower factor of a^T, transposed back
    load(a, i, n, n, upper, m.data());
    if (!cholesky_lower(m.data(), n)) {
      failed[i] = 1;
      return;
    }
    store(out, i, n, n, upper, m.data());
  });
  for (int64_t i = 0; i < batch; ++i)
    if (failed[i]) return i;
  return -1;
}

void linalg_cholesky_solve(const Tensor& b, const Tensor& factor, const Tensor& out, bool upper) {
  const int64_t n = factor.dim(factor.ndim() - 1), k = b.dim(b.ndim() - 1);
  each_matrix(batch_of(factor), 2.0 * n * n * k, [&](int64_t i) {
    Buf l(n * n), x(n * k);
    load(factor, i, n, n, upper, l.data());  // the lower factor L (U^T when upper)
    for (int64_t r = 0; r < n; ++r) std::fill(l.begin() + r * n + r + 1, l.begin() + (r + 1) * n, 0.0);
    load(b, i, n, k, false, x.data());
    tri_solve(l.data(), n, true, false, x.data(), k);
    Buf lt(n * n);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < n; ++c) lt[c * n + r] = l[r * n + c];
    tri_solve(lt.data(), n, false, false, x.data(), k);
    store(out, i, n, k, false, x.data());
  });
}

void linalg_triangular_solve(const Tensor& a, const Tensor& b, const Tensor& out, bool lower, bool adjoint,
                             bool unit_diagonal) {
  const int64_t n = a.dim(a.ndim() - 1), k = b.dim(b.ndim() - 1);
  each_matrix(batch_of(a), static_cast<double>(n) * n * k, [&](int64_t i) {
    Buf t(n * n), x(n * k);
    load(a, i, n, n, adjoint, t.data());
    // the triangle that was named, now lower iff (lower != adjoint); the rest is never read
    const bool eff_lower = lower != adjoint;
    load(b, i, n, k, false, x.data());
    tri_solve(t.data(), n, eff_lower, unit_diagonal, x.data(), k);
    store(out, i, n, k, false, x.data());
  });
}

namespace {

// exp(a) for a row-major n x n double matrix, in place. Higham (2005): scale by 2^-s so that
// |a|_1 <= theta_13, take the [13/13] Padé approximant r = (V - U)^-1 (V + U), square s times.
void expm(double* a, int64_t n) {
  static const double b[14] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                               1187353796428800.0,  129060195264000.0,   10559470521600.0,
                               670442572800.0,      33522128640.0,       1323241920.0,
                               40840800.0,          960960.0,            16380.0,
                               182.0,               1.0};
  const double theta13 = 5.371920351148152;
  double norm1 = 0;
  for (int64_t c = 0; c < n; ++c) {
    double s = 0;
    for (int64_t r = 0; r < n; ++r) s += std::fabs(a[r * n + c]);
    norm1 = std::max(norm1, s);
  }
  if (!std::isfinite(norm1)) {
    std::fill(a, a + n * n, std::nan(""));
    return;
  }
  int s = 0;
  if (norm1 > theta13) s = std::max(0, static_cast<int>(std::ceil(std::log2(norm1 / theta13))));
  const double scale = std::ldexp(1.0, -s);
  const int64_t nn = n * n;
  Buf A(a, a + nn), A2(nn), A4(nn), A6(nn), t(nn), U(nn), V(nn);
  for (double& v : A) v *= scale;
  gemm(A.data(), A.data(), A2.data(), n, n, n);
  gemm(A2.data(), A2.data(), A4.data(), n, n, n);
  gemm(A4.data(), A2.data(), A6.data(), n, n, n);
  for (int64_t k = 0; k < nn; ++k) t[k] = b[13] * A6[k] + b[11] * A4[k] + b[9] * A2[k];
  gemm(A6.data(), t.data(), U.data(), n, n, n);
  for (int64_t k = 0; k < nn; ++k) U[k] += b[7] * A6[k] + b[5] * A4[k] + b[3] * A2[k];
  for (int64_t d = 0; d < n; ++d) U[d * n + d] += b[1];
  gemm(A.data(), U.data(), t.data(), n, n, n);  // t = U
  for (int64_t k = 0; k < nn; ++k) U[k] = b[12] * A6[k] + b[10] * A4[k] + b[8] * A2[k];
  gemm(A6.data(), U.data(), V.data(), n, n, n);
  for (int64_t k = 0; k < nn; ++k) V[k] += b[6] * A6[k] + b[4] * A4[k] + b[2] * A2[k];
  for (int64_t d = 0; d < n; ++d) V[d * n + d] += b[0];
  // (V - U) X = (V + U)
  for (int64_t k = 0; k < nn; ++k) {
    const double u = t[k], v = V[k];
    A[k] = v - u;
    U[k] = v + u;
  }
  std::vector<int64_t> piv(n);
  lu_factor(A.data(), n, piv.data());
  lu_solve(A.data(), piv.data(), n, U.data(), n);
  for (int i = 0; i < s; ++i) {
    gemm(U.data(), U.data(), t.data(), n, n, n);
    std::swap(U, t);
  }
  std::copy(U.begin(), U.end(), a);
}

}  // namespace

void linalg_matrix_exp(const Tensor& a, const Tensor& out) {
  const int64_t n = a.dim(a.ndim() - 1);
  each_matrix(batch_of(a), 12.0 * n * n * n, [&](int64_t i) {
    Buf m(n * n);
    load(a, i, n, n, false, m.data());
    expm(m.data(), n);
    store(out, i, n, n, false, m.data());
  });
}

void linalg_band_part(const Tensor& a, const Tensor& out, int64_t lower, int64_t upper) {
  const int64_t r = a.dim(a.ndim() - 2), c = a.dim(a.ndim() - 1), batch = batch_of(a);
  PJ_DISPATCH_ALL(a.dtype(), [&] {
    const scalar_t* src = a.data<scalar_t>();
    scalar_t* dst = out.data<scalar_t>();
    parallel_for(batch * r, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(c, 1)), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        const int64_t y = row % r;
        for (int64_t x = 0; x < c; ++x) {
          const bool keep = (lower < 0 || y - x <= lower) && (upper < 0 || x - y <= upper);
          dst[row * c + x] = keep ? src[row * c + x] : scalar_t{};
        }
      }
    });
  });
}

}  // namespace pj
