// The training-step reference bench_training.py compares pijit against: one SGD-with-momentum step
// of an MLP (Dense + ReLU, cross entropy) written directly on oneDNN, the best a hand-written
// program gets from it. Per layer: a forward matmul primitive (bias and ReLU as post-ops), and
// backward matmul primitives for the input gradient (dY W) and the weight gradient (dY^T X), all
// created once over buffers allocated once; the softmax-cross-entropy gradient, the bias
// gradients, the ReLU masks and the update are plain loops. Prints one JSON line:
// {"us": best microseconds per step}.
//
//   bench_mlp_train_onednn BATCH D0 D1 ... Dn   (layer i maps D(i) -> D(i+1); ReLU after all but the last)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

namespace {

struct Layer {
  int64_t k, n;
  bool relu;
  std::vector<float> w, b, dw, db, vw, vb;  // w: (n, k) row-major, as pijit's Dense
  std::vector<float> out, dout;             // (batch, n)
  dnnl::matmul fwd, bwd_data, bwd_weights;
};

dnnl::matmul make_matmul(const dnnl::engine& eng, const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                         const dnnl::memory::desc& c, const dnnl::memory::desc* bias, bool relu) {
  dnnl::primitive_attr attr;
  if (relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  auto d = bias ? dnnl::matmul::desc(a, b, *bias, c) : dnnl::matmul::desc(a, b, c);
  return dnnl::matmul(dnnl::matmul::primitive_desc(d, attr, eng));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s BATCH D0 D1 [D2 ...]\n", argv[0]);
    return 2;
  }
  const int64_t B = std::atoll(argv[1]);
  std::vector<int64_t> d;
  for (int i = 2; i < argc; ++i) d.push_back(std::atoll(argv[i]));
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::mt19937 rng(0);
  std::normal_distribution<float> nd(0.f, 0.05f);
  auto filled = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = nd(rng);
    return v;
  };

  // kBatches new batches in turn, as a data loader gives them (the masks of relu's gradient change
  // every step: a branchy kernel mispredicts, one batch reused would hide that)
  constexpr int kBatches = 8;
  std::vector<std::vector<float>> xs;
  std::vector<std::vector<int>> ys;
  for (int k = 0; k < kBatches; ++k) {
    xs.push_back(filled(B * d[0]));
    ys.emplace_back(B);
    for (int64_t i = 0; i < B; ++i) ys.back()[i] = static_cast<int>(rng() % d.back());
  }
  int batch = 0;
  std::vector<Layer> layers;
  for (size_t l = 0; l + 1 < d.size(); ++l) {
    Layer L;
    L.k = d[l];
    L.n = d[l + 1];
    L.relu = l + 2 < d.size();
    L.w = filled(L.n * L.k);
    L.b = filled(L.n);
    L.dw.assign(L.n * L.k, 0.f);
    L.db.assign(L.n, 0.f);
    L.vw.assign(L.n * L.k, 0.f);
    L.vb.assign(L.n, 0.f);
    L.out.assign(B * L.n, 0.f);
    L.dout.assign(B * L.n, 0.f);
    const int64_t k = L.k, n = L.n;
    // forward: out(B, n) = in(B, k) W^T (W^T: (k, n) viewed column-major from W (n, k) row-major)
    dnnl::memory::desc in_md({B, k}, dt::f32, tag::ab), wt_md({k, n}, dt::f32, tag::ba), bias_md({1, n}, dt::f32, tag::ab),
        out_md({B, n}, dt::f32, tag::ab);
    L.fwd = make_matmul(eng, in_md, wt_md, out_md, &bias_md, L.relu);
    // input gradient: din(B, k) = dout(B, n) W(n, k)
    L.bwd_data = make_matmul(eng, out_md, dnnl::memory::desc({n, k}, dt::f32, tag::ab), in_md, nullptr, false);
    // weight gradient: dW(n, k) = dout^T(n, B) in(B, k)
    L.bwd_weights = make_matmul(eng, dnnl::memory::desc({n, B}, dt::f32, tag::ba), in_md,
                                dnnl::memory::desc({n, k}, dt::f32, tag::ab), nullptr, false);
    layers.push_back(std::move(L));
  }
  auto mem = [&](dims shape, tag t, float* p) { return dnnl::memory(dnnl::memory::desc(shape, dt::f32, t), eng, p); };
  const float lr = 0.01f, momentum = 0.9f;

