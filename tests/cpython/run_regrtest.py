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
rewritten code (pijit.stress_stats()). Ends with "N passed, N failed": passed = tests whose
outcome matches (or whose difference is allowlisted in allowlist.py); failed = other differences +
crashes + timeouts. Exits 1 when anything failed.
"""
import argparse
import collections
import concurrent.futures
import importlib.util
import json
import os
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
        outcome, detail = self.current.get(test.id(), ("fail", "a sub-test failed"))
        self.emit(id=test.id(), outcome=outcome, detail=detail, seconds=round(time.time() - self.started, 3))

    def set(self, test, outcome, err=None, detail=""):
        if err is not None:  # the exception's last line is enough to tell two failures apart
            lines = "".join(traceback.format_exception_only(err[0], err[1])).strip().splitlines()
            detail = lines[-1][:300] if lines else ""
        self.current[test.id()] = (outcome, detail)

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
            self.current[test.id()] = (kind, subtest.id() + ": " + self.current[test.id()][1])


def child(module, out_path, stress):
    import faulthandler
    faulthandler.enable()  # a crash prints the Python stack into the log
    if stress:
        sys.path.insert(0, os.path.abspath(PYSCRIPTS))
        import pijit
        pijit.set_stress(stress)
    import doctest
    from test import support
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
                support.run_unittest(unittest.TestLoader().loadTestsFromModule(mod))
        except unittest.SkipTest as e:
            result.emit(id="<module>", outcome="skip", detail=str(e))
        except BaseException as e:
            result.emit(id="<module>", outcome="error", detail="%s: %s" % (type(e).__name__, e))
        result.emit(stats=pijit.stress_stats() if stress else None)
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------------
# Driver.

class Run:
    """One child run: outcomes by test id, the test running when it stopped, how it ended."""
    def __init__(self, events, rc, seconds, timed_out, log):
        self.outcomes, self.details, self.running, self.stats, self.finished = {}, {}, None, None, False
        for e in events:
            if "start" in e:
                self.running = e["start"]
            elif "id" in e:
                self.outcomes[e["id"]] = e["outcome"]
                self.details[e["id"]] = e.get("detail", "")
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
    """Returns (passed, allowlisted, failures): lists of text lines for the last two."""
    passed, allowlisted, failures = 0, [], []
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
            passed += 1
        elif b is None and ended_early:
            pass  # counted once, as the crash or timeout above
        elif (module, tid) in allowed:
            allowlisted.append("%s: %s: stock %s, stress %s" % (module, tid, a, b))
        else:
            failures.append("%s: %s: stock %s, stress %s: %s" % (
                module, tid, a or "missing", b or "missing",
                stressed.details.get(tid) or stock.details.get(tid, "")))
    return passed, allowlisted, failures


def rewritten_share(stats):
    if not stats:
        return "-"
    total = stats["frames_rewritten"] + stats["frames_default"]
    return "%5.1f%%" % (100.0 * stats["frames_rewritten"] / total) if total else "-"


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
    allowed = {(m, t) for v, m, t, _ in ALLOWLIST if v in (version, "*")}
    modules = args.modules or (CI_MODULES + FULL_EXTRA if args.full else CI_MODULES)
    # A module this version does not have (test_positional_only_arg on 3.7) is left out.
    modules = [m for m in modules if importlib.util.find_spec("test." + m) is not None]
    logdir = args.logdir or tempfile.mkdtemp(prefix="pijit_regrtest_")
    os.makedirs(logdir, exist_ok=True)
    print("CPython %s regression tests, stock vs %s, %d modules, logs in %s"
          % (version, "PIJIT_STRESS=%d" % args.stress if args.stress else "stock again", len(modules), logdir))
    print("%-28s %6s %8s %8s %9s %s" % ("module", "tests", "stock s", "stress s", "rewritten", "result"))
    passed, allowlisted, failures = 0, [], []
    t_stock = t_stress = 0.0
    rewritten = default = captured = 0
    default_reasons = collections.Counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        futures = [pool.submit(run_module, sys.executable, m, args.stress, args.timeout, logdir)
                   for m in modules]
        for module, fut in zip(modules, futures):  # printed in list order whatever finished first
            stock, stressed = fut.result()
            p, a, f = compare(module, stock, stressed, allowed)
            passed, allowlisted, failures = passed + p, allowlisted + a, failures + f
            t_stock, t_stress = t_stock + stock.seconds, t_stress + stressed.seconds
            if stressed.stats:
                rewritten += stressed.stats["frames_rewritten"]
                default += stressed.stats["frames_default"]
                captured += stressed.stats.get("frames_captured", 0)
                default_reasons.update(stressed.stats.get("default_reasons", {}))
            print("%-28s %6d %8.1f %8.1f %9s %s" % (
                module, len(stock.outcomes), stock.seconds, stressed.seconds,
                rewritten_share(stressed.stats),
                "ok" if not f else "%d FAILED" % len(f)), flush=True)
    print("total: stock %.0fs, stress %.0fs, frames rewritten %s of %d candidates (%s ran a captured graph)"
          % (t_stock, t_stress, rewritten_share({"frames_rewritten": rewritten, "frames_default": default}),
             rewritten + default, rewritten_share({"frames_rewritten": captured, "frames_default": rewritten + default - captured})))
    if default_reasons:
        print("frames run as they are: " + "; ".join(
            "%s %d" % kv for kv in default_reasons.most_common(6)))
    for line in failures:
        print("DIFF " + line)
    for line in allowlisted:
        print("ALLOWLISTED " + line)
    print("%d passed, %d failed" % (passed + len(allowlisted), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
