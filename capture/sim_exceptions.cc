// Exceptions raised and caught inside captured code. `raise E(...)` (or an assert that fails) with
// a handler in a simulated frame follows the handler path at capture time, as the interpreter
// would: the raise unwinds the frames' block stacks (a SimRaise C++ exception carries it through
// inlined calls), enters the innermost try handler with the six values CPython pushes, and the
// handler's opcodes (exception match, POP_EXCEPT, RERAISE / END_FINALLY) run on them. Which way
// the raise went is decided by values the guards fix, so the graph holds for every call it runs.
// Exception objects are made for real by their builtin C constructors from constant arguments;
// one that leaves the frame (returned, stored, raised past the root) stops capture, and a raise
// no simulated handler catches becomes a graph break before it: the interpreter raises it.
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_BUILT

#include "capture/sim_state.h"
#include "capture/sim_stack.h"
#include "py/py_common.h"

namespace pj::capture {

// An exception class whose instances run only BaseException's C code: a builtin one, or a user
// subclass that adds nothing but a docstring (`class ShapeError(ValueError): pass`).
bool Simulator::plain_exception_class(PyTypeObject* t) {
  if (!PyType_IsSubtype(t, reinterpret_cast<PyTypeObject*>(PyExc_BaseException))) return false;
  for (Py_ssize_t i = 0; t->tp_mro && i < PyTuple_GET_SIZE(t->tp_mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(t->tp_mro, i));
    if (!(base->tp_flags & Py_TPFLAGS_HEAPTYPE)) continue;
    if (Py_TYPE(base) != &PyType_Type) return false;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(base->tp_dict, &pos, &k, &v)) {
      const std::string n = PyUnicode_Check(k) ? py::text(k) : "";
      if (n != "__module__" && n != "__qualname__" && n != "__doc__" && n != "__dict__" && n != "__weakref__")
        return false;
    }
  }
  return true;
}

PyObject* Simulator::make_exception(PyTypeObject* t, const std::vector<PyObject*>& args, PyObject* kwnames) {
  PyObject* cls = reinterpret_cast<PyObject*>(t);
  if (!plain_exception_class(t))
    stop(Break::UnsupportedCall, std::string("constructs a ") + t->tp_name + " (an exception class with code of its own)");
  if (kwnames) stop(Break::UnsupportedCall, std::string("constructs a ") + t->tp_name + " with keyword arguments");
  if (t->tp_flags & Py_TPFLAGS_HEAPTYPE) {
    const int node = node_of(cls);
    if (node < 0) stop(Break::UnsupportedCall, std::string("constructs a ") + t->tp_name + " reached without a guardable path");
    guard_class(node, t, nullptr, /*is_class=*/true);
  }
  PyObject* tuple = own(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    // str(e) and e.args give these values back: they are constants, guarded as such.
    if (!is_constant(args[i])) stop(Break::UnsupportedCall, std::string("constructs a ") + t->tp_name + " holding a " + Py_TYPE(args[i])->tp_name);
    guard_scalars(args[i]);
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), args[i]);
  }
  PyObject* e = PyObject_Call(cls, tuple, nullptr);  // BaseException's C constructor (OSError's too)
  if (!e) python_error("constructing an exception");
  own(e);
  values_.created_exception(e);
  return e;
}

// A KeyError or IndexError the real operation raised on values the simulation holds (whose
// contents the guards fix): raised in the simulation, where a handler of the function may catch
// it (Mapping.__contains__ catches the KeyError of its __getitem__). Anything else: python_error.
void Simulator::raise_lookup_error(const char* during) {
  PyObject* t = PyErr_Occurred();
  if (t != PyExc_KeyError && t != PyExc_IndexError) python_error(during);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject* args = value ? PyObject_GetAttrString(value, "args") : nullptr;
  Py_XDECREF(tb);
  const bool plain = args && PyTuple_CheckExact(args) && is_constant(args);
  if (!plain) {
    Py_XDECREF(args);
    PyErr_Restore(type, value, nullptr);
    python_error(during);
  }
  own(args);
  Py_XDECREF(value);
  std::vector<PyObject*> items(PySequence_Fast_ITEMS(args), PySequence_Fast_ITEMS(args) + PyTuple_GET_SIZE(args));
  PyObject* e = make_exception(reinterpret_cast<PyTypeObject*>(type), items, nullptr);
  Py_DECREF(type);
  throw SimRaise{e};
}

