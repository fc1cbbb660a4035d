// Dynamic shapes in capture: which graph-input sizes stay symbols, and where Python saw one.
//
// A symbol stands for one size of a graph input (x.shape[0]). The graph is traced with the size the
// frame had (its hint), and means the same for any other size >= 2 as long as no Python code saw
// the size: each op's output shape is inferred again for the new sizes when the graph is planned
// for them, and an op that rejects them makes the call run eagerly. So the simulator tracks, per
// graph value and size, the symbols it depends on, and *specialises* a symbol (the guard keeps its
// exact size) as soon as Python observes a size depending on it: an int from x.shape used by an
// instruction, pijit's library code reading .shape or len(), a size live where the graph breaks.
#include "capture/sim_dynamic.h"
#include "capture/sim_state.h"
#include "graph/ops/nn_params.h"  // reduce_axes
#include "graph/tape.h"
#include "py/py_common.h"
#include "pyext/tensor_object.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {

using guards::Access;
using guards::CheckKind;

bool is_parameter(PyObject* v);  // sim_effects.cc

namespace {

bool reduction(const std::string& name) {
  static const std::set<std::string> ops = {"sum", "mean", "prod", "max", "min", "all", "any", "var", "std"};
  return ops.count(name) > 0;
}

// Ops whose output size d depends only on input 0's size d and on the other inputs (never on
// input 0's other sizes): same-shape ops, and NCHW ops whose N and C follow their input.
bool positional(const std::string& name) {
  static const std::set<std::string> ops = {
      "batch_norm", "layer_norm", "group_norm", "dropout", "cast", "copy", "contiguous", "stop_gradient",
      "softmax", "log_softmax", "cumsum", "logical_not", "conv2d", "conv2d_block",
      "conv_transpose2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "interpolate", "pad", "concat",
      "full_like"};
  return ops.count(name) > 0;
}

}  // namespace

void DynamicShapes::tensor_input(PyObject* obj, int node, int value_id) {
  if (!s_.opt_.dynamic_all && (!s_.opt_.dynamic_dims || s_.opt_.dynamic_dims->empty())) return;
  if (is_parameter(obj)) return;  // weights keep their shapes: a new one is a new model
  const Tensor& t = py::unwrap(obj);
  const guards::GuardNode& n = s_.tree_.node(node);
  const bool frame_local = n.parent < 0 && n.access == Access::Local;
  const std::string path = s_.tree_.path(node);
  std::vector<uint64_t> deps(t.ndim(), 0);
  bool any = false;
  for (int d = 0; d < t.ndim(); ++d) {
    const bool asked = (s_.opt_.dynamic_all && frame_local) ||
                       (s_.opt_.dynamic_dims && s_.opt_.dynamic_dims->count(path + "#" + std::to_string(d)));
    // 0 and 1 stay exact: emptiness and broadcasting change what the program computes
    if (!asked || t.dim(d) < 2 || symbols_.size() >= 64) continue;
    symbols_.push_back({node, value_id, d, t.dim(d), false});
    deps[d] = uint64_t{1} << (symbols_.size() - 1);
    any = true;
  }
  if (any) dim_deps_[value_id] = std::move(deps);
}

uint64_t DynamicShapes::dim_deps(int64_t value_id, int dim) const {
  auto it = dim_deps_.find(value_id);
  if (it == dim_deps_.end()) return 0;
  uint64_t m = 0;
  for (size_t d = 0; d < it->second.size(); ++d)
    if (dim < 0 || static_cast<int>(d) == dim) m |= it->second[d];
  return m;
}

