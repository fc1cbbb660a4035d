// Orthogonal decompositions: Householder QR, one-sided Jacobi SVD and cyclic Jacobi eigh. Jacobi
// methods are slower than LAPACK's bidiagonal/tridiagonal routes but simple and accurate to the
// last few ulps in double (singular values to high relative accuracy). See linalg.h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/linalg.h"
#include "kernels/linalg_detail.h"

namespace pj {

using namespace linalg_detail;

namespace {

// Householder reflector for x = a[k:, k] (column k of row-major a [m, n]), LAPACK's dlarfg
// convention: H = I - tau v v^T with v[0] = 1 stored below the diagonal, beta = -sign(alpha)|x|
// on it. tau = 0 (H = I) when x is already zero below the diagonal.
double make_reflector(double* a, int64_t m, int64_t n, int64_t k) {
  const double alpha = a[k * n + k];
  double xnorm = 0;
  for (int64_t i = k + 1; i < m; ++i) xnorm = std::hypot(xnorm, a[i * n + k]);
  if (xnorm == 0) return 0;
  const double beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
  const double scale = 1.0 / (alpha - beta);
  for (int64_t i = k + 1; i < m; ++i) a[i * n + k] *= scale;
  a[k * n + k] = beta;
  return (beta - alpha) / beta;
}

// Applies H_k = I - tau v v^T (v in column k of h [m, hn] below row k, v[k] = 1) to rows k..m-1
// and columns [c0, c1) of x [m, xn].
void apply_reflector(const double* h, int64_t m, int64_t hn, int64_t k, double tau, double* x, int64_t xn, int64_t c0,
                     int64_t c1) {
  if (tau == 0 || c0 >= c1) return;
  // columns [c0 + b, c0 + e): one pass accumulates w = v^T x, a second subtracts tau v w^T
  const int64_t b = 0, e = c1 - c0;
  Buf acc(e - b);
  const double* xk = x + k * xn + c0 + b;
  for (int64_t j = 0; j < e - b; ++j) acc[j] = xk[j];
  for (int64_t i = k + 1; i < m; ++i) {
    const double vi = h[i * hn + k];
    const double* xi = x + i * xn + c0 + b;
    for (int64_t j = 0; j < e - b; ++j) acc[j] += vi * xi[j];
  }
  for (int64_t j = 0; j < e - b; ++j) acc[j] *= tau;
  double* xkw = x + k * xn + c0 + b;
  for (int64_t j = 0; j < e - b; ++j) xkw[j] -= acc[j];
  for (int64_t i = k + 1; i < m; ++i) {
    const double vi = h[i * hn + k];
    double* xi = x + i * xn + c0 + b;
    for (int64_t j = 0; j < e - b; ++j) xi[j] -= vi * acc[j];
  }
}

}  // namespace

void linalg_qr(const Tensor& a, const Tensor& q, const Tensor& r, bool full) {
  const int64_t m = a.dim(a.ndim() - 2), n = a.dim(a.ndim() - 1), kmin = std::min(m, n);
  const int64_t p = full ? m : kmin;
  each_matrix(batch_of(a), 4.0 * m * n * kmin, [&](int64_t i) {
    Buf h(m * n), tau(kmin), qm(m * p, 0.0), rm(p * n, 0.0);
    load(a, i, m, n, false, h.data());
    for (int64_t k = 0; k < kmin; ++k) {
      tau[k] = make_reflector(h.data(), m, n, k);
      apply_reflector(h.data(), m, n, k, tau[k], h.data(), n, k + 1, n);
    }
    for (int64_t y = 0; y < kmin; ++y)
      for (int64_t x = y; x < n; ++x) rm[y * n + x] = h[y * n + x];
    // Q = H_0 ... H_{k-1} applied to the identity's first p columns, last reflector first
    // (columns before k are still the identity's there, which H_k leaves alone).
    for (int64_t d = 0; d < p; ++d) qm[d * p + d] = 1;
    for (int64_t k = kmin - 1; k >= 0; --k) apply_reflector(h.data(), m, n, k, tau[k], qm.data(), p, k, p);
    store(q, i, m, p, false, qm.data());
    store(r, i, p, n, false, rm.data());
  });
}

void linalg_geqrf(const Tensor& a, const Tensor& y, const Tensor& tau) {
  const int64_t m = a.dim(a.ndim() - 2), n = a.dim(a.ndim() - 1), kmin = std::min(m, n);
  each_matrix(batch_of(a), 2.0 * m * n * kmin, [&](int64_t i) {
    Buf h(m * n);
    load(a, i, m, n, false, h.data());
    for (int64_t k = 0; k < kmin; ++k) {
      const double t = make_reflector(h.data(), m, n, k);
      apply_reflector(h.data(), m, n, k, t, h.data(), n, k + 1, n);
      store_value(tau, i * kmin + k, t);
    }
    store(y, i, m, n, false, h.data());
  });
}

void linalg_orgqr(const Tensor& h, const Tensor& tau, const Tensor& q) {
  const int64_t m = h.dim(h.ndim() - 2), n = h.dim(h.ndim() - 1), k = tau.dim(tau.ndim() - 1);
  each_matrix(batch_of(h), 2.0 * m * n * k, [&](int64_t i) {
    Buf hv(m * n), tv(k), qm(m * n, 0.0);
    load(h, i, m, n, false, hv.data());
    load(tau, i, 1, k, false, tv.data());
    for (int64_t d = 0; d < n; ++d) qm[d * n + d] = 1;
    for (int64_t r = k - 1; r >= 0; --r) apply_reflector(hv.data(), m, n, r, tv[r], qm.data(), n, r, n);
    store(q, i, m, n, false, qm.data());
  });
}

namespace {

// Extends the first `have` orthonormal rows of q [rows, len] to `rows` orthonormal rows. Each new
// row starts from the unit vector the rows so far cover least (covered[t] = sum_r q[r][t]^2, so
// its residual has norm^2 1 - covered[t] >= 1 - have / len), orthogonalised twice.
void complete_basis(double* q, int64_t have, int64_t rows, int64_t len) {
  Buf v(len), covered(len, 0.0);
  for (int64_t r = 0; r < have; ++r)
    for (int64_t t = 0; t < len; ++t) covered[t] += q[r * len + t] * q[r * len + t];
  while (have < rows) {
    const int64_t t = std::min_element(covered.begin(), covered.end()) - covered.begin();
    std::fill(v.begin(), v.end(), 0.0);
    v[t] = 1;
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t r = 0; r < have; ++r) {
        const double c = dot(q + r * len, v.data(), len);
        for (int64_t j = 0; j < len; ++j) v[j] -= c * q[r * len + j];
      }
    const double nv = std::sqrt(dot(v.data(), v.data(), len));
    for (int64_t j = 0; j < len; ++j) {
      q[have * len + j] = v[j] / nv;
      covered[j] += q[have * len + j] * q[have * len + j];
    }
    covered[t] = std::max(covered[t], 2.0);  // never picked twice
    ++have;
  }
}

// Rotates rows i and j of w [*, len] (and of vt [*, vlen]) until they are orthogonal (Hestenes).
// norm2 holds the rows' squared norms, updated with the rotation. Rows count as orthogonal when
// |w_i . w_j| <= tol |w_i| |w_j| (tol: a few ulps per element, what rounding leaves of a zero
// dot product). Returns whether a rotation was needed.
bool jacobi_pair(double* w, int64_t len, double* vt, int64_t vlen, double* norm2, int64_t i, int64_t j, double tol) {
  double* wi = w + i * len;
  double* wj = w + j * len;
  const double alpha = norm2[i], beta = norm2[j];
  const double gamma = dot(wi, wj, len);
  if (gamma == 0 || std::fabs(gamma) <= tol * std::sqrt(alpha * beta)) return false;
  const double zeta = (beta - alpha) / (2 * gamma);
  const double t = std::copysign(1.0, zeta) / (std::fabs(zeta) + std::sqrt(1 + zeta * zeta));
  const double c = 1 / std::sqrt(1 + t * t), s = c * t;
  for (int64_t k = 0; k < len; ++k) {
    const double x = wi[k], y = wj[k];
    wi[k] = c * x - s * y;
    wj[k] = s * x + c * y;
  }
  // the rotated norms follow from the old ones (alpha - t gamma, beta + t gamma), which saves two
  // passes over the rows; one that shrank a lot is recomputed, as the update lost its digits
  const double ni = alpha - t * gamma, nj = beta + t * gamma;
  norm2[i] = ni > 1e-4 * alpha ? ni : dot(wi, wi, len);
  norm2[j] = nj > 1e-4 * beta ? nj : dot(wj, wj, len);
  if (vt) {
    double* vi = vt + i * vlen;
    double* vj = vt + j * vlen;
    for (int64_t k = 0; k < vlen; ++k) {
      const double x = vi[k], y = vj[k];
      vi[k] = c * x - s * y;
      vj[k] = s * x + c * y;
    }
  }
  return true;
}

// One-sided Jacobi on the p rows of w [p, len]: afterwards they are mutually orthogonal and
// vt [p, p] (identity on entry) holds the rotations. Pairs are visited in a round-robin
// tournament (the p/2 pairs of a round are disjoint).
void jacobi_orthogonalise(double* w, int64_t p, int64_t len, double* vt) {
  if (p < 2) return;
  const double tol = 4 * std::sqrt(static_cast<double>(len)) * std::numeric_limits<double>::epsilon();
  Buf norm2(p);
  for (int64_t r = 0; r < p; ++r) norm2[r] = dot(w + r * len, w + r * len, len);
  const int64_t slots = p + (p & 1);  // a bye slot when p is odd
  std::vector<int64_t> order(slots);
  std::iota(order.begin(), order.end(), 0);
  const int64_t pairs = slots / 2;
  std::vector<char> hit(pairs, 0);
  for (int sweep = 0; sweep < 60; ++sweep) {
    int64_t rotated = 0;
    for (int64_t round = 0; round < slots - 1; ++round) {
      // (one thread: a fork per round costs more than the round once the machine is busy; the
      // batch is what runs in parallel)
      for (int64_t q = 0; q < pairs; ++q) {
        int64_t x = order[q], y = order[slots - 1 - q];
        hit[q] = 0;
        if (x >= p || y >= p) continue;
        if (x > y) std::swap(x, y);
        hit[q] = jacobi_pair(w, len, vt, p, norm2.data(), x, y, tol);
      }
      for (char h : hit) rotated += h;
      // rotate every slot but the first by one place
      std::rotate(order.begin() + 1, order.end() - 1, order.end());
    }
    if (rotated == 0) break;
  }
}

}  // namespace

