"""Layer throughput (eager inference): conv2d, dense/matmul, an MLP and a LeNet-style CNN, in
GFLOP/s against the machine's measured float32 peak and side by side with PyTorch on the system
Python (same weights' shapes, same thread count; Debian's torch with OpenBLAS when installed).

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_layers.py --threads 2
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_eager import best_time, torch_child  # noqa: E402

# (name, flops, builder) — builders get a namespace `L` with the library's pieces.
CONV_CASES = [  # N, C, H, W, K, R, stride, pad
    ("conv 32x64x56x56 k3", (32, 64, 56, 56, 64, 3, 1, 1)),
    ("conv 8x3x224x224 k7s2", (8, 3, 224, 224, 64, 7, 2, 3)),
    ("conv 32x256x14x14 k3", (32, 256, 14, 14, 256, 3, 1, 1)),
]
DENSE_CASES = [("dense 256x1024->1024", (256, 1024, 1024)), ("matmul 2048^3", (2048, 2048, 2048))]


def conv_flops(n, c, h, w, k, r, s, p):
    oh, ow = (h + 2 * p - r) // s + 1, (w + 2 * p - r) // s + 1
    return 2.0 * n * k * oh * ow * c * r * r


def mlp_flops(batch, dims):
    return sum(2.0 * batch * a * b for a, b in zip(dims[:-1], dims[1:]))


def cnn_flops(batch):
    # conv(1->6,k5) on 32x32 -> 28x28, pool, conv(6->16,k5) 14->10, pool, fc 400-120-84-10
    return (conv_flops(batch, 1, 32, 32, 6, 5, 1, 0) + conv_flops(batch, 6, 14, 14, 16, 5, 1, 0)
            + mlp_flops(batch, [400, 120, 84, 10]))


MLP_DIMS = [784, 1024, 1024, 10]


def pijit_cases(threads):
    import pijit as pj
    from pijit import nn, ops
    pj.set_num_threads(threads)
    pj.set_seed(0)
    out = {}
    for name, (n, c, h, w, k, r, s, p) in CONV_CASES:
        x, wt = pj.randn(n, c, h, w), pj.randn(k, c, r, r)
        out[name] = (conv_flops(n, c, h, w, k, r, s, p),
                     lambda x=x, wt=wt, s=s, p=p: ops.conv2d(x, wt, None, s, "pad", p))
    for name, (m, kk, nn_) in DENSE_CASES:
        a, b = pj.randn(m, kk), pj.randn(nn_, kk)
        out[name] = (2.0 * m * kk * nn_, lambda a=a, b=b: ops.dense(a, b))
    mlp = nn.SequentialCell([nn.Dense(784, 1024), nn.ReLU(), nn.Dense(1024, 1024), nn.ReLU(),
                             nn.Dense(1024, 10)])
    xm = pj.randn(128, 784)
    out["mlp 128x784-1024-1024-10"] = (mlp_flops(128, MLP_DIMS), lambda: mlp(xm))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    from pijit import alias
    alias.install_mindspore_alias()
    from lenet import LeNet5
    net = LeNet5()
    xc = pj.randn(64, 1, 32, 32)
    out["lenet5 batch 64"] = (cnn_flops(64), lambda: net(xc))
    return {k: (f, best_time(fn, min_time=0.5, repeat=3)) for k, (f, fn) in out.items()}


def torch_cases(threads):
    import torch
    import torch.nn.functional as TF
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    out = {}
    with torch.no_grad():
        for name, (n, c, h, w, k, r, s, p) in CONV_CASES:
            x, wt = torch.randn(n, c, h, w), torch.randn(k, c, r, r)
            out[name] = lambda x=x, wt=wt, s=s, p=p: TF.conv2d(x, wt, None, s, p)
        for name, (m, kk, nn_) in DENSE_CASES:
            a, b = torch.randn(m, kk), torch.randn(nn_, kk)
            out[name] = lambda a=a, b=b: TF.linear(a, b)
        mlp = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                                  torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                  torch.nn.Linear(1024, 10)).eval()
        xm = torch.randn(128, 784)
        out["mlp 128x784-1024-1024-10"] = lambda: mlp(xm)
        cnn = torch.nn.Sequential(
            torch.nn.Conv2d(1, 6, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2, 2),
            torch.nn.Conv2d(6, 16, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2, 2),
            torch.nn.Flatten(), torch.nn.Linear(400, 120), torch.nn.ReLU(),
            torch.nn.Linear(120, 84), torch.nn.ReLU(), torch.nn.Linear(84, 10)).eval()
        xc = torch.randn(64, 1, 32, 32)
        out["lenet5 batch 64"] = lambda: cnn(xc)
        return {k: best_time(fn, min_time=0.5, repeat=3) for k, fn in out.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--torch-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_child:
        print(json.dumps(torch_cases(args.threads)))
        return 0
    from pijit import _C
    res = pijit_cases(args.threads)
    limits = _C.probe_machine(args.threads)
    tres, note = torch_child(__file__, args.threads)
    print("pijit eager layers vs %s" % note)
    print("machine (measured): float32 FMA peak %.1f GFLOP/s on %d threads"
          % (limits["peak_gflops"], args.threads))
    print("%-28s %10s %10s %10s %12s" % ("case", "pijit GF/s", "torch GF/s", "pijit/torch",
                                         "pijit/peak"))
    for name, (flops, t) in res.items():
        g = flops / t / 1e9
        tg = flops / tres[name] / 1e9 if tres else float("nan")
        print("%-28s %10.1f %10.1f %10.2f %12.2f" % (name, g, tg, g / tg, g / limits["peak_gflops"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
