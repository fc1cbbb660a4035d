#include "graph/batching.h"

#include <set>
#include <string>

#include "common/check.h"
#include "graph/ops/nn_params.h"
#include "kernels/index_ops.h"

namespace pj::graph {
namespace {

thread_local int t_unrolled = 0;
thread_local std::vector<bool> t_batched_outputs;

IntList dims_of(const Shape& s) { return IntList(s.begin(), s.end()); }

bool is_elementwise(const OpDef& op) {
  static const std::set<std::string> more = {"where", "cast", "logical_not", "copy", "contiguous", "stop_gradient"};
  return op.elementwise || more.count(op.name);
}

bool is_reduction(const std::string& n) {
  static const std::set<std::string> r = {"sum", "mean", "prod", "max", "min", "all", "any", "var", "std", "logsumexp"};
  return r.count(n) != 0;
}

// One logical axis attribute moved past the batch dim: non-negative axes shift, negative ones
// (counted from the end) stay.
int64_t shift(int64_t a) { return a < 0 ? a : a + 1; }

class Batcher {
 public:
  Batcher(const Graph& g, int64_t B) : g_(g), B_(B), map_(g.values().size(), -1), bat_(g.values().size(), false) {}

  Graph run(const std::vector<bool>& batched) {
    PJ_CHECK(batched.size() == g_.inputs().size()) << "batch_graph: one flag per input";
    for (size_t k = 0; k < g_.inputs().size(); ++k) {
      const int v = g_.inputs()[k];
      const Value& val = g_.value(v);
      TensorMeta m = val.meta;
      if (batched[k]) m.shape.insert(m.shape.begin(), B_);
      map_[v] = out_.add_input(m, val.name, val.parameter);
      bat_[v] = batched[k];
    }
    for (const Node& n : g_.nodes()) node(n);
    std::vector<int> outs;
    t_batched_outputs.clear();
    for (int v : g_.outputs()) {
      t_batched_outputs.push_back(bat_[v]);
      outs.push_back(batched_value(v));
    }
    out_.set_outputs(outs);
    return std::move(out_);
  }

 private:
  // ---- building ----
  TensorMeta meta(int nv) const { return out_.value(nv).meta; }
  std::vector<int> emit(const OpDef& op, const std::vector<int>& in, const Attrs& a) {
    Metas m;
    for (int v : in) m.push_back(meta(v));
    return out_.add_node(op, in, a, op.infer(m, a), line_);
  }
  int emit1(const char* op, const std::vector<int>& in, const Attrs& a = {}) { return emit(get_op(op), in, a)[0]; }
  int reshape(int nv, const Shape& s) { return meta(nv).shape == s ? nv : emit1("reshape", {nv}, Attrs{{"shape", dims_of(s)}}); }

  // The new graph's value for old value v (constants are added on first use).
  int get(int v) {
    if (map_[v] < 0) {
      const Value& val = g_.value(v);
      PJ_CHECK(val.kind == ValueKind::Const) << "batch_graph: value %" << v << " used before it is made";
      map_[v] = out_.add_const(g_.consts()[val.index]);
    }
    return map_[v];
  }
  // v with the batch dimension first, broadcast when v does not depend on a batched input.
  int batched_value(int v) {
    const int nv = get(v);
    if (bat_[v]) return nv;
    Shape s = meta(nv).shape;
    s.insert(s.begin(), B_);
    Shape ones = meta(nv).shape;
    ones.insert(ones.begin(), 1);
    return emit1("contiguous", {emit1("broadcast_to", {reshape(nv, ones)}, Attrs{{"shape", dims_of(s)}})});
  }
  // A batched value whose logical rank is below `rank` gets size-1 dims after the batch dim, so
  // that broadcasting aligns the logical dims as it would without the batch.
  int lifted(int v, size_t rank) {
    const int nv = get(v);
    const Shape& logical = g_.value(v).meta.shape;
    if (!bat_[v] || logical.size() >= rank) return nv;
    Shape s{B_};
    s.insert(s.end(), rank - logical.size(), 1);
    s.insert(s.end(), logical.begin(), logical.end());
    return reshape(nv, s);
  }
  void set(const Node& n, const std::vector<int>& outs) {
    for (size_t k = 0; k < outs.size(); ++k) {
      map_[n.outputs[k]] = outs[k];
      bat_[n.outputs[k]] = true;
      // The rule must give each output its logical shape with the batch dim in front.
      Shape want = g_.value(n.outputs[k]).meta.shape;
      want.insert(want.begin(), B_);
      PJ_CHECK(meta(outs[k]).shape == want) << "batching rule of " << n.op->name << " gave " << shape_str(meta(outs[k]).shape)
                                            << ", expected " << shape_str(want);
    }
  }

