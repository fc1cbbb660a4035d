"""Under stress level 2 (PIJIT_STRESS=2 / pj.set_stress(2)), where a frame capture refused runs
through pijit's re-assembled bytecode in a shadow frame, an exception raised by a base class's
__init__ called through super().__init__() lost the subclass __init__'s frame from its
traceback: traceback.extract_tb gave f, __init__ (the base's) where plain Python gives f,
__init__ (Sub's, at the super() call), __init__ (the base's).

Found by tests/fuzz with PIJIT_STRESS=2 (program 300300765 of seed 3003, minimised: "exception
details (ValueError) [plain under stress]").

Status: FIXED: py::drop_resume_caller_entry drops a rewritten frame's traceback entry when the
exception left through the continuation it called (a resume function or loop body, which plain
Python does not have); it took any frame of the same name and file for a continuation, and both
__init__ are. A continuation also keeps the function's first line: that is compared too.

    PYTHONPATH=pyscripts python tests/fuzz/found/stress2_base_class_init_hides_subclass_frame.py     (exit 1: plain and jitted differ)
"""
import traceback

import pijit as pj
from _found import outcome, refused, verdict


class Base(object):
    def __init__(self, a, b=2):
        self.a = a
        if b != b:
            raise ValueError('b is nan')


class Sub(Base):
    def __init__(self, a, b=0.0):
        super().__init__(a, b)
        self.k = 3


def f(x, s):
    o = Sub(x, s)
    return x * o.k


def run():
    x = pj.Tensor([1.0, 2.0])
    out = [outcome(f, x, 2.0)]
    for _ in range(2):
        try:
            f(x, float('nan'))
            out.append("no exception")
        except ValueError as e:
            first = f.__code__.co_firstlineno
            out.append([(fr.name, fr.lineno - first) for fr in traceback.extract_tb(e.__traceback__)][1:])
    return out


plain = run()
pj.set_stress(2)
try:
    jitted = run()   # under stress every frame is a capture candidate, f's and both __init__'s
finally:
    pj.set_stress(0)

verdict(plain, jitted, [refused("f", "B007")])
