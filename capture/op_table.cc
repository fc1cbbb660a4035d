// The opcode dispatch table: py::Opcode (the ids py/opcodes.def generates) -> the Simulator
// member that simulates it, as capture/op_handlers.def lists them; every other opcode refuses.
#include "py/pyport.h"  // first (Python.h)

#include <array>

#include "capture/op_table.h"
#include "common/check.h"
#include "capture/sim_state.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {
namespace {

using Handler = void (Simulator::*)(SimFrame&, const Instruction&);
using Table = std::array<Handler, py::kNumOpcodes>;

const Table& table() {
  static const Table t = [] {
    Table h;
    h.fill(&Simulator::unsupported_opcode);
#define PJ_HANDLER(opcode) h[static_cast<int>(Opcode::opcode)] = &Simulator::opcode;
#define PJ_FAMILY(opcode, handler) h[static_cast<int>(Opcode::opcode)] = &Simulator::handler;
#include "capture/op_handlers.def"
#undef PJ_HANDLER
#undef PJ_FAMILY
    return h;
  }();
  return t;
}

}  // namespace

void Simulator::step(SimFrame& fr, const Instruction& ins) {
  const int i = static_cast<int>(ins.op);
  PJ_CHECK(i >= 0 && i < py::kNumOpcodes) << "decoded an opcode outside the table: " << i;
  (this->*table()[i])(fr, ins);
}

void Simulator::unsupported_opcode(SimFrame& fr, const Instruction& ins) { stop(Break::UnsupportedOpcode, op_name(ins.op)); }

std::vector<Opcode> simulated_opcodes() {
  std::vector<Opcode> out;
  for (int i = 0; i < py::num_py_opcodes(); ++i) {
    Opcode op = py::py_opcode_at(i);
    if (table()[static_cast<int>(op)] != &Simulator::unsupported_opcode) out.push_back(op);
  }
  return out;
}

}  // namespace pj::capture

#else

namespace pj::capture {
std::vector<py::Opcode> simulated_opcodes() { return {}; }
}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
