// A code object under construction from an existing one: instructions (jumps name their target by
// index, assembler.h) plus the constants, names and locals they need beyond the original's.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <vector>

#include "codegen/assembler.h"
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
  // Appends an instruction under the current line; returns its index.
  size_t op(py::Opcode o, int arg = 0, int target = -1) {
    code_.push_back({o, arg, target, line_});
    return code_.size() - 1;
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
    py::Ref s(PyUnicode_InternFromString(name));
    PyList_Append(varnames_.get(), s.get());
    return static_cast<int>(PyList_GET_SIZE(varnames_.get()) - 1);
  }
  size_t size() const { return code_.size(); }
  void set_target(size_t at, int target) { code_[at].target = target; }
  // The code of a function pijit calls in place of part of `co` (a resume function, a loop body):
  // `argcount` positional arguments (every fast local of co first, so indices are co's), and co's
  // cells as free variables (same indices: cellvars come first in both orders).
  PyObject* finish_closure(PyCodeObject* co, int argcount) {
    if (!check_cell_accesses(co)) return nullptr;
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
      out.push_back({py::Opcode::LOAD_CONST, const_index(is_load ? load : del), -1, in.line});
      out.push_back({py::Opcode::LOAD_CLOSURE, in.arg, -1, 0});
      out.push_back({py::Opcode::LOAD_CONST, name, -1, 0});
      out.push_back({py::Opcode::CALL_FUNCTION, 2, -1, 0});
      if (is_del) out.push_back({py::Opcode::POP_TOP, 0, -1, 0});
    }
    pos[code_.size()] = static_cast<int>(out.size());
    for (AsmInstr& in : out)
      if (in.target >= 0) in.target = pos[in.target];
    code_ = std::move(out);
    return true;
  }
  // The code object: `spec` with this builder's constants, names and locals.
  PyObject* finish(CodeSpec spec) {
    py::Ref consts(PyList_AsTuple(consts_.get())), names(PyList_AsTuple(names_.get())),
        varnames(PyList_AsTuple(varnames_.get()));
    if (!consts || !names || !varnames) return nullptr;
    spec.consts = consts.get();
    spec.names = names.get();
    spec.varnames = varnames.get();
    return assemble(code_, spec);
  }

 protected:
  int line_;
  py::Ref consts_, names_, varnames_;
  std::vector<AsmInstr> code_;
};

}  // namespace pj::codegen

#endif  // PJ_PY_CAPTURE_BUILT
