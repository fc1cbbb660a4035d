#include "kernels/elementwise.h"

#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>

#include "kernels/dnnl_context.h"
#include "kernels/copy.h"
#include "kernels/fused.h"
#include "kernels/fused_math.h"
#include "kernels/loops.h"
#include "kernels/special_math.h"

namespace pj {

namespace {
// The ops with complex loops (numpy's meaning; abs, which returns a real, and the ordering
// ones are not among them).
bool complex_unary(UnaryOp op) {
  switch (op) {
    case UnaryOp::neg: case UnaryOp::square: case UnaryOp::exp: case UnaryOp::log:
    case UnaryOp::sqrt: case UnaryOp::reciprocal: case UnaryOp::sin: case UnaryOp::cos:
    case UnaryOp::tan: case UnaryOp::tanh: return true;
    default: return false;
  }
}
bool complex_binary(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: case BinaryOp::sub: case BinaryOp::mul: case BinaryOp::div:
    case BinaryOp::pow: case BinaryOp::eq: case BinaryOp::ne: return true;
    default: return false;
  }
}
}  // namespace

void check_unary_dtype(UnaryOp op, DType t) {
  if (unary_op_kind(op) == 'I' && !is_integral(t, true))
    PJ_THROW(Type) << unary_op_name(op) << " does not support dtype " << dtype_name(t)
                   << ": it takes integers or bool";
  if (unary_op_kind(op) == 'I' || unary_op_kind(op) == 'B') {
    if (is_complex(t)) PJ_THROW(Type) << unary_op_name(op) << " does not support dtype " << dtype_name(t);
    return;
  }
  if (is_complex(t) && !complex_unary(op))
    PJ_THROW(Type) << unary_op_name(op) << " does not support dtype " << dtype_name(t);
  if (t != DType::Bool) return;
  switch (op) {
    case UnaryOp::abs:
    case UnaryOp::square:
    case UnaryOp::floor:
    case UnaryOp::ceil:
    case UnaryOp::round: return;
    default: PJ_THROW(Type) << unary_op_name(op) << " does not support dtype Bool";
  }
}

void check_binary_dtype(BinaryOp op, DType t) {
  if (binary_op_kind(op) == 'I') {
    const bool bitwise = op == BinaryOp::bitwise_and || op == BinaryOp::bitwise_or || op == BinaryOp::bitwise_xor;
    if (!is_integral(t, bitwise))
      PJ_THROW(Type) << binary_op_name(op) << " does not support dtype " << dtype_name(t)
                     << (bitwise ? ": it takes integers or bool" : ": it takes integers");
    return;
  }
  if (is_complex(t) && !complex_binary(op))
    PJ_THROW(Type) << binary_op_name(op) << " does not support dtype " << dtype_name(t);
  if (t != DType::Bool) return;
  switch (op) {
    case BinaryOp::sub:
      PJ_THROW(Type) << "numpy boolean subtract, the `-` operator, is not supported, use the "
                        "bitwise_xor, the `^` operator, or the logical_xor function instead.";
    case BinaryOp::floor_div: PJ_THROW(Type) << "floor_div does not support dtype Bool";
    case BinaryOp::mod: PJ_THROW(Type) << "mod does not support dtype Bool";
    case BinaryOp::pow: PJ_THROW(Type) << "pow does not support dtype Bool";
    default: return;
  }
}

const char* unary_op_name(UnaryOp op) {
  switch (op) {
#define PJ_X(name, kind) case UnaryOp::name: return #name;
    PJ_UNARY_OPS(PJ_X)
#undef PJ_X
  }
  return "?";
}

const char* binary_op_name(BinaryOp op) {
  switch (op) {
#define PJ_X(name, kind) case BinaryOp::name: return #name;
    PJ_BINARY_OPS(PJ_X)
#undef PJ_X
  }
  return "?";
}

char unary_op_kind(UnaryOp op) {
  switch (op) {
#define PJ_X(name, kind) case UnaryOp::name: return #kind[0];
    PJ_UNARY_OPS(PJ_X)
#undef PJ_X
  }
  return '?';
}

char binary_op_kind(BinaryOp op) {
  switch (op) {
#define PJ_X(name, kind) case BinaryOp::name: return #kind[0];
    PJ_BINARY_OPS(PJ_X)
#undef PJ_X
  }
  return '?';
}

