"""CPython's own regression test modules, run stock and under pijit's stress mode, compared test
by test. Stress mode makes every Python frame a capture candidate, so any test whose outcome
changes is a place where capture changed Python's meaning (or an allowlisted JIT artefact).

    python tests/cpython/run_regrtest.py                      # the CI profile (a few minutes)
    python tests/cpython/run_regrtest.py --full               # a longer list, for hand runs
    python tests/cpython/run_regrtest.py test_descr test_gc   # chosen modules
    python tests/cpython/run_regrtest.py --stress 2 -j 2 --logdir /tmp/rt

The interpreter that runs this script runs the tests (its own Lib/test). Each module runs in its
own subprocess, once stock (pijit never imported) and once with pijit imported and stress on
before the test module is imported; the child is this same script (--child), so the only
difference between the two runs is pijit. A crash (signal) or a hang (--timeout) is recorded with
the test that was running. Per-module lines show the share of candidate frames that ran pijit's
rewritten code (pijit.stress_stats()), and how many frames of the test module's own code did:
both must reach the module's floors (FLOORS, FLOOR_EXCEPTIONS), so that stress is shown to have
happened. Ends with "N passed, N failed": passed = tests that pass in both runs (or whose
difference allowlist.py excuses: its failing line and message); failed = other differences +
crashes + timeouts + modules below their floor. Tests that fail or skip in both runs are counted
apart (they compare nothing). Exits 1 when anything failed.
"""
import argparse
import collections
import concurrent.futures
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.join(HERE, "..", "..", "pyscripts")

# The CI profile: the language core, descriptors, exceptions, generators, tracing, gc, threads
# and async, chosen to fit about 4 minutes per interpreter (stock + stress) on 2 cores. The
# slowest modules come first so that -j2 finishes evenly.
CI_MODULES = [
    "test_descr", "test_builtin", "test_collections", "test_functools", "test_generators",
    "test_coroutines", "test_grammar", "test_exceptions", "test_sys_settrace", "test_dataclasses",
    "test_enum", "test_itertools", "test_weakref", "test_gc", "test_scope", "test_class",
    "test_dict", "test_list", "test_set", "test_tuple", "test_unpack", "test_with",
    "test_contextlib", "test_sys_setprofile", "test_frame", "test_asyncgen", "test_code",
    "test_string", "test_bool", "test_int", "test_float", "test_math", "test_super",
    "test_property", "test_types", "test_raise", "test_keywordonlyarg", "test_decorators",
    "test_genexps", "test_listcomps", "test_setcomps", "test_dictcomps", "test_funcattrs",
    "test_extcall", "test_unpack_ex", "test_syntax", "test_global", "test_richcmp",
    "test_isinstance", "test_descrtut", "test_metaclass", "test_yield_from", "test_iter",
    "test_contains", "test_augassign", "test_compare", "test_opcodes", "test_exception_variations",
    "test_baseexception", "test_finalization", "test_dynamicclassattribute", "test_subclassinit",
    "test_threading_local", "test_positional_only_arg", "test_named_expressions",
    "test_patma",  # (3.10+: structural pattern matching; absent modules are left out)
]
# --full adds slower or broader modules for hand runs.
FULL_EXTRA = [
    "test_threading", "test_inspect", "test_traceback", "test_sys", "test_operator", "test_copy",
    "test_deque", "test_heapq", "test_bisect", "test_sort", "test_userdict", "test_userlist",
    "test_ordered_dict", "test_defaultdict", "test_abc", "test_exception_hierarchy", "test_pow",
    "test_long", "test_complex", "test_fractions", "test_statistics", "test_random", "test_slice",
    "test_range", "test_enumerate", "test_dictviews", "test_memoryview", "test_bytes",
    "test_unicode", "test_format", "test_fstring", "test_string_literals", "test_re", "test_json",
    "test_textwrap", "test_typing", "test_contextlib_async", "test_thread", "test_queue",
    "test_bdb", "test_trace", "test_cprofile", "test_profile", "test_dis", "test_compile",
    "test_ast", "test_call", "test_dynamic", "test_genericclass", "test_copyreg", "test_pickle",
    "test_decimal",
]

