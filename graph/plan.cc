#include "graph/plan.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/trace.h"
#include "graph/tape.h"

namespace pj::graph {

struct ExecPlan::Arena {
  std::shared_ptr<Storage> storage;
  std::vector<Tensor> env;  // per value; Arena and Const slots stay filled between launches
  Tensors in, out;          // scratch for one step's operands
};

namespace {

constexpr size_t kAlign = 64;
size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// First-fit placement of blocks in one growing arena.
class ArenaPlanner {
 public:
  size_t allocate(size_t bytes) {
    bytes = round_up(std::max<size_t>(bytes, 1));
    for (size_t k = 0; k < free_.size(); ++k) {
      if (free_[k].second < bytes) continue;
      size_t at = free_[k].first;
      free_[k].first += bytes;
      free_[k].second -= bytes;
      if (free_[k].second == 0) free_.erase(free_.begin() + k);
      return at;
    }
    // Grow: a free block at the end is extended rather than left as a hole.
    if (!free_.empty() && free_.back().first + free_.back().second == size_) {
      size_t at = free_.back().first;
      size_ = at + bytes;
      free_.pop_back();
      return at;
    }
    size_t at = size_;
    size_ += bytes;
    return at;
  }
  void release(size_t at, size_t bytes) {
    bytes = round_up(std::max<size_t>(bytes, 1));
    auto it = std::lower_bound(free_.begin(), free_.end(), std::make_pair(at, size_t(0)));
    it = free_.insert(it, {at, bytes});
    // Merge with the neighbours.
    if (it + 1 != free_.end() && it->first + it->second == (it + 1)->first) {
      it->second += (it + 1)->second;
      free_.erase(it + 1);
    }
    if (it != free_.begin() && (it - 1)->first + (it - 1)->second == it->first) {
      (it - 1)->second += it->second;
      free_.erase(it);
    }
  }
  size_t size() const { return size_; }