namespace {

// ---- oneDNN eltwise (float32, contiguous) ----------------------------------------------------
bool dnnl_eltwise_alg(UnaryOp op, dnnl::algorithm* alg, float* alpha) {
  using A = dnnl::algorithm;
  *alpha = 0.f;
  switch (op) {
    case UnaryOp::exp: *alg = A::eltwise_exp; return true;
    // eltwise_log is left out on purpose: oneDNN 2.6's is ~50 ulp off in float32.
    case UnaryOp::sqrt: *alg = A::eltwise_sqrt; return true;
    case UnaryOp::tanh: *alg = A::eltwise_tanh; return true;
    case UnaryOp::sigmoid: *alg = A::eltwise_logistic; return true;
    case UnaryOp::relu: *alg = A::eltwise_relu; return true;
    case UnaryOp::gelu: *alg = A::eltwise_gelu_erf; return true;
    case UnaryOp::gelu_tanh: *alg = A::eltwise_gelu_tanh; return true;
    case UnaryOp::silu: *alg = A::eltwise_swish; *alpha = 1.f; return true;
    case UnaryOp::softplus: *alg = A::eltwise_soft_relu; return true;
    case UnaryOp::abs: *alg = A::eltwise_abs; return true;
    case UnaryOp::square: *alg = A::eltwise_square; return true;
    default: return false;
  }
}

void dnnl_eltwise(dnnl::algorithm alg, float alpha, float beta, const Tensor& out, const Tensor& in) {
  const int64_t n = out.numel();
  std::string key = "eltwise:" + std::to_string(static_cast<int>(alg)) + ":" +
                    std::to_string(alpha) + ":" + std::to_string(beta) + ":" + std::to_string(n);
  dnnl::memory::desc md({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
  dnnl::primitive prim = PrimitiveCache::instance().get(key, [&] {
    auto d = dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, alg, md, alpha, beta);
    return dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(d, scratchpad_attr(), dnnl_engine()));
  });
  dnnl::memory src(md, dnnl_engine(), in.raw_data());
  dnnl::memory dst(md, dnnl_engine(), out.raw_data());
  execute(prim, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
}

// ---- scalar functions --------------------------------------------------------------------------
template <typename T>
inline T gelu_erf(T x) { return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440))); }
template <typename T>
inline T gelu_tanh_fn(T x) {
  const T k = T(0.79788456080286535588);  // sqrt(2/pi)
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}
template <typename T>
inline T sigmoid_fn(T x) {
  return x >= T(0) ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
}
template <typename T>
inline T softplus_fn(T x) { return std::max(x, T(0)) + std::log1p(std::exp(-std::abs(x))); }

// glibc's lgamma writes the global signgam: the reentrant forms, as the loops run on many threads.
inline float lgamma_fn(float x) {
  int sign;
  return static_cast<float>(::lgamma_r(static_cast<double>(x), &sign));  // rounded once from double
}
inline double lgamma_fn(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}

