#include "graph/ir.h"

#include <sstream>

#include "kernels/copy.h"

namespace pj::graph {

int Graph::add_input(const TensorMeta& meta, std::string name, bool parameter) {
  int id = static_cast<int>(values_.size());
  values_.push_back({ValueKind::Input, meta, static_cast<int>(inputs_.size()), 0, std::move(name), parameter});
  inputs_.push_back(id);
  return id;
}

Graph with_input_metas(const Graph& g, const Metas& inputs) { return with_input_metas(g, inputs, nullptr); }

Graph with_input_metas(const Graph& g, const Metas& inputs,
                       const std::function<size_t(size_t, Graph&, std::vector<int>&)>& at,
                       const std::function<bool(size_t, Attrs&)>& fill) {
  PJ_CHECK(inputs.size() == g.inputs().size()) << "with_input_metas: " << inputs.size() << " metas for "
                                               << g.inputs().size() << " inputs";
  // Walks nodes, not values: dead-code elimination leaves the values of the nodes it dropped.
  Graph out;
  std::vector<int> map(g.values().size(), -1);
  for (size_t k = 0; k < g.inputs().size(); ++k) {  // positions kept: callers feed inputs by position
    const Value& v = g.value(g.inputs()[k]);
    map[g.inputs()[k]] = out.add_input(inputs[k], v.name, v.parameter);
  }
  for (size_t id = 0; id < g.values().size(); ++id)
    if (g.values()[id].kind == ValueKind::Const) map[id] = out.add_const(g.consts()[g.values()[id].index]);
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    if (at) {
      const size_t next = at(k, out, map);
      if (next != k) {
        k = next - 1;
        continue;
      }
    }
    const Node& n = g.nodes()[k];
    std::vector<int> ins;
    Metas in;
    for (int i : n.inputs) {
      PJ_CHECK(map[i] >= 0) << "with_input_metas: " << n.op->name << " reads a value defined after it";
      ins.push_back(map[i]);
      in.push_back(out.value(map[i]).meta);
    }
    Attrs changed;
    const Attrs* attrs = &n.attrs;
    if (fill && fill(k, changed = n.attrs)) attrs = &changed;
    std::vector<int> outs = out.add_node(*n.op, ins, *attrs, n.op->infer(in, *attrs), n.line);
    PJ_CHECK(outs.size() == n.outputs.size()) << "with_input_metas: " << n.op->name << " changed its output count";
    for (size_t k = 0; k < outs.size(); ++k) map[n.outputs[k]] = outs[k];
  }
  std::vector<int> outputs;
  for (int v : g.outputs()) {
    PJ_CHECK(map[v] >= 0) << "with_input_metas: an output no node makes";
    outputs.push_back(map[v]);
  }
  out.set_outputs(std::move(outputs));
  out.set_write_backs(g.write_backs());
  return out;
}

int Graph::add_const(const Tensor& t) {
  PJ_CHECK(!t.is_symbolic()) << "a graph constant must hold data";
  int id = static_cast<int>(values_.size());
  values_.push_back({ValueKind::Const, meta_of(t), static_cast<int>(consts_.size()), 0, ""});
  consts_.push_back(t);
  return id;
}

std::vector<int> Graph::add_node(const OpDef& op, std::vector<int> inputs, Attrs attrs, const Metas& outs,
                                 int line) {
  for (int v : inputs) PJ_CHECK(v >= 0 && v < static_cast<int>(values_.size())) << "bad value id " << v;
  Node n;
  n.op = &op;
  n.attrs = std::move(attrs);
  n.inputs = std::move(inputs);
  n.line = line;
  int node_id = static_cast<int>(nodes_.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    n.outputs.push_back(static_cast<int>(values_.size()));
    values_.push_back({ValueKind::Node, outs[k], node_id, static_cast<int>(k), ""});
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().outputs;
}

int Graph::eliminate_dead_code() {
  std::vector<bool> used(values_.size(), false);
  for (int v : outputs_) used[v] = true;
  std::vector<bool> keep(nodes_.size(), false);
  for (int i = static_cast<int>(nodes_.size()) - 1; i >= 0; --i) {
    const Node& n = nodes_[i];
    bool live = n.op->impure || !n.op->total;  // eager would run it, and it might raise
    for (int o : n.outputs) live = live || used[o];
    if (!live) continue;
    keep[i] = true;
    for (int v : n.inputs) used[v] = true;
  }
  // Node ids are positions: renumber the survivors and the values that point at them.
  std::vector<Node> kept;
  int dropped = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!keep[i]) {
      ++dropped;
      continue;
    }
    for (int o : nodes_[i].outputs) values_[o].index = static_cast<int>(kept.size());
    kept.push_back(std::move(nodes_[i]));
  }
  nodes_ = std::move(kept);
  return dropped;
}

