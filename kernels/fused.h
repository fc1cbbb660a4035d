// Fused elementwise kernels: a group of float32 elementwise ops run as one loop.
//
// The graph compiler's fusion pass (graph/passes) turns a connected group of elementwise nodes
// into one `fused_elementwise` node whose `program` attribute is the group's straight-line code in
// a stable text form:
//
//   in=2; r2=mul(r0,r1); r3=add(r2,r1); r4=relu(r3); out=(r4,r2)
//
// Registers r0..r(in-1) are the node's inputs (broadcast to the output shape); every instruction
// defines the next register; `out` names the registers written to the node's outputs, in order.
// Everything is float32, except that an input may be declared Int32 or Float64 (`in=2; r1:Int32;
// ...`, an explicit cast fused at the loop's edge): it is converted to float32 as it is loaded, as
// the eager cast converts (round to nearest). The arithmetic is the eager kernels' bit for bit (no contraction into
// FMA, NaN handled as numpy does); exp, log, tanh, sigmoid, silu and erf (so gelu) use vector polynomial
// approximations whose maximum error is documented below and checked by tests against the eager
// kernels.
//
// A machine-code backend (codegen/asm, AsmJit) registers itself with set_fused_compiler; without
// one (or with PIJIT_FUSED_JIT=0) a scalar interpreter of the same program runs. Compiled row
// functions are cached by the program's text and which inputs are scalars, not per graph.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "kernels/reduce.h"
#include "kernels/tensor.h"

namespace pj {

// name, number of register operands
#define PJ_FUSED_OPS(X) \
  X(add, 2)             \
  X(sub, 2)             \
  X(mul, 2)             \
  X(div, 2)             \
  X(maximum, 2)         \
  X(minimum, 2)         \
  X(neg, 1)             \
  X(abs, 1)             \
  X(square, 1)          \
  X(relu, 1)            \
  X(sqrt, 1)            \
  X(rsqrt, 1)           \
  X(reciprocal, 1)      \
  X(floor, 1)           \
  X(ceil, 1)            \
  X(round, 1)           \
  X(clamp, 1)           \
  X(exp, 1)             \
  X(log, 1)             \
  X(tanh, 1)            \
  X(sigmoid, 1)         \
  X(silu, 1)            \
  X(erf, 1)             \
  X(gelu, 1)            \
  X(gelu_tanh, 1)       \
  X(relu_grad, 2)

enum class FusedOp : uint8_t {
#define PJ_X(name, n) name,
  PJ_FUSED_OPS(PJ_X)
#undef PJ_X
};

// Maximum error of the approximated ops against the correctly rounded result, in units in the
// last place of float32 (the eager kernels use libm or oneDNN; tests hold the fused ones to this).
// exp: for results >= FLT_MIN (below that, absolute error <= FLT_MIN); log: for x > 0;
// tanh, sigmoid, silu, erf: relative error, any finite x. gelu and gelu_tanh are their formulas
// evaluated in float32 with those (as PyTorch does): within kFusedMaxUlp for x >= 0; for x < 0,
// where 1 + erf (1 + tanh) cancels, the absolute error stays under 4 ulp of x/2 (fused_test.cc).
constexpr int kFusedMaxUlp = 4;

const char* fused_op_name(FusedOp op);
int fused_op_arity(FusedOp op);
// nullptr-like false when `name` is not a fusable op (the fusion pass asks with eager op names).
bool fused_op_from_name(const std::string& name, FusedOp* op);
// The dtypes an input may have (converted to float32 on load).
inline bool fused_input_dtype(DType t) { return t == DType::Float32 || t == DType::Int32 || t == DType::Float64; }

struct FusedInstr {
  FusedOp op;
  int a = -1, b = -1;      // operand registers
  float lo = 0, hi = 0;    // clamp bounds
  bool has_lo = false, has_hi = false;
};

struct FusedProgram {
  int num_inputs = 0;
  std::vector<DType> input_dtypes;  // per input: Float32, or Int32/Float64 converted on load
  std::vector<FusedInstr> code;
  std::vector<int> outputs;  // registers

  DType input_dtype(int k) const { return input_dtypes.empty() ? DType::Float32 : input_dtypes[k]; }

