// The GPU's fused elementwise kernels, as far as a machine without a GPU can check them: every
// fused op, scalar inputs, converted input dtypes and several outputs generate CUDA C++ that NVRTC
// compiles for sm_80 (A100) and sm_90 (H100, H200); the source embeds fused_math.h and asks for no
// contracted multiply-adds; compiled PTX is cached in memory and on disk. With a GPU (on the device
// machine: tools/gpu_check.sh), the kernels run there and give the CPU's bits.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/fused.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/driver.h"
#include "kernels/cuda/fused_cuda.h"
#include "kernels/cuda/nvrtc.h"

namespace pj::cuda {
namespace {

bool have_nvrtc() { return !backend().nvrtc.empty(); }

// Every fused op (kernels/fused.h's table) as a call on registers r0 and r1: "add(r0,r1)", "exp(r0)",
// "clamp(r0,lo=-0.5,hi=2.25)". A new op is covered without touching these tests.
std::vector<std::string> every_op_call() {
  std::vector<std::string> calls;
#define PJ_X(name, n) calls.push_back(std::string(#name) + (n == 2 ? "(r0,r1)" : std::string(#name) == "clamp" ? "(r0,lo=-0.5,hi=2.25)" : "(r0)"));
  PJ_FUSED_OPS(PJ_X)
#undef PJ_X
  return calls;
}

TEST(FusedCuda, SourceCarriesTheCpuMathAndNoContraction) {
  const std::string src = fused_cuda_source(FusedProgram::parse("in=2; r2=mul(r0,r1); r3=exp(r2); out=(r3)"), 2);
  EXPECT_NE(src.find("inline float exp_core(float x)"), std::string::npos);  // fused_math.h itself
  EXPECT_EQ(src.find("#include"), std::string::npos);
  EXPECT_NE(src.find("const float r1 = ((const float*)args.in[1])[0];"), std::string::npos);  // scalar
  EXPECT_NE(src.find("const float r3 = pj::fused_math::exp(r2);"), std::string::npos);
  EXPECT_NE(src.find("i += stride"), std::string::npos);  // grid-stride loop
  bool fmad_off = false;
  for (const std::string& o : fused_cuda_options()) fmad_off = fmad_off || o == "--fmad=false";
  EXPECT_TRUE(fmad_off);
}

TEST(FusedCuda, EveryOpCompilesForA100AndH100) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC not available: " << backend().why;
  // Every op on converted inputs (r1 Int32, r2 Float64) and on r0, in programs of 8 outputs.
  const std::vector<std::string> calls = every_op_call();
  for (size_t g = 0; g < calls.size(); g += 8) {
    std::string text = "in=3; r1:Int32; r2:Float64; r3=add(r1,r2)", outs = "r3";
    for (size_t k = g; k < std::min(calls.size(), g + 8); ++k) {
      const std::string reg = "r" + std::to_string(4 + k - g);
      text += "; " + reg + "=" + calls[k];
      outs += "," + reg;
    }
    const FusedProgram prog = FusedProgram::parse(text + "; out=(" + outs + ")");
    for (int arch : {80, 90})
      for (uint32_t mask : {0u, 1u, 6u}) {
        std::string ptx;
        ASSERT_NO_THROW(ptx = fused_cuda_ptx(prog.to_string(), mask, arch)) << text << " arch " << arch << " mask " << mask;
        EXPECT_NE(ptx.find(".entry pj_fused"), std::string::npos);
        EXPECT_NE(ptx.find(".target sm_" + std::to_string(arch)), std::string::npos);
      }
  }
}

TEST(FusedCuda, CompiledOnceThenFromMemoryThenFromDisk) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC not available: " << backend().why;
  const std::string dir = ::testing::TempDir() + "pijit_cuda_cache_" + std::to_string(::getpid());
  ::setenv("PIJIT_CACHE_DIR", dir.c_str(), 1);
  const std::string text = "in=1; r1=sigmoid(r0); r2=mul(r1,r0); out=(r2)";
  const CompileStats s0 = compile_stats();
  const std::string a = fused_cuda_ptx(text, 0, 90);
  const std::string b = fused_cuda_ptx(text, 0, 90);
  clear_memory_cache();
  const std::string c = fused_cuda_ptx(text, 0, 90);
  const CompileStats s1 = compile_stats();
  ::unsetenv("PIJIT_CACHE_DIR");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  EXPECT_EQ(s1.compiled - s0.compiled, 1);
  EXPECT_EQ(s1.memory_hits - s0.memory_hits, 1);
  EXPECT_EQ(s1.disk_hits - s0.disk_hits, 1);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(FusedCuda, ABadSourceRaisesWithNvrtcsLog) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC not available: " << backend().why;
  try {
    compile_ptx("extern \"C\" __global__ void k() { undefined_thing(); }", 90, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("undefined_thing"), std::string::npos) << e.what();
  }
}

