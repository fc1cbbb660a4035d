"""Dynamic shapes and lifted scalars (issue 17), side by side in one run, 1 thread by default:

  mlp    inference of the 784-256-256-10 MLP over 12 batch sizes (32 16 7 32 5 12 64 9 16 33 2 48),
         jitted with automatic dynamic shapes: compiles, recompiles, eager calls, plans and their
         prepare time against one capture; then per call, the loop against the same loop where each
         batch size has its own static graph (dynamic=0, every size precompiled), and PyTorch eager
         on the same sizes
  cnn    the same for the small CNN of bench_compiler.py (inference), batch sizes 1-16
  lr     an SGD-with-momentum update of a 256x784 weight whose learning rate changes every step
         (a Python float, lifted to a graph input): compiles and per call against a fixed rate
  hit    the cache-hit cost of a symbolic graph (a new size already planned) against a static one
  loop   the issue's loop: a hand-written step (value_and_grad, then p - lr * g) with a batch size
         of the 12 and a new learning rate every step, against static graphs per size with a fixed rate
  train  a TrainOneStepCell step (MLP and CNN, cross entropy, SGD) over their batch sizes: compiles, and per
         call against each size's static graph (the gradient inside the graph is emitted again per
         size, graph::replay_sweep)

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_dynamic.py [--threads N] [sections]

PyTorch runs on /usr/bin/python3 (Debian's python3-torch) with the same thread count when installed.
"""
import argparse
import os
import subprocess
import sys
import time
import timeit

import pijit as pj
from pijit import nn, ops
from pijit.autodiff import _differentiate  # (StaticStep's construct: TrainOneStepCell's body)

MLP_SIZES = [32, 16, 7, 32, 5, 12, 64, 9, 16, 33, 2, 48]
CNN_SIZES = [8, 4, 3, 8, 5, 6, 12, 2, 7, 9, 10, 16]
MLP_DIMS = (784, 256, 256, 10)


class Dynamic(nn.Cell):
    """The network the dynamic loop jits (its construct a code object of its own: pijit's counters
    and cache are per code object)."""

    def __init__(self, layers):
        super().__init__()
        self.layers = nn.CellList(layers)

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Static(nn.Cell):
    """The same network for the static reference (another code object, another cache)."""

    def __init__(self, layers):
        super().__init__()
        self.layers = nn.CellList(layers)

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def mlp_layers():
    layers = []
    for i, (a, b) in enumerate(zip(MLP_DIMS[:-1], MLP_DIMS[1:])):
        layers += [nn.Dense(a, b)] + ([nn.ReLU()] if i + 2 < len(MLP_DIMS) else [])
    return layers


def cnn_layers():
    def block(a, b):
        return [nn.Conv2d(a, b, 3, pad_mode="pad", padding=1, has_bias=True), nn.BatchNorm2d(b), nn.ReLU()]
    return (block(3, 16) + [nn.MaxPool2d(2, 2)] + block(16, 32) + [nn.MaxPool2d(2, 2)] +
            block(32, 64) + [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(64, 10)])


def loop_us(fn, inputs, repeat=5, rounds=3):
    """Best time per call of one pass over `inputs` (a list of argument tuples)."""
    for args in inputs:
        fn(*args)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(rounds):
            for args in inputs:
                fn(*args)
        best = min(best, (time.perf_counter() - t0) / (rounds * len(inputs)))
    return best * 1e6


def fixed_size_us(fn, batches, sizes, repeat=3, rounds=2):
    """Per call over `sizes` (as the loop meets them) when each size runs in a loop of its own:
    over BATCHES new batches of that size, as a data loader gives them, and over one batch reused
    (every call finds its input in the cache). `batches[n]`: the argument tuples for size n.
    The statistic is the loop's: per repeat, one sum over the sizes (each size's loop timed after
    an untimed pass of it, so no switch of size is timed), and the best of the repeats. (The best
    of each size summed would pick every size's luckiest run: on a noisy machine, a few percent
    in the reference's favour.)"""
    def best(inputs_of, passes):
        result = float("inf")
        for _ in range(repeat):
            total = calls = 0
            for n in sizes:
                inputs = inputs_of(n)
                for args in inputs:
                    fn(*args)
                t0 = time.perf_counter()
                for _ in range(passes):
                    for args in inputs:
                        fn(*args)
                total += time.perf_counter() - t0
                calls += passes * len(inputs)
            result = min(result, total / calls)
        return result * 1e6
    return best(lambda n: batches[n], 1), best(lambda n: batches[n][:1] * BATCHES, rounds)


