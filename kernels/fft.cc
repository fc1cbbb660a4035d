// Stockham mixed-radix FFT with Bluestein for large primes; see kernels/fft.h for the design.
#include "kernels/fft.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/threading.h"

namespace pj {
namespace {

// Complex arithmetic written out: std::complex's operator* checks for NaN/inf (a libcall per
// product without -ffast-math). Same layout as std::complex<T>.
template <typename T>
struct Cx {
  T re, im;
};
template <typename T>
inline Cx<T> operator+(Cx<T> a, Cx<T> b) { return {a.re + b.re, a.im + b.im}; }
template <typename T>
inline Cx<T> operator-(Cx<T> a, Cx<T> b) { return {a.re - b.re, a.im - b.im}; }
template <typename T>
inline Cx<T> operator*(Cx<T> a, Cx<T> b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
template <typename T>
inline Cx<T> scal(Cx<T> a, T s) { return {a.re * s, a.im * s}; }
template <typename T>
inline Cx<T> cj(Cx<T> a) { return {a.re, -a.im}; }
template <typename T>
inline Cx<T> mul_mi(Cx<T> a) { return {a.im, -a.re}; }  // a * (-i)

template <typename T>
Cx<T> unit(double num, double den) {  // e^{-2 pi i num/den}, computed in double
  // Quarter turns exactly (a Nyquist bin of a real signal stays real), others by sin/cos of the
  // angle reduced to (-pi, pi].
  double r = std::fmod(num, den);
  if (std::fmod(4 * r, den) == 0) {
    static const T q[4][2] = {{1, 0}, {0, -1}, {-1, 0}, {0, 1}};
    int k = static_cast<int>(4 * r / den) & 3;
    return {q[k][0], q[k][1]};
  }
  if (2 * r > den) r -= den;
  double a = -2.0 * M_PI * r / den;
  return {static_cast<T>(std::cos(a)), static_cast<T>(std::sin(a))};
}

std::vector<int> factorize(int64_t n) {  // radix 4 first (fewest passes), then 2, 3, 5, primes
  std::vector<int> f;
  while (n % 4 == 0) f.push_back(4), n /= 4;
  while (n % 2 == 0) f.push_back(2), n /= 2;
  for (int64_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) f.push_back(static_cast<int>(p)), n /= p;
  if (n > 1) f.push_back(n > (1LL << 30) ? -1 : static_cast<int>(n));
  return f;
}

template <typename T>
struct Plan {
  struct Stage {
    int p;
    int64_t ls, r;         // sub-transform length before this stage; N / (ls * p)
    std::vector<Cx<T>> tw;  // [j1 * (p - 1) + q - 1] = w_{ls p}^{q j1}
    std::vector<Cx<T>> wp;  // generic radix: w_p^k, k < p
  };
  int64_t n = 1;
  std::vector<Stage> stages;
  // Bluestein: chirp c_j = e^{-i pi j^2 / n}, spectrum of conj(c) over m points divided by m.
  bool bluestein = false;
  int64_t m = 0;
  std::vector<Cx<T>> chirp, bspec;
  std::shared_ptr<const Plan<T>> sub;
  // Four-step for one long signal (v == 1): n = n1 * n2 as an [n2][n1] matrix; n1 DFTs of length
  // n2 down the columns, twiddles w_n^{j1 k2}, n2 DFTs of length n1 along the rows, written
  // transposed. Each pass works on 16 lines at a time that fit in cache, where Stockham's
  // stages would stream the whole array (at power-of-two strides) log n times.
  bool four_step = false;
  int64_t n1 = 0, n2 = 0;
  std::shared_ptr<const Plan<T>> p1, p2;
  std::vector<Cx<T>> tw4;  // [k2 * n1 + j1]

  // Cx<T> elements of scratch `run` needs next to the data and a second buffer of n * v.
  int64_t scratch(int64_t v) const { return bluestein ? 2 * m * v : 0; }
  // Forward transform of v interleaved signals (element j of signal c at a[j * v + c]); a and b
  // hold n * v each; returns the buffer holding the result.
  Cx<T>* run(Cx<T>* a, Cx<T>* b, int64_t v, Cx<T>* scratch) const;
  Cx<T>* run_four_step(Cx<T>* a, Cx<T>* b) const;
};

constexpr int64_t kBlock = 16;  // lines transformed together, interleaved
constexpr int64_t kFourStepFrom = int64_t(1) << 15;

// Per-thread work memory kept between calls (a fresh large block page-faults on every touch).
// Slot 0: the batch loops' line buffers; slot 1: the four-step passes run inside them.
template <typename T>
Cx<T>* tls_buffer(int slot, int64_t count) {
  thread_local std::vector<Cx<T>> bufs[2];
  std::vector<Cx<T>>& b = bufs[slot];
  if (static_cast<int64_t>(b.size()) < count) {
    std::vector<Cx<T>>().swap(b);
    b.resize(count);
  }
  return b.data();
}

template <typename T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n);

// The butterflies of one stage for one j1, over t in [tb, te): inputs in[q * rv + t] times
// w[q - 1] (Tw false: j1 == 0, all twiddles 1), outputs o[j2 * step + t]. Branch-free bodies with
// restrict pointers so the t loops vectorise.
template <typename T, bool Tw>
void radix2(const Cx<T>* __restrict in, Cx<T>* __restrict o, int64_t rv, int64_t step, const Cx<T>* w,
            int64_t tb, int64_t te) {
  const Cx<T> w1 = w[0];
  for (int64_t t = tb; t < te; ++t) {
    Cx<T> a0 = in[t], a1 = in[rv + t];
    if constexpr (Tw) a1 = a1 * w1;
    o[t] = a0 + a1;
    o[step + t] = a0 - a1;
  }
}

template <typename T, bool Tw>
void radix4(const Cx<T>* __restrict in, Cx<T>* __restrict o, int64_t rv, int64_t step, const Cx<T>* w,
            int64_t tb, int64_t te) {
  const Cx<T> w1 = w[0], w2 = w[1], w3 = w[2];
  for (int64_t t = tb; t < te; ++t) {
    Cx<T> a0 = in[t], a1 = in[rv + t], a2 = in[2 * rv + t], a3 = in[3 * rv + t];
    if constexpr (Tw) {
      a1 = a1 * w1;
      a2 = a2 * w2;
      a3 = a3 * w3;
    }
    Cx<T> b0 = a0 + a2, b1 = a0 - a2, b2 = a1 + a3, b3 = mul_mi(a1 - a3);
    o[t] = b0 + b2;
    o[step + t] = b1 + b3;
    o[2 * step + t] = b0 - b2;
    o[3 * step + t] = b1 - b3;
  }
}

template <typename T, bool Tw>
void radix3(const Cx<T>* __restrict in, Cx<T>* __restrict o, int64_t rv, int64_t step, const Cx<T>* w,
            int64_t tb, int64_t te) {
  const T h = static_cast<T>(0.86602540378443864676);  // sin(2 pi / 3)
  const Cx<T> w1 = w[0], w2 = w[1];
  for (int64_t t = tb; t < te; ++t) {
    Cx<T> a0 = in[t], a1 = in[rv + t], a2 = in[2 * rv + t];
    if constexpr (Tw) {
      a1 = a1 * w1;
      a2 = a2 * w2;
    }
    Cx<T> s12 = a1 + a2, d = a1 - a2;
    Cx<T> m = a0 - scal(s12, T(0.5));
    Cx<T> u = scal(mul_mi(d), h);
    o[t] = a0 + s12;
    o[step + t] = m + u;
    o[2 * step + t] = m - u;
  }
}

template <typename T, bool Tw>
void radix5(const Cx<T>* __restrict in, Cx<T>* __restrict o, int64_t rv, int64_t step, const Cx<T>* w,
            int64_t tb, int64_t te) {
  const T c1 = static_cast<T>(0.30901699437494742410), c2 = static_cast<T>(-0.80901699437494742410);
  const T s1 = static_cast<T>(0.95105651629515357212), s2 = static_cast<T>(0.58778525229247312917);
  const Cx<T> w1 = w[0], w2 = w[1], w3 = w[2], w4 = w[3];
  for (int64_t t = tb; t < te; ++t) {
    Cx<T> a0 = in[t], a1 = in[rv + t], a2 = in[2 * rv + t], a3 = in[3 * rv + t], a4 = in[4 * rv + t];
    if constexpr (Tw) {
      a1 = a1 * w1;
      a2 = a2 * w2;
      a3 = a3 * w3;
      a4 = a4 * w4;
    }
    Cx<T> s14 = a1 + a4, d14 = a1 - a4, s23 = a2 + a3, d23 = a2 - a3;
    Cx<T> t1 = a0 + scal(s14, c1) + scal(s23, c2), t2 = a0 + scal(s14, c2) + scal(s23, c1);
    Cx<T> u1 = mul_mi(scal(d14, s1) + scal(d23, s2)), u2 = mul_mi(scal(d14, s2) - scal(d23, s1));
    o[t] = a0 + s14 + s23;
    o[step + t] = t1 + u1;
    o[4 * step + t] = t1 - u1;
    o[2 * step + t] = t2 + u2;
    o[3 * step + t] = t2 - u2;
  }
}

template <typename T>
void radix_generic(const Cx<T>* in, Cx<T>* o, int64_t rv, int64_t step, const Cx<T>* w, const Cx<T>* wp, int p,
                   bool plain, int64_t tb, int64_t te) {
  Cx<T> a[kFftMaxRadix];
  for (int64_t t = tb; t < te; ++t) {
    a[0] = in[t];
    for (int q = 1; q < p; ++q) a[q] = plain ? in[q * rv + t] : in[q * rv + t] * w[q - 1];
    for (int j2 = 0; j2 < p; ++j2) {
      Cx<T> acc = a[0];
      int k = 0;
      for (int q = 1; q < p; ++q) {
        k += j2;
        if (k >= p) k -= p;
        acc = acc + a[q] * wp[k];
      }
      o[j2 * step + t] = acc;
    }
  }
}

template <typename T>
void stage_range(const typename Plan<T>::Stage& s, const Cx<T>* x, Cx<T>* y, int64_t rv, int64_t j1b,
                 int64_t j1e, int64_t tb, int64_t te) {
  const int p = s.p;
  const int64_t step = s.ls * rv;  // output distance between j2 and j2 + 1
  static const Cx<T> ones[4] = {{1, 0}, {1, 0}, {1, 0}, {1, 0}};
  for (int64_t j1 = j1b; j1 < j1e; ++j1) {
    const bool plain = j1 == 0;
    const Cx<T>* w = plain && p <= 5 ? ones : s.tw.data() + j1 * (p - 1);
    const Cx<T>* in = x + j1 * p * rv;
    Cx<T>* o = y + j1 * rv;
    switch (p) {
      case 2: plain ? radix2<T, false>(in, o, rv, step, w, tb, te) : radix2<T, true>(in, o, rv, step, w, tb, te); break;
      case 3: plain ? radix3<T, false>(in, o, rv, step, w, tb, te) : radix3<T, true>(in, o, rv, step, w, tb, te); break;
      case 4: plain ? radix4<T, false>(in, o, rv, step, w, tb, te) : radix4<T, true>(in, o, rv, step, w, tb, te); break;
      case 5: plain ? radix5<T, false>(in, o, rv, step, w, tb, te) : radix5<T, true>(in, o, rv, step, w, tb, te); break;
      default: radix_generic<T>(in, o, rv, step, w, s.wp.data(), p, plain, tb, te);
    }
  }
}

template <typename T>
void run_stage(const typename Plan<T>::Stage& s, const Cx<T>* x, Cx<T>* y, int64_t rv) {
  const int64_t ls = s.ls, work = ls * s.p * rv;
  // One long signal: split the stage (outer batch loops already run one line per thread).
  if (work < (int64_t(1) << 15) || get_num_threads() <= 1 || omp_in_parallel()) {
    stage_range<T>(s, x, y, rv, 0, ls, 0, rv);
  } else if (ls >= 4 * get_num_threads()) {
    parallel_for(ls, std::max<int64_t>(1, 4096 / (s.p * rv)),
                 [&](int64_t b, int64_t e) { stage_range<T>(s, x, y, rv, b, e, 0, rv); });
  } else {
    parallel_for(rv, std::max<int64_t>(64, 4096 / (s.p * ls)),
                 [&](int64_t b, int64_t e) { stage_range<T>(s, x, y, rv, 0, ls, b, e); });
  }
}

template <typename T>
Cx<T>* Plan<T>::run(Cx<T>* a, Cx<T>* b, int64_t v, Cx<T>* scr) const {
  if (four_step && v == 1) return run_four_step(a, b);
  if (!bluestein) {
    for (const Stage& s : stages) {
      run_stage<T>(s, a, b, s.r * v);
      std::swap(a, b);
    }
    return a;
  }
  // X_k = c_k * sum_j (x_j c_j) conj(c_{k-j}): a circular convolution over m >= 2n - 1 points.
  Cx<T>* A = scr;
  Cx<T>* B = scr + m * v;
  parallel_for(m, kParallelGrain / std::max<int64_t>(1, v), [&](int64_t b0, int64_t e0) {
    for (int64_t j = b0; j < e0; ++j)
      for (int64_t c = 0; c < v; ++c) A[j * v + c] = j < n ? a[j * v + c] * chirp[j] : Cx<T>{0, 0};
  });
  Cx<T>* R = sub->run(A, B, v, nullptr);
  Cx<T>* other = R == A ? B : A;
  // Inverse by conjugation: ifft(z) = conj(fft(conj z)); bspec holds 1/m.
  parallel_for(m, kParallelGrain / std::max<int64_t>(1, v), [&](int64_t b0, int64_t e0) {
    for (int64_t k = b0; k < e0; ++k)
      for (int64_t c = 0; c < v; ++c) R[k * v + c] = cj(R[k * v + c] * bspec[k]);
  });
  Cx<T>* R2 = sub->run(R, other, v, nullptr);
  parallel_for(n, kParallelGrain / std::max<int64_t>(1, v), [&](int64_t b0, int64_t e0) {
    for (int64_t k = b0; k < e0; ++k)
      for (int64_t c = 0; c < v; ++c) a[k * v + c] = cj(R2[k * v + c]) * chirp[k];
  });
  (void)b;
  return a;
}

template <typename T>
Cx<T>* Plan<T>::run_four_step(Cx<T>* a, Cx<T>* b) const {
  const int64_t cb = (n1 + kBlock - 1) / kBlock, rb = (n2 + kBlock - 1) / kBlock;
  parallel_for(cb, 1, [&](int64_t b0, int64_t e0) {
    Cx<T>* t = tls_buffer<T>(1, 2 * n2 * kBlock + p2->scratch(kBlock));
    for (int64_t blk = b0; blk < e0; ++blk) {
      const int64_t c0 = blk * kBlock, w = std::min(kBlock, n1 - c0);
      for (int64_t j2 = 0; j2 < n2; ++j2)
        for (int64_t c = 0; c < w; ++c) t[j2 * w + c] = a[j2 * n1 + c0 + c];
      const Cx<T>* r = p2->run(t, t + n2 * w, w, t + 2 * n2 * w);
      for (int64_t k2 = 0; k2 < n2; ++k2)
        for (int64_t c = 0; c < w; ++c) b[k2 * n1 + c0 + c] = r[k2 * w + c] * tw4[k2 * n1 + c0 + c];
    }
  });
  parallel_for(rb, 1, [&](int64_t b0, int64_t e0) {
    Cx<T>* t = tls_buffer<T>(1, 2 * n1 * kBlock + p1->scratch(kBlock));
    for (int64_t blk = b0; blk < e0; ++blk) {
      const int64_t r0 = blk * kBlock, w = std::min(kBlock, n2 - r0);
      for (int64_t c = 0; c < w; ++c)
        for (int64_t j1 = 0; j1 < n1; ++j1) t[j1 * w + c] = b[(r0 + c) * n1 + j1];
      const Cx<T>* r = p1->run(t, t + n1 * w, w, t + 2 * n1 * w);
      for (int64_t k1 = 0; k1 < n1; ++k1)
        for (int64_t c = 0; c < w; ++c) a[r0 + c + n2 * k1] = r[k1 * w + c];
    }
  });
  return a;
}

template <typename T>
std::shared_ptr<Plan<T>> build_plan(int64_t n) {
  auto plan = std::make_shared<Plan<T>>();
  plan->n = n;
  std::vector<int> f = factorize(n);
  bool big = false;
  for (int p : f) big = big || p < 0 || p > kFftMaxRadix;
  if (!big) {
    int64_t ls = 1;
    for (int p : f) {
      typename Plan<T>::Stage s;
      s.p = p;
      s.ls = ls;
      s.r = n / (ls * p);
      s.tw.resize(ls * (p - 1));
      for (int64_t j1 = 0; j1 < ls; ++j1)
        for (int q = 1; q < p; ++q) s.tw[j1 * (p - 1) + q - 1] = unit<T>(static_cast<double>(q * j1), double(ls * p));
      if (p > 5) {
        s.wp.resize(p);
        for (int k = 0; k < p; ++k) s.wp[k] = unit<T>(k, p);
      }
      plan->stages.push_back(std::move(s));
      ls *= p;
    }
    if (n >= kFourStepFrom) {
      int64_t n1 = 1;
      for (int p : f)
        if (n1 * n1 < n) n1 *= p;
      const int64_t n2 = n / n1;
      if (n1 >= kBlock && n2 >= kBlock) {
        plan->four_step = true;
        plan->n1 = n1;
        plan->n2 = n2;
        plan->p1 = get_plan<T>(n1);
        plan->p2 = get_plan<T>(n2);
        plan->tw4.resize(n);
        for (int64_t k2 = 0; k2 < n2; ++k2)
          for (int64_t j1 = 0; j1 < n1; ++j1)
            plan->tw4[k2 * n1 + j1] = unit<T>(static_cast<double>((j1 * k2) % n), static_cast<double>(n));
      }
    }
    return plan;
  }
  plan->bluestein = true;
  // The convolution length: the cheapest of the next power of two and the next 2/3- and
  // 2/3/5-smooth lengths >= 2n - 1 (radix 3 and 5 stages cost more per point than radix 4).
  int64_t m = 0;
  double best = 0;
  for (int kind = 0; kind < 3; ++kind) {
    int64_t c = 2 * n - 1;
    auto fits = [&](int64_t v) {
      for (int p : {2, 3, 5})
        if (p <= (kind == 0 ? 2 : kind == 1 ? 3 : 5))
          while (v % p == 0) v /= p;
      return v == 1;
    };
    while (!fits(c)) ++c;
    const double weight = kind == 0 ? 1.0 : kind == 1 ? 1.15 : 1.3;
    const double cost = static_cast<double>(c) * std::log2(static_cast<double>(c)) * weight;
    if (m == 0 || cost < best) m = c, best = cost;
  }
  plan->m = m;
  plan->sub = get_plan<T>(m);
  plan->chirp.resize(n);
  for (int64_t j = 0; j < n; ++j) {
    // j^2 mod 2n keeps the angle exact for large j (e^{-i pi j^2/n} has period 2n in j^2).
    int64_t q = static_cast<int64_t>((static_cast<unsigned __int128>(j) * j) % (2 * n));
    plan->chirp[j] = unit<T>(static_cast<double>(q), static_cast<double>(2 * n));
  }
  std::vector<Cx<T>> b(m, Cx<T>{0, 0}), tmp(m);
  for (int64_t j = 0; j < n; ++j) {
    b[j] = cj(plan->chirp[j]);
    if (j) b[m - j] = cj(plan->chirp[j]);
  }
  Cx<T>* r = plan->sub->run(b.data(), tmp.data(), 1, nullptr);
  plan->bspec.resize(m);
  for (int64_t k = 0; k < m; ++k) plan->bspec[k] = scal(r[k], static_cast<T>(1.0 / double(m)));
  return plan;
}

template <typename T>
struct PlanCache {
  std::mutex mu;
  std::map<int64_t, std::shared_ptr<const Plan<T>>> plans;
};
template <typename T>
PlanCache<T>& plan_cache() {
  static PlanCache<T>* c = new PlanCache<T>();  // never destroyed: worker threads may outlive exit
  return *c;
}

template <typename T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n) {
  PlanCache<T>& c = plan_cache<T>();
  {
    std::lock_guard<std::mutex> g(c.mu);
    auto it = c.plans.find(n);
    if (it != c.plans.end()) return it->second;
  }
  auto p = build_plan<T>(n);  // outside the lock: Bluestein builds its sub-plan through here
  std::lock_guard<std::mutex> g(c.mu);
  if (c.plans.size() >= 256) c.plans.clear();  // bounded: plans of forgotten lengths go
  c.plans.emplace(n, p);
  return p;
}

// Twiddles of the half-length real trick: w_n^k for k <= n/2, cached by n.
template <typename T>
std::shared_ptr<const std::vector<Cx<T>>> real_twiddles(int64_t n) {
  static std::mutex mu;
  static auto* cache = new std::map<int64_t, std::shared_ptr<const std::vector<Cx<T>>>>();
  std::lock_guard<std::mutex> g(mu);
  auto it = cache->find(n);
  if (it != cache->end()) return it->second;
  auto v = std::make_shared<std::vector<Cx<T>>>(n / 2 + 1);
  for (int64_t k = 0; k <= n / 2; ++k) (*v)[k] = unit<T>(k, n);
  if (cache->size() >= 256) cache->clear();
  cache->emplace(n, v);
  return v;
}

// [outer, len, inner] geometry of axis `ax` in `shape`.
struct Geom {
  int64_t outer = 1, inner = 1;
};
Geom geom(const Shape& shape, int ax) {
  Geom g;
  for (int i = 0; i < ax; ++i) g.outer *= shape[i];
  for (size_t i = ax + 1; i < shape.size(); ++i) g.inner *= shape[i];
  return g;
}

// Lines of an [outer, len, inner] array, kBlock at a time: neighbours in memory share a block
// (consecutive inner positions, or consecutive rows when inner == 1 and the rows are short).
// f(block, x, y, scratch) gets two n * v buffers and the plan's scratch.
struct Block {
  int64_t v;                   // lines in the block
  int64_t in_off[kBlock];      // offset of each line's element 0 in the input
  int64_t out_off[kBlock];     // and in the output; a line's elements are `inner` apart
};

template <typename T, typename F>
void for_blocks(int64_t outer, int64_t inner, int64_t lin, int64_t lout, const Plan<T>& plan, F&& f) {
  const int64_t n = plan.n;
  const bool rows = inner == 1;
  const int64_t v = rows ? (n <= 16384 ? std::min(kBlock, outer) : 1) : std::min(kBlock, inner);
  const int64_t per = rows ? 1 : (inner + v - 1) / v;
  const int64_t units = rows ? (outer + v - 1) / v : outer * per;
  const int64_t scr = plan.scratch(v);
  parallel_for(units, std::max<int64_t>(1, kParallelGrain / (n * v)), [&](int64_t b, int64_t e) {
    Cx<T>* buf = tls_buffer<T>(0, 2 * n * v + scr);
    Block blk;
    for (int64_t u = b; u < e; ++u) {
      if (rows) {
        const int64_t o0 = u * v;
        blk.v = std::min(v, outer - o0);
        for (int64_t c = 0; c < blk.v; ++c) blk.in_off[c] = (o0 + c) * lin, blk.out_off[c] = (o0 + c) * lout;
      } else {
        const int64_t o = u / per, i0 = (u % per) * v;
        blk.v = std::min(v, inner - i0);
        for (int64_t c = 0; c < blk.v; ++c)
          blk.in_off[c] = o * lin * inner + i0 + c, blk.out_off[c] = o * lout * inner + i0 + c;
      }
      f(blk, buf, buf + n * blk.v, buf + 2 * n * blk.v);
    }
  });
}

// One complex pass: in [outer, lin, inner] -> out [outer, lout, inner].
template <typename T>
void c2c_pass(const Cx<T>* in, Cx<T>* out, const Geom& g, int64_t lin, const FftAxis& a, bool inverse, T scale) {
  const int64_t n = a.n, lout = a.out, inner = g.inner, keep = std::min(lin, n), kept = std::min(lout, n);
  auto plan = get_plan<T>(n);
  for_blocks<T>(g.outer, inner, lin, lout, *plan, [&](const Block& bk, Cx<T>* x, Cx<T>* y, Cx<T>* scr) {
    const int64_t v = bk.v;
    for (int64_t c = 0; c < v; ++c) {
      const Cx<T>* src = in + bk.in_off[c];
      for (int64_t j = 0; j < keep; ++j) x[j * v + c] = inverse ? cj(src[j * inner]) : src[j * inner];
      for (int64_t j = keep; j < n; ++j) x[j * v + c] = {0, 0};
    }
    const Cx<T>* r = plan->run(x, y, v, scr);
    for (int64_t c = 0; c < v; ++c) {
      Cx<T>* dst = out + bk.out_off[c];
      for (int64_t j = 0; j < kept; ++j) {
        Cx<T> z = scal(r[j * v + c], scale);
        dst[j * inner] = inverse ? cj(z) : z;
      }
      for (int64_t j = kept; j < lout; ++j) dst[j * inner] = {0, 0};
    }
  });
}

inline bool mirrored(int64_t k, int64_t n) { return k > 0 && 2 * k < n; }  // bin with a partner n - k

// Real pass: in [outer, lin, inner] real -> out [outer, lout, inner] complex, bins < n/2 + 1.
template <typename T>
void r2c_pass(const T* in, Cx<T>* out, const Geom& g, int64_t lin, const FftAxis& a, bool inverse, T scale,
              bool adjoint) {
  const int64_t n = a.n, lout = a.out, inner = g.inner, keep = std::min(lin, n), nb = std::min(lout, n / 2 + 1);
  auto weight = [&](int64_t k) { return adjoint && mirrored(k, n) ? scale * T(2) : scale; };
  auto emit = [&](Cx<T>* dst, int64_t k, Cx<T> X) {  // a real signal's e^{+} transform is the conjugate
    X = scal(X, weight(k));
    dst[k * inner] = inverse ? cj(X) : X;
  };
  if (inner == 1 && n % 2 == 0 && n >= 2) {
    // Even n: z_j = x_2j + i x_2j+1 through an n/2-point FFT, then split into the even and odd
    // samples' spectra: X_k = E_k + w_n^k O_k.
    const int64_t h = n / 2;
    auto plan = get_plan<T>(h);
    auto tw = real_twiddles<T>(n);
    for_blocks<T>(g.outer, 1, lin, lout, *plan, [&](const Block& bk, Cx<T>* x, Cx<T>* y, Cx<T>* scr) {
      const int64_t v = bk.v;
      for (int64_t c = 0; c < v; ++c) {
        const T* src = in + bk.in_off[c];
        for (int64_t j = 0; j < h; ++j)
          x[j * v + c] = {2 * j < keep ? src[2 * j] : T(0), 2 * j + 1 < keep ? src[2 * j + 1] : T(0)};
      }
      const Cx<T>* z = plan->run(x, y, v, scr);
      for (int64_t c = 0; c < v; ++c) {
        Cx<T>* dst = out + bk.out_off[c];
        for (int64_t k = 0; k < nb; ++k) {
          Cx<T> zk = z[(k % h) * v + c], zc = cj(z[((h - k) % h) * v + c]);
          Cx<T> e = scal(zk + zc, T(0.5)), od = scal(mul_mi(zk - zc), T(0.5));
          emit(dst, k, e + (*tw)[k] * od);
        }
        for (int64_t k = nb; k < lout; ++k) dst[k] = {0, 0};
      }
    });
    return;
  }
  auto plan = get_plan<T>(n);
  for_blocks<T>(g.outer, inner, lin, lout, *plan, [&](const Block& bk, Cx<T>* x, Cx<T>* y, Cx<T>* scr) {
    const int64_t v = bk.v;
    for (int64_t c = 0; c < v; ++c) {
      const T* src = in + bk.in_off[c];
      for (int64_t j = 0; j < n; ++j) x[j * v + c] = {j < keep ? src[j * inner] : T(0), T(0)};
    }
    const Cx<T>* r = plan->run(x, y, v, scr);
    for (int64_t c = 0; c < v; ++c) {
      Cx<T>* dst = out + bk.out_off[c];
      for (int64_t k = 0; k < nb; ++k) emit(dst, k, r[k * v + c]);
      for (int64_t k = nb; k < lout; ++k) dst[k * inner] = {0, 0};
    }
  });
}

// Hermitian pass: in [outer, lin, inner] complex half spectrum -> out [outer, lout, inner] real.
template <typename T>
void c2r_pass(const Cx<T>* in, T* out, const Geom& g, int64_t lin, const FftAxis& a, bool inverse, T scale,
              bool adjoint) {
  const int64_t n = a.n, lout = a.out, inner = g.inner, keep = std::min(lout, n);
  const int64_t nb = std::min(lin, n / 2 + 1);  // bins read
  // Bin k as the transform sees it: conjugated for the e^{-} direction (the result is real, so
  // sum X e^{-} = sum conj(X) e^{+}), imaginary part of 0 and n/2 dropped, adjoint weights.
  auto bin = [&](const Cx<T>* src, int64_t k) -> Cx<T> {
    if (k >= nb) return {0, 0};
    Cx<T> X = inverse ? src[k * inner] : cj(src[k * inner]);
    if (k == 0 || 2 * k == n) X.im = 0;
    if (adjoint && mirrored(k, n)) X = scal(X, T(0.5));
    return X;
  };
  if (inner == 1 && n % 2 == 0 && n >= 2) {
    const int64_t h = n / 2;
    auto plan = get_plan<T>(h);
    auto tw = real_twiddles<T>(n);
    for_blocks<T>(g.outer, 1, lin, lout, *plan, [&](const Block& bk, Cx<T>* x, Cx<T>* y, Cx<T>* scr) {
      const int64_t v = bk.v;
      // Z_k = (X_k + conj X_{h-k}) + i (X_k - conj X_{h-k}) e^{+2 pi i k/n}: the spectrum of
      // z_j = x_2j + i x_2j+1; conj-FFT-conj inverts it.
      for (int64_t c = 0; c < v; ++c) {
        const Cx<T>* src = in + bk.in_off[c];
        for (int64_t k = 0; k < h; ++k) {
          Cx<T> xk = bin(src, k), xc = cj(bin(src, h - k));
          Cx<T> e = xk + xc, d = (xk - xc) * cj((*tw)[k]);
          x[k * v + c] = cj(Cx<T>{e.re - d.im, e.im + d.re});
        }
      }
      const Cx<T>* r = plan->run(x, y, v, scr);
      for (int64_t c = 0; c < v; ++c) {
        T* dst = out + bk.out_off[c];
        for (int64_t j = 0; j < h; ++j) {
          if (2 * j < keep) dst[2 * j] = r[j * v + c].re * scale;
          if (2 * j + 1 < keep) dst[2 * j + 1] = -r[j * v + c].im * scale;
        }
        for (int64_t j = keep; j < lout; ++j) dst[j] = T(0);
      }
    });
    return;
  }
  auto plan = get_plan<T>(n);
  for_blocks<T>(g.outer, inner, lin, lout, *plan, [&](const Block& bk, Cx<T>* x, Cx<T>* y, Cx<T>* scr) {
    const int64_t v = bk.v;
    for (int64_t c = 0; c < v; ++c) {
      const Cx<T>* src = in + bk.in_off[c];
      for (int64_t k = 0; k < n; ++k) {
        // Hermitian extension, conjugated for the forward-FFT inverse (the real part survives).
        Cx<T> X = 2 * k <= n ? bin(src, k) : cj(bin(src, n - k));
        x[k * v + c] = cj(X);
      }
    }
    const Cx<T>* r = plan->run(x, y, v, scr);
    for (int64_t c = 0; c < v; ++c) {
      T* dst = out + bk.out_off[c];
      for (int64_t j = 0; j < lout; ++j) dst[j * inner] = j < keep ? r[j * v + c].re * scale : T(0);
    }
  });
}

template <typename T>
void c2c_impl(const Tensor& in_t, const Tensor& out, const std::vector<FftAxis>& axes, bool inverse, double scale) {
  Tensor in = in_t.contiguous();
  Shape shape = in.shape();
  const Cx<T>* src = reinterpret_cast<const Cx<T>*>(in.raw_data());
  std::vector<Cx<T>> bufs[2];  // intermediates of a multi-axis transform, used in turn
  for (size_t i = 0; i < axes.size(); ++i) {
    const FftAxis& a = axes[i];
    int64_t lin = shape[a.axis];
    Geom g = geom(shape, a.axis);
    shape[a.axis] = a.out;
    const bool last = i + 1 == axes.size();
    Cx<T>* dst;
    if (last) {
      dst = reinterpret_cast<Cx<T>*>(out.raw_data());
    } else {
      bufs[i % 2].assign(shape_numel(shape), Cx<T>{0, 0});
      dst = bufs[i % 2].data();
    }
    if (g.outer * g.inner * a.out > 0)
      c2c_pass<T>(src, dst, g, lin, a, inverse, last ? static_cast<T>(scale) : T(1));
    src = dst;
  }
}

template <typename T>
void r2c_impl(const Tensor& in_t, const Tensor& out, const std::vector<FftAxis>& axes, bool inverse, double scale,
              bool adjoint) {
  Tensor in = in_t.contiguous();
  Shape shape = in.shape();
  const FftAxis& ra = axes.back();
  int64_t lin = shape[ra.axis];
  Geom g = geom(shape, ra.axis);
  shape[ra.axis] = ra.out;
  if (axes.size() == 1) {
    if (out.numel()) r2c_pass<T>(in.data<T>(), reinterpret_cast<Cx<T>*>(out.raw_data()), g, lin, ra, inverse,
                                 static_cast<T>(scale), adjoint);
    return;
  }
  Tensor mid = Tensor::zeros(shape, out.dtype());
  if (mid.numel())
    r2c_pass<T>(in.data<T>(), reinterpret_cast<Cx<T>*>(mid.raw_data()), g, lin, ra, inverse, T(1), adjoint);
  std::vector<FftAxis> rest(axes.begin(), axes.end() - 1);
  c2c_impl<T>(mid, out, rest, inverse, scale);
}

template <typename T>
void c2r_impl(const Tensor& in_t, const Tensor& out, const std::vector<FftAxis>& axes, bool inverse, double scale,
              bool adjoint) {
  Tensor in = in_t.contiguous();
  const FftAxis& ra = axes.back();
  Tensor mid = in;
  if (axes.size() > 1) {
    Shape shape = in.shape();
    for (size_t i = 0; i + 1 < axes.size(); ++i) shape[axes[i].axis] = axes[i].out;
    mid = Tensor::zeros(shape, in.dtype());
    if (mid.numel()) c2c_impl<T>(in, mid, std::vector<FftAxis>(axes.begin(), axes.end() - 1), inverse, 1.0);
  }
  Geom g = geom(mid.shape(), ra.axis);
  int64_t lin = mid.shape()[ra.axis];
  if (out.numel())
    c2r_pass<T>(reinterpret_cast<const Cx<T>*>(mid.raw_data()), out.data<T>(), g, lin, ra, inverse,
                static_cast<T>(scale), adjoint);
}

void check_axes(const Tensor& in, const std::vector<FftAxis>& axes) {
  if (axes.empty()) PJ_THROW(Value) << "fft: no axes to transform";
  for (const FftAxis& a : axes) {
    if (a.axis < 0 || a.axis >= in.ndim()) PJ_THROW(Value) << "fft: axis " << a.axis << " out of range";
    if (a.n < 1) PJ_THROW(Value) << "fft: invalid number of data points (" << a.n << ") specified";
  }
}

}  // namespace

