"""An exception raised after a graph break has one frame more in its traceback when jitted: the
function's frame appears twice, once at the line of the break (the rewritten function calling
the code that resumes after it) and once where the exception was raised; plain Python has the
function's frame once. traceback.extract_tb(e.__traceback__) (function, line) pairs differ.

Found by tests/fuzz (run_fuzz.py --tracebacks, which compares the (function, line) of the
program's frames in an escaping exception's traceback; any program raising after a break).

Status: FIXED: when an exception leaves the rewritten frame through the continuation it called
(a resume function, a loop body, directly or through their own shadow frames), the rewritten
frame's traceback entry is dropped (py::drop_resume_caller_entry, runtime/eval_frame.cc).

    PYTHONPATH=pyscripts python tests/fuzz/found/traceback_gains_a_frame_after_a_graph_break.py     (exit 1: plain and jitted differ)
"""
import traceback

import pijit as pj
from _found import captured, verdict


def risky(t, k):
    if k == 1:
        raise ValueError('risky', k)
    return t * 2.0


def f(x, k):
    y = x + 1.0
    s = float(y.sum())          # a graph break
    z = risky(y, k)
    return z + s


def frames(fn, *a):
    """(function, line relative to f) of each frame of the exception's traceback below here."""
    try:
        fn(*a)
        return "no exception"
    except ValueError as e:
        first = f.__code__.co_firstlineno
        return [(fr.name, fr.lineno - first) for fr in traceback.extract_tb(e.__traceback__)][1:]


def run(fn):
    return [frames(fn, pj.Tensor([1.0, 2.0]), 1), frames(fn, pj.Tensor([1.0, 2.0]), 1)]


plain = run(f)
jitted = run(pj.jit(f))

verdict(plain, jitted, [captured("f", 1)])
