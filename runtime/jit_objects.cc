// The Python face of capture: pijit._C.JitFunction (what pijit.jit returns), the graph runner
// called by rewritten code, jit_stats, stress mode and the jit configuration.
#include "py/pyport.h"  // first (Python.h)

#include <structmember.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "runtime/eval_frame.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "capture/jit_api.h"
#include "common/files.h"
#include "common/stack.h"
#include "common/trace.h"
#include "runtime/debug_tools.h"
#include "py/py_common.h"
#include "pyext/tensor_object.h"
#include "graph/autodiff.h"
#include "graph/passes.h"
#include "graph/plan.h"
#include "graph/tape.h"
#include "guards/guard_tree.h"
#include "kernels/fused.h"

namespace pj::runtime {
namespace {

using py::Ref;

}  // namespace

// ---- graph runner -------------------------------------------------------------------------------

// A launch while a gradient tape records is one node on the tape (graph/tape.h). The captured
// graph is differentiated with respect to its inputs (floating and integer ones, as the tape's
// rule) and the result split in two, compiled on the first such launch: `train` is the forward
// returning also the values the backward reads, `backward` maps those values and one seed per
// output to the gradients. Only graphs without impure ops run under a tape (eval_frame.cc:
// tape_safe), so running `train` in place of the plain plan computes the same outputs.
// (Not file-local: ShapePlans, which code_state.h names, holds one.)
struct TapeBackward {
  std::shared_ptr<const graph::Graph> fwd;
  std::vector<int> wrt;  // input positions differentiated
  std::shared_ptr<graph::ExecPlan> train, backward;
  std::string error;     // differentiate() refused: raised if a gradient has to flow through,
  ErrorKind error_kind = ErrorKind::Type;  // as the eager tape raises it (a gradient rule's ValueError stays one)
  // Inputs whose gradient has no rule on some path (a OneHot's on/off values): refused only when
  // the tape needs their gradient, so they do not take the other inputs' gradients down too.
  std::vector<int> refused;
  bool built = false;

  void build() {
    if (built) return;
    built = true;
    const graph::Graph& f = *fwd;
    for (size_t k = 0; k < f.inputs().size(); ++k)
      if (f.value(f.inputs()[k]).meta.dtype != DType::Bool) wrt.push_back(static_cast<int>(k));
    graph::Graph d;
    auto note = [&](const Error& e) {
      // the eager tape's words and kind: it names the op, not a line of the graph
      error = e.what();
      error_kind = e.kind();
      const size_t at = error.find(" (line ");
      if (at != std::string::npos) error.erase(at, error.find(')', at) + 1 - at);
    };
    try {
      d = graph::differentiate(f, wrt, /*integers=*/true);
    } catch (const Error& e) {
      note(e);
      std::vector<int> ok;  // (compile time only, once per graph)
      for (int k : wrt) {
        try {
          graph::differentiate(f, {k}, /*integers=*/true);
          ok.push_back(k);
        } catch (const Error&) {
          refused.push_back(k);
        }
      }
      wrt = ok;
      if (wrt.empty()) return;
      try {
        d = graph::differentiate(f, wrt, /*integers=*/true);
      } catch (const Error& e2) {
        note(e2);
        refused.insert(refused.end(), wrt.begin(), wrt.end());
        wrt.clear();
        return;
      }
    }
    const int nf = static_cast<int>(f.values().size());
    const size_t nodes = f.nodes().size(), nout = f.outputs().size();
    // forward values the backward reads (constants stay constants)
    std::vector<int> saved, saved_at(d.values().size(), -1);
    auto need = [&](int v) {
      if (v < nf && d.value(v).kind != graph::ValueKind::Const && saved_at[v] < 0) {
        saved_at[v] = static_cast<int>(saved.size());
        saved.push_back(v);
      }
    };
    for (size_t i = nodes; i < d.nodes().size(); ++i)
      for (int v : d.nodes()[i].inputs) need(v);
    std::vector<int> grads(d.outputs().begin() + static_cast<std::ptrdiff_t>(nout), d.outputs().end());
    for (int v : grads) need(v);
    auto t = std::make_shared<graph::Graph>(f);
    std::vector<int> touts = f.outputs();
    touts.insert(touts.end(), saved.begin(), saved.end());
    t->set_outputs(touts);
    graph::run_passes(*t, graph::default_pipeline());
    // the backward graph: saved values and seeds in, gradients out
    auto b = std::make_shared<graph::Graph>();
    std::vector<int> map(d.values().size(), -1);
    for (int v : saved) map[v] = b->add_input(d.value(v).meta, "saved %" + std::to_string(v));
    for (size_t k = 0; k < d.inputs().size(); ++k) {
      const int v = d.inputs()[k];
      if (v >= nf) map[v] = b->add_input(d.value(v).meta, d.value(v).name);  // the seeds
    }
    auto get = [&](int v) {
      if (map[v] < 0) {
        const graph::Value& val = d.value(v);
        PJ_CHECK(val.kind == graph::ValueKind::Const) << "tape backward: value %" << v << " unmapped";
        map[v] = b->add_const(d.consts()[val.index]);
      }
      return map[v];
    };
    for (size_t i = nodes; i < d.nodes().size(); ++i) {
      const graph::Node& n = d.nodes()[i];
      std::vector<int> in;
      Metas outs;
      for (int v : n.inputs) in.push_back(get(v));
      for (int o : n.outputs) outs.push_back(d.value(o).meta);
      std::vector<int> o = b->add_node(*n.op, in, n.attrs, outs, n.line);
      for (size_t k = 0; k < o.size(); ++k) map[n.outputs[k]] = o[k];
    }
    std::vector<int> bouts;
    for (int v : grads) bouts.push_back(get(v));
    b->set_outputs(bouts);
    graph::run_passes(*b, graph::default_pipeline());
    train = std::make_shared<graph::ExecPlan>(std::move(t));
    backward = std::make_shared<graph::ExecPlan>(std::move(b));
  }
};

namespace {

struct GraphRunner {
  PyObject_HEAD
  std::shared_ptr<graph::ExecPlan> plan;  // of the optimised graph (graph/passes.h)
  std::string* name;
  std::shared_ptr<TapeBackward> backward;  // of the captured graph
  bool fault;  // PIJIT_TEST_ONLY_WRONG_RESULTS: its first floating output comes back off by one
  std::shared_ptr<ShapePlans> shapes;  // dynamic shapes: plan and backward per concrete sizes
  std::vector<int8_t>* scalars;  // per input: the DType a Python number fed there becomes (lifted
                                 // scalars), -1 for a tensor input; null when no input is one
  Tensors* spare_in;  // the inputs' vector, kept for the next call (a call made while one runs makes its own)
  bool spare_busy;
  // Called once, after the first launch that returns (whichever plan it ran: a tape's too), with
  // the machine code of the fused kernels it ran (the compile cache keeps it); null after that.
  RunnerFirstRun* first_run;
};

}  // namespace

std::shared_ptr<graph::ExecPlan> compile_plan(std::shared_ptr<graph::Graph> g, const std::string& name,
                                              const GraphDebug& debug,
                                              std::shared_ptr<const graph::Graph> optimized = nullptr);

// Dynamic shapes: the captured graph (traced with the sizes of the call that captured it) planned
// anew for each concrete sizes of its symbolic input dims: shape inference, the passes and the
// plan run once per new sizes (prepare), never on a hit. Bounded: the least recently used sizes go.
struct ShapePlans {
  struct Instance {
    std::shared_ptr<graph::ExecPlan> plan;
    std::shared_ptr<TapeBackward> backward;
    std::string error;  // an op rejects these sizes: every call with them runs eagerly
    uint64_t used = 0;
  };
  static constexpr size_t kMaxPlans = 16;
  std::shared_ptr<graph::Graph> captured;
  std::vector<graph::SymbolicDim> dims;
  std::vector<graph::SweepPlan> sweeps;  // gradients inside the graph: emitted again per sizes
  std::vector<graph::SymbolicAttr> attrs;  // int attributes that are symbols (reshape((n, -1)))

  // A symbol's value in this call: a size of a tensor input, or a Python int input's value.
  static int64_t value_of(const Tensors& in, const graph::SymbolicDim& d) {
    if (d.dim >= 0) return in[d.input].dim(d.dim);
    const Tensor& t = in[d.input];
    return t.dtype() == DType::Int64 ? *static_cast<const int64_t*>(t.raw_data()) : 0;
  }
  std::string name;
  absl::flat_hash_map<std::vector<int64_t>, Instance> plans;
  Instance* last = nullptr;  // the last call's, and its sizes (valid until the map changes)
  std::vector<int64_t> last_key;
  uint64_t clock = 0;
  ShapePlanStats stats;

  // The plan for the inputs' sizes. A launch holds the GIL and calls no Python, so the instance
  // returned stays in the cache until it returns.
  Instance& get(const Tensors& in) {
    // The sizes of the last call again (a loop over one batch size): no key built, no hashing.
    if (last) {
      bool same = true;
      for (size_t k = 0; k < dims.size() && same; ++k) same = value_of(in, dims[k]) == last_key[k];
      if (same) {
        ++stats.hits;
        last->used = ++clock;
        return *last;
      }
    }
    std::vector<int64_t> key;
    key.reserve(dims.size());
    for (const graph::SymbolicDim& d : dims) key.push_back(value_of(in, d));
    auto it = plans.find(key);
    if (it != plans.end()) {
      ++stats.hits;
      it->second.used = ++clock;
      return remember(it->first, it->second);
    }
    ++stats.misses;
    if (plans.size() >= kMaxPlans) {
      auto lru = plans.begin();
      for (auto j = plans.begin(); j != plans.end(); ++j)
        if (j->second.used < lru->second.used) lru = j;
      plans.erase(lru);
      ++stats.evictions;
    }
    auto added = plans.try_emplace(std::move(key)).first;  // (may move every instance: `last` is re-set)
    added->second.used = ++clock;
    prepare(in, &added->second);
    return remember(added->first, added->second);
  }

  Instance& remember(const std::vector<int64_t>& key, Instance& inst) {
    last_key = key;
    last = &inst;
    return inst;
  }