void Simulator::raise_statement(SimFrame& fr, int argc) {
  PyObject* cause = nullptr;
  if (argc == 2) {  // raise E from C: C (an exception, a class made one, or None) is E's __cause__
    cause = fr.stack.back();
    fr.stack.pop_back();
    if (PyType_Check(cause) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cause), reinterpret_cast<PyTypeObject*>(PyExc_BaseException)))
      cause = make_exception(reinterpret_cast<PyTypeObject*>(cause), {}, nullptr);
    if (cause != Py_None && !made_exception(cause)) stop(Break::Raises, "raise ... from a cause capture did not make");
    argc = 1;
  }
  PyObject* e = nullptr;
  if (argc == 0) {
    if (fr.handling.empty()) stop(Break::Raises, "re-raise statement");
    e = fr.handling.back();
  } else {
    e = fr.stack.back();
    fr.stack.pop_back();
    if (PyType_Check(e) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(e), reinterpret_cast<PyTypeObject*>(PyExc_BaseException)))
      e = make_exception(reinterpret_cast<PyTypeObject*>(e), {}, nullptr);  // `raise ValueError`
  }
  if (!made_exception(e)) stop(Break::Raises, "raise statement");
  if (cause) {  // as do_raise: the cause set (it steals a reference), __suppress_context__ true
    if (cause != Py_None) Py_INCREF(cause);
    PyException_SetCause(e, cause == Py_None ? nullptr : cause);
  }
  throw SimRaise{e};
}

// py::raise_again_function()(e) where a resume function's prologue ends: it raises again, inside
// the same try and with blocks, what the interpreter's run of an instruction raised (e, a frame
// value). Its class, guarded, decides which handler takes it; what it holds is read as any frame
// value's is. Anywhere else: false.
bool Simulator::raise_input(PyObject* e) {
  const SimFrame* fr = frames_.size() == 1 ? frames_.front() : nullptr;
  if (!fr || opt_.first_break_index <= 0 || static_cast<int>(fr->pc) != opt_.first_break_index) return false;
  const int node = node_of(e);
  if (node < 0 || !PyExceptionInstance_Check(e)) return false;
  PyTypeObject* t = Py_TYPE(e);
  if (t->tp_flags & Py_TPFLAGS_HEAPTYPE) guard_class(node, t, nullptr);
  else tree_.add_check(node, {guards::CheckKind::Type, reinterpret_cast<PyObject*>(t), 0, {}});
  raised_inputs_.push_back(e);
  return true;
}

// CPython's unwinding (ceval's exception_unwind): loop blocks and finished handlers are popped;
// at a try block the handler is entered with the exception state before it and the new one
// pushed (traceback, value, type each), under an EXCEPT_HANDLER block. false: no handler here.
bool Simulator::enter_handler(SimFrame& fr, PyObject* e) {
  while (!fr.blocks.empty()) {
    SimFrame::Block b = fr.blocks.back();
    fr.blocks.pop_back();
    if (b.op == Opcode::POP_EXCEPT) {  // an except block the exception leaves: its state goes
      unwind_except_handler(fr, b);
      continue;
    }
    fr.stack.resize(b.level);
    bool handler = b.op == Opcode::SETUP_FINALLY || b.op == Opcode::SETUP_EXCEPT;  // (SETUP_EXCEPT: 3.7)
    if (!handler) continue;
    fr.blocks.push_back({Opcode::POP_EXCEPT, -1, fr.stack.size(), /*reenterable=*/false});
    PyObject* before = fr.handling.empty() ? Py_None : fr.handling.back();
    fr.stack.push_back(Py_None);  // its traceback: not modelled (reading it stops capture)
    fr.stack.push_back(before);
    fr.stack.push_back(before == Py_None ? Py_None : reinterpret_cast<PyObject*>(Py_TYPE(before)));
    fr.stack.push_back(Py_None);
    fr.stack.push_back(e);
    fr.stack.push_back(reinterpret_cast<PyObject*>(Py_TYPE(e)));
    fr.handling.push_back(e);
    fr.pc = ins_at(fr, b.target);
    return true;
  }
  return false;
}

// 3.11's unwinding: the exception-table entry covering the raising instruction (index `at`) gives
// the handler, the stack depth to keep, and whether the instruction's position (lasti, which
// RERAISE reads for the traceback) goes under the exception. false: no handler covers it.
bool Simulator::enter_table_handler(SimFrame& fr, size_t at, PyObject* e) {
  const int k = (*fr.handler)[at];
  if (k < 0) return false;
  const py::ExceptionEntry& h = (*fr.handlers)[k];
  if (fr.stack.size() < static_cast<size_t>(h.depth)) stop(Break::Internal, "an exception handler deeper than the stack");
  fr.stack.resize(h.depth);
  if (h.lasti) fr.stack.push_back(own(PyLong_FromLong((*fr.ins)[at].offset / py::kCodeUnit)));
  fr.stack.push_back(e);
  fr.pc = ins_at(fr, h.target);
  return true;
}

