"""An OrderedDict reordered in place (move_to_end) between calls, or before the first one: the
jitted function ran the graph of the old order, or unrolled the dict in its hash-table order.

Found by tests/fuzz with its order-only mutations (fuzz 14000867, 14000884, minimised, against
the build before commit f1dcaf7): move_to_end changes neither the dict's version tag nor its
table, so a keys guard walking PyDict_Next and capture reading PyDict_Keys both saw the old order.

Status: differed on 3.9 before commit f1dcaf7; plain and jitted agree since (kept as a
regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/ordereddict_reorder_missed.py     (exit 1: plain and jitted differ)
"""
from collections import OrderedDict

import pijit as pj
from _found import captured, outcome, verdict


def run(wrap):
    od = OrderedDict([('a', 2.0), ('b', 0), ('c', 4.0)])

    def f(x):
        return x * (list(od.values()) + [0])[0], next(reversed(od.values()), -1), list(od)
    fn = wrap(f)
    x = pj.Tensor([1.0, -2.0])
    out = []
    od.move_to_end('c', last=False)       # before the first call: capture's unrolling order
    out.append(outcome(fn, x))
    od.move_to_end('c')                   # between calls: the guard
    out.append(outcome(fn, x))
    od.move_to_end('b', last=False)
    out.append(outcome(fn, x))
    od.popitem(last=False)
    out.append(outcome(fn, x))
    return out, list(od.items())


plain = run(lambda f: f)
jitted = run(pj.jit)

verdict(plain, jitted, [captured("f", 4)])
