// Constant folding and algebraic simplification (graph/passes.h has what each guarantees).
#include <cmath>
#include <set>

#include "graph/pass_impl.h"
#include "kernels/copy.h"

namespace pj::graph {
namespace {

// A folded result may be this many elements, or as big as its inputs together, whichever is more:
// folding broadcast_to(scalar, huge) would only trade a cheap launch for resident memory.
constexpr int64_t kFoldElements = 1 << 16;

// Every element of constant `t` as a double (false for tensors too big to look at, or complex).
bool const_values(const Tensor& t, std::vector<double>* out) {
  // (a complex constant is not its real part: x * (1-2j) is no x * 1)
  if (t.numel() > 64 || is_complex(t.dtype())) return false;
  Tensor d = cast(t, DType::Float64).contiguous();
  out->assign(d.data<double>(), d.data<double>() + d.numel());
  return true;
}

// Whether value v is a constant every element of which satisfies `pred`.
template <typename Pred>
bool const_all(const Graph& g, int v, Pred pred) {
  const Value& val = g.value(v);
  std::vector<double> xs;
  if (val.kind != ValueKind::Const || !const_values(g.consts()[val.index], &xs) || xs.empty()) return false;
  for (double x : xs)
    if (!pred(x)) return false;
  return true;
}

bool is_one(double x) { return x == 1.0; }
bool is_neg_zero(double x) { return x == 0.0 && std::signbit(x); }
bool is_pos_zero(double x) { return x == 0.0 && !std::signbit(x); }
bool is_zero(double x) { return x == 0.0; }

// The operand node n equals bit for bit, or -1.
int identity_operand(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1) return -1;
  const TensorMeta& out = g.value(n.outputs[0]).meta;
  const std::string& op = n.op->name;
  auto same = [&](int v) { return g.value(v).meta == out; };
  if (n.inputs.size() == 1) {
    const int x = n.inputs[0];
    if ((op == "cast" || op == "copy" || op == "reshape" || op == "contiguous") && same(x)) return x;
    return -1;
  }
  if (n.inputs.size() != 2 || out.dtype == DType::Bool) return -1;
  const int a = n.inputs[0], b = n.inputs[1];
  const bool floating = is_floating(out.dtype);
  if (op == "mul") {
    if (same(a) && const_all(g, b, is_one)) return a;
    if (same(b) && const_all(g, a, is_one)) return b;
  } else if (op == "div") {
    if (same(a) && const_all(g, b, is_one)) return a;
  } else if (op == "add") {
    // x + (+0.0) is +0.0 for x = -0.0: only the negative zero is neutral for floats.
    auto neutral = floating ? is_neg_zero : is_zero;
    if (same(a) && const_all(g, b, neutral)) return a;
    if (same(b) && const_all(g, a, neutral)) return b;
  } else if (op == "sub") {
    if (same(a) && const_all(g, b, floating ? is_pos_zero : is_zero)) return a;
  }
  return -1;
}

}  // namespace

int fold(Graph& g) {
  std::vector<Tensor> known(g.values().size());
  for (size_t v = 0; v < g.values().size(); ++v)
    if (g.values()[v].kind == ValueKind::Const) known[v] = g.consts()[g.values()[v].index];
  // A view shares its input's storage, and the caller may see that (two outputs, one a view of
  // the other, write through each other); a constant output is copied per call, so neither a view
  // nor what a view reads is folded.
  std::vector<bool> viewed(g.values().size(), false);
  for (const Node& n : g.nodes())
    if (n.op->is_view)
      for (int v : n.inputs) viewed[v] = true;
  int folded = 0;
  g = rebuild(g, [&](int i, Graph& out, ValueMap& map) {
    const Node& n = g.nodes()[i];
    if (n.op->impure || n.op->data_dependent || n.op->is_view) return false;
    for (int o : n.outputs)
      if (viewed[o]) return false;
    Tensors in;
    int64_t in_numel = 0, out_numel = 0;
    for (int v : n.inputs) {
      if (!known[v].defined()) return false;
      in.push_back(known[v]);
      in_numel += known[v].numel();
    }
    for (int o : n.outputs) out_numel += shape_numel(g.value(o).meta.shape);
    if (out_numel > std::max(kFoldElements, in_numel)) return false;
    Tensors r;
    try {
      r = run_op(*n.op, in, n.attrs);
    } catch (const Error&) {
      return false;  // it raises: so does the launch, where eager would
    }
    for (size_t k = 0; k < r.size(); ++k) {
      known[n.outputs[k]] = r[k];
      map[n.outputs[k]] = out.add_const(r[k]);
    }
    ++folded;
    return true;
  });
  return folded;
}

int simplify(Graph& g) {
  // Replacing y by x must not make anything alias x that did not: not a graph output, not what a
  // view reads (a returned view of y would become a view of x: writing into it would write x), not
  // what an impure op writes into.
  std::set<int> pinned(g.outputs().begin(), g.outputs().end());
  for (const Node& n : g.nodes())
    if (n.op->impure || n.op->is_view) pinned.insert(n.inputs.begin(), n.inputs.end());
  std::vector<int> alias(g.values().size());
  for (size_t v = 0; v < alias.size(); ++v) alias[v] = static_cast<int>(v);
  // A copy of a value the graph computed into a buffer of its own, which no view or impure op
  // reads and which is not returned itself, is that value: it may be returned in the copy's place
  // (other ops only read it, and the plan never reuses a returned buffer).
  std::vector<int> producer(g.values().size(), -1);
  for (size_t i = 0; i < g.nodes().size(); ++i)
    for (int o : g.nodes()[i].outputs) producer[o] = static_cast<int>(i);
  auto private_copy = [&](const Node& n, int x) {
    if (n.op->name != "copy" || producer[x] < 0 || pinned.count(x)) return false;
    const Node& p = g.nodes()[producer[x]];
    return !p.op->is_view && !p.op->impure && !p.op->data_dependent;
  };
  std::vector<bool> drop(g.nodes().size(), false);
  int simplified = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.op->impure) continue;
    const int x = identity_operand(g, n);
    if (x < 0 || pinned.count(alias[x])) continue;
    if (pinned.count(n.outputs[0])) {
      if (!private_copy(n, x)) continue;
      pinned.insert(alias[x]);  // returned now: a second copy of it stays a copy (two outputs, two buffers)
    }
    alias[n.outputs[0]] = alias[x];
    drop[i] = true;
    ++simplified;
  }
  if (!simplified) return 0;
  g = rebuild(g, [&](int i, Graph&, ValueMap& map) {
    if (!drop[i]) return false;
    const int o = g.nodes()[i].outputs[0];
    map[o] = map[alias[o]];
    return true;
  });
  return simplified;
}

}  // namespace pj::graph
