#include "codegen/assembler.h"  // first: pyport.h (Python.h)

#include <algorithm>
#include <climits>
#include <cstdint>
#include <unordered_map>

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
      // A relative jump goes one way: forward from the next instruction, or (3.11's kJumpBack)
      // back to this one or an earlier one.
      if (has_flag(in.op, py::kJumpBack) && in.target > i)
        return at(i, in.op) + ": backward jump to a later instruction " + std::to_string(in.target);
      if (has_flag(in.op, py::kJumpRel) && !has_flag(in.op, py::kJumpBack) && in.target <= i)
        return at(i, in.op) + ": relative jump to an earlier instruction " + std::to_string(in.target);
      continue;
    }
    if (in.target != -1) return at(i, in.op) + ": only jumps have a target";
    // 3.11's specialized PRECALLs skip the CALL by its fixed distance: nothing may come between.
    if (in.op == Opcode::PRECALL && (i + 1 == n || code[i + 1].op != Opcode::CALL))
      return at(i, in.op) + ": must be followed by its CALL (a specialized PRECALL skips over the next instruction)";
    if (in.arg < 0 || in.arg > kMaxArg) return at(i, in.op) + ": argument " + std::to_string(in.arg) + " not in 0..2^28-1";
    if (!has_flag(in.op, py::kArg) && in.arg != 0) return at(i, in.op) + ": takes no argument";
  }
  return "";
}

// Arguments that index the code object's tuples must be in range: the interpreter does not check.
std::string check_operands(const std::vector<AsmInstr>& code, const CodeSpec& spec) {
  const Py_ssize_t consts = PyTuple_GET_SIZE(spec.consts), names = PyTuple_GET_SIZE(spec.names);
  const Py_ssize_t locals = PyTuple_GET_SIZE(spec.varnames);
  Py_ssize_t cells = PyTuple_GET_SIZE(spec.cellvars) + PyTuple_GET_SIZE(spec.freevars);
  if (py::kDerefIndexesLocals) {  // 3.11: one array of locals, cells and free variables
    cells += locals;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(spec.cellvars); ++k) {  // (an argument's cell shares its slot)
      const int shared = PySequence_Contains(spec.varnames, PyTuple_GET_ITEM(spec.cellvars, k));
      if (shared < 0) {
        PyErr_Clear();
        return "cellvars: cannot compare a name with varnames";
      }
      cells -= shared;
    }
  }
  for (size_t i = 0; i < code.size(); ++i) {
    const AsmInstr& in = code[i];
    Py_ssize_t limit = -1;
    const char* what = nullptr;
    int index = in.arg;
    if (has_flag(in.op, py::kConst)) limit = consts, what = "constants";
    if (has_flag(in.op, py::kName)) limit = names, what = "names";
    if (in.op == Opcode::LOAD_GLOBAL && py::kGlobalPushesNull) index >>= 1;  // (bit 0: push a NULL first)
    if (has_flag(in.op, py::kLocal)) limit = locals, what = "local variables";
    if (has_flag(in.op, py::kFree)) limit = cells, what = py::kDerefIndexesLocals ? "local, cell and free variables"
                                                                                  : "cell and free variables";
    if (what && index >= limit)
      return at(i, in.op) + ": argument " + std::to_string(index) + " out of range (" + std::to_string(limit) +
             " " + what + ")";
  }
  return "";
}

// 3.11's relative jumps come in pairs, one per direction.
Opcode jump_twin(Opcode op) {
  switch (op) {
    case Opcode::JUMP_FORWARD: return Opcode::JUMP_BACKWARD;
    case Opcode::JUMP_BACKWARD: return Opcode::JUMP_FORWARD;
    case Opcode::POP_JUMP_FORWARD_IF_FALSE: return Opcode::POP_JUMP_BACKWARD_IF_FALSE;
    case Opcode::POP_JUMP_BACKWARD_IF_FALSE: return Opcode::POP_JUMP_FORWARD_IF_FALSE;
    case Opcode::POP_JUMP_FORWARD_IF_TRUE: return Opcode::POP_JUMP_BACKWARD_IF_TRUE;
    case Opcode::POP_JUMP_BACKWARD_IF_TRUE: return Opcode::POP_JUMP_FORWARD_IF_TRUE;
    case Opcode::POP_JUMP_FORWARD_IF_NONE: return Opcode::POP_JUMP_BACKWARD_IF_NONE;
    case Opcode::POP_JUMP_BACKWARD_IF_NONE: return Opcode::POP_JUMP_FORWARD_IF_NONE;
    case Opcode::POP_JUMP_FORWARD_IF_NOT_NONE: return Opcode::POP_JUMP_BACKWARD_IF_NOT_NONE;
    case Opcode::POP_JUMP_BACKWARD_IF_NOT_NONE: return Opcode::POP_JUMP_FORWARD_IF_NOT_NONE;
    default: return op;
  }
}

