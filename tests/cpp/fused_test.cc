// Fused elementwise kernels: the machine code against the scalar reference (bit for bit for the
// exact ops, over random programs, shapes with broadcasting, special values), the approximated
// ops against double precision within kFusedMaxUlp, and the program text.
#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/fused.h"
#include "kernels/threading.h"
#include "test_util.h"

namespace pj {
namespace {

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// Both NaN, or the same bits.
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b); }

struct JitOff {
  bool old = set_fused_jit(false);
  ~JitOff() { set_fused_jit(old); }
};

Tensor values(Shape s, std::mt19937& g) {
  static const float special[] = {0.f, -0.f, 1.f, -1.f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 3.4e38f, 0.5f, 2.5f, -2.5f};
  std::uniform_real_distribution<float> u(-6, 6);
  Tensor t = Tensor::empty(s, DType::Float32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = g() % 5 == 0 ? special[g() % 13] : u(g);
  return t;
}

// Whether the fused loops must run as machine code here: x86-64 with AVX2 and FMA (every CI
// machine), unless PIJIT_FUSED_JIT=0 turns the compiler off. There a "jit" run that falls back to
// the interpreter (the backend not linked in, a compile that failed) would compare the interpreter
// with itself: the tests below fail on it instead.
bool machine_code_expected() {
#if defined(__x86_64__)
  const char* jit = std::getenv("PIJIT_FUSED_JIT");
  if (jit && std::strcmp(jit, "0") == 0) return false;
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// With jit on where machine code is expected: the kernel has machine code for inputs of one element
// at `scalar_mask` (what a run over contiguous inputs uses).
void expect_machine_code(const FusedKernel& k, uint32_t scalar_mask, bool jit) {
  if (jit && machine_code_expected()) {
    EXPECT_NE(k.row_fn(scalar_mask), nullptr) << "no machine code (backend " << fused_compiler_name() << ") for "
                                              << k.program().to_string();
  }
}

uint32_t scalar_mask(const std::vector<Tensor>& ins) {
  uint32_t mask = 0;
  for (size_t k = 0; k < ins.size(); ++k)
    if (ins[k].numel() == 1) mask |= 1u << k;
  return mask;
}

std::vector<float> run(const FusedProgram& p, const std::vector<Tensor>& ins, const Shape& shape, bool jit) {
  bool old = set_fused_jit(jit);
  Tensor out = Tensor::empty(shape, DType::Float32);
  FusedKernel k(p);
  expect_machine_code(k, scalar_mask(ins), jit);
  k.run(ins, {out});
  set_fused_jit(old);
  return std::vector<float>(out.data<float>(), out.data<float>() + out.numel());
}

TEST(Fused, ProgramTextRoundTrips) {
  const char* text = "in=2; r2=mul(r0,r1); r3=clamp(r2,lo=-1.5,hi=6); r4=tanh(r3); out=(r4,r2)";
  FusedProgram p = FusedProgram::parse(text);
  EXPECT_EQ(p.num_inputs, 2);
  EXPECT_EQ(p.code.size(), 3u);
  EXPECT_EQ(p.to_string(), text);
  EXPECT_THROW(FusedProgram::parse("in=1; r1=frob(r0); out=(r1)"), Error);
  EXPECT_THROW(FusedProgram::parse("in=1; r1=neg(r3); out=(r1)"), Error);
  EXPECT_THROW(FusedProgram::parse("in=1; r1=neg(r0)"), Error);
}

TEST(Fused, BackendIsMachineCodeOnAvx2) {
  // The host of every CI machine has AVX2+FMA (env/machines), some AVX-512 too (PIJIT_FUSED_ISA=avx2
  // keeps AVX2: tools/run_tests.sh runs the fused tests both ways there); elsewhere the interpreter.
  std::string name = fused_compiler_name();
  EXPECT_TRUE(name == "asmjit-avx2" || name == "asmjit-avx512" || name == "interpreter") << name;
  const char* isa = std::getenv("PIJIT_FUSED_ISA");
  const bool want_avx2 = isa && std::string(isa) == "avx2";
  if (want_avx2) {
    EXPECT_NE(name, "asmjit-avx512");
  }
#if defined(__x86_64__)
  if (machine_code_expected()) {  // the AsmJit backend, of the widest ISA allowed
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    EXPECT_EQ(name, avx512 && !want_avx2 ? "asmjit-avx512" : "asmjit-avx2");
  }
#endif
  FusedKernel k(FusedProgram::parse("in=2; r2=add(r0,r1); out=(r2)"));
  if (name != "interpreter") {
    EXPECT_NE(k.row_fn(0), nullptr);
    EXPECT_GT(fused_kernel_bytes("in=2; r2=add(r0,r1); out=(r2)", 0).size(), 16u);
  }
}

// Random straight-line programs of every op: machine code == interpreter, bit for bit (the
// approximations too: the interpreter runs their scalar twins, kernels/fused_math.h).
TEST(Fused, EveryOpMatchesTheReferenceBitForBit) {
  const FusedOp exact[] = {  // every op there is
#define PJ_X(name, n) FusedOp::name,
      PJ_FUSED_OPS(PJ_X)
#undef PJ_X
  };
  std::mt19937 g(1234);
  const Shape shapes[] = {{1}, {7}, {8}, {9}, {3, 5}, {4, 17}, {2, 3, 37}, {100}};
  for (int trial = 0; trial < 600; ++trial) {
    FusedProgram p;
    p.num_inputs = 1 + g() % 4;
    int len = 1 + g() % 14;
    for (int k = 0; k < len; ++k) {
      FusedInstr ins;
      ins.op = exact[g() % (sizeof exact / sizeof exact[0])];
      ins.a = g() % p.num_registers();
      if (fused_op_arity(ins.op) == 2) ins.b = g() % p.num_registers();
      if (ins.op == FusedOp::clamp) {
        ins.has_lo = g() % 2;
        ins.has_hi = !ins.has_lo || g() % 2;
        ins.lo = -1.5f;
        ins.hi = 2.f;
      }
      p.code.push_back(ins);
    }
    p.outputs = {p.num_registers() - 1};
    if (g() % 3 == 0) p.outputs.push_back(static_cast<int>(g() % p.num_registers()));
    Shape shape = shapes[g() % 8];
    std::vector<Tensor> ins;
    for (int k = 0; k < p.num_inputs; ++k) {
      Shape s = shape;
      int pick = g() % 4;  // full, a scalar, broadcast along the last dim, broadcast along the first
      if (pick == 1) s = {};
      if (pick == 2 && s.size() > 1) s.back() = 1;
      if (pick == 3 && s.size() > 1) s[0] = 1;
      ins.push_back(values(s, g));
    }
    std::vector<float> want, got;
    for (size_t o = 0; o < p.outputs.size(); ++o) {
      FusedProgram one = p;
      one.outputs = {p.outputs[o]};
      want = run(one, ins, shape, false);
      got = run(one, ins, shape, true);
      ASSERT_EQ(want.size(), got.size());
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_TRUE(same(want[i], got[i])) << p.to_string() << " element " << i << ": want " << want[i] << " got "
                                           << got[i];
    }
  }
}

// Many values live at once: the register allocator spills ymm registers, which must keep all 8 lanes.
TEST(Fused, RegisterPressureKeepsEveryLane) {
  FusedProgram p;
  p.num_inputs = 11;
  for (int k = 0; k < 10; ++k) p.code.push_back({FusedOp::mul, k, k + 1});   // r11..r20
  int acc = 11;
  for (int k = 0; k < 10; ++k) {
    p.code.push_back({FusedOp::add, acc, 20 - k});  // every product stays live until here
    acc = p.num_registers() - 1;
  }
  for (int k = 0; k < 11; ++k) {
    p.code.push_back({FusedOp::sub, acc, k});
    acc = p.num_registers() - 1;
  }
  p.outputs = {acc};
  std::mt19937 g(7);
  std::vector<Tensor> ins;
  for (int k = 0; k < 11; ++k) ins.push_back(values({5, 19}, g));
  std::vector<float> want = run(p, ins, {5, 19}, false), got = run(p, ins, {5, 19}, true);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_TRUE(same(want[i], got[i])) << "element " << i;
}

TEST(Fused, OutputMayBeItsInput) {
  std::mt19937 g(3);
  Tensor x = values({1000}, g), y = values({1000}, g);
  FusedProgram p = FusedProgram::parse("in=2; r2=mul(r0,r1); r3=add(r2,r0); out=(r3)");
  std::vector<float> want = run(p, {x, y}, {1000}, false);
  FusedKernel(p).run({x, y}, {x});
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(same(want[i], x.data<float>()[i])) << i;
}

TEST(Fused, NonContiguousInputsAreRead) {
  std::mt19937 g(5);
  Tensor a = values({6, 4}, g);
  Tensor at = a.as_strided({4, 6}, {1, 4}, 0);  // a transposed view
  Tensor b = values({4, 6}, g);
  FusedProgram p = FusedProgram::parse("in=2; r2=sub(r0,r1); out=(r2)");
  std::vector<float> got = run(p, {at, b}, {4, 6}, true);
  for (int i = 0; i < 24; ++i) ASSERT_TRUE(same(got[i], at.item_double(i) - b.data<float>()[i]));
}

TEST(Fused, LargeSizesRunOnThreads) {
  std::mt19937 g(11);
  Tensor x = values({1 << 20}, g);
  FusedProgram p = FusedProgram::parse("in=1; r1=mul(r0,r0); r2=relu(r1); out=(r2)");
  std::vector<float> want = run(p, {x}, {1 << 20}, false), got = run(p, {x}, {1 << 20}, true);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_TRUE(same(want[i], got[i])) << i;
}

TEST(Fused, Int32AndFloat64InputsAreConvertedOnLoad) {
  const char* text = "in=3; r0:Int32; r2:Float64; r3=mul(r0,r1); r4=add(r3,r2); out=(r4,r0,r2)";
  FusedProgram p = FusedProgram::parse(text);
  EXPECT_EQ(p.to_string(), text);
  EXPECT_EQ(p.input_dtype(0), DType::Int32);
  EXPECT_EQ(p.input_dtype(1), DType::Float32);
  EXPECT_THROW(FusedProgram::parse("in=1; r0:Int64; out=(r0)"), Error);          // no conversion on load
  EXPECT_THROW(FusedProgram::parse("in=1; r1=neg(r0); r0:Int32; out=(r1)"), Error);  // after the code
  EXPECT_THROW(FusedProgram::parse("in=1; r1:Int32; out=(r0)"), Error);          // not an input
  const int32_t ints[] = {0, -1, 7, 16777217, -16777219, 2147483647, -2147483647 - 1, 123456789};
  const double reals[] = {0.0, -0.0, 1e300, -1e300, 1e-310, NAN, INFINITY, 0.1, 3.4028235677973366e38, 1 + 1e-9};
  std::mt19937 g(29);
  for (int64_t n : {1, 5, 8, 9, 16, 19}) {
    for (bool scalars : {false, true}) {  // the converted inputs one element each (broadcast)
      const int64_t m = scalars ? 1 : n;
      Tensor a = Tensor::empty({m}, DType::Int32), d = Tensor::empty({m}, DType::Float64), x = values({n}, g);
      for (int64_t i = 0; i < m; ++i) {
        a.data<int32_t>()[i] = ints[g() % 8];
        d.data<double>()[i] = reals[g() % 10];
      }
      for (bool jit : {true, false}) {
        SCOPED_TRACE(std::to_string(n) + (scalars ? " scalars " : " ") + (jit ? "jit" : "interpreter"));
        bool old = set_fused_jit(jit);
        Tensor y = Tensor::empty({n}, DType::Float32), ya = Tensor::empty({n}, DType::Float32),
               yd = Tensor::empty({n}, DType::Float32);
        expect_machine_code(*fused_kernel(text), scalar_mask({a, x, d}), jit);
        fused_kernel(text)->run({a, x, d}, {y, ya, yd});
        set_fused_jit(old);
        for (int64_t i = 0; i < n; ++i) {
          const float fa = static_cast<float>(a.data<int32_t>()[scalars ? 0 : i]);
          const float fd = static_cast<float>(d.data<double>()[scalars ? 0 : i]);
          ASSERT_TRUE(same(ya.data<float>()[i], fa)) << i;
          ASSERT_TRUE(same(yd.data<float>()[i], fd)) << i;
          volatile float prod = fa * x.data<float>()[i];  // (rounded: no contraction into an FMA)
          ASSERT_TRUE(same(y.data<float>()[i], prod + fd)) << i;
        }
      }
    }
  }
}

// ---- approximations ------------------------------------------------------------------------

double ulp_error(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(exact)) return got == exact ? 0 : 1e9;
  float e = static_cast<float>(exact);
  if (std::isinf(e)) return std::isinf(got) && (got > 0) == (e > 0) ? 0 : 1e9;
  double ulp = std::nextafter(std::fabs(e), INFINITY) - std::fabs(e);
  if (std::fabs(exact) < std::numeric_limits<float>::min()) ulp = std::numeric_limits<float>::min();
  return std::fabs(got - exact) / ulp;
}

// Measured on the interpreter (bit-identical to the machine code, test above) so that it holds
// wherever pijit runs.
// `scale(x)`, when given, is the magnitude errors are measured against instead of the result's
// (gelu's formulas cancel for negative x: their error is then relative to x/2).
void check_approx(const char* op, double (*ref)(double), float lo, float hi, double (*scale)(double) = nullptr) {
  const int n = 200003;
  Tensor x = Tensor::empty({n}, DType::Float32);
  float* p = x.data<float>();
  for (int i = 0; i < n; ++i) p[i] = lo + (hi - lo) * static_cast<float>(i) / (n - 1);
  static const float special[] = {0.f, -0.f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 1e-30f, -1e-30f, 88.7f, -87.f, 100.f, -100.f};
  for (int i = 0; i < 13; ++i) p[i] = special[i];
  std::vector<float> got = run(FusedProgram::parse(std::string("in=1; r1=") + op + "(r0); out=(r1)"), {x}, {n}, false);
  double worst = 0;
  float at = 0;
  for (int i = 0; i < n; ++i) {
    double e = ulp_error(got[i], ref(p[i]));
    if (scale && std::isfinite(p[i]) && scale(p[i]) != 0) {
      const float s = static_cast<float>(std::fabs(scale(p[i])));
      e = std::min(e, std::fabs(got[i] - ref(p[i])) / (std::nextafter(s, INFINITY) - s));
    }
    if (e > worst) {
      worst = e;
      at = p[i];
    }
  }
  EXPECT_LE(worst, kFusedMaxUlp) << op << " worst at x=" << at;
}

double ref_sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double ref_silu(double x) { return x / (1 + std::exp(-x)); }
double ref_exp(double x) { return std::exp(x); }
double ref_log(double x) { return std::log(x); }
double ref_tanh(double x) { return std::tanh(x); }
double ref_erf(double x) { return std::erf(x); }
double ref_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double ref_gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
double half_if_negative(double x) { return x < 0 ? 0.5 * x : 0; }

TEST(FusedApprox, Exp) { check_approx("exp", ref_exp, -104.f, 89.f); }
TEST(FusedApprox, Log) { check_approx("log", ref_log, 0.f, 1e6f); }
TEST(FusedApprox, LogNearOne) { check_approx("log", ref_log, 0.5f, 2.f); }
TEST(FusedApprox, Tanh) { check_approx("tanh", ref_tanh, -10.f, 10.f); }
TEST(FusedApprox, TanhNearZero) { check_approx("tanh", ref_tanh, -0.7f, 0.7f); }
TEST(FusedApprox, Sigmoid) { check_approx("sigmoid", ref_sigmoid, -90.f, 90.f); }
TEST(FusedApprox, Silu) { check_approx("silu", ref_silu, -20.f, 20.f); }
TEST(FusedApprox, Erf) { check_approx("erf", ref_erf, -6.f, 6.f); }
TEST(FusedApprox, ErfNearZero) { check_approx("erf", ref_erf, -0.6f, 0.6f); }
TEST(FusedApprox, Gelu) { check_approx("gelu", ref_gelu, -12.f, 12.f, half_if_negative); }
TEST(FusedApprox, GeluTanh) { check_approx("gelu_tanh", ref_gelu_tanh, -12.f, 12.f, half_if_negative); }

}  // namespace
}  // namespace pj

