// The PEP 523 hook and what it does with a frame: look up the code object's cache (guards, most
// recently hit entry first), capture on a miss, and run the chosen entry in a shadow frame.
#include "py/pyport.h"  // first (Python.h)

#include "runtime/eval_frame.h"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>

#include "absl/container/flat_hash_set.h"

#include "codegen/outline.h"
#include "common/stack.h"
#include "common/trace.h"
#include "codegen/rewrite.h"
#include "runtime/debug_tools.h"
#include "runtime/direct_call.h"
#include "graph/tape.h"
#include "graph/trace_context.h"
#include "py/bytecode.h"
#include "py/py_common.h"

namespace pj::runtime {

bool hook_enter();  // (below, with call_jitted)
void hook_exit();

namespace {

Py_ssize_t g_extra_index = -1;
GlobalStats g_stats;
JitConfig g_config;
bool g_stress = false;
bool g_stress_reassemble = false;  // stress level 2
bool g_stress_breaks = false;      // stress level 3
bool g_resume_codes = false;       // some graph break made a resume function (a candidate code)
int g_active_calls = 0;  // jitted calls in progress: the hook stays installed while > 0
// `python -m pijit run`: code under these directories (the script's) is a capture candidate.
bool g_auto = false;
std::vector<std::string> g_auto_dirs;
JitOptions g_auto_opts;
std::string g_library_prefix;

enum class GraphFailure { None, Rerunnable, Final };

// (one thread-local: each a dlopened module reads costs a call, and the hit path reads these)
struct ThreadJit {
  PyCodeObject* expect = nullptr;  // the code the innermost jitted call is about to enter
  const JitOptions* options = nullptr;
  bool busy = false;               // capturing: every frame entered meanwhile runs eagerly
  PyCodeObject* eager = nullptr;   // the next frame of this code runs eagerly (a frameless call's graph raised)
  GraphFailure graph_failure = GraphFailure::None;  // how the last graph run failed (note_graph_failure)
  StackBounds stack;  // this thread's stack, read once (stack_read): the frameless call's check
  bool stack_read = false;
};
thread_local ThreadJit t_jit;
// t_jit's address computed once where a function holds it: GCC otherwise recomputes a dlopened
// module's thread-local address (a call) at each access after a call.
inline ThreadJit& thread_jit() {
  ThreadJit* p = &t_jit;
  asm("" : "+r"(p));
  return *p;
}

// Every CodeState not yet freed (release_code_states and pinned_code_states list them). CPython
// calls each co_extra user's free function while a code object dies without clearing the slots,
// and another user's free function may run Python code that enters the hook for that same dying
// code: free_state empties the slot itself, so code_state() never hands out a freed state.
absl::flat_hash_set<CodeState*> g_live_states;
bool g_released = false;  // release_code_states ran: the interpreter is finalizing

void free_state(void* p) {
  // CPython calls free functions for empty slots too; and only a live state is ours to delete.
  auto* st = static_cast<CodeState*>(p);
  if (!st || !g_live_states.erase(st)) return;
  // Python code that runs later while the code object dies (another co_extra user's free function)
  // reads an empty slot, not a freed state.
  py::clear_code_extra_slot(st->code, g_extra_index, st);
  delete st;
}

void log(const char* what, const std::string& text);

}  // namespace

void log_text(const char* what, const std::string& text) { log(what, text); }

bool set_capture_busy(bool busy) {
  const bool old = t_jit.busy;
  t_jit.busy = busy;
  return old;
}

bool log_enabled(const char* what) {
  const std::string& l = g_config.log;
  if (l.empty()) return false;
  if (l.find("all") != std::string::npos) return true;
  // whole names in the comma-separated list: "recompiles" must not turn on "recompiles_verbose"
  const std::string key = std::strcmp(what, "graphs") == 0 ? "graph" : what;
  for (size_t a = 0; a <= l.size();) {
    size_t b = l.find(',', a);
    if (b == std::string::npos) b = l.size();
    std::string item = l.substr(a, b - a);
    if (item == "graphs") item = "graph";
    if (item == key) return true;
    if (item == "graph" && key == "passes") return true;  // (the IR after each pass is the graph's too)
    a = b + 1;
  }
  return false;
}

namespace {

void log(const char* what, const std::string& text) {
  if (!log_enabled(what)) return;
  PySys_FormatStderr("[pijit %s] %s\n", what, text.c_str());  // no 1000-byte cut
}

std::string where(PyCodeObject* co);

// Options of a frame that is a candidate only because of stress mode (or a resume function made
// while capturing one): its messages are quiet, and level 2 breaks even without a graph.
bool stress_only(const JitOptions& opt) { return opt.stress || (&opt == &g_config.defaults && g_stress); }

// PIJIT_LOGS=bytecode: code as dis shows it, under `label` ("original", "rewritten", ...) and
// the function it belongs to.
void log_bytecode(PyCodeObject* co, PyObject* code, const char* label) {
  if (!log_enabled("bytecode")) return;
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  bool busy = t_jit.busy;
  t_jit.busy = true;
  py::Ref dis(PyImport_ImportModule("dis"));
  py::Ref text(dis ? PyObject_CallMethod(dis.get(), "Bytecode", "O", code) : nullptr);
  py::Ref s(text ? PyObject_CallMethod(text.get(), "dis", nullptr) : nullptr);
  if (s && PyUnicode_Check(s.get())) log("bytecode", label + (" " + where(co)) + ":\n" + py::text(s.get()));
  PyErr_Clear();
  t_jit.busy = busy;
  PyErr_Restore(t, v, tb);
}

// pijit's own messages go to logging.getLogger("pijit") (WARNING: shown on stderr by logging's
// last-resort handler unless the program configures logging), never through `warnings`, so that
// `-W error` or catch_warnings never turn them into the program's exceptions. Frames that logging
// runs are not captured, and a pending exception survives.
void report(int level, const std::string& msg) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  bool busy = t_jit.busy;
  t_jit.busy = true;
  py::Ref mod(PyImport_ImportModule("logging"));
  py::Ref logger(mod ? PyObject_CallMethod(mod.get(), "getLogger", "s", "pijit") : nullptr);
  py::Ref r(logger ? PyObject_CallMethod(logger.get(), "log", "is", level, msg.c_str()) : nullptr);
  if (!r) PyErr_Clear();
  t_jit.busy = busy;
  PyErr_Restore(t, v, tb);
}
constexpr int kLogWarning = 30;

std::string where(PyCodeObject* co) {
  return py::text(co->co_name) + " (" + py::text(co->co_filename) + ":" +
         std::to_string(co->co_firstlineno) + ")";
}

// fullgraph=True (or GRAPH_MODE) met a refusal or a break: CaptureError, whose fields say which
// code and why (`code`, `reason_id`, `record`: what jit_stats' break_records holds; None where the
// reason has no record), so callers decide on fields, not on the message's text.
void raise_capture_error(PyCodeObject* co, const std::string& why, const BreakRecord* rec) {
  std::string message = "pijit cannot capture " + where(co) + " as one graph (fullgraph=True or GRAPH_MODE): " + why;
  py::Ref text(PyUnicode_DecodeUTF8(message.data(), message.size(), "replace"));
  py::Ref err(text ? PyObject_CallFunctionObjArgs(g_capture_error, text.get(), nullptr) : nullptr);
  py::Ref record(rec ? break_record_dict(*rec) : (Py_INCREF(Py_None), Py_None));
  py::Ref id(rec ? PyUnicode_FromString(rec->id.c_str()) : (Py_INCREF(Py_None), Py_None));
  if (!err || !record || !id || PyObject_SetAttrString(err.get(), "code", reinterpret_cast<PyObject*>(co)) < 0 ||
      PyObject_SetAttrString(err.get(), "reason_id", id.get()) < 0 ||
      PyObject_SetAttrString(err.get(), "record", record.get()) < 0)
    return;  // (that error is pending instead)
  PyErr_SetObject(g_capture_error, err.get());
}

// (file names and the directories they are compared with are both py::text: a prefix stays a prefix)
bool is_library_frame(PyCodeObject* co) {
  return !g_library_prefix.empty() && py::text_starts_with(co->co_filename, g_library_prefix);
}

// `python -m pijit run`: the script's own code, not the standard library's nor pijit's.
bool auto_candidate(PyCodeObject* co) {
  if (!PyUnicode_Check(co->co_filename) || is_library_frame(co)) return false;
  const std::string file = py::text(co->co_filename);
  for (const std::string& d : g_auto_dirs)
    if (file.compare(0, d.size(), d) == 0) return true;
  return false;
}

// Runs `code` in a shadow frame that took f's fast locals over. When its graph failed before
// anything observable ran (GraphFailure::Rerunnable: it only read guarded paths into temporaries)
// and the caller runs f eagerly then (may_rerun), f gets its locals back.
// 3.11 (py::kRunInPlacePositional): a call of the code with f's arguments moved into it (a
// rerunnable graph failure gives them back: py::give_back_args from the graph runner's call); the
// hook hands the frame that call enters straight to CPython (t_in_place: rewritten code is never
// a candidate).
thread_local PyCodeObject* t_in_place = nullptr;
PyObject* run_in_shadow(PyThreadState* ts, py::Frame* f, PyObject* code, bool may_rerun = false) {
  if (py::kRunInPlacePositional) {
    t_in_place = reinterpret_cast<PyCodeObject*>(code);
    PyObject* r = py::run_in_place(ts, f, t_in_place);
    t_in_place = nullptr;
    return r;
  }
  py::Frame* shadow = py::shadow_frame(ts, f, reinterpret_cast<PyCodeObject*>(code));
  if (!shadow) return nullptr;
  PyObject* r = py::eval_frame_default(ts, shadow, 0);
  if (!r && may_rerun && t_jit.graph_failure == GraphFailure::Rerunnable) py::give_back_locals(f, shadow);
  else if (!r) py::drop_resume_caller_entry(shadow);
  Py_DECREF(shadow);
  return r;
}

__attribute__((noinline)) void count_default(CodeState* st, const std::string& why) {
  if (st) ++st->frames_default;
  ++g_stats.frames_default;
  if (!why.empty()) ++g_stats.fallback_reasons[why];
  ++g_stats.default_reasons[why.empty() ? "not a candidate" : why];
}

__attribute__((noinline, cold)) PyObject* run_default_traced(PyThreadState* ts, py::Frame* f, const std::string& why) {
  trace::Span span("eager", where(py::frame_code(f)));
  span.set_args("\"why\": " + trace::quote(why.empty() ? "not a candidate" : why));
  return py::eval_frame_default(ts, f, 0);
}

PyObject* run_default(PyThreadState* ts, py::Frame* f, CodeState* st, const std::string& why) {
  count_default(st, why);
  if (trace::on()) return run_default_traced(ts, f, why);
  return py::eval_frame_default(ts, f, 0);
}

// A frame capture refused runs as it is; at stress level 2 through pijit's re-assembled bytecode,
// to exercise the assembler and shadow frames on every code capture meets.
PyObject* run_refused(PyThreadState* ts, py::Frame* f, CodeState* st, const std::string& why) {
  if (!g_stress_reassemble) return run_default(ts, f, st, why);
  if (!st->reassembled) {
    st->reassembled = codegen::reassemble(py::frame_code(f));
    if (st->is_resume || st->is_loop_body) py::note_continuation_code(st->reassembled);
    if (!st->reassembled) {
      PyErr_Clear();
      return run_default(ts, f, st, "reassembly failed");
    }
  }
  ++st->frames_rewritten;
  ++g_stats.frames_rewritten;
  ++g_stats.fallback_reasons[why];
  return run_in_shadow(ts, f, st->reassembled);
}

// Why a call whose graph raised before anything observable ran is run again by the interpreter.
const std::string kGraphRaised = "its graph raised; the call runs eagerly (the interpreter's exception)";

__attribute__((noinline, cold)) PyObject* rerun_after_graph_failure(PyThreadState* ts, py::Frame* f, CodeState* st) {
  t_jit.graph_failure = GraphFailure::None;
  PyErr_Clear();
  ++st->graph_failures;
  log("breaks", "graph of " + where(py::frame_code(f)) + " raised; the call runs eagerly");
  return run_default(ts, f, st, kGraphRaised);
}

PyObject* run_entry(PyThreadState* ts, py::Frame* f, CodeState* st, CacheEntry& e) {
  ++e.hits;
  if (e.code) {
    ++st->frames_rewritten;
    ++g_stats.frames_rewritten;
    if (e.graph) ++g_stats.frames_captured;
    t_jit.graph_failure = GraphFailure::None;
    PyObject* r = run_in_shadow(ts, f, e.code, e.graph != nullptr);
    // The rewritten code does nothing observable before its graph call (it reads guarded paths),
    // and the original frame has its locals back (run_in_shadow; 3.11: the graph runner's call):
    // running it now is exactly the eager call.
    if (!r && e.graph && t_jit.graph_failure == GraphFailure::Rerunnable) return rerun_after_graph_failure(ts, f, st);
    t_jit.graph_failure = GraphFailure::None;
    return r;
  }
  return run_refused(ts, f, st, e.reason);
}

void count_direct_hit(CodeState* st, CacheEntry& e) {
  ++e.hits;
  ++st->frames_rewritten;
  ++st->frames_direct;
  ++g_stats.frames_rewritten;
  ++g_stats.frames_captured;
  ++g_stats.frames_direct;
}

// The objects a direct call's guard check hands out (its graph inputs): on the stack for a model of
// up to a few hundred parameters, where a heap block per call would cost more than the check.
struct DirectObjs {
  static constexpr size_t kOnStack = 256;
  PyObject* small[kOnStack];
  std::vector<PyObject*> big;
  PyObject** room(size_t n) {
    if (n <= kOnStack) return small;
    big.resize(n);
    return big.data();
  }
};

// d's graph on `objs` (references it drops) and the return value built from its outputs; nullptr
// on failure, with *rerun set when the graph failed before anything observable ran.
// (noipa, where the compiler has it: the caller's ThreadJit reference is used, not t_jit read
// again in a specialised copy)
#if defined(__has_attribute) && __has_attribute(noipa)
__attribute__((noipa))
#else
__attribute__((noinline))
#endif
PyObject* run_direct_graph(const DirectCall& d, PyObject** objs, bool* rerun, ThreadJit& jit) {
  jit.graph_failure = GraphFailure::None;
  static PyObject* const no_outputs = PyTuple_New(0);
  PyObject* r = nullptr;
  if (d.one_output) {  // (no outputs tuple)
    PyObject* o = run_graph1(d.runner.get(), objs, static_cast<Py_ssize_t>(d.num_inputs));
    r = o ? direct_return_output(d.ret, o) : nullptr;
  } else {
    PyObject* outputs = d.runner ? run_graph(d.runner.get(), objs, static_cast<Py_ssize_t>(d.num_inputs))
                                 : (Py_INCREF(no_outputs), no_outputs);
    r = outputs ? direct_return(d.ret, outputs, objs) : nullptr;
    Py_XDECREF(outputs);
  }
  for (size_t k = 0; k < d.nodes.size(); ++k) Py_DECREF(objs[k]);
  *rerun = !r && jit.graph_failure == GraphFailure::Rerunnable;
  jit.graph_failure = GraphFailure::None;
  return r;
}

// An entry's direct call (runtime/direct_call.h), `objs` the objects its guard check handed out
// (references it drops). f still has its locals: when the graph fails before anything observable
// ran, f runs eagerly, exactly the eager call.
PyObject* run_direct(PyThreadState* ts, py::Frame* f, CodeState* st, CacheEntry& e, PyObject** objs) {
  count_direct_hit(st, e);
  // (held: the return value's __class__ store may run library code, which may reset the cache)
  const std::shared_ptr<DirectCall> hold = e.direct;
  bool rerun = false;
  PyObject* r = run_direct_graph(*hold, objs, &rerun, t_jit);
  if (rerun) {
    PyErr_Clear();
    ++st->graph_failures;
    log("breaks", "graph of " + where(py::frame_code(f)) + " raised; the call runs eagerly");
    return run_default(ts, f, st, kGraphRaised);
  }
  if (!r) py::traceback_here(f);  // the function's line in the traceback, as its rewritten code's frame gave
  return r;
}

// Guards run with the hook quiet: a path through a mapping or attribute may run Python code
// (a library type's __getattr__), and no frame it enters may capture or count. With `out`, a
// passing check hands out the objects of the nodes named to keep_resolved (GuardTree::check).
bool quiet_check(const guards::GuardTree& g, py::Frame* f, guards::GuardFailure* why, PyObject** out = nullptr) {
  bool busy = t_jit.busy;
  t_jit.busy = true;
  const bool profile = g_config.guard_perf;
  bool ok;
  if (profile) {
    std::vector<guards::GuardFailure> failures;
    ok = g.check_all(f, why ? &failures : nullptr, true);
    if (why && !failures.empty()) *why = failures.front();
  } else {
    ok = g.check(f, why, out);  // (guard_perf never hands out)
  }
  t_jit.busy = busy;
  return ok;
}

// Every failing guard (GuardTree::check_all), read as quiet_check reads them.
std::vector<guards::GuardFailure> quiet_failures(const guards::GuardTree& g, py::Frame* f) {
  std::vector<guards::GuardFailure> all;
  const bool busy = t_jit.busy;
  t_jit.busy = true;
  g.check_all(f, &all, false);
  t_jit.busy = busy;
  return all;
}

// Builds the cache entry for this frame's guards: a graph, or an eager refusal with its reason.
// Returns false with a Python exception set when fullgraph insists and capture failed.
// The user functions a graph break or a refusal leaves to the interpreter, that did tensor work
// while inlined, are captured in turn when it calls them (with this jit's options).
void mark_callees(const std::vector<PyCodeObject*>& callees, PyCodeObject* co, const JitOptions& opt) {
  for (PyCodeObject* callee : callees) {
    CodeState* cs = callee != co ? code_state(callee, true) : nullptr;
    if (!cs) {
      PyErr_Clear();
      continue;
    }
    if (cs->candidate) continue;
    auto copy = std::make_shared<JitOptions>(opt);
    copy->stress = stress_only(opt);
    copy->fullgraph = false;  // the user asked for fullgraph on the jitted function, not on what it calls
    copy->capture.first_break_index = 0;  // (a resume function's prologue is not the callee's)
    cs->candidate = std::move(copy);
    g_resume_codes = true;
  }
}

// Code a rewritten frame calls (a resume function, a loop body): a capture candidate wherever it
// runs, with the options of the jit that made it. Capture may not break in its prologue (putting
// its arguments in place, then jumping into the original code): it would resume where it began.
void make_candidate(PyObject* code, const JitOptions& opt, bool loop_body) {
  CodeState* rs = code_state(reinterpret_cast<PyCodeObject*>(code), true);
  if (!rs) {
    PyErr_Clear();
    return;
  }
  auto copy = std::make_shared<JitOptions>(opt);
  copy->stress = stress_only(opt);
  if (loop_body) copy->fullgraph = false;
  // Its own prologue's end, not the one of the resume function whose capture made it (whose
  // options `opt` may be): a shorter prologue's index would let it break inside its own prologue,
  // resume where it began, and do so again one frame deeper on every call.
  copy->capture.first_break_index = 0;
  py::DecodeResult d = py::decode_code(code);
  // (the prologue ends with its jump into the original code, or a resume function's call that
  // raises into its handlers: codegen's resume_original)
  for (size_t k = 0; k < d.instructions.size() && !copy->capture.first_break_index; ++k) {
    const py::Opcode op = d.instructions[k].op;
    if (op == py::Opcode::JUMP_ABSOLUTE || op == py::Opcode::JUMP_FORWARD ||
        (!loop_body && (op == py::Opcode::CALL_FUNCTION || op == py::Opcode::CALL)))
      copy->capture.first_break_index = static_cast<int>(k) + 1;  // (3.11's jump is relative)
  }
  rs->candidate = std::move(copy);
  py::note_continuation_code(code);
  rs->is_resume = !loop_body;
  rs->is_loop_body = loop_body;
  g_resume_codes = true;
}

// A refusal inside a loop: the interpreter runs the loop, its body a function of its own (shared
// by every entry refused in that loop) that is captured like a resume function. The outlined code
// means what the original means for any input, so the entry needs no guards.
// One resume function per (offset, layout) of co, shared by every entry that breaks (or leaves an
// outlined loop) there; a capture candidate with this jit's options.
codegen::ResumeMaker resume_maker(PyCodeObject* co, CodeState* st, const JitOptions& opt, CacheEntry* out) {
  return [co, st, &opt, out](int offset, int depth, const std::vector<char>& bound, int line,
                             const std::vector<codegen::BlockPlan>& blocks, const std::vector<int>& nulls,
                             bool raise_top) -> PyObject* {
    // (the blocks open at an offset are fixed; the NULLs on its stack are where the method pairs
    // are, which the layout names)
    PyObject*& rc = st->resume_codes[{offset, depth, bound, nulls, raise_top}];
    if (!rc) {
      rc = codegen::emit_resume_code(co, offset, depth, bound, line, blocks, nulls, raise_top);
      if (!rc) {
        st->resume_codes.erase({offset, depth, bound, nulls, raise_top});
        return nullptr;
      }
      make_candidate(rc, opt, false);
    }
    out->resumes.push_back(reinterpret_cast<PyCodeObject*>(rc));
    Py_INCREF(rc);
    return rc;
  };
}

bool outline_entry(PyCodeObject* co, CodeState* st, const JitOptions& opt, const CaptureResult& r, CacheEntry* out) {
  codegen::OutlinedLoop loop;
  std::string why;
  if (!codegen::outline_loop(co, r.loop_offset, &loop, &why, resume_maker(co, st, opt, out))) {
    log("breaks", "the loop of " + where(co) + " around line " + std::to_string(r.line) + " runs as it is: " + why);
    return false;
  }
  auto& slot = st->loop_codes[loop.head];
  if (!slot.first) {
    slot = {loop.outer.release(), loop.body.release()};
    make_candidate(slot.second, opt, true);
    log_bytecode(co, reinterpret_cast<PyObject*>(co), "original");
    log_bytecode(co, slot.first, "rewritten");
    log_bytecode(co, slot.second, "loop body of");
  }
  Py_INCREF(slot.first);
  out->code = slot.first;
  if (st->is_resume || st->is_loop_body) py::note_continuation_code(out->code);
  out->resumes.push_back(reinterpret_cast<PyCodeObject*>(slot.second));
  out->guards = std::make_shared<guards::GuardTree>();
  out->loop_text = py::text(co->co_filename) + ":" + std::to_string(loop.line);
  log("breaks", "the loop at " + out->loop_text + " runs each iteration as a function (" + r.reason_text() + ")");
  return true;
}

// A recompile's lesson from an entry's failing guards. Each size that changed gets a symbol (sizes
// 0 and 1 stay exact), each Python number that changed becomes a graph input where it meets a
// tensor. Every failing guard, not the first only: two inputs whose batch size changed together
// would otherwise take a recompile each; and every entry's, so that entries which differ in kind
// besides (a dtype) do not hide a changing size.
void learn_dynamic(PyCodeObject* co, CodeState* st, const std::vector<guards::GuardFailure>& failures) {
  for (const guards::GuardFailure& g : failures) {
    if (g.dim >= 0 && st->dynamic_dims.insert(g.tensor_path + "#" + std::to_string(g.dim)).second)
      log("dynamic", where(co) + ": " + g.tensor_path + ".shape[" + std::to_string(g.dim) + "] changed (" + g.before +
                         " -> " + g.after + "): the recompile makes it dynamic");
    if (g.scalar && st->dynamic_scalars.insert(g.path).second)
      log("dynamic", where(co) + ": " + g.path + " changed (" + g.before + " -> " + g.after +
                         "): the recompile makes it a graph input where it meets a tensor");
  }
}

// What keeps changing, and the control that would stop the recompiles (for the recompile-limit
// messages).
std::string remedy(const guards::GuardFailure& why, const JitOptions& opt) {
  if (why.dim >= 0)
    return opt.dynamic == 0 ? ". A tensor size keeps changing: jit(..., dynamic=None) (the default) or dynamic=1 makes "
                              "it symbolic, as input_signature with None there does"
                            : ". A tensor size keeps changing and Python code uses it, so each size is its own graph "
                              "(PIJIT_LOGS=dynamic and jit_stats(fn)['entries'][k]['dynamic'] say where)";
  if (why.scalar)
    return opt.dynamic == 0 ? ". A Python number keeps changing: jit(..., dynamic=None) (the default) or "
                              "pijit.mutable(value) makes it a graph input where it meets a tensor"
                            : ". A Python number keeps changing and Python code uses its value (a branch, a size, "
                              "arithmetic on numbers), so each value is its own graph (PIJIT_LOGS=dynamic says where); "
                              "pass it as a Tensor to keep one graph";
  return "";
}

// The module name a code's entries are reported (and its artifact keyed) under.
void note_module(py::Frame* f, CodeState* st) {
  if (!st->module.empty()) return;
  PyObject* g = py::frame_globals(f);
  PyObject* m = g && PyDict_Check(g) ? PyDict_GetItemString(g, "__name__") : nullptr;
  st->module = m && PyUnicode_Check(m) ? py::text(m) : "?";
}

// Whether this code's graph entries go to (and come from) the persistent compile cache: not under
// stress (whose breaks are made up), not for code pijit made (its key would be another process's).
bool disk_cache_on(const CodeState* st, const JitOptions& opt) {
  return !g_stress && !stress_only(opt) && !st->is_resume && !st->is_loop_body;
}

// Entries are read back from it unless what capture and the passes do was asked for (their logs,
// a dump) or capture decisions were forgotten (pijit.reset: the next call captures): those
// capture, and still write.
bool g_disk_reads = true;
bool disk_reads_on(CodeState* st) {
  return g_disk_reads && !log_enabled("graph") && !log_enabled("passes") && !log_enabled("codegen") &&
         dump_folder(st).empty();
}

// What of the jit's options a captured entry depends on (part of the artifact's key).
std::string options_key(const JitOptions& opt) {
  std::string sig;
  for (const std::string& d : opt.signature_dims) sig += d + ",";
  // (and what decides the passes' output, which the artifact keeps too)
  const char* passes = std::getenv("PIJIT_PASSES");
  const char* eager_graph = std::getenv("PIJIT_DEBUG_EAGER_GRAPH");
  return std::string("passes=") + (passes ? passes : "-") + " eager_graph=" + (eager_graph ? eager_graph : "-") +
         " fullgraph=" + std::to_string(opt.fullgraph) + " dynamic=" + std::to_string(opt.dynamic) + " signature=" + sig +
         " inline=" + std::to_string(opt.capture.inline_depth) + " budget=" + std::to_string(opt.capture.instruction_budget) +
         " loops=" + std::to_string(opt.capture.loop_limit);
}

// `loaded`: an entry the compile cache gave (disk_take) instead of a capture.
bool build_entry(py::Frame* f, CodeState* st, const JitOptions& opt, CacheEntry* out,
                 CaptureResult* loaded = nullptr, std::shared_ptr<graph::Graph> optimized = nullptr,
                 const StoredCode* stored = nullptr) {
  PyCodeObject* co = py::frame_code(f);
  st->mode = CodeState::Building;
  t_jit.busy = true;
  capture::CaptureOptions copt = opt.capture;
  if (!loaded) {  // (a loaded entry has no break: its code is not decoded for this)
    if (st->inspects_frame < 0) st->inspects_frame = codegen::inspects_frame(co);
    copt.allow_breaks = !opt.fullgraph && !st->inspects_frame;  // (its frame must stay its own)
  }
  // Stress level 2 breaks on any code, to exercise breaks and resumption everywhere; a function
  // the user jitted keeps its own behaviour (graph and break counts) under stress.
  copt.break_without_graph = g_stress_breaks && stress_only(opt);
  copt.stress_only = stress_only(opt);
  st->dynamic_dims.insert(opt.signature_dims.begin(), opt.signature_dims.end());
  if (opt.dynamic != 0 || !opt.signature_dims.empty()) copt.dynamic_dims = &st->dynamic_dims;
  copt.dynamic_scalars = &st->dynamic_scalars;  // (only mutable() puts paths there under dynamic=0)
  copt.dynamic_all = opt.dynamic == 1;
  note_module(f, st);
  const auto t0 = std::chrono::steady_clock::now();
  CaptureResult r;
  if (loaded) {
    r = std::move(*loaded);
    out->from_disk = true;
    log("graph", "loaded " + where(co) + " from the compile cache: " + std::to_string(r.graph->nodes().size()) + " ops");
  } else {
    trace::Span span("capture", where(co));
    r = capture_frame(f, copt);
    if (span.active())
      span.set_args("\"ops\": " + std::to_string(r.ops_seen) + ", \"result\": " +
                    trace::quote(r.ok ? (r.broke ? "graph, then a break: " + r.reason_text() : "graph") : r.reason_text()));
  }
  const auto t1 = std::chrono::steady_clock::now();
  out->capture_ns = loaded ? 0 : std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  // (written before compiling: the passes may rewrite what capture made)
  std::string blob = !loaded && r.ok && !st->disk->path.empty() ? disk_blob(r) : "";
  st->capture_ns += out->capture_ns;
  t_jit.busy = false;
  if (r.interrupted) {  // nothing was decided: the next call captures again
    st->mode = st->entries.empty() ? CodeState::Candidate : CodeState::Compiled;
    return false;
  }
  st->mode = CodeState::Compiled;
  ++st->compiles;
  const bool has_graph = std::any_of(st->entries.begin(), st->entries.end(), [](const CacheEntry& e) { return e.graph != nullptr; });
  if ((&opt == &g_auto_opts || st->is_resume || st->is_loop_body) && r.ops_seen == 0 && !r.broke && !has_graph) {
    // `pijit run`, and code pijit made (a resume function, a loop body): code that does no tensor
    // work runs at the interpreter's speed from now on (guards on the Python values it folded
    // would recompile it for every new value: a loop's counter, a running total). Not code whose
    // other paths made a graph: a capture that stopped before any op on a new path (a handler
    // that prints) says nothing of those.
    st->mode = CodeState::Skip;
    st->skip_reason = "no tensor work";
    out->guards = r.guards;
    out->reason = st->skip_reason;  // this call too runs as it is
    return true;
  }
  if (r.ok) {
    const auto c0 = std::chrono::steady_clock::now();
    GraphDebug debug;
    debug.fault = test_fault(st->module, co);
    if (!dump_folder(st).empty()) debug.dump_prefix = dump_folder(st) + "/entry" + std::to_string(st->dumped_entries);
    for (const std::string& p : r.mutable_paths) st->dynamic_scalars.insert(p);  // a later plain number there too
    py::Ref runner(new_graph_runner(r.graph, where(co), debug, r.symbolic_dims, r.scalar_inputs, r.sweeps, r.symbolic_attrs,
                                    std::move(optimized)));
    st->compile_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - c0).count();
    out->plan = runner_plan(runner.get());
    out->shapes = runner_shapes(runner.get());
    out->dynamic_notes = r.dynamic_notes;
    for (const std::string& note : r.dynamic_notes) log("dynamic", where(co) + ": " + note);
    // (an entry from the compile cache brings the bytecode emitting would make from it again)
    PyObject* code = runner && stored ? disk_code(*stored, runner.get(), co) : nullptr;
    if (!code && runner) {
      codegen::ResumeMaker make_resume = resume_maker(co, st, opt, out);
      code = codegen::emit_graph_code(co, *r.guards, r.plan, runner.get(), make_resume);
    }
    out->compile_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - c0).count();
    if (code) {
      log_bytecode(co, reinterpret_cast<PyObject*>(co), "original");
      log_bytecode(co, code, "rewritten");
      for (PyCodeObject* rc : out->resumes) log_bytecode(co, reinterpret_cast<PyObject*>(rc), "resume function of");
    } else {
      out->resumes.clear();
    }
    if (!code && loaded) {  // (a stored entry this build cannot compile: capture as if there were none)
      PyErr_Clear();
      out->resumes.clear();
      --st->compiles;
      st->mode = st->entries.empty() ? CodeState::Candidate : CodeState::Compiled;
      log("graph", "the compile cache's entry for " + where(co) + " did not compile here: capturing");
      return false;
    }
    if (!code) {
      PyObject *t, *v, *tb;
      PyErr_Fetch(&t, &v, &tb);
      py::Ref s(v ? PyObject_Str(v) : nullptr);
      r.ok = false;
      r.reason = Break::Internal;
      r.detail = std::string("emitting bytecode: ") + (s && PyUnicode_Check(s.get()) ? py::text(s.get()) : "?");
      Py_XDECREF(t);
      Py_XDECREF(v);
      Py_XDECREF(tb);
      PyErr_Clear();
    } else {
      out->code = code;
      if (st->is_resume || st->is_loop_body) py::note_continuation_code(code);
      // (a break before any graph work runs no graph: the interpreter runs the instruction capture
      // could not, the resume function the rest)
      out->graph = r.broke && r.ops_seen == 0 && !r.plan.calls_graph ? nullptr : r.graph;
      out->direct = make_direct_call(r.plan, *r.graph, runner.get(), *r.guards);
      out->effects = r.effects;
      if (out->graph && !blob.empty()) {
        disk_finish(&blob, out->plan->graph(), code, runner.get(), co);
        disk_add(st->disk.get(), blob, opt.recompile_limit);
      }
      // The fused kernels compile on the first launch: their code is added to the entry then (to a
      // stored entry that has none yet too: its first process's first launch did not return).
      std::string without_kernels = !blob.empty() ? std::move(blob) : stored ? stored->entry_without_kernels : "";
      if (out->graph && !without_kernels.empty())
        set_runner_first_run(runner.get(), [disk = std::weak_ptr<DiskState>(st->disk), entry = std::move(without_kernels)](
                                               const std::vector<FusedCode>& codes) {
          if (auto d = disk.lock()) disk_add_kernels(d.get(), entry, codes);
        });
      if (r.broke) {
        out->break_text = r.reason_text();
        st->break_reasons.push_back(out->break_text);
        st->break_chains.push_back(capture::chain_text(r.chain));
        st->break_records.push_back(break_record(r, BreakRecord::GraphBreak));
        out->record = st->break_records.back();
        ++st->breaks;
        log("breaks", "graph break: " + out->break_text + (r.chain.empty() ? "" : "\n  inlined: " + capture::chain_text(r.chain)));
      }
      if (log_enabled("graph"))  // (the texts are built only for a channel that is on)
        log("graph", "captured " + where(co) + ": " + std::to_string(r.graph->nodes().size()) + " ops\n" +
                          r.graph->to_string());
      if (!r.effects.empty() && log_enabled("side_effects")) {
        std::string text = "replayed after the graph of " + where(co) + ":";
        for (const std::string& e : r.effects) text += "\n  " + e;
        log("side_effects", text);
      }
    }
  }
  if (!r.ok || r.broke) mark_callees(r.callees, co, opt);
  out->guards = r.guards;
  out->serial = st->dumped_entries++;
  if (!dump_folder(st).empty())
    dump_entry_hook(dump_folder(st), out->serial, co, out->code, out->resumes,
                    r.guards ? r.guards->describe() : std::vector<std::string>{},
                    r.ok ? out->break_text : r.reason_text());
  if (r.guards && log_enabled("guards")) {
    std::string text = "installed for " + where(co) + ":";
    for (const std::string& g : r.guards->describe()) text += "\n  " + g;
    log("guards", text);
  }
  if (!r.ok) {
    std::string text = r.reason_text();
    out->reason = std::string(break_info(r.reason).id) + " " + break_info(r.reason).name;
    out->reason_text = text;
    st->break_reasons.push_back(text);
    st->break_chains.push_back(capture::chain_text(r.chain));
    st->break_records.push_back(break_record(r, BreakRecord::Refusal));
    out->record = st->break_records.back();
    log("breaks", text + (r.chain.empty() ? "" : "\n  inlined: " + capture::chain_text(r.chain)));
    if (r.loop_offset >= 0 && !opt.fullgraph && (r.ops_seen > 0 || copt.break_without_graph))
      outline_entry(co, st, opt, r, out);
    if (opt.fullgraph) {
      raise_capture_error(co, text, &out->record);
      return false;
    }
  }
  return true;
}

