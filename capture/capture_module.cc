// Test hooks of capture/ on pijit._C. Underscored: not API.
#include "py/pyport.h"  // first (Python.h)

#include <set>

#include "capture/op_table.h"
#include "capture/simulator.h"
#include "graph/ir.h"
#include "py/py_common.h"

namespace pj::py {
namespace {

// _C._test_interrupt_next_trace(exc_type): see capture::arm_test_interruption.
PyObject* py_test_interrupt(PyObject*, PyObject* exc_type) {
  if (!capture_supported()) return fail(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  if (exc_type != Py_None && !PyExceptionClass_Check(exc_type)) return fail(PyExc_TypeError, "expected an exception class");
  capture::arm_test_interruption(exc_type == Py_None ? nullptr : exc_type);
  Py_RETURN_NONE;
}

// _C._simulated_opcodes() -> the names of the running interpreter's opcodes capture has a handler
// for (capture/op_handlers.def); every other opcode refuses with B001.
PyObject* py_simulated_opcodes(PyObject*, PyObject*) {
  if (!capture_supported()) return fail(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  Ref out(PyList_New(0));
  if (!out) return nullptr;
  for (Opcode op : capture::simulated_opcodes()) {
    Ref name(PyUnicode_FromString(op_name(op)));
    if (!name || PyList_Append(out.get(), name.get()) < 0) return nullptr;
  }
  return out.release();
}

// The probe's record of one capture (new reference; nullptr with an exception set).
PyObject* capture_record(const capture::CaptureResult& r) {
  const capture::BreakInfo& why = capture::break_info(r.reason);
  Ref guards(PyList_New(0)), effects(PyList_New(0));
  if (!guards || !effects) return nullptr;
  for (const std::string& g : r.guards ? r.guards->describe() : std::vector<std::string>{})
    if (PyList_Append(guards.get(), Ref(PyUnicode_FromString(g.c_str())).get()) < 0) return nullptr;
  for (const std::string& e : r.effects)
    if (PyList_Append(effects.get(), Ref(PyUnicode_FromString(e.c_str())).get()) < 0) return nullptr;
  const bool stopped = !r.ok || r.broke;
  return Py_BuildValue("{s:O,s:O,s:s,s:s,s:s,s:i,s:s,s:N,s:s,s:i,s:N}", "ok", r.ok ? Py_True : Py_False, "broke",
                       r.broke ? Py_True : Py_False, "reason", stopped ? why.id : "", "text", stopped ? r.reason_text().c_str() : "", "detail",
                       stopped ? r.detail.c_str() : "", "line", r.line, "function", r.function.c_str(), "guards",
                       guards.release(), "graph", r.ok && r.graph ? r.graph->to_string().c_str() : "", "ops",
                       r.ops_seen, "effects", effects.release());
}

// _C._capture_probe(fn, args[, kwargs]) -> (fn(*args, **kwargs), record): the simulator run on
// fn's frame as the hook is given it (arguments bound, nothing run yet) with pj.jit's default
// options, and the frame then run in CPython's own loop. record: {ok, broke, reason (a break id
// such as "B002", "" when the whole frame was captured), text (the reason as explain shows it),
// detail, line, function, guards
// (explain's lines), graph (its text; "" when capture refused), ops, effects (replayed after the
// graph)}. The capture stage alone, on
// every Python the simulator is built for: on 3.11, whose hook does not capture yet, what capture
// would make of a frame.
PyObject* py_capture_probe(PyObject*, PyObject* args) {
  PyObject *fn, *call_args, *kwargs = nullptr;
  if (!PyArg_ParseTuple(args, "OO!|O!:_capture_probe", &fn, &PyTuple_Type, &call_args, &PyDict_Type, &kwargs)) return nullptr;
  if (!PyFunction_Check(fn)) return fail(PyExc_TypeError, "_capture_probe expects a Python function");
  if (!PJ_PY_CAPTURE_BUILT) return fail(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  PJ_PY_BEGIN
  Ref record;
  std::set<std::string> dims, scalars;  // (what a first capture under jit(dynamic=None) is given)
  Ref result(call_visiting_frame("_capture_probe", fn, call_args, kwargs,
                                 reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(fn)),
                                 [&](PyThreadState* ts, py::Frame* f, int throw_flag) -> PyObject* {
                                   capture::CaptureOptions opt;
                                   opt.dynamic_dims = &dims;
                                   opt.dynamic_scalars = &scalars;
                                   const capture::CaptureResult r = capture::capture_frame(f, opt);
                                   if (r.interrupted) return nullptr;  // (pending: the call raises it)
                                   record = Ref(capture_record(r));
                                   return record ? py::eval_frame_default(ts, f, throw_flag) : nullptr;
                                 }));
  if (!result) return nullptr;
  return Py_BuildValue("(OO)", result.get(), record.get());
  PJ_PY_END(nullptr)
}

// _C._fresh_int(v) -> the copy of int v capture reads a frame's number as (py::fresh_int): equal,
// never the same object. (Test hook: a copy must behave as v everywhere CPython reads it.)
PyObject* py_fresh_int(PyObject*, PyObject* v) {
  if (!PyLong_CheckExact(v)) return py::fail(PyExc_TypeError, "_fresh_int expects an int");
#if PJ_PY_CAPTURE_BUILT
  return py::fresh_int(v);
#else
  return py::fail(PyExc_NotImplementedError, py::kUnsupportedPythonMessage);
#endif
}

PyMethodDef capture_methods[] = {
    {"_fresh_int", py_fresh_int, METH_O, "test hook: capture's fresh copy of an int"},
    {"_capture_probe", py_capture_probe, METH_VARARGS, "_capture_probe(fn, args[, kwargs]): what capture makes of fn's frame"},
    {"_simulated_opcodes", py_simulated_opcodes, METH_NOARGS, "names of the opcodes capture simulates"},
    {"_test_interrupt_next_trace", py_test_interrupt, METH_O, "test hook: an exception pending at the next traced call"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

// Called once from PyInit__C. On failure (out of memory) a Python exception is left set.
void register_capture_functions(PyObject* module) {
  PyModule_AddFunctions(module, capture_methods);
}

}  // namespace pj::py
