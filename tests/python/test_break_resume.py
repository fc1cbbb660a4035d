"""Graph breaks that leave a graph on both sides (issue 45): the interpreter runs exactly the
instruction capture could not (an item() inside an expression, a call it cannot simulate), and the
resume function starts after it with its result on the stack. Each test compares every call with
plain Python (results, printed output, the caller's containers) and counts the graphs of the
function and of the resume functions its breaks made."""
import io
import json
import math
import contextlib
import unittest

import pijit as pj
from jit_compare import plain, run, say, show
from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY

T = pj.Tensor


def pieces(fn):
    """[(resume?, graphs, ops per graph, recompiles)] of fn's code objects, the function first."""
    code = fn.__code__
    out = []
    for e in pj._C.capture_summary():
        if e["function"] == code.co_name and e["file"] == code.co_filename and e["line"] == code.co_firstlineno:
            out.append((e["resume"], e["graphs"], e["ops_per_graph"], e["recompiles"]))
    return sorted(out, key=lambda p: p[0])


def floor_of_mean(x):
    y = x * 2.0
    k = math.floor(y.mean().item())  # the interpreter runs item(); mean is in the graph
    z = y + k
    return z * 3.0


def dumps_the_max(x):
    y = x + 1.0
    s = json.dumps({"top": round(y.max().item(), 4)})
    return y * 2.0, s


class Helper(object):
    def scale(self, v):
        return v + 1.0


def method_pair_below(obj, x):
    y = x * 2.0
    k = obj.scale(y.sum().item())  # obj.scale's pair is on the stack when item() breaks
    return y * k


def write_first(x, out):
    out.write("start\n")  # a stream's method: the interpreter's, before any op
    return x * 2.0 - 1.0


def returns_the_call(x, out):
    return out.write(str(len(x.shape)))  # nothing after the call: no break


def reads_and_pops(x, d, lst):
    a = d.get("a", 0.0)          # a read along d's guard path
    b = d.setdefault("b", 3.0)   # absent: stored after the graph, 3.0 returned
    p = lst.pop()                # the last item, removed after the graph
    q = lst.pop(0)
    return x * a + b + p + q


def setdefault_present(x, d):
    return x * d.setdefault("a", 9.0)  # present: nothing changes


def last_item(x, lst):
    return x * lst[-1]


def built_list_holds_the_argument(l, x):
    return [l][0] is l, x + 1.0


def while_on_a_tensor(x):
    y = x * 2.0
    while y.sum() < 100.0:  # the condition reads a tensor: the loop runs its body as a function
        y = y * 3.0 + 1.0
    z = (y - 50.0).abs() * 2.0  # after the loop: a resume function's graph
    return z + 1.0


def for_with_item_inside(x):
    total = 0.0
    for k in range(3):
        total += (x * k).sum().item()  # a read inside the body
    w = x * total  # after the loop, its locals handed over
    return w - 1.0


def maybe_bound_after_the_loop(x):
    while x.sum() < 10.0:
        x = x * 2.0
        last = 1.0  # bound only if the loop ran
    return x + (last if x.sum() > 20.0 else 0.0)  # (unbound, read: UnboundLocalError, as plain)


