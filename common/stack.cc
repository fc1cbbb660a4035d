#include "common/stack.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

extern "C" void* __libc_stack_end;  // glibc: the main thread's stack top, as the kernel started it

namespace pj {

namespace {

struct Bounds {
  uintptr_t low = 0;   // the lowest usable address (stacks grow down)
  size_t size = 0;
  bool read = false;
};

thread_local Bounds t_bounds;

const Bounds& bounds() {
  Bounds& b = t_bounds;
  if (!b.read) {
    b.read = true;
    // The main thread: its top and RLIMIT_STACK, not pthread_getattr_np, which reads and parses
    // /proc/self/maps for it (a hundred microseconds and more in a process with many libraries, on
    // the first jitted call). The low end this gives lies above the real one by what sits above
    // __libc_stack_end (arguments, environment): a smaller room, never a larger one.
    // Only up to 128 MiB: the kernel keeps at least that much below the stack free of other
    // mappings (mmap_base's minimum gap), even when the limit was raised after exec.
    struct rlimit rl;
    const uintptr_t here = reinterpret_cast<uintptr_t>(&rl);
    if (getpid() == static_cast<pid_t>(syscall(SYS_gettid)) && __libc_stack_end &&
        getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > (1u << 20) &&
        rl.rlim_cur <= (static_cast<rlim_t>(128) << 20)) {
      const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
      const uintptr_t top = (reinterpret_cast<uintptr_t>(__libc_stack_end) + page - 1) & ~(page - 1);
      const uintptr_t low = top - rl.rlim_cur + 16 * page;  // (less a margin for the guard gap)
      // (a child forked from another thread runs on that thread's stack: not this one)
      if (top > rl.rlim_cur && here > low && here < top) {
        b.low = low;
        b.size = static_cast<size_t>(rl.rlim_cur) - 16 * page;
        return b;
      }
    }
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      size_t size = 0, guard = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr && size) {
        pthread_attr_getguardsize(&attr, &guard);
        b.low = reinterpret_cast<uintptr_t>(addr) + guard;
        b.size = size > guard ? size - guard : size;
      }
      pthread_attr_destroy(&attr);
    }
  }
  return b;
}

}  // namespace

size_t stack_room() { return stack_now(stack_bounds()).room; }

StackNow stack_now() { return stack_now(stack_bounds()); }

StackBounds stack_bounds() {
  const Bounds& b = bounds();
  return {b.low, b.size};
}

size_t stack_size() {
  const Bounds& b = bounds();
  return b.low ? b.size : SIZE_MAX / 2;
}

}  // namespace pj
