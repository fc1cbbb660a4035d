// The simulator's value model: where values come from (guard nodes), what runs for real, attribute
// lookup as Python does it (restricted to what guards can protect), and calls (inline user code,
// trace library code, fold pure builtins).
#include "py/pyport.h"  // first (Python.h)


#include <algorithm>
#include <csignal>
#include <cmath>
#include <cstring>

#include "capture/jit_api.h"
#include "capture/sim_state.h"
#include "py/py_common.h"
#include "graph/tape.h"
#include "pyext/op_entry.h"
#include "pyext/tape_object.h"
#include "pyext/tensor_object.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {
namespace {

using guards::Access;
using guards::Check;
using guards::CheckKind;

PyObject g_null_slot_object = {_PyObject_EXTRA_INIT 1, &PyBaseObject_Type};
PyObject g_call_slot_object = {_PyObject_EXTRA_INIT 1, &PyBaseObject_Type};

// pijit.nn.cell's Cell, Cell.__call__ and Cell.__getattr__ (looked up once).
struct CellTypes {
  PyObject* cell = nullptr;
  PyObject* call = nullptr;
  PyObject* getattr = nullptr;
  PyObject* containers = nullptr;  // (SequentialCell, CellList, CellDict)
};
const CellTypes& cell_types() {
  static CellTypes t = [] {
    CellTypes c;
    PyObject* mod = PyImport_ImportModule("pijit.nn.cell");
    PyObject* cont = PyImport_ImportModule("pijit.nn.container");
    if (mod && cont) {
      c.cell = PyObject_GetAttrString(mod, "Cell");
      c.call = c.cell ? PyObject_GetAttrString(c.cell, "__call__") : nullptr;
      c.getattr = c.cell ? PyObject_GetAttrString(c.cell, "__getattr__") : nullptr;
      c.containers = Py_BuildValue("(NNN)", PyObject_GetAttrString(cont, "SequentialCell"),
                                   PyObject_GetAttrString(cont, "CellList"), PyObject_GetAttrString(cont, "CellDict"));
    }
    Py_XDECREF(mod);
    Py_XDECREF(cont);
    PyErr_Clear();
    return c;
  }();
  return t;
}

// isinstance by the object's real type: PyObject_IsInstance would read v.__class__ through a
// user __getattribute__, running user code at capture.
bool type_is(PyObject* v, PyObject* cls) {
  if (PyTuple_Check(cls)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cls); ++i)
      if (type_is(v, PyTuple_GET_ITEM(cls, i))) return true;
    return false;
  }
  return PyType_Check(cls) && PyType_IsSubtype(Py_TYPE(v), reinterpret_cast<PyTypeObject*>(cls));
}

}  // namespace

bool is_cell(PyObject* v) {
  const CellTypes& c = cell_types();
  return c.cell && type_is(v, c.cell);
}

bool name_in(const char* const* names, const char* name) {
  for (const char* const* p = names; *p; ++p)
    if (std::strcmp(*p, name) == 0) return true;
  return false;
}

namespace {

// Read-only methods of input containers (anything else would mutate the caller's object).
bool readonly_method(const char* name) {
  static const char* const ok[] = {"index", "count", "copy", "keys", "values", "items", "get", "__len__",
                                   "__getitem__", "__contains__", "isdisjoint", "issubset", "issuperset",
                                   "union", "intersection", "difference", "symmetric_difference", nullptr};
  return name_in(ok, name);
}

// Builtins that only compute on their (materialized) arguments.
bool pure_builtin(const char* name) {
  static const char* const ok[] = {"len", "abs", "min", "max", "sum", "round", "any", "all", "sorted", "divmod",
                                   "pow", "repr", "format", "callable", "chr", "ord", "isinstance", "issubclass",
                                   "hash", nullptr};
  return name_in(ok, name);
}

bool pure_type(PyObject* t) {
  return t == (PyObject*)&PyTuple_Type || t == (PyObject*)&PyList_Type || t == (PyObject*)&PyDict_Type ||
         t == (PyObject*)&PySet_Type || t == (PyObject*)&PyFrozenSet_Type || t == (PyObject*)&PyLong_Type ||
         t == (PyObject*)&PyFloat_Type || t == (PyObject*)&PyBool_Type || t == (PyObject*)&PyUnicode_Type ||
         t == (PyObject*)&PyRange_Type || t == (PyObject*)&PyEnum_Type || t == (PyObject*)&PyReversed_Type ||
         t == (PyObject*)&PySlice_Type || t == (PyObject*)&PyComplex_Type ||
         std::strcmp(reinterpret_cast<PyTypeObject*>(t)->tp_name, "zip") == 0;
}


}  // namespace

// Leaves a pending exception as it found it: it names the callable whose call just failed.
std::string describe_callable(PyObject* c) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyObject* name = PyObject_GetAttrString(c, "__qualname__");
  std::string s = std::string("a ") + Py_TYPE(c)->tp_name + " object";
  if (name && PyUnicode_Check(name)) s = py::text(name) + "()";
  Py_XDECREF(name);
  PyErr_Clear();
  PyErr_Restore(t, v, tb);
  return s;
}

PyObject* null_slot() { return &g_null_slot_object; }
PyObject* call_slot() { return &g_call_slot_object; }

PyObject* Simulator::own(PyObject* new_ref) {
  if (!new_ref) python_error("an internal step");
  keep_.push_back(new_ref);
  return new_ref;
}

void Simulator::stop(Break b, std::string detail) {
  if (!frames_.empty()) {  // inside a loop of the root frame: the runtime may run its body as a function
    const SimFrame& root = *frames_.front();
    size_t pc = root.pc > 0 ? root.pc - 1 : 0;
    if (root.in_loop && pc < root.in_loop->size() && (*root.in_loop)[pc]) loop_offset_ = (*root.ins)[pc].offset;
  }
  throw StopCapture{b, std::move(detail), current_line(), current_code(), stopped_callee(), inline_chain()};
}

// An exception no code capture runs would raise: not an Exception at all (KeyboardInterrupt,
// SystemExit), or a class from outside pijit and the builtins. Capture runs only pijit's library
// code and side-effect-free builtins, so such an exception came from a signal handler.
static bool from_outside_capture(PyObject* t) {
  if (PyErr_GivenExceptionMatches(t, py::g_capture_break)) return false;  // a BaseException by design
  if (!PyErr_GivenExceptionMatches(t, PyExc_Exception)) return true;
  PyTypeObject* tp = reinterpret_cast<PyTypeObject*>(t);
  if (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE)) return false;
  PyObject* mod = tp->tp_dict ? PyDict_GetItemString(tp->tp_dict, "__module__") : nullptr;
  return !(mod && PyUnicode_Check(mod)) || py::text(mod).compare(0, 5, "pijit") != 0;
}

// Whether the pending exception's traceback passes through a Python signal handler installed
// now: the interpreter runs handlers between any two instructions of the library code capture
// runs, and what one raises (a SIGALRM timeout's TimeoutError) is the caller's, as in plain Python.
static bool raised_by_signal_handler() {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  bool found = false;
  static PyObject* signal_name = PyUnicode_InternFromString("_signal");
  static PyObject* call_name = PyUnicode_InternFromString("__call__");
  PyObject* mod = tb && PyTraceBack_Check(tb) ? PyImport_GetModule(signal_name) : nullptr;
  PyObject* getsignal = mod ? PyObject_GetAttrString(mod, "getsignal") : nullptr;
  if (getsignal) {
    std::vector<PyObject*> handlers;  // their code objects
    for (int sig = 1; sig < NSIG; ++sig) {
      PyObject* h = PyObject_CallFunction(getsignal, "i", sig);
      if (!h) {
        PyErr_Clear();
        continue;
      }
      PyObject* fn = PyMethod_Check(h) ? PyMethod_GET_FUNCTION(h) : h;
      if (!PyFunction_Check(fn) && !PyType_Check(fn)) fn = _PyType_Lookup(Py_TYPE(fn), call_name);
      if (fn && PyFunction_Check(fn)) handlers.push_back(PyFunction_GET_CODE(fn));
      Py_DECREF(h);  // (the signal module keeps the handler, and so its code, alive)
    }
    for (PyObject* at = tb; at && !found; at = reinterpret_cast<PyObject*>(reinterpret_cast<PyTracebackObject*>(at)->tb_next)) {
      PyObject* co = reinterpret_cast<PyObject*>(py::frame_object_code(reinterpret_cast<PyTracebackObject*>(at)->tb_frame));
      found = std::find(handlers.begin(), handlers.end(), co) != handlers.end();
    }
  }
  Py_XDECREF(getsignal);
  Py_XDECREF(mod);
  PyErr_Clear();
  PyErr_Restore(t, v, tb);
  return found;
}

void Simulator::python_error(const char* during) {
  rethrow_pending_stop();
  if (PyErr_Occurred() && (from_outside_capture(PyErr_Occurred()) || raised_by_signal_handler())) {
    r_.interrupted = true;  // stays pending for capture_frame to hand on
    stop(Break::Interrupted, std::string("during ") + during);
  }
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  std::string msg;
  if (v) {
    PyObject* s = PyObject_Str(v);
    if (s && PyUnicode_Check(s)) msg = py::text(s);
    Py_XDECREF(s);
  }
  PyErr_Clear();
  bool is_break = t && t == py::g_capture_break;
  std::string type = t ? reinterpret_cast<PyTypeObject*>(t)->tp_name : "error";
  Py_XDECREF(t);
  Py_XDECREF(v);
  Py_XDECREF(tb);
  if (!is_break) stop(Break::Raises, type + ": " + msg + " (in " + during + ")");
  auto starts = [&](const char* p) { return msg.rfind(p, 0) == 0; };
  std::string rest = msg.substr(msg.find(':') == std::string::npos ? 0 : msg.find(':') + 2);
  if (starts("data_dependent_shape")) stop(Break::DataDependentShape, rest);
  if (starts("inplace_update")) stop(Break::InplaceUpdate, rest);
  if (msg.find("bool()") != std::string::npos) stop(Break::BranchOnTensor, rest);
  stop(Break::DataDependent, rest);
}

int Simulator::node_of(PyObject* v) const { return values_.node(v); }

// The mutation overlay's entry. An object the simulation made is mutated freely; a write to one
// that existed before the frame started (or to capture's stand-in for one) is recorded as pending
// on its record, in program order. Until pending writes are replayed after the graph (the region
// plan of issue 11), a pending write refuses capture, naming the write: no read can see a stale
// value and no write is lost.
void Simulator::write(PyObject* target, Write kind, std::string what, bool preexisting) {
  bool always = kind == Write::Attr || kind == Write::DeleteAttr || kind == Write::Global;  // not simulated
  if (escaped_.count(target))
    stop(Break::SideEffect, what + " after a replayed write or output call was given it (that rebuilds it as it was)");
  if (!always && !preexisting && !values_.preexisting(target)) {
    mutated_.push_back(target);  // the caller makes it: a graph break must not redo it (can_break)
    return;
  }
  values_.pend(target, {kind, what, current_line()});
  stop(Break::SideEffect, std::move(what));
}

bool Simulator::is_constant(PyObject* o) const {
  if (o == Py_None || o == Py_True || o == Py_False || o == Py_Ellipsis || o == Py_NotImplemented) return true;
  if (PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyUnicode_CheckExact(o) || PyBytes_CheckExact(o) ||
      PyComplex_CheckExact(o))
    return true;
  if (PyTuple_CheckExact(o)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
      if (!is_constant(PyTuple_GET_ITEM(o, i))) return false;
    return true;
  }
  return false;
}

bool Simulator::is_library_type(PyTypeObject* t) {
  auto it = library_types_.find(t);
  if (it != library_types_.end()) return it->second;
  // pijit's own classes (a user's Tensor subclass is user code). A type that was never readied
  // (functools.KeyWrapper) has no dict yet, and is not pijit's.
  bool lib = t == &py::TensorBaseType || t == py::tape_type() || t == py::op_entry_type();
  if (!lib) {
    PyObject* mod = t->tp_dict ? PyDict_GetItemString(t->tp_dict, "__module__") : nullptr;
    const std::string m = mod && PyUnicode_Check(mod) ? py::text(mod) : "";
    lib = m.compare(0, 6, "pijit.") == 0 || m == "pijit";
    const CellTypes& c = cell_types();
    if (lib && c.cell && PyType_IsSubtype(t, reinterpret_cast<PyTypeObject*>(c.cell))) lib = false;  // simulated
  }
  library_types_[t] = lib;
  return lib;
}

bool Simulator::is_library_code(PyObject* func) {
  if (!PyFunction_Check(func) || library_dir().empty()) return false;
  PyCodeObject* co = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(func));
  return py::text(co->co_filename).compare(0, library_dir().size(), library_dir()) == 0;  // both py::text
}

// C code run for real on these operands calls no dunder of a user class (an iterator is refused
// where it is consumed).
void Simulator::refuse_user_operands(const std::string& what, const std::vector<PyObject*>& args) {
  for (PyObject* a : args)
    if (!deep_trusted(a) && !is_iterator(a))
      stop(Break::UserObjectOperator, what + " of a " + Py_TYPE(a)->tp_name + ", which runs user code");
}

// What a builtin container's methods compare or hash runs no user code: a dict's or set's keys,
// a list's or tuple's items.
bool Simulator::compares_plainly(PyObject* container) {
  if (!PyDict_Check(container) && !PyAnySet_Check(container)) return deep_trusted(container);
  if (!trusted(container)) return false;
  PyObject* keys = own(PySequence_List(container));  // keys only (a dict iterates its keys)
  return keys && deep_trusted(keys);
}

// trusted(), and so is everything it holds (min/max/sorted/sum compare or add the items).
bool Simulator::deep_trusted(PyObject* v) {
  if (!trusted(v)) return false;
  if (nesting_ >= kMaxNesting) return false;  // deeper than any model's data, or self-referential
  Nesting nest(this);
  if (PyTuple_Check(v) || PyList_Check(v)) {
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i)
      if (!deep_trusted(PySequence_Fast_GET_ITEM(v, i))) return false;
  } else if (PyDict_Check(v)) {
    Py_ssize_t pos = 0;
    PyObject *k, *val;
    while (PyDict_Next(v, &pos, &k, &val))
      if (!deep_trusted(k) || !deep_trusted(val)) return false;
  } else if (PyAnySet_Check(v)) {
    Py_ssize_t pos = 0;
    PyObject* k;
    Py_hash_t h;
    while (_PySet_NextEntry(v, &pos, &k, &h))
      if (!deep_trusted(k)) return false;
  }
  return true;
}

// Builtin iterators and generators are usable only when capture made them itself. Advancing one the
// frame was given would consume the caller's object, and the rewritten code would never replay that.
bool Simulator::is_iterator(PyObject* v) {
  return PyGen_Check(v) || (!(Py_TYPE(v)->tp_flags & Py_TPFLAGS_HEAPTYPE) && Py_TYPE(v)->tp_iternext);
}

void Simulator::refuse_foreign_iterator(PyObject* v) {
  if (node_of(v) >= 0 && is_iterator(v))
    write(v, Write::Advance, std::string("consumes a ") + Py_TYPE(v)->tp_name + " the function did not create");
}

bool Simulator::trusted(PyObject* v) {
  if (v == null_slot() || v == call_slot()) return false;
  if (is_constant(v) || py::is_tensor(v)) return true;
  if (made_exception(v)) return true;  // plain classes, constant args
  PyTypeObject* t = Py_TYPE(v);
  if (is_iterator(v)) return node_of(v) < 0;
  // Container subclasses written in Python (class L(list)) may run user code and keep attributes no
  // guard sees: they are instances like any other. A namedtuple as namedtuple() made it is a tuple
  // (its class is guarded unmodified where it is read from the frame).
  bool builtin = !(t->tp_flags & Py_TPFLAGS_HEAPTYPE);
  if ((builtin && (PyTuple_Check(v) || PyList_Check(v) || PyDict_Check(v) || PyAnySet_Check(v))) || named_tuple(v) || PySlice_Check(v) ||
      PyRange_Check(v) || PyType_Check(v) || PyModule_Check(v) || PyCFunction_Check(v))
    return true;
  if (t == &PyDictKeys_Type || t == &PyDictValues_Type || t == &PyDictItems_Type) return true;
  if (t == &PyODictKeys_Type || t == &PyODictValues_Type || t == &PyODictItems_Type) return true;  // (the C OrderedDict's)
  return is_library_type(t);
}