  void prepare(const Tensors& in, Instance* inst) {
    const auto t0 = std::chrono::steady_clock::now();
    trace::Span span("compile", "plan for new sizes: " + name);
    Metas metas;
    for (int v : captured->inputs()) metas.push_back(captured->value(v).meta);
    std::string sizes;
    std::map<int, int64_t> values;  // symbol -> this call's value
    for (const graph::SymbolicDim& d : dims) {
      const int64_t v = value_of(in, d);
      if (d.dim >= 0) metas[d.input].shape[d.dim] = v;
      values[d.symbol] = v;
      sizes += (sizes.empty() ? "s" : ", s") + std::to_string(d.symbol) + "=" + std::to_string(v);
    }
    try {
      auto g = std::make_shared<graph::Graph>(graph::with_input_metas(*captured, metas, sweeps, attrs, values));
      inst->plan = compile_plan(g, name, GraphDebug());
      inst->backward = std::make_shared<TapeBackward>();
      inst->backward->fwd = g;
      ++stats.plans;
      log_text("dynamic", "planned the graph of " + name + " for " + sizes);
    } catch (const std::exception& e) {
      inst->error = e.what();
      ++stats.failures;
      log_text("dynamic", "the graph of " + name + " rejects " + sizes + " (" + inst->error + "): those calls run eagerly");
    }
    stats.prepare_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  }
};

std::shared_ptr<ShapePlans> runner_shapes(PyObject* runner);
ShapePlanStats shape_plan_stats(const ShapePlans& s) { return s.stats; }

namespace {

// PIJIT_TEST_ONLY_WRONG_RESULTS: a wrong capture planted on purpose (bisect's tests find it).
void plant_fault(Tensors& out) {
  for (Tensor& t : out)
    if (is_floating(t.dtype())) {
      t = call_op1("add", {t, Tensor::scalar(1.0, t.dtype())});
      return;
    }
}

void runner_dealloc(PyObject* self) {
  auto* r = reinterpret_cast<GraphRunner*>(self);
  r->plan.~shared_ptr();
  r->backward.~shared_ptr();
  r->shapes.~shared_ptr();
  delete r->name;
  delete r->scalars;
  delete r->spare_in;
  delete r->first_run;
  Py_TYPE(self)->tp_free(self);
}

PyObject* runner_call(PyObject* self, PyObject* args, PyObject*) {  // (rewritten code's call)
  PyObject* r = run_graph(self, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args));
  if (!r) graph_failed_in_rewritten_code();
  return r;
}

}  // namespace

namespace {
// The outputs as run_graph gives them: a tuple, or (one: run_graph1) the one output itself.
PyObject* wrap_outputs(const Tensors& out, bool one) {
  if (!one) return py::wrap_all(out);
  PJ_CHECK(out.size() == 1) << "run_graph1: the graph has " << out.size() << " outputs";
  return py::wrap(out[0]);
}

PyObject* launch_graph(PyObject* self, PyObject* const* args, Py_ssize_t n, bool one);

PyObject* run_graph_as(PyObject* self, PyObject* const* args, Py_ssize_t n, bool one) {
  auto* r = reinterpret_cast<GraphRunner*>(self);
  if (__builtin_expect(r->first_run == nullptr, 1)) return launch_graph(self, args, n, one);
  std::unique_ptr<RunnerFirstRun> report(r->first_run);
  r->first_run = nullptr;  // (a launch inside this one is not the first)
  std::vector<FusedCode> ran;
  PyObject* out;
  {
    FusedCodeRecorder codes;
    out = launch_graph(self, args, n, one);
    if (out) ran = codes.codes();
  }
  if (!out) {  // a launch that raised ran some kernels only: the next one reports
    if (!r->first_run) r->first_run = report.release();
    return out;
  }
  try {
    (*report)(ran);
  } catch (...) {  // (what the cache keeps is a bonus: never the call's failure)
  }
  return out;
}

PyObject* launch_graph(PyObject* self, PyObject* const* args, Py_ssize_t n, bool one) {
  auto* r = reinterpret_cast<GraphRunner*>(self);
  PJ_PY_BEGIN
  // (the runner's own vector when no call of it is under way: no allocation per call; emptied
  // on every exit, so it holds no tensor between calls)
  Tensors local;
  const bool spare = !r->spare_busy;
  Tensors& in = spare ? *r->spare_in : local;
  struct GiveBack {
    GraphRunner* r;
    Tensors& in;
    bool spare;
    ~GiveBack() {
      in.clear();
      if (spare) r->spare_busy = false;
    }
  } give_back{r, in, spare};
  if (spare) r->spare_busy = true;
  in.reserve(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* a = args[i];
    if (py::is_tensor(a)) {
      in.push_back(py::unwrap(a));
    } else if (r->scalars && static_cast<size_t>(i) < r->scalars->size() && (*r->scalars)[i] >= 0 &&
               (PyFloat_CheckExact(a) || PyLong_CheckExact(a))) {  // (the guard checked its type)
      in.push_back(py::number_operand(a, static_cast<DType>((*r->scalars)[i])));
    } else {
      return py::fail(PyExc_TypeError, "graph input " + std::to_string(i) + " is not a Tensor");
    }
  }
  graph::ExecPlan* plan = r->plan.get();
  // (copied only where a tape keeps it, right after tape_active(): nothing between get() and the
  // copy can evict the sizes' instance this may point into)
  const std::shared_ptr<TapeBackward>* backward = &r->backward;
  if (r->shapes) {
    ShapePlans::Instance& inst = r->shapes->get(in);
    if (!inst.error.empty()) {  // nothing ran: the call runs eagerly and meets the error there
      note_graph_failure(true);
      PJ_THROW(Value) << inst.error;
    }
    plan = inst.plan.get();
    backward = &inst.backward;
  }
  try {
    if (r->fault) {
      Tensors out = plan->run(in);
      plant_fault(out);
      return wrap_outputs(out, one);
    }
    if (!tape_active()) return wrap_outputs(plan->run(in), one);
    const std::shared_ptr<TapeBackward> bw = *backward;
    if (tape_depth() > 1) {
      // A gradient of a gradient: the node's backward would run as one compiled plan, which the
      // outer tape cannot differentiate (its gradient would come out zero). Nothing ran yet: the
      // call runs eagerly, each op recorded on every tape.
      note_graph_failure(true);
      PJ_THROW(Value) << "a captured graph under nested gradient tapes runs eagerly (the graph's "
                         "backward is not differentiable again)";
    }
    // One node on the tape: the forward that keeps what the backward reads, then the node.
    bw->build();
    Tensors out, saved;
    if (bw->train) {
      Tensors all = bw->train->run(in);
      const size_t nout = bw->fwd->outputs().size();
      out.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(nout));
      saved.assign(all.begin() + static_cast<std::ptrdiff_t>(nout), all.end());
    } else {
      out = plan->run(in);
    }
    // A saved value that is an input (a Parameter the backward reads) is taken from the tape at
    // backward time: the tape copies it before an in-place write (an optimizer's update written
    // back after this graph), where this closure's handle would see the new bytes. Another view
    // of an input's storage is copied now.
    std::vector<int> saved_input(saved.size(), -1);
    for (size_t j = 0; j < saved.size(); ++j)
      for (size_t k = 0; k < in.size() && saved_input[j] < 0; ++k) {
        if (!saved[j].same_storage(in[k])) continue;
        if (saved[j].offset() == in[k].offset() && saved[j].shape() == in[k].shape() &&
            saved[j].strides() == in[k].strides() && saved[j].dtype() == in[k].dtype()) {
          saved_input[j] = static_cast<int>(k);
          saved[j] = Tensor();
        } else {
          saved[j] = saved[j].clone();
          break;
        }
      }
    tape_record_custom(in, out, [bw, saved, saved_input](GradContext& c, const GradArgs& a) {
      if (!bw->train) throw Error(bw->error_kind, bw->error);
      for (int k : bw->refused)
        if (a.needs[k]) throw Error(bw->error_kind, bw->error);
      auto& ec = dynamic_cast<EagerGradContext&>(c);
      Tensors args = saved;
      for (size_t j = 0; j < args.size(); ++j)
        if (saved_input[j] >= 0) args[j] = ec.tensor(a.in[saved_input[j]]);
      for (size_t k = 0; k < a.out.size(); ++k)
        args.push_back(ec.tensor(a.dout[k] != kNoGrad ? a.dout[k] : c.zeros(c.meta(a.out[k]))));
      Tensors res = bw->backward->run(args);
      std::vector<int> din(a.in.size(), kNoGrad);
      for (size_t j = 0; j < bw->wrt.size(); ++j)
        if (a.needs[bw->wrt[j]]) din[bw->wrt[j]] = ec.add(res[j]);
      return din;
    }, "the graph of " + *r->name);
    return wrap_outputs(out, one);
  } catch (...) {
    // (a Parameter written in place is not a reason to stay final: the plan writes one only
    // where neither its node nor any after it can raise, so a failure comes before the write)
    note_graph_failure(!plan->graph().has_impure_op());
    throw;
  }
  PJ_PY_END(nullptr)
}
}  // namespace

PyObject* run_graph(PyObject* self, PyObject* const* args, Py_ssize_t n) { return run_graph_as(self, args, n, false); }
PyObject* run_graph1(PyObject* self, PyObject* const* args, Py_ssize_t n) { return run_graph_as(self, args, n, true); }

namespace {

PyObject* runner_repr(PyObject* self) {
  return PyUnicode_FromFormat("<pijit graph of %s>", reinterpret_cast<GraphRunner*>(self)->name->c_str());
}

PyTypeObject GraphRunnerType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "pijit._C.GraphRunner";
  t.tp_basicsize = sizeof(GraphRunner);
  t.tp_dealloc = runner_dealloc;
  t.tp_call = runner_call;
  t.tp_repr = runner_repr;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "Runs one captured graph: runner(*inputs) -> tuple of outputs.";
  return t;
}();

// ---- pijit.jit objects ----------------------------------------------------------------------------

