"""A `with` block whose manager class's __exit__ is a function with another __name__
(Mgr.__exit__ = _exit_true), with a store into the caller's list inside the block: the jitted
function raises AttributeError: 'Mgr' object has no attribute '_exit_true' (the exit method is
looked up by the function's own name instead of '__exit__'); plain Python runs the block and
returns.

Found by tests/fuzz (program 200288 of seed 2 with --contexts 1, minimised: drive() swapped
Mgr.__exit__ between calls: "outcome: ok vs raise AttributeError").

Status: differed on 3.7 and 3.9 when the fuzzer found it (commit ccbe8b5); plain and jitted
agree since commit b990699 (kept as a regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/with_exit_named_otherwise_looked_up_by_name.py     (exit 1: plain and jitted differ)
"""
import pijit as pj
from _found import captured, outcome, show, verdict


class Mgr(object):
    def __init__(self, v):
        self.v = v

    def __enter__(self):
        return self.v


def _exit_true(self, et, ev, tb):
    return True


Mgr.__exit__ = _exit_true


def f(x, lt):
    with Mgr(x * x) as m:
        lt[0] = m.flatten()
    return x


def run(fn):
    lt = [None]
    return outcome(fn, pj.Tensor([1.0, 2.0]), lt), show(lt)


plain = run(f)
jitted = run(pj.jit(f))

verdict(plain, jitted, [captured("f", 1)])
