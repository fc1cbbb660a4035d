"""A view of a Parameter, taken after ops.assign wrote it in the same graph and returned, viewed the
graph's own buffer: writing through it did not reach the Parameter, as it does eagerly.

Found by tests/fuzz (seed 30, program 3001564: ops.assign(NET.p, NET.p * k); return
NET.p.T.reshape(NET.p.shape), then the driver writes into the result with v[...] = 100).

Status: differed on 3.7 and 3.9 when the fuzzer found it; plain and jitted agree since the session-13
commit "Capture defect (fuzz 3001564)" (kept as a regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/assigned_parameter_view_returned.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import captured, outcome, show, verdict


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = pj.Parameter(pj.Tensor([1.0, 1.25, 2.0]), name="p")


def run(jit):
    net = Net()

    def f(k):
        ops.assign(net.p, net.p * k)
        return net.p.T.reshape(net.p.shape)
    fn = pj.jit(f) if jit else f
    out = []
    for k in (2.0, -1.0, 0.5):
        r = fn(k)
        out.append(show(r))
        r[...] = 100.0           # the caller writes through the view it got back
        out.append(show(net.p))
    return out

plain = run(False)
jitted = run(True)

verdict(plain, jitted, [captured("f", 2)])
