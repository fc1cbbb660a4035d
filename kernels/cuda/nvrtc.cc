#include "kernels/cuda/nvrtc.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "common/check.h"
#include "common/files.h"
#include "common/sha256.h"
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

std::mutex g_mu;
std::unordered_map<std::string, std::string> g_memory;  // key -> PTX
CompileStats g_stats;

}  // namespace

std::string disk_cache_dir() {
  const std::string root = cache_root();
  return root.empty() ? "" : root + "/cuda";
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
  // The disk cache is used only in a private folder, and an entry only when its header names this
  // key's SHA-256 and its body matches its own (common/files.h): otherwise NVRTC compiles again.
  const std::string root = cache_root();
  const bool disk = !root.empty() && private_dir(root, "cuda", "the GPU kernel cache");
  const std::string path = disk ? root + "/cuda/" + sha256_hex(key) + ".ptx" : "";
  if (std::string ptx; !path.empty() && read_cache_entry(path, key, &ptx)) {
    std::lock_guard<std::mutex> lock(g_mu);
    ++g_stats.disk_hits;
    return g_memory[key] = ptx;
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
  // Atomic: a concurrent reader sees the old entry or this one. A failed write only costs a
  // recompile next run.
  if (!path.empty()) write_cache_entry(path, key, ptx);
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
