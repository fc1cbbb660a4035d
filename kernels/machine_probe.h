// Measured machine limits for benchmarks (never used by kernels): the float32 FMA peak and the
// memory bandwidth of this machine, so that bench ratios compare against what the hardware does
// rather than a nominal clock (VMs report a base frequency that turbo exceeds).
#pragma once

namespace pj {

// float32 GFLOP/s of independent FMA chains on `threads` threads (AVX2 when compiled for it).
double probe_peak_gflops(int threads);
// GB/s of a parallel streaming copy (bytes read + bytes written) over buffers far beyond cache.
double probe_copy_bandwidth_gbs(int threads);

}  // namespace pj
