#include "kernels/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "kernels/copy.h"
#include "kernels/threading.h"

namespace pj {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
#define PJ_X(name) case ReduceOp::name: return #name;
    PJ_REDUCE_OPS(PJ_X)
#undef PJ_X
  }
  return "?";
}

DType reduce_out_dtype(ReduceOp op, DType in) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::prod: return is_floating(in) ? in : DType::Int64;
    case ReduceOp::mean:
    case ReduceOp::var:
    case ReduceOp::std:
    case ReduceOp::logsumexp: return to_floating(in);
    case ReduceOp::max:
    case ReduceOp::min: return in;
    case ReduceOp::all:
    case ReduceOp::any: return DType::Bool;
    case ReduceOp::argmax:
    case ReduceOp::argmin: return DType::Int64;
  }
  return in;
}

namespace {

// Reduction elements per partial result. Fixed (never derived from the thread count) so that
// the order of floating-point merges, hence the result, is the same on any machine.
constexpr int64_t kBlock = 16384;
// Outputs accumulated together in outer mode (and cumsum's column mode): up to whole rows, so
// the input is read in long sequential runs; the accumulators (<= 128 KiB) stay in L2.
constexpr int64_t kTile = 16384;
// Independent accumulators in inner mode: enough to fill AVX2 registers and hide add latency.
constexpr int kLanes = 16;

// The reduction's geometry after dropping size-1 dims, sorting by stride and merging.
struct Geom {
  Shape ks, kin, kout;  // kept dims, outermost first: sizes, input strides, output strides
  Shape rs, rin;        // reduced dims, outermost first: sizes, input strides
  int64_t kn = 1, rn = 1;  // number of outputs, elements per output
};

Geom make_geom(const Tensor& in, const std::vector<int>& axes) {
  const int nd = in.ndim();
  std::vector<bool> red(nd, false);
  for (int a : axes) red[a] = true;
  // The output is contiguous over the kept dims in their original order.
  std::vector<int64_t> ostr(nd, 0);
  int64_t acc = 1;
  for (int d = nd - 1; d >= 0; --d)
    if (!red[d]) {
      ostr[d] = acc;
      acc *= in.dim(d);
    }
  struct D { int64_t n, s, o; };
  std::vector<D> k, r;
  Geom g;
  for (int d = 0; d < nd; ++d) {
    (red[d] ? g.rn : g.kn) *= in.dim(d);
    if (in.dim(d) == 1) continue;
    (red[d] ? r : k).push_back({in.dim(d), in.stride(d), ostr[d]});
  }
  // Innermost = smallest input stride, so the inner loops walk memory forwards. Stable, so a
  // contiguous input keeps its logical order (argmax relies on that).
  auto outer_first = [](const D& a, const D& b) { return std::abs(a.s) > std::abs(b.s); };
  std::stable_sort(k.begin(), k.end(), outer_first);
  std::stable_sort(r.begin(), r.end(), outer_first);
  for (const D& x : k) {
    if (!g.ks.empty() && g.kin.back() == x.s * x.n && g.kout.back() == x.o * x.n) {
      g.ks.back() *= x.n;
      g.kin.back() = x.s;
      g.kout.back() = x.o;
      continue;
    }
    g.ks.push_back(x.n);
    g.kin.push_back(x.s);
    g.kout.push_back(x.o);
  }
  for (const D& x : r) {
    if (!g.rs.empty() && g.rin.back() == x.s * x.n) {
      g.rs.back() *= x.n;
      g.rin.back() = x.s;
      continue;
    }
    g.rs.push_back(x.n);
    g.rin.push_back(x.s);
  }
  return g;
}

// Input and output offsets of element `o` of the first `nd` kept dims (row-major over them).
inline void kept_offsets(const Geom& g, int nd, int64_t o, int64_t* in_off, int64_t* out_off) {
  int64_t i = 0, q = 0;
  for (int d = nd - 1; d >= 0; --d) {
    int64_t x = o % g.ks[d];
    o /= g.ks[d];
    i += x * g.kin[d];
    q += x * g.kout[d];
  }
  *in_off = i;
  *out_off = q;
}

// Walks the reduced space from linear index r0 one innermost row at a time.
class RowWalker {
 public:
  RowWalker(const Geom& g, int64_t r0) : g_(g), idx_(g.rs.size(), 0) {
    for (int d = static_cast<int>(g.rs.size()) - 1; d >= 0; --d) {
      idx_[d] = r0 % g.rs[d];
      r0 /= g.rs[d];
    }
  }
  // Input offset of the current position.
  int64_t offset() const {
    int64_t off = 0;
    for (size_t d = 0; d < idx_.size(); ++d) off += idx_[d] * g_.rin[d];
    return off;
  }
  // Elements left in the current innermost row.
  int64_t row_left() const { return idx_.empty() ? 1 : g_.rs.back() - idx_.back(); }
  void advance(int64_t n) {
    if (idx_.empty()) return;
    idx_.back() += n;
    for (int d = static_cast<int>(idx_.size()) - 1; d > 0 && idx_[d] >= g_.rs[d]; --d) {
      idx_[d] = 0;
      ++idx_[d - 1];
    }
  }