// The generated source's meaning, checked on the host: the same text compiled by the host compiler
// against a shim of the CUDA built-ins it uses (one thread walks the grid-stride loop) gives the
// CPU fused kernel's results bit for bit, for every op over special values (NaN, infinities, signed
// zeros, subnormals, overflow). What is left to a GPU run is the device's own instructions.
const char* const kHostShim = R"PJ(
#define __global__
struct Dim3 { unsigned x; };
static Dim3 blockIdx = {0}, blockDim = {1}, gridDim = {1}, threadIdx = {0};
static inline float __int_as_float(int i) { float f; __builtin_memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; __builtin_memcpy(&d, &i, 8); return d; }
static inline float __fmaf_rn(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
static inline float rintf(float a) { return __builtin_rintf(a); }
static inline float fabsf(float a) { return __builtin_fabsf(a); }
static inline float sqrtf(float a) { return __builtin_sqrtf(a); }
static inline float floorf(float a) { return __builtin_floorf(a); }
static inline float ceilf(float a) { return __builtin_ceilf(a); }
)PJ";

const char* const kHostMain = R"PJ(
extern "C" int printf(const char*, ...);
extern "C" void* fopen(const char*, const char*);
extern "C" unsigned long fread(void*, unsigned long, unsigned long, void*);
extern "C" unsigned long fwrite(const void*, unsigned long, unsigned long, void*);
extern "C" int fclose(void*);
int main(int argc, char** argv) {
  const long long n = NELEM;
  static float in[NIN][NELEM], out[NOUT][NELEM];
  void* f = fopen(argv[1], "rb");
  fread(in, sizeof in, 1, f);
  fclose(f);
  Args a;
  for (int k = 0; k < NIN; ++k) a.in[k] = in[k];
  for (int k = 0; k < NOUT; ++k) a.out[k] = out[k];
  pj_fused(n, a);
  f = fopen(argv[2], "wb");
  fwrite(out, sizeof out, 1, f);
  fclose(f);
  return 0;
}
)PJ";

// Runs `prog` (two float32 inputs) through the generated source compiled for the host; false with
// *why when it does not build or run.
bool run_on_host(const FusedProgram& prog, const Tensor& x, const Tensor& y, std::vector<std::vector<float>>* outs,
                 std::string* why) {
  const int64_t n = x.numel();
  const std::string dir = ::testing::TempDir() + "pijit_cuda_host_" + std::to_string(::getpid());
  if (std::system(("mkdir -p '" + dir + "'").c_str()) != 0) return *why = "mkdir", false;
  {
    std::ofstream src(dir + "/k.cc");
    src << "#define NELEM " << n << "\n#define NIN 2\n#define NOUT " << prog.outputs.size() << "\n"
        << kHostShim << fused_cuda_source(prog, 0) << kHostMain;
    std::ofstream in(dir + "/in.bin", std::ios::binary);
    in.write(static_cast<const char*>(x.raw_data()), x.nbytes());
    in.write(static_cast<const char*>(y.raw_data()), y.nbytes());
  }
  const std::string build = "c++ -std=c++17 -O2 -ffp-contract=off -o '" + dir + "/k' '" + dir + "/k.cc' > '" + dir +
                            "/log' 2>&1";
  if (std::system(build.c_str()) != 0) return *why = "the generated source does not compile on the host (" + dir + "/log)", false;
  if (std::system(("'" + dir + "/k' '" + dir + "/in.bin' '" + dir + "/out.bin'").c_str()) != 0) return *why = "run", false;
  std::ifstream res(dir + "/out.bin", std::ios::binary);
  outs->assign(prog.outputs.size(), std::vector<float>(n));
  for (auto& o : *outs) res.read(reinterpret_cast<char*>(o.data()), n * 4);
  std::system(("rm -rf '" + dir + "'").c_str());
  return true;
}

