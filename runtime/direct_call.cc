#include "py/pyport.h"  // first (Python.h)

#include "runtime/direct_call.h"

#include <algorithm>

#include "common/check.h"
#include "py/py_common.h"

namespace pj::runtime {
namespace {

using codegen::ReturnPlan;

// The plan's copy with Sources renumbered to positions in `nodes` (appended there), or false
// where the value is not one the direct call builds.
bool copy_plan(const ReturnPlan& p, std::vector<int>* nodes, ReturnPlan* out) {
  out->kind = p.kind;
  out->index = p.index;
  out->slot = p.slot;
  Py_XINCREF(p.obj);
  out->obj = p.obj;
  switch (p.kind) {
    case ReturnPlan::Const:
    case ReturnPlan::Output:
      return true;
    case ReturnPlan::Source: {
      auto it = std::find(nodes->begin(), nodes->end(), p.index);
      out->index = static_cast<int>(it - nodes->begin());
      if (it == nodes->end()) nodes->push_back(p.index);
      return true;
    }
    case ReturnPlan::Tuple:
    case ReturnPlan::List:
    case ReturnPlan::Dict:
      out->items.resize(p.items.size());
      for (size_t i = 0; i < p.items.size(); ++i)
        if (!copy_plan(p.items[i], nodes, &out->items[i])) return false;
      return true;
    default:  // Shared, Method, Object: the bytecode's slots and helpers
      return false;
  }
}

// Whether building the value stores a class on a graph output (library code's __class__ setter).
bool sets_class(const ReturnPlan& p) {
  if (p.kind == ReturnPlan::Output) return p.obj != nullptr;
  for (const ReturnPlan& item : p.items)
    if (sets_class(item)) return true;
  return false;
}

}  // namespace

std::shared_ptr<DirectCall> make_direct_call(const codegen::FramePlan& plan, const graph::Graph& g, PyObject* runner,
                                             guards::GuardTree& guards) {
  if (plan.resumes || !plan.effects.empty() || (plan.calls_graph && !runner) || g.has_impure_op()) return nullptr;
  auto d = std::make_shared<DirectCall>();
  d->nodes = plan.input_nodes;
  d->num_inputs = plan.input_nodes.size();
  if (!copy_plan(plan.ret, &d->nodes, &d->ret)) return nullptr;
  std::vector<int> sorted = d->nodes;  // (one input per node: each is handed out once)
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return nullptr;
  if (plan.calls_graph) {  // (else the value is built from the frame's values and constants alone)
    Py_INCREF(runner);
    d->runner = py::Ref(runner);
  }
  d->frameless = !sets_class(d->ret);
  d->one_output = d->runner && d->ret.kind == codegen::ReturnPlan::Output && d->ret.index == 0 && g.outputs().size() == 1;
  guards.keep_resolved(d->nodes);
  return d;
}

PyObject* direct_return_output(const ReturnPlan& p, PyObject* o) {
  static PyObject* class_name = PyUnicode_InternFromString("__class__");
  if (p.obj && PyObject_SetAttr(o, class_name, p.obj) < 0) {  // the class library code gave it
    Py_DECREF(o);
    return nullptr;
  }
  return o;
}

PyObject* direct_return(const ReturnPlan& p, PyObject* outputs, PyObject* const* objs) {
  switch (p.kind) {
    case ReturnPlan::Const:
      Py_INCREF(p.obj);
      return p.obj;
    case ReturnPlan::Source:
      Py_INCREF(objs[p.index]);
      return objs[p.index];
    case ReturnPlan::Output: {
      PyObject* o = PyTuple_GET_ITEM(outputs, p.index);
      Py_INCREF(o);
      return direct_return_output(p, o);
    }
    case ReturnPlan::Tuple:
    case ReturnPlan::List:
    case ReturnPlan::Dict: {
      const Py_ssize_t n = static_cast<Py_ssize_t>(p.items.size());
      py::Ref c(p.kind == ReturnPlan::List ? PyList_New(n) : p.kind == ReturnPlan::Tuple ? PyTuple_New(n) : PyDict_New());
      if (!c) return nullptr;
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* v = direct_return(p.items[i], outputs, objs);
        if (!v) return nullptr;
        if (p.kind == ReturnPlan::List) {
          PyList_SET_ITEM(c.get(), i, v);
        } else if (p.kind == ReturnPlan::Tuple) {
          PyTuple_SET_ITEM(c.get(), i, v);
        } else {  // BUILD_CONST_KEY_MAP: keys in order, a repeated key keeps its last value
          const int rc = PyDict_SetItem(c.get(), PyTuple_GET_ITEM(p.obj, i), v);
          Py_DECREF(v);
          if (rc < 0) return nullptr;
        }
      }
      if (p.kind == ReturnPlan::Tuple && p.obj) {  // a namedtuple: tuple.__new__(P, items), no user code
        static PyObject* tuple_new = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyTuple_Type), "__new__");
        return PyObject_CallFunctionObjArgs(tuple_new, p.obj, c.get(), nullptr);
      }
      return c.release();
    }
    default:
      PJ_CHECK(false) << "the direct call builds no return value of kind " << p.kind;
      return nullptr;
  }
}

}  // namespace pj::runtime