namespace pj {
namespace {

// A NaN argument comes back as it is (sign and payload), as libm does: eager and fused code then
// agree on which NaN a later binary op sees.
TEST(FusedApprox, NanArgumentsPassThrough) {
  const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0xffd00001u};
  for (const char* op : {"exp", "log", "tanh", "sigmoid", "silu", "erf", "gelu", "gelu_tanh"}) {
    Tensor x = Tensor::empty({12}, DType::Float32);
    for (int i = 0; i < 12; ++i) std::memcpy(x.data<float>() + i, &nans[i % 4], 4);
    FusedProgram p = FusedProgram::parse(std::string("in=1; r1=") + op + "(r0); out=(r1)");
    for (bool jit : {false, true}) {
      std::vector<float> got = run(p, {x}, {12}, jit);
      for (int i = 0; i < 12; ++i) EXPECT_EQ(bits(got[i]), nans[i % 4]) << op << (jit ? " machine code" : " interpreter");
    }
  }
}

}  // namespace
}  // namespace pj

// ---- NaN and infinities against numpy's semantics ----------------------------------------------

namespace pj {
namespace {

// numpy's value of each fused op in double (relu of -0.0 is +0, pijit's documented choice, which
// == cannot tell apart anyway).
double numpy_op(FusedOp op, double a, double b) {
  auto nan_max = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : (x > y ? x : y); };
  auto nan_min = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : (x < y ? x : y); };
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  switch (op) {
    case FusedOp::add: return a + b;
    case FusedOp::sub: return a - b;
    case FusedOp::mul: return a * b;
    case FusedOp::div: return a / b;
    case FusedOp::maximum: return nan_max(a, b);
    case FusedOp::minimum: return nan_min(a, b);
    case FusedOp::neg: return -a;
    case FusedOp::abs: return std::abs(a);
    case FusedOp::square: return a * a;
    case FusedOp::relu: return std::isnan(a) ? a : (a > 0 ? a : 0);
    case FusedOp::sqrt: return std::sqrt(a);
    case FusedOp::rsqrt: return 1 / std::sqrt(a);
    case FusedOp::reciprocal: return 1 / a;
    case FusedOp::floor: return std::floor(a);
    case FusedOp::ceil: return std::ceil(a);
    case FusedOp::round: return std::nearbyint(a);
    case FusedOp::clamp: return std::isnan(a) ? a : std::min(2.0, std::max(-1.5, a));  // lo=-1.5, hi=2
    case FusedOp::exp: return std::exp(a);
    case FusedOp::log: return std::log(a);
    case FusedOp::tanh: return std::tanh(a);
    case FusedOp::sigmoid: return sigmoid(a);
    case FusedOp::silu: return a * sigmoid(a);
    case FusedOp::erf: return std::erf(a);
    case FusedOp::gelu: return 0.5 * a * (1 + std::erf(a / std::sqrt(2.0)));
    case FusedOp::gelu_tanh: return 0.5 * a * (1 + std::tanh(0.79788456080286535588 * (a + 0.044715 * a * a * a)));
    case FusedOp::relu_grad: return b > 0 ? a : 0;
  }
  return NAN;
}

