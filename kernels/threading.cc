#include "kernels/threading.h"

#include <atomic>

namespace pj {

static std::atomic<int> g_threads{0};  // 0: not set, use OpenMP's default

void set_num_threads(int n) {
  if (n < 1) n = 1;
  g_threads = n;
  omp_set_num_threads(n);  // also what oneDNN's OpenMP runtime uses
}

int get_num_threads() {
  int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

}  // namespace pj
