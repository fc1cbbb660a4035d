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

}  // namespace

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
  if (r.u8() != kPlanFormat) return fail("another plan format");
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
