// The machine-code backend of fused elementwise kernels (kernels/fused.h): one AVX2+FMA loop per
// (program, scalar-input mask), emitted with AsmJit's Compiler (virtual registers, its register
// allocator spills when a program needs more than 16 ymm registers).
//
// Row ABI: void row(int64_t n, char* const* ptrs): ptrs = inputs then outputs. The main loop does
// 8 floats per iteration; the remaining 1..7 run once more through masked loads and stores
// (vmaskmovps; vmaskmovpd for Float64 inputs), so no element is read or written outside the row.
// Int32 and Float64 inputs are converted as they are loaded (vcvtdq2ps, vcvtpd2ps: round to
// nearest, as the eager cast). Every input of an iteration is
// loaded before any output is stored: an output may alias an input element for element.
//
// Exact ops are the eager kernels' IEEE operations one to one (FMA only inside approximations).
// Approximations, each within kFusedMaxUlp (tests/cpp/fused_test.cc measures them); their scalar
// twins in kernels/fused_math.h perform the same operations with the same constants:
//   exp(x)   n = round(x/ln2), r = x - n*ln2 (two-part ln2), degree-7 Taylor polynomial of e^r,
//            scaled by 2^n in two steps (so results underflow gradually and overflow to inf);
//            x clamped to [-104, 89] first, NaN kept.
//   tanh(x)  |x| < 0.55: x + x^3 P(x^2) (degree 5, least-squares fit, 0.8 ulp); else
//            sign(x) (1 - 2/(e^{2|x|} + 1)).
//   sigmoid  e = e^{-|x|}: 1/(1+e) for x >= 0, e/(1+e) below (the eager kernel's formulas).
//   log(x)   x = m 2^k with m in [sqrt(1/2), sqrt(2)), s = (m-1)/(m+1),
//            log m = 2 atanh s = 2s + s (s^2 (2/3 + 2/5 s^2 + ... + 2/11 s^8)); subnormals scaled
//            by 2^23 first; 0 -> -inf, negative -> NaN, inf -> inf.
//   erf(x)   |x| < 0.5: x P(x^2) (Taylor, degree 13); else sign(x) (1 - e^{-x^2} R(1/(1 + |x|/2)))
//            with |x| clamped to 4 and R a degree-8 fit of erfc(x) e^{x^2}.
//   gelu, gelu_tanh: x/2 (1 + erf(x/sqrt 2)), x/2 (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))).
#include <asmjit/x86.h>

#include <cmath>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "kernels/fused.h"
#include "kernels/fused_math.h"

namespace pj::codegen {
namespace {

using namespace asmjit;
namespace fm = pj::fused_math;

JitRuntime& jit_runtime() {
  static JitRuntime* rt = new JitRuntime;  // never destroyed: kernels live as long as the process
  return *rt;
}

struct CollectErrors : ErrorHandler {
  bool failed = false;
  void handleError(asmjit::Error, const char*, BaseEmitter*) override { failed = true; }
};

// vcmpps predicates
constexpr int kEqOQ = 0x00, kLtOQ = 0x11, kUnordQ = 0x03, kGtOQ = 0x1E, kGeOQ = 0x1D;

class RowEmitter {
 public:
  RowEmitter(x86::Compiler& cc, const FusedProgram& prog, uint32_t scalar_mask)
      : cc_(cc), prog_(prog), mask_(scalar_mask) {}