// A relative jump whose target lies the other way, turned into its twin where this Python has one.
std::vector<AsmInstr> orient_jumps(std::vector<AsmInstr> code) {
  for (size_t i = 0; i < code.size(); ++i) {
    AsmInstr& in = code[i];
    if (in.op >= Opcode::kNumOpcodes || !has_flag(in.op, py::kJumpRel) || in.target < 0) continue;
    const bool back = has_flag(in.op, py::kJumpBack);
    const bool wants_back = in.target <= static_cast<int>(i);
    const Opcode twin = jump_twin(in.op);
    if (back != wants_back && twin != in.op && py::to_py_opcode(twin) >= 0) in.op = twin;
  }
  return code;
}

std::string entry_text(const std::vector<AsmHandler>& handlers, size_t k) {
  const AsmHandler& h = handlers[k];
  return "exception table entry " + std::to_string(k) + " [" + std::to_string(h.start) + ", " + std::to_string(h.end) +
         ") -> " + std::to_string(h.target) + " depth " + std::to_string(h.depth);
}

// In range, in order and apart: CPython's lookup stops at the first entry starting past the
// raising instruction (and bisects a long table).
std::string check_handlers(const std::vector<AsmHandler>& handlers, size_t n) {
  for (size_t k = 0; k < handlers.size(); ++k) {
    const AsmHandler& h = handlers[k];
    if (!py::kExceptionTables)
      return "exception table entries need Python 3.11 (before it, handlers are SETUP_* blocks)";
    if (h.start < 0 || h.end <= h.start || static_cast<size_t>(h.end) > n || h.target < 0 ||
        static_cast<size_t>(h.target) >= n || h.depth < 0)
      return entry_text(handlers, k) + " does not fit " + std::to_string(n) + " instructions";
    if (k && h.start < handlers[k - 1].end)
      return entry_text(handlers, k) + " starts before the previous entry ends (entries go in code order, apart)";
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
  // (nullptr where unreadable: assemble refuses)
  if (py::code_local_names(co, &s.varnames, &s.freevars, &s.cellvars)) {
    struct Refs {  // owns the three references (made in place: never copied)
      PyObject *a, *b, *c;
      Refs(PyObject* x, PyObject* y, PyObject* z) : a(x), b(y), c(z) {}
      Refs(const Refs&) = delete;
      ~Refs() {
        Py_DECREF(a);
        Py_DECREF(b);
        Py_DECREF(c);
      }
    };
    s.keep = std::make_shared<Refs>(s.varnames, s.freevars, s.cellvars);
  } else {
    PyErr_Clear();
  }
  s.filename = co->co_filename;
  s.name = co->co_name;
  s.qualname = py::code_qualname(co);
  s.argcount = co->co_argcount;
  s.posonlyargcount = py::code_posonlyargcount(co);
  s.kwonlyargcount = co->co_kwonlyargcount;
  s.flags = co->co_flags;
  s.firstlineno = co->co_firstlineno;
  return s;
}

CodeSpec in_place_spec(PyCodeObject* co) {
  CodeSpec s = spec_of(co);
  if (py::kRunInPlacePositional) {
    s.argcount += s.kwonlyargcount + ((s.flags & CO_VARARGS) != 0) + ((s.flags & CO_VARKEYWORDS) != 0);
    s.kwonlyargcount = s.posonlyargcount = 0;
    s.flags &= ~(CO_VARARGS | CO_VARKEYWORDS);
  }
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
    a.line = ins[i].no_line ? kNoLine : ins[i].line == 0 ? kLineZero : ins[i].line;
    a.min_prefixes = (ins[i].offset - ins[i].start) / py::kCodeUnit;
    a.span = ins[i].span;
    if (ins[i].jump_target >= 0) {
      size_t unit = ins[i].jump_target / py::kCodeUnit;
      PJ_CHECK(unit < owner.size() && owner[unit] >= 0) << "decoder let through jump target " << ins[i].jump_target;
      a.target = owner[unit];
    }
  }
  return out;
}

