// Test hooks of capture/ on pijit._C. Underscored: not API.
#include "py/pyport.h"  // first (Python.h)

#include "capture/op_table.h"
#include "capture/simulator.h"
#include "py/py_common.h"

namespace pj::py {
namespace {

// _C._test_interrupt_next_trace(exc_type): see capture::arm_test_interruption.
PyObject* py_test_interrupt(PyObject*, PyObject* exc_type) {
  if (!kCaptureSupported) return fail(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  if (exc_type != Py_None && !PyExceptionClass_Check(exc_type)) return fail(PyExc_TypeError, "expected an exception class");
  capture::arm_test_interruption(exc_type == Py_None ? nullptr : exc_type);
  Py_RETURN_NONE;
}

// _C._simulated_opcodes() -> the names of the running interpreter's opcodes capture has a handler
// for (capture/op_handlers.def); every other opcode refuses with B001.
PyObject* py_simulated_opcodes(PyObject*, PyObject*) {
  if (!kCaptureSupported) return fail(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  Ref out(PyList_New(0));
  if (!out) return nullptr;
  for (Opcode op : capture::simulated_opcodes()) {
    Ref name(PyUnicode_FromString(op_name(op)));
    if (!name || PyList_Append(out.get(), name.get()) < 0) return nullptr;
  }
  return out.release();
}

PyMethodDef capture_methods[] = {
    {"_simulated_opcodes", py_simulated_opcodes, METH_NOARGS, "names of the opcodes capture simulates"},
    {"_test_interrupt_next_trace", py_test_interrupt, METH_O, "test hook: an exception pending at the next traced call"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

// Called once from PyInit__C. On failure (out of memory) a Python exception is left set.
void register_capture_functions(PyObject* module) {
  PyModule_AddFunctions(module, capture_methods);
}

}  // namespace pj::py
