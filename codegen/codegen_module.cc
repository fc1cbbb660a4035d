// Test hooks of codegen/ on pijit._C: the assembler as Python sees it, so
// tests/python/test_assembler.py can reassemble stdlib code and compare it with CPython's own.
// Underscored: not API.
#include "py/pyport.h"  // first (Python.h)

#include <climits>
#include <cstring>
#include <new>

#include "py/bytecode.h"
#include "py/opcodes.h"
#include "codegen/assembler.h"
#include "py/py_common.h"

namespace pj::py {
namespace {

using py::Opcode;

PyCodeObject* as_code(PyObject* o, const char* hook) {
  if (PyCode_Check(o)) return reinterpret_cast<PyCodeObject*>(o);
  PyErr_Format(PyExc_TypeError, "%s expects a code object, got '%s'", hook, Py_TYPE(o)->tp_name);
  return nullptr;
}

// Decoded instructions of a code object, with targets as indices, and its exception table (3.11);
// false with ValueError set (NotImplementedError where the assembler does not run).
bool decoded(PyObject* code, std::vector<codegen::AsmInstr>* out, std::vector<codegen::AsmHandler>* handlers) {
  py::DecodeResult r = py::decode_code(code);
  if (!r.ok() || !kAssembleSupported) {
    const bool known = kDecodeSupported && kAssembleSupported;
    fail(known ? PyExc_ValueError : PyExc_NotImplementedError,
         known ? "malformed bytecode: " + r.error : std::string(kUnsupportedPythonMessage));
    return false;
  }
  *out = codegen::from_decoded(r.instructions);
  *handlers = codegen::from_decoded(r.instructions, r.handlers);
  return true;
}

// Any pijit id by name, including one the running Python lacks (the assembler says so, which is
// what tests want to see); kInvalid for a name no supported Python has.
Opcode opcode_named(const char* name) {
  for (int i = 0; i < py::kNumOpcodes; ++i)
    if (std::strcmp(py::op_name(static_cast<Opcode>(i)), name) == 0) return static_cast<Opcode>(i);
  return Opcode::kInvalid;
}

// int or None (-> dflt); false with TypeError set otherwise.
bool int_or_none(PyObject* o, int dflt, int* out) {
  if (o == Py_None) {
    *out = dflt;
    return true;
  }
  long v = PyLong_AsLong(o);
  if (v == -1 && PyErr_Occurred()) return false;
  if (v < INT_MIN || v > INT_MAX) {
    PyErr_SetString(PyExc_OverflowError, "instruction field out of int range");
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

// _C._reassemble(code) -> decode, then assemble with every other field of code.
PyObject* py_reassemble(PyObject*, PyObject* code) {
  PyCodeObject* co = as_code(code, "_reassemble");
  if (!co) return nullptr;
  PJ_PY_BEGIN
  std::vector<codegen::AsmInstr> ins;
  std::vector<codegen::AsmHandler> handlers;
  if (!decoded(code, &ins, &handlers)) return nullptr;
  return codegen::assemble(ins, codegen::spec_of(co), handlers);
  PJ_PY_END(nullptr)
}

// _C._stack_depth(code) -> the stack depth pijit's flow analysis finds for code's bytecode.
PyObject* py_stack_depth(PyObject*, PyObject* code) {
  if (!as_code(code, "_stack_depth")) return nullptr;
  PJ_PY_BEGIN
  std::vector<codegen::AsmInstr> ins;
  std::vector<codegen::AsmHandler> handlers;
  if (!decoded(code, &ins, &handlers)) return nullptr;
  std::string error;
  int depth = codegen::stack_depth(ins, &error, handlers);
  if (depth < 0) return fail(PyExc_ValueError, error);
  return PyLong_FromLong(depth);
  PJ_PY_END(nullptr)
}

// _C._assemble([(opname, arg, target, line)], template[, handlers]) -> a code object with
// template's constants, names, flags... and these instructions. arg, target, line may be None (0,
// no target, same line as before). handlers (3.11): [(start, end, target, depth, lasti)] by
// instruction index.
PyObject* py_assemble(PyObject*, PyObject* args) {
  PyObject *list, *code, *table = nullptr;
  if (!PyArg_ParseTuple(args, "OO|O:_assemble", &list, &code, &table)) return nullptr;
  PyCodeObject* co = as_code(code, "_assemble");
  if (!co) return nullptr;
  PJ_PY_BEGIN
  Ref seq(PySequence_Fast(list, "_assemble expects a sequence of (opname, arg, target, line)"));
  if (!seq) return nullptr;
  std::vector<codegen::AsmInstr> ins(PySequence_Fast_GET_SIZE(seq.get()));
  for (size_t i = 0; i < ins.size(); ++i) {
    PyObject* row = PySequence_Fast_GET_ITEM(seq.get(), i);
    const char* name;
    PyObject *arg, *target, *line;
    if (!PyArg_ParseTuple(row, "sOOO:_assemble instruction", &name, &arg, &target, &line)) return nullptr;
    ins[i].op = opcode_named(name);
    if (ins[i].op == Opcode::kInvalid) return fail(PyExc_ValueError, std::string("unknown opname '") + name + "'");
    if (!int_or_none(arg, 0, &ins[i].arg) || !int_or_none(target, -1, &ins[i].target) ||
        !int_or_none(line, 0, &ins[i].line))
      return nullptr;
  }
  std::vector<codegen::AsmHandler> handlers;
  if (table) {
    Ref rows(PySequence_Fast(table, "_assemble expects handlers as a sequence of (start, end, target, depth, lasti)"));
    if (!rows) return nullptr;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(rows.get()); ++k) {
      codegen::AsmHandler h;
      int lasti = 0;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(rows.get(), k), "iiiip:_assemble handler", &h.start, &h.end,
                            &h.target, &h.depth, &lasti))
        return nullptr;
      h.lasti = lasti != 0;
      handlers.push_back(h);
    }
  }
  return codegen::assemble(ins, codegen::spec_of(co), handlers);
  PJ_PY_END(nullptr)
}

// ---- _frame_rerun: a frame run through its reassembled code, in its place (pyport's run_in_place) ----
// (A test hook, like _frame_probe: for the call every frame runs in CPython's own loop, pijit's
// hook left out; one thread at a time.)
// _C._frame_rerun(fn, args[, kwargs]) -> fn(*args, **kwargs), its frame run by its code decoded and assembled again
// (on 3.11 taking its arguments positionally) in place of the frame, as the hook runs rewritten
// code. Raises what the call raises.
PyObject* py_frame_rerun(PyObject*, PyObject* args) {
  PyObject *fn, *call_args, *kwargs = nullptr;
  if (!PyArg_ParseTuple(args, "OO!|O!:_frame_rerun", &fn, &PyTuple_Type, &call_args, &PyDict_Type, &kwargs)) return nullptr;
  if (!PyFunction_Check(fn)) return fail(PyExc_TypeError, "_frame_rerun expects a Python function");
  PJ_PY_BEGIN
  auto* co = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(fn));
  std::vector<codegen::AsmInstr> ins;
  std::vector<codegen::AsmHandler> handlers;
  if (!decoded(reinterpret_cast<PyObject*>(co), &ins, &handlers)) return nullptr;
  Ref code(codegen::assemble(ins, codegen::in_place_spec(co), handlers));
  if (!code) return nullptr;
  return call_visiting_frame("_frame_rerun", fn, call_args, kwargs, co,
                             [&code](PyThreadState* ts, py::Frame* f, int) {
                               return py::run_in_place(ts, f, reinterpret_cast<PyCodeObject*>(code.get()));
                             });
  PJ_PY_END(nullptr)
}

PyMethodDef codegen_methods[] = {
    {"_frame_rerun", py_frame_rerun, METH_VARARGS, "_frame_rerun(fn, args[, kwargs]): fn(*args, **kwargs) run by its reassembled code"},
    {"_reassemble", py_reassemble, METH_O, "_reassemble(code): decode code and assemble it again"},
    {"_stack_depth", py_stack_depth, METH_O, "_stack_depth(code): pijit's stack depth of code's bytecode"},
    {"_assemble", py_assemble, METH_VARARGS,
     "_assemble([(opname, arg, target_index, line)], template_code): a code object from instructions"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

// Called once from PyInit__C. On failure (out of memory) a Python exception is left set.
void register_codegen_functions(PyObject* module) { PyModule_AddFunctions(module, codegen_methods); }

}  // namespace pj::py
