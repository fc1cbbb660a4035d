"""nn.LSTM (issue 42), side by side in one run, 1 thread by default: a 2-layer LSTM, input and
hidden size 256, sequence 32, batch 16 (seq-first), eager vs jitted, forward alone and a training
step (LSTM + Dense head, cross entropy, SGD; TrainOneStepCell). With PyTorch importable (the
system python3: Debian's python3-torch) its nn.LSTM runs the same forward and step too.
Times are the best of interleaved rounds (a shared machine's noise only ever adds).

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_rnn.py [--threads N] [--seq T]
"""
import argparse
import time

import pijit as pj
from pijit import nn


class Head(nn.Cell):
    def __init__(self, size):
        super().__init__()
        self.rnn = nn.LSTM(size, size, 2)
        self.fc = nn.Dense(size, 10)

    def construct(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    pj.set_num_threads(args.threads)
    size, batch = 256, 16
    pj.set_seed(0)
    x = pj.randn(args.seq, batch, size)
    y = pj.Tensor([i % 10 for i in range(batch)])

    def step(jit):
        pj.set_seed(0)
        head = Head(size)
        s = nn.TrainOneStepCell(nn.WithLossCell(head, nn.CrossEntropyLoss()), nn.SGD(head.trainable_params(), 0.01))
        return head, (pj.jit(s) if jit else s)

    head, eager_step = step(False)
    jhead, jit_step = step(True)
    jforward = pj.jit(jhead.rnn)
    sides = {"forward eager": lambda: float(head.rnn(x)[0][-1, 0, 0]),
             "forward jit": lambda: float(jforward(x)[0][-1, 0, 0]),
             "train step eager": lambda: float(eager_step(x, y)),
             "train step jit": lambda: float(jit_step(x, y))}
    try:
        import numpy as np
        import torch
        torch.set_num_threads(args.threads)
        tnet = torch.nn.LSTM(size, size, 2)
        tfc = torch.nn.Linear(size, 10)
        topt = torch.optim.SGD(list(tnet.parameters()) + list(tfc.parameters()), lr=0.01)
        tx, ty = torch.from_numpy(np.asarray(x).copy()), torch.from_numpy(np.asarray(y).astype("int64"))

        def torch_step():
            topt.zero_grad()
            loss = torch.nn.functional.cross_entropy(tfc(tnet(tx)[0][-1]), ty)
            loss.backward()
            topt.step()
            return float(loss)

        def torch_forward():
            with torch.no_grad():
                return float(tnet(tx)[0][-1, 0, 0])
        sides["forward torch"] = torch_forward
        sides["train step torch"] = torch_step
    except ImportError:
        pass
    for fn in sides.values():
        fn()
        fn()
    best = {}
    for _ in range(args.rounds):
        for name, fn in sides.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best.get(name, 1e9), time.perf_counter() - t0)
    print("nn.LSTM(%d, %d, num_layers=2), seq %d, batch %d, %d thread(s): best of %d rounds"
          % (size, size, args.seq, batch, args.threads, args.rounds))
    for name, t in best.items():
        print("  %-18s %8.2f ms" % (name, t * 1e3))
    for name, fn in (("forward", jforward), ("train step", jit_step)):
        st = pj.jit_stats(fn)
        print("  jitted %s: %d graph(s), %d break(s)" % (name, st["graphs"], st["breaks"]))


if __name__ == "__main__":
    main()
