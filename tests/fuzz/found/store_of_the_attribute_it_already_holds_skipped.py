"""`BOX.t = x` where BOX.t already held that very tensor was skipped as a no-op, with no guard that
it still does: a later call given another tensor skipped the store too, and BOX.t kept the old one.

Found by tests/fuzz (seed 43, program 4300317, Python 3.7: global BOX: ref vs Tensor).

Status: differed when the fuzzer found it; plain and jitted agree since the session-14 review commit
(the skip now guards `BOX.t is x`).

    PYTHONPATH=pyscripts python tests/fuzz/found/store_of_the_attribute_it_already_holds_skipped.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import captured, outcome, show, verdict


class Box(object):
    pass


def run(jit):
    box = Box()

    def f(x, n):
        d = {"b": n}
        box.t = x

    fn = pj.jit(f) if jit else f
    x = pj.Tensor([1.0, 1.0, 1.0])
    out = []
    for arg, n in ((x, 3), (x, 1), (pj.Tensor([-2.0, 1.25, 0.0]), 1)):
        out.append(outcome(fn, arg, n))
        out.append(box.t is arg)
    return out


plain = run(False)
jitted = run(True)
verdict(plain, jitted, [captured("f", 3)])
