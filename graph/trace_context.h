// The one object that traces pijit's library code on this thread instead of running it: capture's
// simulator (capture/), vmap (pyext/vmap_run.cc). While one is current, every op call is handed to
// record() (it adds a graph node and returns symbolic outputs), and the layers below capture tell
// it what Python observes of symbolic tensors: the tensor type (hashing, is_contiguous, sizes),
// the operand converter (a Python number that may be a graph input) and the tape (a sweep).
// Per thread, so a capture on one thread never sees another thread's ops; nested by TraceScope.
#pragma once

#include <optional>

#include "graph/op.h"

struct _object;  // PyObject (graph/ does not include Python.h; pyext/ passes the objects through)

namespace pj {

struct SweepTrace;  // graph/autodiff.h

class TraceContext {
 public:
  virtual ~TraceContext() = default;
  virtual Tensors record(const OpDef& op, const Tensors& in, const Attrs& attrs) = 0;
  // A symbolic tensor was hashed (a set or dict key): which inputs alias matters. Must not raise:
  // it runs inside CPython's hashing.
  virtual void identity_observed(_object* /*tensor*/) {}
  // is_contiguous() of a symbolic tensor: 1 or 0 (the tracer guards what it said), -1 unknown
  // (a capture break).
  virtual int contiguity(_object* /*tensor*/) { return -1; }
  // Python read sizes off a symbolic tensor (.shape, len(), .size; dim -1: any of them).
  virtual void sizes_read(const Tensor& /*t*/, int /*dim*/, const char* /*what*/) {}
  // A Python number met a tensor: a symbolic 0-d tensor of `dtype` when it is a graph input
  // rather than a constant (a lifted scalar), else nullopt.
  virtual std::optional<Tensor> lift_scalar(_object* /*number*/, DType /*dtype*/) { return std::nullopt; }
  // A tape's gradient(): nullptr when the sweep begins, its trace when it ends (not when it raised).
  virtual void sweep_observed(const SweepTrace* /*trace*/) {}
};

// What every tracer's record() does around its own bookkeeping:
// - an op whose output shape depends on tensor data cannot be recorded: a capture break;
void refuse_untraceable(const OpDef& op);
// - the output metas of `op` on inputs `in` (bad shapes raise here, as the eager call would; where
//   only the data can tell the shape, a boolean mask, a capture break);
Metas infer_traced(const OpDef& op, const Metas& in, const Attrs& attrs);
// - the symbolic outputs standing for graph values `ids`.
Tensors symbolic_outputs(const Metas& outs, const std::vector<int>& ids);

// This thread's tracer; nullptr when ops run.
TraceContext* trace_context();

// Makes `c` this thread's tracer for its lifetime, restoring the one before (captures nest).
class TraceScope {
 public:
  explicit TraceScope(TraceContext* c);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  TraceContext* prev_;
  bool counted_;  // c was a tracer: counted in the process-wide number of tracing scopes
};

}  // namespace pj
