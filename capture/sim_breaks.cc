// Graph breaks: the graph runs the root frame's instructions captured so far, the rewritten code
// puts the locals, cells and value stack they left back, the interpreter runs the instruction
// where capture stopped, and a resume function (codegen) runs the rest (capture candidate itself).
//
// A break point is a root-frame instruction with an empty block stack. What capture simulated of
// that instruction (a call inlined partway) is dropped: the interpreter redoes it. That is sound
// only while none of it was a write to an object the point's values reach, so every write is
// logged (mutated_). The chosen point is then simulated again, stopping there (capture_frame), so
// the graph and guards are exactly those of the instructions before it.
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_BUILT

#include <unordered_set>

#include "capture/sim_state.h"

namespace pj::capture {

void Simulator::mark_point(SimFrame& fr) {
  BreakPoint& b = point_;
  const Instruction& ins = (*fr.ins)[fr.pc];
  b.valid = true;
  b.offset = ins.offset;
  b.line = ins.line;
  b.op = ins.op;
  b.arg = ins.arg;
  PyCodeObject* co = fr.code;
  b.nargs = co->co_argcount + co->co_kwonlyargcount + ((co->co_flags & CO_VARARGS) ? 1 : 0) +
            ((co->co_flags & CO_VARKEYWORDS) ? 1 : 0);
  b.stack = fr.stack;
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
  b.blocks = fr.blocks;
  // 3.11: a try block is the exception-table entry covering the instruction (a with-block's has
  // its BEFORE_WITH block)
  if (const int e = (*fr.handler)[fr.pc]; e >= 0) {
    const py::ExceptionEntry& h = (*fr.handlers)[e];
    if (b.blocks.empty() || b.blocks.back().op != Opcode::BEFORE_WITH || b.blocks.back().target != h.target)
      b.blocks.push_back({Opcode::SETUP_FINALLY, h.target, static_cast<size_t>(h.depth)});
  }
  b.mutations = mutated_.size();
  b.prev_offset = last_offset_;
  b.ordinal = ++points_;
  if (after_jump_ || ins.line != last_line_ || !line_start_.valid) line_start_ = b;
  if (b.ordinal == opt_.stop_at_boundary) {
    reached_point_ = true;
    stop(Break::Internal, "stopped at the graph break");
  }
}

// Whether `target` is, or is held by, a value of point b (through the containers capture built or
// copied; frame objects are never written without refusing at the write).
bool Simulator::reachable_from(const BreakPoint& b, PyObject* target) {
  std::unordered_set<PyObject*> seen;
  std::vector<PyObject*> todo(b.stack.begin(), b.stack.end());
  for (PyObject* v : b.locals)
    if (v) todo.push_back(v);
  for (PyObject* v : b.cells)
    if (v && v != null_slot()) todo.push_back(v);
  while (!todo.empty()) {
    PyObject* v = todo.back();
    todo.pop_back();
    if (v == target) return true;
    if (!seen.insert(v).second) continue;
    if (made_object(v)) {
      for (const auto& attr : object_state(v)) todo.push_back(attr.second);
    } else if (PyTuple_Check(v) || PyList_Check(v)) {
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i) todo.push_back(PySequence_Fast_GET_ITEM(v, i));
    } else if (PyDict_Check(v)) {
      Py_ssize_t pos = 0;
      PyObject *k, *item;
      while (PyDict_Next(v, &pos, &k, &item)) todo.push_back(item);
    } else if (PyCell_Check(v) && PyCell_GET(v)) {
      todo.push_back(PyCell_GET(v));
    } else if (PyCFunction_Check(v) && PyCFunction_GET_SELF(v)) {  // out.append
      todo.push_back(PyCFunction_GET_SELF(v));
    }
  }
  return false;
}

// The interpreter redoes everything capture simulated from b on: none of it may have been a write
// to what b's values reach, and b must leave something worth a graph.
bool Simulator::breakable(const BreakPoint& b) {
  if (!b.valid || (b.graph.nodes == 0 && !opt_.break_without_graph)) return false;
  for (size_t k = b.mutations; k < mutated_.size(); ++k)
    if (reachable_from(b, mutated_[k])) return false;
  return true;
}