void linalg_svd(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& v, bool full) {
  const int64_t m = a.dim(a.ndim() - 2), n = a.dim(a.ndim() - 1);
  const bool wide = m < n;  // work on a^T: a^T = U' S V'^T gives u = V', v = U'
  const int64_t p = std::min(m, n), len = std::max(m, n);
  const bool uv = u.defined();
  each_matrix(batch_of(a), 20.0 * p * p * len, [&](int64_t i) {
    // rows of w: the columns of a (of a^T when wide)
    Buf w(p * len), vt;
    load(a, i, m, n, !wide, w.data());
    if (uv) {
      vt.assign(p * p, 0.0);
      for (int64_t d = 0; d < p; ++d) vt[d * p + d] = 1;
    }
    jacobi_orthogonalise(w.data(), p, len, uv ? vt.data() : nullptr);
    Buf sv(p);
    for (int64_t k = 0; k < p; ++k) sv[k] = std::sqrt(dot(&w[k * len], &w[k * len], len));
    std::vector<int64_t> idx(p);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t x, int64_t y) { return sv[x] > sv[y]; });
    for (int64_t k = 0; k < p; ++k) store_value(s, i * p + k, sv[idx[k]]);
    if (!uv) return;
    // Left vectors: the normalised rows of w, sorted; rows whose singular value is (numerically)
    // zero carry no direction and are replaced by a completion of the basis, as are the extra
    // rows of a full u.
    const int64_t lrows = full ? len : p;
    Buf left(lrows * len, 0.0), right(p * p);
    const double tiny = (p > 0 ? sv[idx[0]] : 0) * 1e-300 + 1e-300;
    int64_t good = 0;
    for (int64_t k = 0; k < p; ++k) {
      const int64_t src = idx[k];
      for (int64_t j = 0; j < p; ++j) right[k * p + j] = vt[src * p + j];
      if (sv[src] > tiny && good == k) {
        for (int64_t j = 0; j < len; ++j) left[k * len + j] = w[src * len + j] / sv[src];
        ++good;
      }
    }
    complete_basis(left.data(), good, lrows, len);
    // left [lrows, len] is u^T (v^T when wide); right [p, p] is v^T (u^T when wide)
    const Tensor& lt = wide ? v : u;
    const Tensor& rt = wide ? u : v;
    store(lt, i, len, lrows, true, left.data());
    store(rt, i, p, p, true, right.data());
  });
}

