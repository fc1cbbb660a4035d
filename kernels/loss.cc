#include "kernels/loss.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/loops.h"
#include "kernels/softmax.h"
#include "kernels/threading.h"

namespace pj {

namespace {

// Samples (class losses) or elements (pointwise losses) per partial sum. Fixed, so the sum's
// rounding does not depend on the thread count.
constexpr int64_t kChunk = 8192;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Sums `part(begin, end, acc)` over [0, n) in fixed chunks, in parallel; merged in chunk order.
template <int W, typename F>
std::array<double, W> chunked_sum(int64_t n, int64_t work_per_item, F part) {
  const int64_t nchunk = (n + kChunk - 1) / kChunk;
  std::vector<std::array<double, W>> parts(nchunk);
  const int64_t per_chunk = std::max<int64_t>(1, kChunk * work_per_item);
  parallel_for(nchunk, std::max<int64_t>(1, kParallelGrain / per_chunk), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      std::array<double, W> acc{};
      part(k * kChunk, std::min(n, (k + 1) * kChunk), acc);
      parts[k] = acc;
    }
  });
  std::array<double, W> total{};
  for (auto& p : parts)
    for (int j = 0; j < W; ++j) total[j] += p[j];
  return total;
}

template <typename T>
void write_scalar(const Tensor& out, double v) {
  static_cast<T*>(out.raw_data())[0] = static_cast<T>(v);
}

// ---- class losses ---------------------------------------------------------------------------------

// An input of shape [N, C, *] (or [C]) as N samples of C classes times S trailing positions.
struct ClassGeom {
  int64_t N, C, S;
};

ClassGeom geom_of(const Tensor& x) {
  if (x.ndim() == 1) return {1, x.dim(0), 1};
  int64_t S = 1;
  for (int d = 2; d < x.ndim(); ++d) S *= x.dim(d);
  return {x.dim(0), x.dim(1), S};
}

// Raises on the first target (in logical order) that is neither ignore_index nor a class.
template <typename I>
void check_targets(const I* t, int64_t n, int64_t C, int64_t ignore, const char* op) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = static_cast<int64_t>(t[i]);
    if (v != ignore && (v < 0 || v >= C))
      PJ_THROW(Index) << op << ": target " << v << " is out of bounds for " << C << " classes";
  }
}

// Index targets over contiguous log-probabilities lp [N, C, S] and targets [N, S].
template <typename T, typename I>
void index_loss(const Tensor& out, const T* lp, const I* tgt, ClassGeom g, const T* w, const ClassLossOptions& opt) {
  const int64_t C = g.C, S = g.S, ns = g.N * g.S, ignore = opt.ignore_index;
  const double e = opt.label_smoothing;
  const bool smooth = e > 0;
  // (weighted nll, weight, smoothing term) of sample i.
  auto sample = [&](int64_t i, double* nll, double* wt, double* sm) {
    const int64_t t = static_cast<int64_t>(tgt[i]);
    if (t == ignore) {
      *nll = *wt = *sm = 0;
      return;
    }
    const T* base = lp + (i / S) * C * S + i % S;
    const double wv = w ? static_cast<double>(w[t]) : 1.0;
    *nll = -wv * static_cast<double>(base[t * S]);
    *wt = wv;
    if (smooth) {
      double a = 0;
      for (int64_t c = 0; c < C; ++c) a += (w ? static_cast<double>(w[c]) : 1.0) * static_cast<double>(base[c * S]);
      *sm = -a;
    }
  };
  auto combine = [&](double nll, double sm) { return smooth ? (1 - e) * nll + e / C * sm : nll; };
  const int64_t work = smooth ? C : 1;
  if (opt.reduction == Reduction::None) {
    with_contiguous_out(out, [&](const Tensor& dst) {
      T* o = dst.data<T>();
      parallel_for(ns, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t b, int64_t en) {
        for (int64_t i = b; i < en; ++i) {
          double nll, wt, sm = 0;
          sample(i, &nll, &wt, &sm);
          o[i] = static_cast<T>(combine(nll, sm));
        }
      });
    });
    return;
  }
  auto sums = chunked_sum<3>(ns, work, [&](int64_t b, int64_t en, std::array<double, 3>& acc) {
    for (int64_t i = b; i < en; ++i) {
      double nll, wt, sm = 0;
      sample(i, &nll, &wt, &sm);
      acc[0] += nll;
      acc[1] += wt;
      acc[2] += sm;
    }
  });
  double total = combine(sums[0], sums[2]);
  write_scalar<T>(out, opt.reduction == Reduction::Sum ? total : total / sums[1]);
}

