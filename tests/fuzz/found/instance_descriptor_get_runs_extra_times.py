"""A user descriptor read through an instance (obj.k, k = Counter() on the class): its __get__ runs
once per call plainly, but more often jitted -- at every capture and guard check -- once the
function recompiles (here because n changes).

Found by tests/fuzz (Count descriptor on Box, read as BOX.c). Like capture-defects w16, which
reads the descriptor through the class (C.k) and is fixed; the instance path is not.

    PYTHONPATH=pyscripts python tests/fuzz/found/instance_descriptor_get_runs_extra_times.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import outcome, refused, show, verdict


class Counter(object):
    n = 0
    def __get__(self, obj, cls):
        Counter.n += 1
        return 2.0

class C(object):
    k = Counter()

c = C()

def f(x, n):
    return x * c.k + n

def run(fn):
    Counter.n = 0
    out = [outcome(fn, pj.Tensor([1.0]), n) for n in (1, 2, 3, 4)]
    return out, "__get__ ran %d times" % Counter.n

plain = run(f)
jitted = run(pj.jit(f))

verdict(plain, jitted, [refused("f", "B005")])
