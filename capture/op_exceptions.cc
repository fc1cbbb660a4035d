// Opcode handlers: raises, except handlers, finally bodies and with-blocks (op_handlers.def; the
// protocols themselves: sim_exceptions.cc, sim_finally38.cc).
#include "py/pyport.h"  // first (Python.h)

#include "capture/sim_stack.h"
#include "capture/sim_state.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {

// A context manager's __enter__ / __exit__, looked up on its type as `with` does, bound to it.
// Only Python functions (the user's, simulated; pijit's, traced): a builtin manager (a lock, a
// file) would act at capture time.
PyObject* Simulator::with_method(PyObject* mgr, const char* name) {
  PyObject* key = own(PyUnicode_InternFromString(name));
  PyObject* f = _PyType_Lookup(Py_TYPE(mgr), key);
  if (!f) stop(Break::Raises, std::string("AttributeError: ") + name + " (a with-block on a " + Py_TYPE(mgr)->tp_name + ")");
  if (!PyFunction_Check(f)) stop(Break::ExceptionHandling, std::string("with-block on a ") + Py_TYPE(mgr)->tp_name);
  if (node_of(mgr) >= 0) guard_class(node_of(mgr), Py_TYPE(mgr), key);  // a method patched later recompiles
  PyObject* bound = own(PyMethod_New(f, mgr));
  values_.created_method(bound, mgr, key, /*replayed=*/false);
  return bound;
}

// 3.9-3.10's `except E:`: pops the exception and E, jumps past the handler when they do not match.
void Simulator::JUMP_IF_NOT_EXC_MATCH(SimFrame& fr, const Instruction& ins) {
  PyObject* pattern = pop(fr);
  if (!exception_matches(pop(fr), pattern)) jump(fr, ins);
}

// 3.11's `except E:`: [exception, E] -> [exception, whether it matches] (a jump follows)
void Simulator::CHECK_EXC_MATCH(SimFrame& fr, const Instruction& ins) {
  PyObject* pattern = pop(fr);
  if (!sim_exception(top(fr))) stop(Break::ExceptionHandling, "matches an exception capture did not raise");
  push(fr, exception_matches(reinterpret_cast<PyObject*>(Py_TYPE(top(fr))), pattern) ? Py_True : Py_False);
}

// 3.11: a handler begins; the exception being handled before it goes under the new one, which
// becomes the one being handled (POP_EXCEPT gives the old one back)
void Simulator::PUSH_EXC_INFO(SimFrame& fr, const Instruction& ins) {
  PyObject* e = pop(fr);
  push(fr, fr.handling.empty() ? Py_None : fr.handling.back());
  fr.handling.push_back(e);
  push(fr, e);
}

// 3.9-3.10: the three values of the exception go on unwinding. 3.11: the exception alone (an
// argument n > 0 points the traceback at the instruction a value n down names: not modelled)
void Simulator::RERAISE(SimFrame& fr, const Instruction& ins) {
  if (!py::kExceptionTables) return reraise(fr);
  PyObject* e = pop(fr);
  if (!sim_exception(e)) stop(Break::ExceptionHandling, "re-raises an exception capture did not raise");
  throw SimRaise{e};
}

#if PJ_PY_BLOCKS_37
void Simulator::END_FINALLY(SimFrame& fr, const Instruction& ins) {
  if (top(fr) == return_marker()) {  // a return goes on unwinding
    pop(fr);
    return return_value(fr, pop(fr));
  }
  if (top(fr) == silenced_marker()) {  // a with-block's __exit__ swallowed the exception
    pop(fr);
    if (fr.blocks.empty() || fr.blocks.back().op != Opcode::POP_EXCEPT) stop(Break::Internal, "silenced outside a handler");
    SimFrame::Block b = fr.blocks.back();
    fr.blocks.pop_back();
    unwind_except_handler(fr, b);
    return;
  }
  if (fr.stack.size() >= 3 && sim_exception(top(fr, 2))) return reraise(fr);
  if (top(fr) != Py_None) stop(Break::ExceptionHandling, "finally block reached by an exception");
  pop(fr);
}
#endif

