#include "py/portable.h"

#include <marshal.h>
#include <sys/stat.h>

#include <cstring>
#include <unordered_map>
#include <vector>

#include "common/sha256.h"
#include "py/py_common.h"

namespace pj::py {
namespace {

enum Tag : uint8_t { kNull = 0, kValue, kModule, kModuleDict, kNamed, kTuple, kAdopt, kStr };
constexpr int kMarshalVersion = 4;
// For digests: version 2 writes no back-references, whose use depends on reference counts (the
// same code object would marshal differently in two processes).
constexpr int kPrintMarshalVersion = 2;

bool fileless_function(PyObject* o);  // (below)

bool plain_constant(PyObject* o, int depth = 0) {
  if (depth > 8) return false;
  if (o == Py_None || o == Py_Ellipsis || PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o) ||
      PyComplex_CheckExact(o) || PyUnicode_CheckExact(o) || PyBytes_CheckExact(o))
    return true;
  if (PyTuple_CheckExact(o)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
      if (!plain_constant(PyTuple_GET_ITEM(o, i), depth + 1)) return false;
    return true;
  }
  if (PyFrozenSet_CheckExact(o)) {
    Py_ssize_t pos = 0;
    PyObject* k;
    Py_hash_t h;
    while (_PySet_NextEntry(o, &pos, &k, &h))
      if (!plain_constant(k, depth + 1)) return false;
    return true;
  }
  return false;
}

// The name a module is registered under when sys.modules holds it as that name (borrowed), else
// nullptr.
PyObject* registered_name(PyObject* module) {
  PyObject* name = PyModule_Check(module) ? PyDict_GetItemString(PyModule_GetDict(module), "__name__") : nullptr;
  if (!name || !PyUnicode_Check(name)) return nullptr;
  return PyDict_GetItem(PyImport_GetModuleDict(), name) == module ? name : nullptr;
}

// The module whose namespace d is (borrowed), or nullptr.
PyObject* module_of_dict(PyObject* d) {
  if (!PyDict_CheckExact(d)) return nullptr;
  PyObject* name = PyDict_GetItemString(d, "__name__");
  PyObject* m = name && PyUnicode_Check(name) ? PyDict_GetItem(PyImport_GetModuleDict(), name) : nullptr;
  return m && PyModule_Check(m) && PyModule_GetDict(m) == d ? m : nullptr;
}

// The object at `path` ("A.b") in module m (new reference), or nullptr (no error set).
PyObject* follow(PyObject* m, const std::string& path) {
  if (path.empty() || path.find("<") != std::string::npos) return nullptr;
  Py_INCREF(m);
  PyObject* o = m;
  size_t start = 0;
  while (o && start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    PyObject* next = nullptr;
    if (PyModule_CheckExact(o)) {
      next = PyDict_GetItemString(PyModule_GetDict(o), part.c_str());
      Py_XINCREF(next);
    } else if (PyType_Check(o)) {
      next = PyObject_GetAttrString(o, part.c_str());
      if (!next) PyErr_Clear();
    }
    Py_DECREF(o);
    o = next;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return o;
}

// (module, path) naming o by its own __module__ and __qualname__, when they lead back to it.
bool own_name(PyObject* o, std::string* module, std::string* path) {
  PyObject *mod = nullptr, *qual = nullptr;
  if (PyFunction_Check(o)) {
    mod = reinterpret_cast<PyFunctionObject*>(o)->func_module;
    qual = reinterpret_cast<PyFunctionObject*>(o)->func_qualname;
    Py_XINCREF(mod);
    Py_XINCREF(qual);
  } else if (PyCFunction_Check(o)) {
    auto* f = reinterpret_cast<PyCFunctionObject*>(o);
    if (f->m_self && PyModule_Check(f->m_self)) {
      mod = registered_name(f->m_self);
      Py_XINCREF(mod);
    }
    qual = PyUnicode_FromString(f->m_ml->ml_name);
  } else if (PyType_Check(o) || !(Py_TYPE(o)->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
    // classes, and instances of extension types that name themselves (pijit's op entries)
    mod = PyObject_GetAttrString(o, "__module__");
    qual = mod ? PyObject_GetAttrString(o, "__qualname__") : nullptr;
    if (!qual) PyErr_Clear();
  }
  bool ok = false;
  if (mod && qual && PyUnicode_Check(mod) && PyUnicode_Check(qual)) {
    PyObject* m = PyDict_GetItem(PyImport_GetModuleDict(), mod);
    if (m && PyModule_Check(m)) {
      *module = text(mod);
      *path = text(qual);
      PyObject* found = follow(m, *path);
      ok = found == o;
      Py_XDECREF(found);
    }
  }
  Py_XDECREF(mod);
  Py_XDECREF(qual);
  return ok;
}

// (module, name) of a module-level binding of o in one of pijit's own modules (a library object
// with no name of its own, e.g. a module's thread-local state).
bool library_binding(PyObject* o, std::string* module, std::string* path) {
  PyObject* modules = PyImport_GetModuleDict();
  Py_ssize_t pos = 0;
  PyObject *name, *m;
  while (PyDict_Next(modules, &pos, &name, &m)) {
    if (!PyModule_Check(m) || !text_starts_with(name, "pijit")) continue;
    Py_ssize_t k = 0;
    PyObject *key, *value;
    while (PyDict_Next(PyModule_GetDict(m), &k, &key, &value))
      if (value == o && PyUnicode_Check(key)) {
        *module = text(name);
        *path = text(key);
        return true;
      }
  }
  return false;
}

bool not_portable(std::string* why, PyObject* o, const char* what) {
  if (why) *why = std::string(what) + " (" + Py_TYPE(o)->tp_name + ")";
  return false;
}

bool put_named(ByteWriter& w, PyObject* o, std::string* why) {
  SaveMemo* memo = SaveMemo::current;
  if (memo) {
    auto it = memo->named.find(o);
    if (it != memo->named.end()) {
      if (it->second.empty()) return not_portable(why, o, "an object no module names");
      w.raw(it->second);
      return true;
    }
  }
  std::string module, path;
  if (!own_name(o, &module, &path) && !library_binding(o, &module, &path)) {
    if (memo) memo->named.emplace(o, "");
    return not_portable(why, o, "an object no module names");
  }
  PyObject* m = PyDict_GetItemString(PyImport_GetModuleDict(), module.c_str());
  ByteWriter enc;
  enc.u8(kNamed);
  enc.str(module);
  enc.str(path);
  enc.str(module_stamp(m));
  enc.str(fileless_function(o) ? code_print(PyFunction_GET_CODE(o)) : "");
  if (memo) memo->named.emplace(o, enc.bytes());  // (the object lives as long as the save: the caller holds it)
  w.raw(enc.bytes());
  return true;
}

bool adoptable(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  return (t->tp_flags & Py_TPFLAGS_HEAPTYPE) && !PyType_Check(o) && !PyModule_Check(o) && !PyFunction_Check(o) &&
         !PyMethod_Check(o) && !PyCode_Check(o) && !PyCell_Check(o);
}

// A code object's identity across processes: its marshal bytes (code, constants, names, file, lines).
}  // namespace

std::string code_print(PyObject* co) {
  PyObject* b = PyMarshal_WriteObjectToString(co, kPrintMarshalVersion);
  if (!b) {
    PyErr_Clear();
    return "";
  }
  std::string s = sha256_hex(std::string_view(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b)));
  Py_DECREF(b);
  return s;
}

namespace {

const std::string& stamp_ref(PyObject* module);  // (module_stamp's memo, below)

// The stamp of the module named `name`; nullptr for one not imported.
const std::string* named_module_stamp(PyObject* name) {
  PyObject* m = name && PyUnicode_Check(name) ? PyDict_GetItem(PyImport_GetModuleDict(), name) : nullptr;
  return m && PyModule_Check(m) ? &stamp_ref(m) : nullptr;
}

// Feeds the stamp of the module named `name` (nothing for one not imported) into h.
void stamp_of_module_named(StableHash& h, PyObject* name) {
  const std::string* stamp = named_module_stamp(name);
  if (!stamp) return h.bytes("", 0);
  h.bytes(stamp->data(), stamp->size());
}

// A function whose module has no source file (python -c, a notebook's cells, exec'd code): no file
// stamp fixes its body across processes, so its code's print does.
bool fileless_function(PyObject* o) {
  if (!PyFunction_Check(o)) return false;
  const std::string* stamp = named_module_stamp(reinterpret_cast<PyFunctionObject*>(o)->func_module);
  return !stamp || stamp->empty();
}

// "__name__" and "__module__", interned once (PyDict_GetItemString makes a str per call).
PyObject* name_key() {
  static PyObject* const k = PyUnicode_InternFromString("__name__");
  return k;
}
PyObject* module_key() {
  static PyObject* const k = PyUnicode_InternFromString("__module__");
  return k;
}

// What o is, at the level of names (no attribute lookup runs): a constant's value, a module's,
// class's or function's name and module, otherwise its class. For namespace and class digests.
void token(StableHash& h, PyObject* o) {  // (hash_token)
  if (PyUnicode_CheckExact(o)) {
    h.tag('s');
    h.str(o);
  } else if (o == Py_None || PyBool_Check(o)) {
    h.tag(o == Py_None ? 'N' : o == Py_True ? 'T' : 'F');
  } else if (PyLong_CheckExact(o) || PyFloat_CheckExact(o) || plain_constant(o)) {
    PyObject* b = PyMarshal_WriteObjectToString(o, kPrintMarshalVersion);
    h.tag('v');
    if (b) {
      h.bytes(PyBytes_AS_STRING(b), static_cast<size_t>(PyBytes_GET_SIZE(b)));
      Py_DECREF(b);
    } else {
      PyErr_Clear();
    }
  } else if (PyModule_Check(o)) {
    h.tag('m');
    h.str(PyDict_GetItem(PyModule_GetDict(o), name_key()));
  } else if (PyFunction_Check(o)) {
    auto* f = reinterpret_cast<PyFunctionObject*>(o);
    h.tag('f');
    h.str(f->func_module);
    h.str(f->func_qualname);
    // what fixes its body: its module file's stamp (an edited pijit/*.py too), else (a module
    // without a file: fileless_function) its code
    const std::string* stamp = named_module_stamp(f->func_module);
    if (stamp && !stamp->empty()) {
      h.bytes(stamp->data(), stamp->size());
    } else {
      const std::string print = code_print(f->func_code);
      h.bytes(print.data(), print.size());
    }
  } else if (PyCFunction_Check(o)) {
    h.tag('b');
    h.cstr(reinterpret_cast<PyCFunctionObject*>(o)->m_ml->ml_name);
  } else if (PyType_Check(o)) {
    auto* t = reinterpret_cast<PyTypeObject*>(o);
    PyObject* module = t->tp_dict ? PyDict_GetItem(t->tp_dict, module_key()) : nullptr;
    h.tag('c');
    h.str(module);
    h.cstr(t->tp_name);
    stamp_of_module_named(h, module);
  } else {
    h.tag('o');
    h.cstr(Py_TYPE(o)->tp_name);
  }
}

}  // namespace

void hash_token(StableHash& h, PyObject* o) { token(h, o); }

namespace {

uint64_t entry_hash(const char* owner, PyObject* k, PyObject* v) {
  StableHash h;
  if (owner) h.cstr(owner);
  token(h, k);
  token(h, v);
  return h.done();
}

}  // namespace

void StableHash::str(PyObject* u) {  // (a str's UTF-8 is cached in it after the first read)
  Py_ssize_t n = 0;
  const char* p = u && PyUnicode_Check(u) ? PyUnicode_AsUTF8AndSize(u, &n) : nullptr;
  if (p) {
    bytes(p, static_cast<size_t>(n));
  } else {
    if (PyErr_Occurred()) PyErr_Clear();
    tag('?');
  }
  tag('\x1f');
}

void StableHash::cstr(const char* p) {
  bytes(p, std::strlen(p));
  tag('\x1f');
}

std::string module_stamp(PyObject* module) { return stamp_ref(module); }

namespace {

const std::string& stamp_ref(PyObject* module) {
  // Once per module and process: the file as it was when first asked (the module in memory is what
  // was loaded; a file edited since then does not change it).
  static std::unordered_map<PyObject*, std::pair<PyObject*, std::string>> stamps;  // module -> (weak ref, stamp)
  auto it = stamps.find(module);
  if (it != stamps.end() && PyWeakref_GET_OBJECT(it->second.first) == module) return it->second.second;
  PyObject* file = module && PyModule_Check(module) ? PyDict_GetItemString(PyModule_GetDict(module), "__file__") : nullptr;
  std::string stamp;
  if (file && PyUnicode_Check(file)) {
    struct stat st;
    stamp = ::stat(text(file).c_str(), &st) != 0 ? "missing"
                                                 : std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
                                                       "." + std::to_string(st.st_mtim.tv_nsec);
  }
  PyObject* weak = module ? PyWeakref_NewRef(module, nullptr) : nullptr;
  if (!weak) {  // (out of memory: not remembered; every module object takes weak references)
    PyErr_Clear();
    static std::string last;
    last = std::move(stamp);
    return last;
  }
  if (it != stamps.end()) {
    Py_DECREF(it->second.first);
    stamps.erase(it);
  }
  return stamps.emplace(module, std::make_pair(weak, std::move(stamp))).first->second.second;
}

}  // namespace

bool put_object(ByteWriter& w, PyObject* o, std::string* why, bool allow_adopt) {
  if (!o) {
    w.u8(kNull);
    return true;
  }
  if (PyUnicode_CheckExact(o)) {  // (names, mostly: read back interned, as the code's own are)
    Py_ssize_t n;
    if (const char* u = PyUnicode_AsUTF8AndSize(o, &n)) {
      w.u8(kStr);
      w.str(std::string_view(u, static_cast<size_t>(n)));
      return true;
    }
    PyErr_Clear();  // (a lone surrogate: marshal writes it)
  }
  if (plain_constant(o)) {
    PyObject* b = PyMarshal_WriteObjectToString(o, kMarshalVersion);
    if (!b) {
      PyErr_Clear();
      return not_portable(why, o, "a constant marshal cannot write");
    }
    w.u8(kValue);
    w.str(std::string_view(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b)));
    Py_DECREF(b);
    return true;
  }
  if (PyModule_Check(o)) {
    PyObject* name = registered_name(o);
    if (!name) return not_portable(why, o, "a module sys.modules does not hold");
    w.u8(kModule);
    w.str(text(name));
    return true;
  }
  if (PyObject* m = PyDict_CheckExact(o) ? module_of_dict(o) : nullptr) {
    PyObject* name = registered_name(m);
    if (!name) return not_portable(why, o, "the namespace of a module sys.modules does not hold");
    w.u8(kModuleDict);
    w.str(text(name));
    return true;
  }
  if (PyTuple_CheckExact(o)) {
    w.u8(kTuple);
    w.var(static_cast<uint64_t>(PyTuple_GET_SIZE(o)));
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
      if (!put_object(w, PyTuple_GET_ITEM(o, i), why, false)) return false;
    return true;
  }
  if (allow_adopt && (adoptable(o) || PyCode_Check(o))) {
    const std::string print = PyCode_Check(o) ? code_print(o) : "";
    if (PyCode_Check(o) && print.empty()) return not_portable(why, o, "a code object marshal cannot write");
    w.u8(kAdopt);
    w.str(print);
    return true;
  }
  return put_named(w, o, why);
}

