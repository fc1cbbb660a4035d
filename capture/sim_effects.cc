// Side effects the captured part makes, deferred and replayed after the graph in program order
// (codegen::EffectPlan): attribute, global and nonlocal stores to what existed before the frame
// started, and output calls (print, logging, ops.Print). The graph itself is pure, so running it
// first and the effects after it is indistinguishable from eager execution: each effect sees the
// state every earlier effect left, and the simulation reads its own writes through the overlay.
#include "py/pyport.h"  // first (Python.h)

#include <algorithm>
#include <cstring>

#include "capture/sim_state.h"
#include "py/py_common.h"
#include "pyext/tensor_object.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {
namespace {

// logging's output functions and Logger methods: what they do (format, filter, emit through the
// handlers) depends only on logging's own state, which the captured part cannot touch.
bool logging_output(PyObject* func) {
  static const char* const names[] = {"debug", "info", "warning", "warn", "error", "exception", "critical",
                                      "fatal", "log", nullptr};
  if (!PyFunction_Check(func)) return false;
  PyFunctionObject* f = reinterpret_cast<PyFunctionObject*>(func);
  if (!f->func_module || !PyUnicode_Check(f->func_module) || PyUnicode_CompareWithASCIIString(f->func_module, "logging") != 0)
    return false;
  const std::string qualname = py::text(f->func_qualname);
  const char* q = qualname.c_str();
  if (std::strncmp(q, "Logger.", 7) == 0 || std::strncmp(q, "LoggerAdapter.", 14) == 0) q = std::strchr(q, '.') + 1;
  return name_in(names, q);
}

// pijit marks its own output functions (ops.print_, ops.Print.__call__) with __pijit_output__.
bool marked_output(PyObject* func) {
  if (!PyFunction_Check(func)) return false;
  PyObject* d = reinterpret_cast<PyFunctionObject*>(func)->func_dict;
  return d && PyDict_GetItemString(d, "__pijit_output__");
}

bool builtin_print(PyObject* callable) {
  if (!PyCFunction_Check(callable)) return false;
  PyObject* self = PyCFunction_GET_SELF(callable);
  if (!self || !PyModule_Check(self)) return false;
  const char* mod = PyModule_GetName(self);
  if (!mod) {
    PyErr_Clear();
    return false;
  }
  return std::strcmp(mod, "builtins") == 0 &&
         std::strcmp(reinterpret_cast<PyCFunctionObject*>(callable)->m_ml->ml_name, "print") == 0;
}

}  // namespace

bool is_parameter(PyObject* v) {
  PyObject* mro = Py_TYPE(v)->tp_mro;
  for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); ++i)
    if (std::strcmp(reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i))->tp_name, "Parameter") == 0) return true;
  return false;
}

namespace {

// How many times `p` (and what it is built from) names each graph output.
void count_outputs(const ReturnPlan& p, std::vector<int>& uses) {
  if (p.kind == ReturnPlan::Output && p.index >= 0 && p.index < static_cast<int>(uses.size())) ++uses[p.index];
  for (const ReturnPlan& item : p.items) count_outputs(item, uses);
}

}  // namespace

// A Parameter assigned in the graph is written back after it: write_back(target, output). Where
// that write comes before every other effect (none of them can have seen the Parameter's old
// bytes, nor print it), the Parameter is a graph input, and nothing else in the rewritten code
// names the output (no return, local, resume argument or other effect gets it: they would share
// the Parameter's storage), the graph may compute the output in the Parameter itself. The plan
// decides whether it does (graph/plan.h).
void find_write_backs(CaptureResult& r) {
  static PyObject* write_back = py::module_attr("pijit._C", "write_back");
  const codegen::FramePlan& fp = r.plan;
  if (!write_back || fp.effects.empty() || !r.graph) return;
  const graph::Graph& g = *r.graph;
  std::vector<int> uses(g.outputs().size(), 0);
  for (const codegen::EffectPlan& fx : fp.effects)
    for (const ReturnPlan& op : fx.operands) count_outputs(op, uses);
  count_outputs(fp.ret, uses);
  for (const ReturnPlan& p : fp.resume.stack) count_outputs(p, uses);
  for (const auto& l : fp.resume.locals) count_outputs(l.second, uses);
  for (const auto& c : fp.resume.cells) count_outputs(c.second, uses);
  std::vector<graph::Graph::WriteBack> found;
  std::vector<int> targets;  // every leading write-back's input, aliased or not
  for (const codegen::EffectPlan& fx : fp.effects) {
    if (fx.kind != codegen::EffectPlan::Call || fx.kwnames || fx.operands.size() != 3 ||
        fx.operands[0].kind != ReturnPlan::Const || fx.operands[0].obj != write_back)
      break;
    const ReturnPlan &target = fx.operands[1], &value = fx.operands[2];
    const auto at = target.kind == ReturnPlan::Source
                        ? std::find(fp.input_nodes.begin(), fp.input_nodes.end(), target.index)
                        : fp.input_nodes.end();
    // A target that is not a graph input may share storage with one the graph writes in place,
    // and this write-back, replayed after the graph, would land before that one's where eager
    // has it after: none is written in place then (the plan checks inputs against each other).
    if (at == fp.input_nodes.end()) return;
    const int input = static_cast<int>(at - fp.input_nodes.begin());
    targets.push_back(input);
    if (value.kind != ReturnPlan::Output || value.obj || uses[value.index] != 1) continue;
    if (g.value(g.inputs().at(input)).parameter) found.push_back({value.index, input});
  }
  // A Parameter written back twice keeps both copies: written in place, the later value would be
  // overwritten by the earlier one's replay.
  found.erase(std::remove_if(found.begin(), found.end(), [&](const graph::Graph::WriteBack& w) {
                return std::count(targets.begin(), targets.end(), w.input) > 1;
              }), found.end());
  r.graph->set_write_backs(std::move(found));
}

