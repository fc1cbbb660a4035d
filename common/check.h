// Error levels used everywhere in pijit (STYLE.md, practice 10):
//   PJ_CHECK(cond)   an invariant is broken: print file:line and abort, in every build.
//   PJ_DCHECK(cond)  the same, debug builds only (for checks on hot paths).
//   pj::Error        bad input from a user (shape mismatch, wrong dtype, bad axis): thrown by the
//                    Python-independent layers and turned into the matching Python exception at
//                    the CPython boundary (pyext/). Never used for internal invariants.
// This header imports nothing from the project.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace pj {

// Which Python exception a user error becomes.
// CaptureBreak: capture met something it must not trace (a tensor's data read while tracing);
// it becomes pijit._C.CaptureBreak, a BaseException so library `except Exception` cannot hide it.
// Memory: an allocation that cannot be made (MemoryError naming the shape and the bytes).
// Recursion: input nested deeper than Python's recursion limit allows (RecursionError).
enum class ErrorKind { Value, Type, Index, Runtime, NotImplemented, CaptureBreak, Memory, Recursion };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] void check_failed(const char* file, int line, const char* cond, const std::string& msg);

// Builds a message from stream pieces: PJ_THROW(Value) << "bad axis " << axis;
class ErrorBuilder {
 public:
  ErrorBuilder(ErrorKind kind) : kind_(kind) {}
  template <typename T>
  ErrorBuilder& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] void raise() const { throw Error(kind_, os_.str()); }

 private:
  ErrorKind kind_;
  std::ostringstream os_;
};

struct ErrorRaiser {
  // operator& binds looser than <<, so the whole message is built before raise().
  [[noreturn]] void operator&(const ErrorBuilder& b) const { b.raise(); }
};

class CheckBuilder {
 public:
  CheckBuilder(const char* file, int line, const char* cond) : file_(file), line_(line), cond_(cond) {}
  template <typename T>
  CheckBuilder& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] ~CheckBuilder() noexcept(false) { check_failed(file_, line_, cond_, os_.str()); }

 private:
  const char* file_;
  int line_;
  const char* cond_;
  std::ostringstream os_;
};

}  // namespace pj

#define PJ_THROW(kind) ::pj::ErrorRaiser() & ::pj::ErrorBuilder(::pj::ErrorKind::kind)
#define PJ_CHECK(cond) \
  if (__builtin_expect(!!(cond), 1)) {} else ::pj::CheckBuilder(__FILE__, __LINE__, #cond)
#ifdef NDEBUG
#define PJ_DCHECK(cond) \
  if (true) {} else ::pj::CheckBuilder(__FILE__, __LINE__, #cond)
#else
#define PJ_DCHECK(cond) PJ_CHECK(cond)
#endif
