// The machine-code backend of fused elementwise kernels (kernels/fused.h): one loop per (program,
// scalar-input mask), emitted with AsmJit's Compiler (virtual registers, its register allocator
// spills when a program needs more registers than the ISA has). Two ISAs from one emitter
// (RowEmitter<Isa>): AVX2+FMA (ymm, 8 floats) and, where the CPU has AVX-512 F and DQ, AVX-512 (zmm,
// 16 floats; PIJIT_FUSED_ISA=avx2 keeps AVX2). Both perform the same IEEE operations lane by lane,
// so their results are the same bits. A lane mask (comparisons, selects) lives in a vector register
// as all-ones/all-zeros lanes in both: AVX-512 converts from and to its k registers (vpmovm2d,
// vpmovd2m) so the same bit tricks apply.
//
// Row ABI: void row(int64_t n, char* const* ptrs): ptrs = inputs then outputs. The main loop does
// one vector of floats per iteration; the remaining elements run once more through masked loads
// and stores (vmaskmovps/vmaskmovpd on AVX2, k-masked moves on AVX-512), so no element is read or
// written outside the row.
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
//   tanh(x)  sign(x) m/(m + 2), m = expm1(2|x|) = 2^n (expm1(r) + 1) - 1 with r = 2|x| - n ln2,
//            expm1(r) = r + r^2 Q(r) (degree-4 minimax Q); 2|x| clamped to 20.
//   sigmoid  e = e^{-|x|}: 1/(1+e) for x >= 0, e/(1+e) below (the eager kernel's formulas).
//   log(x)   x = m 2^k with m in [sqrt(1/2), sqrt(2)), s = (m-1)/(m+1),
//            log m = 2 atanh s = 2s + s (s^2 (2/3 + 2/5 s^2 + ... + 2/11 s^8)); subnormals scaled
//            by 2^23 first; 0 -> -inf, negative -> NaN, inf -> inf.
//   erf(x)   |x| < 0.5: x P(x^2) (Taylor, degree 13); else sign(x) (1 - e^{-x^2} R(1/(1 + |x|/2)))
//            with |x| clamped to 4 and R a degree-8 fit of erfc(x) e^{x^2}.
//   gelu, gelu_tanh: x/2 (1 + erf(x/sqrt 2)), x/2 (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))).
#include <asmjit/x86.h>

#include <cmath>
#include <cstdlib>
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

struct Avx2 {
  using V = x86::Ymm;
  static constexpr int kLanes = 8;
  static constexpr bool k512 = false;
  static V make(x86::Compiler& cc) { return cc.newYmm(); }
  static x86::Mem at(const x86::Gp& p, const x86::Gp& i, int shift, int disp = 0) { return x86::ymmword_ptr(p, i, shift, disp); }
};
struct Avx512 {
  using V = x86::Zmm;
  static constexpr int kLanes = 16;
  static constexpr bool k512 = true;
  static V make(x86::Compiler& cc) { return cc.newZmm(); }
  static x86::Mem at(const x86::Gp& p, const x86::Gp& i, int shift, int disp = 0) { return x86::zmmword_ptr(p, i, shift, disp); }
};

// Emits one row function. Its code must stay movable (the compile cache runs its bytes at another
// address, in another process: compile_for checks for relocations): memory is reached through the
// row's pointers or the local constant pool, never a host address written as an immediate, and no
// call leaves the function.
template <class Isa>
class RowEmitter {
  using V = typename Isa::V;
  static constexpr int L = Isa::kLanes;

  // The lanes a tail iteration touches: a vector mask (AVX2) or a k register (AVX-512).
  struct Live {
    V vec;
    x86::KReg k;
  };

 public:
  RowEmitter(x86::Compiler& cc, const FusedProgram& prog, uint32_t scalar_mask)
      : cc_(cc), prog_(prog), mask_(scalar_mask) {}

