"""The capture stage of the golden fixtures (tests/python/golden/), on every Python the simulator is
built for, 3.11 included, where the hook does not capture yet.

For each fixture, `_C._capture_probe` runs the simulator alone on f's frame as pj.jit's hook is
given it at the first call (arguments bound, nothing run), then lets the frame run in CPython's
loop. What it captured must be the fixture's first entry: the `graph` and `guards` blocks of
"entry 0" of f, and the first break the `summary` lists for f (or none). On 3.7-3.10 that checks
the probe against the whole pipeline the golden test runs; on 3.11 it checks that the simulator,
fed 3.11's bytecode and frame, captures what it captures on the other versions. A version whose
capture legitimately differs has its own block in the fixture (`--- graph 3.11`), as the golden
test's blocks do; PIJIT_GOLDEN_UPDATE=1 does not write them here: the golden test owns the blocks
of 3.7-3.10, and a 3.11 block is written by hand after review.
"""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_capture_golden as golden  # noqa: E402  (the fixture format)
from jit_compare import CAPTURE_BUILT, CAPTURE_OFF_WHY  # noqa: E402

from pijit import _C  # noqa: E402

_HEAD = re.compile(r"^# \[(\d+)\] .* entry (\d+)$")


def entry_block(text, entry=0):
    """The body of `# [0] ... entry N` in an expected graph or guards section; None if absent."""
    if text is None:
        return None
    blocks, head = {}, None
    for line in text.rstrip("\n").split("\n"):
        m = _HEAD.match(line)
        if m:
            head = (int(m.group(1)), int(m.group(2)))
            blocks[head] = []
        elif head is not None:
            blocks[head].append(line)
    body = blocks.get((0, entry))
    if body is None:
        return None
    while body and not body[-1].strip():
        body.pop()
    return "\n".join(body) + "\n"


def first_break(summary):
    """The text of the first break the summary lists for f ([0]), or ''."""
    rows = (summary or "").split("\n")
    for i, line in enumerate(rows):
        if line.startswith("[0] "):
            for more in rows[i + 1:]:
                if not more.startswith("  "):
                    break
                if more.startswith("  break "):
                    return more[len("  break "):]
            return ""
    return ""


def probe(fx):
    """(record, case path) of the simulator on the fixture's first call of f."""
    path = os.path.join(tempfile.mkdtemp(prefix="pijit_stage_"), "%s.py" % fx.name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(fx.text("source"))
    spec = importlib.util.spec_from_file_location("stage_" + fx.name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ns = vars(mod)
    a, k = eval("(lambda *a, **k: (a, k))(%s)" % fx.calls()[0], ns)
    fn = ns["f"]
    if not isinstance(fn, type(probe)):  # a Cell: its construct's frame, as jit captures a Cell
        a = (fn,) + tuple(a)
        fn = type(fn).construct
    _, rec = _C._capture_probe(fn, tuple(a), dict(k))
    return rec, path


@unittest.skipUnless(CAPTURE_BUILT, CAPTURE_OFF_WHY)
class CaptureStage(unittest.TestCase):
    """One test per fixture (added below)."""

    def check(self, fx):
        rec, path = probe(fx)  # (under PIJIT_STRESS too: the probe's evaluator runs the call)
        norm = lambda t: golden._normalise(t, path, fx.name)  # noqa: E731
        graph = norm(rec["graph"]) if rec["graph"] else "(no graph)\n"
        guards = norm("\n".join(rec["guards"]) + "\n") if rec["guards"] else "(none)\n"
        stop = norm(rec["text"]) if rec["reason"] and (rec["broke"] or not rec["ok"]) else ""
        problems = []
        for name, actual in (("graph", graph), ("guards", guards)):
            text, label = fx.expected(name)
            want = entry_block(text)
            if want != actual:
                problems.append("--- %s (entry 0):\n%s" % (name, golden.diff(want, actual, label)))
        want_break = first_break(fx.expected("summary")[0]) if rec["ok"] else None
        if want_break is not None and want_break != stop:
            problems.append("--- break: expected %r, captured %r" % (want_break, stop))
        if problems:
            self.fail("%s: the simulator on Python %s captures another first entry:\n%s"
                      % (fx.path, golden.VERSION, "\n".join(problems)))


def _add_tests():
    for fx in golden.fixtures():
        def test(self, fx=fx):
            self.check(fx)
        test.__doc__ = "golden/%s.txt, capture stage" % fx.name
        setattr(CaptureStage, "test_%s" % fx.name, test)


_add_tests()

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _python39():
    base = os.path.expanduser(os.environ.get("PYENV_ROOT", "~/.pyenv"))
    for d in sorted(os.listdir(os.path.join(base, "versions"))) if os.path.isdir(os.path.join(base, "versions")) else []:
        if d.startswith("3.9."):
            p = os.path.join(base, "versions", d, "bin", "python")
            if os.access(p, os.X_OK):
                return p
    return None


class CrossVersion(unittest.TestCase):
    """tests/fuzz/stage_diff.py: 1000 random programs, each captured by the simulator here and on
    3.9, the graphs equal, the guards equal as sets, capture stopping for the same reason in the
    same function (tests/fuzz/stage_diff.py's KNOWN lists the differences that are the bytecode's).
    Defined on 3.10 and 3.11, the versions whose capture stage agrees with 3.9's program by program;
    3.7's and 3.8's block protocols place some breaks elsewhere (not checked here)."""

    def test_random_programs_capture_as_on_39(self):
        other = _python39()
        self.assertIsNotNone(other, "pyenv's Python 3.9 is part of the test matrix and must be installed")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "pyscripts"))
        env.pop("PIJIT_STRESS", None)  # (the probe runs the simulator itself; stress adds nothing)
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "fuzz", "stage_diff.py"), "--seed", "2",
                               "--count", "1000", "--against", other], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env=env, timeout=900)
        out = proc.stdout.decode(errors="replace")
        self.assertIn("1000 programs, 0 differ", out, out[-6000:])
        self.assertEqual(proc.returncode, 0, out[-6000:])


if golden.VERSION not in ("3.10", "3.11"):
    del CrossVersion

if __name__ == "__main__":
    unittest.main()
