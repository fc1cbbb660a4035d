// The linear-algebra kernels (kernels/linalg.h) and ops (graph/ops/linalg_ops.cc): LU inverse and
// solve across the 48-column panel boundary and batched, LU factors (P L U = A), det against a plain elimination, zero
// pivots (det 0, solve's failing batch index), Cholesky and its failure, QR and SVD identities
// (orthogonality, reconstruction, sorted singular values, rank deficiency, full matrices), eigh,
// the Padé exponential, band masks, non-contiguous op inputs, and the ops' error messages.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/linalg.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::from_doubles;
using testing::layouts;
using testing::raises;
using testing::random;
using testing::values;

// Random [-4, 4) entries with 4n added on each matrix's diagonal: strictly diagonally dominant,
// so well conditioned at every size.
Tensor dominant(Shape s, DType t, unsigned seed) {
  Tensor x = random(s, t, seed);
  const int64_t n = s.back(), batch = x.numel() / (n * n);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i) testing::set_item(x, b * n * n + i * n + i, x.item_double(b * n * n + i * n + i) + 4.0 * n);
  return x;
}

// Matrix `b` of a contiguous [..., r, c] tensor as doubles.
std::vector<double> mat(const Tensor& t, int64_t b) {
  const int64_t r = t.dim(t.ndim() - 2), c = t.dim(t.ndim() - 1);
  std::vector<double> v(r * c);
  for (int64_t i = 0; i < r * c; ++i) v[i] = t.item_double(b * r * c + i);
  return v;
}

// max |a b - expect| for row-major a [n, k], b [k, m].
double product_error(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& expect,
                     int64_t n, int64_t k, int64_t m) {
  double e = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[p * m + j];
      e = std::max(e, std::fabs(s - expect[i * m + j]));
    }
  return e;
}

std::vector<double> identity(int64_t n) {
  std::vector<double> v(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i) v[i * n + i] = 1;
  return v;
}

std::vector<double> transposed(const std::vector<double>& a, int64_t r, int64_t c) {
  std::vector<double> t(r * c);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) t[j * r + i] = a[i * c + j];
  return t;
}

double ref_det(std::vector<double> a, int64_t n) {  // unpivoted-in-spirit: partial pivoting, plain
  double det = 1;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::fabs(a[i * n + k]) > std::fabs(a[p * n + k])) p = i;
    if (a[p * n + k] == 0) return 0;
    if (p != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
      det = -det;
    }
    det *= a[k * n + k];
    for (int64_t i = k + 1; i < n; ++i) {
      const double f = a[i * n + k] / a[k * n + k];
      for (int64_t j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
    }
  }
  return det;
}

TEST(Linalg, InverseAndSolveAcrossPanelsAndBatches) {
  for (DType t : {DType::Float64, DType::Float32}) {
    for (int64_t n : {1, 2, 7, 47, 48, 49, 97, 130}) {
      const int64_t batch = n > 60 ? 1 : 3;
      Tensor a = dominant({batch, n, n}, t, 11 + n);
      Tensor inv = Tensor::empty(a.shape(), t);
      linalg_inverse(a, inv, false);
      Tensor b = random({batch, n, 3}, t, 5), x = Tensor::empty(b.shape(), t);
      EXPECT_EQ(linalg_solve(a, b, x, false), -1);
      const double tol = t == DType::Float64 ? 1e-12 : 2e-6;
      for (int64_t i = 0; i < batch; ++i) {
        EXPECT_LT(product_error(mat(a, i), mat(inv, i), identity(n), n, n, n), tol) << n;
        EXPECT_LT(product_error(mat(a, i), mat(x, i), mat(b, i), n, n, 3), tol * 4 * n) << n;
      }
      // adjoint: inverse(a^T) = inverse(a)^T
      Tensor inv_t = Tensor::empty(a.shape(), t);
      linalg_inverse(a, inv_t, true);
      EXPECT_LT(product_error(transposed(mat(a, 0), n, n), mat(inv_t, 0), identity(n), n, n, n), tol) << n;
    }
  }
}

