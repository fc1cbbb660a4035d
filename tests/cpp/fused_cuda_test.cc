// The GPU's fused elementwise kernels, as far as a machine without a GPU can check them: every
// fused op, scalar inputs, converted input dtypes and several outputs generate CUDA C++ that NVRTC
// compiles for sm_80 (A100) and sm_90 (H100, H200); the source embeds fused_math.h and asks for no
// contracted multiply-adds; compiled PTX is cached in memory and on disk. Running them (and
// comparing with the CPU bit for bit) is tools/gpu_check.sh's, on a GPU.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/fused_cuda.h"
#include "kernels/cuda/nvrtc.h"

namespace pj::cuda {
namespace {

bool have_nvrtc() { return !backend().nvrtc.empty(); }

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
  std::string body = "in=3; r1:Int32; r2:Float64; r3=add(r0,r1); r4=mul(r3,r2)";
  int r = 5;
  std::string outs = "r4";
  for (const char* op : {"sub", "div", "maximum", "minimum"}) {
    body += "; r" + std::to_string(r) + "=" + op + "(r" + std::to_string(r - 1) + ",r0)";
    outs += ",r" + std::to_string(r++);
  }
  for (const char* op : {"neg", "abs", "square", "relu", "sqrt", "rsqrt", "reciprocal", "floor", "ceil", "round",
                         "exp", "log", "tanh", "sigmoid", "silu", "erf", "gelu", "gelu_tanh"}) {
    body += "; r" + std::to_string(r) + "=" + op + "(r" + std::to_string(r - 1) + ")";
    outs += ",r" + std::to_string(r++);
  }
  body += "; r" + std::to_string(r) + "=clamp(r" + std::to_string(r - 1) + ",lo=-0.5,hi=2.25); out=(" + outs + ",r" +
          std::to_string(r) + ")";
  const FusedProgram prog = FusedProgram::parse(body);  // (every op the CPU fuses)
  for (int arch : {80, 90})
    for (uint32_t mask : {0u, 1u, 6u}) {
      std::string ptx;
      ASSERT_NO_THROW(ptx = fused_cuda_ptx(prog.to_string(), mask, arch)) << "arch " << arch << " mask " << mask;
      EXPECT_NE(ptx.find(".entry pj_fused"), std::string::npos);
      EXPECT_NE(ptx.find(".target sm_" + std::to_string(arch)), std::string::npos);
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

}  // namespace
}  // namespace pj::cuda
