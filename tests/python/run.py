"""Runs pijit's Python suites with unittest and ends with CI's summary line "N passed, N failed".

    PYTHONPATH=pyscripts python tests/python/run.py            # every test_*.py here
    PYTHONPATH=pyscripts python tests/python/run.py --oracle   # the numpy/torch oracle suites
    PYTHONPATH=pyscripts python tests/python/run.py -k indexing
Skipped tests are listed with their reasons, so a skip is never silent.
"""
import argparse
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class CountingResult(unittest.TextTestResult):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", action="store_true", help="run the oracle suites instead")
    ap.add_argument("-k", default=None, help="only test modules whose name contains this")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    start = os.path.join(HERE, "oracle") if args.oracle else HERE
    sys.path.insert(0, HERE)
    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    for name in sorted(os.listdir(start)):
        if name.startswith("test_") and name.endswith(".py") and (not args.k or args.k in name):
            if args.oracle:
                sys.path.insert(0, start)
            suite.addTests(loader.loadTestsFromName(name[:-3]))
    runner = unittest.TextTestRunner(verbosity=2 if args.v else 1, resultclass=CountingResult,
                                     stream=sys.stdout)
    print("pijit Python suites on Python %s" % sys.version.split()[0])
    result = runner.run(suite)
    for test, reason in result.skipped:
        print("skipped: %s: %s" % (test.id(), reason))
    if os.environ.get("PIJIT_STRESS", "") not in ("", "0"):
        import pijit
        st = pijit.stress_stats()
        print("stress mode: %d frames ran rewritten code (%d of them a direct call), %d the default evaluator "
              "(still on: %s)" % (st["frames_rewritten"], st["frames_direct"], st["frames_default"], st["enabled"]))
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print("%d passed, %d failed" % (result.passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
