"""A view of a constant tensor returned by the jitted function is the graph's constant itself: when
the caller writes into the result, the next call returns the written values.

Found by tests/fuzz (return pj.Tensor([0.25])[-1:] or .reshape(...), then the driver writes into
the result with v[...] = 100). Same as capture-defects w02.

Status: differed on 3.7 and 3.9 when the fuzzer found it; plain and jitted agree since commit
c0339a0 (kept as a regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/constant_tensor_view_returned.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import captured, outcome, show, verdict


def f(x):
    return pj.Tensor([0.25])[-1:]

def run(fn):
    out = []
    for _ in range(2):
        r = fn(pj.Tensor([1.0]))
        out.append(show(r))
        r[...] = 100.0           # the caller edits what it got back
    return out

plain = run(f)
jitted = run(pj.jit(f))

verdict(plain, jitted, [captured("f", 1)])
