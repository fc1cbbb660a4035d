#include "kernels/ctc.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/copy.h"
#include "kernels/loss_host.h"
#include "kernels/threading.h"

namespace pj {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using loss_host::doubles_of;
using loss_host::ints_of;
using loss_host::kNegInf;
using loss_host::log_add;

void store(const Tensor& out, const std::vector<double>& v) { loss_host::store(out, v, "ctc kernels"); }

// One sample's lattice. lp(t, c) reads its log-probabilities; ext is l' (blank, l1, blank, ...).
// merge: a path symbol repeated over frames is one label (classic CTC); without it every frame
// emits, so a label state has no self-loop and equal neighbours may be skipped between.
struct Lattice {
  const std::vector<int64_t>& ext;
  int64_t blank;
  bool merge;
  int64_t frames;

  bool self_loop(size_t s) const { return merge || ext[s] == blank; }
  // May a path jump from state s - 2 to s?
  bool skip_into(size_t s) const { return s >= 2 && ext[s] != blank && !(merge && ext[s] == ext[s - 2]); }

  // alpha[t * U + s]: log-probability of the prefixes ending in state s at frame t (emission
  // at t included).
  template <typename LP>
  void forward(LP lp, std::vector<double>& alpha) const {
    const size_t U = ext.size();
    alpha.assign(static_cast<size_t>(frames) * U, kNegInf);
    if (frames == 0) return;
    alpha[0] = lp(0, ext[0]);
    if (U > 1) alpha[1] = lp(0, ext[1]);
    for (int64_t t = 1; t < frames; ++t) {
      const double* prev = &alpha[(t - 1) * U];
      double* cur = &alpha[t * U];
      for (size_t s = 0; s < U; ++s) {
        double a = self_loop(s) ? prev[s] : kNegInf;
        if (s >= 1) a = log_add(a, prev[s - 1]);
        if (skip_into(s)) a = log_add(a, prev[s - 2]);
        cur[s] = a == kNegInf ? kNegInf : a + lp(t, ext[s]);
      }
    }
  }

  // beta[t * U + s]: log-probability of the suffixes from state s at frame t (emission at t
  // included), ending in the last label or the final blank.
  template <typename LP>
  void backward(LP lp, std::vector<double>& beta) const {
    const size_t U = ext.size();
    beta.assign(static_cast<size_t>(frames) * U, kNegInf);
    if (frames == 0) return;
    const int64_t last = frames - 1;
    beta[last * U + U - 1] = lp(last, ext[U - 1]);
    if (U > 1) beta[last * U + U - 2] = lp(last, ext[U - 2]);
    for (int64_t t = last - 1; t >= 0; --t) {
      const double* next = &beta[(t + 1) * U];
      double* cur = &beta[t * U];
      for (size_t s = 0; s < U; ++s) {
        double b = self_loop(s) ? next[s] : kNegInf;
        if (s + 1 < U) b = log_add(b, next[s + 1]);
        if (s + 2 < U && skip_into(s + 2)) b = log_add(b, next[s + 2]);
        cur[s] = b == kNegInf ? kNegInf : b + lp(t, ext[s]);
      }
    }
  }

  // log p(l | x) from alpha: the paths ending in the last label or the final blank.
  double log_likelihood(const std::vector<double>& alpha) const {
    const size_t U = ext.size();
    if (frames == 0) return U == 1 ? 0.0 : kNegInf;
    const double* last = &alpha[(frames - 1) * U];
    return log_add(last[U - 1], U > 1 ? last[U - 2] : kNegInf);
  }

  // occ[t * C + c] = log sum over states s with ext[s] == c of alpha + beta - lp(t, c): the log
  // of the total posterior probability of emitting c at frame t, times p(l | x).
  template <typename LP>
  void occupancy(LP lp, const std::vector<double>& alpha, const std::vector<double>& beta, int64_t C,
                 std::vector<double>& occ) const {
    const size_t U = ext.size();
    occ.assign(static_cast<size_t>(frames * C), kNegInf);
    for (int64_t t = 0; t < frames; ++t)
      for (size_t s = 0; s < U; ++s) {
        const double ab = alpha[t * U + s] + beta[t * U + s];
        if (ab == kNegInf) continue;
        double& o = occ[t * C + ext[s]];
        o = log_add(o, ab - lp(t, ext[s]));
      }
  }
};

std::vector<int64_t> extend(const int64_t* label, int64_t L, int64_t blank) {
  std::vector<int64_t> ext(static_cast<size_t>(2 * L + 1), blank);
  for (int64_t i = 0; i < L; ++i) ext[2 * i + 1] = label[i];
  return ext;
}

// The shared value checks of the torch-like forward and backward.
struct DenseProblem {
  int64_t T, N, C, S;
  std::vector<double> lp;  // [T, N, C]
  std::vector<int64_t> targets, in_len, tgt_len;

