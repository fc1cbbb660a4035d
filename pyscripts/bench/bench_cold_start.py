"""Cold start (issue 46): the first call of a model in a fresh process, eager against jitted, with
what the jitted first call spent in capture and compilation, 1 thread. Each figure is the median
over fresh processes (the model is built before the clock starts; pijit's import is not counted).

  mlp     a 20-layer MLP Cell (Dense 64-64 + ReLU), batch 8
  cnn     a small CNN in inference (3 x [conv3x3 + BatchNorm + ReLU], pools, Dense), batch 8
  train   one TrainOneStepCell step (SGD with momentum, cross entropy) of an MLP 784-256-256-10, batch 32

Goals: the jitted first call of the MLP <= 5 ms; with the persistent compile cache (not built
yet) <= 1.25x the eager first call.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_cold_start.py [--runs 7]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import pijit as pj
from pijit import nn
pj.set_num_threads(1)
kind, mode = sys.argv[1], sys.argv[2]
pj.set_seed(0)
if kind == "mlp":
    layers = []
    for _ in range(20):
        layers += [nn.Dense(64, 64), nn.ReLU()]
    net, args = nn.SequentialCell(layers), (pj.ones((8, 64)),)
elif kind == "cnn":
    def block(a, b):
        return [nn.Conv2d(a, b, 3, pad_mode="pad", padding=1, has_bias=True), nn.BatchNorm2d(b), nn.ReLU()]
    net = nn.SequentialCell(block(3, 16) + [nn.MaxPool2d(2, 2)] + block(16, 32) + [nn.MaxPool2d(2, 2)] +
                            block(32, 64) + [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(64, 10)])
    net.set_train(False)
    args = (pj.ones((8, 3, 32, 32)),)
else:
    dims = [784, 256, 256, 10]
    layers = []
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        layers += [nn.Dense(a, b)] + ([nn.ReLU()] if i + 2 < len(dims) else [])
    body = nn.SequentialCell(layers)
    opt = nn.SGD(body.trainable_params(), learning_rate=0.01, momentum=0.9)
    net = nn.TrainOneStepCell(nn.WithLossCell(body, nn.CrossEntropyLoss()), opt)
    net.set_train(True)
    args = (pj.ones((32, 784)), pj.Tensor([k % 10 for k in range(32)], pj.int32))
fn = pj.jit(net) if mode == "jit" else net
t0 = time.perf_counter()
fn(*args)
t1 = time.perf_counter()
fn(*args)
t2 = time.perf_counter()
out = {"first_ms": (t1 - t0) * 1e3, "second_ms": (t2 - t1) * 1e3}
if mode == "jit":
    es = pj.jit_stats(fn)["entries"]
    out["capture_ms"] = sum(e["capture_ms"] for e in es)
    out["compile_ms"] = sum(e["compile_ms"] for e in es)
print(json.dumps(out))
"""


def fresh(kind, mode):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, kind, mode], capture_output=True, text=True, env=env,
                         timeout=600)
    if out.returncode != 0:
        raise SystemExit("%s %s failed:\n%s" % (kind, mode, out.stderr[-2000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("kinds", nargs="*", default=["mlp", "cnn", "train"])
    args = ap.parse_args()
    print("cold start: the first call in a fresh process, Python %s, 1 thread, median of %d processes"
          % (sys.version.split()[0], args.runs))
    print("  %-6s %12s %12s %8s %12s %12s %14s" % ("model", "eager first", "jit first", "ratio", "capture",
                                                  "compile", "jit 2nd call"))
    for kind in args.kinds:
        eager = [fresh(kind, "eager") for _ in range(args.runs)]
        jit = [fresh(kind, "jit") for _ in range(args.runs)]

        def med(rows, key):
            return statistics.median(r[key] for r in rows)
        e1, j1 = med(eager, "first_ms"), med(jit, "first_ms")
        print("  %-6s %9.2f ms %9.2f ms %7.2fx %9.2f ms %9.2f ms %11.3f ms"
              % (kind, e1, j1, j1 / e1, med(jit, "capture_ms"), med(jit, "compile_ms"), med(jit, "second_ms")))
    print("  (the persistent compile cache, whose warm start these rows will add, is not built yet)")


if __name__ == "__main__":
    main()