// A store or delete that may fail at replay (an index or key, attribute or global that may be
// missing then) would raise from the captured function's line: inside a called function, that
// function's frames would be missing from the traceback. The call runs for real instead.
void Simulator::not_in_callee(const std::string& what) {
  if (frames_.size() > 1) stop(Break::SideEffect, what + " in a called function, where it may raise");
}

void Simulator::defer(codegen::EffectPlan fx, PyObject* value, const std::string& what, bool may_raise) {
  // Replayed after the graph, an effect that raises would raise outside the handler that catches
  // it in eager Python. One that cannot raise (a plain store, list.append) replays the same.
  for (const SimFrame* f : frames_) {
    for (const SimFrame::Block& b : f->blocks)
      if (may_raise && b.op != Opcode::SETUP_LOOP) stop(Break::SideEffect, what + " inside a try or with block");
    // 3.11: the instruction running in f lies in a handler's range (a try, a with-block, an except body)
    if (may_raise && f->pc > 0 && (*f->handler)[f->pc - 1] >= 0) stop(Break::SideEffect, what + " inside a try or with block");
  }
  const SimFrame* root = frames_.front();  // the replay belongs to the root's code: its line
  fx.line = root->pc > 0 ? (*root->ins)[root->pc - 1].line : current_line();
  if (value) escape(value);
  r_.plan.effects.push_back(std::move(fx));
  r_.effects.push_back(what + " (line " + std::to_string(current_line()) + ")");
}

// A container the simulation made, handed to a deferred effect, is rebuilt from the plan made now,
// and a tensor the graph made is its value now: a later change to either would not reach the object
// the effect stores (write and write_tensor refuse one).
void Simulator::escape(PyObject* v) {
  Nesting nest(this);
  if (values_.preexisting(v)) return;
  if (py::is_tensor(v) && py::unwrap(v).is_symbolic() && !values_.frame_tensor(v)) {
    escaped_.insert(v);
    return;
  }
  if (!(PyList_CheckExact(v) || PyDict_CheckExact(v) || tuple_like(v) || made_object(v))) return;
  if (!escaped_.insert(v).second) return;
  if (made_object(v)) {
    for (const auto& attr : object_state(v)) escape(attr.second);
  } else if (PyDict_CheckExact(v)) {
    Py_ssize_t pos = 0;
    PyObject *k, *item;
    while (PyDict_Next(v, &pos, &k, &item)) escape(item);
  } else {
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i) escape(PySequence_Fast_GET_ITEM(v, i));
  }
}

// How the rewritten code reaches a callable to replay: along its guard path, or as a constant
// (a builtin, pijit's own functions and primitives).
ReturnPlan Simulator::plan_callee(PyObject* callable) {
  if (node_of(callable) >= 0) return plan_return(callable);
  bool builtin = PyCFunction_Check(callable) && (!PyCFunction_GET_SELF(callable) || PyModule_Check(PyCFunction_GET_SELF(callable)));
  if (!builtin && !(PyFunction_Check(callable) ? is_library_code(callable) : is_library_type(Py_TYPE(callable))))
    stop(Break::UnreconstructibleResult, std::string("an output function the rewritten code cannot reach (a ") +
                                             Py_TYPE(callable)->tp_name + ")");
  ReturnPlan p;
  Py_INCREF(callable);
  p.kind = ReturnPlan::Const;
  p.obj = callable;
  return p;
}

// "print()", "logging.Logger.info()", "pijit.ops.misc.print_()"
std::string Simulator::describe_output(PyObject* func) {
  if (PyCFunction_Check(func)) return std::string(reinterpret_cast<PyCFunctionObject*>(func)->m_ml->ml_name) + "()";
  if (!PyFunction_Check(func)) return std::string(Py_TYPE(func)->tp_name) + "()";
  PyFunctionObject* f = reinterpret_cast<PyFunctionObject*>(func);
  std::string mod = f->func_module && PyUnicode_Check(f->func_module) ? py::text(f->func_module) : "?";
  return mod + "." + py::text(f->func_qualname) + "()";
}

// print(), logging, ops.Print: deferred (None is their result). nullptr: not an output call.
PyObject* Simulator::output_call(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames) {
  PyObject* func = PyMethod_Check(callable) ? PyMethod_GET_FUNCTION(callable) : callable;
  if (!PyFunction_Check(func) && !PyCFunction_Check(func) && is_library_type(Py_TYPE(func))) {
    static PyObject* call_name = PyUnicode_InternFromString("__call__");  // ops.Print()
    PyObject* call = _PyType_Lookup(Py_TYPE(func), call_name);
    if (!call || !marked_output(call)) return nullptr;
  } else if (!builtin_print(func) && !marked_output(func) && !logging_output(func)) {
    return nullptr;
  }
  // Replayed later, the call must run no user code that could change what the simulation went on
  // to read: arguments printed by builtin or pijit code, a builtin stream, plain logging handlers.
  std::string name = describe_output(func);
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (size_t i = 0; i < args.size(); ++i) {
    Py_ssize_t k = static_cast<Py_ssize_t>(i) - static_cast<Py_ssize_t>(args.size() - nkw);
    bool file = k >= 0 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "file") == 0;
    if (file ? !(args[i] == Py_None || builtin_stream(args[i])) : !plain_output_arg(args[i]))
      stop(Break::Print, name + " of a " + Py_TYPE(args[i])->tp_name + " (replayed later, it could run user code)");
  }
  if (builtin_print(func) || marked_output(func)) {
    PyObject* out = PySys_GetObject("stdout");  // borrowed; print's default file
    if (out && out != Py_None && !builtin_stream(out)) stop(Break::Print, name + " to a sys.stdout of user code");
  }
  if (logging_output(func) && !logging_is_plain(PyMethod_Check(callable) ? PyMethod_GET_SELF(callable) : nullptr))
    stop(Break::Print, name + " with a handler, filter or formatter of user code");
  codegen::EffectPlan fx;
  if (PyMethod_Check(callable)) {  // logger.info(...): the method is looked up again on replay
    fx.kind = codegen::EffectPlan::CallMethod;
    fx.operands.push_back(plan_return(PyMethod_GET_SELF(callable)));
    fx.name = py::Ref(PyObject_GetAttrString(func, "__name__"));
    if (!fx.name) python_error("an output method's name");
  } else {
    fx.operands.push_back(plan_callee(callable));
  }
  for (PyObject* a : args) {
    fx.operands.push_back(plan_return(a));
    escape(a);
  }
  if (kwnames) {
    Py_INCREF(kwnames);
    fx.kwnames = py::Ref(kwnames);
  }
  defer(std::move(fx), nullptr, "calls " + name);
  return Py_None;
}

