// Decoding a code object's co_code into instructions the simulator can walk.
//
// Each Instruction is one real opcode with its EXTENDED_ARG prefixes folded into `arg`, so the
// simulator never sees EXTENDED_ARG. Offsets stay CPython's byte offsets (what dis, tracebacks and
// jump arguments use). Bad bytecode (unknown opcode, truncated prefix, jump outside the code) is
// an expected failure: decode returns the reason, it never aborts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "py/opcodes.h"

struct _object;  // PyObject, without pulling Python.h into every user of the decoder

namespace pj::py {

struct Instruction {
  int offset = 0;  // byte offset of the opcode itself, after its prefixes (dis's offset)
  int start = 0;   // byte offset of its first EXTENDED_ARG prefix; == offset without one
  Opcode op = Opcode::kInvalid;
  int arg = 0;           // full argument; 0 for opcodes that take none
  int line = 0;          // source line
  bool no_line = false;  // 3.10: an artificial instruction the line table gives no line (`line`
                         // is then the line before it)
  int jump_target = -1;  // byte offset a jump (or a SETUP_* handler) goes to; -1 if none
  bool is_jump_target = false;  // some jump lands on [start, offset]
  std::array<int, 3> span{-1, -1, -1};  // 3.11 (co_positions): end line, column, end column; -1: none
};

// One entry of 3.11's exception table (co_exceptiontable): an exception raised by an instruction
// in [start, end) unwinds the value stack to `depth` items, pushes the offset of the raising
// instruction when `lasti`, then the exception, and jumps to `target`. Byte offsets. Before 3.11
// handlers are blocks (SETUP_*) and the table is empty.
struct ExceptionEntry {
  int start = 0;
  int end = 0;
  int target = 0;
  int depth = 0;
  bool lasti = false;
  bool operator==(const ExceptionEntry& o) const {
    return start == o.start && end == o.end && target == o.target && depth == o.depth && lasti == o.lasti;
  }
};

struct DecodeResult {
  std::vector<Instruction> instructions;
  std::vector<ExceptionEntry> handlers;  // 3.11: the exception table, in table order
  std::string error;  // empty on success, else why the bytecode is malformed
  bool ok() const { return error.empty(); }
};

// Decodes raw bytecode of the running interpreter. unit_lines[i] is the line of the code unit at
// (~line where the unit has no line of its own: pyport.h's code_unit_lines)
// byte offset 2*i (nullptr: every line is 0).
DecodeResult decode(const uint8_t* code, size_t size, const int* unit_lines);

// Reads an exception table (3.11's format: per entry, varints of 6-bit groups, bit 6 = more
// groups follow, bit 7 marks an entry's first byte: start, length, target in code units, then
// depth << 1 | lasti) into r.handlers, checking every range and target against r.instructions.
// Malformed: r.error set.
void decode_exception_table(const uint8_t* table, size_t size, size_t code_size, DecodeResult& r);

// The exception table of `entries` (byte offsets, each range starting and ending on an
// instruction's first unit) in the format decode_exception_table reads, as compile.c writes it:
// 6-bit groups, most significant first.
std::string encode_exception_table(const std::vector<ExceptionEntry>& entries);

// Decodes a code object (its bytecode, line table and, on 3.11, source spans and exception table). Fails with a reason, never raises, on a
// Python capture does not support (pyport.h: capture_supported()).
DecodeResult decode_code(_object* code);

}  // namespace pj::py

namespace pj::py {

// 3.7-3.10: a resume function is given no NULL (an argument cannot be one), so a method pair
// (LOAD_METHOD's NULL under a callable, at value-stack position `slot`) reaches it as the callable
// alone, and the CALL_METHOD that consumes the pair must become a CALL_FUNCTION. This finds those
// instructions: every CALL_METHOD the code from `offset` on (stack `depth` deep there) reaches
// that takes the pair, along every path. Empty with *why set where a path does anything else
// with the pair (an instruction reaching into it, a return, an instruction this walk does not
// know): then the pair cannot be handed over.
std::vector<int> method_pair_consumers(const DecodeResult& d, int offset, int depth, int slot, std::string* why);

}  // namespace pj::py
