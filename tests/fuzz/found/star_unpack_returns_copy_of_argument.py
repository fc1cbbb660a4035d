"""A list argument that passes through a starred unpacking (a, *rest = l, 1) and is returned comes
back as a copy: plain Python returns the caller's list itself. (Plain unpacking a, b = l, 1
keeps the identity.)

Found by tests/fuzz (ln2, *_r = l, n; return (ln2, ...): the snapshot shows the argument list as
a reference to the returned one plainly, as a separate list jitted). The copy is the one
cpython-stress.md RC-1 describes for UNPACK_EX (materialize); no capture-defects/jit reproducer
covers identity.

    PYTHONPATH=pyscripts python tests/fuzz/found/star_unpack_returns_copy_of_argument.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import captured, outcome, show, verdict


def f(x, l):
    a, *rest = l, 1
    return a, x + 1.0

def g(x, l):
    *rest, a = [l, l]
    return rest[0], a, x + 1.0

def run(wrap):
    l = [1.0]
    r1 = wrap(f)(pj.Tensor([1.0]), l)
    r2 = wrap(g)(pj.Tensor([1.0]), l)
    return [r1[0] is l, r2[0] is l, r2[1] is l, show(r1[1])]

plain = run(lambda f: f)
jitted = run(pj.jit)

verdict(plain, jitted, [captured("f", 1), captured("g", 1)])
