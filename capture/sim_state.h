// Internals of the simulator shared by its translation units (simulator.cc: the frame loop;
// op_*.cc: one handler per opcode; sim_values.cc: sources, guards, attributes, calls). Not an API.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <algorithm>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "py/bytecode.h"
#include "capture/decoded_code.h"
#include "graph/trace_context.h"
#include "capture/sim_dynamic.h"
#include "capture/simulator.h"
#include "capture/values.h"

namespace pj::capture {

// The decoder and opcode table live in the base layer (py/); the simulator names them plainly.
using py::DecodeResult;
using py::Instruction;
using py::Opcode;
using py::decode_code;
using py::has_flag;
using py::op_name;

// Thrown to unwind the simulation; capture_frame turns it into the CaptureResult's reason.
struct StopCapture {
  Break reason;
  std::string detail;
  int line;  // user line being simulated when capture stopped
  PyCodeObject* code = nullptr;  // ... and its function (an inlined one, perhaps); null: the root
  // The user function the root called (inlined) that it stopped inside, when that function had
  // recorded tensor work first: worth capturing on its own when the interpreter calls it.
  PyCodeObject* callee = nullptr;
  // The inline chain that led there, outermost first (f at a.py:10, then g at b.py:3); empty when it
  // stopped in the root frame itself.
  InlineChain chain;
};

// "f()" by the callable's qualified name, else "a T object" (a pending exception is left as it is).
std::string describe_callable(PyObject* c);

// A simulated raise on its way to a handler in a simulated frame (sim_exceptions.cc).
struct SimRaise {
  PyObject* value;
};

struct SimFrame {
  PyCodeObject* code = nullptr;
  PyObject* func = nullptr;        // the function simulated (nullptr for the root frame)
  PyObject* globals = nullptr;
  int globals_node = -1;           // guard node of the globals dict; -1: the root's (Access::Global)
  const DecodedCode* dec = nullptr;                // the code's analysis (capture/decoded_code.h)
  const std::vector<Instruction>* ins = nullptr;  // dec's
  const std::vector<char>* in_loop = nullptr;        // dec's
  // 3.11: the exception table, and per instruction the entry covering it (-1: none): dec's
  const std::vector<py::ExceptionEntry>* handlers = nullptr;
  const std::vector<int>* handler = nullptr;
  const std::vector<char>* handler_start = nullptr;
  std::vector<PyObject*> locals;    // borrowed (kept alive by Simulator::keep_)
  std::vector<char> loaded;         // root frame: whether locals[i] was read from the real frame
  std::vector<PyObject*> cells;     // PyCell objects: cellvars, then freevars
  std::vector<char> cell_loaded;    // root frame: whether cells[i] holds the real cell's content
  std::vector<char> stored;         // root frame: whether locals[i] was assigned or deleted
  std::vector<PyObject*> stack;
  struct Block {
    Opcode op;      // the SETUP_* that pushed it
    int target;     // its handler / loop end (byte offset)
    size_t level;   // value-stack depth when it was pushed
    // A resume function can enter it again: not a loop, nor a with-block whose manager the
    // rewritten code cannot reach (one the function made).
    bool reenterable = true;
    bool operator==(const Block& o) const { return op == o.op && target == o.target && level == o.level; }
  };
  std::vector<Block> blocks;  // 3.7's BREAK_LOOP needs its loop's end; a resume function, try blocks
  size_t pc = 0;
  bool root = false;
  py::Frame* real = nullptr;    // root frame only
  PyObject* result = nullptr;
  bool returned = false;
  bool library = false;             // pijit's own code (a library Cell.construct)
  PyObject* self = nullptr;         // the object a method call bound (root: its first argument); borrowed
  size_t ops_at_entry = 0;          // graph nodes recorded before the frame started
  int backedges_at_entry = 0;       // Simulator::backedges_ when the frame started (or resumed)
  // A generator function's frame (sim_generators.cc): it runs as it is consumed, up to each
  // YIELD_VALUE, and keeps its state in between.
  std::vector<PyObject*> handling;  // exceptions whose except blocks run (innermost last)
  bool generator = false;
  bool started = false;
  bool suspended = false;           // stopped at a yield (run_frame returns)
  PyObject* yielded = nullptr;
  PyObject* kw_names = nullptr;     // 3.11: KW_NAMES's tuple, for the CALL after it
};

// The capture context: while run_root simulates a frame, the simulator is this thread's tracer
// (graph/trace_context.h), so pijit's library code records into its graph and the tensor type
// reports to it what Python observes of symbolic tensors.
// What plain Python would see by now in a caller's list or dict whose changes are deferred
// (sim_overlay.cc).
struct ContainerOverlay {
  bool list = true;
  bool exact = true;  // false: a change it cannot follow (reads of the container stop capture)
  // list: one per item now: the caller's item at index `orig`, or `value` the function put there
  struct Slot {
    Py_ssize_t orig = -1;
    PyObject* value = nullptr;
  };
  std::vector<Slot> items;
  // list: items starts with the caller's items (its length guarded): a read or a positional change
  // asks for them; appends alone need not (a log the function appends to keeps one graph)
  bool base_known = false;
  // dict: constant keys the function set (value) or deleted (nullptr), in order of first change
  std::vector<std::pair<PyObject*, PyObject*>> keys;
  bool cleared = false;  // dict.clear(): the caller's keys are gone
};

class Simulator : public TraceContext {
 public:
  Simulator(CaptureResult& r, const CaptureOptions& o);
  ~Simulator() override;
  void run_root(py::Frame* f);
  // Operators and methods of the tensor classes were looked up once, at capture: a patched
  // pijit.Tensor (or Parameter) method must recompile.
  void guard_tensor_classes();
  void guard_namespaces(const std::vector<PyObject*>& dicts, const std::vector<uint64_t>& versions);
  // The globals of every Python frame that ran for real while the simulation ran (library code
  // capture calls rather than simulates: traced calls, properties, __getattr__): set by simulate().
  std::unordered_set<PyObject*>* ran_globals_ = nullptr;
  // State a pijit module keeps that the simulation reads through C (a switch its setattr sets):
  // that module's namespace is guarded as if its code ran.
  void reads_module_state(const char* module);