 private:
  std::vector<std::pair<size_t, size_t>> free_;  // (offset, bytes), sorted by offset
  size_t size_ = 0;
};

size_t meta_bytes(const TensorMeta& m) { return static_cast<size_t>(shape_nbytes(m.shape, m.dtype)); }

}  // namespace

bool ExecPlan::debug_eager() {
  static const bool on = [] {
    const char* e = std::getenv("PIJIT_DEBUG_EAGER_GRAPH");
    return e && *e && std::string(e) != "0";
  }();
  return on;
}

ExecPlan::ExecPlan(std::shared_ptr<const Graph> g) : graph_(std::move(g)), eager_(debug_eager()) {
  const Graph& G = *graph_;
  if (eager_) return;
  const size_t nv = G.values().size(), nn = G.nodes().size();
  const std::vector<int> last = last_uses(G);
  slot_.assign(nv, Slot::Dynamic);
  offset_.assign(nv, 0);
  // What each value's storage belongs to: a view's is its base's.
  std::vector<int> root(nv);
  for (size_t v = 0; v < nv; ++v) {
    root[v] = static_cast<int>(v);
    const Value& val = G.values()[v];
    if (val.kind == ValueKind::Input) slot_[v] = Slot::Input;
    if (val.kind == ValueKind::Const) slot_[v] = Slot::Const;
  }
  // Memo values: computed by pure nodes only from constants and Parameters no op here writes,
  // from at least one such Parameter, and not returned (the caller would get the memo itself).
  std::vector<bool> stable(nv, false), from_param(nv, false), written(nv, false), is_output(nv, false);
  for (const Node& n : G.nodes())
    if (n.op->impure)
      for (int v : n.inputs) written[v] = true;
  for (int v : G.outputs()) is_output[v] = true;
  for (size_t v = 0; v < nv; ++v) {
    const Value& val = G.values()[v];
    stable[v] = val.kind == ValueKind::Const || (val.kind == ValueKind::Input && val.parameter && !written[v]);
    from_param[v] = val.kind == ValueKind::Input && stable[v];
  }
  std::vector<bool> memo_node(nn, false);
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = G.nodes()[i];
    if (n.op->impure || n.op->data_dependent || n.inputs.empty()) continue;
    bool ok = true, param = false;
    for (int v : n.inputs) ok = ok && stable[v], param = param || from_param[v];
    for (int o : n.outputs) ok = ok && !is_output[o] && !written[o];
    if (!ok || !param) continue;
    memo_node[i] = true;
    for (int o : n.outputs) stable[o] = from_param[o] = true;
  }
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = G.nodes()[i];
    for (int o : n.outputs) {
      if (n.op->is_view && !n.inputs.empty()) root[o] = root[n.inputs[0]];
      if (memo_node[i]) {
        slot_[o] = Slot::Memo;
        memo_values_.push_back(o);
      } else if (!n.op->run) {
        slot_[o] = Slot::Arena;
      }
    }
    if (memo_node[i])
      for (int v : n.inputs)
        if (G.values()[v].kind == ValueKind::Input &&
            std::find(memo_params_.begin(), memo_params_.end(), v) == memo_params_.end())
          memo_params_.push_back(v);
  }
  for (int v : G.outputs())
    if (slot_[root[v]] == Slot::Arena) slot_[root[v]] = Slot::Fresh;
  // A buffer lives until the last use of anything viewing it.
  std::vector<int> end(nv, -1);
  for (size_t v = 0; v < nv; ++v) end[root[v]] = std::max(end[root[v]], last[v]);
  plan_aliases(G, root, end);

  ArenaPlanner planner;
  std::vector<bool> taken(nv, false);  // an Arena value whose block an in-place output took over
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = G.nodes()[i];
    for (int o : n.outputs) {
      if (slot_[o] != Slot::Arena) continue;
      const Value& ov = G.values()[o];
      int u = n.inputs.empty() ? -1 : n.inputs[0];
      bool inplace = n.op->elementwise && u >= 0 && slot_[u] == Slot::Arena && root[u] == u && !taken[u] &&
                     end[u] == static_cast<int>(i) && G.values()[u].meta == ov.meta;
      for (size_t k = 1; inplace && k < n.inputs.size(); ++k)
        inplace = n.inputs[k] == u || root[n.inputs[k]] != u;  // no other view of it is read here
      if (inplace) {
        offset_[o] = offset_[u];
        taken[u] = true;
        ++num_inplace_;
      } else {
        offset_[o] = planner.allocate(meta_bytes(ov.meta));
      }
      ++num_arena_;
    }
    // Buffers whose last reader was this node go back to the planner (after its outputs were
    // placed: a kernel reads its inputs while it writes).
    auto release_dead = [&](int v) {
      if (slot_[v] == Slot::Arena && root[v] == v && !taken[v] && end[v] <= static_cast<int>(i)) {
        planner.release(offset_[v], meta_bytes(G.values()[v].meta));
        taken[v] = true;
      }
    };
    for (int v : n.inputs) release_dead(root[v]);
    for (int o : n.outputs) release_dead(o);  // never read: kept only for its errors
    Step s{&n, {}, {}, memo_node[i]};
    for (int o : n.outputs) s.alias = s.alias || slot_[o] == Slot::Alias;
    num_memo_steps_ += memo_node[i];
    if (!n.op->run) {
      Metas in, out;
      for (int v : n.inputs) in.push_back(G.values()[v].meta);
      for (int o : n.outputs) out.push_back(G.values()[o].meta);
      const bool widen = needs_widening(*n.op, in, out);  // float16 & co. run in compute dtypes
      if (widen) {
        in = widened_metas(in);
        out = widened_metas(out);
      }
      if (const PrepareFn& p = n.op->prepare[static_cast<int>(Device::CPU)]) {
        s.kernel = p(in, n.attrs, out);
      } else {
        const OpDef* op = n.op;
        const Attrs* attrs = &n.attrs;
        s.kernel = [op, attrs](const Tensors& a, const Tensors& b) { op->kernel(a, *attrs, b); };
      }
      if (widen)
        s.kernel = [op = n.op, k = std::move(s.kernel)](const Tensors& a, const Tensors& b) {
          run_widened(*op, k, a, b);
        };
    }
    for (int v : n.inputs)
      if (slot_[v] == Slot::Dynamic && last[v] == static_cast<int>(i)) s.frees.push_back(v);
    for (int o : n.outputs)
      if (slot_[o] == Slot::Dynamic && last[o] < 0) s.frees.push_back(o);
    steps_.push_back(std::move(s));
  }
  for (size_t v = 0; v < nv; ++v) {
    num_fresh_ += slot_[v] == Slot::Fresh;
    num_alias_ += slot_[v] == Slot::Alias;
    if (slot_[v] == Slot::Input || slot_[v] == Slot::Fresh || slot_[v] == Slot::Dynamic || slot_[v] == Slot::Memo ||
        slot_[v] == Slot::Alias)
      transient_.push_back(static_cast<int>(v));
  }
  // What the caller gets: its own storage. A constant or memo (or a view of one) is copied; whatever an op
  // with a run function returned is checked on each launch (it might hand back its input).
  for (int v : G.outputs()) {
    out_root_.push_back(root[v]);
    Slot s = slot_[root[v]];
    out_copy_.push_back(s == Slot::Const || s == Slot::Arena || s == Slot::Memo ? Copy::Always
                        : s == Slot::Dynamic                 ? Copy::IfShared
                                                             : Copy::Never);
  }
  arena_bytes_ = planner.size();
}