  DenseProblem(const Tensor& log_probs, const Tensor& tg, const Tensor& il, const Tensor& tl, int64_t blank)
      : T(log_probs.dim(0)), N(log_probs.dim(1)), C(log_probs.dim(2)), S(tg.dim(1)),
        lp(doubles_of(log_probs)), targets(ints_of(tg)), in_len(ints_of(il)), tgt_len(ints_of(tl)) {
    for (int64_t b = 0; b < N; ++b) {
      if (in_len[b] < 0 || in_len[b] > T)
        PJ_THROW(Runtime) << "ctc_loss: input_lengths[" << b << "] must be in [0, " << T
                          << "] (the time dim of log_probs), but got " << in_len[b];
      if (tgt_len[b] < 0 || tgt_len[b] > S)
        PJ_THROW(Runtime) << "ctc_loss: target_lengths[" << b << "] must be in [0, " << S
                          << "] (the length dim of targets), but got " << tgt_len[b];
      for (int64_t i = 0; i < tgt_len[b]; ++i) {
        const int64_t v = targets[b * S + i];
        if (v < 0 || v >= C)
          PJ_THROW(Runtime) << "ctc_loss: targets[" << b << ", " << i << "] must be a class in [0, " << C
                            << "), but got " << v;
      }
    }
  }

  auto reader(int64_t b) const {
    const double* base = lp.data() + b * C;
    const int64_t step = N * C;
    return [base, step](int64_t t, int64_t c) { return base[t * step + c]; };
  }
};

}  // namespace

void ctc_loss_into(const Tensor& nll, const Tensor& log_alpha, const Tensor& log_probs, const Tensor& targets,
                   const Tensor& input_lengths, const Tensor& target_lengths, int64_t blank, bool zero_infinity) {
  const DenseProblem p(log_probs, targets, input_lengths, target_lengths, blank);
  const int64_t W = 2 * p.S + 1;
  std::vector<double> out_nll(static_cast<size_t>(p.N)), out_alpha(static_cast<size_t>(p.N * p.T * W), kNegInf);
  parallel_for(p.N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> alpha;
    for (int64_t b = b0; b < b1; ++b) {
      const std::vector<int64_t> ext = extend(&p.targets[b * p.S], p.tgt_len[b], blank);
      const Lattice lat{ext, blank, true, p.in_len[b]};
      lat.forward(p.reader(b), alpha);
      const size_t U = ext.size();
      for (int64_t t = 0; t < lat.frames; ++t)
        std::copy(&alpha[t * U], &alpha[t * U] + U, &out_alpha[(b * p.T + t) * W]);
      double v = -lat.log_likelihood(alpha);
      if (zero_infinity && v == kInf) v = 0;
      out_nll[b] = v;
    }
  });
  store(nll, out_nll);
  store(log_alpha, out_alpha);
}

void ctc_loss_grad_into(const Tensor& grad, const Tensor& dnll, const Tensor& log_probs, const Tensor& targets,
                        const Tensor& input_lengths, const Tensor& target_lengths, const Tensor& log_alpha,
                        int64_t blank, bool zero_infinity) {
  const DenseProblem p(log_probs, targets, input_lengths, target_lengths, blank);
  const std::vector<double> dn = doubles_of(dnll);
  const std::vector<double> la = doubles_of(log_alpha);  // [N, T, 2S + 1]
  const int64_t W = 2 * p.S + 1, C = p.C;
  std::vector<double> out(static_cast<size_t>(p.T * p.N * C), 0.0);
  parallel_for(p.N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> alpha, beta, occ;
    for (int64_t b = b0; b < b1; ++b) {
      const std::vector<int64_t> ext = extend(&p.targets[b * p.S], p.tgt_len[b], blank);
      const Lattice lat{ext, blank, true, p.in_len[b]};
      const size_t U = ext.size();
      alpha.assign(static_cast<size_t>(lat.frames) * U, kNegInf);
      for (int64_t t = 0; t < lat.frames; ++t)
        std::copy(&la[(b * p.T + t) * W], &la[(b * p.T + t) * W] + U, &alpha[t * U]);
      const double nll_b = -lat.log_likelihood(alpha);
      if (zero_infinity && nll_b == kInf) continue;
      auto lp = p.reader(b);
      lat.backward(lp, beta);
      lat.occupancy(lp, alpha, beta, C, occ);
      for (int64_t t = 0; t < lat.frames; ++t)
        for (int64_t c = 0; c < C; ++c) {
          const double l = lp(t, c);
          out[(t * p.N + b) * C + c] = dn[b] * (std::exp(l) - std::exp(occ[t * C + c] + nll_b));
        }
    }
  });
  store(grad, out);
}

