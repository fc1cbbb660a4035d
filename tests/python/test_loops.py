"""Capture refused inside a loop: the interpreter runs the loop, each iteration a call of the loop's
body made a function of its own (codegen/outline.h), captured with breaks of its own.

Each program runs plainly and jitted on several inputs: results, exceptions, printed output and
the locals the loop leaves behind must be those of plain Python; the stats say how it ran."""
import unittest

import pijit as pj
from pijit import ops

from jit_compare import CAPTURE_ON, assert_ran_eagerly, plain, run, show


def T(*v):
    return pj.Tensor(list(v))


class LoopBodies(unittest.TestCase):
    def same(self, fn, inputs, loop_bodies=1):
        jf = pj.jit(fn)
        for args in inputs:
            self.assertEqual(show(run(jf, *args)), show(plain(fn, *args)), args)
        if not CAPTURE_ON:  # (no capture: jf ran eagerly, as plain Python above; no stats to read)
            assert_ran_eagerly(self, jf)
            return None
        st = pj.jit_stats(jf)
        if not pj.stress_stats()["level"]:
            self.assertEqual(st["loop_bodies"], loop_bodies, st)
        return st

    def test_item_per_iteration(self):
        def f(x, n):
            total = 0.0
            for i in range(n):
                x = x * 0.5 + 1.0
                total += x.sum().item()
            return x, total
        st = self.same(f, [(T(1.0, 2.0), 3), (T(1.0, 2.0), 3), (T(4.0), 0), (T(4.0), 7)])
        if CAPTURE_ON:
            self.assertEqual((st["graphs"], st["compiles"]), (0, 1), st)
            self.assertEqual(st["entries"][0]["reason"], "B002 DataDependent")
            self.assertGreaterEqual(st["resume_graphs"], 1, st)

    def test_a_counter_passed_through_does_not_recompile_the_body(self):
        def f(x):
            s = 0.0
            for i in range(40):
                x = x * 0.5
                s = x.sum().item()
            return x, s, i
        st = self.same(f, [(T(1.0, 2.0),), (T(3.0, 2.0),)])
        # One graph for the body, whichever the iteration; the rest (s = the number) is plain Python.
        if CAPTURE_ON:
            self.assertEqual((st["resume_graphs"], st["resume_breaks"]), (1, 1), st)

    def test_while_loop_with_a_branch_on_a_tensor_and_a_return(self):
        def g(x, limit):
            k = 0
            while k < 5:
                x = x + 1.0
                if x.sum() > limit:
                    return x * 10.0, k
                k += 1
            return x, k
        self.same(g, [(T(0.0, 0.0), 20.0), (T(5.0, 5.0), 20.0), (T(0.0), 3.0), (T(0.0), 100.0)])

    def test_break_continue_and_else(self):
        def f(x, stop):
            out = []
            for i in range(6):
                if i == stop:
                    break
                if i % 2:
                    continue
                x = x * 2.0
                out.append(float(x.sum()))
            else:
                out.append("no break")
            return x, out
        self.same(f, [(T(1.0), 3), (T(1.0), 9), (T(2.0), 0)])

    def test_nested_loops_and_a_return_from_the_inner_one(self):
        def f(x, rows):
            acc = x
            for r in rows:
                for v in r:
                    acc = acc + v
                    if acc.sum().item() > 100.0:
                        return acc, "early"
            return acc, "done"
        self.same(f, [(T(0.0), [[1.0, 2.0], [3.0]]), (T(0.0), [[50.0, 60.0], [1.0]]), (T(0.0), [])])

    def test_names_bound_only_inside_the_loop(self):
        def f(x, n):
            for i in range(n):
                y = x * float(i)
                z = y.sum().item()
            return i, y, z  # UnboundLocalError when the loop never ran

        self.same(f, [(T(1.0), 3), (T(1.0), 0), (T(2.0), 2)])

    def test_del_inside_the_loop(self):
        def f(x, n):
            t = x
            for i in range(n):
                t = t + 1.0
                v = t.sum().item()
                del v
            try:
                v
                return t, "v bound"
            except NameError:  # (UnboundLocalError)
                return t, "v unbound"
        self.same(f, [(T(1.0), 2), (T(1.0), 0)])

    def test_exceptions_from_the_body_propagate_as_in_eager(self):
        def f(x, items):
            total = x
            for it in items:
                total = total + 1.0
                if total.sum().item() > 2.0:
                    total = total / it  # ZeroDivisionError from Python, TypeError from a str
            return total
        self.same(f, [(T(1.0), [1.0, 2.0, 4.0]), (T(1.0), [1.0, 0, 1.0]), (T(1.0), [1.0, "a"])])

    def test_cells_and_nonlocal_inside_the_loop(self):
        def f(x, n):
            seen = []
            scale = 1.0

            def bump():
                nonlocal scale
                scale = scale * 2.0
            for i in range(n):
                bump()
                x = x * scale
                seen.append(x.sum().item())
            return x, seen, scale
        self.same(f, [(T(1.0), 3), (T(1.0), 3)])

    def test_output_in_order(self):
        def f(x, n):
            for i in range(n):
                x = x + 1.0
                print("step", i, x.sum().item())
            print("end")
            return x
        self.same(f, [(T(0.0), 3), (T(1.0), 2)])

    def test_a_loop_too_long_to_unroll(self):
        # Past loop_limit (1024 iterations) a loop is not unrolled: with a few ops per iteration
        # its body runs as a captured function (one graph, no recompile per iteration); with
        # fewer, a call and a guard check per iteration would cost more than the ops: eager.
        def many_ops(x, n):
            for i in range(n):
                x = ops.relu(x * 0.999 + 0.5) - 0.25
                x = x * x * 0.5
            return x

        def one_op(x, n):
            for i in range(n):
                x = x + 1.0
            return x
        st = self.same(many_ops, [(T(1.0, 2.0), 1500), (T(3.0, -1.0), 1500)])
        if CAPTURE_ON:
            self.assertEqual((st["resume_graphs"], st["resume_breaks"]), (1, 0), st)
        self.same(one_op, [(T(1.0), 1500)], loop_bodies=0)

    def test_a_local_the_loop_may_read_unbound_is_not_outlined(self):
        # `prev` is unbound in the first iteration: the body could not tell an unbound local from
        # one bound outside, so the loop runs as it is (still correct).
        def f(x, n):
            for i in range(n):
                if i > 0:
                    x = x + prev
                prev = x.sum().item()
            return x
        self.same(f, [(T(1.0), 3), (T(1.0), 1)], loop_bodies=0)

    def test_a_loop_inside_try_or_with_is_not_outlined(self):
        # An iteration stores a local, then raises; a handler (or a with block's __exit__ that
        # swallows the error) sees the stored value. An outlined body would lose the store with the
        # exception (fuzz program 1101577): such loops run as they are.
        import contextlib

        def caught(x, items):
            y = x
            try:
                for it in items:
                    y = y * 2.0 + it.sum().item()
                    y = y + it  # shapes that do not broadcast: ValueError after y was stored
            except ValueError:
                pass
            finally:
                y = y - 1.0
            return y

        def suppressed(x, items):
            y = x
            with contextlib.suppress(ValueError):
                for it in items:
                    y = y * 2.0 + it.sum().item()
                    y = y + it
            return y

        for fn in (caught, suppressed):
            self.same(fn, [(T(1.0, 2.0), [T(1.0, 1.0), T(1.0, 2.0, 3.0)]), (T(1.0, 2.0), [T(3.0)])],
                      loop_bodies=0)

    def test_a_loop_body_in_a_method_uses_self_and_super(self):
        class Base(pj.nn.Cell):
            def scale(self, x):
                return x * 3.0

        class Net(Base):
            def __init__(self):
                super().__init__()
                self.steps = 3

            def construct(self, x):
                for _ in range(self.steps):
                    x = super().scale(x) - 1.0
                    if x.sum().item() > 50.0:
                        break
                return x
        net = Net()
        jf = pj.jit(net.construct)
        for x in (T(1.0, 2.0), T(10.0, 2.0), T(1.0, 2.0)):
            self.assertEqual(show(run(jf, x)), show(plain(net.construct, x)))
        if not CAPTURE_ON:
            assert_ran_eagerly(self, jf)
            return
        st = pj.jit_stats(jf)
        if not pj.stress_stats()["level"]:
            self.assertEqual((st["loop_bodies"], st["graphs"]), (1, 0), st)
            self.assertGreaterEqual(st["resume_graphs"], 1, st)  # the body: super().scale in its graph


if __name__ == "__main__":
    unittest.main()