struct JitFunction {
  PyObject_HEAD
  PyObject* target;  // function, method, or Cell
  PyObject* dict;    // __dict__ (functools.wraps writes __name__, __doc__, __wrapped__)
  JitOptions* options;
  PyObject* weakrefs;  // like a function, weakly referenceable (guards hold callees weakly)
  PyObject* check_args;  // input_signature: called with the positional arguments, raises on a
                         // mismatch (pijit/jit.py); nullptr without a signature
  int verify;            // verify mode: every verify-th call runs captured and plain (0: off)
  int64_t calls;         // ... calls counted while it is on
  py::VectorcallFn vectorcall;  // jit_vectorcall (3.8+: calls made with no argument tuple)
};

// The code object a call of `target` is expected to enter first (new reference), or nullptr
// with TypeError naming what was given.
PyObject* code_of(PyObject* target) {
  if (PyFunction_Check(target)) {  // (first: every jitted call of a function asks)
    PyObject* co = PyFunction_GET_CODE(target);
    Py_INCREF(co);
    return co;
  }
  if (PyCode_Check(target)) {  // a code object itself (pijit.dump reads entries by code)
    Py_INCREF(target);
    return target;
  }
  if (PyObject* inner = jit_target(target)) return code_of(inner);
  if (PyMethod_Check(target)) return code_of(PyMethod_GET_FUNCTION(target));
  // functools.partial(f, ...): calling it enters f's frame with the bound arguments in place.
  if (std::strcmp(Py_TYPE(target)->tp_name, "functools.partial") == 0) {
    Ref func(PyObject_GetAttrString(target, "func"));
    return func ? code_of(func.get()) : nullptr;
  }
  // A Cell: its class's construct. Runs on every jitted call: the type's method cache answers it
  // without allocating, where getattr would build a bound method.
  static PyObject* construct_name = PyUnicode_InternFromString("construct");
  if (PyObject* construct = _PyType_Lookup(Py_TYPE(target), construct_name)) return code_of(construct);
  PyErr_Format(PyExc_TypeError, "pijit.jit expects a function, a method or a Cell, got %s", Py_TYPE(target)->tp_name);
  return nullptr;
}

void jit_dealloc(PyObject* self) {
  auto* j = reinterpret_cast<JitFunction*>(self);
  PyObject_GC_UnTrack(self);
  if (j->weakrefs) PyObject_ClearWeakRefs(self);
  Py_XDECREF(j->target);
  Py_XDECREF(j->dict);
  Py_XDECREF(j->check_args);
  delete j->options;
  Py_TYPE(self)->tp_free(self);
}

int jit_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* j = reinterpret_cast<JitFunction*>(self);
  Py_VISIT(j->target);
  Py_VISIT(j->dict);
  Py_VISIT(j->check_args);
  return 0;
}

int jit_clear(PyObject* self) {
  auto* j = reinterpret_cast<JitFunction*>(self);
  Py_CLEAR(j->target);
  Py_CLEAR(j->dict);
  Py_CLEAR(j->check_args);
  return 0;
}

// The most an int option of jit() / set_jit_config() takes: past it a limit is no limit, and every
// value below fits the int the option is kept in (a larger one would wrap around).
constexpr long long kMaxIntOption = 1LL << 30;

// An int option of `who` (jit or set_jit_config): None keeps the default; a bool or a non-int is
// a TypeError and a value outside [min, kMaxIntOption] a ValueError, both naming the option.
int read_int_option(PyObject* v, const char* who, const char* name, int min, int* out) {
  if (!v || v == Py_None) return 0;
  if (PyBool_Check(v) || !PyLong_Check(v)) {
    PyErr_Format(PyExc_TypeError, "For '%s', the type of '%s' should be int, but got %s.", who, name,
                 Py_TYPE(v)->tp_name);
    return -1;
  }
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && PyErr_Occurred()) return -1;
  if (overflow || x < min || x > kMaxIntOption) {
    PyErr_Format(PyExc_ValueError, "For '%s', the '%s' should be in [%d, %lld], but got %R.", who, name, min,
                 kMaxIntOption, v);
    return -1;
  }
  *out = static_cast<int>(x);
  return 0;
}

PyObject* jit_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames);

PyObject* jit_new(PyTypeObject* type, PyObject* args, PyObject* kw) {
  static const char* kwlist[] = {"target", "fullgraph", "recompile_limit", "inline_depth", "dynamic",
                                 "check_args", "signature_dims", "verify", nullptr};
  PyObject *target, *limit = nullptr, *depth = nullptr, *dynamic = nullptr, *check = nullptr, *dims = nullptr;
  PyObject* verify_arg = nullptr;
  int fullgraph = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|pOOOOOO:JitFunction", const_cast<char**>(kwlist), &target, &fullgraph,
                                   &limit, &depth, &dynamic, &check, &dims, &verify_arg))
    return nullptr;
  int verify = 0;
  if (read_int_option(verify_arg, "jit", "verify", 0, &verify) < 0) return nullptr;
  if (check == Py_None) check = nullptr;
  if (check && !PyCallable_Check(check)) return py::fail(PyExc_TypeError, "JitFunction: check_args must be callable");
  std::vector<std::string> signature_dims;
  if (dims && dims != Py_None) {
    Ref seq(PySequence_Fast(dims, "JitFunction: signature_dims must be a sequence of str"));
    if (!seq) return nullptr;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq.get()); ++i) {
      PyObject* d = PySequence_Fast_GET_ITEM(seq.get(), i);
      if (!PyUnicode_Check(d)) return py::fail(PyExc_TypeError, "JitFunction: signature_dims must be a sequence of str");
      signature_dims.push_back(py::text(d));  // (compared with guard paths, which are py::text too)
    }
  }
  int dyn = -1;  // None: automatic
  if (dynamic && dynamic != Py_None) {
    dyn = PyBool_Check(dynamic) ? -2 : static_cast<int>(PyLong_Check(dynamic) ? PyLong_AsLong(dynamic) : -2);
    if (dyn != 0 && dyn != 1) {
      PyErr_Clear();
      return py::fail(PyExc_ValueError, "JitFunction: dynamic must be None (automatic), 0 or 1");
    }
  }
  Ref co(code_of(target));
  if (!co) return nullptr;
  auto* opt = new JitOptions(jit_config().defaults);
  opt->fullgraph = fullgraph;
  opt->dynamic = dyn;
  opt->signature_dims = std::move(signature_dims);
  if (read_int_option(limit, "jit", "recompile_limit", 1, &opt->recompile_limit) < 0 ||
      read_int_option(depth, "jit", "inline_depth", 0, &opt->capture.inline_depth) < 0) {
    delete opt;
    return nullptr;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) {
    delete opt;
    return nullptr;
  }
  auto* j = reinterpret_cast<JitFunction*>(self);
  Py_INCREF(target);
  j->target = target;
  j->dict = PyDict_New();
  j->options = opt;
  Py_XINCREF(check);
  j->check_args = check;
  j->verify = verify;
  j->calls = 0;
  j->vectorcall = jit_vectorcall;
  return self;
}

// pijit.nn.cell's Cell.__call__ (looked up once; nullptr when it cannot be).
PyObject* cell_dunder_call() {
  static PyObject* f = [] {
    Ref mod(PyImport_ImportModule("pijit.nn.cell"));
    Ref cell(mod ? PyObject_GetAttrString(mod.get(), "Cell") : nullptr);
    PyObject* call = cell ? PyObject_GetAttrString(cell.get(), "__call__") : nullptr;
    if (!call) PyErr_Clear();
    return call;  // kept for the process
  }();
  return f;
}

// The construct function a call of Cell `cell` would run, when Cell.__call__ would do nothing
// else: its class's __call__ is Cell's, the context is PyNative, no input cast is set, no gradient
// tape records and construct is a plain function of the class. Then pijit.jit(cell)(x) calls it
// directly, sparing Cell.__call__'s Python frame (the same decisions, made in C: keep in step
// with pijit/nn/cell.py). Borrowed; nullptr: call the cell.
PyObject* direct_construct(PyObject* cell) {
  static PyObject* call_name = PyUnicode_InternFromString("__call__");
  static PyObject* construct_name = PyUnicode_InternFromString("construct");
  static PyObject* cast_name = PyUnicode_InternFromString("_cast_inputs_to");
  PyTypeObject* tp = Py_TYPE(cell);
  PyObject* call = cell_dunder_call();
  if (!call || PyFunction_Check(cell) || _PyType_Lookup(tp, call_name) != call) return nullptr;
  if (guards::context_mode() != 1 || tape_active()) return nullptr;
  PyObject* cast = py::own_attr(cell, cast_name);
  if ((cast && cast != Py_None) || py::own_attr(cell, construct_name)) return nullptr;
  PyObject* construct = _PyType_Lookup(tp, construct_name);
  return construct && PyFunction_Check(construct) ? construct : nullptr;
}

PyObject* jit_call_unverified(PyObject* self, PyObject* args, PyObject* kw) {
  auto* j = reinterpret_cast<JitFunction*>(self);
  if (j->check_args) {
    Ref ok(PyObject_CallFunctionObjArgs(j->check_args, args, nullptr));
    if (!ok) return nullptr;
  }
  if (PyObject* construct = direct_construct(j->target)) {
    Ref full(PyTuple_New(PyTuple_GET_SIZE(args) + 1));
    if (!full) return nullptr;
    Py_INCREF(j->target);
    PyTuple_SET_ITEM(full.get(), 0, j->target);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i) {
      Py_INCREF(PyTuple_GET_ITEM(args, i));
      PyTuple_SET_ITEM(full.get(), i + 1, PyTuple_GET_ITEM(args, i));
    }
    return call_jitted(reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(construct)), *j->options, construct,
                       full.get(), kw);
  }
  Ref co(code_of(j->target));
  if (!co) return nullptr;
  return call_jitted(reinterpret_cast<PyCodeObject*>(co.get()), *j->options, j->target, args, kw);
}

