"""pijit's FFT (kernels/fft.cc) against torch.fft, side by side in one run with the same thread
count: a 1-D complex64 FFT of 2^20 points, of 1000003 points (a prime: Bluestein), a batch of
256 x 1024 (one transform per row), and rfft of 4096 x 4096 float32 along the last dim. Prints
each time (best of --reps runs, pijit and torch alternating, ms) and the ratio pijit / torch.

    PYTHONPATH=pyscripts /usr/bin/python3 pyscripts/bench/bench_fft.py [--threads N]

Needs numpy and torch (the system python3); the first call of each length builds and caches its
plan, so it runs once untimed.
"""
import argparse
import time

import numpy as np
import torch

import pijit as pj
from pijit import ops


def best_ms(fns, reps):
    """The best time (ms) of each function, measured alternately so that load from other
    processes falls on both."""
    for fn in fns:
        fn()  # plans, allocations
    best = [float("inf")] * len(fns)
    for _ in range(reps):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return [b * 1e3 for b in best]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None, help="threads for both (default: pijit's)")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    nt = args.threads or pj.get_num_threads()
    pj.set_num_threads(nt)
    torch.set_num_threads(nt)
    rng = np.random.default_rng(0)

    def cplx(shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)

    cases = [
        ("fft c64 2^20", cplx((1 << 20,)), ops.fft, torch.fft.fft),
        ("fft c64 1000003 (prime)", cplx((1000003,)), ops.fft, torch.fft.fft),
        ("fft c64 256x1024 rows", cplx((256, 1024)), ops.fft, torch.fft.fft),
        ("rfft f32 4096x4096 rows", rng.standard_normal((4096, 4096)).astype(np.float32), ops.rfft, torch.fft.rfft),
    ]
    print("threads: pijit %d, torch %d" % (pj.get_num_threads(), torch.get_num_threads()))
    print("%-26s %12s %12s %8s %10s" % ("case", "pijit ms", "torch ms", "ratio", "max rel"))
    for name, x, ours, theirs in cases:
        px, tx = pj.Tensor(x), torch.from_numpy(x)
        ms_p, ms_t = best_ms([lambda: ours(px), lambda: theirs(tx)], args.reps)
        want = theirs(tx).numpy()
        err = float(np.abs(ours(px).asnumpy() - want).max() / np.abs(want).max())
        print("%-26s %12.2f %12.2f %8.2f %10.1e" % (name, ms_p, ms_t, ms_p / ms_t, err))


if __name__ == "__main__":
    main()
