"""The direct call (runtime/direct_call.h): a graph entry whose rewritten code would only load the
graph's inputs, call the graph and return what it gave runs without that code, the hook passing the
graph the objects its guards resolved. Every test compares with eager Python and with the same
program run through the rewritten bytecode (PIJIT_DEBUG_NO_DIRECT=1, in a subprocess), and asserts
which entries take the direct call."""
import collections
import os
import subprocess
import sys
import tempfile
import textwrap
import traceback
import unittest

import pijit as pj
from pijit import nn, ops

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

Pair = collections.namedtuple("Pair", "a b")
SCALE = 2.0


def entry(jf, k=0):
    return pj.jit_stats(jf)["entries"][k]


def plain(fn, *args):
    stress = pj.stress_stats()["level"]
    pj.set_stress(False)
    try:
        return fn(*args)
    finally:
        pj.set_stress(stress)


def same(a, b):
    if isinstance(a, pj.Tensor):
        return type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class WhichEntriesAreDirect(unittest.TestCase):
    def run3(self, fn, *args):
        """Three calls (the first captures and runs the rewritten code, the others hit the cache)."""
        jf = pj.jit(fn)
        want = plain(fn, *args)
        for _ in range(3):
            self.assertTrue(same(want, jf(*args)))
        st = pj.jit_stats(jf)
        self.assertEqual((st["compiles"], st["cache_hits"], st["frames_rewritten"]), (1, 2, 3))
        # (the first call runs the rewritten code it just made; hits of a direct entry do not)
        self.assertEqual(st["frames_direct"], 2 if st["entries"][0]["direct"] else 0)
        return jf

    def test_a_pure_function_and_a_cell_are_direct(self):
        x = pj.Tensor([[1.0, -2.0], [3.0, 4.0]])
        self.assertTrue(entry(self.run3(lambda x: ops.relu(x * 2.0 + 1.0), x))["direct"])
        pj.set_seed(0)
        net = nn.SequentialCell([nn.Dense(2, 3), nn.ReLU(), nn.Dense(3, 1)])
        jnet = pj.jit(net)
        for _ in range(3):
            self.assertTrue(same(plain(net, x), jnet(x)))
        # (the entries of construct's code, which stress mode shares with every Cell: the one just hit first)
        self.assertTrue(entry(jnet)["direct"])

    def test_a_function_without_graph_work_is_direct_and_returns_its_argument_itself(self):
        x = pj.Tensor([1.0, 2.0])
        jf = self.run3(lambda x, n: (n, x), x, 3)
        self.assertTrue(entry(jf)["direct"])
        got = jf(x, 3)
        self.assertIs(got[1], x)
        self.assertEqual(got[0], 3)

    def test_side_effects_breaks_and_random_numbers_run_the_rewritten_code(self):
        x = pj.Tensor([1.0, 2.0])
        log = []

        def effect(x):
            log.append(1)
            return x + 1.0

        self.assertFalse(entry(self.run3(effect, x))["direct"])
        self.assertEqual(log, [1, 1, 1, 1])  # eager once, jitted three times

        def breaks(x):
            y = x * 2.0
            if y.sum() > 0:  # a branch on a tensor: a graph break
                return y
            return -y

        self.assertFalse(entry(self.run3(breaks, x))["direct"])

        def draws(x):
            return x + pj.rand((2,)) * 0.0

        jf = pj.jit(draws)
        for _ in range(3):
            self.assertEqual(jf(x).tolist(), [1.0, 2.0])
        self.assertFalse(entry(jf)["direct"])  # an impure graph's failure could not rerun eagerly

    def test_a_container_returned_twice_runs_the_rewritten_code(self):
        def f(x):
            l = [x + 1.0]
            return l, l

        jf = self.run3(f, pj.Tensor([1.0]))
        self.assertFalse(entry(jf)["direct"])
        a, b = jf(pj.Tensor([1.0]))
        self.assertIs(a, b)


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class ReturnValues(unittest.TestCase):
    def hits(self, fn, *args):
        jf = pj.jit(fn)
        jf(*args)
        self.assertTrue(entry(jf)["direct"], pj.jit_stats(jf)["entries"][0]["graph"])
        return jf

    def test_containers_constants_and_inputs_are_built_as_eager_builds_them(self):
        def f(x, y):
            z = x * y
            return (z, [z + 1.0, 3, "s"], {"b": x - y, "a": None}, Pair(z, 2.5), x)

        x, y = pj.Tensor([1.0, 2.0]), pj.Tensor([3.0, 4.0])
        jf = self.hits(f, x, y)
        for _ in range(2):
            got = jf(x, y)
            self.assertTrue(same(plain(f, x, y), got))
            self.assertIs(got[4], x)  # the argument itself, not a copy
            self.assertIs(got[1][0].__class__, pj.Tensor)
            self.assertIs(type(got[3]), Pair)
            self.assertIs(got[0], got[3].a)  # one graph output, one object

    def test_the_same_output_twice_is_one_object(self):
        def f(x):
            y = x + 1.0
            return y, y

        jf = self.hits(f, pj.Tensor([1.0]))
        a, b = jf(pj.Tensor([1.0]))
        self.assertIs(a, b)

    def test_inputs_read_through_attributes_items_globals_and_cells(self):
        class Box:
            pass

        box = Box()
        box.w = pj.Tensor([2.0, 3.0])
        table = {"k": pj.Tensor([1.0, 1.0])}
        bias = pj.Tensor([0.5, 0.5])

        def f(x):
            return x * box.w + table["k"] * SCALE + bias

        jf = self.hits(f, pj.Tensor([1.0, 2.0]))
        self.assertEqual(jf(pj.Tensor([1.0, 2.0])).tolist(), [4.5, 8.5])
        # In place and rebound: the next call reads the objects the paths lead to now.
        box.w[0] = 10.0
        table["k"] = pj.Tensor([0.0, 0.0])
        self.assertEqual(jf(pj.Tensor([1.0, 2.0])).tolist(), plain(f, pj.Tensor([1.0, 2.0])).tolist())
        self.assertEqual(jf(pj.Tensor([1.0, 2.0])).tolist(), [10.5, 6.5])

    def test_a_parameter_updated_between_calls_is_read_fresh(self):
        pj.set_seed(1)
        net = nn.Dense(2, 2)
        jnet = pj.jit(net)
        x = pj.Tensor([[1.0, 2.0]])
        jnet(x)
        self.assertTrue(entry(jnet)["direct"])
        net.weight.set_data(net.weight * 2.0)
        ops.assign(net.bias, net.bias + 1.0)
        self.assertEqual(jnet(x).tolist(), plain(net, x).tolist())