bool Simulator::namedtuple_type(PyTypeObject* t) {
  auto it = namedtuple_types_.find(t);
  if (it != namedtuple_types_.end()) return it->second;
  bool ok = [&] {
    if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE) || t->tp_base != &PyTuple_Type || Py_TYPE(t) != &PyType_Type || !t->tp_dict)
      return false;
    // Every slot is tuple's unless the class dict names a dunder: what the dict holds says all.
    PyObject* fields = PyDict_GetItemString(t->tp_dict, "_fields");
    if (!fields || !PyTuple_CheckExact(fields)) return false;
    static const char* const kMade[] = {"__doc__",  "__slots__", "_fields",      "_field_defaults", "_fields_defaults",
                                        "__new__",  "_make",     "_replace",     "__repr__",        "_asdict",
                                        "__getnewargs__", "__module__", "__match_args__", nullptr};
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(t->tp_dict, &pos, &k, &v)) {
      if (!PyUnicode_Check(k)) return false;
      if (name_in(kMade, py::text(k).c_str())) continue;
      Py_ssize_t i = 0, n = PyTuple_GET_SIZE(fields);
      while (i < n && PyUnicode_Compare(PyTuple_GET_ITEM(fields, i), k) != 0) ++i;
      if (i == n || py::tuple_field_index(v) != i) return false;
    }
    // namedtuple's own methods (a user who replaced __repr__ in the dict has code of their own).
    static PyObject* nt_file = [] {
      PyObject* mod = PyImport_ImportModule("collections");
      PyObject* fn = mod ? PyObject_GetAttrString(mod, "namedtuple") : nullptr;
      PyObject* file = fn && PyFunction_Check(fn) ? reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(fn))->co_filename : nullptr;
      Py_XINCREF(file);
      Py_XDECREF(fn);
      Py_XDECREF(mod);
      PyErr_Clear();
      return file;
    }();
    if (!nt_file) return false;
    for (const char* m : {"__repr__", "_replace", "_asdict", "__getnewargs__"}) {
      PyObject* f = PyDict_GetItemString(t->tp_dict, m);
      if (!f || !PyFunction_Check(f) ||
          PyUnicode_Compare(reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(f))->co_filename, nt_file) != 0)
        return false;
    }
    // __new__ is generated by eval() in a namespace holding tuple.__new__ as _tuple_new.
    PyObject* nw = PyDict_GetItemString(t->tp_dict, "__new__");  // type() made it a staticmethod
    if (nw && Py_TYPE(nw) == &PyStaticMethod_Type) nw = own(PyObject_GetAttrString(nw, "__func__"));
    if (!nw || !PyFunction_Check(nw)) return false;
    PyObject* g = PyFunction_GET_GLOBALS(nw);
    PyObject* tn = g ? PyDict_GetItemString(g, "_tuple_new") : nullptr;
    static PyObject* tuple_new = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyTuple_Type), "__new__");
    PyObject* gname = g ? PyDict_GetItemString(g, "__name__") : nullptr;
    return tn && tuple_new && PyObject_RichCompareBool(tn, tuple_new, Py_EQ) == 1 && gname && PyUnicode_Check(gname) &&
           py::text(gname).compare(0, 11, "namedtuple_") == 0;
  }();
  if (PyErr_Occurred()) PyErr_Clear();
  namedtuple_types_[t] = ok;
  return ok;
}

PyObject* Simulator::new_tuple_of(PyTypeObject* t, const std::vector<PyObject*>& items) {
  PyObject* tup = own(PyTuple_New(static_cast<Py_ssize_t>(items.size())));
  for (size_t i = 0; i < items.size(); ++i) {
    Py_INCREF(items[i]);
    PyTuple_SET_ITEM(tup, static_cast<Py_ssize_t>(i), items[i]);
  }
  if (t == &PyTuple_Type) return tup;
  PyObject* args = own(PyTuple_Pack(1, tup));
  PyObject* r = PyTuple_Type.tp_new(t, args, nullptr);
  if (!r) python_error("building a namedtuple");
  return own(r);
}

// P(a, b), P(x=a, y=b) (base nullptr) and base._replace(y=b) for a namedtuple class t: the
// arguments bound to the fields as namedtuple's generated __new__ binds them, the new tuple made
// as it makes it (tuple.__new__), holding the simulation's values themselves (as BUILD_TUPLE does).
PyObject* Simulator::make_namedtuple(PyTypeObject* t, PyObject* base, const std::vector<PyObject*>& args, PyObject* kwnames) {
  PyObject* cls = reinterpret_cast<PyObject*>(t);
  PyObject* fields = PyDict_GetItemString(t->tp_dict, "_fields");
  const Py_ssize_t n = PyTuple_GET_SIZE(fields);
  const size_t nkw = kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(kwnames)) : 0;
  const size_t npos = args.size() - nkw;
  const std::string fn = base ? "_replace()" : "__new__()";
  std::vector<PyObject*> items(n, nullptr);
  if (base) {
    if (npos) stop(Break::Raises, "TypeError: _replace() takes 1 positional argument but " + std::to_string(npos + 1) + " were given");
    std::vector<PyObject*> old = unpacked(base);
    if (static_cast<Py_ssize_t>(old.size()) != n)  // namedtuple's _make raises for that
      stop(Break::Raises, "TypeError: Expected " + std::to_string(n) + " arguments, got " + std::to_string(old.size()));
    items = old;
  } else {
    // The class is what namedtuple() made, and stays so (its __new__ binds as simulated here).
    int node = node_of(cls);
    if (node < 0) stop(Break::UnsupportedCall, std::string("constructs a namedtuple ") + t->tp_name + " reached without a guardable path");
    guard_class(node, t, nullptr, /*is_class=*/true);
    if (npos > static_cast<size_t>(n))
      stop(Break::Raises, "TypeError: " + fn + " takes " + std::to_string(n + 1) + " positional arguments but " +
                              std::to_string(npos + 1) + " were given");
    for (size_t i = 0; i < npos; ++i) items[i] = args[i];
  }
  for (size_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    Py_ssize_t i = 0;
    while (i < n && PyUnicode_Compare(PyTuple_GET_ITEM(fields, i), key) != 0) ++i;
    if (i == n) {
      if (base) stop(Break::Raises, "ValueError: Got unexpected field names: ['" + py::text(key) + "']");
      stop(Break::Raises, "TypeError: " + fn + " got an unexpected keyword argument '" + py::text(key) + "'");
    }
    if (!base && items[i]) stop(Break::Raises, "TypeError: " + fn + " got multiple values for argument '" + py::text(key) + "'");
    items[i] = args[npos + k];
  }
  Py_ssize_t missing = 0;
  while (missing < n && items[missing]) ++missing;
  if (missing < n) {
    // Defaults are __new__.__defaults__ (not _field_defaults, which nothing reads back): guarded
    // along P.__new__.__defaults__, item by item.
    static PyObject* new_name = PyUnicode_InternFromString("__new__");
    static PyObject* defaults_name = PyUnicode_InternFromString("__defaults__");
    PyObject* nw = own(PyObject_GetAttr(cls, new_name));
    PyObject* defaults = PyFunction_Check(nw) ? PyFunction_GET_DEFAULTS(nw) : nullptr;
    Py_ssize_t nd = defaults && PyTuple_CheckExact(defaults) ? PyTuple_GET_SIZE(defaults) : 0;
    std::vector<PyObject*> given;
    if (nd) {
      int dnode = tree_.child(tree_.child(node_of(cls), Access::Attr, new_name), Access::FuncAttr, defaults_name);
      given = unpacked(wrap(defaults, dnode));  // constants: one Equal guard; else item by item
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (items[i]) continue;
      if (i < n - nd)
        stop(Break::Raises, "TypeError: " + fn + " missing required argument: '" + py::text(PyTuple_GET_ITEM(fields, i)) + "'");
      items[i] = given[i - (n - nd)];
    }
  }
  return new_tuple_of(t, items);
}

// A builtin method bound to its object, as new with each call (`t.item`, `out.append` a resume
// function got on its stack): the object and which method (its type's, by name) are guarded, not
// the method's identity. A tensor's; or a method of the caller's list, dict or set that capture
// replays (any other would be simulated by running it, which may hash or compare the user's keys:
// those keep their identity guard). nullptr: not one of these.
PyObject* Simulator::bound_builtin(PyObject* obj, int node) {
  if (!PyCFunction_Check(obj) || !PyCFunction_GET_SELF(obj)) return nullptr;
  PyObject* real_self = PyCFunction_GET_SELF(obj);
  const bool tensor = py::is_tensor(real_self) || is_library_type(Py_TYPE(real_self));
  const bool container = PyList_CheckExact(real_self) || PyDict_CheckExact(real_self) || Py_TYPE(real_self) == &PySet_Type;
  if (PyType_Check(real_self) || !(tensor || container)) return nullptr;
  static PyObject* self_name = PyUnicode_InternFromString("__self__");
  static PyObject* name_name = PyUnicode_InternFromString("__name__");
  PyObject* name = own(PyObject_GetAttr(obj, name_name));
  if (!name || !PyUnicode_Check(name)) python_error("reading a builtin method's __name__");
  if (container && !replayable_method(real_self, name)) return nullptr;
  Py_INCREF(Py_TYPE(obj));
  tree_.add_check(node, {CheckKind::Type, reinterpret_cast<PyObject*>(Py_TYPE(obj)), 0, {}});
  PyObject* self = wrap(real_self, tree_.child(node, guards::Access::Attr, self_name));
  Py_INCREF(name);
  tree_.add_check(tree_.child(node, guards::Access::Attr, name_name), {CheckKind::Equal, name, 0, {}});
  PyObject* m = container ? deferred_method(self, name) : load_attr(self, name);
  if (!m || !PyCFunction_Check(m) ||
      reinterpret_cast<PyCFunctionObject*>(m)->m_ml != reinterpret_cast<PyCFunctionObject*>(obj)->m_ml)
    stop(Break::UnsupportedCall, std::string("a builtin method .") + py::text(name) + "() bound to a " +
                                     Py_TYPE(real_self)->tp_name + " capture cannot replay");
  if (tensor) values_.read_from_frame(m, node);
  return m;
}

// A resume function's stack argument (the interpreter's part of a break computed it).
bool Simulator::resume_data(int node) const {
  const guards::GuardNode& n = tree_.node(node);
  if (n.access != guards::Access::Local || n.parent >= 0 || !n.key || !PyUnicode_Check(n.key)) return false;
  return py::text(n.key).rfind("__pijit_stack", 0) == 0;  // (codegen's name for them)
}

// What a call of a jitted function runs here: its target, inlined into this graph, unless this
// frame is captured for stress mode only (the function is then its own jit, as without stress).
PyObject* Simulator::jitted_target(PyObject* target) {
  if (opt_.stress_only) stop(Break::UnsupportedCall, "calls a jitted function from a frame captured for stress mode only");
  return target;
}

PyObject* Simulator::make_sym(const TensorMeta& m, int value_id) {
  return own(py::wrap(Tensor::symbolic(m.shape, m.dtype, value_id)));
}

PyObject* Simulator::wrap(PyObject* obj, int node) {
  if (py::is_tensor(obj)) {
    const Tensor& t = py::unwrap(obj);
    if (t.is_symbolic()) return obj;
    auto it = sym_of_node_.find(node);
    if (it != sym_of_node_.end()) return it->second;
    if (PyObject* alias = values_.symbol_of(obj)) {  // one tensor reached along two paths: one graph value
      tree_.add_same_as(node, values_.frame_tensor(alias)->node, true);
      sym_of_node_[node] = alias;
      return alias;
    }
    // Its stand-in is a plain Tensor: a user subclass's overrides would be bypassed.
    if (!is_library_type(Py_TYPE(obj)))
      stop(Break::UserObjectOperator, std::string("a tensor of the user subclass ") + Py_TYPE(obj)->tp_name);
    tensor_types_.insert(Py_TYPE(obj));
    Py_INCREF(Py_TYPE(obj));
    tree_.add_check(node, {CheckKind::TensorMeta, reinterpret_cast<PyObject*>(Py_TYPE(obj)), 0, meta_of(t)});
    int id = graph_.add_input(meta_of(t), tree_.path(node), is_parameter(obj));
    r_.plan.input_nodes.push_back(node);
    dynamic_.tensor_input(obj, node, id);
    PyObject* sym = make_sym(meta_of(t), id);
    sym_of_node_[node] = sym;
    Py_INCREF(obj);
    own(obj);
    values_.bind_symbol(sym, obj, node);
    return sym;
  }
  if (PyMethod_Check(obj)) {  // a bound method (a with-block's __exit__ a resume function got):
    // made anew by each call, so its parts are guarded, not its identity
    static PyObject* func_name = PyUnicode_InternFromString("__func__");
    static PyObject* self_name = PyUnicode_InternFromString("__self__");
    Py_INCREF(Py_TYPE(obj));
    tree_.add_check(node, {CheckKind::Type, reinterpret_cast<PyObject*>(Py_TYPE(obj)), 0, {}});
    PyObject* f = wrap(PyMethod_GET_FUNCTION(obj), tree_.child(node, guards::Access::Attr, func_name));
    PyObject* self = wrap(PyMethod_GET_SELF(obj), tree_.child(node, guards::Access::Attr, self_name));
    PyObject* m = own(PyMethod_New(f, self));
    values_.read_from_frame(m, node);
    return m;
  }
  if (PyObject* m = bound_builtin(obj, node)) return m;
  // (A NaN stays itself: containment tests identity before equality.)
  if (PyLong_CheckExact(obj) || (PyFloat_CheckExact(obj) && !std::isnan(PyFloat_AS_DOUBLE(obj))))
    return frame_scalar(obj, node);
  if (is_constant(obj)) {
    Py_INCREF(obj);
    tree_.add_check(node, {CheckKind::Equal, obj, 0, {}});
    values_.read_constant(obj, node);  // Equal holds a reference: the key stays valid
    return obj;
  }
  if (PyAnySet_CheckExact(obj)) {
    // Membership and size are folded into the graph: guard the contents, exactly.
    Py_ssize_t n = PySet_GET_SIZE(obj), pos = 0;
    if (n > 64) stop(Break::UnsupportedCall, "reads a set of more than 64 elements");
    PyObject* items = own(PyTuple_New(n));
    PyObject* k;
    Py_hash_t h;
    for (Py_ssize_t i = 0; _PySet_NextEntry(obj, &pos, &k, &h); ++i) {
      if (!is_constant(k)) stop(Break::UnsupportedCall, std::string("reads a set holding a ") + Py_TYPE(k)->tp_name);
      Py_INCREF(k);
      PyTuple_SET_ITEM(items, i, k);
    }
    tree_.add_check(node, {CheckKind::SetContents, Py_BuildValue("(OO)", reinterpret_cast<PyObject*>(Py_TYPE(obj)), items), 0, {}});
    values_.read_from_frame(obj, node);
    Py_INCREF(obj);
    return own(obj);
  }
  Py_INCREF(obj);
  own(obj);
  bool builtin_dict = PyDict_Check(obj) && !(Py_TYPE(obj)->tp_flags & Py_TPFLAGS_HEAPTYPE);  // dict, OrderedDict
  // Generators, coroutines and builtin iterators: capture never advances them (every use
  // refuses), so the type says all; and no identity guard, whose weak reference a finalizing
  // coroutine would never clear (most iterators cannot be weakly referenced at all).
  bool generator = PyGen_CheckExact(obj) || PyCoro_CheckExact(obj) || PyAsyncGen_CheckExact(obj) || is_iterator(obj);
  if (named_tuple(obj)) {
    // A tuple with names: its type, and that its class stays as namedtuple() made it (a field
    // descriptor or method replaced later recompiles). Its length is guarded where it matters.
    guard_class(node, Py_TYPE(obj), nullptr);
  } else if (PyTuple_CheckExact(obj) || PyList_CheckExact(obj) || builtin_dict || generator || plain_instance(obj) ||
             is_partial(obj)) {  // (a partial's fields are guarded where it is called: call_partial)
    // Only the type. A container's length is guarded when it matters (iteration, unpacking, len,
    // passing it on), so reading one item of a list the function appends to elsewhere does not
    // over-guard. An instance is read only through guarded attribute paths, so other instances
    // of its class (another Cell of the same structure) reuse the graph; identity is guarded
    // where it matters (need_identity).
    Py_INCREF(Py_TYPE(obj));
    tree_.add_check(node, {CheckKind::Type, reinterpret_cast<PyObject*>(Py_TYPE(obj)), 0, {}});
  } else {
    guard_identity(node, obj);
  }
  int first = values_.read_from_frame(obj, node);
  if (first != node) {
    // One object reached along two paths: reads go through the first path, so both paths must
    // keep holding one object (any one: another call passing another list twice reuses the graph).
    tree_.add_same_as(node, first, true);
  }
  return obj;
}

