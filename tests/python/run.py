"""Runs pijit's Python suites with unittest and ends with CI's summary line "N passed, N failed".

    PYTHONPATH=pyscripts python tests/python/run.py            # every test_*.py here
    PYTHONPATH=pyscripts python tests/python/run.py --oracle   # the numpy/torch oracle suites
    PYTHONPATH=pyscripts python tests/python/run.py -k indexing
Skipped tests are listed with their reasons, so a skip is never silent, and a skip that
ALLOWED_SKIPS does not name counts as a failure (a skipped test proves nothing). Under PIJIT_STRESS
a run in which stress rewrote no frame fails too: it would not have tested what it claims to.
"""
import argparse
import fnmatch
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def _numpy_here():
    # (asked only once the tests ran: the oracle suites set up numpy's CPU features before it loads)
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return not getattr(numpy, "__pijit_numpy_lite__", False)


def _py37():
    return sys.version_info[:2] == (3, 7)


# The skips a run may have: (test id pattern, fnmatch; whether it may skip here, asked after the
# run; why). Tests of what an interpreter or a machine lacks skip there, and say so; any other skip
# fails the tally.
ALLOWED_SKIPS = [
    ("test_gpu_backend.*", lambda: True, "the GPU suites need an NVIDIA GPU with a driver (tools/gpu_check.sh runs them)"),
    ("test_install.TestBackendFullBuild.*", lambda: os.environ.get("PIJIT_TEST_INSTALL") != "1",
     "the CMake build of a wheel takes minutes: PIJIT_TEST_INSTALL=1 runs it"),
    ("test_seeds.TestSeed003.test_md45_depend_npu_status", lambda: True, "needs an Ascend NPU"),
    ("test_match_patterns.*", lambda: sys.version_info < (3, 10), "structural pattern matching is 3.10+"),
    ("test_py312.*", lambda: sys.version_info[:2] != (3, 12), "3.12's own behaviour"),
    ("test_assembler.TestReassembleStdlib.test_jump_effects_agree_with_dis", _py37, "dis.stack_effect(jump=) is 3.8+"),
    ("test_capture_soundness.CallsBindAsCPython.test_positional_only_by_keyword", _py37, "positional-only parameters are 3.8+"),
    ("test_capture_soundness.GuardsTellApartWhatPythonDoes.test_guards_raise_no_audit_events", _py37, "audit hooks are 3.8+"),
    # numpy is installed for the system python3 alone (the oracle suites); pyenv's Pythons have the stdlib
    ("test_ms_api_ops.TensorMembers.test_from_numpy", lambda: not _numpy_here(), "numpy is not installed for this Python"),
    ("test_tensor_create.*.test_asnumpy_without_numpy_says_so", _numpy_here, "numpy is installed for this Python"),
    ("test_numpy_lite.*.test_no_numpy_lite_flag_and_missing_submodules", _numpy_here, "numpy is installed for this Python"),
    # the torch oracle suites skip only where tools/run_tests.sh found no python3-torch and said so
    ("test_torch_*", lambda: os.environ.get("PIJIT_ALLOW_NO_TORCH") == "1", "PIJIT_ALLOW_NO_TORCH=1: PyTorch is not installed"),
]


# Where capture is off (3.12, which runs functions eagerly; 3.11 under PIJIT_PY311_CAPTURE=0) a
# test of capture skips, and its reason must say so: either what pijit raises there or
# jit_compare.CAPTURE_OFF_WHY. Any other skip there fails as anywhere.
CAPTURE_OFF_REASONS = ("pijit captures on Python 3.7-3.11", "capture runs on Python 3.7-3.11")


def skip_allowed(test_id, reason=""):
    if any(fnmatch.fnmatchcase(test_id, pattern) and when() for pattern, when, _ in ALLOWED_SKIPS):
        return True
    from jit_compare import CAPTURE_ON
    return not CAPTURE_ON and any(r in reason for r in CAPTURE_OFF_REASONS)


def suite_codes(folder):
    """The code objects of the functions and methods the test_* modules under folder define (and the
    codes nested in them)."""
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
        obj = getattr(obj, "__func__", obj)
        if isinstance(obj, types.FunctionType):
            add(obj.__code__)
        elif isinstance(obj, type) and depth < 3:
            for v in list(vars(obj).values()):
                visit(v, depth + 1)
    for name, mod in list(sys.modules.items()):
        if name.startswith("test_") and os.path.abspath(getattr(mod, "__file__", None) or "/").startswith(folder + os.sep):
            for v in list(vars(mod).values()):
                if getattr(v, "__module__", None) == mod.__name__:
                    visit(v, 0)
    return codes