// Verify mode's call (pijit/_verify.py): captured, then plain, compared.
__attribute__((noinline, cold)) PyObject* jit_call_verified(PyObject* self, PyObject* args, PyObject* kw) {
  auto* j = reinterpret_cast<JitFunction*>(self);
  static PyObject* verify_call = nullptr;  // kept for the process once found (an import that failed is tried again)
  if (!verify_call) {
    Ref mod(PyImport_ImportModule("pijit._verify"));
    verify_call = mod ? PyObject_GetAttrString(mod.get(), "verify_call") : nullptr;
  }
  if (!verify_call) return nullptr;
  return PyObject_CallFunction(verify_call, "OOOOL", self, j->target, args, kw ? kw : Py_None,
                               static_cast<long long>(j->calls));
}

PyObject* jit_call(PyObject* self, PyObject* args, PyObject* kw) {
  auto* j = reinterpret_cast<JitFunction*>(self);
  if (__builtin_expect(j->verify > 0, 0) && !t_verifying && ++j->calls % j->verify == 0) {
    t_verifying = true;  // (nothing the two runs call is verified again)
    PyObject* r = jit_call_verified(self, args, kw);
    t_verifying = false;
    return r;
  }
  return jit_call_unverified(self, args, kw);
}

// jit_vectorcall's calls that go through the argument tuple (verify mode, input signatures).
__attribute__((noinline, cold)) PyObject* jit_vectorcall_as_tuple(PyObject* self, PyObject* const* args, Py_ssize_t n,
                                                                  PyObject* kwnames) {
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  {
    Ref tuple(PyTuple_New(n));
    Ref kw(nkw ? PyDict_New() : nullptr);
    if (!tuple || (nkw && !kw)) return nullptr;
    for (Py_ssize_t i = 0; i < n; ++i) {
      Py_INCREF(args[i]);
      PyTuple_SET_ITEM(tuple.get(), i, args[i]);
    }
    for (Py_ssize_t i = 0; i < nkw; ++i)
      if (PyDict_SetItem(kw.get(), PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) return nullptr;
    return jit_call(self, tuple.get(), kw.get());
  }
}

// A Cell's construct called with the cell first, where the caller offers no spare slot before args.
__attribute__((noinline)) PyObject* call_construct_copied(JitFunction* j, PyObject* construct, PyObject* const* args,
                                                          Py_ssize_t n, PyObject* kwnames) {
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  absl::InlinedVector<PyObject*, 8> full(static_cast<size_t>(n + nkw + 1));
  full[0] = j->target;
  std::copy(args, args + n + nkw, full.begin() + 1);
  return call_jitted(reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(construct)), *j->options, construct,
                     full.data(), static_cast<size_t>(n + 1), kwnames);
}

// The call as a vectorcall makes it (3.8+; py::vectorcall): no argument tuple on the way to the
// function, and a Cell's construct gets the cell through the caller's spare slot when it offers one.
// Verify mode and input signatures take the tuple path.
PyObject* jit_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* j = reinterpret_cast<JitFunction*>(self);
  const Py_ssize_t n = py::vector_nargs(nargsf);
  if (__builtin_expect(j->verify > 0 || j->check_args != nullptr, 0)) return jit_vectorcall_as_tuple(self, args, n, kwnames);
  PyObject* target = j->target;
  if (PyObject* construct = direct_construct(target)) {
    if (!(nargsf & py::kVectorcallArgumentsOffset)) return call_construct_copied(j, construct, args, n, kwnames);
    PyObject** full = const_cast<PyObject**>(args) - 1;  // args[-1] is ours for the call
    PyObject* was = full[0];
    full[0] = target;
    PyObject* r = call_jitted(reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(construct)), *j->options, construct,
                              full, static_cast<size_t>(n + 1), kwnames);
    full[0] = was;
    return r;
  }
  if (PyFunction_Check(target))
    return call_jitted(reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(target)), *j->options, target, args, nargsf,
                       kwnames);
  Ref co(code_of(target));
  if (!co) return nullptr;
  return call_jitted(reinterpret_cast<PyCodeObject*>(co.get()), *j->options, target, args, nargsf, kwnames);
}

// _run_jitted(*args, **kw): a call as if verify were off (the verifier's captured run).
PyObject* jit_run_jitted(PyObject* self, PyObject* args, PyObject* kw) { return jit_call_unverified(self, args, kw); }

PyMethodDef jit_function_methods[] = {
    {"_run_jitted", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(jit_run_jitted)), METH_VARARGS | METH_KEYWORDS,
     "the jitted call without verify mode (pijit/_verify.py)"},
    {nullptr, nullptr, 0, nullptr}};

// As a class attribute (a decorated construct) it binds like a function.
PyObject* jit_descr_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

PyObject* jit_repr(PyObject* self) {
  return PyUnicode_FromFormat("<pijit.jit of %R>", reinterpret_cast<JitFunction*>(self)->target);
}

PyMemberDef jit_members[] = {
    {const_cast<char*>("__wrapped__"), T_OBJECT, offsetof(JitFunction, target), READONLY,
     const_cast<char*>("the function, method or Cell being compiled")},
    {nullptr, 0, 0, 0, nullptr}};

PyObject* jit_get_fullgraph(PyObject* self, void*) {
  return PyBool_FromLong(reinterpret_cast<JitFunction*>(self)->options->fullgraph);
}

PyObject* jit_get_verify(PyObject* self, void*) { return PyLong_FromLong(reinterpret_cast<JitFunction*>(self)->verify); }