// 3.11: whether an exception raised at instruction i would reach the handler at `target`: the entry
// covering i names it, or a handler whose own code an entry naming it (or such a handler) covers.
// Entries are flat (each instruction names its innermost handler); a handler's code lies in the
// range of the construct around it, so the chain of handlers climbs out construct by construct.
bool Simulator::within_handler(const SimFrame& fr, size_t i, int target) {
  int k = i < fr.handler->size() ? (*fr.handler)[i] : -1;
  for (size_t steps = 0; k >= 0 && steps <= fr.handlers->size(); ++steps) {
    const int t = (*fr.handlers)[k].target;
    if (t == target) return true;
    const int at = fr.dec->index_at(t);
    k = at < 0 ? -1 : (*fr.handler)[at];
  }
  return false;
}

// Leaving an except block other than by POP_EXCEPT (ceval's UNWIND_EXCEPT_HANDLER): the stack
// down to the block's level, the three values of the state before it included.
void Simulator::unwind_except_handler(SimFrame& fr, const SimFrame::Block& b) {
  fr.stack.resize(b.level);
  fr.handling.pop_back();
}

// `except E`: whether the raised class matches E (a class or a tuple of them, as CPython checks).
bool Simulator::exception_matches(PyObject* raised, PyObject* pattern) {
  auto is_class = [](PyObject* c) {
    return PyType_Check(c) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(c), reinterpret_cast<PyTypeObject*>(PyExc_BaseException));
  };
  bool ok = is_class(pattern);
  if (PyTuple_CheckExact(pattern)) {
    ok = true;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pattern); ++i) ok = ok && is_class(PyTuple_GET_ITEM(pattern, i));
  }
  if (!ok || !is_class(raised)) stop(Break::ExceptionHandling, "an except clause naming something other than exception classes");
  return PyErr_GivenExceptionMatches(raised, pattern) != 0;
}

// POP_EXCEPT: the handler finished; the exception state before it comes back.
void Simulator::pop_except(SimFrame& fr) {
  if (fr.blocks.empty() || fr.blocks.back().op != Opcode::POP_EXCEPT) stop(Break::Internal, "POP_EXCEPT outside a handler");
  SimFrame::Block b = fr.blocks.back();
  fr.blocks.pop_back();
#if PJ_PY_BLOCKS_37
  unwind_except_handler(fr, b);  // down to the three values of the state before, and those
  return;
#else
  // exactly the three values of the state before (3.8+ return from a handler with ROT_FOUR: the
  // return value waits under them)
  if (fr.stack.size() < b.level + 3) stop(Break::Internal, "POP_EXCEPT on a short stack");
  fr.stack.resize(fr.stack.size() - 3);
#endif
  fr.handling.pop_back();
}

// RERAISE (3.9+) and END_FINALLY with an exception on top (3.7/3.8): the three values are the
// exception being handled; it goes on unwinding.
void Simulator::reraise(SimFrame& fr) {
  PyObject* type = fr.stack.back();
  PyObject* value = fr.stack[fr.stack.size() - 2];
  if (!sim_exception(value) || reinterpret_cast<PyObject*>(Py_TYPE(value)) != type)
    stop(Break::ExceptionHandling, "re-raises an exception capture did not raise");
  fr.stack.resize(fr.stack.size() - 3);
  throw SimRaise{value};
}

#if PJ_PY_BLOCKS_37 || PJ_PY_FINALLY_38
// WITH_CLEANUP_START reached by an exception (3.7/3.8): __exit__ waits under the three values of
// the state before and the exception's own; CPython moves it out from under them (the except
// block's level drops by one) and leaves NULL in its place. Returns __exit__.
PyObject* Simulator::exit_from_under_exception(SimFrame& fr) {
  if (fr.stack.size() < 7 || !sim_exception(fr.stack[fr.stack.size() - 2]) || fr.blocks.empty() ||
      fr.blocks.back().op != Opcode::POP_EXCEPT)
    stop(Break::ExceptionHandling, "with-block left by an exception capture did not raise, or a break");
  const size_t at = fr.stack.size() - 7;
  PyObject* exit = fr.stack[at];
  fr.stack.erase(fr.stack.begin() + static_cast<std::ptrdiff_t>(at));
  fr.stack.insert(fr.stack.end() - 3, Py_None);  // (CPython leaves a NULL there)
  fr.blocks.back().level--;
  refuse_traceback_reader(exit);
  return exit;
}