namespace {

std::string meta_str(const TensorMeta& m) {
  std::ostringstream os;
  os << dtype_name(m.dtype) << "[";
  for (size_t i = 0; i < m.shape.size(); ++i) os << (i ? ", " : "") << m.shape[i];
  os << "]";
  return os.str();
}

std::string const_values(const Tensor& t) {
  if (t.numel() > 8) return "";
  std::ostringstream os;
  os << " (";
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) os << ", ";
    if (t.dtype() == DType::Float32 || t.dtype() == DType::Float64) os << format_real(t.item_double(i));
    else if (t.dtype() == DType::Bool) os << (t.item_int(i) ? "True" : "False");
    else os << t.item_int(i);
  }
  os << ")";
  return os.str();
}

}  // namespace

bool Graph::has_impure_op() const {
  for (const Node& n : nodes_)
    if (n.op->impure) return true;
  return false;
}

std::string Graph::to_string() const {
  // Canonical numbering: the order things are printed in.
  std::vector<int> num(values_.size(), -1);
  int next = 0;
  for (int v : inputs_) num[v] = next++;
  for (size_t c = 0; c < values_.size(); ++c)
    if (values_[c].kind == ValueKind::Const) num[c] = next++;
  for (const Node& n : nodes_)
    for (int o : n.outputs) num[o] = next++;
  std::ostringstream os;
  os << "graph(";
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Value& v = values_[inputs_[i]];
    os << (i ? ", " : "") << "%" << num[inputs_[i]] << ": " << meta_str(v.meta) << " " << v.name;
  }
  os << ") {\n";
  for (size_t c = 0; c < values_.size(); ++c)
    if (values_[c].kind == ValueKind::Const)
      os << "  %" << num[c] << ": " << meta_str(values_[c].meta) << " = constant"
         << const_values(consts_[values_[c].index]) << "\n";
  for (const Node& n : nodes_) {
    os << "  ";
    for (size_t k = 0; k < n.outputs.size(); ++k)
      os << (k ? ", " : "") << "%" << num[n.outputs[k]] << ": " << meta_str(values_[n.outputs[k]].meta);
    os << " = " << n.op->name << "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) os << (k ? ", " : "") << "%" << num[n.inputs[k]];
    os << ")";
    std::string attrs = n.attrs.to_string();
    if (!attrs.empty()) os << " " << attrs;
    if (n.line > 0) os << "  # line " << n.line;
    os << "\n";
  }
  os << "  return (";
  for (size_t k = 0; k < outputs_.size(); ++k) os << (k ? ", " : "") << "%" << num[outputs_[k]];
  os << (outputs_.size() == 1 ? ",)" : ")");
  for (size_t k = 0; k < write_backs_.size(); ++k)
    os << (k ? ", " : "  # writes back ") << "%" << num[outputs_.at(write_backs_[k].output)] << " -> %"
       << num[inputs_.at(write_backs_[k].input)];
  os << "\n}\n";
  return os.str();
}

namespace {
std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}
}  // namespace