template <typename T>
void unary_float_loop(UnaryOp op, const Tensor& out, const Tensor& in) {
  auto run = [&](auto f) { unary_kernel<T, T>(out, in, f); };
  switch (op) {
    case UnaryOp::neg: return run([](T x) { return -x; });
    case UnaryOp::abs: return run([](T x) { return std::abs(x); });
    case UnaryOp::sign:
      return run([](T x) { return std::isnan(x) ? x : T((x > T(0)) - (x < T(0))); });
    case UnaryOp::square: return run([](T x) { return x * x; });
    case UnaryOp::relu: return run([](T x) { return x > T(0) ? x : (std::isnan(x) ? x : T(0)); });
    case UnaryOp::floor: return run([](T x) { return std::floor(x); });
    case UnaryOp::ceil: return run([](T x) { return std::ceil(x); });
    case UnaryOp::round: return run([](T x) { return std::nearbyint(x); });
    case UnaryOp::exp: return run([](T x) { return std::exp(x); });
    case UnaryOp::log: return run([](T x) { return std::log(x); });
    case UnaryOp::log1p: return run([](T x) { return std::log1p(x); });
    case UnaryOp::expm1: return run([](T x) { return std::expm1(x); });
    case UnaryOp::sqrt: return run([](T x) { return std::sqrt(x); });
    case UnaryOp::rsqrt: return run([](T x) { return T(1) / std::sqrt(x); });
    case UnaryOp::reciprocal: return run([](T x) { return T(1) / x; });
    case UnaryOp::sin: return run([](T x) { return std::sin(x); });
    case UnaryOp::cos: return run([](T x) { return std::cos(x); });
    case UnaryOp::tan: return run([](T x) { return std::tan(x); });
    case UnaryOp::tanh: return run([](T x) { return std::tanh(x); });
    case UnaryOp::sigmoid: return run([](T x) { return sigmoid_fn(x); });
    case UnaryOp::gelu: return run([](T x) { return gelu_erf(x); });
    case UnaryOp::gelu_tanh: return run([](T x) { return gelu_tanh_fn(x); });
    case UnaryOp::silu: return run([](T x) { return x * sigmoid_fn(x); });
    case UnaryOp::softplus: return run([](T x) { return softplus_fn(x); });
    case UnaryOp::erf: return run([](T x) { return std::erf(x); });
    case UnaryOp::asin: return run([](T x) { return std::asin(x); });
    case UnaryOp::acos: return run([](T x) { return std::acos(x); });
    case UnaryOp::atan: return run([](T x) { return std::atan(x); });
    case UnaryOp::asinh: return run([](T x) { return std::asinh(x); });
    case UnaryOp::acosh: return run([](T x) { return std::acosh(x); });
    case UnaryOp::atanh: return run([](T x) { return std::atanh(x); });
    case UnaryOp::lgamma: return run([](T x) { return lgamma_fn(x); });
    // special_math.h computes in double; float results are rounded once from it.
    case UnaryOp::digamma: return run([](T x) { return static_cast<T>(special::digamma(x)); });
    case UnaryOp::trigamma: return run([](T x) { return static_cast<T>(special::trigamma(x)); });
    case UnaryOp::erfinv: return run([](T x) { return static_cast<T>(special::erfinv(x)); });
    case UnaryOp::bessel_i0: return run([](T x) { return static_cast<T>(special::bessel_i0(x)); });
    case UnaryOp::bessel_i0e: return run([](T x) { return static_cast<T>(special::bessel_i0e(x)); });
    case UnaryOp::bessel_i1: return run([](T x) { return static_cast<T>(special::bessel_i1(x)); });
    case UnaryOp::bessel_i1e: return run([](T x) { return static_cast<T>(special::bessel_i1e(x)); });
    case UnaryOp::bitwise_not:
    case UnaryOp::signbit: PJ_CHECK(false) << unary_op_name(op) << " runs in unary_storage_loop";
  }
}

// I and B ops on every storage dtype as it is: bitwise_not (integers, bool) and signbit.
// (templates, so that `if constexpr` discards what a dtype cannot compile; complex is refused
// before these run)
template <typename T>
void unary_storage_loop(UnaryOp op, const Tensor& out, const Tensor& in) {
  if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return check_unary_dtype(op, dtype_of<T>::value);
  } else if (op == UnaryOp::signbit) {
    return unary_kernel<bool, T>(out, in, [](T x) {
      if constexpr (std::is_integral_v<T>) {
        if constexpr (std::is_signed_v<T>) return x < 0;
        else return false;
      } else {
        // the top bit, NaN's too (and no float conversion: gcc 12 fails to compile one vectorised here)
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
          return (x.bits >> 15) != 0;
        } else {
          using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
          Bits u;
          std::memcpy(&u, &x, sizeof u);
          return (u >> (sizeof(T) * 8 - 1)) != 0;
        }
      }
    });
  }
  PJ_CHECK(op == UnaryOp::bitwise_not) << unary_op_name(op);
  if constexpr (std::is_same_v<T, bool>) return unary_kernel<bool, bool>(out, in, [](bool x) { return !x; });
  else if constexpr (std::is_integral_v<T>) return unary_kernel<T, T>(out, in, [](T x) { return static_cast<T>(~x); });
  else check_unary_dtype(op, dtype_of<T>::value);
}

