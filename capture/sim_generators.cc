// Generators in captured code. Calling a generator function (or a generator expression) binds
// its frame and runs nothing, as CPython does; the simulation stands a capsule for the generator
// object. Each value a consumer asks for (FOR_ITER, next(), the builtins that read an iterable)
// runs the generator's frame up to its next YIELD_VALUE, in the consumer's place in program
// order, so the values, the graph nodes and the side effects interleave exactly as in Python.
// A generator that escapes (returned, stored, handed to real code, live at a break) or is used
// otherwise (send, throw, close) stops capture with a reason; one left suspended inside a try or
// with block stops too (closing it would run its cleanup, which the simulation does not model).
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_BUILT

#include "capture/sim_state.h"
#include "pyext/tensor_object.h"

namespace pj::capture {

namespace {
constexpr const char* kCapsule = "pijit.sim_generator";

// A builtin (function or type) by its name, or nullptr.
const char* builtin_name(PyObject* c) {
  if (PyCFunction_Check(c)) {
    PyObject* self = PyCFunction_GET_SELF(c);
    if (self && PyModule_Check(self)) {
      const char* mod = PyModule_GetName(self);
      if (mod && std::strcmp(mod, "builtins") == 0) return reinterpret_cast<PyCFunctionObject*>(c)->m_ml->ml_name;
      PyErr_Clear();
    }
    return nullptr;
  }
  if (c == reinterpret_cast<PyObject*>(&PyTuple_Type) || c == reinterpret_cast<PyObject*>(&PyList_Type) ||
      c == reinterpret_cast<PyObject*>(&PySet_Type) || c == reinterpret_cast<PyObject*>(&PyFrozenSet_Type) ||
      c == reinterpret_cast<PyObject*>(&PyDict_Type))
    return reinterpret_cast<PyTypeObject*>(c)->tp_name;
  return nullptr;
}

bool name_is(const char* n, std::initializer_list<const char*> names) {
  for (const char* m : names)
    if (n && std::strcmp(n, m) == 0) return true;
  return false;
}
}  // namespace

PyObject* Simulator::make_generator(std::unique_ptr<SimFrame> fr) {
  fr->generator = true;
  PyObject* g = own(PyCapsule_New(fr.get(), kCapsule, nullptr));
  values_.created_generator(g, std::move(fr));
  return g;
}

PyObject* Simulator::generator_next(PyObject* g) {
  SimFrame& fr = generator_frame(g);
  stop_value_ = nullptr;
  if (fr.returned) return nullptr;
  for (const SimFrame* f : frames_)
    if (f == &fr) stop(Break::Raises, "ValueError: generator already executing");
  if (static_cast<int>(frames_.size()) > opt_.inline_depth)
    stop(Break::InlineDepth, "a generator resumed at depth " + std::to_string(frames_.size()));
  // What the paused yield expression evaluates to (send(None)); 3.10 pushes it for the first
  // start too, for GEN_START to pop.
  if (fr.started || py::kGenStartPops) fr.stack.push_back(Py_None);
  fr.started = true;
  try {
    run_frame(fr);
  } catch (const SimRaise&) {  // raised out of the generator: it is finished, as CPython leaves it
    fr.returned = true;
    throw;
  }
  if (!fr.suspended) {  // returned: StopIteration (holding what it returned), the for loop ends
    stop_value_ = fr.result;
    return nullptr;
  }
  fr.suspended = false;
  PyObject* v = fr.yielded;
  fr.yielded = nullptr;
  return v;
}

// A generator may yield inside a try or with block: resumed to its end, the cleanup runs where
// Python runs it. One left suspended there would run it when it is closed (collected), which the
// rewritten code does not do: generator_cleanup_pending() then refuses the capture (and a break).
void Simulator::yield_value(SimFrame& fr) {
  PJ_CHECK(!fr.stack.empty()) << "YIELD_VALUE on an empty stack";
  fr.yielded = fr.stack.back();
  fr.stack.pop_back();
  fr.suspended = true;
}

// zip, map, enumerate and filter given a generator or a user iterable: their generator models
// (pijit/_lazy_builtins.py), simulated like user code, so each value is made only when it is
// asked for, in the order the builtin makes it. The builtin calls iter() on its arguments when
// it is created: so does this. nullptr: not one of them (or arguments it does not take).
PyObject* Simulator::lazy_builtin(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames) {
  auto is = [&](PyTypeObject& t) { return callable == reinterpret_cast<PyObject*>(&t); };
  const char* model = is(PyZip_Type) ? "zip_model" : is(PyMap_Type) ? "map_model" : is(PyEnum_Type) ? "enumerate_model"
                      : is(PyFilter_Type) ? "filter_model" : nullptr;
  if (!model) return nullptr;
  PyObject* fn = py::module_attr("pijit._lazy_builtins", model);
  if (!fn) stop(Break::Internal, std::string("pijit._lazy_builtins.") + model + " is missing");
  own(fn);
  const size_t nkw = kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(kwnames)) : 0;
  std::vector<PyObject*> margs{own(PyList_New(0))};  // the sentinel: a list only this call made
  if (is(PyEnum_Type)) {
    const bool start_kw = nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "start") == 0;
    if ((nkw && !start_kw) || args.empty() || args.size() > 2) return nullptr;
    PyObject* start = args.size() == 2 ? args[1] : own(PyLong_FromLong(0));
    if (!PyLong_CheckExact(start)) return nullptr;
    margs.push_back(get_iter(args[0]));
    margs.push_back(start);
  } else {
    if (nkw) return nullptr;
    const bool takes_fn = !is(PyZip_Type);
    if (takes_fn && args.size() < 2) return nullptr;
    if (is(PyFilter_Type) && args.size() != 2) return nullptr;
    for (size_t i = 0; i < args.size(); ++i) margs.push_back(takes_fn && i == 0 ? args[i] : get_iter(args[i]));
  }
  return inline_call(fn, nullptr, margs, nullptr);  // (call() would run pijit's code for real)
}

