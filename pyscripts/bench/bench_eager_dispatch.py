"""Eager dispatch (issue 46): what one eager op costs from Python on a tiny tensor, where dispatch is
all there is, against oneDNN's execute alone for the same op (build/bench_eltwise_onednn: the
primitive made once, execute + wait timed) and PyTorch's eager call on /usr/bin/python3 (same
thread count), side by side in one run, 1 thread. Goal: every pijit entry <= 1.2x oneDNN's execute.

  ops.add(a, b)   pijit.ops's function
  a + b           the Tensor operator
  ops.relu(a)     a unary op

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_eager_dispatch.py [--shape 3 3]
"""
import argparse
import json
import os
import subprocess
import sys
import timeit

import pijit as pj
from pijit import ops

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NUMBER, REPEAT = 100000, 7

TORCH = r"""
import json, sys, timeit, torch
torch.set_num_threads(1)
shape = tuple(int(d) for d in sys.argv[1:])
a = torch.ones(shape); b = torch.ones(shape)
def ns(f):
    return min(timeit.repeat(f, number=%d, repeat=%d)) / %d * 1e9
print(json.dumps({"ops.add": ns(lambda: torch.add(a, b)), "a + b": ns(lambda: a + b),
                  "ops.relu": ns(lambda: torch.relu(a))}))
""" % (NUMBER, REPEAT, NUMBER)


def ns(fn):
    return min(timeit.repeat(fn, number=NUMBER, repeat=REPEAT)) / NUMBER * 1e9


def onednn(shape):
    exe = os.path.join(ROOT, "build", "bench_eltwise_onednn")
    if not os.path.exists(exe):
        return None, "not built (build/bench_eltwise_onednn)"
    out = subprocess.run([exe] + [str(d) for d in shape], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, OMP_NUM_THREADS="1"))
    if out.returncode != 0:
        return None, "failed: " + out.stderr.strip()[:200]
    return json.loads(out.stdout), ""


def torch_eager(shape):
    if not os.path.exists("/usr/bin/python3"):
        return None, "no /usr/bin/python3"
    out = subprocess.run(["/usr/bin/python3", "-c", TORCH] + [str(d) for d in shape], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=""))
    if out.returncode != 0:
        return None, "PyTorch not installed for /usr/bin/python3 (python3-torch)"
    return json.loads(out.stdout), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", type=int, nargs="+", default=[3, 3])
    args = ap.parse_args()
    pj.set_num_threads(1)
    shape = tuple(args.shape)
    a, b = pj.ones(shape), pj.ones(shape)
    rows = [("ops.add", "add_ns", lambda: ops.add(a, b)), ("a + b", "add_ns", lambda: a + b),
            ("ops.relu", "relu_ns", lambda: ops.relu(a))]
    mine = {name: ns(fn) for name, _, fn in rows}
    empty = ns(lambda: None)
    dnnl, why_dnnl = onednn(shape)
    torch, why_torch = torch_eager(shape)
    print("eager dispatch, float32 %s, 1 thread, Python %s (a call of an empty lambda: %.0f ns)"
          % ("x".join(map(str, shape)), sys.version.split()[0], empty))
    print("  %-10s %10s %14s %10s %14s" % ("call", "pijit ns", "oneDNN exec ns", "ratio", "PyTorch ns"))
    for name, key, _ in rows:
        d = dnnl[key] if dnnl else None
        t = torch[name] if torch else None
        print("  %-10s %10.0f %14s %10s %14s" % (name, mine[name], "%.0f" % d if d else "-",
                                                 "%.2fx" % (mine[name] / d) if d else "-", "%.0f" % t if t else "-"))
    for why in (why_dnnl, why_torch):
        if why:
            print("  (" + why + ")")


if __name__ == "__main__":
    main()