  void emit() {
    FuncNode* fn = cc_.addFunc(FuncSignatureT<void, int64_t, char* const*>());
    x86::Gp n = cc_.newInt64("n"), ptrs = cc_.newIntPtr("ptrs");
    fn->setArg(0, n);
    fn->setArg(1, ptrs);
    // VEX/EVEX encoding for the register allocator's own moves (without it a spill is a 128-bit
    // SSE move that drops the upper lanes), and vzeroupper on return for the SSE code after.
    fn->frame().setAvxEnabled();
    if (Isa::k512) fn->frame().setAvx512Enabled();
    fn->frame().setAvxCleanup();
    ptrs_ = ptrs;
    x86::Gp i = cc_.newInt64("i"), end = cc_.newInt64("end");
    Label loop = cc_.newLabel(), tail = cc_.newLabel(), done = cc_.newLabel();
    hoist();
    // A row this long streams its outputs past the caches (non-temporal stores) where each is
    // aligned to the vector: what it writes would only evict what the next ops read, and a
    // cached store reads every line before writing it. (One predicted branch per iteration.)
    stream_ = cc_.newInt64("stream");
    {
      x86::Gp addr = cc_.newInt64();
      Label no = cc_.newLabel();
      cc_.xor_(stream_, stream_);
      cc_.cmp(n, kStreamElements);
      cc_.jl(no);
      cc_.xor_(addr, addr);
      for (size_t o = 0; o < prog_.outputs.size(); ++o) cc_.or_(addr, base(prog_.num_inputs + static_cast<int>(o)));
      cc_.test(addr, L * 4 - 1);
      cc_.jnz(no);
      // (not in place: the next iteration reads the line a streaming store would evict)
      for (size_t o = 0; o < prog_.outputs.size(); ++o)
        for (int k = 0; k < prog_.num_inputs; ++k) {
          if (is_scalar(k)) continue;
          cc_.cmp(base(prog_.num_inputs + static_cast<int>(o)), base(k));
          cc_.je(no);
        }
      cc_.mov(stream_, 1);
      cc_.bind(no);
    }
    cc_.xor_(i, i);
    cc_.mov(end, n);
    cc_.sub(end, L);
    cc_.jl(tail);  // fewer than L elements
    cc_.bind(loop);
    body(i, nullptr);
    cc_.add(i, L);
    cc_.cmp(i, end);
    cc_.jle(loop);
    {
      Label cached = cc_.newLabel();
      cc_.test(stream_, stream_);
      cc_.jz(cached);
      cc_.sfence();  // (what the row wrote is ordered before whatever the caller writes next)
      cc_.bind(cached);
    }
    cc_.bind(tail);
    cc_.cmp(i, n);
    cc_.jge(done);
    {
      // lanes [0, n - i) are live
      x86::Gp rem = cc_.newInt64();
      cc_.mov(rem, n);
      cc_.sub(rem, i);
      Live live;
      if constexpr (Isa::k512) {
        x86::Gp bits = cc_.newInt64();
        cc_.mov(bits, 1);
        cc_.shlx(bits, bits, rem);
        cc_.dec(bits);
        live.k = cc_.newKw();
        cc_.kmovw(live.k, bits.r32());
      } else {
        live.vec = fresh();
        V iota = fresh();
        cc_.vmovd(live.vec.xmm(), rem.r32());
        cc_.vpbroadcastd(live.vec, live.vec.xmm());
        static const int32_t lanes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
        cc_.vmovdqu(iota, cc_.newConst(ConstPoolScope::kLocal, lanes, 32));
        cc_.vpcmpgtd(live.vec, live.vec, iota);
      }
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
    scalar_reg_.assign(prog_.num_inputs, V());
    for (int k = 0; k < operands; ++k) {
      const bool scalar = k < prog_.num_inputs && is_scalar(k);
      if (scalar && scalars <= kHoistedScalars) {
        scalar_reg_[k] = fresh();
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
  void broadcast_input(const V& d, const x86::Gp& p, DType t) {
    switch (t) {
      case DType::Int32:
        cc_.vbroadcastss(d, x86::dword_ptr(p));
        cc_.vcvtdq2ps(d, d);
        return;
      case DType::Float64:
        cc_.vxorps(d.xmm(), d.xmm(), d.xmm());
        cc_.vcvtsd2ss(d.xmm(), d.xmm(), x86::qword_ptr(p));
        cc_.vbroadcastss(d, d.xmm());
        return;
      default: cc_.vbroadcastss(d, x86::dword_ptr(p));
    }
  }

  // d = the next L elements at p converted to float32; with `live`, only its lanes are read (the
  // others 0).
  void load_input(const V& d, const x86::Gp& p, const x86::Gp& i, const Live* live, DType t) {
    if (t != DType::Float64) {
      x86::Mem m = Isa::at(p, i, 2);
      if constexpr (Isa::k512) {
        if (live) cc_.k(live->k).z().vmovups(d, m);
        else cc_.vmovups(d, m);
      } else {
        if (live) cc_.vmaskmovps(d, live->vec, m);
        else cc_.vmovups(d, m);
      }
      if (t == DType::Int32) cc_.vcvtdq2ps(d, d);
      return;
    }
    // L doubles: two halves of L/2, each converted to L/2 floats.
    x86::Mem lo = Isa::at(p, i, 3), hi = Isa::at(p, i, 3, L * 4);
    if constexpr (Isa::k512) {
      x86::Ymm upper = cc_.newYmm();
      if (live) {
        V a = fresh(), b = fresh();
        x86::KReg khi = cc_.newKw();
        cc_.kshiftrw(khi, live->k, 8);
        cc_.k(live->k).z().vmovupd(a, lo);
        cc_.k(khi).z().vmovupd(b, hi);
        cc_.vcvtpd2ps(d.ymm(), a);
        cc_.vcvtpd2ps(upper, b);
      } else {
        cc_.vcvtpd2ps(d.ymm(), lo);
        cc_.vcvtpd2ps(upper, hi);
      }
      cc_.vinsertf32x8(d, d, upper, 1);
    } else {
      x86::Xmm upper = cc_.newXmm();
      if (live) {
        V m0 = fresh(), m1 = fresh(), a = fresh(), b = fresh();
        x86::Xmm h = cc_.newXmm();
        cc_.vpmovsxdq(m0, live->vec.xmm());  // 32-bit lane masks widened to 64
        cc_.vextracti128(h, live->vec, 1);
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
  }

  void store(const x86::Mem& m, const V& v, const Live* live) {
    if (live) {
      if constexpr (Isa::k512) cc_.k(live->k).vmovups(m, v);
      else cc_.vmaskmovps(m, live->vec, v);
      return;
    }
    Label cached = cc_.newLabel(), stored = cc_.newLabel();
    cc_.test(stream_, stream_);
    cc_.jz(cached);
    cc_.vmovntps(m, v);
    cc_.jmp(stored);
    cc_.bind(cached);
    cc_.vmovups(m, v);
    cc_.bind(stored);
  }

  // Inputs are loaded at their first use; all loads come before the first store.
  void body(const x86::Gp& i, const Live* live) {
    std::vector<V> r(prog_.num_registers());
    auto input = [&](int k) {
      if (k >= prog_.num_inputs || r[k].isValid()) return;
      r[k] = fresh();
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
      store(Isa::at(base(prog_.num_inputs + static_cast<int>(o)), i, 2), r[prog_.outputs[o]], live);
    }
  }

  // A vector constant of L copies of `bits` (deduplicated by the pool).
  x86::Mem c32(uint32_t bits) {
    uint32_t v[16];
    for (uint32_t& x : v) x = bits;
    x86::Mem m = cc_.newConst(ConstPoolScope::kLocal, v, L * 4);
    m.setSize(L * 4);
    return m;
  }
  x86::Mem cf(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return c32(bits);
  }
  V load(const x86::Mem& m) {
    V y = fresh();
    cc_.vmovups(y, m);
    return y;
  }
  V fresh() { return Isa::make(cc_); }

  V add(const V& a, const V& b) { V d = fresh(); cc_.vaddps(d, a, b); return d; }
  V mul(const V& a, const V& b) { V d = fresh(); cc_.vmulps(d, a, b); return d; }
  V div(const V& a, const V& b) { V d = fresh(); cc_.vdivps(d, a, b); return d; }

  // Lane masks as all-ones / all-zeros lanes of a vector register.
  template <class B>
  V cmp(const V& a, const B& b, int pred) {
    V d = fresh();
    if constexpr (Isa::k512) {
      x86::KReg k = cc_.newKw();
      cc_.vcmpps(k, a, b, pred);
      cc_.vpmovm2d(d, k);
    } else {
      cc_.vcmpps(d, a, b, pred);
    }
    return d;
  }
  // where mask: b, else a
  template <class B>
  V blend(const V& a, const B& b, const V& mask) {
    V d = fresh();
    if constexpr (Isa::k512) {
      x86::KReg k = cc_.newKw();
      cc_.vpmovd2m(k, mask);
      cc_.k(k).vblendmps(d, a, b);
    } else {
      cc_.vblendvps(d, a, b, mask);
    }
    return d;
  }
  // Bitwise integer ops on 32-bit lanes.
  template <class B>
  void pand(const V& d, const V& a, const B& b) {
    if constexpr (Isa::k512) cc_.vpandd(d, a, b);
    else cc_.vpand(d, a, b);
  }
  template <class B>
  void por(const V& d, const V& a, const B& b) {
    if constexpr (Isa::k512) cc_.vpord(d, a, b);
    else cc_.vpor(d, a, b);
  }
  // roundps: imm 8 nearest, 9 floor, 10 ceil (precision exception suppressed).
  void round(const V& d, const V& a, int imm) {
    if constexpr (Isa::k512) cc_.vrndscaleps(d, a, imm);
    else cc_.vroundps(d, a, imm);
  }

  // Horner: ((c[0] x + c[1]) x + ...) + c[n-1]
  template <size_t N>
  V horner(const V& x, const float (&c)[N]) {
    V p = load(cf(c[0]));
    for (size_t k = 1; k < N; ++k) cc_.vfmadd213ps(p, x, cf(c[k]));
    return p;
  }

  // A NaN argument comes back as it is (libm's rule): what a later op sees is the input's NaN.
  V keep_nan(const V& res, const V& a) {
    if constexpr (Isa::k512) {  // (the mask stays in a mask register)
      x86::KReg k = cc_.newKw();
      cc_.vcmpps(k, a, a, kUnordQ);
      V d = fresh();
      cc_.k(k).vblendmps(d, res, a);
      return d;
    } else {
      return blend(res, a, cmp(a, a, kUnordQ));
    }
  }

  V exp(const V& x) { return keep_nan(exp_core(x), x); }

  // u = n ln2 + r, n = round(u / ln2), |r| <= ln2/2 (ln2 in two parts): fused_math::reduce_ln2.
  // u becomes r.
  V reduce_ln2(const V& u) {
    V n = fresh();
    cc_.vmulps(n, u, cf(fm::kLog2e));
    round(n, n, 8);  // to nearest, no precision exception
    cc_.vfnmadd231ps(u, n, cf(fm::kLn2Hi));
    cc_.vfnmadd231ps(u, n, cf(fm::kLn2Lo));
    return n;
  }

  V exp_core(const V& x) {
    V t = load(cf(fm::kExpLo)), u = load(cf(fm::kExpHi));
    cc_.vmaxps(t, t, x);  // NaN: the second operand (x) comes back
    cc_.vminps(u, u, t);
    V n = reduce_ln2(u);
    V r = u;
    V p = horner(r, fm::kExpPoly);
    V ni = fresh(), n1 = fresh(), n2 = fresh();
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

  V abs(const V& a) { V d = fresh(); cc_.vandps(d, a, c32(0x7fffffffu)); return d; }

  // fused_math::tanh, lane for lane.
  V tanh(const V& a) {
    V ax = abs(a);
    V u = add(ax, ax);
    cc_.vminps(u, u, cf(fm::kTanhClamp));
    V n = reduce_ln2(u);
    V r = u;
    V q = horner(r, fm::kExpm1Poly);
    V m = mul(r, r);
    cc_.vfmadd213ps(m, q, r);  // expm1(r) = r r q + r
    V s = fresh(), s1 = fresh();
    cc_.vcvtps2dq(s, n);
    cc_.vpaddd(s, s, c32(127));
    cc_.vpslld(s, s, 23);  // 2^n
    cc_.vsubps(s1, s, cf(1.f));
    cc_.vfmadd213ps(m, s, s1);  // m s + (s - 1)
    V d = fresh(), sign = fresh();
    cc_.vaddps(d, m, cf(2.f));
    V t = div(m, d);
    cc_.vandps(sign, a, c32(0x80000000u));
    cc_.vorps(t, t, sign);
    return keep_nan(t, a);
  }

  // fused_math::erf, lane for lane.
  V erf(const V& a) {
    V ax = abs(a);
    V small = mul(a, horner(mul(a, a), fm::kErfPoly));
    V xc = load(cf(fm::kErfBig));
    cc_.vminps(xc, xc, ax);  // NaN: ax comes back (and the final blend returns a anyway)
    V one = load(cf(1.f));
    V t = div(one, add(one, mul(xc, load(cf(0.5f)))));
    V r = horner(t, fm::kErfcPoly);
    V nx2 = mul(xc, xc);
    cc_.vorps(nx2, nx2, c32(0x80000000u));
    V big = fresh(), sign = fresh();
    cc_.vsubps(big, one, mul(exp_core(nx2), r));
    cc_.vandps(sign, a, c32(0x80000000u));
    cc_.vorps(big, big, sign);
    return keep_nan(blend(big, small, cmp(ax, cf(fm::kErfSmall), kLtOQ)), a);
  }

  V sigmoid(const V& a) {
    V nx = fresh();
    cc_.vorps(nx, a, c32(0x80000000u));  // -|a|
    V e = exp_core(nx);
    V one = load(cf(1.f));
    V d = add(e, one);
    V pos = div(one, d), neg = div(e, d);
    V zero = fresh();
    cc_.vxorps(zero, zero, zero);
    return keep_nan(blend(neg, pos, cmp(a, zero, kGeOQ)), a);
  }

  V log(const V& a) {
    V tiny = cmp(a, cf(fm::kFltMin), kLtOQ);  // subnormal, zero or negative
    V x = blend(a, mul(a, load(cf(fm::kTwo23))), tiny);
    V adj = fresh();
    cc_.vandps(adj, tiny, cf(23.f));
    V ei = fresh(), e = fresh(), m = fresh();
    cc_.vpsrld(ei, x, 23);
    pand(ei, ei, c32(0xff));
    cc_.vpsubd(ei, ei, c32(127));
    cc_.vcvtdq2ps(e, ei);
    cc_.vsubps(e, e, adj);
    pand(m, x, c32(0x007fffffu));
    por(m, m, c32(0x3f800000u));  // m in [1, 2)
    V big = cmp(m, cf(fm::kSqrt2), kGtOQ);
    m = blend(m, mul(m, load(cf(0.5f))), big);
    V bump = fresh();
    cc_.vandps(bump, big, cf(1.f));
    cc_.vaddps(e, e, bump);
    V f = fresh(), den = fresh();
    cc_.vsubps(f, m, cf(1.f));
    cc_.vaddps(den, f, cf(2.f));
    V s = div(f, den), s2 = mul(s, s);
    V poly = horner(s2, fm::kLogPoly);
    V rr = mul(poly, s2);
    V l = add(s, s);
    cc_.vfmadd231ps(l, s, rr);                                   // log(m) = 2s + s R
    cc_.vfmadd231ps(l, e, cf(fm::kLogLn2Lo));                  // + k ln2 (two parts)
    cc_.vfmadd231ps(l, e, cf(fm::kLogLn2Hi));
    V res = l;
    res = blend(res, cf(-INFINITY), cmp(a, cf(0.f), kEqOQ));
    res = blend(res, cf(NAN), cmp(a, cf(0.f), kLtOQ));
    res = blend(res, cf(INFINITY), cmp(a, cf(INFINITY), kEqOQ));
    return keep_nan(res, a);
  }

  V instr(const FusedInstr& ins, const std::vector<V>& r) {
    const V& a = r[ins.a];
    V d = fresh();
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
        V zero = fresh();
        cc_.vxorps(zero, zero, zero);
        V keep = cmp(a, zero, kGtOQ);
        cc_.vorps(keep, keep, cmp(a, a, kUnordQ));
        cc_.vandps(d, a, keep);
        return d;
      }
      case FusedOp::relu_grad: {
        // b > 0 ? a : +0, as a mask on a's bits (NaN b: 0)
        V zero = fresh();
        cc_.vxorps(zero, zero, zero);
        cc_.vandps(d, a, cmp(r[ins.b], zero, kGtOQ));
        return d;
      }
      case FusedOp::sqrt: cc_.vsqrtps(d, a); return d;
      case FusedOp::rsqrt: cc_.vsqrtps(d, a); return div(load(cf(1.f)), d);
      case FusedOp::reciprocal: return div(load(cf(1.f)), a);
      case FusedOp::floor: round(d, a, 9); return d;
      case FusedOp::ceil: round(d, a, 10); return d;
      case FusedOp::round: round(d, a, 8); return d;  // half to even, like nearbyint
      case FusedOp::clamp: {
        V v = a;
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
        V c = mul(load(cf(fm::kGeluTanhC)), a);
        c = mul(mul(c, a), a);
        V th = tanh(mul(load(cf(fm::kGeluTanhK)), add(a, c)));
        return mul(mul(a, load(cf(0.5f))), add(load(cf(1.f)), th));
      }
    }
    return d;
  }

  x86::Compiler& cc_;
  const FusedProgram& prog_;
  uint32_t mask_;
  std::vector<x86::Gp> ptr_reg_;  // per operand: its row pointer held across the loop, if any
  std::vector<V> scalar_reg_;     // per input: its broadcast one-element value, if any
  x86::Gp ptrs_;
  x86::Gp stream_;  // nonzero: full iterations store non-temporally
  // Rows of at least this many elements stream their outputs (16 MiB each: more than a core's
  // share of the last-level cache).
  static constexpr int kStreamElements = 1 << 22;
};

template <class Isa>
FusedRowFn compile_for(const FusedProgram& prog, uint32_t scalar_mask) {
  CodeHolder code;
  code.init(jit_runtime().environment());
  CollectErrors errors;
  code.setErrorHandler(&errors);
  x86::Compiler cc(&code);
  RowEmitter<Isa>(cc, prog, scalar_mask).emit();
  cc.finalize();
  if (errors.failed) return nullptr;
  FusedRowFn fn = nullptr;
  if (jit_runtime().add(&fn, &code) != kErrorOk) return nullptr;
  // Movable: one section (the local constant pool sits at its end) and no relocation (every
  // reference is RIP-relative, no call leaves it), so its bytes run at another address, in
  // another process.
  note_fused_code_size(fn, code.codeSize(), code.relocEntries().empty() && !code.hasAddressTable() &&
                                                code.sectionCount() == 1);
  return fn;
}

// Bytes another process's compile_for made (the compile cache), in executable memory.
FusedRowFn load_code(const std::string& bytes) {
  if (bytes.empty() || bytes.size() > (size_t{1} << 20)) return nullptr;
  void* rx = nullptr;
  void* rw = nullptr;
  if (jit_runtime().allocator()->alloc(&rx, &rw, bytes.size()) != kErrorOk) return nullptr;
  {
    VirtMem::ProtectJitReadWriteScope scope(rx, bytes.size());
    std::memcpy(rw, bytes.data(), bytes.size());
  }
  return reinterpret_cast<FusedRowFn>(rx);
}

// The same code as text: compiled once more with a logger, the result thrown away.
template <class Isa>
std::string asm_for(const FusedProgram& prog, uint32_t scalar_mask) {
  CodeHolder code;
  code.init(jit_runtime().environment());
  StringLogger logger;
  logger.addFlags(FormatFlags::kMachineCode);
  code.setLogger(&logger);
  CollectErrors errors;
  code.setErrorHandler(&errors);
  x86::Compiler cc(&code);
  RowEmitter<Isa>(cc, prog, scalar_mask).emit();
  cc.finalize();
  return errors.failed ? std::string() : std::string(logger.data(), logger.dataSize());
}

// AVX-512 where the CPU has F and DQ (and PIJIT_FUSED_ISA is not "avx2"), else AVX2+FMA, else
// none (the interpreter).
struct Register {
  Register() {
    const CpuFeatures::X86& f = CpuInfo::host().features().x86();
    const char* isa = std::getenv("PIJIT_FUSED_ISA");
    const bool want_avx2 = isa && std::strcmp(isa, "avx2") == 0;
    set_fused_code_loader(load_code);
    if (!want_avx2 && f.hasAVX512_F() && f.hasAVX512_DQ() && f.hasFMA())
    {
      set_fused_compiler(compile_for<Avx512>, "asmjit-avx512");
      set_fused_asm_printer(asm_for<Avx512>);
    } else if (f.hasAVX2() && f.hasFMA()) {
      set_fused_compiler(compile_for<Avx2>, "asmjit-avx2");
      set_fused_asm_printer(asm_for<Avx2>);
    }
  }
} register_backend;

}  // namespace
}  // namespace pj::codegen
