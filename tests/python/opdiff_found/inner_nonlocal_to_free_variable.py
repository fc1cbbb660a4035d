"""A function defined inside the jitted function assigns (nonlocal) a variable that the jitted
function itself reads from an enclosing function (a free variable of the jitted code). Capture
refuses the jitted function's own STORE_DEREF to a free variable (B005), but the inlined inner
function's STORE_DEREF reaches the same cell through LOAD_CLOSURE and is simulated on capture's
copy of the cell: the graph bakes in the new value, the real cell is never written, and every
later call returns the first call's result. Exits 1 when plain and jitted differ.

    PYTHONPATH=pyscripts python tests/python/opdiff_found/inner_nonlocal_to_free_variable.py
"""
import sys

import pijit as pj


def outer():
    scale = 2.0

    def root(x):
        def bump():
            nonlocal scale
            scale = scale + 1.0
        bump()
        return x * scale

    def get():
        return scale
    return root, get


def run(jit):
    root, get = outer()
    fn = pj.jit(root) if jit else root
    return [fn(pj.Tensor([1.0])).tolist() for _ in range(3)], get()


plain = run(False)
jitted = run(True)
print("plain: ", plain)
print("jitted:", jitted)
sys.exit(0 if plain == jitted else 1)