  void emit() {
    FuncNode* fn = cc_.addFunc(FuncSignatureT<void, int64_t, char* const*>());
    x86::Gp n = cc_.newInt64("n"), ptrs = cc_.newIntPtr("ptrs");
    fn->setArg(0, n);
    fn->setArg(1, ptrs);
    // VEX encoding for the register allocator's own moves (without it a ymm spill is a 128-bit
    // SSE move that drops the upper four lanes), and vzeroupper on return for the SSE code after.
    fn->frame().setAvxEnabled();
    fn->frame().setAvxCleanup();
    ptrs_ = ptrs;
    x86::Gp i = cc_.newInt64("i"), end = cc_.newInt64("end");
    Label loop = cc_.newLabel(), tail = cc_.newLabel(), done = cc_.newLabel();
    hoist();
    cc_.xor_(i, i);
    cc_.mov(end, n);
    cc_.sub(end, 8);
    cc_.jl(tail);  // fewer than 8 elements
    cc_.bind(loop);
    body(i, nullptr);
    cc_.add(i, 8);
    cc_.cmp(i, end);
    cc_.jle(loop);
    cc_.bind(tail);
    cc_.cmp(i, n);
    cc_.jge(done);
    {
      // lanes [0, n - i) are live: compare the lane index with the remaining count
      x86::Gp rem = cc_.newInt64();
      cc_.mov(rem, n);
      cc_.sub(rem, i);
      x86::Ymm live = cc_.newYmm(), iota = cc_.newYmm();
      cc_.vmovd(live.xmm(), rem.r32());
      cc_.vpbroadcastd(live, live.xmm());
      static const int32_t lanes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
      cc_.vmovdqu(iota, cc_.newConst(ConstPoolScope::kLocal, lanes, 32));
      cc_.vpcmpgtd(live, live, iota);
      body(i, &live);
    }
    cc_.bind(done);
    cc_.endFunc();
  }

 private:
  bool is_scalar(int k) const { return (mask_ >> k) & 1; }

  // Few operands (the common case: an affine map and an activation) keep their row pointers in
  // registers and their one-element values broadcast in vector registers across the loop; with
  // many, the pointers are read from the pointer array where needed (an L1 hit costs less than
  // the spills a register per operand would cause) and one-element inputs are broadcast per use.
  static constexpr int kHoistedPointers = 6, kHoistedScalars = 6;

  void hoist() {
    const int operands = prog_.num_inputs + static_cast<int>(prog_.outputs.size());
    int pointers = 0, scalars = 0;
    for (int k = 0; k < operands; ++k) (k < prog_.num_inputs && is_scalar(k) ? scalars : pointers)++;
    ptr_reg_.assign(operands, x86::Gp());
    scalar_reg_.assign(prog_.num_inputs, x86::Ymm());
    for (int k = 0; k < operands; ++k) {
      const bool scalar = k < prog_.num_inputs && is_scalar(k);
      if (scalar && scalars <= kHoistedScalars) {
        scalar_reg_[k] = cc_.newYmm();
        broadcast_input(scalar_reg_[k], load_pointer(k), prog_.input_dtype(k));
      } else if (!scalar && pointers <= kHoistedPointers) {
        ptr_reg_[k] = load_pointer(k);
      }
    }
  }

  x86::Gp load_pointer(int k) {
    x86::Gp p = cc_.newIntPtr();
    cc_.mov(p, x86::ptr(ptrs_, k * 8));
    return p;
  }

  // Operand k's row pointer.
  x86::Gp base(int k) { return ptr_reg_[k].isValid() ? ptr_reg_[k] : load_pointer(k); }

  // d = the element at p, converted to float32, in every lane.
  void broadcast_input(const x86::Ymm& d, const x86::Gp& p, DType t) {
    switch (t) {
      case DType::Int32:
        cc_.vbroadcastss(d, x86::dword_ptr(p));
        cc_.vcvtdq2ps(d, d);
        return;
      case DType::Float64:
        cc_.vxorps(d, d, d);
        cc_.vcvtsd2ss(d.xmm(), d.xmm(), x86::qword_ptr(p));
        cc_.vbroadcastss(d, d.xmm());
        return;
      default: cc_.vbroadcastss(d, x86::dword_ptr(p));
    }
  }

