"""Generators in captured code (issue 18): calling a generator function or writing a generator
expression binds its frame; each value a consumer asks for (a for loop, next(), any/all, and
tuple/list/set/dict/sorted/sum/min/max/str.join/list.extend, which read it whole) runs the
generator's frame to its next yield, in program order. Values, graph ops and side effects
interleave as in Python. A generator that escapes the frame, or is used otherwise (zip, send,
handed to library code), or yields inside a try/with block, runs eagerly with that reason. Each test
compares plain and jitted results bit for bit and counts graphs and breaks."""
import contextlib
import sys
import unittest

import pijit as pj
from jit_compare import no_stress, same_bits

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor
LOG = []


def doubled(xs):
    for x in xs:
        yield x * 2.0


def counting(n):
    i = 0
    while i < n:
        LOG.append(("yield", i))
        yield i
        i += 1
    LOG.append("done")


def pairs(xs):
    for i, x in enumerate(xs):
        yield i, x


def nested(xs):
    for v in doubled(xs):
        yield v + 1.0


def with_return(xs):
    for x in xs:
        yield x
    return "ignored by for"


def guarded(xs):
    try:
        for x in xs:
            yield x
    finally:
        LOG.append("cleanup")


@contextlib.contextmanager
def scaled(k):
    yield k * 2.0


def xs2():
    return [T([1.0, -2.0]), T([0.5, 3.0])]


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class Generators(unittest.TestCase):
    def same(self, f, make_args, calls=3):
        """Plain and jitted calls alternate; results and the LOG of side effects match."""
        jf = pj.jit(f)
        for _ in range(calls):
            LOG.clear()
            with no_stress():
                want = f(*make_args())
            want_log = list(LOG)
            LOG.clear()
            got = jf(*make_args())
            self.assertTrue(same_bits(want, got), (want, got))
            self.assertEqual(LOG, want_log)
        return jf, pj.jit_stats(jf)

    def one_graph(self, st, graphs=1):
        self.assertEqual(st["break_reasons"], [])
        self.assertEqual((st["graphs"], st["breaks"]), (graphs, 0))

    def reason(self, st, text):
        self.assertTrue(any(text in r for r in st["break_reasons"]), (text, st["break_reasons"]))

    # ---- consumed inside the frame ----
    def test_generator_expressions(self):
        def f(xs):
            total = sum(x * 2.0 for x in xs)
            big = tuple(x for x in xs if x is not None)
            names = ",".join(str(i) for i in range(3))
            return total, big, names, sorted(i * i for i in (3, 1, 2)), max(len(x.shape) for x in xs)
        _, st = self.same(f, lambda: (xs2(),))
        self.one_graph(st)

    def test_for_loop_over_a_generator_function(self):
        def f(xs):
            out = 0.0
            for v in doubled(xs):
                out = out + v
            for i, x in pairs(xs):
                out = out * (i + 1.0) + x
            return out, list(nested(xs)), [v for v in with_return(xs)]
        _, st = self.same(f, lambda: (xs2(),))
        self.one_graph(st)

    def test_effects_interleave_with_the_consumer(self):
        def f(x):
            for i in counting(3):
                LOG.append(("use", i))
                x = x + i
            return x
        _, st = self.same(f, lambda: (T([1.0]),))
        self.one_graph(st)

    def test_next_any_all_stop_where_python_stops(self):
        def f(x):
            g = counting(5)
            a = next(g)
            b = next(g)
            found = any(i >= 3 for i in counting(10))      # stops after 3: LOG shows it
            every = all(i < 2 for i in counting(10))       # stops at 2
            rest = next(counting(0), "empty")
            return x + a + b, found, every, rest
        _, st = self.same(f, lambda: (T([1.0]),))
        self.one_graph(st)

    def test_exhausted_generator_stays_exhausted(self):
        def f(x):
            g = doubled([x, x])
            first = list(g)
            second = list(g)
            return first, second
        _, st = self.same(f, lambda: (T([1.0]),))
        self.one_graph(st)

    def test_contextmanager_function(self):
        # contextlib's __enter__/__exit__ run the generator with next(); __exit__ catches the
        # StopIteration that ends it, as in Python
        def f(x):
            with scaled(3.0) as s:
                y = x * s
            return y
        _, st = self.same(f, lambda: (T([1.0, 2.0]),))
        self.one_graph(st)

    # ---- what runs eagerly, and says why ----
    def test_escaping_generator_runs_eagerly(self):
        def f(xs):
            return doubled(xs)
        jf = pj.jit(f)
        self.assertTrue(same_bits(list(jf(xs2())), list(f(xs2()))))
        self.assertEqual(pj.jit_stats(jf)["graphs"], 0)

    def test_lazy_builtins_zip_map_enumerate_filter(self):
        # modelled as generators (pijit/_lazy_builtins.py): values made when asked for, so the
        # generators' effects interleave as with the builtins (zip stops at the shortest, having
        # advanced the ones before it)
        def f(xs):
            pairs = list(zip(doubled(xs), xs))
            total = xs[0] * 0.0
            for i, v in enumerate(doubled(xs), 1):
                total = total + v * i
            sq = list(map(lambda a, b: a * b, doubled(xs), counting(5)))
            kept = tuple(filter(None, counting(4)))
            short = list(zip(counting(3), [10, 20]))
            return pairs, total, sq, kept, short
        _, st = self.same(f, lambda: (xs2(),))
        self.one_graph(st)

    def test_stop_iteration_holds_the_return_value(self):
        # (CPython's test_yield_from: the StopIteration that ends a generator carries its return
        # value; a later next() raises a bare one)
        def f(x):
            g = with_return([x])
            next(g)
            out = []
            for _ in range(2):
                try:
                    next(g)
                except StopIteration as e:
                    out.append(e.args)
            return x * 2.0, out
        _, st = self.same(f, lambda: (T([1.0]),))
        self.one_graph(st)

    def test_yield_from_delegates_and_returns(self):
        def inner(xs):
            for x in xs:
                LOG.append("inner")
                yield x * 2.0
            return len(xs)

        def outer(xs):
            n = yield from inner(xs)
            LOG.append(("returned", n))
            yield from [n, n + 1]

        def f(xs):
            return list(outer(xs))
        _, st = self.same(f, lambda: (xs2(),))
        self.one_graph(st)

    def test_generators_passed_through_star_args(self):
        def firsts(*gs):
            return [next(g) for g in gs]

        def f(xs):
            args = (doubled(xs), counting(2))
            return firsts(*args)
        _, st = self.same(f, lambda: (xs2(),))
        self.one_graph(st)

    def test_lazy_builtin_over_a_generator_left_unfinished(self):
        def f(xs):
            for i, v in enumerate(doubled(xs)):
                return v * i
        _, st = self.same(f, lambda: (xs2(),))
        self.one_graph(st)

    def test_generator_left_suspended_inside_try_is_refused(self):
        def f(xs):
            return next(guarded(xs))
        _, st = self.same(f, lambda: (xs2(),))
        self.reason(st, "a generator is left suspended inside a try or with block")

    def test_stop_iteration_from_next(self):
        def f(x):
            g = counting(1)
            next(g)
            return next(g)
        jf = pj.jit(f)
        with self.assertRaises(StopIteration):
            jf(T([1.0]))
        self.reason(pj.jit_stats(jf), "StopIteration")


if __name__ == "__main__":
    unittest.main()