void DynamicShapes::propagate_dims(const OpDef& op, const Attrs& attrs, const std::vector<int>& ins,
                               const std::vector<int>& outs, const Metas& in, const Metas& out) {
  std::vector<const std::vector<uint64_t>*> deps(ins.size(), nullptr);
  uint64_t all = 0, rest = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    auto it = dim_deps_.find(ins[i]);
    if (it == dim_deps_.end()) continue;
    deps[i] = &it->second;
    for (uint64_t m : it->second) {
      all |= m;
      if (i > 0) rest |= m;
    }
  }
  if (!all && attr_bits_.empty()) return;
  uint64_t attr_all = 0;
  for (const auto& e : attr_bits_) attr_all |= e.second;
  for (size_t k = 0; k < outs.size(); ++k) {
    const size_t rank = out[k].shape.size();
    std::vector<uint64_t> od(rank, 0);
    // broadcasting (where and clamp broadcast their operands too): size d comes from the inputs'
    // sizes aligned with it
    if (op.elementwise || op.name == "where" || op.name == "clamp") {
      for (size_t i = 0; i < ins.size(); ++i) {
        if (!deps[i]) continue;
        const size_t r = in[i].shape.size();
        for (size_t d = 0; d < rank; ++d)
          if (d + r >= rank) od[d] |= (*deps[i])[d + r - rank];
      }
    } else if (!ins.empty() && positional(op.name) && in[0].shape.size() == rank) {
      for (size_t d = 0; d < rank; ++d) od[d] = (deps[0] ? (*deps[0])[d] : 0) | rest;
    } else if (op.name == "flatten" && !ins.empty() && deps[0] && ins.size() == 1) {
      // sizes before start_dim and after end_dim are the input's; the ones between multiply
      const int r = static_cast<int>(in[0].shape.size());
      int start = static_cast<int>(attrs.i("start_dim", 0)), end = static_cast<int>(attrs.i("end_dim", -1));
      if (start < 0) start += r;
      if (end < 0) end += r;
      if (r == 0 || start < 0 || end >= r || start > end || static_cast<int>(rank) != r - (end - start)) {
        std::fill(od.begin(), od.end(), all);
      } else {
        for (int d = 0; d < r; ++d) od[d <= start ? d : d <= end ? start : d - (end - start)] |= (*deps[0])[d];
      }
    } else if (op.name == "dense" && !ins.empty() && in[0].shape.size() == rank && rank > 0) {
      for (size_t d = 0; d + 1 < rank; ++d) od[d] = deps[0] ? (*deps[0])[d] : 0;
      od[rank - 1] = rest;  // the weight's and bias's
    } else if (op.name == "matmul" && ins.size() == 2 && in[0].shape.size() >= 2 && in[1].shape.size() >= 2 && rank >= 2) {
      // batch sizes broadcast; M is a's, N is b's (K is contracted away)
      for (size_t i = 0; i < 2; ++i) {
        if (!deps[i]) continue;
        const size_t r = in[i].shape.size();
        for (size_t d = 0; d + 2 < rank; ++d)
          if (d + r >= rank && d + r - rank < r - 2) od[d] |= (*deps[i])[d + r - rank];
      }
      if (deps[0]) od[rank - 2] = (*deps[0])[in[0].shape.size() - 2];
      if (deps[1]) od[rank - 1] = (*deps[1])[in[1].shape.size() - 1];
    } else if (op.name == "transpose" && ins.size() == 1 && deps[0] && in[0].shape.size() == rank) {
      std::vector<int64_t> perm;
      if (attrs.has("perm") && !attrs.is_none("perm")) perm.assign(attrs.ints("perm").begin(), attrs.ints("perm").end());
      else
        for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
      if (perm.size() != rank) {
        std::fill(od.begin(), od.end(), all);
      } else {
        for (size_t d = 0; d < rank; ++d) {
          const int64_t p = perm[d] < 0 ? perm[d] + static_cast<int64_t>(rank) : perm[d];
          od[d] = p >= 0 && p < static_cast<int64_t>(rank) ? (*deps[0])[p] : all;
        }
      }
    } else if (reduction(op.name) && ins.size() == 1 && deps[0]) {
      // the sizes kept are the input's; a reduced one is gone (or 1 with keepdims)
      const int r = static_cast<int>(in[0].shape.size());
      std::vector<int> axes;
      try {
        axes = reduce_axes(attrs, r);
      } catch (const Error&) {
        axes.clear();
      }
      std::vector<uint64_t> kept;
      std::vector<bool> red(r, false);
      for (int a : axes)
        if (a >= 0 && a < r) red[a] = true;
      for (int d = 0; d < r; ++d)
        if (!red[d]) kept.push_back((*deps[0])[d]);
        else if (attrs.b("keepdims", false)) kept.push_back(0);
      if (kept.size() == rank) od = kept;
      else std::fill(od.begin(), od.end(), all);
    } else if (op.name == "reshape" && ins.size() == 1 && attrs.has("shape") && attrs.ints("shape").size() == rank) {
      // a size the attribute gives stays that size (re-inference keeps it) unless a Python int's
      // symbol fills it; -1 follows the input and those
      for (size_t d = 0; d < rank; ++d) od[d] = attrs.ints("shape")[d] < 0 ? all | attr_all : 0;
      for (const auto& e : attr_bits_)
        if (e.first < rank) od[e.first] = e.second;
    } else {  // any other op: each size may depend on every input size
      std::fill(od.begin(), od.end(), all);
    }
    dim_deps_[outs[k]] = std::move(od);
  }
}

void DynamicShapes::specialise(uint64_t symbols, const std::string& why) {
  for (size_t k = 0; k < symbols_.size() && symbols; ++k) {
    if (!(symbols >> k & 1) || symbols_[k].specialised) continue;
    Symbol& s = symbols_[k];
    s.specialised = true;
    if (s.scalar) {  // a Python int: its value is guarded after all
      s_.guard_scalars(s.scalar);
      s_.r_.dynamic_notes.push_back("s" + std::to_string(k) + " = " + s_.tree_.path(s.node) + " specialised to " +
                                 std::to_string(s.hint) + ": " + why);
      continue;
    }
    s_.r_.dynamic_notes.push_back("s" + std::to_string(k) + " = " + s_.tree_.path(s.node) + ".shape[" +
                               std::to_string(s.dim) + "] specialised to " + std::to_string(s.hint) + ": " + why);
  }
}

std::string DynamicShapes::at_line() const {
  PyCodeObject* co = s_.current_code();
  return std::string(" at ") + (co ? py::text(co->co_filename) : "?") + ":" + std::to_string(s_.current_line());
}