class Holder:
    def __init__(self, w, k):
        self.w = w
        self.k = k


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class PathsThroughUnchangedDicts(unittest.TestCase):
    """The guards reuse what a path read last time while the dict it is read from keeps its
    version tag (PEP 509): every object swap must still reach the graph."""

    def take_turns(self, k2, order):
        """x * h.w + h.k, called with h1 and h2 (k = 1 and k2) in `order`, each result eager's."""
        def f(x, h):
            return x * h.w + float(h.k)

        jf = pj.jit(f)
        pj.reset(jf)  # (f's code is shared by the tests that call this: its entries and counts too)
        x = pj.Tensor([1.0, 2.0])
        hs = {1: Holder(pj.Tensor([1.0, 1.0]), 1), 2: Holder(pj.Tensor([5.0, 7.0]), k2)}
        for i in order:
            self.assertEqual(jf(x, hs[i]).tolist(), plain(f, x, hs[i]).tolist())
        return jf, x, hs[1]

    def test_objects_taking_turns_each_reach_the_graph(self):
        jf, x, h1 = self.take_turns(1, (1, 2, 1, 1, 2, 1))
        self.assertEqual(pj.jit_stats(jf)["compiles"], 1)
        h1.w = pj.Tensor([3.0, 3.0])  # rebound: the dict's tag moves
        self.assertEqual(jf(x, h1).tolist(), [4.0, 7.0])

    def test_a_call_whose_guards_fail_leaves_nothing_behind(self):
        # h2's w is read (and passes) before its k fails the entry's guard: the next call with h1,
        # whose dict still has the tag the entry recorded, must read h1.w, not what h2's call read.
        jf, _, _ = self.take_turns(2, (1, 1, 2, 1, 2, 1))
        self.assertEqual(pj.jit_stats(jf)["compiles"], 2)

    def test_cells_and_parameters_replaced_and_put_back(self):
        pj.set_seed(2)
        net = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])
        first, other = net._cells["0"], nn.Dense(2, 2)
        jnet = pj.jit(net)
        x = pj.Tensor([[1.0, -1.0]])
        for cell in (first, other, first, other):
            net._cells["0"] = cell
            self.assertTrue(same(plain(net, x), jnet(x)))
        net._cells["0"] = first
        first._params["weight"] = pj.Parameter(pj.Tensor([[1.0, 0.0], [0.0, 1.0]]), name="w2")
        self.assertTrue(same(plain(net, x), jnet(x)))


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class Failures(unittest.TestCase):
    def test_a_graph_that_raises_reruns_eagerly_with_eager_traceback(self):
        def f(x, idx):
            y = x * 2.0
            return y[idx]  # the line the error points at

        jf = pj.jit(f)
        x = pj.Tensor([1.0, 2.0, 3.0])
        for _ in range(2):
            self.assertEqual(jf(x, pj.Tensor([0, 2])).tolist(), [2.0, 6.0])
        self.assertTrue(entry(jf)["direct"])
        try:
            jf(x, pj.Tensor([0, 9]))
            self.fail("no IndexError")
        except IndexError as e:  # (assertRaises drops the traceback)
            self.assertEqual(str(e), "index 9 is out of bounds for axis 0 with size 3")
            frames = [fs for fs in traceback.extract_tb(e.__traceback__) if fs.name == "f"]
        self.assertEqual([fs.line for fs in frames], ["return y[idx]  # the line the error points at"])
        st = pj.jit_stats(jf)
        self.assertEqual((st["compiles"], st["graph_failures"]), (1, 1))
        self.assertEqual(jf(x, pj.Tensor([1])).tolist(), [4.0])  # and the entry still runs

    def test_an_except_around_the_call_sees_the_eager_exception(self):
        def f(x, idx):
            return x[idx] + 1.0

        jf = pj.jit(f)
        x = pj.Tensor([1.0, 2.0])
        jf(x, pj.Tensor([0]))
        jf(x, pj.Tensor([0]))
        try:
            jf(x, pj.Tensor([5]))
        except IndexError as e:
            caught = str(e)
        self.assertIn("index 5 is out of bounds", caught)


