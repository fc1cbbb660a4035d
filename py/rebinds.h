// Rebinds: the ways a live object comes to hold something else without any dict changing, which
// the guards' fast pass (guards/guard_tree.cc) must hear of because it trusts an object it saw
// unchanged to still be what it saw. A tensor object taking another pj::Tensor (assign_value, an
// in-place write capture records), and, for watched classes (pijit's Tensor and Cell), an object
// assigned another __class__ or another __dict__. Each bumps g_rebinds; while it stands still, a
// known object keeps its class, its instance dict and (tensors) its shape and dtype.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <cstdint>

namespace pj::py {

extern uint64_t g_rebinds;  // under the GIL

// Puts a counting `__class__` and `__dict__` descriptor in cls's own namespace (cls is a heap class
// with an instance dict, or pijit's TensorBase for __class__ alone); they read and assign as
// object's own do. false with a Python exception set.
bool watch_rebinds(PyTypeObject* cls);
// Whether assigning __class__ (__dict__) to an instance of t goes through the counting descriptor.
bool class_watched(PyTypeObject* t);
bool dict_watched(PyTypeObject* t);

}  // namespace pj::py
