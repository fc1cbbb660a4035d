// pijit._C.op_entry (pyext/op_entry.cc): pijit.ops's elementwise functions as one C entry each.
#pragma once
#include "py/py_common.h"

namespace pj::py {
bool init_op_entries(PyObject* module);
}  // namespace pj::py
