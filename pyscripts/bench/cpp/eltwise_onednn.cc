// The anchor of bench_eager_dispatch.py: what oneDNN's execute alone costs for one small elementwise
// op, the floor an eager call's dispatch is measured against. A binary add and an eltwise ReLU on
// float32 of the given shape, each primitive created once, then only execute + wait timed (best of
// 7 runs of N calls). Prints one JSON line: {"add_ns": ..., "relu_ns": ...}.
//
//   bench_eltwise_onednn D0 [D1 ...]   (default 3 3)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

using dt = dnnl::memory::data_type;

template <class F>
double best_ns(F&& call) {
  constexpr int kCalls = 100000, kRuns = 7;
  double best = 1e30;
  for (int r = 0; r < kRuns; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) call();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / kCalls);
  }
  return best;
}

int main(int argc, char** argv) {
  dnnl::memory::dims dims;
  for (int i = 1; i < argc; ++i) dims.push_back(std::atoll(argv[i]));
  if (dims.empty()) dims = {3, 3};
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using tag = dnnl::memory::format_tag;
  const tag plain[] = {tag::a, tag::ab, tag::abc, tag::abcd};  // (row-major, as pijit's tensors)
  if (dims.size() > 4) {
    std::fprintf(stderr, "at most 4 dims\n");
    return 2;
  }
  const dnnl::memory::desc md(dims, dt::f32, plain[dims.size() - 1]);
  dnnl::memory a(md, eng), b(md, eng), y(md, eng);
  const size_t n = md.get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) {
    static_cast<float*>(a.get_data_handle())[i] = 0.5f * static_cast<float>(i) - 1.f;
    static_cast<float*>(b.get_data_handle())[i] = 1.f;
  }
  dnnl::binary add(dnnl::binary::primitive_desc(dnnl::binary::desc(dnnl::algorithm::binary_add, md, md, md), eng));
  dnnl::eltwise_forward relu(dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_relu, md, 0.f), eng));
  const double add_ns = best_ns([&] {
    add.execute(strm, {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, y}});
    strm.wait();
  });
  const double relu_ns = best_ns([&] {
    relu.execute(strm, {{DNNL_ARG_SRC, a}, {DNNL_ARG_DST, y}});
    strm.wait();
  });
  std::printf("{\"add_ns\": %.1f, \"relu_ns\": %.1f}\n", add_ns, relu_ns);
  return 0;
}
