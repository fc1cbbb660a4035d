"""Python 3.7 only: return (or continue) inside try: ... finally: leaves the frame without running
the finally block -- its writes, its exceptions and a return in it are lost.

Found by tests/fuzz on 3.7 (an UnboundLocalError raised in a finally clause vanished; BOX.w = s
and G_S = 0.25 in finally clauses were lost; continue through finally skipped the doubling).
Same root cause as cpython-stress.md RC-8. On 3.9 (CALL_FINALLY/POP_FINALLY) plain and jitted
agree.

Status: differed on 3.7 when the fuzzer found it; plain and jitted agree since commit d175a63
(kept as a regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/py37_return_through_finally_skips_finally.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import captured, outcome, refused, show, verdict


def g1(x):
    try:
        return x + 1.0
    finally:
        return x * 3.0           # overrides the return value

def g2(x):
    y = [x]
    try:
        return y
    finally:
        y.append(x * 2.0)        # changes the returned list

def g3(x):
    y = x
    for i in range(3):
        try:
            if i == 1:
                continue
            y = y + 1.0
        finally:
            y = y * 2.0          # runs on continue too
    return y

def g4(x):
    try:
        return x + 1.0
    finally:
        x.nosuch                 # AttributeError replaces the return

x = pj.Tensor([1.0])
plain = [outcome(g, x) for g in (g1, g2, g3, g4)]
jitted = [outcome(pj.jit(g), x) for g in (g1, g2, g3, g4)]

if sys.version_info[:2] == (3, 7):
    # 3.7 refuses continue through finally (g3). g4 breaks before the finally body (not inside it,
    # with the return marker on the stack, whose resume function could not be assembled: B019
    # until finally_state_on_stack covered 3.7's markers)
    expect = [captured("g1", 1), captured("g2", 1), refused("g3", "B016"), captured("g4", 1)]
else:
    expect = [captured("g1", 1), captured("g2", 1), captured("g3", 1), captured("g4", 1)]
verdict(plain, jitted, expect)
