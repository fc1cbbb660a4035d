"""Turns GoogleTest's output into pijit's "N passed, N failed" summary line.

Works with --gtest_brief=1, which prints one "[  FAILED  ] Suite.Test (N ms)" line per failed
test and "[  PASSED  ] N tests." but no "listed below" block. A run that did not reach its final
"[==========] N tests ... ran" line (a crash) counts as one failure. Tests that skipped themselves
("[  SKIPPED ] N tests": the GPU suites on a machine without a GPU) are counted apart, never as
passed; any other test that did not pass is a failure.
"""
import re
import sys

text = open(sys.argv[1]).read()
ran = re.search(r"\[==========\] (\d+) tests? from .* ran", text)
passed = re.search(r"\[  PASSED  \] (\d+) tests?", text)
skipped = re.search(r"^\[  SKIPPED \] (\d+) tests?", text, re.M)
failed = set(re.findall(r"^\[  FAILED  \] ([\w/.]+\.[\w/]+)(?: \(| *$|,)", text, re.M))
if not ran:
    print("%d passed, %d failed" % (int(passed.group(1)) if passed else 0, len(failed) + 1))
else:
    total = int(ran.group(1))
    p = int(passed.group(1)) if passed else 0
    k = int(skipped.group(1)) if skipped else 0
    print("%d passed, %d failed, %d skipped" % (p, max(len(failed), total - p - k), k))