std::vector<AsmHandler> from_decoded(const std::vector<py::Instruction>& ins,
                                     const std::vector<py::ExceptionEntry>& handlers) {
  std::vector<AsmHandler> out;
  if (handlers.empty()) return out;
  // Byte offset of an instruction's first unit -> its index; the code's end -> the count.
  std::unordered_map<int, int> index;
  for (size_t i = 0; i < ins.size(); ++i) index[ins[i].start] = static_cast<int>(i);
  const int end = ins.back().offset + (1 + py::cache_units(ins.back().op)) * py::kCodeUnit;
  index[end] = static_cast<int>(ins.size());
  auto at = [&index](int offset) {
    auto it = index.find(offset);
    PJ_CHECK(it != index.end()) << "decoder let through an exception table offset " << offset;
    return it->second;
  };
  for (const py::ExceptionEntry& e : handlers) out.push_back({at(e.start), at(e.end), at(e.target), e.depth, e.lasti});
  return out;
}

// A depth per instruction, set when the flow first reaches it; the walk goes straight on until
// a block ends or meets an instruction already reached, and jump targets wait on a stack. Like
// compile.c, a SETUP_*'s handler gets its depth when the SETUP is seen, before its body runs.
int stack_depth(const std::vector<AsmInstr>& code, std::string* error, const std::vector<AsmHandler>& handlers) {
  std::vector<int> depths;
  return stack_depths(code, &depths, error, handlers);
}

int stack_depths(const std::vector<AsmInstr>& code, std::vector<int>* depths, std::string* error,
                 const std::vector<AsmHandler>& handlers) {
  *error = check_instructions(code);
  if (error->empty()) *error = check_handlers(handlers, code.size());
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
  // 3.11: a handler is entered with the stack unwound to its depth, the raising instruction's
  // offset (lasti) and the exception on it, as compile.c counts its SETUP_* pseudo-instruction.
  for (const AsmHandler& h : handlers) {
    const long long d = h.depth + (h.lasti ? 2LL : 1LL);
    max_depth = std::max(max_depth, d);
    if (!reach(h.target, d, -1)) return -1;
  }
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
        // 3.11: a generator goes on after RETURN_GENERATOR with the value of its first send(),
        // which the POP_TOP after it drops
        if (in.op == Opcode::RETURN_GENERATOR) ++next;
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
  // A handler unwinds the stack to its depth, which must not lie above what the stack holds around
  // any instruction of its range (before it, and after it on each way out), or the handler would
  // find values never pushed. (The compiler's handlers sit at the depth where their block began,
  // which the block's code never goes below.)
  for (size_t k = 0; k < handlers.size(); ++k) {
    const AsmHandler& h = handlers[k];
    for (int i = h.start; i < h.end; ++i) {
      if (depth[i] == kUnset) continue;
      const AsmInstr& in = code[i];
      const int arg = py::is_jump(in.op) ? 0 : in.arg;
      int low = std::min({0, py::stack_effect(in.op, arg, 0), py::is_jump(in.op) ? py::stack_effect(in.op, arg, 1) : 0});
      if (h.depth > depth[i] + low) {
        *error = entry_text(handlers, k) + " unwinds deeper than the stack at " + at(i, in.op) + " (depth " +
                 std::to_string(depth[i]) + ")";
        return -1;
      }
    }
  }
  for (int& d : depth)
    if (d == kUnset) d = -1;
  *depths = std::move(depth);
  return static_cast<int>(max_depth);
}

