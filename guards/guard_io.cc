// GuardTree's persistent form (guard_tree.h save/load): what the compile cache writes for an entry's
// guards, and how a later process checks, while reading it, what version tags would have told the
// process that captured it.
#include <memory>
#include <string>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"

#include "graph/ir.h"
#include "guards/guard_tree.h"
#include "py/py_common.h"
#include "pyext/tensor_object.h"

namespace pj::guards {
namespace {

constexpr uint8_t kTreeFormat = 3;  // (3: StableHash reads words)

PyObject* id_target_of(const Check& c) {
  if (c.n != 1) return c.ref;
  PyObject* o = PyWeakref_GET_OBJECT(c.ref);
  return o == Py_None ? nullptr : o;
}

void put_check_meta(ByteWriter& w, const Check& c) {
  graph::put_meta(w, c.meta);
  w.var(c.symbols.size());
  for (int s : c.symbols) w.svar(s);
  w.var(c.facts.size());
  for (const SizeFact& f : c.facts) {
    w.svar(f.dim);
    w.svar(f.op);
    w.svar(f.value);
  }
}

void get_check_meta(ByteReader& r, Check* c) {
  c->meta = graph::get_meta(r);
  const size_t rank = c->meta.shape.size();
  const size_t ns = r.count();
  for (size_t i = 0; i < ns; ++i) c->symbols.push_back(static_cast<int>(r.svar()));
  if (!c->symbols.empty() && c->symbols.size() != rank) r.fail();
  const size_t nf = r.count();
  for (size_t i = 0; i < nf && r.ok(); ++i) {
    SizeFact f;
    f.dim = static_cast<int>(r.svar());
    f.op = static_cast<int>(r.svar());
    f.value = r.svar();
    if (f.dim < 0 || static_cast<size_t>(f.dim) >= c->symbols.size() || f.op < Py_LT || f.op > Py_GE) r.fail();
    c->facts.push_back(f);
  }
}

// Class checks already read in this process, by their bytes: the same class with the same names
// (every Dense of a model) is checked and its names dict made once, and again only after the class
// changed (its version tag moved). Values: (the class, weakly; its tag then; the check's ref, the
// tuple (class weakly, names), which every check of that class shares: fewer objects for the
// collector to count on a warm start).
struct KnownClass {
  PyObject* cls = nullptr;
  unsigned int version = 0;
  PyObject* ref = nullptr;
};
absl::flat_hash_map<std::string, KnownClass>& known_classes() {
  static auto* m = new absl::flat_hash_map<std::string, KnownClass>();  // (never freed: outlives exit)
  return *m;
}

bool identity_survives(PyObject* o) {
  if (o == Py_None || o == Py_True || o == Py_False || o == Py_Ellipsis) return true;
  if (PyUnicode_CheckExact(o)) return PyUnicode_CHECK_INTERNED(o) != 0;
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    const long v = PyLong_AsLongAndOverflow(o, &overflow);
    return !overflow && v >= -5 && v <= 256;  // (CPython's cached small ints)
  }
  return false;
}

bool print_value(py::StableHash& h, PyObject* v, int depth, int* budget) {
  if (--*budget < 0) return false;
  constexpr int kDepth = 3;
  if (py::is_tensor(v)) {
    const Tensor& t = py::unwrap(v);
    h.tag('t');
    h.cstr(Py_TYPE(v)->tp_name);
    h.num(static_cast<int64_t>(t.dtype()));
    h.num(t.ndim());
    for (int d = 0; d < t.ndim(); ++d) h.num(t.dim(d));
    return true;
  }
  if (PyDict_Check(v) && !(Py_TYPE(v)->tp_flags & Py_TPFLAGS_HEAPTYPE)) {  // dict, OrderedDict
    h.tag('d');
    h.num(PyDict_GET_SIZE(v));
    if (depth >= kDepth) return true;
    Py_ssize_t pos = 0;
    PyObject *k, *item;
    while (PyDict_Next(v, &pos, &k, &item)) {
      py::hash_token(h, k);
      if (!print_value(h, item, depth + 1, budget)) return false;
    }
    return true;
  }
  if (PyList_CheckExact(v) || (PyTuple_CheckExact(v) && !py::is_plain_constant(v))) {
    h.tag(PyList_CheckExact(v) ? 'l' : 'u');
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    h.num(n);
    if (depth >= kDepth) return true;
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!print_value(h, PySequence_Fast_GET_ITEM(v, i), depth + 1, budget)) return false;
    return true;
  }
  if (py::adoptable_instance(v) && py::holds_own_attrs(v)) {
    h.tag('i');
    py::hash_token(h, reinterpret_cast<PyObject*>(Py_TYPE(v)));
    if (depth >= kDepth) return true;
    for (const auto& [name, value] : py::own_attrs(v)) {
      h.str(name);
      if (!print_value(h, value, depth + 1, budget)) return false;
    }
    return true;
  }
  py::hash_token(h, v);
  return true;
}