def same(self, f, make_args, calls=3):
    """Each call of jitted f equals plain f: results, and what it did to its arguments (the
    caller's containers, changed alike). Returns f's jit_stats."""
    pj.reset(f)
    jf = pj.jit(f)
    for i in range(calls):
        plain_args, jit_args = make_args(i), make_args(i)
        self.assertEqual(run(jf, *jit_args), plain(f, *plain_args))
        self.assertEqual(show(jit_args), show(plain_args))
    return pj.jit_stats(jf)


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class BreakInsideAnExpression(unittest.TestCase):
    same = same

    def test_item_inside_a_call_keeps_the_op_before_it_and_the_code_after_it(self):
        st = self.same(floor_of_mean, lambda i: (T([1.0, 2.0, 3.0]) * (i + 1),), calls=6)
        self.assertEqual((st["graphs"], st["breaks"]), (1, 1), st["break_reasons"])
        self.assertIn("B002 DataDependent", st["break_reasons"][0])
        self.assertEqual(st["entries"][0]["ops"], 2, st["entries"][0]["graph"])  # mul and mean
        self.assertGreaterEqual(st["resume_graphs"], 1)
        # item() differs on every call: no resume function recompiles for its value
        self.assertEqual([p[3] for p in pieces(floor_of_mean)], [0] * len(pieces(floor_of_mean)))
        ops_after = [n for p in pieces(floor_of_mean) if p[0] for n in p[2]]
        self.assertIn(2, ops_after, pieces(floor_of_mean))  # `y + k` and `* 3.0`, k a graph input

    def test_a_call_capture_cannot_simulate_after_item_leaves_the_rest_a_graph(self):
        st = self.same(dumps_the_max, lambda i: (T([1.0, 2.0, 3.0]) + i,))
        self.assertEqual((st["graphs"], st["breaks"]), (1, 1), st["break_reasons"])
        self.assertEqual(st["entries"][0]["ops"], 2, st["entries"][0]["graph"])  # add and max
        self.assertGreaterEqual(st["resume_graphs"], 1)  # y * 2.0 after json.dumps

    def test_a_method_pair_below_the_break_is_handed_to_the_resume_function(self):
        h = Helper()
        st = self.same(method_pair_below, lambda i: (h, T([1.0, 2.0]) * (i + 1)))
        self.assertEqual((st["graphs"], st["breaks"]), (1, 1), st["break_reasons"])
        self.assertEqual(st["entries"][0]["ops"], 2, st["entries"][0]["graph"])  # mul and sum
        self.assertGreaterEqual(st["resume_graphs"], 1)
        self.assertEqual(st["recompiles"], 0)

    def test_a_break_before_any_op_leaves_the_code_after_it_a_graph(self):
        buf_plain, buf_jit = io.StringIO(), io.StringIO()
        jf = pj.jit(write_first)
        for i in range(3):
            self.assertEqual(show(jf(T([1.0, 2.0]), buf_jit)), show(write_first(T([1.0, 2.0]), buf_plain)))
        self.assertEqual(buf_jit.getvalue(), buf_plain.getvalue())
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["breaks"], st["resume_graphs"]), (0, 1, 1), st["break_reasons"])
        self.assertIn("B008 UnsupportedCall", st["break_reasons"][0])

    def test_no_break_before_any_op_when_nothing_follows_the_call(self):
        jf = pj.jit(returns_the_call)
        buf = io.StringIO()
        for _ in range(2):
            self.assertEqual(jf(T([1.0]), buf), 1)
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["breaks"], st["resume_functions"]), (0, 0, 0), st["break_reasons"])


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class AfterALoop(unittest.TestCase):
    """A loop whose body breaks runs its body as a function per iteration; where the loop ends,
    the code after it is a resume function of its own, so it is a graph again."""
    same = same

    def graphs_after(self, fn, first_line):
        """Ops per graph of fn's resume functions whose graphs all lie at or after line
        def + first_line (the code after the loop)."""
        first = fn.__code__.co_firstlineno
        out = []
        for e in pj._C.capture_summary():
            if e["function"] == fn.__name__ and e["file"] == fn.__code__.co_filename and e["resume"] and \
                    e["graph_lines"] and min(e["graph_lines"]) >= first + first_line:
                out += e["ops_per_graph"]
        return sorted(set(out))

    def test_the_code_after_a_while_on_a_tensor_is_a_graph(self):
        st = self.same(while_on_a_tensor, lambda i: (T([1.0, 2.0]) * (i + 1),))
        self.assertEqual(st["graphs"], 1, st["break_reasons"])  # y = x * 2.0 before the loop
        self.assertEqual(self.graphs_after(while_on_a_tensor, 4), [4])  # sub, abs, mul, add

    def test_the_code_after_a_for_loop_with_item_inside_is_a_graph(self):
        # (k, the loop's variable, is bound only if an iteration ran: handed over as it is)
        self.same(for_with_item_inside, lambda i: (T([1.0, 2.0]) + i,))
        self.assertEqual(self.graphs_after(for_with_item_inside, 4), [2])  # mul, sub

    def test_a_local_the_loop_may_leave_unbound_is_handed_over_bound_or_not(self):
        for start in (1.0, 20.0):  # the loop runs (`last` bound), or not (reading it raises)
            self.same(maybe_bound_after_the_loop, lambda i: (T([start, start]),))
        self.assertTrue(self.graphs_after(maybe_bound_after_the_loop, 4))


G_D = {"a": 1.5, "b": 2}


def ramp(t, n=1):
    for i in range(n):
        yield (t * 0.0 + 1.0) * i


