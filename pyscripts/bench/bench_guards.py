"""What a guard check costs on a cache hit, per check, by kind (the slope of the jitted call's time
against the number of checks, so the fixed cost of the call, hook and shadow frame cancels out).

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_guards.py

Each kind is measured with functions whose only difference is the number of values they read:
  equal      k float arguments folded into the result (one `a_i == c` check each)
  tensor     k tensor arguments returned (type + shape + dtype check each, and one graph input)
  attribute  k float attributes of one object (instance-dict lookup + equality each)
  cell       k sub-cells of a SequentialCell of Identity-like cells (identity, class version,
             attribute-absent checks and dict lookups each)
"""
import sys
import timeit

import pijit as pj
from pijit import nn

REPS, NUMBER = 7, 20000


def best_us(fn, *args):
    return min(timeit.repeat(lambda: fn(*args), number=NUMBER, repeat=REPS)) / NUMBER * 1e6


def make_equal(k):
    names = ["a%d" % i for i in range(k)]
    src = "def f(x, %s):\n    return x, %s\n" % (", ".join(names), " + ".join(names))
    ns = {}
    exec(src, ns)
    return ns["f"], [pj.ones((2,))] + [float(i) for i in range(k)]


def make_tensor(k):
    names = ["t%d" % i for i in range(k)]
    src = "def f(%s):\n    return (%s,)\n" % (", ".join(names), ", ".join(names))
    ns = {}
    exec(src, ns)
    return ns["f"], [pj.ones((2,)) for _ in range(k)]


class Holder(object):
    pass


def make_attribute(k):
    h = Holder()
    for i in range(k):
        setattr(h, "a%d" % i, float(i))
    src = "def f(x, h):\n    return x, %s\n" % " + ".join("h.a%d" % i for i in range(k))
    ns = {}
    exec(src, ns)
    return ns["f"], [pj.ones((2,)), h]


class Scale(nn.Cell):
    def construct(self, x):
        return x


def make_cell(k):
    net = nn.SequentialCell(*[Scale() for _ in range(k)])
    return net, [pj.ones((2,))]


def slope(make, small=1, large=33):
    times, checks = [], []
    for k in (small, large):
        fn, args = make(k)
        jf = pj.jit(fn)
        jf(*args)
        jf(*args)
        t = best_us(jf, *args)
        entry = pj.jit_stats(jf)["entries"][0]  # most recently hit (the k=1 and k=33 cells share code)
        assert entry["reason"] is None and entry["hits"] >= REPS * NUMBER, entry
        checks.append(entry["num_guards"])
        times.append(t)
    per = (times[1] - times[0]) / (checks[1] - checks[0]) * 1e3
    return per, checks, times


def main():
    print("pijit guard cost on a cache hit, Python %s, best of %d x %d calls"
          % (sys.version.split()[0], REPS, NUMBER))
    for name, make in (("equal", make_equal), ("tensor", make_tensor), ("attribute", make_attribute),
                       ("cell", make_cell)):
        per, checks, times = slope(make)
        print("  %-9s %5.1f ns per check   (%d checks: %.2f us, %d checks: %.2f us per call)"
              % (name, per, checks[0], times[0], checks[1], times[1]))


if __name__ == "__main__":
    main()