// An in-place write to a tensor (ops.assign, `t += v`): within the trace the stand-in holds the new
// graph value, so every later read sees it; a Parameter read from the frame is written after the
// graph (ops.assign of the graph's value, replayed). A tensor made in the trace needs nothing more.
// Refused where the graph could not stand for eager aliasing: a view taken of the tensor in the
// trace, a tensor that is a view itself, or a frame tensor other than a Parameter (an argument
// may share storage with another).
void Simulator::write_tensor(PyObject* target, PyObject* value, const std::string& what) {
  const Tensor& old = py::unwrap(target);
  if (!old.is_symbolic()) stop(Break::InplaceUpdate, what + " of a tensor made outside the graph");
  if (escaped_.count(target))  // fuzz 5400241: BOX.t = t; t += 1 left BOX.t the old value
    stop(Break::SideEffect, what + " after a replayed write was given the tensor (it stores the value it had)");
  if (dynamic_.tracks_sizes()) {  // written back after the graph, where the two shapes must agree
    sizes_read(old, -1, "a tensor written in place");
    sizes_read(py::unwrap(value), -1, "a value written in place");
  }
  const Value* frame = values_.frame_tensor(target);
  if (frame && !(frame->real && is_parameter(frame->real)))
    stop(Break::InplaceUpdate, what + " of a tensor argument (only Parameters are written back)");
  int64_t id = old.sym();
  std::unordered_set<int64_t> viewed{id};  // the tensor and the views taken of it, transitively
  for (const graph::Node& n : graph_.nodes()) {
    if (!n.op->is_view) continue;
    for (int out : n.outputs)
      if (out == id) stop(Break::InplaceUpdate, what + " of a view (" + n.op->name + ")");
    if (viewed.count(n.inputs[0]))
      for (int out : n.outputs) {
        viewed.insert(out);
        stale_views_.insert(out);
      }
  }
  const Tensor& nv = py::unwrap(value);
  if (nv.shape() != old.shape() || nv.dtype() != old.dtype())
    stop(Break::Internal, what + ": the new value's shape or dtype differs from the tensor's");
  if (frame) {
    // The write itself (its checks were made here): pijit._C.write_back(target, value).
    static PyObject* assign = py::module_attr("pijit._C", "write_back");
    if (!assign) python_error("pijit._C.write_back");
    codegen::EffectPlan fx;
    fx.operands.push_back(plan_callee(assign));
    fx.operands.push_back(plan_return(target));
    fx.operands.push_back(plan_return(value));
    defer(std::move(fx), nullptr, what, /*may_raise=*/false);  // shapes and dtypes checked above
    if (nv.is_symbolic()) written_back_.insert(nv.sym());
  }
  py::rebind_symbolic(target, nv);
}

bool Simulator::views_written_back(int64_t id) const {
  if (written_back_.empty()) return false;
  std::unordered_set<int64_t> viewing(written_back_);
  for (const graph::Node& n : graph_.nodes())
    if (n.op->is_view && !n.inputs.empty() && viewing.count(n.inputs[0]))
      for (int out : n.outputs) viewing.insert(out);
  return viewing.count(id) && !written_back_.count(id);
}

// ops.assign(variable, value), Tensor.add_(other), ...: pijit's Python says what is written (the
// function's __pijit_inplace__, traced: the checks and conversions the eager write makes); the
// write itself is write_tensor's. The target is the first positional argument (a method's self).
PyObject* Simulator::assign_call(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames) {
  std::vector<PyObject*> bound;
  const std::vector<PyObject*>* all = &args;
  if (PyMethod_Check(callable)) {  // t.add_ read as an attribute: its function, self first
    bound.push_back(PyMethod_GET_SELF(callable));
    bound.insert(bound.end(), args.begin(), args.end());
    all = &bound;
    callable = PyMethod_GET_FUNCTION(callable);
  }
  if (!PyFunction_Check(callable) || !is_library_code(callable)) return nullptr;
  PyObject* d = reinterpret_cast<PyFunctionObject*>(callable)->func_dict;
  PyObject* value_of = d ? PyDict_GetItemString(d, "__pijit_inplace__") : nullptr;
  if (!value_of) return nullptr;
  const size_t keywords = kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(kwnames)) : 0;
  if (all->size() <= keywords) stop(Break::UnsupportedCall, describe_output(callable) + " with its target as a keyword argument");
  PyObject* target = (*all)[0];
  PyObject* value = trace_call(value_of, *all, kwnames);
  if (!py::is_tensor(target) || !py::is_tensor(value)) stop(Break::Internal, "ops.assign's value is not a tensor");
  write_tensor(target, value, "assigns a tensor in place: " + describe_output(callable));
  return target;
}

