// The parts of capture's results that every build has, including builds for Pythons whose
// capture is not implemented (the simulator itself compiles only where pyport.h supports it).
#include "py/pyport.h"  // first (Python.h)

#include <sstream>

#include "capture/jit_api.h"
#include "capture/simulator.h"

namespace pj::capture {
namespace {

const BreakInfo kBreaks[] = {
#define PJ_BREAK(name, id, text) {#name, id, text},
#include "capture/break_reasons.def"
#undef PJ_BREAK
};

std::string g_library_dir;
JitTargetFn g_jit_target = nullptr;

}  // namespace

void set_library_dir(const std::string& dir) { g_library_dir = dir; }
const std::string& library_dir() { return g_library_dir; }

void set_jit_target_fn(JitTargetFn fn) { g_jit_target = fn; }
PyObject* jit_target(PyObject* o) { return g_jit_target ? g_jit_target(o) : nullptr; }

const BreakInfo& break_info(Break b) { return kBreaks[static_cast<int>(b)]; }

std::string chain_text(const InlineChain& chain) {
  std::string text;
  for (const ChainFrame& f : chain)
    text += (text.empty() ? "" : " -> ") + f.function + " (" + f.file + ":" + std::to_string(f.line) + ")";
  return text;
}

std::string CaptureResult::reason_text() const {
  const BreakInfo& b = break_info(reason);
  std::ostringstream os;
  os << b.id << " " << b.name << " at " << file << ":" << line << " in " << function << ": " << b.text;
  if (!detail.empty()) os << ": " << detail;
  return os.str();
}

}  // namespace pj::capture
