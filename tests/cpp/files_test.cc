// The disk caches' trust (common/files.h), without a GPU: an entry round-trips; a flipped byte
// anywhere in the file, another key, a truncation at any length or a malformed header is a miss,
// never a wrong body; concurrent writers never leave a torn entry or a temp file; a cache folder is
// made with mode 0700 and refused (one warning) when group/world-writable, owned by another user,
// a symbolic link or not a directory, at every level pijit owns.
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/files.h"
#include "common/sha256.h"
#include "gtest/gtest.h"

namespace pj {
namespace {

// A fresh private folder under the test temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "pijit_files_XXXXXX";
    path_ = ::mkdtemp(&tmpl[0]) ? tmpl : "";
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("chmod -R u+rwx '" + path_ + "' 2>/dev/null; rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void spill(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    ::closedir(d);
  }
  return names;
}

unsigned mode_of(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? unsigned(st.st_mode & 07777) : ~0u;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::string binary_body(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = char((i * 131 + size_t(seed) * 7919 + (i >> 8)) & 0xff);
  return s;
}

const char kKey[] = "nvrtc 13.0 --gpu-architecture=compute_90\nextern \"C\" __global__ void k() {}";

TEST(CacheEntry, RoundTrip) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string path = tmp.path() + "/e.ptx";
  std::string got = "untouched";
  EXPECT_FALSE(read_cache_entry(path, kKey, &got));
  EXPECT_EQ(got, "untouched");
  for (const std::string& body : {std::string(), std::string("x"), std::string(".entry k\n\0\0tail", 15),
                                  binary_body(1 << 20, 3)}) {
    ASSERT_TRUE(write_cache_entry(path, kKey, body));
    ASSERT_TRUE(read_cache_entry(path, kKey, &got));
    EXPECT_EQ(got, body);
  }
  EXPECT_EQ(mode_of(path) & 0077, 0u) << "an entry is the user's only";
  const std::string text = slurp(path);
  const std::string body = binary_body(1 << 20, 3);
  EXPECT_EQ(text, "pijit-cache 1\nkey " + sha256_hex(kKey) + "\nbody " + std::to_string(body.size()) + " " +
                      sha256_hex(body) + "\n" + body);
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"e.ptx"}) << "no temp file left";
}

TEST(CacheEntry, AFlippedByteAnywhereIsAMiss) {
  TempDir tmp;
  const std::string path = tmp.path() + "/e.ptx", body = binary_body(300, 1);
  ASSERT_TRUE(write_cache_entry(path, kKey, body));
  const std::string good = slurp(path);
  const size_t header = good.size() - body.size();
  ASSERT_GT(header, 140u);
  for (size_t pos = 0; pos < good.size(); ++pos)
    for (unsigned char mask : {0x01, 0x80}) {
      std::string bad = good;
      bad[pos] = char(bad[pos] ^ mask);
      spill(path, bad);
      std::string got = "untouched";
      ASSERT_FALSE(read_cache_entry(path, kKey, &got))
          << "byte " << pos << (pos < header ? " (header)" : " (body)") << " ^ " << int(mask);
      ASSERT_EQ(got, "untouched");
    }
  spill(path, good);
  std::string got;
  EXPECT_TRUE(read_cache_entry(path, kKey, &got));
  EXPECT_EQ(got, body);
}

TEST(CacheEntry, AnotherKeyIsAMiss) {
  TempDir tmp;
  const std::string path = tmp.path() + "/e.ptx", key = kKey;
  ASSERT_TRUE(write_cache_entry(path, key, "body"));
  std::string got = "untouched";
  for (size_t pos = 0; pos < key.size(); ++pos) {
    std::string other = key;
    other[pos] = char(other[pos] ^ 0x01);
    ASSERT_FALSE(read_cache_entry(path, other, &got)) << "key byte " << pos;
  }
  EXPECT_FALSE(read_cache_entry(path, key.substr(0, key.size() - 1), &got));
  EXPECT_FALSE(read_cache_entry(path, key + " ", &got));
  EXPECT_FALSE(read_cache_entry(path, "", &got));
  EXPECT_EQ(got, "untouched");
  EXPECT_TRUE(read_cache_entry(path, key, &got));
  EXPECT_EQ(got, "body");
}