// Two float32 inputs: special values against each other (NaN, infinities, signed zeros,
// subnormals, overflow), then a spread of ordinary ones.
std::pair<Tensor, Tensor> special_inputs() {
  const float special[] = {0.f, -0.f, 1.f, -1.f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 3.4e38f,
                           0.5f, 2.5f, -2.5f, 88.7f, -87.f, 1e-30f, 0.3f, -7.25f};
  const int ns = sizeof special / sizeof special[0];
  const int64_t n = ns * ns + 4096;
  Tensor x = Tensor::empty({n}, DType::Float32), y = Tensor::empty({n}, DType::Float32);
  float *px = x.data<float>(), *py = y.data<float>();
  for (int i = 0; i < ns * ns; ++i) px[i] = special[i / ns], py[i] = special[i % ns];
  for (int64_t i = ns * ns; i < n; ++i) {
    px[i] = std::ldexp(static_cast<float>(i % 977) - 488.f, static_cast<int>(i % 41) - 20);
    py[i] = std::ldexp(static_cast<float>(i % 613) - 306.f, static_cast<int>(i % 37) - 18);
  }
  return {x, y};
}

// Every fused op on (r0, r1), 8 to a program (the CPU's operand limit); *first: each program's
// first op's index in every_op_call().
std::vector<FusedProgram> every_op_programs(std::vector<size_t>* first) {
  const std::vector<std::string> ops = every_op_call();
  std::vector<FusedProgram> progs;
  for (size_t g = 0; g < ops.size(); g += 8) {
    std::string text = "in=2", outs;
    for (size_t k = g; k < std::min(ops.size(), g + 8); ++k) {
      const std::string reg = "r" + std::to_string(2 + k - g);
      text += "; " + reg + "=" + ops[k];
      outs += (outs.empty() ? "" : ",") + reg;
    }
    progs.push_back(FusedProgram::parse(text + "; out=(" + outs + ")"));
    first->push_back(g);
  }
  return progs;
}

// The CPU fused kernel's outputs of `prog` over `ins`.
std::vector<Tensor> on_cpu(const FusedProgram& prog, const std::vector<Tensor>& ins, int64_t n) {
  std::vector<Tensor> want;
  for (size_t k = 0; k < prog.outputs.size(); ++k) want.push_back(Tensor::empty({n}, DType::Float32));
  FusedKernel(prog).run(ins, want);
  return want;
}

// How many of got's n floats differ from want's in their bits, and the first such one, in words.
// With any_nan, two NaNs are equal whatever their sign and payload (a NaN and a number are not).
int64_t differing(const float* got, const float* want, int64_t n, const float* px, const float* py, std::string* first,
                  bool any_nan = false) {
  int64_t differ = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(&got[i], &want[i], 4) != 0 && !(any_nan && std::isnan(got[i]) && std::isnan(want[i])) &&
        differ++ == 0)
      *first = "first at x=" + std::to_string(px[i]) + (py ? " y=" + std::to_string(py[i]) : "") +
               ": got " + std::to_string(got[i]) + ", CPU kernel " + std::to_string(want[i]);
  return differ;
}

