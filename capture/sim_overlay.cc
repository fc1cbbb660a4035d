// The caller's list or dict after a deferred change (sim_effects.cc): the change is replayed
// after the graph, so the real container still holds what it held when the frame started. The
// overlay models what plain Python would see by now, so that reads of the changed container
// (len(lst) after an append, lst[-1], lst.pop(), d["other"] after d["k"] = v, d.get(k, 0),
// k in d) are simulated instead of stopping capture:
//   a list: one slot per item now, each the caller's item at an index it had (read along its
//           guard path when asked: `lst[2]`) or a value the function put there; its length when
//           the overlay began is guarded;
//   a dict: the constant keys the function set or deleted; other keys read through to the
//           caller's dict (guarded there), all of them when the function cleared it or asks its
//           length (the key list is guarded then).
// A change the overlay cannot follow (a key that is not a constant, extend() of an iterator, a
// set) leaves it inexact: reads of that container stop capture, as before.
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_BUILT

#include <algorithm>
#include <cstring>

#include "capture/sim_state.h"

namespace pj::capture {

using guards::Access;
using guards::CheckKind;

namespace {

bool is_builtin(PyObject* c, const char* name) {
  if (!PyCFunction_Check(c)) return false;
  PyObject* self = PyCFunction_GET_SELF(c);
  if (!self || !PyModule_Check(self)) return false;
  const char* mod = PyModule_GetName(self);
  if (!mod) return PyErr_Clear(), false;
  return std::strcmp(mod, "builtins") == 0 && std::strcmp(reinterpret_cast<PyCFunctionObject*>(c)->m_ml->ml_name, name) == 0;
}

}  // namespace

ContainerOverlay* Simulator::overlay_of(PyObject* c) {
  auto it = overlays_.find(c);
  return it != overlays_.end() && it->second.exact ? &it->second : nullptr;
}

// The overlay a first change to the caller's list or dict starts.
ContainerOverlay& Simulator::overlay_for(PyObject* c) {
  auto it = overlays_.find(c);
  if (it != overlays_.end()) return it->second;
  ContainerOverlay& ov = overlays_[c];
  ov.list = PyList_CheckExact(c);
  ov.exact = ov.list || PyDict_CheckExact(c);
  return ov;
}

// Whether c's length is guarded already (len(lst) read before the change).
bool Simulator::length_guarded(PyObject* c) {
  const int node = node_of(c);
  if (node < 0) return false;
  for (const guards::Check& k : tree_.node(node).checks)
    if (k.kind == CheckKind::Length) return true;
  return false;
}

// ... with a list's own items before what was appended: its length is guarded from here on.
ContainerOverlay& Simulator::overlay_known(PyObject* c) {
  ContainerOverlay& ov = overlay_for(c);
  if (ov.list && !ov.base_known) {
    const Py_ssize_t n = PyList_GET_SIZE(c);
    Py_INCREF(&PyList_Type);
    tree_.add_check(node_of(c), {CheckKind::Length, reinterpret_cast<PyObject*>(&PyList_Type), n, {}});
    std::vector<ContainerOverlay::Slot> own(static_cast<size_t>(n));
    for (Py_ssize_t k = 0; k < n; ++k) own[k] = {k, nullptr};
    ov.items.insert(ov.items.begin(), own.begin(), own.end());
    ov.base_known = true;
  }
  return ov;
}

// The value in slot i of a list overlay: the caller's item read along its path, or what the
// function put there.
PyObject* Simulator::overlay_slot(PyObject* c, const ContainerOverlay::Slot& s) {
  if (s.value) return s.value;
  PyObject* index = own(PyLong_FromSsize_t(s.orig));
  return wrap(PyList_GET_ITEM(c, s.orig), tree_.child(node_of(c), Access::Item, index));
}

// A list index as Python normalises it, or -1 past either end.
static Py_ssize_t list_index(const ContainerOverlay& ov, PyObject* key) {
  Py_ssize_t i = PyLong_AsSsize_t(key);
  if (i == -1 && PyErr_Occurred()) return PyErr_Clear(), -1;
  const Py_ssize_t n = static_cast<Py_ssize_t>(ov.items.size());
  if (i < 0) i += n;
  return i < 0 || i >= n ? -1 : i;
}

// A dict overlay's own entry for key: its index in ov.keys, or -1.
static int own_key(const ContainerOverlay& ov, PyObject* key) {
  for (size_t k = 0; k < ov.keys.size(); ++k) {
    const int eq = PyObject_RichCompareBool(ov.keys[k].first, key, Py_EQ);  // constants: no user code
    if (eq < 0) PyErr_Clear();
    if (eq > 0) return static_cast<int>(k);
  }
  return -1;
}

// d[key] as plain Python sees it now; nullptr (no error set): missing.
PyObject* Simulator::overlay_dict_get(PyObject* c, ContainerOverlay& ov, PyObject* key) {
  const int k = own_key(ov, key);
  if (k >= 0) return ov.keys[k].second;
  if (ov.cleared) return nullptr;
  return frame_dict_item(c, node_of(c), key);
}

bool Simulator::overlay_reads(PyObject* c, PyObject* key) {
  ContainerOverlay* ov = overlay_of(c);
  if (!ov || !is_constant(key) || PySlice_Check(key)) return false;
  return !ov->list || PyLong_CheckExact(key);
}

PyObject* Simulator::overlay_item(PyObject* c, PyObject* key) {
  ContainerOverlay& ov = overlay_known(c);
  if (ov.list) {
    const Py_ssize_t i = list_index(ov, key);
    if (i < 0) {
      PyErr_SetString(PyExc_IndexError, "list index out of range");
      raise_lookup_error("indexing");
    }
    return overlay_slot(c, ov.items[i]);
  }
  if (PyObject* v = overlay_dict_get(c, ov, key)) return v;
  PyErr_SetObject(PyExc_KeyError, own(PyTuple_Pack(1, key)));
  raise_lookup_error("indexing");
}

PyObject* Simulator::overlay_len(PyObject* c) {
  ContainerOverlay& ov = overlay_known(c);
  if (ov.list) return own(PyLong_FromSsize_t(static_cast<Py_ssize_t>(ov.items.size())));
  Py_ssize_t n = 0;
  if (!ov.cleared) {  // the caller's keys, each as the overlay has it now
    PyObject* keys = own(py::dict_keys_in_order(c));
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); ++i)  // (comparing another key could run its __eq__)
      if (!is_constant(PyList_GET_ITEM(keys, i)))
        stop(Break::SideEffect, "reads the length of a dict it changed whose keys are not all constants");
    tree_.add_check(node_of(c), {CheckKind::DictKeys, (Py_INCREF(keys), keys), 0, {}});
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); ++i) n += own_key(ov, PyList_GET_ITEM(keys, i)) < 0;
  }
  for (const auto& kv : ov.keys) n += kv.second != nullptr;
  return own(PyLong_FromSsize_t(n));
}

