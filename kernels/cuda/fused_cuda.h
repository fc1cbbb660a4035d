// Fused elementwise kernels on NVIDIA GPUs: the CUDA C++ source of a fused program
// (kernels/fused.h), compiled at run time by NVRTC (kernels/cuda/nvrtc.h) and cached by the
// program's text, its scalar-input mask and the architecture, in memory and on disk.
//
// Same bits as the CPU. The source evaluates the program with kernels/fused_math.h itself (its
// text is embedded at build time and compiled as device code, -default-device), without
// contracting multiply-adds (--fmad=false), with IEEE division and square root (NVRTC's
// defaults): every operation is the one the CPU's machine code and interpreter perform, so a fused
// kernel's result on the GPU equals the CPU's exactly, approximations included (measured on an H100:
// every op over NaN, infinities, signed zeros, subnormals and ordinary values). Except a NaN's sign
// and payload, which are the device's: NVIDIA's arithmetic returns its canonical NaN (0x7fffffff)
// where x86 propagates an input's NaN or makes its default one (0xffc00000); a NaN stands exactly
// where the CPU has one.
//
// The kernel, `pj_fused(long long n, Args args)`: a grid-stride loop over n elements; Args holds
// one pointer per input (contiguous, of its dtype: float32, int32 or float64 converted on load;
// one element read for all when its scalar-mask bit is set) and per output (contiguous float32).
// Each element's inputs are loaded before its outputs are stored, so an output may be an input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/fused.h"

namespace pj::cuda {

// The CUDA C++ of `prog` for one scalar mask: the prelude, fused_math.h, the kernel.
std::string fused_cuda_source(const FusedProgram& prog, uint32_t scalar_mask);
// NVRTC's options for it (the architecture is compile_ptx's).
const std::vector<std::string>& fused_cuda_options();
// Its PTX for compute capability `arch` (80, 90, ...): generated, compiled and cached. Raises
// pj::Error when NVRTC is not available or refuses the source (with its log).
std::string fused_cuda_ptx(const std::string& program_text, uint32_t scalar_mask, int arch);

// Runs the program on device 0 over n elements: `inputs` and `outputs` point into device memory
// (kernels/cuda/driver.h) as the kernel's Args say. Compiled for the device's architecture and
// loaded on first use, then launched without recompiling, on `stream` (null: the default stream).
// Asynchronous: driver.h's synchronize() waits. Raises pj::Error when no GPU is usable, or what
// NVRTC or the driver said.
void fused_cuda_run(const std::string& program_text, uint32_t scalar_mask, int64_t n,
                    const std::vector<const void*>& inputs, const std::vector<float*>& outputs,
                    void* stream = nullptr);

}  // namespace pj::cuda