  // ---- TraceContext: what the layers below report while this simulator traces library code ----
  Tensors record(const OpDef& op, const Tensors& in, const Attrs& attrs) override;
  void identity_observed(PyObject* sym) override;      // a tensor was hashed: guard input aliasing
  int contiguity(PyObject* sym) override;              // is_contiguous() of a graph value; -1: unknown
  // (the dynamic part answers these three: sim_dynamic.h)
  void sizes_read(const Tensor& t, int dim, const char* what) override;
  std::optional<Tensor> lift_scalar(PyObject* number, DType dtype) override;
  void sweep_observed(const SweepTrace* t) override;

  // ---- values (sim_values.cc) ----
  PyObject* own(PyObject* new_ref);  // keeps it alive for the capture; raises StopCapture on nullptr
  [[noreturn]] void stop(Break b, std::string detail);
  [[noreturn]] void python_error(const char* during);  // the pending Python error -> StopCapture
  PyObject* wrap(PyObject* obj, int node);             // a value read from the frame along `node`
  // A value real Python code may consume. `held`: v is an item of a container being copied (a
  // Cell container stays itself there; handed on its own, it is handed as its cells).
  PyObject* materialize(PyObject* v, bool identity = true, bool held = false);
  // The items of a tuple or list read from the frame, each along its own guarded path (its length
  // guarded): what unpacking it gives, as the objects themselves (not copies for real code).
  std::vector<PyObject*> frame_items(PyObject* seq);
  // UNPACK_SEQUENCE / UNPACK_EX: at most `limit` items from an iterator (Python takes one more than
  // the targets to find there are too many)
  std::vector<PyObject*> unpacked(PyObject* seq, size_t limit = SIZE_MAX);
  bool is_constant(PyObject* o) const;
  bool is_library_type(PyTypeObject* t);
  bool is_library_code(PyObject* func);
  bool trusted(PyObject* v);                           // operators on it run no user code
  bool deep_trusted(PyObject* v);                      // ... nor on anything it holds
  bool is_iterator(PyObject* v);                       // a builtin iterator or a generator
  void refuse_foreign_iterator(PyObject* v);           // stops capture on one the frame was given
  bool plain_instance(PyObject* v);                    // an instance of a user class (or Cell)
  // An instance of a class exactly as collections.namedtuple made it (a direct tuple subclass whose
  // dict holds only the field descriptors and namedtuple's own methods): a tuple with names. Its
  // class is guarded unmodified wherever one is read from the frame.
  bool named_tuple(PyObject* v) { return PyTuple_Check(v) && !PyTuple_CheckExact(v) && namedtuple_type(Py_TYPE(v)); }
  bool namedtuple_type(PyTypeObject* t);
  bool tuple_like(PyObject* v) { return PyTuple_CheckExact(v) || named_tuple(v); }
  // A new tuple of t (a tuple or a namedtuple class) holding `items`, as tuple.__new__(t, items)
  // makes it: no user code runs.
  PyObject* new_tuple_of(PyTypeObject* t, const std::vector<PyObject*>& items);
  std::unordered_map<PyTypeObject*, bool> namedtuple_types_;
  PyObject* make_namedtuple(PyTypeObject* t, PyObject* base, const std::vector<PyObject*>& args, PyObject* kwnames);
  // User class instances the simulated code makes (sim_objects.cc): a scratch object of the class
  // itself, made by object.__new__ and filled by the simulated __init__; rebuilt where it escapes.
  std::string unmodelled_class(PyTypeObject* t);        // why instances of t are not simulated ("": they are)
  PyObject* construct(PyTypeObject* t, const std::vector<PyObject*>& args, PyObject* kwnames);
  bool made_object(PyObject* v) const { return values_.created(v, Kind::Object); }
  PyObject* object_attr(PyObject* v, PyObject* name);
  void object_store(PyObject* owner, PyObject* name, PyObject* value, const std::string& what);
  // Its state as the rebuild sets it: __dict__ entries in order, then slots that are set.
  std::vector<std::pair<PyObject*, PyObject*>> object_state(PyObject* v);
  int class_node(PyObject* obj);  // the guard node of obj's class (frame objects: obj's own node)
  static PyObject* object_init();  // object.__init__ (borrowed)
  static bool is_environ(PyObject* v);                    // os.environ itself
  PyObject* environ_lookup(PyObject* env, PyObject* key);  // its value of key (guarded); nullptr: unset
  // Special methods of user classes (sim_dunders.cc): an operator on an instance of a class
  // written in Python inlines the class's method, in the order Python's protocol calls them.
  bool user_operand(PyObject* v);
  PyObject* special_method(PyObject* obj, const char* name);  // guarded; nullptr: none (or object's)
  PyObject* call_special(PyObject* f, PyObject* self, const std::vector<PyObject*>& args);
  void builtin_declines(PyObject* v, PyObject* user, const char* symbol);
  PyObject* user_binary(Opcode op, PyObject* a, PyObject* b);  // nullptr: neither is a user object
  PyObject* rich_side(PyObject* self, PyObject* other, int op);
  PyObject* user_compare(int op, PyObject* a, PyObject* b);    // nullptr: neither is a user object
  PyObject* user_unary(Opcode op, PyObject* a);
  PyObject* user_abs(PyObject* a);
  PyObject* user_len(PyObject* obj);
  bool user_truth(PyObject* obj);
  PyObject* user_getitem(PyObject* obj, PyObject* key);
  void user_setitem(PyObject* obj, PyObject* key, PyObject* value);  // value nullptr: del
  bool user_contains(PyObject* obj, PyObject* needle);
  PyObject* user_iter(PyObject* obj);
  PyObject* user_next(PyObject* it);   // nullptr: StopIteration
  PyObject* next_item(PyObject* it);   // any iterator the simulation may advance; nullptr: exhausted
  PyObject* user_reduce(const char* name, const std::vector<PyObject*>& args, PyObject* kwnames);
  // nullptr: not a user descriptor; owner: the class (default type(obj))
  PyObject* user_descriptor_get(PyObject* descr, PyObject* obj, PyObject* owner = nullptr);
  // Generators the simulated code made (sim_generators.cc): a capsule standing for each, its frame.
  PyObject* make_generator(std::unique_ptr<SimFrame> fr);
  bool sim_generator(PyObject* v) const { return !values_.generators().empty() && values_.created(v, Kind::Generator); }
  SimFrame& generator_frame(PyObject* g) { return *values_.at(g).frame; }
  PyObject* generator_next(PyObject* g);  // the next value; nullptr: exhausted
  PyObject* stop_value_ = nullptr;        // what the generator generator_next just finished returned
  void yield_value(SimFrame& fr);
  void yield_from(SimFrame& fr);
  bool generator_cleanup_pending() const;  // one is suspended inside a try or with block
  void check_drop(SimFrame& fr, int local);  // STORE_FAST/DELETE_FAST over a finalizer's last reference?
  void not_in_callee(const std::string& what);  // a replayed store that may raise: not from a called function
  PyObject* lazy_builtin(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames);
  // functools.partial read from the frame: its function called with its arguments and keywords
  // (each read along a guarded path) before and among the call's own.
  PyObject* call_partial(PyObject* partial, const std::vector<PyObject*>& args, PyObject* kwnames);
  static bool is_partial(PyObject* v);
  PyObject* drain(PyObject* g);           // a list of every value left
  PyObject* call_on_generators(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames);
  // Exceptions raised and caught in captured code (sim_exceptions.cc).
  bool plain_exception_class(PyTypeObject* t);
  PyObject* make_exception(PyTypeObject* t, const std::vector<PyObject*>& args, PyObject* kwnames);
  void raise_statement(SimFrame& fr, int argc);
  [[noreturn]] void raise_lookup_error(const char* during);
  bool enter_handler(SimFrame& fr, PyObject* e);
  bool enter_table_handler(SimFrame& fr, size_t at, PyObject* e);  // 3.11: raised at instruction `at`
  bool within_handler(const SimFrame& fr, size_t i, int target);
  bool exception_matches(PyObject* raised, PyObject* pattern);
  void pop_except(SimFrame& fr);
  void reraise(SimFrame& fr);
#if PJ_PY_BLOCKS_37
  void return_value(SimFrame& fr, PyObject* v);
  static PyObject* return_marker();
  static PyObject* silenced_marker();
#endif
#if PJ_PY_BLOCKS_37 || PJ_PY_FINALLY_38
  // A finally body's own state (3.7's WHY markers, 3.8's NULL or return address) is on the
  // simulated stack: no graph break there, a resume function could not rebuild it.
  bool finally_state_on_stack(const SimFrame& fr) const;
  PyObject* exit_from_under_exception(SimFrame& fr);
  void with_cleanup_start(SimFrame& fr);
  void with_cleanup_finish(SimFrame& fr);
#endif
#if PJ_PY_FINALLY_38
  // 3.8's finally bodies run as subroutines (sim_finally38.cc): BEGIN_FINALLY's NULL (this
  // object) or CALL_FINALLY's return address (an int this set holds) on the stack says how to leave.
  static PyObject* finally_null();
  std::unordered_set<PyObject*> finally_addresses_;
  void call_finally(SimFrame& fr, const Instruction& ins);
  void pop_finally(SimFrame& fr, int keep_top);
  void end_finally(SimFrame& fr);
#endif
  void refuse_traceback_reader(PyObject* exit);
  bool made_exception(PyObject* v) const { return values_.created(v, Kind::Exception); }
  // One capture made, or one the frame was given and raised (a resume function raising again what
  // an instruction the interpreter ran raised): what handlers may match, re-raise and pass to exit.
  bool sim_exception(PyObject* v) const {
    return made_exception(v) || std::find(raised_inputs_.begin(), raised_inputs_.end(), v) != raised_inputs_.end();
  }
  bool raise_input(PyObject* e);
  std::vector<PyObject*> raised_inputs_;  // (frame values: the frame keeps them alive)
  void unwind_except_handler(SimFrame& fr, const SimFrame::Block& b);
  // Where the simulated exception on its way out was raised (its innermost user frame, before the
  // frames it leaves are popped): a refusal for an exception no simulated handler catches names
  // that line, not the root's.
  struct RaiseOrigin {
    PyObject* value = nullptr;
    int line = 0;
    PyCodeObject* code = nullptr;
    InlineChain chain;
  } raise_origin_;
  // materialize() for code that only moves references (iteration, list.append): made objects
  // held by the container pass as they are.
  bool passing_ = false;
  struct Passing {
    Simulator* s;
    bool was;
    explicit Passing(Simulator* sim) : s(sim), was(sim->passing_) { s->passing_ = true; }
    ~Passing() { s->passing_ = was; }
  };
  bool compares_plainly(PyObject* container);
  void refuse_user_operands(const std::string& what, const std::vector<PyObject*>& args);
  void need_identity(PyObject* v);                     // guard that later calls see this very object
  void guard_identity(int node, PyObject* v);          // the Id check itself (weak; refuses if it cannot be)
  void is_identity(PyObject* a, PyObject* b);          // guards what `a is b` depended on
  int node_of(PyObject* v) const;                      // -1 if not read from the frame
  // Read from the frame, or a stand-in capture made for such an object (a copy holding symbolic
  // tensors, a cell mirroring an enclosing function's): writing to it would change nothing real.
  bool frame_object(PyObject* v) const { return values_.preexisting(v); }
  // Every write the simulated code makes goes through here (the mutation overlay's entry).
  void write(PyObject* target, Write kind, std::string what, bool preexisting = false);
  // LIST_APPEND, MAP_ADD, LIST_EXTEND...: the container being built is usually the frame's own,
  // but a resume function is handed the one its caller was building.
  void build_into(PyObject* container, const Instruction& ins) {
    write(container, Write::Method, std::string(op_name(ins.op)) + " on a " + Py_TYPE(container)->tp_name +
                                        " the function did not create");
  }
  PyObject* load_attr(PyObject* v, PyObject* name);
  PyObject* frame_dict_item(PyObject* d, int node, PyObject* key);  // op_loads_stores.cc
  // ---- mixed precision: Cell.to_float (sim_values.cc; mirrors pijit/nn/cell.py's _mixed_precision_call) ----
  // The dtype floating trainable Parameters read through a Cell attribute are cast to (Py_None: none).
  PyObject* mixed_precision_dtype();
  PyObject* mixed_precision_param(PyObject* param, PyObject* value, int node);
  PyObject* cast_floating(PyObject* v, PyObject* dst);  // v.astype(dst) for a floating tensor v of another dtype
  PyObject* call_converted_cell(PyObject* construct, PyObject* dst, const std::vector<PyObject*>& args, PyObject* kwnames);
  PyObject* amp_inlined_ = nullptr;  // while an inlined converted cell runs: its dst_type (guarded)
  PyObject* amp_outer_ = nullptr;    // the thread's dtype where capture began, once read (guarded)
  // ---- side effects deferred to after the graph (sim_effects.cc) ----
  PyObject* output_call(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames);
  void store_attr(PyObject* owner, PyObject* name, PyObject* value);
  void store_global(SimFrame& fr, PyObject* name, PyObject* value);
  void store_nonlocal(SimFrame& fr, int i, PyObject* value);
  bool defers_method(PyObject* owner, PyObject* name);  // owner.name(...) is replayed, not simulated
  bool replayable_method(PyObject* owner, PyObject* name);  // ... by its class and name alone
  PyObject* deferred_method(PyObject* owner, PyObject* name);  // nullptr: not one
  bool replayed_method(PyObject* v) const {  // deferred_method made it
    const Value* r = values_.method(v);
    return r && r->replayed;
  }
  PyObject* defer_method_call(PyObject* method, const std::vector<PyObject*>& args);
  bool store_item(PyObject* container, PyObject* key, PyObject* value);
  void refuse_dirty_read(SimFrame& fr, const Instruction& ins);
  bool holds_dirty(PyObject* v);
  bool container_deferrable(PyObject* container);
  bool plain_output_arg(PyObject* v);
  bool builtin_stream(PyObject* file);
  bool logging_is_plain(PyObject* logger);
  PyObject* overlay_attr(PyObject* owner, PyObject* name);  // nullptr: no deferred store
  PyObject* overlay_global(SimFrame& fr, PyObject* name);
  void defer(codegen::EffectPlan fx, PyObject* value, const std::string& what, bool may_raise = true);
  PyObject* assign_call(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames);
  void write_tensor(PyObject* target, PyObject* value, const std::string& what);
  bool stores_back(PyObject* owner, PyObject* name, PyObject* value);
  bool store_parameter_values(PyObject* owner, int node, PyObject* name, PyObject* value);  // cell.p = t
  PyObject* inplace_tensor(py::Opcode op, PyObject* a, PyObject* b);
  PyObject* with_method(PyObject* mgr, const char* name);
  void escape(PyObject* v);
  ReturnPlan plan_callee(PyObject* callable);
  ReturnPlan plan_return_node(int node);
  static std::string describe_output(PyObject* func);

