#include "guards/guard_tree.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include "kernels/dtype.h"
#include "py/py_common.h"
#include "py/rebinds.h"
#include "pyext/tensor_object.h"

namespace pj::guards {

bool compare_sizes(int64_t a, int op, int64_t b) {
  switch (op) {
    case Py_LT: return a < b;
    case Py_LE: return a <= b;
    case Py_EQ: return a == b;
    case Py_NE: return a != b;
    case Py_GT: return a > b;
    default: return a >= b;
  }
}

std::string fact_text(int symbol, const SizeFact& f) {
  static const char* const ops[] = {" < ", " <= ", " == ", " != ", " > ", " >= "};
  return "s" + std::to_string(symbol) + ops[f.op] + std::to_string(f.value);
}

namespace {

std::atomic<int64_t> g_context_mode{1};  // (64 bits: the fast pass reads it as a word)
bool g_fast_pass = true;

bool plain_repr(PyObject* o, int depth) {
  if (depth > 8) return false;
  PyTypeObject* t = Py_TYPE(o);
  if (o == Py_None || o == Py_Ellipsis || PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyUnicode_CheckExact(o) ||
      PyBytes_CheckExact(o) || PyComplex_CheckExact(o) || PyBool_Check(o))
    return true;
  if (PyType_Check(o)) return Py_TYPE(o) == &PyType_Type;  // a metaclass's __repr__ is user code
  if (PyTuple_CheckExact(o) || PyList_CheckExact(o)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    for (Py_ssize_t i = 0; i < n && i < 16; ++i)
      if (!plain_repr(PySequence_Fast_GET_ITEM(o, i), depth + 1)) return false;
    return n <= 16;
  }
  (void)t;
  return PyCFunction_Check(o);  // "<built-in method append of list object at ...>": no repr of its self
}

std::string repr_of(PyObject* o) {
  if (!o) return "<undefined>";
  if (PyFunction_Check(o)) {  // the short name: a qualname inside a method would be cut off below
    char buf[64];
    snprintf(buf, sizeof buf, " at %p>", static_cast<void*>(o));
    return "<function " + py::text(reinterpret_cast<PyFunctionObject*>(o)->func_name) + buf;
  }
  // Explaining a guard must run no user code (a __repr__ may change state): only builtin values
  // whose repr is builtin, all the way down, are shown by repr.
  if (!plain_repr(o, 0)) {
    char buf[64];
    snprintf(buf, sizeof buf, " object at %p>", static_cast<void*>(o));
    return std::string("<") + Py_TYPE(o)->tp_name + buf;
  }
  PyObject* r = PyObject_Repr(o);
  if (!r) {
    PyErr_Clear();
    return std::string("<") + Py_TYPE(o)->tp_name + " object>";
  }
  std::string out = py::text(r);
  Py_DECREF(r);
  if (out.size() > 60) out = out.substr(0, 57) + "...";
  return out;
}

// The object an Id check holds (borrowed), or nullptr once a weakly held one died.
PyObject* id_target(const Check& c) {
  if (c.n != 1) return c.ref;
  PyObject* o = PyWeakref_GET_OBJECT(c.ref);
  return o == Py_None ? nullptr : o;
}

std::string type_name(PyObject* o) { return o ? Py_TYPE(o)->tp_name : "<undefined>"; }
std::string class_name(PyObject* t) {
  return t ? reinterpret_cast<PyTypeObject*>(t)->tp_name : "<a class that no longer exists>";
}
// "type C" for a class a check holds, or what is left of one that died.
std::string class_text(PyObject* t) {
  return t ? std::string("type ") + reinterpret_cast<PyTypeObject*>(t)->tp_name : "<a class that no longer exists>";
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Equality of constants as Python code could tell them apart: the exact same type at every level
// (1, 1.0 and True differ, also inside tuples), floats bit for bit (0.0 is not -0.0; a NaN equals
// itself). == alone would let a graph folded for one value run for another.
bool same_constant(PyObject* a, PyObject* b) {
  if (a == b) return true;
  if (Py_TYPE(a) != Py_TYPE(b)) return false;
  if (PyFloat_CheckExact(a)) return same_bits(PyFloat_AS_DOUBLE(a), PyFloat_AS_DOUBLE(b));
  if (PyComplex_CheckExact(a)) {
    Py_complex x = PyComplex_AsCComplex(a), y = PyComplex_AsCComplex(b);
    return same_bits(x.real, y.real) && same_bits(x.imag, y.imag);
  }
  if (PyTuple_CheckExact(a)) {
    if (PyTuple_GET_SIZE(a) != PyTuple_GET_SIZE(b)) return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(a); ++i)
      if (!same_constant(PyTuple_GET_ITEM(a, i), PyTuple_GET_ITEM(b, i))) return false;
    return true;
  }
  int eq = PyObject_RichCompareBool(a, b, Py_EQ);  // int, str, bytes: no user code
  if (eq < 0) PyErr_Clear();
  return eq == 1;
}

bool plain_constant(PyObject* o) {
  if (o == Py_None || o == Py_True || o == Py_False || o == Py_Ellipsis) return true;
  if (PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o) || PyUnicode_CheckExact(o) ||
      PyBytes_CheckExact(o))
    return true;
  if (!PyTuple_CheckExact(o)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
    if (!plain_constant(PyTuple_GET_ITEM(o, i))) return false;
  return true;
}

// A dict key or set element as Python would tell it apart without running user code: constants
// exactly (1, 1.0 and True are one key to the dict, but not to code that reads the key back),
// everything else by identity.
bool same_key(PyObject* a, PyObject* b) {
  if (a == b) return true;
  if (!b) return false;  // a key held weakly that died (held() gives nullptr): it matches nothing
  return plain_constant(a) && plain_constant(b) && same_constant(a, b);
}

bool set_holds_exactly(PyObject* set, PyObject* items) {
  if (PySet_GET_SIZE(set) != PyTuple_GET_SIZE(items)) return false;
  Py_ssize_t pos = 0;
  PyObject* k;
  Py_hash_t h;
  while (_PySet_NextEntry(set, &pos, &k, &h)) {
    bool found = false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items) && !found; ++i) found = same_key(k, PyTuple_GET_ITEM(items, i));
    if (!found) return false;
  }
  return true;
}

std::string identity(PyObject* o) {
  if (!o) return "<undefined>";
  char buf[64];
  snprintf(buf, sizeof buf, " at %p>", static_cast<void*>(o));
  return std::string("<") + Py_TYPE(o)->tp_name + buf;
}

// Borrowed or new reference to the node's object; new ones are appended to `owned`. Inlined into
// check(), the hot path (a second caller, check_all, made the compiler stop inlining it: 5% of a
// small graph's call).
// References the check holds until it returns: objects a path made.
using Owned = absl::InlinedVector<PyObject*, 16>;

// Where root paths start: a frame's fast locals, cells, globals and builtins...
struct FrameRoots {
  py::Frame* f;
  PyObject* local(int i) const { return py::frame_local(f, i); }
  PyObject* deref(int i) const { return py::frame_deref(f, i); }
  PyObject* globals() const { return py::frame_globals(f); }
  PyObject* builtins() const { return py::frame_builtins(f); }
};
// ... or a call's arguments, before any frame exists (CallView).
struct CallRoots {
  const CallView& v;
  PyObject* local(int i) const { return i < v.nlocals ? v.locals[i] : nullptr; }
  PyObject* deref(int i) const {
    const int k = i - v.ncells;  // (a cell variable has no cell before the frame makes it)
    PyObject* closure = PyFunction_GET_CLOSURE(v.function);
    return k >= 0 && closure && k < PyTuple_GET_SIZE(closure) ? PyCell_GET(PyTuple_GET_ITEM(closure, k)) : nullptr;
  }
  PyObject* globals() const { return PyFunction_GET_GLOBALS(v.function); }
  PyObject* builtins() const {  // (none to be found: an empty dict, so that the path resolves to nothing)
    static PyObject* const none = PyDict_New();
    PyObject* b = py::function_builtins(v.function);
    return b ? b : none;
  }
};

// A name an exact module's own dict answers as getattr would: not a dunder (ModuleType's and
// object's data descriptors, __dict__ and __class__, come first), and no module __getattr__ runs
// for a name the dict holds.
inline bool module_dict_answers(PyObject* key) {
  return PyUnicode_Check(key) && !(PyUnicode_GET_LENGTH(key) >= 2 && PyUnicode_READ_CHAR(key, 0) == '_' &&
                                   PyUnicode_READ_CHAR(key, 1) == '_');
}