TEST(Linalg, DeterminantAgainstPlainElimination) {
  for (int64_t n : {1, 3, 6, 50}) {
    Tensor a = random({2, n, n}, DType::Float64, 3 + n);
    Tensor d = Tensor::empty({2}, DType::Float64), s = Tensor::empty({2}, DType::Float64),
           l = Tensor::empty({2}, DType::Float64);
    linalg_det(a, d);
    linalg_slogdet(a, s, l);
    for (int64_t i = 0; i < 2; ++i) {
      const double want = ref_det(mat(a, i), n);
      EXPECT_NEAR(d.item_double(i), want, 1e-11 * std::fabs(want)) << n;
      EXPECT_EQ(s.item_double(i), want > 0 ? 1.0 : -1.0);
      EXPECT_NEAR(l.item_double(i), std::log(std::fabs(want)), 1e-12 * std::max(1.0, std::fabs(std::log(std::fabs(want)))));
    }
  }
  // a permutation matrix: det is its sign; a singular one: 0 and (0, -inf)
  Tensor p = from_doubles({0, 1, 0, 0, 0, 1, 1, 0, 0}, {3, 3}, DType::Float64), d = Tensor::empty({}, DType::Float64);
  linalg_det(p, d);
  EXPECT_EQ(d.item_double(), 1.0);
  Tensor z = from_doubles({1, 2, 2, 4}, {2, 2}, DType::Float64), s = Tensor::empty({}, DType::Float64),
         l = Tensor::empty({}, DType::Float64);
  linalg_det(z, d);
  linalg_slogdet(z, s, l);
  EXPECT_EQ(d.item_double(), 0.0);
  EXPECT_EQ(s.item_double(), 0.0);
  EXPECT_EQ(l.item_double(), -INFINITY);
}

TEST(Linalg, SingularSolveReportsTheBatchAndNotPositiveDefiniteCholeskyToo) {
  Tensor a = from_doubles({1, 0, 0, 1, 1, 2, 2, 4}, {2, 2, 2}, DType::Float64);
  Tensor b = from_doubles({1, 1, 1, 1}, {2, 2, 1}, DType::Float64), x = Tensor::empty(b.shape(), DType::Float64);
  EXPECT_EQ(linalg_solve(a, b, x, false), 1);
  Tensor c = Tensor::empty(a.shape(), DType::Float64);
  Tensor spd = from_doubles({4, 2, 2, 3, 1, 2, 2, 1}, {2, 2, 2}, DType::Float64);
  EXPECT_EQ(linalg_cholesky(spd, c, false), 1);
  EXPECT_TRUE(raises([&] { call_op(get_op("matrix_solve"), {a, b}); }, ErrorKind::Value,
                     "For 'MatrixSolve', the input 'matrix' is not invertible (batch element (1,))."));
  EXPECT_TRUE(raises([&] { call_op(get_op("cholesky"), {spd}); }, ErrorKind::Value,
                     "For 'Cholesky', the input matrix is not symmetric positive definite (batch element (1,))."));
}

TEST(Linalg, LuFactorUnpacksToTheInputAndSolves) {
  const int64_t n = 50;  // past one 48-column panel
  Tensor a = random({n, n}, DType::Float64, 17), lu = Tensor::empty({n, n}, DType::Float64),
         piv = Tensor::empty({n}, DType::Int32), p = Tensor::empty({n, n}, DType::Float64);
  linalg_lu_factor(a, lu, piv);
  ASSERT_EQ(linalg_lu_permutation(piv, p), -1);
  std::vector<double> luv = values(lu), l(n * n, 0.0), u(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) (j < i ? l : u)[i * n + j] = luv[i * n + j];
  for (int64_t i = 0; i < n; ++i) l[i * n + i] = 1;
  std::vector<double> lu_prod(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < n; ++q) s += l[i * n + q] * u[q * n + j];
      lu_prod[i * n + j] = s;
    }
  EXPECT_LT(product_error(values(p), lu_prod, values(a), n, n, n), 1e-12);
  Tensor b = random({n, 2}, DType::Float64, 3), x = Tensor::empty({n, 2}, DType::Float64);
  ASSERT_EQ(linalg_lu_solve(lu, piv, b, x), -1);
  EXPECT_LT(product_error(values(a), values(x), values(b), n, n, 2), 1e-11);
  testing::set_item(piv, 3, 0.0);  // a pivot outside [1, n]
  EXPECT_EQ(linalg_lu_solve(lu, piv, b, x), 0);
}