// While a gradient tape records (an eager grad call), a graph launch is one node on the tape whose
// backward replays the graph's gradient, recomputing its forward (runtime/jit_objects.cc): only a
// graph without impure ops (random numbers, batch norm's statistics) may run; otherwise the frame
// runs as it is, each op on the tape. (A jitted function that calls grad is captured whole.)
bool tape_safe(const CacheEntry& e) {
  return !tape_active() || !e.graph || !e.graph->has_impure_op();
}

// Recursion through jitted code nests the hook between interpreter frames, so the hook's frames
// are C stack every jitted level pays on top of plain Python's (runtime/stack_room.h). The cache
// hit path below keeps only what that call needs live across the nested evaluation; everything
// else (the guard lookup with its buffers, recompiles, building, messages) is in functions of
// their own, returned from before the frame runs.
#define PJ_COLD __attribute__((noinline, cold))

PJ_COLD PyObject* run_skipped(PyThreadState* ts, py::Frame* f, CodeState* st, const JitOptions& opt) {
  if (opt.fullgraph) {
    raise_capture_error(py::frame_code(f), "it runs eagerly for good (" + st->skip_reason + ")",
                        st->skip_record.id.empty() ? nullptr : &st->skip_record);
    return nullptr;
  }
  return run_refused(ts, f, st, st->skip_reason);
}

