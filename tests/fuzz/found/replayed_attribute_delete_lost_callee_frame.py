"""`del obj.attr` and `del G` inside a function the captured one calls: capture replayed them after
the graph, from the captured function's line. Where the attribute (or global) was missing, the
replay raised the right AttributeError (NameError), but its traceback had lost the called
function's frames.

Found by tests/fuzz (program 2300303136 of seed 23003 with --objects 1: Net.construct, called from
the jitted Model.construct, runs `del BOX.extra` on an object without it; "exception details
(AttributeError)": the traceback's frames differed). Session 22 fixed the same for item effects
(replayed_item_delete_lost_callee_frame.py) in store_item alone.

Status: FIXED (capture/sim_effects.cc not_in_callee): a deferred store or delete that may fail at
replay (an item, an attribute deleted or stored through a class's own __setattr__, a global
deleted), inside a called function, stops capture there, so the call runs for real. (A print or
log line inside a called function still replays.)

    PYTHONPATH=pyscripts python tests/fuzz/found/replayed_attribute_delete_lost_callee_frame.py     (exit 1: plain and jitted differ)
"""
import traceback

import pijit as pj
from pijit import nn
from _found import refused, show, verdict


class Box(object):
    pass


BOX = Box()
G_X = 1.0


class Net(nn.Cell):
    def construct(self, x):
        del BOX.extra           # AttributeError once it is gone
        return x * 2.0


def drop_global(x):
    global G_X
    del G_X                     # NameError once it is gone
    return x - 1.0


NET = Net()


class Model(nn.Cell):
    def construct(self, x, how):
        if how == 0:
            return NET(x) + 1.0
        return drop_global(x) + 1.0


def outcome(fn, *a):
    try:
        return ("ok", show(fn(*a)))
    except Exception as e:  # the frames too, below the call made here
        frames = [(t.name, t.line) for t in traceback.extract_tb(e.__traceback__)]
        return ("raises", type(e).__name__, str(e), [fr for fr in frames if fr[0] not in ("outcome", "__call__")])


def run(fn):
    global G_X
    out = []
    for how in range(2):
        BOX.extra = 1
        G_X = 1.0
        for _ in range(3):
            out.append(outcome(fn, pj.Tensor([1.0, -2.0]), how))
    return out


model = Model()
plain = run(model)
jitted = run(pj.jit(model))

verdict(plain, jitted, [refused("Model", "B005")])
