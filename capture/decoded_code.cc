#include "capture/decoded_code.h"

#if PJ_PY_CAPTURE_BUILT

#include <algorithm>
#include <memory>

#include "py/code_keyed.h"
#include "py/py_common.h"

namespace pj::capture {
namespace {

// Code object -> its analysis (py::CodeKeyed: a dead code's address can be reused). Not co_extra:
// a code object with an extra array makes CPython call every registered free function when it dies,
// a foreign one too, which may not survive the interpreter's finalization.
py::CodeKeyed<std::unique_ptr<DecodedCode>>& cache() {
  static auto* c = new py::CodeKeyed<std::unique_ptr<DecodedCode>>();  // (never destroyed: outlives finalization)
  return *c;
}

std::unique_ptr<DecodedCode> analyse(PyCodeObject* co, std::string* error) {
  py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(co));
  if (!d.ok()) {
    *error = "cannot decode " + py::text(co->co_name) + ": " + d.error;
    return nullptr;
  }
  auto dec = std::make_unique<DecodedCode>();
  dec->ins = std::move(d.instructions);
  const size_t n = dec->ins.size();
  // 3.11 names a cell by its slot among all locals; the simulation keeps 3.7-3.10's index among
  // the cells (SimFrame::cells, guards' Deref paths).
  if (py::kDerefIndexesLocals)
    for (py::Instruction& i : dec->ins)
      if (has_flag(i.op, py::kFree) && (i.arg = py::deref_cell_index(co, i.arg)) < 0) {
        *error = std::string(op_name(i.op)) + " of a slot that holds no cell";
        return nullptr;
      }
  dec->handlers = std::move(d.handlers);
  dec->handler.assign(n, -1);
  dec->handler_start.assign(n, 0);
  int end = 0;
  for (const py::Instruction& i : dec->ins) end = std::max(end, i.offset + py::kCodeUnit);
  dec->at.assign(static_cast<size_t>(end / py::kCodeUnit), -1);
  for (size_t i = 0; i < n; ++i)
    dec->at[dec->ins[i].start / py::kCodeUnit] = dec->at[dec->ins[i].offset / py::kCodeUnit] = static_cast<int>(i);
  for (size_t e = 0; e < dec->handlers.size(); ++e)
    for (size_t i = 0; i < n; ++i) {
      if (dec->ins[i].offset >= dec->handlers[e].start && dec->ins[i].offset < dec->handlers[e].end)
        dec->handler[i] = static_cast<int>(e);
      if (dec->ins[i].offset == dec->handlers[e].target) dec->handler_start[i] = 1;
    }
  // in_loop: the ranges marked by +1/-1 at their ends, summed (instructions are in offset order)
  std::vector<int> marks(n + 1, 0);
  auto mark = [&](int from, int to) {  // byte offsets, both ends included
    auto lo = std::lower_bound(dec->ins.begin(), dec->ins.end(), from, [](const py::Instruction& i, int o) { return i.offset < o; });
    auto hi = std::upper_bound(dec->ins.begin(), dec->ins.end(), to, [](int o, const py::Instruction& i) { return o < i.offset; });
    if (lo >= hi) return;
    ++marks[lo - dec->ins.begin()];
    --marks[hi - dec->ins.begin()];
  };
  for (const py::Instruction& j : dec->ins) {
    if (j.jump_target >= 0 && j.jump_target <= j.offset && !has_flag(j.op, py::kSetup)) mark(j.jump_target, j.offset);
    // a for loop's body, also one that never jumps back (3.11 leaves out the jump a body that
    // always returns cannot reach)
    if (j.op == py::Opcode::FOR_ITER) mark(j.offset, j.jump_target - 1);
  }
  dec->in_loop.assign(n, 0);
  int depth = 0;
  for (size_t i = 0; i < n; ++i) {
    depth += marks[i];
    dec->in_loop[i] = depth > 0;
  }
  return dec;
}

}  // namespace

const DecodedCode* decoded_code(PyCodeObject* co, std::string* error) {
  if (std::unique_ptr<DecodedCode>* known = cache().find(co)) return known->get();
  std::unique_ptr<DecodedCode> dec = analyse(co, error);
  if (!dec) return nullptr;
  std::unique_ptr<DecodedCode>* kept = cache().put(co, std::move(dec));
  if (!kept) *error = "cannot hold code " + py::text(co->co_name) + " weakly";  // (code objects take weak references)
  return kept ? kept->get() : nullptr;
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
