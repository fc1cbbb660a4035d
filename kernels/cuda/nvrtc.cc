#include "kernels/cuda/nvrtc.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "common/check.h"
#include "common/files.h"
#include "kernels/cuda/backend.h"

namespace pj::cuda {

namespace {

// NVRTC's C API, as opened (nvrtc.h's types, spelled out: no header needed to build this file).
using Program = void*;
struct Nvrtc {
  int (*version)(int*, int*) = nullptr;
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*log_size)(Program, size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*ptx_size)(Program, size_t*) = nullptr;
  int (*ptx)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  std::string version_text, why;
};

const Nvrtc& nvrtc() {
  static const Nvrtc n = [] {
    Nvrtc r;
    void* lib = cuda_library("libnvrtc", &r.why);
    if (!lib) return r;
    Symbols sym(lib);
    sym(r.version, "nvrtcVersion");
    sym(r.create, "nvrtcCreateProgram");
    sym(r.compile, "nvrtcCompileProgram");
    sym(r.log_size, "nvrtcGetProgramLogSize");
    sym(r.log, "nvrtcGetProgramLog");
    sym(r.ptx_size, "nvrtcGetPTXSize");
    sym(r.ptx, "nvrtcGetPTX");
    sym(r.destroy, "nvrtcDestroyProgram");
    sym(r.error_string, "nvrtcGetErrorString");
    if (!sym.all()) {
      r.why = "libnvrtc lacks a function pijit calls";
      r.compile = nullptr;
      return r;
    }
    int major = 0, minor = 0;
    r.version(&major, &minor);
    r.version_text = std::to_string(major) + "." + std::to_string(minor);
    return r;
  }();
  return n;
}

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::mutex g_mu;
std::unordered_map<std::string, std::string> g_memory;  // key -> PTX
CompileStats g_stats;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

std::string disk_cache_dir() {
  if (const char* d = std::getenv("PIJIT_CACHE_DIR")) return *d ? std::string(d) + "/cuda" : "";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/pijit/cuda";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/pijit/cuda";
  return "";
}

std::string compile_ptx(const std::string& source, int arch, const std::vector<std::string>& options) {
  const Nvrtc& n = nvrtc();
  if (!n.compile) PJ_THROW(Runtime) << "NVRTC is not available: " << n.why;
  std::vector<std::string> opts = options;
  opts.push_back("--gpu-architecture=compute_" + std::to_string(arch));
  std::string key = "nvrtc " + n.version_text;
  for (const std::string& o : opts) key += " " + o;
  key += "\n" + source;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (auto it = g_memory.find(key); it != g_memory.end()) {
      ++g_stats.memory_hits;
      return it->second;
    }
  }
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
  const std::string dir = disk_cache_dir(), path = dir.empty() ? "" : dir + "/" + name + ".ptx";
  // A cached file starts with the key it was made for: a hash collision is a miss, not wrong code.
  const std::string header = "// " + std::to_string(key.size()) + " " + std::to_string(fnv1a(key, 7)) + "\n";
  if (!path.empty()) {
    const std::string text = read_file(path);
    if (text.compare(0, header.size(), header) == 0) {
      std::lock_guard<std::mutex> lock(g_mu);
      ++g_stats.disk_hits;
      return g_memory[key] = text.substr(header.size());
    }
  }
  Program prog = nullptr;
  int rc = n.create(&prog, source.c_str(), "pijit_fused.cu", 0, nullptr, nullptr);
  if (rc != 0) PJ_THROW(Runtime) << "nvrtcCreateProgram: " << n.error_string(rc);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  rc = n.compile(prog, static_cast<int>(argv.size()), argv.data());
  size_t size = 0;
  n.log_size(prog, &size);
  std::string log(size, '\0');
  if (size) n.log(prog, &log[0]);
  if (rc != 0) {
    n.destroy(&prog);
    PJ_THROW(Runtime) << "NVRTC could not compile a generated kernel (" << n.error_string(rc) << "):\n" << log;
  }
  n.ptx_size(prog, &size);
  std::string ptx(size, '\0');
  n.ptx(prog, &ptx[0]);
  n.destroy(&prog);
  if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  // Written whole, then renamed: a concurrent reader never sees half a file. (An unwritable
  // folder just means no disk cache.)
  if (!path.empty() && make_dirs(dir)) {
    const std::string tmp = path + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(&ptx));
    std::ofstream(tmp, std::ios::binary) << header << ptx;
    std::rename(tmp.c_str(), path.c_str());
  }
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_stats.compiled;
  return g_memory[key] = ptx;
}

CompileStats compile_stats() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_stats;
}

void clear_memory_cache() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_memory.clear();
}

}  // namespace pj::cuda
