#include "py/py_common.h"

namespace pj::py {

PyObject* g_capture_break = nullptr;

void set_python_error(const Error& e) {
  PyObject* type = PyExc_RuntimeError;
  switch (e.kind()) {
    case ErrorKind::Value: type = PyExc_ValueError; break;
    case ErrorKind::Type: type = PyExc_TypeError; break;
    case ErrorKind::Index: type = PyExc_IndexError; break;
    case ErrorKind::Runtime: type = PyExc_RuntimeError; break;
    case ErrorKind::NotImplemented: type = PyExc_NotImplementedError; break;
    case ErrorKind::CaptureBreak: type = g_capture_break; break;
  }
  PyErr_SetString(type, e.what());
}

PyObject* fail(PyObject* type, const std::string& msg) {
  PyErr_SetString(type, msg.c_str());
  return nullptr;
}

bool add_functions(PyObject* module, PyMethodDef* defs) {
  Ref modname(PyModule_GetNameObject(module));
  if (!modname) return false;
  for (PyMethodDef* d = defs; d->ml_name; ++d) {
    Ref f(PyCFunction_NewEx(d, module, modname.get()));
    if (!f || PyModule_AddObject(module, d->ml_name, f.release()) < 0) return false;
  }
  return true;
}

}  // namespace pj::py
