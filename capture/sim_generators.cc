// Generators in captured code. Calling a generator function (or a generator expression) binds
// its frame and runs nothing, as CPython does; the simulation stands a capsule for the generator
// object. Each value a consumer asks for (FOR_ITER, next(), the builtins that read an iterable)
// runs the generator's frame up to its next YIELD_VALUE, in the consumer's place in program
// order, so the values, the graph nodes and the side effects interleave exactly as in Python.
// A generator that escapes (returned, stored, handed to real code, live at a break) or is used
// otherwise (send, throw, close, zip) stops capture with a reason; one suspended inside a try or
// with block stops too (closing it would run its cleanup, which the simulation does not model).
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_SUPPORTED

#include "capture/sim_state.h"

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
  generators_[g] = std::move(fr);
  return g;
}

PyObject* Simulator::generator_next(PyObject* g) {
  SimFrame& fr = *generators_.at(g);
  if (fr.returned) return nullptr;
  for (const SimFrame* f : frames_)
    if (f == &fr) stop(Break::Raises, "ValueError: generator already executing");
  if (static_cast<int>(frames_.size()) > opt_.inline_depth)
    stop(Break::InlineDepth, "a generator resumed at depth " + std::to_string(frames_.size()));
  if (fr.started) fr.stack.push_back(Py_None);  // what the paused yield expression evaluates to (send(None))
  fr.started = true;
  try {
    run_frame(fr);
  } catch (const SimRaise&) {  // raised out of the generator: it is finished, as CPython leaves it
    fr.returned = true;
    throw;
  }
  if (!fr.suspended) return nullptr;  // returned: StopIteration, the for loop ends
  fr.suspended = false;
  PyObject* v = fr.yielded;
  fr.yielded = nullptr;
  return v;
}

void Simulator::yield_value(SimFrame& fr) {
  for (const SimFrame::Block& b : fr.blocks)
    if (b.op != Opcode::SETUP_LOOP)
      stop(Break::Generator, "a generator yields inside a try or with block (closing it early would run its cleanup)");
  PJ_CHECK(!fr.stack.empty()) << "YIELD_VALUE on an empty stack";
  fr.yielded = fr.stack.back();
  fr.stack.pop_back();
  fr.suspended = true;
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
  bool any = false;
  for (PyObject* a : args) any = any || sim_generator(a);
  if (!any) return nullptr;
  PyObject* func = PyMethod_Check(callable) ? PyMethod_GET_FUNCTION(callable) : callable;
  const bool user_class = PyType_Check(callable) && (reinterpret_cast<PyTypeObject*>(callable)->tp_flags & Py_TPFLAGS_HEAPTYPE);
  if (PyFunction_Check(func) || made_object(callable) || (user_class && !is_library_type(reinterpret_cast<PyTypeObject*>(callable))))
    return nullptr;
  const char* name = builtin_name(callable);
  const size_t npos = args.size() - (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  if (name_is(name, {"iter"}) && args.size() == 1) return args[0];
  if (name_is(name, {"next"}) && !kwnames && (args.size() == 1 || args.size() == 2) && sim_generator(args[0])) {
    if (PyObject* v = generator_next(args[0])) return v;
    if (args.size() == 2) return args[1];
    // as next() raises it: a handler in a simulated frame (contextlib's __exit__) may catch it
    throw SimRaise{make_exception(reinterpret_cast<PyTypeObject*>(PyExc_StopIteration), {}, nullptr)};
  }
  if (name_is(name, {"any", "all"}) && args.size() == 1) {  // stop at the first deciding value, as they do
    const bool is_any = std::strcmp(name, "any") == 0;
    while (PyObject* v = generator_next(args[0]))
      if (truth(v) == is_any) return is_any ? Py_True : Py_False;
    return is_any ? Py_False : Py_True;
  }
  // Read whole (in order, before anything else the call does): the same values, the same effects.
  const bool whole = name_is(name, {"tuple", "list", "set", "frozenset", "dict", "sorted", "sum", "min", "max"}) ||
                     (PyCFunction_Check(callable) && PyCFunction_GET_SELF(callable) &&
                      ((PyUnicode_CheckExact(PyCFunction_GET_SELF(callable)) &&
                        name_is(reinterpret_cast<PyCFunctionObject*>(callable)->m_ml->ml_name, {"join"})) ||
                       (PyList_CheckExact(PyCFunction_GET_SELF(callable)) &&
                        name_is(reinterpret_cast<PyCFunctionObject*>(callable)->m_ml->ml_name, {"extend"}))));
  if (!whole || !sim_generator(args[0]) || npos == 0)
    stop(Break::Generator, "passes a generator to " + std::string(name ? name : PyType_Check(callable) ? reinterpret_cast<PyTypeObject*>(callable)->tp_name : describe_callable(callable)) +
                               " (capture runs one only for a for loop, next(), any/all and the builtins that read it whole)");
  std::vector<PyObject*> drained(args);
  for (size_t i = 0; i < npos; ++i)
    if (sim_generator(drained[i])) drained[i] = drain(drained[i]);
  return call(callable, drained, kwnames);
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_SUPPORTED
