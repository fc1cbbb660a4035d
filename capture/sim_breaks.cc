// Graph breaks: the graph runs the root frame's instructions captured so far, the rewritten code
// puts the locals, cells and value stack they left back, the interpreter runs the instruction
// where capture stopped, and a resume function (codegen) runs the rest (capture candidate itself).
//
// A break point is a root-frame instruction outside loops, handlers and finally bodies (try and
// with blocks may be open: codegen enters them again). What capture simulated of
// that instruction (a call inlined partway) is dropped: the interpreter redoes it. That is sound
// only while none of it was a write to an object the point's values reach, so every write is
// logged (mutated_). The chosen point is then simulated again, stopping there (capture_frame), so
// the graph and guards are exactly those of the instructions before it.
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_BUILT

#include <cstring>
#include <unordered_set>

#include "capture/sim_state.h"
#include "pyext/tensor_object.h"

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
// to what b's values reach, and b must leave something worth a graph: graph work before it, or,
// where the interpreter runs an instruction first (`runs`), a tensor the code after it may use.
// The resume function then starts past what capture could not do, not at its own entry.
bool Simulator::breakable(const BreakPoint& b, bool runs) {
  if (!b.valid) return false;
  if (b.graph.nodes == 0 && !opt_.break_without_graph &&
      !(runs && graphless_ok_ && holds_live_tensor(b) && work_after(point_.offset)))
    return false;
  for (size_t k = b.mutations; k < mutated_.size(); ++k)
    if (reachable_from(b, mutated_[k])) return false;
  return true;
}

// Where to break, and which instructions the interpreter runs before the resume function takes
// over (break_offset_). Preferably from the start of the failing instruction's source line (what
// the line computed from Python scalars stays out of the graph and its guards) through the
// failing instruction. A method pair on the value stack is handed to the resume function as its
// callable (codegen's method_call_pairs; 3.11 pushes the NULL again).
int Simulator::can_break(Break why) {
  // An interruption must reach the caller; an internal failure leaves nothing to trust.
  if (!opt_.allow_breaks || why == Break::Interrupted || why == Break::Internal) return 0;
  // An instruction that raises leaves no code after it to capture; a loop too long to unroll is
  // run per iteration instead (runtime's outline_entry).
  graphless_ok_ = why != Break::Raises && why != Break::InstructionBudget;
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
  break_else_ = 0;
  const BreakPoint& p = point_;
  const BreakPoint& s = line_start_;
  bool prefix = s.valid && s.stack.size() <= p.stack.size();
  for (size_t k = 0; prefix && k < s.stack.size(); ++k) prefix = s.stack[k] == p.stack[k];
  // Inside try or with blocks, what the interpreter runs is inside them too (codegen catches what
  // it raises and raises it again there, with the locals as they were at the failing instruction:
  // so no local may be stored before it, and no block may begin or end on the way: a with-block's
  // exit code carries its last line).
  const bool in_blocks = !p.blocks.empty() || (s.valid && !s.blocks.empty());
  if (in_blocks) prefix = prefix && s.blocks == p.blocks && !stores_local_between(s.offset, p.offset);
  Opcode op = p.op;
  // A bare `raise` re-raises without a traceback entry of its own, and an instruction that pops
  // or unwinds a block (a `return` leaving a try's blocks) would pop the catch-all instead: the
  // resume function (which enters the blocks again) starts at it, as the interpreter reached it.
  if (!p.blocks.empty() && ((op == Opcode::RAISE_VARARGS && p.arg == 0) || op == Opcode::POP_BLOCK || py::handles_blocks(op))) {
    break_offset_ = -1;
    if (prefix && breakable(s, false)) return s.ordinal;
    return breakable(p, false) ? p.ordinal : 0;
  }
  bool conditional = has_flag(op, py::kCondJump);
  // Run through the failing instruction, a plain one or a branch: the interpreter runs exactly it,
  // and the resume function starts after it with its result. From the start of its line instead
  // when the line recorded no tensor work before it: what the line computed from Python scalars
  // then stays out of the graph and its guards.
  if (point_current_ && (!py::is_jump(op) || conditional)) {
    break_offset_ = p.offset;
    const bool line = prefix && s.ordinal != p.ordinal && breakable(s, true);
    if (line && s.graph.nodes == p.graph.nodes) return s.ordinal;
    if (breakable(p, true)) {
      if (line) break_else_ = s.ordinal;  // (p's stack may hold what bytecode cannot rebuild)
      return p.ordinal;
    }
    return line ? s.ordinal : 0;
  }
  // Run up to it, the resume function starts with it (a loop or block entry). A failure past the
  // last point (inside a loop): the resume function starts at that point's line, which is where
  // its values are fewest.
  if (!point_current_ && prefix && breakable(s, false)) {
    break_offset_ = -1;
    return s.ordinal;
  }
  if (point_current_ && prefix && s.ordinal != p.ordinal && p.prev_offset >= 0 && breakable(s, true)) {
    break_offset_ = p.prev_offset;
    return s.ordinal;
  }
  break_offset_ = -1;
  if (breakable(p, false)) return p.ordinal;
  return prefix && breakable(s, false) ? s.ordinal : 0;
}

