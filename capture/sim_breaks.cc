// Graph breaks at the root frame's statement boundaries: the graph runs the statements captured
// so far, the rewritten code puts the locals and cells they assigned back, and the interpreter
// runs the rest of the frame from the statement where capture stopped (codegen: ResumePlan).
//
// A boundary is an instruction of the root frame where the value and block stacks are empty, so
// the interpreter can start there with nothing but the frame's variables. Work after the boundary
// is dropped from the graph (the interpreter redoes it); that is sound only while none of it was
// a write to an object the boundary's variables reach, so every write is logged (mutated_).
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_SUPPORTED

#include <unordered_set>

#include "capture/sim_state.h"

namespace pj::capture {

void Simulator::mark_boundary(SimFrame& fr) {
  Boundary& b = boundary_;
  const Instruction& ins = (*fr.ins)[fr.pc];
  b.valid = true;
  b.offset = ins.offset;
  b.line = ins.line;
  PyCodeObject* co = fr.code;
  b.nargs = co->co_argcount + co->co_kwonlyargcount + ((co->co_flags & CO_VARARGS) ? 1 : 0) +
            ((co->co_flags & CO_VARKEYWORDS) ? 1 : 0);
  b.locals = fr.locals;
  b.stored = fr.stored;
  int ncell = py::code_ncells(co);
  b.cells.resize(ncell);
  for (int i = 0; i < ncell; ++i) {
    PyObject* v = written_cells_.count(fr.cells[i]) ? PyCell_GET(fr.cells[i]) : null_slot();
    if (v && v != b.cells[i] && v != null_slot()) {  // a later STORE_DEREF drops the cell's reference
      Py_INCREF(v);
      own(v);
    }
    b.cells[i] = v;
  }
  b.graph = graph_.mark();
  b.mutations = mutated_.size();
  b.ordinal = ++boundaries_;
  if (b.ordinal == opt_.stop_at_boundary) {
    reached_boundary_ = true;
    stop(Break::Internal, "stopped at the graph break");
  }
}

// Whether `target` is, or is held by, a value a boundary variable holds (through the containers
// capture built or copied; frame objects are never written without refusing at the write).
bool Simulator::reachable_from_boundary(PyObject* target) {
  std::unordered_set<PyObject*> seen;
  std::vector<PyObject*> todo;
  for (PyObject* v : boundary_.locals)
    if (v) todo.push_back(v);
  for (PyObject* v : boundary_.cells)
    if (v && v != null_slot()) todo.push_back(v);
  while (!todo.empty()) {
    PyObject* v = todo.back();
    todo.pop_back();
    if (v == target) return true;
    if (!seen.insert(v).second) continue;
    if (PyTuple_Check(v) || PyList_Check(v)) {
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i) todo.push_back(PySequence_Fast_GET_ITEM(v, i));
    } else if (PyDict_Check(v)) {
      Py_ssize_t pos = 0;
      PyObject *k, *item;
      while (PyDict_Next(v, &pos, &k, &item)) todo.push_back(item);
    } else if (PyCell_Check(v) && PyCell_GET(v)) {
      todo.push_back(PyCell_GET(v));
    }
  }
  return false;
}

bool Simulator::can_break(Break why) {
  const Boundary& b = boundary_;
  // An interruption must reach the caller; an internal failure leaves nothing to trust.
  if (!opt_.allow_breaks || !b.valid || why == Break::Interrupted || why == Break::Internal) return false;
  if (b.graph.nodes == 0 && !opt_.break_without_graph) return false;  // nothing worth a graph
  for (size_t k = b.mutations; k < mutated_.size(); ++k)
    if (reachable_from_boundary(mutated_[k])) return false;  // the interpreter would write it again
  return true;
}

bool Simulator::plan_break() {
  const Boundary& b = boundary_;
  if (!reached_boundary_ || graph_.mark().values != b.graph.values) return false;  // not stopped there
  codegen::ResumePlan& plan = r_.plan.resume;
  planning_break_ = true;
  try {
    for (size_t i = 0; i < b.locals.size(); ++i) {
      if (!b.stored[i]) continue;  // still what the frame started with
      if (b.locals[i]) plan.locals.emplace_back(static_cast<int>(i), plan_return(b.locals[i]));
      else if (static_cast<int>(i) < b.nargs) return false;  // a deleted argument (rare): no break
    }
    for (size_t i = 0; i < b.cells.size(); ++i) {
      PyObject* v = b.cells[i];
      if (v == null_slot()) continue;  // still what the frame started with
      plan.cells.emplace_back(static_cast<int>(i), plan_return(v));
    }
  } catch (const StopCapture&) {
    return false;  // a value the rewritten code cannot rebuild (an iterator, a function made here)
  }
  r_.plan.resumes = true;
  r_.plan.line = b.line;  // the rewritten code's own instructions belong to the resumed statement
  plan.offset = b.offset;
  return true;
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_SUPPORTED
