// CUDA C++ compiled at run time by NVRTC (opened with dlopen: kernels/cuda/backend.h), to PTX for a
// GPU architecture, cached in memory and on disk by the source, the options and NVRTC's version.
// Needs no GPU: CI compiles every generated kernel this way.
#pragma once

#include <string>
#include <vector>

namespace pj::cuda {

// PTX of `source` for compute capability `arch` (80: sm_80 = A100, 90: H100/H200). `options` are
// NVRTC's (the architecture is added). Raises pj::Error (RuntimeError) when NVRTC cannot be loaded,
// or with NVRTC's log when the source does not compile.
std::string compile_ptx(const std::string& source, int arch, const std::vector<std::string>& options);

// Where compiled PTX is kept between runs: $PIJIT_CACHE_DIR, else $XDG_CACHE_HOME/pijit, else
// ~/.cache/pijit (its cuda/ folder); "" disables the disk cache (PIJIT_CACHE_DIR=""). The folder
// must be private and each entry is verified (common/files.h); a refused folder means no disk cache.
std::string disk_cache_dir();

struct CompileStats {
  long compiled = 0;   // NVRTC runs
  long memory_hits = 0;
  long disk_hits = 0;
};
CompileStats compile_stats();
// Forgets the in-memory cache (the disk cache stays): tests of the disk path.
void clear_memory_cache();

}  // namespace pj::cuda
