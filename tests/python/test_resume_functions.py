"""Resume functions on every version that captures (3.7-3.11): at
a graph break the graph runs what came before, the interpreter the instruction that stopped
capture, and a function made of the rest of the original bytecode (itself a capture candidate)
continues with the frame's locals, cells and value stack. Each test runs a function plainly and
jitted and compares what a user sees: results, output, exceptions and their tracebacks, when
objects die, how deep recursion goes, and the graph and break counts.

3.11 is where these were written: its value stack holds NULLs under callables (PUSH_NULL,
LOAD_GLOBAL's), KW_NAMES names a call's keywords, its try and with blocks are exception-table
entries, an argument's cell takes the argument's slot, and CPython's calls keep their own
references to the arguments (py::call_moving_args / run_in_place give the caller's up as the frame
starts).
"""
import gc
import marshal
import os
import sys
import traceback
import types
import unittest
import weakref

import pijit as pj
from pijit import ops

VERSION = sys.version_info[:2]
ON = (3, 7) <= VERSION <= (3, 10) or (VERSION == (3, 11) and os.environ.get("PIJIT_PY311_CAPTURE") != "0")
T = pj.Tensor
LOG = []


def same(a, b):
    if isinstance(a, pj.Tensor):
        return isinstance(b, pj.Tensor) and a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


def outcome(fn, *args, **kw):
    """The result, or the exception's type and text, with LOG as the call left it."""
    del LOG[:]
    try:
        r = ("ok", fn(*args, **kw))
    except Exception as e:  # noqa: BLE001 - compared with eager's
        r = ("raises", type(e).__name__, str(e))
    return r, list(LOG)


def combine(a, b=0.0, c=1.0):
    return a * c + b


def nested_call(x):
    y = x * 2.0
    # combine and its NULL wait on the stack while float() stops capture (a graph break)
    return combine(y, float(y.sum()))


def keyword_call(x):
    y = ops.exp(x)
    return combine(y, c=3.0, b=float(y.sum()))  # 3.11: KW_NAMES, then PRECALL and CALL


def branch(x):
    y = x * 3.0
    if float(y.sum()) > 0:  # the break's jump: one resume function per side
        return y + 1.0
    return y - 1.0


def caught(x, key):
    y = x * 2.0
    try:
        n = float(y.sum())  # the break is inside the try: the resume function enters it again
        z = y / n
        LOG.append({"a": 1}[key])
    except KeyError as e:
        LOG.append("caught " + str(e))
        z = y + 1.0
    return z


class Ctx:
    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append("exit " + (exc[0].__name__ if exc[0] else "None"))
        return exc[0] is ZeroDivisionError  # swallows that one


def in_with(x, d):
    y = x + 1.0
    with Ctx():
        n = float(y.sum())  # the break is inside the with: its exit is on the stack
        y = y * n
        LOG.append(1 / d)
    return y


def cells(x, k):
    k = k * 2.0  # x and k are cells of arguments (3.11: in the arguments' own slots), written before
    y = x * k
    n = float(y.sum())  # the break (no function is made before it: one would not be rebuilt)
    k = k + n  # ... and after the break

    def g():
        return x * k
    total = 0.0

    def h():
        nonlocal total
        total += 1.0
    h()
    return g() + total


def unbound_cell(x):
    y = x * 2.0
    n = float(y.sum())
    if n > 1000:
        late = 1.0
    return y * (lambda: late)()  # noqa: F821 - unbound on some calls: UnboundLocalError in eager


def raises_after(x):
    y = x * 2.0
    n = float(y.sum())
    return y / {}["missing" if n else "x"]


class Tracked:
    def __del__(self):
        LOG.append("freed")


def frees(x):
    t = Tracked()  # capture does not construct objects with a __del__: a break
    y = x * 2.0
    n = float(y.sum())
    del t  # plain Python frees it here, before the next line
    LOG.append("after del")
    return y * n


