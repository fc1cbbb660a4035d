// What the simulator needs from the jit runtime (capture/jit_runtime.cc).
#pragma once

#include "capture/pyport.h"  // first (Python.h)

namespace pj::capture {

// The function a pijit.jit object wraps (borrowed), or nullptr when o is not one. A jitted
// function called from code being captured is inlined into the caller's graph.
PyObject* jit_target(PyObject* o);

}  // namespace pj::capture