void DynamicShapes::sizes_read(const Tensor& t, int dim, const char* what) {
  if (!t.is_symbolic()) return;
  if (uint64_t m = dim_deps(t.sym(), dim)) specialise(m, std::string(what) + " read by library code" + at_line());
}

PyObject* DynamicShapes::shape_of(PyObject* sym) {
  const Tensor& t = py::unwrap(sym);
  auto it = dim_deps_.find(t.sym());
  if (it == dim_deps_.end()) return nullptr;
  PyObject* tuple = s_.own(PyTuple_New(t.ndim()));
  for (int d = 0; d < t.ndim(); ++d) {
    PyObject* v = PyLong_FromLongLong(t.dim(d));
    if (v && it->second[d]) {  // its own object (not the small-int cache's): tracked by identity
      PyObject* fresh = py::fresh_int(v);
      Py_DECREF(v);
      v = fresh;
      if (v) size_ints_[v] = it->second[d];
      for (size_t k = 0; v && k < symbols_.size(); ++k)  // a graph input's size: the symbol itself
        if (symbols_[k].value == t.sym() && symbols_[k].dim == d) exact_sizes_[v] = static_cast<int>(k);
    }
    if (!v) s_.python_error("x.shape");
    PyTuple_SET_ITEM(tuple, d, v);
  }
  return tuple;
}

void DynamicShapes::sizes_used(PyObject* v, int depth) {
  if (depth > 4) return;
  if (PyLong_CheckExact(v)) {
    auto it = size_ints_.find(v);
    if (it != size_ints_.end())
      specialise(it->second, std::string("a size used by Python (") + (using_op_ ? using_op_ : "?") + ")" + at_line());
    return;
  }
  if (PyTuple_CheckExact(v) || PyList_CheckExact(v))
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i) sizes_used(PySequence_Fast_GET_ITEM(v, i), depth + 1);
}

