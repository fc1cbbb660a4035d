// The simulator's dynamic part (sim_dynamic.cc): which sizes of the graph's inputs stay symbols,
// which Python numbers read from the frame are graph inputs rather than constants, and where
// Python observed either (there the graph keeps the value it saw, under a guard).
//
// The simulator reports what happens (an input read, an instruction about to consume stack values,
// an op recorded, library code reading a size); this part decides what stays dynamic. Its state is
// its own: nothing outside reads the symbols or the lifted numbers.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/ir.h"
#include "graph/op.h"
#include "guards/guard_tree.h"
#include "py/bytecode.h"

namespace pj {
struct SweepTrace;  // graph/autodiff.h
}

namespace pj::capture {

class Simulator;
struct SimFrame;

class DynamicShapes {
 public:
  explicit DynamicShapes(Simulator& s) : s_(s) {}
  DynamicShapes(const DynamicShapes&) = delete;
  DynamicShapes& operator=(const DynamicShapes&) = delete;

  // ---- values read from the frame ----
  // A graph input: the dims that get symbols (CaptureOptions::dynamic_dims / dynamic_all).
  void tensor_input(PyObject* obj, int node, int value_id);
  // A frame number's copy: liftable when pijit.mutable() made it or its path changed value on an
  // earlier call (CaptureOptions::dynamic_scalars).
  void number_read(PyObject* obj, PyObject* copy, int node);
  bool liftable(PyObject* copy) const { return liftable_.count(copy) > 0; }
  // A number the interpreter's part of a graph break computed (`t.item()`), handed to the resume
  // function on its stack: data, different on every call. Lifted where it meets a tensor; any
  // other use is the interpreter's again (Simulator::guard_scalars), never a guard on its value.
  bool data(PyObject* copy) const { return data_.count(copy) > 0; }
  bool tracks_sizes() const { return !dim_deps_.empty(); }
  PyObject* shape_of(PyObject* sym);  // x.shape: its symbolic sizes as fresh ints; nullptr: none symbolic

  // ---- one instruction of a simulated frame ----
  // Before it runs, with `uses` stack values it consumes (`moving`: it only moves them): lifts,
  // compares, derives or specialises the numbers and sizes among them. True: its result is a
  // derived float (instruction_done records it).
  bool instruction_uses(SimFrame& fr, const py::Instruction& ins, int uses, bool moving);
  // After it ran: records its derived result, and guards the ints armed for a reshape's shape that
  // no shape attribute took (the lift candidates are dropped by disarm()).
  void instruction_done(SimFrame& fr, bool derive);
  void disarm() { armed_.clear(); }  // at the end of every instruction, raised or not
  bool mid_use(bool derive) const { return derive || !shape_armed_.empty(); }  // a raise here cannot be replayed
  // guard_scalars(v) waits: an int the current call hands to a reshape's shape
  bool shape_pending(PyObject* v) const;
  void scalar_specialised(PyObject* copy) {  // a liftable copy's value was guarded
    if (!liftable_.empty()) note_specialised_scalar(copy);
  }
  void guard_derived(PyObject* v) {  // v is used as a Python value: what it was derived from is guarded
    if (!derived_.empty()) guard_derived_now(v);
  }

  // ---- ops recorded into the graph (Simulator::record) ----
  void before_node(const OpDef& op, const Attrs& attrs) {
    if (!shape_armed_.empty()) match_shape_ints(op, attrs);
  }
  void after_node(const OpDef& op, const Attrs& attrs, const std::vector<int>& ins, const std::vector<int>& outs,
                  const Metas& in, const Metas& out);

  // ---- what library code observes while it is traced (TraceContext) ----
  void sizes_read(const Tensor& t, int dim, const char* what);
  std::optional<Tensor> lift_scalar(PyObject* number, DType dtype);
  // A tape's gradient() under capture: with symbolic sizes its sweep is kept as a SweepPlan (the
  // backward is emitted again per size); what cannot be replayed specialises every symbol.
  void sweep_observed(const SweepTrace* t);

  // At the end of a successful capture (`broke`: a graph break's, whose sizes live there are
  // constants to the interpreter): the symbols' guards and CaptureResult::symbolic_dims.
  void finish(bool broke);

 private:
  struct Symbol {
    int node = -1, value = -1, dim = 0;
    int64_t hint = 0;
    bool specialised = false;
    std::vector<guards::SizeFact> facts;  // comparisons Python made of it with constants
    PyObject* scalar = nullptr;  // a Python int's symbol (value -1): the frame number's copy
  };
  // Python float arithmetic on lifted floats (`lr * 0.1`, `-lr`, `a + b`): the result is derived,
  // computed in float64 graph ops (IEEE, as Python computes it) where it meets a tensor. A
  // divisor must be a constant (a lifted one could become 0, where Python raises). Any other use
  // of a derived value guards the numbers it came from.
  struct Derived {
    py::Opcode op;
    PyObject* a;
    PyObject* b;  // nullptr: unary
  };

