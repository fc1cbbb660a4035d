// The single op registry (DESIGN.md, principle 1).
//
// Each op is declared once, in graph/ops/*.cc: its name, its inputs, its attributes, a meta-only
// inference rule (shapes and dtypes, no data: what capture and the graph compiler use), and how to
// run it eagerly. Most ops run by allocating outputs from `infer` and calling a kernel that writes
// into them; view ops (reshape, transpose, slicing) return views of their input instead, and ops
// whose output shape depends on data (boolean masks, nonzero) allocate their own outputs. An op
// that is differentiable also has a gradient rule (graph/autodiff.h, rules in graph/grads/).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "absl/types/span.h"
#include "kernels/tensor.h"

namespace pj {


using IntList = std::vector<int64_t>;
// Shortest text that reads back as the same double, always with a '.' or exponent ("1.0", "nan").
std::string format_real(double v);
using AttrValue = std::variant<std::monostate, bool, int64_t, double, std::string, IntList, DType>;

// Named attribute values, in the order the op declares them (small: a linear scan is fastest).
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> kv) : kv_(kv) {}
  void set(const std::string& k, AttrValue v);
  bool has(const std::string& k) const;
  bool is_none(const std::string& k) const;
  const AttrValue& get(const std::string& k) const;
  int64_t i(const std::string& k) const;
  int64_t i(const std::string& k, int64_t dflt) const;
  double f(const std::string& k) const;
  bool b(const std::string& k, bool dflt = false) const;
  const std::string& s(const std::string& k) const;
  const IntList& ints(const std::string& k) const;
  DType dtype(const std::string& k) const;
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return kv_; }
  std::string to_string() const;  // "axis=1, keepdims=False", stable, for IR text and errors

 private:
  std::vector<std::pair<std::string, AttrValue>> kv_;
};

using Tensors = std::vector<Tensor>;
using Metas = std::vector<TensorMeta>;
using InferFn = std::function<Metas(const Metas&, const Attrs&)>;
using KernelFn = std::function<void(const Tensors& in, const Attrs&, const Tensors& out)>;
using RunFn = std::function<Tensors(const Tensors& in, const Attrs&)>;
// What the execution plan calls on every launch: everything that depends only on the metas and
// attributes (parsed attributes, compiled code, primitives) was done once by a PrepareFn.
using PreparedFn = std::function<void(const Tensors& in, const Tensors& out)>;
using PrepareFn = std::function<PreparedFn(const Metas& in, const Attrs&, const Metas& out)>;
// An eager call's common case (call_eager): the one output straight into *out, true; or false,
// nothing done, and the general path runs.
using EagerFn = std::function<bool(absl::Span<const Tensor> in, Tensor* out)>;

struct OpDef {
  std::string name;
  int num_inputs = 0;               // -1: variadic (concat, stack, optional inputs)
  int min_inputs = 0;               // for variadic ops: fewer is a TypeError before any op code runs
  std::vector<std::string> attrs;   // documented attribute names, in order
  InferFn infer;
  KernelFn kernel;                  // writes into outputs allocated from infer
  RunFn run;                        // overrides infer+kernel for views / data-dependent shapes
  // Per device (kernels' Device): builds the launch-time kernel once per graph node. Empty: the
  // plan calls `kernel` with the node's attributes.
  PrepareFn prepare[2];
  EagerFn eager;                    // optional: call_eager's path for the common case
  bool elementwise = false;         // out[i] depends only on in[k][i] (broadcast): an output may
                                    // take the storage of its first input when shapes match
  bool is_view = false;             // outputs alias the first input's storage
  bool data_dependent = false;      // output shapes are only known after running
  bool impure = false;              // draws random numbers or updates an input in place: never
                                    // removed or merged by graph passes, kept in program order
  bool raises_on_values = false;    // may raise depending on input values (an index out of
                                    // range): never removed, even when its result is unused
  bool total = false;               // cannot raise once infer accepted its inputs' metadata: the
                                    // only ops dead-code elimination may drop (eager Python would
                                    // have run the others, and they might have raised)
  bool storage_dtypes = false;      // the kernel handles every storage dtype (float16, int8, ...):
                                    // casts and copies. Other ops run those in compute dtypes.
};

// Declares an op; fields are filled by the chained setters at static-initialisation time.
class OpRegistrar {
 public:
  explicit OpRegistrar(const char* name);
  OpRegistrar& inputs(int n);
  OpRegistrar& variadic(int min_inputs);  // any number of inputs, at least min_inputs
  OpRegistrar& attrs(std::vector<std::string> names);
  OpRegistrar& infer(InferFn f);
  OpRegistrar& kernel(KernelFn f);
  OpRegistrar& run(RunFn f);
  OpRegistrar& view();
  OpRegistrar& data_dependent();
  OpRegistrar& impure();
  OpRegistrar& raises_on_values();
  OpRegistrar& total();
  OpRegistrar& prepare(PrepareFn f, Device device = Device::CPU);
  OpRegistrar& elementwise();
  OpRegistrar& storage_dtypes();
  OpRegistrar& eager(EagerFn f);

 private:
  OpDef* def_;
};

#define PJ_OP_CONCAT2(a, b) a##b
#define PJ_OP_CONCAT(a, b) PJ_OP_CONCAT2(a, b)
#define PJ_REGISTER_OP(name) \
  static ::pj::OpRegistrar PJ_OP_CONCAT(pj_op_reg_, __COUNTER__) = ::pj::OpRegistrar(name)

// nullptr when unknown.
const OpDef* find_op(const std::string& name);
// Aborts when unknown: for pijit's own fixed op names.
const OpDef& get_op(const std::string& name);
std::vector<std::string> registered_ops();

// While a tracer is current (graph/trace_context.h), op calls are recorded instead of run.

// Storage-only dtypes (kernels/dtype.h, "compute dtypes"): an op whose kernel is written for the
// compute dtypes runs on float16/bfloat16/int8/... inputs or outputs by casting its inputs up,
// running in compute dtypes and rounding each output once into its real dtype. In-place ops get
// their widened inputs written back. Views and storage_dtypes ops run as they are.
bool needs_widening(const OpDef& op, const Metas& in, const Metas& out);
Metas widened_metas(const Metas& ms);
using TensorsKernel = std::function<void(const Tensors& in, const Tensors& out)>;
void run_widened(const OpDef& op, const TensorsKernel& kernel, const Tensors& in, const Tensors& out);

// Runs one op on concrete tensors, ignoring any recorder (the graph executor uses this).
Tensors run_op(const OpDef& op, const Tensors& in, const Attrs& attrs);

// Eager execution of one op: infer, allocate, run the kernel. Raises pj::Error on bad input.
Tensors call_op(const OpDef& op, const Tensors& in, const Attrs& attrs = {});
Tensor call_op1(const OpDef& op, const Tensors& in, const Attrs& attrs = {});
Tensor call_op1(const std::string& name, const Tensors& in, const Attrs& attrs = {});
// call_op1 without attributes, through the op's eager path when it has one and nothing records
// the call (no tracer, no tape, no op profiling): an operator's or ops.*'s eager call.
Tensor call_eager(const OpDef& op, absl::Span<const Tensor> in);

inline TensorMeta meta_of(const Tensor& t) { return {t.shape(), t.dtype()}; }
// meta_of(t) == m without building the meta (a graph launch checks every input).
inline bool meta_matches(const Tensor& t, const TensorMeta& m) {
  return t.dtype() == m.dtype && m.device == Device::CPU && !m.requires_grad && t.shape() == m.shape;
}

}  // namespace pj