# Under PIJIT_STRESS the suites' own frames become capture candidates. These modules' tests run
# pijit programs in child processes that drop PIJIT_STRESS from their environment, so under stress
# they only repeat the plain run's work: the stress runs leave them out, and say so.
STRESS_LEAVES_OUT = {
    "test_cli": "runs `python -m pijit` commands as children, without PIJIT_STRESS",
    "test_debug_tools": "runs the debugging switches in child processes, without PIJIT_STRESS",
    # (a module.Class key leaves out that class alone: the search's own tests stay under stress)
    "test_bisect.TestBisectCommandWithAFakeChild": "runs `python -m pijit bisect` as a child, without PIJIT_STRESS",
    "test_bisect.TestBisectWithTheRuntime": "runs `python -m pijit bisect` as a child, without PIJIT_STRESS",
}


def without_classes(suite, classes):
    """suite less the tests of the given "module.Class" names."""
    kept = unittest.TestSuite()
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            kept.addTests(without_classes(t, classes))
        elif not any(t.id().startswith(c + ".") for c in classes):
            kept.addTest(t)
    return kept


class CountingResult(unittest.TextTestResult):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.passed = 0
        self.seconds = {}  # test module -> seconds its tests took (--durations)
        self._started = time.perf_counter()  # (3.12 stops a test skipped by a decorator it never started)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1

    def startTest(self, test):
        self._started = time.perf_counter()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        module = test.id().split(".")[0]
        self.seconds[module] = self.seconds.get(module, 0.0) + time.perf_counter() - self._started


def private_cache_dir():
    # The persistent compile cache is on by default: a run keeps its artifacts in a folder of its own
    # (its child processes share it), so that no run reads another's, or the user's, ~/.cache/pijit.
    if "PIJIT_CACHE_DIR" not in os.environ:
        import atexit
        import shutil
        import tempfile
        folder = tempfile.mkdtemp(prefix="pijit-test-cache-")
        os.environ["PIJIT_CACHE_DIR"] = folder
        atexit.register(shutil.rmtree, folder, True)


def main():
    private_cache_dir()
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", action="store_true", help="run the oracle suites instead")
    ap.add_argument("-k", default=None, help="only test modules whose name contains this")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--durations", type=int, default=0, metavar="N",
                    help="print the N test modules that took longest (the matrix's time budget)")
    args = ap.parse_args()
    start = os.path.join(HERE, "oracle") if args.oracle else HERE
    sys.path.insert(0, HERE)
    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    stress = os.environ.get("PIJIT_STRESS", "") not in ("", "0")
    left_classes = [k for k in STRESS_LEAVES_OUT if "." in k] if stress and not args.k else []
    for name in sorted(os.listdir(start)):
        if stress and not args.k and name[:-3] in STRESS_LEAVES_OUT:
            print("left out under PIJIT_STRESS: %s (%s; the plain run has it)" % (name[:-3], STRESS_LEAVES_OUT[name[:-3]]))
            continue
        if name.startswith("test_") and name.endswith(".py") and (not args.k or args.k in name):
            if args.oracle:
                sys.path.insert(0, start)
            suite.addTests(loader.loadTestsFromName(name[:-3]))
    for c in left_classes:
        print("left out under PIJIT_STRESS: %s (%s; the plain run has it)" % (c, STRESS_LEAVES_OUT[c]))
    if left_classes:
        suite = without_classes(suite, left_classes)
    runner = unittest.TextTestRunner(verbosity=2 if args.v else 1, resultclass=CountingResult,
                                     stream=sys.stdout)
    print("pijit Python suites on Python %s" % sys.version.split()[0])
    result = runner.run(suite)
    if args.durations:
        total = sum(result.seconds.values())
        print("slowest test modules (of %.1f s):" % total)
        for module, sec in sorted(result.seconds.items(), key=lambda kv: -kv[1])[:args.durations]:
            print("  %7.1f s  %s" % (sec, module))
    bad_skips = 0
    for test, reason in result.skipped:
        allowed = skip_allowed(test.id(), reason)
        bad_skips += not allowed
        print("skipped: %s: %s%s" % (test.id(), reason, "" if allowed else "  [FAILED: not in run.py's ALLOWED_SKIPS]"))
    stress_failed = 0
    if os.environ.get("PIJIT_STRESS", "") not in ("", "0"):
        import pijit
        st = pijit.stress_stats()
        # the suites' own code (unittest's and the library's frames are rewritten in any run)
        own = sum(pijit.jit_stats(co)["frames_rewritten"] for co in suite_codes(start))
        print("stress mode: %d frames ran rewritten code (%d of the suites' own code; %d ran a captured graph, "
              "%d of them a direct call), %d the default evaluator (still on: %s)"
              % (st["frames_rewritten"], own, st["frames_captured"], st["frames_direct"], st["frames_default"],
                 st["enabled"]))
        problems = ["rewrote no frame of the suites' own code"] if not own else []
        if not args.k and not st["frames_captured"]:  # (a -k subset may hold no tensor work)
            problems.append("ran no captured graph")
        if not st["enabled"]:
            problems.append("was off at the end of the run")
        for what in problems:
            print("FAILED: stress mode (PIJIT_STRESS=%s) %s: the run did not test capture" % (os.environ["PIJIT_STRESS"], what))
        stress_failed = len(problems)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses) + bad_skips + stress_failed
    print("%d passed, %d failed" % (result.passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