// Where to break, and which instructions the interpreter runs before the resume function takes
// over (break_offset_). Preferably from the start of the failing instruction's source line (what
// the line computed from Python scalars stays out of the graph and its guards) through the
// failing instruction. Resume functions take the value stack as arguments, so no LOAD_METHOD pair
// (its slot may be NULL) may be on it when they are called.
int Simulator::can_break(Break why) {
  // An interruption must reach the caller; an internal failure leaves nothing to trust.
  if (!opt_.allow_breaks || why == Break::Interrupted || why == Break::Internal) return 0;
  int ordinal = choose_break();
  // A resume function that starts where the interpreter runs nothing must start after graph work:
  // one starting at its own entry would break there again, a frame deeper each time.
  if (ordinal > 0 && break_offset_ < 0) {
    const BreakPoint& at = ordinal == point_.ordinal ? point_ : line_start_;
    if (at.graph.nodes == 0) return 0;
  }
  return ordinal;
}

int Simulator::choose_break() {
  const BreakPoint& p = point_;
  const BreakPoint& s = line_start_;
  bool prefix = s.valid && s.stack.size() <= p.stack.size();
  for (size_t k = 0; prefix && k < s.stack.size(); ++k) prefix = s.stack[k] == p.stack[k];
  auto nulls = [](const BreakPoint& b) {
    int n = 0;
    for (PyObject* v : b.stack) n += v == null_slot();
    return n;
  };
  // Inside a try block: the interpreter may run nothing outside it, so the resume function (which
  // enters the block again) starts at the point itself.
  if (!p.blocks.empty()) {
    break_offset_ = -1;
    if (prefix && s.blocks == p.blocks && nulls(s) == 0 && breakable(s)) return s.ordinal;
    return nulls(p) == 0 && breakable(p) ? p.ordinal : 0;
  }
  Opcode op = p.op;
  bool conditional = has_flag(op, py::kCondJump);
  // The method pair the failing instruction consumes, or makes.
  const bool takes_pair =
      op == Opcode::CALL_METHOD ||
      ((op == Opcode::CALL || op == Opcode::CALL_FUNCTION_EX) && py::kCallsOverNull &&
       p.stack.size() >= static_cast<size_t>(op == Opcode::CALL ? p.arg + 2 : 3 + (p.arg & 1)) &&
       p.stack[p.stack.size() - (op == Opcode::CALL ? p.arg + 2 : 3 + (p.arg & 1))] == null_slot());
  const bool makes_pair = op == Opcode::LOAD_METHOD;  // (3.11's call_slot a resume function pushes again)
  int pairs_after = nulls(p) - (takes_pair ? 1 : 0);
  // Run through the failing instruction: a plain one or a branch, leaving no method pair.
  if (point_current_ && (!py::is_jump(op) || conditional) && !makes_pair && pairs_after == 0) {
    break_offset_ = p.offset;
    if (prefix && breakable(s)) return s.ordinal;
    return breakable(p) ? p.ordinal : 0;
  }
  // Run up to it, the resume function starts with it (a loop or block entry, a LOAD_METHOD).
  // A failure past the last point (inside a loop): the resume function starts at that point's
  // line, which is where its values are fewest.
  if (!point_current_ && prefix && nulls(s) == 0 && breakable(s)) {
    break_offset_ = -1;
    return s.ordinal;
  }
  if (!point_current_ || pairs_after == 0 || (makes_pair && nulls(p) == 0)) {
    if (point_current_ && prefix && s.ordinal != p.ordinal && p.prev_offset >= 0 && breakable(s)) {
      break_offset_ = p.prev_offset;
      return s.ordinal;
    }
    break_offset_ = -1;
    if (nulls(p) == 0 && breakable(p)) return p.ordinal;
  }
  // Else the resume function starts at the line.
  break_offset_ = -1;
  return prefix && nulls(s) == 0 && breakable(s) ? s.ordinal : 0;
}