std::string to_dot(const Graph& g, const std::string& title) {
  std::ostringstream os;
  os << "digraph pijit {\n  label=\"" << dot_escape(title) << "\"; labelloc=t; fontname=\"monospace\";\n"
     << "  node [fontname=\"monospace\", fontsize=10];\n";
  // A value is drawn as the node that makes it (inputs and constants are nodes of their own).
  auto src = [&](int v) {
    const Value& val = g.values()[v];
    if (val.kind == ValueKind::Input) return "in" + std::to_string(val.index);
    if (val.kind == ValueKind::Const) return "c" + std::to_string(val.index);
    return "n" + std::to_string(val.index);
  };
  for (int v : g.inputs()) {
    const Value& val = g.values()[v];
    os << "  " << src(v) << " [shape=ellipse, style=filled, fillcolor=\"#dbeafe\", label=\""
       << dot_escape(val.name + "\n" + meta_str(val.meta)) << "\"];\n";
  }
  for (size_t v = 0; v < g.values().size(); ++v)
    if (g.values()[v].kind == ValueKind::Const)
      os << "  " << src(static_cast<int>(v)) << " [shape=note, label=\"constant\\n"
         << dot_escape(meta_str(g.values()[v].meta)) << "\"];\n";
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    std::string label = n.op->name;
    std::string attrs = n.attrs.to_string();
    if (attrs.size() > 120) attrs = attrs.substr(0, 117) + "...";
    if (!attrs.empty()) label += "\n" + attrs;
    for (int o : n.outputs) label += "\n-> " + meta_str(g.values()[o].meta);
    if (n.line > 0) label += "\nline " + std::to_string(n.line);
    os << "  n" << i << " [shape=box, style=rounded, label=\"" << dot_escape(label) << "\"];\n";
    for (int v : n.inputs) os << "  " << src(v) << " -> n" << i << ";\n";
  }
  for (size_t k = 0; k < g.outputs().size(); ++k)
    os << "  out" << k << " [shape=ellipse, style=filled, fillcolor=\"#dcfce7\", label=\"output " << k << "\"];\n  "
       << src(g.outputs()[k]) << " -> out" << k << ";\n";
  os << "}\n";
  return os.str();
}

std::vector<int> last_uses(const Graph& g) {
  std::vector<int> last(g.values().size(), -1);
  for (size_t i = 0; i < g.nodes().size(); ++i)
    for (int v : g.nodes()[i].inputs) last[v] = static_cast<int>(i);
  for (int v : g.outputs()) last[v] = static_cast<int>(g.nodes().size());
  return last;
}

Tensors execute(const Graph& g, const Tensors& inputs, const std::vector<int>& last_use) {
  if (inputs.size() != g.inputs().size())
    PJ_THROW(Type) << "graph takes " << g.inputs().size() << " inputs but " << inputs.size() << " were given";
  std::vector<Tensor> env(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    if (!meta_matches(inputs[i], v.meta))
      PJ_THROW(Value) << "graph input " << v.name << " expected " << meta_str(v.meta) << ", got "
                      << meta_str(meta_of(inputs[i]));
    env[g.inputs()[i]] = inputs[i];
  }
  for (size_t id = 0; id < g.values().size(); ++id)
    if (g.value(static_cast<int>(id)).kind == ValueKind::Const) env[id] = g.consts()[g.value(static_cast<int>(id)).index];
  // A value is dropped after its last use (not an output): its storage goes back to the allocator
  // for the next node, so a chain's peak is the live values, not all of them.
  PJ_CHECK(last_use.size() == g.values().size()) << "last_use is not this graph's";
  Tensors in;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    in.clear();
    for (int v : n.inputs) in.push_back(env[v]);
    Tensors out = run_op(*n.op, in, n.attrs);
    PJ_CHECK(out.size() == n.outputs.size()) << n.op->name << " returned " << out.size() << " outputs, graph has "
                                             << n.outputs.size();
    for (size_t k = 0; k < out.size(); ++k) env[n.outputs[k]] = std::move(out[k]);
    in.clear();
    for (int v : n.inputs)
      if (last_use[v] == static_cast<int>(i)) env[v] = Tensor();
    for (int v : n.outputs)
      if (last_use[v] < 0) env[v] = Tensor();  // never used (an op kept for its errors)
  }
  // Constants live as long as the graph: an output that is one, or a view of one, is copied, so a
  // caller writing into a result never changes what later calls compute.
  Tensors result;
  for (int v : g.outputs()) {
    bool aliases_const = false;
    for (const Tensor& c : g.consts())
      aliases_const = aliases_const || (!env[v].is_symbolic() && c.storage() == env[v].storage());
    result.push_back(aliases_const ? env[v].clone() : env[v]);
  }
  return result;
}

}  // namespace pj::graph