// `a is b`: an instance is never a constant (`self.act is None` holds for every instance of the
// type), so identity is guarded only when both sides are objects.
void Simulator::is_identity(PyObject* a, PyObject* b) {
  auto singleton = [](PyObject* o) {
    return o == Py_None || o == Py_True || o == Py_False || o == Py_Ellipsis || o == Py_NotImplemented;
  };
  if (singleton(a) || singleton(b)) return;  // `x is None`: x's own guard decides
  if (is_constant(a) || is_constant(b)) {
    // Equal values may be distinct objects (10**20 built twice): the answer rests on identity,
    // so every path this constant was read along must keep holding this very object.
    for (PyObject* o : {a, b}) {
      const Value* rec = values_.find(o);
      if (!rec || rec->kind != Kind::Constant) continue;
      for (int n : rec->const_nodes) {
        Py_INCREF(o);
        tree_.add_check(n, {CheckKind::Id, o, 0, {}});
      }
    }
    return;
  }
  if (py::is_tensor(a) != py::is_tensor(b)) return;  // a tensor is no object of another class
  // Graph values of two paths are distinct unless the frame gave one tensor twice (wrap shares it).
  if (py::is_tensor(a) || py::is_tensor(b)) stop(Break::UserObjectOperator, "`is` between tensors");
  // Two objects read from the frame (two list arguments): the answer holds while the two paths
  // keep holding one object, or two.
  int na = node_of(a), nb = node_of(b);
  if (na >= 0 && nb >= 0) tree_.add_same_as(na, nb, a == b);
  need_identity(a);
  need_identity(b);
}

void Simulator::identity_observed(PyObject* sym) {
  const Value* mine = values_.frame_tensor(sym);
  if (!mine) return;  // made by the graph: a new object on every call
  for (PyObject* other : values_.symbols())
    if (other != sym) tree_.add_same_as(mine->node, values_.frame_tensor(other)->node, false);
}

// A graph input is as contiguous as the frame's tensor, which is then guarded; an op's output is
// fresh (contiguous) unless the op makes views, whose layout capture does not track.
int Simulator::contiguity(PyObject* sym) {
  if (const Value* ft = values_.frame_tensor(sym)) {
    guards::Check* meta = tree_.find_check(ft->node, CheckKind::TensorMeta);
    if (!meta) return -1;
    bool c = py::unwrap(ft->real).is_contiguous();
    meta->n = c ? 1 : 2;
    return c;
  }
  const Tensor& t = py::unwrap(sym);
  if (!t.is_symbolic()) return -1;
  const graph::Value& v = graph_.value(static_cast<int>(t.sym()));
  return v.kind == graph::ValueKind::Node && !graph_.nodes()[v.index].op->is_view ? 1 : -1;
}

bool Simulator::plain_instance(PyObject* v) {
  PyTypeObject* t = Py_TYPE(v);
  return (t->tp_flags & Py_TPFLAGS_HEAPTYPE) && !PyType_Check(v) && !PyFunction_Check(v) && !PyMethod_Check(v) &&
         !PyModule_Check(v) && !trusted(v) && !is_library_type(t);
}

void Simulator::need_identity(PyObject* v) {
  if (tuple_like(v) || PyList_CheckExact(v)) {  // e.g. a list of objects handed to library code
    Nesting nest(this);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i) need_identity(PySequence_Fast_GET_ITEM(v, i));
    return;
  }
  int node = node_of(v);
  if (node < 0 || !(plain_instance(v) || is_partial(v))) return;
  guard_identity(node, v);
}

void Simulator::guard_identity(int node, PyObject* v) {
  // Identity guards hold weak references, so that a cache never keeps a user's object alive (nor
  // holds back its __del__ or weakref callbacks). Descriptors of builtin types live as long as
  // their type; any other object that cannot be weakly referenced is not captured.
  PyTypeObject* t = Py_TYPE(v);
  bool builtin_descriptor = t == &PyMethodDescr_Type || t == &PyClassMethodDescr_Type ||
                            t == &PyWrapperDescr_Type || t == &PyGetSetDescr_Type || t == &PyMemberDescr_Type;
  if (!PyType_SUPPORTS_WEAKREFS(t) && !builtin_descriptor && !is_library_type(t))  // pijit's own live on
    stop(Break::UnsupportedCall, std::string("depends on the identity of a ") + t->tp_name +
                                     " object, which cannot be weakly referenced (a guard would keep it alive)");
  Py_INCREF(v);
  tree_.add_check(node, {CheckKind::Id, v, 0, {}});
}

// Numbers and tuples of numbers hash the same in every process; a str's hash is salted per process
// and a plain object's is its address.
static bool hashes_alike_everywhere(PyObject* o) {
  if (o == Py_None || PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o))
    return true;
  if (!PyTuple_CheckExact(o)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
    if (!hashes_alike_everywhere(PyTuple_GET_ITEM(o, i))) return false;
  return true;
}

PyObject* Simulator::materialize(PyObject* v, bool identity, bool held) {
  if (PyAnySet_Check(v)) {  // handed on or iterated: its order is its items' hashes'
    Py_ssize_t pos = 0;
    PyObject* item;
    Py_hash_t h;
    while (!r_.hash_dependent && _PySet_NextEntry(v, &pos, &item, &h))
      if (!hashes_alike_everywhere(item)) r_.hash_dependent = true;
  }
  if (overlaid_.count(v) || dirty_.count(v))  // real code would read what the replay has not stored yet
    stop(Break::SideEffect, std::string("hands a ") + Py_TYPE(v)->tp_name + " it changed (replayed later) to code run for real");
  // Its attributes may be graph values; it exists for real only once rebuilt. Code that only
  // moves references (iteration, list.append) hands it back to the simulation as it is.
  if ((made_object(v) || sim_generator(v)) && passing_) return v;
  if (sim_generator(v)) stop(Break::Generator, "hands a generator made during capture to code run for real");
  if (made_object(v))
    stop(Break::UnsupportedCall, std::string("hands a ") + Py_TYPE(v)->tp_name + " made during capture to code run for real");
  int node = node_of(v);
  const bool cell_container = node >= 0 && is_cell(v) && type_is(v, cell_types().containers);
  if (!cell_container)
    if (PyObject* done = values_.copy_of(v)) return done;
  Nesting nest(this);
  PyObject* out = v;
  refuse_foreign_iterator(v);
  // Handed to real computation (hashing, ==, library code), an instance's identity matters.
  if (identity) need_identity(v);
  if (cell_container) {
    // Handed on its own to code run for real, a CellList or SequentialCell is what iterating it
    // gives: its cells, along guarded paths. Held by a container being copied (a SequentialCell
    // in another's _cells, whose .values() real code runs) it is an object in its own right, which
    // the simulated code then calls or reads: it stays itself, as any other Cell there does (once
    // a tuple of its cells, and "a tuple object" was called). Neither is cached as the copy.
    if (held) return v;
    if (is_cell_dict(v)) stop(Break::UnsupportedCall, "passes a CellDict to code capture runs for real");
    return cell_children(v);
  }
  // Each item of a frame container handed to real code gets a guard, checked on every call: past
  // a size, running the frame as it is costs less than checking it.
  if (node >= 0 && (tuple_like(v) || PyList_CheckExact(v) || PyDict_Check(v)) && PyObject_Length(v) > kMaxGuardedItems)
    stop(Break::UnsupportedCall, "hands a container of " + std::to_string(PyObject_Length(v)) +
                                     " items to real code (more than " + std::to_string(kMaxGuardedItems) + " to guard)");
  if (tuple_like(v) || PyList_CheckExact(v)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    bool copy = node >= 0;
    std::vector<PyObject*> items = node >= 0 ? frame_items(v) : std::vector<PyObject*>(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
      // Real code reads every item's value: a number the frame holds is guarded here, even one an
      // attribute read left waiting (`t.count` materialises t; the copy is then cached for `% t`).
      if (node >= 0) guard_scalars(items[i]);
      items[i] = materialize(node >= 0 ? items[i] : PySequence_Fast_GET_ITEM(v, i), identity, /*held=*/true);
      copy = copy || items[i] != PySequence_Fast_GET_ITEM(v, i);
    }
    if (copy && PyTuple_Check(v)) {  // a tuple, or a namedtuple of the same class
      out = new_tuple_of(Py_TYPE(v), items);
      values_.mirror(out, node);
    } else if (copy) {
      out = own(PyList_New(n));
      values_.mirror(out, node);
      for (Py_ssize_t i = 0; i < n; ++i) {
        Py_INCREF(items[i]);
        PyList_SET_ITEM(out, i, items[i]);
      }
    }
  } else if (PyDict_Check(v) && node >= 0) {
    // The copy has the dict's own type: a dict, or an OrderedDict (Cell._cells); another subclass
    // would lose its type, and with it isinstance and its methods.
    const bool ordered = PyODict_CheckExact(v);
    if (!PyDict_CheckExact(v) && !ordered)
      stop(Break::UnsupportedCall, std::string("hands a ") + Py_TYPE(v)->tp_name + " (a dict subclass) from the frame to code run for real");
    PyObject* keys = own(py::dict_keys_in_order(v));
    tree_.add_check(node, {CheckKind::DictKeys, (Py_INCREF(keys), keys), 0, {}});
    out = own(ordered ? PyObject_CallObject(reinterpret_cast<PyObject*>(&PyODict_Type), nullptr) : PyDict_New());
    values_.mirror(out, node);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); ++i) {
      PyObject* k = PyList_GET_ITEM(keys, i);
      PyObject* item = PyObject_GetItem(v, k);
      if (!item) python_error("reading a dict");
      own(item);
      // (PyObject_SetItem: an OrderedDict keeps its order in links of its own)
      PyObject* held_item = wrap(item, tree_.child(node, Access::Item, k));
      guard_scalars(held_item);
      if (PyObject_SetItem(out, k, materialize(held_item, identity, /*held=*/true)) < 0)
        python_error("copying a dict");
    }
  }
  // Only values read from the frame are cached: the function cannot change them (it would stop
  // capture), while a container it built may still grow after being passed on.
  if (node >= 0) values_.set_copy(v, out);
  return out;
}

std::vector<PyObject*> Simulator::frame_items(PyObject* seq) {
  const int node = node_of(seq);
  PJ_CHECK(node >= 0 && (tuple_like(seq) || PyList_CheckExact(seq))) << "frame_items: not a frame tuple or list";
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  Py_INCREF(Py_TYPE(seq));
  tree_.add_check(node, {CheckKind::Length, reinterpret_cast<PyObject*>(Py_TYPE(seq)), n, {}});
  std::vector<PyObject*> items(n);
  for (Py_ssize_t i = 0; i < n; ++i)
    items[i] = wrap(PySequence_Fast_GET_ITEM(seq, i), tree_.child(node, Access::Item, own(PyLong_FromSsize_t(i))));
  return items;
}

bool Simulator::is_cell_dict(PyObject* cell) {
  const CellTypes& c = cell_types();
  return c.containers && PyObject_IsInstance(cell, PyTuple_GET_ITEM(c.containers, 2)) == 1;
}

// cell_dict[key], read along the guarded path of its _cells entry (cell_children guards the names).
PyObject* Simulator::cell_dict_item(PyObject* cell, PyObject* key) {
  if (!PyUnicode_CheckExact(key)) stop(Break::UnsupportedCall, "a CellDict indexed by a non-str key");
  static PyObject* cells_name = PyUnicode_InternFromString("_cells");
  PyObject* cells = py::own_attr(cell, cells_name);
  PyObject* item = cells && PyDict_Check(cells) ? PyDict_GetItem(cells, key) : nullptr;
  if (!item) stop(Break::Raises, std::string("KeyError: '") + py::text(key) + "'");
  int cnode = tree_.child(node_of(cell), Access::DictAttr, own(PyUnicode_InternFromString("_cells")));
  return wrap(item, tree_.child(cnode, Access::Item, key));
}

