// Special functions, samplers and the general eigen-decomposition behind pijit/ops/special2.py
// (MindSpore's BesselJ0/J1/Y0/Y1/K0/K0e/K1/K1e, Zeta, Betainc, Gamma/RandomPoisson, Eig,
// MatrixLogarithm).
//
// Scalar functions compute in double and are accurate to a few ulps of double away from the
// zeros of J and Y (tests/cpp and the torch oracle check them):
//   J0, J1, Y0, Y1: power series for x < 2, Miller's backward recurrence (normalised by
//       J0 + 2 sum J_2k = 1, with Neumann's series for Y) up to 25, Hankel's asymptotic
//       expansion beyond; J is even/odd in x, Y is NaN for x < 0 and -inf at 0.
//   K0, K1 (and e^x K): the trapezoidal rule on K_v(x) = int_0^inf e^{-x cosh t} cosh(vt) dt,
//       which converges geometrically in the step (the integrand is analytic in a strip); the
//       step shrinks as 1/sqrt(x) for large x, where the integrand narrows.
//   zeta(x, q): Hurwitz zeta by Euler-Maclaurin summation (inf at x = 1, NaN for x < 1).
//   betainc(a, b, x): the regularized incomplete beta by its continued fraction (modified
//       Lentz), on the side of the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where it converges.
// Samplers draw from the Philox stream (kernels/random.h): one key per call (the global stream
// advances by one block, or the given seed), then element i's draws come from counters (i,
// attempt), so values do not depend on threads.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "kernels/tensor.h"

namespace pj {

namespace special2 {
double bessel_j0(double x);
double bessel_j1(double x);
double bessel_y0(double x);
double bessel_y1(double x);
double bessel_k0(double x);
double bessel_k1(double x);
double bessel_k0e(double x);
double bessel_k1e(double x);
double zeta(double x, double q);
double betainc(double a, double b, double x);
}  // namespace special2

#define PJ_SPECIAL2_UNARY(X) X(bessel_j0) X(bessel_j1) X(bessel_y0) X(bessel_y1) \
  X(bessel_k0) X(bessel_k0e) X(bessel_k1) X(bessel_k1e)

enum class Special2Unary {
#define PJ_X(n) n,
  PJ_SPECIAL2_UNARY(PJ_X)
#undef PJ_X
};

// out = f(in) elementwise; out and in Float32 or Float64 of one dtype (in broadcast).
void special2_unary_into(Special2Unary op, const Tensor& out, const Tensor& in);
// out = zeta(x, q), out = betainc(a, b, x): inputs of out's dtype, broadcast.
void zeta_into(const Tensor& out, const Tensor& x, const Tensor& q);
void betainc_into(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& x);

// out (contiguous, shape = prefix + param's shape) gets one Gamma(alpha, 1) / Poisson(rate)
// draw per element, element i reading param's element i % param.numel() (param contiguous,
// float32/float64). Gamma: alpha <= 0 or NaN gives NaN; Poisson: rate < 0 or NaN gives NaN in
// a floating out, 0 in an integer one; rate 0 gives 0.
void random_gamma_into(const Tensor& out, const Tensor& alpha, std::optional<uint64_t> seed);
void random_poisson_into(const Tensor& out, const Tensor& rate, std::optional<uint64_t> seed);

// Eigenvalues (and right eigenvectors, the columns of the second result, each of unit 2-norm with
// its largest component real, as LAPACK's geev) of a batch [..., n, n] of real or complex
// matrices: complex64 results for float32/complex64 input, complex128 otherwise. Hessenberg
// reduction, then the shifted complex QR algorithm to Schur form, then back substitution.
// Raises ValueError when the QR iteration does not converge.
std::pair<Tensor, Tensor> eig(const Tensor& a, bool vectors);
// The principal matrix logarithm of a batch of complex matrices (Schur form, then Parlett's
// recurrence on the triangle; close eigenvalues take the derivative 1/lambda).
Tensor matrix_log(const Tensor& a);

}  // namespace pj
