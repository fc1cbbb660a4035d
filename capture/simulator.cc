// The simulator's frame loop (the opcode handlers: op_handlers.def, capture/op_*.cc).
#include "py/pyport.h"  // first (Python.h)

#include <algorithm>


#include "capture/sim_stack.h"
#include <unordered_set>

#include "capture/sim_state.h"

#include <sstream>

#include "py/py_common.h"
#include "graph/tape.h"
#include "pyext/tensor_object.h"
#include "pyext/augassign.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {

Simulator::Simulator(CaptureResult& r, const CaptureOptions& o)
    : r_(r), opt_(o), tree_(*r.guards), graph_(*r.graph), budget_(o.instruction_budget) {}

Simulator::~Simulator() {
  Py_XDECREF(pending_exc_.type);  // (an interruption never handed back: a stop elsewhere won)
  Py_XDECREF(pending_exc_.value);
  Py_XDECREF(pending_exc_.tb);
  for (auto it = keep_.rbegin(); it != keep_.rend(); ++it) Py_DECREF(*it);
}

int Simulator::current_line() const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    const SimFrame* fr = *it;
    if (!fr->library && fr->pc > 0 && fr->pc <= fr->ins->size()) return (*fr->ins)[fr->pc - 1].line;
  }
  return 0;
}

InlineChain Simulator::inline_chain() const {
  InlineChain chain;
  for (const SimFrame* fr : frames_) {
    if (fr->library || fr->pc == 0) continue;
    chain.push_back({py::text(fr->code->co_name), py::text(fr->code->co_filename),
                     fr->pc <= fr->ins->size() ? (*fr->ins)[fr->pc - 1].line : 0});
  }
  if (chain.size() < 2) chain.clear();  // the root frame alone: no chain
  return chain;
}

PyCodeObject* Simulator::current_code() const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
    if (!(*it)->library && (*it)->pc > 0) return (*it)->code;
  return nullptr;
}

PyCodeObject* Simulator::stopped_callee() const {
  if (long_loop_callee_) return long_loop_callee_;  // (pijit's own code too: nn.LSTM's time loop)
  for (size_t k = 1; k < frames_.size(); ++k)
    if (!frames_[k]->library) return graph_.nodes().size() > frames_[k]->ops_at_entry ? frames_[k]->code : nullptr;
  return nullptr;
}

Tensors Simulator::record(const OpDef& op, const Tensors& in, const Attrs& attrs) {
  refuse_untraceable(op);
  std::vector<int> ids;
  Metas metas;
  for (const Tensor& t : in) {
    metas.push_back(meta_of(t));
    if (t.is_symbolic()) {
      if (stale_views_.count(t.sym()))
        PJ_THROW(CaptureBreak) << "inplace_update: " << op.name << " reads a view of a tensor written in place since";
      ids.push_back(static_cast<int>(t.sym()));
      continue;
    }
    auto it = const_ids_.find(t.impl());
    if (it == const_ids_.end()) it = const_ids_.emplace(t.impl(), graph_.add_const(t)).first;
    ids.push_back(it->second);
  }
  dynamic_.before_node(op, attrs);
  Metas outs = infer_traced(op, metas, attrs);
  std::vector<int> vids = graph_.add_node(op, ids, attrs, outs, current_line());
  dynamic_.after_node(op, attrs, ids, vids, metas, outs);
  return symbolic_outputs(outs, vids);
}

void Simulator::sizes_read(const Tensor& t, int dim, const char* what) { dynamic_.sizes_read(t, dim, what); }

std::optional<Tensor> Simulator::lift_scalar(PyObject* number, DType dtype) { return dynamic_.lift_scalar(number, dtype); }

void Simulator::sweep_observed(const SweepTrace* t) { dynamic_.sweep_observed(t); }

// Decoded once per code object (capture/decoded_code.h); the capture keeps the code alive while
// its frames point into the analysis.
void Simulator::load_code(SimFrame& fr, PyCodeObject* co) {
  auto it = decoded_.find(co);
  if (it == decoded_.end()) {
    std::string error;
    const DecodedCode* dec = decoded_code(co, &error);
    if (!dec) stop(Break::Internal, error);
    own((Py_INCREF(co), reinterpret_cast<PyObject*>(co)));
    it = decoded_.emplace(co, dec).first;
  }
  fr.dec = it->second;
  fr.ins = &fr.dec->ins;
  fr.in_loop = &fr.dec->in_loop;
  fr.handlers = &fr.dec->handlers;
  fr.handler = &fr.dec->handler;
  fr.handler_start = &fr.dec->handler_start;
}