// The object at node n; *generic is set when a lookup that may run Python code ran (a getattr, a
// mapping's own __getitem__).
template <class Roots>
__attribute__((always_inline)) inline PyObject* resolve(const GuardNode& n, PyObject* parent, const Roots& roots,
                                                        Owned& owned, bool* generic) {
  switch (n.access) {
    case Access::Local: return roots.local(n.index);
    case Access::Deref: return roots.deref(n.index);
    case Access::Global: return PyDict_GetItem(roots.globals(), n.key);
    case Access::Builtin: return PyDict_GetItem(roots.builtins(), n.key);
    case Access::Context: return nullptr;
    case Access::Const: return held(n.key);
    default: break;
  }
  if (!parent) return nullptr;
  PyObject* r = nullptr;
  switch (n.access) {
    case Access::DictAttr:
      return py::own_attr(parent, n.key);  // (3.11: read inline where the object keeps them)
    case Access::Item: {
      PyObject* key = held(n.key);
      if (!key) return nullptr;  // an object key that died
      // (a negative index counts from the end, as the code's own subscript does: lst[-1])
      if (PyTuple_CheckExact(parent) && PyLong_CheckExact(key)) {
        Py_ssize_t i = PyLong_AsSsize_t(key), n = PyTuple_GET_SIZE(parent);
        if (i < 0) i += n;
        return i >= 0 && i < n ? PyTuple_GET_ITEM(parent, i) : nullptr;
      }
      if (PyList_CheckExact(parent) && PyLong_CheckExact(key)) {
        Py_ssize_t i = PyLong_AsSsize_t(key), n = PyList_GET_SIZE(parent);
        if (i < 0) i += n;
        return i >= 0 && i < n ? PyList_GET_ITEM(parent, i) : nullptr;
      }
      // dicts, and subclasses that keep dict's lookup (OrderedDict: Cell._params, Cell._cells)
      if (PyDict_Check(parent) && Py_TYPE(parent)->tp_as_mapping->mp_subscript == PyDict_Type.tp_as_mapping->mp_subscript)
        return PyDict_GetItem(parent, key);
      *generic = true;
      r = PyObject_GetItem(parent, key);
      break;
    }
    case Access::Attr:
      if (PyModule_CheckExact(parent) && module_dict_answers(n.key))
        if (PyObject* v = PyDict_GetItem(PyModule_GetDict(parent), n.key)) return v;
      *generic = true;
      r = PyObject_GetAttr(parent, n.key);
      break;
    case Access::FuncAttr: {
      bool known = false;
      return PyFunction_Check(parent) ? function_field(parent, n.key, &known) : nullptr;
    }
    default: break;
  }
  if (!r) {
    PyErr_Clear();  // a path that no longer resolves is a failed guard, not an error
    return nullptr;
  }
  owned.push_back(r);
  return r;
}

// Which name that capture looked up on class t now resolves differently ("type(self).helper:
// <function ...> -> <function ...>"); the class as a whole when none does (e.g. a new name).
void explain_class_change(PyTypeObject* t, PyObject* seen, const std::string& path, GuardFailure* why) {
  Py_ssize_t pos = 0;
  PyObject *name, *was;
  while (PyDict_Next(seen, &pos, &name, &was)) {
    // was: () when the class lacked the name, else (the value held weakly, its repr then).
    bool had = PyTuple_GET_SIZE(was) > 0;
    PyObject* before = had ? held(PyTuple_GET_ITEM(was, 0)) : nullptr;
    PyObject* now = _PyType_Lookup(t, name);
    if (now == before && (had == (now != nullptr))) continue;
    why->path = path + "." + py::text(name);
    why->before = !had ? "undefined" : before ? repr_of(before) : py::text(PyTuple_GET_ITEM(was, 1));
    why->after = now ? repr_of(now) : "undefined";
    return;
  }
  why->path = path;
  why->before = std::string("class ") + t->tp_name + " as captured";
  why->after = "modified (a class attribute was set)";
}

// Whether o passes c; on failure describes it relative to the node's path. FAIL builds the texts
// only when a description is asked for: a lookup that walks past entries whose checks fail (a
// number that changed) must not repr the values on every call.
#define FAIL(...) (why ? fail(__VA_ARGS__) : false)
// A TensorMeta check's passing path: o is a tensor of the check's class, dtype, shape (symbolic
// dims and their facts) and layout.
inline bool meta_passes(const Check& c, PyObject* o) {
  if (Py_TYPE(o) != reinterpret_cast<PyTypeObject*>(c.ref)) return false;
  const Tensor& t = py::unwrap(o);
  if (t.dtype() != c.meta.dtype || t.ndim() != static_cast<int>(c.meta.shape.size())) return false;
  for (int d = 0; d < t.ndim(); ++d)
    if (!(!c.symbols.empty() && c.symbols[d] >= 0 ? t.dim(d) >= 2 : t.dim(d) == c.meta.shape[d])) return false;
  for (const SizeFact& f : c.facts)
    if (!compare_sizes(t.dim(f.dim), f.op, f.value)) return false;
  return !c.n || t.is_contiguous() == (c.n == 1);  // n: 0 layout not read, 1 contiguous, 2 not
}

