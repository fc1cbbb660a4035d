// What the simulator needs from the jit runtime above it, handed down at start-up (capture must
// not include runtime/: the layers depend one way).
#pragma once

#include "py/pyport.h"  // first (Python.h)

namespace pj::capture {

// The function a pijit.jit object wraps (borrowed), or nullptr when o is not one. A jitted
// function called from code being captured is inlined into the caller's graph.
using JitTargetFn = PyObject* (*)(PyObject* o);
void set_jit_target_fn(JitTargetFn fn);  // called once by the runtime's module init
PyObject* jit_target(PyObject* o);

}  // namespace pj::capture