TEST(Linalg, CholeskyAndTriangularSolves) {
  const int64_t n = 9;
  Tensor g = random({n, n}, DType::Float64, 21);
  std::vector<double> gv = values(g), a(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = i == j ? n : 0;
      for (int64_t p = 0; p < n; ++p) s += gv[i * n + p] * gv[j * n + p];
      a[i * n + j] = s;
    }
  Tensor at = from_doubles(a, {n, n}, DType::Float64), l = Tensor::empty({n, n}, DType::Float64),
         u = Tensor::empty({n, n}, DType::Float64);
  ASSERT_EQ(linalg_cholesky(at, l, false), -1);
  ASSERT_EQ(linalg_cholesky(at, u, true), -1);
  std::vector<double> lv = values(l);
  EXPECT_LT(product_error(lv, transposed(lv, n, n), a, n, n, n), 1e-11);
  EXPECT_EQ(values(u), transposed(lv, n, n));
  Tensor b = random({n, 2}, DType::Float64, 4), x = Tensor::empty({n, 2}, DType::Float64);
  linalg_cholesky_solve(b, l, x, false);
  EXPECT_LT(product_error(a, values(x), values(b), n, n, 2), 1e-11);
  linalg_cholesky_solve(b, u, x, true);
  EXPECT_LT(product_error(a, values(x), values(b), n, n, 2), 1e-11);
  linalg_triangular_solve(l, b, x, true, true, false);  // L^T x = b
  EXPECT_LT(product_error(transposed(lv, n, n), values(x), values(b), n, n, 2), 1e-11);
}

TEST(Linalg, QrIsOrthogonalTimesUpperTriangular) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{6, 4}, {4, 6}, {5, 5}, {1, 3}, {3, 1}}) {
    for (bool full : {false, true}) {
      const int64_t p = full ? m : std::min(m, n);
      Tensor a = random({m, n}, DType::Float64, 8), q = Tensor::empty({m, p}, DType::Float64),
             r = Tensor::empty({p, n}, DType::Float64);
      linalg_qr(a, q, r, full);
      std::vector<double> qv = values(q), rv = values(r);
      EXPECT_LT(product_error(transposed(qv, m, p), qv, identity(p), p, m, p), 1e-14);
      EXPECT_LT(product_error(qv, rv, values(a), m, p, n), 1e-13);
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < std::min(i, n); ++j) EXPECT_EQ(rv[i * n + j], 0.0);
    }
  }
}

TEST(Linalg, SvdReconstructsWithSortedValuesAndOrthonormalVectors) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{7, 4}, {4, 7}, {6, 6}, {1, 1}, {60, 50}}) {
    const int64_t k = std::min(m, n);
    Tensor a = random({2, m, n}, DType::Float64, 13);
    for (bool full : {false, true}) {
      const int64_t uc = full ? m : k, vc = full ? n : k;
      Tensor s = Tensor::empty({2, k}, DType::Float64), u = Tensor::empty({2, m, uc}, DType::Float64),
             v = Tensor::empty({2, n, vc}, DType::Float64);
      linalg_svd(a, s, u, v, full);
      for (int64_t b = 0; b < 2; ++b) {
        std::vector<double> sv = mat(s.as_strided({2, 1, k}, {k, k, 1}, 0), b), uv = mat(u, b), vv = mat(v, b);
        for (int64_t i = 1; i < k; ++i) EXPECT_GE(sv[i - 1], sv[i]);
        EXPECT_LT(product_error(transposed(uv, m, uc), uv, identity(uc), uc, m, uc), 1e-13);
        EXPECT_LT(product_error(transposed(vv, n, vc), vv, identity(vc), vc, n, vc), 1e-13);
        std::vector<double> us(m * k);  // u[:, :k] diag(s)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < k; ++j) us[i * k + j] = uv[i * uc + j] * sv[j];
        std::vector<double> vk(n * k);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < k; ++j) vk[i * k + j] = vv[i * vc + j];
        EXPECT_LT(product_error(us, transposed(vk, n, k), mat(a, b), m, k, n), 1e-12) << m << "x" << n;
      }
    }
  }
  // rank one: the second singular value vanishes, the vectors stay orthonormal
  Tensor r1 = from_doubles({1, 2, 2, 4, 3, 6}, {3, 2}, DType::Float64), s = Tensor::empty({2}, DType::Float64),
         u = Tensor::empty({3, 3}, DType::Float64), v = Tensor::empty({2, 2}, DType::Float64);
  linalg_svd(r1, s, u, v, true);
  EXPECT_NEAR(s.item_double(0), std::sqrt(14.0 * 5.0), 1e-13);
  EXPECT_LT(s.item_double(1), 1e-14);
  std::vector<double> uv = values(u);
  EXPECT_LT(product_error(transposed(uv, 3, 3), uv, identity(3), 3, 3, 3), 1e-13);
  // values only: u and v undefined
  linalg_svd(r1, s, Tensor(), Tensor(), false);
  EXPECT_NEAR(s.item_double(0), std::sqrt(70.0), 1e-13);
}

