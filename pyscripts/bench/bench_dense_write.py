"""nn.Dense in a training loop: the forward right after an in-place write of the weights (what an
optimizer's update does every step) against the plain matmul x @ W.T and against Dense with
unchanged weights (inference), eager and jitted, measured side by side in one run (cases
interleaved, the best call of each). Also the weight cache's reorders per call: a written weight is
read in its own layout, not reordered per step (kernels/weight_cache.h). Goal: Dense after a write
within 1.5x the plain matmul.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_dense_write.py --threads 2
"""
import argparse
import os
import sys
import time


LAYERS = [(32, 9216, 4096), (32, 784, 256)]  # (batch, in, out): AlexNet's fc6, an MLP's first


def timed(fn, before=None):
    """Seconds one call of fn takes, after before() (not timed)."""
    if before is not None:
        before()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(batch, fin, fout, rounds, per_round):
    import pijit as pj
    from pijit import nn, ops
    pj.set_seed(0)
    trained, served = nn.Dense(fin, fout), nn.Dense(fin, fout)  # written every step / never
    x = pj.randn(batch, fin)
    w = pj.randn(fout, fin) * 0.01  # the plain matmul's weights, as Dense holds them
    step = pj.randn(fout, fin) * 1e-6
    fast_trained, fast_served = pj.jit(trained), pj.jit(served)

    def write_dense():  # an SGD step in place, as the optimizers make it
        ops.assign(trained.weight, trained.weight - step)

    def write_plain():
        ops.assign(w, w - step)

    cases = [
        ("matmul x @ W.T, W just written", lambda: ops.matmul(x, w.T), write_plain),
        ("Dense, unchanged weights", lambda: served(x), None),
        ("Dense, weights just written", lambda: trained(x), write_dense),
        ("jit(Dense), unchanged weights", lambda: fast_served(x), None),
        ("jit(Dense), weights just written", lambda: fast_trained(x), write_dense),
    ]
    for _, fn, before in cases:  # warm up: plans, caches, capture, the written-weights switch
        for _ in range(3):
            timed(fn, before)
    times = {name: [] for name, _, _ in cases}
    reorders = {name: 0 for name, _, _ in cases}
    for _ in range(rounds):
        for name, fn, before in cases:
            for _ in range(per_round):
                if before is not None:
                    before()
                r0 = pj._C.weight_cache_info()["reorders"]
                times[name].append(timed(fn))
                reorders[name] += pj._C.weight_cache_info()["reorders"] - r0
    calls = rounds * per_round
    return [(name, min(times[name]), reorders[name] / calls) for name, _, _ in cases]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--per-round", type=int, default=3)
    args = ap.parse_args()
    import pijit as pj
    pj.set_num_threads(args.threads)
    print("nn.Dense after an in-place weight write vs the plain matmul, %d threads (best of %d "
          "calls each, cases interleaved)" % (args.threads, args.rounds * args.per_round))
    for batch, fin, fout in LAYERS:
        rows = measure(batch, fin, fout, args.rounds, args.per_round)
        base = rows[0][1]
        print("\nbatch %d, %d -> %d (weights %.0f MiB)" % (batch, fin, fout, fin * fout * 4 / 2.0 ** 20))
        print("  %-36s %10s %12s %16s" % ("case", "ms", "vs matmul", "reorders/call"))
        for name, t, r in rows:
            print("  %-36s %10.3f %12.2f %16.2f" % (name, t * 1e3, t / base, r))
        after = dict((n, t) for n, t, _ in rows)
        print("  goal: eager Dense after a write <= 1.5x the matmul: %.2fx"
              % (after["Dense, weights just written"] / base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
