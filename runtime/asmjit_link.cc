// Debian's libasmjit-dev ships only a static libasmjit.a built as position-independent
// *executable* code: its globals.cpp.o reads `stderr` through a PC-relative relocation, which a
// shared object (this extension module) cannot resolve against libc's. A hidden `stderr` of the
// module's own satisfies it; it is set to libc's stream before anything can use it (AsmJit writes
// to it only for its own assertion messages). Executables (the GoogleTest suites) link the
// archive directly and do not need this file. No stdio header here: it declares libc's stderr.
#include <dlfcn.h>

extern "C" {
__attribute__((visibility("hidden"))) void* stderr = nullptr;
}

namespace {

__attribute__((constructor(101))) void bind_stderr() {
  if (void** libc_stderr = static_cast<void**>(dlsym(RTLD_DEFAULT, "stderr"))) stderr = *libc_stderr;
}

}  // namespace
