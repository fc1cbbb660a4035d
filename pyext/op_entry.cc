// pijit._C.op_entry(name, arity, fallback): a callable that runs registry op `name` on `arity`
// tensors given positionally straight through call_eager (graph/op.h), and hands every other call
// (a keyword, a Python number, a list, a wrong count) to `fallback`, the Python function it stands
// for, which stays the definition of the call's conversions and errors. pijit.ops's elementwise
// functions are these (issue 46: one C++ entry each, not a chain of Python wrappers).
//
// It looks like the function: __name__, __qualname__, __doc__ and __module__ are the function's,
// __wrapped__ is the function (inspect.signature follows it), stored on a class it binds as a
// method, it takes weak references, and copy, deepcopy and pickle give the entry itself (by its
// module and name, as a function). Its type is pijit's (capture/sim_values.cc knows it): capture
// runs a call of it for real under its recorder (call_eager records under a tracer). Only pijit's
// own functions are made entries (_op_entry): the fallback is library code capture trusts.
#include "pyext/op_entry.h"

#include <structmember.h>

#include <cstddef>
#include <string>

#include "graph/op.h"
#include "pyext/tensor_object.h"

namespace pj::py {
namespace {

struct OpEntry {
  PyObject_HEAD
  VectorcallFn vectorcall;  // (3.8+: CPython calls through it; 3.7: tp_call)
  const OpDef* op;
  int arity;
  PyObject* fallback;
  PyObject* weakrefs;
};

OpEntry* entry_of(PyObject* o) { return reinterpret_cast<OpEntry*>(o); }

// The common call: exactly `arity` tensors, positionally.
bool common(const OpEntry* e, PyObject* const* args, Py_ssize_t nargs) {
  return nargs == e->arity && is_tensor(args[0]) && (nargs == 1 || is_tensor(args[1]));
}

PyObject* run(const OpEntry* e, PyObject* const* args, Py_ssize_t nargs) {
  PJ_PY_BEGIN
  const Tensor in[2] = {unwrap(args[0]), nargs == 2 ? unwrap(args[1]) : Tensor()};
  return wrap(call_eager(*e->op, absl::MakeConstSpan(in, static_cast<size_t>(nargs))));
  PJ_PY_END(nullptr)
}

PyObject* no_fallback() { return fail(PyExc_RuntimeError, "pijit: an op entry used after it was cleared"); }

PyObject* entry_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const OpEntry* e = entry_of(self);
  const Py_ssize_t nargs = vector_nargs(nargsf);
  if (!kwnames && common(e, args, nargs)) return run(e, args, nargs);
  return e->fallback ? vectorcall(e->fallback, args, nargsf, kwnames) : no_fallback();
}

PyObject* entry_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  const OpEntry* e = entry_of(self);
  PyObject* const* a = &PyTuple_GET_ITEM(args, 0);
  const Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if ((!kwargs || PyDict_Size(kwargs) == 0) && common(e, a, nargs)) return run(e, a, nargs);
  return e->fallback ? PyObject_Call(e->fallback, args, kwargs) : no_fallback();
}

// As a function: bound to the instance it is read from through a class.
PyObject* entry_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

void entry_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  if (entry_of(self)->weakrefs) PyObject_ClearWeakRefs(self);
  Py_CLEAR(entry_of(self)->fallback);
  Py_TYPE(self)->tp_free(self);
}

int entry_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(entry_of(self)->fallback);
  return 0;
}

int entry_clear(PyObject* self) {
  Py_CLEAR(entry_of(self)->fallback);
  return 0;
}

// __name__, __qualname__, __doc__, __module__: the function's.
PyObject* fallback_attr(PyObject* self, void* name) {
  PyObject* f = entry_of(self)->fallback;
  if (!f) return no_fallback();
  return PyObject_GetAttrString(f, static_cast<const char*>(name));
}

PyObject* entry_repr(PyObject* self) {
  return PyUnicode_FromFormat("<pijit op entry %s>", entry_of(self)->op->name.c_str());
}

PyGetSetDef entry_getset[] = {
    {"__name__", fallback_attr, nullptr, nullptr, const_cast<char*>("__name__")},
    {"__qualname__", fallback_attr, nullptr, nullptr, const_cast<char*>("__qualname__")},
    {"__doc__", fallback_attr, nullptr, nullptr, const_cast<char*>("__doc__")},
    {"__module__", fallback_attr, nullptr, nullptr, const_cast<char*>("__module__")},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// __reduce__: the entry's name, which copy takes as "atomic" (deepcopy gives the entry itself)
// and pickle as a global found by __module__ and that name, as it does a function.
PyObject* entry_reduce(PyObject* self, PyObject*) { return fallback_attr(self, const_cast<char*>("__qualname__")); }

PyMethodDef entry_methods[] = {{"__reduce__", entry_reduce, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};

PyMemberDef entry_members[] = {
    {const_cast<char*>("__wrapped__"), T_OBJECT, offsetof(OpEntry, fallback), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyTypeObject OpEntryType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// _op_entry(name, arity, fallback) -> the entry.
PyObject* py_op_entry(PyObject*, PyObject* args) {
  PyObject *name, *fallback;
  int arity;
  if (!PyArg_ParseTuple(args, "UiO:_op_entry", &name, &arity, &fallback)) return nullptr;
  PJ_PY_BEGIN
  if (arity != 1 && arity != 2) return fail(PyExc_ValueError, "_op_entry: arity must be 1 or 2");
  if (!PyCallable_Check(fallback)) return fail(PyExc_TypeError, "_op_entry: fallback must be callable");
  const OpDef* op = find_op(text(name));
  if (!op) return fail(PyExc_ValueError, "_op_entry: unknown op '" + text(name) + "'");
  if (op->num_inputs != arity)
    return fail(PyExc_ValueError, "_op_entry: op '" + op->name + "' takes " + std::to_string(op->num_inputs) +
                                      " tensor inputs, not " + std::to_string(arity));
  auto* e = PyObject_GC_New(OpEntry, &OpEntryType);
  if (!e) return nullptr;
  e->vectorcall = entry_vectorcall;
  e->op = op;
  e->arity = arity;
  Py_INCREF(fallback);
  e->fallback = fallback;
  e->weakrefs = nullptr;
  PyObject_GC_Track(reinterpret_cast<PyObject*>(e));
  return reinterpret_cast<PyObject*>(e);
  PJ_PY_END(nullptr)
}

PyMethodDef op_entry_functions[] = {
    {"_op_entry", py_op_entry, METH_VARARGS,
     "_op_entry(name, arity, fallback): registry op `name` on `arity` tensors, other calls fallback's (pijit's own functions)"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyTypeObject* op_entry_type() { return &OpEntryType; }

bool init_op_entries(PyObject* module) {
  PyTypeObject& t = OpEntryType;
  t.tp_name = "pijit._C.OpEntry";
  t.tp_basicsize = sizeof(OpEntry);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | kTpFlagsHaveVectorcall;
  set_vectorcall_offset(&t, offsetof(OpEntry, vectorcall));
  t.tp_call = entry_call;
  t.tp_descr_get = entry_get;
  t.tp_dealloc = entry_dealloc;
  t.tp_traverse = entry_traverse;
  t.tp_clear = entry_clear;
  t.tp_repr = entry_repr;
  t.tp_getset = entry_getset;
  t.tp_members = entry_members;
  t.tp_methods = entry_methods;
  t.tp_weaklistoffset = offsetof(OpEntry, weakrefs);
  if (PyType_Ready(&t) < 0) return false;
  return add_functions(module, op_entry_functions);
}

}  // namespace pj::py
