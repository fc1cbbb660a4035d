// Random tensors from a counter-based generator: Philox4x32-10 (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC'11; the generator of cuRAND, PyTorch and JAX).
//
// Philox maps (key, 128-bit counter) to four 32-bit words with no state in between, so element i
// of a call is a pure function of (seed, offset, i): values do not depend on the thread count or
// on how the work is chunked, and a GPU backend can reproduce them. The global state is a seed
// (the key) and an offset (the next unused counter); each call takes the next blocks and moves
// the offset past them. set_seed resets both; the default seed is 0, so a fresh process is
// deterministic too. An op given an explicit `seed` uses that key from offset 0 and leaves the
// global state alone.
//
// Per 128-bit block: 4 float32 uniforms (24 bits each), 2 float64 uniforms (53 bits each),
// 2 normals (one Box-Muller pair from two 53-bit uniforms) or 2 integers (64 bits each, mapped
// to [low, high) by a 64x64->128 multiply; the bias is below range / 2^64).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "kernels/tensor.h"

namespace pj {

void set_seed(uint64_t seed);
uint64_t get_seed();
// The whole global state, (seed, offset): pijit's verify mode runs a call twice from one state.
std::pair<uint64_t, uint64_t> rng_state();
void set_rng_state(uint64_t seed, uint64_t offset);

// One Philox4x32-10 block.
std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter_lo, uint64_t counter_hi);

// Fills a contiguous `out`; `seed` nullopt uses and advances the global state.
void uniform_into(const Tensor& out, std::optional<uint64_t> seed = std::nullopt);  // [0, 1)
void normal_into(const Tensor& out, std::optional<uint64_t> seed = std::nullopt);   // N(0, 1)
// Integers in [low, high); low >= high raises ValueError, int32 out checks the bounds fit.
void check_randint_bounds(int64_t low, int64_t high, DType dtype);
void randint_into(const Tensor& out, int64_t low, int64_t high,
                  std::optional<uint64_t> seed = std::nullopt);

// Initialiser fills (pijit.common.initializer), on the global stream like the above, or from
// `seed`. Float32 results are computed in float32 from 24-bit uniforms, vectorised (Box-Muller
// with polynomial log and sincos over 8 lanes: ~1 ns per element a core); float64 results from
// 53-bit uniforms in double. Other floating dtypes get the float32 values, rounded.
//   uniform_range_into:     low + (high - low) * U[0, 1), so every value lies in [low, high]
//   normal_scaled_into:     mean + sigma * N(0, 1); sigma < 0 raises ValueError
//   truncated_normal_into:  N(mean, sigma^2) conditioned on [a, b], a and b absolute bounds (as in
//                           MindSpore's C++ sampler); every value lies in [a, b] after rounding.
//                           Rejection from the normal when [a, b] holds the mean and is wide, else
//                           per element from a uniform or exponential proposal (Robert, "Simulation
//                           of truncated normal variables", 1995). sigma <= 0 or a >= b raises.
// An element that needs more draws than its block gives takes them from counters of its own
// (element index, attempt in the high word), so values stay a function of (seed, offset, index).
void uniform_range_into(const Tensor& out, double low, double high, std::optional<uint64_t> seed = std::nullopt);
void normal_scaled_into(const Tensor& out, double mean, double sigma, std::optional<uint64_t> seed = std::nullopt);
void truncated_normal_into(const Tensor& out, double mean, double sigma, double a, double b,
                           std::optional<uint64_t> seed = std::nullopt);

}  // namespace pj
