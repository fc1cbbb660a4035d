"""A list or dict argument that the function puts into a container it builds and takes back out
((l, 1)[-2], [l][0], [e for e in (l,)][0], max([d], key=len)) is returned as a copy -- not the
caller's object -- and an OrderedDict comes back as a plain dict.

Found by tests/fuzz (the snapshot after the call shows the argument as a reference to the
returned object plainly, as a separate list/dict jitted; 'result: OrderedDict vs dict'). Related
to capture-defects w08 (identity of a container returned twice, fixed) and to cpython-stress.md
RC-1 (materialize copies containers; dict subclasses become dicts).

    PYTHONPATH=pyscripts python tests/fuzz/found/argument_returned_through_container_is_copied.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import captured, outcome, show, verdict


from collections import OrderedDict

def f1(x, l):
    return (l, 1)[-2], x + 1.0

def f2(x, l):
    return [l][0], x + 1.0

def f3(x, l):
    return [e for e in (l,)][0], x + 1.0

def f4(x, d):
    return max([d], key=len), x + 1.0

def run(wrap):
    out = []
    for fn in (f1, f2, f3):
        l = [1.0, 2]
        r = wrap(fn)(pj.Tensor([1.0]), l)
        out.append((fn.__name__, r[0] is l, show(r[1])))
    d = OrderedDict(a=1.0)
    r = wrap(f4)(pj.Tensor([1.0]), d)
    out.append(("f4", r[0] is d, type(r[0]).__name__))
    return out

plain = run(lambda f: f)
jitted = run(pj.jit)

verdict(plain, jitted, [captured("f1", 1), captured("f2", 1), captured("f3", 1), captured("f4", 1)])