void Simulator::run_root(py::Frame* f) {
  SimFrame fr;
  fr.code = py::frame_code(f);
  frames_root_code_ = fr.code;
  frames_root_real_ = f;
  fr.root = true;
  fr.real = f;
  fr.globals = py::frame_globals(f);
  load_code(fr, fr.code);
  if (fr.code->co_argcount > 0) fr.self = py::frame_local(f, 0);  // (NULL when it lives in a cell)
  int nlocals = py::code_nlocals(fr.code);
  int ncells = py::code_ncells(fr.code) + py::code_nfrees(fr.code);
  fr.locals.assign(nlocals, nullptr);
  fr.loaded.assign(nlocals, 0);
  fr.stored.assign(nlocals, 0);
  fr.cells.assign(ncells, nullptr);
  fr.cell_loaded.assign(ncells, 0);
  for (int i = 0; i < ncells; ++i) {
    PyObject* cell = own(PyCell_New(nullptr));
    // A free variable's cell stands for an enclosing function's: a write through it (here, or in
    // an inner function given it by LOAD_CLOSURE) must reach the real cell.
    if (i >= py::code_ncells(fr.code)) {
      values_.mirror(cell, -1, Kind::Cell);
      if (PyObject* real = py::frame_cell(f, i)) real_cells_[real] = {cell, -1, true};
    } else {
      values_.created_cell(cell);
    }
    fr.cells[i] = cell;
  }
  TraceScope tracing(this);
  PyObject* result = nullptr;
  try {
    result = run_frame(fr);
  } catch (const SimRaise& raised) {  // no simulated handler: the interpreter raises it, for real
    PyObject* text = PyObject_Str(raised.value);
    std::string msg = text && PyUnicode_Check(text) ? py::text(text) : "";
    Py_XDECREF(text);
    PyErr_Clear();
    std::string detail = std::string(Py_TYPE(raised.value)->tp_name) + (msg.empty() ? "" : ": " + msg);
    if (raise_origin_.value == raised.value)
      throw StopCapture{Break::Raises, std::move(detail), raise_origin_.line, raise_origin_.code, nullptr, raise_origin_.chain};
    stop(Break::Raises, std::move(detail));
  }
  if (generator_cleanup_pending())
    stop(Break::Generator, "a generator is left suspended inside a try or with block (closing it runs its cleanup)");
  r_.line = fr.pc > 0 ? (*fr.ins)[fr.pc - 1].line : fr.code->co_firstlineno;
  r_.plan.ret = plan_return(result);
}

// What unpacking `seq` gives (UNPACK_SEQUENCE, UNPACK_EX): a tuple's or list's items themselves
// (wrapped along their guard paths when the container came from the frame), never copies made for
// real code, which would turn a dict subclass into a dict (fuzz 5602864); other iterables iterated.
std::vector<PyObject*> Simulator::unpacked(PyObject* seq, size_t limit) {
  if (sim_generator(seq) || user_operand(seq)) {
    PyObject* it = get_iter(seq);
    std::vector<PyObject*> items;
    while (items.size() < limit)
      if (PyObject* v = next_item(it)) items.push_back(v);
      else break;
    return items;
  }
  if (!trusted(seq)) stop(Break::UserObjectOperator, std::string("unpacking ") + Py_TYPE(seq)->tp_name);
  if (tuple_like(seq) || PyList_CheckExact(seq)) {
    if (node_of(seq) >= 0) return frame_items(seq);
    return std::vector<PyObject*>(PySequence_Fast_ITEMS(seq), PySequence_Fast_ITEMS(seq) + PySequence_Fast_GET_SIZE(seq));
  }
  std::vector<PyObject*> items;
  PyObject* it = get_iter(seq);
  while (PyObject* v = PyIter_Next(it)) items.push_back(own(v));
  if (PyErr_Occurred()) python_error("unpacking");
  return items;
}

