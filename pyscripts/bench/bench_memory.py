"""What memory costs an elementwise chain on large tensors (issue 12's 16M workload): 8 ops on
4096x4096 float32, eager and jitted, per call: time, minor page faults, and the floor a fused
kernel would reach (reading x and writing y once at the measured copy bandwidth); peak RSS at the
end. Before the storage cache every output of every op was mmapped fresh (page faults on every
byte).

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_memory.py [--threads N]
"""
import argparse
import resource
import sys
import time

import pijit as pj


def chain(x):
    y = x * 1.5 + 0.5
    y = y - x
    y = y * 0.25 + x
    y = y * 2.0 - 1.0
    return y * y


def per_call(fn, x, calls=5):
    fn(x)
    fn(x)
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0 = time.perf_counter()
    for _ in range(calls):
        fn(x)
    t = (time.perf_counter() - t0) / calls
    return t, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    pj.set_num_threads(args.threads)
    x = pj.ones((4096, 4096))
    nbytes = 4096 * 4096 * 4
    floor = 2 * nbytes / (pj._C.probe_machine(args.threads)["copy_gbs"] * 1e9)  # read x, write y
    print("8 elementwise ops on 4096x4096 float32, Python %s, %d thread(s)" % (sys.version.split()[0], args.threads))
    print("  fused floor (x read + y written at the measured copy bandwidth): %.1f ms" % (floor * 1e3))
    for name, fn in (("eager", chain), ("jitted", pj.jit(chain))):
        t, faults = per_call(fn, x)
        print("  %-7s %7.1f ms per call (%5.1fx the floor), %8.0f page faults per call"
              % (name, t * 1e3, t / floor, faults))
    print("  peak RSS %d MB; storage cache holds %d MB"
          % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, pj.cached_storage_bytes() >> 20))


if __name__ == "__main__":
    main()
