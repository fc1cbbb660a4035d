"""mint's and mindspore.numpy's elementwise names that are the ops kernels themselves (ops/math2.py,
ops/linalg.py): values, the same objects, one graph under jit."""
import math
import unittest

import pijit as pj
from pijit import mint, ops
from pijit import numpy as mnp
from jit_compare import CAPTURE_ON, assert_ran_eagerly

T = pj.Tensor


class MintAliases(unittest.TestCase):
    def test_same_objects_and_values(self):
        for n in ("asin", "acos", "atan2", "bitwise_and", "gcd", "erfinv", "sinh", "cosh", "lerp"):
            self.assertIs(getattr(mint, n), getattr(ops, n), n)
            self.assertIn(n, mint.__all__)
        self.assertAlmostEqual(mint.asin(T([0.5])).item(), math.asin(0.5), places=6)
        self.assertAlmostEqual(mint.atan2(T([1.0]), T([-1.0])).item(), math.atan2(1.0, -1.0), places=6)
        self.assertEqual(mint.bitwise_xor(T([6]), T([3])).tolist(), [5])
        self.assertEqual(mint.gcd(T([12, 7]), T([18, 21])).tolist(), [6, 7])
        self.assertEqual(mint.bitwise_not(T([0], pj.int8)).tolist(), [-1])

    def test_captured(self):
        jf = pj.jit(lambda x: mint.asin(x) * mint.cosh(x))
        x = T([0.25, -0.5])
        self.assertEqual(jf(x).tolist(), (mint.asin(x) * mint.cosh(x)).tolist())
        if CAPTURE_ON:
            self.assertEqual(pj.jit_stats(jf)["graphs"], 1)
        else:
            assert_ran_eagerly(self, jf)


class NumpyAliases(unittest.TestCase):
    def test_values(self):
        self.assertIs(mnp.arctan2, ops.atan2)
        self.assertIs(mnp.invert, ops.bitwise_not)
        self.assertAlmostEqual(mnp.arccos(T([0.0])).item(), math.pi / 2, places=6)
        self.assertEqual(mnp.lcm(T([4, 3]), T([6, 5])).tolist(), [12, 15])
        self.assertEqual(mnp.signbit(T([-0.0, 1.0])).tolist(), [True, False])
        self.assertEqual(mnp.copysign(T([2.0]), T([-1.0])).tolist(), [-2.0])
        self.assertEqual(mnp.matrix_power(T([[1.0, 1.0], [0.0, 1.0]]), 3).tolist(), [[1.0, 3.0], [0.0, 1.0]])
        for n in ("arccos", "arcsin", "arctan", "arctan2", "bitwise_and", "invert", "gcd", "lcm", "matrix_power"):
            self.assertIn(n, mnp.__all__)


class OneDefinitionEach(unittest.TestCase):
    def test_compositions_gave_way_to_the_kernels(self):
        from pijit.ops import functional2, math2, primitives3
        for n in ("asinh", "acosh", "atanh", "signbit", "hypot"):
            self.assertIs(getattr(functional2, n), getattr(math2, n), n)
        # the composed hypot gave nan here; the kernel's is inf, as C's hypot
        inf, nan = float("inf"), float("nan")
        self.assertEqual(primitives3.Hypot()(T([inf, 3.0]), T([nan, 4.0])).tolist(), [inf, 5.0])
        self.assertEqual(ops.Invert()(T([0, 5, -1], pj.int8)).tolist(), [-1, -6, 0])
        self.assertEqual(ops.copysign(T([2.0, 2.0]), T([-0.0, 0.0])).tolist(), [-2.0, 2.0])


if __name__ == "__main__":
    unittest.main()