TEST(Linalg, EighAndMatrixExp) {
  Tensor a = from_doubles({2, 1, 0, 1, 2, 0, 0, 0, 5}, {3, 3}, DType::Float64), w = Tensor::empty({3}, DType::Float64),
         v = Tensor::empty({3, 3}, DType::Float64);
  linalg_eigh(a, w, v, true);
  EXPECT_LT(std::fabs(w.item_double(0) - 1) + std::fabs(w.item_double(1) - 3) + std::fabs(w.item_double(2) - 5), 1e-14);
  // exp([[0, 1], [0, 0]]) = [[1, 1], [0, 1]]; exp(diag(40)) goes through 3 squarings
  Tensor n = from_doubles({0, 1, 0, 0}, {2, 2}, DType::Float64), e = Tensor::empty({2, 2}, DType::Float64);
  linalg_matrix_exp(n, e);
  EXPECT_EQ(values(e), (std::vector<double>{1, 1, 0, 1}));
  Tensor d = from_doubles({40, 0, 0, -1}, {2, 2}, DType::Float64);
  linalg_matrix_exp(d, e);
  EXPECT_NEAR(e.item_double(0), std::exp(40.0), 1e-13 * std::exp(40.0));
  EXPECT_NEAR(e.item_double(3), std::exp(-1.0), 1e-15);
  Tensor nan = from_doubles({NAN, 0, 0, 0}, {2, 2}, DType::Float64);
  linalg_matrix_exp(nan, e);
  EXPECT_TRUE(std::isnan(e.item_double(3)));
}

TEST(Linalg, OpsTakeAnyLayoutAndBandMasks) {
  Tensor a = dominant({2, 5, 5}, DType::Float64, 31);
  const std::vector<double> want = values(call_op1("matrix_inverse", {a}));
  for (const Tensor& x : layouts(a)) EXPECT_EQ(values(call_op1("matrix_inverse", {x})), want);
  Tensor i = from_doubles({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}, DType::Int32);
  EXPECT_EQ(values(call_op1("matrix_band_part", {i}, Attrs{{"lower", int64_t(1)}, {"upper", int64_t(0)}})),
            (std::vector<double>{1, 0, 0, 4, 5, 0, 0, 8, 9}));
}

TEST(Linalg, OpErrors) {
  Tensor r = Tensor::zeros({2, 3}, DType::Float64);
  EXPECT_TRUE(raises([&] { call_op(get_op("matrix_inverse"), {r}); }, ErrorKind::Value,
                     "For 'MatrixInverse', the 'x' must be a batch of square matrices [..., M, M], but got shape (2, 3)"));
  EXPECT_TRUE(raises([&] { call_op(get_op("svd"), {Tensor::zeros({3}, DType::Float64)}); }, ErrorKind::Value,
                     "For 'Svd', the 'input_x' must have at least 2 dimensions [..., M, N], but got shape (3,)"));
  EXPECT_TRUE(raises([&] { call_op(get_op("matrix_determinant"), {Tensor::zeros({2, 2}, DType::Int64)}); },
                     ErrorKind::Type, "For 'MatrixDeterminant', the dtype of 'x' must be float32 or float64, but got Int64"));
  EXPECT_TRUE(raises([&] { call_op(get_op("matrix_solve"), {Tensor::zeros({2, 2, 2}, DType::Float64), Tensor::zeros({3, 2, 1}, DType::Float64)}); },
                     ErrorKind::Value, "batch dims", true));
}

}  // namespace
}  // namespace pj
