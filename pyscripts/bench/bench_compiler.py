"""The graph compiler's workloads (issue 12), side by side in one run, 1 thread by default:

  small     10 elementwise ops on 3x3: jitted (one fused kernel) vs pijit eager vs PyTorch eager
  chain     8 elementwise ops on 4096x4096 float32, and the same with tanh: jitted with the fused
            machine code, jitted with the fused interpreter, eager; against the memory floor (x read
            and y written once at the measured copy bandwidth), with page faults per call; the tanh
            chain also against the same loop fused by hand in C++ with glibc's libmvec tanhf
            (build/bench_chain_libmvec, -O3 -ffast-math -march=native; 1 thread), as the compiler
            vectorises it and with streaming stores
  mlp       MLP batch 32, 784-256-256-10 (Dense + ReLU): jitted and eager vs oneDNN called directly
            from C++ (build/bench_mlp_onednn: weights pre-reordered, bias and ReLU as post-ops)
  cnn       a small CNN in inference, batch 8, 3x32x32 (3 x [conv3x3 + BatchNorm + ReLU], 2 max pools,
            global average pool, Dense): jitted and eager vs PyTorch's optimize_for_inference
            (TorchScript, batch norm folded, mkldnn layouts) on /usr/bin/python3
  compile   capture + compile time of a 20-layer MLP and of a 200-op function (first call minus a
            cached call)

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_compiler.py [--threads N]

PyTorch's column runs on /usr/bin/python3 (Debian's python3-torch) with the same thread count when
it is installed.
"""
import argparse
import inspect
import json
import os
import resource
import subprocess
import sys
import time
import timeit

import pijit as pj
from pijit import nn, ops


def small(x, y):
    a = x * y + 1.0
    b = ops.relu(a) - y
    c = b * b + x
    d = c / 2.0 - a
    return ops.maximum(d, y) * 3.0


def chain(x):
    y = x * 1.5 + 0.5
    y = y - x
    y = y * 0.25 + x
    y = y * 2.0 - 1.0
    return y * y


def chain_tanh(x):
    y = x * 1.5 + 0.5
    y = ops.tanh(y) - x
    y = y * 0.25 + x
    y = y * 2.0 - 1.0
    return y * y


# The same `small`, its ops spelled for torch (one source for both sides).
TORCH_SMALL = """
import sys, timeit, torch
torch.set_num_threads(int(sys.argv[1]))
x = torch.ones(3, 3); y = torch.ones(3, 3)
%s
n = 20000
print(min(timeit.repeat(lambda: small(x, y), number=n, repeat=5)) / n * 1e6)
""" % inspect.getsource(small).replace("ops.", "torch.")


def us_per_call(fn, *a, n=20000):
    fn(*a)
    return min(timeit.repeat(lambda: fn(*a), number=n, repeat=5)) / n * 1e6


def per_call(fn, *x, calls=5):
    fn(*x)
    fn(*x)
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    best = float("inf")
    for _ in range(calls):
        t0 = time.perf_counter()
        fn(*x)
        best = min(best, time.perf_counter() - t0)
    return best, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / calls


def torch_us(threads):
    if not os.path.exists("/usr/bin/python3"):
        return None
    try:
        out = subprocess.run(["/usr/bin/python3", "-c", TORCH_SMALL, str(threads)], capture_output=True, text=True,
                             timeout=120)
        return float(out.stdout.strip()) if out.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def bench_small(threads):
    x = pj.ones((3, 3))
    y = pj.Tensor([[1.0, -2.0, 3.0], [0.5, 5.0, -6.0], [7.0, 0.25, 9.0]])
    js = pj.jit(small)
    js(x, y)
    graph = pj.jit_stats(js)["entries"][0]["compiled"]
    eager, jitted = us_per_call(small, x, y), us_per_call(js, x, y)
    print("small: 10 elementwise ops on 3x3 (%d fused kernel(s) in the compiled graph)" % graph.count("fused_elementwise"))
    print("  jitted %.2f us, pijit eager %.2f us (%.1fx faster)" % (jitted, eager, eager / jitted))
    t = torch_us(threads)
    print("  PyTorch eager %s" % ("%.2f us (%.1fx pijit jitted)" % (t, t / jitted) if t else "not installed"))


def libmvec_chain_ms():
    """(loop, stream) ms of the tanh chain fused by hand with libmvec's tanhf (build/bench_chain_libmvec)."""
    exe = os.path.join(ROOT, "build", "bench_chain_libmvec")
    if not os.path.exists(exe):
        return None
    out = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        return None
    r = json.loads(out.stdout)
    return r["loop_ms"], r["stream_ms"]


