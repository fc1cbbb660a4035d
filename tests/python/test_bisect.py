"""`python -m pijit bisect` finds the captured function that makes a command fail (issue 15).

Three layers: the search (halving, dd, ddmin) against a fake oracle, which proves the run counts;
the command against a fake child that reads PIJIT_ONLY and writes run.json or the captured list
as the runtime does, which proves the plumbing with any build; and the real runtime, where
PIJIT_TEST_ONLY_WRONG_RESULTS plants a wrong graph in one of 52 jitted functions and bisect must name it.
"""
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

from pijit import bisect

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from jit_compare import CAPTURE_ON as CAPTURE_BUILT, CAPTURE_OFF_WHY  # noqa: E402


def log2_ceil(n):
    return int(math.ceil(math.log2(n))) if n > 1 else 0


class CountingOracle:
    """fails(subset) by a rule on the subset's members; counts the calls bisect makes."""

    def __init__(self, rule):
        self.rule, self.calls = rule, 0

    def __call__(self, subset):
        self.calls += 1
        return self.rule(set(subset))


class TestSearch(unittest.TestCase):
    def test_split_is_contiguous_larger_chunks_first(self):
        self.assertEqual(bisect.split(list(range(5)), 2), [[0, 1, 2], [3, 4]])
        self.assertEqual(bisect.split(list(range(7)), 3), [[0, 1, 2], [3, 4], [5, 6]])
        self.assertEqual(bisect.split([1, 2], 4), [[1], [2]])

    def test_one_culprit_takes_ceil_log2_n_runs_plus_at_most_one(self):
        for n in (1, 2, 3, 7, 50, 64, 100):
            worst = 0
            for culprit in range(n):
                fake = CountingOracle(lambda s, c=culprit: c in s)
                found, oracle = bisect.find_culprits(list(range(n)), fake)
                self.assertEqual(found, [culprit])
                self.assertEqual(oracle.runs, fake.calls)
                worst = max(worst, fake.calls)
            self.assertLessEqual(worst, log2_ceil(n) + 1, "n=%d" % n)
        # and never more than one run per level plus the final check, for 50: 7
        self.assertEqual(worst, log2_ceil(100) + 1)

    def test_either_of_two_independent_culprits_is_found_in_log_runs(self):
        fake = CountingOracle(lambda s: 7 in s or 30 in s)
        found, _ = bisect.find_culprits(list(range(50)), fake)
        self.assertIn(found, ([7], [30]))
        self.assertLessEqual(fake.calls, log2_ceil(50) + 1)

    def test_two_interacting_culprits_are_found_by_dd(self):
        n, worst, said = 50, 0, []
        for a, b in itertools.combinations(range(n), 2):
            fake = CountingOracle(lambda s, a=a, b=b: a in s and b in s)
            found, _ = bisect.find_culprits(list(range(n)), fake, said.append)
            self.assertEqual(sorted(found), [a, b])
            worst = max(worst, fake.calls)
        # halving (log n + 1), dd (two runs a level for each culprit), ddmin's check (one per culprit)
        self.assertLessEqual(worst, (log2_ceil(n) + 1) + 2 * 2 * log2_ceil(n) + 2)
        self.assertTrue(all("no single function fails alone" in line for line in said))

    def test_three_interacting_culprits(self):
        for trio in ((0, 1, 2), (3, 20, 47), (10, 11, 49)):
            fake = CountingOracle(lambda s, t=trio: set(t) <= s)
            found, _ = bisect.find_culprits(list(range(50)), fake)
            self.assertEqual(sorted(found), list(trio))
            self.assertLessEqual(fake.calls, 50)

    def test_a_failure_the_filter_never_reproduces(self):
        for n in (1, 2, 10, 50):
            found, oracle = bisect.find_culprits(list(range(n)), CountingOracle(lambda s: False))
            self.assertIsNone(found)
            self.assertLessEqual(oracle.runs, log2_ceil(n) + 2)  # halving, its check, the whole set

    def test_ddmin_is_one_minimal_and_remembers_runs(self):
        fake = CountingOracle(lambda s: {3, 17} <= s)
        oracle = bisect.Oracle(fake)
        self.assertEqual(sorted(bisect.ddmin(list(range(20)), oracle.fails)), [3, 17])
        calls = fake.calls
        self.assertTrue(oracle.fails([3, 17]))
        self.assertEqual(fake.calls, calls)  # asked before: not run again

    def test_stage_verdicts(self):
        everything = {name: True for name, _, _, _ in bisect.STAGES}
        self.assertIn("the capture itself", bisect.stage_verdict(everything))
        self.assertIn("guards", bisect.stage_verdict(dict(everything, PIJIT_DEBUG_NO_CACHE=False)))
        self.assertIn("direct call", bisect.stage_verdict(dict(everything, PIJIT_DEBUG_NO_DIRECT=False)))
        self.assertIn("compiler pass", bisect.stage_verdict(dict(everything, PIJIT_PASSES=False)))
        self.assertIn("graph compiler", bisect.stage_verdict(dict(everything, PIJIT_DEBUG_EAGER_GRAPH=False)))
        # the earliest stage whose switch cures it is named
        self.assertIn("guards", bisect.stage_verdict({n: False for n, _, _, _ in bisect.STAGES}))