 private:
  const Geom& g_;
  Shape idx_;
};

// ---- policies ----------------------------------------------------------------------------------
// A policy says how to reduce: init() is the identity, step() folds element x (at reduction index
// i, with the output's centre value c from a first pass) into an accumulator, merge(a, b) joins
// two accumulators (a covers earlier elements), done() turns the accumulator of n elements into
// the output value.

template <typename T>
using SumAcc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename T, typename O>
struct SumP {
  using In = T; using Acc = SumAcc<T>; using Out = O;
  static constexpr bool kCenter = false;
  Acc init() const { return 0; }
  Acc step(Acc a, T x, double, int64_t) const { return merge(a, static_cast<Acc>(x)); }
  Acc merge(Acc a, Acc b) const {
    if constexpr (std::is_floating_point_v<Acc>) return a + b;
    else return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));  // wraps
  }
  Out done(Acc a, int64_t, double) const { return static_cast<Out>(a); }
};

template <typename T, typename O>
struct MeanP : SumP<T, O> {
  using Acc = double;
  double init() const { return 0; }
  double step(double a, T x, double, int64_t) const { return a + static_cast<double>(x); }
  double merge(double a, double b) const { return a + b; }
  O done(double a, int64_t n, double) const { return static_cast<O>(a / static_cast<double>(n)); }
};

template <typename T, typename O>
struct ProdP {
  using In = T; using Acc = SumAcc<T>; using Out = O;
  static constexpr bool kCenter = false;
  Acc init() const { return 1; }
  Acc step(Acc a, T x, double, int64_t) const { return merge(a, static_cast<Acc>(x)); }
  Acc merge(Acc a, Acc b) const {
    if constexpr (std::is_floating_point_v<Acc>) return a * b;
    else return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  }
  Out done(Acc a, int64_t, double) const { return static_cast<Out>(a); }
};