bool Simulator::overlay_contains(PyObject* c, PyObject* key) {
  ContainerOverlay& ov = *overlay_of(c);
  return overlay_dict_get(c, ov, key) != nullptr;
}

// Whether the root's next instruction only reads changed containers through their overlays
// (refuse_dirty_read lets it run then).
bool Simulator::overlay_instruction(SimFrame& fr, const Instruction& ins) {
  const size_t n = fr.stack.size();
  auto dirty_elsewhere = [&](size_t from) {  // anything else on the stack it consumes
    for (size_t k = from; k < n; ++k)
      if (holds_dirty(fr.stack[k])) return true;
    return false;
  };
  switch (ins.op) {
    case Opcode::BINARY_SUBSCR:
      return n >= 2 && overlay_reads(fr.stack[n - 2], fr.stack[n - 1]) && !holds_dirty(fr.stack[n - 1]);
    case Opcode::CONTAINS_OP:
      return n >= 2 && overlay_of(fr.stack[n - 1]) && !overlay_of(fr.stack[n - 1])->list &&
             overlay_reads(fr.stack[n - 1], fr.stack[n - 2]);
    case Opcode::COMPARE_OP:  // (3.7/3.8: in, not in)
      return (ins.arg == 6 || ins.arg == 7) && n >= 2 && overlay_of(fr.stack[n - 1]) &&
             !overlay_of(fr.stack[n - 1])->list && overlay_reads(fr.stack[n - 1], fr.stack[n - 2]);
    case Opcode::CALL_FUNCTION:
    case Opcode::CALL:  // len(c)
      return ins.arg == 1 && n >= 2 && is_builtin(fr.stack[n - 2], "len") && overlay_of(fr.stack[n - 1]) &&
             !dirty_elsewhere(n);
    default:
      return false;
  }
}

