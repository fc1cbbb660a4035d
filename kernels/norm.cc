#include "kernels/norm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/copy.h"
#include "kernels/dnnl_context.h"
#include "kernels/threading.h"

namespace pj {

namespace {

// Elements summed into one partial result. Fixed, so partial sums (and their in-order merge)
// do not depend on how many threads run.
constexpr int64_t kChunk = 16384;
// Trailing extent from which a [N, C, S] block is walked as N*C contiguous rows of S; below it
// the C*S columns are accumulated down N instead (rows that short would not vectorise).
constexpr int64_t kMinRow = 16;
// Columns handled by one work item of the column sums.
constexpr int64_t kColTile = 2048;
constexpr int kLanes = 8;

// ---- small vectors (parameters, statistics) ------------------------------------------------------

std::vector<double> read_doubles(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.item_double(i);
  return v;
}

void write_doubles(const Tensor& t, const std::vector<double>& v) {
  PJ_CHECK(static_cast<int64_t>(v.size()) == t.numel()) << "write_doubles: size";
  PJ_DISPATCH_FLOATING(t.dtype(), "normalisation statistics", [&] {
    scalar_t* p = static_cast<scalar_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) p[t.element_offset(i)] = static_cast<scalar_t>(v[i]);
  });
}

template <typename T>
std::vector<T> to_vec(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// ---- statistics -----------------------------------------------------------------------------------

// Σ (x[i] - c), or Σ (x[i] - c)^2 when kSq, over a contiguous run, in double: kLanes independent
// sums so the loop vectorises.
template <typename T, bool kSq>
double run_sum(const T* x, int64_t n, double c) {
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      double d = static_cast<double>(x[i + l]) - c;
      acc[l] += kSq ? d * d : d;
    }
  double s = 0;
  for (; i < n; ++i) {
    double d = static_cast<double>(x[i]) - c;
    s += kSq ? d * d : d;
  }
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

// Per row of a contiguous [R, D]: Σ (x - c[r]) (or squares); c null means 0. Long rows are cut
// into kChunk pieces so a few long rows still spread over threads.
template <typename T, bool kSq>
std::vector<double> row_sums(const T* x, int64_t R, int64_t D, const double* c) {
  const int64_t nch = std::max<int64_t>(1, (D + kChunk - 1) / kChunk);
  std::vector<double> part(R * nch);
  const int64_t per_item = std::max<int64_t>(1, std::min(D, kChunk));
  parallel_for(R * nch, std::max<int64_t>(1, kParallelGrain / per_item), [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {
      const int64_t r = w / nch, lo = (w % nch) * kChunk, hi = std::min(D, lo + kChunk);
      part[w] = run_sum<T, kSq>(x + r * D + lo, hi - lo, c ? c[r] : 0.0);
    }
  });
  std::vector<double> s(R, 0.0);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t k = 0; k < nch; ++k) s[r] += part[r * nch + k];
  return s;
}

// Per column of a contiguous [N, W]: Σ (x - c[j]) (or squares) down the rows; c null means 0.
// Rows go in blocks of fixed height and columns in tiles; each item accumulates a row of
// partial sums (vectorised across columns), merged over the blocks in order.
template <typename T, bool kSq>
std::vector<double> col_sums(const T* x, int64_t N, int64_t W, const double* c) {
  std::vector<double> s(W, 0.0);
  if (N == 0 || W == 0) return s;
  const int64_t tile = std::min(W, kColTile), ntile = (W + tile - 1) / tile;
  const int64_t rb = std::max<int64_t>(1, kChunk / tile), nrb = (N + rb - 1) / rb;
  std::vector<double> part(nrb * W, 0.0);
  parallel_for(nrb * ntile, std::max<int64_t>(1, kParallelGrain / (rb * tile)), [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {
      const int64_t bi = w / ntile, j0 = (w % ntile) * tile, j1 = std::min(W, j0 + tile);
      double* acc = part.data() + bi * W;
      for (int64_t n = bi * rb; n < std::min(N, (bi + 1) * rb); ++n) {
        const T* row = x + n * W;
        for (int64_t j = j0; j < j1; ++j) {
          double d = static_cast<double>(row[j]) - (c ? c[j] : 0.0);
          acc[j] += kSq ? d * d : d;
        }
      }
    }
  });
  for (int64_t bi = 0; bi < nrb; ++bi)
    for (int64_t j = 0; j < W; ++j) s[j] += part[bi * W + j];
  return s;
}

// Two-pass mean and biased variance of every row of a contiguous [R, D] (D == 0: 0 and 0).
template <typename T>
void row_stats(const T* x, int64_t R, int64_t D, std::vector<double>* mean, std::vector<double>* var) {
  const double n = static_cast<double>(D);
  *mean = row_sums<T, false>(x, R, D, nullptr);
  for (double& m : *mean) m = D ? m / n : 0.0;
  *var = row_sums<T, true>(x, R, D, mean->data());
  for (double& v : *var) v = D ? v / n : 0.0;
}

// Two-pass mean and biased variance per channel of a contiguous [N, C, S].
template <typename T>
void channel_stats(const T* x, int64_t N, int64_t C, int64_t S, std::vector<double>* mean,
                   std::vector<double>* var) {
  const double M = static_cast<double>(N * S);
  mean->assign(C, 0.0);
  var->assign(C, 0.0);
  if (S >= kMinRow) {
    std::vector<double> s = row_sums<T, false>(x, N * C, S, nullptr);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) (*mean)[c] += s[n * C + c];
    for (double& m : *mean) m /= M;
    std::vector<double> centre(N * C);
    for (int64_t r = 0; r < N * C; ++r) centre[r] = (*mean)[r % C];
    std::vector<double> q = row_sums<T, true>(x, N * C, S, centre.data());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) (*var)[c] += q[n * C + c];
  } else {
    const int64_t W = C * S;
    std::vector<double> s = col_sums<T, false>(x, N, W, nullptr);
    for (int64_t j = 0; j < W; ++j) (*mean)[j / S] += s[j];
    for (double& m : *mean) m /= M;
    std::vector<double> centre(W);
    for (int64_t j = 0; j < W; ++j) centre[j] = (*mean)[j / S];
    std::vector<double> q = col_sums<T, true>(x, N, W, centre.data());
    for (int64_t j = 0; j < W; ++j) (*var)[j / S] += q[j];
  }
  for (double& v : *var) v /= M;
}

