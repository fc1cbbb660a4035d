// A code object under construction from an existing one: instructions (jumps name their target by
// index, assembler.h) plus the constants, names and locals they need beyond the original's.
//
// Emitters write 3.7-3.10's instructions; on 3.11 op() lowers them as they come: DUP_TOP and the
// ROT_* to COPY and SWAP, the binary operators to BINARY_OP, JUMP_ABSOLUTE and POP_JUMP_IF_* to
// the relative jumps (the assembler turns each backward where its target lies behind), LOAD_GLOBAL's
// name to its 3.11 argument, CALL_FUNCTION and CALL_METHOD to PRECALL + CALL, whose NULL under the
// callable call_begin() pushes (3.7-3.10: nothing). A call with keywords is call_kw(). Inside the
// builder LOAD_DEREF and the other cell instructions name a cell by its index among the cells
// (3.7-3.10's numbering; copied 3.11 instructions are converted on the way in) and finish() gives
// each its slot in the finished code's layout, which new locals shift.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <string>
#include <vector>

#include "codegen/assembler.h"
#include "py/bytecode.h"
#include "py/py_common.h"

#if PJ_PY_CAPTURE_BUILT  // code objects of the Pythons capture supports

namespace pj::codegen {

class CodeBuilder {
 public:
  CodeBuilder(PyCodeObject* co, int line) : line_(line) {
    consts_ = py::Ref(PySequence_List(co->co_consts));
    names_ = py::Ref(PySequence_List(co->co_names));
    PyObject *varnames, *freevars, *cellvars;
    if (py::code_local_names(co, &varnames, &freevars, &cellvars)) {
      varnames_ = py::Ref(PySequence_List(varnames));
      Py_DECREF(varnames);
      Py_DECREF(freevars);
      Py_DECREF(cellvars);
    }
  }
  // Appends an instruction (3.7-3.10's vocabulary, lowered on 3.11) under the current line; returns
  // the index of the (last) instruction it became.
  size_t op(py::Opcode o, int arg = 0, int target = -1) {
    if (py::kCallsOverNull) return op311(o, arg, target);
    return emit(o, arg, target);
  }
  // Before a call's callable is pushed: 3.11's NULL under it.
  void call_begin() {
    if (py::kCallsOverNull) emit(py::Opcode::PUSH_NULL);
  }
  // Calls with `nargs` values pushed (after call_begin and the callable), the last ones the
  // keyword arguments that `kwnames` (a tuple) names.
  size_t call_kw(int nargs, PyObject* kwnames) {
    if (!py::kCallsOverNull) {
      emit(py::Opcode::LOAD_CONST, const_index(kwnames));
      return emit(py::Opcode::CALL_FUNCTION_KW, nargs);
    }
    emit(py::Opcode::KW_NAMES, const_index(kwnames));
    emit(py::Opcode::PRECALL, nargs);
    return emit(py::Opcode::CALL, nargs);
  }
  // 3.11: the code's prologue, as `co` has it (MAKE_CELL, COPY_FREE_VARS, up to its RESUME), at
  // the start of code that runs in place of co's frame or takes over its cells.
  bool prologue(PyCodeObject* co) {
    if (!py::kCallsOverNull) return true;
    py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(co));
    if (!d.ok()) {
      PyErr_SetString(PyExc_ValueError, ("malformed bytecode: " + d.error).c_str());
      return false;
    }
    for (const py::Instruction& in : d.instructions) {
      if (in.op != py::Opcode::MAKE_CELL && in.op != py::Opcode::COPY_FREE_VARS && in.op != py::Opcode::RESUME) break;
      code_.push_back({in.op, in.op == py::Opcode::MAKE_CELL ? py::deref_cell_index(co, in.arg) : in.arg, -1, line_});
      if (in.op == py::Opcode::RESUME) return true;
    }
    emit(py::Opcode::RESUME, 0);
    return true;
  }
  // 3.11: the prologue of a function that takes its cells over from a closure (COPY_FREE_VARS for
  // `nfrees` of them, then RESUME): a resume function, a loop body.
  void closure_prologue(int nfrees) {
    if (!py::kCallsOverNull) return;
    if (nfrees) emit(py::Opcode::COPY_FREE_VARS, nfrees);
    emit(py::Opcode::RESUME, 0);
  }
  // 3.11: an instruction copied from co names a cell by its slot there; the builder by its index
  // among the cells (finish() gives it its slot in the new layout). Where the copy runs in a frame
  // that took co's cells over (a resume function, a loop body), co's prologue becomes NOPs.
  static void localize_cells(PyCodeObject* co, AsmInstr& in, bool prologue_runs) {
    if (!py::kDerefIndexesLocals) return;
    if (!prologue_runs && (in.op == py::Opcode::MAKE_CELL || in.op == py::Opcode::COPY_FREE_VARS)) {
      in.op = py::Opcode::NOP;
      in.arg = 0;
    } else if (py::has_flag(in.op, py::kFree)) {
      in.arg = py::deref_cell_index(co, in.arg);
    }
  }
  // An instruction as it is (its own line and target); returns its index.
  size_t push(const AsmInstr& in) {
    code_.push_back(in);
    return code_.size() - 1;
  }
  void copy(const std::vector<AsmInstr>& code) { code_.insert(code_.end(), code.begin(), code.end()); }
  void replace(size_t at, const AsmInstr& in) { code_[at] = in; }
  void line(int l) {
    if (l > 0) line_ = l;  // (kNoLine: new instructions keep the line they had)
  }
  int const_index(PyObject* v) {
    Py_ssize_t n = PyList_GET_SIZE(consts_.get());
    for (Py_ssize_t i = 0; i < n; ++i)  // identity: 1 and True and 1.0 must stay distinct
      if (PyList_GET_ITEM(consts_.get(), i) == v) return static_cast<int>(i);
    PyList_Append(consts_.get(), v);
    return static_cast<int>(n);
  }
  int int_const(long v) {
    py::Ref k(PyLong_FromLong(v));
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(consts_.get()); ++i) {
      PyObject* c = PyList_GET_ITEM(consts_.get(), i);
      if (PyLong_CheckExact(c) && PyObject_RichCompareBool(c, k.get(), Py_EQ) == 1) return static_cast<int>(i);
    }
    return const_index(k.get());
  }
  int name_index(PyObject* s) {
    Py_ssize_t n = PyList_GET_SIZE(names_.get());
    for (Py_ssize_t i = 0; i < n; ++i)
      if (PyUnicode_Compare(PyList_GET_ITEM(names_.get(), i), s) == 0) return static_cast<int>(i);
    PyList_Append(names_.get(), s);
    return static_cast<int>(n);
  }
  int new_local(const char* name) {
    if (!varnames_) return 0;  // (the names could not be read: finish() fails)
    py::Ref s(PyUnicode_InternFromString(name));
    PyList_Append(varnames_.get(), s.get());
    return static_cast<int>(PyList_GET_SIZE(varnames_.get()) - 1);
  }
  // The local of that name, made if it is new (a scratch local several paths share).
  int local_named(const std::string& name) {
    if (!varnames_) return 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(varnames_.get()); ++i)
      if (PyUnicode_CompareWithASCIIString(PyList_GET_ITEM(varnames_.get(), i), name.c_str()) == 0) return static_cast<int>(i);
    return new_local(name.c_str());
  }
  // 3.11: exception-table entries (instruction indexes of this builder's code).
  void add_handler(const AsmHandler& h) { handlers_.push_back(h); }
  size_t size() const { return code_.size(); }
  void set_target(size_t at, int target) { code_[at].target = target; }
  // The code of a function pijit calls in place of part of `co` (a resume function, a loop body):
  // `argcount` positional arguments (every fast local of co first, so indices are co's), and co's
  // cells as free variables (same indices: cellvars come first in both orders).
  // 3.11: an argument's cell takes the argument's slot in co; here it is a free variable, and the
  // slot it leaves (never bound) gets a name of its own (a code object names a variable once).
  PyObject* finish_closure(PyCodeObject* co, int argcount) {
    if (!check_cell_accesses(co)) return nullptr;
    for (int i = 0; varnames_ && i < py::code_nlocals(co); ++i) {
      if (!py::local_is_cell(co, i)) continue;
      PyObject* name = PyUnicode_FromFormat("__pijit_cellarg_%U", py::code_varname(co, i));
      if (!name || PyList_SetItem(varnames_.get(), i, name) < 0) return nullptr;
    }
    CodeSpec spec = spec_of(co);
    spec.argcount = argcount;
    spec.posonlyargcount = 0;
    spec.kwonlyargcount = 0;
    spec.flags &= ~(CO_VARARGS | CO_VARKEYWORDS);
    py::Ref cells(PySequence_Concat(spec.cellvars, spec.freevars));
    py::Ref none(PyTuple_New(0));
    if (!cells || !none) return nullptr;
    spec.freevars = cells.get();
    spec.cellvars = none.get();
    return finish(spec);
  }
  // co's cell variables become free variables of the closure finish_closure makes, and CPython
  // reports an unbound free variable as NameError where co raised UnboundLocalError: each read or
  // delete of one calls py::cell_load_function / cell_delete_function, which raise as co did.
  bool check_cell_accesses(PyCodeObject* co) {
    const int ncell = static_cast<int>(py::code_ncells(co));
    if (ncell == 0) return true;
    PyObject* load = py::cell_load_function();
    PyObject* del = py::cell_delete_function();
    if (!load || !del) return false;
    std::vector<int> pos(code_.size() + 1);
    std::vector<AsmInstr> out;
    for (size_t i = 0; i < code_.size(); ++i) {
      pos[i] = static_cast<int>(out.size());
      const AsmInstr in = code_[i];
      const bool is_load = in.op == py::Opcode::LOAD_DEREF, is_del = in.op == py::Opcode::DELETE_DEREF;
      if ((!is_load && !is_del) || in.arg >= ncell) {
        out.push_back(in);
        continue;
      }
      const int name = const_index(py::code_cellname(co, in.arg));
      if (py::kCallsOverNull) out.push_back({py::Opcode::PUSH_NULL, 0, -1, in.line});
      out.push_back({py::Opcode::LOAD_CONST, const_index(is_load ? load : del), -1, py::kCallsOverNull ? 0 : in.line});
      out.push_back({py::Opcode::LOAD_CLOSURE, in.arg, -1, 0});
      out.push_back({py::Opcode::LOAD_CONST, name, -1, 0});
      if (py::kCallsOverNull) out.push_back({py::Opcode::PRECALL, 2, -1, 0});
      out.push_back({py::kCallsOverNull ? py::Opcode::CALL : py::Opcode::CALL_FUNCTION, 2, -1, 0});
      if (is_del) out.push_back({py::Opcode::POP_TOP, 0, -1, 0});
    }
    pos[code_.size()] = static_cast<int>(out.size());
    for (AsmInstr& in : out)
      if (in.target >= 0) in.target = pos[in.target];
    for (AsmHandler& h : handlers_) {  // (an instruction's replacements stay in its entry's range)
      h.start = pos[h.start];
      h.end = pos[h.end];
      h.target = pos[h.target];
    }
    code_ = std::move(out);
    return true;
  }
  // The code object: `spec` with this builder's constants, names and locals.
  PyObject* finish(CodeSpec spec) {
    if (!consts_ || !names_ || !varnames_) {
      if (!PyErr_Occurred()) PyErr_NoMemory();
      return nullptr;
    }
    py::Ref consts(PyList_AsTuple(consts_.get())), names(PyList_AsTuple(names_.get())),
        varnames(PyList_AsTuple(varnames_.get()));
    if (!consts || !names || !varnames) return nullptr;
    spec.consts = consts.get();
    spec.names = names.get();
    spec.varnames = varnames.get();
    if (!py::kDerefIndexesLocals) return assemble(code_, spec, handlers_);
    std::vector<AsmInstr> code = code_;
    if (!cell_slots(code, spec)) return nullptr;
    return assemble(code, spec, handlers_);
  }

 protected:
  size_t emit(py::Opcode o, int arg = 0, int target = -1) {
    code_.push_back({o, arg, target, line_});
    return code_.size() - 1;
  }
  size_t op311(py::Opcode o, int arg, int target) {
    using py::Opcode;
    switch (o) {
      case Opcode::DUP_TOP: return emit(Opcode::COPY, 1);
      case Opcode::DUP_TOP_TWO: emit(Opcode::COPY, 2); return emit(Opcode::COPY, 2);
      case Opcode::ROT_TWO: return emit(Opcode::SWAP, 2);
      case Opcode::ROT_THREE: emit(Opcode::SWAP, 3); return emit(Opcode::SWAP, 2);
      case Opcode::ROT_FOUR: emit(Opcode::SWAP, 4); emit(Opcode::SWAP, 3); return emit(Opcode::SWAP, 2);
      case Opcode::JUMP_ABSOLUTE: return emit(Opcode::JUMP_FORWARD, 0, target);
      case Opcode::POP_JUMP_IF_FALSE: return emit(Opcode::POP_JUMP_FORWARD_IF_FALSE, 0, target);
      case Opcode::POP_JUMP_IF_TRUE: return emit(Opcode::POP_JUMP_FORWARD_IF_TRUE, 0, target);
      case Opcode::LOAD_GLOBAL: return emit(Opcode::LOAD_GLOBAL, arg << 1);
      case Opcode::CALL_FUNCTION:
      case Opcode::CALL_METHOD: emit(Opcode::PRECALL, arg); return emit(Opcode::CALL, arg);
      case Opcode::CALL_FUNCTION_KW:
        PJ_CHECK(false) << "CALL_FUNCTION_KW is emitted by call_kw()";
        return 0;
      default: {
        const int nb = py::binary_op_arg(o);
        return nb >= 0 ? emit(Opcode::BINARY_OP, nb) : emit(o, arg, target);
      }
    }
  }
  // 3.11: the cell instructions' cell indexes (co's numbering) -> slots of the code `spec` describes
  // (varnames, then the cells that are not also a local, then the free variables). False with a
  // Python error set when a name is missing.
  bool cell_slots(std::vector<AsmInstr>& code, const CodeSpec& spec) {
    if (!py::kDerefIndexesLocals) return true;
    const Py_ssize_t nv = PyTuple_GET_SIZE(spec.varnames), nc = PyTuple_GET_SIZE(spec.cellvars);
    std::vector<int> slot;
    int next = static_cast<int>(nv);
    for (Py_ssize_t c = 0; c < nc; ++c) {
      int s = -1;
      for (Py_ssize_t v = 0; v < nv && s < 0; ++v)
        if (PyUnicode_Compare(PyTuple_GET_ITEM(spec.varnames, v), PyTuple_GET_ITEM(spec.cellvars, c)) == 0) s = static_cast<int>(v);
      if (PyErr_Occurred()) return false;
      slot.push_back(s >= 0 ? s : next++);
    }
    for (Py_ssize_t f = 0; f < PyTuple_GET_SIZE(spec.freevars); ++f) slot.push_back(next++);
    for (AsmInstr& in : code) {
      if (!py::has_flag(in.op, py::kFree)) continue;
      if (in.arg < 0 || in.arg >= static_cast<int>(slot.size())) {
        PyErr_Format(PyExc_ValueError, "%s of cell %d, of %d", py::op_name(in.op), in.arg, static_cast<int>(slot.size()));
        return false;
      }
      in.arg = slot[in.arg];
    }
    return true;
  }
  int line_;
  py::Ref consts_, names_, varnames_;
  std::vector<AsmInstr> code_;
  std::vector<AsmHandler> handlers_;
};

}  // namespace pj::codegen

#endif  // PJ_PY_CAPTURE_BUILT
