#include "py/rebinds.h"

#include <cstring>
#include <vector>

namespace pj::py {

uint64_t g_rebinds = 0;

namespace {

// Each counting descriptor wraps the one it replaced (its closure).
PyObject* wrapped_get(PyObject* self, void* closure) {
  PyObject* d = static_cast<PyObject*>(closure);
  return Py_TYPE(d)->tp_descr_get(d, self, reinterpret_cast<PyObject*>(Py_TYPE(self)));
}

int wrapped_set(PyObject* self, PyObject* value, void* closure) {
  PyObject* d = static_cast<PyObject*>(closure);
  const int r = Py_TYPE(d)->tp_descr_set(d, self, value);
  if (r == 0) ++g_rebinds;
  return r;
}

std::vector<PyObject*>& counting(int which) {  // 0: __class__, 1: __dict__ (kept for good)
  static std::vector<PyObject*> made[2];
  return made[which];
}

PyObject* name_of(int which) {
  static PyObject* const names[2] = {PyUnicode_InternFromString("__class__"), PyUnicode_InternFromString("__dict__")};
  return names[which];
}

bool replace(PyTypeObject* cls, int which) {
  PyObject* name = name_of(which);
  PyObject* old = _PyType_Lookup(cls, name);
  if (!old || !Py_TYPE(old)->tp_descr_get || !Py_TYPE(old)->tp_descr_set) {
    PyErr_Format(PyExc_TypeError, "_watch_rebinds: %s has no %U to watch", cls->tp_name, name);
    return false;
  }
  for (PyObject* d : counting(which))
    if (d == old) return true;  // (a base's: already counting)
  Py_INCREF(old);
  const char* doc = nullptr;  // (the replaced one's, for help())
  if (PyObject* text = PyObject_GetAttrString(old, "__doc__")) {
    if (PyUnicode_Check(text)) doc = strdup(PyUnicode_AsUTF8(text));
    Py_DECREF(text);
  }
  PyErr_Clear();
  auto* def = new PyGetSetDef{which ? "__dict__" : "__class__", wrapped_get, wrapped_set, doc, old};
  PyObject* d = PyDescr_NewGetSet(cls, def);
  if (!d || PyDict_SetItem(cls->tp_dict, name, d) < 0) return false;
  counting(which).push_back(d);
  return true;
}

bool watched(PyTypeObject* t, int which) {
  PyObject* d = _PyType_Lookup(t, name_of(which));
  for (PyObject* c : counting(which))
    if (c == d) return true;
  return false;
}

}  // namespace

bool watch_rebinds(PyTypeObject* cls, bool cls_too) {
  if (!replace(cls, 1) || (cls_too && !replace(cls, 0))) return false;
  PyType_Modified(cls);
  return true;
}

bool class_watched(PyTypeObject* t) { return watched(t, 0); }
bool dict_watched(PyTypeObject* t) { return watched(t, 1); }

}  // namespace pj::py
