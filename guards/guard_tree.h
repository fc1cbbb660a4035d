// The guard tree: what a cached graph assumed about the frame, checked on every call.
//
// Each node is an access path from the frame ("x", "self._params['w']", "G" as a global) and
// shares its prefix with its parent, so `self` is read once however many of its attributes are
// guarded. Checks hang off nodes. check() walks the nodes in creation order (parents first) on the
// frame's fast locals, cells and globals directly, without building a locals dict, and stops at the
// first failing check, which it can describe in words ("x.shape[0]: 3 -> 4").
//
// The same paths tell codegen how to load a graph input in the rewritten bytecode (load_steps).
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <memory>
#include <string>
#include <vector>

#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "common/byte_io.h"
#include "kernels/tensor.h"
#include "py/portable.h"

namespace pj::guards {

enum class Access {
  Local,     // fast local `index` (co_varnames order)
  Deref,     // contents of cell/free variable `index` (co_cellvars + co_freevars order)
  Global,    // frame globals[key]
  Builtin,   // builtins[key] (a Global node guarded absent comes first)
  Attr,      // getattr(parent, key)
  DictAttr,  // parent.__dict__[key] (instance or module dict; no descriptors run)
  Item,      // parent[key], key a constant
  FuncAttr,  // a function's __code__, __defaults__, ... read from the function object itself
             // (no attribute lookup, so no audit event and no descriptor runs per check)
  Context,   // no object: global state (the context mode)
  Const,     // the object `key` itself (e.g. the globals dict of an inlined function, fixed by
             // the identity guard on that function)
};

enum class CheckKind {
  Type,        // type(o) is ref
  Id,          // o is ref (n == 1: ref is a weak reference to it, so a guard never keeps a
               // user's object alive; the check fails once it died)
  Equal,       // type(o) is type(ref) and o == ref (constants)
  TensorMeta,  // type(o) is ref, and shape/dtype equal (n: 1 contiguous, 2 not, 0 layout not read)
  Length,      // type(o) is ref and len(o) == n
  DictKeys,    // type(o) is dict and its keys, in order, are ref's (a list): constants compared as
               // Equal does, other keys by identity
  SetContents, // type(o) is ref[0] and o holds exactly the constants of the tuple ref[1]
  Absent,      // the path does not resolve (global not defined, key missing)
  Mode,        // the context mode is n
  TypeVersion, // type(o) is ref[0] and its version tag is n: no class-level attribute of o changed
               // (ref[1]: {name: (what the class held,) or ()} for explaining a failure)
  ClassVersion, // o is ref[0] (a class) and its version tag is n; ref[1] as for TypeVersion
  DictVersions, // ref is (dicts, versions): each dict still has its version (PEP 509; versions is
                // bytes of uint64), so no name in those namespaces was rebound. o is unused.
  SameAs,       // (o is the object at node n) == (ref is Py_True); n is an earlier node. What `a is b`,
                // and hashing tensors (identity-based), answered about two paths.
  Compare,      // (o <op> ref) is bool(n >> 3), op = n & 7 (Py_LT .. Py_GE): a relational guard on a
                // Python number that changes between calls (`if lr > 0.5`); ref a constant number
  AmpDtype,     // this thread's mixed-precision dtype (Cell.to_float) is ref (a dtype, or None)
};

// A relational fact about a symbolic size that Python code compared with a constant
// (`if x.shape[0] > 4`): the graph holds for every size >= 2 that satisfies it.
struct SizeFact {
  int dim = 0;
  int op = 0;  // Py_LT .. Py_GE, the comparison that holds
  int64_t value = 0;
  bool operator==(const SizeFact& o) const { return dim == o.dim && op == o.op && value == o.value; }
};

struct Check {
  CheckKind kind;
  PyObject* ref = nullptr;  // owned
  int64_t n = 0;
  TensorMeta meta;
  // TensorMeta: per dim, -1 when the size must equal meta's, else the symbol (s<k>) the graph
  // keeps for it (dynamic shapes): any size >= 2 passes (0 and 1 change what broadcasting and
  // emptiness mean, so they stay specialised). Empty: every dim exact.
  std::vector<int> symbols;
  std::vector<SizeFact> facts;  // TensorMeta: relations the symbolic dims must satisfy too
  mutable bool stable = false;  // passes again whenever the node holds the same object (set by prepare)
};

struct GuardNode {
  Access access;
  int index = 0;            // Local/Deref
  int parent = -1;
  PyObject* key = nullptr;  // owned: interned str for names, any constant for Item
  std::vector<Check> checks;
  // The version shortcut (check()), set by prepare(). Dict version tags (PEP 509) are never reused,
  // so a dict whose tag is the one seen on the last call that passed every check is that dict,
  // unmodified: the entries read from it are the same objects, and checks that follow from
  // identity alone (`is`, `==` a constant, absent, an immutable builtin type) need not run again.
  mutable uint8_t version_of = 0;  // 1: o.__dict__ (DictAttr children read it), 2: o itself, a dict (Item children)
  mutable bool from_versioned = false;  // read from its parent's versioned dict
  mutable bool skippable = false;       // and a leaf with only stable checks, that no SameAs refers to
  mutable bool last_known = false;      // `last` holds what it resolved to (below)
  int16_t slot = -1;                    // check() hands its object out at out[slot] (keep_resolved)
  mutable uint64_t version = 0;  // the tag on the last call that passed; 0: unknown
  // What the last passing call saw of a dict node (version_of 2): its class, and an OrderedDict's
  // list state (its order moves without a new tag), when od_tracked (an OrderedDict iterating its
  // list; od_other: one iterating its own way, whose keys the tag never implies).
  mutable PyTypeObject* dict_type = nullptr;
  mutable size_t od_state = 0;
  mutable bool od_tracked = false;
  mutable bool od_other = false;
  // A node read from a versioned dict: what it resolved to on the last call that passed (borrowed:
  // while that dict keeps its tag it holds the object). Read again only when the tag moved.
  mutable PyObject* last = nullptr;
};

struct GuardFailure {
  std::string path;    // "x.shape[0]", "self.value", "G"
  std::string before;  // what the graph assumed
  std::string after;   // what the frame holds now
  // A tensor's size alone differed (same rank and dtype): the tensor's path and the dim, so that
  // the recompile can make that dim symbolic (dynamic shapes). -1: another kind of failure.
  std::string tensor_path;
  int dim = -1;
  // A Python int or float at `path` held another value of the same type (lifted scalars).
  bool scalar = false;
  std::string text() const { return path + ": " + before + " -> " + after; }
};

bool compare_sizes(int64_t a, int op, int64_t b);  // a <op> b, op Py_LT .. Py_GE
std::string fact_text(int symbol, const SizeFact& f);  // "s0 > 4"

// A call's arguments, read where the guards read a frame (the frameless direct call: a cache hit
// of a function whose frame would hold only its positional arguments, runtime/eval_frame.cc).
struct CallView {
  PyObject* const* locals;  // the first nlocals fast locals (the arguments); the rest are unbound
  int nlocals;
  PyObject* function;  // its globals, builtins and closure (free variables' cells)
  int ncells;          // its code's cell variables (none has a cell before the frame makes it)
};

class GuardTree {
 public:
  GuardTree() = default;
  GuardTree(const GuardTree&) = delete;
  GuardTree& operator=(const GuardTree&) = delete;
  ~GuardTree();