PJ_COLD PyObject* run_tape_unsafe(PyThreadState* ts, py::Frame* f, CodeState* st) {
  return run_default(ts, f, st, "a gradient tape records and the graph is impure");
}

enum class Lookup { Miss, Hit, Done };

// The reason a frame deep in a recursion runs as plain Python (py::stack_room_for_levels).
const std::string kLowStack = "C stack kept for the recursion limit's remaining levels";

// The guard checks over st's entries. Hit: st->entries.front() is the entry to run with
// run_entry. Done: *result is the call's result (a direct call ran, or an error was raised).
__attribute__((noinline)) Lookup lookup_entry(PyThreadState* ts, py::Frame* f, CodeState* st,
                                              const JitOptions& opt, PyObject** result) {
  PyCodeObject* co = py::frame_code(f);
  const int64_t g0 = trace::on() ? trace::now_ns() : -1;  // the lookup's span (guard checks)
  auto lookup_done = [&](const char* what) {
    if (g0 >= 0) trace::complete("guards", where(co), g0, trace::now_ns(), std::string("\"result\": \"") + what + "\"");
  };
  DirectObjs direct_objs;
  for (auto it = st->entries.begin(); it != st->entries.end(); ++it) {
    // (guard_perf times each check through check_all: such calls run the rewritten code)
    const DirectCall* direct =
        it->direct && !debug_switches().no_direct && !g_config.guard_perf ? it->direct.get() : nullptr;
    PyObject** objs = direct_objs.room(direct ? direct->nodes.size() : 0);
    const int64_t t0 = __builtin_expect(g_config.guard_timing, 0) ? trace::now_ns() : 0;
    const bool pass = quiet_check(*it->guards, f, nullptr, direct ? objs : nullptr);
    if (__builtin_expect(g_config.guard_timing, 0)) {
      it->guard_ns += trace::now_ns() - t0;
      ++it->guard_runs;
    }
    if (!pass) continue;
    auto drop_objs = [&] {
      if (direct)
        for (size_t k = 0; k < direct->nodes.size(); ++k) Py_DECREF(objs[k]);
    };
    // The cache is the code object's, shared by every jit of it: an entry another jit (or stress
    // mode) made for a refused capture runs eagerly, which fullgraph=True must not accept.
    if (opt.fullgraph && (!it->graph || !it->break_text.empty())) {
      drop_objs();
      raise_capture_error(co, it->break_text.empty() ? it->reason_text : it->break_text, it->record.id.empty() ? nullptr : &it->record);
      *result = nullptr;
      return Lookup::Done;
    }
    ++st->cache_hits;
    st->misses_in_a_row = 0;
    if (it != st->entries.begin()) st->entries.splice(st->entries.begin(), st->entries, it);
    lookup_done("hit");
    if (!tape_safe(st->entries.front())) {
      drop_objs();
      *result = run_tape_unsafe(ts, f, st);
      return Lookup::Done;
    }
    if (!direct) return Lookup::Hit;
    *result = run_direct(ts, f, st, st->entries.front(), objs);
    return Lookup::Done;
  }
  lookup_done("miss");
  return Lookup::Miss;
}

