"""Capture of whole frames, written for Python 3.11's first step and run on every version: what the
hook does with a frame whose function is captured without a graph break (rewritten bytecode run in
place of the frame: on 3.11 a call of a function of the rewritten code, py::run_in_place), and what
it does at a graph break (the interpreter runs the rest through a resume function;
test_resume_functions has the cases).

On 3.11 capture is on unless PIJIT_PY311_CAPTURE=0 (then these tests skip there).
"""
import os
import subprocess
import sys
import textwrap
import unittest

import pijit as pj
from pijit import nn, ops

VERSION = sys.version_info[:2]
PY311 = VERSION == (3, 11)
ON = (3, 7) <= VERSION <= (3, 10) or (PY311 and os.environ.get("PIJIT_PY311_CAPTURE") != "0")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stats(jf):
    st = pj.jit_stats(jf)
    return st["graphs"], st["frames_rewritten"], len(st["break_reasons"])


def same(a, b):
    if isinstance(a, pj.Tensor):
        return isinstance(b, pj.Tensor) and a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


SCALE = 2.0


def plain(x, y):
    a = ops.tanh(x) * SCALE
    return a + y, [a.sum(), 3]


def signature(x, *rest, k=1.5, **kw):
    t = x * k
    for r in rest:
        t = t + r
    return t - kw.get("m", 0.0)


def make_closure(scale):
    offset = pj.Tensor([1.0, -1.0, 0.5])

    def inner(t):
        return t * scale + offset
    return inner


def cell_argument(x, n):
    def helper():
        return x * n  # x and n are cells: 3.11's MAKE_CELL takes them from the argument slots
    return helper() + 1.0


LOG = []


def effects(x, out):
    y = ops.relu(x)
    print("y is", y, sep=": ", end="!\n")  # keyword arguments: 3.11's KW_NAMES when replayed
    out.append(y.sum())
    LOG.append("called")  # (len(out) would read the list it changed: a break)
    return y * 2.0


def breaks(x):
    y = ops.exp(x)
    n = float(y.sum())  # reads a value: a graph break
    return y / n


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)
        self.scale = 0.5

    def construct(self, x):
        return ops.relu(self.fc(x)) * self.scale