  // The node for an access path, created on first use (children are shared).
  int root(Access access, int index, PyObject* key);
  int child(int parent, Access access, PyObject* key);
  void add_check(int node, Check c);  // steals c.ref; duplicate checks are dropped
  // Guards that the objects at nodes a and b are (or are not) one object.
  void add_same_as(int a, int b, bool same);
  void drop_check(int node, CheckKind kind, PyObject* ref);  // one a later, stronger check implies
  Check* find_check(int node, CheckKind kind);                // the node's check of this kind, if any
  const GuardNode& node(int i) const { return nodes_[i]; }
  int size() const { return static_cast<int>(nodes_.size()); }
  int num_checks() const;

  // The fast pass (below) on a call's arguments. Pass: out as check() fills it. Fail: check() on
  // the frame would fail. Changed: the fast pass cannot answer (not armed, or a tag moved).
  enum class Fast { Pass, Fail, Changed };
  Fast check_call(const CallView& v, PyObject** out) const;
  // True when every check passes on this frame. On failure fills *why (when non-null). When it
  // passes and `out` is given, out[k] is a new reference to the object at the k-th node named to
  // keep_resolved() (the direct call's graph inputs, read where the guards just resolved them);
  // when it fails, out holds nothing.
  bool check(py::Frame* f, GuardFailure* why, PyObject** out = nullptr) const;
  // Distinct nodes whose object check() always resolves (the version shortcut never skips them)
  // and hands out, in this order.
  void keep_resolved(const std::vector<int>& nodes);
  // check() for the debugging logs: runs every check whose path resolves (a failing node's
  // children are skipped) and appends each failure (recompiles_verbose); with `profile`, times each
  // check into the tree's per-check counters (guard_perf). Same answer as check().
  bool check_all(py::Frame* f, std::vector<GuardFailure>* failures, bool profile) const;
  // Per check, in describe() order: times run, nanoseconds spent, times it failed.
  struct CheckStat {
    int64_t runs = 0, ns = 0, misses = 0;
  };
  const std::vector<CheckStat>& profile() const { return profile_; }
  int64_t fast_passes() const { return fast_passes_; }  // calls the fast pass alone answered