  int num_registers() const { return num_inputs + static_cast<int>(code.size()); }
  std::string to_string() const;
  // Raises pj::Error (ValueError) naming the problem on malformed text.
  static FusedProgram parse(const std::string& text);
};

// A row of the loop: ptrs[0..num_inputs) are the inputs (contiguous of their dtype, or one element
// read for every element when bit k of the compiled scalar mask is set), then the outputs
// (contiguous float32).
using FusedRowFn = void (*)(int64_t n, char* const* ptrs);
// Compiles `prog` for the given scalar-input mask; nullptr when it cannot (the interpreter runs).
using FusedCompiler = FusedRowFn (*)(const FusedProgram& prog, uint32_t scalar_mask);
void set_fused_compiler(FusedCompiler c, const char* name);
const char* fused_compiler_name();  // "asmjit-avx512", "asmjit-avx2", or "interpreter"
// Machine code on (default unless PIJIT_FUSED_JIT=0) or off (the interpreter); returns the old
// setting. For tests and benchmarks that compare the two.
bool set_fused_jit(bool on);

// The most operands one fused kernel takes: inputs of more than one element plus outputs (what it
// iterates), and inputs in all (one-element ones are read once, outside the loop).
constexpr int kMaxFusedOperands = 12;
constexpr int kMaxFusedInputs = 32;

// A program ready to run: the row functions it needs are compiled on first use and cached.
class FusedKernel {
 public:
  explicit FusedKernel(FusedProgram prog);
  const FusedProgram& program() const { return prog_; }
  const std::string& key() const { return key_; }  // the program's canonical text
  // outs are contiguous float32 of the broadcast shape of `ins`; any of them may be one of `ins`
  // exactly (same storage, offset and shape): each element is read before it is written.
  // (spans: a caller's braced list `{a, b}` allocates nothing; an eager op's launch is mostly this)
  void run(absl::Span<const Tensor> ins, absl::Span<const Tensor> outs) const;
  // A trailing reduction fused into the loop: the program's last output is not stored but reduced,
  // reduced[row] = op(value[row, :]) over the broadcast shape's dims from `first_reduced` on (sum,
  // mean, max or min), block by block as the loop computes it (reduce_produced_rows: bit-equal to
  // reduce_into on the stored value). `outs` are the other outputs, stored as run() stores them.
  // Inputs a row cannot walk (broadcast within the reduced dims), or a reduction reduce_into does
  // not do by rows, take the plain way: the value is stored to a temporary and reduce_into runs.
  // Returns whether the value was reduced as computed (false: the plain way).
  bool run_reduce(absl::Span<const Tensor> ins, absl::Span<const Tensor> outs, ReduceOp op, int first_reduced,
                  const Tensor& reduced) const;
  // The row function for a scalar mask (compiled or the interpreter), for tests and dumps.
  FusedRowFn row_fn(uint32_t scalar_mask) const;
  // Whether row_fn(scalar_mask) has been made (compiled, loaded, or the interpreter chosen).
  bool has_row_fn(uint32_t scalar_mask) const;

 private:
  void check_dtypes(absl::Span<const Tensor> ins, absl::Span<const Tensor> outs) const;

  FusedProgram prog_;
  std::string key_;
  mutable std::mutex mu_;
  mutable std::vector<std::pair<uint32_t, FusedRowFn>> fns_;  // compiled row functions by scalar mask
};

std::shared_ptr<const FusedKernel> fused_kernel(const std::string& program_text);

// Machine code of the compiled row function for `mask`, as bytes (empty for the interpreter):
// `pijit.explain`/dumps write it out for a disassembler.
std::string fused_kernel_bytes(const std::string& program_text, uint32_t scalar_mask);
// The row function for `mask` as assembly text (the backend compiles it once more with a logger;
// nothing is added to the cache): PIJIT_LOGS=codegen and the dump folders. Empty for the interpreter.
std::string fused_kernel_asm(const std::string& program_text, uint32_t scalar_mask);
using FusedAsmPrinter = std::string (*)(const FusedProgram& prog, uint32_t scalar_mask);
void set_fused_asm_printer(FusedAsmPrinter p);
// Records the size of a compiled row function (the backend calls it), and whether its bytes run
// at any address (no relocation: what the compile cache may store).
void note_fused_code_size(FusedRowFn fn, size_t bytes, bool movable = false);

// ---- compiled row functions kept across processes (the compile cache) -----------------------------
// A row function's machine code as the backend made it, for the program text and scalar mask.
struct FusedCode {
  std::string program;
  uint32_t mask = 0;
  std::string bytes;
};
// Puts `bytes` in executable memory as a row function, or nullptr; the backend sets it.
using FusedCodeLoader = FusedRowFn (*)(const std::string& bytes);
void set_fused_code_loader(FusedCodeLoader l);
// While one lives on this thread, every row function a kernel hands out (compiled then or before)
// whose code is movable is noted, once each: what a graph's launch ran.
class FusedCodeRecorder {
 public:
  FusedCodeRecorder();
  ~FusedCodeRecorder();
  FusedCodeRecorder(const FusedCodeRecorder&) = delete;
  FusedCodeRecorder& operator=(const FusedCodeRecorder&) = delete;
  const std::vector<FusedCode>& codes() const { return codes_; }
  void note(const std::string& program, uint32_t mask, FusedRowFn fn);

 private:
  FusedCodeRecorder* outer_;
  std::vector<FusedCode> codes_;
};
// Code another process compiled for `backend` (fused_compiler_name()): a kernel that needs that
// program and mask loads it instead of compiling. Ignored for another backend, with machine code
// off, and where this process made that row function already. Returns how many codes it took.
int64_t preload_fused_codes(const std::string& backend, std::vector<FusedCode> codes);
// Row functions this process compiled, and loaded from preloaded code.
struct FusedCodeStats {
  int64_t compiled = 0, loaded = 0;
};
FusedCodeStats fused_code_stats();

// The scalar reference: evaluates `prog` on one element (inputs in `regs[0..num_inputs)`).
void fused_eval(const FusedProgram& prog, float* regs);

}  // namespace pj