class TestCapturedList(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def test_run_json_gives_function_kinds_and_precise_patterns_for_shared_names(self):
        with open(os.path.join(self.dir, "run.json"), "w") as f:
            json.dump({"format": 1, "functions": [
                {"key": "001_f_m_3", "module": "m", "qualname": "f", "kind": "function", "file": "/a/m.py", "line": 3},
                {"key": "002_f_m_3", "module": "m", "qualname": "f", "kind": "resume function",
                 "file": "/a/m.py", "line": 3},
                {"key": "003_g_m_9", "module": "m", "qualname": "g", "kind": "loop body", "file": "/a/m.py", "line": 9},
                {"key": "004_forward_m_20", "module": "m", "qualname": "A.forward", "kind": "function",
                 "file": "/a/m.py", "line": 20},
                {"key": "005_forward_m_30", "module": "m", "qualname": "B.forward", "kind": "function",
                 "file": "/a/m.py", "line": 30},
                {"key": "006_f_m_3", "module": "m", "qualname": "f", "kind": "function", "file": "/a/m.py", "line": 3},
            ]}, f)
        funcs, source = bisect.captured_functions(self.dir, os.path.join(self.dir, "absent"))
        self.assertEqual(source, "run.json")
        self.assertEqual([(f.name, f.pattern) for f in funcs],
                         [("m:f", "m:f"), ("m:A.forward", "/a/m.py:20"), ("m:B.forward", "/a/m.py:30")])

    def test_qualnames_from_the_source_where_the_run_knew_only_the_name(self):
        src = os.path.join(self.dir, "m.py")
        with open(src, "w") as f:
            f.write("class A:\n    @dec\n    @dec2\n    def forward(self, x):\n        return x\n\n\n"
                    "def outer(x):\n    def inner(y):\n        return y\n    return inner(x)\n")
        lines = bisect.source_qualnames(src)  # 3.7's ast gives a decorated def the decorator's line
        self.assertEqual({k: lines[k] for k in (2, 8, 9)}, {2: "A.forward", 8: "outer", 9: "outer.<locals>.inner"})
        with open(os.path.join(self.dir, "run.json"), "w") as f:
            json.dump({"functions": [
                {"module": "m", "qualname": "inner", "kind": "function", "file": src, "line": 9},
                {"module": "m", "qualname": "forward", "kind": "function", "file": src, "line": 2},
                {"module": "m", "qualname": "gone", "kind": "function", "file": src, "line": 30},
            ]}, f)
        funcs, _ = bisect.captured_functions(self.dir, os.path.join(self.dir, "absent"))
        self.assertEqual([(f.name, f.pattern) for f in funcs],  # in source order
                         [("m:A.forward", "m:A.forward"), ("m:outer.<locals>.inner", "m:outer.<locals>.inner"),
                          ("m:gone", "m:gone")])

    def test_list_file_when_there_is_no_run_json(self):
        path = os.path.join(self.dir, "list")
        with open(path, "w") as f:
            f.write("m:f\nm:g\tresume function\nm:C.h\tfunction\nm:f\n")
        funcs, source = bisect.captured_functions(os.path.join(self.dir, "none"), path)
        self.assertEqual(source, "PIJIT_CAPTURED_LIST")
        self.assertEqual([(f.name, f.pattern) for f in funcs], [("m:f", "m:f"), ("m:C.h", "m:C.h")])
        self.assertEqual(bisect.captured_functions(os.path.join(self.dir, "none"), path + "x"), (None, None))

    def test_only_names_the_subset_or_nothing(self):
        funcs = bisect.with_patterns([bisect.Func("m:f", None, None, None), bisect.Func("m:g", None, None, None)])
        self.assertEqual(bisect.only(funcs), "m:f,m:g")
        self.assertEqual(bisect.only([]), bisect.NOTHING)


# A stand-in for a program run under pijit: it "captures" the functions PIJIT_ONLY lets through
# (with the runtime's matching: module and the qualname's last part, or file:line), writes what
# it captured as the runtime does, and goes wrong when FAKE_FAULT's functions are all captured
# and no switch named in FAKE_CURED_BY is set. FAKE_FORMAT=list writes only PIJIT_CAPTURED_LIST.
FAKE_CHILD = textwrap.dedent('''
    import fnmatch, json, os, sys, time
    FILE = "/src/model.py"
    FUNCS = [("__main__", "f%d" % i, 10 + 3 * i) for i in range(40)]
    FUNCS += [("lib.layers", "Dense.forward", 500), ("lib.layers", "Conv.forward", 520)]

    def matches(pattern, module, qualname, line):
        a, _, b = pattern.rpartition(":")
        if b.isdigit():
            return FILE.endswith(a) and int(b) == line
        return fnmatch.fnmatch(module, a) and fnmatch.fnmatch(qualname.split(".")[-1], b.split(".")[-1])

    only = [p for p in os.environ.get("PIJIT_ONLY", "").split(",") if ":" in p]
    captured = [f for f in FUNCS if not only or any(matches(p, *f) for p in only)]
    names = ["%s:%s" % (m, q) for m, q, _ in captured]
    if os.environ.get("PIJIT_DUMP_DIR") and os.environ.get("FAKE_FORMAT") != "list":
        d = os.environ["PIJIT_DUMP_DIR"]
        os.makedirs(d, exist_ok=True)
        entries = []
        for i, (m, q, line) in enumerate(captured):
            entries.append({"key": "%03d_%s" % (i, q), "module": m, "qualname": q, "kind": "function",
                            "file": FILE, "line": line})
            entries.append({"key": "%03d_%s_r" % (i, q), "module": m, "qualname": q, "kind": "resume function",
                            "file": FILE, "line": line})
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump({"format": 1, "functions": entries}, f)
    if os.environ.get("PIJIT_CAPTURED_LIST"):
        with open(os.environ["PIJIT_CAPTURED_LIST"], "a") as f:
            f.write("".join(n + "\\n" for n in names))
    faults = [n for n in os.environ.get("FAKE_FAULT", "").split(",") if n]
    cured = any(os.environ.get(s) for s in os.environ.get("FAKE_CURED_BY", "").split(",") if s)
    wrong = bool(faults) and all(n in names for n in faults) and not cured
    if os.environ.get("FAKE_BROKEN"):
        wrong = True
    if wrong and os.environ.get("FAKE_HANG"):
        time.sleep(60)
    print("result", 42 + wrong)
    sys.exit(1 if wrong and not os.environ.get("FAKE_EXIT0") else 0)
''')


def run_bisect(args, env=None, cwd=None):
    e = dict(os.environ)
    e.pop("PIJIT_STRESS", None)
    for k in ("PIJIT_ONLY", "PIJIT_SKIP", "PIJIT_DUMP_DIR", "PIJIT_CAPTURED_LIST", "PIJIT_TEST_ONLY_WRONG_RESULTS"):
        e.pop(k, None)
    e["PYTHONPATH"] = os.path.join(ROOT, "pyscripts")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "pijit", "bisect"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=e, cwd=cwd, timeout=600)