  // d = elements i..i+7 at p converted to float32; with `live`, only its lanes are read (others 0).
  void load_input(const x86::Ymm& d, const x86::Gp& p, const x86::Gp& i, const x86::Ymm* live, DType t) {
    if (t != DType::Float64) {
      x86::Mem m = x86::ymmword_ptr(p, i, 2);
      if (live) cc_.vmaskmovps(d, *live, m);
      else cc_.vmovups(d, m);
      if (t == DType::Int32) cc_.vcvtdq2ps(d, d);
      return;
    }
    // Eight doubles: two halves of four, each converted to four floats.
    x86::Mem lo = x86::ymmword_ptr(p, i, 3), hi = x86::ymmword_ptr(p, i, 3, 32);
    x86::Xmm upper = cc_.newXmm();
    if (live) {
      x86::Ymm m0 = cc_.newYmm(), m1 = cc_.newYmm(), a = cc_.newYmm(), b = cc_.newYmm();
      x86::Xmm h = cc_.newXmm();
      cc_.vpmovsxdq(m0, live->xmm());  // 32-bit lane masks widened to 64
      cc_.vextracti128(h, *live, 1);
      cc_.vpmovsxdq(m1, h);
      cc_.vmaskmovpd(a, m0, lo);
      cc_.vmaskmovpd(b, m1, hi);
      cc_.vcvtpd2ps(d.xmm(), a);
      cc_.vcvtpd2ps(upper, b);
    } else {
      cc_.vcvtpd2ps(d.xmm(), lo);
      cc_.vcvtpd2ps(upper, hi);
    }
    cc_.vinsertf128(d, d, upper, 1);
  }

  // Inputs are loaded at their first use; all loads come before the first store.
  void body(const x86::Gp& i, const x86::Ymm* live) {
    std::vector<x86::Ymm> r(prog_.num_registers());
    auto input = [&](int k) {
      if (k >= prog_.num_inputs || r[k].isValid()) return;
      r[k] = cc_.newYmm();
      if (is_scalar(k)) {
        if (scalar_reg_[k].isValid()) cc_.vmovaps(r[k], scalar_reg_[k]);
        else broadcast_input(r[k], base(k), prog_.input_dtype(k));
        return;
      }
      load_input(r[k], base(k), i, live, prog_.input_dtype(k));
    };
    int reg = prog_.num_inputs;
    for (const FusedInstr& ins : prog_.code) {
      input(ins.a);
      if (ins.b >= 0) input(ins.b);
      r[reg++] = instr(ins, r);
    }
    for (size_t o = 0; o < prog_.outputs.size(); ++o) {
      input(prog_.outputs[o]);  // (an input returned as it is)
      x86::Mem m = x86::ymmword_ptr(base(prog_.num_inputs + static_cast<int>(o)), i, 2);
      if (live) cc_.vmaskmovps(m, *live, r[prog_.outputs[o]]);
      else cc_.vmovups(m, r[prog_.outputs[o]]);
    }
  }

  // A 32-byte constant of eight copies of `bits` (deduplicated by the pool).
  x86::Mem c32(uint32_t bits) {
    uint32_t v[8];
    for (uint32_t& x : v) x = bits;
    x86::Mem m = cc_.newConst(ConstPoolScope::kLocal, v, 32);
    m.setSize(32);
    return m;
  }
  x86::Mem cf(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return c32(bits);
  }
  x86::Ymm load(const x86::Mem& m) {
    x86::Ymm y = cc_.newYmm();
    cc_.vmovups(y, m);
    return y;
  }
  x86::Ymm fresh() { return cc_.newYmm(); }

  x86::Ymm add(const x86::Ymm& a, const x86::Ymm& b) { x86::Ymm d = fresh(); cc_.vaddps(d, a, b); return d; }
  x86::Ymm mul(const x86::Ymm& a, const x86::Ymm& b) { x86::Ymm d = fresh(); cc_.vmulps(d, a, b); return d; }
  x86::Ymm div(const x86::Ymm& a, const x86::Ymm& b) { x86::Ymm d = fresh(); cc_.vdivps(d, a, b); return d; }
  x86::Ymm cmp(const x86::Ymm& a, const x86::Mem& b, int pred) { x86::Ymm d = fresh(); cc_.vcmpps(d, a, b, pred); return d; }
  x86::Ymm cmp(const x86::Ymm& a, const x86::Ymm& b, int pred) { x86::Ymm d = fresh(); cc_.vcmpps(d, a, b, pred); return d; }
  // where mask: b, else a
  x86::Ymm blend(const x86::Ymm& a, const x86::Ymm& b, const x86::Ymm& mask) {
    x86::Ymm d = fresh();
    cc_.vblendvps(d, a, b, mask);
    return d;
  }
  x86::Ymm blend(const x86::Ymm& a, const x86::Mem& b, const x86::Ymm& mask) {
    x86::Ymm d = fresh();
    cc_.vblendvps(d, a, b, mask);
    return d;
  }
  // Horner: ((c[0] x + c[1]) x + ...) + c[n-1]
  template <size_t N>
  x86::Ymm horner(const x86::Ymm& x, const float (&c)[N]) {
    x86::Ymm p = load(cf(c[0]));
    for (size_t k = 1; k < N; ++k) cc_.vfmadd213ps(p, x, cf(c[k]));
    return p;
  }