// Probability targets p [N, C, S] over contiguous log-probabilities lp [N, C, S].
template <typename T>
void prob_loss(const Tensor& out, const T* lp, const T* p, ClassGeom g, const T* w, const ClassLossOptions& opt) {
  const int64_t C = g.C, S = g.S, ns = g.N * g.S;
  const double e = opt.label_smoothing;
  const bool smooth = e > 0;
  auto sample = [&](int64_t i) {
    const int64_t off = (i / S) * C * S + i % S;
    double a = 0;
    for (int64_t c = 0; c < C; ++c) {
      double pv = static_cast<double>(p[off + c * S]);
      if (smooth) pv = pv * (1 - e) + e / C;
      a += (w ? static_cast<double>(w[c]) : 1.0) * static_cast<double>(lp[off + c * S]) * pv;
    }
    return -a;
  };
  if (opt.reduction == Reduction::None) {
    with_contiguous_out(out, [&](const Tensor& dst) {
      T* o = dst.data<T>();
      parallel_for(ns, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t en) {
        for (int64_t i = b; i < en; ++i) o[i] = static_cast<T>(sample(i));
      });
    });
    return;
  }
  auto sums = chunked_sum<1>(ns, std::max<int64_t>(C, 1), [&](int64_t b, int64_t en, std::array<double, 1>& acc) {
    for (int64_t i = b; i < en; ++i) acc[0] += sample(i);
  });
  write_scalar<T>(out, opt.reduction == Reduction::Sum ? sums[0] : sums[0] / static_cast<double>(ns));
}

template <typename T>
void class_loss(const Tensor& out, const Tensor& lp, const Tensor& target, const Tensor& weight,
                const ClassLossOptions& opt, const char* op) {
  const ClassGeom g = geom_of(lp);
  const Tensor wc = weight.defined() ? weight.contiguous() : Tensor();
  const T* w = wc.defined() ? wc.data<T>() : nullptr;
  const Tensor t = target.contiguous();
  if (is_floating(t.dtype())) {
    prob_loss<T>(out, lp.data<T>(), t.data<T>(), g, w, opt);
    return;
  }
  PJ_CHECK(t.dtype() == DType::Int32 || t.dtype() == DType::Int64) << "class_loss: index target dtype";
  auto run = [&](auto tag) {
    using I = decltype(tag);
    check_targets(t.data<I>(), t.numel(), g.C, opt.ignore_index, op);
    index_loss<T, I>(out, lp.data<T>(), t.data<I>(), g, w, opt);
  };
  if (t.dtype() == DType::Int32) run(int32_t{});
  else run(int64_t{});
}

// ---- pointwise losses -----------------------------------------------------------------------------

