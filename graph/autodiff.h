// Reverse-mode automatic differentiation.
//
// Each differentiable op has one gradient rule (graph/grads/*.cc, PJ_REGISTER_GRAD), written in
// terms of registered ops through a GradContext. The same rule serves two contexts:
//   - GraphGradContext appends the ops to a graph: differentiate() turns a captured forward graph
//     into one forward+backward graph, which the passes fuse and the plan runs like any other;
//   - EagerGradContext runs them at once on tensors (what an eager tape's backward does).
// Values are handles (ints) the context owns: graph value ids, or slots of tensors. kNoGrad stands
// for a gradient that is zero (an output nothing depends on, an input that needs none).
// Complex values carry gradients as PyTorch defines them: for a real loss L, the gradient of z is
// dL/dRe(z) + i dL/dIm(z), so a holomorphic f's rule is conj(f'(z)) * dout. Only rules registered
// with PJ_REGISTER_COMPLEX_GRAD are written for that; the sweep refuses (TypeError naming the op)
// to run any other rule on complex values, rather than give a wrong gradient.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace pj {

constexpr int kNoGrad = -1;

class GradContext {
 public:
  virtual ~GradContext() = default;
  // By value: emitting ops may move the context's own records.
  virtual TensorMeta meta(int v) const = 0;
  // Runs or records `op` (its inference checks the inputs, as eagerly).
  virtual std::vector<int> emit(const OpDef& op, const std::vector<int>& in, const Attrs& a) = 0;
  // A 0-d constant.
  virtual int scalar(double x, DType t) = 0;
  // The user's source line the ops emitted next differentiate (graphs keep it per node).
  virtual void at_line(int line) {}

  // Helpers the rules share.
  int op(const char* name, std::vector<int> in, const Attrs& a = {});
  int scalar_like(double x, int v) { return scalar(x, meta(v).dtype); }
  // g summed over the dims broadcasting added or stretched, to `m`'s shape, in `m`'s dtype: the
  // gradient of an input that was broadcast to g's shape.
  int reduce_to(int g, TensorMeta m);
  int zeros(TensorMeta m);
  // g where `mask`, else 0.
  int masked(int mask, int g);
  // conj(v) for a complex v; v itself otherwise (so a rule's real graph is unchanged).
  int conj(int v);
  // sum over `axes` (complex values as two real sums: the reduction kernels are real-only).
  int sum(int v, const IntList& axes, bool keepdims);
};

// What a rule sees: the node's inputs, outputs and attributes, the gradient of each output
// (kNoGrad: zero), and which inputs need a gradient (the rule may skip the others).
struct GradArgs {
  std::vector<int> in, out, dout;
  const Attrs* attrs = nullptr;
  std::vector<bool> needs;
  TensorMeta in_meta(GradContext& c, int k) const { return c.meta(in[k]); }
};

// An op's gradient rule: the gradients of its inputs (kNoGrad where not needed or zero).
using GradFn = std::vector<int> (*)(GradContext& c, const GradArgs& g);

// Registers a rule by op name (static initialisation: the ops may not be registered yet).
// `complex`: the rule is also right where the op's inputs or outputs are complex.
struct GradRegistrar {
  GradRegistrar(const char* op, GradFn fn, bool complex = false);
};
#define PJ_REGISTER_GRAD(name, ...) \
  static ::pj::GradRegistrar PJ_OP_CONCAT(pj_grad_reg_, __COUNTER__)(name, __VA_ARGS__)
#define PJ_REGISTER_COMPLEX_GRAD(name, ...) \
  static ::pj::GradRegistrar PJ_OP_CONCAT(pj_grad_reg_, __COUNTER__)(name, __VA_ARGS__, true)

// The rule of `op`, or nullptr when it is not differentiable.
GradFn grad_rule(const OpDef& op);
// Every registered rule's op name (tests check each names a registered op).
std::vector<std::string> grad_rule_names();
// Whether op's rule was registered as right on complex values.
bool grad_rule_complex(const OpDef& op);

// Whether values of this dtype carry gradients (floating and complex ones).
inline bool differentiable(DType t) { return is_floating(t) || is_complex(t); }

// A backward written by the user (a Cell's bprop): what a rule returns, for one recorded call.
using CustomGradFn = std::function<std::vector<int>(GradContext& c, const GradArgs& g)>;

// One recorded op as the reverse sweep sees it: handles in the context's numbering.
struct SweepNode {
  const OpDef* op = nullptr;  // nullptr: `custom` is the backward, `name` says whose
  const Attrs* attrs = nullptr;
  std::vector<int> in, out;
  int line = 0;
  const CustomGradFn* custom = nullptr;
  std::string name;
};