// `self.p += v` stores back the Parameter the attribute already holds (written in place): the
// store changes nothing to replay. Read without running code: the instance dict, or a Cell's
// registry of Parameters.
bool Simulator::stores_back(PyObject* owner, PyObject* name, PyObject* value) {
  const Value* t = values_.frame_tensor(value);
  const int node = node_of(owner);
  if (!t || !t->real || node < 0 || attr_overlay_.count({owner, py::name_key(name)})) return false;
  PyObject* descr = _PyType_Lookup(Py_TYPE(owner), name);
  if (descr && Py_TYPE(descr)->tp_descr_set) return false;
  if (!py::has_own_attrs_now(owner)) return false;
  static PyObject* params_name = PyUnicode_InternFromString("_params");
  PyObject* held = py::own_attr(owner, name);
  bool in_params = false;
  if (!held && is_cell(owner)) {
    PyObject* params = py::own_attr(owner, params_name);
    held = params && PyDict_Check(params) ? PyDict_GetItem(params, name) : nullptr;
    in_params = true;
  }
  if (held != t->real) return false;
  // The store is skipped because the attribute holds this very tensor already: a later call, given
  // another tensor, must store it (fuzz 4300317).
  using guards::Access;
  const int path = in_params ? tree_.child(tree_.child(node, Access::DictAttr, params_name), Access::Item, name)
                             : tree_.child(node, Access::DictAttr, name);
  tree_.add_same_as(path, t->node, true);
  return true;
}

// `cell.p = t` where p names a registered Parameter and t is a Tensor (not a Parameter): pijit's
// Cell.__setattr__ writes t's values into p, as Parameter.set_data (t of p's shape; a dtype p holds
// without losing precision, cast to p's). MindSpore's `self.p += v` is this store of `self.p + v`
// (pyext/augassign.h). False: not such a store (a subclass's own __setattr__, no such Parameter).
bool Simulator::store_parameter_values(PyObject* owner, int node, PyObject* name, PyObject* value) {
  PyTypeObject* tp = Py_TYPE(owner);
  static PyObject* setattr_name = PyUnicode_InternFromString("__setattr__");
  static PyObject* params_name = PyUnicode_InternFromString("_params");
  PyObject* setter = _PyType_Lookup(tp, setattr_name);
  if (!setter || !PyFunction_Check(setter) || !is_library_code(setter)) return false;
  PyObject* params = py::own_attr(owner, params_name);
  PyObject* held = params && PyDict_Check(params) ? PyDict_GetItem(params, name) : nullptr;
  if (!held || !is_parameter(held)) return false;
  const Value* v = values_.frame_tensor(value);
  if (is_parameter(v && v->real ? v->real : value)) return false;  // a Parameter replaces p
  guard_class(node, tp, name);  // a property or __setattr__ given to the class later recompiles
  PyObject* p = wrap(held, tree_.child(tree_.child(node, guards::Access::DictAttr, params_name), guards::Access::Item, name));
  const std::string what = "assigns Parameter '" + py::text(name) + "' of a " + tp->tp_name;
  const Tensor& pt = py::unwrap(p);
  const Tensor& vt = py::unwrap(value);
  if (vt.shape() != pt.shape()) stop(Break::Raises, "ValueError: " + what + " a tensor of another shape (set_data)");
  if (vt.dtype() != pt.dtype()) {
    if (static_cast<int>(vt.dtype()) > static_cast<int>(pt.dtype()))  // Parameter.set_data's rule
      stop(Break::Raises, "TypeError: " + what + " a tensor of a dtype it cannot hold (set_data)");
    PyObject* dtype = own(PyObject_GetAttrString(p, "dtype"));
    PyObject* cast = PyObject_CallMethod(value, "astype", "O", dtype);
    if (!cast) python_error("astype");
    value = own(cast);
  }
  write_tensor(p, value, what);
  return true;
}

// obj.name = value on an object that existed before the frame: deferred, and read back through
// the overlay. Only where reading the attribute back is known to give the value stored: a plain
// instance __dict__ (no data descriptor of that name, no __setattr__ of its own), or a pijit Cell
// storing a value that is neither a Parameter nor a Cell.
void Simulator::store_attr(PyObject* owner, PyObject* name, PyObject* value) {
  const std::string name_text = py::text(name);
  const char* cname = name_text.c_str();
  std::string what = std::string(value ? "assigns attribute '" : "deletes attribute '") + cname + "' of a " +
                     Py_TYPE(owner)->tp_name;
  Write kind = value ? Write::Attr : Write::DeleteAttr;
  if (made_object(owner)) return object_store(owner, name, value, what);
  if (value && stores_back(owner, name, value)) return;
  int node = node_of(owner);
  if (value && node >= 0 && py::is_tensor(value) && is_cell(owner) && values_.preexisting(owner) &&
      store_parameter_values(owner, node, name, value))
    return;
  // (a module's attributes are its globals, read by LOAD_GLOBAL around the overlay)
  if (!values_.preexisting(owner) || node < 0 || py::is_tensor(owner) || PyType_Check(owner) || PyModule_Check(owner))
    write(owner, kind, what);
  PyTypeObject* tp = Py_TYPE(owner);
  PyObject* descr = _PyType_Lookup(tp, name);
  bool plain = tp->tp_setattro == PyObject_GenericSetAttr && py::holds_own_attrs(owner);
  const Value* tensor = value ? values_.frame_tensor(value) : nullptr;  // a Parameter read from the frame is a graph input
  bool cell = is_cell(owner) && value && !is_cell(value) && !is_parameter(tensor ? tensor->real : value);
  if (cell) {  // a subclass's own __setattr__ is user code
    static PyObject* setattr_name = PyUnicode_InternFromString("__setattr__");
    PyObject* setter = _PyType_Lookup(tp, setattr_name);
    cell = setter && PyFunction_Check(setter) && is_library_code(setter);
  }
  if (cell) {  // Cell.__setattr__ would unregister (or refuse to replace) a child or Parameter
    static PyObject* const registries[] = {PyUnicode_InternFromString("_cells"), PyUnicode_InternFromString("_params")};
    for (PyObject* reg : registries) {
      PyObject* d = reg ? py::own_attr(owner, reg) : nullptr;
      if (d && PyDict_Check(d) && PyDict_GetItem(d, name)) cell = false;
    }
  }
  if ((!plain && !cell) || (descr && Py_TYPE(descr)->tp_descr_set) || std::strcmp(cname, "__class__") == 0 ||
      std::strcmp(cname, "__dict__") == 0)
    write(owner, kind, what);
  guard_class(node, tp, name);  // a property or __setattr__ added to the class later recompiles
  codegen::EffectPlan fx;
  fx.kind = value ? codegen::EffectPlan::StoreAttr : codegen::EffectPlan::DeleteAttr;
  if (value) fx.operands.push_back(plan_return(value));
  fx.operands.push_back(plan_return(owner));
  Py_INCREF(name);
  fx.name = py::Ref(name);
  if (!value || !plain) not_in_callee(what);  // (a deleted attribute may be missing)
  defer(std::move(fx), value, what, /*may_raise=*/!value || !plain);
  attr_overlay_[{owner, py::name_key(name)}] = value ? value : null_slot();  // (one-to-one, unlike text)
  overlaid_.insert(owner);
}

