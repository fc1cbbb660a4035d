"""The cache-hit path (issue 46): what a jitted call costs beyond the work it does, side by side in
one run, 1 thread, on tiny inputs where that cost is all there is.

  ident        f(x, y) returning its arguments: jitted (a direct call, no graph) over the plain call
  1 op, 10 ops x + y, and a chain of 10 elementwise ops, on 3x3: jitted vs pijit eager
  MLP          a 20-layer MLP Cell (Dense 16-16 + ReLU), batch 2: jitted vs eager, with its guards

Then the guard check alone, timed where the hit path runs it (pijit._C.set_guard_timing): ns per
call and per guard for ident, the MLP and the small CNN (3 x conv + BatchNorm + ReLU). The clock
reads around each check (two of them) are inside these figures: ident's 4 guards show that floor.

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


class CNN(nn.Cell):
    def __init__(self):
        super().__init__()

        def block(a, b):
            return [nn.Conv2d(a, b, 3, pad_mode="pad", padding=1, has_bias=True), nn.BatchNorm2d(b), nn.ReLU()]
        self.body = nn.SequentialCell(block(3, 16) + [nn.MaxPool2d(2, 2)] + block(16, 32) + [nn.MaxPool2d(2, 2)]
                                      + block(32, 64) + [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(64, 10)])
        self.body.set_train(False)

    def construct(self, x):
        return self.body(x)


def guard_cost(jf, args, number):
    """(guards, ns per call, ns per guard) of jf's guard checks on its hits."""
    for _ in range(3):
        jf(*args)
    from pijit import _C
    was = _C.set_guard_timing(True)
    try:
        before = pj.jit_stats(jf)["entries"][0]
        for _ in range(number):
            jf(*args)
        after = pj.jit_stats(jf)["entries"][0]
    finally:
        _C.set_guard_timing(was)
    runs = after["guard_runs"] - before["guard_runs"]
    per_call = (after["guard_ns"] - before["guard_ns"]) / max(runs, 1)
    return after["num_guards"], per_call, per_call / max(after["num_guards"], 1)


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
    print("guard checks on the hit path (nothing changed between calls)")
    print("  %-24s %7s %12s %12s" % ("call", "guards", "ns per call", "ns per guard"))
    cnn = CNN()
    for name, jf, args, number in (("ident(x, y)", pj.jit(ident), (x, y), NUMBER),
                                   ("20-layer MLP, batch 2", jn, (z,), 2000),
                                   ("small CNN, 1x3x8x8", pj.jit(cnn), (pj.ones((1, 3, 8, 8)),), 500)):
        guards, per_call, per_guard = guard_cost(jf, args, number)
        print("  %-24s %7d %12.0f %12.2f" % (name, guards, per_call, per_guard))


if __name__ == "__main__":
    main()
