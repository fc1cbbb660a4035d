// pijit's view of CPython opcodes, generated from the one table in opcodes.def.
//
// Opcode is pijit's own id: it lists the opcodes of every supported version, so its values do not
// depend on which Python the extension was built for (the simulator switches on it, dumps and tests
// name it). Numbers belong to the running interpreter only: from_py_opcode / to_py_opcode map
// between the two and answer "none" for an opcode the running version does not have.
// Python-independent: this header does not include Python.h.
#pragma once

#include <cstdint>

namespace pj::py {

// What an opcode's argument means and how it moves control. Kept in sync with opcode.py's
// has* lists by tests/python/test_opcodes.py.
enum OpFlag : uint32_t {
  kArg = 1u << 0,        // takes an argument (number >= HAVE_ARGUMENT)
  kJumpRel = 1u << 1,    // argument is a jump relative to the next instruction (opcode.hasjrel)
  kJumpAbs = 1u << 2,    // argument is an absolute jump target (opcode.hasjabs)
  kCondJump = 1u << 3,   // may jump or fall through, decided at run time
  kSetup = 1u << 4,      // pushes a block; the target is its handler, reached only by unwinding
  kEndsBlock = 1u << 5,  // never falls through (returns, raises, or jumps unconditionally)
  kName = 1u << 6,       // argument indexes co_names
  kConst = 1u << 7,      // argument indexes co_consts
  kLocal = 1u << 8,      // argument indexes co_varnames (fast locals)
  kFree = 1u << 9,       // argument indexes cell + free variables
  kCompare = 1u << 10,   // argument is a comparison kind
  kJumpBack = 1u << 11,  // (with kJumpRel) the jump goes back from the next instruction (3.11)
};
// Bits 16-23 of the flags: how many inline cache units follow the instruction (3.11).
constexpr uint32_t kCachesShift = 16;
constexpr uint32_t kCaches(int units) { return static_cast<uint32_t>(units) << kCachesShift; }

// The versions column of opcodes.def: one bit per CPython minor version with a table column.
enum OpVersion : uint32_t {
  V37 = 1u << 0,
  V38 = 1u << 1,
  V39 = 1u << 2,
  V310 = 1u << 3,
  V311 = 1u << 4,
  V312 = 1u << 5,
};

enum class Opcode : uint16_t {
#define PJ_OP(name, versions, number, flags, effect, jump_effect) name,
#define PJ_OP_AGAIN(name, versions, number, flags, effect, jump_effect)
#include "py/opcodes.def"
#undef PJ_OP
#undef PJ_OP_AGAIN
  kNumOpcodes,
  kInvalid = kNumOpcodes,  // "no such opcode in the running interpreter"
};
constexpr int kNumOpcodes = static_cast<int>(Opcode::kNumOpcodes);

struct OpInfo {
  const char* name;
  int py_opcode;  // number in the running interpreter, -1 if it lacks the opcode
  uint32_t flags;
};

// Never null for a valid id (including one the running interpreter lacks).
const OpInfo& op_info(Opcode op);
inline const char* op_name(Opcode op) { return op_info(op).name; }
inline bool has_flag(Opcode op, OpFlag f) { return (op_info(op).flags & f) != 0; }
inline bool is_jump(Opcode op) { return has_flag(op, kJumpRel) || has_flag(op, kJumpAbs); }
// Whether op pushes a block (SETUP_*) or leaves, unwinds or runs a handler's protocol: POP_EXCEPT,
// 3.7-3.8's finally protocol, the with-block cleanups, RERAISE. (POP_BLOCK apart: a loop's own.)
inline bool handles_blocks(Opcode op) {
  switch (op) {
    case Opcode::POP_EXCEPT:
    case Opcode::END_FINALLY:
    case Opcode::BEGIN_FINALLY:
    case Opcode::CALL_FINALLY:
    case Opcode::POP_FINALLY:
    case Opcode::WITH_CLEANUP_START:
    case Opcode::WITH_CLEANUP_FINISH:
    case Opcode::WITH_EXCEPT_START:
    case Opcode::RERAISE:
      return true;
    default:
      return has_flag(op, kSetup);
  }
}
// Cache units (of kCodeUnit bytes) after the instruction: 0 before 3.11.
inline int cache_units(Opcode op) { return static_cast<int>((op_info(op).flags >> kCachesShift) & 0xFF); }

// The running interpreter's opcode number -> pijit id (Opcode::kInvalid if unknown) and back
// (-1 if the running interpreter lacks it).
Opcode from_py_opcode(int number);
int to_py_opcode(Opcode op);

// Every opcode of the running interpreter, in table order.
int num_py_opcodes();
Opcode py_opcode_at(int i);

// Stack effect as CPython's compiler counts it: jump = 1 if the jump (or handler entry) is
// taken, 0 if execution falls through, -1 for the larger of both (dis.stack_effect(jump=None)).
int stack_effect(Opcode op, int oparg, int jump);

// 3.11's BINARY_OP names its operator by its argument (NB_ADD 0 ... NB_XOR 12, then the in-place
// forms 13 ... 25, the order of CPython's binary_ops table): the opcode 3.7-3.10 have for it
// (BINARY_ADD, ..., INPLACE_XOR); kInvalid outside 0..25.
Opcode binary_op_opcode(int oparg);
// ... and the inverse: BINARY_OP's argument for one of those opcodes; -1 for any other.
int binary_op_arg(Opcode op);
// BINARY_OP with its operator, as dis shows it ("BINARY_OP **"): how notes name the instruction.
const char* binary_op_text(int oparg);

// The index into co_names of a kName instruction's argument (3.11's LOAD_GLOBAL keeps a flag in
// bit 0: the name is arg >> 1).
int name_index(Opcode op, int arg);

}  // namespace pj::py