bool DynamicShapes::compare_size(SimFrame& fr, const Instruction& ins) {
  const size_t n = fr.stack.size();
  if (ins.op != Opcode::COMPARE_OP || ins.arg > 5 || n < 2 || exact_sizes_.empty()) return false;
  static const int swapped[] = {Py_GT, Py_GE, Py_EQ, Py_NE, Py_LT, Py_LE};
  static const int negated[] = {Py_GE, Py_GT, Py_NE, Py_EQ, Py_LE, Py_LT};
  for (int left = 0; left < 2; ++left) {
    PyObject* v = fr.stack[left ? n - 2 : n - 1];
    PyObject* c = fr.stack[left ? n - 1 : n - 2];
    auto it = exact_sizes_.find(v);
    if (it == exact_sizes_.end() || !PyLong_CheckExact(c) || size_ints_.count(c) || s_.unguarded_.count(c)) continue;
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(c, &overflow);
    if (overflow || (value == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    Symbol& s = symbols_[it->second];
    if (s.specialised) return false;
    const int op = left ? ins.arg : swapped[ins.arg];  // as `s <op> value`
    const bool holds = guards::compare_sizes(s.hint, op, value);
    const guards::SizeFact f{s.dim, holds ? op : negated[op], value};
    if (std::find(s.facts.begin(), s.facts.end(), f) == s.facts.end()) {
      s.facts.push_back(f);
      s_.r_.dynamic_notes.push_back(guards::fact_text(it->second, f) + " (" + s_.tree_.path(s.node) + ".shape[" + std::to_string(s.dim) +
                                 "], compared" + at_line() + "): a guard, not a specialisation");
    }
    return true;
  }
  return false;
}

void DynamicShapes::sizes_used_by(SimFrame& fr, const Instruction& ins, int uses) {
  if (ins.op == Opcode::RETURN_VALUE) uses = 1;  // the return plan would hold it as a constant
  if (!using_op_) using_op_ = op_name(ins.op);  // (a return: moving; else instruction_uses named it)
  if (compare_size(fr, ins)) return;
  const size_t n = fr.stack.size(), from = uses < 0 || static_cast<size_t>(uses) > n ? 0 : n - uses;
  for (size_t i = from; i < n; ++i) {
    PyObject* v = fr.stack[i];
    // An item or a slice of a shape, unpacking or iterating it, uses none of its sizes yet
    if (PyTuple_CheckExact(v)) {
      if (ins.op == Opcode::BINARY_SUBSCR && i + 2 == n &&
          (PyLong_CheckExact(fr.stack[n - 1]) || PySlice_Check(fr.stack[n - 1])) && !size_ints_.count(fr.stack[n - 1]))
        continue;
      if (ins.op == Opcode::UNPACK_SEQUENCE || ins.op == Opcode::UNPACK_EX || ins.op == Opcode::GET_ITER) continue;
    }
    sizes_used(v);
  }
}

// 3.11's instructions as the rules below know them from 3.7-3.10: BINARY_OP as the operator's own
// opcode, CALL as CALL_METHOD (the same layout: a slot, the callable, the arguments).
static Instruction as_before_311(const Instruction& ins) {
  Instruction as = ins;
  if (ins.op == Opcode::BINARY_OP) as.op = py::binary_op_opcode(ins.arg);
  else if (ins.op == Opcode::CALL) as.op = Opcode::CALL_METHOD;
  return as;
}

bool DynamicShapes::instruction_uses(SimFrame& fr, const Instruction& real, int uses, bool moving) {
  // what a number specialised now was used by (3.11: BINARY_OP with its operator)
  using_op_ = moving ? nullptr : real.op == Opcode::BINARY_OP ? py::binary_op_text(real.arg) : op_name(real.op);
  const Instruction ins = as_before_311(real);
  const bool derive = !moving && (!s_.unguarded_.empty() || !derived_.empty()) && scalars_used(fr, ins, uses);
  if (!size_ints_.empty() && (!moving || (fr.root && ins.op == Opcode::RETURN_VALUE))) sizes_used_by(fr, ins, uses);
  return derive;
}

void DynamicShapes::instruction_done(SimFrame& fr, bool derive) {
  if (derive) note_derived(fr);
  if (!shape_armed_.empty()) shape_call_done();
}

bool DynamicShapes::shape_pending(PyObject* v) const {
  return !shape_armed_.empty() && std::find(shape_armed_.begin(), shape_armed_.end(), v) != shape_armed_.end();
}

void DynamicShapes::after_node(const OpDef& op, const Attrs& attrs, const std::vector<int>& ins,
                               const std::vector<int>& outs, const Metas& in, const Metas& out) {
  if (!pending_shape_.empty()) commit_shape_ints();
  if (!dim_deps_.empty() || !attr_bits_.empty()) propagate_dims(op, attrs, ins, outs, in, out);
  attr_bits_.clear();
}

// ---- lifted scalars ----

void DynamicShapes::number_read(PyObject* obj, PyObject* copy, int node) {
  const bool marked = py::is_mutable_number(obj);
  const bool data = s_.resume_data(node);
  if (!marked && !data && !(s_.opt_.dynamic_scalars && s_.opt_.dynamic_scalars->count(s_.tree_.path(node)))) return;
  liftable_.emplace(copy, node);
  if (data) data_.insert(copy);
  if (marked) s_.r_.mutable_paths.push_back(s_.tree_.path(node));
}

namespace {

// The operator calls the tensor's own C slot, which converts a Python number with operand() and
// runs no Python code in between (a subclass overriding it would see the number itself).
bool tensor_slot(PyObject* t, Opcode op) {
  if (!py::is_tensor(t)) return false;
  const PyTypeObject* tp = Py_TYPE(t);
  const PyNumberMethods *m = tp->tp_as_number, *b = py::TensorBaseType.tp_as_number;
  switch (op) {
    case Opcode::COMPARE_OP: return tp->tp_richcompare == py::TensorBaseType.tp_richcompare;
    case Opcode::BINARY_ADD: case Opcode::INPLACE_ADD: return m->nb_add == b->nb_add && m->nb_inplace_add == b->nb_inplace_add;
    case Opcode::BINARY_SUBTRACT: case Opcode::INPLACE_SUBTRACT:
      return m->nb_subtract == b->nb_subtract && m->nb_inplace_subtract == b->nb_inplace_subtract;
    case Opcode::BINARY_MULTIPLY: case Opcode::INPLACE_MULTIPLY:
      return m->nb_multiply == b->nb_multiply && m->nb_inplace_multiply == b->nb_inplace_multiply;
    case Opcode::BINARY_TRUE_DIVIDE: case Opcode::INPLACE_TRUE_DIVIDE:
      return m->nb_true_divide == b->nb_true_divide && m->nb_inplace_true_divide == b->nb_inplace_true_divide;
    case Opcode::BINARY_FLOOR_DIVIDE: case Opcode::INPLACE_FLOOR_DIVIDE:
      return m->nb_floor_divide == b->nb_floor_divide && m->nb_inplace_floor_divide == b->nb_inplace_floor_divide;
    case Opcode::BINARY_MODULO: case Opcode::INPLACE_MODULO:
      return m->nb_remainder == b->nb_remainder && m->nb_inplace_remainder == b->nb_inplace_remainder;
    case Opcode::BINARY_POWER: case Opcode::INPLACE_POWER:
      return m->nb_power == b->nb_power && m->nb_inplace_power == b->nb_inplace_power;
    default: return false;
  }
}

}  // namespace

void DynamicShapes::arm_lifts(SimFrame& fr, const Instruction& ins, size_t from) {
  const size_t n = fr.stack.size();
  if (from + 2 != n) return;
  if (ins.op == Opcode::COMPARE_OP && ins.arg > 5) return;  // only <, <=, ==, !=, >, >=
  for (size_t i = from; i < n; ++i) {
    PyObject* v = fr.stack[i];
    if (((liftable_.count(v) && s_.unguarded_.count(v)) || derived_.count(v)) && tensor_slot(fr.stack[from + (n - 1 - i)], ins.op))
      armed_.push_back(v);
  }
}

bool DynamicShapes::scalars_used(SimFrame& fr, const Instruction& ins, int uses) {
  const size_t n = fr.stack.size(), from = uses < 0 || static_cast<size_t>(uses) > n ? 0 : n - uses;
  bool derive = false;
  if (!liftable_.empty() || !derived_.empty()) {
    arm_lifts(fr, ins, from);
    compare_lifted(fr, ins, from);
    derive = derivable(fr, ins, from);
    if (!liftable_.empty()) arm_shape_ints(fr, ins, from);
  }
  if (derive) return true;
  const bool to_user = (!liftable_.empty() || !derived_.empty()) && calls_user_function(fr, ins, from);
  for (size_t i = from; i < n; ++i) {
    PyObject* v = fr.stack[i];
    if (!armed_.empty() && std::find(armed_.begin(), armed_.end(), v) != armed_.end()) continue;
    // a lifted or derived number handed to a user function it simulates: guarded where it is used
    if (to_user && (derived_.count(v) || (liftable_.count(v) && s_.unguarded_.count(v)))) continue;
    s_.guard_scalars(v);
    if (!derived_.empty()) guard_derived_now(v);
  }
  return false;
}

bool DynamicShapes::calls_user_function(SimFrame& fr, const Instruction& ins, size_t from) {
  if (ins.op != Opcode::CALL_FUNCTION && ins.op != Opcode::CALL_METHOD && ins.op != Opcode::CALL_FUNCTION_KW) return false;
  if (from >= fr.stack.size()) return false;
  // the callable: CALL_METHOD has a method and its self, or a null slot and the callable
  PyObject* f = fr.stack[from];
  if (ins.op == Opcode::CALL_METHOD && !PyFunction_Check(f) && from + 1 < fr.stack.size()) f = fr.stack[from + 1];
  if (PyMethod_Check(f)) f = PyMethod_GET_FUNCTION(f);
  return PyFunction_Check(f) && !s_.is_library_code(f);
}

namespace {
bool lifted_float(PyObject* v, const std::unordered_map<PyObject*, int>& liftable,
                  const std::unordered_set<PyObject*>& unguarded) {
  return PyFloat_CheckExact(v) && liftable.count(v) && unguarded.count(v);
}
}  // namespace

bool DynamicShapes::derivable(SimFrame& fr, const Instruction& ins, size_t from) {
  const size_t n = fr.stack.size();
  const Opcode op = ins.op;
  const bool unary = op == Opcode::UNARY_NEGATIVE;
  const bool binary = op == Opcode::BINARY_ADD || op == Opcode::BINARY_SUBTRACT || op == Opcode::BINARY_MULTIPLY ||
                      op == Opcode::BINARY_TRUE_DIVIDE || op == Opcode::INPLACE_ADD || op == Opcode::INPLACE_SUBTRACT ||
                      op == Opcode::INPLACE_MULTIPLY || op == Opcode::INPLACE_TRUE_DIVIDE;
  if (!(unary && from + 1 == n) && !(binary && from + 2 == n)) return false;
  auto variable = [&](PyObject* v) { return derived_.count(v) > 0 || lifted_float(v, liftable_, s_.unguarded_); };
  auto constant = [&](PyObject* v) {
    return (PyFloat_CheckExact(v) || PyLong_CheckExact(v)) && !s_.unguarded_.count(v) && !derived_.count(v) &&
           !size_ints_.count(v);
  };
  PyObject* a = fr.stack[from];
  PyObject* b = unary ? nullptr : fr.stack[from + 1];
  if (unary) {
    if (!variable(a)) return false;
  } else {
    if (!(variable(a) || constant(a)) || !(variable(b) || constant(b)) || !(variable(a) || variable(b))) return false;
    // a divisor that may change could become 0, where Python raises and the graph would not
    const bool divide = op == Opcode::BINARY_TRUE_DIVIDE || op == Opcode::INPLACE_TRUE_DIVIDE;
    if (divide && (!constant(b) || PyObject_Not(b) != 0)) return false;
    // an int constant enters float64 exactly as Python converts it
    for (PyObject* c : {a, b}) {
      if (!PyLong_CheckExact(c)) continue;
      PyLong_AsDouble(c);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
    }
  }
  pending_derived_ = {op, a, b};
  return true;
}

void DynamicShapes::note_derived(SimFrame& fr) {
  PyObject* r = fr.stack.empty() ? nullptr : fr.stack.back();
  if (r && PyFloat_CheckExact(r) && r != pending_derived_.a && r != pending_derived_.b && !derived_.count(r)) {
    derived_.emplace(r, pending_derived_);
    return;
  }
  // (not a fresh float: its operands are used as Python values after all)
  for (PyObject* v : {pending_derived_.a, pending_derived_.b}) {
    if (!v) continue;
    s_.guard_scalars(v);
    guard_derived_now(v);
  }
}

void DynamicShapes::guard_derived_now(PyObject* v) {
  auto it = derived_.find(v);
  if (it == derived_.end()) return;
  const Derived d = it->second;
  derived_.erase(it);
  for (PyObject* s : {d.a, d.b}) {
    if (!s) continue;
    s_.guard_scalars(s);
    guard_derived_now(s);
  }
}

Tensor DynamicShapes::scalar_input(PyObject* number, DType dtype) {
  auto [it, added] = lifted_.try_emplace({number, static_cast<int>(dtype)}, -1);
  if (added) {
    const int node = liftable_.at(number);
    it->second = s_.graph_.add_input(TensorMeta{{}, dtype}, s_.tree_.path(node), false);
    s_.r_.plan.input_nodes.push_back(node);
    s_.r_.scalar_inputs.push_back(static_cast<int>(s_.graph_.inputs().size()) - 1);
    PyObject* repr = s_.own(PyObject_Repr(number));
    s_.r_.dynamic_notes.push_back(s_.tree_.path(node) + " is a graph input (a Python " + Py_TYPE(number)->tp_name + ", traced with " +
                               (repr ? py::text(repr) : "?") + ", as " + dtype_name(dtype) + ")");
  }
  return Tensor::symbolic({}, dtype, it->second);
}

Tensor DynamicShapes::value64(PyObject* v) {
  if (liftable_.count(v)) return scalar_input(v, DType::Float64);
  auto it = derived_.find(v);
  if (it == derived_.end()) return Tensor::scalar(PyFloat_AsDouble(v), DType::Float64);  // a constant
  auto done = derived64_.find(v);
  if (done != derived64_.end()) return done->second;
  const Derived& d = it->second;
  const char* name = nullptr;
  switch (d.op) {
    case Opcode::UNARY_NEGATIVE: name = "neg"; break;
    case Opcode::BINARY_ADD: case Opcode::INPLACE_ADD: name = "add"; break;
    case Opcode::BINARY_SUBTRACT: case Opcode::INPLACE_SUBTRACT: name = "sub"; break;
    case Opcode::BINARY_MULTIPLY: case Opcode::INPLACE_MULTIPLY: name = "mul"; break;
    default: name = "div"; break;
  }
  const OpDef* op = find_op(name);
  PJ_CHECK(op) << "no op " << name;
  Tensors in{value64(d.a)};
  if (d.b) in.push_back(value64(d.b));
  Tensor t = s_.record(*op, in, {})[0];
  derived64_.emplace(v, t);
  return t;
}

void DynamicShapes::compare_lifted(SimFrame& fr, const Instruction& ins, size_t from) {
  const size_t n = fr.stack.size();
  if (ins.op != Opcode::COMPARE_OP || ins.arg > 5 || from + 2 != n) return;
  static const int swapped[] = {Py_GT, Py_GE, Py_EQ, Py_NE, Py_LT, Py_LE};
  for (int left = 0; left < 2; ++left) {
    PyObject* v = fr.stack[left ? from : from + 1];
    PyObject* c = fr.stack[left ? from + 1 : from];
    if (!liftable_.count(v) || !s_.unguarded_.count(v) || s_.unguarded_.count(c) || !(PyFloat_CheckExact(c) || PyLong_CheckExact(c)))
      continue;
    const int op = left ? ins.arg : swapped[ins.arg];  // as `v <op> c`
    const int r = PyObject_RichCompareBool(v, c, op);
    if (r < 0) s_.python_error("comparison");
    static const char* const text[] = {" < ", " <= ", " == ", " != ", " > ", " >= "};
    for (int node : s_.scalar_nodes_.at(v)) {
      Py_INCREF(c);
      s_.tree_.add_check(node, {CheckKind::Compare, c, op | (r << 3), {}});
    }
    PyObject* repr = s_.own(PyObject_Repr(c));
    s_.r_.dynamic_notes.push_back(s_.tree_.path(liftable_.at(v)) + ": guarded " + (r ? "" : "not ") + s_.tree_.path(liftable_.at(v)) +
                               text[op] + (repr ? py::text(repr) : "?") + ", not its value (a comparison" +
                               at_line() + ")");
    armed_.push_back(v);
    return;
  }
}

std::optional<Tensor> DynamicShapes::lift_scalar(PyObject* number, DType dtype) {
  if (std::find(armed_.begin(), armed_.end(), number) == armed_.end()) return std::nullopt;
  if (!derived_.count(number)) return scalar_input(number, dtype);
  // computed in float64 as Python computed it, then converted as operand() converts a float
  Tensor t = value64(number);
  if (dtype == DType::Float64) return t;
  const OpDef* cast = find_op("cast");
  PJ_CHECK(cast) << "no op cast";
  return s_.record(*cast, {t}, {{"dtype", dtype}})[0];
}

void DynamicShapes::note_specialised_scalar(PyObject* copy) {
  auto it = liftable_.find(copy);
  if (it == liftable_.end()) return;
  PyObject* repr = s_.own(PyObject_Repr(copy));
  s_.r_.dynamic_notes.push_back(s_.tree_.path(it->second) + " specialised to " + (repr ? py::text(repr) : "?") +
                             ": used by Python (" + (using_op_ ? using_op_ : "?") + ")" + at_line());
  liftable_.erase(it);
}

void DynamicShapes::sweep_observed(const SweepTrace* t) {
  if (!t) {
    sweep_begins_.push_back(s_.graph_.nodes().size());
    return;
  }
  if (sweep_begins_.empty()) return;
  graph::SweepPlan p;
  p.node_begin = sweep_begins_.back();
  p.node_end = s_.graph_.nodes().size();
  sweep_begins_.pop_back();
  if (symbols_.empty()) return;
  std::string why;
  auto value_of = [&](const Tensor& x) -> int {
    if (x.is_symbolic()) return static_cast<int>(x.sym());
    auto it = s_.const_ids_.find(x.impl());
    return it == s_.const_ids_.end() ? -1 : it->second;
  };
  // (an outer tape records this sweep: its own backward would be built for these sizes)
  if (!sweep_begins_.empty() || tape_active()) why = "a gradient of a gradient is taken inside the graph";
  std::set<int> seen;
  for (const Tensor& x : t->values) {
    const int v = value_of(x);
    if (v < 0 || !seen.insert(v).second) why = "a gradient is taken of a value capture cannot name";
    p.handle_values.push_back(v);
  }
  for (const SweepNode& n : t->nodes) {
    if (n.custom || !n.op) why = "a gradient runs user code (" + n.name + ")";
    p.nodes.push_back({n.op, n.attrs ? *n.attrs : Attrs{}, n.in, n.out});
  }
  p.carries = t->carries;
  p.out_handles = t->out_handles;
  for (size_t k = 0; k < t->out_handles.size(); ++k) {
    // (an output the tape does not track still has its seed's shape checked: the replay would not)
    if (t->out_handles[k] < 0) why = "a gradient of an output the tape does not track";
    p.seed_values.push_back(value_of(t->seeds[k]));
    if (p.seed_values.back() < 0) why = "a gradient seeded with a value capture cannot name";
  }
  p.leaves = t->leaves;
  for (size_t k = 0; k < t->leaves.size(); ++k) {
    const bool zeros = t->results[k].impl() == t->zeros_like[k].impl();
    p.zeros_values.push_back(value_of(t->zeros_like[k]));
    p.result_values.push_back(value_of(t->results[k]));
    if (p.result_values.back() < 0 || (zeros && p.zeros_values.back() < 0))
      why = "a gradient capture cannot name";
  }
  if (!why.empty()) {
    specialise(~uint64_t{0}, why + at_line());
    return;
  }
  // A gradient has its leaf's shape: its sizes depend on what the leaf's do (not on the sizes the
  // backward's ops met on the way, which the replay derives again).
  for (size_t k = 0; k < p.leaves.size(); ++k) {
    const int leaf = p.leaves[k] >= 0 ? p.handle_values[p.leaves[k]] : -1;
    const int from = leaf >= 0 && p.result_values[k] != p.zeros_values[k] ? leaf : p.zeros_values[k];
    auto it = from >= 0 ? dim_deps_.find(from) : dim_deps_.end();
    if (it != dim_deps_.end()) dim_deps_[p.result_values[k]] = it->second;
    else dim_deps_.erase(p.result_values[k]);
  }
  s_.r_.dynamic_notes.push_back("the gradient taken" + at_line() + " is emitted again for each new size");
  s_.r_.sweeps.push_back(std::move(p));
}

void DynamicShapes::check_sweeps() {
  for (const graph::SweepPlan& p : s_.r_.sweeps) {
    std::set<int> inside, results(p.result_values.begin(), p.result_values.end());
    for (size_t i = p.node_begin; i < p.node_end; ++i)
      for (int o : s_.graph_.nodes()[i].outputs) inside.insert(o);
    bool ok = true;
    for (size_t i = p.node_end; i < s_.graph_.nodes().size() && ok; ++i)
      for (int v : s_.graph_.nodes()[i].inputs) ok = ok && (!inside.count(v) || results.count(v));
    for (int v : s_.graph_.outputs()) ok = ok && (!inside.count(v) || results.count(v));
    if (!ok) {
      specialise(~uint64_t{0}, "a value inside a gradient's backward is used after it");
      s_.r_.sweeps.clear();
      return;
    }
  }
}

// ---- Python ints that are a reshape's sizes ----

void DynamicShapes::arm_shape_ints(SimFrame& fr, const Instruction& ins, size_t from) {
  if ((ins.op != Opcode::CALL_FUNCTION && ins.op != Opcode::CALL_METHOD) || fr.kw_names) return;  // (3.11: keywords)
  static PyObject* mark = PyUnicode_InternFromString("__pijit_shape_args__");
  auto marked = [&](PyObject* f) {
    if (PyMethod_Check(f)) f = PyMethod_GET_FUNCTION(f);
    if (!PyFunction_Check(f) || !s_.is_library_code(f)) return false;
    PyObject* d = reinterpret_cast<PyFunctionObject*>(f)->func_dict;
    return d && PyDict_GetItem(d, mark) == Py_True;
  };
  const size_t n = fr.stack.size();
  size_t args = from + 1;
  if (from >= n || !marked(fr.stack[from])) {
    if (ins.op != Opcode::CALL_METHOD || from + 1 >= n || !marked(fr.stack[from + 1])) return;
    args = from + 2;
  }
  auto arm = [&](PyObject* v) {
    if (PyLong_CheckExact(v) && liftable_.count(v) && s_.unguarded_.count(v) &&
        std::find(shape_armed_.begin(), shape_armed_.end(), v) == shape_armed_.end()) {
      shape_armed_.push_back(v);
      armed_.push_back(v);
    }
  };
  for (size_t i = args; i < n; ++i) {
    PyObject* v = fr.stack[i];
    if (PyTuple_CheckExact(v) || PyList_CheckExact(v))
      for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(v); ++k) arm(PySequence_Fast_GET_ITEM(v, k));
    else
      arm(v);
  }
}

void DynamicShapes::match_shape_ints(const OpDef& op, const Attrs& attrs) {
  pending_shape_.clear();
  if (op.name != "reshape" || !attrs.has("shape")) return;
  const IntList& shape = attrs.ints("shape");
  for (PyObject* v : shape_armed_) {
    const long long hint = PyLong_AsLongLong(v);
    if (hint == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      continue;
    }
    // only an entry no other number could have given: one match, and no other armed int alike
    size_t at = shape.size(), matches = 0;
    for (size_t k = 0; k < shape.size(); ++k)
      if (shape[k] == hint) {
        at = k;
        ++matches;
      }
    bool alone = true;
    for (PyObject* w : shape_armed_) alone = alone && (w == v || PyObject_RichCompareBool(w, v, Py_EQ) != 1);
    if (matches == 1 && alone && hint >= 2) pending_shape_.push_back({at, v});  // (0 and 1 stay exact)
  }
}

void DynamicShapes::commit_shape_ints() {
  const size_t node = s_.graph_.nodes().size() - 1;
  for (const auto& [entry, v] : pending_shape_) {
    int k = -1;
    for (size_t i = 0; i < symbols_.size(); ++i)
      if (symbols_[i].scalar == v) k = static_cast<int>(i);
    if (k < 0 && symbols_.size() < 64) {
      const Tensor t = scalar_input(v, DType::Int64);  // fed each call: the plans' key
      symbols_.push_back({liftable_.at(v), static_cast<int>(t.sym()), -1, PyLong_AsLongLong(v), false, {}, v});
      k = static_cast<int>(symbols_.size()) - 1;
    }
    if (k < 0) continue;
    attr_bits_.push_back({entry, uint64_t{1} << k});
    attr_symbols_.push_back({node, "shape", entry, k});
    shape_armed_.erase(std::remove(shape_armed_.begin(), shape_armed_.end(), v), shape_armed_.end());
  }
  pending_shape_.clear();
}

void DynamicShapes::shape_call_done() {
  std::vector<PyObject*> left;
  left.swap(shape_armed_);
  for (PyObject* v : left) s_.guard_scalars(v);  // (what took it is not a reshape's attribute)
}

void DynamicShapes::finish(bool broke) {
  if (symbols_.empty()) return;
  check_sweeps();
  if (broke)  // the interpreter's part would receive them as constants
    for (const auto& [v, m] : size_ints_) specialise(m, "a size live where the graph breaks");
  for (size_t k = 0; k < symbols_.size(); ++k) {
    const Symbol& s = symbols_[k];
    if (s.specialised) continue;
    if (s.scalar) {  // a Python int: its value keys the plans, its attribute entries take it
      // 0 and 1 stay exact, as for sizes (emptiness, broadcasting): the guard reads `n >= 2`
      for (int node : s_.scalar_nodes_.at(s.scalar)) {
        PyObject* two = PyLong_FromLong(2);
        if (!two) s_.python_error("int");
        s_.tree_.add_check(node, {CheckKind::Compare, two, Py_GE | (1 << 3), {}});
      }
      s_.r_.symbolic_dims.push_back({s_.graph_.value(s.value).index, -1, static_cast<int>(k), s.hint});
      for (const graph::SymbolicAttr& a : attr_symbols_)
        if (a.symbol == static_cast<int>(k)) s_.r_.symbolic_attrs.push_back(a);
      s_.r_.dynamic_notes.push_back("s" + std::to_string(k) + " = " + s_.tree_.path(s.node) + " is a size of a reshape "
                                 "(traced with " + std::to_string(s.hint) + "): planned per value");
      continue;
    }
    guards::Check* c = s_.tree_.find_check(s.node, CheckKind::TensorMeta);
    PJ_CHECK(c) << "a symbolic size of a tensor without its meta guard";
    c->symbols.resize(c->meta.shape.size(), -1);
    c->symbols[s.dim] = static_cast<int>(k);
    c->facts.insert(c->facts.end(), s.facts.begin(), s.facts.end());
    s_.r_.symbolic_dims.push_back({s_.graph_.value(s.value).index, s.dim, static_cast<int>(k)});
    s_.r_.dynamic_notes.push_back("s" + std::to_string(k) + " = " + s_.tree_.path(s.node) + ".shape[" + std::to_string(s.dim) +
                               "] is dynamic (traced with " + std::to_string(s.hint) + ")");
  }
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