  PyObject* load_global(SimFrame& fr, PyObject* name);
  PyObject* load_deref(SimFrame& fr, int i, bool must_be_bound = true);
  PyObject* call(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames);
  PyObject* call_ex(PyObject* callable, PyObject* args_tuple, PyObject* kwargs_dict);
  PyObject* tape_run(const std::vector<PyObject*>& args, PyObject* kwnames);
  // A Cell with a bprop called while a tape records (sim_bprop.cc).
  PyObject* call_with_bprop(PyObject* cell, PyObject* construct, const std::vector<PyObject*>& args, PyObject* kwnames);
  // A stop inside a simulation that library code ran (a bprop the backward sweep reached) went
  // out as a Python error: it is thrown again once the library call returns.
  void rethrow_pending_stop();
  std::unique_ptr<StopCapture> pending_stop_;
  struct {
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;  // owned while set
  } pending_exc_;
  int own_tapes_ = 0;  // tapes tape_run started that record now (a grad call inside the capture)
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // runners the tapes keep check it
  bool truth(PyObject* v);
  // f(**a, **b): CPython raises TypeError for a key in both, or one that is not a str.
  void refuse_duplicate_keywords(PyObject* so_far, PyObject* more);
  bool holds_tensor(PyObject* v);  // a tensor, or a tuple/frozenset holding one
  bool user_callable(PyObject* v);
  bool subclass_check(PyObject* cls, PyObject* classinfo, bool inst, PyObject* obj);
  PyObject* get_iter(PyObject* v);
  ReturnPlan plan_return(PyObject* v);

