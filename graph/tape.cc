#include "graph/tape.h"

#include <atomic>

#include <algorithm>

#include "common/check.h"
#include "graph/trace_context.h"

namespace pj {
namespace {

thread_local std::vector<Tape*> t_tapes;  // recording tapes of this thread, oldest first
// Recording tapes of every thread: while none records, tape_active() reads no thread-local (a
// dlopened module's cost a call each, and every eager op and cache hit asks).
std::atomic<int> g_recording_tapes{0};

}  // namespace

Tape::~Tape() { stop(); }

int Tape::add_value(const Tensor& t) {
  const int h = static_cast<int>(values_.size());
  values_.push_back(t);
  versions_.push_back(t.storage() ? t.storage()->version() : 0);
  used_by_.push_back(nullptr);
  carries_.push_back(false);
  if (t.storage()) by_storage_.emplace(t.storage().get(), h);
  return h;
}

int Tape::watch(const Tensor& t) {
  if (t.dtype() == DType::Bool) return -1;
  auto it = current_.find(t.impl());
  if (it != current_.end()) return it->second;
  int h = add_value(t);
  current_[t.impl()] = h;
  carries_[h] = true;
  return h;
}

void Tape::start() {
  if (recording_) return;
  recording_ = true;
  t_tapes.push_back(this);
  g_recording_tapes.fetch_add(1, std::memory_order_relaxed);
}

void Tape::stop() {
  if (!recording_) return;
  recording_ = false;
  t_tapes.erase(std::remove(t_tapes.begin(), t_tapes.end(), this), t_tapes.end());
  g_recording_tapes.fetch_sub(1, std::memory_order_relaxed);
}

void Tape::record(const OpDef* op, const Tensors& in, const Attrs& attrs, const Tensors& out, CustomGradFn custom,
                  std::string name) {
  bool integer_in = false;
  for (const Tensor& t : in) {
    auto it = current_.find(t.impl());
    integer_in = integer_in || (it != current_.end() && carries_[it->second] && !differentiable(t.dtype()));
  }
  // Integer outputs carry the gradient of an integer leaf through ops that have a rule.
  const bool integer_out = integer_in && (custom || grad_rule(*op));
  bool any = false;
  for (const Tensor& t : out) any = any || differentiable(t.dtype()) || (integer_out && t.dtype() != DType::Bool);
  if (!any) return;  // nothing a gradient can flow through
  Rec r{op, attrs, {}, {}, std::move(custom), std::move(name)};
  const char* who = op ? op->name.c_str() : nullptr;
  for (const Tensor& t : in) {
    auto it = current_.find(t.impl());
    int h = it != current_.end() ? it->second : add_value(t);
    if (!used_by_[h]) used_by_[h] = who ? who : "a custom bprop";
    r.in.push_back(h);
  }
  for (const Tensor& t : out) {
    int h = add_value(t);
    if (differentiable(t.dtype()) || (integer_out && t.dtype() != DType::Bool)) {
      current_[t.impl()] = h;
      carries_[h] = true;
    }
    r.out.push_back(h);
  }
  recs_.push_back(std::move(r));
}

void Tape::before_write(const Tensor& t) {
  if (!t.storage()) return;
  auto range = by_storage_.equal_range(t.storage().get());
  std::vector<int> handles;
  for (auto it = range.first; it != range.second; ++it) handles.push_back(it->second);
  if (handles.empty()) return;
  by_storage_.erase(t.storage().get());
  for (int h : handles) {
    // A copy with the recorded values; the live tensor keeps its identity for later records (and
    // stays alive: its impl may key current_).
    rebound_.push_back(values_[h]);
    values_[h] = values_[h].clone();
    versions_[h] = values_[h].storage()->version();
    by_storage_.emplace(values_[h].storage().get(), h);
  }
}

void Tape::rebind(const Tensor& written, const Tensor& value) {
  auto it = current_.find(value.impl());
  if (it != current_.end()) {
    current_[written.impl()] = it->second;
    rebound_.push_back(written);  // a key of current_ stays this tensor's while the tape lives
  } else {
    current_.erase(written.impl());  // it holds untracked data now
  }
}

Tensors Tape::gradient(const Tensors& outputs, const Tensors& seeds, const std::vector<int>& leaves,
                       const Tensors& zeros_like) {
  PJ_CHECK(outputs.size() == seeds.size() && leaves.size() == zeros_like.size()) << "Tape::gradient arity";
  struct Pause {  // this tape's own backward is not part of what it differentiates
    Tape* t;
    bool was;
    ~Pause() {
      if (was) t->start();
    }
  } pause{this, recording_};
  stop();
  if (TraceContext* tc = trace_context()) tc->sweep_observed(nullptr);

  EagerGradContext c;
  for (size_t h = 0; h < values_.size(); ++h)
    c.add_versioned(values_[h], versions_[h], used_by_[h] ? used_by_[h] : "an op");
  std::vector<SweepNode> nodes(recs_.size());
  for (size_t i = 0; i < recs_.size(); ++i) {
    const Rec& r = recs_[i];
    nodes[i].op = r.op;
    nodes[i].attrs = &r.attrs;
    nodes[i].in = r.in;
    nodes[i].out = r.out;
    nodes[i].custom = r.custom ? &r.custom : nullptr;
    nodes[i].name = r.name;
  }
  std::vector<bool> active(values_.size(), false);
  for (int leaf : leaves)
    if (leaf >= 0) active.at(leaf) = true;
  std::vector<bool> carries = carries_;
  std::vector<int> grad(values_.size(), kNoGrad);
  std::vector<int> out_handles(outputs.size(), -1);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor &o = outputs[k], &s = seeds[k];
    if (s.shape() != o.shape())
      PJ_THROW(Value) << "the sensitivity of output " << k << " has shape " << shape_str(s.shape())
                      << ", but the output has shape " << shape_str(o.shape());
    auto it = current_.find(o.impl());
    if (it == current_.end() || !carries_[it->second]) continue;
    out_handles[k] = it->second;
    seed_gradient(c, grad, it->second, c.add(s), k);
  }
  reverse_sweep(c, nodes, active, grad, &carries);
  Tensors out;
  for (size_t k = 0; k < leaves.size(); ++k)
    out.push_back(leaves[k] >= 0 && grad[leaves[k]] != kNoGrad ? c.tensor(grad[leaves[k]]) : zeros_like[k]);
  if (TraceContext* tc = trace_context()) {
    const SweepTrace trace{values_, nodes, carries_, out_handles, seeds, leaves, zeros_like, out};
    tc->sweep_observed(&trace);
  }
  return out;
}

