// Helpers for kernel tests: deterministic tensors, broadcast shape pairs, reference scalars.
#pragma once

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "kernels/copy.h"
#include "kernels/tensor.h"

namespace pj::testing {

inline constexpr DType kFloats[] = {DType::Float32, DType::Float64};

inline void set_item(const Tensor& t, int64_t i, double v) {
  int64_t off = t.element_offset(i);
  PJ_DISPATCH_ALL(t.dtype(), [&] { static_cast<scalar_t*>(t.raw_data())[off] = static_cast<scalar_t>(v); });
  t.storage()->note_write();
}

inline Tensor iota(Shape s, DType t) {
  Tensor x = Tensor::empty(s, t);
  for (int64_t i = 0; i < x.numel(); ++i) set_item(x, i, t == DType::Bool ? (i % 2) : i);
  return x;
}

// Values in [-4, 4) (floats with fractions; ints nonzero-heavy), seeded.
inline Tensor random(Shape s, DType t, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-4, 4);
  Tensor x = Tensor::empty(s, t);
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = u(g);
    if (!is_floating(t)) v = std::floor(v);
    if (t == DType::Bool) v = v > 0;
    set_item(x, i, v);
  }
  return x;
}

inline Tensor from_ints(std::vector<int64_t> v, DType t) {
  Tensor x = Tensor::empty({static_cast<int64_t>(v.size())}, t);
  PJ_DISPATCH_ALL(t, [&] {
    for (size_t i = 0; i < v.size(); ++i) x.data<scalar_t>()[i] = static_cast<scalar_t>(v[i]);
  });
  return x;
}

inline Tensor from_doubles(std::vector<double> v, DType t) {
  Tensor x = Tensor::empty({static_cast<int64_t>(v.size())}, t);
  for (size_t i = 0; i < v.size(); ++i) set_item(x, i, v[i]);
  return x;
}

// A contiguous tensor of `shape` holding `v` in row-major order, converted to `t`.
inline Tensor from_doubles(std::vector<double> v, Shape shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  PJ_CHECK(static_cast<int64_t>(v.size()) == x.numel())
      << "from_doubles: " << v.size() << " values for shape " << shape_str(shape);
  for (size_t i = 0; i < v.size(); ++i) set_item(x, i, v[i]);
  return x;
}

// i * scale + shift for the row-major index i, converted to `t` (numpy:
// (np.arange(n) * scale + shift).astype(t).reshape(shape); keep the arithmetic exact).
inline Tensor affine(Shape shape, DType t, double scale, double shift) {
  Tensor x = Tensor::empty(shape, t);
  for (int64_t i = 0; i < x.numel(); ++i) set_item(x, i, static_cast<double>(i) * scale + shift);
  return x;
}

// A view of `x` with its axes permuted (numpy's x.transpose(perm)).
inline Tensor permuted(const Tensor& x, std::vector<int> perm) {
  Shape shape, strides;
  for (int p : perm) {
    shape.push_back(x.dim(p));
    strides.push_back(x.stride(p));
  }
  return x.as_strided(shape, strides, x.offset());
}

// Value of `t` broadcast to `shape`, at logical index i of `shape`.
inline double bcast_item(const Tensor& t, const Shape& shape, int64_t i) {
  Shape st = broadcast_strides(t, shape);
  int64_t off = 0;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    off += (i % shape[d]) * st[d];
    i /= shape[d];
  }
  return PJ_DISPATCH_ALL(t.dtype(), [&]() -> double {
    return static_cast<double>(static_cast<const scalar_t*>(t.raw_data())[off]);
  });
}

inline std::vector<std::pair<Shape, Shape>> broadcast_pairs() {
  return {{{}, {}},         {{5}, {}},          {{}, {5}},          {{0}, {1}},
          {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}},   {{2, 1, 4}, {3, 1}}, {{1}, {17}},
          {{33}, {33}},     {{2, 0, 3}, {1, 3}}};
}

inline double py_floordiv(double a, double b) { return std::floor(a / b); }
inline double py_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