class Holder(pj.nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = pj.Parameter(T([0.0, -0.5, 0.0]), name="p")


HOLDER = Holder()


def deep_chain(x, y, lst):
    t3 = y
    for e in ramp(x, 3):  # a loop whose body breaks; the rest of f a resume function
        t3 = t3 + e
    G_D.pop("c", None)  # a break; and another below
    t4 = t3 * 2.0 if bool((T(0.25) > 0.0).all()) else t3
    w = 0
    while w < min(len(lst), 4):  # a loop whose body breaks, inside the resume functions
        n = int((HOLDER.p.sum() > 0).sum())
        raise ValueError("bad %r" % (n,))
    return t4


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class Tracebacks(unittest.TestCase):
    def test_an_exception_deep_in_a_chain_of_continuations_has_the_plain_traceback(self):
        # (found by the fuzzer, seed 23: the traceback kept the outlined loop's frame once the
        # chain of continuation frames under it was deeper than the walk that drops it went)
        import traceback

        def outcome(fn):
            try:
                return ("ok", fn(T([1.0, 2.0]), T([0.5, 0.5]), [1, 2]).tolist())
            except ValueError as e:
                return ("raises", str(e), [(t.name, t.line) for t in traceback.extract_tb(e.__traceback__)][1:])
        jf = pj.jit(deep_chain)
        for _ in range(3):
            self.assertEqual(outcome(jf), outcome(deep_chain))


class Quiet(object):
    """A user context manager whose __exit__ swallows KeyError and ValueError."""

    def __init__(self):
        self.log = []

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, t, v, tb):
        self.log.append(("exit", None if t is None else t.__name__))
        return t is not None and issubclass(t, (KeyError, ValueError))


QUIET = Quiet()


def parse_in_try(x, text):
    y = x * 2.0
    try:
        k = json.loads(text)["k"]  # the interpreter runs json.loads, which may raise ValueError
        z = y + k
    except (KeyError, ValueError):
        z = y - 1.0
    return z * 3.0


def say_in_with(x, d):
    y = x * 2.0
    with QUIET:
        say("inside", len(d))  # a stream's method: the interpreter's
        z = y + d["k"]  # KeyError (simulated): QUIET's __exit__ swallows it
        y = z * 2.0
    return y + 1.0


def raise_in_with(x, text):
    y = x * 2.0
    with QUIET:
        y = y + json.loads(text)  # the interpreter's ValueError reaches QUIET's __exit__
        y = y * 2.0
    return y + 1.0


def try_inside_with(x, text):
    y = x * 2.0
    with QUIET:
        try:
            y = y + json.loads(text)["k"]  # ValueError: the inner handler; KeyError: QUIET
        except ValueError:
            y = y - 1.0
        y = y * 2.0
    return y + 1.0


def finally_after(x, text, log):
    y = x + 1.0
    try:
        log.append(json.loads(text))
        y = y * 3.0
    finally:
        log.append("finally")
        y = y - 1.0
    return y


def unhandled(x, text):
    y = x * 2.0
    try:
        k = json.loads(text)["k"]
    except KeyError:
        k = 0.0
    return y + k