// YIELD_FROM: the next value of the iterator delegated to is yielded, and the instruction runs
// again when the generator is resumed (CPython rewinds to it); once the iterator is exhausted,
// the sub-generator's return value is the expression's value.
void Simulator::yield_from(SimFrame& fr) {
  PJ_CHECK(fr.stack.size() >= 2) << "YIELD_FROM on a short stack";
  fr.stack.pop_back();  // the value sent: None (send() is refused)
  PyObject* receiver = fr.stack.back();
  if (PyObject* v = next_item(receiver)) {
    fr.yielded = v;
    fr.suspended = true;
    fr.pc -= 1;
    return;
  }
  fr.stack.pop_back();
  PyObject* ret = sim_generator(receiver) ? generator_frame(receiver).result : nullptr;
  fr.stack.push_back(ret ? ret : Py_None);
}

bool Simulator::generator_cleanup_pending() const {
  for (PyObject* g : values_.generators()) {
    const SimFrame& fr = *values_.find(g)->frame;
    if (!fr.started || fr.returned) continue;
    for (const SimFrame::Block& b : fr.blocks)
      if (b.op != Opcode::SETUP_LOOP) return true;
    if (fr.pc > 0 && (*fr.handler)[fr.pc - 1] >= 0) return true;  // 3.11: its YIELD_VALUE in a handler's range
  }
  return false;
}

PyObject* Simulator::drain(PyObject* g) {
  PyObject* out = own(PyList_New(0));
  while (PyObject* v = generator_next(g))
    if (PyList_Append(out, v) < 0) python_error("collecting a generator's values");
  return out;
}

