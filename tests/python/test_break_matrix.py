"""The graph-break matrix (issue 11): every placement of a break (first and last statement, in a
loop, in calls two and three deep, under with, try/except and try/finally, in if/elif/while
conditions, in and/or, with many live locals, mid-expression) times every kind of break (a call
capture cannot simulate, a value read from a tensor) times every kind of side effect around it
(none, print, attribute store, global store, append to the caller's list, item store into the
caller's dict, nonlocal store). Each function runs plainly and jitted, three times, comparing
results, printed output and the final state of the global, the attributes and the containers;
where the placement allows a break, the captured part before it must be a graph."""
import contextlib
import io
import sys
import textwrap
import unittest

import pijit as pj
from pijit import ops
from jit_compare import no_stress, say, show

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor


class Box:
    pass


class Ctx:
    def __enter__(self):
        print("enter")
        return self

    def __exit__(self, *exc):
        print("exit", exc[0].__name__ if exc[0] else None)
        return False


CTX = Ctx()  # a manager the function reads (not one it makes): a break inside re-enters the block


BREAKS = {
    "call": "say('break', {v}.shape)",          # B008: a call capture cannot simulate
    "read": "float({v}.sum())",                 # B002: reads a tensor's value
}

EFFECTS = {
    "none": "pass",
    "print": "print('effect', {v})",
    "attr": "box.v = {v}",
    "global": "G = {v}",
    "append": "log.append({v})",
    "item": "d['k'] = {v}",
    "nonlocal": "cell = {v}",
}

# Each placement: the body of f(x, box, log, d) with {B} (the breaking expression, on y) and {E1},
# {E2} (effects before and after it). `expect_break`: a break with a captured prefix is possible.
PLACEMENTS = {
    "first": ("""
        {B}
        {E1}
        y = x * 2.0
        {E2}
        return y + 1.0
    """, False),
    "middle": ("""
        y = x * 2.0
        {E1}
        {B}
        {E2}
        return y + 1.0
    """, True),
    "last": ("""
        y = x * 2.0
        {E1}
        z = y + 1.0
        {E2}
        return ({B}, z)
    """, True),
    "loop": ("""
        y = x * 2.0
        for i in range(3):
            y = y + i
            {E1}
            {B}
        {E2}
        return y
    """, False),
    "while": ("""
        y = x * 2.0
        i = 0
        while i < 2 and {B} is not None:
            y = y * 2.0
            {E1}
            i += 1
        {E2}
        return y
    """, False),
    "nested2": ("""
        y = x * 2.0
        r = inner(y) + 1.0
        {E2}
        return r
    """, True),
    "nested3": ("""
        y = x * 2.0
        r = middle(y) + 1.0
        {E2}
        return r
    """, True),
    "with": ("""
        y = x * 2.0
        with Ctx():
            {E1}
            {B}
            y = y + 1.0
        {E2}
        return y
    """, False),
    "with_global": ("""
        y = x * 2.0
        with CTX:
            {E1}
            {B}
            y = y + 1.0
        {E2}
        return y
    """, True),
    "try_except": ("""
        y = x * 2.0
        try:
            {E1}
            {B}
            y = y / 0 if False else y + 1.0
        except ZeroDivisionError:
            y = y - 1.0
        {E2}
        return y
    """, True),
    "try_finally": ("""
        y = x * 2.0
        try:
            {E1}
            {B}
        finally:
            y = y + 3.0
        {E2}
        return y
    """, True),
    "if_condition": ("""
        y = x * 2.0
        {E1}
        if {B} is None:
            y = y + 1.0
        elif y is not None:
            y = y - 1.0
        {E2}
        return y
    """, True),
    "elif_condition": ("""
        y = x * 2.0
        {E1}
        if y is None:
            y = y + 1.0
        elif {B} is not None:
            y = y - 1.0
        {E2}
        return y
    """, True),
    "and_or": ("""
        y = x * 2.0
        {E1}
        z = (y is not None and {B}) or y
        {E2}
        return y + 1.0, z is not None
    """, True),
    "many_locals": ("""
        a0, a1, a2, a3, a4 = x + 1.0, x + 2.0, x + 3.0, x + 4.0, x + 5.0
        b0, b1, b2, b3, b4 = 1, 2.5, "s", (1, 2), [x]
        y = a0 * a1 - a2 + a3 * a4
        {E1}
        {B}
        {E2}
        return y, b0, b1, b2, b3, len(b4), a0 + a4
    """, True),
    "mid_expression": ("""
        y = x * 2.0
        {E1}
        r = y + ops.relu(y) * ({B} is None) + [y, 3][0] * 2.0
        {E2}
        return r
    """, True),
}