SaveMemo* SaveMemo::current = nullptr;

SaveMemo::SaveMemo() : outer_(current) { current = this; }

SaveMemo::~SaveMemo() { current = outer_; }

NamedMemo* NamedMemo::current = nullptr;

NamedMemo::NamedMemo() : outer_(current) { current = this; }

NamedMemo::~NamedMemo() {
  current = outer_;
  for (auto& [bytes, o] : found) Py_DECREF(o);
  for (auto& [text, o] : names) Py_DECREF(o);
}

bool is_plain_constant(PyObject* o) { return plain_constant(o); }

bool adoptable_instance(PyObject* o) { return !plain_constant(o) && !PyTuple_CheckExact(o) && adoptable(o); }

bool adoption_fits(const Adoption& a, PyObject* o) {
  if (!o) return false;
  return a.print.empty() ? adoptable(o) : PyCode_Check(o) && code_print(o) == a.print;
}

bool get_object(ByteReader& r, PyObject** out, std::string* why, Adoption* adopt) {
  *out = nullptr;
  if (adopt) *adopt = Adoption();
  auto miss = [&](std::string what) {
    if (why) *why = std::move(what);
    if (PyErr_Occurred()) PyErr_Clear();
    return false;
  };
  const uint8_t tag = r.u8();
  if (!r.ok()) return miss("malformed: truncated");
  switch (tag) {
    case kNull: return true;
    case kValue: {
      std::string_view b = r.str();
      if (!r.ok()) return miss("malformed: truncated");
      *out = PyMarshal_ReadObjectFromString(b.data(), static_cast<Py_ssize_t>(b.size()));
      return *out ? true : miss("a constant marshal cannot read");
    }
    case kStr: {
      std::string_view u = r.str();
      if (!r.ok()) return miss("malformed: truncated");
      NamedMemo* memo = NamedMemo::current;
      if (memo) {
        auto it = memo->names.find(absl::string_view(u.data(), u.size()));
        if (it != memo->names.end()) {
          *out = it->second;
          Py_INCREF(*out);
          return true;
        }
      }
      PyObject* o = PyUnicode_FromStringAndSize(u.data(), static_cast<Py_ssize_t>(u.size()));
      if (!o) return miss("malformed: a name that is not UTF-8");
      PyUnicode_InternInPlace(&o);
      if (memo) {
        Py_INCREF(o);
        memo->names.emplace(std::string(u), o);
      }
      *out = o;
      return true;
    }
    case kModule:
    case kModuleDict: {
      const std::string name(r.str());
      PyObject* m = r.ok() ? PyDict_GetItemString(PyImport_GetModuleDict(), name.c_str()) : nullptr;
      if (!m || !PyModule_Check(m)) return miss("module " + name + " is not imported");
      *out = tag == kModule ? m : PyModule_GetDict(m);
      Py_INCREF(*out);
      return true;
    }
    case kNamed: {
      const size_t start = r.pos() - 1;
      const std::string_view module_v = r.str(), path_v = r.str(), stamp = r.str(), print = r.str();
      if (!r.ok()) return miss("malformed: truncated");
      NamedMemo* memo = NamedMemo::current;
      const std::string_view bytes = r.since(start);
      if (memo) {
        auto it = memo->found.find(absl::string_view(bytes.data(), bytes.size()));
        if (it != memo->found.end()) {
          *out = it->second;
          Py_INCREF(*out);
          return true;
        }
      }
      const std::string module(module_v), path(path_v);
      PyObject* m = PyDict_GetItemString(PyImport_GetModuleDict(), module.c_str());
      if (!m || !PyModule_Check(m)) return miss("module " + module + " is not imported");
      if (stamp_ref(m) != stamp) return miss("stale: module " + module + "'s file changed");
      *out = follow(m, path);
      if (!*out) return miss(module + "." + path + " is not defined");
      if (!print.empty() && !(PyFunction_Check(*out) && code_print(PyFunction_GET_CODE(*out)) == print)) {
        Py_CLEAR(*out);  // (a module without a file: another function of that name, in another run)
        return miss(module + "." + path + "'s code differs");
      }
      if (memo) {
        Py_INCREF(*out);
        memo->found.emplace(bytes, *out);
      }
      return true;
    }
    case kTuple: {
      const size_t n = r.count();
      PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(n));
      if (!t) return miss("malformed: out of memory");
      for (size_t i = 0; i < n; ++i) {
        PyObject* item;
        if (!get_object(r, &item, why) || !item) {
          Py_DECREF(t);
          Py_XDECREF(item);
          return r.ok() && !item ? miss("malformed: a tuple item is missing") : false;
        }
        PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), item);
      }
      *out = t;
      return true;
    }
    case kAdopt: {
      std::string_view print = r.str();
      if (!r.ok()) return miss("malformed: truncated");
      if (!adopt) return miss("malformed: an object bound on first use where none may be");
      adopt->pending = true;
      adopt->print = std::string(print);
      return true;
    }
    default:
      r.fail();
      return miss("malformed: an unknown tag");
  }
}

