// Matrix products on the GPU through cuBLASLt (opened at run time: kernels/cuda/backend.h), for
// dense layers and matmul: C[m, n] = A[m, k] @ op(B) + bias[n], row-major float32 in device memory,
// op(B) = B[k, n], or B[n, k] transposed (a dense layer's weight as stored). Then relu, NaN kept as
// pijit's relu keeps it (the fused kernel's relu: kernels/cuda/fused_cuda.h).
//
// Float32 computed in float32 (CUBLAS_COMPUTE_32F: no TF32, whose 10-bit mantissa would change
// results far beyond float32 rounding). The algorithm is cuBLASLt's heuristic's first for the
// shape, chosen once per (m, n, k, transpose, bias) and cached with its descriptors, as oneDNN's
// primitives are on the CPU. Summation order is cuBLASLt's: results agree with the CPU's to
// float32 rounding, not bit for bit. Asynchronous on the default stream, like the other GPU kernels.
#pragma once

#include <cstdint>

namespace pj::cuda {

struct MatmulShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_b = false;  // B is [n, k]
  bool bias = false;     // + bias[n]
  bool relu = false;
};

// Raises pj::Error (ValueError for negative sizes; RuntimeError when no GPU is usable or cuBLASLt
// refuses, with its status).
void matmul_cuda(const MatmulShape& s, const float* a, const float* b, const float* bias, float* c);

}  // namespace pj::cuda
