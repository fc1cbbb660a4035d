// The simulator's frame loop and its opcode handlers (one per opcode, named after it).
#include "py/pyport.h"  // first (Python.h)

#include <algorithm>


#include "capture/sim_state.h"

#include <sstream>

#include "py/py_common.h"
#include "graph/tape.h"
#include "pyext/tensor_object.h"
#include "pyext/augassign.h"

#if PJ_PY_CAPTURE_SUPPORTED

namespace pj::capture {
namespace {



thread_local Simulator* t_sim = nullptr;

Tensors record_op(const OpDef& op, const Tensors& in, const Attrs& attrs) { return t_sim->record(op, in, attrs); }
void observe_identity(PyObject* tensor) {
  if (t_sim) t_sim->identity_observed(tensor);
}
int query_layout(PyObject* tensor) { return t_sim ? t_sim->contiguity(tensor) : -1; }
void observe_sizes(const Tensor& t, int dim, const char* what) {
  if (t_sim) t_sim->sizes_read(t, dim, what);
}
void observe_sweep(const SweepTrace* trace) {
  if (t_sim) t_sim->sweep_observed(trace);
}
std::optional<Tensor> lift_scalar(PyObject* number, DType dtype) {
  return t_sim && !t_sim->armed_.empty() ? t_sim->lift(number, dtype) : std::nullopt;
}

PyObject* pop(SimFrame& fr) {
  PJ_CHECK(!fr.stack.empty()) << "simulated stack underflow in " << py::text(fr.code->co_name);
  PyObject* v = fr.stack.back();
  fr.stack.pop_back();
  return v;
}
PyObject* top(SimFrame& fr, int k = 1) { return fr.stack[fr.stack.size() - k]; }
void push(SimFrame& fr, PyObject* v) { fr.stack.push_back(v); }
std::vector<PyObject*> pop_n(SimFrame& fr, int n) {
  std::vector<PyObject*> v(fr.stack.end() - n, fr.stack.end());
  fr.stack.resize(fr.stack.size() - n);
  return v;
}

void jump(SimFrame& fr, const Instruction& ins) {
  auto it = fr.at->find(ins.jump_target);
  if (it == fr.at->end()) throw StopCapture{Break::Internal, "jump to " + std::to_string(ins.jump_target) + " is not an instruction", ins.line};
  fr.pc = it->second;
}

using BinaryFn = PyObject* (*)(PyObject*, PyObject*);

BinaryFn binary_fn(Opcode op) {
  switch (op) {
    case Opcode::BINARY_ADD: return PyNumber_Add;
    case Opcode::BINARY_SUBTRACT: return PyNumber_Subtract;
    case Opcode::BINARY_MULTIPLY: return PyNumber_Multiply;
    case Opcode::BINARY_MATRIX_MULTIPLY: return PyNumber_MatrixMultiply;
    case Opcode::BINARY_TRUE_DIVIDE: return PyNumber_TrueDivide;
    case Opcode::BINARY_FLOOR_DIVIDE: return PyNumber_FloorDivide;
    case Opcode::BINARY_MODULO: return PyNumber_Remainder;
    case Opcode::BINARY_LSHIFT: return PyNumber_Lshift;
    case Opcode::BINARY_RSHIFT: return PyNumber_Rshift;
    case Opcode::BINARY_AND: return PyNumber_And;
    case Opcode::BINARY_OR: return PyNumber_Or;
    case Opcode::BINARY_XOR: return PyNumber_Xor;
    case Opcode::BINARY_SUBSCR: return PyObject_GetItem;
    case Opcode::INPLACE_ADD: return PyNumber_InPlaceAdd;
    case Opcode::INPLACE_SUBTRACT: return PyNumber_InPlaceSubtract;
    case Opcode::INPLACE_MULTIPLY: return PyNumber_InPlaceMultiply;
    case Opcode::INPLACE_MATRIX_MULTIPLY: return PyNumber_InPlaceMatrixMultiply;
    case Opcode::INPLACE_TRUE_DIVIDE: return PyNumber_InPlaceTrueDivide;
    case Opcode::INPLACE_FLOOR_DIVIDE: return PyNumber_InPlaceFloorDivide;
    case Opcode::INPLACE_MODULO: return PyNumber_InPlaceRemainder;
    case Opcode::INPLACE_LSHIFT: return PyNumber_InPlaceLshift;
    case Opcode::INPLACE_RSHIFT: return PyNumber_InPlaceRshift;
    case Opcode::INPLACE_AND: return PyNumber_InPlaceAnd;
    case Opcode::INPLACE_OR: return PyNumber_InPlaceOr;
    case Opcode::INPLACE_XOR: return PyNumber_InPlaceXor;
    default: return nullptr;
  }
}

PyObject* power(PyObject* a, PyObject* b) { return PyNumber_Power(a, b, Py_None); }
PyObject* inplace_power(PyObject* a, PyObject* b) { return PyNumber_InPlacePower(a, b, Py_None); }

}  // namespace

Simulator::Simulator(CaptureResult& r, const CaptureOptions& o)
    : r_(r), opt_(o), tree_(*r.guards), graph_(*r.graph), budget_(o.instruction_budget) {}

Simulator::~Simulator() {
  for (auto it = keep_.rbegin(); it != keep_.rend(); ++it) Py_DECREF(*it);
}

int Simulator::current_line() const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    const SimFrame* fr = *it;
    if (!fr->library && fr->pc > 0 && fr->pc <= fr->ins->size()) return (*fr->ins)[fr->pc - 1].line;
  }
  return 0;
}

std::string Simulator::inline_chain() const {
  std::string chain;
  int user_frames = 0;
  for (const SimFrame* fr : frames_) {
    if (fr->library || fr->pc == 0) continue;
    ++user_frames;
    const std::string file = py::text(fr->code->co_filename);
    chain += (chain.empty() ? "" : " -> ") + py::text(fr->code->co_name) + " (" + file + ":" +
             std::to_string(fr->pc <= fr->ins->size() ? (*fr->ins)[fr->pc - 1].line : 0) + ")";
  }
  return user_frames > 1 ? chain : std::string();
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
  if (op.data_dependent || !op.infer)
    PJ_THROW(CaptureBreak) << "data_dependent_shape: " << op.name << "'s output shape depends on tensor data";
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
  if (!shape_armed_.empty()) match_shape_ints(op, attrs);
  Metas outs;
  try {
    outs = op.infer(metas, attrs);  // bad shapes raise here, as the eager call would
  } catch (const Error& e) {
    // infer says NotImplemented when only the data can tell the shape (a boolean mask).
    if (e.kind() != ErrorKind::NotImplemented) throw;
    PJ_THROW(CaptureBreak) << "data_dependent_shape: " << op.name << ": " << e.what();
  }
  std::vector<int> vids = graph_.add_node(op, ids, attrs, outs, current_line());
  if (!pending_shape_.empty()) commit_shape_ints();
  if (!dim_deps_.empty() || !attr_bits_.empty()) propagate_dims(op, attrs, ids, vids, metas, outs);
  attr_bits_.clear();
  Tensors result;
  for (size_t k = 0; k < outs.size(); ++k) result.push_back(Tensor::symbolic(outs[k].shape, outs[k].dtype, vids[k]));
  return result;
}

