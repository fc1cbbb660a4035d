"""Golden capture fixtures: Python source in; what pijit.jit captured, its guards and the rewritten
bytecode out, one expected block per Python version where the versions differ (Cinder's HIR tests
are the model).

Each tests/python/golden/<case>.txt holds sections, each opened by a line `--- <name>` or
`--- <name> <version>`:

    --- source     a module; `f` is the callable the case jits (a function or a Cell)
    --- call       one call per line: the arguments, as Python (`x, y, scale=2.0`), evaluated
                   in the module's namespace afresh for the eager and for the jitted call
    --- summary    per code object capture touched (the function, its resume functions and loop
                   bodies): entries, graphs and their op counts, breaks (id, place, message),
                   recompiles (the guard that failed)
    --- graph      each entry's graph as captured (before the passes: tests/cpp/passes_test.cc
                   pins those), `graph::print`'s text
    --- guards     each entry's guards, as `explain` shows them
    --- bytecode   each entry's rewritten code and its resume functions, as `dis` shows them

An expected section without a version serves every version that has no block of its own; a
version that has neither fails with the diff. The fixtures run in one child process per run with
PIJIT_DUMP_DIR set (the stages come from pijit's own dump, the text a user reads), and every call
also checks jitted == eager. What the text holds that varies from run to run is normalised:
addresses (0x?), the fixture's path (<case>.py), and the count of pijit's module namespaces that
one guard covers (N: it grows with the package, not with capture).

    PIJIT_GOLDEN_UPDATE=1 PYTHONPATH=pyscripts python tests/python/run.py -k capture_golden

rewrites the running version's blocks (a version block where the shared one differs, the shared
one where there is none); tools/golden_update.py does it for every installed Python.

Under PIJIT_STRESS the child runs under it too, and the expected text is the same: stress captures
the case's other functions that run (a Cell's __init__, a context manager's __enter__), which the
text leaves out (it holds f's code object, its resume functions and loop bodies), and the eager
reference calls run with stress off, on a module instance of their own.
"""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
ROOT = os.path.dirname(os.path.dirname(HERE))
VERSION = "%d.%d" % sys.version_info[:2]
INPUTS = ("source", "call")
OUTPUTS = ("summary", "graph", "guards", "bytecode")
UPDATE_VAR = "PIJIT_GOLDEN_UPDATE"
_HEADER = re.compile(r"^--- (\w+)(?: (\d+\.\d+))?\s*$")


# ---- the fixture format --------------------------------------------------------------------------

class Fixture(object):
    """One case: its comment lines, and its sections keyed (name, version or None) in file order."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)[:-4]
        self.comment = []
        self.sections = {}
        key = None
        with open(path, encoding="utf-8") as f:
            for line in f.read().splitlines():
                m = _HEADER.match(line)
                if m:
                    key = (m.group(1), m.group(2))
                    if key in self.sections:
                        raise ValueError("%s: section %s appears twice" % (path, " ".join(filter(None, key))))
                    self.sections[key] = []
                elif key is None:
                    self.comment.append(line)
                else:
                    self.sections[key].append(line)
        for k in self.sections:
            # (blank lines separate sections in the file: not part of the text)
            while self.sections[k] and not self.sections[k][-1].strip():
                self.sections[k].pop()
        for want in INPUTS:
            if (want, None) not in self.sections:
                raise ValueError("%s: no --- %s section" % (path, want))

    def text(self, name, version=None):
        lines = self.sections.get((name, version))
        return None if lines is None else "\n".join(lines) + "\n"

    def expected(self, name, version=VERSION):
        """(text, which block) for the running version: its own block, else the shared one."""
        own = self.text(name, version)
        if own is not None:
            return own, "%s %s" % (name, version)
        return self.text(name), name

    def calls(self):
        return [c for c in self.sections[("call", None)] if c.strip() and not c.lstrip().startswith("#")]

    def update(self, name, actual, version=VERSION):
        """Sets the running version's block of `name` to actual; True if the file changes."""
        shared = self.text(name)
        before = dict(self.sections)
        if shared is None:
            self.sections[(name, None)] = actual.rstrip("\n").split("\n")
        elif shared == actual:
            self.sections.pop((name, version), None)  # the shared block serves this version again
        else:
            self.sections[(name, version)] = actual.rstrip("\n").split("\n")
        return before != self.sections

    def write(self):
        order = {n: i for i, n in enumerate(INPUTS + OUTPUTS)}
        keys = sorted(self.sections, key=lambda k: (order.get(k[0], len(order)), k[0],
                                                    tuple(int(p) for p in k[1].split(".")) if k[1] else ()))
        out = list(self.comment)
        for k in keys:
            out.append("--- %s" % " ".join(filter(None, k)))
            out.extend(self.sections[k])
            out.append("")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("\n".join(out).rstrip("\n") + "\n")


