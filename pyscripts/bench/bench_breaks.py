"""What a graph break costs: a model whose construct logs once per call (a print to a buffer in the
middle), eager vs jitted, next to the same model without the log, in one run.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_breaks.py
Before a graph break existed, the logging model ran eagerly for good (the whole frame refused).
"""
import io
import sys
import timeit

import pijit as pj
from pijit import nn, ops

OUT = io.StringIO()


class Net(nn.Cell):
    def __init__(self, log):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Dense(64, 64), nn.Dense(64, 64), nn.Dense(64, 8)
        self.log = log

    def construct(self, x):
        h = ops.relu(self.fc1(x))
        h = ops.relu(self.fc2(h))
        if self.log:
            print("hidden computed", file=OUT)  # a graph break: the rest resumes captured
        return ops.softmax(self.fc3(h), -1)


def best_us(fn, *args, number=2000):
    return min(timeit.repeat(lambda: fn(*args), number=number, repeat=7)) / number * 1e6


def main():
    x = pj.ones((8, 64))
    quiet, loud = Net(False), Net(True)
    loud.fc1, loud.fc2, loud.fc3 = quiet.fc1, quiet.fc2, quiet.fc3  # the same weights
    jq, jl = pj.jit(quiet), pj.jit(loud)
    for _ in range(3):
        a, b = jq(x), jl(x)
    assert a.tolist() == b.tolist() == quiet(x).tolist()
    st = pj.jit_stats(jl)
    print("pijit graph breaks, Python %s, batch 8, 64-64-64-8 MLP (1 thread)" % sys.version.split()[0])
    # (the two models share construct's code object, and so its cache: one entry each)
    print("  construct: cache entries with a graph %d, of which with a break %d; resume graphs %d (%s)"
          % (st["graphs"], st["breaks"], st["resume_graphs"], st["break_reasons"][0].split(" at ")[0]))
    t_eager_q, t_eager_l = best_us(quiet, x), best_us(loud, x)
    t_jit_q, t_jit_l = best_us(jq, x), best_us(jl, x)
    print("  eager:  quiet %7.1f us   logging %7.1f us" % (t_eager_q, t_eager_l))
    print("  jitted: quiet %7.1f us   logging %7.1f us" % (t_jit_q, t_jit_l))
    print("  logging jitted vs quiet jitted: %.2fx the speed; vs logging eager: %.2fx faster"
          % (t_jit_q / t_jit_l, t_eager_l / t_jit_l))


if __name__ == "__main__":
    main()
