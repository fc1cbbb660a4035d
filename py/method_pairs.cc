// The CALL_METHODs that consume a method pair handed to a resume function (bytecode.h).
#include "py/pyport.h"  // first (Python.h): kMakeFunctionPopsQualname

#include "py/bytecode.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace pj::py {
namespace {

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// How deep into the value stack an instruction reaches (reads, pops or moves), for the
// instructions an argument list compiles to; -1 for any other (the walk refuses it).
int reach(const Instruction& in) {
  const int arg = in.arg;
  switch (in.op) {
    case Opcode::ROT_TWO: return 2;
    case Opcode::ROT_THREE: return 3;
    case Opcode::ROT_FOUR: return 4;
    case Opcode::ROT_N: return arg;
    case Opcode::DUP_TOP: return 1;
    case Opcode::DUP_TOP_TWO: return 2;
    case Opcode::LOAD_METHOD:
    case Opcode::LOAD_ATTR:
    case Opcode::GET_ITER:
    case Opcode::LIST_TO_TUPLE:
    case Opcode::FORMAT_VALUE:
    case Opcode::POP_TOP:
    case Opcode::STORE_FAST:
    case Opcode::POP_JUMP_IF_FALSE:
    case Opcode::POP_JUMP_IF_TRUE:
    case Opcode::JUMP_IF_FALSE_OR_POP:
    case Opcode::JUMP_IF_TRUE_OR_POP:
      return in.op == Opcode::FORMAT_VALUE && (arg & 4) ? 2 : 1;
    case Opcode::LOAD_FAST:
    case Opcode::LOAD_CONST:
    case Opcode::LOAD_GLOBAL:
    case Opcode::LOAD_DEREF:
    case Opcode::LOAD_CLASSDEREF:
    case Opcode::LOAD_NAME:
    case Opcode::LOAD_CLOSURE:
    case Opcode::NOP:
    case Opcode::JUMP_FORWARD:
    case Opcode::JUMP_ABSOLUTE:
      return 0;
    case Opcode::COMPARE_OP:
    case Opcode::IS_OP:
    case Opcode::CONTAINS_OP:
      return 2;
    case Opcode::BUILD_TUPLE:
    case Opcode::BUILD_LIST:
    case Opcode::BUILD_SET:
    case Opcode::BUILD_STRING:
    case Opcode::BUILD_SLICE:
    case Opcode::BUILD_TUPLE_UNPACK:
    case Opcode::BUILD_TUPLE_UNPACK_WITH_CALL:
    case Opcode::BUILD_LIST_UNPACK:
    case Opcode::BUILD_SET_UNPACK:
    case Opcode::BUILD_MAP_UNPACK:
    case Opcode::BUILD_MAP_UNPACK_WITH_CALL:
      return arg;
    case Opcode::BUILD_MAP: return 2 * arg;
    case Opcode::BUILD_CONST_KEY_MAP: return arg + 1;
    case Opcode::LIST_EXTEND:
    case Opcode::LIST_APPEND:
    case Opcode::SET_UPDATE:
    case Opcode::SET_ADD:
    case Opcode::DICT_UPDATE:
    case Opcode::DICT_MERGE:
      return arg + 1;
    case Opcode::CALL_FUNCTION: return arg + 1;
    case Opcode::CALL_FUNCTION_KW: return arg + 2;
    case Opcode::CALL_FUNCTION_EX: return 2 + (arg & 1);
    case Opcode::CALL_METHOD: return arg + 2;
    case Opcode::MAKE_FUNCTION: return 1 + (py::kMakeFunctionPopsQualname ? 1 : 0) + __builtin_popcount(arg & 0x0F);
    default: break;
  }
  const char* name = op_name(in.op);
  if (starts_with(name, "UNARY_")) return 1;
  if (starts_with(name, "BINARY_") || starts_with(name, "INPLACE_")) return 2;
  return -1;
}

}  // namespace

std::vector<int> method_pair_consumers(const DecodeResult& d, int offset, int depth, int slot, std::string* why) {
  std::vector<int> out;
  const size_t n = d.instructions.size();
  auto index_of = [&](int off) {
    for (size_t i = 0; i < n; ++i)
      if (d.instructions[i].offset == off || d.instructions[i].start == off) return static_cast<int>(i);
    return -1;
  };
  std::vector<int> seen(n, -1);  // the depth an instruction was reached with
  std::vector<std::pair<int, int>> paths{{index_of(offset), depth}};  // (instruction, depth) to walk
  auto fail = [&](const std::string& what) {
    *why = what;
    return std::vector<int>{};
  };
  while (!paths.empty()) {
    auto [i, dp] = paths.back();
    paths.pop_back();
    if (i < 0 || static_cast<size_t>(i) >= n) return fail("a path leaves the code");
    if (seen[i] >= 0) {
      if (seen[i] != dp) return fail("an instruction reached with two stack depths");
      continue;
    }
    seen[i] = dp;
    const Instruction& in = d.instructions[i];
    if (in.op == Opcode::CALL_METHOD && dp - in.arg - 2 == slot) {
      out.push_back(in.offset);
      continue;
    }
    const bool conditional = has_flag(in.op, kCondJump);
    const bool jumps = is_jump(in.op);
    for (int way = jumps ? 1 : 0; way >= 0; --way) {
      if (way == 0 && jumps && !conditional) continue;  // an unconditional jump does not fall through
      const int r = reach(in);
      if (r < 0) return fail(std::string("the walk does not know ") + op_name(in.op));
      if (dp - r <= slot + 1) return fail(std::string(op_name(in.op)) + " reaches into the pair (depth " + std::to_string(dp) + ", slot " + std::to_string(slot) + ")");
      const int next = way == 1 ? index_of(in.jump_target) : i + 1;
      if (way == 1 && in.jump_target <= in.offset) return fail("a jump backwards");
      paths.emplace_back(next, dp + stack_effect(in.op, in.arg, way));
    }
  }
  return out;
}

}  // namespace pj::py
