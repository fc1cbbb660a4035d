"""A generator suspended inside try/finally, dropped (`g = None`) after a graph break: plain Python
runs its `finally` at the drop; jitted, it ran only when the rest of the function had run, after
the next context manager's __exit__.

Found by tests/fuzz (program 2201202977 of seed 22012 on 3.7, and 2201802067 of seed 22018, with
--generators 1 --contexts 1: the order of the log entries differed).

Causes, three holders of a reference plain Python does not have:
  - the rewritten function called the code after the break (its resume function) through a
    CALL_FUNCTION_EX tuple of its locals and stack values, and kept its own locals;
  - the frame CPython made for a rewritten function kept its fast locals while the shadow frame
    that runs the rewritten code held copies;
  - within captured code, `g = None` only dropped the simulation's reference: the object died
    when the rewritten frame ended, after the effects replayed after the graph.

Status: FIXED. The rewritten function deletes its locals before calling the resume function and
hands them over in a list its frame takes the references from (codegen/rewrite.cc call_resume,
py::call_moving_args); the shadow frame takes the fast locals over (py::shadow_frame; given back
when a failed graph reruns the call eagerly); and capture stops (B023 Finalizer) where code
rebinds or deletes a local holding an object whose finalizer runs code (a generator suspended in
a try or with block, an object with __del__). f is the first case, h the same with the generator
on the value stack (a for loop), k the third.

    PYTHONPATH=pyscripts python tests/fuzz/found/generator_dropped_after_break_finishes_late.py     (exit 1: plain and jitted differ)
"""
import pijit as pj
from _found import captured, show, verdict

LOG = []


class Tracked:
    """Logs when it is freed: capture cannot construct it (it has __del__), a graph break."""
    def __init__(self, v):
        self.v = v

    def __del__(self):
        LOG.append("freed")


class Last:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        LOG.append("last exit")
        return False


def count(n):
    try:
        for i in range(n):
            yield i
    finally:
        LOG.append("count's finally")


def f(x):
    y = x * 3.0 + 1.0
    c = Tracked(y)      # a graph break (capture cannot construct it)
    y = y * c.v
    s = float(y.sum())  # a graph break: c is a local of the code after it
    c = None            # plain Python frees it here
    with Last():
        pass
    return s


def h(x):
    y = x * 3.0 + 1.0
    for i in count(5):  # the generator is on the stack at the break
        y = y + float(y.sum()) * i
        if i == 1:
            break       # plain Python drops it here: its finally runs
    LOG.append("after the loop")
    return y


def k(x):
    y = x * 3.0 + 1.0
    c = Tracked(y)      # a graph break (capture cannot construct it)
    y = y + c.v
    c = None            # plain Python frees it here, before the __exit__ below logs
    with Last():
        pass
    return y * 2.0


def run(fn):
    out = []
    for _ in range(3):
        del LOG[:]
        r = show(fn(pj.Tensor([1.0, -2.0])))
        out.append((r, list(LOG)))
    return out


plain = run(f) + run(h) + run(k)
jitted = run(pj.jit(f)) + run(pj.jit(h)) + run(pj.jit(k))

verdict(plain, jitted, [captured("f", 1), captured("h", 1), captured("k", 1)])