// f(values of the K operands broadcast to `shape`) per element, written to out (None) or summed.
template <typename T, int K, typename F>
void pointwise(const Tensor& out, const Shape& shape, const std::array<Tensor, K>& in, Reduction r, F f) {
  std::array<char*, K + 1> base;
  std::array<Shape, K + 1> st;
  for (int k = 0; k < K; ++k) {
    base[k + 1] = static_cast<char*>(in[k].raw_data());
    st[k + 1] = byte_strides(broadcast_strides(in[k], shape), sizeof(T));
  }
  // Operand 0 is the output for None; for a sum it is a dummy with zero strides.
  T dummy = 0;
  const bool none = r == Reduction::None;
  base[0] = none ? static_cast<char*>(out.raw_data()) : reinterpret_cast<char*>(&dummy);
  st[0] = none ? byte_strides(out.strides(), sizeof(T)) : Shape(shape.size(), 0);
  ElementwiseIter<K + 1> it(shape, base, st);
  auto value = [&](const std::array<char*, K + 1>& p, const std::array<int64_t, K + 1>& s, int64_t i) {
    std::array<T, K> v;
    for (int k = 0; k < K; ++k) v[k] = *reinterpret_cast<const T*>(p[k + 1] + i * s[k + 1]);
    return f(v);
  };
  auto all_unit = [](const std::array<int64_t, K + 1>& s, int from) {
    for (int k = from; k < K + 1; ++k)
      if (s[k] != static_cast<int64_t>(sizeof(T))) return false;
    return true;
  };
  if (none) {
    it.run([&](const std::array<char*, K + 1>& p, const std::array<int64_t, K + 1>& s, int64_t n) {
      if (all_unit(s, 0)) {  // the common contiguous case: plain indexing, vectorisable
        T* o = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) {
          std::array<T, K> v;
          for (int k = 0; k < K; ++k) v[k] = reinterpret_cast<const T*>(p[k + 1])[i];
          o[i] = f(v);
        }
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = value(p, s, i);
      }
    });
    return;
  }
  const int64_t numel = shape_numel(shape);
  auto sums = chunked_sum<1>(numel, 1, [&](int64_t b, int64_t e, std::array<double, 1>& acc) {
    double a = 0;
    it.run_range(b, e, [&](const std::array<char*, K + 1>& p, const std::array<int64_t, K + 1>& s, int64_t n) {
      if (all_unit(s, 1)) {
        for (int64_t i = 0; i < n; ++i) {
          std::array<T, K> v;
          for (int k = 0; k < K; ++k) v[k] = reinterpret_cast<const T*>(p[k + 1])[i];
          a += static_cast<double>(f(v));
        }
      } else {
        for (int64_t i = 0; i < n; ++i) a += static_cast<double>(value(p, s, i));
      }
    });
    acc[0] = a;
  });
  write_scalar<T>(out, r == Reduction::Sum ? sums[0] : (numel ? sums[0] / static_cast<double>(numel) : kNaN));
}

Shape pair_shape(const Tensor& a, const Tensor& b) { return broadcast_shapes(a.shape(), b.shape()); }

// f(std::bool_constant<a>, std::bool_constant<b>): optional operands become compile-time choices,
// so an absent weight costs nothing per element.
template <typename F>
void with_flags(bool a, bool b, F f) {
  if (a && b) f(std::true_type{}, std::true_type{});
  else if (a) f(std::true_type{}, std::false_type{});
  else if (b) f(std::false_type{}, std::true_type{});
  else f(std::false_type{}, std::false_type{});
}

}  // namespace

void nll_loss_into(const Tensor& out, const Tensor& log_probs, const Tensor& target, const Tensor& weight,
                   const ClassLossOptions& opt, const char* op) {
  PJ_CHECK(!is_floating(target.dtype())) << "nll_loss_into: index targets only";
  const Tensor lp = log_probs.contiguous();
  PJ_DISPATCH_FLOATING(lp.dtype(), op, [&] { class_loss<scalar_t>(out, lp, target, weight, opt, op); });
}

void cross_entropy_into(const Tensor& out, const Tensor& logits, const Tensor& target, const Tensor& weight,
                        const ClassLossOptions& opt) {
  const ClassGeom g = geom_of(logits);
  const Tensor x = logits.contiguous();
  const Shape s3 = {g.N, g.C, g.S};
  Tensor lp = Tensor::empty(s3, x.dtype());
  softmax_into(lp, x.as_strided(s3, contiguous_strides(s3), x.offset()), 1, true);
  PJ_DISPATCH_FLOATING(lp.dtype(), "cross_entropy",
                       [&] { class_loss<scalar_t>(out, lp, target, weight, opt, "cross_entropy"); });
}

void mse_loss_into(const Tensor& out, const Tensor& input, const Tensor& target, Reduction r) {
  PJ_DISPATCH_FLOATING(input.dtype(), "mse_loss", [&] {
    using T = scalar_t;
    pointwise<T, 2>(out, pair_shape(input, target), {input, target}, r, [](const std::array<T, 2>& v) {
      T d = v[0] - v[1];
      return d * d;
    });
  });
}