ExecPlan::~ExecPlan() = default;

namespace {

// The arena memory that launches share, one launch at a time (whoever finds it free): the plans
// of a dynamic entry's sizes, and graphs called in turn, write the same block, which stays in the
// cache, instead of each keeping one of its own (the MLP training step over 12 batch sizes: 12
// blocks of up to 1.2 MiB cycling through a 1 MiB L2 made each call 1.25x slower than a loop
// of one size). It grows to the largest arena a launch asks for; a concurrent or nested launch
// takes an arena of its plan's own pool.
struct SharedArena {
  std::atomic<bool> busy{false};
  std::shared_ptr<Storage> storage;  // touched only by the launch holding `busy`
};

SharedArena& shared_arena() {
  static auto* s = new SharedArena();  // never destroyed: plans may outlive statics
  return *s;
}

}  // namespace

std::unique_ptr<ExecPlan::Arena> ExecPlan::make_arena(std::shared_ptr<Storage> storage) const {
  auto a = std::make_unique<Arena>();
  const Graph& G = *graph_;
  if (arena_bytes_ > 0) a->storage = storage ? std::move(storage) : Storage::allocate(arena_bytes_);
  a->env.resize(G.values().size());
  for (size_t v = 0; v < G.values().size(); ++v) {
    const Value& val = G.values()[v];
    if (slot_[v] == Slot::Const) a->env[v] = G.consts()[val.index];
    if (slot_[v] == Slot::Arena)
      a->env[v] = Tensor::view_of(a->storage, val.meta.shape, contiguous_strides(val.meta.shape),
                                  static_cast<int64_t>(offset_[v] / itemsize(val.meta.dtype)), val.meta.dtype);
  }
  return a;
}

namespace {

std::string meta_text(const TensorMeta& m) { return std::string(dtype_name(m.dtype)) + shape_list_str(m.shape); }

}  // namespace

namespace {
std::atomic<bool> g_timing{false};
}  // namespace

void ExecPlan::set_timing(bool on) { g_timing.store(on, std::memory_order_relaxed); }

Tensors ExecPlan::run(const Tensors& inputs) const {
  runs_.fetch_add(1, std::memory_order_relaxed);
  if (!eager_ && !g_timing.load(std::memory_order_relaxed) && !trace::on()) return run_steps(inputs);
  trace::Span span("graph", name_);
  if (eager_) return execute(*graph_, inputs);
  const auto t0 = std::chrono::steady_clock::now();
  Tensors out = run_steps(inputs);
  run_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count(),
                    std::memory_order_relaxed);
  return out;
}

