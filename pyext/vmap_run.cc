// pijit._C.vmap_run(call, leaves, batched, B): pijit/vmap.py's batched evaluation. `call` is run
// once on symbolic tensors of one example's shapes while every op it makes is recorded into a
// graph (the recorder capture uses for pijit's own code); graph/batching.h turns that graph into
// the B-example graph, which is compiled and run on the leaves. Code that needs tensor data to go
// on (item(), printing, a data-dependent shape) raises pijit's capture-break error: vmap.py then
// runs the function once per example instead.
#include "pyext/vmap_run.h"

#include <unordered_map>

#include "graph/batching.h"
#include "graph/passes.h"
#include "graph/plan.h"
#include "graph/trace_context.h"
#include "pyext/tensor_object.h"

namespace pj::py {
namespace {

// Records the ops the traced function makes into a graph of one example.
struct Tracer : TraceContext {
  graph::Graph g;
  std::unordered_map<const TensorImpl*, int> consts;  // concrete tensors the function used
  int line = 0;

  int value_of(const Tensor& t) {
    if (t.is_symbolic()) return static_cast<int>(t.sym());
    auto it = consts.find(t.impl());
    if (it == consts.end()) it = consts.emplace(t.impl(), g.add_const(t)).first;
    return it->second;
  }

  Tensors record(const OpDef& op, const Tensors& in, const Attrs& attrs) override {
    refuse_untraceable(op);
    std::vector<int> ids;
    Metas metas;
    for (const Tensor& t : in) {
      metas.push_back(meta_of(t));
      ids.push_back(value_of(t));
    }
    Metas outs = infer_traced(op, metas, attrs);
    return symbolic_outputs(outs, g.add_node(op, ids, attrs, outs, line));
  }
};

PyObject* py_vmap_run(PyObject*, PyObject* args) {
  PyObject *call, *leaves, *batched;
  long long B;
  if (!PyArg_ParseTuple(args, "OO!O!L:vmap_run", &call, &PyList_Type, &leaves, &PyList_Type, &batched, &B)) return nullptr;
  PJ_PY_BEGIN
  const Py_ssize_t n = PyList_GET_SIZE(leaves);
  if (PyList_GET_SIZE(batched) != n) return fail(PyExc_ValueError, "vmap_run: one batched flag per leaf");
  Tracer tr;
  Tensors physical;
  std::vector<bool> flags;
  Ref syms(PyTuple_New(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* leaf = PyList_GET_ITEM(leaves, i);
    if (!is_tensor(leaf)) return fail(PyExc_TypeError, "vmap_run: leaves must be tensors");
    const Tensor& t = unwrap(leaf);
    const bool b = PyObject_IsTrue(PyList_GET_ITEM(batched, i));
    TensorMeta m = meta_of(t);
    if (b) m.shape.erase(m.shape.begin());
    const int id = tr.g.add_input(m, "vmap input " + std::to_string(i));
    PyTuple_SET_ITEM(syms.get(), i, wrap(Tensor::symbolic(m.shape, m.dtype, id)));
    physical.push_back(t);
    flags.push_back(b);
  }
  Ref result;
  {
    TraceScope scope(&tr);
    result = Ref(PyObject_Call(call, syms.get(), nullptr));
  }
  if (!result) return nullptr;
  Ref fast(PySequence_Fast(result.get(), "vmap: the traced function must return a sequence of tensors"));
  if (!fast) return nullptr;
  std::vector<int> outs;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast.get()); ++i) {
    PyObject* o = PySequence_Fast_GET_ITEM(fast.get(), i);
    if (!is_tensor(o)) return fail(PyExc_TypeError, "vmap: outputs must be tensors");
    outs.push_back(tr.value_of(unwrap(o)));
  }
  tr.g.set_outputs(outs);
  auto batched_graph = std::make_shared<graph::Graph>(graph::batch_graph(tr.g, flags, B));
  graph::run_passes(*batched_graph, graph::default_pipeline());
  graph::ExecPlan plan(batched_graph);
  Tensors res;
  {
    Py_BEGIN_ALLOW_THREADS
    try {
      res = plan.run(physical);
    } catch (...) {
      Py_BLOCK_THREADS
      throw;
    }
    Py_END_ALLOW_THREADS
  }
  Ref list(PyList_New(static_cast<Py_ssize_t>(res.size()))), flags_out(PyList_New(static_cast<Py_ssize_t>(res.size())));
  for (size_t i = 0; i < res.size(); ++i) {
    PyList_SET_ITEM(list.get(), i, wrap(res[i]));
    PyList_SET_ITEM(flags_out.get(), i, PyBool_FromLong(graph::batched_outputs()[i]));
  }
  return Py_BuildValue("(OOi)", list.get(), flags_out.get(), graph::unrolled_nodes());
  PJ_PY_END(nullptr)
}

PyMethodDef vmap_functions[] = {
    {"vmap_run", py_vmap_run, METH_VARARGS,
     "vmap_run(call, leaves, batched, B): ([outputs, batch dim first], [output depends on a batched leaf], ops run per example)"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool init_vmap_functions(PyObject* module) { return add_functions(module, vmap_functions); }

}  // namespace pj::py