def loop_after_a_try(x, key):
    try:  # an exception-table entry before the loop: the outlined function keeps it
        v = {"a": 1.0}[key]
    except KeyError:
        v = -1.0
    total = 0.0  # (no graph work before the loop: a break would go there)
    for i in range(3):
        total = total + x * float(i)
        LOG.append(float(total.sum()))  # a break inside the loop: its body becomes a function
    return total + v


def while_loop(x, n):
    i = 0
    acc = x
    while i < n:  # (3.11 tests the condition at the top and again at the bottom)
        acc = acc * 2.0
        LOG.append(float(acc.sum()))
        i += 1
    return acc, i


def recurse_raise(x, n):
    y = x * 2.0
    if n == 0:
        return y / {}["missing"]
    return RCALL(y, n - 1)  # each level a call of the jitted function, its own rewritten frame


RCALL = recurse_raise


def deep(x, n):
    y = x + 1.0
    if float(y.sum()) < 0:  # a break on every level
        y = -y
    return y if n == 0 else CALL(y, n - 1)


CALL = deep


@unittest.skipUnless(ON, "capture runs on Python 3.7-3.11 (3.11: not under PIJIT_PY311_CAPTURE=0)")
class ResumeFunctions(unittest.TestCase):
    X = T([0.5, -1.0, 2.0])

    def agree(self, f, *calls, breaks=1):
        """f jitted gives eager's outcome on each call's arguments; returns the stats."""
        pj.reset(f)
        jf = pj.jit(f)
        for args in calls:
            want, got = outcome(f, *args), outcome(jf, *args)
            self.assertEqual(got[1], want[1], args)
            if want[0][0] == "ok":
                self.assertEqual(got[0][0], "ok", got)
                self.assertTrue(same(got[0][1], want[0][1]), (got, want))
            else:
                self.assertEqual(got[0], want[0])
        st = pj.jit_stats(jf)
        self.assertGreaterEqual(st["graphs"], 1, st["break_reasons"])
        self.assertEqual(st["breaks"], breaks, st["break_reasons"])
        return st

    def test_a_callable_waits_on_the_stack_across_the_break(self):
        st = self.agree(nested_call, (self.X,), (self.X,))
        self.assertGreaterEqual(st["resume_graphs"], 1, st)

    def test_keyword_arguments_after_the_break(self):
        self.agree(keyword_call, (self.X,), (self.X,))

    def test_both_sides_of_a_branch_on_a_read_value(self):
        st = self.agree(branch, (self.X,), (-self.X,), (self.X,))
        self.assertEqual(st["resume_graphs"], 2, st)

    def test_an_exception_after_the_break_reaches_the_try_it_is_in(self):
        self.agree(caught, (self.X, "a"), (self.X, "b"), (self.X, "a"))

    def test_a_with_block_open_across_the_break_exits_once(self):
        self.agree(in_with, (self.X, 1.0), (self.X, 0.0), (self.X, 2.0))
        del LOG[:]
        with self.assertRaises(TypeError):
            pj.jit(in_with)(self.X, "s")
        self.assertEqual(LOG, ["enter", "exit TypeError"])

    def test_cells_of_arguments_and_nonlocal_writes_after_the_break(self):
        self.agree(cells, (self.X, 2.0), (self.X, -1.0), breaks=2)  # (k's value is guarded: two entries)

    def test_an_unbound_cell_after_the_break_raises_as_in_eager(self):
        self.agree(unbound_cell, (self.X,), (self.X * 1000.0,), (self.X,))

    def test_a_traceback_names_the_function_once(self):
        def frames(fn):
            try:
                fn(self.X)
            except KeyError:
                return [(fs.name, fs.line) for fs in traceback.extract_tb(sys.exc_info()[2])]
            self.fail("no KeyError")
        want = frames(raises_after)
        jf = pj.jit(raises_after)
        for _ in range(2):
            self.assertEqual(frames(jf)[-len(want):], want)
            self.assertEqual([n for n, _ in frames(jf)].count("raises_after"), 1, frames(jf))

    def test_a_recursive_function_keeps_a_traceback_entry_per_level(self):
        # (a rewritten frame's entry goes only when the next one continues it, a resume function
        # or loop body: not when it is the function called again, here a cache entry per level)
        global RCALL

        def levels(fn):
            try:
                fn(self.X, 3)
            except KeyError:
                return [fs.name for fs in traceback.extract_tb(sys.exc_info()[2])].count("recurse_raise")
            self.fail("no KeyError")
        want = levels(recurse_raise)
        self.assertEqual(want, 4)
        RCALL = pj.jit(recurse_raise)
        try:
            for _ in range(2):
                self.assertEqual(levels(RCALL), want)
        finally:
            RCALL = recurse_raise

    def test_a_dead_resume_functions_address_makes_no_other_code_one(self):
        # A traceback drops a rewritten frame's entry when the next is its continuation; a code
        # object made later at a freed continuation's address (a recursive call's rewritten code,
        # say: it lost its entries, one failure in a full run) must not pass for one.
        src = "def f(x):\n    y = x * 2.0\n    n = float(y.sum())\n    return y / {}['missing' if n else 'x']\n"

        def continuation():
            ns = {}
            exec(compile(src, "<continuation>", "exec"), ns)
            jf = pj.jit(ns["f"])
            codes = []
            for _ in range(2):
                try:
                    jf(self.X)
                except KeyError:
                    tb = sys.exc_info()[2]
                    codes = []
                    while tb is not None:
                        codes.append(tb.tb_frame.f_code)
                        tb = tb.tb_next
            found = [c for c in codes if pj._C._is_continuation_code(c)]
            self.assertEqual([c.co_name for c in found], ["f"], codes)
            return id(found[0]), marshal.loads(marshal.dumps(found[0])), weakref.ref(found[0])

        def same_size(t):  # (a new code object from t's parts: the allocation is the code object's alone)
            if VERSION >= (3, 8):
                return t.replace()
            return types.CodeType(t.co_argcount, t.co_kwonlyargcount, t.co_nlocals, t.co_stacksize, t.co_flags,
                                  t.co_code, t.co_consts, t.co_names, t.co_varnames, t.co_filename, t.co_name,
                                  t.co_firstlineno, t.co_lnotab, t.co_freevars, t.co_cellvars)

        address, template, alive = continuation()
        gc.collect()
        self.assertIsNone(alive(), "the function, its cache and its resume function are gone")
        kept = []
        for _ in range(100000):  # (the allocator gives a freed block back soon: the first try, here)
            c = same_size(template)
            if id(c) == address:
                self.assertFalse(pj._C._is_continuation_code(c))
                return
            kept.append(c)
        self.fail("no code object took the freed address")

    def test_an_object_dies_where_the_function_drops_it(self):
        for fn in (frees, pj.jit(frees)):
            for _ in range(2):
                del LOG[:]
                fn(self.X)
                gc.collect()
                self.assertEqual(LOG, ["freed", "after del"], fn)

    def test_a_loop_around_a_break_runs_its_body_as_a_function(self):
        for f, calls in ((loop_after_a_try, [(self.X, "a"), (self.X, "b")]),
                         (while_loop, [(self.X, 3), (self.X, 0), (self.X, 5)])):
            pj.reset(f)
            jf = pj.jit(f)
            for args in calls:
                want, got = outcome(f, *args), outcome(jf, *args)
                self.assertEqual(got[1], want[1], (f, args))
                self.assertTrue(same(got[0], want[0]), (got, want))
            st = pj.jit_stats(jf)
            self.assertEqual(st["loop_bodies"], 1, st)
            self.assertGreaterEqual(st["frames_rewritten"], len(calls), st)

    def test_recursion_through_resume_functions_reaches_plain_depth(self):
        global CALL
        n = int(sys.getrecursionlimit() * 0.7)
        want = deep(self.X, n)
        CALL = pj.jit(deep)
        try:
            self.assertTrue(same(CALL(self.X, n), want))
        finally:
            CALL = deep


if __name__ == "__main__":
    unittest.main()