// ---- normalisation --------------------------------------------------------------------------------

// y[n, c, s] = (x[n, c, s] - m[c]) * a[c] + b[c] over contiguous [N, C, S].
template <typename T>
void channel_affine(T* y, const T* x, int64_t N, int64_t C, int64_t S, const T* m, const T* a, const T* b) {
  if (S >= kMinRow) {
    parallel_for(N * C, std::max<int64_t>(1, kParallelGrain / S), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T mv = m[r % C], av = a[r % C], bv = b[r % C];
        const T* xr = x + r * S;
        T* yr = y + r * S;
        for (int64_t s = 0; s < S; ++s) yr[s] = (xr[s] - mv) * av + bv;
      }
    });
    return;
  }
  // Short rows: expand the parameters to the C * S columns of a sample, then each sample is one
  // vectorised pass.
  const int64_t W = C * S;
  std::vector<T> mw(W), aw(W), bw(W);
  for (int64_t j = 0; j < W; ++j) {
    mw[j] = m[j / S];
    aw[j] = a[j / S];
    bw[j] = b[j / S];
  }
  parallel_for(N, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(W, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t n = lo; n < hi; ++n) {
      const T* xr = x + n * W;
      T* yr = y + n * W;
      for (int64_t j = 0; j < W; ++j) yr[j] = (xr[j] - mw[j]) * aw[j] + bw[j];
    }
  });
}

// Rows up to this long are normalised one at a time while they sit in cache (statistics, then
// the affine pass: one read from memory instead of three); longer rows are cut into kChunk pieces
// for both, so a few long rows still spread over threads.
constexpr int64_t kFuseRow = 65536;