def run_lines(out):
    return [l for l in out.splitlines() if re.match(r"run \d+:", l)]


def search_runs(out):
    m = re.search(r"in (\d+) runs? of the bisection", out)
    return int(m.group(1)) if m else None


class TestBisectCommandWithAFakeChild(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.child = os.path.join(self.dir, "child.py")
        with open(self.child, "w") as f:
            f.write(FAKE_CHILD)

    def bisect(self, env, *options):
        return run_bisect(list(options) + ["--out", os.path.join(self.dir, "out"), "--", sys.executable,
                                           self.child], env)

    def test_finds_the_culprit_from_run_json(self):
        p = self.bisect({"FAKE_FAULT": "__main__:f23", "FAKE_CURED_BY": "PIJIT_PASSES"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lines = p.stdout.strip().splitlines()
        self.assertEqual(lines[-1], "culprit: __main__:f23")
        self.assertRegex(p.stdout, r"run 1: as given -> fails \(exit 1\)")
        self.assertIn("run 2: capture off (PIJIT_ONLY=-:-) -> passes", p.stdout)
        self.assertIn("42 functions captured (from run.json)", p.stdout)
        self.assertRegex(p.stdout, r"run 3: 21 functions captured \(__main__:f0 \.\. __main__:f20\) -> passes")
        self.assertLessEqual(search_runs(p.stdout), log2_ceil(42) + 1)
        self.assertIn("stage: a compiler pass or a fused kernel", p.stdout)
        self.assertIn("with PIJIT_PASSES=none (no optimisation passes) -> passes", p.stdout)
        self.assertIn("with PIJIT_DEBUG_NO_CACHE=1 (guards never trusted) -> fails", p.stdout)
        dump = os.path.join(self.dir, "out", "culprit")
        self.assertIn("dump: %s" % os.path.join(dump, "000_f23"), p.stdout)
        self.assertIn("with PIJIT_DEBUG_NO_DIRECT=1 (cache hits run the rewritten code) -> fails", p.stdout)
        # 2 + the search + 4 stages + the dump, each numbered once, in order
        numbers = [int(re.match(r"run (\d+)", l).group(1)) for l in run_lines(p.stdout)]
        self.assertEqual(numbers, list(range(1, len(numbers) + 1)))
        self.assertEqual(len(numbers), 2 + search_runs(p.stdout) + 4 + 1)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "out", "runs", "1.stdout")))

    def test_finds_the_culprit_from_the_captured_list(self):
        p = self.bisect({"FAKE_FAULT": "__main__:f0", "FAKE_FORMAT": "list"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("(from PIJIT_CAPTURED_LIST)", p.stdout)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "culprit: __main__:f0")
        self.assertIn("stage: the capture itself", p.stdout)
        self.assertIn("(it holds no run.json)", p.stdout)

    def test_methods_that_share_a_name_are_told_apart_by_file_and_line(self):
        p = self.bisect({"FAKE_FAULT": "lib.layers:Conv.forward"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "culprit: lib.layers:Conv.forward")
        self.assertRegex(p.stdout, r"run \d+: 1 function captured \(lib.layers:Conv.forward\) -> fails")

    def test_two_interacting_functions(self):
        p = self.bisect({"FAKE_FAULT": "__main__:f3,__main__:f30"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("no single function fails alone", p.stdout)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "culprits: __main__:f3, __main__:f30")

    def test_output_mode_compares_stdout_with_capture_off(self):
        p = self.bisect({"FAKE_FAULT": "__main__:f9", "FAKE_EXIT0": "1"}, "--output")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("run 1 vs run 2: stdout differs from capture off's -> fails", p.stdout)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "culprit: __main__:f9")
        p = self.bisect({"FAKE_FAULT": "__main__:f9", "FAKE_EXIT0": "1"})  # exit status alone sees nothing
        self.assertIn("nothing to bisect", p.stdout)

    def test_check_command_decides(self):
        check = "test \"$PIJIT_BISECT_EXIT\" = 0 && grep -q 'result 42' \"$PIJIT_BISECT_STDOUT\""
        p = self.bisect({"FAKE_FAULT": "__main__:f39", "FAKE_EXIT0": "1"}, "--check", check)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("run 1: as given -> fails (--check fails (exit 0))", p.stdout)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "culprit: __main__:f39")

    def test_a_run_past_the_timeout_fails(self):
        p = self.bisect({"FAKE_FAULT": "__main__:f5", "FAKE_HANG": "1"}, "--timeout", "1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("run 1: as given -> fails (timed out after 1s)", p.stdout)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "culprit: __main__:f5")

    def test_nothing_to_do_when_it_passes(self):
        p = self.bisect({})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(len(run_lines(p.stdout)), 1)
        self.assertIn("nothing to bisect: the command passes under pijit", p.stdout)

    def test_fails_with_capture_off_too(self):
        p = self.bisect({"FAKE_BROKEN": "1"})
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "fails without pijit too: not a pijit bug")

    def test_no_list_of_what_was_captured(self):
        p = run_bisect(["--out", os.path.join(self.dir, "out"), "--", "sh", "-c",
                        'test "$PIJIT_ONLY" = "-:-"'])
        self.assertEqual(p.returncode, 1)
        self.assertIn("run 1 left no list of what it captured", p.stdout)

    def test_functions_given_by_hand(self):
        p = self.bisect({"FAKE_FAULT": "__main__:f2", "FAKE_FORMAT": "none"}, "--functions",
                        ",".join("__main__:f%d" % i for i in range(8)))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("8 functions captured (from --functions)", p.stdout)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "culprit: __main__:f2")

    def test_a_crash_is_a_failure_and_functions_can_be_named_by_hand(self):
        crash = os.path.join(self.dir, "crash.py")
        with open(crash, "w") as f:
            f.write("import os, signal\nif '__main__:f3' in os.environ.get('PIJIT_ONLY', '__main__:f3'):\n"
                    "    os.kill(os.getpid(), signal.SIGSEGV)\n")
        p = run_bisect(["--out", os.path.join(self.dir, "out"), "--functions", "__main__:f1,__main__:f2,__main__:f3",
                        "--", sys.executable, crash])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("run 1: as given -> fails (killed by SIGSEGV)", p.stdout)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "culprit: __main__:f3")

    def test_a_command_that_does_not_exist(self):
        p = run_bisect(["--out", os.path.join(self.dir, "out"), "--", os.path.join(self.dir, "nonexistent")])
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("run 1: as given -> fails (exit 127: pijit bisect: cannot run", p.stdout)

    def test_no_command(self):
        p = run_bisect([])
        self.assertEqual(p.returncode, 2)
        self.assertIn("no command given", p.stderr)