def fixtures():
    return [Fixture(os.path.join(GOLDEN, n)) for n in sorted(os.listdir(GOLDEN)) if n.endswith(".txt")]


# ---- running the fixtures ----------------------------------------------------------------------

# The child: imports each case as a module of its own file (so that its code objects, and their dump
# folders, are told apart by file), runs every call eagerly and then jitted, and records whether each
# pair agrees. Its own code is never captured: pijit captures only pj.jit's callable here.
_CHILD = r'''
import importlib.util, json, sys, traceback
import pijit as pj

def plain(v):
    if isinstance(v, pj.Tensor):
        return ["Tensor", str(v.dtype), list(v.shape), v.tolist()]
    if isinstance(v, (list, tuple)):
        return [type(v).__name__, [plain(x) for x in v]]
    if isinstance(v, dict):
        return ["dict", [[repr(k), plain(x)] for k, x in v.items()]]
    return ["value", repr(v)]

def load(name, path):
    spec = importlib.util.spec_from_file_location("golden_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return vars(mod)

def args_of(ns, text):
    return eval("(lambda *a, **k: (a, k))(%s)" % text, ns)

out, keep = [], []
for name, path, calls in json.load(open(sys.argv[1])):
    rec = {"name": name, "path": path, "calls": []}
    try:
        # eager on one instance of the module, jitted on a fresh one: the calls may change the
        # module's globals, and a plain call of a jitted code object would share its cache
        eager = []
        ns = load(name, path)
        level = pj.stress_stats()["level"]
        pj.set_stress(0)  # (the reference run is plain under PIJIT_STRESS too)
        try:
            for c in calls:
                a, k = args_of(ns, c)
                eager.append(plain(ns["f"](*a, **k)))
        finally:
            pj.set_stress(level)
        ns = load(name, path)
        fn = ns["f"]
        code = getattr(fn, "__code__", None) or type(fn).construct.__code__
        rec["code"] = [code.co_name, code.co_firstlineno]
        keep.append(ns)  # (a code object freed before the run's summary would leave no row in it)
        jf = pj.jit(ns["f"])
        for c, want in zip(calls, eager):
            a, k = args_of(ns, c)
            got = plain(jf(*a, **k))
            rec["calls"].append({"call": c, "eager": want, "jitted": got})
    except Exception:
        rec["error"] = traceback.format_exc()
    out.append(rec)
from pijit import dump
dump.write_run()  # now, while every case's code is alive
json.dump(out, open(sys.argv[2], "w"))
'''


def _normalise(text, case_path, case):
    text = text.replace(case_path, "<%s>.py" % case)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    text = re.sub(r"pijit's \d+ module namespaces", "pijit's N module namespaces", text)
    return text


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def _entries(folder):
    """The entry numbers a dump folder holds, in order."""
    nums = set()
    for n in os.listdir(folder):
        m = re.match(r"entry(\d+)\.", n)
        if m:
            nums.add(int(m.group(1)))
    return sorted(nums)


