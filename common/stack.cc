#include "common/stack.h"

#include <pthread.h>

#include <cstdint>

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
