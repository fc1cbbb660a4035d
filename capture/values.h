// One record per value the simulator has classified, and the mutation overlay. Replaces the side
// maps (object -> node, symbol <-> frame tensor, copies, mirrors, cells and functions made here)
// whose predicates once disagreed about what a write may touch.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace pj::capture {

struct SimFrame;  // sim_state.h: a generator's suspended frame

// Where a value came from decides what capture may do with it.
enum class Origin : uint8_t {
  Created,  // made by the simulation (a list, dict, cell or function it built): mutated freely
  Frame,    // read from the frame along a guard node: it existed before the frame started
  Mirror,   // capture's stand-in for a frame object (a copy holding graph values, a cell standing
            // for an enclosing function's): a write to it would never reach the real object
};

enum class Kind : uint8_t {
  Other,
  Constant,  // an immutable value read along guard nodes (Equal checks)
  Tensor,    // a frame tensor; `sym` is its one graph value
  Symbol,    // a graph input standing for the frame tensor `real`
  Cell,
  Function,  // made by MAKE_FUNCTION; `globals_node` is where its globals are read
  Object,    // an instance of a user class the simulated code constructed (sim_objects.cc);
             // `class_node` is its class's guard node
  Generator,  // a capsule standing for a generator the simulated code made (sim_generators.cc);
              // `frame` is its frame, run as it is consumed
  Exception,  // an exception object the simulated code made (sim_exceptions.cc): a plain class,
              // constant arguments
  Method,     // a method the simulation bound, standing for `owner.name`: a with-block's
              // __enter__/__exit__, or a container method whose call is replayed after the graph
};

// What a write does; the next step (issue 11) replays these after the graph, in program order.
enum class Write : uint8_t { Item, DeleteItem, Attr, DeleteAttr, Global, Nonlocal, Method, InPlace, Advance };

struct PendingWrite {
  Write kind;
  std::string what;  // the user-facing description ("calls .append() on a list ...")
  int line;          // the user's source line
};

struct Value {
  Origin origin = Origin::Created;
  Kind kind = Kind::Other;
  int node = -1;               // Frame (and Tensor/Symbol): the guard node it was first read along;
                               // Mirror: the original's node, or -1 for a copy of a created value
  PyObject* real = nullptr;    // Symbol: the frame tensor
  PyObject* sym = nullptr;     // Tensor: its graph value
  PyObject* copy = nullptr;    // a Frame container: the plain copy materialize made of it
  std::vector<int> const_nodes;  // Constant: every node it was read along
  int globals_node = -1;       // Function: node of its globals (-1: the root frame's)
  int class_node = -1;         // Object: its class's guard node
  std::shared_ptr<SimFrame> frame;  // Generator: its frame
  PyObject* owner = nullptr;   // Method: the object it is bound to
  PyObject* name = nullptr;    // Method: the attribute (an interned str; mgr.<name> again: the
                               // function's own __name__ may differ)
  bool replayed = false;       // Method: a call of it is a deferred effect, not run
  std::vector<PendingWrite> writes;  // the overlay: writes not yet made to the real object
};

// Keys are objects the simulator keeps alive (Simulator::keep_, or a guard's reference) for the
// whole capture, so a pointer never names two objects.
class ValueTable {
 public:
  const Value* find(PyObject* v) const {
    auto it = recs_.find(v);
    return it == recs_.end() ? nullptr : &it->second;
  }
  Value& at(PyObject* v) { return recs_[v]; }

  // The guard node a frame object was read along (-1: not read from the frame).
  int node(PyObject* v) const {
    const Value* r = find(v);
    return r && r->origin == Origin::Frame && r->kind != Kind::Constant ? r->node : -1;
  }
  // Existed before the frame started, or stands for something that did: a write to it must reach
  // the real object.
  bool preexisting(PyObject* v) const {
    const Value* r = find(v);
    return r && (r->origin == Origin::Mirror || (r->origin == Origin::Frame && r->kind != Kind::Constant));
  }
  bool created(PyObject* v, Kind k) const {
    const Value* r = find(v);
    return r && r->origin == Origin::Created && r->kind == k;
  }

  // A frame object read along `node`; the first node wins (reads go through it). Returns that node.
  int read_from_frame(PyObject* v, int node, Kind k = Kind::Other);
  void read_constant(PyObject* v, int node);
  void mirror(PyObject* copy, int original_node, Kind k = Kind::Other);
  void created_cell(PyObject* cell) { mark(cell, Origin::Created, Kind::Cell); }
  void created_object(PyObject* obj, int class_node);
  void created_generator(PyObject* g, std::shared_ptr<SimFrame> frame);
  void created_exception(PyObject* e) { mark(e, Origin::Created, Kind::Exception); }
  void created_method(PyObject* bound, PyObject* owner, PyObject* name, bool replayed);
  // The record of a method the simulation bound; nullptr for anything else.
  const Value* method(PyObject* v) const {
    const Value* r = find(v);
    return r && r->kind == Kind::Method ? r : nullptr;
  }
  // The generators made so far, in the order they were made.
  const std::vector<PyObject*>& generators() const { return generators_; }
  void created_function(PyObject* fn, int globals_node);

  // Graph inputs standing for frame tensors, in the order they were made.
  void bind_symbol(PyObject* sym, PyObject* real, int node);
  PyObject* symbol_of(PyObject* real) const;        // nullptr: not a frame tensor seen before
  const Value* frame_tensor(PyObject* sym) const;   // the Symbol's record, nullptr for a graph result
  const std::vector<PyObject*>& symbols() const { return symbols_; }

  PyObject* copy_of(PyObject* v) const;
  void set_copy(PyObject* v, PyObject* copy) { recs_[v].copy = copy; }

  void pend(PyObject* target, PendingWrite w);
  const std::vector<PendingWrite>& writes() const { return all_writes_; }

 private:
  void mark(PyObject* v, Origin o, Kind k);
  std::unordered_map<PyObject*, Value> recs_;
  std::vector<PyObject*> symbols_;
  std::vector<PyObject*> generators_;
  std::vector<PendingWrite> all_writes_;  // program order, across objects
};

}  // namespace pj::capture