N_FUNCS = 52


def program(n=N_FUNCS, broken=False):
    """n small jitted tensor functions; the program checks their results against plain Python."""
    src = ["import sys", "import pijit as pj", "from pijit import ops", ""]
    for i in range(n):
        k, c = i % 4 + 1, float(i)
        body = ("x * %d.0 + %s" % (k, c) if i % 3 == 0 else
                "(x + %s) * %d.0" % (c, k) if i % 3 == 1 else
                "ops.relu(x - %s) + x * %d.0" % (c, k))
        src += ["@pj.jit", "def f%d(x):" % i, "    return %s" % body, ""]
    src += ["def expect(i, v):",
            "    k, c = i % 4 + 1, float(i)",
            "    return (v * k + c if i % 3 == 0 else (v + c) * k if i % 3 == 1 else max(v - c, 0.0) + v * k)",
            "",
            "FUNCS = [%s]" % ", ".join("f%d" % i for i in range(n)),
            "x = pj.Tensor([1.0, 2.0, 3.0])",
            "got = want = 0.0",
            "for step in range(2):",
            "    for i, f in enumerate(FUNCS):",
            "        got += float(f(x).sum())",
            "        want += sum(expect(i, v) for v in (1.0, 2.0, 3.0))",
            "want += %s" % ("1.0" if broken else "0.0"),
            "print('got', got, 'want', want)",
            "sys.exit(0 if abs(got - want) < 1e-6 else 1)", ""]
    return "\n".join(src)