// max/min with NaN propagation: once a NaN is in, `x > a` is false for every later x.
template <typename T, typename O, bool kMax>
struct MaxP {
  using In = T; using Acc = T; using Out = O;
  static constexpr bool kCenter = false;
  T init() const {
    if constexpr (std::is_floating_point_v<T>)
      return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  T step(T a, T x, double, int64_t) const { return merge(a, x); }
  T merge(T a, T b) const {
    // Two selects on T-wide masks (not one `||`), so the lanes vectorise to compare + blend.
    T m = (kMax ? (b > a) : (b < a)) ? b : a;
    if constexpr (std::is_floating_point_v<T>) m = (b != b) ? b : m;
    return m;
  }
  Out done(T a, int64_t, double) const { return static_cast<Out>(a); }
};

// The accumulator is an integer as wide as T (0/1): mixing bytes with T-wide compares would keep
// the lanes loop from vectorising.
template <typename T>
using FlagAcc = std::conditional_t<sizeof(T) == 1, uint8_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;

template <typename T, bool kAll>
struct AllP {
  using In = T; using Acc = FlagAcc<T>; using Out = bool;
  static constexpr bool kCenter = false;
  Acc init() const { return kAll; }
  Acc step(Acc a, T x, double, int64_t) const { return merge(a, static_cast<Acc>(x != T(0))); }
  Acc merge(Acc a, Acc b) const { return kAll ? (a & b) : (a | b); }
  bool done(Acc a, int64_t, double) const { return a != 0; }
};

// Second pass of var/std: sum of squared deviations from the mean in c.
template <typename T, typename O, bool kStd>
struct VarP {
  using In = T; using Acc = double; using Out = O;
  static constexpr bool kCenter = true;
  int64_t ddof = 0;
  double init() const { return 0; }
  double step(double a, T x, double c, int64_t) const {
    double d = static_cast<double>(x) - c;
    return a + d * d;
  }
  double merge(double a, double b) const { return a + b; }
  O done(double a, int64_t n, double) const {
    // numpy: divide by max(n - ddof, 0), giving inf/nan when no degrees of freedom are left.
    double v = a / static_cast<double>(std::max<int64_t>(n - ddof, 0));
    return static_cast<O>(kStd ? std::sqrt(v) : v);
  }
};

// Second pass of logsumexp: c is the shift (the max when finite, else 0).
template <typename T, typename O>
struct LseP {
  using In = T; using Acc = double; using Out = O;
  static constexpr bool kCenter = true;
  double init() const { return 0; }
  double step(double a, T x, double c, int64_t) const { return a + std::exp(static_cast<double>(x) - c); }
  double merge(double a, double b) const { return a + b; }
  O done(double a, int64_t, double c) const { return static_cast<O>(c + std::log(a)); }
};

template <typename T>
struct ArgAcc {
  T v;
  int64_t i;  // -1: no element yet
};

// argmax/argmin: the first occurrence wins; NaN beats everything (numpy).
template <typename T, bool kMax>
struct ArgP {
  using In = T; using Acc = ArgAcc<T>; using Out = int64_t;
  static constexpr bool kCenter = false;
  static bool better(T x, T y) {
    bool b = kMax ? (x > y) : (x < y);
    if constexpr (std::is_floating_point_v<T>) b = b || (x != x && y == y);
    return b;
  }
  Acc init() const { return {T(0), -1}; }
  Acc step(Acc a, T x, double, int64_t i) const { return (a.i < 0 || better(x, a.v)) ? Acc{x, i} : a; }
  Acc merge(Acc a, Acc b) const {
    if (b.i < 0) return a;
    if (a.i < 0 || better(b.v, a.v)) return b;
    if (better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;  // a tie: the lanes interleave indices
  }
  int64_t done(Acc a, int64_t, double) const { return a.i; }
};

// Second pass of argmax/argmin when the first pass found the extreme value c (exact in double):
// the first index holding it (or the first NaN, when c is NaN). Vectorises, unlike ArgP.
template <typename T>
struct FindP {
  using In = T; using Acc = int64_t; using Out = int64_t;
  static constexpr bool kCenter = true;
  int64_t init() const { return std::numeric_limits<int64_t>::max(); }
  int64_t step(int64_t a, T x, double c, int64_t i) const {
    bool hit = x == static_cast<T>(c);
    if constexpr (std::is_floating_point_v<T>) hit = hit | (x != x);  // c is NaN iff any x is
    return (hit & (i < a)) ? i : a;
  }
  int64_t merge(int64_t a, int64_t b) const { return b < a ? b : a; }
  int64_t done(int64_t a, int64_t, double) const { return a; }
};

// ---- the engine --------------------------------------------------------------------------------
template <class P>
class Engine {
  using T = typename P::In;
  using Acc = typename P::Acc;
  using Out = typename P::Out;

 public:
  Engine(const P& p, const Geom& g, const T* in, Out* out, const double* center)
      : p_(p), g_(g), in_(in), out_(out), center_(center) {}

  void run() {
    if (g_.kn == 0) return;
    if (g_.rn == 0) {
      for (int64_t q = 0; q < g_.kn; ++q) out_[q] = p_.done(p_.init(), 0, center(q));
      return;
    }
    // Inner mode pays a fixed cost per output (offsets, lane setup and merge): for short
    // reductions (a few elements per output) accumulating many outputs at once is far cheaper.
    if (inner_mode()) {
      run_inner_with([&](int64_t, int64_t io, int64_t r0, int64_t r1, double c) {
        return reduce_range(in_ + io, r0, r1, c);
      });
    } else {
      run_outer();
    }
  }

 private:
  double center(int64_t q) const {
    if constexpr (P::kCenter) return center_[q];
    else return 0;
  }
  static double cj(const double* cb, int64_t j) {
    if constexpr (P::kCenter) return cb[j];
    else return 0;
  }