// Per row of a contiguous [R, D]: two-pass mean and biased variance (double; D == 0: 0 and 0),
// and apply(r, d0, d1, mean, rstd) over the row's elements [d0, d1).
template <typename T, typename Apply>
void normalize_rows(const T* x, int64_t R, int64_t D, double eps, std::vector<double>* mean,
                    std::vector<double>* var, Apply apply) {
  if (D <= kFuseRow) {
    mean->assign(R, 0.0);
    var->assign(R, 0.0);
    parallel_for(R, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(D, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* xr = x + r * D;
        const double m = D ? run_sum<T, false>(xr, D, 0.0) / static_cast<double>(D) : 0.0;
        const double v = D ? run_sum<T, true>(xr, D, m) / static_cast<double>(D) : 0.0;
        (*mean)[r] = m;
        (*var)[r] = v;
        apply(r, int64_t(0), D, m, 1.0 / std::sqrt(v + eps));
      }
    });
    return;
  }
  row_stats<T>(x, R, D, mean, var);
  const int64_t nch = (D + kChunk - 1) / kChunk;
  parallel_for(R * nch, std::max<int64_t>(1, kParallelGrain / kChunk), [&](int64_t lo, int64_t hi) {
    for (int64_t w = lo; w < hi; ++w) {
      const int64_t r = w / nch, d0 = (w % nch) * kChunk;
      apply(r, d0, std::min(D, d0 + kChunk), (*mean)[r], 1.0 / std::sqrt((*var)[r] + eps));
    }
  });
}

std::string eps_key(double eps) {
  float f = static_cast<float>(eps);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return std::to_string(bits);
}

// ---- oneDNN (float32) -----------------------------------------------------------------------------

// Layer normalisation of contiguous [R, D] over D; writes each row's mean and biased variance.
bool dnnl_layer_norm(float* y, const float* x, int64_t R, int64_t D, const float* scale,
                     const float* shift, float* mean, float* var, double eps) {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::memory::desc md({R, D}, dt::f32, tag::ab), smd({R}, dt::f32, tag::a), pmd({D}, dt::f32, tag::a);
  std::string key = "lnorm:" + std::to_string(R) + "x" + std::to_string(D) + ":" + eps_key(eps);
  dnnl::primitive prim;
  try {
    prim = PrimitiveCache::instance().get(key, [&] {
      dnnl::layer_normalization_forward::desc d(
          dnnl::prop_kind::forward_training, md, smd, static_cast<float>(eps),
          dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
      return dnnl::layer_normalization_forward(
          dnnl::layer_normalization_forward::primitive_desc(d, scratchpad_attr(), dnnl_engine()));
    });
  } catch (const dnnl::error&) {
    return false;
  }
  auto& eng = dnnl_engine();
  dnnl::memory src(md, eng, const_cast<float*>(x)), dst(md, eng, y);
  dnnl::memory sc(pmd, eng, const_cast<float*>(scale)), sh(pmd, eng, const_cast<float*>(shift));
  dnnl::memory mm(smd, eng, mean), vm(smd, eng, var);
  execute(prim, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCALE, sc},
                 {DNNL_ARG_SHIFT, sh}, {DNNL_ARG_MEAN, mm}, {DNNL_ARG_VARIANCE, vm}});
  return true;
}

// Below this many elements oneDNN's OpenMP region costs more than the loop it replaces.
constexpr int64_t kDnnlMinNumel = 4096;

// The product of x's dims after the first two (the S of [N, C, S]).
int64_t trailing(const Tensor& x) {
  int64_t s = 1;
  for (int d = 2; d < x.ndim(); ++d) s *= x.dim(d);
  return s;
}

std::vector<double> invstd_of(const std::vector<double>& var, double eps) {
  std::vector<double> r(var.size());
  for (size_t i = 0; i < var.size(); ++i) r[i] = 1.0 / std::sqrt(var[i] + eps);
  return r;
}