// The value a deferred store gave obj.name, or nullptr.
PyObject* Simulator::overlay_attr(PyObject* owner, PyObject* name) {
  if (PyModule_Check(owner) && !global_overlay_.empty() && PyModule_GetDict(owner) == frames_.front()->globals)
    return overlay_global(*frames_.front(), name);  // module.G after `global G; G = ...`
  if (!overlaid_.count(owner)) return nullptr;
  if (py::text(name) == "__dict__")
    stop(Break::SideEffect, "reads the __dict__ of an object whose attributes it assigned");
  auto it = attr_overlay_.find({owner, py::name_key(name)});
  if (it != attr_overlay_.end() && it->second == null_slot())
    stop(Break::SideEffect, "reads attribute '" + py::text(name) + "' it deleted (the deletion is replayed later)");
  return it == attr_overlay_.end() ? nullptr : it->second;
}

void Simulator::store_global(SimFrame& fr, PyObject* name, PyObject* value) {
  std::string what = std::string(value ? "assigns global '" : "deletes global '") + py::text(name) + "'";
  // The rewritten code stores into its own globals: a function inlined from another module's
  // would need that module's.
  if (fr.globals != frames_.front()->globals) write(fr.globals, Write::Global, what);
  codegen::EffectPlan fx;
  fx.kind = value ? codegen::EffectPlan::StoreGlobal : codegen::EffectPlan::DeleteGlobal;
  if (value) fx.operands.push_back(plan_return(value));
  Py_INCREF(name);
  fx.name = py::Ref(name);
  if (!value) not_in_callee(what);
  defer(std::move(fx), value, what, /*may_raise=*/!value);
  global_overlay_[py::name_key(name)] = value ? value : null_slot();  // (one-to-one, unlike text)
}

PyObject* Simulator::overlay_global(SimFrame& fr, PyObject* name) {
  if (global_overlay_.empty() || fr.globals != frames_.front()->globals) return nullptr;
  auto it = global_overlay_.find(py::name_key(name));
  if (it != global_overlay_.end() && it->second == null_slot())
    stop(Break::SideEffect, "reads global '" + py::text(name) + "' it deleted (the deletion is replayed later)");
  return it == global_overlay_.end() ? nullptr : it->second;
}

// nonlocal n; n = v: the simulation's stand-in cell takes the value, the real one on replay.
void Simulator::store_nonlocal(SimFrame& fr, int i, PyObject* value) {
  PyObject* cell = fr.cells[i];
  const Value* rec = values_.find(cell);
  std::string what = "assigns a nonlocal variable of an enclosing function";
  codegen::EffectPlan fx;
  if (fr.root && i >= py::code_ncells(fr.code)) {  // the root's own free variable
    fx.kind = codegen::EffectPlan::StoreDeref;
    fx.index = i;
  } else if (rec && rec->origin == Origin::Mirror && rec->node >= 0) {  // an inlined closure's cell
    fx.kind = codegen::EffectPlan::StoreAttr;
    fx.name = py::Ref(PyUnicode_InternFromString("cell_contents"));
  } else {
    write(cell, Write::Nonlocal, what, /*preexisting=*/true);
  }
  fx.operands.push_back(plan_return(value));
  if (fx.kind == codegen::EffectPlan::StoreAttr) fx.operands.push_back(plan_return_node(rec->node));
  defer(std::move(fx), value, what, /*may_raise=*/false);
  PyCell_Set(cell, value);
}

// The caller's list, dict or set (read from the frame, exactly that class): a method that changes
// it is replayed; the simulation may not read the container after that. What list.pop and
// dict.setdefault return is read from the container as it is before the change, and dict.get is
// such a read alone (returns_read).
bool Simulator::defers_method(PyObject* owner, PyObject* name) {
  return replayable_method(owner, name) && container_deferrable(owner);
}

bool Simulator::replayable_method(PyObject* owner, PyObject* name) {
  static const char* const list_methods[] = {"append", "extend", "insert", "clear", "pop", nullptr};
  static const char* const dict_methods[] = {"update", "clear", "setdefault", "get", nullptr};
  static const char* const set_methods[] = {"add", "discard", "update", "clear", nullptr};
  const char* const* ok = PyList_CheckExact(owner) ? list_methods
                          : PyDict_CheckExact(owner) ? dict_methods
                          : Py_TYPE(owner) == &PySet_Type ? set_methods : nullptr;
  return ok && name_in(ok, py::text(name).c_str());
}