// Reverse-mode sweep shared by the tape and differentiate(). `active` (indexed by handle) marks
// the values that depend on a value gradients are wanted for; it is extended forward through the
// nodes first, to the outputs that carry gradients (`carries[h]`, or floating dtypes when null).
// `grad` (same indexing, kNoGrad: zero) holds the seeds on entry and every accumulated gradient
// on return. Raises pj::Error (TypeError) naming an op without a rule that a gradient has to pass
// through.
void reverse_sweep(GradContext& c, const std::vector<SweepNode>& nodes, std::vector<bool>& active,
                   std::vector<int>& grad, const std::vector<bool>* carries = nullptr);

// Runs rules on tensors. A slot may carry the storage version its tensor had when it was recorded:
// a backward op reading it after an in-place write changed it raises (its values are not those
// the forward computed).
class EagerGradContext : public GradContext {
 public:
  int add(const Tensor& t);
  // `used_by`: the forward op that read it (for the error), a string that outlives the context.
  int add_versioned(const Tensor& t, uint64_t version, const char* used_by);
  const Tensor& tensor(int v) const { return slots_.at(v); }
  TensorMeta meta(int v) const override;
  std::vector<int> emit(const OpDef& op, const std::vector<int>& in, const Attrs& a) override;
  int scalar(double x, DType t) override;

 private:
  Tensors slots_;
  std::vector<TensorMeta> metas_;
  std::vector<int64_t> versions_;  // -1: not checked
  std::vector<const char*> used_by_;
};

// Seeds output `out`'s gradient with `seed` as a tape's gradient() does, in any context: shapes
// must match (ValueError naming output k), the seed takes the output's dtype, and a second seed of
// one output adds to the first.
void seed_gradient(GradContext& c, std::vector<int>& grad, int out, int seed, size_t k);

// ---- a tape's sweep, replayed for other sizes (dynamic shapes) ----

// What a tape's gradient() saw, handed to this thread's tracer when it ends (graph/trace_context.h:
// capture records it).
struct SweepTrace {
  const Tensors& values;              // by tape handle
  const std::vector<SweepNode>& nodes;
  const std::vector<bool>& carries;   // by handle
  const std::vector<int>& out_handles;  // per output: its handle, -1 when it contributes nothing
  const Tensors& seeds;               // per output, as given
  const std::vector<int>& leaves;     // per leaf: its handle, -1 for none
  const Tensors& zeros_like;
  const Tensors& results;             // per leaf: what gradient() returned
};

namespace graph {

// A sweep a captured graph holds (nodes node_begin..node_end emitted it), in the captured graph's
// values: replay_sweep emits the backward again for other sizes, with the same rules in the same
// order as the eager tape would run them for those sizes.
struct SweepPlan {
  size_t node_begin = 0, node_end = 0;
  std::vector<int> handle_values;  // per tape handle: its value
  struct Op {
    const OpDef* op;
    Attrs attrs;
    std::vector<int> in, out;  // handles
  };
  std::vector<Op> nodes;
  std::vector<bool> carries;
  std::vector<int> out_handles, seed_values;         // per output
  std::vector<int> leaves, zeros_values, result_values;  // per leaf (zeros_values -1: not used)
};
// Emits `plan`'s backward into g. `map` takes the captured graph's values to g's (every value
// before the sweep); on return it maps the gradients the sweep returned as well. Raises pj::Error
// where a rule or a seed rejects g's sizes, as the eager tape would.
void replay_sweep(Graph& g, const SweepPlan& plan, std::vector<int>& map);
// with_input_metas for a graph holding sweeps: the sweeps' nodes are emitted again, not copied.
// ... and the symbolic int attributes given their values (symbol -> value).
Graph with_input_metas(const Graph& g, const Metas& inputs, const std::vector<SweepPlan>& sweeps,
                       const std::vector<SymbolicAttr>& attrs = {}, const std::map<int, int64_t>& values = {});

// The forward graph `fwd` with its backward appended. Inputs: fwd's inputs, then one seed per
// output (named "grad of output k": the gradient flowing into it). Outputs: fwd's outputs, then
// for each input position in `wrt` the gradient of sum_k <seed_k, output_k> with respect to that
// input (zeros where it does not reach the outputs). Raises pj::Error (TypeError) naming the op
// when the outputs depend on an input in `wrt` through an op without a gradient rule, and
// (TypeError) when an input in `wrt` is neither floating nor complex. With `integers`, integer inputs in `wrt`
// are differentiated too, through ops with rules (the eager tape's rule, graph/tape.h).
Graph differentiate(const Graph& fwd, const std::vector<int>& wrt, bool integers = false);

}  // namespace graph
}  // namespace pj
