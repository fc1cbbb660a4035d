"""A Tensor subclass's __add__ is ignored by the jitted function: x + x on a MyT argument runs
Tensor.__add__.

Found by tests/fuzz (class MyT(pj.Tensor) with __add__ overridden, X = MyT(...) as an argument).
Same as capture-defects w03.

Status: differed on 3.7 and 3.9 when the fuzzer found it; plain and jitted agree since commit
0ac63a2 (kept as a regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/tensor_subclass_operator_ignored.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import outcome, refused, show, verdict


class MyT(pj.Tensor):
    def __add__(self, other):
        return pj.Tensor.__add__(self, other) * 2.0

def f(x):
    return x + x

x = MyT(pj.Tensor([1.0, -2.0]))
plain = outcome(f, x)
jitted = outcome(pj.jit(f), x)

verdict(plain, jitted, [refused("f", "B009")])
