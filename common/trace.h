// PIJIT_TRACE=out.json (and PIJIT_DUMP_DIR's trace.json): a timeline of what pijit did, in the
// Chrome / Perfetto trace-event format, one "X" (complete) event per span, per thread:
//
//   capture   simulating a frame's bytecode            compile  passes, planning, kernels prepared
//   guards    a cache lookup (guard checks)             graph    one graph launch
//   kernel    one step of a launch (an op's kernel)     eager    a frame the interpreter ran
//
//   op        one eager registry op call (only while pijit.Profiler runs: profile_ops)
//
// Off by default: every recording site costs one relaxed load and a branch. Events are kept in
// memory (at most kMaxEvents; later ones are counted as dropped) and written at exit.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace pj::trace {

extern std::atomic<bool> g_on;
inline bool on() { return g_on.load(std::memory_order_relaxed); }
void start();  // from now on, events are recorded
int64_t now_ns();

// Eager op spans have their own switch: PIJIT_TRACE alone keeps its timeline's size, and a
// Profiler's stop ends recording only when the Profiler was what started it.
extern std::atomic<bool> g_ops;
inline bool ops_on() { return g_ops.load(std::memory_order_relaxed); }
// Turns op spans on (recording too) or off; returns now_ns(), the window's edge.
int64_t profile_ops(bool on);

// One span [t0, t1) (now_ns clock); `args` a JSON object's members ("\"k\": 1") or empty.
void complete(const char* cat, const std::string& name, int64_t t0, int64_t t1, const std::string& args = {});
// The recorded events as a trace-event JSON document; write() returns false with `error` set.
std::string json();
bool write(const std::string& path, std::string* error);
size_t event_count();
void clear();

// Records [construction, destruction) when tracing was on at construction.
class Span {
 public:
  Span(const char* cat, const std::string& name) : cat_(cat), t0_(on() ? now_ns() : -1) {
    if (t0_ >= 0) name_ = name;
  }
  Span(const char* cat, const char* name) : cat_(cat), t0_(on() ? now_ns() : -1) {
    if (t0_ >= 0) name_ = name;
  }
  ~Span() {
    if (t0_ >= 0) complete(cat_, name_, t0_, now_ns(), args_);
  }
  bool active() const { return t0_ >= 0; }
  void set_args(std::string a) { args_ = std::move(a); }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  const char* cat_;
  int64_t t0_;
  std::string name_, args_;
};

// A JSON string literal of `s` (quotes included).
std::string quote(const std::string& s);

}  // namespace pj::trace