bool dead(std::string* why, const char* what) {
  if (why) *why = what;
  return false;
}

}  // namespace

bool instance_print(PyObject* o, uint64_t* print) {
  py::StableHash h;
  int budget = 2048;  // values looked at: a larger object is not bound on load
  if (!print_value(h, o, 0, &budget)) return false;
  *print = h.done();
  return true;
}

bool GuardTree::save(ByteWriter& w, std::string* why) const {
  if (!pending_.empty()) return dead(why, "identity checks not bound yet");
  w.u8(kTreeFormat);
  w.var(nodes_.size());
  for (const GuardNode& n : nodes_) {
    w.u8(static_cast<uint8_t>(n.access));
    w.svar(n.index);
    w.svar(n.parent);
    PyObject* key = n.key && (n.access == Access::Const || n.access == Access::Item) ? held(n.key) : n.key;
    if (n.key && !key) return dead(why, "a guarded path's key died");
    if (!py::put_object(w, key, why)) return false;
    w.var(n.checks.size());
    for (const Check& c : n.checks) {
      w.u8(static_cast<uint8_t>(c.kind));
      w.svar(c.n);
      switch (c.kind) {
        case CheckKind::Absent:
        case CheckKind::Mode:
          break;
        case CheckKind::Type:
        case CheckKind::Length:
        case CheckKind::Equal:
        case CheckKind::Compare:
        case CheckKind::SetContents:
          if (!held(c.ref)) return dead(why, "a guarded class died");
          if (!py::put_object(w, held(c.ref), why)) return false;
          break;
        case CheckKind::TensorMeta:
          if (!py::put_object(w, c.ref, why)) return false;
          put_check_meta(w, c);
          break;
        case CheckKind::AmpDtype:
          if (!py::put_object(w, c.ref, why)) return false;
          break;
        case CheckKind::Id: {
          PyObject* o = id_target_of(c);
          if (!o) return dead(why, "a guarded object died");
          // (`a is b` on equal constants: another process's constants are other objects, except
          // the singletons, interned names and small ints, which every process shares)
          if (py::is_plain_constant(o) && !identity_survives(o)) return dead(why, "an identity guard on a constant");
          if (!py::put_object(w, o, why, /*allow_adopt=*/true)) return false;
          if (py::adoptable_instance(o)) {  // (bound on load only to an object holding the same)
            uint64_t print = 0;
            if (!instance_print(o, &print)) return dead(why, "an object too large to fingerprint");
            w.u64(print);
          }
          break;
        }
        case CheckKind::SameAs:
          w.u8(c.ref == Py_True);
          break;
        case CheckKind::DictKeys: {
          const Py_ssize_t k = PyList_GET_SIZE(c.ref);
          w.var(static_cast<uint64_t>(k));
          for (Py_ssize_t i = 0; i < k; ++i) {
            PyObject* key = held(PyList_GET_ITEM(c.ref, i));
            if (!key) return dead(why, "a guarded dict key died");
            if (!py::put_object(w, key, why)) return false;
          }
          break;
        }
        case CheckKind::TypeVersion:
        case CheckKind::ClassVersion: {
          auto* t = reinterpret_cast<PyTypeObject*>(held(PyTuple_GET_ITEM(c.ref, 0)));
          if (!t) return dead(why, "a guarded class died");
          if (py::type_version(t) != static_cast<unsigned int>(c.n)) return dead(why, "a guarded class changed");
          if (!py::put_object(w, reinterpret_cast<PyObject*>(t), why)) return false;
          // The whole class, as its version tag stood for it here (capture relies on the tag for
          // lookups it names no name for: a with statement's __enter__): its digest is what a load
          // checks. The names capture looked up only say, on a failure, what changed.
          w.u64(py::class_digest(t));
          PyObject* names = PyTuple_GET_ITEM(c.ref, 1);
          w.var(static_cast<uint64_t>(PyDict_GET_SIZE(names)));
          Py_ssize_t pos = 0;
          PyObject *name, *seen;
          while (PyDict_Next(names, &pos, &name, &seen)) w.str(py::text(name));
          break;
        }
        case CheckKind::DictVersions: {
          PyObject* dicts = PyTuple_GET_ITEM(c.ref, 0);
          const auto* versions = reinterpret_cast<const uint64_t*>(PyBytes_AS_STRING(PyTuple_GET_ITEM(c.ref, 1)));
          w.var(static_cast<uint64_t>(PyTuple_GET_SIZE(dicts)));
          for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dicts); ++i) {
            PyObject* d = PyTuple_GET_ITEM(dicts, i);
            if (py::dict_version(d) != versions[i]) return dead(why, "a guarded namespace changed");
            if (!py::put_object(w, d, why)) return false;
            w.u64(py::namespace_digest(d));
          }
          break;
        }
      }
    }
  }
  return true;
}

