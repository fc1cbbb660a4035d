"""Memory over many distinct shapes: a matmul + softmax called with N shapes it has never seen
(shuffled, sizes bounded so only the caches can grow), eager and jitted, side by side. Prints RSS
at marks and the growth over the second half, with the bounded caches' counters
(kernels/bounded_cache.h). Bounded caches: the second half grows by a few MiB at most.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_shape_churn.py --shapes 10000
"""
import argparse
import random

import pijit as pj
from pijit import ops


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2.0 ** 20


def churn(fn, shapes):
    order = list(range(shapes))
    random.Random(0).shuffle(order)
    marks = {}
    for n, i in enumerate(order, 1):
        r, c = 1 + i % 100, 16 + i // 100
        fn(ops.ones((r, c), pj.float32), ops.ones((c, 8), pj.float32))
        if n % (shapes // 4) == 0:
            marks[n] = rss_mib()
    return marks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", type=int, default=10000)
    args = ap.parse_args()

    def f(x, w):
        return ops.softmax(x @ w, -1) * 2 + 1

    for name, fn in (("eager", f), ("jitted", pj.jit(f))):
        marks = churn(fn, args.shapes)
        half = sorted(marks)
        print("%-6s RSS MiB at %s: %s; second half +%.1f MiB (%.2f KiB per new shape)"
              % (name, "/".join(map(str, half)), " ".join("%.1f" % marks[k] for k in half),
                 marks[half[-1]] - marks[half[1]], (marks[half[-1]] - marks[half[1]]) * 1024 / (args.shapes / 2)))
    for cname, c in sorted(pj.kernel_cache_stats().items()):
        print("cache of %s: %d of %d (%s), %d hits, %d misses, %d evicted"
              % (cname, c["size"], c["capacity"], c["env"], c["hits"], c["misses"], c["evictions"]))


if __name__ == "__main__":
    main()
