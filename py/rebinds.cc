#include "py/rebinds.h"

namespace pj::py {

uint64_t g_rebinds = 0;

namespace {

PyObject* get_class(PyObject* self, void*) {
  PyObject* t = reinterpret_cast<PyObject*>(Py_TYPE(self));
  Py_INCREF(t);
  return t;
}

// object's own __class__ setter: its checks and errors ("__class__ assignment only supported
// for ...", "can't delete __class__ attribute") are Python's.
int set_class(PyObject* self, PyObject* value, void*) {
  static PyObject* const descr = PyDict_GetItemString(PyBaseObject_Type.tp_dict, "__class__");
  const int r = Py_TYPE(descr)->tp_descr_set(descr, self, value);
  if (r == 0) ++g_rebinds;
  return r;
}

int set_dict(PyObject* self, PyObject* value, void* closure) {
  const int r = PyObject_GenericSetDict(self, value, closure);
  if (r == 0) ++g_rebinds;
  return r;
}

PyGetSetDef class_def = {"__class__", get_class, set_class, nullptr, nullptr};
PyGetSetDef dict_def = {"__dict__", PyObject_GenericGetDict, set_dict, nullptr, nullptr};

// The descriptors, made once for `object` (so they serve instances of every class).
PyObject* descriptor(PyGetSetDef* def) {
  static PyObject* const made[2] = {PyDescr_NewGetSet(&PyBaseObject_Type, &class_def),
                                    PyDescr_NewGetSet(&PyBaseObject_Type, &dict_def)};
  return made[def == &dict_def];
}

bool resolves_to(PyTypeObject* t, PyGetSetDef* def) {
  PyObject* d = descriptor(def);
  static PyObject* const names[2] = {PyUnicode_InternFromString("__class__"), PyUnicode_InternFromString("__dict__")};
  return d && _PyType_Lookup(t, names[def == &dict_def]) == d;
}

}  // namespace

bool watch_rebinds(PyTypeObject* cls) {
  PyObject* c = descriptor(&class_def);
  PyObject* d = descriptor(&dict_def);
  if (!c || !d) return false;
  if (PyDict_SetItemString(cls->tp_dict, "__class__", c) < 0) return false;
  if (cls->tp_dictoffset && PyDict_SetItemString(cls->tp_dict, "__dict__", d) < 0) return false;
  PyType_Modified(cls);
  return true;
}

bool class_watched(PyTypeObject* t) { return resolves_to(t, &class_def); }
bool dict_watched(PyTypeObject* t) { return resolves_to(t, &dict_def); }

}  // namespace pj::py