@unittest.skipUnless(ON, "capture runs on Python 3.7-3.11 (3.11: not under PIJIT_PY311_CAPTURE=0)")
class WholeFrames(unittest.TestCase):
    X = pj.Tensor([0.5, -1.0, 2.0])
    Y = pj.Tensor([1.0, 2.0, 3.0])

    def test_a_function_is_one_graph_and_its_rewritten_frame_runs(self):
        want = plain(self.X, self.Y)
        pj.reset(plain)  # (counts from here: under PIJIT_STRESS the eager call was rewritten too)
        jf = pj.jit(plain)
        for _ in range(3):
            self.assertTrue(same(jf(self.X, self.Y), want))
        self.assertEqual(stats(jf), (1, 3, 0))

    def test_every_argument_kind_reaches_the_rewritten_code(self):
        jf = pj.jit(signature)
        calls = [((self.X,), {}), ((self.X, self.Y), {"k": 3.0}), ((self.X, self.Y, self.X), {"m": 1.0}),
                 ((self.X,), {"k": -1.0, "m": 2.0})]
        for a, k in calls:
            self.assertTrue(same(jf(*a, **k), signature(*a, **k)), (a, k))
        self.assertEqual(pj.jit_stats(jf)["frames_default"], 0)

    def test_free_variables_and_cells_of_arguments(self):
        f = make_closure(3.0)
        jf = pj.jit(f)
        self.assertTrue(same(jf(self.X), f(self.X)))
        jc = pj.jit(cell_argument)
        for n in (2.0, 3.0):
            self.assertTrue(same(jc(self.X, n), cell_argument(self.X, n)))
        self.assertEqual(pj.jit_stats(jc)["frames_default"], 0)

    def test_a_cell_is_one_graph(self):
        net = Net()
        x = pj.Tensor([[0.5, -1.0, 2.0]])
        want = net(x)
        net.scale = 2.0
        want2 = net(x)
        net.scale = 0.5
        pj.reset(Net.construct)  # (counts from here: under PIJIT_STRESS the eager calls were captured too)
        jn = pj.jit(net)
        for _ in range(2):
            self.assertTrue(same(jn(x), want))
        self.assertEqual(pj.jit_stats(jn)["graphs"], 1)
        net.scale = 2.0  # an attribute the graph read: its guard fails, a recompile follows it
        self.assertTrue(same(jn(x), want2))
        st = pj.jit_stats(jn)
        self.assertEqual((st["compiles"], st["recompiles"], st["graphs"]), (2, 1, 2))

    def test_effects_are_replayed_in_order_after_the_graph(self):
        import contextlib
        import io
        jf = pj.jit(effects)
        for fn in (effects, jf):
            del LOG[:]
            out = [1]
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                r = fn(self.X, out)
            if fn is effects:
                want = (r, out, list(LOG), buf.getvalue())
            else:
                self.assertTrue(same(r, want[0]))
                self.assertTrue(same(out, want[1]))
                self.assertEqual(list(LOG), want[2])
                self.assertEqual(buf.getvalue(), want[3])
        self.assertEqual(pj.jit_stats(jf)["graphs"], 1)

    def test_guards_follow_shapes_and_globals(self):
        global SCALE
        x4 = pj.Tensor([1.0, 2.0, 3.0, 4.0])
        want, want4 = plain(self.X, self.Y), plain(x4, x4)
        old, SCALE = SCALE, -1.0
        try:
            want_neg = plain(self.X, self.Y)
        finally:
            SCALE = old
        pj.reset(plain)  # (counts from here: under PIJIT_STRESS the eager calls were captured too)
        jf = pj.jit(plain)
        self.assertTrue(same(jf(self.X, self.Y), want))
        self.assertTrue(same(jf(x4, x4), want4))  # a new shape: a recompile
        old, SCALE = SCALE, -1.0
        try:
            self.assertTrue(same(jf(self.X, self.Y), want_neg))  # a new global value: a recompile
        finally:
            SCALE = old
        self.assertTrue(same(jf(self.X, self.Y), want))  # the first entry again
        st = pj.jit_stats(jf)
        self.assertEqual((st["compiles"], st["recompiles"], st["graphs"], len(st["break_reasons"])), (3, 2, 3, 0))

    def test_an_error_in_the_graph_raises_as_eager(self):
        jf = pj.jit(plain)
        jf(self.X, self.Y)
        bad = pj.Tensor([1.0, 2.0])
        with self.assertRaises(ValueError) as eager:
            plain(self.X, bad)
        with self.assertRaises(ValueError) as jitted:
            jf(self.X, bad)
        self.assertEqual(str(jitted.exception), str(eager.exception))

    def test_a_number_from_the_frame_indexes_as_itself_once_cpython_specializes(self):
        # Capture reads a frame's number as a fresh copy (identity tells it from an equal constant)
        # and rewritten code may load that copy as a constant. 3.11's specialized subscripts
        # (BINARY_SUBSCR_LIST_INT after a few calls) read a small int's index straight from its
        # first digit: a fresh 0 once had whatever memory held there, and a SubPattern of re's
        # parser returned another item (CPython's test_rewrite under stress).
        import ctypes
        from pijit import _C
        for v in (0, 1, -1, 7, 2 ** 40, -(2 ** 40)):
            c = _C._fresh_int(v)
            self.assertEqual(c, v)
            self.assertIsNot(c, v) if -5 <= v <= 256 else None
        for trial in range(50):
            junk = [(1 << 30) + 1 + k * 0 for k in range(500)]  # freed blocks whose first digit is 1
            del junk
            zero = _C._fresh_int(0)
            digit = ctypes.c_uint32.from_address(id(zero) + int.__basicsize__).value  # ob_digit[0]
            self.assertEqual(digit, 0)

        def sub(items, k):
            return items[k]
        zero = _C._fresh_int(0)
        for _ in range(40):  # (enough calls for CPython to specialize the subscript)
            self.assertEqual(sub(["first", "second"], zero), "first")

    def test_a_graph_break(self):
        jf = pj.jit(breaks)
        for _ in range(2):
            self.assertTrue(same(jf(self.X), breaks(self.X)))
        st = pj.jit_stats(jf)  # the graph before the break, a resume function's after it
        self.assertEqual((st["graphs"], st["breaks"], st["resume_graphs"]), (1, 1, 1), st["break_reasons"])
        self.assertTrue(st["break_reasons"][0].startswith("B002 "), st["break_reasons"])

    def test_stress_mode_runs_a_program_alike(self):
        """Every frame of a child a capture candidate (PIJIT_STRESS=2: refused frames run through
        pijit's reassembled code): the program prints what it prints plainly."""
        src = textwrap.dedent("""
            import collections, json, functools
            import pijit as pj
            from pijit import ops
            def fib(n):
                return n if n < 2 else fib(n - 1) + fib(n - 2)
            Pt = collections.namedtuple("Pt", "x y")
            def work(t):
                acc = []
                for i in range(3):
                    acc.append(ops.relu(t * i).sum().item())
                with open(__file__) as fh:
                    n = len(fh.readline())
                try:
                    {}["missing"]
                except KeyError as e:
                    acc.append(str(e))
                return acc, fib(12), Pt(1, 2)._replace(y=5), n
            print(json.dumps(work(pj.Tensor([1.0, -2.0, 3.0])), default=str))
            print(sorted(functools.reduce(lambda a, b: a + [b * b], range(5), [])))
        """)
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "pyscripts"))
        env.pop("PIJIT_STRESS", None)
        path = os.path.join(__import__("tempfile").mkdtemp(prefix="pijit_311_"), "prog.py")
        with open(path, "w") as f:
            f.write(src)
        plain_run = subprocess.run([sys.executable, path], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        env["PIJIT_STRESS"] = "2"
        stressed = subprocess.run([sys.executable, path], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual(plain_run.returncode, 0, plain_run.stdout.decode())
        self.assertEqual(stressed.stdout.decode(), plain_run.stdout.decode())
        self.assertEqual(stressed.returncode, 0)


if __name__ == "__main__":
    unittest.main()