// How many values from the top of the stack an instruction uses (-1: it may use any). 0 for those
// that only move values, and build the tuples and lists that stubs and calls pass on: a number
// they touch is not used yet.
static int stack_uses(Opcode op, int arg) {
  switch (op) {
    case Opcode::LOAD_FAST:
    case Opcode::STORE_FAST:
    case Opcode::DELETE_FAST:
    case Opcode::LOAD_CONST:
    case Opcode::LOAD_GLOBAL:
    case Opcode::LOAD_DEREF:
    case Opcode::POP_TOP:
    case Opcode::ROT_TWO:
    case Opcode::ROT_THREE:
    case Opcode::ROT_FOUR:
    case Opcode::DUP_TOP:
    case Opcode::DUP_TOP_TWO:
    case Opcode::NOP:
    case Opcode::JUMP_ABSOLUTE:
    case Opcode::JUMP_FORWARD:
    case Opcode::RETURN_VALUE:
    case Opcode::BUILD_TUPLE:
    case Opcode::BUILD_LIST:
    case Opcode::POP_BLOCK:  // (blocks: 3.7-3.10)
    case Opcode::SETUP_FINALLY:
    case Opcode::SETUP_EXCEPT:
    case Opcode::SETUP_LOOP:
    case Opcode::COPY:  // (3.11's)
    case Opcode::SWAP:
    case Opcode::PUSH_NULL:
    case Opcode::RESUME:
    case Opcode::PRECALL:
    case Opcode::KW_NAMES:
    case Opcode::MAKE_CELL:
    case Opcode::COPY_FREE_VARS:
    case Opcode::JUMP_BACKWARD:
    case Opcode::JUMP_BACKWARD_NO_INTERRUPT:
      return 0;
    case Opcode::CALL:  // 3.11: the slot, the callable and the arguments (its PRECALL uses none)
      return arg + 2;
    case Opcode::LOAD_METHOD:
    case Opcode::UNPACK_SEQUENCE:
    case Opcode::UNPACK_EX:
    case Opcode::FOR_ITER:
    case Opcode::JUMP_IF_FALSE_OR_POP:
    case Opcode::JUMP_IF_TRUE_OR_POP:
      return 1;
    case Opcode::STORE_ATTR:
    case Opcode::STORE_SUBSCR:
    case Opcode::DELETE_SUBSCR:
    case Opcode::DELETE_ATTR:
    case Opcode::STORE_GLOBAL:
    case Opcode::STORE_DEREF:
    case Opcode::POP_JUMP_IF_FALSE:
    case Opcode::POP_JUMP_IF_TRUE:
    case Opcode::POP_JUMP_FORWARD_IF_FALSE:
    case Opcode::POP_JUMP_FORWARD_IF_TRUE:
    case Opcode::POP_JUMP_BACKWARD_IF_FALSE:
    case Opcode::POP_JUMP_BACKWARD_IF_TRUE:
    case Opcode::POP_JUMP_FORWARD_IF_NONE:
    case Opcode::POP_JUMP_FORWARD_IF_NOT_NONE:
    case Opcode::POP_JUMP_BACKWARD_IF_NONE:
    case Opcode::POP_JUMP_BACKWARD_IF_NOT_NONE:
      return -py::stack_effect(op, arg, 0);  // push nothing
    case Opcode::LIST_APPEND:
    case Opcode::SET_ADD:
    case Opcode::MAP_ADD:
    case Opcode::LIST_EXTEND:
    case Opcode::SET_UPDATE:
    case Opcode::DICT_MERGE:
    case Opcode::DICT_UPDATE:
      return -1;  // also a container below
    default:
      break;
  }
  if (py::has_flag(op, py::kJumpRel) || py::has_flag(op, py::kJumpAbs) || py::has_flag(op, py::kEndsBlock)) return -1;
  return 1 - py::stack_effect(op, arg, 0);  // the rest push one value
}


