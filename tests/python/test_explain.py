"""pijit.explain, cache_entries and reset (issue 15, first part). What a user relies on: the report
names each break's reason id, line and function, each recompile's guard with old and new value, the
graphs and their op counts, grows with every call through the same wrapper, and its fields are
attributes; reset makes the next call capture again; `python -m pijit explain` prints it."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import pijit as pj
from pijit import ops
from jit_compare import CAPTURE_OFF_WHY, CAPTURE_ON

HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "pyscripts")


def breaking(x, n):
    y = ops.relu(x * 2) + n
    if float(y.sum()) > 0:  # reads a value: a graph break here
        y = y * 3
    return y - 1


def inner(y):
    return y * float(y.sum())  # the break, two calls deep


def middle(y):
    return inner(y + 1) - 1


def outer(x):
    return middle(ops.relu(x))


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (the report of what capture did)
class Explain(unittest.TestCase):
    def setUp(self):
        pj.reset(breaking)

    def test_a_break_in_inlined_code_shows_its_inline_chain(self):
        pj.reset(outer)
        report = pj.explain(outer)(pj.Tensor([1.0, 2.0]))
        first = [f for f in report.functions if f.function == "outer"][0]
        b = first.breaks[0]
        line = inner.__code__.co_firstlineno + 1
        self.assertEqual((b.function, b.line), ("inner", line))
        here = __file__.replace(".pyc", ".py")
        self.assertEqual(b.chain, ["outer (%s:%d)" % (here, outer.__code__.co_firstlineno + 1),
                                   "middle (%s:%d)" % (here, middle.__code__.co_firstlineno + 1),
                                   "inner (%s:%d)" % (here, line)])
        self.assertIn("    inlined: outer (", str(report))
        self.assertEqual(report.outputs[0].tolist(), ((pj.Tensor([1.0, 2.0]) + 1) * 5.0 - 1).tolist())

    def test_summary_of_chosen_codes_and_counters(self):
        # explain compares counters around each call and reads only the rows of the codes the call
        # touched: its cost does not grow with every function the process captured
        pj.explain(breaking)(pj.Tensor([1.0, 2.0]), 1)
        full = [r for r in pj._C.capture_summary() if r["code"] is breaking.__code__]
        chosen = pj._C.capture_summary([breaking.__code__])
        self.assertEqual(len(full), 1)
        self.assertEqual(len(chosen), 1)
        self.assertEqual({k: v for k, v in chosen[0].items() if not k.endswith("_ms")},
                         {k: v for k, v in full[0].items() if not k.endswith("_ms")})
        self.assertEqual(pj._C.capture_summary([]), [])
        row = [c for c in pj._C.capture_counters() if c[0] is breaking.__code__][0]
        self.assertEqual(row[1:], (full[0]["compiles"], full[0]["cache_hits"], full[0]["graph_runs"],
                                   full[0]["recompiles"]))
        with self.assertRaisesRegex(TypeError, "capture_summary: expected code objects, got 'int'"):
            pj._C.capture_summary([1])

    def test_breaks_recompiles_and_counts(self):
        ex = pj.explain(breaking)
        line = breaking.__code__.co_firstlineno + 2
        report = ex(pj.Tensor([1.0, 2.0]), 1)
        self.assertEqual(report.break_count, 1)
        b = report.breaks[0]
        self.assertEqual((b.line, b.function, b.file), (line, "breaking", __file__.replace(".pyc", ".py")))
        self.assertTrue(b.id.startswith("B"), b.id)
        self.assertIn("float", b.message)
        self.assertGreaterEqual(report.graph_count, 2)  # before the break, and the resume function's
        self.assertEqual(report.recompiles, [])
        report = ex(pj.Tensor([1.0, 2.0, 3.0]), 1)  # a new shape: recompiles, the report grows
        self.assertIn("x.shape[0]: 2 -> 3", report.recompiles)
        self.assertEqual(len(report.outputs), 2)
        self.assertEqual(report.outputs[1].tolist(), ((pj.Tensor([1.0, 2.0, 3.0]) * 2 + 1) * 3 - 1).tolist())
        text = str(report)
        self.assertIn("function breaking", text)
        self.assertIn("break %s" % b.text, text)
        self.assertIn("recompiled: x.shape[0]: 2 -> 3", text)
        # only x's size changed: the recompile made it a symbol (issue 17)
        self.assertIn("x: Tensor Float32[s0] (dynamic: s0 >= 2)", report.guards)
        f = [f for f in report.functions if f.kind == "function"][0]
        # relu, add and more in a graph (under PIJIT_STRESS an injected break may leave the
        # function's own graph empty and put them in its resume function's)
        self.assertGreaterEqual(max(report.ops_per_graph), 2, report.ops_per_graph)
        self.assertGreater(f.capture_ms, 0)
        self.assertGreater(sum(g.graph_runs for g in report.functions), 0)

    def test_cache_entries_and_reset(self):
        jf = pj.jit(breaking)
        jf(pj.Tensor([1.0]), 2)
        jf(pj.Tensor([1.0, 2.0]), 2)
        entries = pj.cache_entries(breaking)
        self.assertEqual(len(entries), 2)
        self.assertTrue(all(e["ops"] > 0 and e["graph_break"] for e in entries))
        # what each entry cost to make: capture (both passes of its break) and compile, apart
        self.assertTrue(all(e["capture_ms"] > 0 and e["compile_ms"] > 0 for e in entries), entries)
        st = pj.jit_stats(jf)
        self.assertEqual([(e["capture_ms"], e["compile_ms"]) for e in st["entries"]],
                         [(e["capture_ms"], e["compile_ms"]) for e in entries])
        self.assertEqual(pj.jit_stats(jf)["compiles"], 2)
        pj.reset(jf)
        self.assertEqual((pj.jit_stats(jf)["compiles"], pj.cache_entries(breaking)), (0, []))
        jf(pj.Tensor([1.0]), 2)
        self.assertEqual(pj.jit_stats(jf)["compiles"], 1)
        pj.reset()
        self.assertEqual(pj.jit_stats(jf)["compiles"], 0)

    def test_skip_and_only(self):
        src = textwrap.dedent("""
            import pijit as pj

            @pj.jit
            def f(x):
                return x + 1

            class C(object):
                @pj.jit
                def g(self, x):
                    return x * 2

            f(pj.Tensor([1.0])); C().g(pj.Tensor([1.0]))
            print(pj.jit_stats(f)["compiles"], pj.jit_stats(C.g)["compiles"])
        """)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "prog.py")
            with open(path, "w") as fh:
                fh.write(src)
            outs = []
            for env in ({}, {"PIJIT_SKIP": "__main__:f"}, {"PIJIT_SKIP": "__main__:C.g,other:x"},
                        {"PIJIT_ONLY": "prog.py:10"}, {"PIJIT_ONLY": "__main__:*"}, {"PIJIT_ONLY": "elsewhere:f"}):
                p = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120,
                                   env=dict(os.environ, PYTHONPATH=PYSCRIPTS, **env))
                self.assertEqual(p.returncode, 0, p.stderr)
                outs.append(p.stdout.strip())
        self.assertEqual(outs, ["1 1", "0 1", "1 0", "0 1", "1 1", "0 0"])

    def test_log_categories(self):
        with self.assertRaisesRegex(ValueError, "unknown log category 'bogus' \\(known: breaks, guards"):
            pj.set_logs("breaks,bogus")
        with self.assertRaisesRegex(TypeError, "comma-separated str"):
            pj.set_logs(["breaks"])
        self.assertEqual(pj.set_logs(" breaks , graphs "), ["breaks", "graph"])
        self.assertEqual(pj.set_logs(""), [])
        src = textwrap.dedent("""
            import pijit as pj
            from pijit import ops

            @pj.jit
            def f(x):
                print("p")
                return ops.relu(x) * 2

            for _ in range(3):
                f(pj.Tensor([1.0, -1.0]))
        """)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "prog.py")
            with open(path, "w") as fh:
                fh.write(src)
            p = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, PYTHONPATH=PYSCRIPTS, PIJIT_LOGS="guards,side_effects,perf"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "p\np\np\n")
        err = p.stderr
        self.assertIn("[pijit guards] installed for f (%s:5):" % path, err)
        self.assertIn("  x: Tensor Float32[2]", err)
        self.assertIn("[pijit side_effects] replayed after the graph of f (%s:5):\n  calls print() (line 7)" % path, err)
        self.assertRegex(err, r"\[pijit perf\] capture [\d.]+ ms, compile [\d.]+ ms, graphs [\d.]+ ms over 3 launch")
        self.assertNotIn("[pijit breaks]", err)

    def test_command_line(self):
        src = textwrap.dedent("""
            import pijit as pj
            from pijit import ops

            def f(x):
                y = x + 1
                print(y.tolist())
                return y * 2

            f(pj.Tensor([1.0]))
            f(pj.Tensor([1.0, 2.0]))
        """)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "prog.py")
            with open(path, "w") as fh:
                fh.write(src)
            p = subprocess.run([sys.executable, "-m", "pijit", "explain", path], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=PYSCRIPTS), timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("[2.0]", p.stdout)
        self.assertIn("pijit.explain:", p.stderr)
        self.assertIn("function f (%s:5)" % path, p.stderr)
        self.assertIn("recompiled: x.shape[0]: 1 -> 2", p.stderr)
        self.assertIn("break B", p.stderr)  # tolist() reads the values


if __name__ == "__main__":
    unittest.main()
