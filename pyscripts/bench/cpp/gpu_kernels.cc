// Fused elementwise kernels on the GPU against the machine's limits, side by side in one run:
//   - an 8-op chain (and the same with tanh) over 16M float32: the fused kernel's time, against
//     the time the bytes it must move take at the device's copy bandwidth (cuMemcpyDtoD, measured
//     here), and against the CPU fused kernel (kernels/fused.h) on the same data;
//   - a launch of a 9-element kernel, synchronized: the per-call floor of a small graph.
// Each figure is the median of 20 timed runs after warm-up. Needs a GPU (tools/gpu_check.sh).
//   build/bench_fused_cuda [elements]
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/cuda/backend.h"
#include "kernels/cuda/driver.h"
#include "kernels/cuda/fused_cuda.h"
#include "kernels/cuda/conv_cuda.h"
#include "kernels/cuda/matmul_cuda.h"
#include "kernels/cuda/nn_cuda.h"
#include "kernels/fused.h"

namespace {

template <typename F>
double median_ms(F&& f, int runs = 20) {
  std::vector<double> t;
  for (int k = 0; k < runs + 3; ++k) {
    const double ms = f();
    if (k >= 3) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double wall_ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pj;
  const cuda::BackendInfo& b = cuda::backend();
  if (!b.usable) {
    std::printf("no usable GPU: %s\n", b.why.c_str());
    return 0;
  }
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 16 << 20;
  std::printf("device: %s (sm_%d, %d SMs), driver CUDA %s, NVRTC %s; %lld float32 elements\n",
              b.devices[0].name.c_str(), cuda::device_arch(), cuda::device_multiprocessors(),
              cuda::cuda_version_text(b.driver_version).c_str(), b.nvrtc.c_str(), static_cast<long long>(n));

  Tensor x = Tensor::empty({n}, DType::Float32), y = Tensor::empty({n}, DType::Float32);
  for (int64_t i = 0; i < n; ++i) x.data<float>()[i] = 0.001f * (i % 1000) - 0.5f, y.data<float>()[i] = 1.f + 0.002f * (i % 500);
  cuda::DeviceBuffer dx(n * 4), dy(n * 4), dout(n * 4);
  dx.upload(x.raw_data(), n * 4);
  dy.upload(y.raw_data(), n * 4);

  // the limit: a device-to-device copy moves 2 * 4n bytes
  const double copy_ms = median_ms([&] { return cuda::time_on_device([&] { cuda::copy_on_device(dout.get(), dx.get(), n * 4); }); });
  const double copy_gbs = 2.0 * 4 * n / copy_ms / 1e6;
  std::printf("device copy: %.3f ms, %.0f GB/s (bytes read + written)\n", copy_ms, copy_gbs);

  const char* chains[][2] = {
      {"8 ops", "in=2; r2=mul(r0,r1); r3=add(r2,r0); r4=sub(r3,r1); r5=mul(r4,r4); r6=maximum(r5,r0); r7=div(r6,r1); "
                "r8=add(r7,r2); r9=relu(r8); out=(r9)"},
      {"8 ops with tanh", "in=2; r2=mul(r0,r1); r3=add(r2,r0); r4=tanh(r3); r5=mul(r4,r4); r6=maximum(r5,r0); r7=div(r6,r1); "
                          "r8=add(r7,r2); r9=relu(r8); out=(r9)"},
  };
  for (auto& c : chains) {
    const std::vector<const void*> ins = {dx.get(), dy.get()};
    const std::vector<float*> outs = {static_cast<float*>(dout.get())};
    cuda::fused_cuda_run(c[1], 0, n, ins, outs);  // compile and load
    cuda::synchronize();
    const double gpu_ms = median_ms([&] { return cuda::time_on_device([&] { cuda::fused_cuda_run(c[1], 0, n, ins, outs); }); });
    const double floor_ms = 3.0 * 4 * n / copy_gbs / 1e6;  // two inputs read, one output written
    FusedKernel cpu(FusedProgram::parse(c[1]));
    Tensor out = Tensor::empty({n}, DType::Float32);
    const double cpu_ms = median_ms([&] { return wall_ms([&] { cpu.run({x, y}, {out}); }); }, 5);
    std::printf("%-16s GPU %.3f ms = %.2fx the copy-bandwidth floor (%.3f ms); CPU fused %.1f ms (%.0fx the GPU)\n", c[0],
                gpu_ms, gpu_ms / floor_ms, floor_ms, cpu_ms, cpu_ms / gpu_ms);
  }

  // a small graph's floor: launch + synchronize on 9 elements
  const std::string small = "in=2; r2=mul(r0,r1); r3=add(r2,r0); out=(r3)";
  const std::vector<const void*> ins = {dx.get(), dy.get()};
  const std::vector<float*> outs = {static_cast<float*>(dout.get())};
  const double launch_ms = median_ms([&] {
    return wall_ms([&] {
      cuda::fused_cuda_run(small, 0, 9, ins, outs);
      cuda::synchronize();
    });
  }, 200);
  std::printf("9-element kernel, launch + synchronize: %.1f us\n", launch_ms * 1e3);
  {
    const char* ops[] = {"mul(r0,r1)", "add(r0,r1)", "tanh(r0)", "sub(r0,r1)", "exp(r0)",
                         "div(r0,r1)", "sigmoid(r0)", "maximum(r0,r1)", "log(r0)", "square(r0)"};
    std::vector<std::string> progs;
    for (const char* op : ops) progs.push_back(std::string("in=2; r2=") + op + "; out=(r2)");
    const std::string fused = "in=2; r2=mul(r0,r1); r3=add(r2,r1); r4=tanh(r3); r5=sub(r4,r1); r6=exp(r5); "
                              "r7=div(r6,r1); r8=sigmoid(r7); r9=maximum(r8,r1); r10=log(r9); r11=square(r10); out=(r11)";
    float* y = static_cast<float*>(dout.get());
    cuda::Stream stream;
    auto each = [&] {
      for (const std::string& p : progs) cuda::fused_cuda_run(p, 0, 9, {y, dy.get()}, {y}, stream.get());
    };
    each();
    cuda::CudaGraph graph;
    graph.begin(stream);
    each();
    graph.end();
    auto timed = [&](const std::function<void()>& f) {
      return median_ms([&] { return wall_ms([&] { f(); stream.synchronize(); }); }, 200) * 1e3;
    };
    const double separate = timed(each), replay = timed([&] { graph.launch(stream); }),
                 one = timed([&] { cuda::fused_cuda_run(fused, 0, 9, {y, dy.get()}, {y}, stream.get()); });
    std::printf("10 ops on 3x3, synchronized: 10 launches %.1f us, one CUDA graph of them %.1f us, one fused kernel %.1f us\n",
                separate, replay, one);
  }

  // float32 matmul (no TF32)
  {
    const int64_t m = 8192;
    cuda::DeviceBuffer a(m * m * 4), bm(m * m * 4), c(m * m * 4);
    for (int64_t at = 0; at < m * m; at += n) {  // the bench's data, repeated
      const int64_t len = std::min(n, m * m - at) * 4;
      cuda::copy_on_device(static_cast<char*>(a.get()) + at * 4, dx.get(), len);
      cuda::copy_on_device(static_cast<char*>(bm.get()) + at * 4, dy.get(), len);
    }
    const cuda::MatmulShape s{m, m, m, false, false, false};
    auto mm = [&] {
      cuda::matmul_cuda(s, static_cast<const float*>(a.get()), static_cast<const float*>(bm.get()), nullptr,
                        static_cast<float*>(c.get()));
    };
    const double ms = median_ms([&] { return cuda::time_on_device(mm); }, 10);
    std::printf("matmul 8192^3 float32: %.3f ms, %.1f TFLOP/s\n", ms, 2.0 * m * m * m / ms / 1e9);
  }
  {
    const int64_t batch = 32, dims[] = {784, 256, 256, 10};
    cuda::DeviceBuffer act[4], w[3], bias[3];
    for (int l = 0; l < 4; ++l) act[l] = cuda::DeviceBuffer(batch * dims[l] * 4);
    for (int l = 0; l < 3; ++l) {
      w[l] = cuda::DeviceBuffer(dims[l] * dims[l + 1] * 4);
      bias[l] = cuda::DeviceBuffer(dims[l + 1] * 4);
      cuda::copy_on_device(w[l].get(), dx.get(), dims[l] * dims[l + 1] * 4);
      cuda::copy_on_device(bias[l].get(), dy.get(), dims[l + 1] * 4);
    }
    cuda::copy_on_device(act[0].get(), dx.get(), batch * dims[0] * 4);
    auto forward = [&] {
      for (int l = 0; l < 3; ++l)
        cuda::matmul_cuda({batch, dims[l + 1], dims[l], true, true, l < 2}, static_cast<const float*>(act[l].get()),
                          static_cast<const float*>(w[l].get()), static_cast<const float*>(bias[l].get()),
                          static_cast<float*>(act[l + 1].get()));
    };
    const double dev_ms = median_ms([&] { return cuda::time_on_device(forward); }, 50);
    const double wall = median_ms([&] { return wall_ms([&] { forward(); cuda::synchronize(); }); }, 50);
    std::printf("MLP forward, batch 32, 784-256-256-10: %.1f us on the device, %.1f us launch to synchronized\n",
                dev_ms * 1e3, wall * 1e3);
  }
  // float32 convolution (no TF32), 3x3 padding 1, with bias
  const int64_t layers[][4] = {{64, 3, 32, 16}, {64, 16, 16, 32}};  // n, c, h = w, k
  for (const int64_t* d : layers) {
    cuda::ConvShape s;
    s.n = d[0], s.c = d[1], s.h = s.w = d[2], s.k = d[3], s.r = s.s = 3, s.pad_h = s.pad_w = 1, s.bias = true;
    cuda::DeviceBuffer w(s.k * s.c * 9 * 4), y(s.n * s.k * s.h * s.w * 4);
    cuda::copy_on_device(w.get(), dy.get(), s.k * s.c * 9 * 4);
    auto conv = [&] {
      cuda::conv2d_cuda(s, static_cast<const float*>(dx.get()), static_cast<const float*>(w.get()),
                        static_cast<const float*>(dy.get()), static_cast<float*>(y.get()));
    };
    conv();
    const double ms = median_ms([&] { return cuda::time_on_device(conv); });
    cuda::DeviceBuffer dxb(s.n * s.c * s.h * s.w * 4), dwb(s.k * s.c * 9 * 4), dbb(s.k * 4);
    auto backward = [&] {
      cuda::conv2d_backward_data_cuda(s, static_cast<const float*>(y.get()), static_cast<const float*>(w.get()),
                                      static_cast<float*>(dxb.get()));
      cuda::conv2d_backward_weights_cuda(s, static_cast<const float*>(dx.get()), static_cast<const float*>(y.get()),
                                         static_cast<float*>(dwb.get()), static_cast<float*>(dbb.get()));
    };
    backward();
    const double bms = median_ms([&] { return cuda::time_on_device(backward); });
    std::printf("conv2d %lldx%lldx%lldx%lld -> %lld, 3x3: forward %.1f us (%.2f TFLOP/s), backward (data, weights, bias) %.1f us\n",
                (long long)s.n, (long long)s.c, (long long)s.h, (long long)s.w, (long long)s.k, ms * 1e3,
                2.0 * s.n * s.k * s.h * s.w * s.c * 9 / ms / 1e9, bms * 1e3);
  }
  {
    const cuda::BatchNormShape bs{64, 32, 16, 16, 1e-5};
    const int64_t nx = 64 * 32 * 16 * 16;
    cuda::DeviceBuffer y(nx * 4), gx(nx * 4), stats(32 * 4 * 8);
    float* st = static_cast<float*>(stats.get());
    cuda::copy_on_device(st, dy.get(), 32 * 4 * 8);
    const float* x = static_cast<const float*>(dx.get());
    auto bn = [&] {
      cuda::batch_norm_train_cuda(bs, x, st, st + 32, 0.9, st + 64, st + 96, static_cast<float*>(y.get()), st + 128,
                                  st + 160);
      cuda::batch_norm_backward_cuda(bs, x, x, st, st + 128, st + 160, static_cast<float*>(gx.get()), st + 192,
                                     st + 224);
    };
    bn();
    const double bn_ms = median_ms([&] { return cuda::time_on_device(bn); });
    cuda::PoolShape ps;
    ps.n = 64, ps.c = 16, ps.h = ps.w = 32, ps.kh = ps.kw = 2, ps.stride_h = ps.stride_w = 2;
    auto pool = [&] {
      cuda::pool2d_cuda(ps, x, static_cast<float*>(y.get()));
      cuda::pool2d_backward_cuda(ps, x, static_cast<const float*>(y.get()), x, static_cast<float*>(gx.get()));
    };
    pool();
    const double pool_ms = median_ms([&] { return cuda::time_on_device(pool); });
    std::printf("batch norm 64x32x16x16, training forward + backward: %.1f us; max pool 2x2 on 64x16x32x32, forward + backward: %.1f us\n",
                bn_ms * 1e3, pool_ms * 1e3);
  }
  return 0;
}