PyObject* Simulator::run_frame(SimFrame& fr) {
  fr.ops_at_entry = graph_.nodes().size();
  fr.backedges_at_entry = backedges_;
  frames_.push_back(&fr);
  struct Pop {
    std::vector<SimFrame*>& v;
    ~Pop() { v.pop_back(); }
  } pop_frame{frames_};
  while (!fr.returned && !fr.suspended) {
    if (fr.pc >= fr.ins->size()) stop(Break::Internal, "ran off the end of the bytecode");
    if (--budget_ < 0) stop(Break::InstructionBudget, std::to_string(opt_.instruction_budget) + " instructions");
    // A signal's Python handler runs here rather than inside library code capture runs (what it
    // raises is then plainly the handler's): the call raises it, and nothing is cached.
    if (__builtin_expect(PyErr_CheckSignals() < 0, 0)) {
      r_.interrupted = true;
      stop(Break::Interrupted, "a signal handler raised");
    }
    ++r_.instructions;
    size_t at = fr.pc;
    // 3.11: a with-block ends where its body does (its exit path runs outside the handler's range,
    // as 3.7-3.10's POP_BLOCK ends it before), or where the exit was consumed. A NOP tells nothing:
    // it cannot raise, and the compiler leaves some in the body out of every range (a `try:`).
    while (!fr.blocks.empty() && fr.blocks.back().op == Opcode::BEFORE_WITH &&
           (fr.stack.size() <= fr.blocks.back().level ||
            ((*fr.ins)[at].op != Opcode::NOP && !within_handler(fr, at, fr.blocks.back().target))))
      fr.blocks.pop_back();
    // No break inside a loop: its resume function, captured in turn, would break again on the next
    // iteration, one Python frame deeper each time. A failure there breaks before the loop.
    if (fr.root && opt_.allow_breaks) {
      // Try blocks may be open (the resume function enters them again); loop and with blocks not.
      bool blocks_ok = true;
      for (const SimFrame::Block& b : fr.blocks) blocks_ok = blocks_ok && b.op != Opcode::SETUP_LOOP && b.reenterable;
      // 3.11: nor inside a handler, from its first instruction (3.7-3.10: its EXCEPT_HANDLER block,
      // pushed as the exception enters it, never re-entered)
      if (py::kExceptionTables) blocks_ok = blocks_ok && fr.handling.empty() && !(*fr.handler_start)[fr.pc];
#if PJ_PY_BLOCKS_37 || PJ_PY_FINALLY_38
      blocks_ok = blocks_ok && !finally_state_on_stack(fr);  // inside a finally body (its markers)
#endif
      point_current_ = blocks_ok && !(*fr.in_loop)[fr.pc] && static_cast<int>(fr.pc) >= opt_.first_break_index;
      if (point_current_) mark_point(fr);
    }
    const Instruction& ins = (*fr.ins)[fr.pc++];
    if (!dirty_.empty()) refuse_dirty_read(fr, ins);
    int uses = stack_uses(ins.op, ins.arg);
    bool moving = uses == 0;
    struct Disarm {
      DynamicShapes& d;
      ~Disarm() { d.disarm(); }
    } disarm{dynamic_};
    const bool derive = dynamic_.instruction_uses(fr, ins, uses, moving);
    size_t nblocks = fr.blocks.size();
    bool was_moving = moving_;
    moving_ = moving;
    try {
      step(fr, ins);
    } catch (const SimRaise& raised) {
      moving_ = was_moving;
      if (dynamic_.mid_use(derive)) stop(Break::ExceptionHandling, "an exception raised in the middle of a number's use");
      if (raise_origin_.value != raised.value) raise_origin_ = {raised.value, current_line(), current_code(), inline_chain()};
      if (!(py::kExceptionTables ? enter_table_handler(fr, at, raised.value) : enter_handler(fr, raised.value))) throw;
      raise_origin_.value = nullptr;  // caught
      if (fr.root) {  // a jump to the handler
        after_jump_ = true;
        last_line_ = ins.line;
        last_offset_ = -1;
      }
      continue;
    }
    dynamic_.instruction_done(fr, derive);
    moving_ = was_moving;
    if (fr.root) {
      after_jump_ = py::is_jump(ins.op) || fr.pc != at + 1 || fr.blocks.size() != nblocks;
      last_line_ = ins.line;
      last_offset_ = after_jump_ ? -1 : ins.offset;
    }
    if (fr.pc <= at && ++backedges_ > opt_.loop_limit) {
      if (fr.root && (*fr.in_loop)[at]) loop_offset_ = (*fr.ins)[at].offset;  // (stop() sees the head)
      std::string detail = "loops run more than " + std::to_string(opt_.loop_limit) + " iterations (unrolled, the graph grows with each)";
      if (!fr.root) note_long_loop(fr, &detail);
      stop(Break::InstructionBudget, std::move(detail));
    }
  }
  return fr.result;
}