PyObject* Simulator::cell_children(PyObject* cell) {
  const CellTypes& c = cell_types();
  if (!c.containers || PyObject_IsInstance(cell, c.containers) != 1) return nullptr;
  int node = node_of(cell);
  if (node < 0) stop(Break::UnsupportedAttribute, "a cell container created during capture");
  static PyObject* cells_name = PyUnicode_InternFromString("_cells");
  PyObject* cells = py::own_attr(cell, cells_name);
  if (!cells || !PyDict_Check(cells)) stop(Break::UnsupportedAttribute, "a cell container without _cells");
  PyObject* name = own(PyUnicode_InternFromString("_cells"));
  int cnode = tree_.child(node, Access::DictAttr, name);
  PyObject* keys = own(py::dict_keys_in_order(cells));
  tree_.add_check(cnode, {CheckKind::DictKeys, (Py_INCREF(keys), keys), 0, {}});
  if (is_cell_dict(cell)) return own(PyList_AsTuple(keys));  // a CellDict iterates over its names
  Py_ssize_t n = PyList_GET_SIZE(keys);
  PyObject* out = own(PyTuple_New(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* k = PyList_GET_ITEM(keys, i);
    PyObject* item = wrap(PyDict_GetItem(cells, k), tree_.child(cnode, Access::Item, k));
    Py_INCREF(item);
    PyTuple_SET_ITEM(out, i, item);
  }
  return out;
}

PyObject* Simulator::load_global(SimFrame& fr, PyObject* name) {
  if (PyObject* stored = overlay_global(fr, name)) return stored;
  PyObject* v = PyDict_GetItem(fr.globals, name);
  int node = fr.globals_node < 0 ? tree_.root(Access::Global, 0, name) : tree_.child(fr.globals_node, Access::Item, name);
  if (v) return wrap(v, node);
  tree_.add_check(node, {CheckKind::Absent, nullptr, 0, {}});
  PyObject* b = PyDict_GetItem(py::frame_builtins(frames_.front()->real), name);
  if (!b) stop(Break::Raises, std::string("NameError: name '") + py::text(name) + "' is not defined");
  return wrap(b, tree_.root(Access::Builtin, 0, name));
}

PyObject* Simulator::load_deref(SimFrame& fr, int i, bool must_be_bound) {
  PyObject* cell = fr.cells[i];
  if (fr.root && !fr.cell_loaded[i]) {
    fr.cell_loaded[i] = 1;
    PyObject* real = py::frame_deref(fr.real, i);
    PyObject* name = py::code_cellname(fr.code, i);
    if (real) PyCell_Set(cell, wrap(real, tree_.root(Access::Deref, i, name)));
  }
  PyObject* v = PyCell_GET(cell);
  if (!v && must_be_bound) stop(Break::Raises, "NameError: free variable referenced before assignment");
  return v;
}

// What an instance attribute lookup found on the class (methods, properties, class attributes,
// __getattr__) holds while the class is unmodified: one version-tag check per guarded object. The
// check also remembers what each name resolved to, so a failure can say which one changed.
void Simulator::guard_class(int node, PyTypeObject* tp, PyObject* name, bool is_class) {
  if (node < 0) stop(Break::UnsupportedAttribute, std::string("class ") + tp->tp_name + " reached without a guardable path");
  CheckKind kind = is_class ? CheckKind::ClassVersion : CheckKind::TypeVersion;
  guards::Check* c = tree_.find_check(node, kind);
  if (!c) {
    const unsigned int version = py::ensure_type_version(tp);  // (none until a lookup went through its cache)
    if (!version) stop(Break::UnsupportedAttribute, std::string("class ") + tp->tp_name + " has no version tag to guard");
    PyObject* ref = Py_BuildValue("(NN)", guards::hold_weakly(reinterpret_cast<PyObject*>(tp)), PyDict_New());
    if (!ref) python_error("guarding a class");
    tree_.add_check(node, {kind, ref, static_cast<int64_t>(version), {}});
    if (is_class) tree_.drop_check(node, CheckKind::Id, reinterpret_cast<PyObject*>(tp));  // implied
    else tree_.drop_check(node, CheckKind::Type, reinterpret_cast<PyObject*>(tp));
    c = tree_.find_check(node, kind);
  }
  if (!name) return;
  PyObject* found = _PyType_Lookup(tp, name);
  // Explains a failure and keeps nothing alive: the value weakly, and its repr for when it died (a
  // patched method is often referenced by nothing else). Only reprs that run no user code.
  PyObject* seen = nullptr;
  if (found) {
    PyTypeObject* ft = Py_TYPE(found);
    bool plain_repr = PyFunction_Check(found) || PyType_Check(found) || PyCFunction_Check(found) || is_constant(found) ||
                      ft == &PyMethodDescr_Type || ft == &PyWrapperDescr_Type || ft == &PyGetSetDescr_Type ||
                      ft == &PyMemberDescr_Type || ft == &PyClassMethodDescr_Type;
    PyObject* text = plain_repr ? PyObject_Repr(found) : PyUnicode_FromFormat("<%s object>", ft->tp_name);
    PyObject* kept = guards::hold_weakly(found);
    seen = text ? PyTuple_Pack(2, kept, text) : nullptr;
    Py_XDECREF(text);
    Py_DECREF(kept);
  } else {
    seen = PyTuple_New(0);  // () when the class lacks it
  }
  if (!seen || PyDict_SetItem(PyTuple_GET_ITEM(c->ref, 1), name, seen) < 0) python_error("guarding a class");
  Py_DECREF(seen);
}

PyObject* Simulator::load_attr(PyObject* v, PyObject* name) {
  int node = node_of(v);
  const std::string name_text = py::text(name);
  const char* cname = name_text.c_str();
  auto real_getattr = [&](PyObject* o) {
    PyObject* r = PyObject_GetAttr(o, name);
    if (!r) python_error((std::string("reading .") + cname).c_str());
    return own(r);
  };
  if (Py_TYPE(v) == &PySuper_Type) return super_attr(v, name);
  if (PyObject* stored = overlay_attr(v, name)) return stored;
  if (made_object(v)) return object_attr(v, name);
  if (made_exception(v)) {  // what BaseException's C code keeps
    if (PyUnicode_CompareWithASCIIString(name, "args") != 0 && PyUnicode_CompareWithASCIIString(name, "__class__") != 0)
      stop(Break::UnsupportedAttribute, std::string(".") + cname + " of an exception raised in captured code");
    return real_getattr(v);
  }
  if (sim_generator(v)) stop(Break::Generator, std::string(".") + cname + " of a generator (capture runs one only as for, next() and builtins consume it)");
  if (py::is_tensor(v)) {
    if (dynamic_.tracks_sizes() && py::unwrap(v).is_symbolic() && PyUnicode_CompareWithASCIIString(name, "shape") == 0)
      if (PyObject* shape = dynamic_.shape_of(v)) return shape;
    const Value* real = values_.frame_tensor(v);
    if (_PyType_Lookup(Py_TYPE(v), name) || !real) return real_getattr(v);
    PyObject* r = PyObject_GetAttr(real->real, name);  // e.g. Parameter.name
    if (!r) python_error(cname);
    own(r);
    return wrap(r, tree_.child(real->node, Access::Attr, name));
  }
  if (PyModule_Check(v)) {
    PyObject* dict = PyModule_GetDict(v);  // NULL for ModuleType.__new__(ModuleType)
    if (!dict) stop(Break::UnsupportedAttribute, std::string(".") + cname + " of a module that was never initialised");
    PyObject* r = PyDict_GetItem(dict, name);
    if (!r) {
      if (node >= 0) tree_.add_check(tree_.child(node, Access::DictAttr, name), {CheckKind::Absent, nullptr, 0, {}});
      real_getattr(v);  // raises AttributeError, or a module __getattr__ answers (unguarded: refuse)
      stop(Break::UnsupportedAttribute, std::string(".") + cname + " from a module __getattr__");
    }
    if (node >= 0) return wrap(r, tree_.child(node, Access::DictAttr, name));
    Py_INCREF(r);
    return own(r);
  }
  if (PyType_Check(v)) return class_attr(v, name);
  if (node >= 0 && is_library_type(Py_TYPE(v)) && !py::is_tensor(v)) {
    // What a library object holds in its __dict__ is read along its guarded path, as a user
    // object's is: a user function or Cell it holds (grad(net), HyperMap(fn)) is then simulated as
    // the frame's (not a copy), and state it keeps (a RunContext's arguments, a counter) is guarded
    // rather than folded in as it was at capture. (Under the generic lookup, where no class
    // attribute of the name could come first.)
    PyObject* held = py::own_attr(v, name);
    PyObject* descr = _PyType_Lookup(Py_TYPE(v), name);
    if (Py_TYPE(v)->tp_getattro == PyObject_GenericGetAttr) {
      if (held && !descr) return wrap(held, tree_.child(node, Access::DictAttr, name));
      // A property of the object's pijit class (a Profiler's step_num): its getter is simulated,
      // so what it reads from the object is guarded too (run at capture, it would be folded).
      if (descr && PyObject_TypeCheck(descr, &PyProperty_Type)) {
        guard_class(node, Py_TYPE(v), name);
        PyObject* fget = own(PyObject_GetAttrString(descr, "fget"));
        if (PyFunction_Check(fget)) return inline_call(fget, v, {}, nullptr);
      }
    }
  }
  if (named_tuple(v)) {
    // p.x is p[i] (the field's descriptor reads the item; the class guard keeps it that descriptor).
    Py_ssize_t i = py::tuple_field_index(_PyType_Lookup(Py_TYPE(v), name));
    if (i >= 0 && i < PyTuple_GET_SIZE(v)) return node >= 0 ? frame_items(v)[i] : PyTuple_GET_ITEM(v, i);
    // p._replace(...): bound to p itself (call() builds the new tuple from p's items, sourced).
    if (PyUnicode_CompareWithASCIIString(name, "_replace") == 0)
      return own(PyMethod_New(PyDict_GetItem(Py_TYPE(v)->tp_dict, name), v));
  }
  if (trusted(v)) {
    if ((PyList_Check(v) || PyDict_Check(v) || PyAnySet_Check(v)) && !readonly_method(cname))
      write(v, Write::Method, std::string("calls .") + cname + "() on a " + Py_TYPE(v)->tp_name + " the function did not create");
    return real_getattr(node >= 0 ? materialize(v) : v);
  }
  if (PyFunction_Check(v)) {
    // Everything read off a function the frame can reach is guarded: its __dict__ entries, and
    // the fields (__defaults__, __code__, ...) read from the function object itself.
    bool known = false;
    PyObject* field = guards::function_field(v, name, &known);
    if (known && node >= 0) {
      if (!field) stop(Break::UnsupportedAttribute, std::string(".") + cname + " of a function, unset");
      return wrap(field, tree_.child(node, Access::FuncAttr, name));
    }
    PyObject* d = reinterpret_cast<PyFunctionObject*>(v)->func_dict;
    PyObject* r = d ? PyDict_GetItem(d, name) : nullptr;
    if (r && node >= 0) return wrap(r, tree_.child(node, Access::DictAttr, name));
    if (node >= 0 && !known) {
      if (d) tree_.add_check(tree_.child(node, Access::DictAttr, name), {CheckKind::Absent, nullptr, 0, {}});
      PyObject* got = real_getattr(v);  // a method of the function type (__get__, __call__)
      if (PyMethod_Check(got) || PyCFunction_Check(got) || Py_TYPE(got)->tp_call) return got;
      stop(Break::UnsupportedAttribute, std::string(".") + cname + " of a function");
    }
    return real_getattr(v);
  }
  // Instances of user classes (Cells among them): Python's lookup, restricted to what guards see.
  if (node < 0) stop(Break::UnsupportedAttribute, std::string(".") + cname + " of a " + Py_TYPE(v)->tp_name +
                                                    " created during capture");
  PyTypeObject* tp = Py_TYPE(v);
  if (tp->tp_getattro != PyObject_GenericGetAttr) {
    // Name the class that really customises the lookup: a __getattribute__ written in Python
    // somewhere on the MRO, or a C base class's own. A C base's slot wrapper of the generic lookup
    // (tuple's, for a namedtuple) customises nothing; a Python __getattr__ alone is modelled below.
    static PyObject* ga_name = PyUnicode_InternFromString("__getattribute__");
    PyObject* ga = _PyType_Lookup(tp, ga_name);
    PyTypeObject* owner = tp;
    for (Py_ssize_t k = 0; tp->tp_mro && k < PyTuple_GET_SIZE(tp->tp_mro); ++k) {
      auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(tp->tp_mro, k));
      if (base->tp_dict && PyDict_GetItem(base->tp_dict, ga_name) == ga) {
        owner = base;
        break;
      }
    }
    if (!ga || Py_TYPE(ga) != &PyWrapperDescr_Type)
      stop(Break::UnsupportedAttribute, std::string(owner->tp_name) + " customises __getattribute__");
    if (owner->tp_getattro != PyObject_GenericGetAttr)
      stop(Break::UnsupportedAttribute, std::string("the C class ") + owner->tp_name + " has an attribute lookup of its own");
  }
  PyObject* descr = _PyType_Lookup(tp, name);
  guard_class(node, tp, name);
  if (descr && Py_TYPE(descr)->tp_descr_set) {
    Py_ssize_t field = PyTuple_Check(v) ? py::tuple_field_index(descr) : -1;
    if (field >= 0) {
      // A namedtuple field on a class that adds to namedtuple's (a subclass with methods): the item,
      // when the class keeps tuple's item access and length (what the guards below read).
      if (tp->tp_as_mapping->mp_subscript != PyTuple_Type.tp_as_mapping->mp_subscript ||
          tp->tp_as_sequence->sq_length != PyTuple_Type.tp_as_sequence->sq_length)
        stop(Break::UnsupportedAttribute, std::string(".") + cname + " is a namedtuple field of " + tp->tp_name +
                                              ", which overrides __getitem__ or __len__");
      if (field >= PyTuple_GET_SIZE(v))
        stop(Break::Raises, std::string("IndexError: .") + cname + " of a " + tp->tp_name + " too short for it");
      Py_INCREF(tp);
      tree_.add_check(node, {CheckKind::Length, reinterpret_cast<PyObject*>(tp), PyTuple_GET_SIZE(v), {}});
      return wrap(PyTuple_GET_ITEM(v, field), tree_.child(node, Access::Item, own(PyLong_FromSsize_t(field))));
    }
    if (PyObject_TypeCheck(descr, &PyProperty_Type)) {
      PyObject* fget = own(PyObject_GetAttrString(descr, "fget"));
      if (PyFunction_Check(fget) && !is_library_code(fget)) return inline_call(fget, v, {}, nullptr);
    }
    if (std::strcmp(Py_TYPE(descr)->tp_name, "member_descriptor") == 0)
      return wrap(real_getattr(v), tree_.child(node, Access::Attr, name));
    if (PyObject* r = user_descriptor_get(descr, v)) return r;  // a data descriptor's __get__ comes first
    stop(Break::UnsupportedAttribute, std::string(".") + cname + " is a " + Py_TYPE(descr)->tp_name);
  }
  PyObject* in_dict = py::own_attr(v, name);
  int dnode = tree_.child(node, Access::DictAttr, name);
  if (in_dict) return wrap(in_dict, dnode);
  tree_.add_check(dnode, {CheckKind::Absent, nullptr, 0, {}});  // a later instance attribute would shadow
  if (descr) {
    if (PyFunction_Check(descr) || jit_target(descr)) return own(PyMethod_New(descr, v));
    if (PyObject* r = user_descriptor_get(descr, v)) return r;
    if (Py_TYPE(descr)->tp_descr_get && (Py_TYPE(descr)->tp_flags & Py_TPFLAGS_HEAPTYPE) && !is_library_type(Py_TYPE(descr)))
      stop(Break::UnsupportedAttribute, std::string(".") + cname + " is a " + Py_TYPE(descr)->tp_name +
                                            " descriptor (its __get__ is user code)");
    PyObject* r = real_getattr(v);
    if (PyMethod_Check(r) || PyCFunction_Check(r)) return r;  // classmethod / builtin method
    return wrap(r, tree_.child(node, Access::Attr, name));
  }
  const CellTypes& c = cell_types();
  PyObject* ga = _PyType_Lookup(tp, own(PyUnicode_InternFromString("__getattr__")));
  if (ga && c.getattr && ga == c.getattr && py::has_own_attrs_now(v)) {
    // Cell.__getattr__ looks in _params, then _cells: a name found later (or not at all) is
    // guarded absent from the stores before it.
    for (const char* store : {"_params", "_cells"}) {
      PyObject* d = py::own_attr(v, own(PyUnicode_InternFromString(store)));
      PyObject* r = d && PyDict_Check(d) ? PyDict_GetItem(d, name) : nullptr;
      int item = tree_.child(tree_.child(node, Access::DictAttr, own(PyUnicode_InternFromString(store))), Access::Item, name);
      if (r && store[1] == 'p' && is_parameter(r)) return mixed_precision_param(r, wrap(r, item), item);
      if (r) return wrap(r, item);
      tree_.add_check(item, {CheckKind::Absent, nullptr, 0, {}});
    }
  } else if (ga) {
    stop(Break::UnsupportedAttribute, std::string(tp->tp_name) + " defines __getattr__");
  }
  stop(Break::Raises, std::string("AttributeError: '") + tp->tp_name + "' object has no attribute '" + cname + "'");
}

// ---- mixed precision (Cell.to_float) ----
// As pijit/nn/cell.py does eagerly: a converted cell's call casts its floating tensor inputs and
// runs construct with its dst_type as the mixed-precision dtype; a floating trainable Parameter read
// through Cell.__getattr__ meanwhile is read cast to it. Outside every inlined converted cell the
// dtype is the one the thread had when capture began (a root frame that is the construct of a
// converted cell, entered through its real Cell.__call__): read once and guarded, so the graph
// runs only where the thread holds that dtype again.
PyObject* Simulator::mixed_precision_dtype() {
  if (amp_inlined_) return amp_inlined_;
  if (!amp_outer_) {
    PyObject* v = guards::amp_dtype();
    Py_INCREF(v);
    tree_.add_check(tree_.root(Access::Context, 2, nullptr), {CheckKind::AmpDtype, v, 0, {}});
    amp_outer_ = v;
  }
  return amp_outer_;
}

PyObject* Simulator::cast_floating(PyObject* v, PyObject* dst) {
  if (!py::is_tensor(v)) return v;
  PyObject* dt = own(PyObject_GetAttrString(v, "dtype"));
  if (dt == dst || own(PyObject_GetAttrString(dt, "is_floating_point")) != Py_True) return v;
  return trace_call(own(PyObject_GetAttrString(v, "astype")), {dst}, nullptr);
}

// `value`: the Parameter as wrap() made it (its graph input); `node`: the path it was read along.
PyObject* Simulator::mixed_precision_param(PyObject* param, PyObject* value, int node) {
  PyObject* dst = mixed_precision_dtype();
  if (dst == Py_None) return value;
  // Parameter.requires_grad is an instance attribute: not a trainable one (moving statistics an
  // op writes in place) is handed out as it is.
  static PyObject* rg_name = PyUnicode_InternFromString("requires_grad");
  PyObject* rg = py::own_attr(param, rg_name);
  if (!rg || !PyBool_Check(rg)) stop(Break::UnsupportedAttribute, "a Parameter whose requires_grad is not a bool, read under to_float()");
  wrap(rg, tree_.child(node, Access::DictAttr, rg_name));
  return rg == Py_True ? cast_floating(value, dst) : value;
}

PyObject* Simulator::call_converted_cell(PyObject* construct, PyObject* dst, const std::vector<PyObject*>& args,
                                         PyObject* kwnames) {
  std::vector<PyObject*> cast_args(args);
  for (PyObject*& a : cast_args) a = cast_floating(a, dst);
  struct Restore {
    PyObject*& slot;
    PyObject* outer;
    ~Restore() { slot = outer; }
  } restore{amp_inlined_, amp_inlined_};
  amp_inlined_ = dst;
  return call(construct, cast_args, kwnames);
}

// super() (from the frame's first argument and its __class__ cell, as CPython does) and
// super(cls, obj): a real super object over the real instance.
PyObject* Simulator::make_super(const std::vector<PyObject*>& args, PyObject* kwnames) {
  if (kwnames) stop(Break::UnsupportedCall, "super() with keyword arguments");
  PyObject *cls = nullptr, *obj = nullptr;
  if (args.size() == 2) {
    cls = args[0];
    obj = args[1];
  } else if (args.empty()) {
    SimFrame& fr = *frames_.back();
    PyCodeObject* co = fr.code;
    if (co->co_argcount == 0) stop(Break::Raises, "RuntimeError: super(): no arguments");
    obj = load_fast(fr, 0);
    int ncell = py::code_ncells(co);
    PyObject* first = py::code_varname(co, 0);
    for (int i = 0; i < ncell && !obj; ++i)  // the first argument moved into a cell
      if (PyUnicode_Compare(py::code_cellname(co, i), first) == 0) obj = load_deref(fr, i, false);
    for (int i = 0; i < py::code_nfrees(co); ++i)
      if (PyUnicode_CompareWithASCIIString(py::code_cellname(co, py::code_ncells(co) + i), "__class__") == 0)
        cls = load_deref(fr, ncell + i, false);
    if (!cls) stop(Break::Raises, "RuntimeError: super(): __class__ cell not found");
    if (!obj) stop(Break::Raises, "RuntimeError: super(): arg[0] deleted");
  } else {
    stop(Break::UnsupportedCall, "super() with " + std::to_string(args.size()) + " argument(s)");
  }
  if (!plain_instance(obj) || class_node(obj) < 0)
    stop(Break::UnsupportedCall, "super() of something other than a frame object or one the function made");
  PyObject* sup = PyObject_CallFunctionObjArgs(reinterpret_cast<PyObject*>(&PySuper_Type), cls, obj, nullptr);
  if (!sup) python_error("super()");
  return own(sup);
}

// super().name: the class-level object after __thisclass__ in type(obj).__mro__, read from the
// class dicts (no descriptor runs); type(obj)'s version tag covers every class on that path.
PyObject* Simulator::super_attr(PyObject* sup, PyObject* name) {
  PyObject* cls = py::super_thisclass(sup);
  PyObject* obj = py::super_self(sup);
  if (!obj || class_node(obj) < 0 || !PyType_IsSubtype(Py_TYPE(obj), reinterpret_cast<PyTypeObject*>(cls)))
    stop(Break::UnsupportedAttribute, "super() not bound to an object the frame was given");
  PyTypeObject* tp = Py_TYPE(obj);
  guard_class(class_node(obj), tp, name, /*is_class=*/made_object(obj));
  PyObject* mro = tp->tp_mro;
  Py_ssize_t n = mro ? PyTuple_GET_SIZE(mro) : 0, i = 0;
  while (i < n && PyTuple_GET_ITEM(mro, i) != cls) ++i;
  for (++i; i < n; ++i) {
    PyObject* raw = PyDict_GetItem(reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i))->tp_dict, name);
    if (!raw) continue;
    if (PyFunction_Check(raw) || jit_target(raw)) return own(PyMethod_New(raw, obj));
    if (is_constant(raw)) return raw;
    if (made_object(obj) && raw == object_init()) return own(PyMethod_New(raw, obj));  // see call()
    stop(Break::UnsupportedAttribute, std::string("super().") + py::text(name) + " is a " + Py_TYPE(raw)->tp_name);
  }
  stop(Break::Raises, std::string("AttributeError: 'super' object has no attribute '") + py::text(name) + "'");
}

