// Opcode handlers: 3.10's pattern matching (op_handlers.def).
#include "py/pyport.h"  // first (Python.h)

#include "capture/sim_stack.h"
#include "capture/sim_state.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {
namespace {

PyObject* builtin(const char* name) { return PyObject_GetAttrString(PyImport_AddModule("builtins"), name); }

// getattr's default where a pattern's attribute or key is missing: no program object is it.
PyObject* missing() {
  static PyObject* m = PyObject_CallObject(reinterpret_cast<PyObject*>(&PyBaseObject_Type), nullptr);
  return m;
}

}  // namespace

// 3.10: whether the subject's class matches sequence/mapping patterns
void Simulator::match_class_flag(SimFrame& fr, const Instruction& ins) {
  PyTypeObject* t = Py_TYPE(top(fr));
  // A builtin (static) type's flags never change; a class's may (collections.abc registration).
  if (PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE)) stop(Break::UnsupportedOpcode, std::string(op_name(ins.op)) + " on a " + t->tp_name);
  push(fr, PyType_HasFeature(t, py::match_pattern_flag(ins.op == Opcode::MATCH_SEQUENCE)) ? Py_True : Py_False);
}

// 3.10: len(subject) pushed over it, as the builtin len (guards included)
void Simulator::GET_LEN(SimFrame& fr, const Instruction& ins) {
  static PyObject* len = builtin("len");
  push(fr, call(len, {top(fr)}, nullptr));
}


// `case {"k": v, ...}`: the subject's values of the keys tuple on top (3.10: then True), or None
// (3.10: then False) at the first key it lacks. A dict's lookups run no user code (the keys are
// constants); a key read from a frame dict is guarded present (its value along its path) or absent.
void Simulator::MATCH_KEYS(SimFrame& fr, const Instruction& ins) {
  PyObject* keys = top(fr);
  PyObject* subject = top(fr, 2);
  if (!PyDict_CheckExact(subject)) stop(Break::UnsupportedOpcode, std::string("MATCH_KEYS on a ") + Py_TYPE(subject)->tp_name);
  if (!PyTuple_CheckExact(keys)) stop(Break::Internal, "MATCH_KEYS without a tuple of keys");
  PyObject* seen = own(PySet_New(nullptr));
  std::vector<PyObject*> values;
  const int node = node_of(subject);
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(keys); ++i) {
    PyObject* key = PyTuple_GET_ITEM(keys, i);
    if (!is_constant(key)) stop(Break::UnsupportedOpcode, std::string("MATCH_KEYS with a ") + Py_TYPE(key)->tp_name + " key");
    int dup = PySet_Contains(seen, key);
    if (dup < 0 || PySet_Add(seen, key) < 0) python_error("a mapping pattern's key");
    if (dup) stop(Break::Raises, "ValueError: mapping pattern checks duplicate key (" + py::text(own(PyObject_Repr(key))) + ")");
    PyObject* v = node >= 0 ? frame_dict_item(subject, node, key) : PyDict_GetItemWithError(subject, key);
    if (!v && PyErr_Occurred()) python_error("a mapping pattern's key");
    if (!v) {
      push(fr, Py_None);
      if (!py::kMatchPushesNone) push(fr, Py_False);
      return;
    }
    values.push_back(v);
  }
  PyObject* t = own(PyTuple_New(static_cast<Py_ssize_t>(values.size())));
  for (size_t i = 0; i < values.size(); ++i) {
    Py_INCREF(values[i]);
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), values[i]);
  }
  push(fr, t);
  if (!py::kMatchPushesNone) push(fr, Py_True);
}

// 3.10: `case {"k": v, **rest}`: rest = dict(subject) without the keys on top (which it holds:
// MATCH_KEYS matched them), replacing them.
void Simulator::COPY_DICT_WITHOUT_KEYS(SimFrame& fr, const Instruction& ins) {
  PyObject* keys = top(fr);
  PyObject* subject = top(fr, 2);
  if (!PyDict_CheckExact(subject))
    stop(Break::UnsupportedOpcode, std::string("COPY_DICT_WITHOUT_KEYS on a ") + Py_TYPE(subject)->tp_name);
  PyObject* rest = own(PyDict_New());
  if (PyDict_Update(rest, materialize(subject)) < 0) python_error("**rest");
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(keys); ++i)
    if (PyDict_DelItem(rest, PyTuple_GET_ITEM(keys, i)) < 0) python_error("**rest");
  fr.stack.back() = rest;
}