// The loop limit reached in `fr`, a frame the root called (perhaps through others): when one call
// of the root's callee ran more than half the limit itself, the long loop is the callee's, and
// running a loop of the root per iteration would not help (an iteration holds that call). The
// capture breaks at the root's call instead (inside a loop of the root it cannot: the root runs as
// it is), and the callee, captured on its own when the interpreter calls it, runs its loop per
// iteration there (a root's loop; runtime outline_entry). A callee that calls another with the
// long loop does the same in its own capture, one level at a time.
void Simulator::note_long_loop(const SimFrame& fr, std::string* detail) {
  if (frames_.size() < 2) return;
  const SimFrame& callee = *frames_[1];
  if (callee.generator || callee.code == frames_root_code_ || graph_.nodes().size() <= callee.ops_at_entry ||
      backedges_ - callee.backedges_at_entry <= opt_.loop_limit / 2)
    return;
  long_loop_callee_ = callee.code;
  const Instruction& head = (*fr.ins)[fr.pc];  // where the backward jump went
  *detail += "; the loop at " + py::text(fr.code->co_filename) + ":" + std::to_string(head.line) + " in " +
             py::text(fr.code->co_name) + "() runs long: " + py::text(callee.code->co_name) +
             "() is captured on its own when the interpreter calls it, where that loop can run each iteration as a function";
}


namespace {

CaptureResult fresh_result(PyCodeObject* co) {
  CaptureResult r;
  r.guards = std::make_shared<guards::GuardTree>();
  r.graph = std::make_shared<graph::Graph>();
  r.file = py::text(co->co_filename);
  r.function = py::text(co->co_name);
  r.line = co->co_firstlineno;
  // The context mode changes what Cells do (GRAPH_MODE insists on whole graphs): guard it.
  int ctx = r.guards->root(guards::Access::Context, 0, nullptr);
  r.guards->add_check(ctx, {guards::CheckKind::Mode, nullptr, guards::context_mode(), {}});
  return r;
}

// The globals of every Python frame that runs for real while it lives (py::note_frame_ran).
class RanGlobals {
 public:
  RanGlobals() : outer_(py::t_ran_globals) { py::t_ran_globals = &dicts; }
  ~RanGlobals() {
    py::t_ran_globals = outer_;
    if (outer_) outer_->insert(dicts.begin(), dicts.end());
  }
  RanGlobals(const RanGlobals&) = delete;
  RanGlobals& operator=(const RanGlobals&) = delete;
  std::unordered_set<PyObject*> dicts;  // borrowed: compared with module namespaces only