// m, a, sh of y = (x - m) * a + sh from statistics and parameters in double.
template <typename T>
void affine_coeffs(const std::vector<double>& mean, const std::vector<double>& var, const std::vector<double>& g,
                   const std::vector<double>& b, double eps, std::vector<T>* m, std::vector<T>* a, std::vector<T>* sh) {
  const std::vector<double> inv = invstd_of(var, eps);
  const size_t C = mean.size();
  m->resize(C);
  a->resize(C);
  sh->resize(C);
  for (size_t c = 0; c < C; ++c) {
    (*m)[c] = static_cast<T>(mean[c]);
    (*a)[c] = static_cast<T>(inv[c] * g[c]);
    (*sh)[c] = static_cast<T>(b[c]);
  }
}

}  // namespace

void batch_norm_coeffs_into(const Tensor& m, const Tensor& a, const Tensor& sh, const Tensor& gamma,
                            const Tensor& beta, const Tensor& running_mean, const Tensor& running_var, double eps) {
  PJ_CHECK(m.dtype() == a.dtype() && m.dtype() == sh.dtype() && m.is_contiguous() && a.is_contiguous() &&
           sh.is_contiguous())
      << "batch_norm_coeffs_into: outputs";
  PJ_DISPATCH_FLOATING(m.dtype(), "batch_norm_coeffs", [&] {
    using T = scalar_t;
    std::vector<T> mv, av, shv;
    affine_coeffs(read_doubles(running_mean), read_doubles(running_var), read_doubles(gamma), read_doubles(beta), eps,
                  &mv, &av, &shv);
    std::copy(mv.begin(), mv.end(), m.data<T>());
    std::copy(av.begin(), av.end(), a.data<T>());
    std::copy(shv.begin(), shv.end(), sh.data<T>());
  });
}

void batch_norm_into(const Tensor& y, const Tensor& save_mean, const Tensor& save_invstd, const Tensor& x,
                     const Tensor& gamma, const Tensor& beta, const Tensor& running_mean,
                     const Tensor& running_var, bool training, double momentum, double eps) {
  PJ_CHECK(x.ndim() >= 2 && y.shape() == x.shape() && y.dtype() == x.dtype()) << "batch_norm_into: y";
  const int64_t N = x.dim(0), C = x.dim(1), S = trailing(x), M = N * S;
  PJ_CHECK(!training || M > 1) << "batch_norm_into: training needs more than one value per channel";
  const std::vector<double> g = read_doubles(gamma), b = read_doubles(beta);
  std::vector<double> mean, var;  // the statistics normalised with (batch or running)
  if (!training) {
    mean = read_doubles(running_mean);
    var = read_doubles(running_var);
  }
  const Tensor xc = x.contiguous();
  PJ_DISPATCH_FLOATING(x.dtype(), "batch_norm", [&] {
    using T = scalar_t;
    if (training) channel_stats<T>(xc.data<T>(), N, C, S, &mean, &var);
    std::vector<T> m, a, sh;
    affine_coeffs(mean, var, g, b, eps, &m, &a, &sh);
    if (x.numel() == 0) return;
    with_contiguous_out(y, [&](const Tensor& dst) {
      channel_affine<T>(dst.data<T>(), xc.data<T>(), N, C, S, m.data(), a.data(), sh.data());
    });
  });
  write_doubles(save_mean, mean);
  write_doubles(save_invstd, invstd_of(var, eps));
  if (training) {
    std::vector<double> rm = read_doubles(running_mean), rv = read_doubles(running_var);
    const double unbias = static_cast<double>(M) / static_cast<double>(M - 1);
    for (int64_t c = 0; c < C; ++c) {
      rm[c] = momentum * rm[c] + (1.0 - momentum) * mean[c];
      rv[c] = momentum * rv[c] + (1.0 - momentum) * var[c] * unbias;
    }
    write_doubles(running_mean, rm);
    write_doubles(running_var, rv);
    running_mean.storage()->note_write();
    running_var.storage()->note_write();
  }
}

