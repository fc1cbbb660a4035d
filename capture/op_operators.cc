// Opcode handlers: unary, binary, in-place and comparison operators (op_handlers.def).
#include "py/pyport.h"  // first (Python.h)

#include "capture/sim_stack.h"
#include "capture/sim_state.h"

#include "pyext/augassign.h"
#include "pyext/tensor_object.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {

namespace {

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

void Simulator::binary_operator(SimFrame& fr, const Instruction& ins) {
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
  // pijit module, whose namespace the graph then guards, so flipping it recompiles.
  if (inplace && py::is_tensor(a)) reads_module_state("pijit._extends.parse.compile_config");
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
}

void Simulator::unary_operator(SimFrame& fr, const Instruction& ins) {
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
}

void Simulator::UNARY_NOT(SimFrame& fr, const Instruction& ins) {
  push(fr, truth(pop(fr)) ? Py_False : Py_True);
}

void Simulator::COMPARE_OP(SimFrame& fr, const Instruction& ins) {
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
  if ((ins.arg == 6 || ins.arg == 7) && dirty_.count(b) && overlay_of(b) && !overlay_of(b)->list && overlay_reads(b, a)) {
    push(fr, overlay_contains(b, a) == (ins.arg == 6) ? Py_True : Py_False);  // (sim_overlay.cc)
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
}

// 3.11: one opcode for every binary and in-place operator, its argument naming which
void Simulator::BINARY_OP(SimFrame& fr, const Instruction& ins) {
  Instruction as = ins;
  as.op = py::binary_op_opcode(ins.arg);
  if (as.op == Opcode::kInvalid) stop(Break::Internal, "BINARY_OP " + std::to_string(ins.arg));
  binary_operator(fr, as);
}

void Simulator::IS_OP(SimFrame& fr, const Instruction& ins) {
  PyObject* b = pop(fr);
  PyObject* a = pop(fr);
  is_identity(a, b);
  push(fr, ((a == b) != (ins.arg == 1)) ? Py_True : Py_False);
}

void Simulator::CONTAINS_OP(SimFrame& fr, const Instruction& ins) {
  PyObject* b = pop(fr);
  PyObject* a = pop(fr);
  if (dirty_.count(b) && overlay_of(b) && !overlay_of(b)->list && overlay_reads(b, a)) {
    push(fr, overlay_contains(b, a) != (ins.arg == 1) ? Py_True : Py_False);  // (sim_overlay.cc)
    return;
  }
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
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
