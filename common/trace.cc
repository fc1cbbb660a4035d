#include "common/trace.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <vector>

namespace pj::trace {

std::atomic<bool> g_on{false};
std::atomic<bool> g_ops{false};

namespace {

constexpr size_t kMaxEvents = 2000000;

struct Event {
  const char* cat;
  std::string name, args;
  int64_t t0, t1;
  int tid;
};

std::mutex g_mu;
std::vector<Event>* g_events = new std::vector<Event>;  // never destroyed: written at exit
int64_t g_dropped = 0;
bool g_started = false;  // start() was called (PIJIT_TRACE, PIJIT_DUMP_DIR): recording outlives a Profiler
const auto g_epoch = std::chrono::steady_clock::now();

int thread_id() {
  static std::atomic<int> next{1};
  thread_local int id = next.fetch_add(1);
  return id;
}

}  // namespace

void start() {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_started = true;
  }
  g_on.store(true, std::memory_order_relaxed);
}

int64_t profile_ops(bool on) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_ops.store(on, std::memory_order_relaxed);
  if (on || !g_started) g_on.store(on, std::memory_order_relaxed);
  return now_ns();
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - g_epoch).count();
}

void complete(const char* cat, const std::string& name, int64_t t0, int64_t t1, const std::string& args) {
  const int tid = thread_id();
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_events->size() >= kMaxEvents) {
    ++g_dropped;
    return;
  }
  g_events->push_back({cat, name, args, t0, t1, tid});
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string json() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string out = "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": \"pijit\", \"dropped_events\": " +
                    std::to_string(g_dropped) + "},\n\"traceEvents\": [\n";
  const int pid = static_cast<int>(getpid());
  out += "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + std::to_string(pid) +
         ", \"tid\": 0, \"args\": {\"name\": \"pijit\"}}";
  char num[64];
  for (const Event& e : *g_events) {
    // microseconds with nanosecond digits: spans of a small kernel are well under 1 us
    out += ",\n{\"ph\": \"X\", \"cat\": ";
    out += quote(e.cat);
    out += ", \"name\": ";
    out += quote(e.name);
    std::snprintf(num, sizeof num, ", \"ts\": %.3f, \"dur\": %.3f", e.t0 / 1e3, (e.t1 - e.t0) / 1e3);
    out += num;
    out += ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(e.tid);
    if (!e.args.empty()) out += ", \"args\": {" + e.args + "}";
    out += "}";
  }
  return out + "\n]}\n";
}

bool write(const std::string& path, std::string* error) {
  const std::string text = json();
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    if (error) *error = "cannot open " + path + " for writing";
    return false;
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    if (error) *error = "cannot write " + path;
    return false;
  }
  return true;
}

size_t event_count() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_events->size();
}

void clear() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_events->clear();
  g_dropped = 0;
}

}  // namespace pj::trace
