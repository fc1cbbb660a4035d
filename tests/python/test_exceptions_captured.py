"""Exceptions raised and caught inside captured code (issue 18). `raise E(...)` (or a failing
assert) whose handler is in a simulated frame, the function's own or a caller's, follows the
handler path at capture time as the interpreter would: except clauses match by class (tuples and
subclasses included), `as e` binds the exception, str(e) and e.args read it, else/finally blocks
run, a bare `raise` inside a handler re-raises, and on 3.7 a return inside a try/finally or an
`except ... as e` unwinds through the finally body. A raise no simulated handler catches is a
graph break before it: the interpreter raises it, with its real traceback. Each test compares plain
and jitted results (values, exception types and messages) and counts graphs and breaks."""
import sys
import unittest

import pijit as pj
from jit_compare import no_stress, same_bits

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor


class ShapeError(ValueError):
    """A user exception class that adds nothing: its instances are BaseException's."""


class Loud(ValueError):
    def __str__(self):
        return "loud"


def check(x):
    if x.shape[0] != 2:
        raise ShapeError("need 2, got %d" % x.shape[0])
    return x


def outcome(f, *args):
    try:
        return ("value", f(*args))
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return ("raised", type(e).__name__, str(e))


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class CaughtExceptions(unittest.TestCase):
    def same(self, f, make_args, calls=3):
        jf = pj.jit(f)
        for _ in range(calls):
            with no_stress():  # (outcome's own frame, captured under stress, would inline jf)
                want = outcome(f, *make_args())
                got = outcome(jf, *make_args())
            self.assertTrue(same_bits(want, got), (want, got))
        return pj.jit_stats(jf)

    def one_graph(self, st, graphs=1):
        self.assertEqual(st["break_reasons"], [])
        self.assertEqual((st["graphs"], st["breaks"]), (graphs, 0))

    def test_raise_and_catch_in_the_same_function(self):
        def f(x):
            try:
                raise ValueError("bad", 3)
            except ValueError as e:
                return x + len(str(e)), e.args, repr(e)
        self.one_graph(self.same(f, lambda: (T([1.0]),)))

    def test_raised_in_a_callee_caught_here_with_else_and_finally(self):
        def f(x):
            try:
                y = check(x)
            except ShapeError as e:
                y = x * 0.0
                msg = str(e)
            else:
                msg = "ok"
            finally:
                y = y * 3.0
            return y, msg
        self.one_graph(self.same(f, lambda: (T([1.0, 2.0]),)))
        self.one_graph(self.same(f, lambda: (T([1.0, 2.0, 3.0]),)), graphs=2)  # a new shape, the other path

    def test_matching_by_tuple_subclass_and_nesting(self):
        def f(x):
            try:
                try:
                    raise KeyError("k")
                except ValueError:
                    return "wrong handler"
            except (TypeError, LookupError) as e:
                return x + 1.0, repr(e)
        self.one_graph(self.same(f, lambda: (T([1.0]),)))

    def test_reraise_and_assert(self):
        def f(x):
            try:
                try:
                    assert x.shape[0] == 5, "needs five"
                except AssertionError:
                    raise
            except AssertionError as e:
                return x - 1.0, str(e)
            return x
        self.one_graph(self.same(f, lambda: (T([1.0]),)))

    def test_in_a_loop_and_bare_except(self):
        def f(x):
            for i in range(3):
                try:
                    if i == 1:
                        raise IndexError(i)
                    x = x + i
                except IndexError:
                    x = x * 10.0
            try:
                raise RuntimeError
            except:  # noqa: E722 - a bare except is what is tested
                pass
            return x
        self.one_graph(self.same(f, lambda: (T([1.0]),)))

    def test_raise_from_caught_here_and_raised_out(self):
        def f(x, n):
            try:
                try:
                    raise KeyError("k")
                except KeyError:
                    raise ValueError("wrapped") from (None if n else KeyError("cause"))
            except ValueError as e:
                return x * 2.0, e.args
        self.one_graph(self.same(f, lambda: (T([1.0]), 0)))

        def g(x):
            raise ValueError("out") from KeyError("cause")
        jf = pj.jit(g)
        with self.assertRaises(ValueError) as got:
            jf(T([1.0]))
        self.assertIsInstance(got.exception.__cause__, KeyError)  # raised for real: its cause too

    def test_return_through_finally(self):
        def f(x):
            try:
                return x * 2.0
            finally:
                x = None
        self.one_graph(self.same(f, lambda: (T([1.0]),)))

    def test_uncaught_raise_is_the_interpreter_s(self):
        def f(x):
            y = x * 2.0
            return check(y)
        st = self.same(f, lambda: (T([1.0, 2.0, 3.0]),))
        self.assertTrue(any("ShapeError: need 2, got 3" in r for r in st["break_reasons"]), st["break_reasons"])
        jf = pj.jit(f)
        try:
            jf(T([1.0, 2.0, 3.0]))
            self.fail("no ShapeError")
        except ShapeError as e:
            tb = e.__traceback__
        frames = []
        while tb:
            frames.append(tb.tb_frame.f_code.co_name)
            tb = tb.tb_next
        self.assertEqual(frames[-1], "check")  # raised for real, where Python raises it

    def test_traceback_has_the_function_once_after_a_break(self):
        # (fuzz --tracebacks: the rewritten frame at the break's line and the resume function's
        # (or the loop body's) at the raise were both in the traceback)
        import traceback

        def after_break(x):
            y = x * 2.0
            s = float(y.sum())  # a graph break
            return check(y) + s

        def in_loop_body(x):
            for i in range(2):
                x = x + 1.0
                s = float(x.sum())  # capture stops in the loop: the body runs as a function
                if i == 1:
                    check(x)
            return x

        def frames(fn):
            try:
                fn(T([1.0, 2.0, 3.0]))
            except ShapeError as e:
                return [(fr.name, fr.lineno) for fr in traceback.extract_tb(e.__traceback__)][1:]
        for fn in (after_break, in_loop_body):
            jf = pj.jit(fn)
            with no_stress():
                want = frames(fn)
            self.assertEqual(frames(jf), want)
            self.assertEqual(frames(jf), want)  # the cached code too

    def test_exception_classes_with_code_are_refused(self):
        def f(x):
            try:
                raise Loud("x")
            except ValueError as e:
                return x, str(e)
        st = self.same(f, lambda: (T([1.0]),))
        self.assertTrue(any("an exception class with code of its own" in r for r in st["break_reasons"]), st["break_reasons"])

    def test_traceback_and_escape_are_refused(self):
        def tb(x):
            try:
                raise ValueError("v")
            except ValueError as e:
                return x, e.__traceback__ is None
        st = self.same(tb, lambda: (T([1.0]),))
        self.assertTrue(any(".__traceback__ of an exception raised in captured code" in r for r in st["break_reasons"]),
                        st["break_reasons"])

        def escapes(x):
            try:
                raise ValueError("v")
            except ValueError as e:
                return x, e
        jf = pj.jit(escapes)
        v, e = jf(T([1.0]))
        self.assertIs(type(e), ValueError)
        self.assertEqual(e.args, ("v",))


if __name__ == "__main__":
    unittest.main()
