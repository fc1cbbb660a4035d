#include "graph/op.h"

#include <atomic>
#include "graph/tape.h"
#include "graph/trace_context.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "common/trace.h"  // eager op spans for pijit.Profiler
#include "kernels/copy.h"

namespace pj {

namespace {
absl::flat_hash_map<std::string, std::unique_ptr<OpDef>>& registry() {
  static auto* r = new absl::flat_hash_map<std::string, std::unique_ptr<OpDef>>();
  return *r;
}
}  // namespace

void Attrs::set(const std::string& k, AttrValue v) {
  for (auto& kv : kv_)
    if (kv.first == k) {
      kv.second = std::move(v);
      return;
    }
  kv_.emplace_back(k, std::move(v));
}

bool Attrs::has(const std::string& k) const {
  for (auto& kv : kv_)
    if (kv.first == k) return true;
  return false;
}

bool Attrs::is_none(const std::string& k) const {
  for (auto& kv : kv_)
    if (kv.first == k) return std::holds_alternative<std::monostate>(kv.second);
  return true;
}

const AttrValue& Attrs::get(const std::string& k) const {
  // A missing attribute reads as None: optional ones take their default, and required ones raise
  // TypeError from the typed getters below, never an abort on input from Python.
  static const AttrValue kNone{};
  for (auto& kv : kv_)
    if (kv.first == k) return kv.second;
  return kNone;
}

int64_t Attrs::i(const std::string& k) const {
  const AttrValue& v = get(k);
  if (auto* p = std::get_if<int64_t>(&v)) return *p;
  if (auto* p = std::get_if<bool>(&v)) return *p;
  PJ_THROW(Type) << "attribute '" << k << "' must be an int" << (is_none(k) ? " (it is missing)" : "");
}
int64_t Attrs::i(const std::string& k, int64_t dflt) const { return is_none(k) ? dflt : i(k); }

double Attrs::f(const std::string& k) const {
  const AttrValue& v = get(k);
  if (auto* p = std::get_if<double>(&v)) return *p;
  if (auto* p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  if (auto* p = std::get_if<bool>(&v)) return *p;
  PJ_THROW(Type) << "attribute '" << k << "' must be a number";
}

bool Attrs::b(const std::string& k, bool dflt) const {
  if (is_none(k)) return dflt;
  const AttrValue& v = get(k);
  if (auto* p = std::get_if<bool>(&v)) return *p;
  if (auto* p = std::get_if<int64_t>(&v)) return *p != 0;
  PJ_THROW(Type) << "attribute '" << k << "' must be a bool";
}

const std::string& Attrs::s(const std::string& k) const {
  const AttrValue& v = get(k);
  if (auto* p = std::get_if<std::string>(&v)) return *p;
  PJ_THROW(Type) << "attribute '" << k << "' must be a str";
}

const IntList& Attrs::ints(const std::string& k) const {
  const AttrValue& v = get(k);
  if (auto* p = std::get_if<IntList>(&v)) return *p;
  PJ_THROW(Type) << "attribute '" << k << "' must be a tuple of ints";
}

DType Attrs::dtype(const std::string& k) const {
  const AttrValue& v = get(k);
  if (auto* p = std::get_if<DType>(&v)) return *p;
  PJ_THROW(Type) << "attribute '" << k << "' must be a dtype";
}

std::string format_real(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // a real reads back as a real
  return s;
}

std::string Attrs::to_string() const {
  std::ostringstream os;
  bool first = true;
  for (auto& [k, v] : kv_) {
    if (!first) os << ", ";
    first = false;
    os << k << "=";
    std::visit(
        [&](auto&& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) os << "None";
          else if constexpr (std::is_same_v<T, bool>) os << (x ? "True" : "False");
          else if constexpr (std::is_same_v<T, std::string>) os << "'" << x << "'";
          else if constexpr (std::is_same_v<T, IntList>) {
            os << "(";
            for (size_t i = 0; i < x.size(); ++i) os << (i ? ", " : "") << x[i];
            os << (x.size() == 1 ? ",)" : ")");
          } else if constexpr (std::is_same_v<T, DType>) os << dtype_name(x);
          else if constexpr (std::is_same_v<T, double>) os << format_real(x);
          else os << x;
        },
        v);
  }
  return os.str();
}

OpRegistrar::OpRegistrar(const char* name) {
  auto& r = registry();
  PJ_CHECK(!r.contains(name)) << "op '" << name << "' registered twice";
  auto def = std::make_unique<OpDef>();
  def->name = name;
  def_ = def.get();
  r.emplace(name, std::move(def));
}
OpRegistrar& OpRegistrar::inputs(int n) { def_->num_inputs = n; return *this; }
OpRegistrar& OpRegistrar::variadic(int min_inputs) {
  def_->num_inputs = -1;
  def_->min_inputs = min_inputs;
  return *this;
}
OpRegistrar& OpRegistrar::attrs(std::vector<std::string> names) { def_->attrs = std::move(names); return *this; }
OpRegistrar& OpRegistrar::infer(InferFn f) { def_->infer = std::move(f); return *this; }
OpRegistrar& OpRegistrar::kernel(KernelFn f) { def_->kernel = std::move(f); return *this; }
OpRegistrar& OpRegistrar::impure() { def_->impure = true; return *this; }
OpRegistrar& OpRegistrar::raises_on_values() { def_->raises_on_values = true; return *this; }
OpRegistrar& OpRegistrar::total() { def_->total = true; return *this; }
OpRegistrar& OpRegistrar::prepare(PrepareFn f, Device device) {
  def_->prepare[static_cast<int>(device)] = std::move(f);
  return *this;
}
OpRegistrar& OpRegistrar::elementwise() { def_->elementwise = true; return *this; }
OpRegistrar& OpRegistrar::storage_dtypes() { def_->storage_dtypes = true; return *this; }
OpRegistrar& OpRegistrar::eager(EagerFn f) { def_->eager = std::move(f); return *this; }
OpRegistrar& OpRegistrar::run(RunFn f) { def_->run = std::move(f); return *this; }
OpRegistrar& OpRegistrar::view() { def_->is_view = true; return *this; }
OpRegistrar& OpRegistrar::data_dependent() { def_->data_dependent = true; return *this; }

const OpDef* find_op(const std::string& name) {
  auto& r = registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : it->second.get();
}

const OpDef& get_op(const std::string& name) {
  const OpDef* op = find_op(name);
  PJ_CHECK(op) << "unknown op '" << name << "'";
  return *op;
}

std::vector<std::string> registered_ops() {
  std::map<std::string, int> sorted;
  for (auto& kv : registry()) sorted[kv.first] = 0;
  std::vector<std::string> out;
  for (auto& kv : sorted) out.push_back(kv.first);
  return out;
}

namespace {
thread_local TraceContext* t_tracer = nullptr;
}  // namespace

// Tracing scopes of every thread: while none is open, trace_context() reads no thread-local (a
// dlopened module's cost a call each, and every eager op and cache hit asks).
std::atomic<int> g_tracing_scopes{0};
TraceContext* trace_context() { return g_tracing_scopes.load(std::memory_order_relaxed) ? t_tracer : nullptr; }

void refuse_untraceable(const OpDef& op) {
  if (op.data_dependent || !op.infer)
    PJ_THROW(CaptureBreak) << "data_dependent_shape: " << op.name << "'s output shape depends on tensor data";
}

Metas infer_traced(const OpDef& op, const Metas& in, const Attrs& attrs) {
  try {
    return op.infer(in, attrs);
  } catch (const Error& e) {
    // infer says NotImplemented when only the data can tell the shape (a boolean mask).
    if (e.kind() != ErrorKind::NotImplemented) throw;
    PJ_THROW(CaptureBreak) << "data_dependent_shape: " << op.name << ": " << e.what();
  }
}

Tensors symbolic_outputs(const Metas& outs, const std::vector<int>& ids) {
  Tensors r;
  for (size_t k = 0; k < outs.size(); ++k) r.push_back(Tensor::symbolic(outs[k].shape, outs[k].dtype, ids[k]));
  return r;
}
TraceScope::TraceScope(TraceContext* c) : prev_(t_tracer), counted_(c != nullptr) {
  if (counted_) g_tracing_scopes.fetch_add(1, std::memory_order_relaxed);
  t_tracer = c;
}
TraceScope::~TraceScope() {
  t_tracer = prev_;
  if (counted_) g_tracing_scopes.fetch_sub(1, std::memory_order_relaxed);
}

namespace {
thread_local int t_op_depth = 0;  // eager op calls on this thread's stack (a composite's inner ops are > 0)

void describe(const Tensors& ts, std::string* out) {
  for (size_t k = 0; k < ts.size(); ++k) {
    if (k) *out += ";";
    *out += dtype_name(ts[k].dtype());
    *out += "[";
    const Shape& s = ts[k].shape();
    for (size_t d = 0; d < s.size(); ++d) {
      if (d) *out += ",";
      *out += std::to_string(s[d]);
    }
    *out += "]";
  }
}

// run_op as one "op" trace span (pijit.Profiler): name, input/output dtypes and shapes, the
// bytes of storage the outputs newly hold (views and in-place results hold none) and the
// nesting depth, so summaries count each op once. Kept out of line: call_op's off path is one
// relaxed load and a branch.
__attribute__((noinline)) Tensors run_op_profiled(const OpDef& op, const Tensors& in, const Attrs& attrs) {
  const int depth = t_op_depth++;
  const int64_t t0 = trace::now_ns();
  Tensors out;
  try {
    out = run_op(op, in, attrs);
  } catch (...) {
    --t_op_depth;
    throw;
  }
  const int64_t t1 = trace::now_ns();
  --t_op_depth;
  int64_t bytes = 0;
  if (!op.is_view)
    for (auto& o : out) {
      bool shared = !o.storage();
      for (auto& i : in) shared = shared || o.same_storage(i);
      if (!shared) bytes += o.nbytes();
    }
  std::string args = "\"inputs\": \"";
  describe(in, &args);
  args += "\", \"outputs\": \"";
  describe(out, &args);
  args += "\", \"bytes\": " + std::to_string(bytes) + ", \"depth\": " + std::to_string(depth);
  trace::complete("op", op.name, t0, t1, args);
  return out;
}
}  // namespace

Tensors call_op(const OpDef& op, const Tensors& in, const Attrs& attrs) {
  if (op.num_inputs >= 0 && static_cast<int>(in.size()) != op.num_inputs)
    PJ_THROW(Type) << op.name << "() takes " << op.num_inputs << " tensor inputs but "
                   << in.size() << " were given";
  if (op.num_inputs < 0 && static_cast<int>(in.size()) < op.min_inputs)
    PJ_THROW(Type) << op.name << "() takes at least " << op.min_inputs << " tensor inputs but "
                   << in.size() << " were given";
  {
    for (auto& kv : attrs.items()) {
      bool known = false;
      for (auto& name : op.attrs) known = known || name == kv.first;
      if (!known) PJ_THROW(Type) << op.name << "() got an unexpected attribute '" << kv.first << "'";
    }
  }
  TraceContext* const tracer = trace_context();
  Tensors out = tracer            ? tracer->record(op, in, attrs)
                : trace::ops_on() ? run_op_profiled(op, in, attrs)
                                  : run_op(op, in, attrs);
  if (tape_active()) tape_record_op(op, in, attrs, out);
  return out;
}

namespace {
bool any_storage_only(const Metas& ms) {
  for (auto& m : ms)
    if (!is_compute_dtype(m.dtype)) return true;
  return false;
}
Metas metas_of(const Tensors& ts) {
  Metas ms;
  ms.reserve(ts.size());
  for (auto& t : ts) ms.push_back(meta_of(t));
  return ms;
}
Tensor widened(const Tensor& t) { return is_compute_dtype(t.dtype()) ? t : cast(t, compute_dtype(t.dtype())); }

// A `run` op (data-dependent shapes) on storage-only inputs: run on widened inputs, then round
// each output to the dtype inference gives for the real inputs (or, without inference, an output
// in the first input's compute dtype back to that input's dtype).
Tensors run_fn_widened(const OpDef& op, const Tensors& in, const Attrs& attrs) {
  Tensors win;
  for (auto& t : in) win.push_back(widened(t));
  Tensors r = op.run(win, attrs);
  if (op.impure)
    for (size_t k = 0; k < in.size(); ++k)
      if (!win[k].same_storage(in[k])) copy_into(in[k], win[k]);
  if (op.infer) {
    Metas want = op.infer(metas_of(in), attrs);
    for (size_t k = 0; k < r.size() && k < want.size(); ++k)
      if (r[k].dtype() != want[k].dtype) r[k] = cast(r[k], want[k].dtype);
  } else if (!in.empty() && !is_compute_dtype(in[0].dtype())) {
    for (auto& t : r)
      if (t.dtype() == compute_dtype(in[0].dtype())) t = cast(t, in[0].dtype());
  }
  return r;
}
}  // namespace

bool needs_widening(const OpDef& op, const Metas& in, const Metas& out) {
  if (op.storage_dtypes || op.is_view) return false;
  return any_storage_only(in) || any_storage_only(out);
}

Metas widened_metas(const Metas& ms) {
  Metas r = ms;
  for (auto& m : r) m.dtype = compute_dtype(m.dtype);
  return r;
}

void run_widened(const OpDef& op, const TensorsKernel& kernel, const Tensors& in, const Tensors& out) {
  Tensors win, wout;
  win.reserve(in.size());
  wout.reserve(out.size());
  for (auto& t : in) win.push_back(widened(t));
  for (auto& t : out)
    wout.push_back(is_compute_dtype(t.dtype()) ? t : Tensor::empty(t.shape(), compute_dtype(t.dtype())));
  kernel(win, wout);
  for (size_t k = 0; k < out.size(); ++k)
    if (!wout[k].same_storage(out[k])) copy_into(out[k], wout[k]);
  if (op.impure)  // an in-place update (batch_norm's running statistics) went to the widened copy
    for (size_t k = 0; k < in.size(); ++k)
      if (!win[k].same_storage(in[k])) copy_into(in[k], win[k]);
}

Tensors run_op(const OpDef& op, const Tensors& in, const Attrs& attrs) {
  for (auto& t : in)
    PJ_CHECK(!t.is_symbolic()) << op.name << ": symbolic tensor reached a kernel outside capture";
  if (op.run) {
    if (!op.storage_dtypes && !op.is_view)
      for (auto& t : in)
        if (!is_compute_dtype(t.dtype())) return run_fn_widened(op, in, attrs);
    return op.run(in, attrs);
  }
  PJ_CHECK(op.infer && op.kernel) << "op '" << op.name << "' has neither run nor infer+kernel";
  Metas ms = metas_of(in);
  Metas outs = op.infer(ms, attrs);
  Tensors out;
  out.reserve(outs.size());
  for (auto& m : outs) out.push_back(Tensor::empty(m.shape, m.dtype));
  if (needs_widening(op, ms, outs))
    run_widened(op, [&](const Tensors& a, const Tensors& b) { op.kernel(a, attrs, b); }, in, out);
  else
    op.kernel(in, attrs, out);
  return out;
}

Tensor call_op1(const OpDef& op, const Tensors& in, const Attrs& attrs) {
  Tensors out = call_op(op, in, attrs);
  PJ_CHECK(out.size() == 1) << op.name << " has " << out.size() << " outputs";
  return out[0];
}

Tensor call_eager(const OpDef& op, absl::Span<const Tensor> in) {
  Tensor out;
  // (a recorder sees every call; the count is checked as call_op checks it)
  if (op.eager && !trace_context() && !trace::ops_on() && !tape_active() && static_cast<int>(in.size()) == op.num_inputs &&
      op.eager(in, &out))
    return out;
  return call_op1(op, Tensors(in.begin(), in.end()));
}

Tensor call_op1(const std::string& name, const Tensors& in, const Attrs& attrs) {
  return call_op1(get_op(name), in, attrs);
}

}  // namespace pj