Tensors ExecPlan::run_steps(const Tensors& inputs) const {
  const Graph& G = *graph_;
  if (inputs.size() != G.inputs().size())
    PJ_THROW(Type) << "graph takes " << G.inputs().size() << " inputs but " << inputs.size() << " were given";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = G.value(G.inputs()[i]);
    if (!meta_matches(inputs[i], v.meta))
      PJ_THROW(Value) << "graph input " << v.name << " expected " << meta_text(v.meta) << ", got "
                      << meta_text(meta_of(inputs[i]));
  }
  std::unique_ptr<Arena> arena;
  SharedArena& shared = shared_arena();
  const bool in_shared = arena_bytes_ > 0 && !shared.busy.exchange(true, std::memory_order_acquire);
  bool in_spare = false;
  if (in_shared) {
    try {
      if (!shared.storage || shared.storage->nbytes() < arena_bytes_) {
        // Doubling from 64 KiB: a plan last launched before the block grew keeps the old one alive
        // until its next launch, so growth steps are few. From 2 MiB on, the allocator backs the
        // block with huge pages (fewer TLB misses); a smaller arena stays on small pages, since
        // the first touch of a huge page zeroes all 2 MiB of it (~0.3 ms: a 20-layer MLP's first
        // launch spent more on that than on its first matmul).
        size_t bytes = size_t{1} << 16;
        while (bytes < arena_bytes_) bytes *= 2;
        shared.storage = Storage::allocate(bytes);
      }
      // (this plan's shared arena, remade when the block grew since its last launch)
      if (!shared_arena_ || shared_arena_->storage != shared.storage) shared_arena_ = make_arena(shared.storage);
    } catch (...) {
      shared.busy.store(false, std::memory_order_release);
      throw;
    }
    arena = std::move(shared_arena_);
  } else if (!spare_busy_.exchange(true, std::memory_order_acquire)) {
    in_spare = true;
    arena = std::move(spare_);
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pool_.empty()) {
      arena = std::move(pool_.back());
      pool_.pop_back();
    }
  }
  if (!arena) {
    try {
      arena = make_arena();
    } catch (...) {
      if (in_shared) shared.busy.store(false, std::memory_order_release);
      if (in_spare) spare_busy_.store(false, std::memory_order_release);
      throw;
    }
  }
  // Back on every exit, holding nothing of this launch.
  struct Return {
    const ExecPlan* plan;
    std::unique_ptr<Arena>* a;
    bool in_shared, in_spare;
    ~Return() {
      Arena& ar = **a;
      for (int v : plan->transient_) ar.env[v] = Tensor();
      ar.in.clear();
      ar.out.clear();
      if (in_shared) {
        plan->shared_arena_ = std::move(*a);
        shared_arena().busy.store(false, std::memory_order_release);
        return;
      }
      if (in_spare) {
        plan->spare_ = std::move(*a);
        plan->spare_busy_.store(false, std::memory_order_release);
        return;
      }
      std::lock_guard<std::mutex> lock(plan->mu_);
      plan->pool_.push_back(std::move(*a));
    }
  } give_back{this, &arena, in_shared, in_spare};
  std::vector<Tensor>& env = arena->env;
  for (size_t i = 0; i < inputs.size(); ++i) env[G.inputs()[i]] = inputs[i];
  const bool alias = num_alias_ && may_alias(inputs);
  // The memo holds while every Parameter it read is the same storage, view and write version.
  std::vector<MemoKey> keys;
  bool reuse = false, memoizable = true;
  if (num_memo_steps_) {
    for (int v : memo_params_) {
      const Tensor& t = env[v];
      memoizable = memoizable && t.storage()->versioned();
      keys.push_back({t.storage(), t.storage().get(), t.storage()->version(), t.offset()});
    }
    std::lock_guard<std::mutex> lock(mu_);
    reuse = memoizable && memo_valid_;
    for (size_t k = 0; reuse && k < keys.size(); ++k) {
      const MemoKey &a = keys[k], &b = memo_keys_[k];
      reuse = a.raw == b.raw && a.version == b.version && a.offset == b.offset && !b.storage.expired();
    }
    if (reuse) {
      for (size_t k = 0; k < memo_values_.size(); ++k) env[memo_values_[k]] = memo_store_[k];
      memo_reuses_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  Tensors& in = arena->in;
  Tensors& out = arena->out;
  const bool tracing = trace::on();
  for (const Step& s : steps_) {
    if (s.memo && reuse) continue;
    const Node& n = *s.node;
    const int64_t t0 = tracing ? trace::now_ns() : 0;
    in.clear();
    for (int v : n.inputs) in.push_back(env[v]);
    if (s.kernel) {
      out.clear();
      for (int o : n.outputs) {
        if (slot_[o] == Slot::Alias && alias) env[o] = inputs[alias_input_[o]];
        else if (slot_[o] == Slot::Fresh || slot_[o] == Slot::Memo || slot_[o] == Slot::Alias)
          env[o] = Tensor::empty(G.values()[o].meta.shape, G.values()[o].meta.dtype);
        out.push_back(env[o]);
      }
      s.kernel(in, out);
      if (s.alias && alias)  // a Parameter written: what was derived from its bytes is stale
        for (int o : n.outputs)
          if (slot_[o] == Slot::Alias) env[o].storage()->note_write();
      // The arena is one storage written again and again: a new version per step, so nothing
      // derived from its bytes (reordered weights, kernels/weight_cache.h) outlives a write.
      if (arena->storage) arena->storage->note_write();
    } else {
      Tensors r = run_op(*n.op, in, n.attrs);  // (widens storage-only dtypes as eager does)
      PJ_CHECK(r.size() == n.outputs.size())
          << n.op->name << " returned " << r.size() << " outputs, graph has " << n.outputs.size();
      for (size_t k = 0; k < r.size(); ++k) env[n.outputs[k]] = std::move(r[k]);
    }
    for (int v : s.frees) env[v] = Tensor();
    if (tracing) trace::complete("kernel", n.op->name, t0, trace::now_ns());
  }
  if (num_memo_steps_ && !reuse && memoizable) {
    std::lock_guard<std::mutex> lock(mu_);
    memo_keys_ = std::move(keys);
    memo_store_.clear();
    for (int v : memo_values_) memo_store_.push_back(env[v]);
    memo_valid_ = true;
  }
  // The caller keeps the outputs: anything sharing storage with a constant or the arena (which the
  // next launch overwrites) is copied.
  Tensors result(G.outputs().size());
  std::vector<size_t> copied;
  for (size_t k = 0; k < G.outputs().size(); ++k) {
    const Tensor& t = env[G.outputs()[k]];
    bool copy = out_copy_[k] == Copy::Always;
    if (out_copy_[k] == Copy::IfShared) {
      copy = arena->storage && t.storage() == arena->storage;
      for (const Tensor& c : G.consts()) copy = copy || t.storage() == c.storage();
    }
    if (copy) copied.push_back(k);
    else result[k] = t;
  }
  if (!copied.empty()) copy_outputs(env, copied, result);
  return result;
}

namespace {

// The elements [lo, hi) of its storage a view spans; false for a layout copy_outputs leaves alone.
bool element_span(const Tensor& t, int64_t* lo, int64_t* hi) {
  if (t.device() != Device::CPU || !t.storage()) return false;
  int64_t last = t.offset();
  for (int d = 0; d < t.ndim(); ++d) {
    if (t.stride(d) < 0) return false;
    last += (t.dim(d) - 1) * t.stride(d);
  }
  *lo = t.offset();
  *hi = t.numel() == 0 ? t.offset() : last + 1;
  return true;
}

}  // namespace

// Copies the outputs `which` for the caller as plain Python would have them: outputs that share
// storage (a constant and a view of it; two views of one intermediate; one value returned twice)
// share their copy too, each the same view of it, so that a write through one shows in the other.
void ExecPlan::copy_outputs(const std::vector<Tensor>& env, const std::vector<size_t>& which, Tensors& result) const {
  const Graph& G = *graph_;
  std::vector<bool> done(G.outputs().size(), false);
  for (size_t i = 0; i < which.size(); ++i) {
    const size_t k = which[i];
    if (done[k]) continue;
    const Tensor& t = env[G.outputs()[k]];
    std::vector<size_t> group{k};
    for (size_t j = i + 1; j < which.size(); ++j)  // (one arena holds unrelated values: the same root too)
      if (env[G.outputs()[which[j]]].storage() == t.storage() && out_root_[which[j]] == out_root_[k])
        group.push_back(which[j]);
    int64_t lo = INT64_MAX, hi = 0;
    bool shared = group.size() > 1;
    for (size_t m : group) {
      const Tensor& u = env[G.outputs()[m]];
      int64_t a = 0, b = 0;
      shared = shared && u.dtype() == t.dtype() && element_span(u, &a, &b);
      lo = std::min(lo, a);
      hi = std::max(hi, b);
    }
    if (!shared) {
      result[k] = t.clone();
      done[k] = true;
      continue;
    }
    const size_t isz = itemsize(t.dtype());
    std::shared_ptr<Storage> copy = Storage::allocate(static_cast<size_t>(hi - lo) * isz);
    if (hi > lo) std::memcpy(copy->data(), static_cast<const char*>(t.storage()->data()) + lo * isz, (hi - lo) * isz);
    std::vector<std::pair<int, Tensor>> made;  // one tensor per graph value: `return k, k` is one object
    for (size_t m : group) {
      const int v = G.outputs()[m];
      auto it = std::find_if(made.begin(), made.end(), [&](const std::pair<int, Tensor>& p) { return p.first == v; });
      if (it == made.end()) {
        const Tensor& u = env[v];
        made.emplace_back(v, Tensor::view_of(copy, u.shape(), u.strides(), u.offset() - lo, u.dtype()));
        it = made.end() - 1;
      }
      result[m] = it->second;
      done[m] = true;
    }
  }
}

// Which outputs may become their Parameters' (see plan.h): decided once, from the graph alone.
void ExecPlan::plan_aliases(const Graph& G, const std::vector<int>& root, const std::vector<int>& end) {
  alias_input_.assign(G.values().size(), -1);
  const int nn = static_cast<int>(G.nodes().size());
  std::vector<int> producer(G.values().size(), -1);
  for (int i = 0; i < nn; ++i)
    for (int o : G.nodes()[i].outputs) producer[o] = i;
  // Nodes from `first_total` on cannot raise.
  int first_total = nn;
  while (first_total > 0 && G.nodes()[first_total - 1].op->total) --first_total;
  for (const Graph::WriteBack& wb : G.write_backs()) {
    const int o = G.outputs().at(wb.output), p = G.inputs().at(wb.input), at = producer[o];
    // (the producing node too: index_put and the like write their output, then check indices)
    if (slot_[o] != Slot::Fresh || root[o] != o || at < 0 || at < first_total) continue;
    if (std::count(G.outputs().begin(), G.outputs().end(), o) != 1 || !G.value(p).parameter ||
        !(G.value(p).meta == G.value(o).meta) || end[p] > at ||
        std::find(alias_inputs_.begin(), alias_inputs_.end(), wb.input) != alias_inputs_.end())
      continue;
    const Node& n = G.nodes()[at];
    bool ok = !n.op->run;  // its kernel writes into the buffer it is given
    if (end[p] == at) {              // it reads the Parameter itself: element for element only
      ok = ok && n.op->elementwise;
      for (int v : n.inputs) ok = ok && (root[v] != p || v == p);
    }
    if (!ok) continue;
    slot_[o] = Slot::Alias;
    alias_input_[o] = wb.input;
    alias_inputs_.push_back(wb.input);
  }
}

bool ExecPlan::may_alias(const Tensors& inputs) const {
  if (tape_active()) return false;
  for (int i : alias_inputs_) {
    const Tensor& t = inputs[i];
    if (!t.is_contiguous()) return false;
    for (size_t k = 0; k < inputs.size(); ++k)
      if (static_cast<int>(k) != i && inputs[k].storage() == t.storage()) return false;
  }
  return true;
}

std::string ExecPlan::describe() const {
  std::ostringstream os;
  if (eager_) return "node by node as eager ops (PIJIT_DEBUG_EAGER_GRAPH)";
  double kib = static_cast<double>(arena_bytes_) / 1024.0;
  os.precision(kib < 10 ? 2 : 4);
  os << "arena " << kib << " KiB, " << num_arena_ << " buffers (" << num_inplace_ << " in place), " << num_fresh_
     << " fresh output" << (num_fresh_ == 1 ? "" : "s");
  if (num_memo_steps_) os << ", " << num_memo_steps_ << " memoized";
  if (num_alias_) os << ", " << num_alias_ << " written in their Parameter" << (num_alias_ == 1 ? "" : "s");
  return os.str();
}

}  // namespace pj::graph
