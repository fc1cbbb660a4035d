// How much C stack this thread has left.
//
// pijit's hook sits between interpreter frames: a jitted call nests the hook's own frames (and,
// after a graph break, a resume function's frame) between the caller's and the callee's, so a
// jitted recursion level uses more C stack than the plain Python level it stands for. CPython
// 3.7-3.11 counts levels, not bytes; what it survives with a given recursion limit, pijit must
// survive too. The hook asks stack_room() before it runs a frame its way and, where the room left
// would not hold the levels still allowed at plain Python's cost, runs the frame as plain Python
// does (runtime/eval_frame.cc). This header imports nothing from the project.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pj {

// Bytes between the current stack pointer and the lowest address of this thread's stack (its
// guard page excluded); SIZE_MAX/2 where the bounds cannot be read (then nothing is refused).
size_t stack_room();
// The size of this thread's stack in bytes (same caveat).
size_t stack_size();
// Both at once (the hook's entry asks for both on every call: one read of the thread's bounds).
struct StackNow {
  size_t room, size;
};
StackNow stack_now();
// This thread's bounds, for a caller that keeps them in a thread state of its own (one
// thread-local read fewer per call: the frameless jitted call); low is 0 where they cannot be read.
struct StackBounds {
  uintptr_t low = 0;
  size_t size = 0;
};
StackBounds stack_bounds();
// stack_now() from bounds the caller kept.
inline StackNow stack_now(const StackBounds& b) {
  if (!b.low) return {SIZE_MAX / 2, SIZE_MAX / 2};
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return {sp > b.low ? sp - b.low : 0, b.size};
}

}  // namespace pj
