// Which opcodes the simulator has a handler for (capture/op_handlers.def), for tests and docs.
#pragma once

#include <vector>

#include "py/opcodes.h"

namespace pj::capture {

// The running interpreter's opcodes that capture simulates (in table order); any other opcode
// ends capture with B001 UnsupportedOpcode. Empty where capture is off for this interpreter.
std::vector<py::Opcode> simulated_opcodes();

}  // namespace pj::capture
