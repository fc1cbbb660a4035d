#include "graph/passes.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "graph/ops/nn_params.h"
#include "graph/pass_impl.h"
#include "kernels/fused.h"
#include "kernels/reduce.h"

namespace pj::graph {
namespace {

std::vector<Pass>& registry() {
  static std::vector<Pass> r;
  return r;
}

int dce(Graph& g) { return g.eliminate_dead_code(); }

int cse(Graph& g) {
  // (op, attrs text, inputs) -> the node computing it first
  std::map<std::tuple<const OpDef*, std::string, std::vector<int>>, int> seen;
  std::vector<int> same(g.nodes().size(), -1);
  std::vector<int> alias(g.values().size());
  for (size_t v = 0; v < alias.size(); ++v) alias[v] = static_cast<int>(v);
  // Small constants equal bit for bit are one value as far as keys go (autodiff and the optimizers
  // make a 0.0 or a learning rate per parameter).
  std::map<std::tuple<DType, std::string, std::string>, int> consts;
  for (size_t v = 0; v < g.values().size(); ++v) {
    const Value& val = g.values()[v];
    if (val.kind != ValueKind::Const) continue;
    const Tensor& t = g.consts()[val.index];
    if (t.numel() > 64) continue;
    Tensor c = t.contiguous();
    auto key = std::make_tuple(t.dtype(), shape_str(t.shape()),
                               std::string(static_cast<const char*>(c.raw_data()), static_cast<size_t>(c.nbytes())));
    alias[v] = consts.emplace(std::move(key), static_cast<int>(v)).first->second;
  }
  // A value that stands for a graph output: two nodes both returned are two objects to the caller
  // (writing into one must not change the other), so they are never merged (fuzz 7200434).
  std::vector<char> returned(g.values().size(), 0);
  for (int v : g.outputs()) returned[v] = 1;
  int merged = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.op->impure) {
      seen.clear();  // it may have written into a value an earlier node read
      continue;
    }
    if (n.op->data_dependent) continue;
    std::vector<int> ins;
    for (int v : n.inputs) ins.push_back(alias[v]);
    auto key = std::make_tuple(n.op, n.attrs.to_string(), ins);
    auto it = seen.find(key);
    if (it == seen.end()) {
      seen.emplace(std::move(key), static_cast<int>(i));
      continue;
    }
    const Node& first = g.nodes()[it->second];
    bool both_returned = false;
    for (size_t k = 0; k < n.outputs.size(); ++k) both_returned |= returned[n.outputs[k]] && returned[first.outputs[k]];
    if (both_returned) continue;
    same[i] = it->second;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      alias[n.outputs[k]] = first.outputs[k];
      returned[first.outputs[k]] |= returned[n.outputs[k]];
    }
    ++merged;
  }
  if (!merged) return 0;
  g = rebuild(g, [&](int i, Graph&, ValueMap& map) {
    if (same[i] < 0) return false;
    const Node& n = g.nodes()[i];
    for (size_t k = 0; k < n.outputs.size(); ++k) map[n.outputs[k]] = map[alias[n.outputs[k]]];
    return true;
  });
  return merged;
}

// ---- fusion -------------------------------------------------------------------------------------

// A cast of an Int32 or Float64 value to Float32: the loop converts it as it loads it.
bool fusable_cast(const Graph& g, const Node& n) {
  return n.op->name == "cast" && g.value(n.outputs[0]).meta.dtype == DType::Float32 &&
         g.value(n.inputs[0]).meta.dtype != DType::Float32 && fused_input_dtype(g.value(n.inputs[0]).meta.dtype);
}

bool fusable(const Graph& g, const Node& n, FusedInstr* ins) {
  if (fusable_cast(g, n)) return true;
  if (n.op->impure || n.outputs.size() != 1 || !fused_op_from_name(n.op->name, &ins->op)) return false;
  if (g.value(n.outputs[0]).meta.dtype != DType::Float32) return false;
  for (int v : n.inputs)
    if (g.value(v).meta.dtype != DType::Float32) return false;
  if (static_cast<int>(n.inputs.size()) != fused_op_arity(ins->op)) return false;
  if (ins->op == FusedOp::clamp) {
    ins->has_lo = !n.attrs.is_none("min");
    ins->has_hi = !n.attrs.is_none("max");
    // The eager kernel converts the bounds to float; fusing holds them as floats too.
    if (ins->has_lo) ins->lo = static_cast<float>(n.attrs.f("min"));
    if (ins->has_hi) ins->hi = static_cast<float>(n.attrs.f("max"));
  }
  return true;
}