// Every op on every pair of NaN (both signs), +-inf, +-0, +-1 and +-FLT_MAX, as machine code (of the
// ISA PIJIT_FUSED_ISA allows: tools/run_tests.sh runs this with avx2 too) and as the interpreter,
// in both operand orders: NaN wherever numpy gives NaN (vmaxps/vminps return their second operand on
// NaN, so max/min need the unordered blend on either side), the infinities and limits exactly
// where numpy's are exact, and the approximations close elsewhere. The fused trailing max/min
// reductions propagate NaN and keep the infinities the same way.
TEST(Fused, NaNAndInfinitiesGiveNumpysValuesInEveryBackend) {
  const float sv[] = {NAN, -NAN, INFINITY, -INFINITY, 0.f, -0.f, 1.f, -1.f, 3.4028235e38f, -3.4028235e38f};
  const int ns = sizeof sv / sizeof sv[0];
  // a and b hold every pair, at 3 offsets so the pairs land in vector lanes and the tail.
  const int64_t n = ns * ns * 3 + 5;
  Tensor a = Tensor::empty({n}, DType::Float32), b = Tensor::empty({n}, DType::Float32);
  for (int64_t i = 0; i < n; ++i) {
    a.data<float>()[i] = sv[(i / ns) % ns];
    b.data<float>()[i] = sv[i % ns];
  }
  const FusedOp all[] = {
#define PJ_X(name, k) FusedOp::name,
      PJ_FUSED_OPS(PJ_X)
#undef PJ_X
  };
  for (FusedOp op : all) {
    const std::string name = fused_op_name(op);
    const std::string text = fused_op_arity(op) == 2 ? "in=2; r2=" + name + "(r0,r1); out=(r2)"
                             : op == FusedOp::clamp ? "in=2; r2=clamp(r0,lo=-1.5,hi=2); out=(r2)"
                                                    : "in=2; r2=" + name + "(r0); out=(r2)";
    const FusedProgram p = FusedProgram::parse(text);
    for (bool jit : {true, false})
      for (bool swapped : {false, true}) {
        const Tensor& x = swapped ? b : a;
        const Tensor& y = swapped ? a : b;
        std::vector<float> got = run(p, {x, y}, {n}, jit);
        for (int64_t i = 0; i < n; ++i) {
          const float xa = x.data<float>()[i], xb = y.data<float>()[i];
          const double want = numpy_op(op, xa, xb);
          const float w = static_cast<float>(want);
          const std::string ctx = text + (jit ? " machine code " : " interpreter ") + fused_compiler_name() + " at (" +
                                  std::to_string(xa) + ", " + std::to_string(xb) + ")";
          if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got[i])) << ctx << ": got " << got[i];
          } else if (std::isinf(w) || w == 0 || std::abs(w) == 1) {  // the approximations' limits are exact
            ASSERT_EQ(got[i], w) << ctx;
          } else {
            ASSERT_NEAR(got[i], w, 1e-6 * std::max(std::abs(w), 1.f)) << ctx;
          }
        }
      }
  }
  // Fused trailing max/min: rows of (+inf, NaN, -inf, 1) patterns.
  Tensor r = Tensor::empty({4, 4096}, DType::Float32);
  for (int64_t i = 0; i < r.numel(); ++i) r.data<float>()[i] = static_cast<float>(i % 7) - 3;
  r.data<float>()[0 * 4096 + 4000] = NAN;        // row 0: a NaN in the vector body's last lanes
  r.data<float>()[1 * 4096 + 17] = INFINITY;     // row 1: +inf
  r.data<float>()[2 * 4096 + 4095] = -INFINITY;  // row 2: -inf in the tail
  r.data<float>()[3 * 4096 + 5] = INFINITY;      // row 3: both infinities and a NaN
  r.data<float>()[3 * 4096 + 6] = -INFINITY;
  r.data<float>()[3 * 4096 + 7] = NAN;
  std::shared_ptr<const FusedKernel> k = fused_kernel("in=1; r1=add(r0,r0); out=(r1)");
  for (bool jit : {true, false}) {
    bool old = set_fused_jit(jit);
    Tensor mx = Tensor::empty({4}, DType::Float32), mn = Tensor::empty({4}, DType::Float32);
    ASSERT_TRUE(k->run_reduce({r}, {}, ReduceOp::max, 1, mx));
    ASSERT_TRUE(k->run_reduce({r}, {}, ReduceOp::min, 1, mn));
    set_fused_jit(old);
    const float* M = mx.data<float>();
    const float* m = mn.data<float>();
    EXPECT_TRUE(std::isnan(M[0]) && std::isnan(m[0])) << jit;
    EXPECT_EQ(M[1], INFINITY) << jit;
    EXPECT_EQ(m[1], -6.f) << jit;
    EXPECT_EQ(M[2], 6.f) << jit;
    EXPECT_EQ(m[2], -INFINITY) << jit;
    EXPECT_TRUE(std::isnan(M[3]) && std::isnan(m[3])) << jit;
  }
}

}  // namespace
}  // namespace pj