// A cache miss: the recompile's bookkeeping (or giving up on the code), then capture.
PJ_COLD PyObject* run_miss(PyThreadState* ts, py::Frame* f, CodeState* st, const JitOptions& opt) {
  PyCodeObject* co = py::frame_code(f);
  ++st->cache_misses;
  if (!st->entries.empty()) {
    guards::GuardFailure why;
    quiet_check(*st->entries.front().guards, f, &why);
    ++st->recompiles;
    st->recompile_reasons.push_back(why.text());
    log("recompiles", "recompiling " + where(co) + ": " + why.text());
    if (opt.dynamic != 0)
      for (const CacheEntry& e : st->entries) learn_dynamic(co, st, quiet_failures(*e.guards, f));
    if (log_enabled("recompiles_verbose")) {
      std::string text = "recompiling " + where(co) + ": every failing guard, per cache entry:";
      int k = 0;
      for (const CacheEntry& e : st->entries) {
        text += "\n  entry " + std::to_string(k++) + ":";
        for (const guards::GuardFailure& g : quiet_failures(*e.guards, f)) text += "\n    " + g.text();
      }
      log("recompiles_verbose", text);
    }
    // A full cache evicts its least recently hit entry: a working set that moves on (new shapes,
    // new instances) keeps being captured. Only a code whose calls never repeat a guard set (each
    // call a new constant) stops being captured, so that it does not capture on every call.
    if (++st->misses_in_a_row >= 4 * static_cast<int64_t>(opt.recompile_limit)) {
      st->mode = CodeState::Skip;
      st->skip_reason = std::string(break_info(Break::RecompileLimit).id) + " " + break_info(Break::RecompileLimit).name;
      std::string msg = "pijit: " + where(co) + " missed its cache " + std::to_string(st->misses_in_a_row) +
                        " calls in a row (recompile_limit=" + std::to_string(opt.recompile_limit) +
                        "); it runs eagerly from now on. Last guard failure: " + why.text() + remedy(why, opt);
      st->break_reasons.push_back(msg);
      st->break_chains.push_back("");
      st->break_records.push_back(runtime_record(Break::RecompileLimit, msg));
      st->skip_record = st->break_records.back();
      // Frames that are candidates only because of stress mode count it instead of warning (not
      // even at debug level: the program's own logging, which it may inspect, never sees them).
      if (!stress_only(opt)) report(kLogWarning, msg);
      return run_refused(ts, f, st, st->skip_reason);
    }
    if (static_cast<int>(st->entries.size()) >= opt.recompile_limit) {
      if (st->evictions++ == 0) {
        std::string msg = "pijit: " + where(co) + " has " + std::to_string(st->entries.size()) +
                          " cache entries (recompile_limit=" + std::to_string(opt.recompile_limit) +
                          "); from now on each recompile evicts the least recently used one. Guard failure: " +
                          why.text() + remedy(why, opt);
        if (!stress_only(opt)) report(kLogWarning, msg);
      }
      Py_XDECREF(st->entries.back().code);  // a frame running it holds its own reference
      st->entries.pop_back();
    }
  }
  {
    CacheEntry e;
    // The compile cache first: an entry a past process captured whose guards pass here.
    CaptureResult loaded;
    std::shared_ptr<graph::Graph> optimized;
    StoredCode stored;
    bool from_disk = false;
    if (disk_cache_on(st, opt)) {
      note_module(f, st);
      disk_read(co, st->disk.get(), st->module, options_key(opt));
      if (!st->disk->blobs.empty() && disk_reads_on(st)) {
        const bool busy = t_jit.busy;
        t_jit.busy = true;  // (binding and checking may run a library type's __getattr__)
        from_disk = disk_take(f, st->disk.get(), [&](const guards::GuardTree& g) { return quiet_check(g, f, nullptr); },
                              &loaded, &optimized, &stored);
        t_jit.busy = busy;
      }
    }
    if (!build_entry(f, st, opt, &e, from_disk ? &loaded : nullptr, std::move(optimized), from_disk ? &stored : nullptr)) {
      if (!from_disk || PyErr_Occurred()) return nullptr;
      CacheEntry fresh;  // (the stored entry did not compile here)
      if (!build_entry(f, st, opt, &fresh)) return nullptr;
      e = std::move(fresh);
    }
    st->entries.push_front(std::move(e));
  }
  if (!tape_safe(st->entries.front())) return run_tape_unsafe(ts, f, st);
  return run_entry(ts, f, st, st->entries.front());
}