bool run_check(const Check& c, PyObject* o, GuardFailure* why, const GuardTree& tree, int node, PyObject* const* objs) {
  auto fail = [&](std::string suffix, std::string before, std::string after) {
    if (why) {
      why->path = tree.path(node) + suffix;
      why->before = std::move(before);
      why->after = std::move(after);
    }
    return false;
  };
  switch (c.kind) {
    case CheckKind::Absent:
      return o == nullptr || FAIL("", "undefined", "defined as " + repr_of(o));
    case CheckKind::AmpDtype:
      return amp_dtype() == c.ref || FAIL("", repr_of(c.ref), repr_of(amp_dtype()));
    case CheckKind::Mode: {
      int m = context_mode();
      auto name = [](int64_t k) { return std::string(k == 0 ? "GRAPH_MODE" : "PYNATIVE_MODE"); };
      return m == c.n || FAIL("", name(c.n), name(m));
    }
    case CheckKind::DictVersions: {
      PyObject* dicts = PyTuple_GET_ITEM(c.ref, 0);
      const uint64_t* versions = reinterpret_cast<const uint64_t*>(PyBytes_AS_STRING(PyTuple_GET_ITEM(c.ref, 1)));
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dicts); ++i)
        if (py::dict_version(PyTuple_GET_ITEM(dicts, i)) != versions[i]) {
          PyObject* name = PyDict_GetItemString(PyTuple_GET_ITEM(dicts, i), "__name__");
          std::string mod = name && PyUnicode_Check(name) ? py::text(name) : "pijit.?";
          return FAIL(mod.substr(5), "unmodified", "a name in it was rebound");  // the path is "pijit"
        }
      return true;
    }
    case CheckKind::SameAs: {
      bool want = c.ref == Py_True, same = o == objs[c.n];
      auto text = [](bool b) { return std::string(b ? "True" : "False"); };
      return same == want || FAIL(" is " + tree.path(static_cast<int>(c.n)), text(want), text(same));
    }
    default: break;
  }
  if (!o) return FAIL("", c.kind == CheckKind::Id ? identity(id_target(c)) : repr_of(c.ref), "<undefined>");
  switch (c.kind) {
    case CheckKind::Type: {
      PyObject* want = held(c.ref);
      return Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(want) || FAIL("", class_text(want), "type " + type_name(o));
    }
    case CheckKind::Id: {
      PyObject* want = id_target(c);
      return (want && o == want) || FAIL("", want ? identity(want) : "<an object that no longer exists>", identity(o));
    }
    case CheckKind::Equal:
      if (same_constant(o, c.ref)) return true;
      // A Python number that changed value (same exact type): the recompile may lift it
      if (why && Py_TYPE(o) == Py_TYPE(c.ref) && (PyFloat_CheckExact(o) || PyLong_CheckExact(o))) why->scalar = true;
      return FAIL("", repr_of(c.ref), repr_of(o));
    case CheckKind::TensorMeta: {
      if (meta_passes(c, o)) return true;  // (below: which part failed, in words)
      if (Py_TYPE(o) != reinterpret_cast<PyTypeObject*>(c.ref))
        return FAIL("", std::string("type ") + reinterpret_cast<PyTypeObject*>(c.ref)->tp_name, "type " + type_name(o));
      const Tensor& t = py::unwrap(o);
      if (t.dtype() != c.meta.dtype) return FAIL(".dtype", dtype_name(c.meta.dtype), dtype_name(t.dtype()));
      if (t.ndim() != static_cast<int>(c.meta.shape.size()))
        return FAIL(".shape", shape_str(c.meta.shape), shape_str(t.shape()));
      for (int d = 0; d < t.ndim(); ++d) {
        const bool symbolic = !c.symbols.empty() && c.symbols[d] >= 0;
        if (symbolic ? t.dim(d) >= 2 : t.dim(d) == c.meta.shape[d]) continue;
        if (why) {
          why->tensor_path = tree.path(node);
          why->dim = d;
        }
        return FAIL(".shape[" + std::to_string(d) + "]",
                    symbolic ? "s" + std::to_string(c.symbols[d]) + " >= 2" : std::to_string(c.meta.shape[d]),
                    std::to_string(t.dim(d)));
      }
      for (const SizeFact& f : c.facts) {
        if (compare_sizes(t.dim(f.dim), f.op, f.value)) continue;
        if (why) {
          why->tensor_path = tree.path(node);
          why->dim = f.dim;
        }
        return FAIL(".shape[" + std::to_string(f.dim) + "]", fact_text(c.symbols[f.dim], f), std::to_string(t.dim(f.dim)));
      }
      if (c.n && t.is_contiguous() != (c.n == 1))  // n: 0 layout not read, 1 contiguous, 2 not
        return FAIL(".is_contiguous()", c.n == 1 ? "True" : "False", c.n == 1 ? "False" : "True");
      return true;
    }
    case CheckKind::Length: {
      if (Py_TYPE(o) != reinterpret_cast<PyTypeObject*>(c.ref))
        return FAIL("", std::string("type ") + reinterpret_cast<PyTypeObject*>(c.ref)->tp_name, "type " + type_name(o));
      Py_ssize_t n = PyObject_Length(o);
      if (n < 0) PyErr_Clear();
      if (n == c.n) return true;
      if (why) {
        why->path = "len(" + tree.path(node) + ")";
        why->before = std::to_string(c.n);
        why->after = std::to_string(n);
      }
      return false;
    }
    case CheckKind::TypeVersion: {
      // Valid version tags are unique to one type (a counter never reused): the tag alone says
      // "this class, unmodified", without reading the weakly held class back.
      if (py::type_version(Py_TYPE(o)) == static_cast<unsigned int>(c.n)) return true;
      auto* t = reinterpret_cast<PyTypeObject*>(held(PyTuple_GET_ITEM(c.ref, 0)));
      if (!t || Py_TYPE(o) != t) return FAIL("", class_text(reinterpret_cast<PyObject*>(t)), "type " + type_name(o));
      if (py::type_version(t) == static_cast<unsigned int>(c.n)) return true;
      if (why) explain_class_change(t, PyTuple_GET_ITEM(c.ref, 1), "type(" + tree.path(node) + ")", why);
      return false;
    }

    case CheckKind::ClassVersion: {
      if (PyType_Check(o) && py::type_version(reinterpret_cast<PyTypeObject*>(o)) == static_cast<unsigned int>(c.n))
        return true;  // as for TypeVersion
      auto* t = reinterpret_cast<PyTypeObject*>(held(PyTuple_GET_ITEM(c.ref, 0)));
      if (!t || o != reinterpret_cast<PyObject*>(t))
        return FAIL("", t ? identity(reinterpret_cast<PyObject*>(t)) : class_text(nullptr), identity(o));
      if (py::type_version(t) == static_cast<unsigned int>(c.n)) return true;
      if (why) explain_class_change(t, PyTuple_GET_ITEM(c.ref, 1), tree.path(node), why);
      return false;
    }
    case CheckKind::DictKeys: {
      if (!PyDict_Check(o)) return FAIL("", "dict", "type " + type_name(o));
      Py_ssize_t n = PyList_GET_SIZE(c.ref), pos = 0, i = 0;
      bool ok = PyDict_GET_SIZE(o) == n;
      if (ok && PyODict_Check(o) && Py_TYPE(o)->tp_iter == PyODict_Type.tp_iter && py::odict_layout_known()) {
        // its own order, not its table's (move_to_end): read from its nodes
        const py::OdictNode* node = py::odict_first(o);
        for (; ok && i < n; ++i) {
          ok = node && same_key(node->key, held(PyList_GET_ITEM(c.ref, i)));
          if (ok) node = node->next;
        }
        ok = ok && !node;
      } else if (ok && PyODict_Check(o)) {
        py::Ref it(py::odict_keys_iter(o));  // (a subclass with its own __iter__ fails)
        ok = it.get() != nullptr;
        for (; ok && i < n; ++i) {
          py::Ref k(PyIter_Next(it.get()));
          ok = k && same_key(k.get(), held(PyList_GET_ITEM(c.ref, i)));
        }
        if (PyErr_Occurred()) PyErr_Clear();
      } else {
        PyObject *k, *v;
        while (ok && PyDict_Next(o, &pos, &k, &v)) ok = same_key(k, held(PyList_GET_ITEM(c.ref, i++)));
      }
      if (!ok && why) {
        PyObject* keys = py::dict_keys_in_order(o);
        fail(".keys()", repr_of(c.ref), keys ? repr_of(keys) : "<unreadable>");
        if (!keys) PyErr_Clear();
        Py_XDECREF(keys);
      }
      return ok;
    }
    case CheckKind::Compare: {
      static const char* const ops[] = {" < ", " <= ", " == ", " != ", " > ", " >= "};
      const int r = PyObject_RichCompareBool(o, c.ref, static_cast<int>(c.n & 7));
      if (r < 0) PyErr_Clear();  // (numbers of the guarded type: never, but a check must not raise)
      if (r >= 0 && r == static_cast<int>(c.n >> 3)) return true;
      if (why) why->scalar = true;
      return FAIL("", std::string(c.n >> 3 ? "" : "not ") + tree.path(node) + ops[c.n & 7] + repr_of(c.ref), repr_of(o));
    }
    case CheckKind::SetContents: {
      PyObject* tp = PyTuple_GET_ITEM(c.ref, 0);
      if (reinterpret_cast<PyObject*>(Py_TYPE(o)) != tp)
        return FAIL("", std::string("type ") + reinterpret_cast<PyTypeObject*>(tp)->tp_name, "type " + type_name(o));
      return set_holds_exactly(o, PyTuple_GET_ITEM(c.ref, 1)) || FAIL("", repr_of(PyTuple_GET_ITEM(c.ref, 1)), repr_of(o));
    }
    default: break;
  }
  PJ_CHECK(false) << "unhandled guard check kind";
  return false;
}
#undef FAIL

bool same_check(const Check& a, const Check& b) {
  if (a.kind == CheckKind::Type && b.kind == CheckKind::Type) return held(a.ref) == held(b.ref);
  if (a.kind != b.kind || a.n != b.n || !(a.meta == b.meta) || a.symbols != b.symbols || a.facts != b.facts) return false;
  if (a.ref == b.ref) return true;
  if ((a.kind != CheckKind::Equal && a.kind != CheckKind::Compare) || !a.ref || !b.ref) return false;
  return same_constant(a.ref, b.ref);
}

}  // namespace

// The weak references hold_weakly makes carry this callback (it does nothing), which tells them
// apart from a user's weakref objects that a check keeps as they are (a WeakKeyDictionary's keys).
static PyObject* hold_marker() {
  static PyMethodDef def = {"pijit_guard_ref", [](PyObject*, PyObject*) -> PyObject* { Py_RETURN_NONE; }, METH_O,
                            nullptr};
  static PyObject* fn = PyCFunction_New(&def, nullptr);
  return fn;
}

PyObject* hold_weakly(PyObject* o) {
  bool static_type = PyType_Check(o) && !PyType_HasFeature(reinterpret_cast<PyTypeObject*>(o), Py_TPFLAGS_HEAPTYPE);
  if (!static_type && PyType_SUPPORTS_WEAKREFS(Py_TYPE(o)) && hold_marker()) {
    if (PyObject* w = PyWeakref_NewRef(o, hold_marker())) return w;
    PyErr_Clear();
  }
  Py_INCREF(o);
  return o;
}

PyObject* held(PyObject* ref) {
  if (!PyWeakref_CheckRef(ref)) return ref;
  PyObject* o = PyWeakref_GET_OBJECT(ref);
  if (o == Py_None) return nullptr;  // dead (its callback is gone too): ours or not, it matches nothing
  return reinterpret_cast<PyWeakReference*>(ref)->wr_callback == hold_marker() ? o : ref;
}

PyObject* function_field(PyObject* func, PyObject* name, bool* known) {
  auto* f = reinterpret_cast<PyFunctionObject*>(func);
  const std::string text = py::text(name);  // (no name below has a backslash: an odd name is unknown)
  const char* s = text.c_str();
  *known = true;
  if (!std::strcmp(s, "__code__")) return f->func_code;
  if (!std::strcmp(s, "__defaults__")) return f->func_defaults;
  if (!std::strcmp(s, "__kwdefaults__")) return f->func_kwdefaults;
  if (!std::strcmp(s, "__globals__")) return f->func_globals;
  if (!std::strcmp(s, "__closure__")) return f->func_closure;
  if (!std::strcmp(s, "__name__")) return f->func_name;
  if (!std::strcmp(s, "__qualname__")) return f->func_qualname;
  if (!std::strcmp(s, "__module__")) return f->func_module;
  if (!std::strcmp(s, "__doc__")) return f->func_doc;
  *known = false;
  return nullptr;
}

void set_fast_pass(bool on) { g_fast_pass = on; }
namespace {
// (initial-exec: read without a call, as the fast pass reads it on every hit)
__attribute__((tls_model("initial-exec"))) thread_local PyObject* t_amp_dtype = nullptr;
}  // namespace
PyObject* amp_dtype() { return t_amp_dtype ? t_amp_dtype : Py_None; }
PyObject* set_amp_dtype(PyObject* dtype) {
  PyObject* old = t_amp_dtype ? t_amp_dtype : (Py_INCREF(Py_None), Py_None);
  if (dtype != Py_None) Py_INCREF(dtype);
  t_amp_dtype = dtype == Py_None ? nullptr : dtype;
  return old;
}

