// Opcode handlers: calls, making functions, generators (op_handlers.def).
#include "py/pyport.h"  // first (Python.h)

#include "capture/sim_stack.h"
#include "capture/sim_state.h"

#if PJ_PY_CAPTURE_BUILT

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
  if (py::kCallsOverNull) pop(fr);  // (PUSH_NULL's slot)
  push(fr, call_ex(fn, args, kwargs));
}

void Simulator::CALL_METHOD(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> args = pop_n(fr, ins.arg);
  PyObject* meth = pop(fr);  // our LOAD_METHOD always pushes the bound attribute over an empty slot
  pop(fr);
  push(fr, replayed_method(meth) ? defer_method_call(meth, args) : call(meth, args, nullptr));
}

// 3.11: the keyword names of the CALL that follows
void Simulator::KW_NAMES(SimFrame& fr, const Instruction& ins) {
  fr.kw_names = PyTuple_GET_ITEM(fr.code->co_consts, ins.arg);
}

// 3.11: [slot, callable, args...], the last len(KW_NAMES) arguments keywords. The slot is
// PUSH_NULL's or LOAD_GLOBAL's (call_slot), or LOAD_METHOD's (null_slot: this simulation's always
// pushes the bound attribute over it), else a callable whose first argument `callable` is (a
// with-block's __exit__ under the three Nones).
void Simulator::CALL(SimFrame& fr, const Instruction& ins) {
  PyObject* names = fr.kw_names;
  fr.kw_names = nullptr;
  std::vector<PyObject*> args = pop_n(fr, ins.arg);
  PyObject* callable = pop(fr);
  PyObject* slot = pop(fr);
  if (slot != null_slot() && slot != call_slot()) {
    args.insert(args.begin(), callable);
    callable = slot;
  }
  if (replayed_method(callable)) {
    if (!names) return push(fr, defer_method_call(callable, args));
    // with keywords, what 3.7-3.10 do: a bound method read by LOAD_ATTR, called
    const Value& m = *values_.method(callable);
    callable = load_attr(m.owner, m.name);
  }
  push(fr, call(callable, args, names));
}

void Simulator::MAKE_FUNCTION(SimFrame& fr, const Instruction& ins) {
  PyObject* qualname = py::kMakeFunctionPopsQualname ? pop(fr) : nullptr;  // (3.11: the code's own)
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

// 3.11's `yield from`: [receiver, value sent] -> [receiver, its next value] for the YIELD_VALUE
// after it (whose resumption jumps back here); when the receiver is finished, its return value in
// its place, and a jump past the loop.
void Simulator::SEND(SimFrame& fr, const Instruction& ins) {
  if (!fr.generator || (fr.code->co_flags & CO_ITERABLE_COROUTINE)) stop(Break::Generator, op_name(ins.op));
  pop(fr);  // the value sent: None (send() is refused)
  PyObject* receiver = top(fr);
  if (PyObject* v = next_item(receiver)) return push(fr, v);
  pop(fr);
  PyObject* ret = sim_generator(receiver) ? generator_frame(receiver).result : nullptr;
  push(fr, ret ? ret : Py_None);
  jump(fr, ins);
}

void Simulator::async_opcode(SimFrame& fr, const Instruction& ins) {
  stop(Break::Generator, op_name(ins.op));
}

// 3.10: a generator's first instruction pops the value the first send() brought (None).
void Simulator::GEN_START(SimFrame& fr, const Instruction& ins) {
  pop(fr);
}

// 3.11: a generator's first instruction, which made it; run when it is first resumed, it stands for
// the value that resumed it (None), which the POP_TOP after it pops.
void Simulator::RETURN_GENERATOR(SimFrame& fr, const Instruction& ins) {
  push(fr, Py_None);
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