namespace {

// What one class's own dict holds (class_digest's term for it), once per class state: a model's
// Dense, ReLU and SequentialCell all derive from Cell, whose hundred-odd methods are read once.
uint64_t own_digest(PyTypeObject* c) {
  static std::unordered_map<PyTypeObject*, std::pair<unsigned int, uint64_t>> known;  // class -> (tag, sum)
  static PyObject* const dict_name = PyUnicode_InternFromString("__dict__");
  static PyObject* const weakref_name = PyUnicode_InternFromString("__weakref__");
  const unsigned int tag = ensure_type_version(c);
  auto it = known.find(c);
  if (tag && it != known.end() && it->second.first == tag) return it->second.second;
  uint64_t sum = 0;
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(c->tp_dict, &pos, &k, &v))
    if (k != dict_name && k != weakref_name)  // (descriptors each class has of its own)
      sum += entry_hash(c->tp_name, k, v);
  if (tag) known[c] = {tag, sum};
  return sum;
}

}  // namespace

uint64_t class_digest(PyTypeObject* t) {
  // Once per class state: a type's version tag moves whenever it or a base changes.
  static std::unordered_map<PyTypeObject*, std::pair<unsigned int, uint64_t>> known;
  const unsigned int tag = ensure_type_version(t);
  auto it = known.find(t);
  if (tag && it != known.end() && it->second.first == tag) return it->second.second;
  uint64_t sum = 0;
  PyObject* mro = t->tp_mro;
  for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); ++i) {
    auto* c = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (!(c->tp_flags & Py_TPFLAGS_HEAPTYPE) || !c->tp_dict) continue;
    sum += own_digest(c) * static_cast<uint64_t>(2 * i + 1);
  }
  if (tag) known[t] = {tag, sum};
  return sum;
}

uint64_t namespace_digest(PyObject* dict) {
  // Once per namespace state: a dict's version tag is never reused (PEP 509), so (dict, tag) names
  // its contents for the life of the process.
  static std::unordered_map<PyObject*, std::pair<uint64_t, uint64_t>> known;  // dict -> (tag, digest)
  const uint64_t tag = dict_version(dict);
  auto it = known.find(dict);
  if (it != known.end() && it->second.first == tag) return it->second.second;
  uint64_t sum = 0;
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(dict, &pos, &k, &v)) sum += entry_hash(nullptr, k, v);
  sum ^= static_cast<uint64_t>(PyDict_GET_SIZE(dict));
  known[dict] = {tag, sum};
  return sum;
}

}  // namespace pj::py