PyGetSetDef jit_getset[] = {{const_cast<char*>("fullgraph"), jit_get_fullgraph, nullptr, nullptr, nullptr},
                            {const_cast<char*>("verify"), jit_get_verify, nullptr, nullptr, nullptr},
                            {const_cast<char*>("__dict__"), PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
                            {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject JitFunctionType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "pijit._C.JitFunction";
  t.tp_basicsize = sizeof(JitFunction);
  t.tp_dealloc = jit_dealloc;
  t.tp_call = jit_call;
  t.tp_repr = jit_repr;
  t.tp_descr_get = jit_descr_get;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | py::kTpFlagsHaveVectorcall;
  py::set_vectorcall_offset(&t, offsetof(JitFunction, vectorcall));
  t.tp_traverse = jit_traverse;
  t.tp_clear = jit_clear;
  t.tp_new = jit_new;
  t.tp_members = jit_members;
  t.tp_methods = jit_function_methods;
  t.tp_getset = jit_getset;
  t.tp_dictoffset = offsetof(JitFunction, dict);
  t.tp_weaklistoffset = offsetof(JitFunction, weakrefs);
  t.tp_doc = "JitFunction(target, fullgraph=False, recompile_limit=None, inline_depth=None): see pijit.jit.";
  return t;
}();

// ---- module functions ---------------------------------------------------------------------------

PyObject* str_list(const std::vector<std::string>& v) {
  PyObject* l = PyList_New(0);
  for (auto& s : v) {
    Ref o(PyUnicode_FromString(s.c_str()));
    PyList_Append(l, o.get());
  }
  return l;
}

int set_item(PyObject* d, const char* k, PyObject* v) {
  if (!v) return -1;
  int rc = PyDict_SetItemString(d, k, v);
  Py_DECREF(v);
  return rc;
}

// [{id, name, message, detail, file, line, function, chain, frames, kind, text}] of each break and refusal
// (frames: the inline chain as [(function, file, line)], outermost first):
// what pijit.explain and the dump read instead of parsing `text` (STYLE.md 17). A run-time refusal
// has no place: file, line and function are None.
PyObject* break_record_list(const std::vector<BreakRecord>& records) {
  Ref l(PyList_New(0));
  for (const BreakRecord& b : records) {
    Ref d(break_record_dict(b));
    if (!d || PyList_Append(l.get(), d.get()) < 0) return nullptr;
  }
  return l.release();
}

}  // namespace

PyObject* break_record_dict(const BreakRecord& b) {
  auto str = [](const std::string& t) { return PyUnicode_DecodeUTF8(t.data(), t.size(), "replace"); };
  {
    Ref d(PyDict_New());
    if (!d) return nullptr;
    bool placed = b.kind != BreakRecord::Runtime;
    if (set_item(d.get(), "id", str(b.id)) < 0 || set_item(d.get(), "name", str(b.name)) < 0 ||
        set_item(d.get(), "message", str(b.message)) < 0 || set_item(d.get(), "detail", str(b.detail)) < 0 ||
        set_item(d.get(), "file", placed ? str(b.file) : (Py_INCREF(Py_None), Py_None)) < 0 ||
        set_item(d.get(), "line", placed ? PyLong_FromLong(b.line) : (Py_INCREF(Py_None), Py_None)) < 0 ||
        set_item(d.get(), "function", placed ? str(b.function) : (Py_INCREF(Py_None), Py_None)) < 0 ||
        set_item(d.get(), "chain", str(b.chain)) < 0 || set_item(d.get(), "text", str(b.text)) < 0 ||
        set_item(d.get(), "kind", PyUnicode_FromString(b.kind_name())) < 0)
      return nullptr;
    Ref frames(PyList_New(0));
    if (!frames || set_item(d.get(), "frames", (Py_INCREF(frames.get()), frames.get())) < 0) return nullptr;
    for (const capture::ChainFrame& f : b.frames) {
      Ref t(Py_BuildValue("(NNi)", str(f.function), str(f.file), f.line));
      if (!t || PyList_Append(frames.get(), t.get()) < 0) return nullptr;
    }
    return d.release();
  }
}

namespace {

// Graphs and breaks of the resume functions graph breaks of `st` made, and of theirs.
// (A resume function shared by several entries counts once.)
void resume_totals(const CodeState* st, int64_t* graphs, int64_t* breaks, std::set<const CodeState*>* seen) {
  if (!st) return;
  for (const CacheEntry& e : st->entries)
    for (PyCodeObject* rc : e.resumes) {
      const CodeState* rs = code_state(rc, false);
      if (!rs || !seen->insert(rs).second) continue;
      for (const CacheEntry& re : rs->entries) *graphs += re.graph != nullptr;
      *breaks += rs->breaks;
      resume_totals(rs, graphs, breaks, seen);
    }
}

// jit_stats(obj) -> dict for a jitted function/method/Cell (or a plain one run under stress mode).
PyObject* py_jit_stats(PyObject*, PyObject* obj) {
  Ref co(code_of(obj));
  if (!co) return nullptr;
  CodeState* st = code_state(reinterpret_cast<PyCodeObject*>(co.get()), false);
  Ref d(PyDict_New());
  static const char* modes[] = {"candidate", "building", "compiled", "skip"};
  int64_t graphs = 0;
  Ref entries(PyList_New(0));
  if (st) {
    for (const CacheEntry& e : st->entries) {
      graphs += e.graph != nullptr;
      Ref ed(PyDict_New());
      set_item(ed.get(), "guards", str_list(e.guards->describe()));
      set_item(ed.get(), "num_guards", PyLong_FromLong(e.guards->num_checks()));
      set_item(ed.get(), "graph", e.graph ? PyUnicode_FromString(e.graph->to_string().c_str()) : (Py_INCREF(Py_None), Py_None));
      // What runs: the graph after the passes (fused kernels, merged nodes) and its memory plan.
      set_item(ed.get(), "compiled", e.plan ? PyUnicode_FromString(e.plan->graph().to_string().c_str()) : (Py_INCREF(Py_None), Py_None));
      set_item(ed.get(), "plan", e.plan ? PyUnicode_FromString(e.plan->describe().c_str()) : (Py_INCREF(Py_None), Py_None));
      set_item(ed.get(), "memo_reuses", PyLong_FromLongLong(e.plan ? e.plan->memo_reuses() : 0));
      // Whether its hits run without the rewritten code (runtime/direct_call.h), and that code (dis.dis
      // shows it; None where the frame runs as it is).
      set_item(ed.get(), "direct", PyBool_FromLong(e.direct != nullptr));
      set_item(ed.get(), "rewritten_code", e.code ? (Py_INCREF(e.code), e.code) : (Py_INCREF(Py_None), Py_None));
      // Dynamic shapes: what capture decided per symbol, and the plans made per concrete sizes.
      set_item(ed.get(), "dynamic", str_list(e.dynamic_notes));
      const ShapePlanStats sp = e.shapes ? shape_plan_stats(*e.shapes) : ShapePlanStats();
      set_item(ed.get(), "shape_plans", Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:d}", "plans", (long long)sp.plans, "hits",
                                                       (long long)sp.hits, "misses", (long long)sp.misses, "evictions",
                                                       (long long)sp.evictions, "rejected", (long long)sp.failures,
                                                       "prepare_ms", sp.prepare_ns / 1e6));
      set_item(ed.get(), "ops", PyLong_FromLong(e.graph ? static_cast<long>(e.graph->nodes().size()) : 0));
      set_item(ed.get(), "hits", PyLong_FromLongLong(e.hits));
      // guard checks timed on the hit path (set_guard_timing): how many, nanoseconds in all
      set_item(ed.get(), "guard_runs", PyLong_FromLongLong(e.guard_runs));
      set_item(ed.get(), "guard_ns", PyLong_FromLongLong(e.guard_ns));
      // calls whose guards passed on the version shortcut's fast pass (guards/guard_tree.h)
      set_item(ed.get(), "guard_fast_passes", PyLong_FromLongLong(e.guards->fast_passes()));
      set_item(ed.get(), "serial", PyLong_FromLong(e.serial));  // its files in the dump: entry<serial>.*
      set_item(ed.get(), "capture_ms", PyFloat_FromDouble(static_cast<double>(e.capture_ns) / 1e6));
      set_item(ed.get(), "compile_ms", PyFloat_FromDouble(static_cast<double>(e.compile_ns) / 1e6));
      set_item(ed.get(), "from_disk", PyBool_FromLong(e.from_disk));  // the compile cache gave it (no capture ran)
      set_item(ed.get(), "reason", e.reason.empty() ? (Py_INCREF(Py_None), Py_None) : PyUnicode_FromString(e.reason.c_str()));
      set_item(ed.get(), "effects", str_list(e.effects));
      set_item(ed.get(), "graph_break", e.break_text.empty() ? (Py_INCREF(Py_None), Py_None) : PyUnicode_FromString(e.break_text.c_str()));
      // A refusal inside a loop whose body runs as a function per iteration: the loop's file:line.
      set_item(ed.get(), "loop_body", e.loop_text.empty() ? (Py_INCREF(Py_None), Py_None) : PyUnicode_FromString(e.loop_text.c_str()));
      PyList_Append(entries.get(), ed.get());
    }
  }
  set_item(d.get(), "mode", PyUnicode_FromString(st ? modes[st->mode] : "never"));
  set_item(d.get(), "compiles", PyLong_FromLongLong(st ? st->compiles : 0));
  set_item(d.get(), "graphs", PyLong_FromLongLong(graphs));
  set_item(d.get(), "cache_hits", PyLong_FromLongLong(st ? st->cache_hits : 0));
  set_item(d.get(), "cache_misses", PyLong_FromLongLong(st ? st->cache_misses : 0));
  set_item(d.get(), "recompiles", PyLong_FromLongLong(st ? st->recompiles : 0));
  set_item(d.get(), "evictions", PyLong_FromLongLong(st ? st->evictions : 0));
  set_item(d.get(), "breaks", PyLong_FromLongLong(st ? st->breaks : 0));
  int64_t resume_graphs = 0, resume_breaks = 0;
  std::set<const CodeState*> seen;
  resume_totals(st, &resume_graphs, &resume_breaks, &seen);
  set_item(d.get(), "resume_graphs", PyLong_FromLongLong(resume_graphs));  // graph breaks' resume functions
  set_item(d.get(), "resume_breaks", PyLong_FromLongLong(resume_breaks));
  set_item(d.get(), "resume_functions", PyLong_FromSize_t(st ? st->resume_codes.size() : 0));  // distinct, shared
  set_item(d.get(), "loop_bodies", PyLong_FromSize_t(st ? st->loop_codes.size() : 0));  // loops run per iteration
  set_item(d.get(), "frames_rewritten", PyLong_FromLongLong(st ? st->frames_rewritten : 0));
  set_item(d.get(), "frames_direct", PyLong_FromLongLong(st ? st->frames_direct : 0));  // of frames_rewritten
  set_item(d.get(), "frames_frameless", PyLong_FromLongLong(st ? st->frames_frameless : 0));  // of frames_direct
  set_item(d.get(), "frames_default", PyLong_FromLongLong(st ? st->frames_default : 0));
  set_item(d.get(), "graph_failures", PyLong_FromLongLong(st ? st->graph_failures : 0));
  Ref stances(PyDict_New());  // calls each stance decided (pijit.set_stance)
  for (int k = 1; k < static_cast<int>(Stance::Count); ++k)
    set_item(stances.get(), kStanceNames[k], PyLong_FromLongLong(st ? st->stance_calls[k] : 0));
  Py_INCREF(stances.get());
  set_item(d.get(), "stance_calls", stances.get());
  set_item(d.get(), "recompile_reasons", str_list(st ? st->recompile_reasons : std::vector<std::string>{}));
  set_item(d.get(), "break_reasons", str_list(st ? st->break_reasons : std::vector<std::string>{}));
  set_item(d.get(), "break_records", break_record_list(st ? st->break_records : std::vector<BreakRecord>{}));
  Py_INCREF(entries.get());
  set_item(d.get(), "entries", entries.get());
  return d.release();
}

// set_auto_capture([dirs]): `python -m pijit run` makes the code under dirs capture candidates.
PyObject* py_set_auto_capture(PyObject*, PyObject* dirs) {
  std::vector<std::string> v;
  Ref seq(PySequence_Fast(dirs, "set_auto_capture: expected a list of directories"));
  if (!seq) return nullptr;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq.get()); ++i) {
    PyObject* d = PySequence_Fast_GET_ITEM(seq.get(), i);
    if (!PyUnicode_Check(d)) return py::fail(PyExc_TypeError, "set_auto_capture: directories must be str");
    v.emplace_back(py::text(d));  // compared with py::text(co_filename)
  }
  if (!py::capture_supported()) return py::fail(PyExc_NotImplementedError, py::kUnsupportedPythonMessage);
  if (!set_auto_capture(v)) return py::fail(PyExc_RuntimeError, "pijit: another PEP 523 frame evaluator is installed");
  Py_RETURN_NONE;
}

// Graph launches of a code's entries, and their time: every plan's, the symbolic graphs' plans for
// other sizes included.
void graph_runs(const CodeState* st, int64_t* runs, int64_t* run_ns) {
  *runs = *run_ns = 0;
  for (const CacheEntry& e : st->entries) {
    if (e.plan) {
      *runs += e.plan->runs();
      *run_ns += e.plan->run_ns();
    }
    if (e.shapes)  // (the first is e.plan)
      for (const auto& [sizes, inst] : e.shapes->plans)
        if (inst.plan && inst.plan != e.plan) {
          *runs += inst.plan->runs();
          *run_ns += inst.plan->run_ns();
        }
  }
}

bool summarised(const CodeState* st) { return st->compiles > 0 && st->skip_reason != "no tensor work"; }

// capture_counters() -> [(code, compiles, cache_hits, graph_runs, recompiles)] for the codes
// capture_summary lists: what pijit.explain compares around each call to find the codes it touched
// (cheap: no guard text, whatever the number of codes).
PyObject* py_capture_counters(PyObject*, PyObject*) {
  Ref out(PyList_New(0));
  for (PinnedState& pinned : pinned_code_states()) {
    const CodeState* st = pinned.state;
    if (!summarised(st)) continue;
    int64_t runs, run_ns;
    graph_runs(st, &runs, &run_ns);
    Ref row(Py_BuildValue("(OLLLL)", reinterpret_cast<PyObject*>(st->code), static_cast<long long>(st->compiles),
                          static_cast<long long>(st->cache_hits), static_cast<long long>(runs),
                          static_cast<long long>(st->recompiles)));
    if (!row || PyList_Append(out.get(), row.get()) < 0) return nullptr;
  }
  return out.release();
}