// ---- fused trailing reductions -----------------------------------------------------------------

namespace pj {
namespace {

struct ReduceCase {
  Shape shape;
  int dim;
  Shape second;     // the second input's shape (broadcast to `shape`)
  bool as_computed;  // reduced as the loop computes it, or the plain way (stored, then reduce_into)
};

// run_reduce against storing the value and reducing it with the eager kernel: the same bits, the
// other output too, for each op, machine code and interpreter.
TEST(FusedReduce, EqualsStoringThenReducingBitForBit) {
  const ReduceCase cases[] = {
      {{7, 1000}, 1, {7, 1000}, true},     // row by row
      {{3, 40000}, 1, {3, 40000}, true},   // rows longer than a block: partials merged in order
      {{50000}, 0, {50000}, true},         // everything: one row
      {{2, 3, 64}, 1, {2, 3, 64}, true},   // two trailing dims
      {{5, 32}, 1, {5, 32}, true},         // the shortest rows the eager kernel takes by rows
      {{7, 1000}, 1, {1000}, true},        // broadcast over rows, walked within each
      {{40, 64}, 1, {40, 1}, true},        // one value per row
      {{2, 3, 64}, 2, {2, 3, 1}, true},    //   (of a 3-d value)
      {{9, 100}, 1, {1}, true},            // one element
      {{40, 31}, 1, {40, 31}, false},      // short rows: the eager kernel reduces across rows
      {{4, 1000}, 0, {1, 1000}, false},    // broadcast within the reduced dims
  };
  const ReduceOp ops[] = {ReduceOp::sum, ReduceOp::mean, ReduceOp::max, ReduceOp::min};
  std::mt19937 g(17);
  std::shared_ptr<const FusedKernel> k = fused_kernel("in=2; r2=sub(r0,r1); r3=mul(r2,r0); out=(r2,r3)");
  for (const ReduceCase& c : cases) {
    Tensor a = values(c.shape, g), b = values(c.second, g);
    int64_t rows = 1;
    for (int d = 0; d < c.dim; ++d) rows *= c.shape[d];
    std::vector<int> axes;
    for (int d = c.dim; d < static_cast<int>(c.shape.size()); ++d) axes.push_back(d);
    for (ReduceOp op : ops)
      for (bool jit : {true, false}) {
        SCOPED_TRACE(shape_str(c.shape) + " dim " + std::to_string(c.dim) + " with " + shape_str(c.second) + " " +
                     reduce_op_name(op) + (jit ? " jit" : " interpreter"));
        bool old = set_fused_jit(jit);
        expect_machine_code(*k, 0, jit);
        Tensor d_want = Tensor::empty(c.shape, DType::Float32), v = Tensor::empty(c.shape, DType::Float32);
        k->run({a, b}, {d_want, v});
        Tensor want = Tensor::empty({rows}, DType::Float32);
        reduce_into(op, want, v, axes);
        Tensor d_got = Tensor::empty(c.shape, DType::Float32), got = Tensor::empty({rows}, DType::Float32);
        EXPECT_EQ(k->run_reduce({a, b}, {d_got}, op, c.dim, got), c.as_computed);
        set_fused_jit(old);
        for (int64_t i = 0; i < rows; ++i) ASSERT_TRUE(same(want.data<float>()[i], got.data<float>()[i])) << "row " << i;
        for (int64_t i = 0; i < d_want.numel(); ++i)
          ASSERT_TRUE(same(d_want.data<float>()[i], d_got.data<float>()[i])) << "element " << i;
      }
  }
}

TEST(FusedReduce, ThreadsGiveTheSameBits) {
  std::mt19937 g(23);
  Tensor a = values({3, 100000}, g);
  std::shared_ptr<const FusedKernel> k = fused_kernel("in=1; r1=square(r0); out=(r1)");
  Tensor one = Tensor::empty({3}, DType::Float32), two = Tensor::empty({3}, DType::Float32);
  int threads = get_num_threads();
  set_num_threads(1);
  ASSERT_TRUE(k->run_reduce({a}, {}, ReduceOp::sum, 1, one));
  set_num_threads(2);
  ASSERT_TRUE(k->run_reduce({a}, {}, ReduceOp::sum, 1, two));
  set_num_threads(threads);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bits(one.data<float>()[i]), bits(two.data<float>()[i]));
}

// A row of at least 4M elements streams its outputs (non-temporal stores) where every output is
// aligned to the vector, and stores them as usual where one is not: the same bits either way, the
// interpreter's, tail included, and with an output that is its input (written in place).
TEST(Fused, LongRowsStreamTheirOutputsWithTheSameBits) {
  const std::string text = "in=2; r2=mul(r0,r1); r3=tanh(r2); r4=add(r3,r0); out=(r4,r2)";
  if (std::string(fused_compiler_name()) != "interpreter") {
    EXPECT_NE(fused_kernel_asm(text, 0).find("vmovntps"), std::string::npos) << "no streaming store in the row";
  }
  const int old_threads = get_num_threads();
  set_num_threads(1);  // (one row of all of it)
  const int64_t n = (int64_t{1} << 22) + 37;
  Tensor a = Tensor::empty({n}, DType::Float32), b = Tensor::empty({n}, DType::Float32);
  for (int64_t i = 0; i < n; ++i) {
    a.data<float>()[i] = 0.001f * static_cast<float>(i % 5000) - 2.f;
    b.data<float>()[i] = 1.f + 0.0001f * static_cast<float>(i % 777);
  }
  auto outputs = [&](bool jit, int64_t offset, bool in_place) {
    const bool old = set_fused_jit(jit);
    Tensor x = a.contiguous();  // (a copy each time: written in place below)
    if (in_place) x = Tensor::empty({n + offset}, DType::Float32).as_strided({n}, {1}, offset);
    if (in_place) std::memcpy(x.data<float>(), a.data<float>(), n * sizeof(float));
    Tensor o1 = in_place ? x : Tensor::empty({n + offset}, DType::Float32).as_strided({n}, {1}, offset);
    Tensor o2 = Tensor::empty({n + offset}, DType::Float32).as_strided({n}, {1}, offset);
    if (offset == 0 && !in_place) {  // (so the streaming path is the one this case runs)
      EXPECT_TRUE(reinterpret_cast<uintptr_t>(o1.data<float>()) % 64 == 0 &&
                  reinterpret_cast<uintptr_t>(o2.data<float>()) % 64 == 0) << "fresh outputs not 64-byte aligned";
    }
    fused_kernel(text)->run({x, b}, {o1, o2});
    set_fused_jit(old);
    std::vector<float> r(o1.data<float>(), o1.data<float>() + n);
    r.insert(r.end(), o2.data<float>(), o2.data<float>() + n);
    return r;
  };
  for (int64_t offset : {0, 1})
    for (bool in_place : {false, true}) {
      SCOPED_TRACE("offset " + std::to_string(offset) + (in_place ? " in place" : ""));
      const std::vector<float> want = outputs(false, offset, in_place), got = outputs(true, offset, in_place);
      ASSERT_EQ(want.size(), got.size());
      EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0);
    }
  set_num_threads(old_threads);
}

}  // namespace
}  // namespace pj