PyObject* Simulator::deferred_method(PyObject* owner, PyObject* name) {
  if (!defers_method(owner, name)) return nullptr;
  PyObject* bound = own(PyObject_GetAttr(owner, name));  // never called: a key for CALL_METHOD
  values_.created_method(bound, owner, name, /*replayed=*/true);
  return bound;
}

// lst.pop([i]) and d.setdefault(k[, v]) on the caller's container: the value they return, read
// along guard paths before the replayed change (nullptr: the method returns None). setdefault of a
// key the dict holds changes nothing (*changes false).
PyObject* Simulator::returns_read(PyObject* owner, const std::string& name, const std::vector<PyObject*>& args,
                                  bool* changes) {
  *changes = true;
  if (name != "pop" && name != "setdefault" && name != "get") return nullptr;
  // (a changed container is read through its overlay: what plain Python sees by now)
  ContainerOverlay* ov = dirty_.count(owner) ? overlay_of(owner) : nullptr;
  if (dirty_.count(owner) && !ov)
    stop(Break::SideEffect, "reads a container it changed (the change is replayed after the graph)");
  const int node = node_of(owner);
  if (name == "get") {  // a read, no change: d[k] along its guard path, or the default
    *changes = false;
    if (args.empty() || args.size() > 2 || !is_constant(args[0])) {
      if (ov) stop(Break::SideEffect, "calls .get() with a key that is not a constant on a dict it changed");
      return nullptr;  // (simulated as any call)
    }
    PyObject* v = ov ? overlay_dict_get(owner, *ov, args[0]) : frame_dict_item(owner, node, args[0]);
    return v ? v : args.size() == 2 ? args[1] : Py_None;
  }
  if (name == "setdefault") {
    if (args.empty() || args.size() > 2 || !is_constant(args[0]))
      stop(Break::SideEffect, "calls .setdefault() on a dict the function did not create, with a key that is not a constant");
    if (PyObject* v = ov ? overlay_dict_get(owner, *ov, args[0]) : frame_dict_item(owner, node, args[0])) {
      *changes = false;
      return v;
    }
    return args.size() == 2 ? args[1] : Py_None;
  }
  if (args.size() > 1 || (args.size() == 1 && !PyLong_CheckExact(args[0])))
    stop(Break::SideEffect, "calls .pop() on a list the function did not create, with an index that is not an int");
  if (!args.empty()) guard_scalars(args[0]);  // (the value of a number the frame gave decides what is popped)
  ContainerOverlay& list = overlay_known(owner);  // (the list's length is guarded)
  const Py_ssize_t n = static_cast<Py_ssize_t>(list.items.size());
  Py_ssize_t i = args.empty() ? -1 : PyLong_AsSsize_t(args[0]);
  if (i == -1 && PyErr_Occurred()) python_error("list.pop");
  if (i < 0) i += n;
  if (n == 0 || i < 0 || i >= n) {
    PyErr_SetString(PyExc_IndexError, n == 0 ? "pop from empty list" : "pop index out of range");
    raise_lookup_error("list.pop");
  }
  const ContainerOverlay::Slot slot = list.items[i];
  list.items.erase(list.items.begin() + i);
  return overlay_slot(owner, slot);
}

PyObject* Simulator::defer_method_call(PyObject* method, const std::vector<PyObject*>& args) {
  const Value& m = *values_.method(method);
  PyObject* const owner = m.owner;
  PyObject* const name = m.name;
  bool changes = true;
  PyObject* result = returns_read(owner, py::text(name), args, &changes);
  if (!changes) return result ? result : call(load_attr(owner, name), args, nullptr);
  // A list's methods here never raise; a dict's or set's hash what they are given.
  bool may_raise = !PyList_CheckExact(owner);
  if (may_raise) {
    may_raise = false;
    for (PyObject* a : args) may_raise = may_raise || !deep_trusted(a);
  }
  codegen::EffectPlan fx;
  fx.kind = codegen::EffectPlan::CallMethod;
  fx.operands.push_back(plan_return(owner));
  for (PyObject* a : args) {
    if (a == owner) stop(Break::SideEffect, "passes a container to its own method");
    fx.operands.push_back(plan_return(a));
    escape(a);
  }
  Py_INCREF(name);
  fx.name = py::Ref(name);
  defer(std::move(fx), nullptr,
        "calls ." + py::text(name) + "() on a " + Py_TYPE(owner)->tp_name + " the function did not create",
        may_raise);
  if (py::text(name) != "pop") overlay_change(owner, py::text(name), args);  // (pop changed it already)
  dirty_.insert(owner);
  return result ? result : Py_None;
}