// (this thread's own start is visible to it, relaxed or not: a nonzero count on its tapes' behalf)
bool tape_active() { return g_recording_tapes.load(std::memory_order_relaxed) != 0 && !t_tapes.empty(); }
int tape_depth() { return static_cast<int>(t_tapes.size()); }

void tape_record_op(const OpDef& op, const Tensors& in, const Attrs& attrs, const Tensors& out) {
  for (Tape* t : std::vector<Tape*>(t_tapes)) {
    bool any = false;
    for (const Tensor& x : in) any = any || t->tracks(x);
    if (any) t->record(&op, in, attrs, out, nullptr, std::string());
  }
}

void tape_record_custom(const Tensors& in, const Tensors& out, CustomGradFn custom, const std::string& name) {
  for (Tape* t : std::vector<Tape*>(t_tapes)) {
    bool any = false;
    for (const Tensor& x : in) any = any || t->tracks(x);
    if (any) t->record(nullptr, in, Attrs{}, out, custom, name);
  }
}

void tape_before_write(const Tensor& t) {
  for (Tape* tp : t_tapes) tp->before_write(t);
}

void tape_rebind(const Tensor& written, const Tensor& value) {
  for (Tape* t : t_tapes) t->rebind(written, value);
}

bool tape_tracks(const Tensor& t) {
  for (Tape* tp : t_tapes)
    if (tp->tracks(t)) return true;
  return false;
}

TapePause::TapePause() : saved_(std::move(t_tapes)) { t_tapes.clear(); }
TapePause::~TapePause() { t_tapes = std::move(saved_); }

}  // namespace pj