void set_context_mode(int mode) { g_context_mode.store(mode, std::memory_order_relaxed); }
int context_mode() { return static_cast<int>(g_context_mode.load(std::memory_order_relaxed)); }

GuardTree::~GuardTree() {
  for (auto& n : nodes_) {
    Py_XDECREF(n.key);
    for (auto& c : n.checks) Py_XDECREF(c.ref);
  }
}

// Path keys are names and constants (compared as constants are, so 1 and True stay two items) or,
// for Const roots, objects (compared by identity: two closure cells with equal contents are two
// paths, and comparing them would run the contents' __eq__).
static bool same_path_key(PyObject* a, PyObject* b) {
  if (a == b) return true;
  return a && b && plain_constant(a) && plain_constant(b) && same_constant(a, b);
}

// Equal path keys hash alike: constants by value (same_path_key compares them by value and type),
// other keys (a globals dict, a cell) by identity.
static Py_hash_t path_key_hash(PyObject* k) {
  if (!k) return 0;
  if (!plain_constant(k)) return _Py_HashPointer(k);
  Py_hash_t h = PyObject_Hash(k);
  if (h == -1) PyErr_Clear();
  return h;
}

int GuardTree::find_or_add(int parent, Access access, int index, PyObject* key) {
  PJ_CHECK(!loaded_) << "a guard tree loaded from the compile cache takes no new paths";
  auto& same = index_[std::make_tuple(parent, static_cast<int>(access), index, path_key_hash(key))];
  // An item key that is an object (d[obj]) and a constant root (an inlined function, a class) are
  // held weakly: the cache must not keep them alive. Once one died, the path resolves to nothing
  // (no dict holds the key any more) and its guards fail.
  bool weak = (access == Access::Item && key && !plain_constant(key)) || access == Access::Const;
  for (int i : same)
    if (same_path_key(weak ? held(nodes_[i].key) : nodes_[i].key, key)) return i;
  const int node = append_node(parent, access, index, key);
  same.push_back(node);
  return node;
}

int GuardTree::append_node(int parent, Access access, int index, PyObject* key) {
  const bool weak = (access == Access::Item && key && !plain_constant(key)) || access == Access::Const;
  if (weak) key = hold_weakly(key);
  else Py_XINCREF(key);
  nodes_.push_back({access, index, parent, key, {}});
  prepared_ = false;
  return size() - 1;
}

int GuardTree::root(Access access, int index, PyObject* key) { return find_or_add(-1, access, index, key); }

int GuardTree::child(int parent, Access access, PyObject* key) {
  PJ_CHECK(parent >= 0 && parent < size()) << "bad guard node " << parent;
  PJ_CHECK(key) << "a child path needs a key";
  return find_or_add(parent, access, 0, key);
}

void GuardTree::add_check(int node, Check c) {
  if (c.kind == CheckKind::DictKeys) {  // keys that are objects are compared by identity: hold them weakly
    Py_ssize_t n = PyList_GET_SIZE(c.ref);
    PyObject* keys = PyList_New(n);
    for (Py_ssize_t i = 0; keys && i < n; ++i) {
      PyObject* k = PyList_GET_ITEM(c.ref, i);
      PyList_SET_ITEM(keys, i, plain_constant(k) ? (Py_INCREF(k), k) : hold_weakly(k));
    }
    if (keys) {
      Py_DECREF(c.ref);
      c.ref = keys;
    } else {
      PyErr_Clear();
    }
  }
  if (c.kind == CheckKind::Type && PyType_HasFeature(reinterpret_cast<PyTypeObject*>(c.ref), Py_TPFLAGS_HEAPTYPE)) {
    PyObject* weak = hold_weakly(c.ref);  // a class made at run time may die: the cache must not keep it
    Py_DECREF(c.ref);
    c.ref = weak;
  }
  if (c.kind == CheckKind::Id && c.n == 0 && PyType_SUPPORTS_WEAKREFS(Py_TYPE(c.ref))) {
    PyObject* weak = PyWeakref_NewRef(c.ref, nullptr);  // shared per object: duplicates still compare equal
    if (weak) {
      Py_DECREF(c.ref);
      c.ref = weak;
      c.n = 1;
    } else {
      PyErr_Clear();
    }
  }
  for (const Check& have : nodes_[node].checks)
    if (same_check(have, c)) {
      Py_XDECREF(c.ref);
      return;
    }
  nodes_[node].checks.push_back(c);
  prepared_ = false;
}

void GuardTree::add_same_as(int a, int b, bool same) {
  if (a == b) return;
  if (a < b) std::swap(a, b);  // checked at the later node, when the earlier one is resolved
  PyObject* ref = same ? Py_True : Py_False;
  Py_INCREF(ref);
  add_check(a, {CheckKind::SameAs, ref, b, {}});
}

void GuardTree::drop_check(int node, CheckKind kind, PyObject* ref) {
  auto& checks = nodes_[node].checks;
  for (auto it = checks.begin(); it != checks.end(); ++it)
    if (it->kind == kind && (kind == CheckKind::Id ? id_target(*it) : held(it->ref)) == ref) {
      Py_XDECREF(it->ref);
      checks.erase(it);
      prepared_ = false;
      return;
    }
}

Check* GuardTree::find_check(int node, CheckKind kind) {
  prepared_ = false;  // the caller may change what it finds
  for (Check& c : nodes_[node].checks)
    if (c.kind == kind) return &c;
  return nullptr;
}

int GuardTree::num_checks() const {
  int k = 0;
  for (auto& n : nodes_) k += static_cast<int>(n.checks.size());
  return k;
}

// A check that passes whenever its node holds the object it held when it last passed.
static bool follows_from_identity(const Check& c) {
  switch (c.kind) {
    case CheckKind::Id:
    case CheckKind::Equal:  // constants are immutable
    case CheckKind::Compare:
    case CheckKind::Absent: return true;
    case CheckKind::Type: {  // only instances of heap types (and modules) can change __class__
      auto* t = reinterpret_cast<PyTypeObject*>(held(c.ref));
      return t && !PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE) && !PyType_IsSubtype(t, &PyModule_Type);
    }
    default: return false;
  }
}

void GuardTree::prepare() const {
  std::vector<char> parent_of_item(nodes_.size(), 0), parent_of_attr(nodes_.size(), 0), has_child(nodes_.size(), 0);
  std::vector<char> compared(nodes_.size(), 0);  // a SameAs check reads its object
  for (const GuardNode& n : nodes_) {
    if (n.parent >= 0) {
      has_child[n.parent] = 1;
      if (n.access == Access::Item) parent_of_item[n.parent] = 1;
      if (n.access == Access::DictAttr) parent_of_attr[n.parent] = 1;
    }
    for (const Check& c : n.checks)
      if (c.kind == CheckKind::SameAs) compared[c.n] = 1;
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const GuardNode& n = nodes_[i];
    n.version = 0;
    n.last = nullptr;
    n.last_known = false;
    bool keys = false;
    for (const Check& c : n.checks) keys = keys || c.kind == CheckKind::DictKeys;
    n.version_of = parent_of_item[i] || keys ? 2 : parent_of_attr[i] ? 1 : 0;
    n.from_versioned = n.parent >= 0 && ((n.access == Access::Item && nodes_[n.parent].version_of == 2) ||
                                         (n.access == Access::DictAttr && nodes_[n.parent].version_of == 1));
    bool all_stable = true;
    for (const Check& c : n.checks) {
      c.stable = follows_from_identity(c);
      all_stable = all_stable && c.stable;
    }
    n.skippable = n.from_versioned && all_stable && !has_child[i] && !compared[i] && n.slot < 0;
  }
  fast_ok_ = false;
  prepared_ = true;
}

void GuardTree::keep_resolved(const std::vector<int>& nodes) {
  PJ_CHECK(num_slots_ == 0 && nodes.size() <= INT16_MAX) << "keep_resolved: once, for at most 32767 nodes";
  for (size_t k = 0; k < nodes.size(); ++k) {
    PJ_CHECK(nodes_[nodes[k]].slot < 0) << "keep_resolved: node " << nodes[k] << " named twice";
    nodes_[nodes[k]].slot = static_cast<int16_t>(k);
  }
  num_slots_ = static_cast<int>(nodes.size());
  prepared_ = false;
}

// The version tag of the dict a versioned node's children are read from; 0 when there is none.
static inline uint64_t dict_tag(int version_of, PyObject* o) {
  if (version_of == 1) {
    PyObject* dict = py::existing_dict_inline(o);
    return dict ? py::dict_version(dict) : 0;
  }
  // Item children read a dict through PyDict_GetItem only when its lookup is dict's own (resolve)
  bool plain = PyDict_Check(o) && Py_TYPE(o)->tp_as_mapping->mp_subscript == PyDict_Type.tp_as_mapping->mp_subscript;
  return plain ? py::dict_version(o) : 0;
}
static inline uint64_t node_version(const GuardNode& n, PyObject* o) { return dict_tag(n.version_of, o); }

