// Opcode handlers: calls, making functions, generators (op_handlers.def).
#include "py/pyport.h"  // first (Python.h)

#include "capture/sim_stack.h"
#include "capture/sim_state.h"

#if PJ_PY_CAPTURE_SUPPORTED

namespace pj::capture {

void Simulator::CALL_FUNCTION(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> args = pop_n(fr, ins.arg);
  PyObject* fn = pop(fr);
  push(fr, call(fn, args, nullptr));
}

void Simulator::CALL_FUNCTION_KW(SimFrame& fr, const Instruction& ins) {
  PyObject* names = pop(fr);
  std::vector<PyObject*> args = pop_n(fr, ins.arg);
  PyObject* fn = pop(fr);
  push(fr, call(fn, args, names));
}

void Simulator::CALL_FUNCTION_EX(SimFrame& fr, const Instruction& ins) {
  PyObject* kwargs = (ins.arg & 1) ? pop(fr) : nullptr;
  PyObject* args = pop(fr);
  PyObject* fn = pop(fr);
  push(fr, call_ex(fn, args, kwargs));
}

void Simulator::CALL_METHOD(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> args = pop_n(fr, ins.arg);
  PyObject* meth = pop(fr);  // our LOAD_METHOD always pushes the bound attribute over an empty slot
  pop(fr);
  push(fr, replayed_method(meth) ? defer_method_call(meth, args) : call(meth, args, nullptr));
}

void Simulator::MAKE_FUNCTION(SimFrame& fr, const Instruction& ins) {
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
}

void Simulator::YIELD_VALUE(SimFrame& fr, const Instruction& ins) {
  if (fr.generator) return yield_value(fr);
  stop(Break::Generator, op_name(ins.op));
}

void Simulator::GET_YIELD_FROM_ITER(SimFrame& fr, const Instruction& ins) {
  // `yield from it`: a generator delegates to it
  if (!fr.generator || (fr.code->co_flags & CO_ITERABLE_COROUTINE)) stop(Break::Generator, op_name(ins.op));
  if (!sim_generator(top(fr))) fr.stack.back() = get_iter(top(fr));
}

void Simulator::YIELD_FROM(SimFrame& fr, const Instruction& ins) {
  if (fr.generator) return yield_from(fr);
  stop(Break::Generator, op_name(ins.op));
}

void Simulator::async_opcode(SimFrame& fr, const Instruction& ins) {
  stop(Break::Generator, op_name(ins.op));
}

// 3.10: a generator's first instruction pops the value the first send() brought (None).
void Simulator::GEN_START(SimFrame& fr, const Instruction& ins) {
  pop(fr);
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_SUPPORTED