// Whether an instruction of the root's code from offset `from` up to `to` stores or deletes a fast local.
bool Simulator::stores_local_between(int from, int to) const {
  auto it = decoded_.find(frames_root_code_);
  if (it == decoded_.end()) return true;
  for (const Instruction& in : it->second->ins)
    if (in.offset >= from && in.offset < to && (in.op == Opcode::STORE_FAST || in.op == Opcode::DELETE_FAST)) return true;
  return false;
}

// Whether the root's code after `offset` computes anything (calls, operators, attributes): what
// a resume function starting there could capture. `return f(x)` leaves nothing to.
bool Simulator::work_after(int offset) const {
  auto it = decoded_.find(frames_root_code_);
  if (it == decoded_.end()) return false;
  for (const Instruction& in : it->second->ins) {
    if (in.offset <= offset) continue;
    const char* name = py::op_name(in.op);
    for (const char* prefix : {"CALL", "BINARY_", "INPLACE_", "UNARY_", "COMPARE_OP", "CONTAINS_OP", "LOAD_ATTR",
                               "LOAD_METHOD", "STORE_ATTR", "STORE_SUBSCR", "FOR_ITER", "GET_ITER"})
      if (std::strncmp(name, prefix, std::strlen(prefix)) == 0) return true;
  }
  return false;
}

// (a tensor, or a tuple or list of them: no deeper, and nothing that runs code or can stop capture)
bool Simulator::holds_live_tensor(const BreakPoint& b) {
  auto tensorish = [](PyObject* v) {
    if (!v || v == null_slot() || v == call_slot()) return false;
    if (py::is_tensor(v)) return true;
    if (!PyTuple_CheckExact(v) && !PyList_CheckExact(v)) return false;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i)
      if (py::is_tensor(PySequence_Fast_GET_ITEM(v, i))) return true;
    return false;
  };
  for (PyObject* v : b.stack)
    if (tensorish(v)) return true;
  for (size_t i = 0; i < b.locals.size(); ++i) {  // (one never read is the real frame's: no guard)
    PyObject* v = b.locals[i] || b.stored[i] ? b.locals[i] : py::frame_local(frames_root_real_, static_cast<int>(i));
    if (tensorish(v)) return true;
  }
  return false;
}

bool Simulator::plan_break() {
  const BreakPoint& b = point_;  // where the second pass stopped: the interpreter starts here
  if (!reached_point_ || graph_.mark().values != b.graph.values) return false;  // not stopped there
  if (generator_cleanup_pending()) return false;  // the interpreter would never run its cleanup
  codegen::ResumePlan& plan = r_.plan.resume;
  planning_break_ = true;
  try {
    // The order codegen builds them in: a container met again is the one built first.
    for (PyObject* v : b.stack) {
      if (v == call_slot() || v == null_slot()) {  // a callable's NULL (PUSH_NULL's, LOAD_METHOD's)
        plan.stack.emplace_back();
        plan.stack.back().kind = ReturnPlan::Null;
        continue;
      }
      plan.stack.push_back(plan_return(v));
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

// Where the value stack holds a callable's NULL once the interpreter ran the instructions up to
// and including break_offset_ (point_ is the failing instruction's point, or the one after
// break_offset_). A NULL sits under a callable until its call takes it; the failing instruction
// takes only its own (no other instruction consumes one) or pushes one: LOAD_METHOD (run as the
// simulator models it: NULL, then the attribute), 3.11's LOAD_GLOBAL under the global.
std::vector<int> Simulator::nulls_after_run() const {
  std::vector<int> out;
  const BreakPoint& p = point_;
  if (break_offset_ < 0) return out;
  const int size = static_cast<int>(p.stack.size());
  int taken = -1;
  if (break_offset_ == p.offset) {
    if (p.op == Opcode::CALL || p.op == Opcode::CALL_METHOD) taken = size - p.arg - 2;
    if (p.op == Opcode::CALL_FUNCTION_EX && py::kCallsOverNull) taken = size - 3 - (p.arg & 1);
  }
  for (int k = 0; k < size; ++k)
    if (k != taken && (p.stack[k] == call_slot() || p.stack[k] == null_slot())) out.push_back(k);
  if (break_offset_ == p.offset && p.op == Opcode::LOAD_GLOBAL && py::kGlobalPushesNull && (p.arg & 1)) out.push_back(size);
  if (break_offset_ == p.offset && p.op == Opcode::LOAD_METHOD) out.push_back(size - 1);
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
