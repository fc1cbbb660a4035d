"""One tensor passed as two arguments: capture gives each argument path its own symbolic tensor,
so hashing them (a set display, a dict display, a set comprehension, d[t] = v) sees two keys where
plain Python sees one, and no guard says whether the two arguments are one object: the graph
built for f(a, a) says len({a, b}) == 2, and the graph built for f(a, b) is reused for f(a, a).
Exits 1 when plain and jitted differ.

    PYTHONPATH=pyscripts python tests/python/opdiff_found/tensor_identity_hashing.py
"""
import sys

import pijit as pj


def f(a, b):
    d = {}
    d[a] = 1
    d[b] = 2
    return len({a, b}), len({a: 1, b: 2}), len({t for t in (a, b)}), len(d)


def run(fn):
    x = pj.Tensor([1.0, 2.0])
    return [fn(x, x), fn(x, pj.Tensor([1.0, 2.0])), fn(x, x)]


plain = run(f)
jitted = run(pj.jit(f))
print("plain: ", plain)
print("jitted:", jitted)
sys.exit(0 if plain == jitted else 1)