void layer_norm_into(const Tensor& y, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                     const Tensor& gamma, const Tensor& beta, int begin_axis, double eps, NormPath path) {
  PJ_CHECK(begin_axis >= 0 && begin_axis < x.ndim()) << "layer_norm_into: begin_axis";
  PJ_CHECK(y.shape() == x.shape() && y.dtype() == x.dtype()) << "layer_norm_into: y";
  int64_t R = 1, D = 1;
  for (int d = 0; d < x.ndim(); ++d) (d < begin_axis ? R : D) *= x.dim(d);
  PJ_CHECK(gamma.numel() == D && beta.numel() == D && mean.numel() == R && rstd.numel() == R)
      << "layer_norm_into: parameter sizes";
  const std::vector<double> g = read_doubles(gamma), b = read_doubles(beta);
  const Tensor xc = x.contiguous();
  std::vector<double> mu, var;
  bool done = false;
  if (x.dtype() == DType::Float32 && path == NormPath::Auto && x.numel() >= kDnnlMinNumel) {
    std::vector<float> sc = to_vec<float>(g), sh = to_vec<float>(b), fm(R), fv(R);
    with_contiguous_out(y, [&](const Tensor& dst) {
      done = dnnl_layer_norm(dst.data<float>(), xc.data<float>(), R, D, sc.data(), sh.data(), fm.data(),
                             fv.data(), eps);
    });
    if (done) {
      mu.assign(fm.begin(), fm.end());
      var.assign(fv.begin(), fv.end());
    }
  }
  if (!done) {
    PJ_DISPATCH_FLOATING(x.dtype(), "layer_norm", [&] {
      using T = scalar_t;
      const std::vector<T> tg = to_vec<T>(g), tb = to_vec<T>(b);
      with_contiguous_out(y, [&](const Tensor& dst) {
        const T* xp = xc.data<T>();
        T* yp = dst.data<T>();
        normalize_rows<T>(xp, R, D, eps, &mu, &var, [&](int64_t r, int64_t d0, int64_t d1, double m, double rs) {
          const T mv = static_cast<T>(m), rv = static_cast<T>(rs);
          const T* xr = xp + r * D;
          T* yr = yp + r * D;
          for (int64_t d = d0; d < d1; ++d) yr[d] = (xr[d] - mv) * rv * tg[d] + tb[d];
        });
      });
    });
  }
  write_doubles(mean, mu);
  write_doubles(rstd, invstd_of(var, eps));
}

void group_norm_into(const Tensor& y, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                     const Tensor& gamma, const Tensor& beta, int64_t groups, double eps) {
  PJ_CHECK(x.ndim() >= 2 && y.shape() == x.shape() && y.dtype() == x.dtype()) << "group_norm_into: y";
  const int64_t N = x.dim(0), C = x.dim(1), S = trailing(x);
  PJ_CHECK(groups > 0 && C % groups == 0) << "group_norm_into: groups";
  const int64_t cpg = C / groups;
  const std::vector<double> g = read_doubles(gamma), b = read_doubles(beta);
  const Tensor xc = x.contiguous();
  std::vector<double> mu, var;
  PJ_DISPATCH_FLOATING(x.dtype(), "group_norm", [&] {
    using T = scalar_t;
    const std::vector<T> tg = to_vec<T>(g), tb = to_vec<T>(b);
    with_contiguous_out(y, [&](const Tensor& dst) {
      const T* xp = xc.data<T>();
      T* yp = dst.data<T>();
      // Row r = (sample, group) holds the group's cpg channels of S elements each.
      normalize_rows<T>(xp, N * groups, cpg * S, eps, &mu, &var, [&](int64_t r, int64_t d0, int64_t d1, double m, double rs) {
        const T mv = static_cast<T>(m);
        const int64_t c0 = (r % groups) * cpg;
        const T* xr = xp + r * cpg * S;
        T* yr = yp + r * cpg * S;
        for (int64_t d = d0; d < d1;) {
          const int64_t c = d / S, end = std::min(d1, (c + 1) * S);
          const T av = static_cast<T>(rs * static_cast<double>(tg[c0 + c])), bv = tb[c0 + c];
          for (; d < end; ++d) yr[d] = (xr[d] - mv) * av + bv;
        }
      });
    });
  });
  write_doubles(mean, mu);
  write_doubles(rstd, invstd_of(var, eps));
}

}  // namespace pj
