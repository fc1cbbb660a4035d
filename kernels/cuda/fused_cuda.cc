#include "kernels/cuda/fused_cuda.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "common/check.h"
#include "kernels/cuda/driver.h"
#include "kernels/cuda/nvrtc.h"

namespace pj::cuda {

extern const char* const kFusedMathText;  // kernels/fused_math.h's text (CMake: fused_math_text.cc)

namespace {

// What fused_math.h takes from the C++ library, for device code (NVRTC has no host headers). The
// NaNs are the host's (x86's default quiet NaN), so a NaN a kernel makes has the CPU's bits.
const char* const kPrelude = R"PJ(// pijit fused elementwise kernel (generated: kernels/cuda/fused_cuda.cc)
typedef int int32_t;
typedef unsigned int uint32_t;
typedef decltype(sizeof(0)) size_t;
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)
#define INT32_MIN (-2147483647 - 1)
namespace std {
template <typename T> struct numeric_limits;
template <> struct numeric_limits<float> { static float quiet_NaN() { return __int_as_float(0x7fc00000); } };
template <> struct numeric_limits<double> {
  static double quiet_NaN() { return __longlong_as_double(0x7ff8000000000000ll); }
};
template <typename T> constexpr bool is_floating_point_v = false;
template <> constexpr bool is_floating_point_v<float> = true;
template <> constexpr bool is_floating_point_v<double> = true;
inline bool isnan(float x) { return x != x; }
inline bool isnan(double x) { return x != x; }
inline float fmaf(float a, float b, float c) { return __fmaf_rn(a, b, c); }
inline float nearbyintf(float a) { return rintf(a); }
inline void* memcpy(void* d, const void* s, size_t n) {
  for (size_t k = 0; k < n; ++k) static_cast<char*>(d)[k] = static_cast<const char*>(s)[k];
  return d;
}
}  // namespace std
)PJ";

// clamp as kernels/fused.cc's eval1 does it: NaN passes, then the bounds in order.
const char* const kClamp = R"PJ(
inline float pj_clamp(float a, bool has_lo, float lo, bool has_hi, float hi) {
  if (a != a) return a;
  if (has_lo && a < lo) a = lo;
  if (has_hi && a > hi) a = hi;
  return a;
}
)PJ";

// An exact float literal.
std::string literal(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  char s[40];
  std::snprintf(s, sizeof s, "__int_as_float(0x%08x)", b);
  return s;
}

std::string expression(const FusedInstr& ins) {
  const std::string a = "r" + std::to_string(ins.a), b = ins.b >= 0 ? "r" + std::to_string(ins.b) : "";
  const std::string fm = "pj::fused_math::";
  switch (ins.op) {
    case FusedOp::add: return a + " + " + b;
    case FusedOp::sub: return a + " - " + b;
    case FusedOp::mul: return a + " * " + b;
    case FusedOp::div: return a + " / " + b;
    case FusedOp::maximum: return fm + "nan_max(" + a + ", " + b + ")";
    case FusedOp::minimum: return fm + "nan_min(" + a + ", " + b + ")";
    case FusedOp::neg: return "-" + a;
    case FusedOp::abs: return "fabsf(" + a + ")";
    case FusedOp::square: return a + " * " + a;
    case FusedOp::relu: return fm + "relu(" + a + ")";
    case FusedOp::relu_grad: return "(" + b + " > 0.f ? " + a + " : 0.f)";
    case FusedOp::sqrt: return "sqrtf(" + a + ")";
    case FusedOp::rsqrt: return "1.f / sqrtf(" + a + ")";
    case FusedOp::reciprocal: return "1.f / " + a;
    case FusedOp::floor: return "floorf(" + a + ")";
    case FusedOp::ceil: return "ceilf(" + a + ")";
    case FusedOp::round: return "rintf(" + a + ")";
    case FusedOp::clamp:
      return "pj_clamp(" + a + ", " + (ins.has_lo ? "true" : "false") + ", " + literal(ins.lo) + ", " +
             (ins.has_hi ? "true" : "false") + ", " + literal(ins.hi) + ")";
    case FusedOp::exp: return fm + "exp(" + a + ")";
    case FusedOp::log: return fm + "log(" + a + ")";
    case FusedOp::tanh: return fm + "tanh(" + a + ")";
    case FusedOp::sigmoid: return fm + "sigmoid(" + a + ")";
    case FusedOp::silu: return fm + "silu(" + a + ")";
    case FusedOp::erf: return fm + "erf(" + a + ")";
    case FusedOp::gelu: return fm + "gelu(" + a + ")";
    case FusedOp::gelu_tanh: return fm + "gelu_tanh(" + a + ")";
  }
  return a;
}