@unittest.skipUnless(CAPTURE_BUILT, CAPTURE_OFF_WHY)
class TestBisectWithTheRuntime(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, **kw):
        path = os.path.join(self.dir, "prog.py")
        with open(path, "w") as f:
            f.write(program(**kw))
        return path

    def test_the_program_passes_as_it_is(self):
        path = self.write()
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "pyscripts"))
        env.pop("PIJIT_STRESS", None)
        p = subprocess.run([sys.executable, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_finds_the_function_whose_graph_is_wrong(self):
        path = self.write()
        for culprit in ("f17", "f0", "f%d" % (N_FUNCS - 1)):
            p = run_bisect(["--out", os.path.join(self.dir, culprit), "--", sys.executable, path],
                           {"PIJIT_TEST_ONLY_WRONG_RESULTS": "__main__:" + culprit})
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertEqual(p.stdout.strip().splitlines()[-1], "culprit: __main__:" + culprit, p.stdout)
            self.assertIn("%d functions captured" % N_FUNCS, p.stdout)
            self.assertLessEqual(search_runs(p.stdout), log2_ceil(N_FUNCS) + 1, p.stdout)
            self.assertLessEqual(len(run_lines(p.stdout)), 2 + log2_ceil(N_FUNCS) + 1 + 3 + 1, p.stdout)
            self.assertRegex(p.stdout, r"run \d+: 1 function captured \(__main__:%s\) -> fails" % culprit)
            self.assertRegex(p.stdout, r"\nstage: ")
            self.assertRegex(p.stdout, r"\ndump: %s" % re.escape(os.path.join(self.dir, culprit, "culprit")))
            self.assertTrue(os.path.isfile(os.path.join(self.dir, culprit, "culprit", "run.json")), p.stdout)

    def test_a_nested_function_is_named_by_its_qualname(self):
        path = os.path.join(self.dir, "nested.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent("""
                import sys
                import pijit as pj

                @pj.jit
                def top(x):
                    return x * 2.0 + 1.0

                def outer(x):
                    @pj.jit
                    def inner(y):
                        return y * 3.0
                    return inner(x)

                x = pj.Tensor([1.0, 2.0])
                got = float(top(x).sum()) + float(outer(x).sum())
                sys.exit(0 if got == 8.0 + 9.0 else 1)
            """))
        p = run_bisect(["--out", os.path.join(self.dir, "out"), "--", sys.executable, path],
                       {"PIJIT_TEST_ONLY_WRONG_RESULTS": "__main__:inner"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("2 functions captured (from run.json)", p.stdout)
        self.assertIn("isolated __main__:outer.<locals>.inner (%s:10)" % path, p.stdout)  # the decorator's line
        self.assertEqual(p.stdout.strip().splitlines()[-1], "culprit: __main__:outer.<locals>.inner")

    def test_nothing_to_do_when_it_passes_under_pijit(self):
        path = self.write()
        p = run_bisect(["--out", os.path.join(self.dir, "out"), "--", sys.executable, path])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("nothing to bisect: the command passes under pijit", p.stdout)

    def test_a_script_runs_under_pijit_run(self):
        path = self.write()
        p = run_bisect(["--out", os.path.join(self.dir, "out"), path])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("%s -m pijit run %s" % (sys.executable, path), p.stdout)
        self.assertIn("nothing to bisect", p.stdout)

    def test_fails_without_pijit_too(self):
        path = self.write(broken=True)
        p = run_bisect(["--out", os.path.join(self.dir, "out"), "--", sys.executable, path])
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"run 1: as given -> fails \(exit 1")
        self.assertIn("run 2: capture off (PIJIT_ONLY=-:-) -> fails", p.stdout)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "fails without pijit too: not a pijit bug")


if __name__ == "__main__":
    unittest.main()
