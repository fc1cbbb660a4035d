"""What output inside a jitted model costs: a model whose construct prints (or logs) once per call
runs as one graph with the print replayed after it; one that prints a value read from a tensor
(float(h.sum())) breaks the graph in two, also inside a try or with block (the code after the break
is a graph again); a loop reading a value per iteration runs its body as a captured function. Each eager and jitted, next to the same code without the output, in one run.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_breaks.py
"""
import io
import logging
import sys
import timeit

import pijit as pj
from pijit import nn, ops

OUT = io.StringIO()


class Span(object):
    """A user context manager (a timer span): entered and left once per call."""

    def __init__(self):
        self.depth = 0

    def __enter__(self):
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        return False


SPAN = Span()
LOG = logging.getLogger("bench_breaks")
LOG.addHandler(logging.StreamHandler(OUT))
LOG.setLevel(logging.INFO)
LOG.propagate = False


class Net(nn.Cell):
    def __init__(self, mode, width=64):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Dense(width, width), nn.Dense(width, width), nn.Dense(width, 8)
        self.mode = mode

    def construct(self, x):
        h = ops.relu(self.fc1(x))
        h = ops.relu(self.fc2(h))
        if self.mode == "print":
            print("hidden computed", h.shape, file=OUT)  # replayed after the graph
        elif self.mode == "log":
            LOG.info("hidden computed %s", h.shape)      # replayed after the graph
        elif self.mode == "value":
            print("hidden sum", float(h.sum()), file=OUT)  # a graph break: needs the data
        elif self.mode == "try":
            try:
                s = float(h.max())  # a graph break inside try: fc3 and softmax still a graph
            except ValueError:
                s = 1.0
            h = h / (s + 1.0)
        elif self.mode == "with":
            with SPAN:
                s = float(h.max())  # a graph break inside a with-block
                h = h / (s + 1.0)
        return ops.softmax(self.fc3(h), -1)


def step(net, x):
    return ops.mean(net(x))


def train(net, x, n=8):
    """A loop that reads a value per iteration: the interpreter runs the loop, its body a function
    captured as a graph (step inlined) with a break at float()."""
    total = 0.0
    for _ in range(n):
        total += float(step(net, x))
    return total


def train_quiet(net, x, n=8):
    """The same loop reading nothing per iteration: unrolled into one graph."""
    total = 0.0
    for _ in range(n):
        total = total + step(net, x)
    return total


def best_us(fn, *args, number=2000):
    return min(timeit.repeat(lambda: fn(*args), number=number, repeat=7)) / number * 1e6


def outputs(width, batch, number):
    """The four constructs, eager and jitted, at one model size: returns the small model's net and
    input for the loop rows."""
    x = pj.ones((batch, width))
    pj.reset(Net.construct)  # (the six constructs of one size fill construct's cache: 8 entries)
    models = {m: Net(m, width) for m in ("quiet", "print", "log", "value", "try", "with")}
    for m in models.values():  # the same weights
        m.fc1, m.fc2, m.fc3 = models["quiet"].fc1, models["quiet"].fc2, models["quiet"].fc3
    jitted = {k: pj.jit(m) for k, m in models.items()}
    for k in models:
        want = models[k](x).tolist()
        for _ in range(3):
            assert jitted[k](x).tolist() == want, k
    print("  batch %d, %d-%d-%d-8 MLP" % (batch, width, width, width))
    # Interleaved rounds, best of each: a noisy machine slows every variant alike.
    best = {}
    for _ in range(7):
        for k in models:
            for name, fn in (("eager", models[k]), ("jit", jitted[k])):
                t = min(timeit.repeat(lambda: fn(x), number=number, repeat=1)) / number * 1e6
                best[k, name] = min(best.get((k, name), t), t)
    t_quiet = best["quiet", "jit"]
    print("  %-44s %8s %8s %10s %12s" % ("construct", "eager", "jitted", "vs eager", "vs quiet jit"))
    for k, what in (("quiet", "no output"), ("print", "print(..., file=buf): replayed"),
                    ("log", "logger.info(...): replayed"), ("value", "print(float(h.sum())): a break"),
                    ("try", "float(h.max()) inside try: a break"), ("with", "float(h.max()) inside with: a break")):
        te, tj = best[k, "eager"], best[k, "jit"]
        print("  %-44s %6.1f us %6.1f us %9.2fx %11.2fx" % (what, te, tj, te / tj, t_quiet / tj))
    return models["quiet"], x, jitted["quiet"]


def main():
    print("pijit side effects and graph breaks, Python %s (1 thread); the models share construct's "
          "code, and so its cache" % sys.version.split()[0])
    net, x, jq = outputs(64, 8, 1000)
    st = pj.jit_stats(jq)
    print("  construct's cache: %d entries with a graph, %d of them with a break (%s)"
          % (st["graphs"], st["breaks"], "; ".join(b["id"] + " " + b["name"] for b in st["break_records"])))
    outputs(512, 64, 50)  # a logging call (~15 us) weighs less next to a larger graph
    jtrain, jquiet = pj.jit(train), pj.jit(train_quiet)
    assert jtrain(net, x) == train(net, x)
    assert jquiet(net, x).tolist() == train_quiet(net, x).tolist()
    best = {}
    for _ in range(5):
        for name, fn in (("eager", train), ("jit", jtrain), ("quiet eager", train_quiet), ("quiet jit", jquiet)):
            t = best_us(fn, net, x, number=100)
            best[name] = min(best.get(name, t), t)
    st = pj.jit_stats(jtrain)
    print("  %-44s %6.1f us %6.1f us %9.2fx %11.2fx   (loop body: %d graph, %d break)"
          % ("8 x float(step(x)) in a loop: body captured", best["eager"], best["jit"], best["eager"] / best["jit"],
             best["quiet jit"] / best["jit"], st["resume_graphs"], st["resume_breaks"]))
    print("  %-44s %6.1f us %6.1f us %9.2fx %11.2fx   (the loop unrolled into 1 graph)"
          % ("8 x step(x) summed as a tensor: no read", best["quiet eager"], best["quiet jit"],
             best["quiet eager"] / best["quiet jit"], 1.0))

if __name__ == "__main__":
    main()
