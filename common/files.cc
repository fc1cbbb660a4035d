#include "common/files.h"

#include <sys/stat.h>

#include <cerrno>

namespace pj {

bool make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') {
      const std::string part = path.substr(0, i);
      if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST) return false;
    }
  return true;
}

}  // namespace pj
