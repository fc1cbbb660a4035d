"""`a is b` between two list arguments: capture answers it from the objects it was given, but only
guards the identity of plain instances (need_identity), not of lists: the graph captured for two
distinct lists is reused when the same list is passed twice, and answers False. Exits 1 when
plain and jitted differ.

    PYTHONPATH=pyscripts python tests/python/opdiff_found/is_between_list_arguments.py
"""
import sys

import pijit as pj


def f(x, a, b):
    return x * 1, a is b


def run(fn):
    l = [1, 2]
    return [fn(pj.Tensor([1.0]), l, [1, 2])[1], fn(pj.Tensor([1.0]), l, l)[1]]


plain = run(f)
jitted = run(pj.jit(f))
print("plain: ", plain)
print("jitted:", jitted)
sys.exit(0 if plain == jitted else 1)
