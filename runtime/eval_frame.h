// The frame-evaluation hook and the jit runtime around it (runtime/eval_frame.cc), and the Python
// objects it hands out (runtime/jit_objects.cc: pijit.jit objects, graph runners, jit_stats).
// The runtime is the top layer: it drives capture/ and codegen/ and owns the per-code caches.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/code_state.h"

namespace pj::runtime {

using capture::Break;
using capture::break_info;
using capture::CaptureOptions;
using capture::CaptureResult;

struct JitOptions {
  bool fullgraph = false;    // a refusal raises CaptureError instead of running eagerly
  int recompile_limit = 8;   // cache entries per code object; beyond, the least recently hit is evicted
  // Dynamic shapes (jit(dynamic=)): -1 automatic (a size that changed becomes a symbol on the
  // recompile), 0 static (every size exact), 1 every size of the frame's tensors a symbol at once.
  int dynamic = -1;
  // input_signature / Cell.set_inputs: the dims its None or Symbol entries make symbolic from the
  // first call ("x#0"), whatever `dynamic` says.
  std::vector<std::string> signature_dims;
  CaptureOptions capture;
  bool stress = false;       // a resume function's options, made while capturing for stress mode
};

struct JitConfig {
  JitOptions defaults;
  std::string log;  // comma list from PIJIT_LOGS / set_jit_config: breaks, recompiles, graphs, all
  bool guard_perf = false;  // log names guard_perf (or all): every guard check is timed
  bool guard_timing = false;  // each entry's guard checks timed as the hit path runs them (set_guard_timing)
};
JitConfig& jit_config();
// Sets jit_config().log and what is decided from it once (not per guard check).
void set_log_categories(const std::string& log);

// pijit.CaptureError (a RuntimeError): fullgraph / GRAPH_MODE capture refused.
extern PyObject* g_capture_error;

// pijit.set_stance: how the hook treats candidates from now on; caches are kept, so switching
// back finds every entry. kStanceNames is indexed by Stance (the names set_stance takes).
enum class Stance { Default, ForceEager, EagerOnRecompile, FailOnRecompile, EagerThenCompile, Count };
extern const char* const kStanceNames[static_cast<int>(Stance::Count)];
Stance stance();
void set_stance(Stance s);

// Verify mode (pijit/_verify.py). True while a verified call runs its two runs: nothing inside
// is verified again. set_auto_verify(n): `python -m pijit run --verify=n` verifies every nth call
// of each function the script's auto-capture makes a candidate (0: off).
extern thread_local bool t_verifying;
void set_auto_verify(int every);

// Calls target with the hook installed, capturing the first frame of `code` it enters.
PyObject* call_jitted(PyCodeObject* code, const JitOptions& opt, PyObject* target, PyObject* args, PyObject* kwargs);
// The same, the arguments as a vectorcall gives them (py::vectorcall).
PyObject* call_jitted(PyCodeObject* code, const JitOptions& opt, PyObject* target, PyObject* const* args,
                      size_t nargsf, PyObject* kwnames);

// Stress mode: every frame outside pijit's own code is a candidate, and frames that capture
// refuses run re-assembled bytecode. Returns false if another frame evaluator is installed.
// 0 off; 1 every frame outside pijit is a capture candidate; 2 also runs the frames capture
// refuses through pijit's re-assembled bytecode (exercises the assembler; their f_code is then a
// copy, which level 1 never shows a program).
bool set_stress(int level);
bool stress_enabled();
// `python -m pijit run`: frames of code under these directories are capture candidates (an empty
// list turns it off). A candidate whose capture finds no tensor work runs as it is from then on.
bool set_auto_capture(const std::vector<std::string>& dirs);
struct CodeState;
// Every code object pijit keeps state for, each with a reference to its code object: walking them
// while allocating (building Python objects can run the garbage collector, which can free a code
// object and its state) is safe.
struct PinnedState {
  CodeState* state;
  py::Ref code;
};
std::vector<PinnedState> pinned_code_states();
// Forgets what capture decided for `co` and the resume functions and loop bodies made for it
// (nullptr: for every code object): the next call captures again, with counters from zero.
void reset_capture(PyCodeObject* co);
int stress_level();

// Code under this directory (the pijit package) is never a stress-mode candidate.
void set_library_prefix(const std::string& dir);

// The function a pijit.jit object wraps (borrowed), or nullptr when o is not one.
PyObject* jit_target(PyObject* o);

// Adds JitFunction, CaptureError and the jit functions to pijit._C (false with an exception set).
bool register_jit(PyObject* module);

// A callable running the graph: runner(*inputs) -> tuple of outputs. New reference.
// The graph goes through the pass pipeline (PIJIT_PASSES) into an execution plan (graph/plan.h).
// `dump_prefix` (PIJIT_DUMP_DIR: "folder/entry0") names the files of its IR after each pass, its
// Graphviz form and its kernels' assembly; `fault`: PIJIT_TEST_ONLY_WRONG_RESULTS (runtime/debug_tools.h).
struct GraphDebug {
  std::string dump_prefix;
  bool fault = false;
};
// `optimized`: g after the passes, as a past process's run of them left it (the compile cache): it
// is planned as it is. Dynamic shapes: a graph with symbolic input sizes (`symbolic` non-empty) is planned once per
// concrete sizes met, in a bounded cache the runner keeps (ShapePlans). `scalar_inputs`: input
// positions fed a Python number (a lifted scalar), converted to the input's 0-d dtype per call.
struct ShapePlans;
PyObject* new_graph_runner(std::shared_ptr<graph::Graph> g, const std::string& name, const GraphDebug& debug = {},
                           const std::vector<graph::SymbolicDim>& symbolic = {},
                           const std::vector<int>& scalar_inputs = {},
                           const std::vector<graph::SweepPlan>& sweeps = {},
                           const std::vector<graph::SymbolicAttr>& symbolic_attrs = {},
                           std::shared_ptr<const graph::Graph> optimized = nullptr);
// A runner's call without the argument tuple (the direct call): runner(*args), a tuple of outputs.
PyObject* run_graph(PyObject* runner, PyObject* const* args, Py_ssize_t n);
// run_graph of a graph with one output: that output itself, no tuple (a direct call returning it).
PyObject* run_graph1(PyObject* runner, PyObject* const* args, Py_ssize_t n);
// A dynamic runner's plans by concrete sizes (nullptr for a static graph): counters for jit_stats.
struct ShapePlanStats {
  int64_t plans = 0, hits = 0, misses = 0, evictions = 0, failures = 0, prepare_ns = 0;
};
std::shared_ptr<ShapePlans> runner_shapes(PyObject* runner);
ShapePlanStats shape_plan_stats(const ShapePlans& s);
// A runner's plan (nullptr when `runner` is not one).
std::shared_ptr<graph::ExecPlan> runner_plan(PyObject* runner);
// Called once, after the runner's first launch that returns, with the machine code of the fused
// kernels that launch ran (kernels/fused.h FusedCodeRecorder): the compile cache adds it to the
// runner's entry. Not called when no launch returns.
using RunnerFirstRun = std::function<void(const std::vector<FusedCode>&)>;
void set_runner_first_run(PyObject* runner, RunnerFirstRun f);
// Writes "[pijit what] text" to stderr when PIJIT_LOGS names `what` (or all).
void log_text(const char* what, const std::string& text);
// Marks this thread as busy capturing (true): frames it enters meanwhile run as they are, as while
// pijit's own Python code runs (a dump hook). Returns the previous mark.
bool set_capture_busy(bool busy);
// Whether PIJIT_LOGS / set_logs names the category (or "all"); "graphs" and "graph" are one.
bool log_enabled(const char* what);

// Called by a graph runner whose graph raised (an index out of range): the frame that called it
// is then run again by CPython from its start, so the exception, its traceback line and any
// `except` around it are eager Python's. Only for graphs with no impure op (no random numbers
// drawn twice).
void note_graph_failure(bool rerunnable);
// The graph runner's call from rewritten code failed (the frame it runs in place of may rerun).
void graph_failed_in_rewritten_code();

}  // namespace pj::runtime