 private:
  PyObject* inline_call(PyObject* func, PyObject* self, const std::vector<PyObject*>& args, PyObject* kwnames);
  PyObject* trace_call(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames);
  PyObject* trace_call_args(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames);
  void refuse_runtime_state(PyObject* callable);
  PyObject* load_fast(SimFrame& fr, int i);
  PyObject* make_super(const std::vector<PyObject*>& args, PyObject* kwnames);
  PyObject* super_attr(PyObject* sup, PyObject* name);
  // Guards that no class-level attribute of tp changed (its version tag), remembering what `name`
  // held there to explain a failure. The node holds an instance of tp, or with `is_class` tp itself.
  void guard_class(int node, PyTypeObject* tp, PyObject* name, bool is_class = false);
  PyObject* class_attr(PyObject* cls, PyObject* name);  // C.name, for a class the frame reaches
  PyObject* call_builtin(PyObject* callable, const std::vector<PyObject*>& args, PyObject* kwnames, bool* handled);
  bool is_cell_dict(PyObject* cell);
  PyObject* cell_dict_item(PyObject* cell, PyObject* key);
  PyObject* cell_children(PyObject* cell);  // a tuple of a CellList/SequentialCell's cells, sourced
  PyObject* make_sym(const TensorMeta& m, int value_id);

