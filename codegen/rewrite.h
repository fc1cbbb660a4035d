// The rewritten code object of a captured frame: load the graph inputs along their guard paths,
// call the compiled graph, rebuild the return value from its outputs, return it.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <functional>
#include <vector>

#include "codegen/code_builder.h"
#include "codegen/plan.h"
#include "guards/guard_tree.h"

namespace pj::codegen {

// A new code object with the same names, cells, free variables, argument layout, file and
// first line as `original` (so the shadow frame can take over its fast locals, and tracebacks
// name the user's function and return line). `runner` is the callable that runs the graph on its
// inputs and returns a tuple of outputs (unused when the plan calls no graph). nullptr with a Python exception on failure.
// A plan with a graph break (plan.resumes) also needs resume functions' code objects: it asks
// `make_resume` for each (a new reference, or nullptr with an exception), so that the caller can
// share one code between breaks that resume at the same place and make it a capture candidate;
// without one, emit_resume_code makes them.
using ResumeMaker = std::function<PyObject*(int offset, int depth, const std::vector<char>& bound, int line,
                                            const std::vector<BlockPlan>& blocks, const std::vector<int>& nulls,
                                            bool raise_top)>;
PyObject* emit_graph_code(PyCodeObject* original, const guards::GuardTree& guards, const FramePlan& plan,
                          PyObject* runner, const ResumeMaker& make_resume = nullptr);

// The code of a resume function: the original code from `offset` on, entered with every fast local
// of the original (those `bound` says are not, deleted first) and `depth` stack values as
// positional arguments, and the original's cells as free variables; inside `blocks` again.
// 3.11: the stack positions `nulls` hold a callable's NULL, which the code pushes itself (it is
// not an argument); the original's exception table comes with its code, so `blocks` need no entry.
// `raise_top`: the top stack value is an exception the instruction at `offset` raised in the
// rewritten code; the code raises it there again, inside `blocks` (its handlers run as they would have).
PyObject* emit_resume_code(PyCodeObject* original, int offset, int depth, const std::vector<char>& bound, int line,
                           const std::vector<BlockPlan>& blocks = {}, const std::vector<int>& nulls = {},
                           bool raise_top = false);

// Emits into b: return resume(fn, [*locals, *stack]), fn a new function of the resume `code` made
// for `original`, closing over its cells, called with every fast local (None for one `bound` says
// is not) and the `depth` values on the stack (3.11: `nulls`, a callable's NULLs among them).
#if PJ_PY_CAPTURE_BUILT
void emit_resume_call(CodeBuilder& b, PyCodeObject* original, PyObject* code, int depth, const std::vector<char>& bound,
                      const std::vector<int>& nulls = {});
#endif

// The original bytecode decoded and assembled again by pijit (stress mode runs frames that were
// not captured through this, to exercise the assembler and shadow frames on arbitrary code).
PyObject* reassemble(PyCodeObject* original);

}  // namespace pj::codegen