  // A NaN argument comes back as it is (libm's rule): what a later op sees is the input's NaN.
  x86::Ymm keep_nan(const x86::Ymm& res, const x86::Ymm& a) { return blend(res, a, cmp(a, a, kUnordQ)); }

  x86::Ymm exp(const x86::Ymm& x) { return keep_nan(exp_core(x), x); }

  x86::Ymm exp_core(const x86::Ymm& x) {
    x86::Ymm t = load(cf(fm::kExpLo)), u = load(cf(fm::kExpHi));
    cc_.vmaxps(t, t, x);  // NaN: the second operand (x) comes back
    cc_.vminps(u, u, t);
    x86::Ymm n = fresh();
    cc_.vmulps(n, u, cf(fm::kLog2e));
    cc_.vroundps(n, n, 8);  // to nearest, no precision exception
    x86::Ymm r = u;
    cc_.vfnmadd231ps(r, n, cf(fm::kLn2Hi));
    cc_.vfnmadd231ps(r, n, cf(fm::kLn2Lo));
    x86::Ymm p = horner(r, fm::kExpPoly);
    x86::Ymm ni = fresh(), n1 = fresh(), n2 = fresh();
    cc_.vcvtps2dq(ni, n);
    cc_.vpsrad(n1, ni, 1);
    cc_.vpsubd(n2, ni, n1);
    x86::Mem bias = c32(127);
    cc_.vpaddd(n1, n1, bias);
    cc_.vpaddd(n2, n2, bias);
    cc_.vpslld(n1, n1, 23);
    cc_.vpslld(n2, n2, 23);
    cc_.vmulps(p, p, n1);
    cc_.vmulps(p, p, n2);
    return p;
  }

  x86::Ymm abs(const x86::Ymm& a) { x86::Ymm d = fresh(); cc_.vandps(d, a, c32(0x7fffffffu)); return d; }

  x86::Ymm tanh(const x86::Ymm& a) {
    x86::Ymm ax = abs(a);
    x86::Ymm e = exp_core(add(ax, ax));
    x86::Ymm one = load(cf(1.f)), two = load(cf(2.f));
    x86::Ymm q = div(two, add(e, one));
    x86::Ymm big = fresh(), sign = fresh();
    cc_.vsubps(big, one, q);
    cc_.vandps(sign, a, c32(0x80000000u));
    cc_.vorps(big, big, sign);
    x86::Ymm z = mul(a, a);
    x86::Ymm p = horner(z, fm::kTanhPoly);
    x86::Ymm small = mul(a, z);
    cc_.vfmadd213ps(small, p, a);  // small = a z p + a
    return keep_nan(blend(big, small, cmp(ax, cf(fm::kTanhSmall), kLtOQ)), a);
  }