// ---- machine code kept across processes (the compile cache) -------------------------------------

namespace pj {
namespace {

Tensor filled(Shape s, float start, float step) {
  Tensor t = Tensor::empty(s, DType::Float32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i);
  return t;
}

// What a launch ran is recorded once per (program, mask) with its bytes; preloaded under another
// program's text, those bytes are what that kernel runs (its results are the recorded program's,
// bit for bit, at another address), and code preloaded for another backend is never run.
TEST(FusedCode, RecordedMachineCodeRunsWhereverItIsLoaded) {
  if (!machine_code_expected()) GTEST_SKIP() << "no machine code here (" << fused_compiler_name() << ")";
  // tanh and gelu read the constant pool: its addressing must survive the move.
  const std::string p = "in=2; r2=tanh(r0); r3=mul(r2,r1); r4=gelu(r3); out=(r4)";
  const std::string q = "in=2; r2=tanh(r0); r3=sub(r2,r1); r4=gelu(r3); out=(r4)";
  const std::string other = "in=2; r2=tanh(r0); r3=add(r2,r1); r4=gelu(r3); out=(r4)";
  Tensor x = filled({37}, -3.f, 0.17f), s = filled({1}, 1.25f, 0.f);
  Tensor want = Tensor::empty({37}, DType::Float32);
  std::vector<FusedCode> codes;
  {
    FusedCodeRecorder rec;
    fused_kernel(p)->run({x, s}, {want});
    fused_kernel(p)->run({x, s}, {want});  // (once per program and mask)
    codes = rec.codes();
  }
  ASSERT_EQ(codes.size(), 1u);
  EXPECT_EQ(codes[0].program, p);
  EXPECT_EQ(codes[0].mask, 2u);  // (s has one element)
  EXPECT_EQ(codes[0].bytes, fused_kernel_bytes(p, 2));
  // Movable: no 8 bytes of it hold an address inside itself (an absolute reference to its own
  // constant pool would still work in this process, where the original stays mapped).
  const auto at = reinterpret_cast<uintptr_t>(fused_kernel(p)->row_fn(2));
  const std::string& b = codes[0].bytes;
  for (size_t i = 0; i + 8 <= b.size(); ++i) {
    uint64_t word;
    std::memcpy(&word, b.data() + i, 8);
    EXPECT_FALSE(word >= at && word < at + b.size()) << "an absolute address of its own at byte " << i;
  }
  {
    FusedCodeRecorder outer;  // (recorders nest: a launch is the innermost one's)
    {
      FusedCodeRecorder inner;
      Tensor y = Tensor::empty({37}, DType::Float32);
      fused_kernel("in=1; r1=square(r0); out=(r1)")->run({x}, {y});
      EXPECT_EQ(inner.codes().size(), 1u);
    }
    EXPECT_TRUE(outer.codes().empty());
    fused_kernel(p)->run({x, s}, {want});
    EXPECT_EQ(outer.codes().size(), 1u);
  }

  const FusedCodeStats before = fused_code_stats();
  std::vector<FusedCode> moved = codes;
  moved[0].program = FusedProgram::parse(q).to_string();
  preload_fused_codes(fused_compiler_name(), moved);
  std::vector<FusedCode> alien = codes;
  alien[0].program = FusedProgram::parse(other).to_string();
  preload_fused_codes("asmjit-elsewhere", alien);

  Tensor got = Tensor::empty({37}, DType::Float32), plain = Tensor::empty({37}, DType::Float32);
  fused_kernel(q)->run({x, s}, {got});
  fused_kernel(other)->run({x, s}, {plain});
  const FusedCodeStats after = fused_code_stats();
  EXPECT_EQ(after.loaded - before.loaded, 1);
  EXPECT_EQ(after.compiled - before.compiled, 1);  // (`other`: the alien code was not taken)
  // Code for a row function this process made already is not taken (nor kept).
  EXPECT_EQ(preload_fused_codes(fused_compiler_name(), codes), 0);
  // ... however the program that made it was spelled (an input's float32 written out): one kernel,
  // found by the canonical text the codes carry.
  const std::string spelled = "in=2; r0:Float32; r2=tanh(r0); r3=div(r2,r1); r4=gelu(r3); out=(r4)";
  const std::string canonical = FusedProgram::parse(spelled).to_string();
  ASSERT_NE(spelled, canonical);
  Tensor divided = Tensor::empty({37}, DType::Float32);
  fused_kernel(spelled)->run({x, s}, {divided});
  EXPECT_EQ(fused_kernel(spelled).get(), fused_kernel(canonical).get());
  std::vector<FusedCode> respelled = codes;
  respelled[0].program = canonical;
  EXPECT_EQ(preload_fused_codes(fused_compiler_name(), respelled), 0);
  for (int i = 0; i < 37; ++i) EXPECT_TRUE(same(got.data<float>()[i], want.data<float>()[i])) << i;
  // `other` computes its own program (tanh(x) + s, not * s): the alien bytes did not run.
  JitOff off;
  Tensor ref = Tensor::empty({37}, DType::Float32);
  fused_kernel(other)->run({x, s}, {ref});
  for (int i = 0; i < 37; ++i) EXPECT_TRUE(same(plain.data<float>()[i], ref.data<float>()[i])) << i;
}

}  // namespace
}  // namespace pj