  // ---- rules ----
  void node(const Node& n) {
    line_ = n.line;
    bool any = false;
    for (int v : n.inputs) any = any || bat_[v];
    const std::string& name = n.op->name;
    if (n.op->impure) return unroll(n);  // random numbers: one draw per example, as a loop makes
    if (!any) {
      std::vector<int> in;
      for (int v : n.inputs) in.push_back(get(v));
      std::vector<int> outs = emit(*n.op, in, n.attrs);
      for (size_t k = 0; k < outs.size(); ++k) map_[n.outputs[k]] = outs[k];
      return;
    }
    if (is_elementwise(*n.op)) {
      const size_t rank = g_.value(n.outputs[0]).meta.shape.size();
      std::vector<int> in;
      for (int v : n.inputs) in.push_back(lifted(v, rank));
      return set(n, emit(*n.op, in, n.attrs));
    }
    const int x = n.inputs.empty() ? -1 : n.inputs[0];
    const int r = x < 0 ? 0 : static_cast<int>(g_.value(x).meta.shape.size());
    if (n.inputs.size() == 1 && (is_reduction(name) || name == "argmax" || name == "argmin") && r > 0) {
      Attrs a = n.attrs;
      if (a.is_none("axis")) {
        if (name == "argmax" || name == "argmin") {  // the index into the flattened example
          Shape flat{B_, shape_numel(g_.value(x).meta.shape)};
          a.set("axis", int64_t{1});
          int res = emit1(name.c_str(), {reshape(get(x), flat)}, a);
          Shape want = g_.value(n.outputs[0]).meta.shape;
          want.insert(want.begin(), B_);
          return set(n, {reshape(res, want)});
        }
        IntList all;
        for (int d = 1; d <= r; ++d) all.push_back(d);
        a.set("axis", all);
      } else {
        IntList axes;
        for (int d : reduce_axes(n.attrs, r)) axes.push_back(d + 1);
        a.set("axis", axes);
      }
      return set(n, emit(*n.op, {get(x)}, a));
    }
    if ((name == "softmax" || name == "log_softmax" || name == "cumsum") && n.attrs.has("axis") && !n.attrs.is_none("axis")) {
      Attrs a = n.attrs;
      a.set("axis", shift(n.attrs.i("axis")));
      return set(n, emit(*n.op, {get(x)}, a));
    }
    if (name == "reshape") {
      IntList s{B_};
      for (int64_t d : n.attrs.ints("shape")) s.push_back(d);
      return set(n, {emit1("reshape", {get(x)}, Attrs{{"shape", s}})});
    }
    if (name == "flatten") {
      Attrs a;
      a.set("start_dim", shift(n.attrs.i("start_dim", 0)));
      a.set("end_dim", shift(n.attrs.i("end_dim", -1)));
      return set(n, emit(*n.op, {get(x)}, a));
    }
    if (name == "transpose" || name == "permute") {
      IntList perm{0};
      if (n.attrs.is_none("perm")) {
        for (int d = r - 1; d >= 0; --d) perm.push_back(d + 1);
      } else {
        for (int64_t p : n.attrs.ints("perm")) perm.push_back((p < 0 ? p + r : p) + 1);
      }
      return set(n, {emit1("transpose", {get(x)}, Attrs{{"perm", perm}})});
    }
    if (name == "squeeze") {  // only size-1 dims of the example go (None: all of them, never the batch's)
      Shape want = g_.value(n.outputs[0]).meta.shape;
      want.insert(want.begin(), B_);
      return set(n, {reshape(get(x), want)});
    }
    if (name == "expand_dims" || name == "unsqueeze") {
      Attrs a = n.attrs;
      a.set("axis", shift(n.attrs.i("axis")));
      return set(n, emit(*n.op, {get(x)}, a));
    }
    if (name == "broadcast_to") {
      IntList s{B_};
      for (int64_t d : n.attrs.ints("shape")) s.push_back(d);
      return set(n, {emit1("broadcast_to", {lifted(x, s.size() - 1)}, Attrs{{"shape", s}})});
    }
    if (name == "basic_index") {
      IndexItems items = decode_index_items(n.attrs.ints("items"), {});
      items.insert(items.begin(), IndexItem::slice());
      return set(n, {emit1("basic_index", {get(x)}, Attrs{{"items", encode_index_items(items)}})});
    }
    if (name == "concat" || name == "stack") {
      std::vector<int> in;
      for (int v : n.inputs) in.push_back(batched_value(v));
      Attrs a = n.attrs;
      a.set("axis", shift(n.attrs.i("axis", 0)));
      return set(n, emit(*n.op, in, a));
    }
    if (name == "split") {
      Attrs a = n.attrs;
      a.set("axis", shift(n.attrs.i("axis", 0)));
      return set(n, emit(*n.op, {get(x)}, a));
    }
    if (name == "tile") {
      IntList reps{1};
      const IntList& rp = n.attrs.ints("reps");
      reps.insert(reps.end(), rp.begin(), rp.end());
      return set(n, {emit1("tile", {lifted(x, rp.size())}, Attrs{{"reps", reps}})});
    }
    if (name == "matmul") return matmul(n);
    if (name == "dense" && bat_[n.inputs[0]] && !bat_[n.inputs[1]] && (n.inputs.size() < 3 || !bat_[n.inputs[2]])) {
      std::vector<int> in;
      for (int v : n.inputs) in.push_back(get(v));
      return set(n, emit(*n.op, in, n.attrs));
    }
    unroll(n);
  }