  // The persistent form (guards/guard_io.cc; the compile cache, runtime/disk_cache.h): each node and
  // check with its objects written portably (py/portable.h). save() is false, with *why, where an
  // object has none. load() gives nullptr, with *why, where one does not resolve in this process
  // or a class or namespace read by the graph differs (a *why that starts with "stale" or
  // "malformed" can never change in this process); version tags are this process's own. The
  // identity checks of plain instances and code objects reached from the frame are pending until
  // adopt() binds each to what that frame holds there (false: a path does not resolve, or holds
  // an object of another kind); a check still pending fails.
  bool save(ByteWriter& w, std::string* why) const;
  static std::shared_ptr<GuardTree> load(ByteReader& r, std::string* why);
  bool adopt(py::Frame* f, std::string* why);
  bool adoption_pending() const { return !pending_.empty(); }
  // Whether its local and cell paths index into co's (a loaded tree names them by position).
  bool roots_fit(PyCodeObject* co) const;

  std::string path(int node) const;       // Python-like text of the access path
  std::vector<std::string> describe() const;  // one line per check, in evaluation order

 private:
  int find_or_add(int parent, Access access, int index, PyObject* key);
  // The node, appended without looking for it (find_or_add, load): keys held as guards hold them.
  int append_node(int parent, Access access, int index, PyObject* key);
  void prepare() const;  // the version shortcut's per-node facts, after the last change
  // The fast pass (check()): when the last call passed with every versioned dict as the call before
  // it left it, the next call first assumes nothing changed and verifies only that: each dict's tag,
  // the checks identity does not imply, the paths that are not read from a versioned dict. A tag
  // that moved sends the call to the full walk; a failing check fails the call.
  Fast check_fast(py::Frame* f, PyObject** out) const;
  template <class Roots>
  Fast run_fast(const Roots& roots, PyObject** out) const;
  // One step, with what it compares against copied in (a stream read front to back, not the nodes).
  struct FastOp {
    enum Kind : uint8_t { Resolve, Pin, Last, Tag, Run, TypeIs, TypeVersion, ClassVersion, Meta, Slot, Words, Amp } kind;
    uint8_t version_of = 0;  // Tag: the node's
    bool od_tracked = false; // Tag: the node's
    PyTypeObject* dict_type = nullptr;  // Tag (version_of 2): the dict's class
    int node = 0;
    int check = -1;          // Run: the node's check
    uintptr_t a = 0;         // Last, Pin: the object; Tag: the tag; TypeIs: the class; (Type|Class)Version:
                             // its tag; Words: the first word; Amp: the dtype
    uint64_t b = 0;          // Tag: the OrderedDict's list state; Words: one past the last word
  };
  // What the fast pass verifies of an object it knows (pinned: read from a dict whose tag held, or a
  // root that is the object the last passing call saw) is a machine word at a fixed address: a
  // dict's tag, the pointer to an instance's dict, an object's class, a class's flags and version.
  // They are checked level by level (record_fast), a level without a branch per word: a word is
  // read only after the words that keep its object alive held.
  struct Word {
    const char* addr;
    uint64_t expect;
    static uint64_t at(const void* p) {  // the eight bytes at p
      uint64_t v;
      __builtin_memcpy(&v, p, sizeof v);
      return v;
    }
    uint64_t now() const { return at(addr); }
    bool holds() const { return now() == expect; }
  };
  static bool level_holds(const Word* w, const Word* end);
  mutable std::vector<Word> words_;
  mutable std::vector<std::pair<int, PyObject*>> known_;  // pinned objects a non-word op reads
  mutable std::vector<std::pair<int, PyObject*>> late_slots_;  // pinned objects handed out (slot, object)
  // fast_ from a passing full walk's objects and tags; false when memory no longer holds what the
  // walk checked (nothing to arm).
  bool record_fast(PyObject* const* objs) const;
  class Recorder;
  friend class Recorder;
  mutable std::vector<FastOp> fast_;  // built by record_fast()
  mutable std::unique_ptr<PyObject*[]> scratch_;  // run_fast's objects per node
  mutable size_t scratch_size_ = 0;
  mutable bool scratch_busy_ = false;
  mutable int passes_running_ = 0;  // run_fast calls in flight (one may re-enter another)
  mutable bool fast_ok_ = false;      // try the fast pass on the next call
  mutable uint64_t fast_rebinds_ = 0; // py::g_rebinds when it was recorded
  mutable int64_t fast_passes_ = 0;
  std::vector<GuardNode> nodes_;
  struct Pending {
    int node;
    size_t check;
    py::Adoption what;
    uint64_t state = 0;  // a plain instance's instance_print when it was saved
  };
  std::vector<Pending> pending_;  // load()'s identity checks that adopt() binds
  bool loaded_ = false;           // made by load(): complete (index_ is empty, no path is added)
  int num_slots_ = 0;  // nodes keep_resolved() named
  mutable bool prepared_ = false;
  mutable std::vector<CheckStat> profile_;  // check_all(profile=true); under the GIL
  // (parent, access, index, hash of key) -> nodes with that signature: finding a child is O(1),
  // so a capture that reads n items of a container builds its guards in O(n), not O(n^2).
  absl::flat_hash_map<std::tuple<int, int, int, Py_hash_t>, absl::InlinedVector<int, 1>> index_;
};

// The function attributes FuncAttr reads (borrowed; nullptr when `name` is not one of them or the
// attribute is unset, e.g. no defaults).
PyObject* function_field(PyObject* func, PyObject* name, bool* known);

// Guards never keep a user's object alive: hold_weakly gives a new reference to what a check
// keeps (a weak reference to a heap class or any weakly referenceable object, else o itself);
// held() reads it back, borrowed, nullptr once the object died.
PyObject* hold_weakly(PyObject* o);
PyObject* held(PyObject* ref);

// What a plain instance holds, for binding an identity guard to another process's object (save()
// and adopt()): its class, and its own attributes followed a few levels into builtin containers and
// plain instances (constants by value, tensors by class, dtype and shape, other objects by name or
// class). Library code that ran for real at capture read the object without guards: another
// object is bound only when it holds the same. false when the object is too large to print.
bool instance_print(PyObject* o, uint64_t* print);

// The fast pass on (the default) or off (PIJIT_DEBUG_NO_FAST_GUARDS: every check walks the tree).
void set_fast_pass(bool on);

// The global state guards read: the context mode (0 graph, 1 pynative), set from Python.
void set_context_mode(int mode);
int context_mode();

// This thread's mixed-precision dtype (borrowed): while a Cell converted by to_float(dst) runs, dst;
// None outside every such call. pijit/nn/cell.py sets it: set_amp_dtype keeps a reference to the
// new one and hands back the old one's.
PyObject* amp_dtype();
PyObject* set_amp_dtype(PyObject* dtype);

}  // namespace pj::guards
