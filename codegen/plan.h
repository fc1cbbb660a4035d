// What codegen accepts: the plan of a captured frame's rewritten code. Capture fills it in; codegen
// lowers it to bytecode without knowing how it was found (it includes nothing from capture/).
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <utility>
#include <vector>

#include "common/byte_io.h"
#include "py/py_common.h"

namespace pj::codegen {

// How the rewritten code rebuilds the function's return value from graph outputs and the frame.
struct ReturnPlan {
  // Tuple/List/Dict build a container the function created; Shared is that same container again
  // (`return l, l` gives one list twice: each built container has a slot, `index` names it).
  // Method: a builtin container's bound method, items[0].<obj> (`push = out.append`).
  // Object: an instance of a user class the function made, obj = (class, attribute names), items
  // their values: py::object_rebuild_function()(class, names, *items), which runs no user code.
  // Null: a method pair's NULL under its callable on a resume function's stack (3.11: PUSH_NULL
  // there; 3.7-3.10: left out, and the CALL_METHOD that takes the pair becomes a CALL_FUNCTION).
  enum Kind { Const, Output, Source, Tuple, List, Dict, Shared, Method, Object, Null } kind = Const;
  PyObject* obj = nullptr;  // Const: the value; Dict: the keys (a tuple); Output: the class to
                            // give the output (nullptr: pijit.Tensor); Method: its name; Tuple: a
                            // namedtuple class to build (tuple.__new__(obj, items); nullptr: tuple). Owned.
  int index = 0;            // Output: graph output; Source: guard node; Shared: slot
  int slot = -1;            // Tuple/List/Dict/Object: this container's slot
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

// A graph break at one instruction of the frame: the rewritten code puts the frame's state as it
// was there back (the locals and cells the captured part assigned, the value stack), runs that
// instruction in the interpreter, and returns what a resume function returns: a function made of
// the original code from the instruction's successor on, called with every local and the stack.
// A try block the break is inside: the resume function enters it again (SETUP_FINALLY, or 3.7's
// SETUP_EXCEPT) before jumping into the original code, so exceptions reach the same handler.
struct BlockPlan {
  int op;       // py::Opcode of the SETUP instruction
  int handler;  // byte offset of its handler in the original code
  int level;    // value-stack depth when it was pushed
  bool operator==(const BlockPlan& o) const { return op == o.op && handler == o.handler && level == o.level; }
};

struct ResumePlan {
  int offset = -1;        // byte offset, in the original code, of the first instruction the interpreter runs
  int break_offset = -1;  // ... and of the last, where capture stopped (a straight run from `offset`);
                          // -1: none, the resume function starts at `offset`
  std::vector<ReturnPlan> stack;                   // the value stack there, bottom first
  std::vector<std::pair<int, ReturnPlan>> locals;  // fast locals the captured part assigned
  std::vector<int> deleted;                        // arguments the captured part deleted
  std::vector<std::pair<int, ReturnPlan>> cells;   // cell variables it assigned (cellvars order)
  std::vector<char> bound;                         // per fast local: bound at break_offset
  std::vector<int> nulls;                          // stack positions holding a method pair's NULL
                                                   // where the resume function starts (ReturnPlan::Null)
  std::vector<BlockPlan> blocks;                   // try and with blocks open at `offset` (outermost
                                                   // first); the run to break_offset is inside them:
                                                   // what it raises, a resume function raises again there
};

// A side effect of the captured part, replayed after the graph in program order: a write to
// something that existed before the frame started, or an output call (print, logging).
// Every operand is built first, before any effect runs: operands read along guard paths see the
// frame as it began, exactly as the simulation read them.
// The stores and deletions list their operands in the order their instruction takes them from the
// stack (value first), so replaying one is: push the operands, run the instruction.
struct EffectPlan {
  enum Kind {
    Call,         // operands[0](*operands[1:]); `kwnames`: keyword names of the last operands, or null
    CallMethod,   // operands[0].<name>(*operands[1:]); `kwnames` as for Call
    StoreAttr,    // STORE_ATTR <name>:    (value, object)
    StoreSubscr,  // STORE_SUBSCR:         (value, container, key)
    StoreGlobal,  // STORE_GLOBAL <name>:  (value), in the frame's globals
    DeleteAttr,   // DELETE_ATTR <name>:   (object)
    DeleteSubscr, // DELETE_SUBSCR:        (container, key)
    DeleteGlobal, // DELETE_GLOBAL <name>: ()
    StoreDeref,   // STORE_DEREF <index>:  (value); the frame's cells: cellvars, then freevars
  } kind = Call;
  std::vector<ReturnPlan> operands;
  py::Ref name;     // attribute, global or method name
  py::Ref kwnames;  // Call / CallMethod: a tuple of keyword names, or null
  int index = 0;
  int line = 0;     // the user's line: a replayed call that raises points there
};

// Load the graph inputs along their guard paths, call the graph runner, then either rebuild the
// return value and return it, or (a graph break) rebuild the frame's state and resume the original
// bytecode at the break.
struct FramePlan {
  int line = 0;                  // user line the rewritten instructions carry (the return's)
  bool calls_graph = false;      // false: the result is built from constants and frame values only
  std::vector<int> input_nodes;  // guard node each graph input is loaded from
  std::vector<EffectPlan> effects;  // replayed after the graph, before returning or resuming
  ReturnPlan ret;                // when !resumes
  bool resumes = false;
  ResumePlan resume;
  std::vector<char> ret_shared;  // per container slot of `ret` / `resume`: referenced again (Shared)
};

// The plan's persistent form (codegen/plan_io.cc; the compile cache), its objects written portably
// (py/portable.h). A plan that resumes after a graph break is not written (its resume functions
// and break records stay in the process that made them): save_plan is false, with *why.
bool save_plan(const FramePlan& p, ByteWriter& w, std::string* why);
bool load_plan(ByteReader& r, FramePlan* p, std::string* why);
// Whether a loaded plan's indices and shapes are what codegen takes for granted: guard nodes whose
// object can be loaded (loadable[node]: a path, not the global state a Context node stands for),
// graph outputs below `outputs`, cells below `derefs`, each kind's operands and objects.
bool plan_fits(const FramePlan& p, const std::vector<char>& loadable, int outputs, int derefs);

}  // namespace pj::codegen