def bench_chain(threads):
    x = pj.ones((4096, 4096))
    nbytes = 4096 * 4096 * 4
    floor = 2 * nbytes / (pj._C.probe_machine(threads)["copy_gbs"] * 1e9)
    print("chain: 8 elementwise ops on 4096x4096 float32 (fused floor: x read + y written at the measured copy "
          "bandwidth = %.1f ms)" % (floor * 1e3))
    for name, fn in (("chain", chain), ("with tanh", chain_tanh)):
        jf = pj.jit(fn)
        rows = []
        for label, f, jit_on in (("jitted, machine code", jf, True), ("jitted, interpreter", jf, False),
                                 ("eager", fn, True)):
            old = pj._C.set_fused_jit(jit_on)
            t, faults = per_call(f, x)
            pj._C.set_fused_jit(old)
            rows.append((label, t, faults))
        for label, t, faults in rows:
            print("  %-10s %-21s %7.1f ms (%5.2fx the floor), %6.0f page faults per call"
                  % (name, label, t * 1e3, t / floor, faults))
        if fn is chain_tanh:
            # (one thread: the hand-fused loop is single-threaded)
            ref = libmvec_chain_ms() if threads == 1 else None
            if ref:
                print("  %-10s hand-fused C + libmvec tanhf: %.1f ms (jitted is %.2fx), with streaming stores %.1f ms "
                      "(jitted is %.2fx)" % (name, ref[0], rows[0][1] * 1e3 / ref[0], ref[1], rows[0][1] * 1e3 / ref[1]))
            else:
                print("  %-10s hand-fused C + libmvec: %s" % (name, "1 thread only" if threads != 1 else
                                                             "not built (build/bench_chain_libmvec)"))
    print("  peak RSS %d MB (x is 64 MB)" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024))


def mse(p, y):
    d = p - y
    return (d * d).mean()


def bench_reduce(threads):
    p, y = pj.randn(4096, 4096), pj.randn(4096, 4096)
    nbytes = 4096 * 4096 * 4
    floor = 2 * nbytes / (pj._C.probe_machine(threads)["copy_gbs"] * 1e9)
    jf = pj.jit(mse)
    jf(p, y)
    fused = pj.jit_stats(jf)["entries"][0]["compiled"].count("fused_reduce")
    print("reduce: mean((p - y)^2) over 4096x4096 float32 (%d fused_reduce; floor: p and y read once at the "
          "measured copy bandwidth = %.1f ms)" % (fused, floor * 1e3))
    for label, f in (("jitted", jf), ("eager", mse)):
        t, faults = per_call(f, p, y)
        print("  %-7s %7.1f ms (%5.2fx the floor), %6.0f page faults per call" % (label, t * 1e3, t / floor, faults))


MLP_DIMS = (784, 256, 256, 10)
MLP_BATCH = 32
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def onednn_mlp_us(threads):
    exe = os.path.join(ROOT, "build", "bench_mlp_onednn")
    if not os.path.exists(exe):
        return None
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([exe, str(MLP_BATCH)] + [str(d) for d in MLP_DIMS], capture_output=True, text=True,
                         env=env, timeout=120)
    return float(out.stdout.split('"us":')[1].split(",")[0]) if out.returncode == 0 else None


def bench_mlp(threads):
    pj.set_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(MLP_DIMS[:-1], MLP_DIMS[1:])):
        layers += [nn.Dense(a, b)] + ([nn.ReLU()] if i + 2 < len(MLP_DIMS) else [])
    net = nn.SequentialCell(layers)
    x = pj.randn(MLP_BATCH, MLP_DIMS[0])
    jnet = pj.jit(net)
    # Rounds alternate the reference (its own process) and pijit, each keeping its best: on a
    # shared machine one-shot timings of either side swing by 10%.
    eager = jitted = ref = float("inf")
    for _ in range(5):
        r = onednn_mlp_us(threads)
        ref = min(ref, r) if r else ref
        jitted = min(jitted, us_per_call(jnet, x, n=500))
        eager = min(eager, us_per_call(net, x, n=200))
    ref = None if ref == float("inf") else ref
    print("mlp: batch %d, %s, Dense + ReLU (best of 5 alternating rounds)" % (MLP_BATCH, "-".join(map(str, MLP_DIMS))))
    print("  jitted %.1f us, pijit eager %.1f us" % (jitted, eager))
    print("  oneDNN called directly (C++) %s" % ("%.1f us: jitted is %.2fx" % (ref, jitted / ref) if ref
                                                 else "not built (build/bench_mlp_onednn)"))


CNN_BATCH = 8

