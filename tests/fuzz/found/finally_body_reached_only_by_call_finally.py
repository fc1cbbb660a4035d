"""Python 3.8 (its finally bodies are subroutines): a graph break right before `return` inside a
try/finally (after the try's POP_BLOCK, at CALL_FINALLY) gives a resume function whose
SETUP_FINALLY lies in code it never runs. pijit's stack-depth analysis, like compile.c's, did not
follow CALL_FINALLY into the finally body and reached the body only from that dead SETUP_FINALLY:
the body's stack went uncounted, the resume function's frame was too small, and running the body
wrote past the frame (a heap overflow: SIGSEGV later, or PYTHONMALLOC=debug's "bad trailing pad
byte"). On 3.7 the break was placed inside the finally body instead, with the return marker
(WHY_RETURN) on the stack, and assembling the resume function failed (B019, an internal error).

Found by tests/fuzz (program 100235 of seed 1 under PIJIT_STRESS=2; it crashed the worker only
when program 100237 ran after it), minimised by hand.

Status: FIXED: a finally body that only a CALL_FINALLY reaches is counted from that call, at its
depth + 6, as the handler would enter it (codegen/assembler.cc stack_depths); and no graph break
is placed while a finally body's own state (3.7's markers, 3.8's NULL or return address) is on
the simulated stack (capture/simulator.cc run_frame).

    PYTHONMALLOC=debug PYTHONPATH=pyscripts python tests/fuzz/found/finally_body_reached_only_by_call_finally.py
"""
import gc

import pijit as pj
from pijit import ops
from _found import captured, outcome, verdict

G_N = 2


def f(x, y):
    t1 = ops.gelu(pj.Tensor(0.0), 'tanh')
    try:
        return {'out': x.neg(), 'n': (-2 - G_N)}
    finally:
        for e3 in (y, x.unsqueeze(0)):
            for _g in fs4:  # noqa: F821 (unbound: raises inside the finally body, deep in its stack)
                t5 = t5 + _g(t5)  # noqa: F821


def run(fn):
    out = []
    for _ in range(3):
        out.append(outcome(fn, pj.Tensor([3.0, -2.0, 1.0]), pj.Tensor([3.0, 1.0, -0.5])))
    gc.collect()  # (frees the frames: PYTHONMALLOC=debug checks their ends there)
    return out


plain = run(f)
jitted = run(pj.jit(f))

verdict(plain, jitted, [captured("f", 1)])