template <typename T>
void unary_int_loop(UnaryOp op, const Tensor& out, const Tensor& in) {
  auto run = [&](auto f) { unary_kernel<T, T>(out, in, f); };
  using U = std::make_unsigned_t<T>;
  switch (op) {
    // Wrap-around like numpy for the most negative value (no UB).
    case UnaryOp::neg: return run([](T x) { return static_cast<T>(U(0) - static_cast<U>(x)); });
    case UnaryOp::abs:
      return run([](T x) { return x < 0 ? static_cast<T>(U(0) - static_cast<U>(x)) : x; });
    case UnaryOp::sign: return run([](T x) { return T((x > 0) - (x < 0)); });
    case UnaryOp::square:
      return run([](T x) { return static_cast<T>(static_cast<U>(x) * static_cast<U>(x)); });
    case UnaryOp::relu: return run([](T x) { return x > 0 ? x : T(0); });
    case UnaryOp::floor:
    case UnaryOp::ceil:
    case UnaryOp::round: return run([](T x) { return x; });
    default:
      PJ_CHECK(false) << unary_op_name(op) << " on integers must be computed in floating point";
  }
}

void unary_bool_loop(UnaryOp op, const Tensor& out, const Tensor& in) {
  check_unary_dtype(op, DType::Bool);
  unary_kernel<bool, bool>(out, in, [](bool x) { return x; });  // abs, square, floor, ceil, round
}

}  // namespace

namespace {

// float32 unary and binary ops that fused kernels implement run as one-op fused kernels
// (kernels/fused.h), so a graph that fuses them computes exactly what eager does, at every size:
// oneDNN's relu, for one, turns NaN into 0 where numpy keeps it; the approximated ones (exp, log,
// tanh, sigmoid, silu, erf, gelu, gelu_tanh) are the same approximations; and when both operands
// of a binary op are NaN, which one comes out depends on the instruction's operand order (x86
// returns the first), which compiled loops and oneDNN choose freely.
// Each op's kernel is made on its first use (making all of them at once cost a process's first
// relu ~80 us); fused_kernel keeps it for the life of the process.
template <typename Op, int kOps>
const FusedKernel* one_op_kernel(Op op, const char* (*name_of)(Op), int arity) {
  static std::array<std::atomic<const FusedKernel*>, kOps> kernels{};
  static std::array<std::atomic<bool>, kOps> made{};
  static std::mutex mu;
  const int i = static_cast<int>(op);
  if (made[i].load(std::memory_order_acquire)) return kernels[i].load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu);
  if (!made[i].load(std::memory_order_relaxed)) {
    FusedOp f;
    const std::string name = name_of(op);
    if (fused_op_from_name(name, &f) && fused_op_arity(f) == arity && f != FusedOp::clamp)
      kernels[i].store(fused_kernel(arity == 1 ? "in=1; r1=" + name + "(r0); out=(r1)"
                                               : "in=2; r2=" + name + "(r0,r1); out=(r2)").get(),
                       std::memory_order_relaxed);
    made[i].store(true, std::memory_order_release);
  }
  return kernels[i].load(std::memory_order_relaxed);
}

#define PJ_X(name, kind) +1
constexpr int kUnaryOps = 0 PJ_UNARY_OPS(PJ_X);
constexpr int kBinaryOps = 0 PJ_BINARY_OPS(PJ_X);
#undef PJ_X

// `k` on `in` into `out`, through a contiguous temporary when `out` is strided.
void run_one_op(const FusedKernel& k, absl::Span<const Tensor> in, const Tensor& out) {
  if (out.is_contiguous()) return k.run(in, {out});
  Tensor tmp = Tensor::empty(out.shape(), DType::Float32);
  k.run(in, {tmp});
  copy_into(out, tmp);
}

}  // namespace

