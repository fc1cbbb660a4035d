"""The debugging switches of issue 15, each in a subprocess as a user runs them: PIJIT_DUMP_DIR's
folders and run.json, PIJIT_TRACE's trace-event JSON, the log categories recompiles_verbose,
codegen, guard_perf and perf, PIJIT_DEBUG_NO_CACHE, PIJIT_DEBUG_EAGER_GRAPH,
PIJIT_TEST_ONLY_WRONG_RESULTS (and its warning) and PIJIT_CAPTURED_LIST; and pijit.pseudo's
pseudo-source."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

from pijit import _C
from pijit.pseudo import pseudo_source
from jit_compare import CAPTURE_OFF_WHY, CAPTURE_ON

HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "pyscripts")

PROGRAM = textwrap.dedent("""\
    import pijit as pj
    from pijit import ops

    def scale(x, n):
        y = ops.relu(x * 2) + n
        if float(y.sum()) > 0:
            y = ops.tanh(y) * 3
        return y - 1

    def other(x):
        return x * x + 1

    f = pj.jit(scale)
    g = pj.jit(other)
    for size in (2, 2, 3):
        print(round(float(f(pj.ones((size,)), 1).sum()), 4), round(float(g(pj.ones((size,))).sum()), 4))
    """)
BREAK_LINE = 6  # the `if float(...)` line of scale


def run_program(tmp, text=PROGRAM, **env):
    path = os.path.join(tmp, "prog.py")
    with open(path, "w") as f:
        f.write(text)
    full = dict(os.environ, PYTHONPATH=PYSCRIPTS, **env)
    for k in ("PIJIT_STRESS", "PIJIT_LOGS", "PIJIT_DUMP_DIR", "PIJIT_TRACE"):
        if k not in env:
            full.pop(k, None)
    return subprocess.run([sys.executable, path], capture_output=True, text=True, env=full, timeout=300, cwd=tmp)


def plain_output(tmp):
    r = run_program(tmp, PIJIT_ONLY="nothing:nothing")
    assert r.returncode == 0, r.stderr
    return r.stdout


class DumpDir(unittest.TestCase):
    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_folders_files_and_run_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "dump")
            r = run_program(tmp, PIJIT_DUMP_DIR=d)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "run.json")) as f:
                run = json.load(f)
            fns = {fn["function"]: fn for fn in run["functions"] if fn["kind"] == "function"}
            self.assertIn("scale", fns)
            self.assertIn("other", fns)
            scale = fns["scale"]
            self.assertEqual(scale["module"], "__main__")
            self.assertEqual(scale["file"], os.path.join(tmp, "prog.py"))
            self.assertEqual((scale["line"], scale["last_line"]), (4, 8))
            self.assertEqual(scale["kind"], "function")
            self.assertEqual(scale["break_lines"], [BREAK_LINE])
            self.assertEqual([b["line"] for b in scale["breaks"]][:1], [BREAK_LINE])
            self.assertTrue(scale["breaks"][0]["id"].startswith("B"))
            self.assertIn(5, scale["graph_lines"])
            self.assertEqual(scale["recompiles"], ["x.shape[0]: 2 -> 3"])
            self.assertEqual(len(scale["guards"]), 2)
            self.assertEqual(run["totals"]["functions"], len(run["functions"]))
            self.assertGreaterEqual(run["totals"]["graphs"], 4)
            resume = [fn for fn in run["functions"] if fn["kind"] == "resume function"]
            self.assertTrue(resume, [fn["kind"] for fn in run["functions"]])
            self.assertTrue(all(fn["file"] == scale["file"] for fn in resume))
            # the function's folder: bytecode, pseudo-source, guards, IR per pass, Graphviz, kernels
            folder = os.path.join(d, scale["key"])
            files = set(os.listdir(folder))
            self.assertEqual(set(scale["files"]), files)
            for name in ("original.dis", "entry0.rewritten.dis", "entry0.rewritten.py", "entry0.resume0.dis",
                         "entry0.resume0.py", "entry0.guards.txt", "entry0.graph.0.captured.ir", "entry0.graph.dot",
                         "entry0.plan.txt", "entry1.guards.txt"):
                self.assertIn(name, files)
            self.assertTrue(any(n.startswith("entry0.graph.") and n.endswith(".fuse.ir") for n in files), files)
            # entries in compile order, each naming its files by serial (the cache keeps them most
            # recently hit first): entry0 is the first shape's, entry1 the recompile's
            self.assertEqual([e["serial"] for e in scale["entries"]], [0, 1])
            for e in scale["entries"]:
                with open(os.path.join(folder, "entry%d.guards.txt" % e["serial"])) as f:
                    self.assertEqual(f.read().splitlines(), e["guards"])
            self.assertIn("x: Tensor Float32[2]", scale["entries"][0]["guards"])
            # the recompile's cause was x's size alone: it made that size a symbol (issue 17)
            self.assertIn("x: Tensor Float32[s0] (dynamic: s0 >= 2)", scale["entries"][1]["guards"])
            self.assertEqual(scale["guards"], [e["guards"] for e in scale["entries"]])
            with open(os.path.join(folder, "entry0.resume0.py")) as f:
                self.assertIn("def ", f.read())
            with open(os.path.join(folder, "entry0.graph.dot")) as f:
                dot = f.read()
            self.assertTrue(dot.startswith("digraph pijit {"), dot[:40])
            self.assertIn("relu", dot)
            if shutil.which("dot"):  # (tools/deps.sh installs graphviz) every graph's SVG beside it
                for key in os.listdir(d):
                    if os.path.isdir(os.path.join(d, key)):
                        names = os.listdir(os.path.join(d, key))
                        self.assertEqual(sorted(n[:-4] for n in names if n.endswith(".svg")),
                                         sorted(n[:-4] for n in names if n.endswith(".dot")), key)
                with open(os.path.join(folder, "entry0.graph.svg")) as f:
                    self.assertIn("<svg", f.read())
            other = os.path.join(d, fns["other"]["key"])
            if _C.fused_backend().startswith("asmjit"):
                with open(os.path.join(other, "entry0.kernels.s")) as f:
                    text = f.read()
                self.assertIn("fused_elementwise", text)
                self.assertIn("vmulps", text)  # x * x, as machine code
            # trace.json lands beside run.json
            with open(os.path.join(d, "trace.json")) as f:
                self.assertTrue(json.load(f)["traceEvents"])

    def test_dumping_changes_no_result(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run_program(tmp, PIJIT_DUMP_DIR=os.path.join(tmp, "d"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, plain_output(tmp))

    def test_an_unwritable_dir_is_said_and_the_program_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            blocker = os.path.join(tmp, "file")
            with open(blocker, "w") as f:
                f.write("x")
            r = run_program(tmp, PIJIT_DUMP_DIR=os.path.join(blocker, "sub"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("pijit: dump: cannot create", r.stderr)
            self.assertEqual(r.stdout, plain_output(tmp))


class Trace(unittest.TestCase):
    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_trace_event_json_has_every_phase(self):
        refused = PROGRAM + textwrap.dedent("""\

            def refused(x):
                try:
                    return x + 1
                finally:
                    pass
            h = pj.jit(refused)
            for _ in range(2):
                h(pj.ones((2,)))
            """)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "t.json")
            r = run_program(tmp, refused, PIJIT_TRACE=out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                doc = json.load(f)
            events = [e for e in doc["traceEvents"] if e["ph"] == "X"]
            cats = {e["cat"] for e in events}
            self.assertLessEqual({"capture", "guards", "compile", "graph", "kernel"}, cats)
            for e in events:
                self.assertGreaterEqual(e["dur"], 0)
                self.assertIn("tid", e)
                self.assertIn("pid", e)
            names = {e["name"] for e in events if e["cat"] == "compile"}
            self.assertIn("pass fuse", names)
            self.assertIn("plan (kernels prepared)", names)
            self.assertTrue(any(e["name"].startswith("scale (") for e in events if e["cat"] == "capture"))
            self.assertTrue(any(e["name"] == "fused_elementwise" for e in events if e["cat"] == "kernel"))
            # the refused function's frames ran in the interpreter: "eager" spans, with the reason
            eager = [e for e in events if e["cat"] == "eager" and e["name"].startswith("refused (")]
            if eager:  # (a Python that captures try/finally has no refusal here)
                self.assertIn("why", eager[0]["args"])


    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_trace_has_every_graph_run_and_every_eager_fallback(self):
        # Direct calls (the graph run from the hook, no rewritten code) are graph spans like any
        # other; a call whose graph raised and ran again eagerly, and one a stance ran eagerly,
        # are eager spans that say why.
        program = textwrap.dedent("""\
            import pijit as pj

            def h(x, idx):
                y = x * 2.0
                return y[idx]

            jh = pj.jit(h)
            x = pj.Tensor([1.0, 2.0, 3.0])
            for _ in range(3):
                jh(x, pj.Tensor([0, 2]))
            try:
                jh(x, pj.Tensor([0, 9]))
            except IndexError as e:
                print("IndexError")
            with pj.set_stance("force_eager"):
                jh(x, pj.Tensor([1]))
            s = pj.jit_stats(jh)
            print(s["frames_rewritten"], s["frames_direct"], s["frames_default"], s["graph_failures"])
            """)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "t.json")
            r = run_program(tmp, program, PIJIT_TRACE=out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                events = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X" and e["name"].startswith("h (")]
        self.assertEqual(r.stdout.splitlines(), ["IndexError", "4 3 2 1"])
        by_cat = {}
        for e in events:
            by_cat.setdefault(e["cat"], []).append(e)
        # the first call's graph from its rewritten code; two direct calls; the failing one's (direct)
        self.assertEqual(len(by_cat["graph"]), 4)
        self.assertEqual([e["args"]["result"] for e in by_cat["guards"]], ["miss", "hit", "hit", "hit"])
        self.assertEqual([e["args"]["why"] for e in by_cat["eager"]],
                         ["its graph raised; the call runs eagerly (the interpreter's exception)", "stance force_eager"])


class Logs(unittest.TestCase):
    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_recompiles_verbose_codegen_guard_perf_perf(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run_program(tmp, PIJIT_LOGS="recompiles_verbose,codegen,guard_perf,perf")
            self.assertEqual(r.returncode, 0, r.stderr)
            err = r.stderr
            self.assertIn("[pijit recompiles_verbose] recompiling scale (", err)
            self.assertIn("    x.shape[0]: 2 -> 3", err)
            self.assertNotIn("[pijit recompiles] ", err)  # the category is its own, not a prefix
            if _C.fused_backend().startswith("asmjit"):
                self.assertIn("[pijit codegen] fused kernels of the graph of other (", err)
            self.assertRegex(err, r"\[pijit guard_perf\] \d+ guard\(s\), [\d.]+ ms checking in all")
            self.assertRegex(err, r"\[pijit guard_perf\]   scale:4 entry \d: x: Tensor Float32\[\d\]: \d+ check\(s\)")
            self.assertRegex(err, r"\[pijit perf\] graphs took [\d.]+% of the")
            self.assertEqual(r.stdout, plain_output(tmp))

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_bytecode_labels_the_original_the_rewritten_and_the_resume_code(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run_program(tmp, PIJIT_LOGS="bytecode")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, plain_output(tmp))
        listings = {}
        for block in r.stderr.split("[pijit bytecode] ")[1:]:
            head, _, body = block.partition(":\n")
            listings.setdefault(head.split(" (")[0], []).append(body)
        # scale breaks at its `if float(...)` line: its original, its rewritten code (which calls
        # the graph), and the resume function that runs the rest
        self.assertIn("original scale", listings)
        self.assertIn("rewritten scale", listings)
        self.assertIn("resume function of scale", listings)
        self.assertIn("original other", listings)
        self.assertNotIn("<pijit graph of", listings["original scale"][0])
        self.assertIn("<pijit graph of scale", listings["rewritten scale"][0])
        multiply = r"BINARY_MULTIPLY|BINARY_OP +\d+ \(\*\)"  # (3.11's spelling second)
        self.assertRegex(listings["original scale"][0], multiply)  # x * 2 is in the graph now
        self.assertNotRegex(listings["rewritten scale"][0], multiply)

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_all_prints_every_category_in_one_line_format(self):
        text = PROGRAM + textwrap.dedent("""\

            def noisy(x):
                print("step")  # replayed after the graph
                return x + 2
            pj.jit(noisy)(pj.ones((2,)))
            """)
        with tempfile.TemporaryDirectory() as tmp:
            r = run_program(tmp, text, PIJIT_LOGS="all")
            self.assertEqual(r.returncode, 0, r.stderr)
            cats = ["breaks", "guards", "recompiles", "recompiles_verbose", "dynamic", "bytecode", "graph", "passes",
                    "side_effects", "perf", "guard_perf"]
            if _C.fused_backend().startswith("asmjit"):
                cats.append("codegen")
            for cat in cats:
                self.assertIn("[pijit %s] " % cat, r.stderr)
            # every message starts a line with its category
            starts = [l for l in r.stderr.splitlines() if l.startswith("[pijit ")]
            self.assertTrue(all(l.split("]")[0][len("[pijit "):] in cats + ["summary"] for l in starts), starts[:5])

    def test_set_logs_knows_the_new_categories(self):
        import pijit as pj
        try:
            self.assertEqual(pj.set_logs("recompiles_verbose,codegen"), ["recompiles_verbose", "codegen"])
            with self.assertRaises(ValueError):
                pj.set_logs("codegens")
        finally:
            pj.set_logs("")


# (switches of capture and its graphs: where nothing captures, pijit never reads them)
@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class StageSwitches(unittest.TestCase):
    """What bisect toggles: each keeps the program's result."""

    def run_switched(self, stats_line, **env):
        """PROGRAM with one switch on, then one line of g's jit_stats: (that line, the outputs equal)."""
        with tempfile.TemporaryDirectory() as tmp:
            r = run_program(tmp, PROGRAM + "print(%s)\n" % stats_line, **env)
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = r.stdout.splitlines()
            self.assertEqual(lines[:-1], plain_output(tmp).splitlines())
            return lines[-1]

    def test_no_cache_captures_every_call(self):
        last = self.run_switched("pj.jit_stats(g)['compiles'], pj.jit_stats(g)['cache_hits']", PIJIT_DEBUG_NO_CACHE="1")
        self.assertEqual(last, "3 0")

    def test_eager_graph_runs_the_nodes_as_ops(self):
        last = self.run_switched("pj.jit_stats(g)['entries'][0]['plan']", PIJIT_DEBUG_EAGER_GRAPH="1")
        self.assertIn("eager ops", last)

    def test_fault_injection_changes_only_the_named_function(self):
        with tempfile.TemporaryDirectory() as tmp:
            plain = [l.split() for l in plain_output(tmp).splitlines()]
            r = run_program(tmp, PIJIT_TEST_ONLY_WRONG_RESULTS="__main__:other")
            self.assertEqual(r.returncode, 0, r.stderr)
            # it says so, loudly and once: results are wrong on purpose
            warning = ("pijit: WARNING: PIJIT_TEST_ONLY_WRONG_RESULTS=__main__:other is set: the graphs of "
                       "the functions it names return DELIBERATELY WRONG results")
            self.assertEqual(r.stderr.count(warning), 1, r.stderr)
            self.assertEqual(r.stderr.count("PIJIT_TEST_ONLY_WRONG_RESULTS"), 1, r.stderr)
            faulty = [l.split() for l in r.stdout.splitlines()]
            self.assertEqual([a[0] for a in faulty], [a[0] for a in plain])  # scale is right
            # other's graph adds 1 to each element: its sums are off by the size (2, 2, 3)
            self.assertEqual([float(a[1]) for a in faulty], [float(a[1]) + n for a, n in zip(plain, (2, 2, 3))])

    def test_fault_injection_warns_even_where_it_names_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run_program(tmp, PIJIT_TEST_ONLY_WRONG_RESULTS="nomodule:nothing")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, plain_output(tmp))
            self.assertEqual(r.stderr.count("pijit: WARNING: PIJIT_TEST_ONLY_WRONG_RESULTS=nomodule:nothing is set"),
                             1, r.stderr)
            quiet = run_program(tmp)  # unset: not a word
            self.assertEqual(quiet.returncode, 0, quiet.stderr)
            self.assertNotIn("WRONG_RESULTS", quiet.stderr)
            old = run_program(tmp, PIJIT_TEST_FAULT="__main__:other")  # the old name does nothing now
            self.assertEqual(old.returncode, 0, old.stderr)
            self.assertEqual(old.stdout, quiet.stdout)

    def test_captured_list(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "list.txt")
            r = run_program(tmp, PIJIT_CAPTURED_LIST=path)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                self.assertEqual(f.read().split(), ["__main__:other", "__main__:scale"])


def sample(a, b):
    c = a * 2 + b
    if c > 3:
        c -= 1
    d = [c, a]
    d[0] = len(d)
    return c


class PseudoSource(unittest.TestCase):
    def test_statements_and_gotos(self):
        text = pseudo_source(sample.__code__)
        self.assertTrue(text.startswith("def sample(a, b):  # pseudo-source of "), text)
        self.assertIn("c = ((a * 2) + b)", text)
        self.assertRegex(text, r"if not \(c > 3\): goto L\d+")
        self.assertIn("c -= 1", text)
        self.assertIn("d[0] = len(d)", text)
        self.assertIn("return c", text)

    def test_never_fails(self):
        import json as module
        for obj in vars(module.decoder).values():
            code = getattr(obj, "__code__", None)
            if code is not None:
                self.assertIsInstance(pseudo_source(code), str)


if __name__ == "__main__":
    unittest.main()
