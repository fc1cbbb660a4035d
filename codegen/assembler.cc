#include "codegen/assembler.h"  // first: pyport.h (Python.h)

#include <algorithm>
#include <climits>
#include <cstdint>

#include "common/check.h"

namespace pj::codegen {
namespace {

using py::Opcode;
using py::has_flag;
using py::op_name;

constexpr int kUnset = INT_MIN;   // depth of an instruction the flow has not reached
constexpr int kMaxPrefixes = 3;   // the argument is at most 32 bits
// Larger arguments are refused: no real code has them (2^28 constants, locals or tuple items), and
// below it the stack effects (up to 2 * oparg) stay in int.
constexpr int kMaxArg = (1 << 28) - 1;
// Deeper stacks are refused rather than overflowing the depth arithmetic.
constexpr long long kMaxDepth = INT_MAX;

std::string at(size_t i, Opcode op) { return "instruction " + std::to_string(i) + " (" + op_name(op) + ")"; }

// EXTENDED_ARG prefixes an argument needs (CPython's instrsize - 1).
int prefixes_for(uint32_t arg) { return arg > 0xFFFFFF ? 3 : arg > 0xFFFF ? 2 : arg > 0xFF ? 1 : 0; }

// What the layout and the flow analysis rely on, independent of any code object. Empty if fine.
std::string check_instructions(const std::vector<AsmInstr>& code) {
  if (code.empty()) return "no instructions";
  const int n = static_cast<int>(code.size());
  for (int i = 0; i < n; ++i) {
    const AsmInstr& in = code[i];
    if (in.op >= Opcode::kNumOpcodes) return "instruction " + std::to_string(i) + ": invalid opcode id";
    if (py::to_py_opcode(in.op) < 0) return at(i, in.op) + ": not an opcode of this Python";
    // Prefixes belong to the layout: one given here would be emitted twice and break the jumps.
    if (in.op == Opcode::EXTENDED_ARG) return at(i, in.op) + ": EXTENDED_ARG is emitted by the assembler";
    if (in.min_prefixes < 0 || in.min_prefixes > kMaxPrefixes) return at(i, in.op) + ": min_prefixes not in 0..3";
    if (py::is_jump(in.op)) {
      if (in.target < 0 || in.target >= n)
        return at(i, in.op) + ": jump target " + std::to_string(in.target) + " out of range (" + std::to_string(n) +
               " instructions)";
      // 3.7-3.9 have no backward relative jump (3.11's JUMP_BACKWARD would be its own opcode).
      if (has_flag(in.op, py::kJumpRel) && in.target <= i)
        return at(i, in.op) + ": relative jump to an earlier instruction " + std::to_string(in.target);
      continue;
    }
    if (in.target != -1) return at(i, in.op) + ": only jumps have a target";
    if (in.arg < 0 || in.arg > kMaxArg) return at(i, in.op) + ": argument " + std::to_string(in.arg) + " not in 0..2^28-1";
    if (!has_flag(in.op, py::kArg) && in.arg != 0) return at(i, in.op) + ": takes no argument";
  }
  return "";
}

// Arguments that index the code object's tuples must be in range: the interpreter does not check.
std::string check_operands(const std::vector<AsmInstr>& code, const CodeSpec& spec) {
  const Py_ssize_t consts = PyTuple_GET_SIZE(spec.consts), names = PyTuple_GET_SIZE(spec.names);
  const Py_ssize_t locals = PyTuple_GET_SIZE(spec.varnames);
  const Py_ssize_t cells = PyTuple_GET_SIZE(spec.cellvars) + PyTuple_GET_SIZE(spec.freevars);
  for (size_t i = 0; i < code.size(); ++i) {
    const AsmInstr& in = code[i];
    Py_ssize_t limit = -1;
    const char* what = nullptr;
    if (has_flag(in.op, py::kConst)) limit = consts, what = "constants";
    if (has_flag(in.op, py::kName)) limit = names, what = "names";
    if (has_flag(in.op, py::kLocal)) limit = locals, what = "local variables";
    if (has_flag(in.op, py::kFree)) limit = cells, what = "cell and free variables";
    if (what && in.arg >= limit)
      return at(i, in.op) + ": argument " + std::to_string(in.arg) + " out of range (" + std::to_string(limit) +
             " " + what + ")";
  }
  return "";
}

bool is_tuple(PyObject* o) { return o && PyTuple_Check(o); }
bool is_str(PyObject* o) { return o && PyUnicode_Check(o); }

PyObject* value_error(const std::string& msg) {
  PyErr_SetString(PyExc_ValueError, msg.c_str());
  return nullptr;
}

}  // namespace

CodeSpec spec_of(PyCodeObject* co) {
  CodeSpec s;
  s.consts = co->co_consts;
  s.names = co->co_names;
  py::code_local_names(co, &s.varnames, &s.freevars, &s.cellvars);  // nullptr where unreadable: assemble refuses
  s.filename = co->co_filename;
  s.name = co->co_name;
  s.argcount = co->co_argcount;
  s.posonlyargcount = py::code_posonlyargcount(co);
  s.kwonlyargcount = co->co_kwonlyargcount;
  s.flags = co->co_flags;
  s.firstlineno = co->co_firstlineno;
  return s;
}

std::vector<AsmInstr> from_decoded(const std::vector<py::Instruction>& ins) {
  // Byte offset -> instruction index; a jump lands on a target's first prefix (or, never in
  // CPython's output but accepted by the decoder, on a later unit of the same instruction).
  std::vector<int> owner(ins.empty() ? 0 : ins.back().offset / py::kCodeUnit + 1, -1);
  for (size_t i = 0; i < ins.size(); ++i)
    for (int u = ins[i].start; u <= ins[i].offset; u += py::kCodeUnit) owner[u / py::kCodeUnit] = static_cast<int>(i);
  std::vector<AsmInstr> out(ins.size());
  for (size_t i = 0; i < ins.size(); ++i) {
    AsmInstr& a = out[i];
    a.op = ins[i].op;
    a.arg = py::is_jump(ins[i].op) ? 0 : ins[i].arg;
    a.line = ins[i].no_line ? kNoLine : ins[i].line;
    a.min_prefixes = (ins[i].offset - ins[i].start) / py::kCodeUnit;
    if (ins[i].jump_target >= 0) {
      size_t unit = ins[i].jump_target / py::kCodeUnit;
      PJ_CHECK(unit < owner.size() && owner[unit] >= 0) << "decoder let through jump target " << ins[i].jump_target;
      a.target = owner[unit];
    }
  }
  return out;
}

// A depth per instruction, set when the flow first reaches it; the walk goes straight on until
// a block ends or meets an instruction already reached, and jump targets wait on a stack. Like
// compile.c, a SETUP_*'s handler gets its depth when the SETUP is seen, before its body runs.
int stack_depth(const std::vector<AsmInstr>& code, std::string* error) {
  std::vector<int> depths;
  return stack_depths(code, &depths, error);
}

int stack_depths(const std::vector<AsmInstr>& code, std::vector<int>* depths, std::string* error) {
  *error = check_instructions(code);
  if (!error->empty()) return -1;
  const int n = static_cast<int>(code.size());
  // 3.7's normal exit from a try/finally or with-body falls into the handler with fewer values
  // than an exception brings (END_FINALLY tells both apart at run time). compile.c accepts a
  // smaller depth there and only there; so does this. 3.8's CALL_FINALLY enters a finally body
  // its SETUP_FINALLY reaches at a larger depth: compile.c does not follow that jump; nor does this.
  std::vector<char> is_handler(n, 0);
  for (const AsmInstr& in : code)
    if (has_flag(in.op, py::kSetup)) is_handler[in.target] = 1;

  std::vector<int> depth(n, kUnset);
  std::vector<int> pending;
  long long max_depth = 0;
  auto reach = [&](int i, long long d, int from) {
    if (depth[i] == kUnset) {
      depth[i] = static_cast<int>(d);  // <= kMaxDepth: in_bounds
      pending.push_back(i);
      return true;
    }
    if (depth[i] == d || (is_handler[i] && d < depth[i])) return true;
    *error = "inconsistent stack: " + at(i, code[i].op) + " is reached with depth " + std::to_string(depth[i]) +
             " and with depth " + std::to_string(d) + " from instruction " + std::to_string(from);
    return false;
  };
  // Below 0 or past kMaxDepth: an error (returns false).
  auto in_bounds = [&](int i, long long d, const char* how) {
    if (d >= 0 && d <= kMaxDepth) return true;
    *error = std::string(d < 0 ? "stack underflow" : "stack too deep") + " at " + at(i, code[i].op) + ": depth " +
             std::to_string(d) + how;
    return false;
  };

  // (3.10: a generator starts with the value of its first send() on the stack, for GEN_START)
  reach(0, n && code[0].op == Opcode::GEN_START ? 1 : 0, -1);
  std::vector<int> finally_calls;  // 3.8's CALL_FINALLYs reached, for the pass below
  for (;;) {
    while (!pending.empty()) {
      int i = pending.back();
      pending.pop_back();
      for (long long d = depth[i];; d = depth[++i]) {
        const AsmInstr& in = code[i];
        if (py::is_jump(in.op)) {
          long long taken = d + py::stack_effect(in.op, 0, 1);  // no jump's effect depends on its argument
          if (!in_bounds(i, taken, " where the jump is taken")) return -1;
          max_depth = std::max(max_depth, taken);
          if (in.op == Opcode::CONTINUE_LOOP) {
            // 3.7: unwinds to the loop's depth at run time; compile.c requires the loop head to
            // have been reached already, at no more than this depth.
            int head = depth[in.target];
            if (head == kUnset || head > d) {
              *error = at(i, in.op) + ": continues a loop whose head is not reached at depth <= " + std::to_string(d);
              return -1;
            }
          } else if (in.op == Opcode::CALL_FINALLY) {
            // (END_FINALLY comes back to the next instruction at this depth: falls through below)
            finally_calls.push_back(i);
          } else if (!reach(in.target, taken, i)) {
            return -1;
          }
        }
        long long next = d + py::stack_effect(in.op, py::is_jump(in.op) ? 0 : in.arg, 0);
        if (!in_bounds(i, next, "")) return -1;
        max_depth = std::max(max_depth, next);
        if (has_flag(in.op, py::kEndsBlock)) break;
        if (i + 1 == n) {
          *error = at(i, in.op) + ": execution falls off the end of the code";
          return -1;
        }
        if (depth[i + 1] != kUnset) {
          if (!reach(i + 1, next, i)) return -1;
          break;
        }
        depth[i + 1] = static_cast<int>(next);
      }
    }
    // A finally body that only a CALL_FINALLY reaches: its SETUP_FINALLY is in code that never runs
    // (a resume function entered after the try's POP_BLOCK, on the way to a return). It is entered
    // as the handler would be, at the depth of the block's level + 6, which this depth + 6 bounds
    // (the block's level is at most it): enough room, and END_FINALLY's -6 comes back to it.
    bool more = false;
    for (int k : finally_calls)
      if (depth[code[k].target] == kUnset) {
        if (!in_bounds(k, depth[k] + 6LL, " entering the finally body")) return -1;
        max_depth = std::max(max_depth, depth[k] + 6LL);
        reach(code[k].target, depth[k] + 6LL, k);
        more = true;
      }
    finally_calls.clear();
    if (!more) break;
  }
  for (int& d : depth)
    if (d == kUnset) d = -1;
  *depths = std::move(depth);
  return static_cast<int>(max_depth);
}

PyObject* assemble(const std::vector<AsmInstr>& code, const CodeSpec& spec) {
  if (!py::kCaptureSupported) {  // its code objects are not built yet (pyport.h, section (e))
    PyErr_SetString(PyExc_NotImplementedError, py::kUnsupportedPythonMessage);
    return nullptr;
  }
  if (!is_tuple(spec.consts) || !is_tuple(spec.names) || !is_tuple(spec.varnames) || !is_tuple(spec.freevars) ||
      !is_tuple(spec.cellvars) || !is_str(spec.filename) || !is_str(spec.name)) {
    PyErr_SetString(PyExc_TypeError, "assemble: consts, names, varnames, freevars, cellvars must be tuples and "
                                     "filename, name str");
    return nullptr;
  }
  std::string error;
  int stacksize = stack_depth(code, &error);
  if (stacksize < 0) return value_error(error);
  error = check_operands(code, spec);
  if (!error.empty()) return value_error(error);

  // Layout: code units per instruction (prefixes + 1) only grow, so the loop ends; each round
  // recomputes the jump arguments from the offsets the last round's sizes give.
  const size_t n = code.size();
  std::vector<uint32_t> args(n);
  std::vector<int> units(n);
  for (size_t i = 0; i < n; ++i) {
    args[i] = py::is_jump(code[i].op) ? 0 : static_cast<uint32_t>(code[i].arg);
    units[i] = 1 + std::max(prefixes_for(args[i]), code[i].min_prefixes);
  }
  std::vector<int> start(n + 1);
  for (bool grew = true; grew;) {
    start[0] = 0;
    for (size_t i = 0; i < n; ++i) start[i + 1] = start[i] + units[i] * py::kCodeUnit;
    grew = false;
    for (size_t i = 0; i < n; ++i) {
      if (!py::is_jump(code[i].op)) continue;
      int to = start[code[i].target];
      if (has_flag(code[i].op, py::kJumpRel)) to -= start[i + 1];  // >= 0: check_instructions
      args[i] = static_cast<uint32_t>(to / py::kJumpUnit);
      int need = 1 + prefixes_for(args[i]);
      if (need > units[i]) units[i] = need, grew = true;
    }
  }

  std::string bytes(static_cast<size_t>(start[n]), '\0');
  std::vector<int> lines(n);
  const int ext = py::to_py_opcode(Opcode::EXTENDED_ARG);
  for (size_t i = 0; i < n; ++i) {
    char* p = &bytes[start[i]];
    for (int k = units[i] - 1; k >= 0; --k, p += py::kCodeUnit) {
      p[0] = static_cast<char>(k ? ext : py::to_py_opcode(code[i].op));
      p[1] = static_cast<char>((args[i] >> (8 * k)) & 0xFF);
    }
    lines[i] = code[i].line ? code[i].line : i ? lines[i - 1] : spec.firstlineno;
  }
  start.pop_back();

  PyObject* bytecode = PyBytes_FromStringAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
  if (!bytecode) return nullptr;
  PyObject* line_table = py::encode_line_table(start, lines, spec.firstlineno, static_cast<int>(bytes.size()));
  PyObject* co = line_table ? py::new_code(spec.argcount, spec.posonlyargcount, spec.kwonlyargcount,
                                           static_cast<int>(PyTuple_GET_SIZE(spec.varnames)), stacksize, spec.flags,
                                           bytecode, spec.consts, spec.names, spec.varnames, spec.freevars,
                                           spec.cellvars, spec.filename, spec.name, spec.firstlineno, line_table)
                            : nullptr;
  Py_DECREF(bytecode);
  Py_XDECREF(line_table);
  return co;
}

}  // namespace pj::codegen