void fft_c2c(const Tensor& in, const Tensor& out, const std::vector<FftAxis>& axes, bool inverse, double scale) {
  check_axes(in, axes);
  if (in.dtype() == DType::Complex64) return c2c_impl<float>(in, out, axes, inverse, scale);
  if (in.dtype() == DType::Complex128) return c2c_impl<double>(in, out, axes, inverse, scale);
  PJ_THROW(Type) << "fft: expected complex64 or complex128, got " << dtype_name(in.dtype());
}

void fft_r2c(const Tensor& in, const Tensor& out, const std::vector<FftAxis>& axes, bool inverse, double scale,
             bool adjoint) {
  check_axes(in, axes);
  if (in.dtype() == DType::Float32) return r2c_impl<float>(in, out, axes, inverse, scale, adjoint);
  if (in.dtype() == DType::Float64) return r2c_impl<double>(in, out, axes, inverse, scale, adjoint);
  PJ_THROW(Type) << "rfft: expected float32 or float64, got " << dtype_name(in.dtype());
}

void fft_c2r(const Tensor& in, const Tensor& out, const std::vector<FftAxis>& axes, bool inverse, double scale,
             bool adjoint) {
  check_axes(in, axes);
  if (in.dtype() == DType::Complex64) return c2r_impl<float>(in, out, axes, inverse, scale, adjoint);
  if (in.dtype() == DType::Complex128) return c2r_impl<double>(in, out, axes, inverse, scale, adjoint);
  PJ_THROW(Type) << "irfft: expected complex64 or complex128, got " << dtype_name(in.dtype());
}

std::string fft_plan_summary(int64_t n) {
  auto p = get_plan<double>(n);
  if (p->bluestein) return "bluestein(" + std::to_string(p->m) + ")";
  std::string s;
  for (const auto& st : p->stages) s += (s.empty() ? "" : "x") + std::to_string(st.p);
  if (s.empty()) s = "1";
  if (p->four_step) s += " four-step(" + std::to_string(p->n1) + "x" + std::to_string(p->n2) + ")";
  return s;
}

int64_t fft_cached_plans() {
  int64_t k = 0;
  {
    std::lock_guard<std::mutex> g(plan_cache<float>().mu);
    k += static_cast<int64_t>(plan_cache<float>().plans.size());
  }
  std::lock_guard<std::mutex> g(plan_cache<double>().mu);
  return k + static_cast<int64_t>(plan_cache<double>().plans.size());
}

}  // namespace pj
