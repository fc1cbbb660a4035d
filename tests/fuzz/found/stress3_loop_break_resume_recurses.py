"""Under stress level 3 (PIJIT_STRESS=3 / pj.set_stress(3)), a loop whose body has a graph break
(a tensor's data read, a branch on a tensor) and, after it, a store in a branch that is never
taken recurses into itself at that store until RecursionError (3.9, 3.7; on 3.7 inside the fuzz
harness the process aborts: "Fatal Python error: Cannot recover from stack overflow"). f: the
break is .item(), the store `t = x; x = x - 1`; g: the break is a branch on a tensor, the store
`d = 1` in an if/elif inside an outer if/elif. Plain Python, pj.jit and stress levels 1 and 2
all return.

Found by tests/fuzz with PIJIT_STRESS=3 (objects programs of seed 41: 4100657 and of seed 43:
4300273, minimised; no user object is needed). The harness ran every stress level as 1 until it
passed the level through.

Status: FIXED (differed on 3.7 and 3.9 at commit b075191; kept as a regression program). Cause: a
resume function made while capturing a resume function took its maker's prologue length
(CaptureOptions::first_break_index) instead of its own, so stress 3 broke inside its longer
prologue (on a stack value capture refuses: the marker a loop body holds for a local the
iteration may leave unbound) and resumed where it began, one frame deeper each time; make_candidate
(runtime/eval_frame.cc) now measures each code's own prologue.

    PYTHONPATH=pyscripts python tests/fuzz/found/stress3_loop_break_resume_recurses.py     (exit 1: plain and jitted differ)
"""
import sys

import pijit as pj
from _found import broke, captured, outcome, verdict


def f(x):
    for i in (1,):
        b = x.sum().item()          # reads the data: a graph break
        for k in range(3):
            if b is None:           # never taken
                t = x
                x = x - 1
    return x


def g(x, n):
    w = 0
    while w < 2:
        w += 1
        if n > 2:
            if (x > 0).any():       # a branch on a tensor: a graph break
                pass
            if n == 0:              # never taken
                d = 1
            elif x.ndim > 1:
                pass
        elif n < 0:
            pass
    return w


def run():
    return [outcome(f, pj.Tensor([1.0, 2.0])), outcome(g, pj.Tensor([-2.0]), 3)]


plain = outcome(run)
pj.set_stress(3)
try:
    jitted = outcome(run)   # under stress run's own frame is captured too
finally:
    pj.set_stress(0)

# (one resume graph fewer each since the loop body's "not written" marker is capturable
# (codegen/outline.cc): stress 3 no longer breaks again on it)
# (stress 3's break in `run` before any op runs no graph: not counted as one since issue 45)
# (g's loop body on 3.7-3.9: 3 graphs since a path without ops no longer makes code that has a
# graph on other paths run as it is; 3.10+'s bytecode for it has one path fewer)
verdict(plain, jitted, [broke("run", "B002", 0), broke("f", "B002", 1),
                        broke("g", "B003", 3 if sys.version_info < (3, 10) else 2)])