PJ_COLD void drop_entries_for_no_cache(CodeState* st) {
  for (CacheEntry& e : st->entries) Py_XDECREF(e.code);  // a frame running it holds its own reference
  st->entries.clear();
}

int g_auto_verify = 0;  // run --verify's n (0: off)

// run --verify: this call of an auto-captured function, verified (pijit/_verify.py verify_frame)
// through a function rebuilt from the frame's code, globals, closure and bound arguments. Returns
// false (the frame runs as usual) where the frame cannot be rebuilt so: a generator, an argument
// a closure captures (its slot already moved into the cell).
PJ_COLD bool verify_frame(py::Frame* f, CodeState* st, PyObject** result) {
  PyCodeObject* co = py::frame_code(f);
  if (co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)) return false;
  const int nargs = co->co_argcount + co->co_kwonlyargcount + ((co->co_flags & CO_VARARGS) != 0) +
                    ((co->co_flags & CO_VARKEYWORDS) != 0);
  py::Ref values(PyTuple_New(nargs));
  if (!values) return *result = nullptr, true;
  for (int i = 0; i < nargs; ++i) {
    PyObject* v = py::frame_local(f, i);
    if (!v) return false;
    Py_INCREF(v);
    PyTuple_SET_ITEM(values.get(), i, v);
  }
  const int ncells = py::code_ncells(co), nfree = py::code_nfrees(co);
  py::Ref closure(nfree ? PyTuple_New(nfree) : (Py_INCREF(Py_None), Py_None));
  if (!closure) return *result = nullptr, true;
  for (int k = 0; k < nfree; ++k) {
    PyObject* cell = py::frame_cell(f, ncells + k);
    if (!cell) return false;
    Py_INCREF(cell);
    PyTuple_SET_ITEM(closure.get(), k, cell);
  }
  static PyObject* verify = nullptr;  // kept for the process once found (an import that failed is tried again)
  if (!verify) {
    py::Ref mod(PyImport_ImportModule("pijit._verify"));
    verify = mod ? PyObject_GetAttrString(mod.get(), "verify_frame") : nullptr;
  }
  if (!verify) return *result = nullptr, true;
  t_verifying = true;
  *result = PyObject_CallFunction(verify, "OOOOL", co, py::frame_globals(f), closure.get(), values.get(),
                                  static_cast<long long>(st->verify_calls));
  t_verifying = false;
  return true;
}