// fused_math.h without its includes and pragma (the prelude stands for them).
std::string math_text() {
  std::istringstream in(kFusedMathText);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("#include", 0) != 0 && line.rfind("#pragma once", 0) != 0) out += line + "\n";
  return out;
}

}  // namespace

std::string fused_cuda_source(const FusedProgram& prog, uint32_t scalar_mask) {
  static const std::string math = math_text();
  std::ostringstream os;
  os << kPrelude << math << kClamp << "\n// " << prog.to_string() << " (scalar inputs: mask 0x" << std::hex
     << scalar_mask << std::dec << ")\n";
  os << "struct Args {\n  const void* in[" << prog.num_inputs << "];\n  float* out[" << prog.outputs.size() << "];\n};\n";
  os << "extern \"C\" __global__ void pj_fused(long long n, Args args) {\n"
        "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
        "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {\n";
  for (int k = 0; k < prog.num_inputs; ++k) {
    const char* at = (scalar_mask >> k) & 1 ? "0" : "i";
    switch (prog.input_dtype(k)) {
      case DType::Int32:
        os << "    const float r" << k << " = (float)((const int*)args.in[" << k << "])[" << at << "];\n";
        break;
      case DType::Float64:
        os << "    const float r" << k << " = (float)((const double*)args.in[" << k << "])[" << at << "];\n";
        break;
      default: os << "    const float r" << k << " = ((const float*)args.in[" << k << "])[" << at << "];\n";
    }
  }
  int r = prog.num_inputs;
  for (const FusedInstr& ins : prog.code) os << "    const float r" << r++ << " = " << expression(ins) << ";\n";
  for (size_t o = 0; o < prog.outputs.size(); ++o) os << "    args.out[" << o << "][i] = r" << prog.outputs[o] << ";\n";
  os << "  }\n}\n";
  return os.str();
}

const std::vector<std::string>& fused_cuda_options() {
  static const std::vector<std::string> o = {"--std=c++17", "-default-device", "--fmad=false", "-prec-div=true",
                                             "-prec-sqrt=true", "-ftz=false"};
  return o;
}

std::string fused_cuda_ptx(const std::string& program_text, uint32_t scalar_mask, int arch) {
  return compile_ptx(fused_cuda_source(FusedProgram::parse(program_text), scalar_mask), arch, fused_cuda_options());
}

void fused_cuda_run(const std::string& program_text, uint32_t scalar_mask, int64_t n,
                    const std::vector<const void*>& inputs, const std::vector<float*>& outputs, void* stream) {
  static const int arch = device_arch(), multiprocessors = device_multiprocessors();
  struct Loaded {
    void* fn = nullptr;
    size_t inputs = 0, outputs = 0;
  };
  static std::mutex mu;
  static std::unordered_map<std::string, Loaded> loaded;  // text + mask -> kernel
  Loaded k;
  {
    std::lock_guard<std::mutex> lock(mu);
    Loaded& l = loaded[program_text + "\n" + std::to_string(scalar_mask)];
    if (!l.fn) {
      const FusedProgram prog = FusedProgram::parse(program_text);
      l.fn = kernel_function(fused_cuda_ptx(program_text, scalar_mask, arch), "pj_fused");
      l.inputs = prog.num_inputs, l.outputs = prog.outputs.size();
    }
    k = l;
  }
  if (inputs.size() != k.inputs || outputs.size() != k.outputs)
    PJ_THROW(Value) << "fused kernel takes " << k.inputs << " inputs and " << k.outputs << " outputs, got "
                    << inputs.size() << " and " << outputs.size();
  if (n <= 0) return;
  // Args: the input pointers, then the output pointers (the kernel takes the struct by value).
  std::vector<const void*> args(inputs);
  args.insert(args.end(), outputs.begin(), outputs.end());
  long long count = n;
  void* params[] = {&count, args.data()};
  const unsigned block = 256;
  // Enough blocks to fill every multiprocessor several times; the grid-stride loop does the rest.
  const long long blocks = std::min<long long>((count + block - 1) / block, 32ll * multiprocessors);
  launch(k.fn, static_cast<unsigned>(blocks), block, params, stream);
}

}  // namespace pj::cuda
