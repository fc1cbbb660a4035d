"""What the 16-bit and small integer dtypes cost: each op on float16 / bfloat16 / int8 tensors
runs in float32 / int32 between two casts (kernels/dtype.h, compute dtypes), measured side by
side with the same op on float32, eager and jitted, and PyTorch's CPU kernels for the same dtype
when /usr/bin/python3 has torch (same thread count).

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_dtypes.py --threads 2
"""
import argparse
import json
import os
import subprocess
import sys
import time

import pijit as pj
from pijit import ops

CASES = {
    "add 4M": (lambda a, b: a + b, [(1 << 22,), (1 << 22,)]),
    "gelu 4M": (lambda a, b: ops.gelu(a), [(1 << 22,), (1,)]),
    "matmul 1024": (lambda a, b: ops.matmul(a, b), [(1024, 1024), (1024, 1024)]),
    "softmax 512x1024": (lambda a, b: ops.softmax(a, -1), [(512, 1024), (1,)]),
}


def best(fn, *args, reps=5):
    fn(*args)
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(*args)
        t.append(time.perf_counter() - t0)
    return min(t) * 1e3


TORCH = r"""
import json, sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
shapes = json.loads(sys.argv[2])
F = {"add 4M": lambda a, b: a + b, "gelu 4M": lambda a, b: torch.nn.functional.gelu(a),
     "matmul 1024": lambda a, b: a @ b, "softmax 512x1024": lambda a, b: torch.softmax(a, -1)}
out = {}
for name, (sa, sb) in shapes.items():
    for dt in ("float32", "float16", "bfloat16"):
        a, b = torch.randn(*sa).to(getattr(torch, dt)), torch.randn(*sb).to(getattr(torch, dt))
        try:
            F[name](a, b)
        except RuntimeError:
            out[name + " " + dt] = None
            continue
        ts = []
        for _ in range(5):
            t0 = time.perf_counter(); F[name](a, b); ts.append(time.perf_counter() - t0)
        out[name + " " + dt] = min(ts) * 1e3
print(json.dumps(out))
"""


def torch_times(threads):
    if not os.path.exists("/usr/bin/python3"):
        return {}
    shapes = {k: v[1] for k, v in CASES.items()}
    p = subprocess.run(["/usr/bin/python3", "-c", TORCH, str(threads), json.dumps(shapes)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return json.loads(p.stdout) if p.returncode == 0 else {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    pj.set_num_threads(args.threads) if hasattr(pj, "set_num_threads") else None
    tt = torch_times(args.threads)
    print("%d threads; ms per call (best of 5); ratio = dtype / float32 eager" % args.threads)
    print("%-18s %-9s %9s %9s %7s %11s" % ("case", "dtype", "eager", "jitted", "ratio", "torch"))
    for name, (fn, shapes) in CASES.items():
        base = None
        for dt in (pj.float32, pj.float16, pj.bfloat16):
            a, b = ops.randn(*shapes[0]).astype(dt), ops.randn(*shapes[1]).astype(dt)
            e = best(fn, a, b)
            jf = pj.jit(fn)
            j = best(jf, a, b)
            base = base or e
            t = tt.get("%s %s" % (name, dt.name))
            print("%-18s %-9s %9.3f %9.3f %7.2f %11s" % (name, dt.name, e, j, e / base,
                                                      "%.3f" % t if t else "-"))
    for dt in (pj.int8, pj.uint8, pj.int32):
        a = ops.randint(0, 100, (1 << 22,)).astype(dt)
        print("%-18s %-9s %9.3f" % ("add 4M", dt.name, best(lambda x: x + x, a)))


if __name__ == "__main__":
    sys.exit(main())
