"""Per-opcode differential tests: every opcode in the running interpreter's opcode table (capture's
one table, pijit._C._opcode_table()) has snippets in opdiff_snippets.py, small functions that use
pijit tensors alongside the opcode. Each snippet runs plainly and through pj.jit, several calls in
a row with the state changed between calls where guards matter, and everything a caller can see
is compared call by call:

  - the return value, structurally: tensors by type, dtype, shape and bit-exact values; lists,
    tuples, dicts, sets and instances by contents; and aliasing (an object met again, among the
    arguments, the globals and the result, is recorded as a reference to where it was first met,
    so `return x` must return the argument itself and `[y, y]` one object twice);
  - the exception: type, message, the lines of the snippet's frames in its traceback, and the
    type and message of its __cause__ / __context__;
  - side effects: the arguments after the call, the snippet's globals, printed output.

Capture behaviour is pinned too: a snippet says whether the jitted calls ran graphs ("captured"),
were refused with a named break reason ("B005"), or never were capture candidates ("never"), and
optionally how many captures guards caused. A handled opcode without a snippet fails
test_every_opcode_has_a_snippet, so coverage cannot silently rot. Opcodes of the other Python
version are skipped by their absence from the table, not by version checks.

Differences found are pijit defects: the snippets that show one are marked expectedFailure in
KNOWN_DEFECTS below, each with a standalone reproducer in opdiff_found/.

    PYTHONPATH=pyscripts python -m unittest tests.python.test_opcode_diff
    PYTHONPATH=pyscripts python tests/python/run.py -k opcode_diff
"""
import contextlib
import dis
import io
import os
import re
import subprocess
import sys
import traceback
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.normpath(os.path.join(HERE, "..", "..", "pyscripts"))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import pijit as pj  # noqa: E402

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
if SUPPORTED:
    import opdiff_snippets as S  # noqa: E402

# Opcodes that no snippet can hold, with the reason. Keep it empty where possible: an entry here
# is an opcode whose handler no test exercises.
UNCOVERABLE = {}
if sys.version_info[:2] == (3, 11):
    UNCOVERABLE["CACHE"] = "an inline cache unit after an instruction, never one itself (the decoder skips it)"


class Defect(object):
    """A pijit defect a snippet shows. only_with / only_without: opcode names that must be in /
    absent from the running interpreter's table for the defect to show (versions differ by their
    opcodes). crash: the jitted run kills the interpreter, so the snippet runs in a child."""

    def __init__(self, what, reproducer, only_with=(), only_without=(), crash=False):
        self.what = what
        self.reproducer = reproducer
        self.only_with = only_with
        self.only_without = only_without
        self.crash = crash

    def applies(self):
        table = set(table_opcodes())
        return all(op in table for op in self.only_with) and not any(op in table for op in self.only_without)


# Snippets whose plain and jitted runs differ because of a pijit defect, each with a standalone
# reproducer in opdiff_found/. Such a snippet's test runs as an expected failure (where the
# defect applies), so that a fix shows up as an unexpected success: then delete the entry.
KNOWN_DEFECTS = {}  # the seven found so far are fixed; their snippets are the regression tests


# ---- observing a call ---------------------------------------------------------------------------

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_MUTABLE = (list, dict, set, bytearray)