// capture_summary([codes]) -> [{function, file, line, resume, loop_body, loop_bodies, compiles, graphs, breaks, recompiles, effects,
// break_reasons, break_records, skip_reason}] for every code pijit captured (what `pijit run --summary` prints),
// or only for the given code objects.
PyObject* py_capture_summary(PyObject*, PyObject* args) {
  PyObject* only = nullptr;
  if (!PyArg_ParseTuple(args, "|O:capture_summary", &only)) return nullptr;
  std::set<PyObject*> wanted;
  if (only && only != Py_None) {
    Ref seq(PySequence_Fast(only, "capture_summary: codes must be a sequence of code objects"));
    if (!seq) return nullptr;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq.get()); ++i) {
      PyObject* c = PySequence_Fast_GET_ITEM(seq.get(), i);
      if (!PyCode_Check(c)) return py::fail(PyExc_TypeError, std::string("capture_summary: expected code objects, got '") +
                                                                 Py_TYPE(c)->tp_name + "'");
      wanted.insert(c);
    }
  }
  Ref out(PyList_New(0));
  for (PinnedState& pinned : pinned_code_states()) {
    CodeState* st = pinned.state;
    if (!summarised(st)) continue;
    if (only && only != Py_None && !wanted.count(reinterpret_cast<PyObject*>(st->code))) continue;
    int64_t graphs = 0, resume_graphs = 0, resume_breaks = 0;
    for (const CacheEntry& e : st->entries) graphs += e.graph != nullptr;
    std::set<const CodeState*> seen;
    resume_totals(st, &resume_graphs, &resume_breaks, &seen);
    Ref d(PyDict_New());
    // as text (a lone surrogate reads \udcff), as every break, chain and log names them; the exact
    // names are row["code"]'s
    set_item(d.get(), "function", PyUnicode_FromString(py::text(st->code->co_name).c_str()));
    set_item(d.get(), "file", PyUnicode_FromString(py::text(st->code->co_filename).c_str()));
    set_item(d.get(), "line", PyLong_FromLong(st->code->co_firstlineno));
    set_item(d.get(), "resume", PyBool_FromLong(st->is_resume));
    set_item(d.get(), "loop_body", PyBool_FromLong(st->is_loop_body));
    set_item(d.get(), "loop_bodies", PyLong_FromSize_t(st->loop_codes.size()));  // its loops run per iteration
    size_t effects = 0;
    for (const CacheEntry& e : st->entries) effects += e.effects.size();
    set_item(d.get(), "effects", PyLong_FromSize_t(effects));  // replayed by the cached entries
    set_item(d.get(), "compiles", PyLong_FromLongLong(st->compiles));
    set_item(d.get(), "graphs", PyLong_FromLongLong(graphs));
    set_item(d.get(), "breaks", PyLong_FromLongLong(st->breaks));
    set_item(d.get(), "recompiles", PyLong_FromLongLong(st->recompiles));
    set_item(d.get(), "break_reasons", str_list(st->break_reasons));
    set_item(d.get(), "break_chains", str_list(st->break_chains));
    set_item(d.get(), "break_records", break_record_list(st->break_records));
    set_item(d.get(), "skip_reason", PyUnicode_FromString(st->skip_reason.c_str()));
    // pijit.explain: the code object, its entries' guards and graphs, and where the time went
    Py_INCREF(st->code);
    set_item(d.get(), "code", reinterpret_cast<PyObject*>(st->code));
    set_item(d.get(), "recompile_reasons", str_list(st->recompile_reasons));
    Ref guards(PyList_New(0)), ops(PyList_New(0)), dynamic(PyList_New(0));
    for (const CacheEntry& e : st->entries) {
      PyList_Append(guards.get(), Ref(str_list(e.guards ? e.guards->describe() : std::vector<std::string>{})).get());
      PyList_Append(dynamic.get(), Ref(str_list(e.dynamic_notes)).get());
      if (e.graph) PyList_Append(ops.get(), Ref(PyLong_FromSize_t(e.graph->nodes().size())).get());
    }
    int64_t runs, run_ns;
    graph_runs(st, &runs, &run_ns);
    Py_INCREF(dynamic.get());
    set_item(d.get(), "dynamic", dynamic.get());
    Py_INCREF(guards.get());
    set_item(d.get(), "guards", guards.get());
    Py_INCREF(ops.get());
    set_item(d.get(), "ops_per_graph", ops.get());
    set_item(d.get(), "cache_hits", PyLong_FromLongLong(st->cache_hits));
    set_item(d.get(), "graph_runs", PyLong_FromLongLong(runs));
    set_item(d.get(), "capture_ms", PyFloat_FromDouble(st->capture_ns / 1e6));
    set_item(d.get(), "compile_ms", PyFloat_FromDouble(st->compile_ns / 1e6));
    set_item(d.get(), "run_ms", PyFloat_FromDouble(run_ns / 1e6));
    // the dump folder and the report's line colours
    set_item(d.get(), "module", PyUnicode_FromString(st->module.c_str()));
    set_item(d.get(), "dump_key", PyUnicode_FromString(st->dump_key.c_str()));
    std::set<int> lines;
    for (const CacheEntry& e : st->entries)
      if (e.graph)
        for (const graph::Node& n : e.graph->nodes())
          if (n.line > 0) lines.insert(n.line);
    Ref graph_lines(PyList_New(0));
    for (int l : lines) PyList_Append(graph_lines.get(), Ref(PyLong_FromLong(l)).get());
    Py_INCREF(graph_lines.get());
    set_item(d.get(), "graph_lines", graph_lines.get());
    PyList_Append(out.get(), d.get());
  }
  return out.release();
}

// guard_profile() -> [(code, entry, guard text, runs, ns, misses)] while PIJIT_LOGS has guard_perf.
PyObject* py_guard_profile(PyObject*, PyObject*) {
  Ref out(PyList_New(0));
  for (PinnedState& pinned : pinned_code_states()) {
    int k = 0;
    for (const CacheEntry& e : pinned.state->entries) {
      if (e.guards && !e.guards->profile().empty()) {
        const std::vector<std::string> text = e.guards->describe();
        const auto& prof = e.guards->profile();
        for (size_t i = 0; i < prof.size() && i < text.size(); ++i) {
          if (!prof[i].runs) continue;
          Ref row(Py_BuildValue("(OisLLL)", reinterpret_cast<PyObject*>(pinned.state->code), k, text[i].c_str(),
                                static_cast<long long>(prof[i].runs), static_cast<long long>(prof[i].ns),
                                static_cast<long long>(prof[i].misses)));
          if (!row) return nullptr;
          PyList_Append(out.get(), row.get());
        }
      }
      ++k;
    }
  }
  return out.release();
}

PyObject* py_trace_start(PyObject*, PyObject*) {
  trace::start();
  Py_RETURN_NONE;
}

// trace_write(path) -> number of events written (PIJIT_TRACE, PIJIT_DUMP_DIR/trace.json).
PyObject* py_trace_write(PyObject*, PyObject* path) {
  if (!PyUnicode_Check(path)) return py::fail(PyExc_TypeError, "trace_write expects a path (str)");
  Ref bytes(PyUnicode_EncodeFSDefault(path));  // the file system's bytes: a path need not be UTF-8
  if (!bytes) return nullptr;
  const std::string file(PyBytes_AS_STRING(bytes.get()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.get())));
  if (file.find('\0') != std::string::npos) return py::fail(PyExc_ValueError, "trace_write: embedded null byte in the path");
  std::string error;
  if (!trace::write(file, &error)) return py::fail(PyExc_OSError, "pijit trace: " + error);
  return PyLong_FromSize_t(trace::event_count());
}

// profile_ops(on) -> now in ns (the trace clock): pijit.Profiler's start/stop of eager op spans.
PyObject* py_profile_ops(PyObject*, PyObject* on) {
  int v = PyObject_IsTrue(on);
  if (v < 0) return nullptr;
  return PyLong_FromLongLong(static_cast<long long>(trace::profile_ops(v != 0)));
}

PyObject* py_set_graph_timing(PyObject*, PyObject* on) {
  int v = PyObject_IsTrue(on);
  if (v < 0) return nullptr;
  graph::ExecPlan::set_timing(v != 0);
  Py_RETURN_NONE;
}

PyObject* py_set_guard_timing(PyObject*, PyObject* on) {
  int v = PyObject_IsTrue(on);
  if (v < 0) return nullptr;
  const bool was = jit_config().guard_timing;
  jit_config().guard_timing = v != 0;
  return PyBool_FromLong(was);
}

// reset_capture(target=None): pijit.reset.
PyObject* py_reset_capture(PyObject*, PyObject* args) {
  PyObject* target = Py_None;
  if (!PyArg_ParseTuple(args, "|O:reset_capture", &target)) return nullptr;
  if (target == Py_None) {
    reset_capture(nullptr);
    Py_RETURN_NONE;
  }
  Ref co(PyCode_Check(target) ? (Py_INCREF(target), target) : code_of(target));
  if (!co) return nullptr;
  reset_capture(reinterpret_cast<PyCodeObject*>(co.get()));
  Py_RETURN_NONE;
}

// set_stance(name) -> the stance before; get_stance() -> its name.
PyObject* py_set_stance(PyObject*, PyObject* name) {
  if (!PyUnicode_Check(name))
    return py::fail(PyExc_TypeError, std::string("set_stance: expected a stance name (str), got ") + Py_TYPE(name)->tp_name);
  const std::string want = py::text(name);
  for (int k = 0; k < static_cast<int>(Stance::Count); ++k)
    if (want == kStanceNames[k]) {
      const Stance before = stance();
      set_stance(static_cast<Stance>(k));
      return PyUnicode_FromString(kStanceNames[static_cast<int>(before)]);
    }
  std::string names;
  for (int k = 0; k < static_cast<int>(Stance::Count); ++k) names += std::string(k ? ", " : "") + "'" + kStanceNames[k] + "'";
  return py::fail(PyExc_ValueError, "set_stance: unknown stance '" + want + "'; expected one of " + names);
}

PyObject* py_get_stance(PyObject*, PyObject*) { return PyUnicode_FromString(kStanceNames[static_cast<int>(stance())]); }

