"""Under stress level 3 (PIJIT_STRESS=3 / pj.set_stress(3)), a function whose return reads a
tensor's data (float(x.max()), a graph break) and builds tensors after it recurses into itself at
that line until RecursionError when it is called again with a Tensor subclass (a recompile); the
first call, with a Tensor, returns. Plain Python, pj.jit and stress levels 1 and 2 all return.

Found by tests/fuzz with PIJIT_STRESS=3 (objects programs of seed 41: 4100755, minimised; the
made object it returned is not needed).

Status: FIXED (differed on 3.7 and 3.9 at commit b075191; kept as a regression program). Cause: a
resume function made while capturing a resume function took its maker's prologue length
(CaptureOptions::first_break_index) instead of its own, so stress 3 broke inside its longer
prologue (on a stack value capture refuses: the MyT tensor, in the resume functions of run, whose
frame stress mode captures too) and resumed where it began, one frame deeper each time;
make_candidate (runtime/eval_frame.cc) now measures each code's own prologue.

    PYTHONPATH=pyscripts python tests/fuzz/found/stress3_subclass_recompile_resume_recurses.py     (exit 1: plain and jitted differ)
"""
import pijit as pj
from _found import broke, captured, outcome, verdict


class MyT(pj.Tensor):
    pass


def f(x):
    return float(x.max()), pj.Tensor([0.5]), x, pj.Tensor([-1.5])[0]


def run():
    return [outcome(f, pj.Tensor([0.5, 2.0])), outcome(f, MyT(pj.Tensor([0.0, 1.0])))]


plain = outcome(run)
pj.set_stress(3)
try:
    jitted = outcome(run)   # under stress run's own frame is captured too
finally:
    pj.set_stress(0)

# (stress 3's break in `run` before any op runs no graph: not counted as one since issue 45)
verdict(plain, jitted, [broke("run", "B002", 0), captured("f", 1)])
