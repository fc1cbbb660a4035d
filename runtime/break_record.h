// A graph break or refusal as it crosses from capture to what users read (STYLE.md 17): the
// fields travel as fields, from CaptureResult through the code's state to jit_stats,
// capture_summary, pijit.explain and the dump; `text` is only for display, never parsed back.
#pragma once

#include <string>

#include "capture/simulator.h"

namespace pj::runtime {

struct BreakRecord {
  // GraphBreak: a graph ran, the interpreter runs the rest (a resume function). Refusal: the
  // frame runs eagerly. Runtime: refused at run time (the recompile limit), no place in the source.
  enum Kind { GraphBreak, Refusal, Runtime } kind = GraphBreak;
  std::string id, name;  // "B006", "Print" (capture/break_reasons.def)
  std::string message;   // what happened, then ": " and the detail if any (the text after the place)
  std::string detail;    // the specifics alone: the opcode, the callee, the exception text
  std::string file;      // empty for Runtime
  int line = 0;          // 0 for Runtime
  std::string function;
  std::string chain;     // inside inlined code: the calls that led there, " -> " between ("" none)
  capture::InlineChain frames;  // ... as (function, file, line) each, outermost first
  std::string text;      // the same record as break_reasons shows it (CaptureResult::reason_text)

  const char* kind_name() const { return kind == GraphBreak ? "break" : kind == Refusal ? "refusal" : "runtime"; }
};

// The record as pijit.explain, jit_stats and CaptureError show it: a new dict {id, name, message,
// detail, file, line, function, chain, frames, kind, text}, or nullptr with a Python exception set
// (runtime/jit_objects.cc).
PyObject* break_record_dict(const BreakRecord& b);

// The record of a capture that broke (kind GraphBreak) or refused (kind Refusal).
inline BreakRecord break_record(const capture::CaptureResult& r, BreakRecord::Kind kind) {
  const capture::BreakInfo& b = capture::break_info(r.reason);
  BreakRecord rec;
  rec.kind = kind;
  rec.id = b.id;
  rec.name = b.name;
  rec.message = r.detail.empty() ? std::string(b.text) : std::string(b.text) + ": " + r.detail;
  rec.detail = r.detail;
  rec.file = r.file;
  rec.line = r.line;
  rec.function = r.function;
  rec.chain = capture::chain_text(r.chain);
  rec.frames = r.chain;
  rec.text = r.reason_text();
  return rec;
}

// A run-time refusal: the reason's id and name, the whole message, no place.
inline BreakRecord runtime_record(capture::Break reason, const std::string& message) {
  const capture::BreakInfo& b = capture::break_info(reason);
  BreakRecord rec;
  rec.kind = BreakRecord::Runtime;
  rec.id = b.id;
  rec.name = b.name;
  rec.message = message;
  rec.text = message;
  return rec;
}

}  // namespace pj::runtime