bool Simulator::holds_tensor(PyObject* v) {
  if (py::is_tensor(v)) return true;
  if (!PyTuple_Check(v) && !PyFrozenSet_Check(v)) return false;
  Nesting nest(this);
  PyObject* items = PyTuple_Check(v) ? v : own(PySequence_Tuple(v));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); ++i)
    if (holds_tensor(PyTuple_GET_ITEM(items, i))) return true;
  return false;
}

void Simulator::guard_tensor_classes() {
  if (graph_.nodes().empty() && tensor_types_.empty()) return;
  // Library code ran for real at capture (ops.softmax calls F._op): none of the pijit module
  // namespaces it ran in may have been rebound since (a patched helper recompiles), nor those of
  // the pijit modules they name (`F._op`, `F.TABLE`: read without a frame of F's). One check over
  // all of them: a tuple of the namespaces and their versions. None when no pijit code ran.
  PyObject* modules = PyImport_GetModuleDict();
  Py_ssize_t pos = 0;
  PyObject *name, *mod;
  std::unordered_set<PyObject*> pijit_dicts;
  while (PyDict_Next(modules, &pos, &name, &mod)) {
    if (!PyUnicode_Check(name) || !PyModule_Check(mod)) continue;
    const std::string n = py::text(name);
    if (n == "pijit" || n.compare(0, 6, "pijit.") == 0) pijit_dicts.insert(PyModule_GetDict(mod));
  }
  std::unordered_set<PyObject*> guarded;
  for (PyObject* g : *ran_globals_) {
    if (!pijit_dicts.count(g)) continue;
    guarded.insert(g);
    Py_ssize_t k = 0;
    PyObject *key, *value;
    while (PyDict_Next(g, &k, &key, &value))
      if (PyModule_Check(value) && pijit_dicts.count(PyModule_GetDict(value))) guarded.insert(PyModule_GetDict(value));
  }
  std::vector<PyObject*> dicts(guarded.begin(), guarded.end());
  std::sort(dicts.begin(), dicts.end(), [](PyObject* a, PyObject* b) { return std::less<PyObject*>()(a, b); });
  std::vector<uint64_t> versions;
  for (PyObject* d : dicts) versions.push_back(py::dict_version(d));
  if (!dicts.empty()) guard_namespaces(dicts, versions);
  tensor_types_.insert(py::tensor_class());
  for (PyTypeObject* t : tensor_types_)
    guard_class(tree_.root(Access::Const, 0, reinterpret_cast<PyObject*>(t)), t, nullptr, true);
}

void Simulator::reads_module_state(const char* module) {
  PyObject* m = PyDict_GetItemString(PyImport_GetModuleDict(), module);
  if (m && PyModule_Check(m) && ran_globals_) ran_globals_->insert(PyModule_GetDict(m));
}

void Simulator::guard_namespaces(const std::vector<PyObject*>& dicts, const std::vector<uint64_t>& versions) {
  PyObject* t = own(PyTuple_New(static_cast<Py_ssize_t>(dicts.size())));
  for (size_t i = 0; i < dicts.size(); ++i) {
    Py_INCREF(dicts[i]);
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), dicts[i]);
  }
  PyObject* v = own(PyBytes_FromStringAndSize(reinterpret_cast<const char*>(versions.data()),
                                              static_cast<Py_ssize_t>(versions.size() * sizeof(uint64_t))));
  tree_.add_check(tree_.root(Access::Context, 1, nullptr), {CheckKind::DictVersions, Py_BuildValue("(OO)", t, v), 0, {}});
}

// isinstance/issubclass as CPython answers them when no user code takes part: plain classes (whose
// metaclass is `type`, so no __instancecheck__/__subclasscheck__ and no ABC registry), and for
// isinstance an object whose class does not fake __class__. The object's type is fixed by its
// guards (type, identity or value), the classes by theirs.
bool Simulator::subclass_check(PyObject* cls, PyObject* classinfo, bool inst, PyObject* obj) {
  Nesting nest(this);
  if (PyTuple_Check(classinfo)) {
    // The answer rests on every class in it: guard the frame's tuple item by item.
    if (node_of(classinfo) >= 0 && PyTuple_CheckExact(classinfo)) classinfo = materialize(classinfo);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(classinfo); ++i)
      if (subclass_check(cls, PyTuple_GET_ITEM(classinfo, i), inst, obj)) return true;
    return false;
  }
  const char* what = inst ? "isinstance" : "issubclass";
  if (!PyType_Check(classinfo))
    stop(Break::Raises, std::string("TypeError: ") + what + "() arg 2 must be a type or tuple of types");
  if (!PyType_Check(cls)) stop(Break::Raises, "TypeError: issubclass() arg 1 must be a class");
  for (PyObject* t : {cls, classinfo}) {
    PyTypeObject* meta = Py_TYPE(t);
    if (meta != &PyType_Type && !is_library_type(meta))
      stop(Break::UnsupportedCall, std::string(what) + "() with a class of metaclass " + meta->tp_name +
                                       " (__instancecheck__, ABC registration)");
  }
  if (inst) {
    static PyObject* class_name = PyUnicode_InternFromString("__class__");
    static PyObject* ga_name = PyUnicode_InternFromString("__getattribute__");
    PyTypeObject* tp = Py_TYPE(obj);  // builtin types never fake their class
    bool user = (tp->tp_flags & Py_TPFLAGS_HEAPTYPE) && !is_library_type(tp);
    // A builtin base's __getattribute__ (tuple's, for a namedtuple) is a slot wrapper: the generic
    // lookup, which fakes nothing.
    PyObject* ga = _PyType_Lookup(tp, ga_name);
    bool own_ga = ga != _PyType_Lookup(&PyBaseObject_Type, ga_name) && Py_TYPE(ga) != &PyWrapperDescr_Type;
    if (user && _PyType_Lookup(tp, class_name) != _PyType_Lookup(&PyBaseObject_Type, class_name))
      stop(Break::UnsupportedCall, std::string("isinstance() of a ") + tp->tp_name + " that customises __class__");
    if (user && own_ga)
      stop(Break::UnsupportedCall, std::string("isinstance() of a ") + tp->tp_name + " that customises __getattribute__");
  }
  return PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), reinterpret_cast<PyTypeObject*>(classinfo));
}

void Simulator::refuse_duplicate_keywords(PyObject* so_far, PyObject* more) {
  if (!PyDict_Check(more)) stop(Break::UnsupportedCall, std::string("** of a ") + Py_TYPE(more)->tp_name);
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(more, &pos, &k, &v)) {
    if (!PyUnicode_Check(k)) stop(Break::Raises, "TypeError: keywords must be strings");
    if (PyDict_Contains(so_far, k) == 1)
      stop(Break::Raises, std::string("TypeError: got multiple values for keyword argument '") + py::text(k) + "'");
  }
}

// C.name as type.__getattribute__ finds it, without running user code: the metaclass's data
// descriptors (__name__, __mro__) first, then the class's MRO dicts, whose entry is used as
// Python would bind it. The class's version tag guards every MRO lookup at once, so the fresh
// bound method of a classmethod is not identity-guarded (it is new on every call).
PyObject* Simulator::class_attr(PyObject* cls, PyObject* name) {
  int node = node_of(cls);
  const std::string name_text = py::text(name);
  const char* cname = name_text.c_str();
  auto real_getattr = [&]() {
    PyObject* r = PyObject_GetAttr(cls, name);
    if (!r) python_error((std::string("reading .") + cname).c_str());
    return own(r);
  };
  PyTypeObject* tp = reinterpret_cast<PyTypeObject*>(cls);
  PyTypeObject* meta = Py_TYPE(cls);
  static PyObject* ga_name = PyUnicode_InternFromString("__getattribute__");
  static PyObject* type_ga = _PyType_Lookup(&PyType_Type, ga_name);
  if (_PyType_Lookup(meta, ga_name) != type_ga) stop(Break::UnsupportedAttribute, std::string(meta->tp_name) + " customises __getattribute__");
  PyObject* meta_attr = _PyType_Lookup(meta, name);
  bool meta_data_descr = meta_attr && Py_TYPE(meta_attr)->tp_descr_set;
  PyObject* raw = meta_data_descr ? nullptr : _PyType_Lookup(tp, name);
  if (!raw) {
    // The metaclass answers (C.__name__, C.mro), or nothing does (hasattr(C, name) is False).
    if (meta_attr && (Py_TYPE(meta_attr)->tp_flags & Py_TPFLAGS_HEAPTYPE))
      stop(Break::UnsupportedAttribute, std::string(".") + cname + " from the metaclass " + meta->tp_name);
    if (node >= 0 && !meta_attr) guard_class(node, tp, name, true);  // stays missing
    PyObject* r = real_getattr();
    return node >= 0 && !PyCFunction_Check(r) && !PyMethod_Check(r) ? wrap(r, tree_.child(node, Access::Attr, name)) : r;
  }
  if (node >= 0) guard_class(node, tp, name, true);
  descrgetfunc get = Py_TYPE(raw)->tp_descr_get;
  if (!get || PyFunction_Check(raw)) {  // a plain value, or a function (C.f is the function)
    if (node < 0 || is_constant(raw) || PyFunction_Check(raw) || PyType_Check(raw)) return raw;
    return wrap(raw, tree_.child(node, Access::Attr, name));  // mutable contents are guarded by path
  }
  if (Py_TYPE(raw) == &PyClassMethod_Type || Py_TYPE(raw) == &PyStaticMethod_Type) return real_getattr();
  if (node >= 0)
    if (PyObject* r = user_descriptor_get(raw, Py_None, cls)) return r;
  if (Py_TYPE(raw)->tp_flags & Py_TPFLAGS_HEAPTYPE)  // a user descriptor: __get__ is user code
    stop(Break::UnsupportedAttribute, std::string(".") + cname + " is a " + Py_TYPE(raw)->tp_name + " descriptor");
  return real_getattr();  // builtin descriptors (method descriptors, property objects) run no user code
}

bool Simulator::truth(PyObject* v) {
  if (v == Py_True) return true;
  if (v == Py_False || v == Py_None) return false;
  if (trusted(v)) {
    // The outcome rests on the value: a number (also one the caller of truth() got from an inlined
    // special method or a generator, which no instruction used yet) is guarded.
    if (!unguarded_.empty()) guard_scalars(v);
    dynamic_.guard_derived(v);
    int t = PyObject_IsTrue(materialize(v));
    if (t < 0) python_error("truth test");
    return t == 1;
  }
  if (user_operand(v)) {
    if (PyObject* seq = cell_children(v)) return PyTuple_GET_SIZE(seq) > 0;  // a CellList: has cells
    return user_truth(v);
  }
  PyTypeObject* tp = Py_TYPE(v);
  bool plain = !(tp->tp_as_number && tp->tp_as_number->nb_bool) && !(tp->tp_as_mapping && tp->tp_as_mapping->mp_length) &&
               !(tp->tp_as_sequence && tp->tp_as_sequence->sq_length);
  if (!plain) stop(Break::UserObjectOperator, std::string("truth of a ") + tp->tp_name);
  if (node_of(v) >= 0 && plain_instance(v)) guard_class(node_of(v), tp, nullptr);  // a later __bool__ would change it
  return true;
}