# ---------------------------------------------------------------------------------------------
# Child: runs one test module and writes one JSON line per event to --out, flushed at once, so a
# crash leaves behind every outcome so far and the test that was running.

class JsonResult(unittest.TestResult):
    """Events: {"start": id}, then {"id", "outcome": pass/fail/error/skip/xfail/xpass, "detail",
    "seconds"}; a class or module that fails or skips as a whole gets one event under its own id."""
    def __init__(self, out):
        super().__init__()
        self.out = out
        self.current = {}   # test id -> outcome, for the test running now (sub-tests fold in)

    def emit(self, **event):
        self.out.write(json.dumps(event) + "\n")
        self.out.flush()

    def startTest(self, test):
        super().startTest(test)
        self.current = {}
        self.started = time.time()
        self.emit(start=test.id())

    def stopTest(self, test):
        super().stopTest(test)
        # A test whose sub-tests failed gets no addSuccess/addFailure of its own.
        outcome, detail, line = self.current.get(test.id(), ("fail", "a sub-test failed", ""))
        self.emit(id=test.id(), outcome=outcome, detail=detail, line=line,
                  seconds=round(time.time() - self.started, 3))

    def set(self, test, outcome, err=None, detail=""):
        line = ""
        if err is not None:  # the exception's last line is enough to tell two failures apart
            lines = "".join(traceback.format_exception_only(err[0], err[1])).strip().splitlines()
            detail = lines[-1][:300] if lines else ""
            line = failing_line(err[2])
        self.current[test.id()] = (outcome, detail, line)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.set(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.set(test, "fail", err)

    def addError(self, test, err):
        super().addError(test, err)
        if not hasattr(test, "_testMethodName") and not hasattr(test, "_dt_test"):
            # setUpClass/setUpModule failures arrive as an _ErrorHolder outside start/stopTest.
            self.emit(id=test.id(), outcome="error", detail=str(err[1])[:300])
            return
        self.set(test, "error", err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        if not hasattr(test, "_testMethodName") and not hasattr(test, "_dt_test"):
            self.emit(id=test.id(), outcome="skip", detail=reason)  # a skipped class or module
            return
        self.set(test, "skip", detail=reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.set(test, "xfail")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.set(test, "xpass")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None and test.id() not in self.current:
            kind = "fail" if issubclass(err[0], test.failureException) else "error"
            self.set(test, kind, err)
            _, detail, line = self.current[test.id()]
            self.current[test.id()] = (kind, subtest.id() + ": " + detail, line)


def failing_line(tb):
    """The source line of the innermost frame in CPython's test package where the exception passed
    (the assertion that failed): what the allow-list matches, with the exception's last line."""
    frames = [f for f in traceback.extract_tb(tb) if "%stest%s" % (os.sep, os.sep) in f.filename]
    return (frames[-1].line or "").strip() if frames else ""


def neutralised_lines(module):
    from allowlist import NEUTRALISED
    version = "%d.%d" % sys.version_info[:2]
    return [line for v, m, line, _ in NEUTRALISED if m == module and v in (version, "*")]


def neutralised_source(module):
    """The test module's source with its NEUTRALISED lines replaced by `pass` (same line numbers),
    and the lines that were not found exactly once."""
    spec = importlib.util.find_spec("test." + module)
    with open(spec.origin) as f:
        src = f.read().split("\n")
    missing = []
    for text in neutralised_lines(module):
        hits = [i for i, ln in enumerate(src) if ln.strip() == text]
        if len(hits) != 1:
            missing.append("%r (%d times in %s)" % (text, len(hits), spec.origin))
            continue
        ln = src[hits[0]]
        src[hits[0]] = ln[:len(ln) - len(ln.lstrip())] + "pass  # neutralised: tests/cpython/allowlist.py"
    return spec, "\n".join(src), missing


def module_codes(mod):
    """The code objects of a test module's own functions: its functions, its classes' methods
    (and properties', static and class methods'), and every code nested in them."""
    import types
    codes, seen = [], set()

    def add(co):
        if id(co) not in seen:
            seen.add(id(co))
            codes.append(co)
            for c in co.co_consts:
                if isinstance(c, types.CodeType):
                    add(c)

    def visit(obj, depth):
        obj = getattr(obj, "__func__", obj)  # staticmethod, classmethod, bound method
        if isinstance(obj, property):
            for f in (obj.fget, obj.fset, obj.fdel):
                visit(f, depth)
        elif isinstance(obj, types.FunctionType) and obj.__module__ == mod.__name__:
            add(obj.__code__)
        elif isinstance(obj, type) and obj.__module__ == mod.__name__ and depth < 3:
            for v in list(vars(obj).values()):
                visit(v, depth + 1)
    for v in list(vars(mod).values()):
        visit(v, 0)
    return codes


def stress_stats(pijit, module):
    """pijit.stress_stats(), and what stress did with the test module's own code (its functions and
    methods, and its doctests' examples; not unittest's or the library's): module_rewritten and
    module_default frames."""
    st = pijit.stress_stats()
    # (a test package, test_json: its own code is in its submodules, test.test_json.test_decode...)
    own = [m for name, m in list(sys.modules.items())
           if m is not None and (name == "test." + module or name.startswith("test.%s." % module))]
    codes = [co for m in own for co in module_codes(m)]
    # doctest's names for the code of an example: <doctest test.test_x[3]>, <doctest test.test_x.f[0]>
    doctests = ("<doctest test.%s[" % module, "<doctest test.%s." % module)
    codes += [e["code"] for e in pijit._C.capture_summary() if e["file"].startswith(doctests)]
    st["module_rewritten"] = st["module_default"] = 0
    for co in codes:
        own = pijit.jit_stats(co)
        st["module_rewritten"] += own["frames_rewritten"]
        st["module_default"] += own["frames_default"]
    return st


def child(module, out_path, stress):
    import faulthandler
    faulthandler.enable()  # a crash prints the Python stack into the log
    if neutralised_lines(module):  # imported from the edited source, in both runs alike
        spec, src, missing = neutralised_source(module)
        if missing:
            raise SystemExit("allowlist.py: NEUTRALISED lines not found once: %s" % missing)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        exec(compile(src, spec.origin, "exec"), mod.__dict__)
    if stress:
        sys.path.insert(0, os.path.abspath(PYSCRIPTS))
        import pijit
        pijit.set_stress(stress)
    import doctest
    from test import support
    # Doctest examples are the module's own code: their functions die with the example's globals
    # (cleared after each example) and, once the garbage collector runs, their capture records
    # with them, before stress_stats counts them. The globals' values are kept alive to the end
    # (in both runs alike); when the collector ran first was a matter of heap size, not of stress.
    kept_globs = []
    clear_globs = doctest.DocTestCase.tearDown

    def keep_then_clear(case):
        kept_globs.append(dict(case._dt_test.globs))
        clear_globs(case)
    doctest.DocTestCase.tearDown = keep_then_clear
    support.verbose = 0          # as regrtest sets them: quiet, no optional resources
    support.use_resources = []
    with open(out_path, "w") as out:
        result = JsonResult(out)
        # Modules with a test_main call support.run_unittest / run_doctest themselves (with their
        # own setup around them): both are redirected to our result instead of raising TestFailed.
        support._run_suite = lambda suite: suite.run(result)

        def run_doctest(mod, verbosity=None, optionflags=0):
            doctest.DocTestSuite(mod, optionflags=optionflags).run(result)
            return 0, 0
        support.run_doctest = run_doctest
        try:
            mod = __import__("test." + module, fromlist=["*"])
            if hasattr(mod, "test_main"):
                mod.test_main()
            else:  # what regrtest does; honours load_tests (doctest suites in 3.9's test_generators)
                suite = unittest.TestLoader().loadTestsFromModule(mod)
                if hasattr(support, "run_unittest"):
                    support.run_unittest(suite)
                else:  # (3.11.7's support has none: its regrtest runs the loaded suite)
                    support._run_suite(suite)
        except unittest.SkipTest as e:
            result.emit(id="<module>", outcome="skip", detail=str(e))
        except BaseException as e:
            result.emit(id="<module>", outcome="error", detail="%s: %s" % (type(e).__name__, e))
        result.emit(stats=stress_stats(pijit, module) if stress else None)
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------------
# Driver.

class Run:
    """One child run: outcomes by test id, the test running when it stopped, how it ended."""
    def __init__(self, events, rc, seconds, timed_out, log):
        self.outcomes, self.details, self.lines, self.running, self.stats, self.finished = {}, {}, {}, None, None, False
        for e in events:
            if "start" in e:
                self.running = e["start"]
            elif "id" in e:
                self.outcomes[e["id"]] = e["outcome"]
                self.details[e["id"]] = e.get("detail", "")
                self.lines[e["id"]] = e.get("line", "")
                if e["id"] == self.running:
                    self.running = None
            elif "stats" in e:
                self.stats, self.finished = e["stats"], True
        self.rc, self.seconds, self.timed_out, self.log = rc, seconds, timed_out, log

    def trouble(self):
        """None, or why the run is not a clean one (crash, hang, exit status)."""
        if self.timed_out:
            return "timed out after %.0fs" % self.seconds
        if self.rc < 0:
            name = signal.Signals(-self.rc).name if -self.rc in signal.Signals._value2member_map_ else ""
            return "killed by signal %d %s%s" % (-self.rc, name, "" if not self.finished else " at exit")
        if self.rc != 0 or not self.finished:
            return "exit status %d%s" % (self.rc, "" if self.finished else " before the end of the tests")
        return None


def run_child(python, module, stress, timeout, logdir, tag):
    out_path = os.path.join(logdir, "%s.%s.jsonl" % (module, tag))
    log_path = os.path.join(logdir, "%s.%s.log" % (module, tag))
    cwd = tempfile.mkdtemp(prefix="pijit_rt_")  # like regrtest: tests write TESTFN files into cwd
    env = {k: v for k, v in os.environ.items() if k not in ("PIJIT_STRESS", "PYTHONPATH")}
    # One hash seed for both runs and every run: str hashes order sets and dicts, which decides how
    # often a module's frames see a new guard set, so with a random seed the frames stress rewrote
    # ranged from 3.3k to 19k for test_collections alone, and its floor (FLOORS) failed at random.
    env.setdefault("PYTHONHASHSEED", "0")
    cmd = [python, os.path.abspath(__file__), "--child", module, "--out", out_path,
           "--stress", str(stress)]
    start = time.time()
    timed_out = False
    with open(log_path, "w") as log:
        # A new session, so that a timeout kills the module's own subprocesses too.
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = p.wait(timeout)
        except subprocess.TimeoutExpired:
            # SIGABRT first: faulthandler prints where every thread was stuck into the log.
            timed_out = True
            p.send_signal(signal.SIGABRT)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(p.pid, signal.SIGKILL)  # and whatever the tests started
            except ProcessLookupError:
                pass
            rc = p.wait()
    seconds = time.time() - start
    shutil.rmtree(cwd, ignore_errors=True)
    events = []
    if os.path.exists(out_path):
        with open(out_path) as f:
            for line in f:
                try:
                    events.append(json.loads(line))
                except ValueError:  # a line cut short by a crash
                    pass
    return Run(events, rc, seconds, timed_out, log_path)


def excerpt(path, n=8):
    """The top of faulthandler's report (the crashing frame first), else the log's last lines."""
    with open(path, errors="replace") as f:
        lines = f.readlines()
    for i, line in enumerate(lines):
        if line.startswith("Fatal Python error"):
            current = [j for j in range(i, len(lines)) if lines[j].startswith("Current thread")]
            j = current[0] if current else i + 1
            return lines[i] + "".join(lines[j:j + n])
    return "".join(lines[-n:])


def run_module(python, module, stress, timeout, logdir):
    stock = run_child(python, module, 0, timeout, logdir, "stock")
    # --stress 0 runs stock twice: a self-check that finds tests too flaky to compare.
    stressed = run_child(python, module, stress, timeout, logdir, "stress%d" % stress if stress else "rerun")
    return stock, stressed


def compare(module, stock, stressed, allowed):
    """Returns (counts, notes, failures): tests by outcome ("pass": passed, or failed as expected,
    in both; "both failing"; "both skipped"; "allowlisted"), and lines of text: the allow-listed
    and both-failing tests, and the failures."""
    counts, notes, failures = collections.Counter(), [], []
    for run, what in ((stock, "stock"), (stressed, "stress")):
        why = run.trouble()
        if why:
            lost = len(set(stock.outcomes) - set(run.outcomes))
            failures.append("%s %s: %s while running %s (%d tests never ran); log %s\n%s"
                            % (module, what, why, run.running or "-", lost, run.log, excerpt(run.log)))
    ended_early = stressed.trouble() is not None and not stressed.finished
    for tid in sorted(set(stock.outcomes) | set(stressed.outcomes)):
        a, b = stock.outcomes.get(tid), stressed.outcomes.get(tid)
        if a == b:
            counts["pass" if a in ("pass", "xfail") else "both skipped" if a == "skip" else "both failing"] += 1
            if a not in ("pass", "xfail", "skip"):
                notes.append("BOTH FAILING %s: %s: %s in both runs: %s" % (module, tid, a, stock.details.get(tid, "")))
            continue
        if b is None and ended_early:
            continue  # counted once, as the crash or timeout above
        where = "%s at %r" % (stressed.details.get(tid, ""), stressed.lines.get(tid, ""))
        entry = allowed.get((module, tid))
        if (entry and a == "pass" and b in ("fail", "error") and stressed.lines.get(tid) == entry[0]
                and re.fullmatch(entry[1], stressed.details.get(tid, ""))):
            counts["allowlisted"] += 1
            notes.append("ALLOWLISTED %s: %s: stock %s, stress %s: %s" % (module, tid, a, b, where))
        else:
            failures.append("%s: %s: stock %s, stress %s: %s%s" % (
                module, tid, a or "missing", b or "missing",
                where if b in ("fail", "error") else stock.details.get(tid, ""),
                " (allow-listed only for %r, %s)" % entry if entry else ""))
    return counts, notes, failures


# Stress must be seen to reach each module: in its stressed run,
#  - at least FLOORS[module][0] frames of the module's own code (the functions and methods defined in
#    it and its doctests' examples) ran pijit's rewritten code, and
#  - at least FLOORS[module][1] percent of all its candidate frames did (unittest's and the
#    library's included: a test method capture inlines into unittest's caller runs in their frames).
# The floors are half the fewest measured at stress level 1 on 3.7 and 3.9 (level 2 also runs
# refused frames' re-assembled code, so it rewrites more); a module without floors needs one frame
# of each. FLOOR_EXCEPTIONS: where a module's own code runs in no frame of its own, and why.
# test_collections varies between identical runs even with the hash seed pinned: on 3.8 its own
# frames rewritten ranged from 3328 to 18652 over ten runs (session 34; what else orders its
# recompiles, object addresses perhaps, is not pinned down), so its floor is half that fewest.
FLOORS = {
    "test_asyncgen": (0, 11.4), "test_augassign": (23, 10.0), "test_baseexception": (2, 10.4),
    "test_bool": (5, 10.5), "test_builtin": (321, 13.3), "test_class": (31, 10.3), "test_code": (5, 10.8),
    "test_collections": (1664, 8.0), "test_compare": (141, 10.8), "test_contains": (10, 9.8),
    "test_contextlib": (21, 11.6), "test_coroutines": (37, 11.4), "test_dataclasses": (51, 11.9),
    "test_decorators": (19, 10.1), "test_descr": (1017, 12.2), "test_descrtut": (1, 11.5),
    "test_dict": (66, 25.9), "test_dictcomps": (2, 9.8), "test_dynamicclassattribute": (4, 10.1),
    "test_enum": (86, 2.0), "test_exception_variations": (5, 9.9), "test_exceptions": (11, 7.1),
    "test_extcall": (5, 10.8), "test_finalization": (76, 10.0), "test_float": (248, 2.2),
    "test_frame": (0, 10.0), "test_funcattrs": (5, 10.1), "test_functools": (1923, 11.4),
    "test_gc": (129, 4.4), "test_generators": (50, 10.9), "test_genexps": (0, 10.6), "test_global": (0, 9.8),
    "test_grammar": (96, 12.2), "test_int": (21, 11.8), "test_isinstance": (28, 10.2),
    "test_iter": (283, 10.7), "test_itertools": (12149, 8.8), "test_keywordonlyarg": (1, 10.0),
    "test_list": (5, 12.2), "test_listcomps": (0, 10.3), "test_math": (672, 8.9),
    "test_metaclass": (2, 10.5), "test_named_expressions": (9, 13.5), "test_opcodes": (1, 10.3),
    "test_positional_only_arg": (13, 13.0), "test_property": (7, 10.1), "test_raise": (2, 10.3),
    "test_richcmp": (486, 10.0), "test_scope": (59, 10.7), "test_set": (9394, 10.6),
    "test_setcomps": (0, 10.3), "test_string": (6, 10.1), "test_subclassinit": (1, 10.2),
    "test_super": (5, 10.3), "test_syntax": (1, 10.8), "test_sys_setprofile": (44, 9.9),
    "test_sys_settrace": (109, 4.5), "test_threading_local": (2, 8.7), "test_tuple": (1, 11.3),
    "test_types": (75, 11.1), "test_unpack": (7, 10.2), "test_unpack_ex": (6, 10.5),
    "test_weakref": (204189, 8.7), "test_with": (66, 10.6), "test_yield_from": (7, 10.0),
}

_INLINED = ("on 3.8-3.11 its test code is captured inlined into the frames that call it (unittest's "
            "TestCase._callTestMethod, doctest's examples): no frame of its own runs rewritten code")
_DOCTEST_COMPREHENSIONS = ("doctests only: their examples are module-level code (refused: module body) "
                           "whose comprehensions consume iterators they did not create (B005)")
FLOOR_EXCEPTIONS = {  # module: (the versions it applies to, why)
    "test_asyncgen": (("3.7", "3.9"), "async generators and coroutines: their frames are never captured, "
                                      "and the tests that drive them are refused (B015)"),
    "test_frame": (("3.7", "3.9"), "its tests read tracebacks' frames and clear them (refused: B007, B008)"),
    "test_global": (("3.7", "3.9"), "its tests compile() and exec source (refused: B008)"),
    "test_genexps": (("3.7", "3.9"), "doctests only: generator expressions (generator frames are never "
                                     "captured) run from module-level examples"),
    "test_listcomps": (("3.7", "3.9"), _DOCTEST_COMPREHENSIONS),
    "test_setcomps": (("3.7", "3.9"), _DOCTEST_COMPREHENSIONS),
    "test_dictcomps": (("3.8", "3.9", "3.10", "3.11"), _DOCTEST_COMPREHENSIONS),
    "test_baseexception": (("3.8", "3.9", "3.10", "3.11"), _INLINED),
    "test_exception_variations": (("3.8", "3.9", "3.10", "3.11"), _INLINED),
    "test_unpack": (("3.9",), _INLINED),
}


def below_floor(module, stressed):
    st = stressed.stats
    if not st:
        return [] if stressed.trouble() else ["%s: the stressed run reported no stress statistics" % module]
    own_floor, share_floor = FLOORS.get(module, (1, 0.0))
    versions, why = FLOOR_EXCEPTIONS.get(module, ((), None))
    if "%d.%d" % sys.version_info[:2] in versions:
        own_floor = 0
    total = st["frames_rewritten"] + st["frames_default"]
    share = 100.0 * st["frames_rewritten"] / total if total else 0.0
    out = []
    if st["module_rewritten"] < own_floor:
        out.append("%s: stress rewrote %d frames of the module's own code, below its floor of %d (FLOORS)"
                   % (module, st["module_rewritten"], own_floor))
    if share < share_floor or not st["frames_rewritten"]:
        out.append("%s: stress rewrote %.1f%% of its candidate frames, below its floor of %.1f%% (FLOORS)"
                   % (module, share, share_floor))
    return out


def rewritten_share(stats):
    if not stats:
        return "-"
    total = stats["frames_rewritten"] + stats["frames_default"]
    return "%5.1f%%" % (100.0 * stats["frames_rewritten"] / total) if total else "-"


def own_frames(stats):
    """How many frames of the test module's own code ran rewritten code."""
    return "-" if not stats or "module_rewritten" not in stats else str(stats["module_rewritten"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("modules", nargs="*", help="test modules (default: the CI profile)")
    ap.add_argument("--full", action="store_true", help="the CI profile plus slower modules")
    ap.add_argument("--stress", type=int, choices=(0, 1, 2, 3),
                    default=2 if os.environ.get("PIJIT_STRESS") == "2" else 1,
                    help="stress level 1 or 2 (default: $PIJIT_STRESS, else 1); 0 compares stock "
                         "with stock, to find flaky tests")
    ap.add_argument("-j", type=int, default=1, help="modules run in parallel (default 1)")
    ap.add_argument("--timeout", type=float, default=180, help="seconds per module run (default 180)")
    ap.add_argument("--logdir", help="keep the children's logs and JSON here (default: a temp dir)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        del sys.argv[1:]  # tests that look at sys.argv see a plain script
        return child(args.child, args.out, args.stress)

    from allowlist import ALLOWLIST
    version = "%d.%d" % sys.version_info[:2]
    allowed = {(m, t): (line, detail) for v, m, t, line, detail, _ in ALLOWLIST if v in (version, "*")}
    modules = args.modules or (CI_MODULES + FULL_EXTRA if args.full else CI_MODULES)
    # A module this version does not have (test_positional_only_arg on 3.7) is left out.
    modules = [m for m in modules if importlib.util.find_spec("test." + m) is not None]
    logdir = args.logdir or tempfile.mkdtemp(prefix="pijit_regrtest_")
    os.makedirs(logdir, exist_ok=True)
    print("CPython %s regression tests, stock vs %s, %d modules, logs in %s"
          % (version, "PIJIT_STRESS=%d" % args.stress if args.stress else "stock again", len(modules), logdir))
    print("%-28s %6s %8s %8s %9s %9s %s" % ("module", "tests", "stock s", "stress s", "rewritten", "own code", "result"))
    counts, notes, failures = collections.Counter(), [], []
    for m in modules:  # an edited line that moved would silently stop being edited
        missing = neutralised_source(m)[2] if neutralised_lines(m) else []
        failures += ["%s: allowlist.py NEUTRALISED line not found once: %s" % (m, x) for x in missing]
    t_stock = t_stress = 0.0
    rewritten = default = captured = 0
    default_reasons = collections.Counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        futures = [pool.submit(run_module, sys.executable, m, args.stress, args.timeout, logdir)
                   for m in modules]
        for module, fut in zip(modules, futures):  # printed in list order whatever finished first
            stock, stressed = fut.result()
            c, n, f = compare(module, stock, stressed, allowed)
            if args.stress:
                f += below_floor(module, stressed)
            counts, notes, failures = counts + c, notes + n, failures + f
            t_stock, t_stress = t_stock + stock.seconds, t_stress + stressed.seconds
            if stressed.stats:
                rewritten += stressed.stats["frames_rewritten"]
                default += stressed.stats["frames_default"]
                captured += stressed.stats.get("frames_captured", 0)
                default_reasons.update(stressed.stats.get("default_reasons", {}))
            print("%-28s %6d %8.1f %8.1f %9s %9s %s" % (
                module, len(stock.outcomes), stock.seconds, stressed.seconds,
                rewritten_share(stressed.stats), own_frames(stressed.stats),
                "ok" if not f else "%d FAILED" % len(f)), flush=True)
    print("total: stock %.0fs, stress %.0fs, frames rewritten %s of %d candidates (%s ran a captured graph)"
          % (t_stock, t_stress, rewritten_share({"frames_rewritten": rewritten, "frames_default": default}),
             rewritten + default, rewritten_share({"frames_rewritten": captured, "frames_default": rewritten + default - captured})))
    if default_reasons:
        print("frames run as they are: " + "; ".join(
            "%s %d" % kv for kv in default_reasons.most_common(6)))
    for line in failures:
        print("DIFF " + line)
    for line in notes:
        print(line)
    # Tests that fail or skip in both runs compared nothing: counted apart, never as passed.
    print("tests: %d passed in both runs, %d allow-listed, %d failing in both, %d skipped in both"
          % (counts["pass"], counts["allowlisted"], counts["both failing"], counts["both skipped"]))
    print("%d passed, %d failed" % (counts["pass"] + counts["allowlisted"], len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
