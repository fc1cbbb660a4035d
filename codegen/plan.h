// What codegen accepts: the plan of a captured frame's rewritten code. Capture fills it in; codegen
// lowers it to bytecode without knowing how it was found (it includes nothing from capture/).
// The graph-break issue grows this into a plan of steps (graph calls, replayed writes, resumes).
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <vector>

namespace pj::codegen {

// How the rewritten code rebuilds the function's return value from graph outputs and the frame.
struct ReturnPlan {
  // Tuple/List/Dict build a container the function created; Shared is that same container again
  // (`return l, l` gives one list twice: each built container has a slot, `index` names it).
  enum Kind { Const, Output, Source, Tuple, List, Dict, Shared } kind = Const;
  PyObject* obj = nullptr;  // Const: the value; Dict: the keys (a tuple). Owned.
  int index = 0;            // Output: graph output; Source: guard node; Shared: slot
  int slot = -1;            // Tuple/List/Dict: this container's slot
  std::vector<ReturnPlan> items;
  ReturnPlan() = default;
  ReturnPlan(const ReturnPlan&) = delete;
  ReturnPlan(ReturnPlan&& o) noexcept
      : kind(o.kind), obj(o.obj), index(o.index), slot(o.slot), items(std::move(o.items)) {
    o.obj = nullptr;
  }
  ReturnPlan& operator=(ReturnPlan&& o) noexcept;
  ~ReturnPlan();
};

// Load the graph inputs along their guard paths, call the graph runner, rebuild the return value.
struct FramePlan {
  int line = 0;                  // user line the rewritten instructions carry (the return's)
  bool calls_graph = false;      // false: the result is built from constants and frame values only
  std::vector<int> input_nodes;  // guard node each graph input is loaded from
  ReturnPlan ret;
  std::vector<char> ret_shared;  // per container slot of `ret`: referenced again (kind Shared)
};

}  // namespace pj::codegen