// What a call saw of a dict node's object, read as the node is resolved (a later path's Python
// code may free it): its class, and whether it is an OrderedDict iterating its list (then its
// list's state) or one iterating its own way.
struct DictSeen {
  PyTypeObject* type = nullptr;
  size_t od_state = 0;
  bool od_tracked = false, od_other = false;
};
static inline DictSeen see_dict(PyObject* o) {
  DictSeen d;
  d.type = Py_TYPE(o);
  if (PyODict_Check(o)) {
    d.od_tracked = d.type->tp_iter == PyODict_Type.tp_iter && py::odict_layout_known();
    d.od_other = !d.od_tracked;
    d.od_state = d.od_tracked ? py::odict_state(o) : 0;
  }
  return d;
}

// Whether running check c on o may run Python code: a length from a class's own __len__, keys
// read through a mapping's own iteration.
static inline bool check_may_run_python(const Check& c, PyObject* o) {
  if (c.kind == CheckKind::Length) return PyType_HasFeature(Py_TYPE(o), Py_TPFLAGS_HEAPTYPE);
  if (c.kind == CheckKind::DictKeys)
    return !PyDict_CheckExact(o) && !(PyODict_Check(o) && Py_TYPE(o)->tp_iter == PyODict_Type.tp_iter);
  return false;
}

// Whether a versioned node's tag `v` (0: none) fixes what its children read: a tag does; so does
// no object at all (every child reads nothing), and an object without an instance dict where that
// means no own attributes (its DictAttr children read nothing).
static inline bool tag_decides(int version_of, uint64_t v, PyObject* o) {
  return v || !o || (version_of == 1 && py::kNoDictMeansNoOwnAttrs);
}

// The fast pass's ops, in node order, from what a passing full walk just recorded (objs, and the
// nodes' tags). A versioned node whose tag decides what its children read gets a Tag op, and its
// children are the objects recorded: of their checks only those identity does not imply run (a
// tensor's shape is implied too while no tensor object was rebound), and its keys follow from the
// tag (an OrderedDict's order from its list state too). Every other node is resolved as the full
// walk resolves it, with all its checks. A node is read only when something asks for its object.
//
// A node whose object is known (pinned: read from such a dict, a constant, or a root whose dict tag
// decides, compared by address first) has what it verifies written as machine words (Word): its
// dict's pointer and tag, its class, its class's flags and version (once per class). A level of
// words reads only memory the levels before it vouched for: a tag that holds is that dict's,
// unmodified (tags are never reused), and so are the objects it holds.
class GuardTree::Recorder {
 public:
  Recorder(const GuardTree& t, PyObject* const* objs) : t_(t), objs_(objs), n_(t.size()) {}

  // false: what the walk checked is not what memory holds now (Python code a path ran changed a
  // class after its check), so no words can be recorded.
  bool record() {
    classify();
    for (int i = 0; i < n_; ++i)
      if (needed_[i]) node(i);
    flush();
    for (int i = 0; i < n_; ++i)
      if (known(i) && reads_[i]) t_.known_.emplace_back(i, objs_[i]);
    return consistent_;
  }

 private:
  const GuardNode& nd(int i) const { return t_.nodes_[i]; }
  bool known(int i) const { return pinned_[i] && (same_[i] || nd(i).access == Access::Const); }
  bool runs(int i, const Check& c) const {
    return !(c.kind == CheckKind::DictKeys && decides_[i]) && !(same_[i] && c.stable);
  }

  void classify() {
    decides_.assign(n_, 0), same_.assign(n_, 0), needed_.assign(n_, 0), pinned_.assign(n_, 0);
    reads_.assign(n_, 0), proven_.assign(n_, 0);
    std::vector<char> compared(n_, 0);
    for (int i = 0; i < n_; ++i) {
      const GuardNode& n = nd(i);
      decides_[i] = n.version_of && tag_decides(n.version_of, n.version, objs_[i]) && !n.od_other;
      same_[i] = n.from_versioned && decides_[n.parent];
      for (const Check& c : n.checks)
        if (c.kind == CheckKind::SameAs) compared[c.n] = 1;
    }
    for (int i = n_ - 1; i >= 0; --i) {
      const GuardNode& n = nd(i);
      for (const Check& c : n.checks) needed_[i] = needed_[i] || runs(i, c);
      needed_[i] = needed_[i] || decides_[i] || n.slot >= 0 || compared[i];
      if (needed_[i] && n.parent >= 0 && !same_[i]) needed_[n.parent] = 1;
    }
    // Python code a path ran during the walk may have changed a dict after its tag was read, and
    // freed what it held: an object is read here only where that cannot be (a frame's local, a
    // constant still held) or where its dict's tag, re-read parents first, is still the walk's.
    std::vector<char> safe(n_, 0);
    for (int i = 0; i < n_ && consistent_; ++i) {
      const GuardNode& n = nd(i);
      PyObject* o = objs_[i];
      safe[i] = o && (n.access == Access::Local || (n.access == Access::Const && held(n.key) == o) ||
                      (same_[i] && safe[n.parent]));
      if (safe[i] && decides_[i] && !still_as_walked(n, o)) consistent_ = false;
      pinned_[i] = py::kHasDictVersions && needed_[i] && safe[i] &&
                   (same_[i] || n.access == Access::Const || (decides_[i] && n.version != 0));
    }
    t_.fast_.clear();
    t_.words_.clear();
    t_.known_.clear();
    t_.late_slots_.clear();
  }

  // A deciding node's dict as the walk left it: the tag (which is 0 where a dict subclass's lookup
  // is not dict's own), the class, an OrderedDict's list state.
  static bool still_as_walked(const GuardNode& n, PyObject* o) {
    if (dict_tag(n.version_of, o) != n.version) return false;
    if (n.version_of != 2) return true;
    const DictSeen d = see_dict(o);
    return d.type == n.dict_type && d.od_tracked == n.od_tracked && d.od_state == n.od_state;
  }

  void word(const void* addr, uint64_t expect, int level) {
    run_.emplace_back(level, Word{static_cast<const char*>(addr), expect});
  }
  // The words since the last op, one Words op per level.
  void flush() {
    std::stable_sort(run_.begin(), run_.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t k = 0; k < run_.size(); ++k) {
      if (k == 0 || run_[k].first != run_[k - 1].first) {
        FastOp w;
        w.kind = FastOp::Words;
        w.a = t_.words_.size();
        t_.fast_.push_back(w);
      }
      t_.words_.push_back(run_[k].second);
      t_.fast_.back().b = t_.words_.size();
    }
    run_.clear();
  }
  void op(const FastOp& o) {
    flush();
    t_.fast_.push_back(o);
    reads_[o.node] = 1;
  }

  // Class t is the one the walk checked, with the version it checked (0: any): its flags and tag.
  void class_words(PyTypeObject* t, unsigned int version, int level) {
    consistent_ = consistent_ && (!version || py::type_version(t) == version) && py::type_version(t);
    if (std::find(versioned_.begin(), versioned_.end(), t) != versioned_.end()) return;
    versioned_.push_back(t);
    // (whole words: another flag, or the padding after the 32-bit tag, changing too only sends
    // a call to the full walk)
    static_assert(offsetof(PyTypeObject, tp_version_tag) + 8 <= sizeof(PyTypeObject), "a word past the class");
    word(&t->tp_flags, Word::at(&t->tp_flags), level);
    word(&t->tp_version_tag, Word::at(&t->tp_version_tag), level);
  }
  // o's class is `want` (the walk's). A live object's class changes only by __class__ assignment,
  // which CPython allows between heap classes (and module classes); a watched class counts it in
  // g_rebinds (py/rebinds.h). Returns the level from which the class may be read.
  int type_word(PyObject* o, PyTypeObject* want, int level, bool always) {
    consistent_ = consistent_ && want && Py_TYPE(o) == want;
    if (!consistent_) return level;  // (nothing is armed: the words are never read)
    const bool can_change = PyType_HasFeature(want, Py_TPFLAGS_HEAPTYPE) || PyType_IsSubtype(want, &PyModule_Type);
    if (!always && (!can_change || py::class_watched(want))) return level;
    word(&o->ob_type, reinterpret_cast<uintptr_t>(want), level);
    return level + 1;
  }