PyObject* assemble(const std::vector<AsmInstr>& given, const CodeSpec& spec, const std::vector<AsmHandler>& handlers) {
  if (!py::kAssembleSupported) {  // its code objects are not built yet (pyport.h, section (e))
    PyErr_SetString(PyExc_NotImplementedError, py::kUnsupportedPythonMessage);
    return nullptr;
  }
  const std::vector<AsmInstr> code = orient_jumps(given);
  if (!is_tuple(spec.consts) || !is_tuple(spec.names) || !is_tuple(spec.varnames) || !is_tuple(spec.freevars) ||
      !is_tuple(spec.cellvars) || !is_str(spec.filename) || !is_str(spec.name)) {
    PyErr_SetString(PyExc_TypeError, "assemble: consts, names, varnames, freevars, cellvars must be tuples and "
                                     "filename, name str");
    return nullptr;
  }
  std::string error;
  int stacksize = stack_depth(code, &error, handlers);
  if (stacksize < 0) return value_error(error);
  error = check_operands(code, spec);
  if (!error.empty()) return value_error(error);

  // Layout: code units per instruction (prefixes + 1) only grow, so the loop ends; each round
  // recomputes the jump arguments from the offsets the last round's sizes give.
  const size_t n = code.size();
  // (units: prefixes, the opcode, then 3.11's inline caches, which relative jumps count past)
  std::vector<uint32_t> args(n);
  std::vector<int> prefixes(n), units(n);
  for (size_t i = 0; i < n; ++i) {
    args[i] = py::is_jump(code[i].op) ? 0 : static_cast<uint32_t>(code[i].arg);
    prefixes[i] = std::max(prefixes_for(args[i]), code[i].min_prefixes);
    units[i] = 1 + prefixes[i] + py::cache_units(code[i].op);
  }
  std::vector<int> start(n + 1);
  for (bool grew = true; grew;) {
    start[0] = 0;
    for (size_t i = 0; i < n; ++i) start[i + 1] = start[i] + units[i] * py::kCodeUnit;
    grew = false;
    for (size_t i = 0; i < n; ++i) {
      if (!py::is_jump(code[i].op)) continue;
      int to = start[code[i].target];
      if (has_flag(code[i].op, py::kJumpBack)) to = start[i + 1] - to;  // >= 0: check_instructions
      else if (has_flag(code[i].op, py::kJumpRel)) to -= start[i + 1];
      args[i] = static_cast<uint32_t>(to / py::kJumpUnit);
      if (prefixes_for(args[i]) > prefixes[i]) {
        units[i] += prefixes_for(args[i]) - prefixes[i];
        prefixes[i] = prefixes_for(args[i]);
        grew = true;
      }
    }
  }

  std::string bytes(static_cast<size_t>(start[n]), '\0');  // (caches stay zero)
  std::vector<int> lines(n);
  std::vector<std::array<int, 3>> spans(n);
  const int ext = py::to_py_opcode(Opcode::EXTENDED_ARG);
  for (size_t i = 0; i < n; ++i) {
    char* p = &bytes[start[i]];
    for (int k = prefixes[i]; k >= 0; --k, p += py::kCodeUnit) {
      p[0] = static_cast<char>(k ? ext : py::to_py_opcode(code[i].op));
      p[1] = static_cast<char>((args[i] >> (8 * k)) & 0xFF);
    }
    lines[i] = code[i].line == kLineZero ? 0 : code[i].line ? code[i].line : i ? lines[i - 1] : spec.firstlineno;
    spans[i] = code[i].span;
  }
  std::vector<py::ExceptionEntry> entries;
  for (const AsmHandler& h : handlers) entries.push_back({start[h.start], start[h.end], start[h.target], h.depth, h.lasti});
  const std::string table = py::encode_exception_table(entries);
  start.pop_back();

  PyObject* bytecode = PyBytes_FromStringAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
  if (!bytecode) return nullptr;
  PyObject* exception_table = PyBytes_FromStringAndSize(table.data(), static_cast<Py_ssize_t>(table.size()));
  PyObject* line_table = exception_table ? py::encode_line_table(start, lines, spans, spec.firstlineno,
                                                                 static_cast<int>(bytes.size()))
                                         : nullptr;
  PyObject* co = line_table ? py::new_code(spec.argcount, spec.posonlyargcount, spec.kwonlyargcount,
                                           static_cast<int>(PyTuple_GET_SIZE(spec.varnames)), stacksize, spec.flags,
                                           bytecode, spec.consts, spec.names, spec.varnames, spec.freevars,
                                           spec.cellvars, spec.filename, spec.name, spec.qualname, spec.firstlineno,
                                           line_table, exception_table)
                            : nullptr;
  Py_DECREF(bytecode);
  Py_XDECREF(exception_table);
  Py_XDECREF(line_table);
  return co;
}

}  // namespace pj::codegen
