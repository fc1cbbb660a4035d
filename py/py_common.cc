#include "py/pyport.h"  // first (Python.h)

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

namespace {

bool cell_args(PyObject* args, const char* what, PyObject** cell, PyObject** name) {
  if (!PyArg_ParseTuple(args, "OU", cell, name)) return false;
  if (!PyCell_Check(*cell)) {
    PyErr_Format(PyExc_TypeError, "%s expects a cell", what);
    return false;
  }
  return true;
}

PyObject* unbound(PyObject* name) {
  PyErr_Format(PyExc_UnboundLocalError, kUnboundCellMessage, PyUnicode_AsUTF8(name));
  return nullptr;
}

PyObject* cell_load(PyObject*, PyObject* args) {
  PyObject *cell, *name;
  if (!cell_args(args, "cell_load", &cell, &name)) return nullptr;
  PyObject* v = PyCell_GET(cell);
  if (!v) return unbound(name);
  Py_INCREF(v);
  return v;
}

PyObject* cell_delete(PyObject*, PyObject* args) {
  PyObject *cell, *name;
  if (!cell_args(args, "cell_delete", &cell, &name)) return nullptr;
  if (!PyCell_GET(cell)) return unbound(name);
  if (PyCell_Set(cell, nullptr) < 0) return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef kCellLoad = {"cell_load", cell_load, METH_VARARGS, "a cell variable's value, or UnboundLocalError"};
PyMethodDef kCellDelete = {"cell_delete", cell_delete, METH_VARARGS, "empties a cell, or UnboundLocalError"};

}  // namespace

PyObject* odict_keys_iter(PyObject* od) {
  if (Py_TYPE(od)->tp_iter != PyODict_Type.tp_iter)
    return fail(PyExc_TypeError, std::string("the order of a ") + Py_TYPE(od)->tp_name + " is its own __iter__'s");
  return PyObject_GetIter(od);
}

PyObject* dict_keys_in_order(PyObject* d) {
  if (!PyODict_Check(d)) return PyDict_Keys(d);
  Ref it(odict_keys_iter(d));
  return it.get() ? PySequence_List(it.get()) : nullptr;
}

PyObject* cell_load_function() {
  static PyObject* f = PyCFunction_New(&kCellLoad, nullptr);
  return f;
}

PyObject* cell_delete_function() {
  static PyObject* f = PyCFunction_New(&kCellDelete, nullptr);
  return f;
}

}  // namespace pj::py
