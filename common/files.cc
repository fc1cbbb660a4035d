#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "common/sha256.h"

namespace pj {

namespace {

constexpr char kMagic[] = "pijit-cache 1\n";
// A cache entry larger than this is not read (nothing pijit caches comes near it).
constexpr off_t kMaxEntry = off_t(1) << 30;

std::string errno_text(int e) { return std::strerror(e); }

// Writes all of [data, data+size) to fd, through short writes and EINTR.
bool write_all(int fd, const char* data, size_t size) {
  while (size) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n, size -= size_t(n);
  }
  return true;
}

// The whole of fd (a regular file of at most kMaxEntry bytes) into *out.
bool read_all(int fd, std::string* out) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_size > kMaxEntry)
    return false;
  // Straight into the string, one byte past the size fstat gave (a file that grew since is read
  // on; at end of file read returns 0). No 64 KiB buffer on the stack: a warm start's first call
  // page-faulted in the fresh stack pages it touched.
  out->resize(size_t(st.st_size) + 1);
  size_t have = 0;
  for (;;) {
    if (have == out->size()) {  // (it grew since: on, up to one byte past the bound)
      if (have > size_t(kMaxEntry)) return false;
      out->resize(std::min(have * 2, size_t(kMaxEntry) + 1));
    }
    const ssize_t n = ::read(fd, &(*out)[have], out->size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    have += size_t(n);
  }
  out->resize(have);
  return have <= size_t(kMaxEntry);
}

}  // namespace

std::string cache_root() {
  if (const char* e = std::getenv("MS_COMPILER_CACHE_ENABLE"); e && std::strcmp(e, "0") == 0) return "";
  if (const char* d = std::getenv("PIJIT_CACHE_DIR")) return d;
  if (const char* d = std::getenv("MS_COMPILER_CACHE_PATH"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/pijit";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/pijit";
  return "";
}

bool make_dirs(const std::string& path, unsigned mode) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') {
      const std::string part = path.substr(0, i);
      if (mkdir(part.c_str(), mode_t(mode)) != 0 && errno != EEXIST) return false;
    }
  return true;
}

namespace {

// What makes a folder with this lstat not pijit's own ("" when it is).
std::string dir_problem(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "is not a directory";
  if (st.st_uid != geteuid())
    return "is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " + std::to_string(geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    return std::string("is group- or world-writable (mode ") + mode + ")";
  }
  return "";
}

// lstat of `path`, made first (with `make`) when missing; "" or what went wrong.
template <typename Make>
std::string stat_or_make(const std::string& path, struct stat* st, Make make) {
  if (lstat(path.c_str(), st) == 0) return "";  // (a warm start: one call per level, nothing made)
  if (errno != ENOENT) return "cannot be read (" + errno_text(errno) + ")";
  if (!make()) return "cannot be created (" + errno_text(errno) + ")";
  if (lstat(path.c_str(), st) != 0) return "cannot be read (" + errno_text(errno) + ")";
  return "";
}

}  // namespace

std::string prepare_private_dir(const std::string& root_in, const std::string& sub) {
  std::string root = root_in;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.empty()) return "no folder given";
  // The root and every level below it are pijit's: each is checked before anything is made inside
  // it (a symbolic link is not followed into). The root's parents, such as /tmp or ~/.cache,
  // belong to the user or the system and are only made when missing, never judged.
  std::string level = root;
  struct stat st;
  if (std::string why = stat_or_make(level, &st, [&] { return make_dirs(level, 0700); }); !why.empty())
    return level + " " + why;
  for (size_t i = 0;; ++i) {
    if (std::string why = dir_problem(st); !why.empty()) return level + " " + why;
    if (i >= sub.size()) return "";
    const size_t slash = sub.find('/', i);
    const size_t end = slash == std::string::npos ? sub.size() : slash;
    if (end == i) continue;
    level += "/" + sub.substr(i, end - i);
    i = end;
    if (std::string why = stat_or_make(level, &st, [&] { return mkdir(level.c_str(), 0700) == 0 || errno == EEXIST; });
        !why.empty())
      return level + " " + why;
  }
}

bool private_dir(const std::string& root, const std::string& sub, const char* what) {
  const std::string why = prepare_private_dir(root, sub);
  if (why.empty()) return true;
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (warned.insert(root + "\n" + sub).second)
    std::fprintf(stderr, "pijit: warning: not using %s in %s%s%s: %s; running without it\n", what, root.c_str(),
                 sub.empty() ? "" : "/", sub.c_str(), why.c_str());
  return false;
}

bool read_cache_entry(const std::string& path, const std::string& key, std::string* body) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text;
  const bool read = read_all(fd, &text);
  ::close(fd);
  if (!read) return false;
  const std::string head = std::string(kMagic) + "key " + sha256_hex(key) + "\nbody ";
  if (text.compare(0, head.size(), head) != 0) return false;
  // The size: decimal digits, no leading zero, then one space.
  size_t pos = head.size(), size = 0;
  const size_t digits_at = pos;
  for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos) {
    if (pos - digits_at >= 12) return false;
    size = size * 10 + size_t(text[pos] - '0');
  }
  if (pos == digits_at || (text[digits_at] == '0' && pos - digits_at > 1)) return false;
  if (pos >= text.size() || text[pos] != ' ') return false;
  const size_t hash_at = pos + 1, body_at = hash_at + 65;
  if (body_at > text.size() || text[body_at - 1] != '\n' || text.size() - body_at != size) return false;
  const std::string_view rest(text.data() + body_at, size);
  if (text.compare(hash_at, 64, sha256_hex(rest)) != 0) return false;
  text.erase(0, body_at);  // (the body in the buffer it was read into: no second one to fault in)
  *body = std::move(text);
  return true;
}

bool write_cache_entry(const std::string& path, const std::string& key, const std::string& body, bool durable) {
  static std::atomic<unsigned long> counter{0};
  const std::string text = std::string(kMagic) + "key " + sha256_hex(key) + "\nbody " + std::to_string(body.size()) +
                           " " + sha256_hex(body) + "\n" + body;
  // A name no other writer (thread or process) uses: pid, thread, a counter; O_EXCL makes sure.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
          std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()) & 0xffffff) + "." +
          std::to_string(counter.fetch_add(1));
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return false;
  }
  if (fd < 0) return false;
  bool ok = write_all(fd, text.data(), text.size());
  if (durable) ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(tmp.c_str(), path.c_str()) == 0) return true;
  ::unlink(tmp.c_str());
  return false;
}

}  // namespace pj
