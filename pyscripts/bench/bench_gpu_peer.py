"""PyTorch's figures for what build/bench_gpu_kernels measures of pijit's GPU kernels, on the same
machine in the same run (tools/gpu_check.sh runs both): the 8-op chain over 16M float32 (eager: one
kernel per op; torch.compile: fused by Triton), a 9-element op launched and synchronized, an 8192^3
float32 matmul (TF32 off, as pijit computes float32), the MLP forward (batch 32, 784-256-256-10)
and the CNN's 3x3 convolutions at batch 64, forward and backward.

    python3 pyscripts/bench/bench_gpu_peer.py      # a Python with PyTorch and a GPU
"""
import statistics
import sys
import time


def main():
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed here")
        return 0
    if not torch.cuda.is_available():
        print("PyTorch sees no GPU")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    print("PyTorch %s on %s" % (torch.__version__, torch.cuda.get_device_name(0)))

    def device_ms(fn, runs=20):
        times = []
        for k in range(runs + 3):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            if k >= 3:
                times.append(start.elapsed_time(stop))
        return statistics.median(times)

    n = 16 << 20
    i = torch.arange(n, device=dev, dtype=torch.float32)
    x = 0.001 * (i % 1000) - 0.5
    y = 1.0 + 0.002 * (i % 500)
    out = torch.empty_like(x)
    copy = device_ms(lambda: out.copy_(x))
    print("device copy: %.3f ms, %.0f GB/s (bytes read + written)" % (copy, 8.0 * n / copy / 1e6))

    def chain(x, y):
        r2 = x * y
        r3 = r2 + x
        r4 = r3 - y
        r5 = r4 * r4
        r6 = torch.maximum(r5, x)
        r7 = r6 / y
        return torch.relu(r7 + r2)

    def chain_tanh(x, y):
        r2 = x * y
        r4 = torch.tanh(r2 + x)
        r5 = r4 * r4
        r6 = torch.maximum(r5, x)
        r7 = r6 / y
        return torch.relu(r7 + r2)

    for name, f in (("8 ops", chain), ("8 ops with tanh", chain_tanh)):
        eager = device_ms(lambda: f(x, y))
        try:
            g = torch.compile(f)
            g(x, y)
            compiled = "%.3f ms" % device_ms(lambda: g(x, y))
        except Exception as e:  # no compiler toolchain for Triton here
            compiled = "unavailable (%s)" % type(e).__name__
        print("%-16s eager %.3f ms; torch.compile %s" % (name, eager, compiled))

    a, b = x[:9], y[:9]
    walls = []
    for k in range(203):
        t0 = time.perf_counter()
        torch.add(a * b, a)
        torch.cuda.synchronize()
        if k >= 3:
            walls.append(time.perf_counter() - t0)
    print("9-element op, launch + synchronize: %.1f us" % (statistics.median(walls) * 1e6))

    m = 8192
    A = torch.randn(m, m, device=dev)
    B = torch.randn(m, m, device=dev)
    ms = device_ms(lambda: torch.mm(A, B), 10)
    print("matmul 8192^3 float32: %.3f ms, %.1f TFLOP/s" % (ms, 2.0 * m ** 3 / ms / 1e9))

    dims = (784, 256, 256, 10)
    layers = [torch.nn.Linear(dims[l], dims[l + 1]).to(dev) for l in range(3)]
    inp = torch.randn(32, 784, device=dev)

    def forward():
        with torch.no_grad():
            h = torch.relu(layers[0](inp))
            h = torch.relu(layers[1](h))
            return layers[2](h)

    dev_ms = device_ms(forward, 50)
    walls = []
    for k in range(53):
        t0 = time.perf_counter()
        forward()
        torch.cuda.synchronize()
        if k >= 3:
            walls.append(time.perf_counter() - t0)
    print("MLP forward, batch 32, 784-256-256-10: %.1f us on the device, %.1f us launch to synchronized"
          % (dev_ms * 1e3, statistics.median(walls) * 1e6))

    for n, c, hw, k in ((64, 3, 32, 16), (64, 16, 16, 32)):
        xin = torch.randn(n, c, hw, hw, device=dev)
        conv = torch.nn.Conv2d(c, k, 3, padding=1).to(dev)
        with torch.no_grad():
            ms = device_ms(lambda: conv(xin))
            g = conv(xin)
            bms = device_ms(lambda: torch.ops.aten.convolution_backward(
                g, xin, conv.weight, [k], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True]))
            torch.backends.cudnn.deterministic = True  # pijit's choice: the same bits on every run
            dms = device_ms(lambda: torch.ops.aten.convolution_backward(
                g, xin, conv.weight, [k], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True]))
            torch.backends.cudnn.deterministic = False
        print("conv2d %dx%dx%dx%d -> %d, 3x3: forward %.1f us (%.2f TFLOP/s), backward (data, weights, bias) %.1f us, "
              "%.1f us deterministic" % (n, c, hw, hw, k, ms * 1e3, 2.0 * n * k * hw * hw * c * 9 / ms / 1e9, bms * 1e3,
                                          dms * 1e3))
    with torch.no_grad():
        bnx = torch.randn(64, 32, 16, 16, device=dev)
        gamma, beta = torch.ones(32, device=dev), torch.zeros(32, device=dev)
        rm, rv = torch.zeros(32, device=dev), torch.ones(32, device=dev)

        def bn():
            y, mean, invstd, reserve = torch.ops.aten.cudnn_batch_norm(bnx, gamma, beta, rm, rv, True, 0.1, 1e-5)
            torch.ops.aten.cudnn_batch_norm_backward(bnx, bnx, gamma, rm, rv, mean, invstd, 1e-5, reserve)

        try:
            bn_ms = device_ms(bn)
        except Exception as e:  # (aten's cuDNN batch norm ops changed their signature)
            print("batch norm: aten.cudnn_batch_norm unavailable here (%s)" % type(e).__name__)
            bn_ms = float("nan")
        px = torch.randn(64, 16, 32, 32, device=dev)

        def pool():
            y, idx = torch.ops.aten.max_pool2d_with_indices(px, [2, 2], [2, 2])
            torch.ops.aten.max_pool2d_with_indices_backward(y, px, [2, 2], [2, 2], [0, 0], [1, 1], False, idx)

        pool_ms = device_ms(pool)
    print("batch norm 64x32x16x16, training forward + backward: %.1f us; max pool 2x2 on 64x16x32x32, forward + "
          "backward: %.1f us" % (bn_ms * 1e3, pool_ms * 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
