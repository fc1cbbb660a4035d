"""What the debugging tools (issue 15) cost on a jitted call's cache-hit path: with every tool off,
and with each one on, side by side in one run (each setting in a fresh subprocess, since the
switches are environment variables read at start-up).

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_debug_tools.py [--base DIR]

The workload: a jitted 10-op elementwise function on 3x3 tensors (one fused kernel: the call is
nearly all overhead, so a tool's per-call cost shows at its largest) and an MLP 784-256-256-10
on batch 32 (a typical small model). --base DIR runs the "off" setting on another pijit checkout's
pyscripts too (for example the commit before the tools, built in DIR), to show that the tools cost
nothing when off.
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CHILD = r'''
import sys, timeit
sys.path.insert(0, BENCH_DIR)
import pijit as pj
from pijit import nn, ops
from bench_compiler import small  # the 10-op function of bench_compiler's `small` section
pj.set_num_threads(1)

pj.set_seed(0)
net = nn.SequentialCell([nn.Dense(784, 256), nn.ReLU(), nn.Dense(256, 256), nn.ReLU(), nn.Dense(256, 10)])
f, jnet = pj.jit(small), pj.jit(net)
x, y, z = pj.ones((3, 3)), pj.ones((3, 3)) * 2, pj.randn(32, 784)

def best(fn, *a, number):
    fn(*a)
    return min(timeit.repeat(lambda: fn(*a), number=number, repeat=7)) / number * 1e6

print("%.3f %.3f" % (best(f, x, y, number=20000), best(jnet, z, number=1000)))
'''

SETTINGS = [
    ("all tools off", {}),
    ("PIJIT_LOGS=breaks,recompiles (nothing to print on a hit)", {"PIJIT_LOGS": "breaks,recompiles"}),
    ("PIJIT_LOGS=perf (every launch timed)", {"PIJIT_LOGS": "perf"}),
    ("PIJIT_LOGS=guard_perf (every guard timed)", {"PIJIT_LOGS": "guard_perf"}),
    ("PIJIT_TRACE (every guard lookup, launch and kernel recorded)", {"PIJIT_TRACE": "{tmp}/trace.json"}),
    ("PIJIT_DUMP_DIR (dumps at capture; trace + timing on)", {"PIJIT_DUMP_DIR": "{tmp}/dump"}),
]


def measure(pyscripts, env_extra, tmp):
    env = dict(os.environ, PYTHONPATH=pyscripts, OMP_NUM_THREADS="1")
    for k in ("PIJIT_LOGS", "PIJIT_TRACE", "PIJIT_DUMP_DIR", "PIJIT_STRESS"):
        env.pop(k, None)
    env.update({k: v.format(tmp=tmp) for k, v in env_extra.items()})
    out = subprocess.run([sys.executable, "-c", CHILD.replace("BENCH_DIR", repr(HERE))], capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise SystemExit("child failed:\n" + out.stderr)
    small, mlp = map(float, out.stdout.split())
    return small, mlp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", help="another checkout (built) whose 'all tools off' to show beside")
    args = ap.parse_args()
    print("pijit debugging tools: cache-hit cost, Python %s, 1 thread (best of 7)" % sys.version.split()[0])
    print("%-62s %14s %14s" % ("setting", "10 ops on 3x3", "MLP batch 32"))
    with tempfile.TemporaryDirectory() as tmp:
        off = measure(os.path.join(ROOT, "pyscripts"), {}, tmp)
        if args.base:
            base = measure(os.path.join(os.path.abspath(args.base), "pyscripts"), {}, tmp)
            print("%-62s %11.2f us %11.1f us" % ("base checkout, no tools (%s)" % args.base, base[0], base[1]))
            print("%-62s %13.3fx %13.3fx" % ("  this checkout, all tools off / base", off[0] / base[0], off[1] / base[1]))
        for name, extra in SETTINGS:
            small, mlp = off if not extra else measure(os.path.join(ROOT, "pyscripts"), extra, tmp)
            print("%-62s %8.2f us %4.2fx %7.1f us %4.2fx" % (name, small, small / off[0], mlp, mlp / off[1]))


if __name__ == "__main__":
    main()
