"""del d[k] and l[i] = v / del l[i] on the caller's dict or list, inside a function the captured
one calls: capture replayed them after the graph, from the captured function's line, with nothing
guarding that the key or index was still there. Where it was not (the function itself deleted the
key on the call before), the replay raised the right KeyError or IndexError, but its traceback had
lost the called function's frame.

Found by tests/fuzz (program 2200700896 of seed 22007 with --objects 1 --dunders 1: Box.scale,
called from the captured method, runs `del G_D['a']`; "exception details (KeyError)": the
traceback's frames differed).

Status: FIXED (capture/sim_effects.cc store_item): a constant key is guarded present (or raises in
program order, as plain Python does, when absent), a constant list index in range by the list's
length; an item effect that may still raise in a called function stops capture there, so the call
runs for real.

    PYTHONPATH=pyscripts python tests/fuzz/found/replayed_item_delete_lost_callee_frame.py     (exit 1: plain and jitted differ)
"""
import traceback

import pijit as pj
from _found import captured, show, verdict

G_D = {'a': 1}
G_L = [1.0, 2.0, 3.0]


def drop(t):
    del G_D['a']            # raises KeyError once 'a' is gone
    return t * 2.0


def put(t, i):
    G_L[i] = 5.0            # raises IndexError once the list is too short
    return t + G_L[0]


def cut(t):
    del G_L[2]              # raises IndexError once the list is too short
    return t - 1.0


def f(x, how):
    if how == 0:
        return drop(x) + 1.0
    if how == 1:
        return put(x, 2) + 1.0
    return cut(x) + 1.0


def outcome(fn, *a):
    try:
        return ("ok", show(fn(*a)))
    except Exception as e:  # the frames too: the called function's must be there
        frames = [(t.name, t.line) for t in traceback.extract_tb(e.__traceback__)][1:]
        return ("raises", type(e).__name__, str(e), frames)


def run(fn):
    out = []
    for how in range(3):
        G_D.clear()
        G_D['a'] = 1
        G_L[:] = [1.0, 2.0, 3.0]
        for _ in range(3):
            out.append(outcome(fn, pj.Tensor([1.0, -2.0]), how))
            if how == 1:
                del G_L[-1]   # shorter on each call
    return out


plain = run(f)
jitted = run(pj.jit(f))

# (3 graphs: put's read of G_L[0] after its store is read through the list's overlay since issue 45,
# a graph where it was a break)
verdict(plain, jitted, [captured("f", 3)])