  auto step = [&] {
    std::vector<float>& x = xs[batch];
    const std::vector<int>& labels = ys[batch];
    batch = (batch + 1) % kBatches;
    // forward
    float* in = x.data();
    for (Layer& L : layers) {
      L.fwd.execute(strm, {{DNNL_ARG_SRC, mem({B, L.k}, tag::ab, in)},
                           {DNNL_ARG_WEIGHTS, mem({L.k, L.n}, tag::ba, L.w.data())},
                           {DNNL_ARG_BIAS, mem({1, L.n}, tag::ab, L.b.data())},
                           {DNNL_ARG_DST, mem({B, L.n}, tag::ab, L.out.data())}});
      in = L.out.data();
    }
    // softmax cross entropy (mean): dlogits = (softmax - onehot) / B
    Layer& last = layers.back();
    const int64_t C = last.n;
    for (int64_t i = 0; i < B; ++i) {
      const float* z = &last.out[i * C];
      float* g = &last.dout[i * C];
      float m = *std::max_element(z, z + C), s = 0.f;
      for (int64_t c = 0; c < C; ++c) s += (g[c] = std::exp(z[c] - m));
      for (int64_t c = 0; c < C; ++c) g[c] = (g[c] / s - (c == labels[i] ? 1.f : 0.f)) / static_cast<float>(B);
    }
    // backward
    for (size_t l = layers.size(); l-- > 0;) {
      Layer& L = layers[l];
      float* lin = l ? layers[l - 1].out.data() : x.data();
      L.bwd_weights.execute(strm, {{DNNL_ARG_SRC, mem({L.n, B}, tag::ba, L.dout.data())},
                                   {DNNL_ARG_WEIGHTS, mem({B, L.k}, tag::ab, lin)},
                                   {DNNL_ARG_DST, mem({L.n, L.k}, tag::ab, L.dw.data())}});
      std::fill(L.db.begin(), L.db.end(), 0.f);
      for (int64_t i = 0; i < B; ++i)
        for (int64_t j = 0; j < L.n; ++j) L.db[j] += L.dout[i * L.n + j];
      if (l > 0) {
        Layer& P = layers[l - 1];
        L.bwd_data.execute(strm, {{DNNL_ARG_SRC, mem({B, L.n}, tag::ab, L.dout.data())},
                                  {DNNL_ARG_WEIGHTS, mem({L.n, L.k}, tag::ab, L.w.data())},
                                  {DNNL_ARG_DST, mem({B, L.k}, tag::ab, P.dout.data())}});
        if (P.relu)
          for (size_t i = 0; i < P.dout.size(); ++i) P.dout[i] = P.out[i] > 0.f ? P.dout[i] : 0.f;
      }
    }
    strm.wait();
    // SGD with momentum
    for (Layer& L : layers) {
      for (size_t i = 0; i < L.w.size(); ++i) L.w[i] -= lr * (L.vw[i] = momentum * L.vw[i] + L.dw[i]);
      for (size_t i = 0; i < L.b.size(); ++i) L.b[i] -= lr * (L.vb[i] = momentum * L.vb[i] + L.db[i]);
    }
  };
  for (int i = 0; i < 10; ++i) step();
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    const int n = 50;
    for (int i = 0; i < n; ++i) step();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n);
  }
  std::printf("{\"us\": %.2f, \"threads\": %d}\n", best, omp_get_max_threads());
  return 0;
}