 public:
  // ---- the frame loop (simulator.cc) ----
  void load_code(SimFrame& fr, PyCodeObject* co);
  PyObject* run_frame(SimFrame& fr);
  void step(SimFrame& fr, const Instruction& ins);  // dispatches to the opcode's handler (op_table.cc)

  // ---- one handler per opcode (op_handlers.def; capture/op_*.cc) ----
#define PJ_HANDLER(opcode) void opcode(SimFrame& fr, const Instruction& ins);
#define PJ_FAMILY(opcode, handler)
#include "capture/op_handlers.def"
#undef PJ_HANDLER
#undef PJ_FAMILY
  // Families: one handler, the opcode tells the operation.
  void binary_operator(SimFrame& fr, const Instruction& ins);
  void unary_operator(SimFrame& fr, const Instruction& ins);
  void dict_update(SimFrame& fr, const Instruction& ins);
  void build_unpack(SimFrame& fr, const Instruction& ins);
  void build_map_unpack(SimFrame& fr, const Instruction& ins);
  void jump_unconditional(SimFrame& fr, const Instruction& ins);
  void pop_jump_if(SimFrame& fr, const Instruction& ins);
  void jump_if_or_pop(SimFrame& fr, const Instruction& ins);
  void setup_block(SimFrame& fr, const Instruction& ins);
  void import_statement(SimFrame& fr, const Instruction& ins);
  void pop_jump_if_none(SimFrame& fr, const Instruction& ins);
  void async_opcode(SimFrame& fr, const Instruction& ins);
  void match_class_flag(SimFrame& fr, const Instruction& ins);
  // Every opcode op_handlers.def does not list: B001 UnsupportedOpcode.
  void unsupported_opcode(SimFrame& fr, const Instruction& ins);
  int current_line() const;
  PyCodeObject* current_code() const;  // the innermost user frame's
  InlineChain inline_chain() const;    // StopCapture::chain
  PyCodeObject* stopped_callee() const;  // StopCapture::callee

