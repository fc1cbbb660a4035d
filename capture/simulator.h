// The symbolic interpreter: simulates a frame's bytecode to capture its tensor work as a graph.
//
// Values are real Python objects, with one twist: a tensor read from the frame (an argument, a
// Parameter reached through `self`) is replaced by a *symbolic* tensor of the same shape and dtype,
// a graph input. Python work on constants runs for real (constant folding); pijit's own library
// code (ops.*, Tensor methods, primitives) is *traced* by calling it for real on symbolic tensors,
// which records graph nodes instead of running kernels (the simulator is the thread's tracer:
// graph/trace_context.h); user code, and every Cell.construct, is *simulated* instruction by
// instruction, inlined into one graph.
// Every object read from the frame remembers its access path (a guard-tree node), and guards
// record what the graph assumed about it. Anything the simulator cannot prove safe ends capture
// with a reason from break_reasons.def; the caller then runs the frame eagerly.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "codegen/plan.h"
#include "graph/autodiff.h"
#include "graph/ir.h"
#include "guards/guard_tree.h"

namespace pj::capture {

enum class Break : int {
#define PJ_BREAK(name, id, text) name,
#include "capture/break_reasons.def"
#undef PJ_BREAK
  kNumBreaks,
};

struct BreakInfo {
  const char* name;
  const char* id;
  const char* text;
};
const BreakInfo& break_info(Break b);

struct CaptureOptions {
  int inline_depth = 16;            // nested user calls inlined before giving up
  int instruction_budget = 100000;  // simulated instructions per capture (loops unroll)
  // Loop iterations (backward jumps) per capture: an unrolled loop grows the graph with every
  // iteration, and past this a graph costs more to build than the loop costs to run.
  int loop_limit = 1024;
  // A refusal becomes a graph break at the root frame's instruction it happened in: the graph runs
  // what came before, the interpreter that instruction, a resume function (a capture candidate
  // itself) the rest. false: fullgraph, the whole frame or nothing.
  bool allow_breaks = true;
  // Break even when the captured part holds no op (stress mode, to exercise breaks on any code).
  bool break_without_graph = false;
  // The frame is a capture candidate only because of stress mode: a jitted function it calls runs
  // as its own jit (as it does without stress), not inlined into this frame's graph.
  bool stress_only = false;
  // Second pass of a graph break: stop at the root's n-th instruction (1-based; 0: never) and plan
  // the break there, with exactly the guards the instructions before it needed.
  int stop_at_boundary = 0;
  // ... and, where planning the break there fails (a value on the stack bytecode cannot rebuild),
  // the point to try instead: the start of the failing instruction's line (0: none).
  int stop_at_boundary_else = 0;
  // A resume function's prologue (putting its arguments on the stack, then jumping into the
  // original code) holds no break point: a break there would resume where it began.
  int first_break_index = 0;
  // ... and the instruction the interpreter runs last (the one that stopped capture), as the
  // first pass saw it: its offset, and which fast locals are bound there.
  int break_offset = -1;
  std::vector<char> break_bound;
  // The value-stack positions that hold a callable's NULL after that instruction ran.
  std::vector<int> break_nulls;
  // Dynamic shapes: tensor dims read from the frame that get a symbol instead of their size.
  // "x#0" names dim 0 of the tensor at guard path x (what a recompile found changing); with
  // dynamic_all, every dim of every tensor a frame local holds (jit(dynamic=1)). Parameters and
  // sizes 0 and 1 stay specialised.
  const std::set<std::string>* dynamic_dims = nullptr;
  bool dynamic_all = false;
  // Lifted scalars: guard paths of Python ints and floats that changed value on an earlier call
  // ("lr", "self.scale"); where one meets a tensor in an operator it is a graph input.
  const std::set<std::string>* dynamic_scalars = nullptr;
};

using codegen::ReturnPlan;

// One user frame of an inline chain: the function and where in it the call (or the stop) was.
struct ChainFrame {
  std::string function;
  std::string file;
  int line = 0;
};
using InlineChain = std::vector<ChainFrame>;  // outermost first; empty: the root frame itself

// "f (a.py:10) -> g (b.py:3)": how logs and break_reasons show a chain.
std::string chain_text(const InlineChain& chain);

struct CaptureResult {
  bool ok = false;
  Break reason = Break::Internal;
  std::string detail;  // specifics: the opcode, the callee, the exception text
  std::string file;
  int line = 0;        // user source line where capture stopped (or of the return)
  std::string function;
  InlineChain chain;   // a stop inside inlined code: the calls that led there (StopCapture::chain)
  std::shared_ptr<guards::GuardTree> guards;  // what the outcome (graph or refusal) depends on
  std::shared_ptr<graph::Graph> graph;
  codegen::FramePlan plan;       // for codegen, when ok
  // ok with a graph break (plan.resumes): reason, detail and line say why the rest of the frame
  // runs in the interpreter.
  bool broke = false;
  // A break or a refusal: the user functions the root called after the break point (all of them,
  // when the frame runs as it is) that did tensor work: the interpreter calls them.
  // They become capture candidates themselves, each a graph of its own (borrowed).
  std::vector<PyCodeObject*> callees;
  std::vector<std::string> effects;  // the side effects replayed after the graph, in order
  // A refusal inside a loop of the root frame: the offset of the root's instruction it stopped in
  // (-1: elsewhere, or a reason no break could help). The runtime may run the loop's body as a
  // function of its own (codegen/outline.h), a capture candidate.
  int loop_offset = -1;
  int ops_seen = 0;  // graph nodes the simulation recorded (also when it refused)
  // Dynamic shapes: the graph inputs' dims left symbolic, and what capture decided about each
  // symbol ("s0 = x.shape[0]: dynamic", "s1 = y.shape[1] specialised to 8: read by Python at f.py:4").
  std::vector<graph::SymbolicDim> symbolic_dims;
  std::vector<std::string> dynamic_notes;
  // Gradients taken inside the graph with symbolic sizes: each sweep's backward, emitted again per
  // concrete sizes (graph::replay_sweep) instead of copied with the sizes it was traced for.
  std::vector<graph::SweepPlan> sweeps;
  // Python ints that are a reshape's sizes (x.reshape((n, -1))): their attribute entries, filled
  // per plan with the value (SymbolicDim with dim -1).
  std::vector<graph::SymbolicAttr> symbolic_attrs;
  // Lifted scalars: graph input positions fed a Python number (converted to a 0-d tensor of the
  // input's dtype at launch), and the paths lifted because pijit.mutable() made the number.
  std::vector<int> scalar_inputs;
  std::vector<std::string> mutable_paths;
  // A value capture computed depends on this process's str hashes or object addresses (hash() of
  // a str or an object, a set holding such items iterated or handed on): it holds here, and in no
  // other process. The compile cache does not keep such an entry.
  bool hash_dependent = false;
  int instructions = 0;          // simulated, inlined frames included
  // Set (reason Interrupted) when an exception that no traced code raises (KeyboardInterrupt, one
  // from a signal handler) arrived while capturing: capture_frame leaves it pending, and the
  // call raises it as eager Python would have.
  bool interrupted = false;

  // "B002 data_dependent at f.py:12 in fn: reads the data of a tensor (...): bool()"
  std::string reason_text() const;
};

// Simulates the frame (whose arguments are bound; it has not started running). A Python error met
// on the way becomes a refusal reason and is cleared, except an interruption (see `interrupted`).
CaptureResult capture_frame(py::Frame* f, const CaptureOptions& options);

// Test hook: the next library call capture traces meets `exc_type` pending, as if a signal handler
// had raised it there (a new reference is taken; nullptr disarms).
void arm_test_interruption(PyObject* exc_type);

// The directory of the pijit package: code there is library code (traced, not simulated).
void set_library_dir(const std::string& dir);
const std::string& library_dir();

}  // namespace pj::capture