PyObject* Simulator::get_iter(PyObject* v) {
  if (sim_generator(v)) return v;  // a generator is its own iterator
  PyObject* seq = cell_children(v);
  const int node = node_of(v);
  if (!seq && node >= 0 && PyTuple_Check(v) && !PyTuple_CheckExact(v) && is_library_type(Py_TYPE(v))) {
    // pijit's tuple subclasses (ParameterTuple) iterate as the tuple they are, each item reached by
    // its index: Parameters in one are graph inputs, not constants frozen at capture.
    const Py_ssize_t n = PyTuple_GET_SIZE(v);
    Py_INCREF(Py_TYPE(v));
    tree_.add_check(node, {CheckKind::Length, reinterpret_cast<PyObject*>(Py_TYPE(v)), n, {}});
    seq = own(PyTuple_New(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = wrap(PyTuple_GET_ITEM(v, i), tree_.child(node, Access::Item, own(PyLong_FromSsize_t(i))));
      Py_INCREF(item);
      PyTuple_SET_ITEM(seq, i, item);
    }
  }
  if (!seq && user_operand(v)) return user_iter(v);
  if (!seq) {
    if (!trusted(v)) {
      refuse_foreign_iterator(v);
      stop(Break::UserObjectOperator, std::string("iterating a ") + Py_TYPE(v)->tp_name);
    }
    Passing pass(this);
    seq = materialize(v, /*identity=*/false);
    if (node_of(v) >= 0) iterated_.insert(v);  // a deferred change would not reach the iterator
  }
  PyObject* it = PyObject_GetIter(seq);
  if (!it) python_error("iter()");
  return own(it);
}

// _C.tape_run(tape, fn, args, kwargs) (pijit/autodiff.py): fn is simulated while the tape records,
// so the graph nodes its ops add are on the tape, and the backward that tape.gradient() then runs
// (traced: its ops go through the recorder too) is graph nodes as well: a grad call in captured
// code is one forward+backward graph. The tape exists only during capture.
PyObject* Simulator::tape_run(const std::vector<PyObject*>& args, PyObject* kwnames) {
  if (kwnames || args.size() < 3 || args.size() > 4) stop(Break::UnsupportedCall, "tape_run() with other arguments");
  Tape* tape = py::tape_of_object(materialize(args[0]));
  if (!tape) stop(Break::UnsupportedCall, "tape_run() without a Tape");
  struct Restore {
    Tape* t;
    bool was;
    int& own;
    bool started = false;
    ~Restore() {
      if (started) t->stop(), --own;
    }
  } restore{tape, tape->recording(), own_tapes_};
  // A tensor made while capturing (a literal) is a constant to the graph: the tape could not
  // follow it from the leaf it watched into the ops (its gradient came out zero, its value a
  // dead reference). Such a grad call runs as Python runs it.
  if (PyTuple_CheckExact(args[2]) || PyList_CheckExact(args[2]))
    for (PyObject* a : unpacked(args[2]))
      if (py::is_tensor(a) && !py::unwrap(a).is_symbolic() && !values_.frame_tensor(a))
        stop(Break::UnsupportedCall, "differentiates with respect to a tensor made inside the captured code");
  if (!restore.was) tape->start(), ++own_tapes_, restore.started = true;
  PyObject* kwargs = args.size() == 4 && args[3] != Py_None ? args[3] : nullptr;
  return call_ex(args[1], args[2], kwargs);
}

PyObject* Simulator::call_ex(PyObject* callable, PyObject* args_tuple, PyObject* kwargs_dict) {
  std::vector<PyObject*> all;
  if (PyTuple_CheckExact(args_tuple) || PyList_CheckExact(args_tuple)) {
    all = unpacked(args_tuple);  // the items themselves (generators and made objects pass on as they are)
  } else {
    PyObject* args = own(PySequence_Tuple(materialize(args_tuple)));
    all.assign(PySequence_Fast_ITEMS(args), PySequence_Fast_ITEMS(args) + PyTuple_GET_SIZE(args));
  }
  PyObject* names = nullptr;
  if (kwargs_dict) {
    PyObject* kw = materialize(kwargs_dict);
    if (!PyDict_Check(kw)) stop(Break::UnsupportedCall, "**kwargs that is not a dict");
    names = own(PyTuple_New(PyDict_Size(kw)));
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *val;
    while (PyDict_Next(kw, &pos, &k, &val)) {
      // CPython raises "keywords must be strings" (3.7 reaches here without DICT_MERGE's check).
      if (!PyUnicode_Check(k)) stop(Break::Raises, "TypeError: keywords must be strings");
      Py_INCREF(k);
      PyTuple_SET_ITEM(names, i++, k);
      all.push_back(val);
    }
  }
  return call(callable, all, names);
}

PyObject* Simulator::call(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames) {
  if (PyObject* r = call_on_generators(callable, args, kwnames)) return r;  // (and on user iterables)
  if (PyObject* none = output_call(callable, args, kwnames)) return none;
  if (PyObject* target = assign_call(callable, args, kwnames)) return target;
  if (py::is_tape_run(callable)) return tape_run(args, kwnames);
  if (callable == py::raise_again_function()) {
    if (args.size() == 1 && !kwnames && raise_input(args[0])) throw SimRaise{args[0]};
    stop(Break::Raises, "raises again an exception the interpreter raised");
  }
  // A read of a cell variable in code pijit made (codegen/code_builder.h): LOAD_DEREF's meaning,
  // on the cell LOAD_CLOSURE pushed.
  if (callable == py::cell_load_function() && args.size() == 2 && !kwnames && PyCell_Check(args[0]) &&
      PyUnicode_Check(args[1])) {
    if (PyObject* v = PyCell_GET(args[0])) return v;
    stop(Break::Raises, "UnboundLocalError: " + py::unbound_local_message(args[1]));
  }
  if (PyType_Check(callable) && namedtuple_type(reinterpret_cast<PyTypeObject*>(callable)))
    return make_namedtuple(reinterpret_cast<PyTypeObject*>(callable), nullptr, args, kwnames);
  if (PyMethod_Check(callable) && PyType_Check(PyMethod_GET_SELF(callable)) &&
      namedtuple_type(reinterpret_cast<PyTypeObject*>(PyMethod_GET_SELF(callable)))) {
    // P._make(iterable): the classmethod namedtuple() wrote, tuple.__new__(P, iterable) with its length checked.
    auto* t = reinterpret_cast<PyTypeObject*>(PyMethod_GET_SELF(callable));
    PyObject* make = PyDict_GetItemString(t->tp_dict, "_make");
    if (make && Py_TYPE(make) == &PyClassMethod_Type && !kwnames && args.size() == 1 &&
        PyMethod_GET_FUNCTION(callable) == own(PyObject_GetAttrString(make, "__func__"))) {
      int node = node_of(PyMethod_GET_SELF(callable));
      if (node < 0) stop(Break::UnsupportedCall, std::string("constructs a namedtuple ") + t->tp_name + " reached without a guardable path");
      guard_class(node, t, nullptr, /*is_class=*/true);
      std::vector<PyObject*> items = unpacked(args[0]);
      Py_ssize_t n = PyTuple_GET_SIZE(PyDict_GetItemString(t->tp_dict, "_fields"));
      if (static_cast<Py_ssize_t>(items.size()) != n)
        stop(Break::Raises, "TypeError: Expected " + std::to_string(n) + " arguments, got " + std::to_string(items.size()));
      return new_tuple_of(t, items);
    }
  }
  if (PyMethod_Check(callable) && named_tuple(PyMethod_GET_SELF(callable))) {
    PyObject* self = PyMethod_GET_SELF(callable);
    if (PyMethod_GET_FUNCTION(callable) == PyDict_GetItemString(Py_TYPE(self)->tp_dict, "_replace"))
      return make_namedtuple(Py_TYPE(self), self, args, kwnames);
  }
  if (PyMethod_Check(callable)) {
    PyObject* func = PyMethod_GET_FUNCTION(callable);
    PyObject* self = PyMethod_GET_SELF(callable);
    if (PyObject* target = jit_target(func)) func = jitted_target(target);  // a jitted method inlines into this graph
    const CellTypes& c = cell_types();
    if (c.call && func == c.call && is_cell(self)) return call(self, args, kwnames);
    if (func == object_init() && made_object(self)) {  // super().__init__() reaching object's
      if (!args.empty()) stop(Break::Raises, "TypeError: object.__init__() takes exactly one argument (the instance to initialize)");
      return Py_None;
    }
    if (PyFunction_Check(func) && (!is_library_code(func) || is_cell(self))) return inline_call(func, self, args, kwnames);
    if (py::is_tensor(self) || is_library_type(Py_TYPE(self))) return trace_call(callable, args, kwnames);
    stop(Break::UnsupportedCall, describe_callable(callable));
  }
  if (PyObject* target = jit_target(callable)) return call(jitted_target(target), args, kwnames);
  if (is_partial(callable)) return call_partial(callable, args, kwnames);
  if (PyFunction_Check(callable)) {
    if (values_.created(callable, Kind::Function) || !is_library_code(callable)) return inline_call(callable, nullptr, args, kwnames);
    return trace_call(callable, args, kwnames);
  }
  if (is_cell(callable)) {
    int node = node_of(callable);
    if (node < 0) stop(Break::UnsupportedCall, "a Cell created during capture");
    static PyObject* call_name = PyUnicode_InternFromString("__call__");
    if (_PyType_Lookup(Py_TYPE(callable), call_name) != cell_types().call)
      stop(Break::UnsupportedCall, std::string(Py_TYPE(callable)->tp_name) + " overrides Cell.__call__");
    guard_class(node, Py_TYPE(callable), call_name);
    PyObject* key = own(PyUnicode_InternFromString("_cast_inputs_to"));
    PyObject* cast = py::own_attr(callable, key);
    if (cast) cast = wrap(cast, tree_.child(node, Access::DictAttr, key));
    else tree_.add_check(tree_.child(node, Access::DictAttr, key), {CheckKind::Absent, nullptr, 0, {}});
    PyObject* construct = load_attr(callable, own(PyUnicode_InternFromString("construct")));
    if (cast && cast != Py_None) return call_converted_cell(construct, cast, args, kwnames);
    static PyObject* bprop_name = PyUnicode_InternFromString("bprop");
    if (tape_active() && _PyType_Lookup(Py_TYPE(callable), bprop_name)) return call_with_bprop(callable, construct, args, kwnames);
    return call(construct, args, kwnames);
  }
  if (plain_instance(callable) && class_node(callable) >= 0) {
    // An instance of a user class: type(obj).__call__(obj, ...), as CPython's call slot does (an
    // instance attribute named __call__ is not looked at); a later change of the class recompiles.
    static PyObject* call_name = PyUnicode_InternFromString("__call__");
    PyObject* f = _PyType_Lookup(Py_TYPE(callable), call_name);
    if (f && ((PyFunction_Check(f) && !is_library_code(f)) || jit_target(f))) {
      guard_class(class_node(callable), Py_TYPE(callable), call_name, /*is_class=*/made_object(callable));
      return call(own(PyMethod_New(f, callable)), args, kwnames);
    }
  }
  bool handled = false;
  PyObject* r = call_builtin(callable, args, kwnames, &handled);
  if (handled) return r;
  if (PyCFunction_Check(callable)) {
    PyObject* self = PyCFunction_GET_SELF(callable);
    if (self && (py::is_tensor(self) || is_library_type(Py_TYPE(self)))) return trace_call(callable, args, kwnames);
    if (self && PyModule_Check(self)) {
      const char* mod = PyModule_GetName(self);
      if (mod && (std::strncmp(mod, "pijit", 5) == 0)) return trace_call(callable, args, kwnames);
      if (mod && std::strcmp(mod, "math") == 0) {
        // math converts with __float__, __index__, __floor__...
        refuse_user_operands("math." + std::string(reinterpret_cast<PyCFunctionObject*>(callable)->m_ml->ml_name) + "()", args);
        return trace_call(callable, args, kwnames);
      }
      PyErr_Clear();
    }
    if (self && !PyModule_Check(self) && trusted(self)) {  // a method of a builtin container
      // The container is the frame's when capture read it, or when the bound method itself came
      // from the frame (box.push = out.append: `out` has no path of its own).
      const char* meth = reinterpret_cast<PyCFunctionObject*>(callable)->m_ml->ml_name;
      if (!readonly_method(meth))
        write(self, Write::Method, std::string("calls .") + meth + "() on a " + Py_TYPE(self)->tp_name +
                                       " the function did not create", /*preexisting=*/node_of(callable) >= 0);
      // A list's append, insert and extend store references: objects the function made go in as
      // they are. Every other method may compare, hash or sort (count, index, remove, sort, get,
      // add): run for real during capture, a user class's __eq__, __hash__ or __lt__ would run there.
      static const char* const stores_only[] = {"append", "insert", "extend", nullptr};
      if (PyList_CheckExact(self) && node_of(self) < 0 && name_in(stores_only, meth)) {
        Passing pass(this);
        return trace_call(callable, args, kwnames);
      }
      static const char* const no_compare[] = {"copy", "keys", "values", "items", "__len__", "clear", "reverse", nullptr};
      if (!name_in(no_compare, meth) && !(PyList_Check(self) && std::strcmp(meth, "pop") == 0)) {
        if (!compares_plainly(self))
          stop(Break::UserObjectOperator, std::string(".") + meth + "() on a " + Py_TYPE(self)->tp_name +
                                              " holding objects of user classes, whose comparisons are user code");
        refuse_user_operands(std::string(".") + meth + "()", args);
      }
      return trace_call(callable, args, kwnames);
    }
  }
  if (callable == reinterpret_cast<PyObject*>(&PySuper_Type)) return make_super(args, kwnames);
  if (callable == reinterpret_cast<PyObject*>(&PyBool_Type) && args.size() == 1 && !kwnames && user_operand(args[0]))
    return truth(args[0]) ? Py_True : Py_False;
  const bool sequence_type = callable == reinterpret_cast<PyObject*>(&PyTuple_Type) || callable == reinterpret_cast<PyObject*>(&PyList_Type);
  if (sequence_type && args.size() == 1 && !kwnames && (PyList_CheckExact(args[0]) || PyTuple_CheckExact(args[0]))) {
    Passing pass(this);  // tuple(a_list) copies references: what the items are does not matter
    return trace_call(callable, args, kwnames);
  }
  if (PyType_Check(callable)) {
    // list(x), set(x), dict(x)...: iterating, hashing or comparing x must run no user code
    // (a class's __iter__, a WeakSet): its result would be folded in, its effects lost.
    if (pure_type(callable))
      for (PyObject* a : args)
        if (!is_iterator(a) && !deep_trusted(a))  // an iterator: refused below for being consumed
          stop(Break::UserObjectOperator, std::string(reinterpret_cast<PyTypeObject*>(callable)->tp_name) + "() of a " +
                                              Py_TYPE(a)->tp_name + ", which runs user code");
    if (pure_type(callable) || is_library_type(reinterpret_cast<PyTypeObject*>(callable)))
      return trace_call(callable, args, kwnames);
    auto* ct = reinterpret_cast<PyTypeObject*>(callable);
    if (PyType_IsSubtype(ct, reinterpret_cast<PyTypeObject*>(PyExc_BaseException))) return make_exception(ct, args, kwnames);
    if (ct->tp_flags & Py_TPFLAGS_HEAPTYPE) return construct(ct, args, kwnames);
    stop(Break::UnsupportedCall, std::string("constructs a ") + ct->tp_name + " object (a builtin class capture does not model)");
  }
  if (is_library_type(Py_TYPE(callable))) return trace_call(callable, args, kwnames);  // ops.Add() etc.
  stop(Break::UnsupportedCall, describe_callable(callable));
}

bool Simulator::is_partial(PyObject* v) {
  static PyObject* partial = py::module_attr("functools", "partial");
  return partial && reinterpret_cast<PyObject*>(Py_TYPE(v)) == partial;  // (a subclass may override __call__)
}

PyObject* Simulator::call_partial(PyObject* partial, const std::vector<PyObject*>& args, PyObject* kwnames) {
  const int node = node_of(partial);
  if (node < 0) stop(Break::UnsupportedCall, "a functools.partial made during capture");
  auto field = [&](const char* n) {
    PyObject* key = own(PyUnicode_InternFromString(n));
    PyObject* r = PyObject_GetAttr(partial, key);  // C members: no user code
    if (!r) python_error("reading a functools.partial");
    own(r);
    return std::make_pair(r, tree_.child(node, Access::Attr, key));
  };
  auto [func, fnode] = field("func");
  auto [pargs, anode] = field("args");
  auto [kw, knode] = field("keywords");
  if (!PyTuple_CheckExact(pargs) || !PyDict_CheckExact(kw)) stop(Break::UnsupportedCall, "a functools.partial with odd state");
  func = wrap(func, fnode);
  std::vector<PyObject*> all;
  Py_INCREF(&PyTuple_Type);
  tree_.add_check(anode, {CheckKind::Length, reinterpret_cast<PyObject*>(&PyTuple_Type), PyTuple_GET_SIZE(pargs), {}});
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pargs); ++i)
    all.push_back(wrap(PyTuple_GET_ITEM(pargs, i), tree_.child(anode, Access::Item, own(PyLong_FromSsize_t(i)))));
  const size_t npos = args.size() - (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  all.insert(all.end(), args.begin(), args.begin() + static_cast<std::ptrdiff_t>(npos));
  // Its keywords, then the call's (a call's keyword replaces the partial's of that name).
  Py_INCREF(&PyDict_Type);
  tree_.add_check(knode, {CheckKind::Length, reinterpret_cast<PyObject*>(&PyDict_Type), PyDict_Size(kw), {}});
  PyObject* names = own(PyList_New(0));
  std::vector<PyObject*> values;
  Py_ssize_t pos = 0;
  PyObject *k, *item;
  while (PyDict_Next(kw, &pos, &k, &item)) {
    if (!PyUnicode_CheckExact(k)) stop(Break::UnsupportedCall, "a functools.partial with a keyword that is not a str");
    PyList_Append(names, k);
    values.push_back(wrap(item, tree_.child(knode, Access::Item, k)));
  }
  for (size_t i = npos; i < args.size(); ++i) {
    PyObject* k2 = PyTuple_GET_ITEM(kwnames, static_cast<Py_ssize_t>(i - npos));
    Py_ssize_t at = PySequence_Index(names, k2);
    if (at >= 0) {
      values[static_cast<size_t>(at)] = args[i];
      continue;
    }
    PyErr_Clear();
    PyList_Append(names, k2);
    values.push_back(args[i]);
  }
  all.insert(all.end(), values.begin(), values.end());
  return call(func, all, values.empty() ? nullptr : own(PyList_AsTuple(names)));
}