CLOSED_OVER = [3.0]


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class Frameless(unittest.TestCase):
    """Once an entry's guards settle (two passing calls), a direct call of a function whose frame
    would hold only its positional arguments runs without a frame (runtime/eval_frame.cc
    run_frameless); whatever must see the frame, or may change what the guards saw, still gets it."""

    def warm(self, fn, *args, calls=5):
        jf = pj.jit(fn)
        want = plain(fn, *args)
        for _ in range(calls):
            self.assertTrue(same(want, jf(*args)))
        return jf

    def counts(self, jf):
        st = pj.jit_stats(jf)
        return st["frames_direct"], st["frames_frameless"]

    def test_settled_hits_run_without_a_frame(self):
        def f(x, y):
            return x * y + 1.0
        x, y = pj.Tensor([1.0, 2.0]), pj.Tensor([3.0, 4.0])
        jf = self.warm(f, x, y)
        # the first call captures; the second walks the guards and arms their fast pass
        self.assertEqual(self.counts(jf), (4, 3))
        self.assertEqual(pj.jit_stats(jf)["cache_hits"], 4)

    def test_calls_the_frame_would_hold_more_than_arguments_for_take_the_frame(self):
        def f(x, scale=2.0, *, bias=1.0):
            return x * scale + bias
        x = pj.Tensor([1.0, 2.0])
        jf = pj.jit(f)
        for _ in range(4):
            self.assertTrue(same(jf(x), plain(f, x)))
            self.assertTrue(same(jf(x, 3.0, bias=0.5), plain(lambda *a: f(*a, bias=0.5), x, 3.0)))
        self.assertEqual(pj.jit_stats(jf)["frames_frameless"], 0)

    def test_a_profiler_and_a_tracer_see_every_call(self):
        def f(x):
            return x + 1.0
        x = pj.Tensor([1.0])
        jf = self.warm(f, x)
        for hook in (sys.setprofile, sys.settrace):
            seen = []

            def watch(frame, event, arg):
                if event == "call" and frame.f_code is f.__code__:
                    seen.append(event)
                return None
            hook(watch)
            try:
                out = jf(x)
            finally:
                hook(None)
            self.assertEqual(out.tolist(), [2.0])
            self.assertEqual(seen, ["call"], hook.__name__)

    def test_globals_and_closed_over_values_rebound_between_calls(self):
        global SCALE
        box = [2.0]
        k = CLOSED_OVER

        def f(x):
            return x * SCALE + k[0] + box[0]
        x = pj.Tensor([1.0, 2.0])
        jf = self.warm(f, x)
        try:
            for v in (5.0, 7.0):
                SCALE = v
                CLOSED_OVER[0] = v + 1.0
                box[0] = v - 1.0
                for _ in range(3):
                    self.assertTrue(same(jf(x), plain(f, x)))
        finally:
            SCALE = 2.0
            CLOSED_OVER[0] = 3.0
        self.assertGreater(pj.jit_stats(jf)["frames_frameless"], 3)

    def test_a_cell_called_without_a_spare_argument_slot(self):
        # map() and f(*args) hand the arguments over without the slot a Cell's construct borrows
        pj.set_seed(6)
        net = nn.SequentialCell([nn.Dense(3, 2), nn.ReLU()])
        x = pj.Tensor([[1.0, -2.0, 3.0]])
        jn = self.warm(net, x)
        want = plain(net, x)
        for _ in range(3):
            self.assertTrue(same(list(map(jn, [x, x])), [want, want]))
            self.assertTrue(same(jn(*[x]), want))
        self.assertGreater(pj.jit_stats(jn)["frames_frameless"], 6)

    def test_the_walk_alone_gives_the_same_calls(self):
        # PIJIT_DEBUG_NO_FAST_GUARDS=1: no fast pass, so no frameless call either; same results
        code = textwrap.dedent('''
            import pijit as pj
            def f(x, y):
                return x * y + 1.0
            jf = pj.jit(f)
            x, y = pj.Tensor([1.0, 2.0]), pj.Tensor([3.0, 4.0])
            outs = [jf(x, y).tolist() for _ in range(5)]
            st = pj.jit_stats(jf)
            print(outs[-1], st["frames_direct"], st["frames_frameless"],
                  sum(e["guard_fast_passes"] for e in st["entries"]))
        ''')
        env = dict(os.environ, PIJIT_DEBUG_NO_FAST_GUARDS="1", PYTHONPATH=os.pathsep.join(sys.path))
        env.pop("PIJIT_STRESS", None)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split(), ["[4.0,", "9.0]", "4", "0", "0"])

    def test_a_cell_whose_layer_is_swapped_takes_the_new_layer(self):
        pj.set_seed(5)
        net = nn.SequentialCell([nn.Dense(3, 2), nn.ReLU()])
        x = pj.Tensor([[1.0, -2.0, 3.0]])
        jn = self.warm(net, x)
        self.assertGreater(pj.jit_stats(jn)["frames_frameless"], 0)
        net[1] = nn.Sigmoid()
        for _ in range(3):
            self.assertTrue(same(jn(x), plain(net, x)))


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class SameAsTheRewrittenCode(unittest.TestCase):
    """One program, run by the direct call and by the rewritten bytecode: same output, same counts."""

    PROGRAM = textwrap.dedent("""
        import collections, pijit as pj
        from pijit import nn, ops
        P = collections.namedtuple("P", "a b")
        pj.set_seed(3)
        net = nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2)])
        def f(x, w):
            z = x * w
            return z.sum(), [z, 1], {"k": z - 1.0}, P(x, z), w
        jf, jnet = pj.jit(f), pj.jit(net)
        x = pj.Tensor([[1.0, -2.0, 3.0]])
        for i in range(4):
            r = jf(x, pj.Tensor([float(i), 1.0, 2.0]))
            print(r[0].tolist(), r[1][0].tolist(), r[2]["k"].tolist(), type(r[3]).__name__, r[4].tolist())
            print(jnet(x * float(i)).tolist())
        for g in (jf, jnet):
            st = pj.jit_stats(g)
            print(st["compiles"], st["cache_hits"], st["frames_rewritten"], st["frames_direct"],
                  st["entries"][0]["direct"])
    """)

    def run_program(self, **env):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "prog.py")
            with open(path, "w") as fh:
                fh.write(self.PROGRAM)
            full = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "pyscripts"), **env)
            full.pop("PIJIT_STRESS", None)
            r = subprocess.run([sys.executable, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, env=full, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.splitlines()

    def test_output_and_counts_agree(self):
        direct = self.run_program()
        rewritten = self.run_program(PIJIT_DEBUG_NO_DIRECT="1")
        self.assertEqual(direct[:-2], rewritten[:-2])
        # The entry is direct either way; the switch makes its hits run the rewritten code.
        self.assertEqual(direct[-2:], ["1 3 4 3 True", "1 3 4 3 True"])
        self.assertEqual(rewritten[-2:], ["1 3 4 0 True", "1 3 4 0 True"])


if __name__ == "__main__":
    unittest.main()