namespace {
template <typename C>
void unary_complex_loop(UnaryOp op, const Tensor& out, const Tensor& in) {
  auto run = [&](auto f) { unary_kernel<C, C>(out, in, f); };
  switch (op) {
    case UnaryOp::neg: return run([](C x) { return -x; });
    case UnaryOp::square: return run([](C x) { return x * x; });
    case UnaryOp::exp: return run([](C x) { return std::exp(x); });
    case UnaryOp::log: return run([](C x) { return std::log(x); });
    case UnaryOp::sqrt: return run([](C x) { return std::sqrt(x); });
    case UnaryOp::reciprocal: return run([](C x) { return C(1) / x; });
    case UnaryOp::sin: return run([](C x) { return std::sin(x); });
    case UnaryOp::cos: return run([](C x) { return std::cos(x); });
    case UnaryOp::tan: return run([](C x) { return std::tan(x); });
    case UnaryOp::tanh: return run([](C x) { return std::tanh(x); });
    default: check_unary_dtype(op, dtype_of<C>::value);
  }
}

template <typename C>
void binary_complex_loop(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  auto arith = [&](auto f) { binary_kernel<C, C, C>(out, a, b, f); };
  auto cmp = [&](auto f) { binary_kernel<bool, C, C>(out, a, b, f); };
  switch (op) {
    case BinaryOp::add: return arith([](C x, C y) { return x + y; });
    case BinaryOp::sub: return arith([](C x, C y) { return x - y; });
    case BinaryOp::mul: return arith([](C x, C y) { return x * y; });
    case BinaryOp::div: return arith([](C x, C y) { return x / y; });
    case BinaryOp::pow: return arith([](C x, C y) { return std::pow(x, y); });
    case BinaryOp::eq: return cmp([](C x, C y) { return x == y; });
    case BinaryOp::ne: return cmp([](C x, C y) { return x != y; });
    default: check_binary_dtype(op, dtype_of<C>::value);
  }
}
}  // namespace

void complex_part_into(ComplexPart part, const Tensor& out, const Tensor& in) {
  auto run = [&](auto c0) {
    using C = decltype(c0);
    using R = typename C::value_type;
    switch (part) {
      case ComplexPart::real: return unary_kernel<R, C>(out, in, [](C c) { return c.real(); });
      case ComplexPart::imag: return unary_kernel<R, C>(out, in, [](C c) { return c.imag(); });
      case ComplexPart::abs: return unary_kernel<R, C>(out, in, [](C c) { return std::abs(c); });
    }
  };
  PJ_CHECK(is_complex(in.dtype()) && out.dtype() == real_dtype(in.dtype())) << "complex_part_into";
  if (in.dtype() == DType::Complex64) run(complex64());
  else run(complex128());
}

void unary_into(UnaryOp op, const Tensor& out, const Tensor& in) {
  const char kind = unary_op_kind(op);
  if (kind == 'I' || kind == 'B') {
    check_unary_dtype(op, in.dtype());
    PJ_CHECK(out.dtype() == (kind == 'B' ? DType::Bool : in.dtype())) << unary_op_name(op) << ": output dtype";
    if (out.numel() == 0) return;
    if (is_complex(in.dtype())) return;  // (refused above)
    return PJ_DISPATCH_STORAGE(in.dtype(), [&] { unary_storage_loop<scalar_t>(op, out, in); });
  }
  PJ_CHECK(out.dtype() == in.dtype()) << "unary_into expects the compute dtype on both sides";
  if (out.numel() == 0) return;
  switch (in.dtype()) {
    case DType::Complex64: return unary_complex_loop<complex64>(op, out, in);
    case DType::Complex128: return unary_complex_loop<complex128>(op, out, in);
    case DType::Float32: {
      if (const FusedKernel* k = one_op_kernel<UnaryOp, kUnaryOps>(op, unary_op_name, 1))
        return run_one_op(*k, {in}, out);
      dnnl::algorithm alg;
      float alpha;
      // Small tensors stay on the loop: oneDNN opens an OpenMP region even for 16 elements, and
      // on a loaded machine its barrier costs milliseconds (measured: 7.7 ms vs 5 us for 4x4 exp).
      if (out.numel() >= kParallelGrain && dnnl_eltwise_alg(op, &alg, &alpha) &&
          out.is_contiguous() && in.shape() == out.shape()) {
        dnnl_eltwise(alg, alpha, 0.f, out, in.contiguous());
        return;
      }
      return unary_float_loop<float>(op, out, in);
    }
    case DType::Float64: return unary_float_loop<double>(op, out, in);
    case DType::Int32: return unary_int_loop<int32_t>(op, out, in);
    case DType::Int64: return unary_int_loop<int64_t>(op, out, in);
    case DType::Bool: return unary_bool_loop(op, out, in);
    default: throw_no_kernel(in.dtype(), __FILE__);
  }
}

namespace {

// Python/numpy floor division and modulo (result takes the divisor's sign).
template <typename T>
inline T py_floordiv(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == T(0)) return a / b;  // inf/nan like numpy
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div == T(0)) return std::copysign(T(0), a / b);
    T fl = std::floor(div);
    if (div - fl > T(0.5)) fl += T(1);
    return fl;
  } else {
    if (b == 0) return 0;  // numpy's result (with a warning), never SIGFPE
    if (b == T(-1)) return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }
}