PyObject* Simulator::call_builtin(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames,
                                  bool* handled) {
  *handled = false;
  if (!PyCFunction_Check(callable)) {
    if (callable == (PyObject*)&PyType_Type && args.size() == 1 && !kwnames) {  // type(x)
      *handled = true;
      const Value* real = values_.frame_tensor(args[0]);
      PyObject* t = reinterpret_cast<PyObject*>(Py_TYPE(real ? real->real : args[0]));
      if (node_of(args[0]) >= 0 && plain_instance(args[0]))  // type(a).k reads the class
        guard_class(node_of(args[0]), Py_TYPE(args[0]), nullptr);
      Py_INCREF(t);
      return own(t);
    }
    return nullptr;
  }
  PyObject* self = PyCFunction_GET_SELF(callable);
  if (!self || !PyModule_Check(self)) return nullptr;
  const char* mod = PyModule_GetName(self);
  if (!mod || std::strcmp(mod, "builtins") != 0) {
    PyErr_Clear();
    return nullptr;
  }
  const char* name = reinterpret_cast<PyCFunctionObject*>(callable)->m_ml->ml_name;
  *handled = true;
  size_t npos = args.size() - (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  if (std::strcmp(name, "print") == 0) stop(Break::Print, "print()");
  if ((std::strcmp(name, "getattr") == 0 || std::strcmp(name, "hasattr") == 0) && npos >= 2 && !kwnames &&
      PyUnicode_CheckExact(args[1])) {
    bool has = std::strcmp(name, "hasattr") == 0;
    if (args.size() == 2 && !has) return load_attr(args[0], args[1]);
    // With a default (or for hasattr) a missing attribute is not an error: decide on the real object.
    try {
      PyObject* r = load_attr(args[0], args[1]);
      return has ? Py_True : r;
    } catch (const StopCapture& s) {
      if (s.reason != Break::Raises || s.detail.rfind("AttributeError", 0) != 0) throw;
      // A tensor argument may gain the attribute later (x.scale = 3): it must stay missing.
      if (const Value* real = values_.frame_tensor(args[0]))
        tree_.add_check(tree_.child(real->node, Access::Attr, args[1]), {CheckKind::Absent, nullptr, 0, {}});
      return has ? Py_False : args[2];
    }
  }
  const bool set = std::strcmp(name, "setattr") == 0;
  if ((set || std::strcmp(name, "delattr") == 0) && npos == (set ? 3u : 2u) && !kwnames && PyUnicode_CheckExact(args[1])) {
    store_attr(args[0], args[1], set ? args[2] : nullptr);  // what STORE_ATTR / DELETE_ATTR do
    return Py_None;
  }
  if (std::strcmp(name, "len") == 0 && args.size() == 1) {
    if (PyObject* seq = cell_children(args[0])) return own(PyLong_FromSsize_t(PyTuple_GET_SIZE(seq)));
    if (!kwnames && dirty_.count(args[0]) && overlay_of(args[0])) return overlay_len(args[0]);  // (sim_overlay.cc)
  }
  if (std::strcmp(name, "len") == 0 && args.size() == 1 && !kwnames && user_operand(args[0])) return user_len(args[0]);
  if (std::strcmp(name, "abs") == 0 && args.size() == 1 && !kwnames && user_operand(args[0])) return user_abs(args[0]);
  if (std::strcmp(name, "next") == 0 && !kwnames && args.size() == 2 && user_operand(args[0])) {
    PyObject* v = user_next(args[0]);
    return v ? v : args[1];
  }
  if (std::strcmp(name, "next") == 0 && !kwnames && args.size() == 1 && user_operand(args[0])) {
    // what __next__ raises, StopIteration (with its value) included, goes on as it is
    PyObject* f = special_method(args[0], "__next__");
    if (!f) stop(Break::Raises, std::string("TypeError: '") + Py_TYPE(args[0])->tp_name + "' object is not an iterator");
    return call_special(f, args[0], {});
  }
  if (std::strcmp(name, "iter") == 0 && args.size() == 1) return get_iter(args[0]);
  if (std::strcmp(name, "next") == 0 && args.size() <= 2 && node_of(args[0]) < 0 && trusted(args[0]))
    return trace_call(callable, args, kwnames);
  bool inst = std::strcmp(name, "isinstance") == 0, sub = std::strcmp(name, "issubclass") == 0;
  if ((inst || sub) && args.size() == 2 && !kwnames) {
    const Value* real = values_.frame_tensor(args[0]);
    PyObject* obj = real ? real->real : args[0];
    return subclass_check(inst ? reinterpret_cast<PyObject*>(Py_TYPE(obj)) : obj, args[1], inst, obj) ? Py_True
                                                                                                        : Py_False;
  }
  if (std::strcmp(name, "callable") == 0 && args.size() == 1 && !kwnames)  // a type slot: no user code
    return Py_TYPE(args[0])->tp_call ? Py_True : Py_False;
  if (!pure_builtin(name)) stop(Break::UnsupportedCall, std::string(name) + "()");
  if (std::strcmp(name, "hash") == 0 && args.size() == 1 && holds_tensor(args[0]))
    stop(Break::UnsupportedCall, "hash() of a tensor (its identity, which capture does not have)");
  if (std::strcmp(name, "hash") == 0 && args.size() == 1 && !hashes_alike_everywhere(args[0])) r_.hash_dependent = true;
  static const char* const shallow[] = {"len", "isinstance", "issubclass", "callable", nullptr};
  static const char* const reducing[] = {"sum", "min", "max", nullptr};
  if (name_in(reducing, name) && std::any_of(args.begin(), args.end(), [&](PyObject* a) { return !deep_trusted(a); }))
    if (PyObject* r = user_reduce(name, args, kwnames)) return r;
  for (PyObject* a : args)
    if (name_in(shallow, name) ? !trusted(a) : !deep_trusted(a))
      stop(Break::UnsupportedCall, std::string(name) + "() on a " + Py_TYPE(a)->tp_name + " (or what it holds)");
  return trace_call(callable, args, kwnames);
}

// Tracing runs a function once, at capture time. pijit functions marked with runtime_state
// (pijit/_state.py) and pijit._C functions other than the pure ones below change or read state no
// guard covers, so running them once would be wrong every later call.
void Simulator::refuse_runtime_state(PyObject* callable) {
  PyObject* f = PyMethod_Check(callable) ? PyMethod_GET_FUNCTION(callable) : callable;
  if (PyType_Check(f)) {  // a class marked in its own body (Parameter)
    PyObject* what = PyDict_GetItemString(reinterpret_cast<PyTypeObject*>(f)->tp_dict, "__pijit_state__");
    if (what && PyUnicode_Check(what)) stop(Break::SideEffect, describe_callable(f) + " " + py::text(what));
    return;
  }
  if (PyFunction_Check(f)) {
    PyObject* d = reinterpret_cast<PyFunctionObject*>(f)->func_dict;
    PyObject* what = d ? PyDict_GetItemString(d, "__pijit_state__") : nullptr;
    if (what && PyUnicode_Check(what)) stop(Break::SideEffect, describe_callable(f) + " " + py::text(what));
    return;
  }
  if (!PyCFunction_Check(f)) {  // an instance of a library class: its __call__ may be marked (ops.Print)
    static PyObject* call_name = PyUnicode_InternFromString("__call__");
    PyObject* call = _PyType_Lookup(Py_TYPE(f), call_name);
    if (call && PyFunction_Check(call)) refuse_runtime_state(call);
    return;
  }
  PyObject* self = PyCFunction_GET_SELF(f);
  if (!self || !PyModule_Check(self)) return;
  const char* mod = PyModule_GetName(self);
  if (!mod) {
    PyErr_Clear();
    return;
  }
  static const char* const pure[] = {"op", "as_operand", "dtype_code", "format_repr", "format_str", "registered_ops",
                                     nullptr};
  const char* name = reinterpret_cast<PyCFunctionObject*>(f)->m_ml->ml_name;
  if (std::strcmp(mod, "pijit._C") == 0 && !name_in(pure, name))
    stop(Break::SideEffect, std::string("pijit._C.") + name + "() changes or reads pijit's runtime state");
}

// A function of the user's (or something that calls one) that library code would call: tracing
// would run it for real at capture, so the library function is simulated instead.
bool Simulator::user_callable(PyObject* v) {
  if (PyMethod_Check(v)) return user_callable(PyMethod_GET_FUNCTION(v));
  if (PyFunction_Check(v)) return !is_library_code(v);
  if (std::strcmp(Py_TYPE(v)->tp_name, "functools.partial") == 0) return true;
  return plain_instance(v) && Py_TYPE(v)->tp_call;
}

static PyObject* g_test_interruption = nullptr;

void arm_test_interruption(PyObject* exc_type) {
  Py_XINCREF(exc_type);
  Py_XSETREF(g_test_interruption, exc_type);
}

PyObject* Simulator::trace_call(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames) {
  if (g_test_interruption) {
    PyObject* t = g_test_interruption;
    g_test_interruption = nullptr;
    PyErr_SetNone(t);
    Py_DECREF(t);
    python_error("a call interrupted by the test hook");
  }
  refuse_runtime_state(callable);
  bool calls_user_code = false;
  // (list.append and the like only store what they are given, callable or not)
  for (PyObject* a : args) calls_user_code = calls_user_code || (!passing_ && user_callable(a));
  PyObject* self = PyMethod_Check(callable) ? PyMethod_GET_SELF(callable) : callable;
  if (!PyFunction_Check(self))  // HyperMap(fn)
    for (const auto& kv : py::own_attrs(self)) calls_user_code = calls_user_code || user_callable(kv.second);
  // A library closure over a user function (the function GradOperation returns holds the network):
  // run for real it would run the user's code unguarded, its effects once, at capture.
  PyObject* code_of = PyMethod_Check(callable) ? PyMethod_GET_FUNCTION(callable) : callable;
  if (PyFunction_Check(code_of))
    if (PyObject* cells = PyFunction_GET_CLOSURE(code_of))
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cells) && !calls_user_code; ++i) {
        PyObject* v = PyCell_GET(PyTuple_GET_ITEM(cells, i));
        calls_user_code = v && user_callable(v);
      }
  if (calls_user_code) {
    static PyObject* call_name = PyUnicode_InternFromString("__call__");
    PyObject* func = PyMethod_Check(callable) ? PyMethod_GET_FUNCTION(callable) : callable;
    PyObject* bound = PyMethod_Check(callable) ? PyMethod_GET_SELF(callable) : nullptr;
    if (!PyFunction_Check(func)) {
      func = _PyType_Lookup(Py_TYPE(callable), call_name);
      bound = callable;
    }
    if (func && PyFunction_Check(func)) return inline_call(func, bound, args, kwnames);
    stop(Break::UnsupportedCall, "hands a user function to " + describe_callable(callable) + ", which would run it");
  }
  for (PyObject* a : args) need_identity(a);  // library code may keep or compare what it is given
  if (PyMethod_Check(callable)) need_identity(PyMethod_GET_SELF(callable));
  if (PyCFunction_Check(callable) && py::tape_of_object(PyCFunction_GET_SELF(callable))) {
    // tape.watch(p) of a real tensor reached through an opaque library container (a
    // ParameterTuple's items are not read along guarded paths): the tape must track the graph
    // value the frame's reads of p use, so p becomes a graph input here (guarded as this object;
    // a later read of p along its own path is the same value).
    std::vector<PyObject*> own_args(args);
    for (PyObject*& a : own_args)
      if (py::is_tensor(a) && !py::unwrap(a).is_symbolic()) a = wrap(a, tree_.root(Access::Const, 0, a));
    return trace_call_args(callable, own_args, kwnames);
  }
  return trace_call_args(callable, args, kwnames);
}

PyObject* Simulator::trace_call_args(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames) {
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  Py_ssize_t npos = static_cast<Py_ssize_t>(args.size()) - nkw;
  PyObject* t = own(PyTuple_New(npos));
  for (Py_ssize_t i = 0; i < npos; ++i) {
    PyObject* a = materialize(args[i]);
    Py_INCREF(a);
    PyTuple_SET_ITEM(t, i, a);
  }
  PyObject* kw = nullptr;
  if (nkw) {
    kw = own(PyDict_New());
    for (Py_ssize_t i = 0; i < nkw; ++i)
      if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), materialize(args[npos + i])) < 0) python_error("kwargs");
  }
  PyObject* r = PyObject_Call(callable, t, kw);
  if (!r) python_error(describe_callable(callable).c_str());
  own(r);
  rethrow_pending_stop();  // (library code that caught the error a simulated bprop stopped with)
  return r;
}

PyObject* Simulator::inline_call(PyObject* func, PyObject* self, const std::vector<PyObject*>& args, PyObject* kwnames) {
  PyCodeObject* co = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(func));
  std::string fname = py::text(co->co_name);
  if (co->co_flags & (CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE))
    stop(Break::Generator, "calls coroutine function " + fname + "()");
  const bool generator = co->co_flags & CO_GENERATOR;  // bound now, run as it is consumed
  if (static_cast<int>(frames_.size()) > opt_.inline_depth)
    stop(Break::InlineDepth, fname + "() at depth " + std::to_string(frames_.size()));
  // pijit's own recursion walks data (HyperMap over nested tuples) and is bounded by the inline
  // depth. So does a user method reached again on another object the frame's data holds (an outer
  // container's construct calling an inner one's, a tree of blocks): each level is an object read
  // along its own guarded path, the recursion ends where the data does, and the inline depth
  // bounds it. A user function calling itself otherwise (a plain function, or a method on an
  // object already in the chain: a cycle) is refused: it would unroll per argument value.
  if (!is_library_code(func)) {
    const bool walks_data = self && plain_instance(self) && node_of(self) >= 0;
    for (SimFrame* f : frames_) {
      if (f->code != co) continue;
      if (!walks_data) stop(Break::Recursion, fname + "()");
      if (!f->self || f->self == self) {
        PyObject* qual = reinterpret_cast<PyFunctionObject*>(func)->func_qualname;
        stop(Break::Recursion, (qual && PyUnicode_Check(qual) ? py::text(qual) : fname) +
                                   std::string("() again on the same ") + Py_TYPE(self)->tp_name + " object");
      }
    }
  }
  auto owned = std::make_unique<SimFrame>();
  SimFrame& fr = *owned;
  fr.code = co;
  fr.func = func;
  fr.self = self;
  fr.library = is_library_code(func);
  fr.globals = PyFunction_GET_GLOBALS(func);
  if (values_.created(func, Kind::Function)) fr.globals_node = values_.find(func)->globals_node;
  else if (fr.globals == frames_.front()->globals) fr.globals_node = -1;
  else fr.globals_node = tree_.root(Access::Const, 0, fr.globals);
  load_code(fr, co);

  // Bind arguments as CPython does (positional, keywords, defaults, *args, **kwargs).
  int argc = co->co_argcount, kwonly = co->co_kwonlyargcount;
  bool varargs = co->co_flags & CO_VARARGS, varkw = co->co_flags & CO_VARKEYWORDS;
  fr.locals.assign(co->co_nlocals, nullptr);
  std::vector<PyObject*> pos;
  if (self) pos.push_back(self);
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  pos.insert(pos.end(), args.begin(), args.end() - nkw);
  auto type_error = [&](const std::string& m) { stop(Break::Raises, "TypeError: " + fname + "() " + m); };
  for (int i = 0; i < argc && i < static_cast<int>(pos.size()); ++i) fr.locals[i] = pos[i];
  if (static_cast<int>(pos.size()) > argc) {
    if (!varargs) type_error("takes " + std::to_string(argc) + " positional arguments but " + std::to_string(pos.size()) + " were given");
  }
  if (varargs) {
    Py_ssize_t n = std::max<Py_ssize_t>(0, static_cast<Py_ssize_t>(pos.size()) - argc);
    PyObject* t = own(PyTuple_New(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      Py_INCREF(pos[argc + i]);
      PyTuple_SET_ITEM(t, i, pos[argc + i]);
    }
    fr.locals[argc + kwonly] = t;
  }
  PyObject* kwdict = varkw ? own(PyDict_New()) : nullptr;
  if (varkw) fr.locals[argc + kwonly + (varargs ? 1 : 0)] = kwdict;
  int posonly = py::code_posonlyargcount(co);
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    PyObject* val = args[args.size() - nkw + k];
    int slot = -1;
    for (int i = 0; i < argc + kwonly; ++i)
      if (PyUnicode_Compare(py::code_varname(co, i), key) == 0) slot = i;
    if (slot >= 0 && slot < posonly) {  // only a **kwargs parameter may take its name
      if (!kwdict)
        type_error(std::string("got some positional-only arguments passed as keyword arguments: '") +
                   py::text(key) + "'");
      slot = -1;
    }
    if (slot >= 0) {
      if (fr.locals[slot]) type_error(std::string("got multiple values for argument '") + py::text(key) + "'");
      fr.locals[slot] = val;
    } else if (kwdict) {
      PyDict_SetItem(kwdict, key, val);
    } else {
      type_error(std::string("got an unexpected keyword argument '") + py::text(key) + "'");
    }
  }
  // The function's body and the defaults it used are what the graph assumed of it, also when it
  // was reached through a class or a closure (a Const path: other guards fix which function).
  PyObject* defaults = PyFunction_GET_DEFAULTS(func);
  PyObject* kwdefaults = PyFunction_GET_KW_DEFAULTS(func);
  // A function the frame made (MAKE_FUNCTION) is new on every call: what it holds was simulated.
  int fnode = node_of(func);
  if (fnode < 0 && !fr.library && !values_.created(func, Kind::Function)) fnode = tree_.root(Access::Const, 0, func);
  auto attr_node = [&](const char* attr) { return tree_.child(fnode, Access::FuncAttr, own(PyUnicode_InternFromString(attr))); };
  if (fnode >= 0 && !fr.library) {
    Py_INCREF(co);
    tree_.add_check(attr_node("__code__"), {CheckKind::Id, reinterpret_cast<PyObject*>(co), 0, {}});
  }
  Py_ssize_t ndef = defaults ? PyTuple_GET_SIZE(defaults) : 0;
  for (int i = 0; i < argc; ++i) {
    if (fr.locals[i]) continue;
    if (i < argc - ndef)
      type_error(std::string("missing required argument '") + py::text(py::code_varname(co, i)) + "'");
    Py_ssize_t k = i - (argc - ndef);
    PyObject* d = PyTuple_GET_ITEM(defaults, k);
    if (fnode >= 0) {  // f.__defaults__ reassigned, or a mutable default changed
      int dn = attr_node("__defaults__");
      Py_INCREF(&PyTuple_Type);
      tree_.add_check(dn, {CheckKind::Length, reinterpret_cast<PyObject*>(&PyTuple_Type), ndef, {}});
      d = wrap(d, tree_.child(dn, Access::Item, own(PyLong_FromSsize_t(k))));
    }
    fr.locals[i] = d;
  }
  for (int i = argc; i < argc + kwonly; ++i) {
    if (fr.locals[i]) continue;
    PyObject* name = py::code_varname(co, i);
    PyObject* d = kwdefaults ? PyDict_GetItem(kwdefaults, name) : nullptr;
    if (!d) type_error(std::string("missing required keyword-only argument '") + py::text(name) + "'");
    if (fnode >= 0) d = wrap(d, tree_.child(attr_node("__kwdefaults__"), Access::Item, name));
    fr.locals[i] = d;
  }
  // Cells: fresh ones for cellvars (an argument that is also a cellvar starts in its cell), the
  // closure's for freevars (real cells from outside are read through a guarded path).
  int ncell = static_cast<int>(py::code_ncells(co));
  for (int i = 0; i < ncell; ++i) {
    PyObject* cell = own(PyCell_New(nullptr));
    values_.created_cell(cell);
    PyObject* cname = py::code_cellname(co, i);
    for (int a = 0; a < argc + kwonly + (varargs ? 1 : 0) + (varkw ? 1 : 0); ++a)
      if (PyUnicode_Compare(py::code_varname(co, a), cname) == 0) PyCell_Set(cell, fr.locals[a]);
    fr.cells.push_back(cell);
  }
  PyObject* closure = PyFunction_GET_CLOSURE(func);
  for (Py_ssize_t i = 0; closure && i < PyTuple_GET_SIZE(closure); ++i) {
    PyObject* cell = PyTuple_GET_ITEM(closure, i);
    const Value* known = values_.find(cell);
    if (known && known->kind == Kind::Cell) {  // made (or mirrored) by this capture
      fr.cells.push_back(cell);
      continue;
    }
    // A real cell reached before (two closures of one factory, or one called twice) has one
    // stand-in, so a nonlocal store through one closure is what the other reads.
    auto seen = real_cells_.find(cell);
    if (seen != real_cells_.end() && seen->second.root) {
      // The captured function's own free variable, in a closure it made from a tuple of real
      // cells (a resume function gets LOAD_CLOSURE's tuple on its stack): its stand-in, as
      // LOAD_CLOSURE would have given, loaded from the frame (a new cell on every call).
      SimFrame& root = *frames_.front();
      for (size_t k = 0; k < root.cells.size(); ++k)
        if (root.cells[k] == seen->second.mirror) load_deref(root, static_cast<int>(k), false);
      fr.cells.push_back(seen->second.mirror);
      continue;
    }
    PyObject* mine = own(PyCell_New(nullptr));
    values_.mirror(mine, -1, Kind::Cell);  // stands for a real cell: writes to it would be lost
    if (PyCell_GET(cell)) {
      PyObject* contents = own(PyUnicode_InternFromString("cell_contents"));
      // Through the function (func.__closure__[i]) when it has a path: a cell cannot be weakly
      // referenced, and a guard holding it would keep its contents alive.
      int cnode = fnode >= 0 ? tree_.child(attr_node("__closure__"), Access::Item, own(PyLong_FromSsize_t(i)))
                             : tree_.root(Access::Const, 0, cell);
      if (seen != real_cells_.end() && !seen->second.root) {
        if (seen->second.node != cnode) tree_.add_same_as(seen->second.node, cnode, true);
        fr.cells.push_back(seen->second.mirror);
        continue;
      }
      PyCell_Set(mine, wrap(PyCell_GET(cell), tree_.child(cnode, Access::Attr, contents)));
      if (fnode >= 0) values_.mirror(mine, cnode, Kind::Cell);  // a nonlocal store replays through it
      if (seen == real_cells_.end()) real_cells_[cell] = {mine, cnode, false};
    }
    fr.cells.push_back(mine);
  }
  if (generator) return make_generator(std::move(owned));
  PyObject* result = run_frame(fr);
  if (frames_.size() == 1 && !fr.library && graph_.nodes().size() > fr.ops_at_entry) called_.emplace_back(co, points_);
  return result;
}

