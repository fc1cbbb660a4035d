"""Cold start (issue 46): the first call of a model in a fresh process, eager against jitted, with
what the jitted first call spent in capture and compilation, 1 thread. Each figure is the median
over fresh processes (the model is built before the clock starts; pijit's import is not counted).

  mlp     a 20-layer MLP Cell (Dense 64-64 + ReLU), batch 8
  cnn     a small CNN in inference (3 x [conv3x3 + BatchNorm + ReLU], pools, Dense), batch 8
  train   one TrainOneStepCell step (SGD with momentum, cross entropy) of an MLP 784-256-256-10, batch 32

Columns: the eager first call; the jitted first call with the persistent compile cache empty
(capture, passes, plan: what a first run ever pays) and with it warm (a past process's artifact
validated and loaded: no capture, no passes); their ratios to the eager first call. Goals: the cold
jitted first call of the MLP <= 5 ms; the warm one <= 1.25x the eager first call.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_cold_start.py [--runs 7]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import gc, json, sys, time
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
# The cyclic collector's young generation emptied first, in both modes: where its next pass falls
# depends on how many objects the program made before (a 20-layer model leaves it ~630 of 700),
# and a pass inside the timed call (~0.1 ms here) would be charged to whichever mode tips it.
gc.collect()
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
    out["from_disk"] = all(e["from_disk"] for e in es)
print(json.dumps(out))
"""


# PyTorch's first calls of the same MLP, on the system Python (where Debian's python3-torch is):
# eager, TorchScript's script (compiles on the first call) and, on PyTorch 2, torch.compile.
TORCH_CHILD = r"""
import gc, json, sys, time
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
mode = sys.argv[1]
layers = []
for _ in range(20):
    layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
net = torch.nn.Sequential(*layers).eval()
x = torch.ones(8, 64)
gc.collect()  # (as for pijit's children)
t0 = time.perf_counter()  # (scripting and compiling count: the first call is what they cost)
if mode == "script":
    net = torch.jit.script(net)
elif mode == "compile":
    net = torch.compile(net)
with torch.no_grad():
    net(x)
t1 = time.perf_counter()
print(json.dumps({"first_ms": (t1 - t0) * 1e3}))
"""


def torch_rows(runs):
    """(mode, median first-call ms) of PyTorch's MLP per mode it can run, or a reason it cannot."""
    py = "/usr/bin/python3"
    probe = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    if probe.returncode != 0:
        return "PyTorch is not installed for %s (apt install python3-torch)" % py
    version = probe.stdout.strip()
    modes = ["eager", "script"] + (["compile"] if int(version.split(".")[0]) >= 2 else [])
    rows = []
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for mode in modes:
        times = []
        for _ in range(runs):
            out = subprocess.run([py, "-c", TORCH_CHILD, mode], capture_output=True, text=True, env=env, timeout=600)
            if out.returncode != 0:
                return "PyTorch %s: %s failed: %s" % (version, mode, out.stderr.strip().splitlines()[-1:])
            times.append(json.loads(out.stdout.strip().splitlines()[-1])["first_ms"])
        rows.append((mode, statistics.median(times)))
    if "compile" not in modes:
        rows.append(("compile", "torch.compile needs PyTorch 2; this is %s" % version))
    return rows


def fresh(kind, mode, cache):
    env = dict(os.environ, OMP_NUM_THREADS="1", PIJIT_CACHE_DIR=cache)
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
    print("  %-6s %10s %10s %7s %10s %7s %9s %9s %9s" % ("model", "eager 1st", "jit cold", "ratio", "jit warm", "ratio",
                                                         "capture", "compile", "warm comp"))
    root = tempfile.mkdtemp(prefix="pijit-bench-cache-")
    try:
        for kind in args.kinds:
            warm_folder = os.path.join(root, kind + "-warm")
            os.mkdir(warm_folder, 0o700)
            fresh(kind, "jit", warm_folder)  # fills it
            # Eager, cold and warm processes take turns: a VM's speed drifts by 10-20% over a run,
            # and each ratio's two sides then meet the same drift.
            eager, cold, warm = [], [], []
            for k in range(args.runs):
                eager.append(fresh(kind, "eager", ""))
                folder = os.path.join(root, "%s-cold%d" % (kind, k))  # an empty cache folder each time
                os.mkdir(folder, 0o700)
                cold.append(fresh(kind, "jit", folder))
                warm.append(fresh(kind, "jit", warm_folder))
            if not all(w["from_disk"] for w in warm):
                raise SystemExit("%s: a warm run did not load its entries from the compile cache" % kind)

            def med(rows, key):
                return statistics.median(r[key] for r in rows)
            e1, c1, w1 = med(eager, "first_ms"), med(cold, "first_ms"), med(warm, "first_ms")
            print("  %-6s %7.2f ms %7.2f ms %6.2fx %7.2f ms %6.2fx %6.2f ms %6.2f ms %6.2f ms"
                  % (kind, e1, c1, c1 / e1, w1, w1 / e1, med(cold, "capture_ms"), med(cold, "compile_ms"),
                     med(warm, "compile_ms")))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    peer = torch_rows(args.runs) if "mlp" in args.kinds else None
    if isinstance(peer, str):
        print("  PyTorch peer (the same 20-layer MLP): %s" % peer)
    elif peer:
        print("  PyTorch peer, the same 20-layer MLP's first call in a fresh process (system Python):")
        for mode, ms in peer:
            print("    %-8s %s" % (mode, "%.2f ms" % ms if isinstance(ms, float) else ms))


if __name__ == "__main__":
    main()
