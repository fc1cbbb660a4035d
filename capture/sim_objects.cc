// User classes in captured code. `Point(x, y)` makes a scratch instance of Point itself with
// object.__new__ (no user code runs there) and simulates Point.__init__ on it; the instance lives
// in the simulation only. Its attributes are read and written with Python's generic lookup over
// its own __dict__ and slots and the class, whose version is guarded where the class was read
// (any later change to it or a base recompiles). Where it escapes (returned, stored into the
// frame's objects, live at a graph break, handed to a replayed call) the rewritten code rebuilds
// it: object.__new__ again and the same attribute values, which is what __init__ left; __init__'s
// other effects are simulated and replayed on their own. Classes whose instances would run user
// code the simulation cannot see (a metaclass __call__, __new__, __setattr__, __getattribute__,
// __del__, a C base) refuse with the reason.
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_BUILT

#include <structmember.h>

#include "capture/jit_api.h"
#include "capture/sim_state.h"
#include "py/py_common.h"

namespace pj::capture {

using guards::Access;
using guards::CheckKind;

namespace {
PyObject* interned(const char* s) { return PyUnicode_InternFromString(s); }
PyObject* object_slot(const char* name) { return _PyType_Lookup(&PyBaseObject_Type, interned(name)); }
}  // namespace

std::string Simulator::unmodelled_class(PyTypeObject* t) {
  static PyObject* call_name = interned("__call__");
  static PyObject* ga_name = interned("__getattribute__");
  static PyObject* del_name = interned("__del__");
  static PyObject* init_name = interned("__init__");
  PyTypeObject* meta = Py_TYPE(t);
  if (meta != &PyType_Type && _PyType_Lookup(meta, call_name) != _PyType_Lookup(&PyType_Type, call_name))
    return std::string("its metaclass ") + meta->tp_name + " defines __call__";
  for (Py_ssize_t i = 0; t->tp_mro && i < PyTuple_GET_SIZE(t->tp_mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(t->tp_mro, i));
    if (base == &PyBaseObject_Type) continue;
    if (!(base->tp_flags & Py_TPFLAGS_HEAPTYPE)) return std::string("its base class ") + base->tp_name + " is written in C";
    if (is_library_type(base)) return std::string("its base class ") + base->tp_name + " is pijit's";
  }
  if (t->tp_new != PyBaseObject_Type.tp_new) return "it defines __new__";
  if (t->tp_setattro != PyObject_GenericSetAttr) return "it defines __setattr__ or __delattr__";
  if (_PyType_Lookup(t, ga_name) != object_slot("__getattribute__")) return "it defines __getattribute__";
  if (_PyType_Lookup(t, del_name)) return "it defines __del__ (capture's scratch instance would run it)";
  PyObject* init = _PyType_Lookup(t, init_name);
  if (init != object_slot("__init__") && !(PyFunction_Check(init) && !is_library_code(init)))
    return std::string("its __init__ is a ") + Py_TYPE(init)->tp_name;
  return "";
}

PyObject* Simulator::construct(PyTypeObject* t, const std::vector<PyObject*>& args, PyObject* kwnames) {
  static PyObject* init_name = interned("__init__");
  PyObject* cls = reinterpret_cast<PyObject*>(t);
  const int node = node_of(cls);
  if (node < 0) stop(Break::UnsupportedCall, std::string("constructs a ") + t->tp_name + " reached without a guardable path");
  std::string why = unmodelled_class(t);
  if (!why.empty()) stop(Break::UnsupportedCall, std::string("constructs a ") + t->tp_name + " object: " + why);
  guard_class(node, t, init_name, /*is_class=*/true);
  PyObject* empty = own(PyTuple_New(0));
  PyObject* obj = PyBaseObject_Type.tp_new(t, empty, nullptr);  // an abstract class raises as Python does
  if (!obj) python_error("object.__new__");
  own(obj);
  values_.created_object(obj, node);
  PyObject* init = _PyType_Lookup(t, init_name);
  if (init == object_slot("__init__")) {
    if (!args.empty()) stop(Break::Raises, std::string("TypeError: ") + t->tp_name + "() takes no arguments");
    return obj;
  }
  PyObject* r = inline_call(init, obj, args, kwnames);
  if (r != Py_None)
    stop(Break::Raises, std::string("TypeError: __init__() should return None, not '") + Py_TYPE(r)->tp_name + "'");
  return obj;
}

PyObject* Simulator::object_init() {
  static PyObject* init = object_slot("__init__");
  return init;
}

int Simulator::class_node(PyObject* obj) {
  const Value* r = values_.find(obj);
  return r && r->kind == Kind::Object ? r->class_node : node_of(obj);
}

// obj.name on a made object: data descriptors of the class, then the instance's own attributes,
// then the class's (functions bound to obj), as object.__getattribute__ looks.
PyObject* Simulator::object_attr(PyObject* v, PyObject* name) {
  PyTypeObject* tp = Py_TYPE(v);
  const std::string name_text = py::text(name);
  const char* cname = name_text.c_str();
  const int cnode = values_.at(v).class_node;
  guard_class(cnode, tp, name, /*is_class=*/true);
  if (std::strcmp(cname, "__class__") == 0) return reinterpret_cast<PyObject*>(tp);
  PyObject* descr = _PyType_Lookup(tp, name);
  if (descr && Py_TYPE(descr)->tp_descr_set) {
    if (PyObject_TypeCheck(descr, &PyProperty_Type)) {
      PyObject* fget = own(PyObject_GetAttrString(descr, "fget"));
      if (fget == Py_None) stop(Break::Raises, std::string("AttributeError: unreadable attribute '") + cname + "'");
      if (PyFunction_Check(fget) && !is_library_code(fget)) return inline_call(fget, v, {}, nullptr);
    }
    if (Py_TYPE(descr) == &PyMemberDescr_Type) {  // a slot
      PyObject* r = PyObject_GenericGetAttr(v, name);
      if (!r) python_error((std::string("reading .") + cname).c_str());
      return own(r);
    }
    if (PyObject* r = user_descriptor_get(descr, v)) return r;
    stop(Break::UnsupportedAttribute, std::string(".") + cname + " is a " + Py_TYPE(descr)->tp_name + " on a " +
                                          tp->tp_name + " made during capture");
  }
  if (PyObject* own_attr = py::own_attr(v, name)) {
    Py_INCREF(own_attr);  // a later store may replace it while the simulation still holds it
    return own(own_attr);
  }
  if (descr) {
    if (PyFunction_Check(descr) || jit_target(descr)) return own(PyMethod_New(descr, v));
    if (Py_TYPE(descr) == &PyStaticMethod_Type || Py_TYPE(descr) == &PyClassMethod_Type || !Py_TYPE(descr)->tp_descr_get)
      return class_attr(reinterpret_cast<PyObject*>(tp), name);  // the same through the class
    if (PyObject* r = user_descriptor_get(descr, v)) return r;
    stop(Break::UnsupportedAttribute, std::string(".") + cname + " is a " + Py_TYPE(descr)->tp_name + " on a " +
                                          tp->tp_name + " made during capture");
  }
  static PyObject* getattr_name = interned("__getattr__");
  if (_PyType_Lookup(tp, getattr_name)) stop(Break::UnsupportedAttribute, std::string(tp->tp_name) + " defines __getattr__");
  stop(Break::Raises, std::string("AttributeError: '") + tp->tp_name + "' object has no attribute '" + cname + "'");
}

// obj.name = value (value nullptr: del obj.name) on a made object: set on the scratch instance
// itself, or the property's setter simulated.
void Simulator::object_store(PyObject* owner, PyObject* name, PyObject* value, const std::string& what) {
  PyTypeObject* tp = Py_TYPE(owner);
  const std::string name_text = py::text(name);
  const char* cname = name_text.c_str();
  if (escaped_.count(owner))
    stop(Break::SideEffect, what + " after a replayed write or output call was given it (that rebuilds it as it was)");
  guard_class(values_.at(owner).class_node, tp, name, /*is_class=*/true);
  if (std::strcmp(cname, "__class__") == 0 || std::strcmp(cname, "__dict__") == 0)
    stop(Break::UnsupportedAttribute, what + " (capture keeps an object's class and dict as made)");
  PyObject* descr = _PyType_Lookup(tp, name);
  if (descr && Py_TYPE(descr)->tp_descr_set) {
    if (PyObject_TypeCheck(descr, &PyProperty_Type)) {
      PyObject* f = own(PyObject_GetAttrString(descr, value ? "fset" : "fdel"));
      if (f == Py_None)
        stop(Break::Raises, std::string("AttributeError: can't ") + (value ? "set" : "delete") + " attribute");
      if (!PyFunction_Check(f) || is_library_code(f))
        stop(Break::UnsupportedAttribute, what + " through a property whose setter is a " + Py_TYPE(f)->tp_name);
      if (value) inline_call(f, owner, {value}, nullptr);
      else inline_call(f, owner, {}, nullptr);
      return;
    }
    if (Py_TYPE(descr) != &PyMemberDescr_Type)
      stop(Break::UnsupportedAttribute, what + " through a " + Py_TYPE(descr)->tp_name + " descriptor");
  }
  mutated_.push_back(owner);  // a graph break must not redo it (can_break)
  if (PyObject_GenericSetAttr(owner, name, value) < 0) python_error(what.c_str());
}

std::vector<std::pair<PyObject*, PyObject*>> Simulator::object_state(PyObject* v) {
  std::vector<std::pair<PyObject*, PyObject*>> state = py::own_attrs(v);
  // Slots: the member descriptors the class and its bases declared (T_OBJECT_EX), those set.
  PyObject* mro = Py_TYPE(v)->tp_mro;
  for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (base == &PyBaseObject_Type || !base->tp_dict) continue;
    Py_ssize_t pos = 0;
    PyObject *k, *d;
    while (PyDict_Next(base->tp_dict, &pos, &k, &d)) {
      if (Py_TYPE(d) != &PyMemberDescr_Type) continue;
      PyMemberDef* m = reinterpret_cast<PyMemberDescrObject*>(d)->d_member;
      if (m->type != T_OBJECT_EX) continue;
      PyObject* item = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(v) + m->offset);
      if (item) state.emplace_back(k, item);
    }
  }
  return state;
}

