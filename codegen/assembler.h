// The bytecode assembler: a list of instructions whose jumps name their target by index -> a code
// object of the running interpreter.
//
// Whoever builds bytecode (capture's rewritten frames, tests) thinks in instructions, never in
// byte offsets: inserting one must not mean fixing every jump by hand. The assembler picks the
// layout: jump arguments from the targets' offsets, EXTENDED_ARG prefixes where an argument needs
// them (iterated to a fixed point, since a prefix moves every later offset), the line table, and
// co_stacksize by flow analysis. It is version-independent; what differs between Pythons (code
// object constructor, line table format, jump units) lives in py/pyport.h, section (e), and in the
// opcode table (3.11's inline caches and backward jumps).
//
// Bad input (a target out of range, an opcode this Python lacks, a stack that underflows or
// disagrees with itself at a join) is an expected failure: ValueError, never an abort.
#pragma once

#include "py/pyport.h"  // first (Python.h): PyObject, PyCodeObject

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "py/bytecode.h"
#include "py/opcodes.h"

namespace pj::codegen {

constexpr int kNoLine = -1;
constexpr int kLineZero = -2;  // line 0 itself (3.11 starts a module at it), where 0 means "as before"

struct AsmInstr {
  py::Opcode op = py::Opcode::NOP;
  int arg = 0;       // ignored for jumps (computed from target); 0 for opcodes without argument
  int target = -1;   // jumps and SETUP_*: index of the target instruction in the vector
  int line = 0;      // source line (0 = same as the previous instruction; the first: firstlineno;
                     // kNoLine: none, an artificial instruction of 3.10's compiler; kLineZero: 0)
  // At least this many EXTENDED_ARG prefixes, even where the argument needs fewer. CPython's
  // peephole pass leaves "EXTENDED_ARG 0" where a jump shrank after it removed NOPs; from_decoded
  // keeps the count so reassembled CPython code is byte-identical. 0 for new code.
  int min_prefixes = 0;
  // 3.11's source span beyond the line (co_positions): end line, column, end column; -1: unknown
  // (the location table then gives the line alone).
  std::array<int, 3> span{-1, -1, -1};
};

// 3.11: one exception-table entry, by instruction index: an exception raised in [start, end)
// unwinds the stack to `depth` items, pushes the raising instruction's offset when `lasti`, then
// the exception, and jumps to `target`. (Before 3.11 handlers are SETUP_* blocks: none of these.)
struct AsmHandler {
  int start = 0;
  int end = 0;  // exclusive; the number of instructions: to the end of the code
  int target = 0;
  int depth = 0;
  bool lasti = false;
};

struct CodeSpec {  // borrowed references; the assembler increfs what it keeps
  PyObject* consts = nullptr;  // tuples
  PyObject* names = nullptr;
  PyObject* varnames = nullptr;
  PyObject* freevars = nullptr;
  PyObject* cellvars = nullptr;
  PyObject* filename = nullptr;  // str
  PyObject* name = nullptr;      // str
  PyObject* qualname = nullptr;  // str (3.11; nullptr: name)
  int argcount = 0, posonlyargcount = 0, kwonlyargcount = 0, flags = 0, firstlineno = 1;
  std::shared_ptr<void> keep;    // references spec_of holds (3.11 builds the local-name tuples)
};

// Every field of an existing code object except its code (from co, which must outlive the spec).
CodeSpec spec_of(PyCodeObject* co);
// spec_of(co) for code py::run_in_place runs in place of co's frame: on 3.11
// (py::kRunInPlacePositional) every argument slot a positional parameter, in co_varnames order.
CodeSpec in_place_spec(PyCodeObject* co);

// Decoder output (jump_target as a byte offset) -> AsmInstr (target as an index).
std::vector<AsmInstr> from_decoded(const std::vector<py::Instruction>& ins);
// ... and its exception table (byte offsets) -> AsmHandler (instruction indexes).
std::vector<AsmHandler> from_decoded(const std::vector<py::Instruction>& ins,
                                     const std::vector<py::ExceptionEntry>& handlers);

// Max stack depth by flow analysis, as CPython's compile.c stackdepth counts it: both ways out of
// a conditional jump, a SETUP_*'s handler entered with the handler's effect. Returns -1 and sets
// *error on bad input or an inconsistent stack (underflow, two depths where paths join).
// 3.11: each handler's target is entered at its depth + lasti + 1.
int stack_depth(const std::vector<AsmInstr>& code, std::string* error, const std::vector<AsmHandler>& handlers = {});
// The same, and in *depths each instruction's depth before it runs (-1: never reached).
int stack_depths(const std::vector<AsmInstr>& code, std::vector<int>* depths, std::string* error,
                 const std::vector<AsmHandler>& handlers = {});

// A new code object (new reference), or nullptr with a Python exception set: ValueError for bad
// input (see stack_depth, plus arguments out of range of the spec's tuples), TypeError for a spec
// of the wrong types, NotImplementedError on a Python whose code objects are not built yet.
// co_stacksize = stack_depth, co_nlocals = len(varnames).
// 3.11: each instruction is followed by its inline cache units (zeros); a relative jump whose
// target lies the other way is turned into its twin (JUMP_FORWARD <-> JUMP_BACKWARD,
// POP_JUMP_FORWARD_IF_* <-> POP_JUMP_BACKWARD_IF_*); `handlers` become co_exceptiontable.
PyObject* assemble(const std::vector<AsmInstr>& code, const CodeSpec& spec, const std::vector<AsmHandler>& handlers = {});

}  // namespace pj::codegen
