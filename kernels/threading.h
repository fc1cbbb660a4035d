// Thread control shared by pijit's own loops and oneDNN (both use OpenMP).
#pragma once

#include <algorithm>
#include <cstdint>

#include <omp.h>

namespace pj {

// Below this many elements a loop runs on one thread: forking costs more than it saves.
constexpr int64_t kParallelGrain = 32768;

void set_num_threads(int n);
int get_num_threads();

// f(begin, end) over [0, n) in chunks of at least `grain`, in parallel when worth it.
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  int nt = get_num_threads();
  if (n <= grain || nt <= 1 || omp_in_parallel()) {
    f(int64_t(0), n);
    return;
  }
  int64_t chunks = std::min<int64_t>(nt, (n + grain - 1) / grain);
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
    f(b, e);
  }
}

}  // namespace pj
