"""DELETE_FAST of a local that is not bound must raise UnboundLocalError; the captured code
returns normally instead (the handler clears the slot without checking it). Exits 1 when plain
and jitted differ.

    PYTHONPATH=pyscripts python tests/python/opdiff_found/delete_fast_unbound.py
"""
import sys

import pijit as pj


def f(x):
    y = x * 2
    del x
    del x
    return y


def run(fn):
    try:
        return ("returned", fn(pj.Tensor([1.0])).tolist())
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e).__name__, str(e))


plain = run(f)
jitted = run(pj.jit(f))
print("plain: ", plain)
print("jitted:", jitted)
sys.exit(0 if plain == jitted else 1)
