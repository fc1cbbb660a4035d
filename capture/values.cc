#include "capture/values.h"

#include <cstdlib>
#include <cstdio>

namespace pj::capture {

void ValueTable::mark(PyObject* v, Origin o, Kind k) {
  Value& r = recs_[v];
  r.origin = o;
  r.kind = k;
}

int ValueTable::read_from_frame(PyObject* v, int node, Kind k) {
  auto seen = recs_.emplace(v, Value{});
  Value& r = seen.first->second;
  if (seen.second || r.origin != Origin::Frame || r.node < 0) {
    r.origin = Origin::Frame;
    r.kind = k;
    r.node = node;
  }
  return r.node;
}

void ValueTable::read_constant(PyObject* v, int node) {
  Value& r = recs_[v];
  r.origin = Origin::Frame;
  r.kind = Kind::Constant;
  r.const_nodes.push_back(node);
}

void ValueTable::mirror(PyObject* copy, int original_node, Kind k) {
  mark(copy, Origin::Mirror, k);
  recs_[copy].node = original_node;
}

void ValueTable::created_object(PyObject* obj, int class_node) {
  mark(obj, Origin::Created, Kind::Object);
  recs_[obj].class_node = class_node;
}

void ValueTable::created_generator(PyObject* g, std::shared_ptr<SimFrame> frame) {
  mark(g, Origin::Created, Kind::Generator);
  recs_[g].frame = std::move(frame);
  generators_.push_back(g);
}

void ValueTable::created_method(PyObject* bound, PyObject* owner, PyObject* name, bool replayed) {
  mark(bound, Origin::Created, Kind::Method);
  Value& r = recs_[bound];
  r.owner = owner;
  r.name = name;
  r.replayed = replayed;
}

void ValueTable::created_function(PyObject* fn, int globals_node) {
  mark(fn, Origin::Created, Kind::Function);
  recs_[fn].globals_node = globals_node;
}

void ValueTable::bind_symbol(PyObject* sym, PyObject* real, int node) {
  Value& s = recs_[sym];
  s.origin = Origin::Created;  // a graph value: a new object on every call
  s.kind = Kind::Symbol;
  s.real = real;
  s.node = node;
  read_from_frame(real, node, Kind::Tensor);
  recs_[real].sym = sym;
  symbols_.push_back(sym);
}

PyObject* ValueTable::symbol_of(PyObject* real) const {
  const Value* r = find(real);
  return r && r->kind == Kind::Tensor ? r->sym : nullptr;
}

const Value* ValueTable::frame_tensor(PyObject* sym) const {
  const Value* r = find(sym);
  return r && r->kind == Kind::Symbol ? r : nullptr;
}

PyObject* ValueTable::copy_of(PyObject* v) const {
  const Value* r = find(v);
  return r ? r->copy : nullptr;
}

void ValueTable::pend(PyObject* target, PendingWrite w) {
  if (!target) {
    std::fprintf(stderr, "pijit: internal error: a pending write without a target (%s)\n", w.what.c_str());
    std::abort();
  }
  all_writes_.push_back(w);
  recs_[target].writes.push_back(std::move(w));
}

}  // namespace pj::capture
