// Rebinds: the ways a live object comes to hold something else without any dict changing, which
// the guards' fast pass (guards/guard_tree.cc) must hear of because it trusts an object it saw
// unchanged to still be what it saw. A tensor object taking another pj::Tensor (assign_value, an
// in-place write capture records); an instance of a watched class (pijit's Tensor, Cell) assigned
// another __dict__; a Cell assigned another __class__. Each bumps g_rebinds; while it stands still,
// such an object keeps its instance dict (a Cell its class too), and a tensor its shape and dtype.
//
// The counting descriptors serve attribute assignment (`o.__dict__ = d`, setattr,
// object.__setattr__); calling another class's raw descriptor on the object, or C code writing the
// slot, goes unseen. (Tensors' __class__ is not watched: pijit's numpy stand-in assigns it on every
// result, and each count would send every guard tree back to its full walk.)
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <cstdint>

namespace pj::py {

extern uint64_t g_rebinds;  // under the GIL

// Puts counting descriptors in cls's own namespace: `__dict__` (cls has instance dicts), and with
// `cls_too` `__class__`. They read and assign as the ones they replace (errors included). false
// with a Python exception set.
bool watch_rebinds(PyTypeObject* cls, bool cls_too);
// Whether assigning __class__ (__dict__) to an instance of t goes through a counting descriptor.
bool class_watched(PyTypeObject* t);
bool dict_watched(PyTypeObject* t);

}  // namespace pj::py