TEST(FusedCuda, GeneratedSourceMeansWhatTheCpuComputes) {
  if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no host C++ compiler";
  const std::vector<std::string> ops = every_op_call();
  const auto [x, y] = special_inputs();
  const int64_t n = x.numel();
  std::vector<size_t> first;
  const std::vector<FusedProgram> progs = every_op_programs(&first);
  for (size_t p = 0; p < progs.size(); ++p) {
    const std::vector<Tensor> want = on_cpu(progs[p], {x, y}, n);
    std::vector<std::vector<float>> got;
    std::string why;
    ASSERT_TRUE(run_on_host(progs[p], x, y, &got, &why)) << why;
    for (size_t k = 0; k < got.size(); ++k) {
      std::string at;
      EXPECT_EQ(differing(got[k].data(), want[k].data<float>(), n, x.data<float>(), y.data<float>(), &at), 0)
          << ops[first[p] + k] << ": " << at;
    }
  }
}

// On a GPU (skipped without one). The device's own instructions: every op's kernel, run on the GPU
// over the special values, gives the CPU fused kernel's bits, and a NaN exactly where the CPU has
// one. A NaN's sign and payload are the device's (fused_cuda.h): an H100 returns its canonical NaN
// where x86 propagates an input's NaN or makes its default one (0xffc00000).
bool have_gpu() { return backend().usable; }

// `t`'s bytes on the device.
DeviceBuffer on_device(const Tensor& t) {
  DeviceBuffer b(t.nbytes());
  b.upload(t.raw_data(), t.nbytes());
  return b;
}

TEST(FusedCuda, EveryOpGivesTheCpusBitsOnTheGpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable GPU: " << backend().why;
  const std::vector<std::string> ops = every_op_call();
  const auto [x, y] = special_inputs();
  const int64_t n = x.numel();
  DeviceBuffer dx = on_device(x), dy = on_device(y);
  std::vector<size_t> first;
  const std::vector<FusedProgram> progs = every_op_programs(&first);
  for (size_t p = 0; p < progs.size(); ++p) {
    const std::vector<Tensor> want = on_cpu(progs[p], {x, y}, n);
    std::vector<DeviceBuffer> douts;
    std::vector<float*> outs;
    for (size_t k = 0; k < want.size(); ++k) {
      douts.emplace_back(n * 4);
      outs.push_back(static_cast<float*>(douts.back().get()));
    }
    fused_cuda_run(progs[p].to_string(), 0, n, {dx.get(), dy.get()}, outs);
    synchronize();
    for (size_t k = 0; k < want.size(); ++k) {
      std::vector<float> got(n);
      douts[k].download(got.data(), n * 4);
      std::string at;
      EXPECT_EQ(differing(got.data(), want[k].data<float>(), n, x.data<float>(), y.data<float>(), &at, true), 0)
          << ops[first[p] + k] << " on " << backend().devices[0].name << ": " << at;
    }
  }
}

TEST(FusedCuda, ConvertedAndScalarInputsAndAnOutputOverItsInputOnTheGpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable GPU: " << backend().why;
  // r0 a float32 scalar, r1 int32, r2 float64, r3 float32; output 0 is written over r3's storage.
  const FusedProgram prog = FusedProgram::parse(
      "in=4; r1:Int32; r2:Float64; r4=add(r1,r2); r5=mul(r4,r0); r6=tanh(r5); r7=sub(r6,r3); out=(r7,r5)");
  const int64_t n = 100003;  // not a multiple of the block
  Tensor s = Tensor::empty({}, DType::Float32), i = Tensor::empty({n}, DType::Int32);
  Tensor d = Tensor::empty({n}, DType::Float64), f = Tensor::empty({n}, DType::Float32);
  s.data<float>()[0] = 0.37f;
  for (int64_t k = 0; k < n; ++k) {
    i.data<int32_t>()[k] = static_cast<int32_t>(k % 201) - 100;
    d.data<double>()[k] = std::ldexp(static_cast<double>(k % 313) - 156.0, static_cast<int>(k % 23) - 11);
    f.data<float>()[k] = static_cast<float>(k % 7) * 0.125f - 0.4f;
  }
  const std::vector<Tensor> want = on_cpu(prog, {s, i, d, f}, n);
  DeviceBuffer ds = on_device(s), di = on_device(i), dd = on_device(d), df = on_device(f), o1(n * 4);
  fused_cuda_run(prog.to_string(), 1u, n, {ds.get(), di.get(), dd.get(), df.get()},
                 {static_cast<float*>(df.get()), static_cast<float*>(o1.get())});
  synchronize();
  std::vector<float> got0(n), got1(n);
  df.download(got0.data(), n * 4);
  o1.download(got1.data(), n * 4);
  std::string at;
  EXPECT_EQ(differing(got0.data(), want[0].data<float>(), n, f.data<float>(), nullptr, &at, true), 0) << at;
  EXPECT_EQ(differing(got1.data(), want[1].data<float>(), n, f.data<float>(), nullptr, &at, true), 0) << at;
  // the wrong number of pointers is refused before anything launches
  EXPECT_THROW(fused_cuda_run(prog.to_string(), 1u, n, {ds.get()}, {static_cast<float*>(o1.get())}), Error);
}