// container[key] = value on the caller's list or dict. false: not one (the caller refuses or
// simulates the store).
bool Simulator::store_item(PyObject* container, PyObject* key, PyObject* value) {
  if (!(PyList_CheckExact(container) || PyDict_CheckExact(container)) || !container_deferrable(container)) return false;
  if (container == key || container == value) return false;
  codegen::EffectPlan fx;
  fx.kind = value ? codegen::EffectPlan::StoreSubscr : codegen::EffectPlan::DeleteSubscr;
  if (value) fx.operands.push_back(plan_return(value));
  fx.operands.push_back(plan_return(container));
  fx.operands.push_back(plan_return(key));
  // A dict stores under a key that hashes plainly; a list's index may be out of range, a deleted
  // key missing.
  bool may_raise = !value || !PyDict_CheckExact(container) || !deep_trusted(key);
  ContainerOverlay* ov = dirty_.count(container) ? overlay_of(container) : nullptr;
  if (!value && ov && !ov->list && is_constant(key)) {  // del d[k] on a dict it changed: as the overlay has it
    if (!overlay_dict_get(container, *ov, key)) {
      PyErr_SetObject(PyExc_KeyError, key);
      raise_lookup_error("del");
    }
    may_raise = false;
  }
  if (ov && ov->list && PyLong_CheckExact(key)) {  // l[i] on a list it changed: the overlay's length
    overlay_known(container);
    Py_ssize_t i = PyLong_AsSsize_t(key);
    const Py_ssize_t n = static_cast<Py_ssize_t>(ov->items.size());
    const bool fits = !(i == -1 && PyErr_Occurred());
    PyErr_Clear();
    if (fits && (i < -n || i >= n)) {
      PyErr_SetString(PyExc_IndexError, "list assignment index out of range");
      raise_lookup_error(value ? "item assignment" : "del");
    }
    if (fits) may_raise = false;  // (an index past Py_ssize_t stays an effect that may raise)
  }
  if (!value && PyDict_CheckExact(container) && is_constant(key) && !dirty_.count(container)) {
    // del d[k]: a missing k raises here, in program order; a present one is guarded to stay, so
    // the replay cannot raise (unless an earlier deferred change took it: d is dirty then)
    const int item_node = tree_.child(node_of(container), guards::Access::Item, key);
    PyObject* item = PyDict_GetItemWithError(container, key);
    if (!item) {
      if (PyErr_Occurred()) python_error("del");
      tree_.add_check(item_node, {guards::CheckKind::Absent, nullptr, 0, {}});
      PyErr_SetObject(PyExc_KeyError, key);
      raise_lookup_error("del");
    }
    Py_INCREF(Py_TYPE(item));
    tree_.add_check(item_node, {guards::CheckKind::Type, reinterpret_cast<PyObject*>(Py_TYPE(item)), 0, {}});
    may_raise = false;
  }
  Py_ssize_t index = -1;
  const bool plain_index = PyList_CheckExact(container) && PyLong_CheckExact(key) && !dirty_.count(container) &&
                           !((index = PyLong_AsSsize_t(key)) == -1 && PyErr_Occurred());
  PyErr_Clear();  // (an index past Py_ssize_t stays an effect that may raise)
  if (plain_index) {
    // l[i] (= v, or del): an index out of range raises here; else the length is guarded
    const Py_ssize_t n = PyList_GET_SIZE(container);
    Py_INCREF(&PyList_Type);
    tree_.add_check(node_of(container), {guards::CheckKind::Length, reinterpret_cast<PyObject*>(&PyList_Type), n, {}});
    if (index < -n || index >= n) {
      PyErr_SetString(PyExc_IndexError, "list assignment index out of range");
      raise_lookup_error(value ? "item assignment" : "del");
    }
    may_raise = false;
  }
  if (may_raise) not_in_callee(std::string(value ? "assigns" : "deletes") + " an item of the caller's " +
                               Py_TYPE(container)->tp_name);
  escape(key);
  defer(std::move(fx), value,
        std::string(value ? "assigns an item of a " : "deletes an item of a ") + Py_TYPE(container)->tp_name +
            " the function did not create",
        may_raise);
  if (value) overlay_change(container, "__setitem__", {key, value});
  else overlay_change(container, "__delitem__", {key});
  dirty_.insert(container);
  return true;
}

// The caller's container (read along a guard path) that nothing the simulation made from it
// (a copy handed to real code, an iterator, a keys() view) could outlive a deferred change, and
// that is no object's __dict__ or a function's globals (read as attributes or globals, around
// the overlay).
bool Simulator::container_deferrable(PyObject* container) {
  int node = node_of(container);
  if (node < 0 || values_.copy_of(container) || iterated_.count(container)) return false;
  const guards::GuardNode& n = tree_.node(node);
  if (n.key && PyUnicode_Check(n.key) &&
      (PyUnicode_CompareWithASCIIString(n.key, "__dict__") == 0 || PyUnicode_CompareWithASCIIString(n.key, "__globals__") == 0))
    return false;
  return true;
}

// What print/logging format runs no user code: constants, tensors (pijit's repr), classes, and
// builtin containers of those.
bool Simulator::plain_output_arg(PyObject* v) {
  if (is_constant(v) || py::is_tensor(v) || Py_TYPE(v) == &PyType_Type) return true;
  if (!(PyList_CheckExact(v) || PyTuple_CheckExact(v) || PyDict_CheckExact(v))) return false;
  Nesting nest(this);
  if (PyDict_CheckExact(v)) {
    Py_ssize_t pos = 0;
    PyObject *k, *item;
    while (PyDict_Next(v, &pos, &k, &item))
      if (!plain_output_arg(k) || !plain_output_arg(item)) return false;
    return true;
  }
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i)
    if (!plain_output_arg(PySequence_Fast_GET_ITEM(v, i))) return false;
  return true;
}

// A stream whose class is a builtin (io.StringIO, the interpreter's TextIOWrapper): writing to it
// runs no user code.
bool Simulator::builtin_stream(PyObject* file) { return !(Py_TYPE(file)->tp_flags & Py_TPFLAGS_HEAPTYPE); }