PyObject* py_set_auto_verify(PyObject*, PyObject* every) {
  int n = 0;
  if (read_int_option(every, "set_auto_verify", "every", 0, &n) < 0) return nullptr;
  set_auto_verify(n);
  Py_RETURN_NONE;
}

PyObject* py_set_stress(PyObject*, PyObject* on) {
  long level = PyBool_Check(on) ? (on == Py_True) : PyLong_AsLong(on);
  if (level == -1 && PyErr_Occurred()) return nullptr;
  if (level < 0 || level > 3) return py::fail(PyExc_ValueError, "set_stress: level must be 0, 1, 2 or 3 (or a bool)");
  if (!py::capture_supported()) return py::fail(PyExc_NotImplementedError, py::kUnsupportedPythonMessage);
  if (!set_stress(static_cast<int>(level))) return py::fail(PyExc_RuntimeError, "pijit: another PEP 523 frame evaluator is installed");
  Py_RETURN_NONE;
}

PyObject* py_stress_stats(PyObject*, PyObject*) {
  GlobalStats& g = global_stats();
  Ref reasons(PyDict_New());
  for (auto& kv : g.fallback_reasons) set_item(reasons.get(), kv.first.c_str(), PyLong_FromLongLong(kv.second));
  Ref defaults(PyDict_New());
  for (auto& kv : g.default_reasons) set_item(defaults.get(), kv.first.c_str(), PyLong_FromLongLong(kv.second));
  Py_INCREF(reasons.get());
  Py_INCREF(defaults.get());
  return Py_BuildValue("{s:O,s:i,s:L,s:L,s:L,s:L,s:N,s:N}", "enabled", stress_enabled() ? Py_True : Py_False, "level",
                       stress_level(), "frames_rewritten", static_cast<long long>(g.frames_rewritten),
                       "frames_captured", static_cast<long long>(g.frames_captured), "frames_direct",
                       static_cast<long long>(g.frames_direct), "frames_default",
                       static_cast<long long>(g.frames_default), "fallback_reasons", reasons.get(),
                       "default_reasons", defaults.get());
}

PyObject* py_reset_stress_stats(PyObject*, PyObject*) {
  global_stats() = GlobalStats();
  Py_RETURN_NONE;
}

PyObject* py_set_jit_config(PyObject*, PyObject* args, PyObject* kw) {
  static const char* kwlist[] = {"recompile_limit", "inline_depth", "log", "instruction_budget", "loop_limit", nullptr};
  PyObject *limit = nullptr, *depth = nullptr, *log = nullptr, *budget = nullptr, *loops = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOOO:set_jit_config", const_cast<char**>(kwlist), &limit, &depth, &log,
                                   &budget, &loops))
    return nullptr;
  JitConfig& c = jit_config();
  if (read_int_option(limit, "set_jit_config", "recompile_limit", 1, &c.defaults.recompile_limit) < 0 ||
      read_int_option(depth, "set_jit_config", "inline_depth", 0, &c.defaults.capture.inline_depth) < 0 ||
      read_int_option(budget, "set_jit_config", "instruction_budget", 1, &c.defaults.capture.instruction_budget) < 0 ||
      read_int_option(loops, "set_jit_config", "loop_limit", 0, &c.defaults.capture.loop_limit) < 0)
    return nullptr;
  if (log && log != Py_None) {
    if (!PyUnicode_Check(log)) return py::fail(PyExc_TypeError, "set_jit_config: log must be a str such as 'breaks,recompiles'");
    const std::string categories = py::text(log);
    if (categories != py::name_key(log))  // a lone surrogate: no category has one
      return py::fail(PyExc_ValueError, "set_jit_config: log holds a character that is not valid text: '" + categories + "'");
    set_log_categories(categories);
  }
  return Py_BuildValue("{s:i,s:i,s:s,s:i,s:i}", "recompile_limit", c.defaults.recompile_limit, "inline_depth",
                       c.defaults.capture.inline_depth, "log", c.log.c_str(), "instruction_budget",
                       c.defaults.capture.instruction_budget, "loop_limit", c.defaults.capture.loop_limit);
}

PyObject* py_set_context_mode(PyObject*, PyObject* mode) {
  long m = PyLong_AsLong(mode);
  if (m == -1 && PyErr_Occurred()) return nullptr;
  guards::set_context_mode(static_cast<int>(m));
  Py_RETURN_NONE;
}

PyObject* py_amp_dtype(PyObject*, PyObject*) {
  PyObject* d = guards::amp_dtype();
  Py_INCREF(d);
  return d;
}

PyObject* py_set_amp_dtype(PyObject*, PyObject* dtype) { return guards::set_amp_dtype(dtype); }

PyObject* py_set_library_dir(PyObject*, PyObject* dir) {
  if (!PyUnicode_Check(dir)) return py::fail(PyExc_TypeError, "_set_library_dir expects a str");
  capture::set_library_dir(py::text(dir));  // compared with py::text(co_filename)
  set_library_prefix(py::text(dir));
  Py_RETURN_NONE;
}

// _stack_room(): bytes of C stack this thread has left (common/stack.h; tests of recursion depth).
PyObject* py_stack_room(PyObject*, PyObject*) { return PyLong_FromSize_t(stack_now().room); }

// _is_continuation_code(code): whether code is a live resume function's or loop body's (tests: a
// freed one's address, taken by a new code object, must not make that one pass for it).
PyObject* py_is_continuation_code(PyObject*, PyObject* code) {
  if (!PyCode_Check(code)) return py::fail(PyExc_TypeError, "_is_continuation_code expects a code object");
  return PyBool_FromLong(py::is_continuation_code(reinterpret_cast<PyCodeObject*>(code)));
}

// The persistent compile cache's folder (None when off) and this process's counters.
PyObject* py_compile_cache_info(PyObject*, PyObject*) {
  const std::string folder = disk_cache_folder();
  const DiskStats& s = disk_stats();
  auto counts = [](const std::map<std::string, int64_t>& m) {
    py::Ref d(PyDict_New());
    for (const auto& [why, n] : m) {
      py::Ref v(PyLong_FromLongLong(n));
      if (!d || !v || PyDict_SetItemString(d.get(), why.c_str(), v.get()) < 0) return static_cast<PyObject*>(nullptr);
    }
    return d.release();
  };
  py::Ref refusals(counts(s.refusals)), stale(counts(s.stale_reasons));
  if (!refusals || !stale) return nullptr;
  return Py_BuildValue("{s:N,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:O,s:O}", "folder",
                       folder.empty() ? (Py_INCREF(Py_None), Py_None) : PyUnicode_FromString(folder.c_str()),
                       "artifacts_read", static_cast<long long>(s.artifacts_read), "entries_loaded",
                       static_cast<long long>(s.entries_loaded), "codes_loaded", static_cast<long long>(s.codes_loaded),
                       "kernels_loaded", static_cast<long long>(s.kernels_loaded), "kernels_written",
                       static_cast<long long>(s.kernels_written),
                       "entries_written", static_cast<long long>(s.entries_written),
                       "stale", static_cast<long long>(s.stale), "rejected", static_cast<long long>(s.rejected), "refusals",
                       refusals.get(), "stale_reasons", stale.get());
}

// pijit's disk caches' root folder as the environment names it (common/files.h), None when off.
PyObject* py_cache_root(PyObject*, PyObject*) {
  const std::string root = cache_root();
  if (root.empty()) Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(root.c_str());
}

PyObject* py_release_code_states(PyObject*, PyObject*) {
  release_code_states();
  Py_RETURN_NONE;
}

PyMethodDef jit_methods[] = {
    {"jit_stats", py_jit_stats, METH_O, "jit_stats(fn): capture counters, guards and graphs of a jitted function"},
    {"set_auto_capture", py_set_auto_capture, METH_O, "set_auto_capture([dirs]): code under dirs is a capture candidate"},
    {"capture_summary", py_capture_summary, METH_VARARGS, "capture_summary([codes]): what capture did, per code object"},
    {"capture_counters", py_capture_counters, METH_NOARGS,
     "capture_counters(): (code, compiles, cache_hits, graph_runs, recompiles) per code capture_summary lists"},
    {"guard_profile", py_guard_profile, METH_NOARGS, "per guard: runs, ns, misses (PIJIT_LOGS=guard_perf)"},
    {"trace_start", py_trace_start, METH_NOARGS, "record trace events from now on (PIJIT_TRACE)"},
    {"trace_write", py_trace_write, METH_O, "trace_write(path): the trace-event JSON; returns the event count"},
    {"profile_ops", py_profile_ops, METH_O, "profile_ops(on): eager op spans in the trace (pijit.Profiler); returns the trace clock in ns"},
    {"set_dump_hook", py_set_dump_hook, METH_O, "set_dump_hook(fn): pijit.dump's writer of each new cache entry"},
    {"set_graph_timing", py_set_graph_timing, METH_O, "time every graph launch (pijit.explain turns it on)"},
    {"set_guard_timing", py_set_guard_timing, METH_O,
     "set_guard_timing(on): time each guard check the hit path runs (jit_stats: guard_runs, guard_ns); returns the old setting"},
    {"reset_capture", py_reset_capture, METH_VARARGS, "reset_capture(target=None): forget what capture decided (all, or one function)"},
    {"set_stance", py_set_stance, METH_O, "set_stance(name) -> the previous stance's name (pijit.set_stance)"},
    {"get_stance", py_get_stance, METH_NOARGS, "the current stance's name"},
    {"set_auto_verify", py_set_auto_verify, METH_O, "set_auto_verify(n): run --verify's every nth call (0: off)"},
    {"set_stress", py_set_stress, METH_O, "set_stress(level): 1 capture every frame, 2 also re-assemble refused ones"},
    {"stress_stats", py_stress_stats, METH_NOARGS, "frames run rewritten / default, and why, since the last reset"},
    {"reset_stress_stats", py_reset_stress_stats, METH_NOARGS, "zero the stress counters"},
    {"set_jit_config", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(py_set_jit_config)),
     METH_VARARGS | METH_KEYWORDS, "set_jit_config(recompile_limit=, inline_depth=, log=, instruction_budget=, loop_limit=)"},
    {"_set_context_mode", py_set_context_mode, METH_O, "the context mode guards check (0 graph, 1 pynative)"},
    {"amp_dtype", py_amp_dtype, METH_NOARGS, "amp_dtype(): this thread's mixed-precision dtype (Cell.to_float), or None"},
    {"set_amp_dtype", py_set_amp_dtype, METH_O, "set_amp_dtype(dtype): set this thread's mixed-precision dtype; returns the old one"},
    {"_set_library_dir", py_set_library_dir, METH_O, "directory of pijit's own Python code"},
    {"_stack_room", py_stack_room, METH_NOARGS, "bytes of C stack this thread has left"},
    {"_is_continuation_code", py_is_continuation_code, METH_O, "whether code is a live resume function's or loop body's"},
    {"cache_root", py_cache_root, METH_NOARGS, "cache_root(): the disk caches' root folder, None when they are off"},
    {"compile_cache_info", py_compile_cache_info, METH_NOARGS,
     "compile_cache_info(): the persistent compile cache's folder and this process's counters"},
    {"_release_code_states", py_release_code_states, METH_NOARGS,
     "at exit: free every code object's pijit state and stop capturing"},
    {nullptr, nullptr, 0, nullptr}};

