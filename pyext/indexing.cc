// Tensor indexing from Python keys (placeholder: integer on the first axis).
#include "pyext/tensor_object.h"

namespace pj::py {

PyObject* tensor_getitem(PyObject* self, PyObject* key) {
  PJ_PY_BEGIN
  const Tensor& t = unwrap(self);
  long long i = PyLong_AsLongLong(key);
  if (i == -1 && PyErr_Occurred()) return nullptr;
  if (t.ndim() == 0) return fail(PyExc_IndexError, "too many indices for tensor");
  if (i < 0) i += t.dim(0);
  if (i < 0 || i >= t.dim(0)) return fail(PyExc_IndexError, "index out of bounds");
  Shape s(t.shape().begin() + 1, t.shape().end()), st(t.strides().begin() + 1, t.strides().end());
  return wrap(t.as_strided(s, st, t.offset() + i * t.stride(0)));
  PJ_PY_END(nullptr)
}

int tensor_setitem(PyObject* self, PyObject* key, PyObject* value) {
  PyErr_SetString(PyExc_NotImplementedError, "setitem");
  return -1;
}

}  // namespace pj::py
