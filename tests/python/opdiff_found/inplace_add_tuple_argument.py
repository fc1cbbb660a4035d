"""INPLACE_ADD on a tuple argument (`items += (x,)`): capture adds the frame's real tuple without
materializing it, so its items become graph constants and no guard checks its length or items.
A later call with another tuple returns the first call's items (and the first call already loses
the identity of the item). Exits 1 when plain and jitted differ.

    PYTHONPATH=pyscripts python tests/python/opdiff_found/inplace_add_tuple_argument.py
"""
import sys

import pijit as pj


def f(items, x):
    items += (x,)
    return items


def run(fn):
    a = pj.Tensor([1.0])
    r1 = fn((a,), pj.Tensor([2.0]))
    r2 = fn((), pj.Tensor([3.0]))
    return [[t.tolist() for t in r1], r1[0] is a, [t.tolist() for t in r2]]


plain = run(f)
jitted = run(pj.jit(f))
print("plain: ", plain)
print("jitted:", jitted)
sys.exit(0 if plain == jitted else 1)