template <typename T>
inline T py_mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == T(0)) return std::fmod(a, b);
    T mod = std::fmod(a, b);
    if (mod != T(0)) {
      if ((b < T(0)) != (mod < T(0))) mod += b;
    } else {
      mod = std::copysign(T(0), b);
    }
    return mod;
  } else {
    if (b == 0 || b == T(-1)) return 0;
    T m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
  }
}

template <typename T>
inline T int_pow(T base, T exp) {
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  while (exp > 0) {
    if (exp & 1) result *= b;
    b *= b;
    exp >>= 1;
  }
  return static_cast<T>(result);
}

template <typename T>
void binary_loop(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  auto arith = [&](auto f) { binary_kernel<T, T, T>(out, a, b, f); };
  auto cmp = [&](auto f) { binary_kernel<bool, T, T>(out, a, b, f); };
  constexpr bool kFloat = std::is_floating_point_v<T>;
  using U = std::conditional_t<std::is_same_v<T, bool>, unsigned, std::make_unsigned_t<
      std::conditional_t<kFloat || std::is_same_v<T, bool>, int, T>>>;
  switch (op) {
    case BinaryOp::add:
      if constexpr (std::is_same_v<T, bool>) return arith([](T x, T y) { return x || y; });
      else if constexpr (kFloat) return arith([](T x, T y) { return x + y; });
      else return arith([](T x, T y) { return static_cast<T>(static_cast<U>(x) + static_cast<U>(y)); });
    case BinaryOp::sub:
      if constexpr (std::is_same_v<T, bool>) return check_binary_dtype(op, DType::Bool);
      else if constexpr (kFloat) return arith([](T x, T y) { return x - y; });
      else return arith([](T x, T y) { return static_cast<T>(static_cast<U>(x) - static_cast<U>(y)); });
    case BinaryOp::mul:
      if constexpr (std::is_same_v<T, bool>) return arith([](T x, T y) { return x && y; });
      else if constexpr (kFloat) return arith([](T x, T y) { return x * y; });
      else return arith([](T x, T y) { return static_cast<T>(static_cast<U>(x) * static_cast<U>(y)); });
    case BinaryOp::div:
      if constexpr (kFloat) return arith([](T x, T y) { return x / y; });
      else PJ_CHECK(false) << "true division is computed in floating point";
      return;
    case BinaryOp::floor_div:
      if constexpr (std::is_same_v<T, bool>) return check_binary_dtype(op, DType::Bool);
      else return arith([](T x, T y) { return py_floordiv(x, y); });
    case BinaryOp::mod:
      if constexpr (std::is_same_v<T, bool>) return check_binary_dtype(op, DType::Bool);
      else return arith([](T x, T y) { return py_mod(x, y); });
    case BinaryOp::pow:
      if constexpr (std::is_same_v<T, bool>) return check_binary_dtype(op, DType::Bool);
      else if constexpr (kFloat) return arith([](T x, T y) { return std::pow(x, y); });
      else {
        check_integer_pow(b);
        return arith([](T x, T y) { return int_pow(x, y); });
      }
    case BinaryOp::maximum: return arith([](T x, T y) { return fused_math::nan_max(x, y); });
    case BinaryOp::relu_grad:
      if constexpr (std::is_same_v<T, bool>) return arith([](T g, T x) { return g && x; });
      else return arith([](T g, T x) { return select_bits(static_cast<uint8_t>(x > T(0)), g, T(0)); });
    case BinaryOp::minimum: return arith([](T x, T y) { return fused_math::nan_min(x, y); });
    case BinaryOp::eq: return cmp([](T x, T y) { return x == y; });
    case BinaryOp::ne: return cmp([](T x, T y) { return x != y; });
    case BinaryOp::lt: return cmp([](T x, T y) { return x < y; });
    case BinaryOp::le: return cmp([](T x, T y) { return x <= y; });
    case BinaryOp::gt: return cmp([](T x, T y) { return x > y; });
    case BinaryOp::ge: return cmp([](T x, T y) { return x >= y; });
    case BinaryOp::logical_and: return cmp([](T x, T y) { return (x != T(0)) && (y != T(0)); });
    case BinaryOp::logical_or: return cmp([](T x, T y) { return (x != T(0)) || (y != T(0)); });
    case BinaryOp::logical_xor: return cmp([](T x, T y) { return (x != T(0)) != (y != T(0)); });
    case BinaryOp::atan2:
    case BinaryOp::hypot:
    case BinaryOp::nextafter:
    case BinaryOp::igamma:
    case BinaryOp::igammac:
      if constexpr (kFloat) {
        if (op == BinaryOp::atan2) return arith([](T y, T x) { return std::atan2(y, x); });
        if (op == BinaryOp::hypot) return arith([](T x, T y) { return std::hypot(x, y); });
        // (in double, rounded once for float32)
        if (op == BinaryOp::igamma) return arith([](T a, T x) { return static_cast<T>(special::igamma(a, x)); });
        if (op == BinaryOp::igammac) return arith([](T a, T x) { return static_cast<T>(special::igammac(a, x)); });
        return arith([](T x, T y) { return std::nextafter(x, y); });
      }
      PJ_CHECK(false) << binary_op_name(op) << " is computed in floating point";
      return;
    default: PJ_CHECK(false) << binary_op_name(op) << " runs in binary_int_loop";
  }
}

