"""with-blocks in captured code (issue 18): __enter__ and __exit__ of user context managers are
inlined, also when a simulated exception leaves the block: __exit__ gets the exception's class and
value (and None for the traceback, so an __exit__ that reads its traceback is refused), a true
return swallows the exception, anything else lets it go on to a handler of the function or out
of it; a return inside the block calls __exit__ first. Generators may yield inside try and with
blocks (contextlib.contextmanager with try/finally): resumed to the end, their cleanup runs where
Python runs it; one left suspended there is refused (closing it would run the cleanup). Each test
compares plain and jitted results and the LOG of side effects, and counts graphs and breaks."""
import contextlib
import sys
import unittest

import pijit as pj
from jit_compare import no_stress, same_bits, same_raise

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor
LOG = []


class Ctx:
    def __init__(self, name, swallow=False):
        self.name = name
        self.swallow = swallow

    def __enter__(self):
        LOG.append(("enter", self.name))
        return self

    def __exit__(self, et, ev, tb):
        LOG.append(("exit", self.name, et.__name__ if et else None, ev.args if ev else None))
        return self.swallow


class TracebackReader:
    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        LOG.append(tb is None)
        return True


class StarExit:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


@contextlib.contextmanager
def tracked(name):
    LOG.append(("setup", name))
    try:
        yield name
    finally:
        LOG.append(("cleanup", name))


def guarded(xs):
    try:
        for x in xs:
            yield x
    finally:
        LOG.append("closed")


def x2():
    return T([1.0, -2.0])


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class WithBlocks(unittest.TestCase):
    def same(self, f, make_args, calls=3):
        jf = pj.jit(f)
        for _ in range(calls):
            del LOG[:]
            with no_stress():
                want = (f(*make_args()), list(LOG))
            del LOG[:]
            got = (jf(*make_args()), list(LOG))
            self.assertTrue(same_bits(want, got), (want, got))
        return jf, pj.jit_stats(jf)

    def one_graph(self, st):
        self.assertEqual(st["break_reasons"], [])
        self.assertEqual((st["graphs"], st["breaks"]), (1, 0))

    def reason(self, st, text):
        self.assertTrue(any(text in r for r in st["break_reasons"]), (text, st["break_reasons"]))

    def test_exit_swallows_the_exception(self):
        def f(x, n):
            with Ctx("a", swallow=True):
                x = x * 2.0
                if n > 0:
                    raise ValueError("swallowed", n)
                x = x + 100.0
            return x + 1.0
        _, st = self.same(f, lambda: (x2(), 1))
        self.one_graph(st)
        _, st = self.same(f, lambda: (x2(), 0))  # the other way: a second graph (n > 0 is guarded)
        self.assertEqual((st["graphs"], st["breaks"], st["break_reasons"]), (2, 0, []))

    def test_exception_goes_on_to_the_functions_handler(self):
        def f(x):
            try:
                with Ctx("outer", swallow=False):
                    with Ctx("inner", swallow=False):
                        raise KeyError("k")
            except KeyError as e:
                return x * 3.0, e.args
            return x
        _, st = self.same(f, lambda: (x2(),))
        self.one_graph(st)

    def test_inner_exit_lets_it_pass_outer_swallows(self):
        def f(x):
            with Ctx("outer", swallow=True):
                with Ctx("inner"):
                    x = x - 1.0
                    raise IndexError
            return x
        _, st = self.same(f, lambda: (x2(),))
        self.one_graph(st)

    def test_exception_leaving_the_function_is_raised_by_the_interpreter(self):
        def f(x):
            with Ctx("a"):
                raise ValueError("out", 1)
        same_raise(self, f, lambda: (x2(),), ValueError)

    def test_return_inside_the_block_calls_exit_first(self):
        def f(x):
            with Ctx("r"):
                return x * 5.0
        _, st = self.same(f, lambda: (x2(),))
        self.one_graph(st)

    def test_exit_reading_the_traceback_is_refused(self):
        def f(x):
            with TracebackReader():
                raise ValueError
            return x
        _, st = self.same(f, lambda: (x2(),))
        self.reason(st, "TracebackReader.__exit__, which reads its traceback")

        def g(x):
            with StarExit():
                raise ValueError
            return x
        _, st = self.same(g, lambda: (x2(),))
        self.reason(st, "StarExit.__exit__, which takes the exception as *args")

    def test_contextmanager_with_try_finally(self):
        def f(x):
            with tracked("t") as name:
                y = x * 2.0
            return y, name
        _, st = self.same(f, lambda: (x2(),))
        self.one_graph(st)

    def test_generator_with_finally_consumed_to_the_end(self):
        def f(xs):
            out = [v * 2.0 for v in guarded(xs)]
            return out, sum(guarded([1, 2]))
        _, st = self.same(f, lambda: ([x2(), x2()],))
        self.one_graph(st)

    def test_generator_left_suspended_in_try_is_refused(self):
        def f(xs):
            return next(guarded(xs))
        _, st = self.same(f, lambda: ([x2(), x2()],))
        self.reason(st, "a generator is left suspended inside a try or with block")


if __name__ == "__main__":
    unittest.main()