// Decoded once per code object and capture: a function inlined in a loop is entered many times.
void Simulator::load_code(SimFrame& fr, PyCodeObject* co) {
  auto it = decoded_.find(co);
  if (it == decoded_.end()) {
    DecodeResult d = decode_code(reinterpret_cast<PyObject*>(co));
    if (!d.ok()) stop(Break::Internal, std::string("cannot decode ") + py::text(co->co_name) + ": " + d.error);
    Decoded dec;
    dec.ins = std::move(d.instructions);
    for (size_t i = 0; i < dec.ins.size(); ++i) dec.at[dec.ins[i].start] = dec.at[dec.ins[i].offset] = static_cast<int>(i);
    dec.in_loop.assign(dec.ins.size(), 0);
    for (const Instruction& j : dec.ins)
      if (j.jump_target >= 0 && j.jump_target <= j.offset && !has_flag(j.op, py::kSetup))
        for (size_t i = 0; i < dec.ins.size(); ++i)
          if (dec.ins[i].offset >= j.jump_target && dec.ins[i].offset <= j.offset) dec.in_loop[i] = 1;
    it = decoded_.emplace(co, std::move(dec)).first;
  }
  fr.ins = &it->second.ins;
  fr.at = &it->second.at;
  fr.in_loop = &it->second.in_loop;
}

