"""A closure's nonlocal write, made by a function the jitted frame calls (inlined), is dropped: the
cell keeps its old value, and the frame's own later reads of the cell see the old value too.

Found by tests/fuzz (programs with CL, CL_SET = _mk(k) and CL_SET(v) in the captured body).

Status: differed on 3.7 and 3.9 when the fuzzer found it; plain and jitted agree since commit
ac2e413 (kept as a regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/closure_cell_write_by_inlined_function_lost.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import captured, outcome, show, verdict


def make(k):
    def scale(t):
        return t * k
    def setk(v):
        nonlocal k
        k = v
    def get():
        return k
    return scale, setk, get

def run(wrap):
    scale, setk, get = make(1.5)
    def f(x, v):
        setk(v)                 # rebinds make()'s cell k
        return scale(x)         # reads it again
    r = outcome(wrap(f), pj.Tensor([1.0]), 3)
    return r, repr(get())

plain = run(lambda f: f)
jitted = run(pj.jit)

verdict(plain, jitted, [captured("f", 1)])