class Normalizer(object):
    """Turns what a call left behind into plain, comparable data. Mutable objects (and tensors)
    met a second time become ("ref", n): aliasing is part of the result."""

    def __init__(self):
        self.seen = {}
        self.keep = []  # ids stay valid while we hold the objects

    def __call__(self, v, depth=0):
        if depth > 40:
            return ("deep",)
        tracked = isinstance(v, (pj.Tensor,) + _MUTABLE) or _is_instance(v)
        if tracked:
            if id(v) in self.seen:
                return ("ref", self.seen[id(v)])
            self.seen[id(v)] = len(self.seen)
            self.keep.append(v)
        n = lambda x: self(x, depth + 1)  # noqa: E731
        if isinstance(v, pj.Tensor):
            return ("Tensor", type(v).__name__, str(v.dtype), tuple(v.shape), _exact(v.tolist()))
        if v is None or isinstance(v, (bool, int, str, bytes)):
            return (type(v).__name__, v)
        if isinstance(v, float):
            return ("float", v.hex())
        if isinstance(v, complex):
            return ("complex", v.real.hex(), v.imag.hex())
        if isinstance(v, tuple):
            return (type(v).__name__,) + tuple(n(x) for x in v)
        if isinstance(v, list):
            return (type(v).__name__, [n(x) for x in v])
        if isinstance(v, dict):
            return (type(v).__name__, [(n(k), n(x)) for k, x in v.items()])
        if isinstance(v, (set, frozenset)):
            return (type(v).__name__, sorted((n(x) for x in v), key=repr))
        if isinstance(v, slice):
            return ("slice", n(v.start), n(v.stop), n(v.step))
        if isinstance(v, range):
            return ("range", v.start, v.stop, v.step)
        if isinstance(v, BaseException):
            return ("exception", type(v).__name__, n(v.args))
        if isinstance(v, type):
            return ("type", v.__qualname__)
        if isinstance(v, types.ModuleType):
            return ("module", v.__name__)
        if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
            return ("function", getattr(v, "__qualname__", repr(v)))
        if isinstance(v, types.GeneratorType):
            return ("generator", v.gi_frame is None)
        if type(v).__name__.endswith("iterator"):
            try:
                red = v.__reduce__()  # (iter, (seq,), position): the state, without consuming
            except Exception:  # noqa: BLE001
                red = None
            return ("iterator", type(v).__name__, n(red[1:]) if red else None)
        if _is_instance(v):
            slots = [(s, n(getattr(v, s))) for s in getattr(type(v), "__slots__", ()) if hasattr(v, s)]
            return ("object", type(v).__qualname__, n(dict(vars(v))) if hasattr(v, "__dict__") else None, slots)
        return ("repr", type(v).__name__, _ADDRESS.sub("0x?", repr(v)))


def _is_instance(v):
    t = type(v)
    return (t.__module__ == "opdiff_snippets" or t.__module__ == __name__) and not isinstance(v, type)


def _exact(v):
    if isinstance(v, float):
        return v.hex()
    if isinstance(v, list):
        return [_exact(x) for x in v]
    return v


def _drive(result, how):
    if how == "gen":
        return list(result)
    if how == "coro":
        return S.run_coro(result)
    return result


def _snippet_lines(tb):
    files = (S.__file__.rstrip("c"), S.GENERATED_FILE)
    return [(fr.name, fr.lineno) for fr in traceback.extract_tb(tb) if fr.filename.rstrip("c") in files]


def _reset_globals(sn):
    g = S.__dict__
    for name, make in sn.globals_.items():
        if make is S.ABSENT:
            g.pop(name, None)
        else:
            g[name] = make()


def run_sequence(sn, target):
    """Calls target (sn.fn, or its jitted copy) once per sn.calls entry; one observation each."""
    _reset_globals(sn)
    del S.LOG[:]
    ctx = {}
    observations = []
    for make in sn.calls:
        a = make(ctx)
        if isinstance(a, S.Kw):
            pos, kw = a.args, a.kwargs
        else:
            pos, kw = a, {}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                result = ("return", _drive(target(*pos, **kw), sn.drive))
            except Exception as e:  # noqa: BLE001
                result = ("raise", type(e).__name__, _ADDRESS.sub("0x?", str(e)), _snippet_lines(e.__traceback__),
                          [(type(c).__name__, str(c)) for c in (e.__cause__, e.__context__) if c is not None])
        norm = Normalizer()
        observed = {
            "args": norm(pos),
            "kwargs": norm(kw),
            "ctx": norm(sorted(ctx.items())),
            "globals": [(k, norm(S.__dict__.get(k, S.ABSENT)) if k in S.__dict__ else "<absent>")
                        for k in sorted(sn.globals_)],
            "log": norm(list(S.LOG)),
            "printed": out.getvalue(),
        }
        observed["result"] = norm(result)
        observations.append(observed)
        del S.LOG[:]
    return observations