# The functions nested2 and nested3 call (two and three deep): they exist before f is called.
HELPERS = """
    def inner(y, box, log, d):
        global G
        nonlocal cell
        y = y - 1.0
        {E1}
        {B}
        return y * 3.0

    def middle(y, box, log, d):
        return inner(y * 5.0, box, log, d) - 2.0
"""


def make(placement, brk, effect):
    body, _ = PLACEMENTS[placement]
    body = textwrap.dedent(body)
    nested = placement.startswith("nested")
    if nested:
        body = body.replace("inner(y)", "inner(y, box, log, d)").replace("middle(y)", "middle(y, box, log, d)")
    b = BREAKS[brk].format(v="y" if nested or "{B}" not in body.split("y =")[0] else "x")
    src = "def make():\n    cell = None\n"
    if nested:
        src += textwrap.dedent(HELPERS).replace("\n", "\n    ").format(B=b, E1=EFFECTS[effect].format(v="y"))
        src += "\n"
    src += "    def f(x, box, log, d):\n        global G\n        nonlocal cell\n"
    src += textwrap.indent(body.format(B=b, E1=EFFECTS[effect].format(v="x"), E2=EFFECTS[effect].format(v="x + 1.0")),
                           " " * 8)
    src += "    return f, lambda: cell\n"
    ns = {"say": say, "Box": Box, "Ctx": Ctx, "CTX": CTX, "ops": ops, "pj": pj, "G": None}
    exec(compile(src, "<matrix %s/%s/%s>" % (placement, brk, effect), "exec"), ns)
    f, cell = ns["make"]()
    return f, cell, ns, src


def run(fn, ns, cell, x):
    box, log, d = Box(), [], {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            r = ("ok", show(fn(x, box, log, d)))
        except Exception as e:
            r = ("raises", type(e).__name__, str(e))
    return r, out.getvalue(), show(box), show(log), show(d), show(ns["G"]), show(cell())


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class BreakMatrix(unittest.TestCase):
    def check(self, placement, brk):
        for effect in EFFECTS:
            with self.subTest(effect=effect):
                f, cell, ns, src = make(placement, brk, effect)
                plain_f, plain_cell, plain_ns, _ = make(placement, brk, effect)
                jf = pj.jit(f)
                for k in range(3):
                    x = T([1.0 + k, -2.0])
                    with no_stress():
                        want = run(plain_f, plain_ns, plain_cell, x)
                    self.assertNotEqual(want[0][:2], ("raises", "NameError"), src)  # the program itself is sound
                    self.assertEqual(run(jf, ns, cell, x), want, src)
                st = pj.jit_stats(jf)
                if PLACEMENTS[placement][1]:  # the part before the break is a graph, on every call
                    self.assertGreaterEqual(st["breaks"], 1, (src, st["break_reasons"]))
                    self.assertEqual(sum(e["hits"] for e in st["entries"] if e["graph_break"]), 3, (src, st))


for _p in PLACEMENTS:
    for _b in BREAKS:
        setattr(BreakMatrix, "test_%s_%s" % (_p, _b), (lambda p, b: lambda self: self.check(p, b))(_p, _b))


if __name__ == "__main__":
    unittest.main()