std::atomic<int> g_stance{0};
static_assert(sizeof(CodeState::stance_calls) / sizeof(int64_t) == static_cast<size_t>(Stance::Count), "a slot per stance");

// A call a stance runs eagerly (`why` in trace spans and the default-evaluator counts).
PJ_COLD PyObject* run_stance_eager(PyThreadState* ts, py::Frame* f, CodeState* st, Stance s) {
  ++st->stance_calls[static_cast<int>(s)];
  return run_default(ts, f, st, std::string("stance ") + kStanceNames[static_cast<int>(s)]);
}

PJ_COLD PyObject* fail_on_recompile(py::Frame* f, CodeState* st) {
  ++st->stance_calls[static_cast<int>(Stance::FailOnRecompile)];
  guards::GuardFailure why;
  quiet_check(*st->entries.front().guards, f, &why);
  if (PyErr_Occurred()) return nullptr;
  return py::fail(PyExc_RuntimeError, "pijit: " + where(py::frame_code(f)) +
                                          " would recompile, and the stance is 'fail_on_recompile' (guard failure: " +
                                          why.text() + ")");
}

}  // namespace

thread_local bool t_verifying = false;
void set_auto_verify(int every) { g_auto_verify = every; }

const char* const kStanceNames[static_cast<int>(Stance::Count)] = {
    "default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile"};
Stance stance() { return static_cast<Stance>(g_stance.load(std::memory_order_relaxed)); }
void set_stance(Stance s) { g_stance.store(static_cast<int>(s), std::memory_order_relaxed); }

namespace {

__attribute__((noinline)) PyObject* run_captured(PyThreadState* ts, py::Frame* f, const JitOptions& opt) {
  CodeState* st = code_state(py::frame_code(f), true);
  if (!st) return nullptr;
  if (__builtin_expect(g_auto_verify > 0, 0) && &opt == &g_auto_opts && !t_verifying && !st->is_resume &&
      !st->is_loop_body && ++st->verify_calls % g_auto_verify == 0) {
    PyObject* r = nullptr;
    if (verify_frame(f, st, &r)) return r;
  }
  // (stress mode's own candidates keep plain Python's behaviour whatever the stance says)
  const Stance s = stress_only(opt) ? Stance::Default : stance();
  if (__builtin_expect(s != Stance::Default, 0)) {
    if (s == Stance::ForceEager) return run_stance_eager(ts, f, st, s);
    if (s == Stance::EagerThenCompile && st->mode == CodeState::Candidate && !st->stance_warm) {
      st->stance_warm = true;
      return run_stance_eager(ts, f, st, s);
    }
  }
  if (st->mode == CodeState::Skip) return run_skipped(ts, f, st, opt);
  if (st->mode == CodeState::Building) return run_default(ts, f, st, "re-entered while capturing");
  if (debug_switches().no_cache && st->mode == CodeState::Compiled) drop_entries_for_no_cache(st);  // PIJIT_DEBUG_NO_CACHE
  PyObject* result = nullptr;
  switch (lookup_entry(ts, f, st, opt, &result)) {
    case Lookup::Hit: return run_entry(ts, f, st, st->entries.front());
    case Lookup::Done: return result;
    case Lookup::Miss: break;
  }
  // (a first capture is not a recompile: both stances let it compile)
  if (__builtin_expect(s != Stance::Default, 0) && !st->entries.empty()) {
    if (s == Stance::EagerOnRecompile) return run_stance_eager(ts, f, st, s);
    if (s == Stance::FailOnRecompile) return fail_on_recompile(f, st);
  }
  // (captured by a later call with more room: the miss is not counted)
  if (!py::stack_room_for_levels(ts, py::kCaptureStackExtra)) return run_default(ts, f, st, kLowStack);
  return run_miss(ts, f, st, opt);
}

// PIJIT_SKIP and PIJIT_ONLY: comma-separated patterns naming code objects capture leaves alone, or
// the only ones it may capture. A pattern is `module:name` (fnmatch wildcards; the name is the
// qualname's last part, which is all a 3.7/3.9 code object knows of it) or `file:line` (the line
// of the `def` or of a decorator on it; the file a path suffix). Resume functions and loop bodies
// follow their function.
struct CodeFilter {
  std::vector<std::pair<std::string, std::string>> skip, only;
  bool any = false;

  static std::vector<std::pair<std::string, std::string>> parse(const char* env) {
    std::vector<std::pair<std::string, std::string>> out;
    const char* v = std::getenv(env);
    if (!v) return out;
    std::string s(v), item;
    for (size_t i = 0; i <= s.size(); ++i) {
      if (i < s.size() && s[i] != ',') {
        item += s[i];
        continue;
      }
      const size_t colon = item.rfind(':');
      if (colon != std::string::npos && colon > 0) out.emplace_back(item.substr(0, colon), item.substr(colon + 1));
      item.clear();
    }
    return out;
  }
  CodeFilter() : skip(parse("PIJIT_SKIP")), only(parse("PIJIT_ONLY")), any(!skip.empty() || !only.empty()) {}