// The compiler's pipeline: PIJIT_PASSES ("dce,cse,fuse", "none"; default: graph::default_pipeline).
const std::vector<std::string>& pass_pipeline() {
  static const std::vector<std::string> passes = [] {
    const char* e = std::getenv("PIJIT_PASSES");
    try {
      return e ? graph::parse_pipeline(e) : graph::default_pipeline();
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "pijit: PIJIT_PASSES ignored: %s\n", ex.what());
      return graph::default_pipeline();
    }
  }();
  return passes;
}

// PIJIT_DUMP_DIR: a graph's IR before and after every pass, one file per stage, in its code
// object's folder (runtime/debug_tools.h).
void dump_stage(const std::string& prefix, int stage, const std::string& pass, const graph::Graph& g) {
  if (prefix.empty()) return;
  const size_t slash = prefix.rfind('/');
  dump_file(prefix.substr(0, slash), prefix.substr(slash + 1) + ".graph." + std::to_string(stage) + "." + pass + ".ir",
            g.to_string());
}

// PIJIT_LOGS=codegen: the machine code of each fused kernel of a compiled graph.
void log_codegen(const std::string& name, const graph::Graph& g) {
  if (!log_enabled("codegen")) return;
  const std::string code = graph_asm(g);
  if (!code.empty()) log_text("codegen", "fused kernels of the graph of " + name + ":\n" + code);
}

}  // namespace

PyObject* jit_target(PyObject* o) {
  return Py_TYPE(o) == &JitFunctionType ? reinterpret_cast<JitFunction*>(o)->target : nullptr;
}

// The graph through the pass pipeline into an execution plan; a failing pass leaves the graph as
// captured. Raises pj::Error when even that cannot be planned.
std::shared_ptr<graph::ExecPlan> compile_plan(std::shared_ptr<graph::Graph> g, const std::string& name,
                                              const GraphDebug& debug, std::shared_ptr<const graph::Graph> optimized) {
  std::shared_ptr<graph::ExecPlan> plan;
  trace::Span span("compile", name);
  try {
    auto compiled = std::make_shared<graph::Graph>(optimized ? *optimized : *g);
    dump_stage(debug.dump_prefix, 0, optimized ? "optimized (compile cache)" : "captured", *compiled);
    int stage = 0;
    int64_t t0 = trace::on() ? trace::now_ns() : 0;
    // PIJIT_DEBUG_EAGER_GRAPH runs the graph as captured: nothing between capture and the eager ops
    static const std::vector<std::string> no_passes;
    graph::run_passes(*compiled, graph::ExecPlan::debug_eager() || optimized ? no_passes : pass_pipeline(),
                      [&](const std::string& pass, int changed, const graph::Graph& out) {
      if (trace::on()) {
        const int64_t t1 = trace::now_ns();
        trace::complete("compile", "pass " + pass, t0, t1, "\"changed\": " + std::to_string(changed));
        t0 = t1;
      }
      dump_stage(debug.dump_prefix, ++stage, pass, out);
      if (changed) log_text("passes", "after " + pass + " (" + std::to_string(changed) + " changed) in " + name + ":\n" + out.to_string());
    });
    {
      trace::Span plan_span("compile", "plan (kernels prepared)");
      plan = std::make_shared<graph::ExecPlan>(compiled);
    }
    if (!debug.dump_prefix.empty()) {
      const size_t slash = debug.dump_prefix.rfind('/');
      const std::string folder = debug.dump_prefix.substr(0, slash), base = debug.dump_prefix.substr(slash + 1);
      dump_file(folder, base + ".graph.dot", graph::to_dot(*compiled, name));
      dump_file(folder, base + ".plan.txt", plan->describe() + "\n");
      const std::string code = graph_asm(*compiled);
      if (!code.empty()) dump_file(folder, base + ".kernels.s", code);
      const std::string cuda = graph_cuda(*compiled);
      if (!cuda.empty()) dump_file(folder, base + ".kernels.cu", cuda);
    }
    log_codegen(name, *compiled);
  } catch (const std::exception& e) {
    // The passes are an optimisation: the captured graph as it is still runs.
    log_text("passes", "compiling the graph of " + name + " failed, it runs unoptimised: " + e.what());
    plan = std::make_shared<graph::ExecPlan>(g);
  }
  plan->set_name(name);
  return plan;
}

PyObject* new_graph_runner(std::shared_ptr<graph::Graph> g, const std::string& name, const GraphDebug& debug,
                           const std::vector<graph::SymbolicDim>& symbolic, const std::vector<int>& scalar_inputs,
                           const std::vector<graph::SweepPlan>& sweeps,
                           const std::vector<graph::SymbolicAttr>& symbolic_attrs,
                           std::shared_ptr<const graph::Graph> optimized) {
  std::shared_ptr<graph::ExecPlan> plan;
  try {
    plan = compile_plan(g, name, debug, std::move(optimized));
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_RuntimeError, "pijit: cannot plan the graph of %s: %s", name.c_str(), e.what());
    return nullptr;
  }
  auto* r = PyObject_New(GraphRunner, &GraphRunnerType);
  if (!r) return nullptr;
  new (&r->plan) std::shared_ptr<graph::ExecPlan>(plan);
  new (&r->backward) std::shared_ptr<TapeBackward>(std::make_shared<TapeBackward>());
  new (&r->shapes) std::shared_ptr<ShapePlans>();
  r->backward->fwd = g;
  r->name = new std::string(name);
  r->fault = debug.fault;
  r->scalars = nullptr;
  r->spare_in = new Tensors();
  r->spare_busy = false;
  r->first_run = nullptr;
  if (!scalar_inputs.empty()) {
    r->scalars = new std::vector<int8_t>(g->inputs().size(), -1);
    for (int k : scalar_inputs) (*r->scalars)[k] = static_cast<int8_t>(g->value(g->inputs()[k]).meta.dtype);
  }
  if (!symbolic.empty()) {
    // The sizes it was captured with are its first plan.
    r->shapes = std::make_shared<ShapePlans>();
    r->shapes->captured = g;
    r->shapes->dims = symbolic;
    r->shapes->sweeps = sweeps;
    r->shapes->attrs = symbolic_attrs;
    r->shapes->name = name;
    std::vector<int64_t> key;
    for (const graph::SymbolicDim& d : symbolic)
      key.push_back(d.dim >= 0 ? g->value(g->inputs()[d.input]).meta.shape[d.dim] : d.hint);
    ShapePlans::Instance& first = r->shapes->plans[key];
    first.plan = plan;
    first.backward = r->backward;
    first.used = ++r->shapes->clock;
    r->shapes->stats.plans = 1;
  }
  return reinterpret_cast<PyObject*>(r);
}

std::shared_ptr<ShapePlans> runner_shapes(PyObject* runner) {
  if (!runner || Py_TYPE(runner) != &GraphRunnerType) return nullptr;
  return reinterpret_cast<GraphRunner*>(runner)->shapes;
}

std::shared_ptr<graph::ExecPlan> runner_plan(PyObject* runner) {
  if (!runner || Py_TYPE(runner) != &GraphRunnerType) return nullptr;
  return reinterpret_cast<GraphRunner*>(runner)->plan;
}

void set_runner_first_run(PyObject* runner, RunnerFirstRun f) {
  if (!runner || Py_TYPE(runner) != &GraphRunnerType) return;
  auto* r = reinterpret_cast<GraphRunner*>(runner);
  delete r->first_run;
  r->first_run = f ? new RunnerFirstRun(std::move(f)) : nullptr;
}

// Called once from PyInit__C.
bool register_jit(PyObject* m) {
  capture::set_jit_target_fn(jit_target);
  if (PyType_Ready(&GraphRunnerType) < 0 || PyType_Ready(&JitFunctionType) < 0) return false;
  Py_INCREF(&JitFunctionType);
  if (PyModule_AddObject(m, "JitFunction", reinterpret_cast<PyObject*>(&JitFunctionType)) < 0) return false;
  py::g_capture_break = PyErr_NewExceptionWithDoc(
      "pijit._C.CaptureBreak",
      "Raised inside capture when traced code reads a symbolic tensor's data; never reaches user code.",
      PyExc_BaseException, nullptr);
  g_capture_error = PyErr_NewExceptionWithDoc(
      "pijit._C.CaptureError", "A function could not be captured as one graph (fullgraph=True or GRAPH_MODE).",
      PyExc_RuntimeError, nullptr);
  if (!py::g_capture_break || !g_capture_error) return false;
  Py_INCREF(py::g_capture_break);
  Py_INCREF(g_capture_error);
  if (PyModule_AddObject(m, "CaptureBreak", py::g_capture_break) < 0 ||
      PyModule_AddObject(m, "CaptureError", g_capture_error) < 0)
    return false;
  if (const char* logs = std::getenv("PIJIT_LOGS")) set_log_categories(logs);
  return PyModule_AddFunctions(m, jit_methods) == 0;
}

}  // namespace pj::runtime