void l1_loss_into(const Tensor& out, const Tensor& input, const Tensor& target, Reduction r) {
  PJ_DISPATCH_FLOATING(input.dtype(), "l1_loss", [&] {
    using T = scalar_t;
    pointwise<T, 2>(out, pair_shape(input, target), {input, target}, r,
                    [](const std::array<T, 2>& v) { return std::abs(v[0] - v[1]); });
  });
}

void smooth_l1_loss_into(const Tensor& out, const Tensor& input, const Tensor& target, Reduction r, double beta) {
  PJ_DISPATCH_FLOATING(input.dtype(), "smooth_l1_loss", [&] {
    using T = scalar_t;
    const T b = static_cast<T>(beta), half_b = static_cast<T>(0.5 * beta);
    pointwise<T, 2>(out, pair_shape(input, target), {input, target}, r, [=](const std::array<T, 2>& v) {
      T d = std::abs(v[0] - v[1]);
      if (b == T(0)) return d;
      return d < b ? T(0.5) * d * d / b : d - half_b;
    });
  });
}

void binary_cross_entropy_into(const Tensor& out, const Tensor& probs, const Tensor& target,
                               const Tensor& weight, Reduction r) {
  std::atomic<bool> bad{false};
  PJ_DISPATCH_FLOATING(probs.dtype(), "binary_cross_entropy", [&] {
    using T = scalar_t;
    with_flags(weight.defined(), false, [&](auto has_w, auto) {
      constexpr bool kW = decltype(has_w)::value;
      constexpr int K = kW ? 3 : 2;
      std::array<Tensor, K> in;
      in[0] = probs;
      in[1] = target;
      if constexpr (kW) in[2] = weight;
      pointwise<T, K>(out, probs.shape(), in, r, [&](const std::array<T, K>& v) {
        const T p = v[0], t = v[1];
        if (!(p >= T(0) && p <= T(1))) bad.store(true, std::memory_order_relaxed);
        const T lp = std::max(std::log(p), T(-100)), lq = std::max(std::log1p(-p), T(-100));
        const T l = -(t * lp + (T(1) - t) * lq);
        if constexpr (kW) return l * v[2];
        else return l;
      });
    });
  });
  if (bad) PJ_THROW(Value) << "binary_cross_entropy: all elements of input must be between 0 and 1";
}

void binary_cross_entropy_with_logits_into(const Tensor& out, const Tensor& logits, const Tensor& target,
                                           const Tensor& weight, const Tensor& pos_weight, Reduction r) {
  // -log_sigmoid(x) = softplus(-x), through kernels/elementwise.h: oneDNN's vectorised soft_relu
  // for large float32 tensors (15x faster than scalar log1p(exp())), its stable loop otherwise.
  Tensor sp = Tensor::empty(logits.shape(), logits.dtype());
  unary_into(UnaryOp::neg, sp, logits);
  unary_into(UnaryOp::softplus, sp, sp);
  PJ_DISPATCH_FLOATING(logits.dtype(), "binary_cross_entropy_with_logits", [&] {
    using T = scalar_t;
    with_flags(weight.defined(), pos_weight.defined(), [&](auto has_w, auto has_pw) {
      constexpr bool kW = decltype(has_w)::value, kPW = decltype(has_pw)::value;
      constexpr int K = 3 + (kW ? 1 : 0) + (kPW ? 1 : 0);
      std::array<Tensor, K> in;
      in[0] = logits;
      in[1] = target;
      in[2] = sp;
      if constexpr (kW) in[3] = weight;
      if constexpr (kPW) in[K - 1] = pos_weight;
      pointwise<T, K>(out, logits.shape(), in, r, [](const std::array<T, K>& v) {
        const T x = v[0], t = v[1];
        T log_w = T(1);
        if constexpr (kPW) log_w = (v[K - 1] - T(1)) * t + T(1);
        const T l = (T(1) - t) * x + log_w * v[2];
        if constexpr (kW) return l * v[3];
        else return l;
      });
    });
  });
}

}  // namespace pj
