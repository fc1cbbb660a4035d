// Per-code-object state, kept in the code object's extra slot (pyport.h): the capture state
// machine, the cache of guarded entries (most recently hit first) and the counters jit_stats shows.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <list>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "capture/simulator.h"
#include "graph/plan.h"
#include "runtime/break_record.h"
#include "runtime/disk_cache.h"

namespace pj::runtime {

struct JitOptions;
struct ShapePlans;
struct DirectCall;

struct CacheEntry {
  std::shared_ptr<guards::GuardTree> guards;
  PyObject* code = nullptr;  // rewritten code (owned); nullptr: run the original code eagerly
  std::shared_ptr<graph::Graph> graph;
  std::shared_ptr<graph::ExecPlan> plan;  // what runs: the graph after the passes, planned
  std::shared_ptr<ShapePlans> shapes;     // dynamic shapes: the plans per concrete sizes (else null)
  std::shared_ptr<DirectCall> direct;     // runs without its code (runtime/direct_call.h), else null
  std::vector<std::string> dynamic_notes; // which sizes are symbols, which were specialised and why
  std::string reason;        // why this entry runs eagerly (empty for graph entries)
  std::string reason_text;   // ... in full: "B006 Print at f.py:12 in f: print()"
  std::string break_text;    // a graph entry that breaks: why the interpreter runs the rest
  BreakRecord record;        // ... the refusal or the break as a record (when reason or break_text is set)
  std::vector<std::string> effects;  // side effects its code replays after the graph
  std::vector<PyCodeObject*> resumes;  // its resume functions' and loop body's code (borrowed: `code` holds them)
  std::string loop_text;  // a refusal whose loop runs its body as a function: the loop's file:line
  int64_t hits = 0;
  int64_t guard_runs = 0, guard_ns = 0;  // its guard checks while jit_config().guard_timing is on
  int64_t capture_ns = 0;  // simulating the frame (both passes of a graph break)
  int64_t compile_ns = 0;  // the graph's passes, kernels and plan, and the rewritten bytecode
  // Which compile of its code made it (0 the first): entries are kept most recently hit first, and
  // the dump folder names an entry's files by this (entryN.*).
  int serial = -1;
  bool from_disk = false;  // built from the persistent compile cache (runtime/disk_cache.h), not captured
};

struct CodeState {
  // never compiled (no state at all) -> Candidate -> Building -> Compiled; Skip after the
  // recompile limit or for code that can never be captured.
  enum Mode { Candidate, Building, Compiled, Skip } mode = Candidate;
  PyCodeObject* code = nullptr;  // the owner (borrowed: the state dies with it, or at exit first)
  std::list<CacheEntry> entries;
  std::string skip_reason;
  BreakRecord skip_record;  // ... as a record, when a break reason made it (the recompile limit)
  PyObject* reassembled = nullptr;  // stress mode: the original bytecode re-assembled (owned)
  int64_t compiles = 0, cache_hits = 0, cache_misses = 0, recompiles = 0;
  int64_t evictions = 0;        // entries dropped (least recently hit first) at recompile_limit
  int64_t breaks = 0;           // graph entries built with a graph break
  int64_t misses_in_a_row = 0;  // calls since the last cache hit that found no entry
  int64_t frames_rewritten = 0, frames_default = 0;
  int64_t frames_direct = 0;   // of frames_rewritten: a direct call ran the graph (no rewritten code)
  int64_t frames_frameless = 0;  // of frames_direct: with no frame made (runtime/eval_frame.cc run_frameless)
  int64_t graph_failures = 0;  // calls whose graph raised and that then ran eagerly
  // Calls a stance decided (runtime/eval_frame.h Stance; Default's slot unused): force_eager and
  // eager_then_compile's first call ran eagerly, eager_on_recompile ran a miss eagerly,
  // fail_on_recompile raised.
  int64_t stance_calls[5] = {};
  bool stance_warm = false;  // eager_then_compile ran its first call
  int64_t verify_calls = 0;  // run --verify: calls counted (every nth is verified)
  int64_t capture_ns = 0, compile_ns = 0;  // time spent simulating and compiling (passes + plan)
  std::vector<std::string> recompile_reasons;  // "x.shape[0]: 3 -> 4", one per recompile
  std::vector<std::string> break_reasons;      // reason_text() of each refused capture
  std::vector<std::string> break_chains;       // ... and the inline chain that led there ("" none)
  std::vector<BreakRecord> break_records;      // ... and each as its fields (what explain and dumps read)
  // Dynamic shapes: tensor sizes a recompile found changing ("x#0": dim 0 at guard path x); the
  // next captures give them symbols.
  std::set<std::string> dynamic_dims;
  // Lifted scalars: guard paths of Python ints and floats that changed value between calls, or
  // that pijit.mutable() made; where captured code meets a tensor with one, it is a graph input.
  std::set<std::string> dynamic_scalars;
  // A resume function's code: a capture candidate wherever it runs, with the options of the jit
  // whose graph break made it.
  std::shared_ptr<const JitOptions> candidate;
  bool is_resume = false;  // a resume function's code (else a candidate is a function a break left to the interpreter)
  bool is_loop_body = false;  // ... one iteration of a loop capture refused inside (codegen/outline.h)
  // Resume functions made for this code's graph breaks, by (offset, stack depth, bound locals):
  // breaks that resume at the same place with the same layout share one (owned).
  std::map<std::tuple<int, int, std::vector<char>, std::vector<int>, bool>, PyObject*> resume_codes;
  // Loops of this code run from outside with their body a function (a refusal inside them), by the
  // loop head's offset: (outer code, body code), owned; every entry refused there shares them.
  std::map<int, std::pair<PyObject*, PyObject*>> loop_codes;
  std::string module;  // its frame's globals' __name__, when it was captured
  // its artifact in the persistent compile cache (shared: a plan's first launch adds its kernels)
  std::shared_ptr<DiskState> disk = std::make_shared<DiskState>();
  std::string dump_key, dump_path;  // PIJIT_DUMP_DIR: its folder's name and path (runtime/debug_tools.h)
  int dumped_entries = 0;  // entries built so far: the next one's serial
  int auto_candidate = 0;
  int filtered = -1;  // PIJIT_SKIP / PIJIT_ONLY: -1 not decided yet, 0 may be captured, 1 never
  int inspects_frame = -1;  // codegen::inspects_frame, once: -1 not known yet  // `pijit run`: 0 not decided, 1 the script's code, 2 not
  ~CodeState();
};

// The state of a code object, created on first use (nullptr with an exception on failure).
CodeState* code_state(PyCodeObject* co, bool create);

// At interpreter exit (atexit, before modules are torn down): frees every state, empties pijit's
// slots and the extra arrays only pijit used, and turns the hook off for what finalization still
// runs. Code objects then die as if pijit had never seen them (no free function runs for them).
void release_code_states();

// Totals over every frame the hook decided about (stress mode reports these).
struct GlobalStats {
  int64_t frames_rewritten = 0, frames_default = 0;
  int64_t frames_captured = 0;  // of frames_rewritten: ran a captured graph's code
  int64_t frames_direct = 0;    // of frames_captured: through a direct call (runtime/direct_call.h)
  std::map<std::string, int64_t> fallback_reasons;  // reason id + name -> frames (capture refused)
  std::map<std::string, int64_t> default_reasons;   // why frames_default ran the original code
};
GlobalStats& global_stats();

}  // namespace pj::runtime
