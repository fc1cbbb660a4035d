#include "kernels/fused.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "kernels/fused_math.h"
#include "kernels/loops.h"

namespace pj {

const char* fused_op_name(FusedOp op) {
  switch (op) {
#define PJ_X(name, n) case FusedOp::name: return #name;
    PJ_FUSED_OPS(PJ_X)
#undef PJ_X
  }
  return "?";
}

int fused_op_arity(FusedOp op) {
  switch (op) {
#define PJ_X(name, n) case FusedOp::name: return n;
    PJ_FUSED_OPS(PJ_X)
#undef PJ_X
  }
  return 0;
}

bool fused_op_from_name(const std::string& name, FusedOp* op) {
#define PJ_X(n, k)  \
  if (name == #n) { \
    *op = FusedOp::n; \
    return true;    \
  }
  PJ_FUSED_OPS(PJ_X)
#undef PJ_X
  return false;
}

namespace {

// Shortest text that reads back as the same float.
std::string float_text(float v) {
  char buf[32];
  for (int prec = 6; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace

std::string FusedProgram::to_string() const {
  std::ostringstream os;
  os << "in=" << num_inputs;
  for (int k = 0; k < num_inputs; ++k)
    if (input_dtype(k) != DType::Float32) os << "; r" << k << ":" << dtype_name(input_dtype(k));
  int r = num_inputs;
  for (const FusedInstr& ins : code) {
    os << "; r" << r++ << "=" << fused_op_name(ins.op) << "(r" << ins.a;
    if (fused_op_arity(ins.op) == 2) os << ",r" << ins.b;
    if (ins.has_lo) os << ",lo=" << float_text(ins.lo);
    if (ins.has_hi) os << ",hi=" << float_text(ins.hi);
    os << ")";
  }
  os << "; out=(";
  for (size_t k = 0; k < outputs.size(); ++k) os << (k ? "," : "") << "r" << outputs[k];
  os << ")";
  return os.str();
}

namespace {

class ProgramParser {
 public:
  explicit ProgramParser(const std::string& s) : s_(s) {}

  FusedProgram parse() {
    FusedProgram p;
    expect("in=");
    p.num_inputs = static_cast<int>(number());
    while (skip("; ")) {
      if (skip("out=(")) {
        while (!skip(")")) {
          if (!p.outputs.empty()) expect(",");
          p.outputs.push_back(reg(p.num_registers()));
        }
        if (pos_ != s_.size()) fail("text after the outputs");
        if (p.outputs.empty()) fail("no outputs");
        return p;
      }
      int r = reg(std::numeric_limits<int>::max());
      if (skip(":")) {  // an input's dtype, before the code
        size_t end = std::min(s_.find(';', pos_), s_.size());
        DType t;
        if (r >= p.num_inputs || !p.code.empty()) fail("only inputs are declared, before the code");
        if (!dtype_from_name(s_.substr(pos_, end - pos_), &t) || !fused_input_dtype(t)) fail("input dtype");
        if (p.input_dtypes.empty()) p.input_dtypes.assign(p.num_inputs, DType::Float32);
        p.input_dtypes[r] = t;
        pos_ = end;
        continue;
      }
      if (r != p.num_registers()) fail("registers must be defined in order");
      expect("=");
      size_t open = s_.find('(', pos_);
      if (open == std::string::npos) fail("missing '('");
      FusedInstr ins;
      if (!fused_op_from_name(s_.substr(pos_, open - pos_), &ins.op)) fail("unknown op");
      pos_ = open + 1;
      ins.a = reg(r);
      if (fused_op_arity(ins.op) == 2) {
        expect(",");
        ins.b = reg(r);
      }
      while (skip(",")) {
        if (skip("lo=")) {
          ins.has_lo = true;
          ins.lo = real();
        } else if (skip("hi=")) {
          ins.has_hi = true;
          ins.hi = real();
        } else {
          fail("unknown operand");
        }
      }
      expect(")");
      if (ins.op == FusedOp::clamp && !ins.has_lo && !ins.has_hi) fail("clamp without bounds");
      p.code.push_back(ins);
    }
    fail("missing out=(...)");
    return p;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    PJ_THROW(Value) << "bad fused program at offset " << pos_ << " (" << what << "): " << s_;
  }
  bool skip(const char* lit) {
    size_t n = std::strlen(lit);
    if (s_.compare(pos_, n, lit) != 0) return false;
    pos_ += n;
    return true;
  }
  void expect(const char* lit) {
    if (!skip(lit)) fail("unexpected text");
  }
  int64_t number() {
    size_t start = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (start == pos_ || pos_ - start > 6) fail("expected a number");
    return std::stoll(s_.substr(start, pos_ - start));
  }
  int reg(int limit) {
    expect("r");
    int64_t r = number();
    if (r >= limit) fail("register used before it is defined");
    return static_cast<int>(r);
  }
  float real() {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    float v = std::strtof(begin, &end);
    if (end == begin) fail("expected a number");
    pos_ += end - begin;
    return v;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

FusedProgram FusedProgram::parse(const std::string& text) { return ProgramParser(text).parse(); }

// ---- the scalar reference --------------------------------------------------------------------

namespace {

float eval1(const FusedInstr& ins, float a, float b) {
  switch (ins.op) {
    case FusedOp::add: return a + b;
    case FusedOp::sub: return a - b;
    case FusedOp::mul: return a * b;
    case FusedOp::div: return a / b;
    case FusedOp::maximum: return fused_math::nan_max(a, b);
    case FusedOp::minimum: return fused_math::nan_min(a, b);
    case FusedOp::neg: return -a;
    case FusedOp::abs: return std::abs(a);
    case FusedOp::square: return a * a;
    case FusedOp::relu: return fused_math::relu(a);
    case FusedOp::relu_grad: return b > 0.f ? a : 0.f;  // a's bits, or +0
    case FusedOp::sqrt: return std::sqrt(a);
    case FusedOp::rsqrt: return 1.f / std::sqrt(a);
    case FusedOp::reciprocal: return 1.f / a;
    case FusedOp::floor: return std::floor(a);
    case FusedOp::ceil: return std::ceil(a);
    case FusedOp::round: return std::nearbyint(a);
    case FusedOp::clamp:
      if (std::isnan(a)) return a;
      if (ins.has_lo && a < ins.lo) a = ins.lo;
      if (ins.has_hi && a > ins.hi) a = ins.hi;
      return a;
    // The machine code's approximations, lane for lane (and what eager float32 runs).
    case FusedOp::exp: return fused_math::exp(a);
    case FusedOp::log: return fused_math::log(a);
    case FusedOp::tanh: return fused_math::tanh(a);
    case FusedOp::sigmoid: return fused_math::sigmoid(a);
    case FusedOp::silu: return fused_math::silu(a);
    case FusedOp::erf: return fused_math::erf(a);
    case FusedOp::gelu: return fused_math::gelu(a);
    case FusedOp::gelu_tanh: return fused_math::gelu_tanh(a);
  }
  return a;
}

}  // namespace

void fused_eval(const FusedProgram& prog, float* regs) {
  int r = prog.num_inputs;
  for (const FusedInstr& ins : prog.code) regs[r++] = eval1(ins, regs[ins.a], ins.b >= 0 ? regs[ins.b] : 0.f);
}

namespace {

// Interpreter rows: the program is found through a thread-local set by FusedKernel::run (row
// functions are plain pointers, like the compiled ones).
thread_local const FusedProgram* t_prog = nullptr;
thread_local uint32_t t_mask = 0;

void interpret_row(int64_t n, char* const* ptrs) {
  const FusedProgram& p = *t_prog;
  float regs[256];
  std::vector<float> big;
  float* rg = regs;
  if (p.num_registers() > 256) {
    big.resize(p.num_registers());
    rg = big.data();
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < p.num_inputs; ++k) {
      const int64_t at = (t_mask >> k) & 1 ? 0 : i;
      switch (p.input_dtype(k)) {
        case DType::Int32: rg[k] = static_cast<float>(reinterpret_cast<const int32_t*>(ptrs[k])[at]); break;
        case DType::Float64: rg[k] = static_cast<float>(reinterpret_cast<const double*>(ptrs[k])[at]); break;
        default: rg[k] = reinterpret_cast<const float*>(ptrs[k])[at];
      }
    }
    fused_eval(p, rg);
    for (size_t o = 0; o < p.outputs.size(); ++o) reinterpret_cast<float*>(ptrs[p.num_inputs + o])[i] = rg[p.outputs[o]];
  }
}

// Runs one row: the compiled function, or the interpreter when there is none.
void run_row(FusedRowFn fn, const FusedProgram* prog, uint32_t mask, int64_t n, char* const* ptrs) {
  if (fn) {
    fn(n, ptrs);
    return;
  }
  t_prog = prog;
  t_mask = mask;
  interpret_row(n, ptrs);
}

FusedCompiler g_compiler = nullptr;
const char* g_compiler_name = "interpreter";

std::atomic<bool> g_jit_on{[] {
  const char* e = std::getenv("PIJIT_FUSED_JIT");
  return !(e && std::strcmp(e, "0") == 0);
}()};

bool jit_enabled() { return g_jit_on.load(std::memory_order_relaxed) && g_compiler != nullptr; }

struct CodeSize {
  size_t bytes = 0;
  bool movable = false;
};

struct RowCache {
  std::recursive_mutex mu;  // the compiler notes code sizes while row_fn holds it
  std::unordered_map<FusedRowFn, CodeSize> sizes;
  std::unordered_map<std::string, std::shared_ptr<const FusedKernel>> kernels;
  // Code another process compiled (preload_fused_codes), by preload_key: loaded on first need.
  std::unordered_map<std::string, std::string> preloaded;
};

std::string preload_key(const std::string& program, uint32_t mask) {
  return program + '\0' + std::to_string(mask);
}

FusedCodeLoader g_loader = nullptr;
std::atomic<int64_t> g_compiled{0}, g_loaded{0};
// Recorders alive on any thread: row_fn's hot path reads this, not the thread-local.
std::atomic<int> g_recorders{0};
thread_local FusedCodeRecorder* t_recorder = nullptr;
RowCache& row_cache() {
  static RowCache* c = new RowCache;  // never destroyed: compiled code outlives static teardown
  return *c;
}

}  // namespace

void set_fused_compiler(FusedCompiler c, const char* name) {
  g_compiler = c;
  g_compiler_name = name;
}

bool set_fused_jit(bool on) { return g_jit_on.exchange(on); }

const char* fused_compiler_name() { return jit_enabled() ? g_compiler_name : "interpreter"; }

void note_fused_code_size(FusedRowFn fn, size_t bytes, bool movable) {
  RowCache& c = row_cache();
  std::lock_guard<std::recursive_mutex> lock(c.mu);
  c.sizes[fn] = {bytes, movable};
}

void set_fused_code_loader(FusedCodeLoader l) { g_loader = l; }

FusedCodeRecorder::FusedCodeRecorder() : outer_(t_recorder) {
  t_recorder = this;
  g_recorders.fetch_add(1, std::memory_order_relaxed);
}

FusedCodeRecorder::~FusedCodeRecorder() {
  t_recorder = outer_;
  g_recorders.fetch_sub(1, std::memory_order_relaxed);
}

void FusedCodeRecorder::note(const std::string& program, uint32_t mask, FusedRowFn fn) {
  for (const FusedCode& c : codes_)
    if (c.mask == mask && c.program == program) return;
  RowCache& c = row_cache();
  std::lock_guard<std::recursive_mutex> lock(c.mu);
  auto it = c.sizes.find(fn);
  if (it == c.sizes.end() || !it->second.movable) return;
  codes_.push_back({program, mask, std::string(reinterpret_cast<const char*>(fn), it->second.bytes)});
}

FusedCodeStats fused_code_stats() {
  return {g_compiled.load(std::memory_order_relaxed), g_loaded.load(std::memory_order_relaxed)};
}

int64_t preload_fused_codes(const std::string& backend, std::vector<FusedCode> codes) {
  if (!jit_enabled() || !g_loader || backend != g_compiler_name) return 0;
  RowCache& c = row_cache();
  int64_t taken = 0;
  for (FusedCode& k : codes) {
    if (k.bytes.empty()) continue;
    std::shared_ptr<const FusedKernel> made;  // (one this process has a row function for keeps it)
    {
      std::lock_guard<std::recursive_mutex> lock(c.mu);
      auto it = c.kernels.find(k.program);
      if (it != c.kernels.end()) made = it->second;
    }
    if (made && made->has_row_fn(k.mask)) continue;  // (its lock outside the cache's: row_fn's order)
    std::lock_guard<std::recursive_mutex> lock(c.mu);
    taken += c.preloaded.emplace(preload_key(k.program, k.mask), std::move(k.bytes)).second;
  }
  return taken;
}

FusedKernel::FusedKernel(FusedProgram prog) : prog_(std::move(prog)), key_(prog_.to_string()) {
  PJ_CHECK(prog_.num_inputs <= kMaxFusedInputs && prog_.outputs.size() <= static_cast<size_t>(kMaxFusedOperands))
      << "fused program with too many operands: " << key_;
}

bool FusedKernel::has_row_fn(uint32_t mask) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [m, f] : fns_)
    if (m == mask) return true;
  return false;
}

FusedRowFn FusedKernel::row_fn(uint32_t mask) const {
  if (!jit_enabled()) return nullptr;
  FusedRowFn fn = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool found = false;
    for (const auto& [m, f] : fns_)
      if (m == mask) {
        fn = f;
        found = true;
        break;
      }
    if (!found) {
      RowCache& c = row_cache();  // kernels of one text are one object (fused_kernel): compiled once
      std::lock_guard<std::recursive_mutex> global(c.mu);
      auto pre = c.preloaded.empty() ? c.preloaded.end() : c.preloaded.find(preload_key(key_, mask));
      if (pre != c.preloaded.end()) {  // (another process compiled it: ~1 us instead of ~0.2 ms)
        fn = g_loader(pre->second);
        if (fn) {
          c.sizes[fn] = {pre->second.size(), true};
          g_loaded.fetch_add(1, std::memory_order_relaxed);
        }
        c.preloaded.erase(pre);
      }
      if (!fn) {
        fn = g_compiler(prog_, mask);
        g_compiled.fetch_add(1, std::memory_order_relaxed);
      }
      fns_.emplace_back(mask, fn);
    }
  }
  if (g_recorders.load(std::memory_order_relaxed) != 0 && t_recorder && fn) t_recorder->note(key_, mask, fn);
  return fn;
}

void FusedKernel::check_dtypes(absl::Span<const Tensor> ins, absl::Span<const Tensor> outs) const {
  for (size_t k = 0; k < ins.size(); ++k)
    PJ_CHECK(ins[k].dtype() == prog_.input_dtype(static_cast<int>(k)))
        << "fused kernel input " << k << " is " << dtype_name(ins[k].dtype()) << ": " << key_;
  for (const Tensor& o : outs) PJ_CHECK(o.dtype() == DType::Float32) << "fused kernel output " << dtype_name(o.dtype());
}

void FusedKernel::run(absl::Span<const Tensor> ins, absl::Span<const Tensor> outs) const {
  PJ_CHECK(static_cast<int>(ins.size()) == prog_.num_inputs && outs.size() == prog_.outputs.size())
      << "fused kernel called with " << ins.size() << " inputs and " << outs.size() << " outputs: " << key_;
  check_dtypes(ins, outs);
  const Shape& shape = outs[0].shape();
  if (outs[0].numel() == 0) return;
  constexpr int N = kMaxFusedOperands;
  const int nin = prog_.num_inputs, nout = static_cast<int>(outs.size());
  const int64_t numel = outs[0].numel();
  // The common case: every input is contiguous of the output's size, or one element. Rows are
  // then ranges of one flat loop (no iterator to build: a 3x3 graph's launch is mostly this).
  {
    uint32_t mask = 0;
    bool flat = true;
    char* ptrs[kMaxFusedInputs + kMaxFusedOperands];
    for (int k = 0; k < nin && flat; ++k) {
      ptrs[k] = static_cast<char*>(ins[k].raw_data());
      if (ins[k].numel() == 1) mask |= 1u << k;
      else flat = ins[k].numel() == numel && ins[k].is_contiguous();
    }
    for (int o = 0; o < nout && flat; ++o) {
      ptrs[nin + o] = static_cast<char*>(outs[o].raw_data());
      flat = outs[o].numel() == numel && outs[o].is_contiguous();
    }
    if (flat) {
      FusedRowFn fn = row_fn(mask);
      const FusedProgram* prog = &prog_;
      parallel_for(numel, kParallelGrain, [&](int64_t b, int64_t e) {
        char* p[kMaxFusedInputs + kMaxFusedOperands];
        for (int k = 0; k < nin + nout; ++k)
          p[k] = ptrs[k] + ((k < nin && ((mask >> k) & 1)) ? 0 : b * (k < nin ? itemsize(prog->input_dtype(k)) : 4));
        run_row(fn, prog, mask, e - b, p);
      });
      return;
    }
  }
  // Otherwise one-element inputs are read once per row (mask bit set) and stay out of the
  // iteration; the others and the outputs are iterated, their dims coalesced.
  uint32_t mask = 0;
  char* fixed[kMaxFusedInputs + kMaxFusedOperands] = {};
  int slot[N];  // iterated operand k -> its place in the row's pointer array
  std::array<char*, N> base{};
  std::array<Shape, N> strides;
  std::vector<Tensor> held;  // contiguous copies of inputs a row cannot read
  int it_n = 0;
  for (int k = 0; k < nin; ++k) {
    const Tensor* t = &ins[k];
    if (t->numel() == 1) {
      mask |= 1u << k;
      fixed[k] = static_cast<char*>(t->raw_data());
      continue;
    }
    Shape st = broadcast_strides(*t, shape);
    int64_t inner = 0;  // the innermost dim that is not 1 decides what a row reads
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d)
      if (shape[d] != 1) {
        inner = st[d];
        break;
      }
    if (inner != 0 && inner != 1) {
      held.push_back(t->as_strided(shape, st, t->offset()).contiguous());
      t = &held.back();
      st = t->strides();
    }
    slot[it_n] = k;
    base[it_n] = static_cast<char*>(t->raw_data());
    strides[it_n++] = byte_strides(st, itemsize(prog_.input_dtype(k)));
  }
  for (int o = 0; o < nout; ++o) {
    PJ_CHECK(outs[o].is_contiguous() && outs[o].shape() == shape) << "fused outputs must be contiguous";
    slot[it_n] = nin + o;
    base[it_n] = static_cast<char*>(outs[o].raw_data());
    strides[it_n++] = byte_strides(outs[o].strides(), 4);
  }
  PJ_CHECK(it_n <= N) << "fused kernel with too many tensor operands: " << key_;
  for (int k = it_n; k < N; ++k) strides[k] = Shape(shape.size(), 0);
  ElementwiseIter<N> it(shape, base, strides);
  for (int k = 0; k < it_n; ++k)
    if (slot[k] < nin && it.inner_stride(k) == 0) mask |= 1u << slot[k];  // broadcast along the row
  FusedRowFn fn = row_fn(mask);
  const FusedProgram* prog = &prog_;
  it.run([&](const std::array<char*, N>& p, const std::array<int64_t, N>&, int64_t n) {
    char* ptrs[kMaxFusedInputs + kMaxFusedOperands];
    std::memcpy(ptrs, fixed, sizeof(char*) * (nin + nout));
    for (int k = 0; k < it_n; ++k) ptrs[slot[k]] = p[k];
    run_row(fn, prog, mask, n, ptrs);
  });
}

namespace {

// How a fused reduction's input walks one row of the reduced dims.
enum class RowRead { fixed, repeat, walk };  // one element / one value per row / contiguous

// Element offset of row q of the kept dims [0, nk) given element strides `st` over `shape`.
int64_t row_offset(const Shape& shape, const Shape& st, int nk, int64_t q) {
  int64_t off = 0;
  for (int d = nk - 1; d >= 0 && q; --d) {
    off += (q % shape[d]) * st[d];
    q /= shape[d];
  }
  return off;
}

}  // namespace

bool FusedKernel::run_reduce(absl::Span<const Tensor> ins, absl::Span<const Tensor> outs, ReduceOp op,
                             int first_reduced, const Tensor& reduced) const {
  const int nin = prog_.num_inputs, nfull = static_cast<int>(outs.size());
  PJ_CHECK(static_cast<int>(ins.size()) == nin && nfull + 1 == static_cast<int>(prog_.outputs.size()))
      << "fused reduction called with " << ins.size() << " inputs and " << outs.size() << " outputs: " << key_;
  check_dtypes(ins, outs);
  PJ_CHECK(reduced.dtype() == DType::Float32) << "fused reduction into " << dtype_name(reduced.dtype());
  Shape shape;
  for (const Tensor& t : ins) shape = broadcast_shapes(shape, t.shape());
  const int nd = static_cast<int>(shape.size());
  PJ_CHECK(first_reduced >= 0 && first_reduced <= nd) << "fused reduction from dim " << first_reduced;
  int64_t rows = 1, n = 1;
  for (int d = 0; d < nd; ++d) (d < first_reduced ? rows : n) *= shape[d];

  std::vector<RowRead> how(nin, RowRead::walk);
  std::vector<Shape> st(nin);
  uint32_t mask = 0;
  bool by_rows = reduced.is_contiguous() && reduced.numel() == rows;
  for (int k = 0; k < nin && by_rows; ++k) {
    if (ins[k].numel() == 1) {
      how[k] = RowRead::fixed;
      mask |= 1u << k;
      continue;
    }
    st[k] = broadcast_strides(ins[k], shape);
    bool walk = true, repeat = true;
    int64_t expect = 1;
    for (int d = nd - 1; d >= first_reduced; --d) {
      if (shape[d] == 1) continue;
      walk = walk && st[k][d] == expect;
      repeat = repeat && st[k][d] == 0;
      expect *= shape[d];
    }
    if (repeat) {
      how[k] = RowRead::repeat;
      mask |= 1u << k;
    } else {
      by_rows = walk;
    }
  }
  for (const Tensor& o : outs) by_rows = by_rows && o.is_contiguous() && o.shape() == shape;
  if (by_rows) {
    FusedRowFn fn = row_fn(mask);
    const FusedProgram* prog = &prog_;
    auto produce = [&](int64_t q, int64_t r0, int64_t r1, float* buf) {
      char* p[kMaxFusedInputs + kMaxFusedOperands];
      for (int k = 0; k < nin; ++k) {
        char* base = static_cast<char*>(ins[k].raw_data());
        if (how[k] == RowRead::fixed) p[k] = base;
        else
          p[k] = base + itemsize(prog_.input_dtype(k)) *
                            (row_offset(shape, st[k], first_reduced, q) + (how[k] == RowRead::walk ? r0 : 0));
      }
      for (int o = 0; o < nfull; ++o) p[nin + o] = static_cast<char*>(outs[o].raw_data()) + 4 * (q * n + r0);
      p[nin + nfull] = reinterpret_cast<char*>(buf);
      run_row(fn, prog, mask, r1 - r0, p);
    };
    if (reduce_produced_rows(op, reduced.data<float>(), rows, n, produce)) return true;
  }
  // The plain way: store the value, reduce it as the eager op does.
  Tensor value = Tensor::empty(shape, DType::Float32);
  std::vector<Tensor> all(outs.begin(), outs.end());
  all.push_back(value);
  run(ins, all);
  std::vector<int> axes;
  for (int d = first_reduced; d < nd; ++d) axes.push_back(d);
  reduce_into(op, reduced, value, axes);
  return false;
}

std::shared_ptr<const FusedKernel> fused_kernel(const std::string& text) {
  RowCache& c = row_cache();
  {
    std::lock_guard<std::recursive_mutex> lock(c.mu);
    auto it = c.kernels.find(text);
    if (it != c.kernels.end()) return it->second;
  }
  auto k = std::make_shared<const FusedKernel>(FusedProgram::parse(text));
  std::lock_guard<std::recursive_mutex> lock(c.mu);
  // Under its canonical text too (one kernel however its program was spelled): the recorder and
  // preload_fused_codes name kernels by it.
  auto made = c.kernels.emplace(k->key(), k).first->second;
  return c.kernels.emplace(text, made).first->second;
}

namespace {
FusedAsmPrinter g_asm_printer = nullptr;
}  // namespace

void set_fused_asm_printer(FusedAsmPrinter p) { g_asm_printer = p; }

std::string fused_kernel_asm(const std::string& text, uint32_t mask) {
  if (!g_asm_printer || !jit_enabled()) return {};
  return g_asm_printer(fused_kernel(text)->program(), mask);
}

std::string fused_kernel_bytes(const std::string& text, uint32_t mask) {
  FusedRowFn fn = fused_kernel(text)->row_fn(mask);
  if (!fn) return {};
  RowCache& c = row_cache();
  std::lock_guard<std::recursive_mutex> lock(c.mu);
  auto it = c.sizes.find(fn);
  if (it == c.sizes.end()) return {};
  return std::string(reinterpret_cast<const char*>(fn), it->second.bytes);
}

}  // namespace pj
