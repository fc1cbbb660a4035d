// What the simulator needs to know about a code object's bytecode, computed once per code object
// and kept while it lives (capture/decoded_code.cc): a function captured again (a recompile, stress
// mode's every frame, a helper inlined into many functions) is not decoded and analysed again.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <string>
#include <vector>

#include "py/bytecode.h"

namespace pj::capture {

struct DecodedCode {
  std::vector<py::Instruction> ins;
  std::vector<int> at;        // code unit -> the instruction starting there (or its EXTENDED_ARG prefix); -1: none
  std::vector<char> in_loop;  // per instruction: between a backward jump's target and the jump, or a for body
  std::vector<py::ExceptionEntry> handlers;  // 3.11's exception table
  std::vector<int> handler;          // per instruction: the entry of `handlers` covering it; -1: none
  std::vector<char> handler_start;   // per instruction: some entry's target (a handler begins)

  // The instruction at byte offset `offset`; -1 where none starts there.
  int index_at(int offset) const {
    if (offset < 0 || offset % py::kCodeUnit != 0) return -1;
    const size_t u = static_cast<size_t>(offset / py::kCodeUnit);
    return u < at.size() ? at[u] : -1;
  }
};

// The analysis of co (borrowed: valid while co lives and until the next call for another code, which
// may drop dead codes' entries: the simulator holds each code it loads), or nullptr with *error set
// when its bytecode cannot be decoded (not cached: the caller refuses the capture).
const DecodedCode* decoded_code(PyCodeObject* co, std::string* error);

}  // namespace pj::capture