void linalg_eigh(const Tensor& a, const Tensor& w, const Tensor& v, bool lower) {
  const int64_t n = a.dim(a.ndim() - 1);
  const bool vecs = v.defined();
  each_matrix(batch_of(a), 10.0 * n * n * n, [&](int64_t i) {
    Buf m(n * n), e(n * n, 0.0);
    load(a, i, n, n, false, m.data());
    for (int64_t y = 0; y < n; ++y)  // symmetric from the named triangle
      for (int64_t x = y + 1; x < n; ++x) {
        if (lower) m[y * n + x] = m[x * n + y];
        else m[x * n + y] = m[y * n + x];
      }
    for (int64_t d = 0; d < n; ++d) e[d * n + d] = 1;
    // cyclic two-sided Jacobi: zero m[p][q] by a rotation in the (p, q) plane until the
    // off-diagonal part is negligible against the diagonal
    for (int sweep = 0; sweep < 100; ++sweep) {
      double off = 0, diag = 0;
      for (int64_t y = 0; y < n; ++y)
        for (int64_t x = 0; x < n; ++x) (x == y ? diag : off) += m[y * n + x] * m[y * n + x];
      if (off <= 1e-30 * diag || off == 0) break;
      for (int64_t p = 0; p < n; ++p)
        for (int64_t q = p + 1; q < n; ++q) {
          const double apq = m[p * n + q];
          if (apq == 0) continue;
          const double theta = (m[q * n + q] - m[p * n + p]) / (2 * apq);
          const double t = std::copysign(1.0, theta) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
          const double c = 1 / std::sqrt(t * t + 1), s = t * c;
          for (int64_t k = 0; k < n; ++k) {  // columns p, q
            const double x = m[k * n + p], y = m[k * n + q];
            m[k * n + p] = c * x - s * y;
            m[k * n + q] = s * x + c * y;
          }
          for (int64_t k = 0; k < n; ++k) {  // rows p, q
            const double x = m[p * n + k], y = m[q * n + k];
            m[p * n + k] = c * x - s * y;
            m[q * n + k] = s * x + c * y;
          }
          for (int64_t k = 0; k < n; ++k) {  // eigenvectors as rows of e
            const double x = e[p * n + k], y = e[q * n + k];
            e[p * n + k] = c * x - s * y;
            e[q * n + k] = s * x + c * y;
          }
        }
    }
    std::vector<int64_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t x, int64_t y) { return m[x * n + x] < m[y * n + y]; });
    for (int64_t k = 0; k < n; ++k) store_value(w, i * n + k, m[idx[k] * n + idx[k]]);
    if (!vecs) return;
    Buf out(n * n);  // rows: the eigenvectors in ascending order, stored transposed (columns)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j) out[k * n + j] = e[idx[k] * n + j];
    store(v, i, n, n, true, out.data());
  });
}

}  // namespace pj