// `case C(p, q, a=r)`: with the subject an instance of C, the tuple of its attributes the
// sub-patterns match (positional ones named by C.__match_args__; the subject itself for one
// positional sub-pattern of a builtin such as int) replaces the subject, then True; else False.
// 3.11: the tuple, or None, replaces subject, class and names.
// isinstance and getattr run as the builtins do under capture (guarded, user code simulated), and
// a missing attribute fails the match as AttributeError does in CPython.
void Simulator::MATCH_CLASS(SimFrame& fr, const Instruction& ins) {
  static PyObject* isinstance_fn = builtin("isinstance");
  static PyObject* getattr_fn = builtin("getattr");
  static PyObject* match_args_name = PyUnicode_InternFromString("__match_args__");
  PyObject* names = pop(fr);
  PyObject* type = top(fr);
  PyObject* subject = top(fr, 2);
  if (!PyType_Check(type)) stop(Break::Raises, "TypeError: called match pattern must be a type");
  if (!PyTuple_CheckExact(names)) stop(Break::Internal, "MATCH_CLASS without a tuple of names");
  const char* cls = reinterpret_cast<PyTypeObject*>(type)->tp_name;
  auto no_match = [&] {
    if (!py::kMatchPushesNone) {
      fr.stack.back() = Py_False;
      return;
    }
    pop(fr);
    fr.stack.back() = Py_None;
  };
  if (call(isinstance_fn, {subject, type}, nullptr) != Py_True) return no_match();
  std::vector<PyObject*> attrs;
  PyObject* seen = own(PySet_New(nullptr));
  // false: the subject lacks the attribute (no match)
  auto attribute = [&](PyObject* name) {
    int dup = PySet_Contains(seen, name);
    if (dup < 0 || PySet_Add(seen, name) < 0) python_error("a class pattern's attribute");
    if (dup) stop(Break::Raises, std::string("TypeError: ") + cls + "() got multiple sub-patterns for attribute " + py::text(own(PyObject_Repr(name))));
    PyObject* v = call(getattr_fn, {subject, name, missing()}, nullptr);
    if (v == missing()) return false;
    attrs.push_back(v);
    return true;
  };
  if (ins.arg > 0) {
    PyObject* match_args = call(getattr_fn, {type, match_args_name, missing()}, nullptr);
    bool match_self = false;
    if (match_args == missing()) {
      match_self = PyType_HasFeature(reinterpret_cast<PyTypeObject*>(type), py::match_self_flag());
      match_args = nullptr;
    } else if (!PyTuple_CheckExact(match_args)) {
      stop(Break::Raises, std::string("TypeError: ") + cls + ".__match_args__ must be a tuple (got " + Py_TYPE(match_args)->tp_name + ")");
    } else {
      match_args = materialize(match_args);  // its names, each guarded
    }
    Py_ssize_t allowed = match_self ? 1 : match_args ? PyTuple_GET_SIZE(match_args) : 0;
    if (allowed < ins.arg)
      stop(Break::Raises, std::string("TypeError: ") + cls + "() accepts " + std::to_string(allowed) + " positional sub-pattern" +
                              (allowed == 1 ? "" : "s") + " (" + std::to_string(ins.arg) + " given)");
    if (match_self) {
      attrs.push_back(subject);
    } else {
      for (int i = 0; i < ins.arg; ++i) {
        PyObject* name = PyTuple_GET_ITEM(match_args, i);
        if (!PyUnicode_CheckExact(name))
          stop(Break::Raises, std::string("TypeError: __match_args__ elements must be strings (got ") + Py_TYPE(name)->tp_name + ")");
        if (!attribute(name)) return no_match();
      }
    }
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i)
    if (!attribute(PyTuple_GET_ITEM(names, i))) return no_match();
  PyObject* t = own(PyTuple_New(static_cast<Py_ssize_t>(attrs.size())));
  for (size_t i = 0; i < attrs.size(); ++i) {
    Py_INCREF(attrs[i]);
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), attrs[i]);
  }
  if (py::kMatchPushesNone) {
    pop(fr);
    fr.stack.back() = t;
    return;
  }
  fr.stack[fr.stack.size() - 2] = t;
  fr.stack.back() = Py_True;
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
