// Fast Fourier transforms of any length (MindSpore's FFTWithSize, ops.fft family, STFT).
//
// Complex transforms of length n run as a self-sorting Stockham FFT over the factors of n
// (radix 4, 2, 3, 5 butterflies, and an O(p^2) butterfly for other primes up to kFftMaxRadix);
// a length with a larger prime factor runs Bluestein's chirp-z convolution over the cheapest of
// the power-of-two and 2/3/5-smooth lengths >= 2n - 1. One long signal (n >= 2^15) runs as a
// four-step FFT (n = n1 n2: column FFTs, twiddles, row FFTs written transposed) so every pass
// works in cache. Plans (factors, twiddles, Bluestein's chirp and its spectrum) are built once
// per length and dtype and cached. A multi-axis transform is one 1-D pass per axis: each pass
// gathers 16 lines at a time interleaved (neighbouring columns, or rows when the axis is the
// last), so the butterflies' inner loops run over contiguous memory and vectorise; blocks are
// spread over pijit's threads, and a single long line splits its passes instead.
// Real transforms along the last axis with an even length use the half-length complex trick
// (n/2 complex points, then one twiddle pass); other real ones go through the complex path.
//
// Each axis has a transform length n: the input along it is zero-padded or truncated to n, and
// the output keeps `out` entries along it (the spectrum's first ones; zeros past the end). The
// sign is e^{-2 pi i jk/n} forward and e^{+...} with `inverse`; `scale` multiplies the result
// once (no normalisation is implied). The gradient rules (graph/grads/fft_grads.cc) are these
// same transforms with the sign flipped: r2c's adjoint is c2r with `adjoint` (the bins that have
// a mirror partner halved), c2r's is r2c with `adjoint` (those bins doubled).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tensor.h"

namespace pj {

constexpr int kFftMaxRadix = 64;  // larger prime factors go through Bluestein

struct FftAxis {
  int axis;     // dimension of the (contiguous) tensor
  int64_t n;    // transform length
  int64_t out;  // entries kept along the axis in the output
};

// complex64/complex128 in and out (same dtype); `out` has the input's shape with each axis'
// length replaced by its `out`. Axes are transformed in the order given.
void fft_c2c(const Tensor& in, const Tensor& out, const std::vector<FftAxis>& axes, bool inverse,
             double scale);
// float32/float64 in, complex64/complex128 out. The last axis is the real one (its `out` is
// normally n/2 + 1); the others are complex passes after it.
void fft_r2c(const Tensor& in, const Tensor& out, const std::vector<FftAxis>& axes, bool inverse,
             double scale, bool adjoint);
// complex in, real out: complex passes over all axes but the last, then the real one, which
// reads the first n/2 + 1 bins of its input as the half of a Hermitian spectrum (the imaginary
// parts of the zero and Nyquist bins ignored, as numpy and torch do).
void fft_c2r(const Tensor& in, const Tensor& out, const std::vector<FftAxis>& axes, bool inverse,
             double scale, bool adjoint);

// How a length is planned, for tests: "4x4x2" (Stockham factors, then " four-step(n1xn2)" when a
// single signal runs in four steps) or "bluestein(m)".
std::string fft_plan_summary(int64_t n);
// Plans cached now (both precisions).
int64_t fft_cached_plans();

}  // namespace pj
