"""Turns GoogleTest's output into pijit's "N passed, N failed" summary line.

    python3 tools/gtest_summary.py gtest.txt [gtest.json]

gtest.txt: the output of --gtest_brief=1, which prints one "[  FAILED  ] Suite.Test (N ms)" line per
failed test and "[  PASSED  ] N tests." but no "listed below" block. A run that did not reach its
final "[==========] N tests ... ran" line (a crash) counts as one failure; any other test that did
not pass is a failure. gtest.json: the same run's --gtest_output=json report, which names the
tests that skipped themselves. A skip is allowed only for the tests ALLOWED_SKIPS names (hardware
this machine lacks); any other skip counts as a failure, and so does every skip when there is no
report to name them. Allowed skips are counted apart, never as passed.
"""
import fnmatch
import json
import re
import sys

# (test name pattern, fnmatch over "Suite.Test"; why it may skip)
ALLOWED_SKIPS = [
    ("*Cuda.*", "the GPU suites: no usable NVIDIA GPU, driver or NVRTC here (or, for the tests of the "
                "no-GPU path, a GPU is usable here)"),
    ("ConvBlock.BlockedRunEqualsTheOpsBitForBit", "oneDNN keeps no nChw16c layout on a CPU without AVX-512"),
    ("ConvBlock.TiledPoolsOfAnyShapeEqualMaxPool2dBitForBit", "oneDNN keeps no nChw16c layout on a CPU without AVX-512"),
    ("ConvBlock.FusedKernelsHandTheActivationOverInNchw16c", "oneDNN keeps no nChw16c layout on a CPU without AVX-512"),
    ("Conv2d.ReorderedWeightsAreCachedAndNeverStale", "oneDNN reads plain weights on a CPU without AVX-512"),
]


def skipped_tests(report_path):
    """Names of the tests the JSON report says skipped, or None without a readable report."""
    try:
        with open(report_path) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return None
    return ["%s.%s" % (suite["name"], test["name"]) for suite in report.get("testsuites", [])
            for test in suite.get("testsuite", []) if test.get("result") == "SKIPPED"]


def main(text_path, report_path=None):
    text = open(text_path).read()
    ran = re.search(r"\[==========\] (\d+) tests? from .* ran", text)
    passed = re.search(r"\[  PASSED  \] (\d+) tests?", text)
    skipped = re.search(r"^\[  SKIPPED \] (\d+) tests?", text, re.M)
    failed = set(re.findall(r"^\[  FAILED  \] ([\w/.]+\.[\w/]+)(?: \(| *$|,)", text, re.M))
    if not ran:
        print("%d passed, %d failed" % (int(passed.group(1)) if passed else 0, len(failed) + 1))
        return
    total = int(ran.group(1))
    p = int(passed.group(1)) if passed else 0
    k = int(skipped.group(1)) if skipped else 0
    names = skipped_tests(report_path) if report_path else None
    bad_skips = 0
    if k and names is None:
        print("pijit: %d tests skipped and no JSON report names them: each counts as a failure" % k)
        bad_skips = k
    elif names is not None:
        for name in names:
            allowed = any(fnmatch.fnmatchcase(name, pattern) for pattern, _ in ALLOWED_SKIPS)
            bad_skips += not allowed
            if not allowed:
                print("pijit: %s skipped, and tools/gtest_summary.py allows no skip of it: a failure" % name)
    print("%d passed, %d failed, %d skipped" % (p, max(len(failed), total - p - k) + bad_skips, k - bad_skips))


if __name__ == "__main__":
    main(*sys.argv[1:3])