def min_pair(a, b):
    return (min(a[0], b[0]), min(a[1], b[1]))


BATCHES = 12  # new batches per size in the fixed-size references


# Sizes no loop uses, of one kind (odd primes: oneDNN picks its implementations by shape): the
# symbolic entry plans FRESH, the static reference captures FRESH_REF.
FRESH = [17, 19, 23, 29, 31]
FRESH_REF = [37, 41, 43, 47, 53]


def first_call_ms(fn, inputs):
    """Median over `inputs` of a first call's time minus a warm cached call's (each a new size)."""
    times = []
    for args in inputs:
        t0 = time.perf_counter()
        fn(*args)
        first = time.perf_counter() - t0
        fn(*args)  # (a plan's first run still sets up what it keeps)
        t0 = time.perf_counter()
        fn(*args)
        times.append((first - (time.perf_counter() - t0)) * 1e3)
    return sorted(times)[len(times) // 2]


def timers(jf, code):
    """(planning ms and plans of jf's symbolic entries, capture ms, compile ms and compiles of code)."""
    plans = [e["shape_plans"] for e in pj.jit_stats(jf)["entries"] if e["shape_plans"]["plans"]]
    row = [r for r in pj._C.capture_summary() if r["code"] is code]
    return (sum(p["prepare_ms"] for p in plans), sum(p["plans"] for p in plans),
            row[0]["capture_ms"] if row else 0.0, row[0]["compile_ms"] if row else 0.0,
            row[0]["compiles"] if row else 0)


def new_sizes(jdyn, jref, code, make):
    """A new size for the symbolic entry (planning only) against a new size for the static graph
    (capture + compile), each on 5 sizes neither has met (oneDNN's primitives for them are new
    too): pijit's timers, and first calls minus warm calls (medians)."""
    d0, r0 = timers(jdyn, code), timers(jref, code)
    first_dyn = first_call_ms(jdyn, [make(n) for n in FRESH])
    first_ref = first_call_ms(jref, [make(n) for n in FRESH_REF])
    d1, r1 = timers(jdyn, code), timers(jref, code)
    plan = (d1[0] - d0[0]) / max(d1[1] - d0[1], 1)
    n = max(r1[4] - r0[4], 1)
    cap, comp = (r1[2] - r0[2]) / n, (r1[3] - r0[3]) / n
    return ("  a new size: planning %.2f ms (the symbolic entry) against capture %.2f ms + compile %.2f ms "
            "(a static graph), by pijit's timers; first call %.2f ms against %.2f ms"
            % (plan, cap, comp, first_dyn, first_ref))


def counters(jf):
    st = pj.jit_stats(jf)
    plans = [e.get("shape_plans") for e in st["entries"] if e.get("shape_plans")]
    return st, plans


TORCH = """
import sys, time, torch, torch.nn as tn
torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)
kind, sizes = sys.argv[2], [int(s) for s in sys.argv[3].split(",")]
if kind == "mlp":
    net = tn.Sequential(tn.Linear(784, 256), tn.ReLU(), tn.Linear(256, 256), tn.ReLU(), tn.Linear(256, 10))
    xs = [torch.randn(n, 784) for n in sizes]
else:
    def block(a, b): return [tn.Conv2d(a, b, 3, padding=1), tn.BatchNorm2d(b), tn.ReLU()]
    net = tn.Sequential(*(block(3, 16) + [tn.MaxPool2d(2, 2)] + block(16, 32) + [tn.MaxPool2d(2, 2)] +
                          block(32, 64) + [tn.AdaptiveAvgPool2d(1), tn.Flatten(), tn.Linear(64, 10)])).eval()
    xs = [torch.randn(n, 3, 32, 32) for n in sizes]
with torch.no_grad():
    for x in xs: net(x)
    best = 1e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(3):
            for x in xs: net(x)
        best = min(best, (time.perf_counter() - t) / (3 * len(xs)))
print(best * 1e6)
"""


def torch_us(threads, kind, sizes):
    if not os.path.exists("/usr/bin/python3"):
        return None
    try:
        out = subprocess.run(["/usr/bin/python3", "-c", TORCH, str(threads), kind, ",".join(map(str, sizes))],
                             capture_output=True, text=True, timeout=300)
        return float(out.stdout.strip()) if out.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def bench_sizes(name, layers, sizes, shape, threads):
    pj.reset(Dynamic.construct)  # (each section's counters and caches its own)
    pj.reset(Static.construct)
    pj.set_seed(0)
    net = Dynamic(layers())
    net.set_train(False)
    pj.set_seed(0)
    ref = Static(layers())
    ref.set_train(False)
    inputs = [(pj.randn(n, *shape),) for n in sizes]
    jnet = pj.jit(net)
    t0 = time.perf_counter()
    for args in inputs:  # the first pass: captures, recompiles and plans
        jnet(*args)
    first = (time.perf_counter() - t0) * 1e3
    st, plans = counters(jnet)
    # The reference: a static graph per size (dynamic=0, all cached), timed in the same order and
    # each in a loop of its own size (every call a hit on the same entry).
    jref = pj.jit(ref, dynamic=0, recompile_limit=len(sizes) + len(FRESH) + 1)
    for args in inputs:
        jref(*args)
    assert pj.jit_stats(jref)["frames_default"] == 0, "the static reference runs eagerly"
    print("%s: %d calls over batch sizes %s" % (name, len(sizes), " ".join(map(str, sizes))))
    print("  automatic dynamic: %d compiles, %d recompiles, %d eager calls; first pass %.1f ms"
          % (st["compiles"], st["recompiles"], st["frames_default"], first))
    print(new_sizes(jnet, jref, Static.construct.__code__, lambda n: (pj.randn(n, *shape),)))
    batches = {n: [(pj.randn(n, *shape),) for _ in range(BATCHES)] for n in set(sizes)}
    dyn = same_order = float("inf")
    fixed = (float("inf"), float("inf"))
    for _ in range(3):  # alternating rounds, each side keeping its best
        dyn = min(dyn, loop_us(jnet, inputs))
        same_order = min(same_order, loop_us(jref, inputs))
        fixed = min_pair(fixed, fixed_size_us(jref, batches, sizes, repeat=5, rounds=3))
    eager = loop_us(net, inputs, repeat=2, rounds=1)
    print("  per call: dynamic %.1f us; static graphs per size in the same order %.1f us (dynamic is %.3fx); "
          "each size in a loop of its own %.1f us (%.3fx; one batch reused: %.1f us, %.3fx); pijit eager %.1f us"
          % (dyn, same_order, dyn / same_order, fixed[0], dyn / fixed[0], fixed[1], dyn / fixed[1], eager))
    t = torch_us(threads, name, sizes)
    print("  PyTorch eager on the same sizes %s" % ("%.1f us (pijit dynamic is %.2fx)" % (t, dyn / t) if t
                                                    else "not installed (apt install python3-torch)"))


def sgd_step(w, g, v, lr):
    v2 = v * 0.9 + g
    return w - lr * v2, v2


def bench_lr(threads):
    pj.set_seed(0)
    w, g, v = pj.randn(256, 784), pj.randn(256, 784), pj.zeros((256, 784))
    lrs = [0.1 * 0.97 ** k for k in range(200)]
    jf = pj.jit(sgd_step)
    for lr in lrs:
        jf(w, g, v, lr)
    st = pj.jit_stats(jf)
    print("lr: SGD with momentum on a 256x784 weight, a new learning rate every step (200 steps)")
    print("  %d compiles, %d recompiles, %d eager calls; graph inputs: %s"
          % (st["compiles"], st["recompiles"], st["frames_default"],
             st["entries"][0]["graph"].split("{")[0].strip()))
    fixed = pj.jit(lambda w, g, v: sgd_step(w, g, v, 0.05))
    changing = [(w, g, v, lr) for lr in lrs[:20]]
    same = [(w, g, v)] * 20
    a = b = float("inf")
    for _ in range(3):
        a = min(a, loop_us(jf, changing))
        b = min(b, loop_us(fixed, same))
    e = loop_us(sgd_step, changing, repeat=2, rounds=1)
    print("  per call: changing rate %.1f us, a fixed rate (constant in the graph) %.1f us (%.3fx), pijit eager %.1f us"
          % (a, b, a / b, e))


def small(x, y):
    return (x * y + 1) * y - x


def small_dynamic(x, y):  # (the same body, another code object)
    return (x * y + 1) * y - x


def bench_hit(threads):
    static, dynamic = pj.jit(small, dynamic=0), pj.jit(small_dynamic, dynamic=1)
    x, y = pj.ones((4, 3)), pj.Tensor([1.0, 2.0, 3.0])
    dynamic(pj.ones((5, 3)), y)  # a second size planned: the hits below are on a symbolic graph
    a = b = float("inf")
    for _ in range(5):
        static(x, y)
        dynamic(x, y)
        a = min(a, min(timeit.repeat(lambda: static(x, y), number=20000, repeat=3)) / 20000 * 1e6)
        b = min(b, min(timeit.repeat(lambda: dynamic(x, y), number=20000, repeat=3)) / 20000 * 1e6)
    print("hit: (x*y+1)*y-x on 4x3, a cache hit: static %.2f us, symbolic %.2f us (%.2fx)" % (a, b, b / a))


class StaticStep(nn.TrainOneStepCell):
    """TrainOneStepCell with a construct of its own (another code object, another cache) for the
    static reference; the same body."""

    def construct(self, *inputs):
        loss, _, grads = _differentiate("TrainOneStepCell", self.network, inputs, None, [], self._weights,
                                        None if self.sens == 1.0 else self.sens, False)
        self.optimizer(tuple(grads))
        return loss


def bench_train(kind, threads):
    pj.reset(nn.TrainOneStepCell.construct)
    pj.reset(StaticStep.construct)
    pj.reset(Dynamic.construct)
    layers, sizes, shape = ((mlp_layers, MLP_SIZES, (784,)) if kind == "mlp" else (cnn_layers, CNN_SIZES, (3, 32, 32)))

    def make(cls):
        pj.set_seed(0)
        net = Dynamic(layers())
        net.set_train(True)
        return cls(nn.WithLossCell(net, nn.CrossEntropyLoss()), nn.SGD(net.trainable_params(), 0.01, momentum=0.9))
    pj.set_seed(1)
    data = [(pj.randn(n, *shape), pj.randint(0, 10, (n,)).astype(pj.int32)) for n in sizes]
    step, ref = make(nn.TrainOneStepCell), make(StaticStep)
    jstep = pj.jit(step)
    jref = pj.jit(ref, dynamic=0, recompile_limit=len(sizes) + len(FRESH) + 1)
    t0 = time.perf_counter()
    for x, y in data:
        jstep(x, y)
    first = (time.perf_counter() - t0) * 1e3
    st, plans = counters(jstep)

    print("train %s: TrainOneStepCell (%s, cross entropy, SGD with momentum) over batch sizes %s"
          % (kind, "MLP 784-256-256-10" if kind == "mlp" else "the CNN, BatchNorm in training mode",
             " ".join(map(str, sizes))))
    print("  automatic dynamic: %d compiles, %d recompiles, %d eager calls; first pass %.1f ms"
          % (st["compiles"], st["recompiles"], st["frames_default"], first))
    for x, y in data:
        jref(x, y)
    print(new_sizes(jstep, jref, StaticStep.construct.__code__,
                    lambda n: (pj.randn(n, *shape), pj.randint(0, 10, (n,)).astype(pj.int32)))
          + " (the backward emitted again per size)")
    for x, y in data:
        jref(x, y)
    assert pj.jit_stats(jref)["frames_default"] == 0, "the static reference runs eagerly"
    batches = {n: [(pj.randn(n, *shape), pj.randint(0, 10, (n,)).astype(pj.int32)) for _ in range(BATCHES)]
               for n in set(sizes)}
    dyn = same_order = float("inf")
    fixed = (float("inf"), float("inf"))
    for _ in range(3):
        dyn = min(dyn, loop_us(jstep, data, repeat=3, rounds=2))
        same_order = min(same_order, loop_us(jref, data, repeat=3, rounds=2))
        fixed = min_pair(fixed, fixed_size_us(jref, batches, sizes))
    print("  per call: dynamic %.1f us; static graphs per size in the same order %.1f us (dynamic is %.3fx); "
          "each size in a loop of its own %.1f us (%.3fx; one batch reused: %.1f us, %.3fx)"
          % (dyn, same_order, dyn / same_order, fixed[0], dyn / fixed[0], fixed[1], dyn / fixed[1]))


def sgd_loop(kind):
    """A hand-written training step (value_and_grad, then p - lr * g) for the dynamic loop and one
    for the static reference: two textually equal functions, two code objects (two caches)."""
    pj.set_seed(0)
    net = Dynamic(mlp_layers())
    weights = tuple(net.trainable_params())
    grad_fn = pj.value_and_grad(nn.WithLossCell(net, nn.CrossEntropyLoss()), None, weights)
    if kind == "dynamic":
        def step(x, y, lr):
            loss, grads = grad_fn(x, y)
            for p, g in zip(weights, grads):
                ops.assign(p, p - lr * g)
            return loss
    else:
        def step(x, y, lr):
            loss, grads = grad_fn(x, y)
            for p, g in zip(weights, grads):
                ops.assign(p, p - lr * g)
            return loss
    return step


def bench_loop(threads):
    pj.reset(Dynamic.construct)
    pj.set_seed(1)
    data = [(pj.randn(n, 784), pj.randint(0, 10, (n,)).astype(pj.int32), 0.1 * 0.97 ** i)
            for i, n in enumerate(MLP_SIZES)]
    jstep = pj.jit(sgd_loop("dynamic"))
    # the reference: a static graph per size, and the rate a constant of each (one fixed rate)
    jref = pj.jit(sgd_loop("static"), dynamic=0, recompile_limit=len(MLP_SIZES) + 1)
    t0 = time.perf_counter()
    for x, y, lr in data:
        jstep(x, y, lr)
    first = (time.perf_counter() - t0) * 1e3
    st, plans = counters(jstep)
    print("loop: a hand-written step (value_and_grad, p - lr * g) of the MLP, a batch size of %s and a new "
          "learning rate every step" % " ".join(map(str, MLP_SIZES)))
    print("  automatic dynamic: %d compiles, %d recompiles, %d eager calls; first pass %.1f ms"
          % (st["compiles"], st["recompiles"], st["frames_default"], first))
    fixed_data = [(x, y, 0.05) for x, y, _ in data]
    for args in fixed_data:
        jref(*args)
    assert pj.jit_stats(jref)["frames_default"] == 0, "the static reference runs eagerly"
    batches = {n: [(pj.randn(n, 784), pj.randint(0, 10, (n,)).astype(pj.int32), 0.05) for _ in range(BATCHES)]
               for n in set(MLP_SIZES)}
    dyn = same_order = float("inf")
    fixed = (float("inf"), float("inf"))
    for _ in range(3):
        dyn = min(dyn, loop_us(jstep, data, repeat=3, rounds=2))
        same_order = min(same_order, loop_us(jref, fixed_data, repeat=3, rounds=2))
        fixed = min_pair(fixed, fixed_size_us(jref, batches, MLP_SIZES))
    print("  per call: dynamic %.1f us; static graphs per size and a fixed rate, in the same order %.1f us "
          "(dynamic is %.3fx); each size in a loop of its own %.1f us (%.3fx; one batch reused: %.1f us, %.3fx)"
          % (dyn, same_order, dyn / same_order, fixed[0], dyn / fixed[0], fixed[1], dyn / fixed[1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("only", nargs="*", help="sections: mlp cnn lr hit train loop (default: all)")
    args = ap.parse_args()
    pj.set_num_threads(args.threads)
    print("pijit dynamic shapes and lifted scalars, Python %s, %d thread(s)" % (sys.version.split()[0], args.threads))
    sections = {"mlp": lambda: bench_sizes("mlp", mlp_layers, MLP_SIZES, (784,), args.threads),
                "cnn": lambda: bench_sizes("cnn", cnn_layers, CNN_SIZES, (3, 32, 32), args.threads),
                "lr": lambda: bench_lr(args.threads), "hit": lambda: bench_hit(args.threads),
                "train": lambda: (bench_train("mlp", args.threads), bench_train("cnn", args.threads)),
                "loop": lambda: bench_loop(args.threads)}
    for name in args.only or list(sections):
        if name not in sections:
            ap.error("unknown section %r (choose from %s)" % (name, ", ".join(sections)))
        sections[name]()


if __name__ == "__main__":
    main()
