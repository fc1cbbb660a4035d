// Filesystem helpers shared by the dump folders (runtime/) and the disk caches (the GPU kernel
// cache, kernels/cuda/nvrtc.cc; any later persistent cache should use the same three calls).
//
// A disk cache is trusted only as far as these checks go:
// - Its folder is private (private_dir): the folders pijit makes are created with mode 0700, and
//   each folder from the cache's root down to the one used must be a real directory (not a
//   symbolic link), owned by the effective user, and not group- or world-writable. Otherwise the
//   cache is refused: one warning on stderr per folder, and the caller runs without it.
// - An entry file (write_cache_entry / read_cache_entry) is a fixed header, then the body:
//       pijit-cache 1\n
//       key <SHA-256 of the key, 64 lowercase hex>\n
//       body <size in decimal> <SHA-256 of the body, 64 lowercase hex>\n
//       <body: exactly `size` bytes>
//   A read opens the file without following links, wants a regular file of the user's, and checks
//   the header byte for byte, the key's hash, the size against the file's length and the body's
//   hash; anything else (truncation, a flipped byte, an old format) is a miss, never a wrong body.
// - A write is atomic: a new temp file in the same folder (O_CREAT|O_EXCL, mode 0600), written
//   whole, fsync'ed (unless not durable), then renamed over the entry; readers see the old entry or
//   the new one.
#pragma once

#include <string>

namespace pj {

// Creates `path` and its missing parents (like mkdir -p) with `mode` (less the umask); false when
// one cannot be made.
bool make_dirs(const std::string& path, unsigned mode = 0777);

// The folder of pijit's disk caches, "" for none: $PIJIT_CACHE_DIR (set to "" it turns every disk
// cache off), else MindSpore's $MS_COMPILER_CACHE_PATH, else $XDG_CACHE_HOME/pijit, else
// ~/.cache/pijit. MS_COMPILER_CACHE_ENABLE=0 also turns them off. Each cache has its own folder in
// it (cuda/ for PTX, graphs/ for compiled entries).
std::string cache_root();

// Makes `root`/`sub` (`sub` may be "" or hold several levels; missing folders made with mode 0700)
// and checks root and each folder below it down to root/sub: not a directory, a symbolic link,
// owned by another user, or group/world-writable refuses it. Returns "" when the folder may be
// used, else why not (also when it cannot be made or read).
std::string prepare_private_dir(const std::string& root, const std::string& sub);

// prepare_private_dir, and when it fails one line on stderr per folder per process:
// "pijit: not using <what> in <folder>: <why>; running without it".
bool private_dir(const std::string& root, const std::string& sub, const char* what);

// The entry for `key` in `path` (format above) into *body; false on any miss. Leaves *body alone
// on a miss.
bool read_cache_entry(const std::string& path, const std::string& key, std::string* body);
// Writes the entry atomically; false when it could not be written (nothing is left behind).
// durable=false skips the fsync (milliseconds on a first call's path): a crash may then leave a
// torn file, which the next read's hash check turns into a miss.
bool write_cache_entry(const std::string& path, const std::string& key, const std::string& body, bool durable = true);

}  // namespace pj
