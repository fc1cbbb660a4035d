"""str() prints like numpy, repr() like MindSpore (exact strings; numpy's own output is compared
in the oracle suite)."""
import os
import subprocess
import sys
import unittest

import pijit as pj


class TestStr(unittest.TestCase):
    def test_the_first_print_in_a_fresh_process(self):
        # (a float live across a thread's first read of a thread-local in the module came back as
        # garbage when thread-locals went through glibc < 2.39's TLS descriptors: 0.5 printed 0.0)
        code = ("import pijit as pj\nprint(pj.Tensor(0.5), pj.Tensor([0.25, 1e-05], pj.float16), "
                "pj.Tensor(1.5).astype(pj.bfloat16))")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, "0.5 [2.5e-01 1.0e-05] 1.5\n")

    def test_seed_document_outputs(self):
        x = pj.ones((3, 3)) * 1024
        self.assertEqual(str(x), "[[1024. 1024. 1024.]\n [1024. 1024. 1024.]\n [1024. 1024. 1024.]]")
        self.assertEqual(str(pj.Tensor([5.0, 7.0, 9.0])), "[5. 7. 9.]")
        self.assertEqual(str(pj.Tensor([6.0, 7.0, 8.0])), "[6. 7. 8.]")

    def test_float_alignment_and_precision(self):
        self.assertEqual(str(pj.Tensor([1.5, 2.25, 3.0])), "[1.5  2.25 3.  ]")
        self.assertEqual(str(pj.Tensor([0.1])), "[0.1]")
        self.assertEqual(str(pj.Tensor([0.1], pj.float64)), "[0.1]")
        self.assertEqual(str(pj.Tensor([1.0 / 3])), "[0.33333334]")
        self.assertEqual(str(pj.Tensor([1e-5, 1.0])), "[1.e-05 1.e+00]")

    def test_ints_bools_scalars_empty(self):
        self.assertEqual(str(pj.Tensor([[1, -20], [300, 4]])), "[[  1 -20]\n [300   4]]")
        self.assertEqual(str(pj.Tensor([True, False])), "[ True False]")
        self.assertEqual(str(pj.Tensor(1.5)), "1.5")
        self.assertEqual(str(pj.Tensor(3)), "3")
        self.assertEqual(str(pj.zeros((2, 0))), "[]")

    def test_special_values(self):
        inf = float("inf")
        self.assertEqual(str(pj.Tensor([float("nan"), inf, -inf, 1.0])), "[ nan  inf -inf   1.]")

    def test_three_d_blocks(self):
        self.assertEqual(str(pj.arange(8).reshape(2, 2, 2)),
                         "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]")

    def test_summarised(self):
        s = str(pj.arange(2000))
        self.assertEqual(s, "[   0    1    2 ... 1997 1998 1999]")

    def test_print_options(self):
        try:
            pj._C.set_printoptions(threshold=5, edgeitems=1)
            self.assertEqual(str(pj.arange(10)), "[0 ... 9]")
        finally:
            pj._C.set_printoptions(threshold=1000, edgeitems=3)


class TestRepr(unittest.TestCase):
    def test_mindspore_style(self):
        self.assertEqual(repr(pj.Tensor([1.0, 2.0, 3.0])),
                         "Tensor(shape=[3], dtype=Float32, value= [1. 2. 3.])")
        self.assertEqual(repr(pj.Tensor([[1, 2], [3, 4]], pj.int32)),
                         "Tensor(shape=[2, 2], dtype=Int32, value=\n[[1 2]\n [3 4]])")
        self.assertEqual(repr(pj.Tensor(1.5)), "Tensor(shape=[], dtype=Float32, value= 1.5)")


if __name__ == "__main__":
    unittest.main()
