// pijit._C._op_entry (pyext/op_entry.cc): pijit.ops's elementwise functions as one C entry each.
#pragma once
#include "py/py_common.h"

namespace pj::py {
bool init_op_entries(PyObject* module);
// The type of pijit.ops's elementwise functions (capture runs their calls under its recorder).
PyTypeObject* op_entry_type();
}  // namespace pj::py
