// Graph's persistent form (ir.h save_graph / load_graph), for the compile cache.
#include <cstring>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace pj::graph {
namespace {

constexpr uint8_t kGraphFormat = 1;

void put_attr(ByteWriter& w, const AttrValue& v) {
  w.u8(static_cast<uint8_t>(v.index()));
  if (const bool* b = std::get_if<bool>(&v)) w.u8(*b);
  else if (const int64_t* i = std::get_if<int64_t>(&v)) w.svar(*i);
  else if (const double* f = std::get_if<double>(&v)) w.f64(*f);
  else if (const std::string* s = std::get_if<std::string>(&v)) w.str(*s);
  else if (const IntList* l = std::get_if<IntList>(&v)) {
    w.var(l->size());
    for (int64_t x : *l) w.svar(x);
  } else if (const DType* d = std::get_if<DType>(&v)) {
    w.u8(static_cast<uint8_t>(*d));
  }
}

AttrValue get_attr(ByteReader& r) {
  switch (r.u8()) {
    case 0: return std::monostate();
    case 1: return r.u8() != 0;
    case 2: return r.svar();
    case 3: return r.f64();
    case 4: return std::string(r.str());
    case 5: {
      IntList l(r.count());
      for (int64_t& x : l) x = r.svar();
      return l;
    }
    case 6: {
      const uint8_t d = r.u8();
      if (d >= kNumDTypes) r.fail();
      return static_cast<DType>(d);
    }
    default: r.fail(); return std::monostate();
  }
}

}  // namespace

void put_meta(ByteWriter& w, const TensorMeta& m) {
  w.var(m.shape.size());
  for (int64_t d : m.shape) w.svar(d);
  w.u8(static_cast<uint8_t>(m.dtype));
  w.u8(static_cast<uint8_t>(m.device));
  w.u8(m.requires_grad);
}

TensorMeta get_meta(ByteReader& r) {
  TensorMeta m;
  const size_t rank = r.count();
  if (rank > static_cast<size_t>(kMaxDims)) r.fail();
  for (size_t i = 0; i < rank && r.ok(); ++i) m.shape.push_back(r.svar());
  const uint8_t dtype = r.u8(), device = r.u8();
  if (dtype >= kNumDTypes || device > 1) r.fail();
  m.dtype = static_cast<DType>(dtype);
  m.device = static_cast<Device>(device);
  m.requires_grad = r.u8() != 0;
  return m;
}

bool save_graph(const Graph& g, ByteWriter& w, std::string* why) {
  auto refuse = [&](const char* what) {
    if (why) *why = what;
    return false;
  };
  for (const Tensor& t : g.consts())
    if (t.device() != Device::CPU) return refuse("a graph constant in GPU memory");
  // Values renumbered without the ones dead-code elimination left behind (no node makes them):
  // inputs and constants where they were, each node's outputs together, in node order.
  const std::vector<Value>& values = g.values();
  std::vector<int> id(values.size(), -1), order;
  for (size_t v = 0; v < values.size(); ++v) {
    const Value& val = values[v];
    if (val.kind != ValueKind::Node) {
      id[v] = static_cast<int>(order.size());
      order.push_back(static_cast<int>(v));
      continue;
    }
    const bool made = val.index >= 0 && static_cast<size_t>(val.index) < g.nodes().size() &&
                      val.output < static_cast<int>(g.nodes()[val.index].outputs.size()) &&
                      g.nodes()[val.index].outputs[val.output] == static_cast<int>(v);
    if (!made || val.output != 0) continue;
    for (int o : g.nodes()[val.index].outputs) {
      id[o] = static_cast<int>(order.size());
      order.push_back(o);
    }
  }
  int last_first = -1;  // each node's outputs after the previous node's
  for (const Node& n : g.nodes()) {
    for (int v : n.inputs)
      if (id[v] < 0) return refuse("a node reads a value no node makes");
    if (n.outputs.empty()) continue;
    if (id[n.outputs[0]] < 0 || id[n.outputs[0]] < last_first) return refuse("nodes out of value order");
    last_first = id[n.outputs[0]];
  }
  for (int v : g.outputs())
    if (id[v] < 0) return refuse("an output no node makes");
  w.u8(kGraphFormat);
  w.var(order.size());
  for (int v : order) {
    const Value& val = values[v];
    w.u8(static_cast<uint8_t>(val.kind));
    put_meta(w, val.meta);
    if (val.kind == ValueKind::Input) {
      w.str(val.name);
      w.u8(val.parameter);
    } else if (val.kind == ValueKind::Const) {
      // (made while capturing, from what the guards fix: literals, folded numbers; the user's
      // tensors are graph inputs, read along their paths on every call)
      const Tensor t = g.consts()[val.index].contiguous();
      w.str(std::string_view(static_cast<const char*>(t.raw_data()), static_cast<size_t>(t.nbytes())));
    }
  }
  w.var(g.nodes().size());
  for (const Node& n : g.nodes()) {
    w.str(n.op->name);
    w.var(n.attrs.items().size());
    for (const auto& [k, v] : n.attrs.items()) {
      w.str(k);
      put_attr(w, v);
    }
    w.var(n.inputs.size());
    for (int v : n.inputs) w.var(static_cast<uint64_t>(id[v]));
    w.var(n.outputs.size());
    for (int v : n.outputs) w.var(static_cast<uint64_t>(id[v]));
    w.svar(n.line);
  }
  w.var(g.outputs().size());
  for (int v : g.outputs()) w.var(static_cast<uint64_t>(id[v]));
  w.var(g.write_backs().size());
  for (const Graph::WriteBack& b : g.write_backs()) {
    w.svar(b.output);
    w.svar(b.input);
  }
  return true;
}

