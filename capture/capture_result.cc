// The parts of capture's results that every build has, including builds for Pythons whose
// capture is not implemented (the simulator itself compiles only where pyport.h supports it).
#include "capture/pyport.h"  // first (Python.h)

#include <sstream>

#include "capture/simulator.h"

namespace pj::capture {
namespace {

const BreakInfo kBreaks[] = {
#define PJ_BREAK(name, id, text) {#name, id, text},
#include "capture/break_reasons.def"
#undef PJ_BREAK
};

std::string g_library_dir;

}  // namespace

void set_library_dir(const std::string& dir) { g_library_dir = dir; }
const std::string& library_dir() { return g_library_dir; }

const BreakInfo& break_info(Break b) { return kBreaks[static_cast<int>(b)]; }

std::string CaptureResult::reason_text() const {
  const BreakInfo& b = break_info(reason);
  std::ostringstream os;
  os << b.id << " " << b.name << " at " << file << ":" << line << " in " << function << ": " << b.text;
  if (!detail.empty()) os << ": " << detail;
  return os.str();
}

ReturnPlan& ReturnPlan::operator=(ReturnPlan&& o) noexcept {
  Py_XDECREF(obj);
  kind = o.kind;
  obj = o.obj;
  index = o.index;
  slot = o.slot;
  items = std::move(o.items);
  o.obj = nullptr;
  return *this;
}
ReturnPlan::~ReturnPlan() { Py_XDECREF(obj); }

}  // namespace pj::capture
