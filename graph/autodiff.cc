#include "graph/autodiff.h"

#include <algorithm>
#include <unordered_map>

#include "common/check.h"

namespace pj {

// ---- helpers the rules share --------------------------------------------------------------------

int GradContext::op(const char* name, std::vector<int> in, const Attrs& a) { return emit(get_op(name), in, a)[0]; }

int GradContext::reduce_to(int g, TensorMeta m) {
  const Shape gs = meta(g).shape;
  if (gs != m.shape) {
    const int lead = static_cast<int>(gs.size()) - static_cast<int>(m.shape.size());
    PJ_CHECK(lead >= 0) << "reduce_to: gradient " << shape_str(gs) << " for " << shape_str(m.shape);
    IntList axes;
    for (int d = 0; d < static_cast<int>(gs.size()); ++d)
      if (d < lead || (m.shape[d - lead] == 1 && gs[d] != 1)) axes.push_back(d);
    if (!axes.empty()) g = sum(g, axes, true);
    g = op("reshape", {g}, Attrs{{"shape", IntList(m.shape.begin(), m.shape.end())}});
  }
  if (meta(g).dtype != m.dtype) g = op("cast", {g}, Attrs{{"dtype", m.dtype}});
  return g;
}

int GradContext::zeros(TensorMeta m) {
  return op("zeros", {}, Attrs{{"shape", IntList(m.shape.begin(), m.shape.end())}, {"dtype", m.dtype}});
}

int GradContext::masked(int mask, int g) { return op("where", {mask, g, scalar_like(0, g)}); }

int GradContext::conj(int v) { return is_complex(meta(v).dtype) ? op("conj", {v}) : v; }

int GradContext::sum(int v, const IntList& axes, bool keepdims) {
  const Attrs a{{"axis", axes}, {"keepdims", keepdims}};
  if (!is_complex(meta(v).dtype)) return op("sum", {v}, a);
  return op("complex", {op("sum", {op("real", {v})}, a), op("sum", {op("imag", {v})}, a)});
}

namespace {
struct Rule {
  GradFn fn;
  bool complex;  // right on complex values too
};
std::unordered_map<std::string, Rule>& rules() {
  static auto* r = new std::unordered_map<std::string, Rule>;
  return *r;
}
}  // namespace

GradRegistrar::GradRegistrar(const char* name, GradFn fn, bool complex) {
  PJ_CHECK(rules().emplace(name, Rule{fn, complex}).second) << "two gradient rules for " << name;
}

GradFn grad_rule(const OpDef& op) {
  auto it = rules().find(op.name);
  return it == rules().end() ? nullptr : it->second.fn;
}

bool grad_rule_complex(const OpDef& op) {
  auto it = rules().find(op.name);
  return it != rules().end() && it->second.complex;
}

std::vector<std::string> grad_rule_names() {
  std::vector<std::string> names;
  for (const auto& [name, rule] : rules()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

// ---- the reverse sweep ---------------------------------------------------------------------------

void reverse_sweep(GradContext& c, const std::vector<SweepNode>& nodes, std::vector<bool>& active,
                   std::vector<int>& grad, const std::vector<bool>* carries) {
  // Which values depend on an active one through floating values: only they need gradients.
  for (const SweepNode& n : nodes) {
    bool any = false;
    for (int v : n.in) any = any || active[v];
    if (!any) continue;
    for (int o : n.out) active[o] = carries ? (*carries)[o] : differentiable(c.meta(o).dtype);
  }
  auto accumulate = [&](int v, int d) {
    if (d == kNoGrad) return;
    grad[v] = grad[v] == kNoGrad ? d : c.op("add", {grad[v], d});
  };
  for (size_t i = nodes.size(); i-- > 0;) {
    const SweepNode& n = nodes[i];
    GradArgs a;
    a.in = n.in;
    a.out = n.out;
    a.attrs = n.attrs;
    bool any_dout = false, any_need = false;
    for (int o : n.out) {
      a.dout.push_back(active[o] ? grad[o] : kNoGrad);  // a seed on a value nothing wanted reaches is moot
      any_dout = any_dout || a.dout.back() != kNoGrad;
    }
    for (int v : n.in) {
      a.needs.push_back(active[v]);
      any_need = any_need || active[v];
    }
    if (!any_dout || !any_need) continue;
    const std::string& name = n.op ? n.op->name : n.name;
    c.at_line(n.line);
    std::vector<int> din;
    if (n.custom) {
      din = (*n.custom)(c, a);
    } else {
      GradFn rule = grad_rule(*n.op);
      const std::string at = n.line ? " (line " + std::to_string(n.line) + ")" : std::string();
      if (!rule) PJ_THROW(Type) << "cannot differentiate through '" << name << "'" << at << ": it has no gradient rule";
      if (!grad_rule_complex(*n.op)) {
        // A real rule run on complex values would drop or misplace the imaginary parts silently.
        bool complex = false;
        for (size_t k = 0; k < n.in.size(); ++k) complex = complex || (a.needs[k] && is_complex(c.meta(n.in[k]).dtype));
        for (size_t k = 0; k < n.out.size(); ++k)
          complex = complex || (a.dout[k] != kNoGrad && is_complex(c.meta(n.out[k]).dtype));
        if (complex)
          PJ_THROW(Type) << "cannot differentiate through '" << name << "'" << at
                         << " on complex values: its gradient rule is for real values only";
      }
      din = rule(c, a);
    }
    if (n.custom && din.size() != n.in.size())
      PJ_THROW(Type) << name << " returned " << din.size() << " gradients for " << n.in.size() << " inputs";
    PJ_CHECK(din.size() == n.in.size()) << name << "'s gradient rule returned " << din.size() << " gradients";
    for (size_t k = 0; k < din.size(); ++k) {
      if (!a.needs[k] || din[k] == kNoGrad) continue;
      const TensorMeta want = c.meta(n.in[k]);
      // An op that computes an integer input in floating point (softmax, sqrt): its gradient comes
      // back in the input's dtype, as an explicit cast's would (every rule, not each on its own).
      if (!n.custom && c.meta(din[k]).shape == want.shape && c.meta(din[k]).dtype != want.dtype)
        din[k] = c.reduce_to(din[k], want);
      const TensorMeta got = c.meta(din[k]);
      if (n.custom && !(got.shape == want.shape && got.dtype == want.dtype))
        PJ_THROW(Value) << name << ": the gradient of input " << k << " has shape " << shape_str(got.shape) << " and dtype "
                        << dtype_name(got.dtype) << ", but the input has shape " << shape_str(want.shape) << " and dtype "
                        << dtype_name(want.dtype);
      PJ_CHECK(got.shape == want.shape && got.dtype == want.dtype)
          << name << "'s gradient of input " << k << " is " << shape_str(got.shape) << " " << dtype_name(got.dtype)
          << ", expected " << shape_str(want.shape) << " " << dtype_name(want.dtype);
      accumulate(n.in[k], din[k]);
    }
  }
}

// ---- eager --------------------------------------------------------------------------------------

int EagerGradContext::add(const Tensor& t) {
  slots_.push_back(t);
  metas_.push_back(meta_of(t));
  versions_.push_back(-1);
  used_by_.push_back(nullptr);
  return static_cast<int>(slots_.size()) - 1;
}

int EagerGradContext::add_versioned(const Tensor& t, uint64_t version, const char* used_by) {
  int v = add(t);
  if (t.storage() && t.storage()->versioned()) {
    versions_[v] = static_cast<int64_t>(version);
    used_by_[v] = used_by;
  }
  return v;
}

TensorMeta EagerGradContext::meta(int v) const { return metas_.at(v); }

std::vector<int> EagerGradContext::emit(const OpDef& op, const std::vector<int>& in, const Attrs& a) {
  Tensors ts;
  for (int v : in) {
    const Tensor& t = slots_.at(v);
    if (versions_[v] >= 0 && t.storage()->version() != static_cast<uint64_t>(versions_[v]))
      PJ_THROW(Runtime) << "a tensor the gradient of '" << used_by_[v]
                        << "' needs was modified in place after the forward computation used it "
                           "(an in-place operator or item assignment); compute on a copy instead";
    ts.push_back(t);
  }
  std::vector<int> out;
  for (const Tensor& t : call_op(op, ts, a)) out.push_back(add(t));
  return out;
}

int EagerGradContext::scalar(double x, DType t) { return add(Tensor::scalar(x, t)); }

void seed_gradient(GradContext& c, std::vector<int>& grad, int out, int seed, size_t k) {
  const TensorMeta om = c.meta(out), sm = c.meta(seed);
  if (sm.shape != om.shape)
    PJ_THROW(Value) << "the sensitivity of output " << k << " has shape " << shape_str(sm.shape)
                    << ", but the output has shape " << shape_str(om.shape);
  if (sm.dtype != om.dtype) seed = c.op("cast", {seed}, Attrs{{"dtype", om.dtype}});
  grad[out] = grad[out] == kNoGrad ? seed : c.op("add", {grad[out], seed});
}


// ---- graphs -------------------------------------------------------------------------------------
namespace graph {
namespace {

class GraphGradContext : public GradContext {
 public:
  explicit GraphGradContext(Graph& g) : g_(g) {}
  TensorMeta meta(int v) const override { return g_.value(v).meta; }
  std::vector<int> emit(const OpDef& op, const std::vector<int>& in, const Attrs& a) override {
    Metas m;
    for (int v : in) m.push_back(meta(v));
    return g_.add_node(op, in, a, op.infer(m, a), line_);
  }
  int scalar(double x, DType t) override { return g_.add_const(Tensor::scalar(x, t)); }
  void at_line(int line) override { line_ = line; }

 private:
  Graph& g_;
  int line_ = 0;
};

}  // namespace

void replay_sweep(Graph& g, const SweepPlan& plan, std::vector<int>& map) {
  GraphGradContext c(g);
  std::vector<int> v(plan.handle_values.size());  // tape handle -> g's value
  for (size_t h = 0; h < v.size(); ++h) {
    v[h] = map.at(plan.handle_values[h]);
    PJ_CHECK(v[h] >= 0) << "replay_sweep: a value the sweep reads is not defined before it";
  }
  std::vector<SweepNode> nodes(plan.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].op = plan.nodes[i].op;
    nodes[i].attrs = &plan.nodes[i].attrs;
    for (int h : plan.nodes[i].in) nodes[i].in.push_back(v[h]);
    for (int h : plan.nodes[i].out) nodes[i].out.push_back(v[h]);
  }
  const size_t n = g.values().size();
  std::vector<bool> active(n, false), carries(n, false);
  for (size_t h = 0; h < v.size(); ++h) carries[v[h]] = plan.carries[h];
  for (int leaf : plan.leaves)
    if (leaf >= 0) active[v[leaf]] = true;
  std::vector<int> grad(n, kNoGrad);
  for (size_t k = 0; k < plan.out_handles.size(); ++k)  // (capture replays only sweeps whose outputs are all tracked)
    seed_gradient(c, grad, v[plan.out_handles[k]], map.at(plan.seed_values[k]), k);
  reverse_sweep(c, nodes, active, grad, &carries);
  for (size_t k = 0; k < plan.leaves.size(); ++k) {
    const int leaf = plan.leaves[k];
    int r = leaf >= 0 && grad[v[leaf]] != kNoGrad ? grad[v[leaf]] : -1;
    if (r < 0) {
      if (plan.zeros_values[k] < 0) PJ_THROW(Value) << "the gradient of leaf " << k << " vanished for these sizes";
      r = map.at(plan.zeros_values[k]);
    }
    map.at(plan.result_values[k]) = r;
  }
}

Graph with_input_metas(const Graph& g, const Metas& inputs, const std::vector<SweepPlan>& sweeps,
                       const std::vector<SymbolicAttr>& attrs, const std::map<int, int64_t>& values) {
  if (sweeps.empty() && attrs.empty()) return with_input_metas(g, inputs);
  auto replay = [&](size_t node, Graph& out, std::vector<int>& map) {
    for (const SweepPlan& s : sweeps)
      if (s.node_begin == node && s.node_end > node) {
        replay_sweep(out, s, map);
        return s.node_end;
      }
    return node;
  };
  auto fill = [&](size_t node, Attrs& at) {  // this plan's values in the symbolic entries
    bool changed = false;
    for (const SymbolicAttr& a : attrs) {
      if (a.node != node) continue;
      IntList list = at.ints(a.attr);
      PJ_CHECK(a.entry < list.size() && values.count(a.symbol)) << "with_input_metas: a symbolic attribute it cannot fill";
      list[a.entry] = values.at(a.symbol);
      at.set(a.attr, list);
      changed = true;
    }
    return changed;
  };
  return with_input_metas(g, inputs, replay, attrs.empty() ? nullptr : std::function<bool(size_t, Attrs&)>(fill));
}

Graph differentiate(const Graph& fwd, const std::vector<int>& wrt, bool integers) {
  Graph g = fwd;
  const size_t num_fwd_nodes = fwd.nodes().size();
  std::vector<int> seeds;
  for (size_t k = 0; k < fwd.outputs().size(); ++k)
    seeds.push_back(g.add_input(fwd.value(fwd.outputs()[k]).meta, "grad of output " + std::to_string(k)));

  std::vector<bool> active(g.values().size(), false);
  for (int pos : wrt) {
    PJ_CHECK(pos >= 0 && pos < static_cast<int>(fwd.inputs().size())) << "differentiate: input " << pos;
    const Value& v = fwd.value(fwd.inputs()[pos]);
    if (!differentiable(v.meta.dtype) && !(integers && v.meta.dtype != DType::Bool))
      PJ_THROW(Type) << "cannot differentiate with respect to " << v.name << ": it is " << dtype_name(v.meta.dtype)
                     << " (only floating and complex tensors have gradients)";
    active[fwd.inputs()[pos]] = true;
  }
  std::vector<SweepNode> nodes(num_fwd_nodes);
  for (size_t i = 0; i < num_fwd_nodes; ++i) {
    const Node& n = fwd.nodes()[i];
    nodes[i].op = n.op;
    nodes[i].attrs = &n.attrs;
    nodes[i].in = n.inputs;
    nodes[i].out = n.outputs;
    nodes[i].line = n.line;
  }
  GraphGradContext c(g);
  // Which values carry gradients: floating ones; with `integers`, also the integer results of ops
  // with rules that read an integer value that carries one.
  std::vector<bool> carries(g.values().size(), false);
  for (size_t v = 0; v < g.values().size(); ++v) carries[v] = differentiable(g.value(static_cast<int>(v)).meta.dtype);
  if (integers) {
    for (int pos : wrt) carries[fwd.inputs()[pos]] = true;
    for (const SweepNode& n : nodes) {
      bool integer_in = false;
      for (int v : n.in) integer_in = integer_in || (carries[v] && !differentiable(c.meta(v).dtype));
      if (integer_in && grad_rule(*n.op))
        for (int o : n.out) carries[o] = carries[o] || c.meta(o).dtype != DType::Bool;
    }
  }
  std::vector<int> grad(g.values().size(), kNoGrad);
  for (size_t k = 0; k < seeds.size(); ++k) {
    const int o = fwd.outputs()[k];
    if (carries[o]) grad[o] = grad[o] == kNoGrad ? seeds[k] : c.op("add", {grad[o], seeds[k]});
  }
  reverse_sweep(c, nodes, active, grad, &carries);

  std::vector<int> outs = fwd.outputs();
  c.at_line(0);
  for (int pos : wrt) {
    int v = fwd.inputs()[pos];
    outs.push_back(grad[v] != kNoGrad ? grad[v] : c.zeros(fwd.value(v).meta));
  }
  g.set_outputs(outs);
  return g;
}

}  // namespace graph
}  // namespace pj