  template <bool kUnit>
  void lanes_row(Acc* lanes, const T* x, int64_t s, int64_t n, int64_t i0, double c) const {
    if constexpr (kUnit) s = 1;
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      // Kept as a loop so GCC's loop vectoriser handles it: once fully unrolled, the SLP
      // vectoriser gives up on selects (max/min on floats) and mixed widths.
#pragma GCC unroll 1
      for (int k = 0; k < kLanes; ++k) lanes[k] = p_.step(lanes[k], x[(i + k) * s], c, i0 + i + k);
    }
    for (int k = 0; i < n; ++i, ++k) lanes[k] = p_.step(lanes[k], x[i * s], c, i0 + i);
  }

  // Reduces elements [r0, r1) of the reduced space starting at `base`.
  Acc reduce_range(const T* base, int64_t r0, int64_t r1, double c) const {
    Acc lanes[kLanes];
    for (int k = 0; k < kLanes; ++k) lanes[k] = p_.init();
    const int64_t s = g_.rin.back();
    RowWalker w(g_, r0);
    for (int64_t pos = r0; pos < r1;) {
      int64_t n = std::min(w.row_left(), r1 - pos);
      const T* row = base + w.offset();
      if (s == 1) lanes_row<true>(lanes, row, 1, n, pos, c);
      else lanes_row<false>(lanes, row, s, n, pos, c);
      pos += n;
      w.advance(n);
    }
    return merge_lanes(lanes);
  }

  Acc merge_lanes(Acc* lanes) const {
    for (int width = kLanes / 2; width >= 1; width /= 2)
      for (int k = 0; k < width; ++k) lanes[k] = p_.merge(lanes[k], lanes[k + width]);
    return lanes[0];
  }

 public:
  // Whether run() takes inner mode.
  bool inner_mode() const {
    return !g_.rs.empty() &&
           (g_.ks.empty() || (std::abs(g_.rin.back()) < std::abs(g_.kin.back()) && g_.rn >= 2 * kLanes));
  }

  // Inner mode over values produced on demand: produce(q, r0, r1, buf) writes elements [r0, r1)
  // of output q's (single, contiguous) reduced row to buf. What reduce_range does with one row.
  template <class Produce>
  void run_inner_produced(Produce&& produce) {
    // Pieces of a multiple of kLanes elements (lane k takes the elements k mod kLanes, as in one
    // run) that stay in L1 between being produced and reduced.
    constexpr int64_t kPiece = 2048;
    static_assert(kPiece % kLanes == 0, "pieces keep the lanes' assignment");
    run_inner_with([&](int64_t q, int64_t, int64_t r0, int64_t r1, double c) {
      alignas(64) T buf[kPiece];
      Acc lanes[kLanes];
      for (int k = 0; k < kLanes; ++k) lanes[k] = p_.init();
      for (int64_t b = r0; b < r1; b += kPiece) {
        const int64_t e = std::min(r1, b + kPiece);
        produce(q, b, e, buf);
        lanes_row<true>(lanes, buf, 1, e - b, b, c);
      }
      return merge_lanes(lanes);
    });
  }

 private:
  // Joins the nb partials of every output in order and writes the outputs.
  void finish_partials(const std::vector<Acc>& part, int64_t nb) {
    parallel_for(g_.kn, std::max<int64_t>(1, kParallelGrain / nb), [&](int64_t b, int64_t e) {
      for (int64_t q = b; q < e; ++q) {
        Acc a = part[q * nb];
        for (int64_t j = 1; j < nb; ++j) a = p_.merge(a, part[q * nb + j]);
        out_[q] = p_.done(a, g_.rn, center(q));
      }
    });
  }

