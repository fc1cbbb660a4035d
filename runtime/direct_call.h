// The direct call. A graph entry whose rewritten code would only load the graph's inputs along
// their guard paths, call the graph and return what it gave (no side effect to replay, no graph
// break) runs without that code: the hook hands the graph the objects the guard check has just
// resolved on those same paths and builds the return value itself. No shadow frame, no bytecode,
// no second walk of the paths. The entry keeps its rewritten code, which means the same (dumps,
// PIJIT_LOGS=bytecode; PIJIT_DEBUG_NO_DIRECT=1 runs it instead).
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <memory>
#include <vector>

#include "codegen/plan.h"
#include "graph/ir.h"
#include "guards/guard_tree.h"

namespace pj::runtime {

struct DirectCall {
  py::Ref runner;  // null: no graph (the return value is built from the frame and constants)
  std::vector<int> nodes;  // guard nodes the check hands out: the graph's inputs, then ret's Sources
  size_t num_inputs = 0;
  codegen::ReturnPlan ret;  // a Source's index is its position in `nodes`
  // Building the return value runs nothing that can fail but an allocation (no output's class to
  // set): a failed graph is all that can fail, and the call may then run eagerly, so the call may
  // run without a frame (runtime/eval_frame.cc's frameless direct call).
  bool frameless = false;
  // The graph's one output is the return value (ret is Output 0): run_graph1 makes no outputs tuple.
  bool one_output = false;
};

// The direct call for a captured frame's plan, or nullptr where its code does more (side effects,
// a graph break, a container returned twice, an object rebuilt) or its graph has an impure op: a
// graph that fails must be rerunnable eagerly, nothing observable having run. Makes the guards
// keep the nodes it reads resolved.
std::shared_ptr<DirectCall> make_direct_call(const codegen::FramePlan& plan, const graph::Graph& g, PyObject* runner,
                                             guards::GuardTree& guards);

// The function's return value from the graph's outputs (a tuple) and the handed-out objects, as
// the rewritten code builds it. New reference; nullptr with an exception set.
PyObject* direct_return(const codegen::ReturnPlan& p, PyObject* outputs, PyObject* const* objs);
// An Output plan's value from that output itself (a new reference to it, which it takes).
PyObject* direct_return_output(const codegen::ReturnPlan& p, PyObject* o);

}  // namespace pj::runtime
