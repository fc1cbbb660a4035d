// FramePlan's persistent form (plan.h save_plan / load_plan), for the compile cache.
#include <string>

#include "codegen/plan.h"
#include "py/portable.h"

namespace pj::codegen {
namespace {

constexpr uint8_t kPlanFormat = 1;

bool put_return(ByteWriter& w, const ReturnPlan& p, std::string* why) {
  w.u8(static_cast<uint8_t>(p.kind));
  if (!py::put_object(w, p.obj, why)) return false;
  w.svar(p.index);
  w.svar(p.slot);
  w.var(p.items.size());
  for (const ReturnPlan& item : p.items)
    if (!put_return(w, item, why)) return false;
  return true;
}

bool get_return(ByteReader& r, ReturnPlan* p, std::string* why, int depth = 0) {
  const uint8_t kind = r.u8();
  if (kind > ReturnPlan::Null || depth > 256) {
    r.fail();
    return false;
  }
  p->kind = static_cast<ReturnPlan::Kind>(kind);
  if (!py::get_object(r, &p->obj, why)) return false;
  p->index = static_cast<int>(r.svar());
  p->slot = static_cast<int>(r.svar());
  p->items.resize(r.count());
  for (ReturnPlan& item : p->items)
    if (!get_return(r, &item, why, depth + 1)) return false;
  return r.ok();
}

bool return_fits(const ReturnPlan& p, const std::vector<char>& loadable, int outputs, size_t slots) {
  auto tuple_of = [](PyObject* o, size_t n) { return o && PyTuple_Check(o) && static_cast<size_t>(PyTuple_GET_SIZE(o)) == n; };
  bool ok = true;
  switch (p.kind) {
    case ReturnPlan::Const: ok = p.items.empty(); break;
    case ReturnPlan::Null: ok = p.items.empty(); break;
    case ReturnPlan::Output: ok = p.index >= 0 && p.index < outputs && (!p.obj || PyType_Check(p.obj)); break;
    case ReturnPlan::Source: ok = p.index >= 0 && static_cast<size_t>(p.index) < loadable.size() && loadable[p.index]; break;
    case ReturnPlan::Shared: ok = p.index >= 0 && static_cast<size_t>(p.index) < slots; break;
    case ReturnPlan::Tuple: ok = !p.obj || PyType_Check(p.obj); break;
    case ReturnPlan::List: break;
    case ReturnPlan::Dict: ok = tuple_of(p.obj, p.items.size()); break;
    case ReturnPlan::Method: ok = p.obj && PyUnicode_Check(p.obj) && p.items.size() == 1; break;
    case ReturnPlan::Object:
      ok = tuple_of(p.obj, 2) && PyType_Check(PyTuple_GET_ITEM(p.obj, 0)) &&
           tuple_of(PyTuple_GET_ITEM(p.obj, 1), p.items.size());
      break;
  }
  if (p.kind == ReturnPlan::Tuple || p.kind == ReturnPlan::List || p.kind == ReturnPlan::Dict || p.kind == ReturnPlan::Object)
    ok = ok && p.slot >= -1 && (p.slot < 0 || static_cast<size_t>(p.slot) < slots);
  for (const ReturnPlan& item : p.items) ok = ok && return_fits(item, loadable, outputs, slots);
  return ok;
}

}  // namespace

bool plan_fits(const FramePlan& p, const std::vector<char>& loadable, int outputs, int derefs) {
  const size_t slots = p.ret_shared.size();
  for (int n : p.input_nodes)
    if (n < 0 || static_cast<size_t>(n) >= loadable.size() || !loadable[n]) return false;
  for (const EffectPlan& e : p.effects) {
    for (const ReturnPlan& o : e.operands)
      if (!return_fits(o, loadable, outputs, slots)) return false;
    const size_t n = e.operands.size();
    const bool named = e.name.get() && PyUnicode_Check(e.name.get());
    bool ok = false;
    switch (e.kind) {
      case EffectPlan::Call: ok = n >= 1; break;
      case EffectPlan::CallMethod: ok = n >= 1 && named; break;
      case EffectPlan::StoreAttr: ok = n == 2 && named; break;
      case EffectPlan::StoreSubscr: ok = n == 3; break;
      case EffectPlan::StoreGlobal: ok = n == 1 && named; break;
      case EffectPlan::DeleteAttr: ok = n == 1 && named; break;
      case EffectPlan::DeleteSubscr: ok = n == 2; break;
      case EffectPlan::DeleteGlobal: ok = n == 0 && named; break;
      case EffectPlan::StoreDeref: ok = n == 1 && e.index >= 0 && e.index < derefs; break;
    }
    if (PyObject* kw = e.kwnames.get()) {
      ok = ok && (e.kind == EffectPlan::Call || e.kind == EffectPlan::CallMethod) && PyTuple_Check(kw) &&
           static_cast<size_t>(PyTuple_GET_SIZE(kw)) < n;
      for (Py_ssize_t i = 0; ok && i < PyTuple_GET_SIZE(kw); ++i) ok = PyUnicode_Check(PyTuple_GET_ITEM(kw, i));
    }
    if (!ok) return false;
  }
  return return_fits(p.ret, loadable, outputs, slots);
}

bool save_plan(const FramePlan& p, ByteWriter& w, std::string* why) {
  if (p.resumes) {
    if (why) *why = "a graph break";
    return false;
  }
  w.u8(kPlanFormat);
  w.svar(p.line);
  w.u8(p.calls_graph);
  w.var(p.input_nodes.size());
  for (int n : p.input_nodes) w.svar(n);
  w.var(p.effects.size());
  for (const EffectPlan& e : p.effects) {
    w.u8(static_cast<uint8_t>(e.kind));
    w.var(e.operands.size());
    for (const ReturnPlan& o : e.operands)
      if (!put_return(w, o, why)) return false;
    if (!py::put_object(w, e.name.get(), why) || !py::put_object(w, e.kwnames.get(), why)) return false;
    w.svar(e.index);
    w.svar(e.line);
  }
  if (!put_return(w, p.ret, why)) return false;
  w.var(p.ret_shared.size());
  for (char c : p.ret_shared) w.u8(static_cast<uint8_t>(c));
  return true;
}

bool load_plan(ByteReader& r, FramePlan* p, std::string* why) {
  auto fail = [&](const char* what) {
    if (why && (!r.ok() || why->empty())) *why = what;
    return false;
  };
  if (r.u8() != kPlanFormat) return fail("stale: another plan format");
  p->line = static_cast<int>(r.svar());
  p->calls_graph = r.u8() != 0;
  p->input_nodes.resize(r.count());
  for (int& n : p->input_nodes) n = static_cast<int>(r.svar());
  p->effects.resize(r.count());
  for (EffectPlan& e : p->effects) {
    const uint8_t kind = r.u8();
    if (kind > EffectPlan::StoreDeref) return fail("malformed");
    e.kind = static_cast<EffectPlan::Kind>(kind);
    e.operands.resize(r.count());
    for (ReturnPlan& o : e.operands)
      if (!get_return(r, &o, why)) return fail("malformed");
    PyObject *name, *kwnames;
    if (!py::get_object(r, &name, why)) return fail("malformed");
    e.name = py::Ref(name);
    if (!py::get_object(r, &kwnames, why)) return fail("malformed");
    e.kwnames = py::Ref(kwnames);
    e.index = static_cast<int>(r.svar());
    e.line = static_cast<int>(r.svar());
  }
  if (!get_return(r, &p->ret, why)) return fail("malformed");
  p->ret_shared.resize(r.count());
  for (char& c : p->ret_shared) c = static_cast<char>(r.u8());
  p->resumes = false;
  return r.ok() || fail("malformed");
}

}  // namespace pj::codegen