inline double ref_binary(const std::string& op, double x, double y, DType t) {
  bool integer = !is_floating(t);
  if (op == "add") return x + y;
  if (op == "sub") return x - y;
  if (op == "mul") return x * y;
  if (op == "div") return x / y;
  if (op == "floor_div") return integer && y == 0 ? 0 : py_floordiv(x, y);
  if (op == "mod") return integer && y == 0 ? 0 : (y == 0 ? NAN : py_mod(x, y));
  if (op == "maximum") return std::max(x, y);
  if (op == "minimum") return std::min(x, y);
  if (op == "eq") return x == y;
  if (op == "ne") return x != y;
  if (op == "lt") return x < y;
  if (op == "le") return x <= y;
  if (op == "gt") return x > y;
  if (op == "ge") return x >= y;
  if (op == "logical_and") return (x != 0) && (y != 0);
  if (op == "logical_or") return (x != 0) || (y != 0);
  if (op == "logical_xor") return (x != 0) != (y != 0);
  return NAN;
}

inline double ref_unary(const std::string& op, double x) {
  if (op == "neg") return -x;
  if (op == "abs") return std::abs(x);
  if (op == "sign") return (x > 0) - (x < 0);
  if (op == "square") return x * x;
  if (op == "relu") return x > 0 ? x : 0;
  if (op == "floor") return std::floor(x);
  if (op == "ceil") return std::ceil(x);
  if (op == "round") return std::nearbyint(x);
  if (op == "exp") return std::exp(x);
  if (op == "expm1") return std::expm1(x);
  if (op == "log") return x < 0 ? NAN : std::log(x);
  if (op == "log1p") return x < -1 ? NAN : std::log1p(x);
  if (op == "sqrt") return x < 0 ? NAN : std::sqrt(x);
  if (op == "rsqrt") return x < 0 ? NAN : 1 / std::sqrt(x);
  if (op == "sin") return std::sin(x);
  if (op == "cos") return std::cos(x);
  if (op == "tanh") return std::tanh(x);
  if (op == "sigmoid") return 1 / (1 + std::exp(-x));
  if (op == "gelu") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (op == "silu") return x / (1 + std::exp(-x));
  if (op == "softplus") return std::log1p(std::exp(x));
  if (op == "erf") return std::erf(x);
  return NAN;
}

// ---- shape / index / creation tests -----------------------------------------------------------

// Runs `stmt` expecting a pj::Error of ErrorKind::KIND whose message is exactly `msg`.
#define PJ_EXPECT_ERROR(stmt, KIND, msg)                                              \
  do {                                                                                \
    try {                                                                             \
      stmt;                                                                           \
      ADD_FAILURE() << "no error from " #stmt;                                        \
    } catch (const ::pj::Error& e) {                                                  \
      EXPECT_EQ(e.kind(), ::pj::ErrorKind::KIND) << e.what();                         \
      EXPECT_EQ(std::string(e.what()), std::string(msg));                             \
    }                                                                                 \
  } while (0)

inline std::vector<DType> all_dtypes() {
  return {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64};
}

// Every element in row-major logical order.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.item_double(i);
  return v;
}

inline std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

inline int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + idx[d];
  return i;
}

// Element at a multi-index, through the tensor's own strides.
inline double at(const Tensor& t, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.stride(static_cast<int>(d));
  return PJ_DISPATCH_ALL(t.dtype(), [&]() -> double {
    return static_cast<double>(static_cast<const scalar_t*>(t.raw_data())[off]);
  });
}

// The same values as x in a non-contiguous layout: every other element of a wider buffer.
inline Tensor gapped(const Tensor& x) {
  if (x.ndim() == 0) return x;
  Shape big = x.shape();
  big.back() = big.back() * 2 + 1;
  Tensor b = Tensor::zeros(big, x.dtype());
  Shape st = b.strides();
  st.back() = 2;
  Tensor v = b.as_strided(x.shape(), st, 1);
  copy_into(v, x);
  return v;
}

// The same values as x stored in column-major order.
inline Tensor fortran(const Tensor& x) {
  Shape rev(x.shape().rbegin(), x.shape().rend());
  Tensor b = Tensor::empty(rev, x.dtype());
  Shape st(b.strides().rbegin(), b.strides().rend());
  Tensor v = b.as_strided(x.shape(), st, 0);
  copy_into(v, x);
  return v;
}