  // The line of the body's first instruction (3.11's prologue, RESUME and the rest, carries the
  // def's line).
  static int body_line(PyCodeObject* co) {
    py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(co));
    bool generator_prologue = false;
    for (const py::Instruction& in : d.instructions) {
      const bool prologue = in.op == py::Opcode::RESUME || in.op == py::Opcode::MAKE_CELL ||
                            in.op == py::Opcode::COPY_FREE_VARS || in.op == py::Opcode::RETURN_GENERATOR ||
                            (generator_prologue && in.op == py::Opcode::POP_TOP);
      generator_prologue = in.op == py::Opcode::RETURN_GENERATOR;
      if (!prologue) return in.line > 0 ? in.line : PyCode_Addr2Line(co, 0);
    }
    return PyCode_Addr2Line(co, 0);
  }
  static bool matches(const std::pair<std::string, std::string>& p, PyCodeObject* co, const char* module) {
    const std::string& a = p.first;
    const std::string& b = p.second;
    if (!b.empty() && std::all_of(b.begin(), b.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const std::string f = py::text(co->co_filename);
      // the def's line, or a decorator's, or any line of the signature: before the body's first
      const int line = std::atoi(b.c_str());
      return line >= co->co_firstlineno && line < std::max(co->co_firstlineno + 1, body_line(co)) &&
             f.size() >= a.size() && f.compare(f.size() - a.size(), a.size(), a) == 0;
    }
    const std::string name = b.substr(b.rfind('.') == std::string::npos ? 0 : b.rfind('.') + 1);
    return module && fnmatch(a.c_str(), module, 0) == 0 && fnmatch(name.c_str(), py::text(co->co_name).c_str(), 0) == 0;
  }

  bool excludes(py::Frame* f, PyCodeObject* co) const {
    PyObject* g = py::frame_globals(f);
    PyObject* m = g && PyDict_Check(g) ? PyDict_GetItemString(g, "__name__") : nullptr;
    const std::string module_text = m && PyUnicode_Check(m) ? py::text(m) : "";
    const char* module = m && PyUnicode_Check(m) ? module_text.c_str() : nullptr;
    for (const auto& p : skip)
      if (matches(p, co, module)) return true;
    if (only.empty()) return false;
    for (const auto& p : only)
      if (matches(p, co, module)) return false;
    return true;
  }
};

const CodeFilter& code_filter() {
  static const CodeFilter* filter = new CodeFilter;
  return *filter;
}

bool filtered_out(py::Frame* f, PyCodeObject* co) {
  const CodeFilter& cf = code_filter();
  if (!cf.any) return false;
  CodeState* st = code_state(co, true);
  if (!st) return false;
  if (st->filtered < 0) st->filtered = !st->is_resume && !st->is_loop_body && cf.excludes(f, co);
  return st->filtered == 1;
}

// The frameless direct call. A cache hit of function `func` whose newest entry is a direct call
// (runtime/direct_call.h), and whose frame would hold nothing but its positional arguments, runs
// its graph straight from the call's arguments: the guards' fast pass reads them where it would
// read the frame (guards::CallView), and no frame is made and no hook entered. Everything else
// goes the usual way, which decides as it always did: the first calls, a guard the fast pass
// cannot answer, tracers and profilers (they must see the call), capture in progress, stances,
// PIJIT_SKIP/ONLY, the debugging switches. A graph that raises (nothing observable ran) makes the
// call run eagerly in a frame made then, as run_direct does. Returns false when the call must go
// the usual way.
// (noinline: its buffers must not stay on the C stack under the nested call of every jitted
// recursion level, runtime/stack_room.h)
__attribute__((noinline)) bool run_frameless(PyCodeObject* co, const JitOptions& opt, PyObject* func,
                                             PyObject* const* args, Py_ssize_t nargs, PyObject** result) {
  constexpr int kNotPlain = CO_VARARGS | CO_VARKEYWORDS | CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR |
                            CO_ITERABLE_COROUTINE;
  if (nargs != co->co_argcount || co->co_kwonlyargcount || (co->co_flags & kNotPlain) || !(co->co_flags & CO_OPTIMIZED))
    return false;
  ThreadJit& jit = thread_jit();
  if (g_released || jit.busy || trace::on() || trace_context() || code_filter().any ||
      stance() != Stance::Default || g_config.guard_perf || debug_switches().no_direct || debug_switches().no_cache)
    return false;
  PyThreadState* ts = PyThreadState_GET();
  if (py::tracing_or_profiling(ts)) return false;
  CodeState* st = code_state(co, false);
  if (!st || st->mode != CodeState::Compiled || st->entries.empty() || py::code_ncells(co)) return false;
  CacheEntry& e = st->entries.front();
  if (!e.direct || !e.direct->frameless || !tape_safe(e) || (opt.fullgraph && (!e.graph || !e.break_text.empty())))
    return false;
  // (the usual way raises, or runs the frame eagerly, where the stack is short)
  if (__builtin_expect(!jit.stack_read, 0)) {
    jit.stack = stack_bounds();
    jit.stack_read = true;
  }
  const StackNow stack = stack_now(jit.stack);
  if (stack.room < py::kStackFloor || !py::stack_room_for_levels(ts, py::kRunStackExtra, stack)) return false;
  py::Ref code_held(reinterpret_cast<PyObject*>(co));  // (st is its: the graph's library code may drop the function)
  Py_INCREF(co);
  // (held: a path's Python code, a library class's __getattr__, may reset the cache)
  const std::shared_ptr<DirectCall> hold = e.direct;
  const std::shared_ptr<guards::GuardTree> guards = e.guards;
  DirectObjs direct_objs;
  PyObject** objs = direct_objs.room(hold->nodes.size());
  const guards::CallView view{args, static_cast<int>(nargs), func, 0};
  const int64_t t0 = __builtin_expect(g_config.guard_timing, 0) ? trace::now_ns() : 0;
  jit.busy = true;  // (quiet, as quiet_check: no frame a path enters captures or counts)
  const guards::GuardTree::Fast pass = guards->check_call(view, objs);
  jit.busy = false;
  if (pass != guards::GuardTree::Fast::Pass) return false;  // (the usual way checks again, and times that)
  if (__builtin_expect(g_config.guard_timing, 0) && !st->entries.empty() && st->entries.front().guards == guards) {
    st->entries.front().guard_ns += trace::now_ns() - t0;
    ++st->entries.front().guard_runs;
  }
  bool rerun = false;
  PyObject* r = run_direct_graph(*hold, objs, &rerun, jit);
  if (!r && rerun) {  // as run_direct: the call runs eagerly, its frame made now
    PyErr_Clear();
    ++st->graph_failures;
    log("breaks", "graph of " + where(co) + " raised; the call runs eagerly");
    if (!hook_enter()) {
      *result = py::vectorcall(func, args, static_cast<size_t>(nargs), nullptr);
      return true;
    }
    PyCodeObject* const outer = jit.eager;
    jit.eager = co;
    *result = py::vectorcall(func, args, static_cast<size_t>(nargs), nullptr);
    jit.eager = outer;
    hook_exit();
    return true;
  }
  if (r && !st->entries.empty() && st->entries.front().direct == hold) {
    ++st->cache_hits;
    st->misses_in_a_row = 0;
    count_direct_hit(st, st->entries.front());
    ++st->frames_frameless;
  }
  *result = r;
  return true;
}

// A candidate frame the interpreter runs as it is (a generator, a tracer, an exception thrown in),
// counted for stress mode and shown in the trace. (Out of pijit_eval_frame, whose own frame sits
// under every level of a recursion: it keeps only what the common paths need.)
PJ_COLD PyObject* run_candidate_eagerly(PyThreadState* ts, py::Frame* f, int throw_flag) {
  PyCodeObject* co = py::frame_code(f);
  const char* why = g_released                      ? "pijit released at exit"
                    : !(co->co_flags & CO_OPTIMIZED) ? "module or class body"
                    : py::frame_is_resumable(f)      ? "generator or coroutine frame"
                    : throw_flag                     ? "exception thrown into a frame"
                    : trace_context()                ? "an op recorder traces"
                                                     : "traced or profiled";
  // Stress statistics count every candidate frame once: a generator resumed is not a new frame.
  if (g_stress && !(py::frame_is_resumable(f) && py::frame_started(f))) {
    ++g_stats.frames_default;
    ++g_stats.fallback_reasons[why];
    ++g_stats.default_reasons[why];
  }
  if (!trace::on()) return py::eval_frame_default(ts, f, throw_flag);
  trace::Span span("eager", where(co));  // PIJIT_TRACE: a candidate the interpreter runs
  span.set_args("\"why\": " + trace::quote(why));
  return py::eval_frame_default(ts, f, throw_flag);
}

PJ_COLD PyObject* run_low_stack(PyThreadState* ts, py::Frame* f) {
  return run_default(ts, f, nullptr, kLowStack);
}

// The frame run_frameless made for a call whose graph raised: it runs eagerly.
PJ_COLD PyObject* run_eager_after_frameless(PyThreadState* ts, py::Frame* f) {
  t_jit.eager = nullptr;
  return run_default(ts, f, code_state(py::frame_code(f), false), kGraphRaised);
}

PyObject* pijit_eval_frame(PyThreadState* ts, py::Frame* f, int throw_flag) {
  const StackNow stack = stack_now();
  if (stack.room < py::kStackFloor) return py::raise_stack_exhausted();
  PyCodeObject* co = py::frame_code(f);
  if (py::kRunInPlacePositional) {
    py::release_moved_args(co);  // (3.11: a resume function's frame took its arguments over)
    if (co == t_in_place) {      // (3.11: rewritten code, called by run_in_shadow)
      t_in_place = nullptr;
      py::in_place_started(f);
      return py::eval_frame_default(ts, f, throw_flag);
    }
  }
  const JitOptions* opt = nullptr;
  if (__builtin_expect(co == t_jit.eager, 0)) return run_eager_after_frameless(ts, f);
  if (co == t_jit.expect) {
    opt = t_jit.options;
    t_jit.expect = nullptr;  // the same code entered again (recursion) runs as it is
  } else if (CodeState* cs = g_resume_codes && !t_jit.busy ? code_state(co, false) : nullptr; cs && cs->candidate) {
    opt = cs->candidate.get();  // a resume function
  } else if (g_stress && !t_jit.busy && !is_library_frame(co)) {
    opt = &g_config.defaults;
  } else if (g_auto && !t_jit.busy && (co->co_flags & CO_OPTIMIZED)) {
    CodeState* cs = code_state(co, true);
    if (cs && cs->auto_candidate == 0) cs->auto_candidate = auto_candidate(co) ? 1 : 2;
    if (cs && cs->auto_candidate == 1) {
      // No tensor work there: the interpreter's own speed (no statistics, no second lookup).
      if (cs->mode == CodeState::Skip && !g_stress) return py::eval_frame_default(ts, f, throw_flag);
      opt = &g_auto_opts;
    }
  }
  // Module and class bodies (no CO_OPTIMIZED) keep their names in f_locals, a dict a shadow frame
  // would not share: they always run as they are.
  // While a tracer is current (vmap, pijit's own code under capture) tensors are symbolic:
  // frames run as they are.
  if (opt && !g_released && !t_jit.busy && filtered_out(f, co)) opt = nullptr;  // PIJIT_SKIP / PIJIT_ONLY
  if (!opt || g_released || t_jit.busy || throw_flag || !(co->co_flags & CO_OPTIMIZED) || py::frame_is_resumable(f) ||
      py::tracing_or_profiling(ts) || trace_context()) {
    if (t_jit.busy) py::note_frame_ran(f);  // (library code capture runs)
    if (!opt || t_jit.busy || (!g_stress && !trace::on())) return py::eval_frame_default(ts, f, throw_flag);
    return run_candidate_eagerly(ts, f, throw_flag);
  }
  if (!py::stack_room_for_levels(ts, py::kRunStackExtra, stack)) {
    // (every level of a deep recursion from here: nothing of the hook's stays on the stack under it)
    if (trace::on()) return run_low_stack(ts, f);
    count_default(nullptr, kLowStack);
    return py::eval_frame_default(ts, f, throw_flag);
  }
  return run_captured(ts, f, *opt);
}

}  // namespace