  // Batched operands of logical rank 1 become matrices, batched operands' batch dims are padded
  // to the longest, and the product is reshaped to the logical result with the batch in front.
  void matmul(const Node& n) {
    const int a = n.inputs[0], b = n.inputs[1];
    auto rank = [&](int v) { return static_cast<int>(g_.value(v).meta.shape.size()); };
    auto matrix = [&](int v, bool row) {  // a batched vector as a (1, k) or (k, 1) matrix
      Shape s = g_.value(v).meta.shape;
      s.insert(row ? s.begin() : s.end(), 1);
      s.insert(s.begin(), B_);
      return reshape(get(v), s);
    };
    int na = bat_[a] && rank(a) == 1 ? matrix(a, true) : get(a);
    int nb = bat_[b] && rank(b) == 1 ? matrix(b, false) : get(b);
    auto logical_batch_rank = [&](int nv, bool batched) {
      return static_cast<int>(meta(nv).shape.size()) - (batched ? 1 : 0) - 2;
    };
    const int br = std::max(logical_batch_rank(na, bat_[a]), logical_batch_rank(nb, bat_[b]));
    auto pad = [&](int nv, bool batched) {
      if (!batched) return nv;
      Shape s = meta(nv).shape;
      const int have = static_cast<int>(s.size()) - 3;
      if (have >= br) return nv;
      s.insert(s.begin() + 1, br - have, 1);
      return reshape(nv, s);
    };
    int res = emit1("matmul", {pad(na, bat_[a]), pad(nb, bat_[b])});
    Shape want = g_.value(n.outputs[0]).meta.shape;
    want.insert(want.begin(), B_);
    set(n, {reshape(res, want)});
  }

  // Once per example on slices, the results stacked.
  void unroll(const Node& n) {
    ++t_unrolled;
    std::vector<std::vector<int>> per_out(n.outputs.size());
    for (int64_t i = 0; i < B_; ++i) {
      std::vector<int> in;
      for (int v : n.inputs) {
        if (!bat_[v]) {
          in.push_back(get(v));
          continue;
        }
        IndexItems item{IndexItem::integer(i)};
        in.push_back(emit1("basic_index", {get(v)}, Attrs{{"items", encode_index_items(item)}}));
      }
      std::vector<int> outs = emit(*n.op, in, n.attrs);
      for (size_t k = 0; k < outs.size(); ++k) per_out[k].push_back(outs[k]);
    }
    std::vector<int> outs;
    for (auto& parts : per_out) outs.push_back(emit1("stack", parts, Attrs{{"axis", int64_t{0}}}));
    set(n, outs);
  }

  const Graph& g_;
  const int64_t B_;
  Graph out_;
  std::vector<int> map_;   // old value -> new value
  std::vector<bool> bat_;  // old value carries the batch dim in the new graph
  int line_ = 0;
};

}  // namespace

Graph batch_graph(const Graph& g, const std::vector<bool>& batched, int64_t B) {
  if (B < 1) PJ_THROW(Value) << "vmap: the batch size must be at least 1, got " << B;
  t_unrolled = 0;
  return Batcher(g, B).run(batched);
}

int unrolled_nodes() { return t_unrolled; }
const std::vector<bool>& batched_outputs() { return t_batched_outputs; }

}  // namespace pj::graph