// The same values as a 4-D x stored with H and W swapped in memory (a non-contiguous view).
inline Tensor hw_swapped(const Tensor& x) {
  Tensor b = Tensor::empty({x.dim(0), x.dim(1), x.dim(3), x.dim(2)}, x.dtype());
  Tensor v = b.as_strided(x.shape(), {b.stride(0), b.stride(1), 1, x.dim(2)}, 0);
  copy_into(v, x);
  return v;
}

// x, and the same values in two non-contiguous layouts.
inline std::vector<Tensor> layouts(const Tensor& x) { return {x, gapped(x), fortran(x)}; }

inline std::vector<Shape> test_shapes() {
  return {{}, {0}, {1}, {7}, {3, 5}, {1, 4}, {4, 1}, {2, 0, 3}, {2, 3, 4}, {3, 1, 5, 2}};
}

}  // namespace pj::testing

// ---- helpers for reduction / matmul tests ----------------------------------------------------
#include "gtest/gtest.h"

namespace pj::testing {

// Every element in logical order, as double.
inline std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.item_double(i);
  return v;
}

// A view of `t` with its dims reversed (t.T for 2-D); shares storage, not contiguous.
inline Tensor reversed_view(const Tensor& t) {
  Shape s(t.shape().rbegin(), t.shape().rend()), st(t.strides().rbegin(), t.strides().rend());
  return t.as_strided(s, st, t.offset());
}

// Random values of `shape` held as every other element of a bigger buffer (stride 2 innermost).
inline Tensor strided_random(Shape shape, DType t, unsigned seed) {
  Shape big = shape;
  if (big.empty()) return random(shape, t, seed);
  big.back() *= 2;
  Tensor b = random(big, t, seed);
  Shape st = b.strides();
  st.back() = 2;
  return b.as_strided(shape, st, 0);
}

// Expects `f` to raise pj::Error of `kind` whose message is `msg` (or contains it when partial).
template <typename F>
inline ::testing::AssertionResult raises(F&& f, ErrorKind kind, const std::string& msg, bool partial = false) {
  try {
    f();
  } catch (const Error& e) {
    std::string what = e.what();
    if (e.kind() != kind) return ::testing::AssertionFailure() << "wrong kind for: " << what;
    if (partial ? what.find(msg) == std::string::npos : what != msg)
      return ::testing::AssertionFailure() << "message: " << what;
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no error raised";
}

}  // namespace pj::testing

// ---- helpers for layer tests (norm, loss, nn_misc) -------------------------------------------
namespace pj::testing {

// Relative tolerance of a float kernel result of dtype t against a double reference.
inline double rtol_for(DType t) { return t == DType::Float32 ? 3e-5 : 1e-11; }

// got (any layout) against want (logical order): |g - w| <= atol + rtol * |w| for every element,
// NaN where want is NaN.
inline ::testing::AssertionResult all_close(const Tensor& got, const std::vector<double>& want, double rtol,
                                            double atol) {
  if (got.numel() != static_cast<int64_t>(want.size()))
    return ::testing::AssertionFailure() << "numel " << got.numel() << " vs " << want.size();
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.item_double(i), w = want[i];
    if (std::isnan(w) ? !std::isnan(g) : !(std::abs(g - w) <= atol + rtol * std::abs(w)))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}
inline ::testing::AssertionResult all_close(const Tensor& got, const std::vector<double>& want) {
  double r = rtol_for(got.dtype());
  return all_close(got, want, r, r);
}

// Random values in [lo, hi), seeded, of `shape` and dtype t.
inline Tensor uniform(Shape shape, DType t, double lo, double hi, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor x = Tensor::empty(shape, t);
  for (int64_t i = 0; i < x.numel(); ++i) set_item(x, i, u(g));
  return x;
}

// Integers in [lo, hi) of `shape` and dtype t, seeded.
inline Tensor randints(Shape shape, DType t, int64_t lo, int64_t hi, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int64_t> u(lo, hi - 1);
  Tensor x = Tensor::empty(shape, t);
  for (int64_t i = 0; i < x.numel(); ++i) set_item(x, i, static_cast<double>(u(g)));
  return x;
}

}  // namespace pj::testing