// A small graph's ops, one kernel each: 10 ops over 3x3, in place on one buffer.
const char* const kTenOps[] = {"mul(r0,r1)", "add(r0,r1)", "tanh(r0)", "sub(r0,r1)", "exp(r0)",
                               "div(r0,r1)", "sigmoid(r0)", "maximum(r0,r1)", "log(r0)", "square(r0)"};

std::string one_op_program(const char* call) {
  return std::string("in=2; r2=") + call + "; out=(r2)";
}

TEST(FusedCuda, ACapturedSequenceReplaysAsOneCudaGraphWithTheCpusBits) {
  if (!have_gpu()) GTEST_SKIP() << "no usable GPU: " << backend().why;
  const int64_t n = 9;
  Tensor x = Tensor::empty({n}, DType::Float32), c = Tensor::empty({n}, DType::Float32);
  for (int64_t i = 0; i < n; ++i) x.data<float>()[i] = 0.25f * i - 1.f, c.data<float>()[i] = 1.5f + 0.125f * i;
  // the CPU: the ops one after another, each the fused kernel of its one op
  Tensor want = Tensor::empty({n}, DType::Float32);
  std::memcpy(want.raw_data(), x.raw_data(), n * 4);
  for (const char* op : kTenOps) FusedKernel(FusedProgram::parse(one_op_program(op))).run({want, c}, {want});
  DeviceBuffer dy = on_device(x), dc = on_device(c);
  float* y = static_cast<float*>(dy.get());
  Stream stream;
  auto ops = [&] {
    for (const char* op : kTenOps) fused_cuda_run(one_op_program(op), 0, n, {y, dc.get()}, {y}, stream.get());
  };
  ops();  // compiles and loads the kernels (a capture may not load modules)
  CudaGraph graph;
  graph.begin(stream);
  ops();
  graph.end();
  ASSERT_TRUE(graph.ready());
  for (int replay = 0; replay < 2; ++replay) {
    dy.upload(x.raw_data(), n * 4);
    graph.launch(stream);
    stream.synchronize();
    std::vector<float> got(n);
    dy.download(got.data(), n * 4);
    std::string at;
    EXPECT_EQ(differing(got.data(), want.data<float>(), n, x.data<float>(), c.data<float>(), &at, true), 0)
        << "replay " << replay << ": " << at;
  }
}

TEST(FusedCuda, WithoutAGpuRunningRaisesWhy) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is usable here";
  try {
    fused_cuda_run("in=1; r1=exp(r0); out=(r1)", 0, 4, {nullptr}, {nullptr});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("no usable GPU: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(backend().why), std::string::npos) << e.what();
  }
  EXPECT_THROW(DeviceBuffer(16), Error);
}

TEST(FusedCuda, BadPtxRaisesWithTheDriversLog) {
  if (!have_gpu()) GTEST_SKIP() << "no usable GPU: " << backend().why;
  try {
    kernel_function(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n", "k");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not load the PTX of k"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pj::cuda
