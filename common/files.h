// Small filesystem helpers shared by the dump folders (runtime/) and the GPU kernel cache
// (kernels/cuda/).
#pragma once

#include <string>

namespace pj {

// Creates `path` and its missing parents (like mkdir -p); false when one cannot be made.
bool make_dirs(const std::string& path);

}  // namespace pj