// A call given a generator the simulation made. User code receives it as it is (the normal path,
// nullptr here); the builtins that consume an iterable get what it yields; anything else would
// hand the stand-in to real code.
PyObject* Simulator::call_on_generators(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames) {
  bool any = false, user = false;
  for (PyObject* a : args) {
    any = any || sim_generator(a);
    user = user || (!py::is_tensor(a) && !is_constant(a) && user_operand(a));
  }
  if (!any && !user) return nullptr;
  PyObject* func = PyMethod_Check(callable) ? PyMethod_GET_FUNCTION(callable) : callable;
  const bool user_class = PyType_Check(callable) && (reinterpret_cast<PyTypeObject*>(callable)->tp_flags & Py_TPFLAGS_HEAPTYPE);
  if (PyFunction_Check(func) || made_object(callable) || (user_class && !is_library_type(reinterpret_cast<PyTypeObject*>(callable))))
    return nullptr;
  if (PyObject* g = lazy_builtin(callable, args, kwnames)) return g;
  const char* name = builtin_name(callable);
  const size_t npos = args.size() - (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  // Read whole (in order, before anything else the call does): the same values, the same effects.
  const bool whole = name_is(name, {"tuple", "list", "set", "frozenset", "dict", "sorted", "sum", "min", "max"}) ||
                     (PyCFunction_Check(callable) && PyCFunction_GET_SELF(callable) &&
                      ((PyUnicode_CheckExact(PyCFunction_GET_SELF(callable)) &&
                        name_is(reinterpret_cast<PyCFunctionObject*>(callable)->m_ml->ml_name, {"join"})) ||
                       (PyList_CheckExact(PyCFunction_GET_SELF(callable)) &&
                        name_is(reinterpret_cast<PyCFunctionObject*>(callable)->m_ml->ml_name, {"extend"}))));
  if (!any) {
    // A user object is iterated, through its __iter__, by the builtins that read an iterable
    // (dict() reads a mapping's keys() instead; min and max of several compare them).
    const bool reads = npos >= 1 && user_operand(args[0]) && !name_is(name, {"dict"}) &&
                       (whole || name_is(name, {"any", "all"})) && !(name_is(name, {"min", "max"}) && npos > 1);
    if (!reads) return nullptr;
    // list(), tuple(), sorted() and list.extend size their result by the object's length
    // (PyObject_LengthHint, after iter()): its __len__ runs, and a negative length raises
    // ValueError. (str.join hints by the iterator it made, a builtin: no user code.)
    const bool extend = !name && whole && PyList_CheckExact(PyCFunction_GET_SELF(callable));
    const bool hints = name_is(name, {"tuple", "list", "sorted"}) || extend;
    const bool has_len = hints && special_method(args[0], "__len__");
    // (what CPython would ignore, a TypeError from __len__, stops capture in user_len: never wrong)
    if (has_len && py::kListSizesBeforeIterating && name_is(name, {"list"})) user_len(args[0]);
    PyObject* it = get_iter(args[0]);
    if (has_len) user_len(args[0]);
    else if (hints && special_method(args[0], "__length_hint__"))
      stop(Break::UserObjectOperator, std::string("the __length_hint__ of a ") + Py_TYPE(args[0])->tp_name);
    if (name_is(name, {"any", "all"})) {  // stop at the first deciding value, as they do
      const bool is_any = std::strcmp(name, "any") == 0;
      while (PyObject* v = next_item(it))
        if (truth(v) == is_any) return is_any ? Py_True : Py_False;
      return is_any ? Py_False : Py_True;
    }
    std::vector<PyObject*> iterated(args);
    iterated[0] = it;  // a generator is read by the path below, a builtin iterator it made for real
    if (user_operand(it)) {  // a user iterator: its __next__ until StopIteration
      iterated[0] = own(PyList_New(0));
      while (PyObject* v = next_item(it))
        if (PyList_Append(iterated[0], v) < 0) python_error("collecting an iterator's values");
    }
    return call(callable, iterated, kwnames);
  }
  if (name_is(name, {"iter"}) && args.size() == 1) return args[0];
  if (name_is(name, {"next"}) && !kwnames && (args.size() == 1 || args.size() == 2) && sim_generator(args[0])) {
    if (PyObject* v = generator_next(args[0])) return v;
    if (args.size() == 2) return args[1];
    // as next() raises it: a handler in a simulated frame (contextlib's __exit__) may catch it;
    // the StopIteration that ends a generator holds its return value
    std::vector<PyObject*> value;
    if (stop_value_ && stop_value_ != Py_None) value.push_back(stop_value_);
    throw SimRaise{make_exception(reinterpret_cast<PyTypeObject*>(PyExc_StopIteration), value, nullptr)};
  }
  if (name_is(name, {"any", "all"}) && args.size() == 1) {  // stop at the first deciding value, as they do
    const bool is_any = std::strcmp(name, "any") == 0;
    while (PyObject* v = generator_next(args[0]))
      if (truth(v) == is_any) return is_any ? Py_True : Py_False;
    return is_any ? Py_False : Py_True;
  }
  if (!whole || !sim_generator(args[0]) || npos == 0)
    stop(Break::Generator, "passes a generator to " + std::string(name ? name : PyType_Check(callable) ? reinterpret_cast<PyTypeObject*>(callable)->tp_name : describe_callable(callable)) +
                               " (capture runs one only for a for loop, next(), any/all and the builtins that read it whole)");
  std::vector<PyObject*> drained(args);
  for (size_t i = 0; i < npos; ++i)
    if (sim_generator(drained[i])) drained[i] = drain(drained[i]);
  return call(callable, drained, kwnames);
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
