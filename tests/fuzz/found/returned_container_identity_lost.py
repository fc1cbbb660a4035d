"""A container returned twice comes back as two equal but distinct objects.

Found by tests/fuzz (return {'a': rows, 'b': rows} and similar: the snapshot shows a reference
where plain Python returns the same object twice). Same as capture-defects w08.

Status: differed on 3.7 and 3.9 when the fuzzer found it; plain and jitted agree since commit
5340ed7 (kept as a regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/returned_container_identity_lost.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import captured, outcome, show, verdict


def f(x):
    d = {'a': x + 1.0}
    return [d, d]

def run(fn):
    r = fn(pj.Tensor([1.0]))
    return show(r[0]['a']), r[0] is r[1]

plain = run(f)
jitted = run(pj.jit(f))

verdict(plain, jitted, [captured("f", 1)])