// os.environ, an os._Environ over a dict of encoded bytes (its _data): reading one variable is a
// guard on that entry of the dict (its value, or that it is absent), which runs no Python code.
bool Simulator::is_environ(PyObject* v) {
  static PyObject* environ = py::module_attr("os", "environ");
  return environ && v == environ;
}

PyObject* Simulator::environ_lookup(PyObject* env, PyObject* key) {
  static PyObject* data_name = interned("_data");
  const int node = node_of(env);
  if (node < 0) stop(Break::UnsupportedCall, "os.environ reached without a guardable path");
  if (!PyUnicode_CheckExact(key)) stop(Break::UnsupportedCall, std::string("os.environ[...] of a ") + Py_TYPE(key)->tp_name);
  guard_class(node, Py_TYPE(env), data_name);  // _Environ stays os's
  PyObject* data = py::own_attr(env, data_name);
  if (!data || !PyDict_CheckExact(data)) stop(Break::UnsupportedCall, "os.environ without its _data dict");
  const int dnode = tree_.child(node, Access::DictAttr, data_name);
  wrap(data, dnode);  // its type
  PyObject* bkey = own(PyUnicode_EncodeFSDefault(key));  // os's encodekey: fs encoding, surrogateescape
  const int inode = tree_.child(dnode, Access::Item, bkey);
  PyObject* raw = PyDict_GetItem(data, bkey);
  if (!raw) {
    tree_.add_check(inode, {CheckKind::Absent, nullptr, 0, {}});
    return nullptr;
  }
  PyObject* value = wrap(raw, inode);  // bytes: its value guarded
  if (!PyBytes_CheckExact(value)) stop(Break::UnsupportedCall, "os.environ holding something other than bytes");
  return own(PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value)));
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