// An int or float read from the frame: a copy whose value is guarded once something uses it
// (guard_scalars); until then only its type, and it is rebuilt from the frame where it is live.
PyObject* Simulator::frame_scalar(PyObject* obj, int node) {
  PyObject*& copy = copy_of_[obj];  // one object read twice stays one object (`p is q`)
  if (!copy) {
    own((Py_INCREF(obj), obj));
    copy = own(PyLong_CheckExact(obj) ? py::fresh_int(obj) : PyFloat_FromDouble(PyFloat_AS_DOUBLE(obj)));
    scalar_origin_[copy] = obj;
    unguarded_.insert(copy);
    dynamic_.number_read(obj, copy, node);
  }
  std::vector<int>& nodes = scalar_nodes_[copy];
  if (std::find(nodes.begin(), nodes.end(), node) != nodes.end()) return copy;
  nodes.push_back(node);
  Py_INCREF(Py_TYPE(obj));
  tree_.add_check(node, {CheckKind::Type, reinterpret_cast<PyObject*>(Py_TYPE(obj)), 0, {}});
  if (unguarded_.count(copy)) {
    // Read by an instruction that uses it (an item compared, an attribute read for an op); or
    // along a second path (or the small-int cache's object twice), where which path a later call
    // changes could not be told apart: the value is guarded on every path.
    // A liftable number that an attribute read pushes waits too (`x * self.scale`): it is
    // guarded where it is used, and at a graph break (plan_return), where a rebuild from the
    // frame could see a replayed store.
    if (nodes.size() > 1 || (!moving_ && !(dynamic_.liftable(copy) && reading_attribute()))) {
      guard_scalars(copy);
    } else if (!moving_) {
      attr_read_.insert(copy);
    }
  } else {  // used already: this path is guarded as the others are
    Py_INCREF(copy);
    tree_.add_check(node, {CheckKind::Equal, copy, 0, {}});
    values_.read_constant(copy, node);
  }
  return copy;
}

// `v` is used (an instruction other than a move consumes it): the value it had is guarded, for
// it and for what it holds.
void Simulator::guard_scalars(PyObject* v, int depth) {
  // (an int the current call hands to a reshape's shape waits for what the call does with it)
  if (dynamic_.shape_pending(v)) return;
  auto it = unguarded_.find(v);
  if (it != unguarded_.end() && dynamic_.data(v) && opt_.allow_breaks && !planning_break_)
    stop(Break::DataDependent,
         "uses as a Python value a number the interpreter computed at the graph break before (it differs each call)");
  if (it != unguarded_.end()) {
    unguarded_.erase(it);
    dynamic_.scalar_specialised(v);
    for (int node : scalar_nodes_.at(v)) {
      Py_INCREF(v);
      tree_.add_check(node, {CheckKind::Equal, v, 0, {}});
      values_.read_constant(v, node);
    }
    return;
  }
  if (depth < 8 && (tuple_like(v) || PyList_CheckExact(v)))
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i) guard_scalars(PySequence_Fast_GET_ITEM(v, i), depth + 1);
}

bool Simulator::holds_unguarded(PyObject* v, int depth) const {
  if (unguarded_.count(v)) return true;
  if (depth < 8 && (PyTuple_Check(v) || PyList_CheckExact(v)))  // (a namedtuple too)
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i)
      if (holds_unguarded(PySequence_Fast_GET_ITEM(v, i), depth + 1)) return true;
  return false;
}

bool Simulator::reading_attribute() const {
  const SimFrame* fr = frames_.empty() ? nullptr : frames_.back();
  return fr && !fr->library && fr->pc > 0 && (*fr->ins)[fr->pc - 1].op == Opcode::LOAD_ATTR;
}

ReturnPlan Simulator::plan_return(PyObject* v) {
  Nesting nest(this);
  ReturnPlan p;
  const Value* bound = values_.method(v);
  if (bound && !bound->replayed) {  // a with-block's __exit__ on the stack at a break: mgr.__exit__ again
    p.kind = ReturnPlan::Method;
    Py_INCREF(bound->name);
    p.obj = bound->name;
    p.items.push_back(plan_return(bound->owner));
    return p;
  }
  if (attr_read_.count(v)) guard_scalars(v);
  dynamic_.guard_derived(v);  // held as a constant: what it came from is guarded
  if (unguarded_.count(v)) {  // a number passed through: what the frame held
    p.kind = ReturnPlan::Source;
    p.index = scalar_nodes_.at(v).front();
    return p;
  }
  if (!scalar_nodes_.empty() && scalar_nodes_.count(v)) {
    // A number the frame held, its value guarded: its own object, as Python hands it on
    // (`copy.copy(x) is x`; capture's copy is another int): along its path when that is a local
    // (no replayed store changes one), else the object capture read there (equal, by the guard).
    const int node = scalar_nodes_.at(v).front();
    p.kind = tree_.node(node).access == guards::Access::Local ? ReturnPlan::Source : ReturnPlan::Const;
    p.index = node;
    if (p.kind == ReturnPlan::Const) {
      p.obj = scalar_origin_.at(v);
      Py_INCREF(p.obj);
    }
    return p;
  }
  if (const Value* real = values_.frame_tensor(v)) {
    p.kind = ReturnPlan::Source;
    p.index = real->node;
    return p;
  }
  if (py::is_tensor(v)) {
    const Tensor& t = py::unwrap(v);
    int id;
    if (t.is_symbolic()) {
      id = static_cast<int>(t.sym());
      if (stale_views_.count(id)) stop(Break::InplaceUpdate, "returns a view of a tensor written in place since");
      if (views_written_back(id))
        stop(Break::InplaceUpdate, "returns a view of a Parameter assigned in this graph (it must alias the Parameter)");
    } else {
      // A tensor made during capture comes back as a fresh copy of a graph constant: of the base
      // class only, and sharing storage with nothing. A subclass (numpy_lite's arrays) would lose
      // its class; at a graph break a view would stop aliasing what it views.
      if (Py_TYPE(v) != py::tensor_class())
        stop(Break::UnreconstructibleResult, std::string("a ") + Py_TYPE(v)->tp_name + " made during capture");
      if (planning_break_) stop(Break::UnreconstructibleResult, "a tensor made during capture, live at a graph break");
      auto it = const_ids_.find(t.impl());
      id = it != const_ids_.end() ? it->second : graph_.add_const(t);
      const_ids_[t.impl()] = id;
    }
    std::vector<int> outs = graph_.outputs();
    int k = -1;
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i] == id) k = static_cast<int>(i);
    if (k < 0) {
      k = static_cast<int>(outs.size());
      outs.push_back(id);
      graph_.set_outputs(outs);
    }
    p.kind = ReturnPlan::Output;
    p.index = k;
    // A graph value library code gave a class of its own (numpy_lite's ndarray sets __class__):
    // the output gets it back.
    if (!py::own_attrs(v).empty())  // attributes library code set (numpy_lite's dtype)
      stop(Break::UnreconstructibleResult, std::string("a ") + Py_TYPE(v)->tp_name + " with instance attributes");
    if (t.is_symbolic() && Py_TYPE(v) != py::tensor_class()) {
      if (!is_library_type(Py_TYPE(v)))
        stop(Break::UnreconstructibleResult, std::string("a graph value of class ") + Py_TYPE(v)->tp_name);
      Py_INCREF(Py_TYPE(v));
      p.obj = reinterpret_cast<PyObject*>(Py_TYPE(v));
    }
    return p;
  }
  int node = node_of(v);
  const Value* rec = values_.find(v);  // capture's copy of a frame container is that container
  if (node < 0 && rec && rec->origin == Origin::Mirror && rec->kind == Kind::Other) node = rec->node;
  if (node >= 0) {
    p.kind = ReturnPlan::Source;
    p.index = node;
    return p;
  }
  // A builtin function is a constant; a builtin method bound to an object (`push = out.append`)
  // is not: it must stay bound to the object the rewritten code rebuilds.
  bool builtin_function = PyCFunction_Check(v) && (!PyCFunction_GET_SELF(v) || PyModule_Check(PyCFunction_GET_SELF(v)));
  if (PyCFunction_Check(v) && !builtin_function) {
    PyObject* self = PyCFunction_GET_SELF(v);
    if (!PyList_CheckExact(self) && !PyDict_CheckExact(self) && Py_TYPE(self) != &PySet_Type)
      stop(Break::UnreconstructibleResult, std::string("a method bound to a ") + Py_TYPE(self)->tp_name);
    p.kind = ReturnPlan::Method;
    p.obj = PyUnicode_InternFromString(reinterpret_cast<PyCFunctionObject*>(v)->m_ml->ml_name);
    p.items.push_back(plan_return(self));
    return p;
  }
  if (PySlice_Check(v)) {  // (del LOG[:] replayed) immutable: its numbers, guarded, make it a constant
    auto* sl = reinterpret_cast<PySliceObject*>(v);
    for (PyObject* part : {sl->start, sl->stop, sl->step}) {
      if (!is_constant(part)) stop(Break::UnreconstructibleResult, std::string("a slice holding a ") + Py_TYPE(part)->tp_name);
      guard_scalars(part);
    }
    Py_INCREF(v);
    p.kind = ReturnPlan::Const;
    p.obj = v;
    return p;
  }
  // A tuple capture built (BUILD_TUPLE, tuple(), a library call's result such as x.shape) is a new
  // object on every call of plain Python: it is rebuilt, not loaded as one constant. Only the
  // constants of the code simulated (LOAD_CONST gives those very objects, also nested) and
  // constants read from the frame stay themselves.
  auto in_code_consts = [&] {
    auto in_consts = [v](auto& self, PyObject* consts) -> bool {
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); ++i) {
        PyObject* c = PyTuple_GET_ITEM(consts, i);
        if (c == v || (PyTuple_CheckExact(c) && self(self, c))) return true;
      }
      return false;
    };
    for (const auto& d : decoded_)
      if (in_consts(in_consts, d.first->co_consts)) return true;
    return false;
  };
  const Value* known = values_.find(v);
  const bool from_frame = known && known->origin == Origin::Frame;
  bool made_tuple = PyTuple_CheckExact(v) && PyTuple_GET_SIZE(v) > 0 && !from_frame && !in_code_consts();
  // A constant the frame held (a global tuple, a str attribute) is that object, as Python hands it
  // on (`f()[1] is K`): another object equal to it passes the guard, and after a cache load the
  // one capture read is a copy. It is loaded along its path when nothing replayed before this
  // point can have rebound it since the guards read it (no effect yet), and when no code's
  // constant is the same object (LOAD_CONST may have given it: that one is the constant).
  // Not when it was read along two paths (one interned str at two places: which one it came from
  // is not known), nor through a function's __defaults__ (the guards read those unaudited; a
  // LOAD_ATTR would raise the audit event on every call).
  auto reloadable = [&] {
    const int node = known->const_nodes.front();
    for (int n : known->const_nodes)
      if (n != node) return false;
    for (int n = node; n >= 0; n = tree_.node(n).parent)
      if (tree_.node(n).access == Access::FuncAttr || tree_.node(n).access == Access::Context) return false;
    return true;
  };
  if (from_frame && known->kind == Kind::Constant && !known->const_nodes.empty() && r_.plan.effects.empty() &&
      v != Py_None && v != Py_True && v != Py_False && v != Py_Ellipsis && v != Py_NotImplemented &&
      reloadable() && !in_code_consts()) {
    p.kind = ReturnPlan::Source;
    p.index = known->const_nodes.front();
    return p;
  }
  if ((is_constant(v) && !made_tuple && (unguarded_.empty() || !holds_unguarded(v))) || PyType_Check(v) || PyModule_Check(v) || builtin_function || (PyRange_Check(v) && planning_break_) ||
      (is_library_type(Py_TYPE(v)) && std::strcmp(Py_TYPE(v)->tp_name, "Type") == 0)) {  // pijit dtypes
    Py_INCREF(v);
    p.kind = ReturnPlan::Const;
    p.obj = v;
    return p;
  }
  if (tuple_like(v) || PyList_CheckExact(v) || PyDict_CheckExact(v) || made_object(v)) {
    // Value numbering: a container met again is the same object, not a copy.
    auto seen = ret_slots_.find(v);
    if (seen != ret_slots_.end()) {
      if (!seen->second.second) stop(Break::UnreconstructibleResult, "a container that holds itself");
      p.kind = ReturnPlan::Shared;
      p.index = seen->second.first;
      r_.plan.ret_shared[p.index] = 1;
      return p;
    }
    p.slot = static_cast<int>(r_.plan.ret_shared.size());
    r_.plan.ret_shared.push_back(0);
    ret_slots_[v] = {p.slot, false};
  }
  if (tuple_like(v) || PyList_CheckExact(v)) {
    p.kind = PyTuple_Check(v) ? ReturnPlan::Tuple : ReturnPlan::List;
    if (named_tuple(v)) {  // rebuilt as tuple.__new__(P, items): the class is the one guarded at capture
      Py_INCREF(Py_TYPE(v));
      p.obj = reinterpret_cast<PyObject*>(Py_TYPE(v));
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i) p.items.push_back(plan_return(PySequence_Fast_GET_ITEM(v, i)));
    ret_slots_[v].second = true;
    return p;
  }
  if (PyDict_CheckExact(v)) {
    p.kind = ReturnPlan::Dict;
    PyObject* keys = PyDict_Keys(v);
    if (!keys) python_error("return");
    p.obj = PyList_AsTuple(keys);
    Py_DECREF(keys);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(p.obj); ++i) {
      PyObject* k = PyTuple_GET_ITEM(p.obj, i);
      if (!is_constant(k)) stop(Break::UnreconstructibleResult, "a dict with non-constant keys");
      p.items.push_back(plan_return(PyDict_GetItem(v, k)));
    }
    ret_slots_[v].second = true;
    return p;
  }
  if (made_object(v)) {
    p.kind = ReturnPlan::Object;
    std::vector<std::pair<PyObject*, PyObject*>> state = object_state(v);
    PyObject* names = own(PyTuple_New(static_cast<Py_ssize_t>(state.size())));
    for (size_t i = 0; i < state.size(); ++i) {
      Py_INCREF(state[i].first);
      PyTuple_SET_ITEM(names, static_cast<Py_ssize_t>(i), state[i].first);
      p.items.push_back(plan_return(state[i].second));
    }
    p.obj = Py_BuildValue("(OO)", reinterpret_cast<PyObject*>(Py_TYPE(v)), names);
    ret_slots_[v].second = true;
    return p;
  }
  stop(Break::UnreconstructibleResult, std::string("a ") + Py_TYPE(v)->tp_name + " object");
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