  // fused_math::erf, lane for lane.
  x86::Ymm erf(const x86::Ymm& a) {
    x86::Ymm ax = abs(a);
    x86::Ymm small = mul(a, horner(mul(a, a), fm::kErfPoly));
    x86::Ymm xc = load(cf(fm::kErfBig));
    cc_.vminps(xc, xc, ax);  // NaN: ax comes back (and the final blend returns a anyway)
    x86::Ymm one = load(cf(1.f));
    x86::Ymm t = div(one, add(one, mul(xc, load(cf(0.5f)))));
    x86::Ymm r = horner(t, fm::kErfcPoly);
    x86::Ymm nx2 = mul(xc, xc);
    cc_.vorps(nx2, nx2, c32(0x80000000u));
    x86::Ymm big = fresh(), sign = fresh();
    cc_.vsubps(big, one, mul(exp_core(nx2), r));
    cc_.vandps(sign, a, c32(0x80000000u));
    cc_.vorps(big, big, sign);
    return keep_nan(blend(big, small, cmp(ax, cf(fm::kErfSmall), kLtOQ)), a);
  }

  x86::Ymm sigmoid(const x86::Ymm& a) {
    x86::Ymm nx = fresh();
    cc_.vorps(nx, a, c32(0x80000000u));  // -|a|
    x86::Ymm e = exp_core(nx);
    x86::Ymm one = load(cf(1.f));
    x86::Ymm d = add(e, one);
    x86::Ymm pos = div(one, d), neg = div(e, d);
    x86::Ymm zero = fresh();
    cc_.vxorps(zero, zero, zero);
    return keep_nan(blend(neg, pos, cmp(a, zero, kGeOQ)), a);
  }

  x86::Ymm log(const x86::Ymm& a) {
    x86::Ymm tiny = cmp(a, cf(fm::kFltMin), kLtOQ);  // subnormal, zero or negative
    x86::Ymm x = blend(a, mul(a, load(cf(fm::kTwo23))), tiny);
    x86::Ymm adj = fresh();
    cc_.vandps(adj, tiny, cf(23.f));
    x86::Ymm ei = fresh(), e = fresh(), m = fresh();
    cc_.vpsrld(ei, x, 23);
    cc_.vpand(ei, ei, c32(0xff));
    cc_.vpsubd(ei, ei, c32(127));
    cc_.vcvtdq2ps(e, ei);
    cc_.vsubps(e, e, adj);
    cc_.vpand(m, x, c32(0x007fffffu));
    cc_.vpor(m, m, c32(0x3f800000u));  // m in [1, 2)
    x86::Ymm big = cmp(m, cf(fm::kSqrt2), kGtOQ);
    m = blend(m, mul(m, load(cf(0.5f))), big);
    x86::Ymm bump = fresh();
    cc_.vandps(bump, big, cf(1.f));
    cc_.vaddps(e, e, bump);
    x86::Ymm f = fresh(), den = fresh();
    cc_.vsubps(f, m, cf(1.f));
    cc_.vaddps(den, f, cf(2.f));
    x86::Ymm s = div(f, den), s2 = mul(s, s);
    x86::Ymm poly = horner(s2, fm::kLogPoly);
    x86::Ymm rr = mul(poly, s2);
    x86::Ymm l = add(s, s);
    cc_.vfmadd231ps(l, s, rr);                                   // log(m) = 2s + s R
    cc_.vfmadd231ps(l, e, cf(fm::kLogLn2Lo));                  // + k ln2 (two parts)
    cc_.vfmadd231ps(l, e, cf(fm::kLogLn2Hi));
    x86::Ymm res = l;
    res = blend(res, cf(-INFINITY), cmp(a, cf(0.f), kEqOQ));
    res = blend(res, cf(NAN), cmp(a, cf(0.f), kLtOQ));
    res = blend(res, cf(INFINITY), cmp(a, cf(INFINITY), kEqOQ));
    return keep_nan(res, a);
  }

