"""The cache-hit path (issue 46): what a jitted call costs beyond the work it does, side by side in
one run, 1 thread, on tiny inputs where that cost is all there is.

  ident        f(x, y) returning its arguments: jitted (a direct call, no graph) over the plain call
  1 op, 10 ops x + y, and a chain of 10 elementwise ops, on 3x3: jitted vs pijit eager
  MLP          a 20-layer MLP Cell (Dense 16-16 + ReLU), batch 2: jitted vs eager, with its guards

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_hit_path.py
"""
import sys
import timeit

import pijit as pj
from pijit import nn, ops

NUMBER, REPEAT = 20000, 7


def ns(fn, *args, number=NUMBER):
    return min(timeit.repeat(lambda: fn(*args), number=number, repeat=REPEAT)) / number * 1e9


def ident(x, y):
    return x, y


def one_op(x, y):
    return x + y


def ten_ops(x, y):
    z = x * y + 1.0
    z = ops.relu(z - y) * 0.5
    z = z / (y + 2.0)
    return ops.exp(z - x) * y


class MLP(nn.Cell):
    def __init__(self, layers=20, width=16):
        super().__init__()
        self.body = nn.SequentialCell(*[c for _ in range(layers) for c in (nn.Dense(width, width), nn.ReLU())])

    def construct(self, x):
        return self.body(x)


def main():
    x, y = pj.ones((3, 3)), pj.ones((3, 3)) * 2.0
    print("pijit cache-hit path, Python %s, 1 thread (ns per call, best of %d x %d)"
          % (sys.version.split()[0], REPEAT, NUMBER))
    rows = []
    for name, fn in (("ident(x, y)", ident), ("1 op on 3x3", one_op), ("10 ops on 3x3", ten_ops)):
        jf = pj.jit(fn)
        for _ in range(3):
            jf(x, y)
        st = pj.jit_stats(jf)
        plain, jitted = ns(fn, x, y), ns(jf, x, y)
        rows.append((name, plain, jitted, st["entries"][0]["num_guards"], st["entries"][0]["direct"], st["entries"][0]["ops"]))
    net = MLP()
    z = pj.ones((2, 16))
    jn = pj.jit(net)
    for _ in range(3):
        jn(z)
    st = pj.jit_stats(jn)
    rows.append(("20-layer MLP, batch 2", ns(net, z, number=2000), ns(jn, z, number=2000),
                 st["entries"][0]["num_guards"], st["entries"][0]["direct"], st["entries"][0]["ops"]))
    print("  %-24s %10s %10s %10s %7s %7s %5s" % ("call", "plain/eager", "jitted", "jit - plain", "guards", "direct", "ops"))
    for name, plain, jitted, guards, direct, nops in rows:
        print("  %-24s %8.0f ns %8.0f ns %8.0f ns %7d %7s %5d" % (name, plain, jitted, jitted - plain, guards, direct, nops))


if __name__ == "__main__":
    main()