  // read(q, io, r0, r1, c): the accumulator of elements [r0, r1) of output q, whose reduced space
  // starts at input offset io.
  template <class Read>
  void run_inner_with(Read&& read) {
    const int nk = static_cast<int>(g_.ks.size());
    const int64_t rn = g_.rn;
    if (rn <= kBlock) {
      parallel_for(g_.kn, std::max<int64_t>(1, kParallelGrain / rn), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          int64_t io, q;
          kept_offsets(g_, nk, o, &io, &q);
          double c = center(q);
          out_[q] = p_.done(read(q, io, 0, rn, c), rn, c);
        }
      });
      return;
    }
    const int64_t nb = (rn + kBlock - 1) / kBlock;
    std::vector<Acc> part(g_.kn * nb);
    parallel_for(g_.kn * nb, 1, [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        int64_t o = w / nb, blk = w % nb, io, q;
        kept_offsets(g_, nk, o, &io, &q);
        part[q * nb + blk] = read(q, io, blk * kBlock, std::min(rn, (blk + 1) * kBlock), center(q));
      }
    });
    finish_partials(part, nb);
  }

  void run_outer() {
    const int nk = static_cast<int>(g_.ks.size());
    const int64_t kj = nk ? g_.ks.back() : 1;
    const int64_t sj = nk ? g_.kin.back() : 0, qj = nk ? g_.kout.back() : 0;
    const int64_t ko = g_.kn / kj, ntile = (kj + kTile - 1) / kTile;
    const int64_t tile = std::min(kj, kTile), rn = g_.rn;
    // Few outputs and long columns: cut the rows into at most 64 blocks too, so threads share them.
    int64_t rows_per_block = rn, nb = 1;
    if (g_.kn < kBlock && rn * tile > kBlock) {
      rows_per_block = std::max((kBlock + tile - 1) / tile, (rn + 63) / 64);
      nb = (rn + rows_per_block - 1) / rows_per_block;
    }
    std::vector<Acc> part(nb > 1 ? g_.kn * nb : 0);
    const int64_t per_item = tile * std::min(rn, rows_per_block);
    parallel_for(ko * ntile * nb, std::max<int64_t>(1, kParallelGrain / per_item), [&](int64_t b, int64_t e) {
      // Heap, not stack: a tile is up to 256 KiB. (Not std::vector: Acc may be bool.)
      std::unique_ptr<Acc[]> acc_buf(new Acc[tile]);
      std::unique_ptr<double[]> cb_buf(new double[P::kCenter ? tile : 1]);
      Acc* acc = acc_buf.get();
      double* cb = cb_buf.get();
      for (int64_t w = b; w < e; ++w) {
        const int64_t blk = w % nb, t = (w / nb) % ntile, o = w / nb / ntile;
        int64_t io, q;
        kept_offsets(g_, nk - 1 < 0 ? 0 : nk - 1, o, &io, &q);
        const int64_t j0 = t * kTile, jn = std::min(kTile, kj - j0);
        const T* base = in_ + io + j0 * sj;
        q += j0 * qj;
        for (int64_t j = 0; j < jn; ++j) acc[j] = p_.init();
        if constexpr (P::kCenter)
          for (int64_t j = 0; j < jn; ++j) cb[j] = center(q + j * qj);
        const int64_t r0 = blk * rows_per_block, r1 = std::min(rn, r0 + rows_per_block);
        RowWalker rw(g_, r0);
        const int64_t rs = g_.rs.empty() ? 0 : g_.rin.back();
        for (int64_t r = r0; r < r1;) {
          // RowWalker computes an offset once per innermost run; rows within it are `rs` apart.
          int64_t n = std::min(rw.row_left(), r1 - r);
          const T* row = base + rw.offset();
          for (int64_t i = 0; i < n; ++i, ++r, row += rs) {
            if (sj == 1)
              for (int64_t j = 0; j < jn; ++j) acc[j] = p_.step(acc[j], row[j], cj(cb, j), r);
            else
              for (int64_t j = 0; j < jn; ++j) acc[j] = p_.step(acc[j], row[j * sj], cj(cb, j), r);
          }
          rw.advance(n);
        }
        if (nb == 1) {
          for (int64_t j = 0; j < jn; ++j) out_[q + j * qj] = p_.done(acc[j], rn, cj(cb, j));
        } else {
          for (int64_t j = 0; j < jn; ++j) part[(q + j * qj) * nb + blk] = acc[j];
        }
      }
    });
    if (nb > 1) finish_partials(part, nb);
  }

  const P& p_;
  const Geom& g_;
  const T* in_;
  Out* out_;
  const double* center_;
};

template <class P>
void run_policy(const P& p, const Geom& g, const Tensor& in, const Tensor& out,
                const double* center = nullptr) {
  using Out = typename P::Out;
  PJ_CHECK(out.dtype() == dtype_of<Out>::value) << "reduce output dtype " << dtype_name(out.dtype());
  Engine<P>(p, g, in.data<typename P::In>(), out.data<Out>(), center).run();
}