def _sections_of(fn_rows, dump, case_path, case):
    """The output sections of one case, from run.json's rows of its code objects and their folders."""
    summary, graph, guards, bytecode = [], [], [], []
    for i, r in enumerate(fn_rows):
        title = "[%d] %s %s (line %d)" % (i, r["kind"], r["function"], r["line"])
        summary.append("%s: %d compile(s), %d graph(s)%s, %d cache hit(s)" % (
            title, r["compiles"], r["graphs"],
            " of %s op(s)" % "/".join(map(str, r["ops_per_graph"])) if r["ops_per_graph"] else "", r["cache_hits"]))
        for b in r["breaks"]:
            summary.append("  break %s" % b["text"])
        for rc in r["recompiles"]:
            summary.append("  recompiled: %s" % rc)
        if r["skip_reason"]:
            summary.append("  runs eagerly: %s" % r["skip_reason"])
        folder = os.path.join(dump, r["key"]) if r["key"] else None
        for e in _entries(folder) if folder and os.path.isdir(folder) else []:
            head = "# %s entry %d" % (title, e)
            base = os.path.join(folder, "entry%d" % e)
            g = _read(base + ".graph.0.captured.ir")
            graph.append(head + ("\n" + g.rstrip("\n") if g else "\n(no graph)"))
            guards.append(head + "\n" + (_read(base + ".guards.txt") or "(none)\n").rstrip("\n"))
            bc = _read(base + ".rewritten.dis")
            reason = _read(base + ".reason.txt")
            bytecode.append(head + ("\n# stops at: " + reason.strip() if reason else "") +
                            ("\n" + bc.rstrip("\n") if bc else "\n(no rewritten code)"))
    # (a blank line between entries; the summary's lines are one per code object, break or recompile)
    return {k: _normalise(sep.join(v) + "\n", case_path, case) for k, v, sep in
            (("summary", summary, "\n"), ("graph", graph, "\n\n"), ("guards", guards, "\n\n"),
             ("bytecode", bytecode, "\n\n"))}


