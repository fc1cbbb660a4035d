"""Training steps (issue 13), side by side in one run, 1 thread by default:

  mlp   MLP batch 32, 784-256-256-10 (Dense + ReLU), cross entropy, SGD with momentum: one
        TrainOneStepCell call jitted (one forward+backward+update graph) vs pijit eager (a tape)
        vs PyTorch eager (forward, backward, optimizer.step) vs oneDNN called directly from C++
        (build/bench_mlp_train_onednn: matmul primitives forward and backward, the loss gradient
        and the update written out by hand)
  cnn   the small CNN of bench_compiler.py (3 x [conv3x3 + BatchNorm + ReLU], 2 max pools, global
        average pool, Dense), batch 8, 3x32x32, training mode, SGD with momentum: jitted vs eager
        vs PyTorch eager

Every side takes 8 new batches in turn, as a data loader gives them: relu's gradient masks change
every step (one batch reused lets a branchy kernel's branch predictor learn them and hides its cost).
For each jitted step: page faults per call (steady state: the plan's buffers are reused) and
whether it was one graph.

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_training.py [--threads N]

PyTorch runs on /usr/bin/python3 (Debian's python3-torch; with libopenblas0 installed its matmuls
use OpenBLAS) with the same thread count.
"""
import argparse
import os
import resource
import subprocess
import time

import pijit as pj
from pijit import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP_DIMS = (784, 256, 256, 10)
MLP_BATCH = 32
CNN_BATCH = 8


BATCHES = 8  # new batches in turn, as a data loader gives them (every side, the C++ reference too)


def best_us(fn, batches, n=48, repeat=5):
    """Best time per step over n steps that take `batches` in turn: relu's gradient masks change
    every step, as in training (one batch reused lets a branchy kernel's predictor learn them)."""
    for args in batches:
        fn(*args)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for i in range(n):
            fn(*batches[i % len(batches)])
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def faults_per_call(fn, *args, calls=20):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn(*args)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / calls


def mlp_net():
    layers = []
    for i, (a, b) in enumerate(zip(MLP_DIMS[:-1], MLP_DIMS[1:])):
        layers += [nn.Dense(a, b)] + ([nn.ReLU()] if i + 2 < len(MLP_DIMS) else [])
    return nn.SequentialCell(layers)


def cnn_net():
    def block(a, b):
        return [nn.Conv2d(a, b, 3, pad_mode="pad", padding=1, has_bias=True), nn.BatchNorm2d(b), nn.ReLU()]
    return nn.SequentialCell(block(3, 16) + [nn.MaxPool2d(2, 2)] + block(16, 32) + [nn.MaxPool2d(2, 2)] +
                             block(32, 64) + [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(64, 10)])


def step_cell(make):
    pj.set_seed(0)
    net = make()
    net.set_train(True)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    return nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)


TORCH = """
import sys, time, torch, torch.nn as tn
torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)
kind = sys.argv[2]
if kind == "mlp":
    dims = %r
    layers = []
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        layers += [tn.Linear(a, b)] + ([tn.ReLU()] if i + 2 < len(dims) else [])
    net = tn.Sequential(*layers)
    data = [(torch.randn(%d, dims[0]), torch.randint(0, dims[-1], (%d,))) for _ in range(8)]
else:
    def block(a, b): return [tn.Conv2d(a, b, 3, padding=1), tn.BatchNorm2d(b), tn.ReLU()]
    net = tn.Sequential(*(block(3, 16) + [tn.MaxPool2d(2, 2)] + block(16, 32) + [tn.MaxPool2d(2, 2)]
                          + block(32, 64) + [tn.AdaptiveAvgPool2d(1), tn.Flatten(), tn.Linear(64, 10)]))
    data = [(torch.randn(%d, 3, 32, 32), torch.randint(0, 10, (%d,))) for _ in range(8)]
net.train()
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
def step(x, y):
    opt.zero_grad()
    loss = tn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
for x, y in data: step(x, y)
best = 1e9
for _ in range(5):
    t = time.perf_counter()
    for i in range(32): step(*data[i %% 8])
    best = min(best, (time.perf_counter() - t) / 32)
print(best * 1e6)
""" % (MLP_DIMS, MLP_BATCH, MLP_BATCH, CNN_BATCH, CNN_BATCH)


def torch_us(threads, kind):
    if not os.path.exists("/usr/bin/python3"):
        return None
    try:
        out = subprocess.run(["/usr/bin/python3", "-c", TORCH, str(threads), kind], capture_output=True, text=True,
                             timeout=300)
        return float(out.stdout.strip()) if out.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def onednn_us(threads):
    exe = os.path.join(ROOT, "build", "bench_mlp_train_onednn")
    if not os.path.exists(exe):
        return None
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([exe, str(MLP_BATCH)] + [str(d) for d in MLP_DIMS], capture_output=True, text=True,
                         env=env, timeout=300)
    return float(out.stdout.split('"us":')[1].split(",")[0].split("}")[0]) if out.returncode == 0 else None


def bench(kind, threads):
    if kind == "mlp":
        make = mlp_net
        batches = [(pj.randn(MLP_BATCH, MLP_DIMS[0]), pj.randint(0, MLP_DIMS[-1], (MLP_BATCH,)))
                   for _ in range(BATCHES)]
    else:
        make = cnn_net
        batches = [(pj.randn(CNN_BATCH, 3, 32, 32), pj.randint(0, 10, (CNN_BATCH,))) for _ in range(BATCHES)]
    eager = step_cell(make)
    jitted = step_cell(make)
    jstep = pj.jit(jitted)
    n = 48 if kind == "mlp" else 16
    before = pj.jit_stats(nn.TrainOneStepCell.construct)  # one code object for every step cell
    te, tj = best_us(eager, batches, n=n), best_us(jstep, batches, n=n)
    st = pj.jit_stats(jstep)
    st = {k: st[k] - before[k] for k in ("graphs", "breaks")}
    faults = faults_per_call(jstep, *batches[0])
    print("%s: one SGD-with-momentum training step (forward, cross entropy, backward, update)" % kind)
    print("  jitted %.1f us (%d graph(s), %d break(s), %.1f page faults per call), pijit eager %.1f us (%.2fx)"
          % (tj, st["graphs"], st["breaks"], faults, te, te / tj))
    t = torch_us(threads, kind)
    print("  PyTorch eager %s" % ("%.1f us: pijit jitted is %.2fx its time" % (t, tj / t) if t else "not installed"))
    if kind == "mlp":
        ref = onednn_us(threads)
        print("  oneDNN called directly (C++) %s" % ("%.1f us: pijit jitted is %.2fx" % (ref, tj / ref) if ref
                                                     else "not built (build/bench_mlp_train_onednn)"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("only", nargs="*", help="mlp and/or cnn (default: both)")
    args = ap.parse_args()
    pj.set_num_threads(args.threads)
    for kind in args.only or ["mlp", "cnn"]:
        bench(kind, args.threads)


if __name__ == "__main__":
    main()
