// The simulated value stack, as the opcode handlers (capture/op_*.cc) move it. Not an API.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <string>
#include <vector>

#include "capture/sim_state.h"
#include "common/check.h"
#include "py/py_common.h"

namespace pj::capture {

inline PyObject* pop(SimFrame& fr) {
  PJ_CHECK(!fr.stack.empty()) << "simulated stack underflow in " << py::text(fr.code->co_name);
  PyObject* v = fr.stack.back();
  fr.stack.pop_back();
  return v;
}
inline PyObject* top(SimFrame& fr, int k = 1) { return fr.stack[fr.stack.size() - k]; }
inline void push(SimFrame& fr, PyObject* v) { fr.stack.push_back(v); }
inline std::vector<PyObject*> pop_n(SimFrame& fr, int n) {
  std::vector<PyObject*> v(fr.stack.end() - n, fr.stack.end());
  fr.stack.resize(fr.stack.size() - n);
  return v;
}

inline void jump(SimFrame& fr, const Instruction& ins) {
  const int at = fr.dec->index_at(ins.jump_target);
  if (at < 0) throw StopCapture{Break::Internal, "jump to " + std::to_string(ins.jump_target) + " is not an instruction", ins.line};
  fr.pc = at;
}

// The instruction at a block's or handler's target offset (one the decoder checked).
inline int ins_at(const SimFrame& fr, int offset) {
  const int at = fr.dec->index_at(offset);
  if (at < 0) throw StopCapture{Break::Internal, "target " + std::to_string(offset) + " is not an instruction", 0};
  return at;
}

}  // namespace pj::capture