// Runs a double-valued first pass (mean or max) into a buffer laid out like the output.
template <class P>
std::vector<double> first_pass(const P& p, const Geom& g, const Tensor& in) {
  std::vector<double> c(std::max<int64_t>(g.kn, 1));
  Engine<P>(p, g, in.data<typename P::In>(), c.data(), nullptr).run();
  return c;
}

template <typename T>
void reduce_typed(ReduceOp op, const Geom& g, const Tensor& in, const Tensor& out, int64_t ddof) {
  using F = std::conditional_t<std::is_floating_point_v<T>, T, float>;  // float result dtype
  using S = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;  // sum/prod dtype
  switch (op) {
    case ReduceOp::sum: return run_policy(SumP<T, S>{}, g, in, out);
    case ReduceOp::prod: return run_policy(ProdP<T, S>{}, g, in, out);
    case ReduceOp::mean: return run_policy(MeanP<T, F>{}, g, in, out);
    case ReduceOp::max: return run_policy(MaxP<T, T, true>{}, g, in, out);
    case ReduceOp::min: return run_policy(MaxP<T, T, false>{}, g, in, out);
    case ReduceOp::all: return run_policy(AllP<T, true>{}, g, in, out);
    case ReduceOp::any: return run_policy(AllP<T, false>{}, g, in, out);
    case ReduceOp::var:
    case ReduceOp::std: {
      // Two passes: the mean, then squared deviations from it (no cancellation of E[x^2]-E[x]^2).
      std::vector<double> mean = first_pass(MeanP<T, double>{}, g, in);
      if (op == ReduceOp::var) {
        VarP<T, F, false> p;
        p.ddof = ddof;
        return run_policy(p, g, in, out, mean.data());
      }
      VarP<T, F, true> p;
      p.ddof = ddof;
      return run_policy(p, g, in, out, mean.data());
    }
    case ReduceOp::logsumexp: {
      std::vector<double> shift = first_pass(MaxP<T, double, true>{}, g, in);
      // Shift by the max so exp cannot overflow; an infinite max (all -inf, or a +inf) shifts by
      // 0 so that -inf rows give log(0) = -inf and +inf stays +inf instead of inf - inf = nan.
      for (double& s : shift)
        if (!std::isfinite(s) && !std::isnan(s)) s = 0;
      return run_policy(LseP<T, F>{}, g, in, out, shift.data());
    }
    case ReduceOp::argmax:
    case ReduceOp::argmin: {
      const bool mx = op == ReduceOp::argmax;
      if constexpr (sizeof(T) <= 4 || std::is_floating_point_v<T>) {
        // Two vectorised passes (the extreme value, then where it first occurs) beat one pass
        // tracking (value, index) pairs, which does not vectorise.
        std::vector<double> ext = mx ? first_pass(MaxP<T, double, true>{}, g, in)
                                     : first_pass(MaxP<T, double, false>{}, g, in);
        return run_policy(FindP<T>{}, g, in, out, ext.data());
      }
      // int64 is not exact in double: one pass over (value, index).
      if (mx) return run_policy(ArgP<T, true>{}, g, in, out);
      return run_policy(ArgP<T, false>{}, g, in, out);
    }
  }
}

}  // namespace

void reduce_into(ReduceOp op, const Tensor& out, const Tensor& in, const std::vector<int>& axes,
                 int64_t ddof) {
  PJ_CHECK(out.dtype() == reduce_out_dtype(op, in.dtype()))
      << reduce_op_name(op) << ": output dtype " << dtype_name(out.dtype());
  Tensor src = in;
  if ((op == ReduceOp::argmax || op == ReduceOp::argmin) && axes.size() > 1) {
    // The flattened index is in logical order; sorting dims by stride would lose it.
    src = in.contiguous();
  }
  Geom g = make_geom(src, axes);
  PJ_CHECK(out.numel() == g.kn) << reduce_op_name(op) << ": output has " << out.numel()
                                << " elements, expected " << g.kn;
  if (g.kn == 0) return;
  Tensor dst = out.is_contiguous() ? out : Tensor::empty(out.shape(), out.dtype());
  PJ_DISPATCH_ALL(src.dtype(), [&] { reduce_typed<scalar_t>(op, g, src, dst, ddof); });
  if (!dst.same_storage(out)) copy_into(out, dst);
}

