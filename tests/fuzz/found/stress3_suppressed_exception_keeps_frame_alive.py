"""Under stress level 3 (PIJIT_STRESS=3 / pj.set_stress(3)), once the exception class has
changed (E.code set between calls), an exception raised in a with block and suppressed by its
__exit__ leaves the function's frame in a reference cycle: a generator the function leaves
suspended is not closed when the function returns, so its finally clause (LOG.append) runs only
at the next garbage collection instead of at the return. Plain Python, pj.jit and stress levels
1 and 2 close it at the return (LOG has two entries after the second call, one under stress 3;
gc.collect() then adds the missing one).

Found by tests/fuzz with PIJIT_STRESS=3 (program 9700248 of seed 97 with --exceptions 1
--generators 1 --contexts 1 --dunders 1, minimised: "global G_CLOG: list length [plain under
stress]").

Status: FIXED: the break fell at the raise, with the exception on the value stack; the resume
function took it as an argument and kept it in that local, which the exception's traceback held
(a cycle). The resume prologue now deletes each stack argument once it is on the stack
(codegen/rewrite.cc emit_resume_code).

    PYTHONPATH=pyscripts python tests/fuzz/found/stress3_suppressed_exception_keeps_frame_alive.py     (exit 1: plain and jitted differ)
"""
import pijit as pj
from _found import captured, outcome, refused, verdict

LOG = []


class E(ValueError):
    pass


def risky(k):
    if k == 1:
        raise E('risky', 1)


def gfin(t):
    try:
        yield t - 1.0
    finally:
        LOG.append('gfin')          # runs when the generator is closed (dropped)


class Mgr(object):
    def __enter__(self):
        pass

    def __exit__(self, et, ev, tb):
        return True                 # suppresses


def f(x, d):
    with Mgr():
        risky(len(d))               # raises on the second call (d lost 'b')
    g = gfin(x * 0.25)
    a = next(g)                     # left suspended: closed when f returns
    d.pop('b', None)
    return a


def run():
    del LOG[:]
    out = []
    d = {'a': 0.25, 'b': 3}
    out.append((outcome(f, pj.Tensor([3.0, -1.5]), d), list(LOG)))
    E.code = -1.0
    out.append((outcome(f, pj.Tensor([3.0, -1.5]), d), list(LOG)))
    del E.code
    return out


plain = outcome(run)
pj.set_stress(3)
try:
    jitted = outcome(run)   # under stress every frame is captured, f's included
finally:
    pj.set_stress(0)

# (stress 3's break in `risky` before any op runs no graph: not counted as one since issue 45)
verdict(plain, jitted, [captured("risky", 1), refused("f", "B005")])