class Noisy(object):
    """A context manager whose __exit__ capture cannot simulate (a stream's method)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        say("exit")
        return False


def exit_on_the_last_line(x, m):
    with m:
        y = x * 2.0
        k = 3.0  # 3.7/3.9: the with-block's exit code carries this line
    return y + k


def reraise_in_try(x):
    y = x * 2.0
    try:
        raise  # re-raises what the caller handles: no traceback entry of its own
    except KeyError:
        return y + 1.0


def context_of_caught(x, text):
    y = x * 2.0
    try:
        v = json.loads(text)  # the interpreter's; its error's __context__ is json's StopIteration
    except ValueError as e:
        return y, repr(e.__context__)
    return y + v, None


class MyList(list):
    pass


class Nothing(pj.nn.Cell):
    def construct(self, x):
        pass


class ReturnThroughFinally(pj.nn.Cell):
    """(fuzz seed 12, program 1200228: a break at the return's POP_BLOCK ran it inside the
    catch-all, which it popped instead: a fatal block stack underflow)"""

    def __init__(self):
        super().__init__()
        self.inner = Nothing()

    def construct(self, x, l, n):
        try:
            ln1 = [n]
            try:
                if len(l) > 1:  # len() of a list subclass: a break
                    return (self.inner(x), n, [self.inner(x)], l), ln1
            finally:
                ln1.append(len(ln1))
        except AssertionError:
            pass


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class InsideBlocks(unittest.TestCase):
    """A break inside a try or with block: the interpreter runs the failing instruction inside the
    same blocks (what it raises is caught and raised again by a resume function inside them), and
    the rest of the block, its handlers and the code after it are graphs again."""
    same = same

    def resume_graphs(self, fn):
        """Ops per graph of fn's resume functions, one sorted list per resume function."""
        return sorted(sorted(p[2]) for p in pieces(fn) if p[0] and p[1])

    def check_one_break(self, st):
        self.assertEqual((st["graphs"], st["breaks"]), (1, 1), st["break_reasons"])
        self.assertEqual(st["entries"][0]["ops"], 1, st["entries"][0]["graph"])  # the op before the block

    def test_a_break_inside_try_leaves_the_rest_the_handler_and_the_code_after_graphs(self):
        texts = ['{"k": 2}', '{"j": 1}', "not json"]
        st = self.same(parse_in_try, lambda i: (T([1.0, 2.0]) * (i + 1), texts[i % 3]), calls=6)
        self.check_one_break(st)
        # after json.loads: `y + k, * 3.0` or (KeyError) `y - 1.0, * 3.0`; the interpreter's
        # ValueError, raised again inside the try: `y - 1.0, * 3.0`
        self.assertEqual(self.resume_graphs(parse_in_try), [[2], [2, 2]], pieces(parse_in_try))
        self.assertEqual(sorted(p[3] for p in pieces(parse_in_try)), [0, 0, 1], pieces(parse_in_try))

    def test_a_break_inside_a_with_block_leaves_the_rest_of_it_and_the_code_after_graphs(self):
        del QUIET.log[:]
        st = self.same(say_in_with, lambda i: (T([1.0, 2.0]) * (i + 1), [{"k": 1.0}, {}][i % 2]), calls=4)
        self.check_one_break(st)
        self.assertEqual(QUIET.log, (["enter", ("exit", None)] * 2 + ["enter", ("exit", "KeyError")] * 2) * 2)
        graphs = self.resume_graphs(say_in_with)
        self.assertEqual(len(graphs), 1, pieces(say_in_with))
        self.assertEqual(graphs[0], [1, 3], graphs)  # KeyError: `+ 1.0`; else add, mul, add

    def test_an_exception_the_interpreter_raises_inside_a_with_block_reaches_exit(self):
        del QUIET.log[:]
        st = self.same(raise_in_with, lambda i: (T([1.0, 2.0]), ["2.5", "{bad"][i % 2]), calls=4)
        self.check_one_break(st)
        self.assertEqual(QUIET.log, (["enter", ("exit", None)] * 2 + ["enter", ("exit", "JSONDecodeError")] * 2) * 2)
        self.assertEqual(self.resume_graphs(raise_in_with), [[1], [3]], pieces(raise_in_with))

    def test_a_try_inside_a_with_block_sends_each_exception_to_its_own_handler(self):
        texts = ['{"k": 1.5}', "oops", '{"j": 0}']
        st = self.same(try_inside_with, lambda i: (T([1.0, 2.0]), texts[i % 3]), calls=6)
        self.check_one_break(st)
        graphs = self.resume_graphs(try_inside_with)
        self.assertIn([3], graphs, pieces(try_inside_with))  # ValueError: sub, mul, add
        self.assertIn([1, 3], graphs, pieces(try_inside_with))  # KeyError swallowed: `+ 1.0`; else add, mul, add
        self.assertTrue(any(g.count(3) for g in graphs), graphs)

    def test_a_finally_block_runs_once_on_each_path(self):
        st = self.same(finally_after, lambda i: (T([1.0]) * i, ["1", "bad", "[2]"][i % 3], []), calls=6)
        self.check_one_break(st)
        self.assertTrue(self.resume_graphs(finally_after), pieces(finally_after))
        self.assertIn([2], self.resume_graphs(finally_after))  # `y * 3.0`, then the finally's `y - 1.0`
        self.assertEqual(st["recompiles"], 0)

    def test_a_return_through_finally_blocks_after_a_break(self):
        net = ReturnThroughFinally()
        st = self.same(net.construct, lambda i: (T([1.0, -1.5]), MyList([2.0, 5, 0.5]), 2))
        self.assertEqual((st["breaks"], st["recompiles"]), (1, 0), st["break_reasons"])

    def test_a_with_block_whose_exit_breaks_on_its_last_line(self):
        import sys
        st = self.same(exit_on_the_last_line, lambda i: (T([1.0, 2.0]) * (i + 1), Noisy()))
        if sys.version_info >= (3, 8):  # (3.7 refuses the capture: its with-cleanup protocol)
            self.check_one_break(st)
        if sys.version_info >= (3, 9):  # (3.8: the code after its BEGIN_FINALLY exit runs as it is)
            self.assertEqual(self.resume_graphs(exit_on_the_last_line), [[1]])  # `y + k` after __exit__

    def test_a_bare_raise_inside_try_keeps_the_traceback_of_what_it_re_raises(self):
        import traceback

        def outcome(fn):
            try:
                {}["missing"] if fn is not None else None
            except KeyError:
                try:
                    try:
                        raise TypeError("inner")
                    except TypeError:
                        return ("ok", fn(T([1.0])).tolist())
                except TypeError as e:
                    return ("raises", str(e), [(t.name, t.line) for t in traceback.extract_tb(e.__traceback__)])
        jf = pj.jit(reraise_in_try)
        for _ in range(3):
            self.assertEqual(outcome(jf)[:2], outcome(reraise_in_try)[:2])
            self.assertEqual(outcome(jf)[2][-1], outcome(reraise_in_try)[2][-1])

    def test_an_exception_raised_again_keeps_its_context(self):
        # (raised again by a raise statement, it would be chained to what the caller handles)
        jf = pj.jit(context_of_caught)
        for text in ("1.5", "nope", "nope"):
            try:
                raise KeyError("the caller handles this")
            except KeyError:
                got, want = jf(T([1.0]), text), context_of_caught(T([1.0]), text)
            self.assertEqual(show(got), show(want))
        self.assertEqual(want[1], "StopIteration(0)")
        self.assertEqual(pj.jit_stats(jf)["breaks"], 1)

    def test_an_exception_no_handler_takes_has_the_plain_traceback(self):
        import traceback

        def outcome(fn, text):
            try:
                return ("ok", fn(T([1.0]), text).tolist())
            except ValueError as e:
                return ("raises", type(e).__name__, str(e),
                        [(t.name, t.lineno, t.line) for t in traceback.extract_tb(e.__traceback__)][1:],
                        repr(e.__context__))
        jf = pj.jit(unhandled)
        for text in ['{"k": 1}', "nope", '{"j": 1}', "nope"]:
            self.assertEqual(outcome(jf, text), outcome(unhandled, text))
        self.assertEqual(pj.jit_stats(jf)["breaks"], 1)


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class CallersContainers(unittest.TestCase):
    """dict.get, dict.setdefault and list.pop on the caller's containers: read through guards, the
    change replayed after the graph, so the function stays one graph."""

    same = same

    def test_get_setdefault_and_pop_are_one_graph(self):
        st = self.same(reads_and_pops, lambda i: (T([1.0, 2.0]) * (i + 1), {"a": 2.0}, [1.0, 5.0, 3.0, 4.0]))
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (1, 0, 1), st["break_reasons"])
        self.assertEqual(len(st["entries"][0]["effects"]), 3, st["entries"][0]["effects"])  # setdefault, pop, pop

    def test_setdefault_of_a_present_key_changes_nothing(self):
        st = self.same(setdefault_present, lambda i: (T([1.0, 2.0]), {"a": 2.0}))
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (1, 0, 1), st["break_reasons"])
        self.assertEqual(st["entries"][0]["effects"], [])

    def test_pop_of_an_empty_list_raises_as_eager(self):
        def pop_one(x, lst):
            return x * lst.pop()
        jf = pj.jit(pop_one)
        self.assertEqual(jf(T([1.0]), [2.0]).tolist(), [2.0])
        with self.assertRaisesRegex(IndexError, "pop from empty list"):
            jf(T([1.0]), [])


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class WhatCaptureReads(unittest.TestCase):
    def test_a_negative_index_guards_what_it_reads(self):
        # lst[-1] is the last item whatever the length: the guard reads it so (it never passed)
        jf = pj.jit(last_item)
        for lst in ([1.0, 2.0], [5.0, 7.0, 2.0], [2.0]):
            self.assertEqual(show(jf(T([1.0, 3.0]), lst)), show(last_item(T([1.0, 3.0]), lst)))
        st = pj.jit_stats(jf)
        self.assertEqual((st["compiles"], st["recompiles"]), (1, 0), st["recompile_reasons"])
        self.assertEqual(show(jf(T([1.0, 3.0]), [4.0])), show(last_item(T([1.0, 3.0]), [4.0])))
        st = pj.jit_stats(jf)
        self.assertEqual(st["recompiles"], 1)
        self.assertIn("lst[-1]", st["recompile_reasons"][0])

    def test_a_list_built_here_holds_the_argument_itself(self):
        jf = pj.jit(built_list_holds_the_argument)
        l = [1]
        got = jf(l, T([1.0]))
        self.assertIs(got[0], True)
        self.assertEqual(show(got), show(built_list_holds_the_argument(l, T([1.0]))))
        self.assertEqual(pj.jit_stats(jf)["graphs"], 1)


if __name__ == "__main__":
    unittest.main()