  CaptureResult& r_;
  CaptureOptions opt_;
  guards::GuardTree& tree_;
  graph::Graph& graph_;
  std::vector<PyObject*> keep_;                       // owned references, released at the end
  ValueTable values_;                                 // one record per classified value (values.h)
  DynamicShapes dynamic_{*this};                      // symbolic sizes, lifted numbers (sim_dynamic.h)
  std::unordered_map<int, PyObject*> sym_of_node_;    // graph-input symbolic tensors by guard node
  std::unordered_map<PyObject*, std::pair<int, bool>> ret_slots_;  // returned container -> (slot, planned)
  std::unordered_map<const void*, int> const_ids_;    // concrete tensor impl -> graph const value
  // Views taken of a tensor before it was written in place: eagerly they show the new data, in
  // the graph the old, so any later read of one (an op, a return) stops capture.
  std::unordered_set<int64_t> stale_views_;
  // Values a Parameter was assigned in this graph (ops.assign, replayed by _C.write_back after it):
  // a view of one that the frame returns would view the graph's buffer, not the Parameter, which
  // the eager view aliases (views_written_back).
  std::unordered_set<int64_t> written_back_;
  bool views_written_back(int64_t id) const;
  std::unordered_map<PyTypeObject*, bool> library_types_;
  std::unordered_set<PyTypeObject*> tensor_types_;    // classes of the tensors read from the frame
  std::vector<SimFrame*> frames_;                     // the inline stack
  std::unordered_map<PyCodeObject*, const DecodedCode*> decoded_;  // (each code kept alive by own())
  int budget_;
  // The root frame's state at the start of its current instruction, when its block stack is
  // empty: where a refusal can become a graph break (sim_breaks.cc).
  struct BreakPoint {
    bool valid = false;
    int offset = 0;                   // of the instruction
    int line = 0;
    Opcode op = Opcode::NOP;
    int arg = 0;
    int prev_offset = -1;             // the root instruction run before it (-1: a jump led here)
    int nargs = 0;                    // arguments (bound when the frame starts)
    std::vector<PyObject*> stack;
    std::vector<PyObject*> locals;
    std::vector<char> stored;
    std::vector<PyObject*> cells;     // cellvars' contents; null_slot(): never assigned
    std::vector<SimFrame::Block> blocks;  // try blocks open there (the resume function enters them again)
    graph::Graph::Mark graph;
    size_t mutations = 0;             // mutated_.size() then
    int ordinal = 0;                  // the how-many-th point (CaptureOptions::stop_at_boundary)
  } point_, line_start_;
  // line_start_: the point where the current source line began (or control last arrived by a
  // jump). Breaking there (the interpreter runs the line's instructions up to the failing one)
  // keeps values the line computed from Python scalars out of the graph and its guards.
  int points_ = 0;
  int last_line_ = -1;
  bool after_jump_ = true;            // the root's previous instruction jumped or changed blocks
  int break_offset_ = -1;
  int loop_offset_ = -1;
  // Numbers read from the frame are fresh copies (identity tells them from equal constants); their
  // Equal guard waits until an instruction other than a move consumes them, so a number only
  // passed through (a loop counter handed to the next iteration) does not specialize the graph.
  std::unordered_map<PyObject*, PyObject*> copy_of_;             // frame number -> its copy
  std::unordered_map<PyObject*, PyObject*> scalar_origin_;       // ... and back (kept alive by own())
  std::unordered_map<PyObject*, std::vector<int>> scalar_nodes_;  // copy -> the paths it was read along
  std::unordered_set<PyObject*> unguarded_;                       // copies whose guard still waits
  bool holds_unguarded(PyObject* v, int depth = 0) const;
  bool reading_attribute() const;  // the innermost simulated instruction is a LOAD_ATTR
  std::unordered_set<PyObject*> attr_read_;  // liftable copies a LOAD_ATTR pushed unguarded
  bool moving_ = false;  // the instruction being simulated only moves values (a number it reads waits)
  PyObject* frame_scalar(PyObject* obj, int node);
  void guard_scalars(PyObject* v, int depth = 0);  // stop(): the root's instruction it stopped in, when that is inside a loop             // can_break: the last instruction the interpreter runs (-1: none)
  int last_offset_ = -1;              // the root's previous instruction
  bool point_current_ = false;        // point_ is the root's current instruction
  bool reached_point_ = false;        // stopped at CaptureOptions::stop_at_boundary
  std::vector<PyObject*> mutated_;    // every object written to, in program order
  std::unordered_set<PyObject*> written_cells_;  // cells STORE_DEREF assigned
  // The overlay of deferred stores: what the simulation reads back before the replay makes them.
  std::map<std::pair<PyObject*, std::string>, PyObject*> attr_overlay_;
  std::unordered_set<PyObject*> overlaid_;       // owners in attr_overlay_
  std::unordered_map<std::string, PyObject*> global_overlay_;  // the root's globals
  std::unordered_set<PyObject*> escaped_;        // created containers a deferred effect rebuilds, graph tensors it stores
  // The caller's containers a deferred effect changes: the simulation can no longer read them.
  std::unordered_set<PyObject*> dirty_;
  // The caller's lists and dicts with deferred changes, as plain Python sees them by now.
  std::unordered_map<PyObject*, ContainerOverlay> overlays_;
  ContainerOverlay* overlay_of(PyObject* c);  // an exact overlay, or nullptr
  ContainerOverlay& overlay_for(PyObject* c);
  ContainerOverlay& overlay_known(PyObject* c);  // overlay_for, with a list's own items in it
  bool length_guarded(PyObject* c);
  PyObject* overlay_slot(PyObject* c, const ContainerOverlay::Slot& s);
  PyObject* overlay_dict_get(PyObject* c, ContainerOverlay& ov, PyObject* key);
  bool overlay_reads(PyObject* c, PyObject* key);  // c[key] can be read from c's overlay
  PyObject* overlay_item(PyObject* c, PyObject* key);
  PyObject* overlay_len(PyObject* c);
  bool overlay_contains(PyObject* c, PyObject* key);
  bool overlay_instruction(SimFrame& fr, const Instruction& ins);
  void overlay_change(PyObject* c, const std::string& name, const std::vector<PyObject*>& args);
  std::unordered_set<PyObject*> iterated_;  // frame containers an iterator was made over
  // Real closure cells met, and their one stand-in each: `node` is the cell's guard node; `root`:
  // one of the captured function's free variables (its stand-in cannot be shared under a guard).
  struct RealCell {
    PyObject* mirror;
    int node;
    bool root;
  };
  std::unordered_map<PyObject*, RealCell> real_cells_;
  // User functions the root called (inlined) that recorded tensor work, with the ordinal of the
  // root's last break point before the call (CaptureResult::callees).
  std::vector<std::pair<PyCodeObject*, int>> called_;  // stand-ins of one real cell that cannot be shared
  void mark_point(SimFrame& fr);
  bool stores_local_between(int from, int to) const;
  // After a refusal (first pass): whether it can become a graph break at the current point, i.e.
  // nothing the interpreter redoes from there (the instruction, and what capture simulated of it)
  // was a write to what the point's values reach. The second pass, stopped at that point, plans
  // the break (fills r_.plan) unless a live value cannot be rebuilt.
  int can_break(Break why);  // the ordinal of the point to break at (0: none)
  int choose_break();
  bool plan_break();
  std::vector<char> bound_at_point() const;  // which fast locals are bound at point_
  std::vector<int> nulls_after_run() const;   // NULL positions once the interpreter ran to break_offset_
  PyCodeObject* frames_root_code_ = nullptr;
  py::Frame* frames_root_real_ = nullptr;
  bool reachable_from(const BreakPoint& b, PyObject* target);
  bool breakable(const BreakPoint& b, bool runs);
  bool holds_live_tensor(const BreakPoint& b);  // a tensor among b's locals and stack
  PyObject* jitted_target(PyObject* target);
  PyObject* returns_read(PyObject* owner, const std::string& name, const std::vector<PyObject*>& args, bool* changes);
  bool resume_data(int node) const;
  PyObject* bound_builtin(PyObject* obj, int node);  // wrap(): a builtin method bound to its object  // a root local that is a resume function's stack argument
  bool work_after(int offset) const;
  bool graphless_ok_ = false;  // the refusal may break where no graph work came before (can_break)
  int break_else_ = 0;         // the point to break at where planning at the chosen one fails
  bool planning_break_ = false;  // plan_return for a graph break's live values
  int backedges_ = 0;  // loop iterations simulated (CaptureOptions::loop_limit)
  // The loop limit was reached in a loop of the root's callee, which alone ran most of it: the root's
  // own loop is not worth running per iteration (each iteration would run past the limit again);
  // the callee is captured on its own when the interpreter calls it (StopCapture::callee).
  PyCodeObject* long_loop_callee_ = nullptr;
  void note_long_loop(const SimFrame& fr, std::string* detail);