  void node(int i) {
    const GuardNode& n = nd(i);
    PyObject* o = objs_[i];
    bool context_words = n.access == Access::Context && n.slot < 0;  // (no object read at all)
    for (const Check& c : n.checks)
      context_words = context_words && (c.kind == CheckKind::Mode || c.kind == CheckKind::DictVersions ||
                                        c.kind == CheckKind::AmpDtype);
    if (!known(i) && !context_words) {
      FastOp load;
      load.node = i;
      load.kind = same_[i] ? FastOp::Last : pinned_[i] ? FastOp::Pin : FastOp::Resolve;
      load.a = same_[i] || pinned_[i] ? reinterpret_cast<uintptr_t>(o) : 0;
      op(load);
      if (n.parent >= 0 && !same_[i]) reads_[n.parent] = 1;
    } else if (known(i) && !same_[i] && o != n.key) {  // (a constant held weakly: alive)
      word(&reinterpret_cast<PyWeakReference*>(n.key)->wr_object, reinterpret_cast<uintptr_t>(o), 0);
      proven_[i] = 1;
    }
    if (same_[i]) proven_[i] = proven_[n.parent];  // (past the parent's tag)
    // A root the Pin op found at the recorded address may be another object made there since: its
    // class and dict pointer are read whatever g_rebinds says (a dict made since, even one reusing
    // the old dict's memory, has a tag never seen before).
    const bool by_address = pinned_[i] && !known(i);
    const int at = by_address ? type_word(o, Py_TYPE(o), proven_[i], true) : proven_[i];
    if (n.slot >= 0) {
      if (pinned_[i]) {
        t_.late_slots_.emplace_back(n.slot, o);
      } else {
        FastOp slot;
        slot.kind = FastOp::Slot;
        slot.node = i;
        slot.check = n.slot;
        op(slot);
      }
    }
    if (decides_[i]) tag(i, o, at, by_address);
    absl::InlinedVector<int, 4> rest;  // checks that stay ops, after the words
    for (size_t k = 0; k < n.checks.size(); ++k)
      if (runs(i, n.checks[k]) && !check_words(i, n.checks[k], o, at, by_address)) rest.push_back(static_cast<int>(k));
    for (int k : rest) check_op(i, k);
  }

  // The dict a versioned node's children are read from: words where its object is pinned.
  void tag(int i, PyObject* o, int at, bool by_address) {
    const GuardNode& n = nd(i);
    if (!pinned_[i]) {
      FastOp tag;
      tag.kind = FastOp::Tag;
      tag.node = i;
      tag.version_of = n.version_of;
      tag.od_tracked = n.od_tracked;
      tag.dict_type = n.version_of == 2 ? n.dict_type : nullptr;
      tag.a = n.version;
      tag.b = n.od_state;
      op(tag);
      return;
    }
    int children = at + 1;  // (the level from which what its dict holds may be read)
    if (n.version_of == 1) {
      if (PyObject** slot = py::dict_slot(o)) {
        // (a dict made where there was none is no assignment: its absence is a word always)
        // (a class not watched may be swapped, uncounted, for one whose __dict__ is not either)
        const bool slot_word = !*slot || by_address || !py::dict_watched(Py_TYPE(o)) || !py::class_watched(Py_TYPE(o));
        if (slot_word) word(slot, reinterpret_cast<uintptr_t>(*slot), at);
        if (*slot) word(py::dict_version_addr(*slot), n.version, at + slot_word);
        children = at + slot_word + 1;
      }
    } else {
      const int cls = by_address ? (consistent_ = consistent_ && Py_TYPE(o) == n.dict_type, at)
                                 : type_word(o, n.dict_type, at, false);
      word(py::dict_version_addr(o), n.version, at);
      // (a dict subclass's own lookup: its class unmodified)
      if (PyType_HasFeature(n.dict_type, Py_TPFLAGS_HEAPTYPE) && consistent_)
        class_words(n.dict_type, py::ensure_type_version(n.dict_type), cls);
      bool keys = false;  // (an OrderedDict's order matters only to its keys' check)
      for (const Check& c : n.checks) keys = keys || c.kind == CheckKind::DictKeys;
      if (n.od_tracked && keys) word(&reinterpret_cast<py::OdictLayout*>(o)->state, n.od_state, at);
    }
    proven_[i] = children;
  }

  // Check c of node i as words; false: it stays an op.
  bool check_words(int i, const Check& c, PyObject* o, int at, bool by_address) {
    switch (c.kind) {
      case CheckKind::Mode: word(&g_context_mode, static_cast<uint64_t>(c.n), 0); return true;
      case CheckKind::DictVersions: {  // (the dicts are the check's own)
        PyObject* dicts = PyTuple_GET_ITEM(c.ref, 0);
        const auto* versions = reinterpret_cast<const uint64_t*>(PyBytes_AS_STRING(PyTuple_GET_ITEM(c.ref, 1)));
        for (Py_ssize_t d = 0; d < PyTuple_GET_SIZE(dicts); ++d)
          word(py::dict_version_addr(PyTuple_GET_ITEM(dicts, d)), versions[d], 0);
        return true;
      }
      default: break;
    }
    if (!pinned_[i]) return false;
    // (o is the object the walk checked while the words before hold, and a tensor's shape and
    // dtype are what they were while g_rebinds stands still)
    switch (c.kind) {
      case CheckKind::TensorMeta:
      case CheckKind::Type:
      case CheckKind::TypeVersion: {
        auto* want = reinterpret_cast<PyTypeObject*>(c.kind == CheckKind::Type ? held(c.ref)
                                                     : c.kind == CheckKind::TensorMeta ? c.ref : (PyObject*)Py_TYPE(o));
        const int cls = by_address ? (consistent_ = consistent_ && Py_TYPE(o) == want, at) : type_word(o, want, at, false);
        if (c.kind == CheckKind::TypeVersion) class_words(want, static_cast<unsigned int>(c.n), cls);
        return true;
      }
      case CheckKind::ClassVersion:
        if (!PyType_Check(o)) return false;
        class_words(reinterpret_cast<PyTypeObject*>(o), static_cast<unsigned int>(c.n), at);
        return true;
      case CheckKind::Id: return true;
      case CheckKind::SameAs: return pinned_[c.n];  // (two known objects)
      default: return false;
    }
  }

  void check_op(int i, int k) {
    const Check& c = nd(i).checks[k];
    FastOp o;
    o.kind = FastOp::Run;
    o.node = i;
    o.check = k;
    if (c.kind == CheckKind::AmpDtype) {  // (per thread)
      o.kind = FastOp::Amp;
      o.a = reinterpret_cast<uintptr_t>(c.ref);
    } else if (same_[i] && c.kind == CheckKind::TensorMeta) {
      o.kind = FastOp::TypeIs;
      o.a = reinterpret_cast<uintptr_t>(c.ref);
    } else if (c.kind == CheckKind::TensorMeta) {
      o.kind = FastOp::Meta;
    } else if (c.kind == CheckKind::TypeVersion || c.kind == CheckKind::ClassVersion) {
      // (run_check when the tag differs: it decides)
      o.kind = c.kind == CheckKind::TypeVersion ? FastOp::TypeVersion : FastOp::ClassVersion;
      o.a = static_cast<unsigned int>(c.n);
    }
    op(o);
    if (c.kind == CheckKind::SameAs) reads_[c.n] = 1;
  }

  const GuardTree& t_;
  PyObject* const* objs_;
  const int n_;
  std::vector<char> decides_, same_, needed_, pinned_, reads_;
  std::vector<int> proven_;  // per pinned node: the level from which its memory may be read
  std::vector<std::pair<int, Word>> run_;
  absl::InlinedVector<PyTypeObject*, 8> versioned_;  // classes whose version words are in
  bool consistent_ = true;
};

bool GuardTree::record_fast(PyObject* const* objs) const { return Recorder(*this, objs).record(); }

// Whether every word in [w, end) holds, read without a branch per word.
bool GuardTree::level_holds(const Word* w, const Word* end) {
  uint64_t a = 0, b = 0;
  for (; w + 2 <= end; w += 2) {
    a |= w[0].now() ^ w[0].expect;
    b |= w[1].now() ^ w[1].expect;
  }
  if (w < end) a |= w[0].now() ^ w[0].expect;
  return (a | b) == 0;
}

GuardTree::Fast GuardTree::check_fast(py::Frame* f, PyObject** out) const { return run_fast(FrameRoots{f}, out); }

GuardTree::Fast GuardTree::check_call(const CallView& v, PyObject** out) const {
  if (!prepared_ || !fast_ok_ || fast_rebinds_ != py::g_rebinds || !g_fast_pass) return Fast::Changed;
  if (out) std::fill(out, out + num_slots_, nullptr);
  const Fast r = run_fast(CallRoots{v}, out);
  fast_passes_ += r == Fast::Pass;
  return r;
}