#if PJ_PY_FINALLY_38
void Simulator::BEGIN_FINALLY(SimFrame& fr, const Instruction& ins) {
  push(fr, finally_null());
}
#endif

#if PJ_PY_FINALLY_38
void Simulator::CALL_FINALLY(SimFrame& fr, const Instruction& ins) {
  call_finally(fr, ins);
}
#endif

#if PJ_PY_FINALLY_38
void Simulator::POP_FINALLY(SimFrame& fr, const Instruction& ins) {
  pop_finally(fr, ins.arg);
}
#endif

#if PJ_PY_FINALLY_38
void Simulator::END_FINALLY(SimFrame& fr, const Instruction& ins) {
  end_finally(fr);
}
#endif

void Simulator::RAISE_VARARGS(SimFrame& fr, const Instruction& ins) {
  raise_statement(fr, ins.arg);
}

void Simulator::POP_EXCEPT(SimFrame& fr, const Instruction& ins) {
  if (!py::kExceptionTables) return pop_except(fr);
  // 3.11: the exception PUSH_EXC_INFO saved is the one being handled again
  if (fr.handling.empty() || fr.stack.empty()) stop(Break::Internal, "POP_EXCEPT outside a handler");
  pop(fr);
  fr.handling.pop_back();
}

// exit = type(mgr).__exit__ bound, then enter's result. 3.11: the exception table covers the body
// (its handler is not simulated: a raise there stops capture); a BEFORE_WITH block stands for it
// where breaks are placed (run_frame: a break inside needs a manager the resume function can
// reach, as before 3.11), closed once the body's exit path consumed `exit` (run_frame).
void Simulator::BEFORE_WITH(SimFrame& fr, const Instruction& ins) {
  PyObject* mgr = pop(fr);
  PyObject* exit = with_method(mgr, "__exit__");
  PyObject* enter = with_method(mgr, "__enter__");
  push(fr, exit);
  push(fr, call(enter, {}, nullptr));
  if (py::kExceptionTables) {  // (its target: the handler of the body, which starts after it)
    const int e = fr.pc < fr.handler->size() ? (*fr.handler)[fr.pc] : -1;
    fr.blocks.push_back({Opcode::BEFORE_WITH, e >= 0 ? (*fr.handlers)[e].target : -1, fr.stack.size() - 2, node_of(mgr) >= 0});
  }
}

// BEFORE_WITH, enter's result over a SETUP_FINALLY block whose handler calls exit with the
// exception (a simulated raise; sim_exceptions.cc).
void Simulator::SETUP_WITH(SimFrame& fr, const Instruction& ins) {
  const bool reenterable = node_of(top(fr)) >= 0;
  BEFORE_WITH(fr, ins);  // (3.7-3.10: pushes no block)
  fr.blocks.push_back({Opcode::SETUP_FINALLY, ins.jump_target, fr.stack.size() - 1, reenterable});
}

#if PJ_PY_BLOCKS_37 || PJ_PY_FINALLY_38
void Simulator::WITH_CLEANUP_START(SimFrame& fr, const Instruction& ins) {
  with_cleanup_start(fr);
}
#endif

#if PJ_PY_BLOCKS_37 || PJ_PY_FINALLY_38
void Simulator::WITH_CLEANUP_FINISH(SimFrame& fr, const Instruction& ins) {
  with_cleanup_finish(fr);
}
#endif

#if !(PJ_PY_BLOCKS_37 || PJ_PY_FINALLY_38)
// exit(type, value, traceback): 3.9-3.10 under the exception's three values and the three of the
// one handled before; 3.11 under the exception and the one handled before, over its lasti.
void Simulator::WITH_EXCEPT_START(SimFrame& fr, const Instruction& ins) {
  const size_t exit_at = py::kExceptionTables ? 4 : 7;
  PyObject* e = py::kExceptionTables ? top(fr) : top(fr, 2);
  if (fr.stack.size() < exit_at || !sim_exception(e)) stop(Break::ExceptionHandling, "WITH_EXCEPT_START without an exception");
  PyObject* exit = top(fr, exit_at);
  refuse_traceback_reader(exit);
  push(fr, call(exit, {reinterpret_cast<PyObject*>(Py_TYPE(e)), e, Py_None}, nullptr));
}
#endif

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