bool load_graph(ByteReader& r, Graph* out, std::string* why) {
  auto fail = [&](std::string what) {
    if (why) *why = std::move(what);
    return false;
  };
  if (r.u8() != kGraphFormat) return fail("stale: another graph format");
  struct Val {
    ValueKind kind;
    TensorMeta meta;
    std::string name;
    bool parameter = false;
    Tensor data;  // Const
  };
  std::vector<Val> vals(r.count());
  for (Val& v : vals) {
    const uint8_t kind = r.u8();
    if (kind > static_cast<uint8_t>(ValueKind::Node)) r.fail();
    v.kind = static_cast<ValueKind>(kind);
    v.meta = get_meta(r);
    if (v.kind == ValueKind::Input) {
      v.name = std::string(r.str());
      v.parameter = r.u8() != 0;
    } else if (v.kind == ValueKind::Const && r.ok()) {
      std::string_view bytes = r.str();
      bool fits = r.ok() && v.meta.device == Device::CPU;
      try {  // (shape_nbytes raises for a size that does not fit: a flipped dim)
        for (int64_t d : v.meta.shape) fits = fits && d >= 0;
        fits = fits && static_cast<int64_t>(bytes.size()) == shape_nbytes(v.meta.shape, v.meta.dtype);
      } catch (const std::exception&) {
        fits = false;
      }
      if (!fits) return fail("malformed");
      v.data = Tensor::empty(v.meta.shape, v.meta.dtype);
      if (!bytes.empty()) std::memcpy(v.data.raw_data(), bytes.data(), bytes.size());
    }
    if (!r.ok()) return fail("malformed");
  }
  Graph g;
  size_t next = 0;  // the next value id to create
  auto inputs_before = [&](size_t id) {
    for (; next < id && next < vals.size(); ++next) {
      if (vals[next].kind == ValueKind::Input) g.add_input(vals[next].meta, vals[next].name, vals[next].parameter);
      else if (vals[next].kind == ValueKind::Const && meta_of(vals[next].data) == vals[next].meta) g.add_const(vals[next].data);
      else return false;
    }
    return next == id;
  };
  const size_t nn = r.count();
  g.reserve(vals.size(), nn);
  for (size_t k = 0; k < nn; ++k) {
    const std::string name(r.str());
    const OpDef* op = r.ok() ? find_op(name) : nullptr;
    if (!op) return fail(r.ok() ? "no op named " + name : "malformed");
    Attrs attrs;
    const size_t na = r.count();
    for (size_t i = 0; i < na && r.ok(); ++i) {
      const std::string key(r.str());
      attrs.set(key, get_attr(r));
    }
    std::vector<int> inputs(r.count());
    for (int& v : inputs) {
      v = static_cast<int>(r.var());
      if (v < 0 || static_cast<size_t>(v) >= vals.size()) r.fail();
    }
    std::vector<int> outputs(r.count());
    for (int& v : outputs) v = static_cast<int>(r.var());
    const int line = static_cast<int>(r.svar());
    if (!r.ok()) return fail("malformed");
    Metas metas;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const size_t id = static_cast<size_t>(outputs[i]);
      if (id >= vals.size() || vals[id].kind != ValueKind::Node || (i > 0 && outputs[i] != outputs[i - 1] + 1))
        return fail("malformed");
      metas.push_back(vals[id].meta);
    }
    if (!outputs.empty() && !inputs_before(static_cast<size_t>(outputs[0]))) return fail("malformed");
    for (int v : inputs)
      if (static_cast<size_t>(v) >= next) return fail("malformed");  // (a value used before it is made)
    // The metas read must be the ones the op infers (a graph planned with others would run kernels
    // at the wrong sizes): inference raises on inputs the op refuses.
    const bool arity = op->num_inputs >= 0 ? inputs.size() == static_cast<size_t>(op->num_inputs)
                                           : inputs.size() >= static_cast<size_t>(op->min_inputs);
    if (!arity) return fail("malformed: " + name + " with " + std::to_string(inputs.size()) + " inputs");
    if (op->infer && !op->data_dependent) {
      Metas in;
      for (int v : inputs) in.push_back(g.value(v).meta);
      Metas inferred;
      try {
        inferred = op->infer(in, attrs);
      } catch (const std::exception&) {
        return fail("malformed: " + name + " refuses its inputs");
      }
      bool same = inferred.size() == metas.size();
      for (size_t i = 0; same && i < metas.size(); ++i)
        same = inferred[i].shape == metas[i].shape && inferred[i].dtype == metas[i].dtype;
      if (!same) return fail("malformed: " + name + "'s outputs differ from its inference");
    }
    if (g.add_node(*op, inputs, std::move(attrs), metas, line) != outputs) return fail("malformed");
    next += outputs.size();
  }
  if (!inputs_before(vals.size())) return fail("malformed");
  std::vector<int> outs(r.count());
  for (int& v : outs) {
    v = static_cast<int>(r.var());
    if (static_cast<size_t>(v) >= vals.size()) r.fail();
  }
  std::vector<Graph::WriteBack> backs(r.count());
  for (Graph::WriteBack& b : backs) {
    b.output = static_cast<int>(r.svar());
    b.input = static_cast<int>(r.svar());
    if (b.output < 0 || static_cast<size_t>(b.output) >= outs.size() || b.input < 0 ||
        static_cast<size_t>(b.input) >= g.inputs().size())
      r.fail();
  }
  if (!r.ok()) return fail("malformed");
  g.set_outputs(std::move(outs));
  g.set_write_backs(std::move(backs));
  *out = std::move(g);
  return true;
}

}  // namespace pj::graph