// |x| as its unsigned type (the most negative value too).
template <typename T>
inline std::make_unsigned_t<T> unsigned_abs(T x) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) return x < 0 ? static_cast<U>(U(0) - static_cast<U>(x)) : static_cast<U>(x);
  else return x;
}

template <typename U>
inline U unsigned_gcd(U x, U y) {
  while (y != 0) {
    U t = static_cast<U>(x % y);
    x = y;
    y = t;
  }
  return x;
}

// The I ops on integers of any width and sign (and bool for and/or/xor), numpy's results.
template <typename T>
void binary_int_loop(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  auto arith = [&](auto f) { binary_kernel<T, T, T>(out, a, b, f); };
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case BinaryOp::bitwise_and: return arith([](bool x, bool y) { return x && y; });
      case BinaryOp::bitwise_or: return arith([](bool x, bool y) { return x || y; });
      case BinaryOp::bitwise_xor: return arith([](bool x, bool y) { return x != y; });
      default: return check_binary_dtype(op, DType::Bool);
    }
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    constexpr int kBits = static_cast<int>(sizeof(T) * 8);
    switch (op) {
      case BinaryOp::bitwise_and: return arith([](T x, T y) { return static_cast<T>(x & y); });
      case BinaryOp::bitwise_or: return arith([](T x, T y) { return static_cast<T>(x | y); });
      case BinaryOp::bitwise_xor: return arith([](T x, T y) { return static_cast<T>(x ^ y); });
      // A count outside [0, width) is no C++ shift (undefined); numpy reads it as unsigned, so a
      // negative one is "too far" as well.
      case BinaryOp::bitwise_left_shift:
        return arith([](T x, T y) {
          return static_cast<U>(y) < static_cast<U>(kBits) ? static_cast<T>(static_cast<U>(x) << y) : T(0);
        });
      case BinaryOp::bitwise_right_shift:
        return arith([](T x, T y) {
          if (static_cast<U>(y) < static_cast<U>(kBits)) return static_cast<T>(x >> y);
          if constexpr (std::is_signed_v<T>) return x < 0 ? T(-1) : T(0);
          else return T(0);
        });
      case BinaryOp::gcd:
        return arith([](T x, T y) { return static_cast<T>(unsigned_gcd(unsigned_abs(x), unsigned_abs(y))); });
      case BinaryOp::lcm:
        return arith([](T x, T y) {
          const U ux = unsigned_abs(x), uy = unsigned_abs(y);
          if (ux == 0 || uy == 0) return T(0);
          return static_cast<T>(static_cast<U>(ux / unsigned_gcd(ux, uy) * uy));  // wraps like numpy
        });
      default: PJ_CHECK(false) << binary_op_name(op) << " is not an integer op";
    }
  } else {
    check_binary_dtype(op, dtype_of<T>::value);  // (refused before: floating and complex)
  }
}

template <typename T>
void population_count_loop(const Tensor& out, const Tensor& in) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    unary_kernel<uint8_t, T>(out, in, [](T x) {
      return static_cast<uint8_t>(__builtin_popcountll(static_cast<unsigned long long>(static_cast<U>(x))));
    });
  }
}

}  // namespace

