#include "py/pyport.h"  // first (Python.h)

#include "py/py_common.h"

#include <algorithm>
#include <new>
#include <cstring>
#include <unordered_set>

#include "common/stack.h"
#include "py/code_keyed.h"

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
    case ErrorKind::Memory: type = PyExc_MemoryError; break;
    case ErrorKind::Recursion: type = PyExc_RecursionError; break;
  }
  PyErr_SetString(type, e.what());
}

PyObject* fail(PyObject* type, const std::string& msg) {
  Ref value(PyUnicode_DecodeUTF8(msg.data(), static_cast<Py_ssize_t>(msg.size()), "backslashreplace"));
  if (!value) return nullptr;  // (MemoryError)
  PyErr_SetObject(type, value.get());
  return nullptr;
}

namespace {

// errors: "backslashreplace" (text) or "surrogatepass" (name_key), both built into CPython's UTF-8
// encoder, so no user code runs.
std::string str_bytes(PyObject* o, const char* errors) {
  if (!o) return "<non-str NULL>";
  if (!PyUnicode_Check(o)) return std::string("<non-str ") + Py_TYPE(o)->tp_name + ">";
  if (PyUnicode_IS_READY(o) && PyUnicode_IS_ASCII(o))  // the common case: no call that can fail
    return std::string(static_cast<const char*>(PyUnicode_DATA(o)), static_cast<size_t>(PyUnicode_GET_LENGTH(o)));
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  std::string out;
  Py_ssize_t n = 0;
  if (const char* s = PyUnicode_AsUTF8AndSize(o, &n)) {
    out.assign(s, static_cast<size_t>(n));
  } else {
    PyErr_Clear();
    Ref b(PyUnicode_AsEncodedString(o, "utf-8", errors));
    if (b && PyBytes_Check(b.get()))
      out.assign(PyBytes_AS_STRING(b.get()), static_cast<size_t>(PyBytes_GET_SIZE(b.get())));
    else
      out = "<unencodable str>";  // (out of memory)
    PyErr_Clear();
  }
  PyErr_Restore(t, v, tb);
  return out;
}

}  // namespace

std::string text(PyObject* o) { return str_bytes(o, "backslashreplace"); }

namespace {
// (held weakly: a code object made later at a dead one's address, a recursive call's rewritten
// code say, must not pass for a continuation and lose its traceback entries)
CodeKeyed<bool>& continuation_codes() {
  static auto* codes = new CodeKeyed<bool>;  // (never destroyed: outlives finalization)
  return *codes;
}
}  // namespace

void note_continuation_code(PyObject* code) {
  if (!code || !PyCode_Check(code)) return;
  auto* c = reinterpret_cast<PyCodeObject*>(code);
  if (!continuation_codes().find(c)) continuation_codes().put(c, true);
}
bool is_continuation_code(PyCodeObject* code) { return continuation_codes().find(code) != nullptr; }

PyObject** dict_slot(PyObject* o) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  return pj_obj311_dict_slot(o);
#else
  return _PyObject_GetDictPtr(o);  // (before 3.11 nothing is made)
#endif
}

PyObject* existing_dict(PyObject* o) {
  PyObject** slot = dict_slot(o);
  return slot && *slot ? *slot : nullptr;
}

bool has_own_attrs_now(PyObject* o) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  if (pj_obj311_inline_count(o) >= 0) return true;
#endif
  return existing_dict(o) != nullptr;
}

bool holds_own_attrs(PyObject* o) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  return pj_obj311_dict_slot(o) != nullptr;
#else
  return _PyObject_GetDictPtr(o) != nullptr;
#endif
}

PyObject* own_attr(PyObject* o, PyObject* name) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  int inline_values = 0;
  PyObject* v = pj_obj311_inline_lookup(o, name, &inline_values);
  if (inline_values) return v;
#endif
  PyObject* d = existing_dict(o);
  return d ? PyDict_GetItem(d, name) : nullptr;  // (an error pending before is left as it was)
}

std::vector<std::pair<PyObject*, PyObject*>> own_attrs(PyObject* o) {
  std::vector<std::pair<PyObject*, PyObject*>> out;
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  const Py_ssize_t n = pj_obj311_inline_count(o);
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject *key, *value;
    pj_obj311_inline_item(o, k, &key, &value);
    if (value) out.emplace_back(key, value);
  }
  if (n >= 0) return out;
#endif
  if (PyObject* d = existing_dict(o)) {
    out.reserve(static_cast<size_t>(PyDict_GET_SIZE(d)));
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(d, &pos, &k, &v)) out.emplace_back(k, v);
  }
  return out;
}