std::shared_ptr<GuardTree> GuardTree::load(ByteReader& r, std::string* why) {
  auto t = std::make_shared<GuardTree>();
  auto fail = [&](std::string what) -> std::shared_ptr<GuardTree> {
    if (why && (why->empty() || what != "malformed")) *why = std::move(what);
    if (PyErr_Occurred()) PyErr_Clear();
    return nullptr;
  };
  if (r.u8() != kTreeFormat) return fail("stale: another guard format");
  const size_t nn = r.count();
  t->nodes_.reserve(nn);
  t->loaded_ = true;
  for (size_t i = 0; i < nn; ++i) {
    const uint8_t access = r.u8();
    const int index = static_cast<int>(r.svar()), parent = static_cast<int>(r.svar());
    if (!r.ok() || access > static_cast<uint8_t>(Access::Const) || parent < -1 || parent >= static_cast<int>(i))
      return fail("malformed");
    py::Ref key;
    {
      PyObject* k = nullptr;
      if (!py::get_object(r, &k, why)) return fail(r.ok() ? *why : "malformed");
      key = py::Ref(k);
    }
    const auto acc = static_cast<Access>(access);
    // (what resolve() and path() take for granted of each kind of node)
    const bool rooted = acc == Access::Local || acc == Access::Deref || acc == Access::Global ||
                        acc == Access::Builtin || acc == Access::Context || acc == Access::Const;
    if (rooted != (parent < 0)) return fail("malformed");
    if ((acc == Access::Local || acc == Access::Deref) && index < 0) return fail("malformed");
    if ((acc == Access::Global || acc == Access::Builtin || acc == Access::Attr || acc == Access::DictAttr ||
         acc == Access::FuncAttr) && !(key.get() && PyUnicode_Check(key.get())))
      return fail("malformed");
    if ((acc == Access::Const || acc == Access::Item) && !key.get()) return fail("malformed");
    // (appended as they were saved, parents first, without the path index: a loaded tree is
    // complete, nothing captures into it)
    const int node = t->append_node(parent, acc, index, key.get());
    const size_t nc = r.count();
    t->nodes_[node].checks.reserve(nc);
    for (size_t k = 0; k < nc; ++k) {
      Check c{static_cast<CheckKind>(r.u8()), nullptr, r.svar(), {}};
      if (!r.ok() || static_cast<uint8_t>(c.kind) > static_cast<uint8_t>(CheckKind::AmpDtype)) return fail("malformed");
      auto object = [&](PyObject** out, py::Adoption* adopt = nullptr) {
        if (py::get_object(r, out, why, adopt)) return true;
        if (!r.ok() && why) *why = "malformed";
        return false;
      };
      switch (c.kind) {
        case CheckKind::Absent:
        case CheckKind::Mode:
          break;
        case CheckKind::Type:
        case CheckKind::Length:
        case CheckKind::Equal:
        case CheckKind::Compare:
        case CheckKind::SetContents:
        case CheckKind::TensorMeta: {
          if (!object(&c.ref)) return fail(*why);
          if (!c.ref) return fail("malformed");
          if ((c.kind == CheckKind::Type && !PyType_Check(c.ref)) ||
              (c.kind == CheckKind::Compare && ((c.n & 7) > Py_GE || !PyNumber_Check(c.ref))) ||
              (c.kind == CheckKind::SetContents && PyTuple_Check(c.ref) && PyTuple_GET_SIZE(c.ref) == 2 &&
               !(PyType_Check(PyTuple_GET_ITEM(c.ref, 0)) && PyTuple_Check(PyTuple_GET_ITEM(c.ref, 1))))) {
            Py_DECREF(c.ref);
            return fail("malformed");
          }
          if (c.kind == CheckKind::Type && PyType_Check(c.ref) &&
              PyType_HasFeature(reinterpret_cast<PyTypeObject*>(c.ref), Py_TPFLAGS_HEAPTYPE)) {
            PyObject* weak = hold_weakly(c.ref);
            Py_DECREF(c.ref);
            c.ref = weak;
          }
          if ((c.kind == CheckKind::Length || c.kind == CheckKind::TensorMeta) && !PyType_Check(c.ref))
            { Py_DECREF(c.ref); return fail("malformed"); }
          if (c.kind == CheckKind::SetContents && !(PyTuple_Check(c.ref) && PyTuple_GET_SIZE(c.ref) == 2))
            { Py_DECREF(c.ref); return fail("malformed"); }
          if (c.kind == CheckKind::TensorMeta) get_check_meta(r, &c);
          break;
        }
        case CheckKind::Id: {
          py::Adoption adopt;
          if (!object(&c.ref, &adopt)) return fail(*why);
          if (adopt.pending) {
            c.n = 3;  // (neither a strong nor a weak reference yet: the check fails until adopt())
            const uint64_t state = adopt.print.empty() ? r.u64() : 0;  // (a plain instance's print)
            t->pending_.push_back({node, t->nodes_[node].checks.size(), std::move(adopt), state});
          } else if (c.ref && PyType_SUPPORTS_WEAKREFS(Py_TYPE(c.ref)) && !PyType_Check(c.ref)) {
            PyObject* weak = PyWeakref_NewRef(c.ref, nullptr);
            if (!weak) { Py_DECREF(c.ref); return fail("out of memory"); }
            Py_DECREF(c.ref);
            c.ref = weak;
            c.n = 1;
          } else {
            if (!c.ref) c.ref = (Py_INCREF(Py_None), Py_None);
            c.n = 0;
          }
          break;
        }
        case CheckKind::AmpDtype:
          if (!object(&c.ref)) return fail(*why);
          if (!c.ref) return fail("malformed");
          break;
        case CheckKind::SameAs:
          c.ref = r.u8() ? Py_True : Py_False;
          Py_INCREF(c.ref);
          if (c.n < 0 || c.n >= node) { Py_DECREF(c.ref); return fail("malformed"); }
          break;
        case CheckKind::DictKeys: {
          const size_t nk = r.count();
          c.ref = PyList_New(static_cast<Py_ssize_t>(nk));
          if (!c.ref) return fail("out of memory");
          for (size_t j = 0; j < nk; ++j) {
            PyObject* key = nullptr;
            if (!object(&key) || !key) { Py_DECREF(c.ref); return fail(*why); }
            PyList_SET_ITEM(c.ref, static_cast<Py_ssize_t>(j), key);
          }
          break;
        }
        case CheckKind::TypeVersion:
        case CheckKind::ClassVersion: {
          const size_t start = r.pos();
          {  // this process verified these bytes already, and the class is unchanged since
            PyObject* cls = nullptr;
            if (!object(&cls)) return fail(*why);
            py::Ref owned_cls(cls);
            r.u64();
            const size_t nnames = r.count();
            for (size_t j = 0; j < nnames; ++j) r.str();
            if (!r.ok()) return fail("malformed");
            auto it = known_classes().find(absl::string_view(r.since(start).data(), r.since(start).size()));
            PyObject* known = it == known_classes().end() ? nullptr : held(it->second.cls);
            if (known && known == cls && py::type_version(reinterpret_cast<PyTypeObject*>(cls)) == it->second.version) {
              c.n = it->second.version;
              c.ref = it->second.ref;
              Py_INCREF(c.ref);
              break;
            }
          }
          r.skip_to(start);  // verify: read the check again from its start
          PyObject* cls = nullptr;
          if (!object(&cls)) return fail(*why);
          py::Ref owned_cls(cls);
          if (!cls || !PyType_Check(cls)) return fail("malformed");
          auto* tp = reinterpret_cast<PyTypeObject*>(cls);
          if (py::class_digest(tp) != r.u64()) return fail(std::string("class ") + tp->tp_name + " changed");
          py::Ref names(PyDict_New());
          const size_t nnames = r.count();
          for (size_t j = 0; j < nnames; ++j) {
            py::Ref name(PyUnicode_InternFromString(std::string(r.str()).c_str()));
            if (!name || !r.ok()) return fail("malformed");
            PyObject* found = _PyType_Lookup(tp, name.get());  // (what it holds, as the digest said)
            py::Ref seen(found ? Py_BuildValue("(NN)", hold_weakly(found),
                                               PyUnicode_FromFormat("<%s object>", Py_TYPE(found)->tp_name))
                               : PyTuple_New(0));
            if (!seen || PyDict_SetItem(names.get(), name.get(), seen.get()) < 0) return fail("out of memory");
          }
          const unsigned int version = py::ensure_type_version(tp);
          if (!version) return fail(std::string("class ") + tp->tp_name + " has no version tag");
          c.n = version;
          c.ref = Py_BuildValue("(NO)", hold_weakly(cls), names.get());
          if (!c.ref) return fail("out of memory");
          // (the weak reference made first: making it may run a collection, and with it another
          // thread's load, which may grow the map under a reference into it)
          PyObject* weak_cls = hold_weakly(cls);
          Py_INCREF(c.ref);
          auto slot = known_classes().try_emplace(std::string(r.since(start))).first;
          const KnownClass old = slot->second;
          slot->second = {weak_cls, version, c.ref};
          Py_XDECREF(old.cls);  // (last: a release may run any code)
          Py_XDECREF(old.ref);
          break;
        }
        case CheckKind::DictVersions: {
          const size_t nd = r.count();
          py::Ref dicts(PyTuple_New(static_cast<Py_ssize_t>(nd)));
          if (!dicts) return fail("out of memory");
          std::string versions(nd * sizeof(uint64_t), '\0');
          for (size_t j = 0; j < nd; ++j) {
            PyObject* d = nullptr;
            if (!object(&d)) return fail(*why);
            if (!d || !PyDict_Check(d)) { Py_XDECREF(d); return fail("malformed"); }
            PyTuple_SET_ITEM(dicts.get(), static_cast<Py_ssize_t>(j), d);
            if (py::namespace_digest(d) != r.u64()) {
              PyObject* name = PyDict_GetItemString(d, "__name__");
              return fail("namespace " + (name ? py::text(name) : std::string("?")) + " changed");
            }
            const uint64_t v = py::dict_version(d);
            std::memcpy(&versions[j * sizeof(uint64_t)], &v, sizeof v);
          }
          c.ref = Py_BuildValue("(Oy#)", dicts.get(), versions.data(), static_cast<Py_ssize_t>(versions.size()));
          if (!c.ref) return fail("out of memory");
          break;
        }
      }
      if (!r.ok()) {
        Py_XDECREF(c.ref);
        return fail("malformed");
      }
      t->nodes_[node].checks.push_back(std::move(c));
    }
  }
  if (!r.ok()) return fail("malformed");
  t->prepared_ = false;
  return t;
}

bool GuardTree::roots_fit(PyCodeObject* co) const {
  for (const GuardNode& n : nodes_) {
    if (n.access == Access::Local && n.index >= py::code_nlocals(co)) return false;
    if (n.access == Access::Deref && n.index >= py::code_ncells(co) + py::code_nfrees(co)) return false;
  }
  return true;
}

}  // namespace pj::guards
