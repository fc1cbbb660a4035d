"""A tuple built at run time from values capture guards as constants ((0.25 < 2, x.size)) comes
back as one and the same tuple object on every call of the jitted function, where plain Python
builds a new tuple each call (LOG[0] is LOG[1] / f(x) is f(y) are False plainly, True jitted).

Found by tests/fuzz (program 700665 of seed 7, minimised: an inlined Cell.construct returning
((0.25 < 2), x.size), appended to a global list by two calls: "global G_LOG: tuple vs ref").
Not specific to user objects: the generator made the same program before they existed.

Status: FIXED (differed on 3.7 and 3.9 at commit b075191; kept as a regression program). Cause:
plan_return (capture/sim_values.cc) planned every tuple of constants as one Const, so a tuple
capture built (BUILD_TUPLE, tuple(), x.shape) was loaded as the object made at capture time;
now only the simulated code's own constants and constants read from the frame stay Const, and
other tuples are rebuilt on each call.

    PYTHONPATH=pyscripts python tests/fuzz/found/tuple_of_guarded_constants_is_one_object.py     (exit 1: plain and jitted differ)
"""
import pijit as pj
from _found import captured, show, verdict

LOG = []


def g(x):
    return (0.25 < 2), x.size


def f(x):
    LOG.append(g(x))
    return (0.25 < 2), x.size


def run(fn):
    del LOG[:]
    a = fn(pj.Tensor([0.0, 1.0, 2.0]))
    b = fn(pj.Tensor([5.0, 1.0, 2.0]))
    return show(a), show(b), a is b, LOG[0] is LOG[1]


plain = run(f)
jitted = run(pj.jit(f))

verdict(plain, jitted, [captured("f", 1)])