std::string unbound_local_message(PyObject* name) {
  Ref m(PyUnicode_FromFormat(kUnboundCellMessage, name));
  if (!m) {
    PyErr_Clear();
    return "local variable '" + text(name) + "' is unbound";
  }
  return text(m.get());
}

bool text_starts_with(PyObject* o, const std::string& prefix) {
  if (o && PyUnicode_Check(o) && PyUnicode_IS_READY(o) && PyUnicode_IS_ASCII(o)) {
    const size_t n = static_cast<size_t>(PyUnicode_GET_LENGTH(o));
    return n >= prefix.size() && std::memcmp(PyUnicode_DATA(o), prefix.data(), prefix.size()) == 0;
  }
  return text(o).compare(0, prefix.size(), prefix) == 0;
}
std::string name_key(PyObject* o) { return str_bytes(o, "surrogatepass"); }

bool stack_room_for_levels(PyThreadState* ts, size_t extra) { return stack_room_for_levels(ts, extra, stack_now()); }

bool stack_room_for_levels(PyThreadState* ts, size_t extra, StackNow now) {
  const int levels = Py_GetRecursionLimit() - recursion_depth(ts);
  const size_t plain = levels > 0 ? static_cast<size_t>(levels) * kPlainLevelStack : 0;
  return now.room >= std::min(plain, now.size / 4 * 3) + extra;
}

PyObject* raise_stack_exhausted() {
  PyErr_SetString(PyExc_RecursionError,
                  "maximum recursion depth exceeded (the C stack is nearly exhausted: less than 256 KiB left)");
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
  PyErr_Format(PyExc_UnboundLocalError, kUnboundCellMessage, name);
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

PyObject* rebuild_object(PyObject*, PyObject* args) {
  const Py_ssize_t n = PyTuple_GET_SIZE(args);
  PyObject* cls = n >= 2 ? PyTuple_GET_ITEM(args, 0) : nullptr;
  PyObject* names = n >= 2 ? PyTuple_GET_ITEM(args, 1) : nullptr;
  if (!cls || !PyType_Check(cls) || !PyTuple_Check(names) || PyTuple_GET_SIZE(names) != n - 2)
    return fail(PyExc_TypeError, "rebuild_object(cls, names, *values)");
  auto* tp = reinterpret_cast<PyTypeObject*>(cls);
  Ref empty(PyTuple_New(0));
  Ref obj(PyBaseObject_Type.tp_new(tp, empty.get(), nullptr));
  if (!obj.get()) return nullptr;
  for (Py_ssize_t i = 0; i < n - 2; ++i) {
    PyObject* name = PyTuple_GET_ITEM(names, i);
    PyObject* value = PyTuple_GET_ITEM(args, i + 2);
    PyObject* descr = _PyType_Lookup(tp, name);
    if (descr && Py_TYPE(descr) == &PyMemberDescr_Type) {
      if (Py_TYPE(descr)->tp_descr_set(descr, obj.get(), value) < 0) return nullptr;
      continue;
    }
    Ref dict(PyObject_GenericGetDict(obj.get(), nullptr));
    if (!dict.get() || PyDict_SetItem(dict.get(), name, value) < 0) return nullptr;
  }
  return obj.release();
}

// raise_again(e): e raised as it is, its traceback and chaining untouched (the caller's frame then
// adds its own traceback entry, as a raise there would).
PyObject* raise_again(PyObject*, PyObject* e) {
  if (!PyExceptionInstance_Check(e)) return fail(PyExc_SystemError, "pijit: raise_again(exception) is pijit's");
  PyObject* tb = PyException_GetTraceback(e);  // (new reference, or NULL)
  Py_INCREF(Py_TYPE(e));
  Py_INCREF(e);
  PyErr_Restore(reinterpret_cast<PyObject*>(Py_TYPE(e)), e, tb);
  return nullptr;
}

PyMethodDef kCellLoad = {"cell_load", cell_load, METH_VARARGS, "a cell variable's value, or UnboundLocalError"};
PyMethodDef kRaiseAgain = {"raise_again", raise_again, METH_O, "raises an exception as it is (resume functions)"};
PyMethodDef kCellDelete = {"cell_delete", cell_delete, METH_VARARGS, "empties a cell, or UnboundLocalError"};
PyMethodDef kRebuildObject = {"rebuild_object", rebuild_object, METH_VARARGS,
                              "an instance of a user class as captured code left it"};

}  // namespace