TEST(CacheEntry, TruncatedAtEveryLengthOrExtendedIsAMiss) {
  TempDir tmp;
  const std::string path = tmp.path() + "/e.ptx", body = binary_body(200, 2);
  ASSERT_TRUE(write_cache_entry(path, kKey, body));
  const std::string good = slurp(path);
  std::string got = "untouched";
  for (size_t len = 0; len < good.size(); ++len) {
    ASSERT_EQ(::truncate(path.c_str(), off_t(len)), 0);
    ASSERT_FALSE(read_cache_entry(path, kKey, &got)) << "truncated to " << len << " of " << good.size();
    spill(path, good);
  }
  spill(path, good + "x");
  EXPECT_FALSE(read_cache_entry(path, kKey, &got));
  EXPECT_EQ(got, "untouched");
}

TEST(CacheEntry, MalformedHeadersAndOddFilesAreMisses) {
  TempDir tmp;
  const std::string path = tmp.path() + "/e.ptx", k = sha256_hex(kKey), b = sha256_hex("abc");
  std::string got = "untouched";
  const std::string malformed[] = {
      "",
      "abc",
      "// 3 1234567\nabc",                                      // the format before this one
      "pijit-cache 2\nkey " + k + "\nbody 3 " + b + "\nabc",   // another version
      "pijit-cache 1\nkey " + k + "\nbody 03 " + b + "\nabc",  // a leading zero
      "pijit-cache 1\nkey " + k + "\nbody +3 " + b + "\nabc",
      "pijit-cache 1\nkey " + k + "\nbody  3 " + b + "\nabc",
      "pijit-cache 1\nkey " + k + "\nbody 3  " + b + "\nabc",
      "pijit-cache 1\nkey " + k + "\nbody 3\n" + b + "\nabc",
      "pijit-cache 1\nkey " + k + "\nbody 99999999999999999999 " + b + "\nabc",
      "pijit-cache 1\nkey " + k + "\nbody 3 " + sha256_hex("abd") + "\nabc",
      "pijit-cache 1\nkey " + sha256_hex(std::string(kKey) + "!") + "\nbody 3 " + b + "\nabc",
      "pijit-cache 1\r\nkey " + k + "\nbody 3 " + b + "\nabc",
  };
  for (const std::string& text : malformed) {
    spill(path, text);
    EXPECT_FALSE(read_cache_entry(path, kKey, &got)) << text;
  }
  EXPECT_EQ(got, "untouched");
  spill(path, "pijit-cache 1\nkey " + k + "\nbody 3 " + b + "\nabc");  // the control: well-formed
  EXPECT_TRUE(read_cache_entry(path, kKey, &got));
  EXPECT_EQ(got, "abc");
  // A link to a good entry is not followed; a folder in its place is a miss.
  const std::string link = tmp.path() + "/link.ptx", dir = tmp.path() + "/dir.ptx";
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  got = "untouched";
  EXPECT_FALSE(read_cache_entry(link, kKey, &got));
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  EXPECT_FALSE(read_cache_entry(dir, kKey, &got));
  EXPECT_EQ(got, "untouched");
}

TEST(CacheEntry, ConcurrentWritersNeverLeaveATornEntry) {
  TempDir tmp;
  const std::string path = tmp.path() + "/e.ptx";
  constexpr int kWriters = 6, kRounds = 30;
  std::vector<std::string> bodies;
  for (int w = 0; w < kWriters; ++w) bodies.push_back(binary_body(size_t(64 << 10) + size_t(w) * 4099, w));
  ASSERT_TRUE(write_cache_entry(path, kKey, bodies[0]));
  std::atomic<int> writers_left{kWriters};
  std::atomic<long> reads{0}, misses{0}, wrong{0}, failed_writes{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      for (int r = 0; r < kRounds; ++r)
        if (!write_cache_entry(path, kKey, bodies[size_t(w)])) ++failed_writes;
      --writers_left;
    });
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&] {
      while (writers_left > 0) {
        std::string got;
        ++reads;
        if (!read_cache_entry(path, kKey, &got))
          ++misses;
        else if (std::find(bodies.begin(), bodies.end(), got) == bodies.end())
          ++wrong;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed_writes, 0);
  EXPECT_GT(reads, 0);
  EXPECT_EQ(misses, 0) << "a reader saw a torn or missing entry";
  EXPECT_EQ(wrong, 0);
  std::string got;
  ASSERT_TRUE(read_cache_entry(path, kKey, &got));
  EXPECT_NE(std::find(bodies.begin(), bodies.end(), got), bodies.end());
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"e.ptx"}) << "no temp file left";
}

