"""An op whose result is never used is dropped from the graph together with the TypeError its dtype
check raises (relu/clamp of a Bool tensor): plain Python raises, the jitted function returns.

Found by tests/fuzz (unused list comprehensions and locals over a Bool argument). The same
mechanism as capture-defects e02 (dead code drops a runtime error), which is fixed for index and
shape errors; dtype errors are still dropped -- also inside try/except, where the jitted
function then takes the other path (g; like e01).

    PYTHONPATH=pyscripts python tests/fuzz/found/dead_op_dtype_error_dropped.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import outcome, refused, show, verdict


def f(x, y):
    t = ops.relu(y)            # unused; raises TypeError for a Bool y
    return x

def g(x, y):
    try:
        t = y - y              # unused; bool - bool raises TypeError
        return "try body finished"
    except TypeError:
        pass
    return "handler ran"

x, y = pj.Tensor([1.0, 2.0]), pj.Tensor([True, False])
plain = [outcome(f, x, y), outcome(g, x, y)]
jitted = [outcome(pj.jit(f), x, y), outcome(pj.jit(g), x, y)]

verdict(plain, jitted, [refused("f", "B007"), refused("g", "B007")])