def fresh_copy(fn):
    """fn with a code object of its own: the jitted run starts from an empty cache whatever ran
    before (pijit keeps its cache on the code object)."""
    co = fn.__code__
    if hasattr(co, "replace"):
        nco = co.replace()
    else:
        nco = types.CodeType(co.co_argcount, co.co_kwonlyargcount, co.co_nlocals, co.co_stacksize,
                             co.co_flags, co.co_code, co.co_consts, co.co_names, co.co_varnames,
                             co.co_filename, co.co_name, co.co_firstlineno, co.co_lnotab,
                             co.co_freevars, co.co_cellvars)
    f = types.FunctionType(nco, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    f.__kwdefaults__ = fn.__kwdefaults__
    f.__qualname__ = fn.__qualname__
    return f


@contextlib.contextmanager
def no_stress():
    """Plain runs stay plain under PIJIT_STRESS."""
    level = pj.stress_stats()["level"]
    pj.set_stress(False)
    try:
        yield
    finally:
        pj.set_stress(level)


def outcomes(stats):
    """What capture did over a run: "captured", break reason ids, or "never"."""
    got = set()
    if stats["compiles"] == 0:
        got.add("never")
    if stats["graphs"] > 0:
        got.add("captured")
    for r in stats["break_reasons"]:
        got.add(r.split()[0])
    return got


def differential(sn):
    """(plain observations, jitted observations, jit stats)."""
    with no_stress():
        plain = run_sequence(sn, sn.make())
    copy = fresh_copy(sn.make())
    jf = pj.jit(copy)
    jitted = run_sequence(sn, jf)
    return plain, jitted, pj.jit_stats(jf)


def _first_difference(plain, jitted):
    for i, (p, j) in enumerate(zip(plain, jitted)):
        for k in sorted(p):
            if p[k] != j[k]:
                return "call %d differs in %s:\n  plain:  %r\n  jitted: %r" % (i + 1, k, p[k], j[k])
    return None


def opcodes_of(code):
    names = set()
    for ins in dis.get_instructions(code):
        names.add(ins.opname)  # EXTENDED_ARG too: dis lists it as an instruction of its own
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= opcodes_of(c)
    return names


def table_opcodes():
    return [n for n, _, _ in pj._C._opcode_table()]


# ---- the tests ------------------------------------------------------------------------------------

@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class TestOpcodeCoverage(unittest.TestCase):
    def test_every_opcode_has_a_snippet(self):
        covered = set()
        for sn in S.SNIPPETS:
            covered |= opcodes_of(sn.fn.__code__)
        missing = [op for op in table_opcodes() if op not in covered and op not in UNCOVERABLE]
        self.assertEqual(missing, [], "opcodes of the table without a snippet")

    def test_snippets_hold_their_opcodes(self):
        table = set(table_opcodes())
        lost = []
        for sn in S.SNIPPETS:
            have = opcodes_of(sn.fn.__code__)
            # The other version's opcodes are skipped by their absence from the table; "A|B" is
            # the first of A, B the table has (IS_OP on 3.9 is COMPARE_OP on 3.7).
            for spec in sn.ops:
                present = [op for op in spec.split("|") if op in table]
                if present and present[0] not in have:
                    lost.append("%s: %s" % (sn.name, present[0]))
        self.assertEqual(lost, [], "snippets that no longer compile to their opcodes")

    def test_names_are_unique(self):
        names = [sn.name for sn in S.SNIPPETS]
        self.assertEqual(len(names), len(set(names)))

    def test_expectations_name_known_reasons(self):
        for sn in S.SNIPPETS:
            for e in sn.expect:
                self.assertTrue(e in ("captured", "never") or re.match(r"^B\d{3}$", e), (sn.name, e))

    def test_known_defects_name_snippets_and_reproducers(self):
        names = set(sn.name for sn in S.SNIPPETS)
        for name, defect in KNOWN_DEFECTS.items():
            self.assertIn(name, names)
            self.assertTrue(os.path.exists(os.path.join(HERE, defect.reproducer)), defect.reproducer)
        table = set(table_opcodes())
        self.assertEqual([op for op in UNCOVERABLE if op not in table], [])


def check(sn):
    """Everything a snippet's test asserts; returns the failures (empty when it passes)."""
    plain, jitted, st = differential(sn)
    failures = []
    diff = _first_difference(plain, jitted)
    if diff:
        failures.append("plain and jitted differ: %s\n(break reasons: %s)" % (diff, st["break_reasons"]))
    got = outcomes(st)
    if got != set(sn.expect):
        failures.append("capture did %s, expected %s; reasons: %s"
                        % (sorted(got), sorted(sn.expect), st["break_reasons"]))
    if sn.compiles is not None and st["compiles"] != sn.compiles:
        failures.append("%d captures, expected %d; recompile reasons: %s"
                        % (st["compiles"], sn.compiles, st["recompile_reasons"]))
    if got == {"captured"}:
        # Every call ran graph-calling code: no silent fallback to the interpreter.
        hits = sum(e["hits"] for e in st["entries"] if e["reason"] is None)
        if hits != len(sn.calls):
            failures.append("%d of %d calls ran captured code: %r" % (hits, len(sn.calls), st))
    return failures


def check_isolated(name):
    """check() of one snippet in a child interpreter: a crash fails one test, not the suite."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PYSCRIPTS, HERE] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "one", name], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        return ["exit status %d:\n%s" % (proc.returncode, out[-3000:])]
    return []


class TestOpcodeDiff(unittest.TestCase):
    """One test per snippet (added below)."""


def _make_test(sn):
    defect = KNOWN_DEFECTS.get(sn.name)
    if defect and not defect.applies():
        defect = None

    def test(self):
        failures = check_isolated(sn.name) if defect and defect.crash else check(sn)
        self.assertEqual(failures, [], "%s:\n%s" % (sn.name, "\n".join(failures)))
    test.__name__ = "test_" + sn.name
    if defect:
        test = unittest.expectedFailure(test)
    return unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)(test)


if SUPPORTED:
    for _sn in S.SNIPPETS:
        setattr(TestOpcodeDiff, "test_" + _sn.name, _make_test(_sn))


def _survey():
    """python test_opcode_diff.py: one line per snippet (what capture did, whether runs differ)."""
    bad = 0
    for sn in S.SNIPPETS:
        defect = KNOWN_DEFECTS.get(sn.name)
        if defect and defect.crash and defect.applies():
            failures = check_isolated(sn.name)
            print("%-55s (isolated) %s" % (sn.name, "FAILS: " + failures[0][:300] if failures else "passes"))
            bad += bool(failures)
            continue
        try:
            plain, jitted, st = differential(sn)
        except Exception as e:  # noqa: BLE001
            print("%-55s CRASH %r" % (sn.name, e))
            bad += 1
            continue
        diff = _first_difference(plain, jitted)
        got = outcomes(st)
        flag = "" if got == set(sn.expect) and (sn.compiles is None or sn.compiles == st["compiles"]) else " <-- expected %s/%s" % (sorted(sn.expect), sn.compiles)
        print("%-55s %-22s compiles=%d%s" % (sn.name, ",".join(sorted(got)), st["compiles"], flag))
        for r in st["break_reasons"]:
            print("      ", r[r.find(": ") + 2:][:300])
        if diff:
            bad += 1
            print("    DIFF", diff)
    return bad


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "survey":
        sys.exit(1 if _survey() else 0)
    if len(sys.argv) > 2 and sys.argv[1] == "one":  # check_isolated's child
        _failures = check([sn for sn in S.SNIPPETS if sn.name == sys.argv[2]][0])
        print("\n".join(_failures))
        sys.exit(1 if _failures else 0)
    unittest.main()
