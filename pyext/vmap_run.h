// pijit._C.vmap_run (pyext/vmap_run.cc): ops.vmap's batched evaluation.
#pragma once
#include "py/py_common.h"

namespace pj::py {
bool init_vmap_functions(PyObject* module);
}  // namespace pj::py