  x86::Ymm instr(const FusedInstr& ins, const std::vector<x86::Ymm>& r) {
    const x86::Ymm& a = r[ins.a];
    x86::Ymm d = fresh();
    switch (ins.op) {
      case FusedOp::add: cc_.vaddps(d, a, r[ins.b]); return d;
      case FusedOp::sub: cc_.vsubps(d, a, r[ins.b]); return d;
      case FusedOp::mul: cc_.vmulps(d, a, r[ins.b]); return d;
      case FusedOp::div: cc_.vdivps(d, a, r[ins.b]); return d;
      case FusedOp::maximum:
      case FusedOp::minimum: {
        // a > b ? a : b (a < b ? a : b) is vmaxps (vminps) exactly; NaN anywhere gives numpy's NaN.
        if (ins.op == FusedOp::maximum) cc_.vmaxps(d, a, r[ins.b]);
        else cc_.vminps(d, a, r[ins.b]);
        return blend(d, cf(NAN), cmp(a, r[ins.b], kUnordQ));
      }
      case FusedOp::neg: cc_.vxorps(d, a, c32(0x80000000u)); return d;
      case FusedOp::abs: return abs(a);
      case FusedOp::square: cc_.vmulps(d, a, a); return d;
      case FusedOp::relu: {
        // a if a > 0 or a is NaN, else +0
        x86::Ymm keep = fresh(), zero = fresh();
        cc_.vxorps(zero, zero, zero);
        cc_.vcmpps(keep, a, zero, kGtOQ);
        cc_.vcmpps(d, a, a, kUnordQ);
        cc_.vorps(keep, keep, d);
        cc_.vandps(d, a, keep);
        return d;
      }
      case FusedOp::sqrt: cc_.vsqrtps(d, a); return d;
      case FusedOp::rsqrt: cc_.vsqrtps(d, a); return div(load(cf(1.f)), d);
      case FusedOp::reciprocal: return div(load(cf(1.f)), a);
      case FusedOp::floor: cc_.vroundps(d, a, 9); return d;
      case FusedOp::ceil: cc_.vroundps(d, a, 10); return d;
      case FusedOp::round: cc_.vroundps(d, a, 8); return d;  // half to even, like nearbyint
      case FusedOp::clamp: {
        x86::Ymm v = a;
        if (ins.has_lo) v = blend(v, cf(ins.lo), cmp(v, cf(ins.lo), kLtOQ));
        if (ins.has_hi) v = blend(v, cf(ins.hi), cmp(v, cf(ins.hi), kGtOQ));
        return v;
      }
      case FusedOp::exp: return exp(a);
      case FusedOp::log: return log(a);
      case FusedOp::tanh: return tanh(a);
      case FusedOp::sigmoid: return sigmoid(a);
      case FusedOp::silu: return mul(a, sigmoid(a));
      case FusedOp::erf: return erf(a);
      case FusedOp::gelu: return mul(mul(a, load(cf(0.5f))), add(load(cf(1.f)), erf(mul(a, load(cf(fm::kSqrtHalf))))));
      case FusedOp::gelu_tanh: {
        x86::Ymm c = mul(load(cf(fm::kGeluTanhC)), a);
        c = mul(mul(c, a), a);
        x86::Ymm th = tanh(mul(load(cf(fm::kGeluTanhK)), add(a, c)));
        return mul(mul(a, load(cf(0.5f))), add(load(cf(1.f)), th));
      }
    }
    return d;
  }

  x86::Compiler& cc_;
  const FusedProgram& prog_;
  uint32_t mask_;
  std::vector<x86::Gp> ptr_reg_;      // per operand: its row pointer held across the loop, if any
  std::vector<x86::Ymm> scalar_reg_;  // per input: its broadcast one-element value, if any
  x86::Gp ptrs_;
};

FusedRowFn compile_avx2(const FusedProgram& prog, uint32_t scalar_mask) {
  CodeHolder code;
  code.init(jit_runtime().environment());
  CollectErrors errors;
  code.setErrorHandler(&errors);
  x86::Compiler cc(&code);
  RowEmitter(cc, prog, scalar_mask).emit();
  cc.finalize();
  if (errors.failed) return nullptr;
  FusedRowFn fn = nullptr;
  if (jit_runtime().add(&fn, &code) != kErrorOk) return nullptr;
  note_fused_code_size(fn, code.codeSize());
  return fn;
}

struct Register {
  Register() {
    const CpuFeatures::X86& f = CpuInfo::host().features().x86();
    if (f.hasAVX2() && f.hasFMA()) set_fused_compiler(compile_avx2, "asmjit-avx2");
  }
} register_backend;

}  // namespace
}  // namespace pj::codegen
