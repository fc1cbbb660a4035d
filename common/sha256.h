// SHA-256 (FIPS 180-4), for what pijit must trust on disk: cache entries name and verify their
// contents with it (common/files.h). Small and dependency-free: the project links no crypto
// library. This header imports nothing from the project.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pj {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // The digest of everything updated so far; the object is then spent (construct a new one).
  Digest finish();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;  // bytes
};

// Lowercase hex of the SHA-256 of `data` (64 characters).
std::string sha256_hex(std::string_view data);
std::string to_hex(const Sha256::Digest& d);

}  // namespace pj
