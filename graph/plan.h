// The execution plan of a compiled graph: what runs on every launch, with everything that depends
// only on shapes decided once (shapes are fixed by the guards that chose the graph).
//
//   steps     one per node: a prepared kernel (OpDef::prepare, or the op's kernel bound to its
//             attributes) or, for views and data-dependent ops, the op's run function
//   buffers   every intermediate a kernel writes lives in one arena at an offset planned by
//             liveness (first fit over values' live ranges); an elementwise op writes into its
//             first input's buffer when that input dies there and the metas match
//   fresh     graph outputs (and whatever a view of an output aliases) get new storage per call:
//             the caller keeps them
//   memo      nodes computing only from Parameters (and constants), e.g. an inference batch
//             norm's coefficients or a weight's transpose, run once and are reused while every
//             Parameter they read is the same storage at the same write version (Storage::version):
//             constant folding, guarded by versions. A Parameter written in place by an op of the
//             graph, or one whose bytes an outside writer may change, is not memoized on.
//
//   alias     a graph output written back into a Parameter input (Graph::write_backs) is computed
//             in that Parameter's storage, when nothing reads the Parameter (or a view of it)
//             after the node that makes the output, that node is elementwise where it reads it
//             (element i from element i: every kernel loads before it stores), and neither that
//             node nor any after it can raise (a failing launch has written nothing: it may run
//             again eagerly). Per launch only when no gradient tape
//             is recording (it must copy the old bytes first) and no other input shares the
//             Parameter's storage; otherwise the output is fresh and write_back copies it.
//
// A steady-state launch allocates nothing for intermediates: it checks the inputs' metas, takes an
// arena (over one block all plans share, one launch at a time, so that plans called in turn reuse
// memory that is in the cache; a concurrent or nested launch takes one of the plan's own pool),
// runs the steps and returns the outputs.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace pj::graph {

class ExecPlan {
 public:
  explicit ExecPlan(std::shared_ptr<const Graph> g);
  ~ExecPlan();
  // Raises pj::Error when an input does not match its declared meta, or when a kernel raises.
  Tensors run(const Tensors& inputs) const;

  const Graph& graph() const { return *graph_; }
  size_t arena_bytes() const { return arena_bytes_; }
  int num_inplace() const { return num_inplace_; }
  int num_memoized() const { return num_memo_steps_; }
  int num_aliased() const { return num_alias_; }
  // Launches that reused the memo instead of running its steps (jit_stats' memo_reuses).
  int64_t memo_reuses() const { return memo_reuses_.load(std::memory_order_relaxed); }
  // Launches, and the time they took while timing is on (pijit.explain turns it on: two clock
  // reads per launch are 4% of a small graph's).
  int64_t runs() const { return runs_.load(std::memory_order_relaxed); }
  int64_t run_ns() const { return run_ns_.load(std::memory_order_relaxed); }
  static void set_timing(bool on);
  // The name trace events give its launches ("f (file.py:3)").
  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& name() const { return name_; }
  // PIJIT_DEBUG_EAGER_GRAPH=1 (bisect's stage switch): launches run the graph node by node as
  // eager ops (graph::execute), no prepared kernels or planned buffers.
  static bool debug_eager();
  // "arena 1.5 KiB, 6 buffers (2 in place), 1 fresh output[, 3 memoized][, 2 written in their
  // Parameters]", for explanations.
  std::string describe() const;

 private:
  std::vector<int> out_root_;  // per graph output: the value whose storage it views
  void copy_outputs(const std::vector<Tensor>& env, const std::vector<size_t>& which, Tensors& result) const;
  enum class Slot : uint8_t { Input, Const, Arena, Fresh, Dynamic, Memo, Alias };
  struct Step {
    const Node* node;
    PreparedFn kernel;      // empty: node->op->run
    std::vector<int> frees; // non-arena values whose last use is this step (references dropped)
    bool memo = false;      // computes Memo values: skipped while the memo is valid
    bool alias = false;     // writes an Alias value
  };
  // A Parameter's identity and write version when the memo was computed.
  struct MemoKey {
    std::weak_ptr<Storage> storage;
    const Storage* raw = nullptr;
    uint64_t version = 0;
    int64_t offset = 0;
  };
  struct Arena;

  // Views over `storage` (null: a new block of arena_bytes_).
  std::unique_ptr<Arena> make_arena(std::shared_ptr<Storage> storage = nullptr) const;

  std::shared_ptr<const Graph> graph_;
  std::string name_;
  bool eager_ = false;  // debug_eager() when planned
  std::vector<Slot> slot_;
  std::vector<size_t> offset_;  // Arena values: byte offset in the arena
  std::vector<int> alias_input_;  // Alias values: the input position whose storage they are written in
  std::vector<int> alias_inputs_;  // those input positions
  bool may_alias(const Tensors& inputs) const;
  void plan_aliases(const Graph& G, const std::vector<int>& root, const std::vector<int>& end);
  std::vector<Step> steps_;
  std::vector<int> transient_;  // values a launch sets (inputs, fresh, dynamic): cleared after it
  enum class Copy : uint8_t { Never, Always, IfShared };
  std::vector<Copy> out_copy_;  // per graph output
  std::vector<int> memo_params_;  // Parameter inputs that Memo values are computed from
  std::vector<int> memo_values_;  // every Memo value
  int num_memo_steps_ = 0;
  mutable bool memo_valid_ = false;          // guarded by mu_
  mutable std::atomic<int64_t> memo_reuses_{0};
  mutable std::atomic<int64_t> runs_{0}, run_ns_{0};
  Tensors run_steps(const Tensors& inputs) const;
  mutable std::vector<MemoKey> memo_keys_;   // per memo_params_
  mutable std::vector<Tensor> memo_store_;   // per memo_values_
  size_t arena_bytes_ = 0;
  int num_arena_ = 0, num_inplace_ = 0, num_fresh_ = 0, num_alias_ = 0;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Arena>> pool_;
  mutable std::unique_ptr<Arena> shared_arena_;  // over the shared block (plan.cc), used under its flag
  // One arena kept for the next launch, taken under its flag without the lock (the common case: one
  // launch at a time); a launch meanwhile (recursion, another thread) takes the pool's.
  mutable std::unique_ptr<Arena> spare_;
  mutable std::atomic<bool> spare_busy_{false};
};

}  // namespace pj::graph