 private:
  std::unordered_set<PyObject*>* outer_;
};

// One simulation of the frame. Returns the point a refusal can break at (0: none), and in *again
// what the second pass needs to know of the first.
int simulate(py::Frame* f, const CaptureOptions& options, CaptureResult& r, CaptureOptions* again = nullptr) {
  int break_at = 0;
  Simulator sim(r, options);
  RanGlobals ran;
  sim.ran_globals_ = &ran.dicts;
  try {
    sim.run_root(f);
    sim.guard_tensor_classes();
    sim.dynamic_.finish(false);
    r.ok = true;
  } catch (const StopCapture& s) {
    r.ok = false;
    r.reason = s.reason;
    r.detail = s.detail;
    r.chain = s.chain;
    if (s.line > 0) r.line = s.line;
    if (s.code) {  // where it stopped, in the function it stopped in
      r.file = py::text(s.code->co_filename);
      r.function = py::text(s.code->co_name);
    }
    if (!r.interrupted) {
      PyErr_Clear();  // what stopped capture is the reason; the interpreter meets it again itself
      bool loop_ok = options.allow_breaks && s.reason != Break::Interrupted && s.reason != Break::Internal;
      // (a loop of the root around a call whose own loop ran long is not run per iteration)
      r.loop_offset = loop_ok && !sim.long_loop_callee_ ? sim.loop_offset_ : -1;
      // A loop too long to unroll: its body as a function pays a call and a guard check per
      // iteration (~1.5 us), worth it only for a few ops per iteration.
      if (s.reason == Break::InstructionBudget && r.graph->nodes().size() < 4 * static_cast<size_t>(sim.backedges_ + 1))
        r.loop_offset = -1;
      if (options.stop_at_boundary && sim.plan_break()) {
        sim.guard_tensor_classes();
        sim.dynamic_.finish(true);
        r.ok = r.broke = true;
      } else if (!options.stop_at_boundary && again && (break_at = sim.can_break(s.reason)) > 0) {
        again->stop_at_boundary = break_at;
        again->stop_at_boundary_else = sim.break_else_;
        again->break_offset = sim.break_offset_;
        again->break_bound = sim.bound_at_point();
        again->break_nulls = sim.nulls_after_run();
      }
      if (!options.stop_at_boundary) {  // calls past the break point (all: no break) the interpreter makes
        for (const auto& c : sim.called_)
          if (c.second >= break_at && std::find(r.callees.begin(), r.callees.end(), c.first) == r.callees.end())
            r.callees.push_back(c.first);
        if (s.callee && std::find(r.callees.begin(), r.callees.end(), s.callee) == r.callees.end())
          r.callees.push_back(s.callee);
      }
    }
  } catch (const Error& e) {
    r.ok = false;
    r.reason = Break::Internal;
    r.detail = e.what();
  }
  if (!r.interrupted || !PyErr_Occurred()) {
    r.interrupted = false;
    PyErr_Clear();
  }
  return break_at;
}

}  // namespace

CaptureResult capture_frame(py::Frame* f, const CaptureOptions& options) {
  PyCodeObject* co = py::frame_code(f);
  CaptureResult r = fresh_result(co);
  PyObject *et, *ev, *tb;
  PyErr_Fetch(&et, &ev, &tb);  // capture must not disturb an exception being handled
  CaptureOptions again = options;
  if (simulate(f, options, r, &again) > 0) {
    // A graph break: simulate again up to the break only, so that the graph and its guards are
    // exactly those of the instructions before it (none the dropped part added: no recompiles for
    // values only the interpreter's part reads). The refusal stays the break's reason.
    CaptureResult b = fresh_result(co);
    simulate(f, again, b);
    if (!(b.ok && b.broke) && !b.interrupted && again.stop_at_boundary_else > 0) {
      again.stop_at_boundary = again.stop_at_boundary_else;
      b = fresh_result(co);
      simulate(f, again, b);
    }
    if (b.ok && b.broke) {
      b.reason = r.reason;
      b.detail = std::move(r.detail);
      b.chain = std::move(r.chain);
      b.line = r.line;
      b.file = std::move(r.file);
      b.function = std::move(r.function);
      b.callees = std::move(r.callees);
      r = std::move(b);
    } else if (b.interrupted) {
      r = std::move(b);
    }
  }
  if (r.interrupted) {  // the interruption replaces whatever was pending when the frame started
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
  } else {
    PyErr_Restore(et, ev, tb);
  }
  r.ops_seen = static_cast<int>(r.graph->nodes().size());
  if (r.ok) {
    // An unused op whose inference accepted its inputs cannot raise, for these sizes: with symbolic
    // sizes it stays, so that planning for new sizes infers it again and rejects what eager rejects
    // (the dce pass drops it from each plan).
    if (r.symbolic_dims.empty()) r.graph->eliminate_dead_code();
    if (!r.broke) r.plan.line = r.line;
    r.plan.calls_graph = !r.graph->nodes().empty() || !r.graph->outputs().empty();
    find_write_backs(r);
  } else {
    r.graph.reset();
    r.plan.input_nodes.clear();
  }
  return r;
}

}  // namespace pj::capture

#else  // capture is not built for this Python: every frame is refused (never reached: no hook)

namespace pj::capture {
CaptureResult capture_frame(py::Frame*, const CaptureOptions&) {
  CaptureResult r;
  r.reason = Break::Internal;
  r.detail = py::kUnsupportedPythonMessage;
  r.guards = std::make_shared<guards::GuardTree>();
  return r;
}
}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
