// Python 3.8's finally protocol. A finally body is a subroutine: the normal exit pushes NULL
// (BEGIN_FINALLY) and falls into it, a return/break/continue pushes the address to come back to
// (CALL_FINALLY) and jumps there, an exception enters it with its six values (sim_exceptions.cc's
// enter_handler, as on 3.9). END_FINALLY then does nothing, jumps back, or re-raises; POP_FINALLY
// leaves the body early (a return or break inside it). A with-block's exit is the same with
// WITH_CLEANUP_START (shared with 3.7: sim_exceptions.cc) and FINISH around its __exit__ call.
//
// Neither marker may reach real bytecode: a graph break is not placed while one is on the
// simulated stack (a resume function would have to rebuild it; simulator.cc asks
// finally_state_on_stack), so the instructions of the finally body run captured or, before the
// try, in the interpreter.
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_BUILT && PJ_PY_FINALLY_38

#include "capture/sim_state.h"
#include "py/py_common.h"

namespace pj::capture {

// What CPython's NULL is here: an object nothing else holds, so no value compares identical.
PyObject* Simulator::finally_null() {
  static PyObject* marker = PyObject_CallObject(reinterpret_cast<PyObject*>(&PyBaseObject_Type), nullptr);
  return marker;
}

bool Simulator::finally_state_on_stack(const SimFrame& fr) const {
  for (PyObject* v : fr.stack)
    if (v == finally_null() || (!finally_addresses_.empty() && finally_addresses_.count(v))) return true;
  return false;
}

// The return address is the index of the instruction after this one, held in an int of its own
// (not the small-int cache's object) so no user value on the stack is mistaken for it.
void Simulator::call_finally(SimFrame& fr, const Instruction& ins) {
  PyObject* index = PyLong_FromSize_t(fr.pc);
  PyObject* address = index ? py::fresh_int(index) : nullptr;
  Py_XDECREF(index);
  if (!address) python_error("CALL_FINALLY");
  fr.stack.push_back(own(address));
  finally_addresses_.insert(address);
  const int at = fr.dec->index_at(ins.jump_target);
  if (at < 0) stop(Break::Internal, "CALL_FINALLY to " + std::to_string(ins.jump_target) + ", not an instruction");
  fr.pc = at;
}

// END_FINALLY: NULL (normal exit) goes; an address is jumped back to; the three values of an
// exception capture raised go on unwinding.
void Simulator::end_finally(SimFrame& fr) {
  if (fr.stack.empty()) stop(Break::Internal, "END_FINALLY on an empty stack");
  PyObject* v = fr.stack.back();
  if (v == finally_null()) {
    fr.stack.pop_back();
    return;
  }
  if (finally_addresses_.count(v)) {
    fr.stack.pop_back();
    fr.pc = PyLong_AsSize_t(v);
    if (fr.pc >= fr.ins->size()) stop(Break::Internal, "END_FINALLY returns past the code");
    return;
  }
  if (fr.stack.size() >= 3 && sim_exception(fr.stack[fr.stack.size() - 2])) return reraise(fr);
  stop(Break::ExceptionHandling, "finally block reached by an exception capture did not raise");
}

// POP_FINALLY keep_top: leaves a finally body (a return or break in it). Under the value kept on
// top (a return value), NULL or an address goes; or an exception's three values and its except
// block, the state before it coming back (as POP_EXCEPT).
void Simulator::pop_finally(SimFrame& fr, int keep_top) {
  PyObject* kept = nullptr;
  if (keep_top) {
    if (fr.stack.empty()) stop(Break::Internal, "POP_FINALLY on an empty stack");
    kept = fr.stack.back();
    fr.stack.pop_back();
  }
  if (fr.stack.empty()) stop(Break::Internal, "POP_FINALLY on an empty stack");
  PyObject* v = fr.stack.back();
  if (v == finally_null() || finally_addresses_.count(v)) {
    fr.stack.pop_back();
  } else {
    if (fr.stack.size() < 3 || !sim_exception(fr.stack[fr.stack.size() - 2]))
      stop(Break::ExceptionHandling, "leaves a finally block entered by an exception capture did not raise");
    fr.stack.resize(fr.stack.size() - 3);
    pop_except(fr);
  }
  if (keep_top) fr.stack.push_back(kept);
}

// WITH_CLEANUP_FINISH: an exception and a true __exit__ result: silenced; the except block is
// left here and NULL tells END_FINALLY there is nothing more to do.
void Simulator::with_cleanup_finish(SimFrame& fr) {
  PyObject* res = fr.stack.back();
  fr.stack.pop_back();
  PyObject* exc = fr.stack.back();
  fr.stack.pop_back();
  if (exc == Py_None || !truth(res)) return;
  if (fr.blocks.empty() || fr.blocks.back().op != Opcode::POP_EXCEPT) stop(Break::Internal, "silenced outside a handler");
  SimFrame::Block b = fr.blocks.back();
  fr.blocks.pop_back();
  unwind_except_handler(fr, b);
  fr.stack.push_back(finally_null());
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT && PJ_PY_FINALLY_38