TORCH_CNN = """
import sys, time, torch, torch.nn as tn
torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)
def block(a, b): return [tn.Conv2d(a, b, 3, padding=1), tn.BatchNorm2d(b), tn.ReLU()]
net = tn.Sequential(*(block(3, 16) + [tn.MaxPool2d(2, 2)] + block(16, 32) + [tn.MaxPool2d(2, 2)] + block(32, 64)
                      + [tn.AdaptiveAvgPool2d(1), tn.Flatten(), tn.Linear(64, 10)])).eval()
x = torch.randn(%d, 3, 32, 32)
with torch.no_grad():
    opt = torch.jit.optimize_for_inference(torch.jit.script(net))
    for _ in range(30): opt(x)
    best = 1e9
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(200): opt(x)
        best = min(best, (time.perf_counter() - t) / 200)
print(best * 1e6)
""" % CNN_BATCH


def blas_name():
    try:
        return os.path.basename(os.path.dirname(os.path.realpath("/etc/alternatives/libblas.so.3-x86_64-linux-gnu")))
    except OSError:
        return "unknown"


def bench_cnn(threads):
    pj.set_seed(0)

    def block(a, b):
        return [nn.Conv2d(a, b, 3, pad_mode="pad", padding=1, has_bias=True), nn.BatchNorm2d(b), nn.ReLU()]
    net = nn.SequentialCell(block(3, 16) + [nn.MaxPool2d(2, 2)] + block(16, 32) + [nn.MaxPool2d(2, 2)]
                            + block(32, 64) + [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(64, 10)])
    net.set_train(False)
    x = pj.randn(CNN_BATCH, 3, 32, 32)
    jnet = pj.jit(net)
    eager, jitted = us_per_call(net, x, n=200), us_per_call(jnet, x, n=200)
    faults = per_call(net, x)[1]
    e = pj.jit_stats(jnet)["entries"][0]
    print("cnn: batch %d, 3x32x32, 3 x (conv3x3 + BatchNorm + ReLU), 2 max pools, avg pool, Dense (inference)"
          % CNN_BATCH)
    print("  jitted %.0f us (%d conv2d_block nodes), pijit eager %.0f us (%.0f page faults per call)"
          % (jitted, e["compiled"].count("conv2d_block("), eager, faults))
    t = None
    if os.path.exists("/usr/bin/python3"):
        out = subprocess.run(["/usr/bin/python3", "-c", TORCH_CNN, str(threads)], capture_output=True, text=True,
                             timeout=300)
        t = float(out.stdout.strip()) if out.returncode == 0 else None
    print("  PyTorch optimize_for_inference %s" % ("%.0f us: jitted is %.2fx (BLAS: %s)" % (t, jitted / t, blas_name())
                                                   if t else "not installed (apt install python3-torch)"))


def long_function(x):
    for _ in range(50):
        x = x * 1.001 + 0.001
        x = ops.relu(x) - 0.0001
    return x


def bench_compile():
    layers = []
    for _ in range(20):
        layers += [nn.Dense(64, 64), nn.ReLU()]
    mlp = nn.SequentialCell(*layers)
    z = pj.ones((8, 64))
    x = pj.ones((16, 16))
    print("compile: capture + passes + plan on the first call (first call minus a cached call)")
    for name, fn, arg in (("20-layer MLP (40 ops)", pj.jit(mlp), z), ("200-op function", pj.jit(long_function), x)):
        t0 = time.perf_counter()
        fn(arg)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        fn(arg)
        cached = time.perf_counter() - t0
        e = pj.jit_stats(fn)["entries"][0]
        print("  %-22s %6.1f ms  (graph: %d ops captured, %d nodes compiled; %s)"
              % (name, (first - cached) * 1e3, e["ops"], e["compiled"].count(" = ") - e["compiled"].count("= constant"),
                 e["plan"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("only", nargs="*", help="sections to run: small chain reduce mlp cnn compile (default: all)")
    args = ap.parse_args()
    pj.set_num_threads(args.threads)
    print("pijit graph compiler, Python %s, %d thread(s), fused kernels: %s (PIJIT_FUSED_ISA=avx2 for AVX2 code)"
          % (sys.version.split()[0], args.threads, pj._C.fused_backend()))
    sections = {"small": lambda: bench_small(args.threads), "chain": lambda: bench_chain(args.threads),
                "reduce": lambda: bench_reduce(args.threads), "mlp": lambda: bench_mlp(args.threads),
                "cnn": lambda: bench_cnn(args.threads), "compile": bench_compile}
    for name in args.only or list(sections):
        if name not in sections:
            ap.error("unknown section %r (choose from %s)" % (name, ", ".join(sections)))
        sections[name]()


if __name__ == "__main__":
    main()
