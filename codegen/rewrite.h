// The rewritten code object of a captured frame: load the graph inputs along their guard paths,
// call the compiled graph, rebuild the return value from its outputs, return it.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include "codegen/plan.h"
#include "guards/guard_tree.h"

namespace pj::codegen {

// A new code object with the same names, cells, free variables, argument layout, file and
// first line as `original` (so the shadow frame can take over its fast locals, and tracebacks
// name the user's function and return line). `runner` is the callable that runs the graph on its
// inputs and returns a tuple of outputs (unused when the plan calls no graph). nullptr with a Python exception on failure.
// A plan with a graph break (plan.resumes) also makes resume functions' code objects: appended to
// *resume_codes (new references), for the caller to make capture candidates.
PyObject* emit_graph_code(PyCodeObject* original, const guards::GuardTree& guards, const FramePlan& plan,
                          PyObject* runner, std::vector<PyObject*>* resume_codes = nullptr);

// The code of a resume function: the original code from `offset` on, entered with every fast local
// of the original (those `bound` says are not, deleted first) and `depth` stack values as
// positional arguments, and the original's cells as free variables.
PyObject* emit_resume_code(PyCodeObject* original, int offset, int depth, const std::vector<char>& bound, int line);

// The original bytecode decoded and assembled again by pijit (stress mode runs frames that were
// not captured through this, to exercise the assembler and shadow frames on arbitrary code).
PyObject* reassemble(PyCodeObject* original);

}  // namespace pj::codegen
