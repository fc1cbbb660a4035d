// Tables built from py/opcodes.def. The only file that reads the version selector.
#include "py/pyport.h"  // first (Python.h); PJ_PY_OPCODES_37/39: the numbering that runs here

#include "py/opcodes.h"

#include <algorithm>
#include <array>

#include "common/check.h"

namespace pj::py {
static_assert(!(PJ_PY_OPCODES_37 && PJ_PY_OPCODES_39), "pyport.h selects at most one opcode numbering");
static_assert(kNumOpcodes < 0xFFFF, "Opcode ids fit in uint16_t");

namespace {

// Every id with its name and flags; the number is filled only for the running version's rows.
struct Tables {
  std::array<OpInfo, kNumOpcodes> info{};
  std::array<Opcode, 256> by_number{};
  int count = 0;                           // opcodes of the running interpreter
  std::array<Opcode, kNumOpcodes> order{};  // those opcodes in table order

  Tables() {
    by_number.fill(Opcode::kInvalid);
    // Names and flags of every version: both blocks.
#define PJ_OPS_37 1
#define PJ_OPS_39 1
#define PJ_OP(name, number, flags, effect, jump_effect) \
  info[static_cast<int>(Opcode::name)] = OpInfo{#name, -1, static_cast<uint32_t>(flags)};
#include "py/opcodes.def"
#undef PJ_OP
#undef PJ_OPS_37
#undef PJ_OPS_39
    // Numbers of the running version only.
#define PJ_OPS_37 PJ_PY_OPCODES_37
#define PJ_OPS_39 PJ_PY_OPCODES_39
#define PJ_OP(name, number, flags, effect, jump_effect) add(Opcode::name, number);
#include "py/opcodes.def"
#undef PJ_OP
#undef PJ_OPS_37
#undef PJ_OPS_39
  }

  void add(Opcode op, int number) {
    PJ_CHECK(by_number[number] == Opcode::kInvalid) << "opcode number " << number << " listed twice";
    info[static_cast<int>(op)].py_opcode = number;
    by_number[number] = op;
    order[count++] = op;
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const OpInfo& op_info(Opcode op) {
  PJ_CHECK(op < Opcode::kNumOpcodes) << "invalid opcode id " << static_cast<int>(op);
  return tables().info[static_cast<int>(op)];
}

Opcode from_py_opcode(int number) {
  return number >= 0 && number < 256 ? tables().by_number[number] : Opcode::kInvalid;
}

int to_py_opcode(Opcode op) { return op_info(op).py_opcode; }

int num_py_opcodes() { return tables().count; }
Opcode py_opcode_at(int i) { return tables().order[i]; }

int stack_effect(Opcode op, int oparg, int jump) {
  int fall = 0, taken = 0;
  switch (op) {
#define PJ_OPS_37 1
#define PJ_OPS_39 1
#define PJ_OP(name, number, flags, effect, jump_effect) \
  case Opcode::name:                                    \
    fall = (effect);                                    \
    taken = (jump_effect);                              \
    break;
#include "py/opcodes.def"
#undef PJ_OP
#undef PJ_OPS_37
#undef PJ_OPS_39
    default:
      PJ_CHECK(false) << "invalid opcode id " << static_cast<int>(op);
  }
  return jump > 0 ? taken : jump == 0 ? fall : std::max(fall, taken);
}

}  // namespace pj::py
