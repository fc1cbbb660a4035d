// Test hooks of the base layer on pijit._C: the opcode table and the decoder as Python sees them, so
// tests/python/test_opcodes.py can hold them against opcode, dis.stack_effect and
// dis.get_instructions on each interpreter. Underscored: not API.
#include "py/pyport.h"  // first (Python.h)

#include "py/bytecode.h"
#include "py/opcodes.h"
#include "py/py_common.h"

namespace pj::py {
namespace {

using py::Opcode;

// On a Python with no column in the opcode table every hook raises, with the same message.
bool refuse_unsupported() {
  if (kDecodeSupported) return false;
  PyErr_SetString(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  return true;
}

// _C._opcode_table() -> [(name, number, flags)] for the running interpreter, table order.
PyObject* py_opcode_table(PyObject*, PyObject*) {
  if (refuse_unsupported()) return nullptr;
  Ref list(PyList_New(0));
  if (!list) return nullptr;
  for (int i = 0; i < py::num_py_opcodes(); ++i) {
    const py::OpInfo& info = py::op_info(py::py_opcode_at(i));
    Ref row(Py_BuildValue("(siI)", info.name, info.py_opcode, info.flags));
    if (!row || PyList_Append(list.get(), row.get()) < 0) return nullptr;
  }
  return list.release();
}

// _C._opcode_flags() -> {"JUMP_REL": bit, ...}: the meaning of the flags column.
PyObject* py_opcode_flags(PyObject*, PyObject*) {
  return Py_BuildValue("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "ARG", py::kArg, "JUMP_REL",
                       py::kJumpRel, "JUMP_ABS", py::kJumpAbs, "COND_JUMP", py::kCondJump,
                       "SETUP", py::kSetup, "ENDS_BLOCK", py::kEndsBlock, "NAME", py::kName,
                       "CONST", py::kConst, "LOCAL", py::kLocal, "FREE", py::kFree, "COMPARE",
                       py::kCompare, "JUMP_BACK", py::kJumpBack, "CACHES_SHIFT", py::kCachesShift);
}

// _C._stack_effect(opcode_number, oparg, jump=None): pijit's table, jump None/True/False as in dis.
PyObject* py_stack_effect(PyObject*, PyObject* args) {
  int number, oparg;
  PyObject* jump = Py_None;
  if (!PyArg_ParseTuple(args, "ii|O:_stack_effect", &number, &oparg, &jump)) return nullptr;
  if (refuse_unsupported()) return nullptr;
  Opcode op = py::from_py_opcode(number);
  if (op == Opcode::kInvalid) return fail(PyExc_ValueError, "unknown opcode " + std::to_string(number));
  int j = -1;
  if (jump != Py_None) {
    int truth = PyObject_IsTrue(jump);
    if (truth < 0) return nullptr;
    j = truth;
  }
  return PyLong_FromLong(py::stack_effect(op, oparg, j));
}

// The decoding of `code` for a test hook named `hook`; false with a Python exception set (a Python
// with no table column, not a code object: TypeError, malformed bytecode: ValueError).
bool decoded(PyObject* code, const char* hook, py::DecodeResult* r) {
  if (refuse_unsupported()) return false;
  if (!PyCode_Check(code))
    return fail(PyExc_TypeError, std::string(hook) + " expects a code object, got '" + Py_TYPE(code)->tp_name + "'"), false;
  *r = py::decode_code(code);
  if (!r->ok()) return fail(PyExc_ValueError, "malformed bytecode: " + r->error), false;
  return true;
}

// _C._decode(code) -> [(offset, opname, arg, line, jump_target, is_jump_target)]; arg and
// jump_target are None where the opcode has none (as in dis). Malformed bytecode: ValueError.
PyObject* py_decode(PyObject*, PyObject* code) {
  PJ_PY_BEGIN
  py::DecodeResult r;
  if (!decoded(code, "_decode", &r)) return nullptr;
  Ref list(PyList_New(0));
  if (!list) return nullptr;
  for (const py::Instruction& ins : r.instructions) {
    Ref arg(py::has_flag(ins.op, py::kArg) ? PyLong_FromLong(ins.arg) : (Py_INCREF(Py_None), Py_None));
    Ref target(ins.jump_target >= 0 ? PyLong_FromLong(ins.jump_target) : (Py_INCREF(Py_None), Py_None));
    if (!arg || !target) return nullptr;
    Ref row(Py_BuildValue("(isOiOO)", ins.offset, py::op_name(ins.op), arg.get(), ins.line, target.get(),
                          ins.is_jump_target ? Py_True : Py_False));
    if (!row || PyList_Append(list.get(), row.get()) < 0) return nullptr;
  }
  return list.release();
  PJ_PY_END(nullptr)
}

// _C._exception_table(code) -> [(start, end, target, depth, lasti)] in bytes, as dis reads the
// table (3.11); [] before 3.11. Malformed: ValueError.
PyObject* py_exception_table(PyObject*, PyObject* code) {
  PJ_PY_BEGIN
  py::DecodeResult r;
  if (!decoded(code, "_exception_table", &r)) return nullptr;
  Ref list(PyList_New(0));
  if (!list) return nullptr;
  for (const py::ExceptionEntry& e : r.handlers) {
    Ref row(Py_BuildValue("(iiiiO)", e.start, e.end, e.target, e.depth, e.lasti ? Py_True : Py_False));
    if (!row || PyList_Append(list.get(), row.get()) < 0) return nullptr;
  }
  return list.release();
  PJ_PY_END(nullptr)
}

// ---- _frame_probe: the frame accessors (pyport.h, section (a')) as the hook sees a frame ----

PyObject* or_unbound(PyObject* v) {  // new reference
  static PyObject* unbound = PyUnicode_InternFromString("<unbound>");
  PyObject* r = v ? v : unbound;
  Py_INCREF(r);
  return r;
}

// {code, locals, derefs, globals, builtins, started, resumable} of f, or nullptr with an exception set.
PyObject* frame_record(py::Frame* f) {
  PyCodeObject* co = py::frame_code(f);
  Ref locals(PyList_New(0)), derefs(PyList_New(0));
  for (int i = 0; locals && i < py::code_nlocals(co); ++i) PyList_Append(locals.get(), Ref(or_unbound(py::frame_local(f, i))).get());
  for (int i = 0; derefs && i < py::code_ncells(co) + py::code_nfrees(co); ++i)
    PyList_Append(derefs.get(), Ref(or_unbound(py::frame_deref(f, i))).get());
  if (!locals || !derefs) return nullptr;
  return Py_BuildValue("{s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "code", reinterpret_cast<PyObject*>(co), "locals",
                       locals.get(), "derefs", derefs.get(), "globals", py::frame_globals(f), "builtins",
                       py::frame_builtins(f), "started", py::frame_started(f) ? Py_True : Py_False, "resumable",
                       py::frame_is_resumable(f) ? Py_True : Py_False);
}

// _C._frame_probe(fn, args[, code]) -> (fn(*args), {code, locals, derefs, globals, builtins,
// started, resumable}) as the frame-evaluation hook read the first frame of `code` (default: fn's)
// entered during the call (unbound variables: "<unbound>"). Tests the accessors capture stands
// on, on every Python that has them.
PyObject* py_frame_probe(PyObject*, PyObject* args) {
  PyObject *fn, *call_args, *code = nullptr;
  if (!PyArg_ParseTuple(args, "OO!|O!:_frame_probe", &fn, &PyTuple_Type, &call_args, &PyCode_Type, &code)) return nullptr;
  if (!PyFunction_Check(fn)) return fail(PyExc_TypeError, "_frame_probe expects a Python function");
  PJ_PY_BEGIN
  Ref record;
  Ref result(call_visiting_frame("_frame_probe", fn, call_args, nullptr,
                                 reinterpret_cast<PyCodeObject*>(code ? code : PyFunction_GET_CODE(fn)),
                                 [&record](PyThreadState* ts, py::Frame* f, int throw_flag) -> PyObject* {
                                   record = Ref(frame_record(f));
                                   return record ? py::eval_frame_default(ts, f, throw_flag) : nullptr;
                                 }));
  if (!result) return nullptr;
  return Py_BuildValue("(OO)", result.get(), record.get());
  PJ_PY_END(nullptr)
}

PyMethodDef py_methods[] = {
    {"_frame_probe", py_frame_probe, METH_VARARGS, "_frame_probe(fn, args[, code]): a frame as the hook reads it"},
    {"_exception_table", py_exception_table, METH_O, "_exception_table(code): pijit's reading of 3.11's exception table"},
    {"_opcode_table", py_opcode_table, METH_NOARGS, "[(name, number, flags)] of the running interpreter"},
    {"_opcode_flags", py_opcode_flags, METH_NOARGS, "names of the bits in _opcode_table's flags"},
    {"_stack_effect", py_stack_effect, METH_VARARGS, "_stack_effect(opcode, oparg, jump=None) from pijit's table"},
    {"_decode", py_decode, METH_O, "_decode(code): pijit's decoding of a code object"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

// Called once from PyInit__C. On failure (out of memory) a Python exception is left set.
void register_py_functions(PyObject* module) { PyModule_AddFunctions(module, py_methods); }

}  // namespace pj::py
