// Byte streams for what pijit writes to disk (the persistent compile cache, runtime/disk_cache.h):
// little-endian fixed-width numbers, varints, length-prefixed strings. A Reader never reads past
// its end: a short or malformed stream sets ok() false and every later read yields zeros, so a
// decoder checks once at the end (a truncated artifact is a miss, never a wrong value).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace pj {

class ByteWriter {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u64(uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
    out_.append(b, 8);
  }
  void var(uint64_t v) {  // LEB128
    while (v >= 0x80) {
      u8(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    u8(static_cast<uint8_t>(v));
  }
  void svar(int64_t v) { var((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }  // zigzag
  void f64(double v) {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    u64(u);
  }
  void str(std::string_view s) {
    var(s.size());
    out_.append(s.data(), s.size());
  }
  void raw(std::string_view b) { out_.append(b.data(), b.size()); }  // (another writer's bytes)
  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  size_t pos() const { return pos_; }
  void skip_to(size_t p) {  // (back, to read again)
    if (p <= in_.size()) pos_ = p;
    else ok_ = false;
  }
  std::string_view since(size_t start) const { return in_.substr(start, pos_ - start); }
  void fail() { ok_ = false; }
  uint8_t u8() { return need(1) ? static_cast<uint8_t>(in_[pos_++]) : 0; }
  uint64_t u64() {
    if (!need(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
    pos_ += 8;
    return v;
  }
  uint64_t var() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = u8();
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    ok_ = false;
    return 0;
  }
  int64_t svar() {
    const uint64_t u = var();
    return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
  }
  // A count of items that each take at least one byte: larger than what is left is corrupt (and
  // would otherwise reserve memory a flipped byte asked for).
  size_t count() {
    const uint64_t n = var();
    if (n > in_.size() - pos_) {
      ok_ = false;
      return 0;
    }
    return static_cast<size_t>(n);
  }
  double f64() {
    const uint64_t u = u64();
    double v;
    std::memcpy(&v, &u, 8);
    return v;
  }
  std::string_view str() {
    const uint64_t n = var();
    if (!need(n)) return {};
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  bool need(uint64_t n) {
    if (ok_ && n <= in_.size() - pos_) return true;
    ok_ = false;
    return false;
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace pj
