"""Graph breaks (issue 11): a frame capture cannot take whole runs its captured statements as a
graph, then the interpreter runs the rest from the statement that stopped capture. Each test runs
the function plainly and jitted and compares results, printed output and the state the function
changed, and asserts the graph, break and compile counts."""
import sys
import unittest

import pijit as pj
from pijit import ops
from jit_compare import plain, run, say, show

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor
# CPython's words for reading an unbound local (3.11 reworded them)
UNBOUND_T3 = ("local variable 't3' referenced before assignment" if sys.version_info < (3, 11)
              else "cannot access local variable 't3' where it is not associated with a value")


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class GraphBreaks(unittest.TestCase):
    def same(self, f, make_args, calls=3):
        jf = pj.jit(f)
        for _ in range(calls):
            plain_args, jit_args = make_args(), make_args()
            self.assertEqual(run(jf, *jit_args), plain(f, *plain_args))
            self.assertEqual(show(jit_args), show(plain_args))  # what the call changed
        return pj.jit_stats(jf)

    def assert_broke(self, st, reason, ops=None, compiles=1, calls=3):
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (1, 1, compiles), st["break_reasons"])
        self.assertIn(reason, st["break_reasons"][0])
        entry = st["entries"][0]
        self.assertIsNone(entry["reason"])
        self.assertIn(reason, entry["graph_break"])
        if ops is not None:
            self.assertEqual(entry["ops"], ops, entry["graph"])
        self.assertEqual(sum(e["hits"] for e in st["entries"]), calls)  # every call ran the graph

    def test_cell_variables_after_a_break_read_and_raise_as_in_eager(self):
        # After the break the rest runs in a resume function, where the frame's cell variables are
        # free variables: an unbound one must still raise UnboundLocalError with CPython's words,
        # not NameError (fuzz program 1109516), and a bound one is read as usual (and captured).
        def unbound(x):
            x *= ops.floor(T([4.0]))
            t3 = t3  # noqa: F821 - unbound on purpose

            def inner():
                return t3
            return x

        def bound(x):
            k = 2.0
            y = x * k
            print(float(y.sum()))
            z = y * k + 1

            def inner():
                return k
            return z * inner()
        st = self.same(unbound, lambda: (T([1.0, 2.0]),))
        self.assertEqual(st["breaks"], 1, st["break_reasons"])
        try:
            unbound(T([1.0]))
        except UnboundLocalError as e:
            self.assertEqual(str(e), UNBOUND_T3)
        st = self.same(bound, lambda: (T([1.0, 2.0]),))
        # (print is handed float()'s result, which differs each call: the interpreter runs that
        # print too, a second break before any op, and the rest is the second resume's graph)
        self.assertEqual((st["breaks"], st["resume_graphs"], st["resume_breaks"]), (1, 1, 1), st)

    def test_print_in_the_middle_is_replayed_after_the_graph(self):
        def f(x, w):
            y = ops.relu(x * w)
            z = y + 1.0
            print("z computed", z)
            return z * 2.0, y
        st = self.same(f, lambda: (T([1.0, -2.0]), T([3.0, 4.0])))
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (1, 0, 1), st["break_reasons"])
        self.assertEqual(st["entries"][0]["ops"], 4, st["entries"][0]["graph"])

    def test_output_the_interpreter_must_make_breaks_the_graph(self):
        def f(x, w):
            y = ops.relu(x * w)
            z = y + 1.0
            say("z computed")
            return z * 2.0, y
        st = self.same(f, lambda: (T([1.0, -2.0]), T([3.0, 4.0])))
        self.assert_broke(st, "B008 UnsupportedCall", ops=3)  # at the line inside say() that stopped capture
        self.assertIn("jit_compare.py:%d in say" % (say.__code__.co_firstlineno + 2), st["break_reasons"][0])

    def test_reading_a_value_breaks_where_it_is_read(self):
        def f(x):
            y = x * 3.0
            print("y is", y.tolist())  # tolist() reads data: the graph computes y, Python the rest
            return y + 1.0
        self.assert_broke(self.same(f, lambda: (T([1.0, 2.0]),)), "B002", ops=1)

    def test_locals_swapped_before_the_break(self):
        def f(a):
            b, c = a * 2.0, a + 1.0
            b, c = c, b
            n, s = 3, "text"
            say(n)
            return b, c, n, s
        self.assert_broke(self.same(f, lambda: (T([1.0]),)), "B008")

    def test_aliases_stay_aliases(self):
        def f(x):
            out = []
            push = out.append  # bound to the very list rebuilt after the break
            alias = out
            push(x * 2.0)
            say("appending")
            push(x * 3.0)
            return alias, out is alias, len(out)
        self.assert_broke(self.same(f, lambda: (T([1.0]),)), "B008")

    def test_a_write_to_an_argument_happens_once(self):
        def f(x, log):
            y = x * 2.0
            log.append(y)  # a write to the caller's list: replayed once after the graph
            return y + 1.0
        st = self.same(f, lambda: (T([1.0]), []))
        self.assertEqual((st["graphs"], st["breaks"]), (1, 0), st["break_reasons"])
        self.assertEqual(len(st["entries"][0]["effects"]), 1)

    def test_a_global_written_after_captured_work(self):
        def f(x):
            global COUNTER
            y = x * 2.0
            COUNTER = COUNTER + 1
            return y, COUNTER
        global COUNTER
        COUNTER = 0
        jf = pj.jit(f)
        got = [show(jf(T([1.0]))) for _ in range(3)]
        self.assertEqual(got, [show((T([2.0]), n)) for n in (1, 2, 3)])
        self.assertEqual(COUNTER, 3)
        st = pj.jit_stats(jf)  # the store is replayed; the value read is guarded: each call recompiles
        self.assertEqual((st["breaks"], st["recompile_reasons"]), (0, ["COUNTER: 0 -> 1", "COUNTER: 1 -> 2"]), st)

    def test_an_error_is_raised_by_the_interpreter_at_its_line(self):
        def f(x):
            y = x * 2.0
            return y + "a"
        jf = pj.jit(f)
        for _ in range(3):
            self.assertEqual(run(jf, T([1.0])), plain(f, T([1.0])))
        try:
            jf(T([1.0]))
        except TypeError as e:
            tb = e.__traceback__
            while tb.tb_next:
                tb = tb.tb_next
            self.assertEqual(tb.tb_lineno, f.__code__.co_firstlineno + 2)
        self.assert_broke(pj.jit_stats(jf), "B007", calls=4)

    def test_cell_variable_assigned_before_the_break(self):
        def f(x):
            k = x * 2.0
            say("k ready")

            def g():
                return k + 1.0
            return g()
        self.assert_broke(self.same(f, lambda: (T([1.0]),)), "B008")

    def test_break_inside_a_while_loop(self):
        def f(x):
            i = 0
            x = x + 0.5  # 3.7's loop block allows no break inside: the break comes before the loop
            while i < 3:
                x = x * 2.0
                if i == 1:
                    print("halfway", x.tolist())
                i += 1
            return x
        st = self.same(f, lambda: (T([1.0]),))
        self.assertEqual((st["graphs"], st["breaks"]), (1, 1), st["break_reasons"])

    def test_a_container_on_the_stack_and_in_a_local_is_one_object(self):
        def f(x):
            l = [x * 2.0]
            say(l is l, len(l))  # `l` is both a local and on the stack at the break
            l.append(x)
            return l
        self.assert_broke(self.same(f, lambda: (T([1.0]),)), "B008")

    def test_a_comprehension_resumed_keeps_building_its_list(self):
        # The list being built is handed to the resume function: appending to it during the
        # resume function's own capture would append twice.
        def f(n):
            return [str(i) + "!" for i in range(n) if i != 1]
        level = pj.stress_stats()["level"]
        pj.set_stress(3)  # breaks even without graph work: the comprehension itself breaks
        try:
            got = [f(4), f(4), f(3)]
        finally:
            pj.set_stress(level)
        self.assertEqual(got, [f(4), f(4), f(3)])

    def test_super_and_a_method_load_at_the_break(self):
        class Base(object):
            def scale(self, t):
                return t * 2.0

        class Child(Base):
            def scale(self, t):
                t = t + 1.0
                say("scaling")
                return super().scale(t) + 1.0  # LOAD_METHOD on super() in the resumed part
        c = Child()
        jf = pj.jit(c.scale)
        for _ in range(3):
            self.assertEqual(run(jf, T([1.0])), plain(c.scale, T([1.0])))
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["breaks"]), (1, 1), st["break_reasons"])

    def test_a_failure_inside_a_loop_breaks_before_the_loop(self):
        def f(x, n):
            y = x * 2.0
            for i in range(n):
                say("step", i)  # inside the loop: no break here (no frame per iteration)
                y = y + 1.0
            return y
        st = self.same(f, lambda: (T([1.0]), 3))
        self.assert_broke(st, "B008", ops=1)

    def test_stack_values_read_locals_before_they_are_reassigned(self):  # found by the fuzzer
        def f(x, y):
            y, x = x, y
            return x[x > 0].view(-1)  # the break (a data-dependent shape) has `x` on the stack
        st = self.same(f, lambda: (T([[0.0, -2.0], [1.0, 3.0]]), T([[2, -4], [0, 2]], pj.int64)))
        self.assert_broke(st, "B017", ops=1)

    def test_fullgraph_never_breaks(self):
        def f(x):
            y = x * 2.0
            say("no")
            return y
        jf = pj.jit(f, fullgraph=True)
        with self.assertRaisesRegex(pj.CaptureError, "B008"):
            jf(T([1.0]))

    def test_a_break_before_any_op_leaves_the_code_after_it_a_graph(self):
        def f(x):
            say("first")  # the interpreter runs this call, and only it
            return x * 2.0
        st = self.same(f, lambda: (T([1.0]),))
        self.assertEqual((st["graphs"], st["breaks"], st["resume_graphs"]), (0, 1, 1), st["break_reasons"])

    def test_no_break_before_any_op_when_nothing_follows(self):
        def f(x):
            return say(x)  # nothing after the call to capture: the frame runs as it is
        st = self.same(f, lambda: (T([1.0]),))
        self.assertEqual((st["graphs"], st["breaks"], st["resume_functions"]), (0, 0, 0), st["break_reasons"])

    def test_no_break_when_a_live_value_cannot_be_rebuilt(self):
        def f(x):
            y = x * 2.0
            it = iter([1, 2])  # an iterator made here: bytecode cannot rebuild its position
            next(it)
            say("mid")
            return y, list(it)
        st = self.same(f, lambda: (T([1.0]),))
        self.assertEqual((st["graphs"], st["breaks"]), (0, 0), st["break_reasons"])

    def test_a_write_inside_the_breaking_call_is_not_redone(self):
        def helper(acc, x):
            acc.append(x)  # capture simulated this write inside the call that then broke
            say("helper")
            return len(acc)

        def f(x):
            acc = [x * 2.0]
            n = helper(acc, x)  # the interpreter runs this call again, from the start
            return acc, n
        st = self.same(f, lambda: (T([1.0]),))
        self.assertEqual(st["breaks"], 0, st)  # acc's append would run twice: the frame runs as is

    def test_a_write_before_the_breaking_instruction_is_kept(self):
        def f(x, log):
            acc = [x * 2.0]
            acc.append(x), log.reverse()  # acc's append is captured, log's reverse() is not
            return acc
        self.assert_broke(self.same(f, lambda: (T([1.0]), [])), "B005", ops=1)

    def test_each_part_between_breaks_is_a_graph(self):
        def f(x):
            y = x * 2.0
            say("one")
            z = y + 1.0
            say("two")
            return z * 3.0
        st = self.same(f, lambda: (T([1.0]),))
        self.assert_broke(st, "B008", ops=1)
        self.assertEqual((st["resume_graphs"], st["resume_breaks"]), (2, 1), st)

    def test_entries_breaking_at_one_place_share_its_resume_function(self):
        def f(x):
            y = x * 2.0
            say("mid")
            return y + 1.0
        jf = pj.jit(f)
        for shape in ((1,), (2,), (1,), (2,)):
            x = pj.ones(shape)
            self.assertEqual(run(jf, x), plain(f, x))
        st = pj.jit_stats(jf)
        # two entries (one per shape), one resume function, captured once per shape
        self.assertEqual((st["graphs"], st["breaks"], st["resume_functions"], st["resume_graphs"]), (2, 2, 1, 2), st)

    def test_a_break_three_calls_deep_keeps_every_callers_prefix(self):
        # The root breaks at its call; the callee, which had done tensor work, is captured in turn
        # when the interpreter calls it, and breaks at its own call: a graph and a resumed graph
        # at every level.
        def inner(x):
            y = x * 3.0
            say("inner", y.shape)
            return y + 1.0

        def middle(x):
            z = x - 1.0
            return inner(z) * 2.0

        def outer(x):
            a = x + 1.0
            b = middle(a)
            return b * 5.0
        self.same(outer, lambda: (T([1.0, 2.0]),))
        for fn in (outer, middle, inner):
            st = pj.jit_stats(fn)
            self.assertEqual((st["graphs"], st["breaks"], st["resume_graphs"], st["entries"][0]["ops"]), (1, 1, 1, 1),
                             (fn.__name__, st))
            self.assertIn("B008", st["break_reasons"][0])

    def test_a_callee_without_tensor_work_before_its_break_is_not_captured(self):
        def helper(x):
            say("helper")  # nothing worth a graph before the break: the call runs as it is
            return x * 2.0

        def f(x):
            y = x + 1.0
            return helper(y)
        st = self.same(f, lambda: (T([1.0]),))
        self.assertEqual((st["graphs"], st["breaks"]), (1, 1), st["break_reasons"])
        if not pj.stress_stats()["level"]:  # (stress mode makes every frame a candidate)
            self.assertEqual(pj.jit_stats(helper)["compiles"], 0)

    def test_a_failure_inside_a_loop_runs_the_body_as_a_captured_function(self):
        # No break point inside a loop (its resume function would break again each iteration, a
        # frame deeper): the interpreter runs the loop, each iteration a call of the loop's body,
        # which is captured with a break of its own (the matmul in a graph, float() eager).
        def step(x, w):
            return ops.relu(x @ w) * 2.0

        def train(x, w):
            total = 0.0
            for i in range(4):
                y = step(x, w)
                total += float(y.sum())
            return total
        x, w = pj.ones((2, 3)), pj.ones((3, 3))
        jf = pj.jit(train)
        for _ in range(3):
            self.assertEqual(run(jf, x, w), plain(train, x, w))
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["loop_bodies"], st["compiles"]), (0, 1, 1), st)
        line = train.__code__.co_firstlineno + 2
        self.assertEqual(st["entries"][0]["loop_body"], "%s:%d" % (train.__code__.co_filename, line))
        self.assertEqual(st["entries"][0]["reason"], "B002 DataDependent")
        self.assertGreaterEqual(st["resume_graphs"], 1, st)  # the body's graph, step inlined
        self.assertGreaterEqual(st["resume_breaks"], 1, st)  # ... breaking at float()

    def test_a_new_bound_method_each_call_does_not_recompile(self):
        # A bound method is made anew by every attribute read: it is guarded by its function and
        # its object, not by its identity.
        class Scale:
            def __init__(self, k):
                self.k = k

            def apply(self, t):
                return t * self.k

        def f(x, fn):
            return fn(x) + 1.0
        s = Scale(2.0)
        st = self.same(f, lambda: (T([1.0, 2.0]), s.apply), calls=4)
        self.assertEqual((st["graphs"], st["compiles"], st["recompiles"]), (1, 1, 0), st["recompile_reasons"])
        jf = pj.jit(f)
        self.assertEqual(run(jf, T([1.0]), Scale(3.0).apply), plain(f, T([1.0]), Scale(3.0).apply))

    def test_a_function_that_looks_at_its_frame_is_never_split(self):
        # The interpreter's part of a break (and a resume function) runs in a frame holding
        # pijit's own locals: locals(), eval and sys._getframe would see them. Such a function is
        # captured whole or runs as it is.
        import sys

        def counts(x):
            y = x * 2.0
            return y + len(locals())

        def evals(x):
            y = x * 2.0
            return eval("y + 1.0") * 2.0

        def frame_locals(x):
            y = x * 2.0
            return y + len(sys._getframe().f_locals)
        for fn in (counts, evals, frame_locals):
            st = self.same(fn, lambda: (T([1.0]),))
            self.assertEqual((st["graphs"], st["breaks"]), (0, 0), fn.__name__)
            self.assertIn("B008", st["break_reasons"][0])

    def test_a_break_inside_try_blocks_resumes_inside_them(self):
        # The resume function enters the try blocks again (SETUP_FINALLY / SETUP_EXCEPT at their
        # stack levels): what the interpreter's part raises reaches the same handlers.
        def f(x, n):
            y = x * 2.0
            try:
                try:
                    z = y + 1.0
                    say("in try", z.shape)
                    w = z / n  # ZeroDivisionError for n == 0 (a Python number), KeyError below
                    if n == 2:
                        raise KeyError("two")
                except ZeroDivisionError as e:
                    w = y - 1.0
                    say("caught", e)
                finally:
                    say("finally")
            except KeyError:
                w = y * 0.0
            return w * 3.0
        for n in (1, 0, 2, 1, 0):
            self.assertEqual(run(pj.jit(f), T([1.0]), n), plain(f, T([1.0]), n))
        st = pj.jit_stats(f)
        self.assertEqual((st["graphs"], st["breaks"], st["entries"][0]["ops"]), (1, 1, 2), st)

    def test_branch_on_a_tensor_value_resumes_each_side(self):
        def f(x):
            s = x.sum()
            if s > 0:
                y = x * 2.0
            else:
                y = x * -3.0
            return y + 1.0
        jf = pj.jit(f)
        for v in ([1.0, 2.0], [-1.0, -2.0], [3.0, 1.0], [-4.0, 0.5]):
            self.assertEqual(run(jf, T(v)), plain(f, T(v)))
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (1, 1, 1), st["break_reasons"])
        self.assertIn("B003", st["break_reasons"][0])
        self.assertEqual(st["resume_graphs"], 2, st)  # the `if` side and the `else` side

    def test_dropping_an_object_whose_finalizer_runs_code_breaks_there(self):
        # Plain Python runs a finalizer where the last reference goes; replayed effects run when
        # the captured part ends. So capture stops at `c = None` (B023) and __del__ logs before
        # the __exit__ that follows, as in plain Python.
        log = []

        class Tracked:
            def __init__(self, v):
                self.v = v

            def __del__(self):
                log.append("freed")

        class Exit:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                log.append("exit")
                return False

        def f(x):
            y = x * 2.0
            c = Tracked(y)  # B008: capture does not construct objects with __del__
            y = (y + c.v) * 3.0 - 1.0
            c = None
            with Exit():
                pass
            return y + 1.0

        def runs(fn):
            out = []
            for _ in range(3):
                del log[:]
                out.append((fn(T([1.0, 2.0])).tolist(), list(log)))
            return out
        want = runs(f)
        self.assertEqual(want[0], ([12.0, 24.0], ["freed", "exit"]))
        self.assertEqual(runs(pj.jit(f)), want)
        st = pj.jit_stats(f)
        self.assertIn("B008", st["break_reasons"][0])
        # the code after that break: a graph up to `c = None`, then a break there
        self.assertEqual((st["graphs"], st["breaks"], st["resume_graphs"], st["resume_breaks"]), (1, 1, 2, 1), st)
        report = pj.explain(f)(T([1.0, 2.0]))
        ids = [b.id for b in report.breaks]
        self.assertIn("B023", ids, str(report))
        b = report.breaks[ids.index("B023")]
        self.assertEqual(b.line, f.__code__.co_firstlineno + 4)
        self.assertIn("drops c (a Tracked whose finalizer runs code)", b.message)

if __name__ == "__main__":
    unittest.main()
