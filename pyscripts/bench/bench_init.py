"""Weight initialisers (pijit.common.initializer): ns per element of each, at float32, for a dense
and a convolution shape, side by side with what they replace, measured in one run: the
composition of whole-tensor ops the Python initialisers made (a float64 draw, scale, shift, cast)
and the numpy stand-in's per-element generator (pijit.numpy_lite.random, what MindSpore's own
numpy calls ran on without numpy). Then the time to build a ResNet-50-shaped set of parameters
(its 161 parameter shapes, 25.6M elements: convolutions HeNormal(fan_out, relu), batch norms ones
and zeros, the classifier nn.Dense's defaults), as initialised tensors and as Parameters.
Goal: every initialiser at or below 10 ns an element.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_init.py --threads 2
"""
import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_eager import best_time  # noqa: E402

SHAPES = [("dense 4096x2048", (4096, 2048)), ("conv 512x512x3x3", (512, 512, 3, 3))]


def resnet50_shapes():
    """(name, shape, kind) of ResNet-50's parameters: kind conv, bn_one, bn_zero, fc_w, fc_b."""
    out = [("conv1.weight", (64, 3, 7, 7), "conv")]

    def bn(prefix, c):
        out.extend([(prefix + ".gamma", (c,), "bn_one"), (prefix + ".beta", (c,), "bn_zero"),
                    (prefix + ".moving_mean", (c,), "bn_zero"),
                    (prefix + ".moving_variance", (c,), "bn_one")])

    bn("bn1", 64)
    cin = 64
    for li, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)], 1):
        for b in range(blocks):
            p = "layer%d.%d" % (li, b)
            for ci, (co, ck, k) in enumerate([(width, cin, 1), (width, width, 3), (4 * width, width, 1)], 1):
                out.append(("%s.conv%d.weight" % (p, ci), (co, ck, k, k), "conv"))
                bn("%s.bn%d" % (p, ci), co)
            if b == 0:
                out.append((p + ".down_sample.weight", (4 * width, cin, 1, 1), "conv"))
                bn(p + ".down_sample.bn", 4 * width)
            cin = 4 * width
    out.extend([("fc.weight", (1000, 2048), "fc_w"), ("fc.bias", (1000,), "fc_b")])
    return out


def build_resnet50(as_parameters):
    import pijit as pj
    from pijit.common.initializer import HeNormal, HeUniform, Uniform, initializer
    inits = {"conv": HeNormal(mode="fan_out", nonlinearity="relu"), "bn_one": "ones",
             "bn_zero": "zeros", "fc_w": HeUniform(math.sqrt(5)), "fc_b": Uniform(1 / math.sqrt(2048))}
    params = []
    for name, shape, kind in resnet50_shapes():
        t = initializer(inits[kind], shape, pj.float32)
        params.append(pj.Parameter(t, name=name) if as_parameters else t)
    return params


def composed(kind):
    """The whole-tensor-op composition the Python initialisers made before (float64 draw, scale,
    shift, cast to float32)."""
    import pijit as pj

    def uniform(shape, bound):
        return (pj.rand(*shape, dtype=pj.float64) * (2 * bound) - bound).astype(pj.float32)

    def normal(shape, sigma):
        return (pj.randn(*shape, dtype=pj.float64) * sigma + 0.0).astype(pj.float32)
    return uniform if kind == "uniform" else normal


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    import pijit as pj
    from pijit.common.initializer import (Constant, HeNormal, HeUniform, Normal, One, TruncatedNormal,
                                          Uniform, XavierNormal, XavierUniform, Zero, initializer)
    pj.set_num_threads(args.threads)
    pj.set_seed(0)
    inits = [Normal(), Uniform(), HeUniform(math.sqrt(5)), HeNormal(mode="fan_out", nonlinearity="relu"),
             XavierUniform(), XavierNormal(), TruncatedNormal(), TruncatedNormal(0.02, 0.0, -0.04, 0.04),
             Constant(0.5), One(), Zero()]
    print("initialisers, float32, %d threads: ns per element (best of several calls)" % args.threads)
    print("%-58s %s" % ("initialiser", "".join("%20s" % s for s, _ in SHAPES)))
    worst = 0.0
    for init in inits:
        row = []
        for _, shape in SHAPES:
            n = 1
            for d in shape:
                n *= d
            t = best_time(lambda: initializer(init, shape), min_time=0.3, repeat=3)
            row.append(t / n * 1e9)
            worst = max(worst, row[-1])
        print("%-58s %s" % (repr(init)[:58], "".join("%20.2f" % v for v in row)))
    for kind, arg in (("uniform", 0.05), ("normal", 0.02)):
        row = []
        for _, shape in SHAPES:
            n = 1
            for d in shape:
                n *= d
            fn = composed(kind)
            row.append(best_time(lambda: fn(shape, arg), min_time=0.3, repeat=3) / n * 1e9)
        print("%-58s %s" % ("before: float64 %s, scaled, cast (whole-tensor ops)" % kind,
                            "".join("%20.2f" % v for v in row)))
    from pijit.numpy_lite import random as lite_random
    m = 20000
    t = best_time(lambda: lite_random.normal(0.0, 0.02, size=(m,)), min_time=0.3, repeat=3)
    print("%-58s %20.2f  (on %d elements)" % ("numpy stand-in: numpy_lite.random.normal", t / m * 1e9, m))
    print("goal: every initialiser <= 10 ns an element: worst %.2f ns" % worst)

    total = sum(_prod(s) for _, s, _ in resnet50_shapes())
    print("\nResNet-50 parameters: %d tensors, %.2fM elements" % (len(resnet50_shapes()), total / 1e6))
    for label, as_params in (("initialised tensors", False), ("Parameters", True)):
        t = best_time(lambda: build_resnet50(as_params), min_time=1.0, repeat=3)
        print("  %-22s %8.1f ms  (%.2f ns an element)" % (label, t * 1e3, t / total * 1e9))
    return 0


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    sys.exit(main())
