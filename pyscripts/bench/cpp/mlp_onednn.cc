// The MLP reference bench_compiler.py compares pijit against: oneDNN called directly, the best a
// hand-written program gets from it. One matmul primitive per layer with the weights reordered once
// into the layout the primitive asks for (format_tag::any), the bias and the ReLU as post-ops,
// intermediates allocated once. Prints one JSON line: {"us": best microseconds per forward}.
//
//   bench_mlp_onednn BATCH D0 D1 ... Dn   (layer i maps D(i) -> D(i+1); ReLU after all but the last)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s BATCH D0 D1 [D2 ...]\n", argv[0]);
    return 2;
  }
  const int64_t batch = std::atoll(argv[1]);
  std::vector<int64_t> dims;
  for (int i = 2; i < argc; ++i) dims.push_back(std::atoll(argv[i]));
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::mt19937 rng(0);
  std::normal_distribution<float> nd(0.f, 0.05f);
  auto filled = [&](const dnnl::memory::desc& md) {
    dnnl::memory m(md, eng);
    float* p = static_cast<float*>(m.get_data_handle());
    for (size_t i = 0; i < md.get_size() / sizeof(float); ++i) p[i] = nd(rng);
    return m;
  };

  struct Layer {
    dnnl::matmul prim;
    dnnl::memory w, b, dst;
  };
  std::vector<Layer> layers;
  dnnl::memory src = filled(dnnl::memory::desc({batch, dims[0]}, dt::f32, tag::ab));
  dnnl::memory in = src;
  for (size_t l = 0; l + 1 < dims.size(); ++l) {
    const int64_t k = dims[l], n = dims[l + 1];
    dnnl::memory::desc smd({batch, k}, dt::f32, tag::ab), wany({k, n}, dt::f32, tag::any);
    dnnl::memory::desc bmd({1, n}, dt::f32, tag::ab), dmd({batch, n}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    if (l + 2 < dims.size()) {
      dnnl::post_ops po;
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      attr.set_post_ops(po);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(smd, wany, bmd, dmd), attr, eng);
    // The user's weight is (out, in) row-major, i.e. (in, out) column-major: reorder it once.
    dnnl::memory wuser = filled(dnnl::memory::desc({k, n}, dt::f32, tag::ba));
    dnnl::memory w(pd.weights_desc(), eng);
    dnnl::reorder(wuser, w).execute(strm, wuser, w);
    layers.push_back({dnnl::matmul(pd), w, filled(bmd), dnnl::memory(dmd, eng)});
  }
  auto forward = [&] {
    dnnl::memory x = in;
    for (auto& L : layers) {
      L.prim.execute(strm, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, L.w}, {DNNL_ARG_BIAS, L.b}, {DNNL_ARG_DST, L.dst}});
      x = L.dst;
    }
    strm.wait();
  };
  for (int i = 0; i < 50; ++i) forward();
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    const int iters = 300;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) forward();
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
    best = std::min(best, us);
  }
  std::printf("{\"us\": %.3f, \"threads\": %d}\n", best, omp_get_max_threads());
  return 0;
}