bool odict_layout_known() {
  // Keys 'a', 'b', 'c', then move_to_end('a'): the nodes must hold b, c, a, linked both ways, and
  // the state counter must have moved.
  static const bool known = [] {
    if (PY_VERSION_HEX >= 0x030E0000) return false;  // (a layout not read yet: not assumed)
    Ref od(PyObject_CallObject(reinterpret_cast<PyObject*>(&PyODict_Type), nullptr));
    Ref keys[3] = {Ref(PyUnicode_FromString("a")), Ref(PyUnicode_FromString("b")), Ref(PyUnicode_FromString("c"))};
    bool ok = od.get() != nullptr && PyODict_Check(od.get());
    for (Ref& k : keys) ok = ok && k.get() && PyODict_SetItem(od.get(), k.get(), Py_None) == 0;
    const size_t state = ok ? odict_state(od.get()) : 0;
    Ref moved(ok ? PyObject_CallMethod(od.get(), "move_to_end", "O", keys[0].get()) : nullptr);
    ok = ok && moved.get() && odict_state(od.get()) != state;
    if (ok) {
      const OdictNode* n = odict_first(od.get());
      const int order[3] = {1, 2, 0};
      const OdictNode* prev = nullptr;
      for (int i = 0; i < 3 && ok; ++i) {
        ok = n && n->key == keys[order[i]].get() && n->prev == prev;
        prev = n;
        n = ok ? n->next : nullptr;
      }
      ok = ok && !n && reinterpret_cast<OdictLayout*>(od.get())->last == prev;
    }
    if (PyErr_Occurred()) PyErr_Clear();
    return ok;
  }();
  return known;
}

PyObject* odict_keys_iter(PyObject* od) {
  if (Py_TYPE(od)->tp_iter != PyODict_Type.tp_iter)
    return fail(PyExc_TypeError, std::string("the order of a ") + Py_TYPE(od)->tp_name + " is its own __iter__'s");
  return PyObject_GetIter(od);
}

PyObject* module_attr(const char* module, const char* name) {
  Ref m(PyImport_ImportModule(module));
  PyObject* a = m.get() ? PyObject_GetAttrString(m.get(), name) : nullptr;
  if (!a) PyErr_Clear();
  return a;
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

#if PJ_PY_CAPTURE_BUILT
thread_local std::unordered_set<PyObject*>* t_ran_globals = nullptr;
#endif

PyObject* raise_again_function() {
  static PyObject* f = PyCFunction_New(&kRaiseAgain, nullptr);
  return f;
}

PyObject* object_rebuild_function() {
  static PyObject* f = PyCFunction_New(&kRebuildObject, nullptr);
  return f;
}

PyObject* cell_delete_function() {
  static PyObject* f = PyCFunction_New(&kCellDelete, nullptr);
  return f;
}

namespace {
struct FrameVisitState {
  PyCodeObject* code;
  const FrameVisit* visit;
  bool done;
};
thread_local FrameVisitState* t_visit = nullptr;

PyObject* visiting_hook(PyThreadState* ts, Frame* f, int throw_flag) {
#if PJ_PY_CAPTURE_BUILT
  note_frame_ran(f);  // (a capture the visit runs: _capture_probe)
#endif
  FrameVisitState* v = t_visit;
  if (!v || v->done || throw_flag || frame_code(f) != v->code) return eval_frame_default(ts, f, throw_flag);
  v->done = true;
  try {  // (no C++ exception crosses CPython's frames)
    return (*v->visit)(ts, f, throw_flag);
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_RuntimeError, "pijit test hook: %s", e.what());
    return nullptr;
  }
}
}  // namespace

PyObject* call_visiting_frame(const char* hook, PyObject* fn, PyObject* args, PyObject* kwargs, PyCodeObject* code,
                              const FrameVisit& visit) {
  const EvalFrameFn previous = get_eval_frame();  // (pijit's own in stress mode: back after)
  FrameVisitState mine{code, &visit, false};
  FrameVisitState* outer = t_visit;
  t_visit = &mine;
  if (!set_eval_frame(visiting_hook)) {
    t_visit = outer;
    return fail(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  }
  PyObject* r = PyObject_Call(fn, args, kwargs);
  if (get_eval_frame() == visiting_hook) set_eval_frame(previous);
  t_visit = outer;
  if (r && !mine.done) {
    Py_DECREF(r);
    return fail(PyExc_RuntimeError, std::string(hook) + ": the hook never saw the function's frame");
  }
  return r;
}

}  // namespace pj::py