// sum, mean, max or min of a float32 value over its trailing dims (from *dim on), where the eager
// kernel reduces whole rows in lanes (kernels/reduce.h: reduce_produced_rows), so a fused loop
// feeding it gives the same bits.
bool trailing_reduction(const Graph& g, const Node& n, int* dim) {
  const std::string& op = n.op->name;
  if (op != "sum" && op != "mean" && op != "max" && op != "min") return false;
  const TensorMeta& in = g.value(n.inputs[0]).meta;
  if (in.dtype != DType::Float32 || g.value(n.outputs[0]).meta.dtype != DType::Float32) return false;
  const int nd = static_cast<int>(in.shape.size());
  std::vector<int> axes = reduce_axes(n.attrs, nd);
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) return false;
  for (size_t k = 0; k < axes.size(); ++k)
    if (axes[k] != nd - static_cast<int>(axes.size()) + static_cast<int>(k)) return false;
  *dim = axes.front();
  int64_t rows = 1, len = 1;
  for (int d = 0; d < nd; ++d) (d < *dim ? rows : len) *= in.shape[d];
  return reduces_by_rows(rows, len);
}

int fuse(Graph& g) {
  const size_t nn = g.nodes().size();
  std::vector<FusedInstr> instr(nn);
  std::vector<int> group(nn, -1);
  struct Group {
    std::vector<int> nodes;
    Shape shape;
    bool open = true;
  };
  std::vector<Group> groups;
  std::vector<int> producer(g.values().size(), -1);  // node id of each node output
  for (size_t i = 0; i < nn; ++i)
    for (int o : g.nodes()[i].outputs) producer[o] = static_cast<int>(i);
  auto group_of = [&](int v) { return producer[v] < 0 ? -1 : group[producer[v]]; };

  for (size_t i = 0; i < nn; ++i) {
    const Node& n = g.nodes()[i];
    if (n.op->impure)
      for (Group& gr : groups) gr.open = false;  // nothing moves past a write
    if (fusable(g, n, &instr[i])) {
      const Shape& shape = g.value(n.outputs[0]).meta.shape;
      int into = -1;
      for (int v : n.inputs) {
        int gi = group_of(v);
        if (gi < 0 || !groups[gi].open || groups[gi].shape != shape || gi == into) continue;
        if (into < 0) {
          into = gi;
          continue;
        }
        // Two open groups meet here: both can move down to this node, so they become one.
        for (int m : groups[gi].nodes) group[m] = into;
        groups[into].nodes.insert(groups[into].nodes.end(), groups[gi].nodes.begin(), groups[gi].nodes.end());
        groups[gi].nodes.clear();
        groups[gi].open = false;
      }
      if (into < 0) {
        into = static_cast<int>(groups.size());
        groups.push_back({{}, shape, true});
      }
      group[i] = into;
      groups[into].nodes.push_back(static_cast<int>(i));
    }
    // A group read by a node outside it cannot move past that node: it takes no more members.
    for (int v : n.inputs) {
      int gi = group_of(v);
      if (gi >= 0 && gi != group[i]) groups[gi].open = false;
    }
  }

  // Who reads each value (graph outputs count as a reader outside every group).
  std::vector<std::vector<int>> readers(g.values().size());
  for (size_t i = 0; i < nn; ++i)
    for (int v : g.nodes()[i].inputs) readers[v].push_back(static_cast<int>(i));
  std::vector<bool> returned(g.values().size(), false);
  for (int v : g.outputs()) returned[v] = true;

  // The fused node of a chunk of a group's members (in program order), placed at its last member;
  // with a reduction `red` of one of its values, that too (fused_reduce).
  struct Fused {
    std::string program;
    std::vector<int> inputs, outputs;  // old value ids
    int line = 0;
    int red = -1, red_dim = 0;
  };
  std::vector<int> chunk_of(nn, -1);
  auto make_fused = [&](const std::vector<int>& members, int id, Fused* f) {
    for (int m : members) chunk_of[m] = id;
    if (f->red >= 0) chunk_of[f->red] = id;  // its read of the reduced value is inside the loop
    FusedProgram p;
    std::map<int, int> reg;  // old value id -> register
    for (int m : members)
      for (int v : g.nodes()[m].inputs)
        if ((producer[v] < 0 || chunk_of[producer[v]] != id) && !reg.count(v)) {
          reg[v] = static_cast<int>(f->inputs.size());
          f->inputs.push_back(v);
        }
    p.num_inputs = static_cast<int>(f->inputs.size());
    for (int v : f->inputs)
      if (g.value(v).meta.dtype != DType::Float32) p.input_dtypes.assign(p.num_inputs, DType::Float32);
    for (int k = 0; k < p.num_inputs && !p.input_dtypes.empty(); ++k) p.input_dtypes[k] = g.value(f->inputs[k]).meta.dtype;
    for (int m : members) {
      const Node& n = g.nodes()[m];
      const bool cast = fusable_cast(g, n);  // no instruction: its value is the converted input
      int v = n.outputs[0];
      if (cast) reg[v] = reg.at(n.inputs[0]);
      bool escapes = returned[v];
      for (int r : readers[v]) escapes = escapes || chunk_of[r] != id;
      if (cast) {
        if (escapes) {
          p.outputs.push_back(reg[v]);
          f->outputs.push_back(v);
        }
        continue;
      }
      FusedInstr ins = instr[m];
      ins.a = reg.at(n.inputs[0]);
      if (n.inputs.size() > 1) ins.b = reg.at(n.inputs[1]);
      reg[v] = p.num_registers();
      p.code.push_back(ins);
      if (escapes) {
        p.outputs.push_back(reg[v]);
        f->outputs.push_back(v);
      }
    }
    if (f->red >= 0) {  // last: the reduced register
      const Node& r = g.nodes()[f->red];
      p.outputs.push_back(reg.at(r.inputs[0]));
      f->outputs.push_back(r.outputs[0]);
    }
    int iterated = static_cast<int>(p.outputs.size());  // what the loop walks: outputs, inputs of >1 element
    for (int v : f->inputs) iterated += shape_numel(g.value(v).meta.shape) != 1;
    f->program = p.to_string();
    f->line = g.nodes()[members.front()].line;
    return iterated <= kMaxFusedOperands && p.num_inputs <= kMaxFusedInputs;
  };

  // A group too big for one kernel's operands is cut, in program order, into chunks (a prefix can
  // move down to its own last member: nothing outside the group read it before the group ended).
  std::vector<std::vector<int>> chunks;
  std::vector<int> member_chunk(nn, -1);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    Group& gr = groups[gi];
    if (gr.nodes.empty()) continue;
    std::sort(gr.nodes.begin(), gr.nodes.end());
    chunks.emplace_back();
    std::set<int> ins;
    int tensors = 0;
    for (int m : gr.nodes) {
      std::set<int> more;
      for (int v : g.nodes()[m].inputs)
        if (group_of(v) != static_cast<int>(gi) && !ins.count(v)) more.insert(v);
      int more_tensors = 0;
      for (int v : more) more_tensors += shape_numel(g.value(v).meta.shape) != 1;
      if (!chunks.back().empty() && (ins.size() + more.size() > static_cast<size_t>(kMaxFusedInputs) - 2 ||
                                     tensors + more_tensors > kMaxFusedOperands / 2)) {
        chunks.emplace_back();
        ins.clear();
        tensors = 0;
      }
      chunks.back().push_back(m);
      member_chunk[m] = static_cast<int>(chunks.size()) - 1;
      ins.insert(more.begin(), more.end());
      tensors += more_tensors;
    }
  }
  // A trailing reduction of a chunk's value joins the chunk: it moves up to the chunk's last member
  // (nothing impure in between), and the value is reduced as the loop computes it.
  std::vector<int> red_of(chunks.size(), -1), red_dim(chunks.size(), 0);
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = g.nodes()[i];
    int dim;
    if (n.inputs.size() != 1 || producer[n.inputs[0]] < 0 || !trailing_reduction(g, n, &dim)) continue;
    const int c = member_chunk[producer[n.inputs[0]]];
    if (c < 0 || red_of[c] >= 0) continue;
    PJ_CHECK(chunks[c].back() < static_cast<int>(i)) << "fuse: a group read by node " << i << " kept members after it";
    bool moves = true;
    for (size_t j = chunks[c].back() + 1; j < i && moves; ++j) moves = !g.nodes()[j].op->impure;
    if (!moves) continue;
    red_of[c] = static_cast<int>(i);
    red_dim[c] = dim;
  }

  std::map<int, Fused> at_node;  // last member -> fused node
  std::vector<bool> absorbed(nn, false);
  int fused_nodes = 0;
  for (size_t id = 0; id < chunks.size(); ++id) {
    const std::vector<int>& c = chunks[id];
    if (c.size() < 2 && red_of[id] < 0) continue;
    Fused f;
    f.red = red_of[id];
    f.red_dim = red_dim[id];
    if (!make_fused(c, static_cast<int>(id), &f)) {
      for (int m : c) chunk_of[m] = -1;
      if (f.red >= 0) chunk_of[f.red] = -1;
      continue;
    }
    for (int m : c) absorbed[m] = true;
    fused_nodes += static_cast<int>(c.size());
    if (f.red >= 0) {
      absorbed[f.red] = true;
      ++fused_nodes;
    }
    at_node[c.back()] = std::move(f);
  }
  if (at_node.empty()) return 0;
  const OpDef& fused_op = get_op("fused_elementwise");
  const OpDef& fused_reduce_op = get_op("fused_reduce");
  g = rebuild(g, [&](int i, Graph& out, ValueMap& map) {
    if (!absorbed[i]) return false;
    auto it = at_node.find(i);
    if (it == at_node.end()) return true;  // emitted with its group's last member
    const Fused& f = it->second;
    std::vector<int> ins;
    for (int v : f.inputs) ins.push_back(map[v]);
    Metas metas;
    for (int v : f.outputs) metas.push_back(g.value(v).meta);
    std::vector<int> ids;
    if (f.red < 0) {
      ids = out.add_node(fused_op, ins, Attrs{{"program", f.program}}, metas, f.line);
    } else {
      const Node& r = g.nodes()[f.red];
      Attrs a{{"program", f.program}, {"reduce", r.op->name}, {"dim", int64_t{f.red_dim}},
              {"keepdims", r.attrs.b("keepdims")}};
      ids = out.add_node(fused_reduce_op, ins, a, metas, f.line);
    }
    for (size_t k = 0; k < ids.size(); ++k) map[f.outputs[k]] = ids[k];
    return true;
  });
  return fused_nodes;
}