bool Simulator::plan_break() {
  const BreakPoint& b = point_;  // where the second pass stopped: the interpreter starts here
  if (!reached_point_ || graph_.mark().values != b.graph.values) return false;  // not stopped there
  if (generator_cleanup_pending()) return false;  // the interpreter would never run its cleanup
  codegen::ResumePlan& plan = r_.plan.resume;
  planning_break_ = true;
  try {
    // The order codegen builds them in: a container met again is the one built first.
    for (size_t k = 0; k < b.stack.size(); ++k) {
      if (b.stack[k] == call_slot()) {  // 3.11: PUSH_NULL's, which the resume function pushes again
        plan.stack.emplace_back();
        plan.stack.back().kind = ReturnPlan::Null;
        continue;
      }
      if (b.stack[k] != null_slot()) {
        plan.stack.push_back(plan_return(b.stack[k]));
        continue;
      }
      // LOAD_METHOD's empty slot under a bound attribute: the instruction becomes a plain call
      // (3.11: its CALL, over a NULL).
      bool method_slot = b.offset == opt_.break_offset && (b.op == Opcode::CALL_METHOD || b.op == Opcode::CALL) &&
                         k + b.arg + 2 == b.stack.size();
      if (!method_slot) return false;
      if (py::kCallsOverNull) {  // 3.11: the NULL itself, which its CALL takes
        plan.stack.emplace_back();
        plan.stack.back().kind = ReturnPlan::Null;
        continue;
      }
      plan.method_call_as_function = true;
    }
    for (size_t i = 0; i < b.locals.size(); ++i) {
      if (!b.stored[i]) continue;  // still what the frame started with
      if (b.locals[i]) plan.locals.emplace_back(static_cast<int>(i), plan_return(b.locals[i]));
      else if (static_cast<int>(i) < b.nargs) plan.deleted.push_back(static_cast<int>(i));
    }
    for (size_t i = 0; i < b.cells.size(); ++i) {
      PyObject* v = b.cells[i];
      if (v == null_slot()) continue;  // still what the frame started with
      if (!v) return false;
      plan.cells.emplace_back(static_cast<int>(i), plan_return(v));
    }
  } catch (const StopCapture&) {
    return false;  // a value the rewritten code cannot rebuild (an iterator, a function made here)
  }
  r_.plan.resumes = true;
  r_.plan.line = b.line;  // the rewritten code's own instructions belong to the break's line
  plan.offset = b.offset;
  plan.break_offset = opt_.break_offset;
  plan.bound = opt_.break_offset < 0 ? bound_at_point() : opt_.break_bound;  // where the resume starts
  if (opt_.break_offset >= 0) {
    plan.nulls = opt_.break_nulls;
  } else {
    for (size_t k = 0; k < plan.stack.size(); ++k)
      if (plan.stack[k].kind == ReturnPlan::Null) plan.nulls.push_back(static_cast<int>(k));
  }
  for (const SimFrame::Block& blk : b.blocks)
    plan.blocks.push_back({static_cast<int>(blk.op), blk.target, static_cast<int>(blk.level)});
  return true;
}

// 3.11: where the value stack holds a NULL once the interpreter ran the instructions up to and
// including break_offset_ (point_ is the failing instruction's point, or the one after
// break_offset_). A NULL sits under a callable until its CALL (or CALL_FUNCTION_EX) takes it; the
// failing instruction takes only its own (no other instruction consumes one) or, a LOAD_GLOBAL,
// pushes one under the global.
std::vector<int> Simulator::nulls_after_run() const {
  std::vector<int> out;
  const BreakPoint& p = point_;
  if (!py::kCallsOverNull || break_offset_ < 0) return out;
  const int size = static_cast<int>(p.stack.size());
  int taken = -1;
  if (break_offset_ == p.offset) {
    if (p.op == Opcode::CALL) taken = size - p.arg - 2;
    if (p.op == Opcode::CALL_FUNCTION_EX) taken = size - 3 - (p.arg & 1);
  }
  for (int k = 0; k < size; ++k)
    if (k != taken && (p.stack[k] == call_slot() || p.stack[k] == null_slot())) out.push_back(k);
  if (break_offset_ == p.offset && p.op == Opcode::LOAD_GLOBAL && (p.arg & 1)) out.push_back(size);
  return out;
}

// An argument that is also a cell variable starts in its cell: CPython leaves its fast slot empty.
std::vector<char> Simulator::bound_at_point() const {
  const BreakPoint& b = point_;
  PyCodeObject* co = frames_root_code_;
  std::vector<char> bound(b.locals.size());
  for (size_t i = 0; i < b.locals.size(); ++i) {
    bool in_cell = false;
    for (Py_ssize_t c = 0; !b.stored[i] && c < py::code_ncells(co); ++c)
      in_cell = in_cell || PyUnicode_Compare(py::code_cellname(co, c), py::code_varname(co, i)) == 0;
    bound[i] = b.stored[i] ? b.locals[i] != nullptr : static_cast<int>(i) < b.nargs && !in_cell;
  }
  return bound;
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