void ctc_loss_sparse_into(const Tensor& loss, const Tensor& gradient, const Tensor& inputs,
                          const Tensor& labels_indices, const Tensor& labels_values, const Tensor& sequence_length,
                          const CtcSparseOptions& opt) {
  const int64_t Tm = inputs.dim(0), N = inputs.dim(1), C = inputs.dim(2);
  const int64_t blank = C - 1;
  const std::vector<double> x = doubles_of(inputs);
  const std::vector<int64_t> idx = ints_of(labels_indices), values = ints_of(labels_values);
  const std::vector<int64_t> seq = ints_of(sequence_length);
  for (int64_t b = 0; b < N; ++b) {
    if (seq[b] <= 0)
      PJ_THROW(Runtime) << "CTCLoss: the 'sequence_length' must be greater than 0, but got sequence_length[" << b
                        << "] = " << seq[b];
    if (seq[b] > Tm)
      PJ_THROW(Runtime) << "CTCLoss: the 'max_time' (dim 0 of 'x') must be greater than or equal to "
                        << "'sequence_length', but got 'max_time': " << Tm << " and 'sequence_length': " << seq[b];
  }
  // Labels per sample: the values taken in order, as many as labels_indices[:, 0] names each batch.
  std::vector<int64_t> count(static_cast<size_t>(N), 0);
  const int64_t n = labels_indices.dim(0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = idx[2 * i];
    if (b < 0 || b >= N)
      PJ_THROW(Runtime) << "CTCLoss: labels_indices[" << i << ", 0] must be a batch index in [0, " << N
                        << "), but got " << b;
    ++count[b];
  }
  std::vector<std::vector<int64_t>> labels(static_cast<size_t>(N));
  int64_t at = 0;
  for (int64_t b = 0; b < N; ++b) {
    bool ended = false;  // a value >= blank ends the label; a real label after it is an error
    for (int64_t k = 0; k < count[b]; ++k, ++at) {
      const int64_t v = values[at];
      if (k > 0 && opt.preprocess_collapse_repeated && v == values[at - 1]) continue;
      if (v < 0 || v >= blank) {
        ended = true;
      } else if (ended) {
        PJ_THROW(Runtime) << "CTCLoss: the value of labels_values[" << at << "] must be in the range of [0, "
                          << "num_classes - 1) before any blank or out-of-range label, but got " << v;
      } else {
        labels[b].push_back(v);
      }
    }
    if (!opt.ignore_longer_outputs_than_inputs && static_cast<int64_t>(labels[b].size()) > seq[b])
      PJ_THROW(Runtime) << "CTCLoss: input time (sequence length) must be greater than or equal to the output "
                        << "size (label length), but got sequence length: " << seq[b]
                        << " and label length: " << labels[b].size();
  }
  std::vector<double> out_loss(static_cast<size_t>(N), 0.0), out_grad(static_cast<size_t>(Tm * N * C), 0.0);
  parallel_for(N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> logy, alpha, beta, occ;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t frames = seq[b];
      if (static_cast<int64_t>(labels[b].size()) > frames) continue;  // ignored: loss 0, gradient 0
      // log softmax over the classes of each frame
      logy.assign(static_cast<size_t>(frames * C), 0.0);
      for (int64_t t = 0; t < frames; ++t) {
        const double* row = &x[(t * N + b) * C];
        double m = row[0];
        for (int64_t c = 1; c < C; ++c) m = std::max(m, row[c]);
        double sum = 0;
        for (int64_t c = 0; c < C; ++c) sum += std::exp(row[c] - m);
        const double lse = m + std::log(sum);
        for (int64_t c = 0; c < C; ++c) logy[t * C + c] = row[c] - lse;
      }
      auto lp = [&logy, C](int64_t t, int64_t c) { return logy[t * C + c]; };
      const std::vector<int64_t> ext =
          extend(labels[b].data(), static_cast<int64_t>(labels[b].size()), blank);
      const Lattice lat{ext, blank, opt.ctc_merge_repeated, frames};
      lat.forward(lp, alpha);
      const double ll = lat.log_likelihood(alpha);
      out_loss[b] = -ll;
      if (ll == kNegInf) continue;  // no path fits: the gradient stays 0
      lat.backward(lp, beta);
      lat.occupancy(lp, alpha, beta, C, occ);
      for (int64_t t = 0; t < frames; ++t)
        for (int64_t c = 0; c < C; ++c)
          out_grad[(t * N + b) * C + c] = std::exp(logy[t * C + c]) - std::exp(occ[t * C + c] - ll);
    }
  });
  store(loss, out_loss);
  store(gradient, out_grad);
}

}  // namespace pj