// Every logger a record passes (the logger, its ancestors while they propagate) has no filters,
// and every handler is exactly logging's StreamHandler/FileHandler/NullHandler with no filters, a
// default Formatter and a builtin stream. nullptr: the root logger (logging.info()).
bool Simulator::logging_is_plain(PyObject* logger) {
  PyObject* logging = PyImport_AddModule("logging");  // borrowed; imported: its function is being called
  if (!logging) return PyErr_Clear(), false;
  auto attr = [](PyObject* o, const char* n) { return py::Ref(PyObject_GetAttrString(o, n)); };
  auto exactly = [&](PyObject* o, const char* cls) {
    py::Ref c = attr(logging, cls);
    return c && reinterpret_cast<PyObject*>(Py_TYPE(o)) == c.get();
  };
  auto empty = [&](PyObject* o, const char* n) {
    py::Ref v = attr(o, n);
    return v && PyList_CheckExact(v.get()) && PyList_GET_SIZE(v.get()) == 0;
  };
  py::Ref current = logger ? (Py_INCREF(logger), py::Ref(logger)) : attr(logging, "root");
  bool ok = static_cast<bool>(current);
  for (int depth = 0; ok && current && current.get() != Py_None && depth < 64; ++depth) {
    PyObject* l = current.get();
    ok = (exactly(l, "Logger") || exactly(l, "RootLogger")) && empty(l, "filters");
    py::Ref handlers = ok ? attr(l, "handlers") : py::Ref();
    ok = ok && handlers && PyList_CheckExact(handlers.get());
    for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(handlers.get()); ++i) {
      PyObject* h = PyList_GET_ITEM(handlers.get(), i);
      ok = (exactly(h, "StreamHandler") || exactly(h, "FileHandler") || exactly(h, "NullHandler")) && empty(h, "filters");
      py::Ref fmt = ok ? attr(h, "formatter") : py::Ref();
      ok = ok && fmt && (fmt.get() == Py_None || exactly(fmt.get(), "Formatter"));
      if (ok && !exactly(h, "NullHandler")) {
        py::Ref stream = attr(h, "stream");
        ok = stream && builtin_stream(stream.get());
      }
    }
    py::Ref propagate = ok ? attr(l, "propagate") : py::Ref();
    if (!propagate || !PyObject_IsTrue(propagate.get())) break;
    current = attr(l, "parent");
  }
  PyErr_Clear();
  return ok;
}

// After a deferred change to a container, any instruction but those that only move values
// (loads, stores to locals, stack shuffles, a return, another deferred change) may read it.
void Simulator::refuse_dirty_read(SimFrame& fr, const Instruction& ins) {
  if (overlay_instruction(fr, ins)) return;  // read through an overlay (sim_overlay.cc)
  switch (ins.op) {
    case Opcode::NOP: case Opcode::POP_TOP: case Opcode::ROT_TWO: case Opcode::ROT_THREE: case Opcode::ROT_FOUR:
    case Opcode::DUP_TOP: case Opcode::DUP_TOP_TWO: case Opcode::LOAD_CONST: case Opcode::LOAD_FAST:
    case Opcode::STORE_FAST: case Opcode::LOAD_GLOBAL: case Opcode::LOAD_DEREF: case Opcode::LOAD_CLOSURE:
    case Opcode::RETURN_VALUE: case Opcode::JUMP_ABSOLUTE: case Opcode::JUMP_FORWARD:
    case Opcode::COPY: case Opcode::SWAP: case Opcode::PUSH_NULL: case Opcode::RESUME:  // (3.11's)
    case Opcode::PRECALL: case Opcode::KW_NAMES: case Opcode::JUMP_BACKWARD:
      return;
    case Opcode::LOAD_METHOD:
      if (defers_method(fr.stack.back(), PyTuple_GET_ITEM(fr.code->co_names, ins.arg))) return;
      break;
    case Opcode::CALL_METHOD:
    case Opcode::CALL:  // (3.11: the same layout, LOAD_METHOD's slot under the method)
      if (fr.stack.size() > static_cast<size_t>(ins.arg) && replayed_method(fr.stack[fr.stack.size() - ins.arg - 1])) {
        for (size_t k = fr.stack.size() - ins.arg; k < fr.stack.size(); ++k)
          if (dirty_.count(fr.stack[k])) stop(Break::SideEffect, "passes a container it changed (replayed later) as an argument");
        return;
      }
      break;
    case Opcode::DELETE_SUBSCR:
      if (fr.stack.size() >= 2 && !dirty_.count(fr.stack.back())) {
        PyObject* container = fr.stack[fr.stack.size() - 2];
        if ((PyList_CheckExact(container) || PyDict_CheckExact(container)) && node_of(container) >= 0) return;
      }
      break;
    case Opcode::STORE_SUBSCR:  // the value may be the changed container; container and key not
      if (fr.stack.size() >= 3 && !dirty_.count(fr.stack[fr.stack.size() - 1])) {
        PyObject* container = fr.stack[fr.stack.size() - 2];
        if ((PyList_CheckExact(container) || PyDict_CheckExact(container)) && node_of(container) >= 0) return;
      }
      break;
    default:
      break;
  }
  for (PyObject* v : fr.stack)
    if (holds_dirty(v))
      stop(Break::SideEffect, std::string("reads a container it changed (the change is replayed after the graph)"));
}

// v is, or a container the simulation made holds, a container with a deferred change.
bool Simulator::holds_dirty(PyObject* v) {
  if (dirty_.count(v)) return true;
  if (values_.preexisting(v) || !(tuple_like(v) || PyList_CheckExact(v) || PyDict_CheckExact(v))) return false;
  Nesting nest(this);
  if (PyDict_CheckExact(v)) {
    Py_ssize_t pos = 0;
    PyObject *k, *item;
    while (PyDict_Next(v, &pos, &k, &item))
      if (holds_dirty(item)) return true;
    return false;
  }
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i)
    if (holds_dirty(PySequence_Fast_GET_ITEM(v, i))) return true;
  return false;
}

ReturnPlan Simulator::plan_return_node(int node) {
  ReturnPlan p;
  p.kind = ReturnPlan::Source;
  p.index = node;
  return p;
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
