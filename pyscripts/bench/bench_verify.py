"""What verify mode (pj.jit(fn, verify=N), issue 45) costs: off (the default, verify=0) against a
jit made before verify existed would be the same C call but for one integer test; this measures
it side by side in one process, interleaved, on the hit path where a call is nearly all overhead,
and what verifying every call and every 100th call adds.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_verify.py

The workload: the 10-op elementwise function of bench_compiler's `small` section on 3x3 tensors,
and an MLP 784-256-256-10 Cell on batch 32, one thread. Each setting is a separate jit object of
the same function (they share its cache entry, so every timed call is a cache hit).
"""
import os
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pijit as pj  # noqa: E402
from pijit import nn  # noqa: E402
from bench_compiler import small  # noqa: E402


def best(fn, args, number, repeat=7):
    fn(*args)
    return min(timeit.repeat(lambda: fn(*args), number=number, repeat=repeat)) / number * 1e6


def main():
    pj.set_num_threads(1)
    pj.set_seed(0)
    net = nn.SequentialCell([nn.Dense(784, 256), nn.ReLU(), nn.Dense(256, 256), nn.ReLU(), nn.Dense(256, 10)])
    x, y, z = pj.ones((3, 3)), pj.ones((3, 3)) * 2, pj.randn(32, 784)
    rows = []
    for name, fn, args, number in (("10-op on 3x3", small, (x, y), 20000), ("MLP b32", net, (z,), 1000)):
        plain = pj.jit(fn)
        off = pj.jit(fn, verify=0)
        every100 = pj.jit(fn, verify=100)
        every1 = pj.jit(fn, verify=1)
        t_plain, t_off = [], []
        for _ in range(3):  # interleaved: drift hits both alike
            t_plain.append(best(plain, args, number))
            t_off.append(best(off, args, number))
        a, b = min(t_plain), min(t_off)
        c = best(every100, args, number)
        d = best(every1, args, max(number // 100, 20), repeat=3)
        eager = best(fn, args, max(number // 10, 100))
        rows.append((name, a, b, c, d, eager))
    print("verify mode's cost per call (us), 1 thread, Python %s" % sys.version.split()[0])
    print("%-14s %10s %10s %8s %12s %12s %10s" % ("workload", "jit", "verify=0", "ratio", "verify=100",
                                                  "verify=1", "eager"))
    for name, a, b, c, d, eager in rows:
        print("%-14s %10.3f %10.3f %7.3fx %12.3f %12.1f %10.3f" % (name, a, b, b / a, c, d, eager))
    print("verify=0 is the default: the ratio column is its cost (1.00x: nothing); verify=1 runs every "
          "call twice from copied state and compares.")


if __name__ == "__main__":
    main()