  // Walks over nested containers (materialize, identity, trust, return plans) stop at this depth:
  // deeper than any model's data, and what a self-referential container reaches.
  static constexpr int kMaxNesting = 64;
  static constexpr Py_ssize_t kMaxGuardedItems = 1024;  // items of one frame container materialize guards
  int nesting_ = 0;
  struct Nesting {
    Simulator* s;
    explicit Nesting(Simulator* sim) : s(sim) {
      if (s->nesting_ >= kMaxNesting) s->stop(Break::UnsupportedCall, "containers nested deeper than 64 (or self-referential)");
      ++s->nesting_;
    }
    ~Nesting() { --s->nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
  };
};

// A unique object standing for LOAD_METHOD's empty slot.
PyObject* null_slot();
// ... and one for 3.11's NULL under a callable (PUSH_NULL's, LOAD_GLOBAL's): always NULL, so a
// resume function can push it again (ReturnPlan::Null), where LOAD_METHOD's slot may hold a method.
PyObject* call_slot();

bool is_cell(PyObject* v);                                  // an instance of pijit.nn.Cell
bool is_parameter(PyObject* v);                             // an instance of pijit's Parameter
// Marks the graph outputs only a leading write-back into a Parameter uses (graph::Graph::write_backs).
void find_write_backs(CaptureResult& r);
bool name_in(const char* const* names, const char* name);  // names: nullptr-terminated

}  // namespace pj::capture
