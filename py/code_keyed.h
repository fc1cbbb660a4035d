#pragma once
// A map from code objects to values, held by weak reference: a dead code's address may be taken by
// a new code object, which must not find the dead one's value. Dead entries are swept when the map
// has doubled since the last sweep. GIL held throughout.

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "py/pyport.h"

namespace pj::py {

template <class V>
class CodeKeyed {
 public:
  // The value of the live code `co`, or null.
  V* find(PyCodeObject* co) {
    auto it = map_.find(co);
    return it != map_.end() && alive(it->second.ref, co) ? &it->second.value : nullptr;
  }
  // Sets co's value (over a dead code's at that address); null when co takes no weak reference,
  // with no Python error left.
  V* put(PyCodeObject* co, V value) {
    PyObject* ref = PyWeakref_NewRef(reinterpret_cast<PyObject*>(co), nullptr);
    if (!ref) {
      PyErr_Clear();
      return nullptr;
    }
    auto it = map_.find(co);
    if (it != map_.end()) {
      Py_DECREF(it->second.ref);
      it->second = Entry{ref, std::move(value)};
      return &it->second.value;
    }
    if (map_.size() >= sweep_at_) sweep();
    return &map_.emplace(co, Entry{ref, std::move(value)}).first->second.value;
  }

 private:
  struct Entry {
    PyObject* ref;  // weak reference to the code
    V value;
  };
  static bool alive(PyObject* ref, PyCodeObject* co) {
    return PyWeakref_GET_OBJECT(ref) == reinterpret_cast<PyObject*>(co);
  }
  void sweep() {
    for (auto it = map_.begin(); it != map_.end();) {
      if (alive(it->second.ref, it->first)) {
        ++it;
        continue;
      }
      Py_DECREF(it->second.ref);
      it = map_.erase(it);
    }
    sweep_at_ = std::max<size_t>(kMinSweep, 2 * map_.size());
  }
  static constexpr size_t kMinSweep = 64;
  std::unordered_map<PyCodeObject*, Entry> map_;
  size_t sweep_at_ = kMinSweep;
};

}  // namespace pj::py
