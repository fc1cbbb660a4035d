"""Eager execution: per-op overhead on tiny tensors and throughput on large ones, side by side
with PyTorch on the system Python (when installed) and against the machine's limits.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_eager.py [--threads N]

The PyTorch column runs in a /usr/bin/python3 subprocess with the same thread count (Debian's
torch; install libopenblas0 or its matmuls use the reference BLAS). Machine limits: the float32
FMA peak and the copy bandwidth, both measured here by pijit._C.probe_machine (independent FMA
chains; a parallel 64 MiB memcpy). Numbers are printed, never asserted.
"""
import argparse
import json
import os
import subprocess
import sys
import time

TINY = [  # (name, shape) tiny-tensor cases: time per call in microseconds
    ("add", (4, 4)), ("mul_scalar", (4, 4)), ("exp", (4, 4)), ("relu", (4, 4)),
    ("sum", (4, 4)), ("matmul", (4, 4)),
]
LARGE = [  # (name, shape, what): throughput cases
    ("add", (4096, 1024), "GB/s"), ("exp", (4096, 1024), "GB/s"), ("sum", (4096, 1024), "GB/s"),
    ("matmul", (1024, 1024), "GFLOP/s"),
]


def best_time(fn, min_time=0.2, repeat=5):
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time / repeat:
            break
        n *= 4
    best = dt / n
    for _ in range(repeat - 1):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def cases(lib):
    """Builds closures for one library; `lib` has randn, add, mul, exp, relu, sum, matmul."""
    out = {}
    for name, shape in TINY:
        a, b = lib.randn(*shape), lib.randn(*shape)
        out["tiny/" + name] = _closure(lib, name, a, b)
    for name, shape, _ in LARGE:
        a, b = lib.randn(*shape), lib.randn(*shape)
        out["large/" + name] = _closure(lib, name, a, b)
    return out


def _closure(lib, name, a, b):
    if name == "add":
        return lambda: a + b
    if name == "mul_scalar":
        return lambda: a * 2.0
    if name == "exp":
        return lambda: lib.exp(a)
    if name == "relu":
        return lambda: lib.relu(a)
    if name == "sum":
        return lambda: a.sum()
    if name == "matmul":
        return lambda: a @ b
    raise KeyError(name)


def large_metric(name, shape, seconds):
    n = 1
    for d in shape:
        n *= d
    if name == "matmul":
        return 2.0 * shape[0] * shape[1] * shape[1] / seconds / 1e9
    bytes_moved = {"add": 12, "exp": 8, "sum": 4}[name] * n
    return bytes_moved / seconds / 1e9


def run_pijit(threads):
    import pijit as pj
    from pijit import ops
    pj.set_num_threads(threads)
    pj.set_seed(0)

    class Lib:
        randn = staticmethod(pj.randn)
        exp = staticmethod(ops.exp)
        relu = staticmethod(ops.relu)
    return {k: best_time(f) for k, f in cases(Lib).items()}


def run_torch(threads):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)

    class Lib:
        randn = staticmethod(torch.randn)
        exp = staticmethod(torch.exp)
        relu = staticmethod(torch.relu)
    res = {k: best_time(f) for k, f in cases(Lib).items()}
    return res


def torch_child(script, threads):
    """Runs `script --torch-child` on the system python3 (where Debian's torch lives) and returns
    (its JSON result or None, a note naming torch's BLAS and thread count, or why it is absent)."""
    if not os.path.exists("/usr/bin/python3"):
        return None, "PyTorch: no /usr/bin/python3"
    p = subprocess.run(["/usr/bin/python3", os.path.abspath(script), "--torch-child",
                        "--threads", str(threads)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        return None, "PyTorch: not installed for /usr/bin/python3 (apt install python3-torch)"
    res = json.loads(p.stdout.strip().splitlines()[-1])
    # Debian's torch calls whatever libblas.so.3 the alternatives system points at.
    blas = "OpenBLAS" if "openblas" in os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3") \
        else "reference BLAS"
    return res, "PyTorch (system python3, %d threads, %s)" % (threads, blas)


def machine_limits(threads):
    """Measured, not nominal: VMs report a base clock that turbo exceeds."""
    from pijit import _C
    m = _C.probe_machine(threads)
    return m["peak_gflops"], m["copy_gbs"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--torch-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_child:
        print(json.dumps(run_torch(args.threads)))
        return 0
    pj_res = run_pijit(args.threads)
    torch_res, torch_note = torch_child(__file__, args.threads)
    peak, bw = machine_limits(args.threads)
    print("pijit eager vs %s" % torch_note)
    print("machine (measured): %d threads, float32 FMA peak %.1f GFLOP/s, copy %.1f GB/s"
          % (args.threads, peak, bw))
    print()
    print("%-14s %14s %14s %10s" % ("tiny op", "pijit us/call", "torch us/call", "torch/pijit"))
    for name, _ in TINY:
        k = "tiny/" + name
        p = pj_res[k] * 1e6
        t = torch_res[k] * 1e6 if torch_res else float("nan")
        print("%-14s %14.2f %14.2f %10.2f" % (name, p, t, t / p))
    print()
    print("%-22s %12s %12s %10s %12s" % ("large op", "pijit", "torch", "pijit/torch", "pijit/limit"))
    for name, shape, unit in LARGE:
        k = "large/" + name
        p = large_metric(name, shape, pj_res[k])
        t = large_metric(name, shape, torch_res[k]) if torch_res else float("nan")
        limit = peak if unit == "GFLOP/s" else bw
        print("%-22s %8.1f %s %8.1f %s %10.2f %12.2f" % (
            "%s %s" % (name, "x".join(map(str, shape))), p, unit[:4], t, unit[:4], p / t,
            p / limit if limit else float("nan")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