struct Builtins {
  Builtins() {
    register_pass({"lower", "inference batch_norm -> coefficients and elementwise ops that fuse", lower});
    register_pass({"fold", "nodes computing only from constants become constants", fold});
    register_pass({"simplify", "algebraic identities that hold bit for bit (x * 1, x - 0, ...)", simplify});
    register_pass({"dce", "drops unused nodes that cannot raise", dce});
    register_pass({"cse", "merges nodes computing the same op on the same values", cse});
    register_pass({"fuse_conv", "conv2d -> per-channel affine -> relu -> max_pool2d -> one conv2d_block", fuse_conv});
    register_pass({"layout", "a conv2d_block read by another alone hands it oneDNN's blocked layout", layout});
    register_pass({"fuse_dense", "dense -> relu (read by nothing else) -> one dense applying the relu in place", fuse_dense});
    register_pass({"fuse", "float32 elementwise groups (and a trailing sum/mean/max/min) -> one fused loop", fuse});
  }
} builtins;

}  // namespace

void register_pass(Pass p) { registry().push_back(std::move(p)); }

const Pass* find_pass(const std::string& name) {
  for (const Pass& p : registry())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> pass_names() {
  std::vector<std::string> r;
  for (const Pass& p : registry()) r.push_back(p.name);
  return r;
}

std::vector<std::string> default_pipeline() { return {"lower", "fold", "simplify", "dce", "cse", "fuse_conv", "layout", "fuse_dense", "fuse"}; }

std::vector<std::string> parse_pipeline(const std::string& text) {
  if (text == "default") return default_pipeline();
  std::vector<std::string> r;
  if (text.empty() || text == "none") return r;
  std::stringstream ss(text);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (!find_pass(name)) {
      std::string known;
      for (const std::string& n : pass_names()) known += (known.empty() ? "" : ", ") + n;
      PJ_THROW(Value) << "unknown graph pass '" << name << "' (known: " << known << ")";
    }
    r.push_back(name);
  }
  return r;
}

void run_passes(Graph& g, const std::vector<std::string>& passes,
                const std::function<void(const std::string&, int, const Graph&)>& after) {
  for (const std::string& name : passes) {
    const Pass* p = find_pass(name);
    if (!p) PJ_THROW(Value) << "unknown graph pass '" << name << "'";
    int changed = p->run(g);
    if (after) after(name, changed, g);
  }
}

}  // namespace pj::graph