// WITH_CLEANUP_START (3.7/3.8): __exit__ called on the way out of a with-block: normally (3.7's
// None, 3.8's NULL on top, over __exit__), by a return (3.7: its marker over the value; 3.8 leaves
// through BEGIN_FINALLY, a normal exit) or by an exception (exit_from_under_exception).
void Simulator::with_cleanup_start(SimFrame& fr) {
  PyObject* exc = fr.stack.back();
  PyObject* exit = nullptr;
  PyObject* value = Py_None;
#if PJ_PY_BLOCKS_37
  PyObject* const normal_exit = Py_None;
#else
  PyObject* const normal_exit = finally_null();
#endif
  if (exc == normal_exit) {
    fr.stack.pop_back();
    if (fr.stack.empty()) stop(Break::Internal, "WITH_CLEANUP_START without __exit__");
    exit = fr.stack.back();
    fr.stack.back() = normal_exit;
    exc = Py_None;
#if PJ_PY_BLOCKS_37
  } else if (exc == return_marker()) {
    fr.stack.pop_back();
    PyObject* ret = fr.stack.back();
    fr.stack.pop_back();
    exit = fr.stack.back();
    fr.stack.back() = ret;
    fr.stack.push_back(exc);
    exc = Py_None;
#endif
  } else {
    exit = exit_from_under_exception(fr);  // (the exception's three values stay on top)
    value = fr.stack[fr.stack.size() - 2];
  }
  PyObject* res = call(exit, {exc, value, Py_None}, nullptr);
  fr.stack.push_back(exc);
  fr.stack.push_back(res);
}
#endif

#if PJ_PY_BLOCKS_37
// 3.7's return inside a try/finally (or an `except ... as e`, whose cleanup is one): the blocks
// unwind, a finally body runs with the value and a return marker on the stack, and END_FINALLY
// takes the return up again (ceval's WHY_RETURN).
void Simulator::return_value(SimFrame& fr, PyObject* v) {
  while (!fr.blocks.empty()) {
    SimFrame::Block b = fr.blocks.back();
    fr.blocks.pop_back();
    if (b.op == Opcode::POP_EXCEPT) {
      unwind_except_handler(fr, b);
      continue;
    }
    if (b.op != Opcode::SETUP_FINALLY) continue;  // a loop, a try's except part: nothing runs
    fr.stack.resize(b.level);  // (a with-block's cleanup calls __exit__ and takes the return up)
    fr.stack.push_back(v);
    fr.stack.push_back(return_marker());
    fr.pc = ins_at(fr, b.target);
    return;
  }
  fr.result = v;
  fr.returned = true;
}

bool Simulator::finally_state_on_stack(const SimFrame& fr) const {
  for (PyObject* v : fr.stack)
    if (v == return_marker() || v == silenced_marker()) return true;
  return false;
}

PyObject* Simulator::return_marker() {
  static PyObject* marker = PyLong_FromLong(8);  // WHY_RETURN, a fresh object: nothing else is it
  return marker;
}

PyObject* Simulator::silenced_marker() {
  static PyObject* marker = PyLong_FromLong(0x80);  // WHY_SILENCED, a fresh object
  return marker;
}

// WITH_CLEANUP_FINISH: an exception and a true __exit__ result: silenced (END_FINALLY then
// leaves the except block).
void Simulator::with_cleanup_finish(SimFrame& fr) {
  PyObject* res = fr.stack.back();
  fr.stack.pop_back();
  PyObject* exc = fr.stack.back();
  fr.stack.pop_back();
  if (exc != Py_None && truth(res)) fr.stack.push_back(silenced_marker());
}
#endif

// An exception reaching a with-block's __exit__: it gets the class, the value and None for the
// traceback (capture keeps none), so only an __exit__ that never reads its traceback is simulated.
void Simulator::refuse_traceback_reader(PyObject* exit) {
  PyObject* f = PyMethod_Check(exit) ? PyMethod_GET_FUNCTION(exit) : nullptr;
  if (!f || !PyFunction_Check(f)) stop(Break::ExceptionHandling, std::string("an exception reaches a with-block's __exit__, a ") + Py_TYPE(exit)->tp_name);
  auto* co = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(f));
  const std::string who = std::string("an exception reaches ") + Py_TYPE(PyMethod_GET_SELF(exit))->tp_name + ".__exit__, which ";
  if (co->co_argcount < 4) stop(Break::ExceptionHandling, who + "takes the exception as *args (its traceback among them)");
  PyObject* tb = py::code_varname(co, 3);
  for (Py_ssize_t i = 0; i < py::code_ncells(co); ++i)
    if (PyUnicode_Compare(py::code_cellname(co, i), tb) == 0)
      stop(Break::ExceptionHandling, who + "reads its traceback (capture has none)");
  DecodeResult d = decode_code(reinterpret_cast<PyObject*>(co));
  for (const Instruction& ins : d.instructions)
    if (ins.op == Opcode::LOAD_FAST && ins.arg == 3) stop(Break::ExceptionHandling, who + "reads its traceback (capture has none)");
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