  // ---- symbolic sizes ----
  void propagate_dims(const OpDef& op, const Attrs& attrs, const std::vector<int>& ins, const std::vector<int>& outs,
                      const Metas& in, const Metas& out);
  uint64_t dim_deps(int64_t value_id, int dim) const;  // dim -1: any of its sizes
  // Python observed sizes that depend on these symbols: the graph keeps their values (guarded).
  void specialise(uint64_t symbols, const std::string& why);
  void sizes_used(PyObject* v, int depth = 0);  // an instruction consumed v (or what it holds)
  void sizes_used_by(SimFrame& fr, const py::Instruction& ins, int uses);
  // `if x.shape[0] > 4` on a graph input's own symbolic size: guards the comparison's outcome as a
  // fact of the symbol instead of specialising it. True when it did (the operands are then used).
  bool compare_size(SimFrame& fr, const py::Instruction& ins);
  void check_sweeps();  // at the end: only the gradients are read after a sweep, or specialise
  // `x.reshape((n, -1))` with n a liftable int: its entry in the reshape's shape becomes the value
  // of a symbol of its own, so each n gets a plan, not a capture. Only for library functions marked
  // __pijit_shape_args__ (their int arguments become the shape attribute and nothing else).
  void arm_shape_ints(SimFrame& fr, const py::Instruction& ins, size_t from);
  void match_shape_ints(const OpDef& op, const Attrs& attrs);  // record(): the entries they fed
  void commit_shape_ints();  // ... once the node is in the graph: their symbols and attributes
  void shape_call_done();    // an armed int no attribute took is used otherwise: guarded

  // ---- lifted and derived numbers ----
  // A lifted number is lifted only where it meets a tensor in an arithmetic or comparison operator
  // (the operator converts it as the eager one does); any other use guards its value, as for every
  // number, and the note says where.
  bool scalars_used(SimFrame& fr, const py::Instruction& ins, int uses);  // true: the result is derived
  void arm_lifts(SimFrame& fr, const py::Instruction& ins, size_t from);  // the operands this one lifts
  // `lr > 0.5` with lr liftable and 0.5 a constant: guards the comparison's outcome, not lr's value.
  void compare_lifted(SimFrame& fr, const py::Instruction& ins, size_t from);
  bool derivable(SimFrame& fr, const py::Instruction& ins, size_t from);
  // The instruction calls a user function the simulation inlines (its uses of the numbers it is
  // given are instructions too).
  bool calls_user_function(SimFrame& fr, const py::Instruction& ins, size_t from);
  void note_derived(SimFrame& fr);  // the instruction's result is pending_derived_
  void note_specialised_scalar(PyObject* copy);
  void guard_derived_now(PyObject* v);
  Tensor scalar_input(PyObject* copy, DType dtype);  // the graph input a liftable copy feeds
  Tensor value64(PyObject* v);                        // a lifted, derived or constant float as float64
  std::string at_line() const;                        // " at file:line" of the simulated instruction

  Simulator& s_;
  const char* using_op_ = nullptr;  // the instruction whose uses are being checked (for the notes)
  std::vector<Symbol> symbols_;
  std::unordered_map<int64_t, std::vector<uint64_t>> dim_deps_;  // graph value -> per size, its symbols
  std::unordered_map<PyObject*, uint64_t> size_ints_;           // ints shape_of made -> their symbols
  std::unordered_map<PyObject*, int> exact_sizes_;              // ... that are a symbol itself
  std::vector<size_t> sweep_begins_;                            // graph nodes when each open sweep began
  std::vector<std::pair<size_t, PyObject*>> pending_shape_;     // entry -> the int it holds
  std::vector<PyObject*> shape_armed_;
  std::vector<std::pair<size_t, uint64_t>> attr_bits_;  // the node being recorded: entry -> symbol bit
  std::vector<graph::SymbolicAttr> attr_symbols_;
  std::unordered_map<PyObject*, int> liftable_;      // copy -> the node it was read along
  std::unordered_set<PyObject*> data_;               // ... of those, the resume function's data
  std::vector<PyObject*> armed_;                     // copies the current instruction may lift
  std::map<std::pair<PyObject*, int>, int> lifted_;  // (copy, dtype) -> its graph input
  std::unordered_map<PyObject*, Derived> derived_;
  std::unordered_map<PyObject*, Tensor> derived64_;  // its float64 graph value, once built
  Derived pending_derived_{};
};

}  // namespace pj::capture