def run_cases(cases, python=None):
    """Runs the cases in one child (python: another interpreter); returns {case: (record, sections)}."""
    work = tempfile.mkdtemp(prefix="pijit_golden_")
    try:  # (the dump of a stress run is ~400 MB: a run leaves nothing behind)
        return _run_cases_in(work, cases, python)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_cases_in(work, cases, python):
    dump = os.path.join(work, "dump")
    spec = []
    for fx in cases:
        path = os.path.join(work, "%s.py" % fx.name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(fx.text("source"))
        spec.append((fx.name, path, fx.calls()))
    with open(os.path.join(work, "cases.json"), "w") as f:
        json.dump(spec, f)
    env = dict(os.environ)  # (PIJIT_STRESS stays: the capture of f must not change under it)
    for var in ("PIJIT_LOGS", "PIJIT_TRACE", "PIJIT_SKIP", "PIJIT_ONLY", "PIJIT_DEBUG_NO_DIRECT", "PIJIT_DEBUG_NO_CACHE"):
        env.pop(var, None)  # (the dump must be the default run's)
    env["PIJIT_DUMP_DIR"] = dump
    env["PYTHONPATH"] = os.path.join(ROOT, "pyscripts") + os.pathsep + env.get("PYTHONPATH", "")
    results = os.path.join(work, "results.json")
    proc = subprocess.run([python or sys.executable, "-c", _CHILD, os.path.join(work, "cases.json"), results],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600, cwd=work, env=env)
    if proc.returncode != 0 or not os.path.exists(results):
        raise AssertionError("the golden child failed (rc %d):\n%s" % (proc.returncode, proc.stdout.decode(errors="replace")))
    with open(os.path.join(dump, "run.json"), encoding="utf-8") as f:
        rows = json.load(f)["functions"]
    with open(results) as f:
        records = json.load(f)
    out = {}
    for rec in records:
        # the jitted code, its resume functions and loop bodies (all of f's name and first line):
        # under PIJIT_STRESS the case's other functions that ran are captured too
        name, line = rec.get("code") or (None, None)
        mine = sorted((r for r in rows if r["path"] == rec["path"] and r["function"] == name and r["line"] == line),
                      key=lambda r: r["key"] or "")
        out[rec["name"]] = (rec, _sections_of(mine, dump, rec["path"], rec["name"]))
    return out


def diff(expected, actual, label):
    return "".join(difflib.unified_diff((expected or "").splitlines(True), actual.splitlines(True),
                                        "expected (%s)" % label, "actual (Python %s)" % VERSION))


# ---- the test ----------------------------------------------------------------------------------

_RESULTS = {}


def _results():
    if not _RESULTS:
        _RESULTS.update(run_cases(fixtures()))
    return _RESULTS


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class CaptureGolden(unittest.TestCase):
    """One test per fixture (added below): eager == jitted for every call, then each output section
    against the running version's expected block."""

    def check(self, fx):
        rec, actual = _results()[fx.name]
        self.assertNotIn("error", rec, rec.get("error"))
        self.assertEqual(len(rec["calls"]), len(fx.calls()))
        for c in rec["calls"]:
            self.assertEqual(c["jitted"], c["eager"], "%s: f(%s) jitted differs from eager" % (fx.name, c["call"]))
        self.assertTrue(actual["summary"].strip(), "%s: capture touched no code object of the case" % fx.name)
        if os.environ.get(UPDATE_VAR) == "1":
            changed = [n for n in OUTPUTS if fx.update(n, actual[n])]
            if changed:
                fx.write()
                print("\n%s: rewrote %s for Python %s" % (fx.path, ", ".join(changed), VERSION))
            return
        problems = []
        for name in OUTPUTS:
            want, label = fx.expected(name)
            if want != actual[name]:
                problems.append("--- %s: %s\n%s" % (name, "no expected block" if want is None else "differs",
                                                    diff(want, actual[name], label)))
        if problems:
            self.fail("%s on Python %s:\n%s\nIf the change is meant, regenerate this version's blocks with\n"
                      "  %s=1 PYTHONPATH=pyscripts %s tests/python/run.py -k capture_golden\n"
                      "(or tools/golden_update.py for every installed Python) and review the diff."
                      % (fx.path, VERSION, "\n".join(problems), UPDATE_VAR, sys.executable))


def _add_tests():
    for fx in fixtures():
        def test(self, fx=fx):
            self.check(fx)
        test.__doc__ = "golden/%s.txt" % fx.name
        setattr(CaptureGolden, "test_%s" % fx.name, test)


class FixtureFormat(unittest.TestCase):
    """The format's rules, on a fixture made here: version blocks win, the shared block serves the
    rest, and an update writes a version block only where the shared one differs."""

    def test_blocks(self):
        d = tempfile.mkdtemp(prefix="pijit_golden_fmt_")
        self.addCleanup(shutil.rmtree, d, True)
        p = os.path.join(d, "case.txt")
        with open(p, "w") as f:
            f.write("# a case\n--- source\ndef f(x):\n    return x\n\n--- call\n1\n--- graph\nshared\n"
                    "--- graph 3.7\nold\n")
        fx = Fixture(p)
        self.assertEqual(fx.expected("graph", "3.7"), ("old\n", "graph 3.7"))
        self.assertEqual(fx.expected("graph", "3.9"), ("shared\n", "graph"))
        self.assertEqual(fx.expected("guards", "3.9"), (None, "guards"))
        self.assertEqual(fx.calls(), ["1"])
        self.assertFalse(fx.update("graph", "shared\n", "3.9"))
        self.assertTrue(fx.update("graph", "mine\n", "3.10"))
        self.assertTrue(fx.update("graph", "shared\n", "3.7"))  # the 3.7 block goes: shared serves it
        self.assertTrue(fx.update("guards", "g\n", "3.9"))  # no shared block yet: it becomes the shared one
        fx.write()
        again = Fixture(p)
        self.assertEqual(again.comment, ["# a case"])
        self.assertEqual(sorted(again.sections, key=lambda k: (k[0], k[1] or "")),
                         [("call", None), ("graph", None), ("graph", "3.10"), ("guards", None), ("source", None)])
        self.assertEqual(again.text("source"), "def f(x):\n    return x\n")
        with open(p) as f:
            self.assertEqual(f.read().split("--- ")[3:], ["graph\nshared\n\n", "graph 3.10\nmine\n\n", "guards\ng\n"])

    def test_every_fixture_is_complete(self):
        """Each fixture has a source defining f, calls, and an expected block (shared or this
        version's) for every output, so a fixture cannot pass by lacking one."""
        fxs = fixtures()
        self.assertGreaterEqual(len(fxs), 12)
        for fx in fxs:
            self.assertIn("f", re.findall(r"^(?:def |class )?(\w+)", fx.text("source"), re.M), fx.name)
            self.assertTrue(fx.calls(), fx.name)
            unknown = [k for k in fx.sections if k[0] not in INPUTS + OUTPUTS]
            self.assertEqual(unknown, [], fx.name)


_add_tests()

if __name__ == "__main__":
    unittest.main()