TEST(PrivateDir, MadeWithMode0700AtEveryLevelPijitMakes) {
  TempDir tmp;
  const std::string root = tmp.path() + "/a/b/pijit";
  EXPECT_EQ(prepare_private_dir(root, "cuda/x"), "");
  for (const std::string& d : {tmp.path() + "/a", tmp.path() + "/a/b", root, root + "/cuda", root + "/cuda/x"})
    EXPECT_EQ(mode_of(d), 0700u) << d;
  EXPECT_EQ(prepare_private_dir(root + "/", "cuda/x"), "") << "again, and with a trailing slash";
  EXPECT_EQ(prepare_private_dir(root, ""), "");
  EXPECT_NE(prepare_private_dir("", "cuda"), "");
}

TEST(PrivateDir, GroupOrWorldWritableIsRefusedWithOneWarning) {
  TempDir tmp;
  const std::string root = tmp.path() + "/pijit";
  ASSERT_EQ(prepare_private_dir(root, "cuda"), "");
  ASSERT_EQ(::chmod(root.c_str(), 0777), 0);
  EXPECT_EQ(prepare_private_dir(root, "cuda"), root + " is group- or world-writable (mode 0777)");
  ASSERT_EQ(::chmod(root.c_str(), 0770), 0);
  EXPECT_EQ(prepare_private_dir(root, "cuda"), root + " is group- or world-writable (mode 0770)");
  ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
  EXPECT_EQ(prepare_private_dir(root, "cuda"), "") << "readable by others is fine: nobody else can write";
  ASSERT_EQ(::chmod((root + "/cuda").c_str(), 0757), 0);
  EXPECT_EQ(prepare_private_dir(root, "cuda"), root + "/cuda is group- or world-writable (mode 0757)");
  // A new folder under a refused one is never made.
  ASSERT_EQ(::chmod(root.c_str(), 0777), 0);
  EXPECT_NE(prepare_private_dir(root, "other"), "");
  EXPECT_FALSE(exists(root + "/other"));

  ::testing::internal::CaptureStderr();
  const bool first = private_dir(root, "cuda", "the test cache");
  const bool second = private_dir(root, "cuda", "the test cache");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(first);
  EXPECT_FALSE(second);
  EXPECT_EQ(err, "pijit: warning: not using the test cache in " + root + "/cuda: " + root +
                     " is group- or world-writable (mode 0777); running without it\n");
}

TEST(PrivateDir, OwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user (chown)";
  const passwd* nobody = ::getpwnam("nobody");
  const uid_t other = nobody ? nobody->pw_uid : 65534;
  ASSERT_NE(other, ::geteuid());
  TempDir tmp;
  const std::string root = tmp.path() + "/pijit";
  ASSERT_EQ(prepare_private_dir(root, "cuda"), "");
  ASSERT_EQ(::chown((root + "/cuda").c_str(), other, gid_t(-1)), 0);
  EXPECT_EQ(prepare_private_dir(root, "cuda"),
            root + "/cuda is owned by uid " + std::to_string(other) + ", not by this user (uid 0)");
  ASSERT_EQ(::chown(root.c_str(), other, gid_t(-1)), 0);
  EXPECT_EQ(prepare_private_dir(root, "x"),
            root + " is owned by uid " + std::to_string(other) + ", not by this user (uid 0)");
  EXPECT_FALSE(exists(root + "/x")) << "nothing is made inside a refused folder";
}

TEST(PrivateDir, ASymbolicLinkOrAFileIsRefused) {
  TempDir tmp;
  const std::string real = tmp.path() + "/real", link = tmp.path() + "/link";
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  EXPECT_EQ(prepare_private_dir(link, "cuda"), link + " is a symbolic link");
  EXPECT_FALSE(exists(real + "/cuda")) << "nothing is made through the link";
  EXPECT_EQ(prepare_private_dir(link + "/", "cuda"), link + " is a symbolic link");
  // A link one level down.
  const std::string root = tmp.path() + "/pijit";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(real.c_str(), (root + "/cuda").c_str()), 0);
  EXPECT_EQ(prepare_private_dir(root, "cuda"), root + "/cuda is a symbolic link");
  // A file where the folder should be.
  spill(tmp.path() + "/file", "x");
  EXPECT_EQ(prepare_private_dir(tmp.path() + "/file", ""), tmp.path() + "/file is not a directory");
  EXPECT_NE(prepare_private_dir(tmp.path() + "/file", "cuda"), "");
}

}  // namespace
}  // namespace pj