namespace {

// The geometry make_geom gives a contiguous [rows, n] value reduced over its last axis.
Geom rows_geom(int64_t rows, int64_t n) {
  Geom g;
  g.kn = rows;
  g.rn = n;
  if (rows > 1) {
    g.ks = {rows};
    g.kin = {n};
    g.kout = {1};
  }
  if (n > 1) {
    g.rs = {n};
    g.rin = {1};
  }
  return g;
}

}  // namespace

bool reduces_by_rows(int64_t rows, int64_t n) {
  Geom g = rows_geom(rows, n);
  return rows > 0 && Engine<SumP<float, float>>(SumP<float, float>{}, g, nullptr, nullptr, nullptr).inner_mode();
}

bool reduce_produced_rows(ReduceOp op, float* out, int64_t rows, int64_t n, const ProduceRow& produce) {
  if (!reduces_by_rows(rows, n)) return false;
  Geom g = rows_geom(rows, n);
  auto run = [&](const auto& p) {
    Engine<std::decay_t<decltype(p)>>(p, g, nullptr, out, nullptr).run_inner_produced(produce);
    return true;
  };
  switch (op) {
    case ReduceOp::sum: return run(SumP<float, float>{});
    case ReduceOp::mean: return run(MeanP<float, float>{});
    case ReduceOp::max: return run(MaxP<float, float, true>{});
    case ReduceOp::min: return run(MaxP<float, float, false>{});
    default: return false;
  }
}

// ---- cumsum ------------------------------------------------------------------------------------
namespace {

template <typename T, typename O>
void cumsum_typed(const Tensor& out, const Tensor& in, int axis) {
  using Acc = SumAcc<T>;
  SumP<T, O> p;
  int64_t outer = 1, inner = 1;
  const int64_t n = in.dim(axis);
  for (int d = 0; d < axis; ++d) outer *= in.dim(d);
  for (int d = axis + 1; d < in.ndim(); ++d) inner *= in.dim(d);
  const T* x = in.data<T>();
  O* y = out.data<O>();
  if (inner == 1) {
    // Scan along contiguous rows, one row per task.
    parallel_for(outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        Acc a = 0;
        for (int64_t i = 0; i < n; ++i) {
          a = p.step(a, x[o * n + i], 0, 0);
          y[o * n + i] = static_cast<O>(a);
        }
      }
    });
    return;
  }
  // Scan over rows of length `inner`, a tile of running sums at a time (vectorises over j).
  const int64_t ntile = (inner + kTile - 1) / kTile;
  const int64_t per_item = std::min(inner, kTile) * std::max<int64_t>(n, 1);
  parallel_for(outer * ntile, std::max<int64_t>(1, kParallelGrain / per_item), [&](int64_t b, int64_t e) {
    std::unique_ptr<Acc[]> acc_buf(new Acc[std::min(inner, kTile)]);
    Acc* acc = acc_buf.get();
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / ntile, j0 = (w % ntile) * kTile, jn = std::min(kTile, inner - j0);
      std::fill(acc, acc + jn, Acc(0));
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = (o * n + i) * inner + j0;
        for (int64_t j = 0; j < jn; ++j) {
          acc[j] = p.step(acc[j], x[off + j], 0, 0);
          y[off + j] = static_cast<O>(acc[j]);
        }
      }
    }
  });
}

}  // namespace

void cumsum_into(const Tensor& out, const Tensor& in, int axis) {
  PJ_CHECK(out.shape() == in.shape()) << "cumsum: output shape " << shape_str(out.shape());
  if (out.numel() == 0) return;
  Tensor src = in.contiguous();
  Tensor dst = out.is_contiguous() ? out : Tensor::empty(out.shape(), out.dtype());
  PJ_DISPATCH_ALL(src.dtype(), [&] {
    using T = scalar_t;
    using O = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
    PJ_CHECK(dst.dtype() == dtype_of<O>::value) << "cumsum: output dtype " << dtype_name(dst.dtype());
    cumsum_typed<T, O>(dst, src, axis);
  });
  if (!dst.same_storage(out)) copy_into(out, dst);
}

}  // namespace pj
