"""MAKE_FUNCTION in capture pops the annotations (oparg & 4) and drops them: a function made in
jitted code has an empty __annotations__ where plain Python has the parameter and return
annotations, and code reading them is captured with the wrong answer. Exits 1 when plain and
jitted differ.

    PYTHONPATH=pyscripts python tests/python/opdiff_found/make_function_drops_annotations.py
"""
import sys

import pijit as pj


def f(x):
    def g(a: int, b: "s" = 2) -> str:
        return a
    return x * len(g.__annotations__), sorted(g.__annotations__)


def run(fn):
    y, names = fn(pj.Tensor([1.0]))
    return y.tolist(), names


plain = run(f)
jitted = run(pj.jit(f))
print("plain: ", plain)
print("jitted:", jitted)
sys.exit(0 if plain == jitted else 1)
