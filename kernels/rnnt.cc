#include "kernels/rnnt.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/copy.h"
#include "kernels/loss_host.h"
#include "kernels/threading.h"

namespace pj {

namespace {

using loss_host::doubles_of;
using loss_host::ints_of;
using loss_host::kNegInf;
using loss_host::log_add;

void store(const Tensor& out, const std::vector<double>& v) { loss_host::store(out, v, "rnnt_loss"); }

}  // namespace

void rnnt_loss_into(const Tensor& costs, const Tensor& grads, const Tensor& acts, const Tensor& labels,
                    const Tensor& input_lengths, const Tensor& label_lengths, int64_t blank) {
  const int64_t B = acts.shape()[0], T = acts.shape()[1], U1 = acts.shape()[2], V = acts.shape()[3];
  const int64_t Umax = labels.shape()[1];
  const std::vector<double> x = doubles_of(acts);
  const std::vector<int64_t> lab = ints_of(labels), in_len = ints_of(input_lengths), lab_len = ints_of(label_lengths);
  // Values are checked before the parallel loop: a kernel may not throw from inside it.
  for (int64_t b = 0; b < B; ++b) {
    if (in_len[b] < 1 || in_len[b] > T)
      PJ_THROW(Value) << "For 'RNNTLoss', input_lengths[" << b << "] must be in [1, " << T << "] (T), but got "
                      << in_len[b];
    if (lab_len[b] < 0 || lab_len[b] > std::min(Umax, U1 - 1))
      PJ_THROW(Value) << "For 'RNNTLoss', label_lengths[" << b << "] must be in [0, " << std::min(Umax, U1 - 1)
                      << "], but got " << lab_len[b];
    for (int64_t u = 0; u < lab_len[b]; ++u) {
      const int64_t l = lab[b * Umax + u];
      if (l < 0 || l >= V)
        PJ_THROW(Value) << "For 'RNNTLoss', labels[" << b << ", " << u << "] must be a class in [0, " << V
                        << "), but got " << l;
    }
  }
  std::vector<double> out_cost(static_cast<size_t>(B)), out_grad(x.size(), 0.0);
  parallel_for(B, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> lp, alpha, beta;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t Tb = in_len[b], Ub = lab_len[b], W = Ub + 1;
      const int64_t* l = &lab[b * Umax];
      const double* xb = &x[b * T * U1 * V];
      // log-softmax over V at each lattice node of the sample
      lp.assign(static_cast<size_t>(Tb * W * V), 0.0);
      for (int64_t t = 0; t < Tb; ++t)
        for (int64_t u = 0; u < W; ++u) {
          const double* row = xb + (t * U1 + u) * V;
          double m = row[0];
          for (int64_t v = 1; v < V; ++v) m = std::max(m, row[v]);
          double s = 0;
          for (int64_t v = 0; v < V; ++v) s += std::exp(row[v] - m);
          const double lse = m + std::log(s);
          double* o = &lp[(t * W + u) * V];
          for (int64_t v = 0; v < V; ++v) o[v] = row[v] - lse;
        }
      auto at = [&](int64_t t, int64_t u, int64_t v) { return lp[(t * W + u) * V + v]; };
      // alpha(t, u): log-probability of emitting u labels by frame t, arriving at node (t, u)
      alpha.assign(static_cast<size_t>(Tb * W), kNegInf);
      alpha[0] = 0;
      for (int64_t t = 0; t < Tb; ++t)
        for (int64_t u = 0; u < W; ++u) {
          if (t == 0 && u == 0) continue;
          double a = kNegInf;
          if (t > 0) a = alpha[(t - 1) * W + u] + at(t - 1, u, blank);
          if (u > 0) a = log_add(a, alpha[t * W + u - 1] + at(t, u - 1, l[u - 1]));
          alpha[t * W + u] = a;
        }
      // beta(t, u): log-probability of finishing from node (t, u), the final blank included
      beta.assign(static_cast<size_t>(Tb * W), kNegInf);
      for (int64_t t = Tb - 1; t >= 0; --t)
        for (int64_t u = W - 1; u >= 0; --u) {
          double v = (t == Tb - 1 && u == W - 1) ? at(t, u, blank) : kNegInf;
          if (t < Tb - 1) v = log_add(v, beta[(t + 1) * W + u] + at(t, u, blank));
          if (u < W - 1) v = log_add(v, beta[t * W + u + 1] + at(t, u, l[u]));
          beta[t * W + u] = v;
        }
      const double ll = beta[0];
      out_cost[b] = -ll;
      // d cost / d acts(t, u, v) = softmax(v) * occ(t, u) - emission occupancy of v at (t, u)
      for (int64_t t = 0; t < Tb; ++t)
        for (int64_t u = 0; u < W; ++u) {
          const double a = alpha[t * W + u];
          const double occ = std::exp(a + beta[t * W + u] - ll);
          double* g = &out_grad[((b * T + t) * U1 + u) * V];
          for (int64_t v = 0; v < V; ++v) g[v] = occ * std::exp(at(t, u, v));
          const double next_blank = (t < Tb - 1) ? beta[(t + 1) * W + u] : (u == W - 1 ? 0.0 : kNegInf);
          g[blank] -= std::exp(a + at(t, u, blank) + next_blank - ll);
          if (u < W - 1) g[l[u]] -= std::exp(a + at(t, u, l[u]) + beta[t * W + u + 1] - ll);
        }
    }
  });
  store(costs, out_cost);
  store(grads, out_grad);
}

}  // namespace pj
