"""os.environ in captured code (issue 18): a variable read (`os.environ.get(k, d)`, `os.environ[k]`
caught by `except KeyError`, `k in os.environ`, `os.getenv`) is a guard on that entry of the
environment's data: its value, or that it is unset. Setting or changing the variable recompiles,
and the recompile reason names it."""
import os
import sys
import unittest

import pijit as pj
from jit_compare import eager, same_bits

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor
KEYS = ("PIJIT_TEST_SCALE", "PIJIT_TEST_FLAG", "PIJIT_TEST_MISSING", "PIJIT_TEST_OTHER")


def f(x):
    s = float(os.environ.get("PIJIT_TEST_SCALE", "2.0"))
    if "PIJIT_TEST_FLAG" in os.environ:
        s = s + 1.0
    try:
        v = os.environ["PIJIT_TEST_MISSING"]
    except KeyError:
        v = "none"
    return x * s, v, os.getenv("PIJIT_TEST_OTHER", "d")


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class Environ(unittest.TestCase):
    def setUp(self):
        self.saved = {k: os.environ.pop(k) for k in KEYS if k in os.environ}

    def tearDown(self):
        for k in KEYS:
            os.environ.pop(k, None)
        os.environ.update(self.saved)

    def test_reads_are_guards_on_the_variables(self):
        jf = pj.jit(f)
        changes = [None, ("PIJIT_TEST_SCALE", "3.0"), ("PIJIT_TEST_FLAG", "1"), ("PIJIT_TEST_MISSING", "here"),
                   None, ("PIJIT_TEST_SCALE", "0.5")]
        for change in changes:
            if change:
                os.environ[change[0]] = change[1]
            self.assertTrue(same_bits(jf(T([1.0, -2.0])), eager(f, T([1.0, -2.0]))))
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["breaks"], st["break_reasons"]), (5, 0, []))
        self.assertIn("os.environ._data[b'PIJIT_TEST_FLAG']: undefined -> defined as b'1'", st["recompile_reasons"])


if __name__ == "__main__":
    unittest.main()
