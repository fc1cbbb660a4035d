#include "common/check.h"

#include <cstdio>
#include <cstdlib>

namespace pj {

// Hooks let the CPython layer print a pending Python error before we abort.
void (*g_check_failure_hook)() = nullptr;

void check_failed(const char* file, int line, const char* cond, const std::string& msg) {
  std::fprintf(stderr, "pijit: internal check failed at %s:%d: %s%s%s\n", file, line, cond,
               msg.empty() ? "" : ": ", msg.c_str());
  if (g_check_failure_hook) g_check_failure_hook();
  std::fflush(stderr);
  std::abort();
}

}  // namespace pj