void check_integer_pow(const Tensor& exponent) {
  if (!is_integral(exponent.dtype(), false)) return;
  for (int64_t i = 0; i < exponent.numel(); ++i)
    if (exponent.item_int(i) < 0)
      PJ_THROW(Value) << "Integers to negative integer powers are not allowed.";
}

bool unary_fast(UnaryOp op, const Tensor& in, Tensor* out) {
  const char kind = unary_op_kind(op);
  if (kind == 'I' || kind == 'B' || in.dtype() != DType::Float32 || in.is_symbolic() || !in.is_contiguous()) return false;
  const FusedKernel* k = one_op_kernel<UnaryOp, kUnaryOps>(op, unary_op_name, 1);
  if (!k) return false;
  *out = Tensor::empty(in.shape(), DType::Float32);
  k->run({in}, {*out});
  return true;
}

bool binary_fast(BinaryOp op, const Tensor& a, const Tensor& b, Tensor* out) {
  const char kind = binary_op_kind(op);
  if ((kind != 'A' && kind != 'F') || a.dtype() != DType::Float32 || b.dtype() != DType::Float32 ||
      a.is_symbolic() || b.is_symbolic() || a.shape() != b.shape() || !a.is_contiguous() || !b.is_contiguous())
    return false;
  const FusedKernel* k = one_op_kernel<BinaryOp, kBinaryOps>(op, binary_op_name, 2);
  if (!k) return false;
  *out = Tensor::empty(a.shape(), DType::Float32);
  k->run({a, b}, {*out});
  return true;
}

void binary_into(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  PJ_CHECK(a.dtype() == b.dtype()) << "binary_into expects one compute dtype";
  if (binary_op_kind(op) == 'I') {
    check_binary_dtype(op, a.dtype());
    if (out.numel() == 0) return;
    return PJ_DISPATCH_STORAGE(a.dtype(), [&] { binary_int_loop<scalar_t>(op, out, a, b); });
  }
  if (out.numel() == 0) return;
  if (a.dtype() == DType::Float32 && out.dtype() == DType::Float32) {
    if (const FusedKernel* k = one_op_kernel<BinaryOp, kBinaryOps>(op, binary_op_name, 2))
      return run_one_op(*k, {a, b}, out);
  }
  if (a.dtype() == DType::Complex64) return binary_complex_loop<complex64>(op, out, a, b);
  if (a.dtype() == DType::Complex128) return binary_complex_loop<complex128>(op, out, a, b);
  PJ_DISPATCH_ALL(a.dtype(), [&] { binary_loop<scalar_t>(op, out, a, b); });
}

void clamp_into(const Tensor& out, const Tensor& in, double lo, double hi, bool has_lo, bool has_hi) {
  if (out.numel() == 0) return;
  PJ_DISPATCH_NUMERIC(in.dtype(), "clamp", [&] {
    using T = scalar_t;
    const T l = has_lo ? static_cast<T>(lo) : T(0), h = has_hi ? static_cast<T>(hi) : T(0);
    unary_kernel<T, T>(out, in, [=](T x) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x)) return x;
      }
      if (has_lo && x < l) x = l;
      if (has_hi && x > h) x = h;
      return x;
    });
  });
}

void population_count_into(const Tensor& out, const Tensor& in) {
  if (!is_integral(in.dtype(), false))
    PJ_THROW(Type) << "population_count does not support dtype " << dtype_name(in.dtype()) << ": it takes integers";
  PJ_CHECK(out.dtype() == DType::UInt8) << "population_count_into: uint8 output";
  if (out.numel() == 0) return;
  PJ_DISPATCH_STORAGE(in.dtype(), [&] { population_count_loop<scalar_t>(out, in); });
}

void where_into(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  PJ_CHECK(cond.dtype() == DType::Bool && a.dtype() == out.dtype() && b.dtype() == out.dtype());
  if (out.numel() == 0) return;
  PJ_DISPATCH_ALL(out.dtype(), [&] {
    using T = scalar_t;
    // (the mask read as bytes: a vector of bool is no vector type to the compiler; bools are 0 or 1)
    ternary_kernel<T, uint8_t, T, T>(out, cond, a, b, [](uint8_t c, T x, T y) { return select_bits(c, x, y); });
  });
}

}  // namespace pj