void Simulator::run_root(PyFrameObject* f) {
  SimFrame fr;
  fr.code = py::frame_code(f);
  frames_root_code_ = fr.code;
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
  Simulator* prev_sim = t_sim;
  t_sim = this;
  OpRecorder prev = set_op_recorder(record_op);
  py::set_identity_observer(observe_identity);
  py::set_layout_query(query_layout);
  py::set_sizes_observer(observe_sizes);
  py::set_scalar_lifter(lift_scalar);
  set_sweep_observer(observe_sweep);
  struct Restore {
    Simulator* s;
    OpRecorder r;
    ~Restore() {
      set_op_recorder(r);
      t_sim = s;
      if (!s) {
        py::set_identity_observer(nullptr);
        py::set_layout_query(nullptr);
        py::set_sizes_observer(nullptr);
        py::set_scalar_lifter(nullptr);
        set_sweep_observer(nullptr);
      }
    }
  } restore{prev_sim, prev};
  PyObject* result = nullptr;
  try {
    result = run_frame(fr);
  } catch (const SimRaise& raised) {  // no simulated handler: the interpreter raises it, for real
    PyObject* text = PyObject_Str(raised.value);
    std::string msg = text && PyUnicode_Check(text) ? py::text(text) : "";
    Py_XDECREF(text);
    PyErr_Clear();
    stop(Break::Raises, std::string(Py_TYPE(raised.value)->tp_name) + (msg.empty() ? "" : ": " + msg));
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
      return 0;
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

// `t += v` on a tensor of the graph: the operator's result written into t (write_tensor), with the
// eager operator's rules: the result cast back to t's dtype where that keeps its category (numpy's
// "same_kind"), and of t's shape.
PyObject* Simulator::inplace_tensor(Opcode op, PyObject* a, PyObject* b) {
  static const std::pair<Opcode, Opcode> counterpart[] = {
      {Opcode::INPLACE_ADD, Opcode::BINARY_ADD}, {Opcode::INPLACE_SUBTRACT, Opcode::BINARY_SUBTRACT},
      {Opcode::INPLACE_MULTIPLY, Opcode::BINARY_MULTIPLY}, {Opcode::INPLACE_MATRIX_MULTIPLY, Opcode::BINARY_MATRIX_MULTIPLY},
      {Opcode::INPLACE_TRUE_DIVIDE, Opcode::BINARY_TRUE_DIVIDE}, {Opcode::INPLACE_FLOOR_DIVIDE, Opcode::BINARY_FLOOR_DIVIDE},
      {Opcode::INPLACE_MODULO, Opcode::BINARY_MODULO}, {Opcode::INPLACE_LSHIFT, Opcode::BINARY_LSHIFT},
      {Opcode::INPLACE_RSHIFT, Opcode::BINARY_RSHIFT}, {Opcode::INPLACE_AND, Opcode::BINARY_AND},
      {Opcode::INPLACE_OR, Opcode::BINARY_OR}, {Opcode::INPLACE_XOR, Opcode::BINARY_XOR}};
  Opcode binary = op;
  for (const auto& c : counterpart)
    if (c.first == op) binary = c.second;
  PyObject* r = binary_fn(binary)(a, materialize(b));
  if (!r) python_error(op_name(op));
  own(r);
  if (!py::is_tensor(r)) stop(Break::InplaceUpdate, std::string(op_name(op)) + " on a tensor gave a " + Py_TYPE(r)->tp_name);
  const Tensor& x = py::unwrap(a);
  const Tensor& y = py::unwrap(r);
  if (category(y.dtype()) > category(x.dtype()))
    stop(Break::Raises, std::string("TypeError: an in-place ") + op_name(op) + " cannot cast its result to the tensor's dtype");
  if (y.shape() != x.shape())
    stop(Break::Raises, std::string("ValueError: an in-place ") + op_name(op) + " result does not have the tensor's shape");
  if (y.dtype() != x.dtype()) {
    PyObject* dtype = own(PyObject_GetAttrString(a, "dtype"));
    PyObject* cast = PyObject_CallMethod(r, "astype", "O", dtype);
    if (!cast) python_error("astype");
    r = own(cast);
  }
  write_tensor(a, r, std::string("updates a tensor in place: ") + op_name(op));
  return a;
}

// A context manager's __enter__ / __exit__, looked up on its type as `with` does, bound to it.
// Only Python functions (the user's, simulated; pijit's, traced): a builtin manager (a lock, a
// file) would act at capture time.
PyObject* Simulator::with_method(PyObject* mgr, const char* name) {
  PyObject* key = own(PyUnicode_InternFromString(name));
  PyObject* f = _PyType_Lookup(Py_TYPE(mgr), key);
  if (!f) stop(Break::Raises, std::string("AttributeError: ") + name + " (a with-block on a " + Py_TYPE(mgr)->tp_name + ")");
  if (!PyFunction_Check(f)) stop(Break::ExceptionHandling, std::string("with-block on a ") + Py_TYPE(mgr)->tp_name);
  if (node_of(mgr) >= 0) guard_class(node_of(mgr), Py_TYPE(mgr), key);  // a method patched later recompiles
  PyObject* bound = own(PyMethod_New(f, mgr));
  with_exits_[bound] = name;
  return bound;
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
    ++r_.instructions;
    size_t at = fr.pc;
    // No break inside a loop: its resume function, captured in turn, would break again on the next
    // iteration, one Python frame deeper each time. A failure there breaks before the loop.
    if (fr.root && opt_.allow_breaks) {
      // Try blocks may be open (the resume function enters them again); loop and with blocks not.
      bool blocks_ok = true;
      for (const SimFrame::Block& b : fr.blocks) blocks_ok = blocks_ok && b.op != Opcode::SETUP_LOOP && b.reenterable;
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
      std::vector<PyObject*>& armed;
      ~Disarm() { armed.clear(); }
    } disarm{armed_};
    using_op_ = moving ? nullptr : op_name(ins.op);  // what a number specialised now was used by
    const bool derive = !moving && (!unguarded_.empty() || !derived_.empty()) && scalars_used(fr, ins, uses);
    if (!size_ints_.empty() && (!moving || (fr.root && ins.op == Opcode::RETURN_VALUE))) sizes_used_by(fr, ins, uses);
    size_t nblocks = fr.blocks.size();
    bool was_moving = moving_;
    moving_ = moving;
    try {
      step(fr, ins);
    } catch (const SimRaise& raised) {
      moving_ = was_moving;
      if (derive || !shape_armed_.empty()) stop(Break::ExceptionHandling, "an exception raised in the middle of a number's use");
      if (!enter_handler(fr, raised.value)) throw;
      if (fr.root) {  // a jump to the handler
        after_jump_ = true;
        last_line_ = ins.line;
        last_offset_ = -1;
      }
      continue;
    }
    if (derive) note_derived(fr);
    if (!shape_armed_.empty()) shape_call_done();
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

PyObject* Simulator::load_fast(SimFrame& fr, int i) {
  if (fr.root && !fr.loaded[i]) {
    fr.loaded[i] = 1;
    PyObject* real = py::frame_local(fr.real, i);
    PyObject* name = PyTuple_GET_ITEM(fr.code->co_varnames, i);
    if (real) fr.locals[i] = wrap(real, tree_.root(guards::Access::Local, i, name));
  }
  return fr.locals[i];
}

// The object a local holds now, without loading it (no guard on it): the real frame's until the
// root frame's local is first read or written.
static PyObject* peek_local(const SimFrame& fr, int i) {
  return fr.root && !fr.loaded[i] ? py::frame_local(fr.real, i) : fr.locals[i];
}

// Rebinding or deleting a local that holds an object of the program's whose finalizer runs code:
// when that was its last reference, plain Python runs the finalizer here, in program order, and
// the rewritten code would run it only when its frame ends, after the effects replayed after the
// graph. Capture stops at the instruction instead: it runs for real.
void Simulator::check_drop(SimFrame& fr, int i) {
  PyObject* old = peek_local(fr, i);
  if (!old || sim_generator(old) || !py::finalizer_runs_code(old)) return;
  // Still held by the frame (moved to the stack, as a resume function's prologue does, or in
  // another local): not dropped.
  if (std::find(fr.stack.begin(), fr.stack.end(), old) != fr.stack.end()) return;
  for (int j = 0; j < static_cast<int>(fr.locals.size()); ++j)
    if (j != i && peek_local(fr, j) == old) return;
  stop(Break::Finalizer, "drops " + py::text(PyTuple_GET_ITEM(fr.code->co_varnames, i)) +
                               " (a " + Py_TYPE(old)->tp_name + " whose finalizer runs code)");
}

// LOAD_FAST / DELETE_FAST of a local that is not bound: CPython's UnboundLocalError.
[[noreturn]] static void unbound_local(Simulator* s, SimFrame& fr, int i) {
  s->stop(Break::Raises, std::string("UnboundLocalError: local variable '") +
                             py::text(PyTuple_GET_ITEM(fr.code->co_varnames, i)) + "' referenced before assignment");
}

// One handler per opcode. Unlisted opcodes end capture with UnsupportedOpcode.
void Simulator::step(SimFrame& fr, const Instruction& ins) {
  switch (ins.op) {
    case Opcode::NOP: return;
    case Opcode::POP_TOP: pop(fr); return;
    case Opcode::ROT_TWO: std::swap(fr.stack[fr.stack.size() - 1], fr.stack[fr.stack.size() - 2]); return;
    case Opcode::ROT_THREE: {
      PyObject* a = pop(fr);
      fr.stack.insert(fr.stack.end() - 2, a);
      return;
    }
    case Opcode::ROT_FOUR: {
      PyObject* a = pop(fr);
      fr.stack.insert(fr.stack.end() - 3, a);
      return;
    }
    case Opcode::ROT_N: {  // 3.10: TOS down to position oparg (ROT_N 2 is ROT_TWO)
      if (ins.arg < 1 || static_cast<size_t>(ins.arg) > fr.stack.size()) stop(Break::Internal, "ROT_N past the stack");
      PyObject* a = pop(fr);
      fr.stack.insert(fr.stack.end() - (ins.arg - 1), a);
      return;
    }
    case Opcode::DUP_TOP: push(fr, top(fr)); return;
    case Opcode::DUP_TOP_TWO: {
      PyObject* a = top(fr, 2);
      PyObject* b = top(fr, 1);
      push(fr, a);
      push(fr, b);
      return;
    }
    case Opcode::LOAD_CONST: push(fr, PyTuple_GET_ITEM(fr.code->co_consts, ins.arg)); return;
    case Opcode::LOAD_FAST: {
      PyObject* v = load_fast(fr, ins.arg);
      if (!v)
        unbound_local(this, fr, ins.arg);
      push(fr, v);
      return;
    }
    case Opcode::STORE_FAST:
      check_drop(fr, ins.arg);
      fr.locals[ins.arg] = pop(fr);
      if (fr.root) fr.loaded[ins.arg] = fr.stored[ins.arg] = 1;
      return;
    case Opcode::DELETE_FAST: {
      check_drop(fr, ins.arg);
      // Bound or not is the same on every call: the frame starts with exactly its arguments bound.
      if (!peek_local(fr, ins.arg))
        unbound_local(this, fr, ins.arg);
      fr.locals[ins.arg] = nullptr;
      if (fr.root) fr.loaded[ins.arg] = fr.stored[ins.arg] = 1;
      return;
    }
    case Opcode::LOAD_GLOBAL: push(fr, load_global(fr, PyTuple_GET_ITEM(fr.code->co_names, ins.arg))); return;
    case Opcode::LOAD_DEREF: push(fr, load_deref(fr, ins.arg)); return;
    case Opcode::LOAD_CLOSURE:
      load_deref(fr, ins.arg, /*must_be_bound=*/false);  // the root's cells fill lazily: fill before sharing
      push(fr, fr.cells[ins.arg]);
      return;
    case Opcode::STORE_DEREF: {
      PyObject* cell = fr.cells[ins.arg];
      if (values_.created(cell, Kind::Cell)) {
        write(cell, Write::Nonlocal, "assigns a nonlocal variable of an enclosing function");
        PyCell_Set(cell, pop(fr));
      } else {
        store_nonlocal(fr, ins.arg, pop(fr));
      }
      written_cells_.insert(cell);
      if (fr.root) fr.cell_loaded[ins.arg] = 1;
      return;
    }
    case Opcode::LOAD_ATTR: push(fr, load_attr(pop(fr), PyTuple_GET_ITEM(fr.code->co_names, ins.arg))); return;
    case Opcode::LOAD_METHOD: {
      PyObject* owner = pop(fr);
      PyObject* name = PyTuple_GET_ITEM(fr.code->co_names, ins.arg);
      PyObject* v = deferred_method(owner, name);  // L.append(...) on the caller's list: replayed
      push(fr, null_slot());
      push(fr, v ? v : load_attr(owner, name));
      return;
    }
    case Opcode::STORE_ATTR: {
      PyObject* owner = pop(fr);
      store_attr(owner, PyTuple_GET_ITEM(fr.code->co_names, ins.arg), pop(fr));
      return;
    }
    case Opcode::DELETE_ATTR:
      store_attr(pop(fr), PyTuple_GET_ITEM(fr.code->co_names, ins.arg), nullptr);
      return;
    case Opcode::STORE_GLOBAL:
      store_global(fr, PyTuple_GET_ITEM(fr.code->co_names, ins.arg), pop(fr));
      return;
    case Opcode::DELETE_GLOBAL:
      store_global(fr, PyTuple_GET_ITEM(fr.code->co_names, ins.arg), nullptr);
      return;
    case Opcode::STORE_SUBSCR: {
      PyObject* key = pop(fr);
      PyObject* container = pop(fr);
      PyObject* value = pop(fr);
      if (user_operand(container)) return user_setitem(container, key, value);
      if (py::is_tensor(container) && py::unwrap(container).is_symbolic()) {
        // t[key] = v on a tensor of the graph: the functional index_put written into t, as `t += v`
        if (tape_active()) stop(Break::InplaceUpdate, "tensor[...] = value while a gradient tape records");
        if (!trusted(key) || !trusted(value)) stop(Break::UserObjectOperator, "tensor[...] = value with a user object");
        PyObject* r = py::tensor_setitem_value(container, materialize(key), materialize(value));
        if (!r) python_error("tensor[...] = value");
        write_tensor(container, own(r), "tensor[...] = value");
        return;
      }
      if (store_item(container, key, value)) return;  // the caller's list or dict: replayed
      write(container, Write::Item, std::string("assigns an item of a ") + Py_TYPE(container)->tp_name + " the function did not create");
      if (!trusted(container)) stop(Break::UserObjectOperator, std::string("item assignment on ") + Py_TYPE(container)->tp_name);
      if (PyObject_SetItem(container, materialize(key), value) < 0) python_error("item assignment");
      return;
    }
    case Opcode::DELETE_SUBSCR: {
      PyObject* key = pop(fr);
      PyObject* container = pop(fr);
      if (user_operand(container)) return user_setitem(container, key, nullptr);
      if (store_item(container, key, nullptr)) return;  // the caller's list or dict: replayed
      write(container, Write::DeleteItem, std::string("deletes an item of a ") + Py_TYPE(container)->tp_name + " the function did not create",
            /*preexisting=*/!trusted(container) || py::is_tensor(container));
      if (PyObject_DelItem(container, materialize(key)) < 0) python_error("del");
      return;
    }
    case Opcode::BINARY_SUBSCR: {
      PyObject* key = pop(fr);
      PyObject* obj = pop(fr);
      if (is_environ(obj)) {
        PyObject* v = environ_lookup(obj, key);
        if (!v) throw SimRaise{make_exception(reinterpret_cast<PyTypeObject*>(PyExc_KeyError), {key}, nullptr)};
        push(fr, v);
        return;
      }
      int node = node_of(obj);
      const bool library_tuple = node >= 0 && PyTuple_Check(obj) && !PyTuple_CheckExact(obj) &&
                                 is_library_type(Py_TYPE(obj)) && PyLong_CheckExact(key);
      if (library_tuple) {  // ParameterTuple: a tuple of fixed type and length, items by index
        Py_INCREF(Py_TYPE(obj));
        tree_.add_check(node, {guards::CheckKind::Length, reinterpret_cast<PyObject*>(Py_TYPE(obj)), PyTuple_GET_SIZE(obj), {}});
      }
      if (node >= 0 && is_constant(key) && !PySlice_Check(key) &&
          (tuple_like(obj) || PyList_CheckExact(obj) || PyDict_CheckExact(obj) || library_tuple)) {
        PyObject* item = PyObject_GetItem(obj, key);
        if (!item) {  // what the raise depends on: the key absent, the sequence's length
          if (PyDict_CheckExact(obj)) {
            tree_.add_check(tree_.child(node, guards::Access::Item, key), {guards::CheckKind::Absent, nullptr, 0, {}});
          } else {
            Py_INCREF(Py_TYPE(obj));
            tree_.add_check(node, {guards::CheckKind::Length, reinterpret_cast<PyObject*>(Py_TYPE(obj)), PyObject_Length(obj), {}});
          }
          raise_lookup_error("indexing");
        }
        own(item);
        push(fr, wrap(item, tree_.child(node, guards::Access::Item, key)));
        return;
      }
      if (node >= 0 && PyObject_TypeCheck(obj, &PyBaseObject_Type) && !trusted(obj)) {
        PyObject* seq = cell_children(obj);  // CellList[i] / SequentialCell[i] / CellDict[key]
        if (seq) {
          if (is_cell_dict(obj)) {
            push(fr, cell_dict_item(obj, key));
            return;
          }
          PyObject* item = PyObject_GetItem(seq, key);
          if (!item) python_error("indexing");
          push(fr, own(item));
          return;
        }
      }
      if (user_operand(obj)) {
        push(fr, user_getitem(obj, key));
        return;
      }
      if (!trusted(obj) || !trusted(key)) stop(Break::UserObjectOperator, std::string("indexing ") + Py_TYPE(obj)->tp_name);
      PyObject* r = PyObject_GetItem(materialize(obj), materialize(key));
      if (!r) raise_lookup_error("indexing");
      push(fr, own(r));
      return;
    }
    case Opcode::BINARY_POWER:
    case Opcode::INPLACE_POWER:
    case Opcode::BINARY_ADD:
    case Opcode::BINARY_SUBTRACT:
    case Opcode::BINARY_MULTIPLY:
    case Opcode::BINARY_MATRIX_MULTIPLY:
    case Opcode::BINARY_TRUE_DIVIDE:
    case Opcode::BINARY_FLOOR_DIVIDE:
    case Opcode::BINARY_MODULO:
    case Opcode::BINARY_LSHIFT:
    case Opcode::BINARY_RSHIFT:
    case Opcode::BINARY_AND:
    case Opcode::BINARY_OR:
    case Opcode::BINARY_XOR:
    case Opcode::INPLACE_ADD:
    case Opcode::INPLACE_SUBTRACT:
    case Opcode::INPLACE_MULTIPLY:
    case Opcode::INPLACE_MATRIX_MULTIPLY:
    case Opcode::INPLACE_TRUE_DIVIDE:
    case Opcode::INPLACE_FLOOR_DIVIDE:
    case Opcode::INPLACE_MODULO:
    case Opcode::INPLACE_LSHIFT:
    case Opcode::INPLACE_RSHIFT:
    case Opcode::INPLACE_AND:
    case Opcode::INPLACE_OR:
    case Opcode::INPLACE_XOR: {
      PyObject* b = pop(fr);
      PyObject* a = pop(fr);
      if (PyObject* r = user_binary(ins.op, a, b)) {
        push(fr, r);
        return;
      }
      if (!trusted(a) || !trusted(b))
        stop(Break::UserObjectOperator, std::string(op_name(ins.op)) + " on " + Py_TYPE(trusted(a) ? b : a)->tp_name);
      bool inplace = op_name(ins.op)[0] == 'I';
      // MindSpore's `t += v` is `t = t + v` (the tensor's slot gives the plain operator) unless its
      // switch makes it write into t (pyext/augassign.h). Read here: the switch is set through a
      // pijit module, and every graph guards those modules' versions, so flipping it recompiles.
      if (inplace && py::is_tensor(a) && py::unwrap(a).is_symbolic() && py::augassign_writes(ins.op)) {
        push(fr, inplace_tensor(ins.op, a, b));
        return;
      }
      if (inplace && !py::is_tensor(a) && !is_constant(a) && !PyTuple_CheckExact(a))
        write(a, Write::InPlace, std::string(op_name(ins.op)) + " on a " + Py_TYPE(a)->tp_name + " the function did not create");
      BinaryFn fn = ins.op == Opcode::BINARY_POWER ? power
                    : ins.op == Opcode::INPLACE_POWER ? inplace_power
                                                      : binary_fn(ins.op);
      // In place on an object the function made mutates that very object; a tuple is immutable
      // (`t += (x,)` builds a new one), so the frame's tuple is read like any operand.
      PyObject* r = fn(inplace && !PyTuple_CheckExact(a) ? a : materialize(a), materialize(b));
      if (!r) python_error(op_name(ins.op));
      push(fr, own(r));
      return;
    }
    case Opcode::UNARY_POSITIVE:
    case Opcode::UNARY_NEGATIVE:
    case Opcode::UNARY_INVERT: {
      PyObject* a = pop(fr);
      if (user_operand(a)) {
        push(fr, user_unary(ins.op, a));
        return;
      }
      if (!trusted(a)) stop(Break::UserObjectOperator, std::string(op_name(ins.op)) + " on " + Py_TYPE(a)->tp_name);
      PyObject* m = materialize(a);
      PyObject* r = ins.op == Opcode::UNARY_POSITIVE ? PyNumber_Positive(m)
                    : ins.op == Opcode::UNARY_NEGATIVE ? PyNumber_Negative(m)
                                                       : PyNumber_Invert(m);
      if (!r) python_error(op_name(ins.op));
      push(fr, own(r));
      return;
    }
    case Opcode::UNARY_NOT: push(fr, truth(pop(fr)) ? Py_False : Py_True); return;
    case Opcode::COMPARE_OP: {
      PyObject* b = pop(fr);
      PyObject* a = pop(fr);
      if (ins.arg == 8 || ins.arg == 9) {  // is, is not (3.7; 3.9 has IS_OP)
        is_identity(a, b);
        push(fr, ((a == b) == (ins.arg == 8)) ? Py_True : Py_False);
        return;
      }
      if (ins.arg == 10) {  // 3.7's exception match
        push(fr, exception_matches(a, b) ? Py_True : Py_False);
        return;
      }
      if ((ins.arg == 6 || ins.arg == 7) && is_environ(b)) {
        push(fr, (environ_lookup(b, a) != nullptr) == (ins.arg == 6) ? Py_True : Py_False);
        return;
      }
      if ((ins.arg == 6 || ins.arg == 7) && user_operand(b)) {
        push(fr, user_contains(b, a) == (ins.arg == 6) ? Py_True : Py_False);
        return;
      }
      if (ins.arg < 6)
        if (PyObject* r = user_compare(ins.arg, a, b)) {
          push(fr, r);
          return;
        }
      // == and `in` compare what containers hold, item by item: no user __eq__ may take part.
      if (!deep_trusted(a) || !deep_trusted(b)) stop(Break::UserObjectOperator, "comparison of user objects");
      PyObject* ma = materialize(a);
      PyObject* mb = materialize(b);
      if (ins.arg == 6 || ins.arg == 7) {  // in, not in
        int c = PySequence_Contains(mb, ma);
        if (c < 0) python_error("in");
        push(fr, (c == (ins.arg == 6)) ? Py_True : Py_False);
        return;
      }
      PyObject* r = PyObject_RichCompare(ma, mb, ins.arg);
      if (!r) python_error("comparison");
      push(fr, own(r));
      return;
    }
    // (opcodes of some versions only: ids the running interpreter lacks are never decoded)
    case Opcode::JUMP_IF_NOT_EXC_MATCH: {
      PyObject* pattern = pop(fr);
      if (!exception_matches(pop(fr), pattern)) jump(fr, ins);
      return;
    }
    case Opcode::RERAISE: reraise(fr); return;
    case Opcode::IS_OP: {
      PyObject* b = pop(fr);
      PyObject* a = pop(fr);
      is_identity(a, b);
      push(fr, ((a == b) != (ins.arg == 1)) ? Py_True : Py_False);
      return;
    }
    case Opcode::CONTAINS_OP: {
      PyObject* b = pop(fr);
      PyObject* a = pop(fr);
      if (is_environ(b)) {
        push(fr, (environ_lookup(b, a) != nullptr) != (ins.arg == 1) ? Py_True : Py_False);
        return;
      }
      if (user_operand(b)) {
        push(fr, user_contains(b, a) != (ins.arg == 1) ? Py_True : Py_False);
        return;
      }
      if (!deep_trusted(a) || !deep_trusted(b)) stop(Break::UserObjectOperator, "'in' on user objects");
      int c = PySequence_Contains(materialize(b), materialize(a));
      if (c < 0) python_error("in");
      push(fr, (c != (ins.arg == 1)) ? Py_True : Py_False);
      return;
    }
    case Opcode::LIST_EXTEND: {
      PyObject* it = materialize(pop(fr));
      PyObject* list = top(fr, ins.arg);
      build_into(list, ins);
      if (_PyList_Extend(reinterpret_cast<PyListObject*>(list), it) == nullptr) python_error("list");
      Py_DECREF(Py_None);
      return;
    }
    case Opcode::LIST_TO_TUPLE: push(fr, own(PyList_AsTuple(pop(fr)))); return;
    case Opcode::SET_UPDATE:
    {
      PyObject* it = materialize(pop(fr));
      build_into(top(fr, ins.arg), ins);
      if (_PySet_Update(top(fr, ins.arg), it) < 0) python_error("set");
      return;
    }
    case Opcode::DICT_UPDATE:
    case Opcode::DICT_MERGE: {
      PyObject* d = materialize(pop(fr));
      build_into(top(fr, ins.arg), ins);
      if (ins.op == Opcode::DICT_MERGE) refuse_duplicate_keywords(top(fr, ins.arg), d);
      if (PyDict_Update(top(fr, ins.arg), d) < 0) python_error("dict");
      return;
    }
    case Opcode::LOAD_ASSERTION_ERROR: push(fr, PyExc_AssertionError); return;
    case Opcode::BUILD_TUPLE_UNPACK:
    case Opcode::BUILD_TUPLE_UNPACK_WITH_CALL:
    case Opcode::BUILD_LIST_UNPACK: {
      std::vector<PyObject*> parts = pop_n(fr, ins.arg);
      PyObject* list = own(PyList_New(0));
      for (PyObject* p : parts)
        if (_PyList_Extend(reinterpret_cast<PyListObject*>(list), materialize(p)) == nullptr) python_error("unpack");
        else Py_DECREF(Py_None);
      push(fr, ins.op == Opcode::BUILD_LIST_UNPACK ? list : own(PyList_AsTuple(list)));
      return;
    }
    case Opcode::BUILD_MAP_UNPACK:
    case Opcode::BUILD_MAP_UNPACK_WITH_CALL: {
      std::vector<PyObject*> parts = pop_n(fr, ins.arg);
      PyObject* d = own(PyDict_New());
      for (PyObject* p : parts) {
        PyObject* m = materialize(p);
        if (ins.op == Opcode::BUILD_MAP_UNPACK_WITH_CALL) refuse_duplicate_keywords(d, m);
        if (PyDict_Update(d, m) < 0) python_error("unpack");
      }
      push(fr, d);
      return;
    }
    case Opcode::BUILD_TUPLE: {
      std::vector<PyObject*> items = pop_n(fr, ins.arg);
      PyObject* t = own(PyTuple_New(ins.arg));
      for (int i = 0; i < ins.arg; ++i) {
        Py_INCREF(items[i]);
        PyTuple_SET_ITEM(t, i, items[i]);
      }
      push(fr, t);
      return;
    }
    case Opcode::BUILD_LIST: {
      std::vector<PyObject*> items = pop_n(fr, ins.arg);
      PyObject* l = own(PyList_New(ins.arg));
      for (int i = 0; i < ins.arg; ++i) {
        Py_INCREF(items[i]);
        PyList_SET_ITEM(l, i, items[i]);
      }
      push(fr, l);
      return;
    }
    case Opcode::BUILD_SET: {
      std::vector<PyObject*> items = pop_n(fr, ins.arg);
      PyObject* s = own(PySet_New(nullptr));
      for (PyObject* v : items)
        if (PySet_Add(s, materialize(v)) < 0) python_error("set");
      push(fr, s);
      return;
    }
    case Opcode::BUILD_MAP: {
      std::vector<PyObject*> kv = pop_n(fr, 2 * ins.arg);
      PyObject* d = own(PyDict_New());
      for (int i = 0; i < ins.arg; ++i)
        if (PyDict_SetItem(d, materialize(kv[2 * i]), kv[2 * i + 1]) < 0) python_error("dict");
      push(fr, d);
      return;
    }
    case Opcode::BUILD_CONST_KEY_MAP: {
      PyObject* keys = pop(fr);
      std::vector<PyObject*> vals = pop_n(fr, ins.arg);
      PyObject* d = own(PyDict_New());
      for (int i = 0; i < ins.arg; ++i)
        if (PyDict_SetItem(d, PyTuple_GET_ITEM(keys, i), vals[i]) < 0) python_error("dict");
      push(fr, d);
      return;
    }
    case Opcode::BUILD_STRING: {
      std::vector<PyObject*> parts = pop_n(fr, ins.arg);
      PyObject* t = own(PyTuple_New(ins.arg));
      for (int i = 0; i < ins.arg; ++i) {
        Py_INCREF(parts[i]);
        PyTuple_SET_ITEM(t, i, parts[i]);
      }
      PyObject* empty = own(PyUnicode_FromString(""));
      push(fr, own(PyUnicode_Join(empty, t)));
      return;
    }
    case Opcode::FORMAT_VALUE: {
      PyObject* spec = (ins.arg & 0x04) ? pop(fr) : nullptr;
      PyObject* v = pop(fr);
      if (!is_constant(v)) stop(Break::DataDependent, "formats a " + std::string(Py_TYPE(v)->tp_name) + " into a string");
      int conv = ins.arg & 0x03;
      if (conv == 1) v = own(PyObject_Str(v));
      else if (conv == 2) v = own(PyObject_Repr(v));
      else if (conv == 3) v = own(PyObject_ASCII(v));
      push(fr, own(PyObject_Format(v, spec)));
      return;
    }
    case Opcode::BUILD_SLICE: {
      PyObject* step = ins.arg == 3 ? pop(fr) : nullptr;
      PyObject* stop_ = pop(fr);
      PyObject* start = pop(fr);
      push(fr, own(PySlice_New(start, stop_, step)));
      return;
    }
    case Opcode::LIST_APPEND: {
      PyObject* v = pop(fr);  // the list is then oparg deep
      build_into(top(fr, ins.arg), ins);
      if (PyList_Append(top(fr, ins.arg), v) < 0) python_error("list");
      return;
    }
    case Opcode::SET_ADD: {
      PyObject* v = materialize(pop(fr));
      build_into(top(fr, ins.arg), ins);
      if (PySet_Add(top(fr, ins.arg), v) < 0) python_error("set");
      return;
    }
    case Opcode::MAP_ADD: {
      PyObject* value = py::kMapAddValueOnTop ? pop(fr) : nullptr;
      PyObject* key = pop(fr);
      if (!py::kMapAddValueOnTop) value = pop(fr);
      build_into(top(fr, ins.arg), ins);
      if (PyDict_SetItem(top(fr, ins.arg), materialize(key), value) < 0) python_error("dict");
      return;
    }
    case Opcode::UNPACK_SEQUENCE: {
      std::vector<PyObject*> items = unpacked(pop(fr), static_cast<size_t>(ins.arg) + 1);
      if (static_cast<int>(items.size()) != ins.arg)
        stop(Break::Raises, "ValueError: cannot unpack " + std::to_string(items.size()) + " values into " +
                                std::to_string(ins.arg));
      for (auto it = items.rbegin(); it != items.rend(); ++it) push(fr, *it);
      return;
    }
    case Opcode::UNPACK_EX: {
      PyObject* list = own(PyList_New(0));
      for (PyObject* item : unpacked(pop(fr)))
        if (PyList_Append(list, item) < 0) python_error("unpacking");
      int before = ins.arg & 0xFF, after = ins.arg >> 8;
      Py_ssize_t n = PyList_GET_SIZE(list);
      if (n < before + after) stop(Break::Raises, "ValueError: not enough values to unpack");
      for (int i = after - 1; i >= 0; --i) push(fr, PyList_GET_ITEM(list, n - after + i));
      push(fr, own(PyList_GetSlice(list, before, n - after)));
      for (int i = before - 1; i >= 0; --i) push(fr, PyList_GET_ITEM(list, i));
      return;
    }
    case Opcode::GET_ITER: push(fr, get_iter(pop(fr))); return;
    case Opcode::FOR_ITER: {
      if (sim_generator(top(fr)) || user_operand(top(fr))) {
        if (PyObject* v = next_item(top(fr))) {
          push(fr, v);
        } else {
          pop(fr);
          jump(fr, ins);
        }
        return;
      }
      // Anything the frame was given (e.g. the `.0` iterator of a comprehension run as its own
      // frame, or a user iterator) would be advanced for real.
      refuse_foreign_iterator(top(fr));
      if (node_of(top(fr)) >= 0) stop(Break::UserObjectOperator, std::string("iterating a ") + Py_TYPE(top(fr))->tp_name);
      PyObject* v = PyIter_Next(top(fr));
      if (v) {
        push(fr, own(v));
        return;
      }
      if (PyErr_Occurred()) python_error("iteration");
      pop(fr);
      jump(fr, ins);
      return;
    }
    case Opcode::JUMP_FORWARD:
    case Opcode::JUMP_ABSOLUTE: jump(fr, ins); return;
    case Opcode::POP_JUMP_IF_FALSE:
    case Opcode::POP_JUMP_IF_TRUE: {
      bool t = truth(pop(fr));
      if (t == (ins.op == Opcode::POP_JUMP_IF_TRUE)) jump(fr, ins);
      return;
    }
    case Opcode::JUMP_IF_FALSE_OR_POP:
    case Opcode::JUMP_IF_TRUE_OR_POP: {
      bool t = truth(top(fr));
      if (t == (ins.op == Opcode::JUMP_IF_TRUE_OR_POP)) jump(fr, ins);
      else pop(fr);
      return;
    }
    // No exception is ever raised inside a capture (one ends it), so handlers are never entered;
    // blocks are tracked only for 3.7's BREAK_LOOP.
    case Opcode::SETUP_FINALLY:
    case Opcode::SETUP_EXCEPT:
    case Opcode::SETUP_LOOP:
      fr.blocks.push_back({ins.op, ins.jump_target, fr.stack.size()});
      return;
    case Opcode::POP_BLOCK:
      if (!fr.blocks.empty()) fr.blocks.pop_back();
      return;
    case Opcode::CONTINUE_LOOP:  // unwinds to the innermost loop; a finally on the way would run
      while (!fr.blocks.empty() && fr.blocks.back().op != Opcode::SETUP_LOOP) {
        if (fr.blocks.back().op == Opcode::POP_EXCEPT) stop(Break::ExceptionHandling, "continue out of an except block");
        if (fr.blocks.back().op == Opcode::SETUP_FINALLY) stop(Break::ExceptionHandling, "continue through a finally block");
        fr.blocks.pop_back();
      }
      jump(fr, ins);
      return;
    case Opcode::BREAK_LOOP: {
      while (!fr.blocks.empty() && fr.blocks.back().op != Opcode::SETUP_LOOP) {
        if (fr.blocks.back().op == Opcode::POP_EXCEPT) stop(Break::ExceptionHandling, "break out of an except block");
        if (fr.blocks.back().op == Opcode::SETUP_FINALLY) stop(Break::ExceptionHandling, "break through a finally block");
        fr.blocks.pop_back();
      }
      if (fr.blocks.empty()) stop(Break::Internal, "BREAK_LOOP outside a loop");
      SimFrame::Block b = fr.blocks.back();
      fr.blocks.pop_back();
      fr.stack.resize(b.level);
      fr.pc = fr.at->at(b.target);
      return;
    }
#if PJ_PY_BLOCKS_37
    case Opcode::END_FINALLY:
      if (top(fr) == return_marker()) {  // a return goes on unwinding
        pop(fr);
        return return_value(fr, pop(fr));
      }
      if (top(fr) == silenced_marker()) {  // a with-block's __exit__ swallowed the exception
        pop(fr);
        if (fr.blocks.empty() || fr.blocks.back().op != Opcode::POP_EXCEPT) stop(Break::Internal, "silenced outside a handler");
        SimFrame::Block b = fr.blocks.back();
        fr.blocks.pop_back();
        unwind_except_handler(fr, b);
        return;
      }
      if (fr.stack.size() >= 3 && made_exception(top(fr, 2))) return reraise(fr);
      if (top(fr) != Py_None) stop(Break::ExceptionHandling, "finally block reached by an exception");
      pop(fr);
      return;
#elif PJ_PY_FINALLY_38
    case Opcode::BEGIN_FINALLY: push(fr, finally_null()); return;
    case Opcode::CALL_FINALLY: call_finally(fr, ins); return;
    case Opcode::POP_FINALLY: pop_finally(fr, ins.arg); return;
    case Opcode::END_FINALLY: end_finally(fr); return;
#endif
    case Opcode::CALL_FUNCTION: {
      std::vector<PyObject*> args = pop_n(fr, ins.arg);
      PyObject* fn = pop(fr);
      push(fr, call(fn, args, nullptr));
      return;
    }
    case Opcode::CALL_FUNCTION_KW: {
      PyObject* names = pop(fr);
      std::vector<PyObject*> args = pop_n(fr, ins.arg);
      PyObject* fn = pop(fr);
      push(fr, call(fn, args, names));
      return;
    }
    case Opcode::CALL_FUNCTION_EX: {
      PyObject* kwargs = (ins.arg & 1) ? pop(fr) : nullptr;
      PyObject* args = pop(fr);
      PyObject* fn = pop(fr);
      push(fr, call_ex(fn, args, kwargs));
      return;
    }
    case Opcode::CALL_METHOD: {
      std::vector<PyObject*> args = pop_n(fr, ins.arg);
      PyObject* meth = pop(fr);  // our LOAD_METHOD always pushes the bound attribute over an empty slot
      pop(fr);
      push(fr, deferred_methods_.count(meth) ? defer_method_call(meth, args) : call(meth, args, nullptr));
      return;
    }
    case Opcode::MAKE_FUNCTION: {
      PyObject* qualname = pop(fr);
      PyObject* code = pop(fr);
      PyObject* closure = (ins.arg & 0x08) ? pop(fr) : nullptr;
      PyObject* annotations = (ins.arg & 0x04) ? pop(fr) : nullptr;
      PyObject* kwdefaults = (ins.arg & 0x02) ? pop(fr) : nullptr;
      PyObject* defaults = (ins.arg & 0x01) ? pop(fr) : nullptr;
      PyObject* fn = own(PyFunction_NewWithQualName(code, fr.globals, qualname));
      if (annotations) annotations = own(py::annotations_dict(annotations));
      if ((closure && PyFunction_SetClosure(fn, closure) < 0) || (annotations && PyFunction_SetAnnotations(fn, annotations) < 0) || (defaults && PyFunction_SetDefaults(fn, defaults) < 0) ||
          (kwdefaults && PyFunction_SetKwDefaults(fn, kwdefaults) < 0))
        python_error("making a function");
      values_.created_function(fn, fr.globals_node);  // its globals are read along the creating frame's path
      push(fr, fn);
      return;
    }
    case Opcode::RETURN_VALUE:
#if PJ_PY_BLOCKS_37
      // 3.7 returns through try/finally by unwinding the block stack: the finally body runs, and
      // may replace the value (sim_exceptions.cc).
      return return_value(fr, pop(fr));
#else
      // (3.8 calls a finally body before the return, 3.9 inlines it)
      for (const SimFrame::Block& b : fr.blocks)
        if (b.op == Opcode::SETUP_FINALLY) stop(Break::ExceptionHandling, "return through a finally block");
      fr.result = pop(fr);
      fr.returned = true;
      return;
#endif
    case Opcode::RAISE_VARARGS: raise_statement(fr, ins.arg); return;
    case Opcode::POP_EXCEPT: pop_except(fr); return;
    case Opcode::SETUP_WITH: {
      // exit = type(mgr).__exit__ bound; enter's result pushed over a SETUP_FINALLY block whose
      // handler calls exit with the exception (a simulated raise; sim_exceptions.cc).
      PyObject* mgr = pop(fr);
      PyObject* exit = with_method(mgr, "__exit__");
      PyObject* enter = with_method(mgr, "__enter__");
      push(fr, exit);
      PyObject* entered = call(enter, {}, nullptr);
      fr.blocks.push_back({Opcode::SETUP_FINALLY, ins.jump_target, fr.stack.size(), node_of(mgr) >= 0});
      push(fr, entered);
      return;
    }
#if PJ_PY_BLOCKS_37 || PJ_PY_FINALLY_38
    case Opcode::WITH_CLEANUP_START: with_cleanup_start(fr); return;
    case Opcode::WITH_CLEANUP_FINISH: with_cleanup_finish(fr); return;
#else
    case Opcode::WITH_EXCEPT_START: {  // exit(type, value, traceback) under the exception's values
      if (fr.stack.size() < 7 || !made_exception(top(fr, 2))) stop(Break::ExceptionHandling, "WITH_EXCEPT_START without an exception");
      PyObject* exit = top(fr, 7);
      refuse_traceback_reader(exit);
      push(fr, call(exit, {top(fr), top(fr, 2), Py_None}, nullptr));
      return;
    }
#endif
    case Opcode::IMPORT_NAME:
    case Opcode::IMPORT_FROM:
    case Opcode::IMPORT_STAR: stop(Break::Import, "import statement");
    case Opcode::YIELD_VALUE:
      if (fr.generator) return yield_value(fr);
      stop(Break::Generator, op_name(ins.op));
    case Opcode::GET_YIELD_FROM_ITER:  // `yield from it`: a generator delegates to it
      if (!fr.generator || (fr.code->co_flags & CO_ITERABLE_COROUTINE)) stop(Break::Generator, op_name(ins.op));
      if (!sim_generator(top(fr))) fr.stack.back() = get_iter(top(fr));
      return;
    case Opcode::YIELD_FROM:
      if (fr.generator) return yield_from(fr);
      stop(Break::Generator, op_name(ins.op));
    case Opcode::GET_AWAITABLE:
    case Opcode::GET_AITER:
    case Opcode::GET_ANEXT: stop(Break::Generator, op_name(ins.op));
    case Opcode::GEN_START: pop(fr); return;
    case Opcode::MATCH_SEQUENCE:
    case Opcode::MATCH_MAPPING: {  // 3.10: whether the subject's class matches sequence/mapping patterns
      PyTypeObject* t = Py_TYPE(top(fr));
      // A builtin (static) type's flags never change; a class's may (collections.abc registration).
      if (PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE)) stop(Break::UnsupportedOpcode, std::string(op_name(ins.op)) + " on a " + t->tp_name);
      push(fr, PyType_HasFeature(t, py::match_pattern_flag(ins.op == Opcode::MATCH_SEQUENCE)) ? Py_True : Py_False);
      return;
    }
    case Opcode::GET_LEN: {  // 3.10: len(subject) pushed over it, as the builtin len (guards included)
      static PyObject* len = PyObject_GetAttrString(PyImport_AddModule("builtins"), "len");
      push(fr, call(len, {top(fr)}, nullptr));
      return;
    }  // 3.10: the value the first send() brought (None)
    default: stop(Break::UnsupportedOpcode, op_name(ins.op));
  }
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

// One simulation of the frame. Returns the point a refusal can break at (0: none), and in *again
// what the second pass needs to know of the first.
int simulate(PyFrameObject* f, const CaptureOptions& options, CaptureResult& r, CaptureOptions* again = nullptr) {
  int break_at = 0;
  Simulator sim(r, options);
  try {
    sim.run_root(f);
    sim.guard_tensor_classes();
    sim.finish_symbols(false);
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
        sim.finish_symbols(true);
        r.ok = r.broke = true;
      } else if (!options.stop_at_boundary && again && (break_at = sim.can_break(s.reason)) > 0) {
        again->stop_at_boundary = break_at;
        again->break_offset = sim.break_offset_;
        again->break_bound = sim.bound_at_point();
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

CaptureResult capture_frame(PyFrameObject* f, const CaptureOptions& options) {
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
CaptureResult capture_frame(PyFrameObject*, const CaptureOptions&) {
  CaptureResult r;
  r.reason = Break::Internal;
  r.detail = py::kUnsupportedPythonMessage;
  r.guards = std::make_shared<guards::GuardTree>();
  return r;
}
}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_SUPPORTED
