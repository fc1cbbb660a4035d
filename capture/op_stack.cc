// Opcode handlers: moving values on the simulated stack (op_handlers.def).
#include "py/pyport.h"  // first (Python.h)

#include "capture/sim_stack.h"
#include "capture/sim_state.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {

void Simulator::NOP(SimFrame& fr, const Instruction& ins) {}

void Simulator::POP_TOP(SimFrame& fr, const Instruction& ins) {
  pop(fr);
}

void Simulator::ROT_TWO(SimFrame& fr, const Instruction& ins) {
  std::swap(fr.stack[fr.stack.size() - 1], fr.stack[fr.stack.size() - 2]);
}

void Simulator::ROT_THREE(SimFrame& fr, const Instruction& ins) {
  PyObject* a = pop(fr);
  fr.stack.insert(fr.stack.end() - 2, a);
}

void Simulator::ROT_FOUR(SimFrame& fr, const Instruction& ins) {
  PyObject* a = pop(fr);
  fr.stack.insert(fr.stack.end() - 3, a);
}

// 3.10: TOS down to position oparg (ROT_N 2 is ROT_TWO)
void Simulator::ROT_N(SimFrame& fr, const Instruction& ins) {
  if (ins.arg < 1 || static_cast<size_t>(ins.arg) > fr.stack.size()) stop(Break::Internal, "ROT_N past the stack");
  PyObject* a = pop(fr);
  fr.stack.insert(fr.stack.end() - (ins.arg - 1), a);
}

void Simulator::DUP_TOP(SimFrame& fr, const Instruction& ins) {
  push(fr, top(fr));
}

void Simulator::DUP_TOP_TWO(SimFrame& fr, const Instruction& ins) {
  PyObject* a = top(fr, 2);
  PyObject* b = top(fr, 1);
  push(fr, a);
  push(fr, b);
}

// 3.11: the value `arg` places down pushed again (COPY 1 is DUP_TOP)
void Simulator::COPY(SimFrame& fr, const Instruction& ins) {
  if (ins.arg < 1 || static_cast<size_t>(ins.arg) > fr.stack.size()) stop(Break::Internal, "COPY past the stack");
  push(fr, top(fr, ins.arg));
}

// 3.11: the top and the value `arg` places down trade places (SWAP 2 is ROT_TWO)
void Simulator::SWAP(SimFrame& fr, const Instruction& ins) {
  if (ins.arg < 1 || static_cast<size_t>(ins.arg) > fr.stack.size()) stop(Break::Internal, "SWAP past the stack");
  std::swap(fr.stack.back(), fr.stack[fr.stack.size() - ins.arg]);
}

// 3.11: the empty slot under a callable that is no method (CALL reads it)
void Simulator::PUSH_NULL(SimFrame& fr, const Instruction& ins) {
  push(fr, call_slot());
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
