// Tables built from py/opcodes.def. The only file that reads the version selector.
#include "py/pyport.h"  // first (Python.h); PJ_PY_VERSION_BIT: the table column that runs here

#include "py/opcodes.h"

#include <algorithm>
#include <array>

#include "common/check.h"

namespace pj::py {
static_assert(kNumOpcodes < 0xFFFF, "Opcode ids fit in uint16_t");

namespace {

// Every id with its name, flags and stack effects; numbers only for the running version's rows,
// whose flags and effects also replace those of another version's row (PJ_OP_AGAIN).
using EffectFn = int (*)(int oparg);
struct Tables {
  std::array<OpInfo, kNumOpcodes> info{};
  std::array<EffectFn, kNumOpcodes> fall{}, taken{};
  std::array<Opcode, 256> by_number{};
  int count = 0;                           // opcodes of the running interpreter
  std::array<Opcode, kNumOpcodes> order{};  // those opcodes in table order

  Tables() {
    by_number.fill(Opcode::kInvalid);
    const uint32_t running = PJ_PY_VERSION_BIT;
#define PJ_OP(name, versions, number, flags, effect, jump_effect)                                  \
  row(Opcode::name, #name, (versions), number, flags, [](int oparg) { return (void)oparg, (effect); }, \
      [](int oparg) { return (void)oparg, (jump_effect); }, running, /*first=*/true);
#define PJ_OP_AGAIN(name, versions, number, flags, effect, jump_effect)                            \
  row(Opcode::name, #name, (versions), number, flags, [](int oparg) { return (void)oparg, (effect); }, \
      [](int oparg) { return (void)oparg, (jump_effect); }, running, /*first=*/false);
#include "py/opcodes.def"
#undef PJ_OP
#undef PJ_OP_AGAIN
  }

  void row(Opcode op, const char* name, uint32_t versions, int number, uint32_t flags, EffectFn f, EffectFn t,
           uint32_t running, bool first) {
    const int i = static_cast<int>(op);
    if (first) {  // the id's defaults, whichever version runs
      info[i] = OpInfo{name, -1, flags};
      fall[i] = f;
      taken[i] = t;
    }
    if (!(versions & running)) return;
    info[i].flags = flags;
    fall[i] = f;
    taken[i] = t;
    add(op, number);
  }

  void add(Opcode op, int number) {
    PJ_CHECK(by_number[number] == Opcode::kInvalid) << "opcode number " << number << " listed twice";
    PJ_CHECK(info[static_cast<int>(op)].py_opcode < 0) << info[static_cast<int>(op)].name << ": two rows for one version";
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

Opcode binary_op_opcode(int oparg) {
  static constexpr Opcode kByArg[] = {
      Opcode::BINARY_ADD, Opcode::BINARY_AND, Opcode::BINARY_FLOOR_DIVIDE, Opcode::BINARY_LSHIFT,
      Opcode::BINARY_MATRIX_MULTIPLY, Opcode::BINARY_MULTIPLY, Opcode::BINARY_MODULO, Opcode::BINARY_OR,
      Opcode::BINARY_POWER, Opcode::BINARY_RSHIFT, Opcode::BINARY_SUBTRACT, Opcode::BINARY_TRUE_DIVIDE,
      Opcode::BINARY_XOR, Opcode::INPLACE_ADD, Opcode::INPLACE_AND, Opcode::INPLACE_FLOOR_DIVIDE,
      Opcode::INPLACE_LSHIFT, Opcode::INPLACE_MATRIX_MULTIPLY, Opcode::INPLACE_MULTIPLY, Opcode::INPLACE_MODULO,
      Opcode::INPLACE_OR, Opcode::INPLACE_POWER, Opcode::INPLACE_RSHIFT, Opcode::INPLACE_SUBTRACT,
      Opcode::INPLACE_TRUE_DIVIDE, Opcode::INPLACE_XOR};
  return oparg >= 0 && oparg < static_cast<int>(sizeof kByArg / sizeof kByArg[0]) ? kByArg[oparg] : Opcode::kInvalid;
}

const char* binary_op_text(int oparg) {
  static constexpr const char* kText[] = {
      "BINARY_OP +", "BINARY_OP &", "BINARY_OP //", "BINARY_OP <<", "BINARY_OP @", "BINARY_OP *",
      "BINARY_OP %", "BINARY_OP |", "BINARY_OP **", "BINARY_OP >>", "BINARY_OP -", "BINARY_OP /",
      "BINARY_OP ^", "BINARY_OP +=", "BINARY_OP &=", "BINARY_OP //=", "BINARY_OP <<=", "BINARY_OP @=",
      "BINARY_OP *=", "BINARY_OP %=", "BINARY_OP |=", "BINARY_OP **=", "BINARY_OP >>=", "BINARY_OP -=",
      "BINARY_OP /=", "BINARY_OP ^="};
  return oparg >= 0 && oparg < static_cast<int>(sizeof kText / sizeof kText[0]) ? kText[oparg] : "BINARY_OP";
}

int binary_op_arg(Opcode op) {
  for (int k = 0; k < 26; ++k)
    if (binary_op_opcode(k) == op) return k;
  return -1;
}

int name_index(Opcode op, int arg) { return kGlobalPushesNull && op == Opcode::LOAD_GLOBAL ? arg >> 1 : arg; }

int stack_effect(Opcode op, int oparg, int jump) {
  PJ_CHECK(op < Opcode::kNumOpcodes) << "invalid opcode id " << static_cast<int>(op);
  const Tables& t = tables();
  const int fall = t.fall[static_cast<int>(op)](oparg), taken = t.taken[static_cast<int>(op)](oparg);
  return jump > 0 ? taken : jump == 0 ? fall : std::max(fall, taken);
}

}  // namespace pj::py