PyObject* g_capture_error = nullptr;

CodeState::~CodeState() {
  for (auto& e : entries) Py_XDECREF(e.code);
  for (auto& rc : resume_codes) Py_XDECREF(rc.second);
  for (auto& lc : loop_codes) {
    Py_XDECREF(lc.second.first);
    Py_XDECREF(lc.second.second);
  }
  Py_XDECREF(reassembled);
}

static void reset_code_state(CodeState* st, std::set<CodeState*>* done) {
  if (!st || !done->insert(st).second) return;
  for (auto& rc : st->resume_codes) reset_code_state(code_state(reinterpret_cast<PyCodeObject*>(rc.second), false), done);
  for (auto& lc : st->loop_codes) reset_code_state(code_state(reinterpret_cast<PyCodeObject*>(lc.second.second), false), done);
  for (auto& e : st->entries) Py_XDECREF(e.code);  // a frame running it holds its own reference
  st->entries.clear();
  st->mode = CodeState::Candidate;
  st->skip_reason.clear();
  st->skip_record = BreakRecord();
  st->compiles = st->cache_hits = st->cache_misses = st->recompiles = st->evictions = st->breaks = 0;
  st->misses_in_a_row = st->frames_rewritten = st->frames_default = st->graph_failures = st->frames_direct = 0;
  st->frames_frameless = 0;
  st->capture_ns = st->compile_ns = 0;
  std::fill(std::begin(st->stance_calls), std::end(st->stance_calls), 0);
  st->stance_warm = false;
  st->recompile_reasons.clear();
  st->break_reasons.clear();
  st->break_chains.clear();
  st->break_records.clear();
  st->dynamic_dims.clear();
  st->dynamic_scalars.clear();
}

void reset_capture(PyCodeObject* co) {
  g_disk_reads = false;  // (forgotten means captured again: not read back from the compile cache)
  std::set<CodeState*> done;
  if (co) {
    reset_code_state(code_state(co, false), &done);
    return;
  }
  for (PinnedState& p : pinned_code_states()) reset_code_state(p.state, &done);
}

CodeState* code_state(PyCodeObject* co, bool create) {
  if (g_extra_index < 0) g_extra_index = py::request_code_extra_index(free_state);
  auto* st = static_cast<CodeState*>(py::code_extra_slot(co, g_extra_index));
  if (st) return st;  // (free_state empties the slot of a state it frees)
  // (a dying code object, whose free functions are running, gets no new state)
  if (!create || g_released || Py_REFCNT(co) == 0) return nullptr;
  st = new CodeState();
  st->code = co;
  if (!py::set_code_extra(reinterpret_cast<PyObject*>(co), g_extra_index, st)) {
    delete st;
    return nullptr;
  }
  g_live_states.insert(st);
  return st;
}

void release_code_states() {
  if (g_released) return;
  set_stress(0);
  g_released = true;
#if PJ_PY_CAPTURE_BUILT
  std::vector<CodeState*> states(g_live_states.begin(), g_live_states.end());
  for (CodeState* st : states) {
    if (!g_live_states.contains(st)) continue;  // freed meanwhile by a code object's death
    PyCodeObject* co = st->code;
    Py_INCREF(co);  // deleting the state may drop the last other reference to its code
    // 3.9 frees the slot's old value through free_state here; 3.7 leaves that to us.
    py::set_code_extra(reinterpret_cast<PyObject*>(co), g_extra_index, nullptr);
    free_state(st);
    py::drop_empty_code_extra(co);
    Py_DECREF(co);
  }
  PyErr_Clear();
#endif
}

void note_graph_failure(bool rerunnable) {
  t_jit.graph_failure = rerunnable ? GraphFailure::Rerunnable : GraphFailure::Final;
}

void graph_failed_in_rewritten_code() {
  // (3.11: the frame runs eagerly next, and its arguments moved into the in-place run)
  if (t_jit.graph_failure == GraphFailure::Rerunnable) py::give_back_args();
}

GlobalStats& global_stats() { return g_stats; }
JitConfig& jit_config() { return g_config; }

void set_log_categories(const std::string& log) {
  g_config.log = log;
  g_config.guard_perf = log_enabled("guard_perf");
}
void set_library_prefix(const std::string& dir) { g_library_prefix = dir; }

bool hook_enter() {
  if (!py::capture_supported() || g_released) return false;
  if (g_active_calls == 0 && !g_stress && !g_auto) {
    py::EvalFrameFn current = py::get_eval_frame();
    if (current && current != pijit_eval_frame) {
      static bool warned = false;
      if (!warned) {
        warned = true;
        report(kLogWarning,
               "pijit: another PEP 523 frame evaluator is installed (a debugger or another JIT); "
               "jitted functions run without capture");
      }
      return false;
    }
    py::set_eval_frame(pijit_eval_frame);
  }
  ++g_active_calls;
  return true;
}

void hook_exit() {
  if (--g_active_calls == 0 && !g_stress && !g_auto) py::set_eval_frame(nullptr);
}

namespace {

// While a jitted call runs: the hook installed (hook_enter succeeded) and `code` expected first.
struct JitCallScope {
  ThreadJit& jit = thread_jit();
  PyCodeObject* const saved_expect = jit.expect;  // (only what the scope changes: the rest is the thread's)
  const JitOptions* const saved_options = jit.options;
  JitCallScope(PyCodeObject* code, const JitOptions& opt) {
    jit.expect = code;
    jit.options = &opt;
  }
  ~JitCallScope() {
    jit.expect = saved_expect;
    jit.options = saved_options;
    hook_exit();
  }
  JitCallScope(const JitCallScope&) = delete;
  JitCallScope& operator=(const JitCallScope&) = delete;
};

}  // namespace

PyObject* call_jitted(PyCodeObject* code, const JitOptions& opt, PyObject* target, PyObject* args, PyObject* kwargs) {
  PyObject* r = nullptr;
  if (py::capture_supported() && (!kwargs || PyDict_GET_SIZE(kwargs) == 0) && PyFunction_Check(target) &&
      run_frameless(code, opt, target, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), &r))
    return r;
  if (!hook_enter()) return PyObject_Call(target, args, kwargs);
  JitCallScope scope(code, opt);
  py::RecursionCredit credit;  // (tp_call counted a level the plain call does not)
  return PyObject_Call(target, args, kwargs);
}

PyObject* call_jitted(PyCodeObject* code, const JitOptions& opt, PyObject* target, PyObject* const* args,
                      size_t nargsf, PyObject* kwnames) {
  PyObject* r = nullptr;
  if (py::capture_supported() && !kwnames && PyFunction_Check(target) &&
      run_frameless(code, opt, target, args, py::vector_nargs(nargsf), &r))
    return r;
  if (!hook_enter()) return py::vectorcall(target, args, nargsf, kwnames);
  JitCallScope scope(code, opt);  // (vectorcall counts no level of its own)
  return py::vectorcall(target, args, nargsf, kwnames);
}

bool set_stress(int level) {
  bool on = level > 0;
  if (!py::capture_supported()) return false;
  g_stress_reassemble = level >= 2;
  g_stress_breaks = level >= 3;
  if (on == g_stress) return true;
  if (on) {
    py::EvalFrameFn current = py::get_eval_frame();
    if (current && current != pijit_eval_frame) return false;
    g_stress = true;
    py::set_eval_frame(pijit_eval_frame);
  } else {
    g_stress = false;
    if (g_active_calls == 0 && !g_auto) py::set_eval_frame(nullptr);
  }
  return true;
}
bool stress_enabled() { return g_stress; }

bool set_auto_capture(const std::vector<std::string>& dirs) {
  if (!py::capture_supported()) return false;
  g_auto_dirs = dirs;
  bool on = !dirs.empty();
  if (on == g_auto) return true;
  if (on) {
    py::EvalFrameFn current = py::get_eval_frame();
    if (current && current != pijit_eval_frame) return false;
    g_auto_opts = g_config.defaults;
    g_auto = true;
    py::set_eval_frame(pijit_eval_frame);
  } else {
    g_auto = false;
    if (g_active_calls == 0 && !g_stress) py::set_eval_frame(nullptr);
  }
  return true;
}

std::vector<PinnedState> pinned_code_states() {
  std::vector<PinnedState> out;
  for (CodeState* st : g_live_states) {
    Py_INCREF(st->code);
    out.push_back({st, py::Ref(reinterpret_cast<PyObject*>(st->code))});
  }
  return out;
}
int stress_level() { return g_stress ? (g_stress_breaks ? 3 : g_stress_reassemble ? 2 : 1) : 0; }

}  // namespace pj::runtime