template <class Roots>
GuardTree::Fast GuardTree::run_fast(const Roots& roots, PyObject** out) const {
  // The objects resolved, per node: the tree's own buffer (a pass that a path's Python code
  // re-enters takes one of its own).
  std::unique_ptr<PyObject*[]> own;
  const bool takes_scratch = !scratch_busy_ && scratch_size_ >= nodes_.size();
  PyObject** objs = scratch_.get();
  if (!takes_scratch) {
    own.reset(new PyObject*[nodes_.size() + 1]);
    objs = own.get();
  }
  // (while a pass reads the ops, a full walk that Python code in a path re-enters, on this thread
  // or another the GIL went to, does not record new ones: record_fast)
  struct Running {
    const GuardTree& t;
    bool scratch;
    Running(const GuardTree& tree, bool s) : t(tree), scratch(s) {
      ++t.passes_running_;
      if (scratch) t.scratch_busy_ = true;
    }
    ~Running() {
      --t.passes_running_;
      if (scratch) t.scratch_busy_ = false;
    }
  } running(*this, takes_scratch);
  for (const auto& k : known_) objs[k.first] = k.second;
  Owned owned;
  size_t words_ok = 0;  // words_[0, words_ok) held
  // The Tag ops passed so far. A lookup or check that may have run Python code (a property, a
  // mapping's own __getitem__, a class's __len__) may have changed what they verified, and freed
  // the objects they vouch for: they are verified again before the pass reads on.
  absl::InlinedVector<const FastOp*, 32> tags;
  auto tag_holds = [&](const FastOp& op) {
    PyObject* o = objs[op.node];
    const uint64_t v = o ? dict_tag(op.version_of, o) : 0;
    return v == op.a && tag_decides(op.version_of, v, o) && (!op.dict_type || Py_TYPE(o) == op.dict_type) &&
           (!op.od_tracked || py::odict_state(o) == op.b);
  };
  auto still_holds = [&]() {
    if (py::g_rebinds != fast_rebinds_) return false;  // (first: a dict a rebind freed is not read)
    for (size_t k = 0; k < words_ok; ++k)
      if (!words_[k].holds()) return false;
    for (const FastOp* t : tags)
      if (!tag_holds(*t)) return false;
    return true;
  };
  Fast r = Fast::Pass;
  for (const FastOp& op : fast_) {
    PyObject* o = objs[op.node];  // (Resolve and Last write it first)
    switch (op.kind) {
      case FastOp::Resolve: {
        const GuardNode& n = nodes_[op.node];
        bool generic = false;
        objs[op.node] = resolve(n, n.parent >= 0 ? objs[n.parent] : nullptr, roots, owned, &generic);
        if (!generic || still_holds()) continue;
        break;
      }
      case FastOp::Pin: {  // (held for the pass: Python code a later path runs may rebind its root)
        const GuardNode& n = nodes_[op.node];
        bool generic = false;
        PyObject* p = resolve(n, n.parent >= 0 ? objs[n.parent] : nullptr, roots, owned, &generic);
        objs[op.node] = p;
        if (p != reinterpret_cast<PyObject*>(op.a) || (generic && !still_holds())) break;
        if (!generic) owned.push_back((Py_INCREF(p), p));
        continue;
      }
      case FastOp::Words: {  // (one level: every word may be read)
        if (!level_holds(words_.data() + op.a, words_.data() + op.b)) break;
        words_ok = op.b;
        continue;
      }
      case FastOp::Last: objs[op.node] = reinterpret_cast<PyObject*>(op.a); continue;
      case FastOp::Slot:
        if (!o) break;  // (the full walk says why, or aborts)
        if (out) {
          Py_INCREF(o);
          out[op.check] = o;
        }
        continue;
      case FastOp::Tag:
        if (!tag_holds(op)) break;
        tags.push_back(&op);
        continue;
      case FastOp::TypeIs:
        if (Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(op.a)) continue;
        r = Fast::Fail;
        break;
      case FastOp::Amp:
        if (amp_dtype() == reinterpret_cast<PyObject*>(op.a)) continue;
        r = Fast::Fail;
        break;
      case FastOp::Meta:
        if (o && meta_passes(nodes_[op.node].checks[op.check], o)) continue;
        r = Fast::Fail;
        break;
      case FastOp::TypeVersion:
        if (o && py::type_version(Py_TYPE(o)) == op.a) continue;
        [[fallthrough]];
      case FastOp::ClassVersion:
        if (op.kind == FastOp::ClassVersion && o && PyType_Check(o) &&
            py::type_version(reinterpret_cast<PyTypeObject*>(o)) == op.a)
          continue;
        [[fallthrough]];
      case FastOp::Run: {
        const Check& c = nodes_[op.node].checks[op.check];
        const bool python = o && check_may_run_python(c, o);
        const bool pass = run_check(c, o, nullptr, *this, op.node, objs);
        if (python && !still_holds()) break;  // (what it vouched for moved: the full walk decides)
        if (pass) continue;
        r = Fast::Fail;
        break;
      }
    }
    if (r == Fast::Pass) r = Fast::Changed;
    break;
  }
  if (r == Fast::Pass && out)  // (before `owned` goes: a finalizer it runs may free them)
    for (const auto& s : late_slots_) {
      Py_INCREF(s.second);
      out[s.first] = s.second;
    }
  for (PyObject* p : owned) Py_DECREF(p);
  if (r != Fast::Pass && out)
    for (int k = 0; k < num_slots_; ++k) Py_CLEAR(out[k]);
  return r;
}

bool GuardTree::check(py::Frame* f, GuardFailure* why, PyObject** out) const {
  if (!prepared_) prepare();
  if (out) std::fill(out, out + num_slots_, nullptr);
  if (fast_ok_ && fast_rebinds_ == py::g_rebinds && g_fast_pass) {
    const Fast r = check_fast(f, out);
    if (r == Fast::Pass) return ++fast_passes_, true;
    if (r == Fast::Fail && !why) return false;  // (the full walk fails too, at that check or before)
    if (r == Fast::Changed) fast_ok_ = false;
  }
  const uint64_t rebinds = py::g_rebinds;
  // Nodes are created parents-first, so one forward pass resolves every path once.
  constexpr size_t kSmall = 128;
  PyObject* small[kSmall];
  uint64_t small_versions[kSmall];
  char small_read[kSmall];
  DictSeen small_seen[kSmall];
  std::vector<PyObject*> big;
  std::vector<uint64_t> big_versions;
  std::vector<char> big_read;
  std::vector<DictSeen> big_seen;
  PyObject** objs = small;
  uint64_t* versions = small_versions;  // per node: its dict's tag now, 0 when none or not read
  char* read = small_read;              // per node: resolved from its parent on this call
  DictSeen* seen = small_seen;          // per dict node: what this call saw of it (with versions)
  if (nodes_.size() > kSmall) {
    big.resize(nodes_.size());
    big_versions.resize(nodes_.size());
    big_read.resize(nodes_.size());
    big_seen.resize(nodes_.size());
    objs = big.data();
    versions = big_versions.data();
    read = big_read.data();
    seen = big_seen.data();
  }
  Owned owned;
  bool ok = true;
  bool generic = false;  // (resolve's flag: the walk reads every path its own way anyway)
  for (int i = 0; i < size() && ok; ++i) {
    const GuardNode& n = nodes_[i];
    // The same object as on the last call that passed: read from a dict unmodified since then.
    const bool same = n.from_versioned && versions[n.parent] && versions[n.parent] == nodes_[n.parent].version;
    versions[i] = 0;
    if (same && n.skippable) {
      objs[i] = nullptr;  // nothing reads it: no children, no SameAs
      read[i] = 0;
      continue;
    }
    // (the dict's entry is the object it held when the tag was recorded)
    read[i] = !(same && n.last_known);
    objs[i] = read[i] ? resolve(n, n.parent >= 0 ? objs[n.parent] : nullptr, FrameRoots{f}, owned, &generic) : n.last;
    if (out && n.slot >= 0 && objs[i]) {  // held from now: a later path's Python code cannot free it
      Py_INCREF(objs[i]);
      out[n.slot] = objs[i];
    }
    if (n.version_of && objs[i]) versions[i] = node_version(n, objs[i]);
    seen[i] = n.version_of == 2 && objs[i] ? see_dict(objs[i]) : DictSeen();
    const bool unmodified = versions[i] && versions[i] == n.version;
    // An OrderedDict's order changes without a new tag (move_to_end), and a dict's class may be
    // reassigned: the keys follow from the tag only with its class and the list's state unchanged.
    const bool keys_known = unmodified && seen[i].type == n.dict_type && !seen[i].od_other &&
                            seen[i].od_tracked == n.od_tracked && seen[i].od_state == n.od_state;
    for (const Check& c : n.checks) {
      if ((same && c.stable) || (keys_known && c.kind == CheckKind::DictKeys)) continue;
      if (!run_check(c, objs[i], why, *this, i, objs)) {
        ok = false;
        break;
      }
    }
  }
  // Every versioned dict whose tag decides what its children read is as the last passing call
  // left it, and no tensor object was rebound meanwhile: the fast pass is tried from the next call
  // on. (Python code a path ran may have changed a dict after its tag was read: the next pass then
  // finds the tag moved.)
  bool unchanged = py::g_rebinds == rebinds;
  if (ok)
    for (int i = 0; i < size(); ++i) {
      const GuardNode& n = nodes_[i];
      if (n.version_of) {
        const DictSeen& d = seen[i];
        if (tag_decides(n.version_of, versions[i], objs[i]))
          unchanged = unchanged && versions[i] == n.version && d.type == n.dict_type && d.od_tracked == n.od_tracked &&
                      d.od_state == n.od_state;
        n.version = versions[i];
        n.dict_type = d.type;
        n.od_tracked = d.od_tracked;
        n.od_other = d.od_other;
        n.od_state = d.od_state;
      }
      // Only a passing call records: a failed one may have read a path through another object
      // whose dict tag equals none recorded, and the recorded tags are this call's.
      if (n.from_versioned && read[i]) {
        n.last = objs[i];
        n.last_known = true;
      }
    }
  if (ok) {
    unchanged = unchanged && !passes_running_ && record_fast(objs);  // (not under a pass reading the ops)
    if (unchanged && scratch_size_ < nodes_.size()) {
      scratch_.reset(new PyObject*[nodes_.size()]);
      scratch_size_ = nodes_.size();
    }
    fast_ok_ = unchanged;
    fast_rebinds_ = rebinds;
  }
  for (int k = 0; out && k < num_slots_; ++k) {
    if (!ok) Py_CLEAR(out[k]);
    else PJ_CHECK(out[k]) << "check: handed-out node " << k << " resolved to nothing, yet the guards passed";
  }
  for (PyObject* o : owned) Py_DECREF(o);
  return ok;
}

