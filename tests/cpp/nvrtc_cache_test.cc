// The GPU kernel cache on disk (kernels/cuda/nvrtc.cc over common/files.h), with NVRTC and no GPU:
// a corrupted entry is compiled again and rewritten, never returned; a world-writable cache folder
// is refused with one warning and nothing is written there.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/nvrtc.h"

namespace pj::cuda {
namespace {

bool have_nvrtc() { return !backend().nvrtc.empty(); }

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') names.push_back(dir + "/" + e->d_name);
    ::closedir(d);
  }
  return names;
}

// A source no other test compiles (the memory cache is per process).
std::string unique_source(const char* tag) {
  return std::string("// ") + tag + " " + std::to_string(::getpid()) +
         "\nextern \"C\" __global__ void k(float* x) { x[0] = 2.f; }\n";
}

class CacheDir {
 public:
  CacheDir() {
    std::string tmpl = ::testing::TempDir() + "pijit_nvrtc_cache_XXXXXX";
    path_ = ::mkdtemp(&tmpl[0]) ? tmpl : "";
    ::setenv("PIJIT_CACHE_DIR", path_.c_str(), 1);
  }
  ~CacheDir() {
    ::unsetenv("PIJIT_CACHE_DIR");
    std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(NvrtcDiskCache, ACorruptedEntryIsCompiledAgainAndRewritten) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC not available: " << backend().why;
  CacheDir dir;
  const std::string src = unique_source("corrupted");
  const CompileStats s0 = compile_stats();
  const std::string ptx = compile_ptx(src, 90, {});
  const std::vector<std::string> files = entries(dir.path() + "/cuda");
  ASSERT_EQ(files.size(), 1u);
  std::string text;
  {
    std::ifstream f(files[0], std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  ASSERT_EQ(text.compare(text.size() - ptx.size(), ptx.size(), ptx), 0);
  // Change the body the way an attacker or a bad disk would: still plausible PTX.
  const size_t at = text.find(".entry k");
  ASSERT_NE(at, std::string::npos);
  text[at + 7] = 'j';
  std::ofstream(files[0], std::ios::binary | std::ios::trunc) << text;
  clear_memory_cache();
  EXPECT_EQ(compile_ptx(src, 90, {}), ptx);
  clear_memory_cache();
  EXPECT_EQ(compile_ptx(src, 90, {}), ptx);
  const CompileStats s1 = compile_stats();
  EXPECT_EQ(s1.compiled - s0.compiled, 2) << "the corrupted entry was not used";
  EXPECT_EQ(s1.disk_hits - s0.disk_hits, 1) << "the rewritten entry was";
  EXPECT_EQ(entries(dir.path() + "/cuda").size(), 1u);
}

TEST(NvrtcDiskCache, AWorldWritableFolderIsRefusedWithOneWarning) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC not available: " << backend().why;
  CacheDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  const std::string src = unique_source("refused");
  const CompileStats s0 = compile_stats();
  ::testing::internal::CaptureStderr();
  const std::string a = compile_ptx(src, 90, {});
  clear_memory_cache();
  const std::string b = compile_ptx(src, 90, {});
  const std::string err = ::testing::internal::GetCapturedStderr();
  const CompileStats s1 = compile_stats();
  EXPECT_EQ(a, b);
  EXPECT_EQ(s1.compiled - s0.compiled, 2);
  EXPECT_EQ(s1.disk_hits - s0.disk_hits, 0);
  EXPECT_EQ(err, "pijit: warning: not using the GPU kernel cache in " + dir.path() + "/cuda: " + dir.path() +
                     " is group- or world-writable (mode 0777); running without it\n");
  EXPECT_TRUE(entries(dir.path()).empty()) << "nothing written in a refused folder";
}

}  // namespace
}  // namespace pj::cuda
