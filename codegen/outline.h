// Loop bodies as functions. A capture that fails inside a loop cannot break there: the resume
// function, captured in turn, would break again on the next iteration, one Python frame deeper
// each time. Instead the loop is driven from outside and its body becomes a function of its own,
// called once per iteration: the interpreter runs the loop (any iterator, any trip count), and the
// body, a capture candidate like a resume function, is captured with breaks of its own.
//
// The outer code is the original with the loop head replaced by a jump to a driver:
//   head': [FOR_ITER exhausted]  r = body(*locals, [item])  store what r says the body changed;
//          r[0] says how the iteration ended: next (back to head'), left to an instruction after
//          the loop (break, the loop test, with the values below dropped), 3.7's BREAK_LOOP, or return.
// The body is the loop's instructions run once: entered with every fast local (those not bound
// at the loop head deleted) and the value stack as placeholders, each way out a stub that returns
// (exit id, locals it wrote). Which locals are bound is decided statically (definite assignment at
// the head, what each way out wrote); a shape that static view cannot settle is not outlined.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <string>

#include "codegen/rewrite.h"
#include "py/py_common.h"

namespace pj::codegen {

struct OutlinedLoop {
  py::Ref outer;    // the original with the loop driven from outside (same signature and locals first)
  py::Ref body;     // one iteration: every fast local, then the item a for loop got, as arguments
  int head = -1;    // byte offset of the loop head in the original
  int line = 0;     // the loop head's line
};

// Outlines the outermost loop of `co` around the instruction at byte offset `offset`. false with
// *why (no Python exception) when there is no such loop or its shape is not one this handles;
// the caller then runs the code as it is. With `make_resume`, the code after the loop is a resume
// function the outer code calls where the loop ends (a capture candidate: the loop's exit is a
// graph break, so what follows the loop is captured too), wherever the exit leaves no value on the
// stack and each local is bound or unbound there whatever the path.
bool outline_loop(PyCodeObject* co, int offset, OutlinedLoop* out, std::string* why,
                  const ResumeMaker& make_resume = nullptr);

// Whether the code may look at its own frame (locals(), vars(), dir(), exec/eval,
// sys._getframe, inspect.currentframe): code pijit rewrites (a graph break's interpreter part, a
// resume function, a loop body) runs in a frame with locals of pijit's own, so such code is never
// split: it is captured whole or runs as it is.
bool inspects_frame(PyCodeObject* co);

}  // namespace pj::codegen