bool GuardTree::check_all(py::Frame* f, std::vector<GuardFailure>* failures, bool profile) const {
  std::vector<PyObject*> objs(nodes_.size(), nullptr);
  std::vector<char> failed(nodes_.size(), 0);
  Owned owned;
  if (profile && profile_.size() != static_cast<size_t>(num_checks())) profile_.assign(num_checks(), CheckStat());
  bool ok = true;
  size_t k = 0;  // the check's index in describe() order
  for (int i = 0; i < size(); ++i) {
    const GuardNode& n = nodes_[i];
    if (n.parent >= 0 && failed[n.parent]) {  // its path went through an object that failed
      failed[i] = 1;
      k += n.checks.size();
      continue;
    }
    bool generic = false;
    objs[i] = resolve(n, n.parent >= 0 ? objs[n.parent] : nullptr, FrameRoots{f}, owned, &generic);
    for (const Check& c : n.checks) {
      GuardFailure why;
      const auto t0 = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
      const bool pass = run_check(c, objs[i], failures ? &why : nullptr, *this, i, objs.data());
      if (profile) {
        CheckStat& st = profile_[k];
        ++st.runs;
        st.ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
        st.misses += !pass;
      }
      ++k;
      if (pass) continue;
      ok = false;
      failed[i] = 1;
      if (failures) failures->push_back(why);
      k += &n.checks.back() - &c;  // the node's other checks are not run
      break;
    }
  }
  for (PyObject* o : owned) Py_DECREF(o);
  return ok;
}

bool GuardTree::adopt(py::Frame* f, std::string* why) {
  if (pending_.empty()) return true;
  std::vector<PyObject*> objs(nodes_.size(), nullptr);
  std::vector<char> needed(nodes_.size(), 0);  // the pending nodes and their ancestors
  for (const Pending& p : pending_)
    for (int i = p.node; i >= 0 && !needed[i]; i = nodes_[i].parent) needed[i] = 1;
  Owned owned;
  for (int i = 0; i < size(); ++i) {
    if (!needed[i]) continue;
    const GuardNode& n = nodes_[i];
    bool generic = false;
    objs[i] = resolve(n, n.parent >= 0 ? objs[n.parent] : nullptr, FrameRoots{f}, owned, &generic);
  }
  bool ok = true;
  for (const Pending& p : pending_) {
    PyObject* o = objs[p.node];
    uint64_t state = 0;
    const bool same_state = !p.what.print.empty() || (o && instance_print(o, &state) && state == p.state);
    if (!py::adoption_fits(p.what, o) || !same_state) {
      if (why) *why = path(p.node) + " holds " + (o ? std::string("a ") + Py_TYPE(o)->tp_name : "nothing");
      ok = false;
      break;
    }
  }
  for (size_t k = 0; ok && k < pending_.size(); ++k) {
    Check& c = nodes_[pending_[k].node].checks[pending_[k].check];
    PyObject* o = objs[pending_[k].node];
    c.ref = PyType_SUPPORTS_WEAKREFS(Py_TYPE(o)) ? PyWeakref_NewRef(o, nullptr) : nullptr;
    c.n = c.ref ? 1 : 0;
    if (!c.ref) {
      if (PyErr_Occurred()) PyErr_Clear();
      Py_INCREF(o);
      c.ref = o;
    }
  }
  for (PyObject* o : owned) Py_DECREF(o);
  if (ok) {
    pending_.clear();
    prepared_ = false;
  }
  return ok;
}

std::string GuardTree::path(int i) const {
  const GuardNode& n = nodes_[i];
  auto key_text = [&]() -> std::string {
    if (n.key && PyUnicode_Check(n.key)) return py::text(n.key);
    return repr_of(n.key);
  };
  switch (n.access) {
    case Access::Local:
    case Access::Deref:
    case Access::Global: return key_text();
    case Access::Builtin: return "builtins." + key_text();
    case Access::Context: return n.index == 1 ? "pijit" : n.index == 2 ? "mixed_precision" : "context.mode";
    case Access::Const: {
      PyObject* k = held(n.key);
      PyObject* mod = k && PyDict_Check(k) ? PyDict_GetItemString(k, "__name__") : nullptr;
      if (mod && PyUnicode_Check(mod)) return "globals(" + py::text(mod) + ")";
      return k ? "<" + type_name(k) + " constant>" : "<a constant that no longer exists>";
    }
    case Access::Attr:
    case Access::DictAttr:
    case Access::FuncAttr: return path(n.parent) + "." + key_text();
    case Access::Item: return path(n.parent) + "[" + (held(n.key) ? repr_of(held(n.key)) : "<a key that no longer exists>") + "]";
  }
  return "?";
}

std::vector<std::string> GuardTree::describe() const {
  std::vector<std::string> out;
  for (int i = 0; i < size(); ++i)
    for (const Check& c : nodes_[i].checks) {
      std::string p = path(i);
      switch (c.kind) {
        case CheckKind::Type: out.push_back("type(" + p + ") is " + class_name(held(c.ref))); break;
        case CheckKind::Id: out.push_back(p + " is " + identity(id_target(c))); break;
        case CheckKind::Equal: out.push_back(p + " == " + repr_of(c.ref)); break;
        case CheckKind::TensorMeta: {
          std::string dims = "[", syms;
          for (size_t d = 0; d < c.meta.shape.size(); ++d) {
            const bool symbolic = !c.symbols.empty() && c.symbols[d] >= 0;
            const std::string name = "s" + std::to_string(symbolic ? c.symbols[d] : 0);
            dims += (d ? ", " : "") + (symbolic ? name : std::to_string(c.meta.shape[d]));
            if (symbolic) syms += (syms.empty() ? "" : ", ") + name + " >= 2";
          }
          for (const SizeFact& f : c.facts) syms += ", " + fact_text(c.symbols[f.dim], f);
          out.push_back(p + ": " + reinterpret_cast<PyTypeObject*>(c.ref)->tp_name + " " + dtype_name(c.meta.dtype) +
                        dims + "]" + (c.n == 1 ? ", contiguous" : c.n == 2 ? ", not contiguous" : "") +
                        (syms.empty() ? "" : " (dynamic: " + syms + ")"));
          break;
        }
        case CheckKind::Length: out.push_back("len(" + p + ") == " + std::to_string(c.n)); break;
        case CheckKind::DictKeys: out.push_back(p + ".keys() == " + repr_of(c.ref)); break;
        case CheckKind::SetContents:
          out.push_back(p + " holds exactly " + repr_of(PyTuple_GET_ITEM(c.ref, 1)));
          break;
        case CheckKind::Absent: out.push_back(p + " is undefined"); break;
        case CheckKind::TypeVersion:
          out.push_back("type(" + p + ") is " + class_name(held(PyTuple_GET_ITEM(c.ref, 0))) +
                        ", unmodified");
          break;
        case CheckKind::DictVersions:
          out.push_back("pijit's " + std::to_string(PyTuple_GET_SIZE(PyTuple_GET_ITEM(c.ref, 0))) +
                        " module namespaces unmodified");
          break;
        case CheckKind::ClassVersion:
          out.push_back(p + " is " + class_name(held(PyTuple_GET_ITEM(c.ref, 0))) +
                        ", unmodified");
          break;
        case CheckKind::SameAs:
          out.push_back(p + (c.ref == Py_True ? " is " : " is not ") + path(static_cast<int>(c.n)));
          break;
        case CheckKind::Compare: {
          static const char* const ops[] = {" < ", " <= ", " == ", " != ", " > ", " >= "};
          out.push_back(std::string(c.n >> 3 ? "" : "not ") + p + ops[c.n & 7] + repr_of(c.ref));
          break;
        }
        case CheckKind::Mode: out.push_back(std::string("context mode is ") + (c.n == 0 ? "GRAPH_MODE" : "PYNATIVE_MODE")); break;
        case CheckKind::AmpDtype: out.push_back("mixed-precision dtype is " + repr_of(c.ref)); break;
      }
    }
  return out;
}

}  // namespace pj::guards
