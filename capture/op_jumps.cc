// Opcode handlers: iteration, jumps, loops, blocks and returns (op_handlers.def).
#include "py/pyport.h"  // first (Python.h)

#include "capture/sim_stack.h"
#include "capture/sim_state.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {

void Simulator::GET_ITER(SimFrame& fr, const Instruction& ins) {
  push(fr, get_iter(pop(fr)));
}

void Simulator::FOR_ITER(SimFrame& fr, const Instruction& ins) {
  if (sim_generator(top(fr)) || user_operand(top(fr))) {
    if (PyObject* v = next_item(top(fr))) {
      push(fr, v);
    } else {
      pop(fr);
      jump(fr, ins);
    }
    return;
  }
  // Anything the frame was given (e.g. the `.0` iterator of a comprehension run as its own
  // frame, or a user iterator) would be advanced for real.
  refuse_foreign_iterator(top(fr));
  if (node_of(top(fr)) >= 0) stop(Break::UserObjectOperator, std::string("iterating a ") + Py_TYPE(top(fr))->tp_name);
  PyObject* v = PyIter_Next(top(fr));
  if (v) {
    push(fr, own(v));
    return;
  }
  if (PyErr_Occurred()) python_error("iteration");
  pop(fr);
  jump(fr, ins);
}

void Simulator::jump_unconditional(SimFrame& fr, const Instruction& ins) {
  jump(fr, ins);
}

void Simulator::pop_jump_if(SimFrame& fr, const Instruction& ins) {
  bool t = truth(pop(fr));
  const bool if_true = ins.op == Opcode::POP_JUMP_IF_TRUE || ins.op == Opcode::POP_JUMP_FORWARD_IF_TRUE ||
                       ins.op == Opcode::POP_JUMP_BACKWARD_IF_TRUE;
  if (t == if_true) jump(fr, ins);
}

// 3.11: `x is None` and `x is not None` fused with the jump (IS_OP's guard on x)
void Simulator::pop_jump_if_none(SimFrame& fr, const Instruction& ins) {
  PyObject* v = pop(fr);
  is_identity(v, Py_None);
  const bool if_none = ins.op == Opcode::POP_JUMP_FORWARD_IF_NONE || ins.op == Opcode::POP_JUMP_BACKWARD_IF_NONE;
  if ((v == Py_None) == if_none) jump(fr, ins);
}

void Simulator::jump_if_or_pop(SimFrame& fr, const Instruction& ins) {
  bool t = truth(top(fr));
  if (t == (ins.op == Opcode::JUMP_IF_TRUE_OR_POP)) jump(fr, ins);
  else pop(fr);
}

// The block stack as CPython keeps it: a simulated raise unwinds to the innermost handler block
// (sim_exceptions.cc), 3.7's BREAK_LOOP to its loop's end, a resume function re-enters try blocks.
void Simulator::setup_block(SimFrame& fr, const Instruction& ins) {
  fr.blocks.push_back({ins.op, ins.jump_target, fr.stack.size()});
}

void Simulator::POP_BLOCK(SimFrame& fr, const Instruction& ins) {
  if (!fr.blocks.empty()) fr.blocks.pop_back();
}

void Simulator::CONTINUE_LOOP(SimFrame& fr, const Instruction& ins) {
  // unwinds to the innermost loop; a finally on the way would run
  while (!fr.blocks.empty() && fr.blocks.back().op != Opcode::SETUP_LOOP) {
    if (fr.blocks.back().op == Opcode::POP_EXCEPT) stop(Break::ExceptionHandling, "continue out of an except block");
    if (fr.blocks.back().op == Opcode::SETUP_FINALLY) stop(Break::ExceptionHandling, "continue through a finally block");
    fr.blocks.pop_back();
  }
  jump(fr, ins);
}

void Simulator::BREAK_LOOP(SimFrame& fr, const Instruction& ins) {
  while (!fr.blocks.empty() && fr.blocks.back().op != Opcode::SETUP_LOOP) {
    if (fr.blocks.back().op == Opcode::POP_EXCEPT) stop(Break::ExceptionHandling, "break out of an except block");
    if (fr.blocks.back().op == Opcode::SETUP_FINALLY) stop(Break::ExceptionHandling, "break through a finally block");
    fr.blocks.pop_back();
  }
  if (fr.blocks.empty()) stop(Break::Internal, "BREAK_LOOP outside a loop");
  SimFrame::Block b = fr.blocks.back();
  fr.blocks.pop_back();
  fr.stack.resize(b.level);
  fr.pc = ins_at(fr, b.target);
}

void Simulator::RETURN_VALUE(SimFrame& fr, const Instruction& ins) {
#if PJ_PY_BLOCKS_37
  // 3.7 returns through try/finally by unwinding the block stack: the finally body runs, and
  // may replace the value (sim_exceptions.cc).
  return return_value(fr, pop(fr));
#else
  // (3.8 calls a finally body before the return, 3.9 inlines it)
  for (const SimFrame::Block& b : fr.blocks)
    if (b.op == Opcode::SETUP_FINALLY) stop(Break::ExceptionHandling, "return through a finally block");
  fr.result = pop(fr);
  fr.returned = true;
  return;
#endif
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