// A deferred change to the caller's list or dict, applied to its overlay (sim_effects.cc calls
// it for each method it replays and each item store or delete).
void Simulator::overlay_change(PyObject* c, const std::string& name, const std::vector<PyObject*>& args) {
  ContainerOverlay& ov = overlay_for(c);
  if (!ov.exact) return;
  auto inexact = [&] { ov.exact = false; };
  if (ov.list) {
    const bool at_end = name == "append" || name == "extend" || name == "clear";
    // An insert before the caller's items are known would need their number (a guard on a log's
    // length recompiles as it grows): the overlay gives up instead. An item store or delete has
    // guarded the length already (sim_effects.cc store_item).
    const bool by_index = (name == "__setitem__" || name == "__delitem__") && !args.empty() && PyLong_CheckExact(args[0]);
    if (name == "insert" && !ov.base_known && length_guarded(c)) overlay_known(c);  // (costs no new guard)
    if (!at_end && !by_index && !(name == "insert" && ov.base_known)) return inexact();  // (a slice, another method)
    if (by_index) overlay_known(c);
    if (name == "append" && args.size() == 1) {
      ov.items.push_back({-1, args[0]});
    } else if (name == "clear" && args.empty()) {
      ov.items.clear();
      ov.base_known = true;  // (none of the caller's items is left: nothing to guard)
    } else if (name == "extend" && args.size() == 1 && (PyList_CheckExact(args[0]) || PyTuple_CheckExact(args[0])) &&
               !overlays_.count(args[0]) && !dirty_.count(args[0])) {
      for (PyObject* v : unpacked(args[0])) ov.items.push_back({-1, v});
    } else if (name == "insert" && args.size() == 2 && PyLong_CheckExact(args[0])) {
      Py_ssize_t i = PyLong_AsSsize_t(args[0]);
      if (i == -1 && PyErr_Occurred()) return PyErr_Clear(), inexact();
      const Py_ssize_t n = static_cast<Py_ssize_t>(ov.items.size());
      if (i < 0) i = std::max<Py_ssize_t>(0, i + n);
      i = std::min(i, n);
      ov.items.insert(ov.items.begin() + i, {-1, args[1]});
    } else if (name == "__setitem__" && args.size() == 2 && PyLong_CheckExact(args[0])) {
      const Py_ssize_t i = list_index(ov, args[0]);
      if (i < 0) return inexact();
      ov.items[i] = {-1, args[1]};
    } else if (name == "__delitem__" && args.size() == 1 && PyLong_CheckExact(args[0])) {
      const Py_ssize_t i = list_index(ov, args[0]);
      if (i < 0) return inexact();
      ov.items.erase(ov.items.begin() + i);
    } else {
      inexact();
    }
    return;
  }
  auto set = [&](PyObject* key, PyObject* value) {
    if (!is_constant(key)) return inexact();
    const int k = own_key(ov, key);
    if (k >= 0) ov.keys[k].second = value;
    else ov.keys.emplace_back(key, value);
  };
  if (name == "__setitem__" && args.size() == 2) {
    set(args[0], args[1]);
  } else if (name == "__delitem__" && args.size() == 1) {
    set(args[0], nullptr);
  } else if (name == "setdefault" && (args.size() == 1 || args.size() == 2)) {
    if (is_constant(args[0]) && !overlay_dict_get(c, ov, args[0])) set(args[0], args.size() == 2 ? args[1] : Py_None);
  } else if (name == "clear" && args.empty()) {
    ov.keys.clear();
    ov.cleared = true;
  } else if (name == "update" && args.size() == 1 && PyDict_CheckExact(args[0]) && node_of(args[0]) < 0 &&
             !overlays_.count(args[0]) && !dirty_.count(args[0])) {
    Py_ssize_t pos = 0;  // (a dict the simulation made holds the simulated values themselves)
    PyObject *k, *v;
    while (PyDict_Next(args[0], &pos, &k, &v)) set(k, v);
  } else {
    inexact();
  }
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
