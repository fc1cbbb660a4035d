"""pijit's numpy stand-in (pijit.numpy_lite) and the import hook that serves it as `numpy`.

The expected values are what numpy 1.24 gives (hard-coded: the 3.7/3.9 test interpreters have no
numpy; tests/python/oracle/test_numpy_lite_oracle.py compares against a real numpy where one is
installed). The stand-in is imported directly here; the hook is tested in subprocesses, so this
process never starts serving `import numpy` to other suites.
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import pijit
from pijit import alias, ops
import pijit.numpy_lite as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYSCRIPTS = os.path.join(ROOT, "pyscripts")


def run_script(src, *pijit_args, python=None, env=None):
    """Runs `src` with `python -m pijit run [pijit_args] script` in a fresh interpreter."""
    e = dict(os.environ)
    e["PYTHONPATH"] = PYSCRIPTS + ((os.pathsep + env.pop("PYTHONPATH")) if env and
                                   "PYTHONPATH" in env else "")
    e.update(env or {})
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "script.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(src))
        return subprocess.run([python or sys.executable, "-m", "pijit", "run"] + list(pijit_args)
                              + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=e, cwd=d)


def real_numpy_here():
    return alias.numpy_installed()


class TestDtypes(unittest.TestCase):
    def test_python_data_gets_numpys_default_dtypes(self):
        self.assertIs(np.array([1.0, 2.0]).dtype, np.dtype("float64"))
        self.assertIs(np.array([1, 2]).dtype, np.dtype("int64"))
        self.assertIs(np.array([True]).dtype, np.dtype(bool))
        self.assertIs(np.array([1, 2.5, True]).dtype, np.dtype(float))
        self.assertIs(np.array([np.float32(1.0), 1]).dtype, np.dtype("float64"))
        self.assertIs(np.array([np.int8(1), np.int16(2)]).dtype, np.dtype("int16"))
        self.assertIs(np.array([]).dtype, np.dtype("float64"))

    def test_dtype_objects_and_scalar_types(self):
        self.assertTrue(np.dtype("float32") == np.float32)
        self.assertTrue(np.ones(2, np.float32).dtype == "float32")
        self.assertEqual(repr(np.dtype("f4")), "dtype('float32')")
        self.assertEqual(str(np.dtype(np.int8)), "int8")
        self.assertEqual((np.dtype("int16").itemsize, np.dtype("uint8").kind, np.dtype("e").name),
                         (2, "u", "float16"))
        self.assertIs(np.dtype("float32").type, np.float32)
        for name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                     "bool_"):
            t = getattr(np, name)
            self.assertIs(np.zeros(2, dtype=t).dtype.type, t, name)
        self.assertEqual(repr(np.ndarray), "<class 'numpy.ndarray'>")
        self.assertTrue(issubclass(np.float64, float) and not issubclass(np.float32, float))
        self.assertTrue(np.issubdtype(np.float16, np.floating))
        self.assertTrue(np.issubdtype(np.array([1]).dtype, np.signedinteger))

    def test_scalar_constructors_convert_as_numpy(self):
        self.assertEqual(repr(np.float32(0.1)), "0.1")
        self.assertEqual(np.float32(0.1).item(), 0.10000000149011612)
        self.assertEqual(np.float16(0.1).item(), 0.0999755859375)
        self.assertEqual(np.int8(300).item(), 44)
        self.assertEqual(np.uint8(-1).item(), 255)
        self.assertEqual(np.int32(2.9).item(), 2)
        self.assertEqual(np.float32("1.25").item(), 1.25)
        self.assertEqual(str(np.float16(65520.0)), "inf")
        self.assertIs(np.float32([1, 2]).dtype, np.dtype("float32"))  # a list makes an array

    def test_unknown_and_unsupported_dtypes(self):
        with self.assertRaisesRegex(TypeError, "data type 'foo' not understood"):
            np.dtype("foo")
        with self.assertRaisesRegex(NotImplementedError, "dtype 'complex256'.*pijit's numpy "
                                    "stand-in.*numpy is not installed"):
            np.dtype("complex256")
        with self.assertRaisesRegex(TypeError, "Cannot interpret"):
            np.zeros(2, dtype=pijit.float32)  # numpy knows no MindSpore dtypes either


class TestPrinting(unittest.TestCase):
    # (expression, numpy's str, numpy's repr)
    CASES = [
        ("np.array([1, 2]) / 2", "[0.5 1. ]", "array([0.5, 1. ])"),
        ("np.ones([3, 3], dtype=np.float32)", "[[1. 1. 1.]\n [1. 1. 1.]\n [1. 1. 1.]]",
         "array([[1., 1., 1.],\n       [1., 1., 1.],\n       [1., 1., 1.]], dtype=float32)"),
        ("np.array([1.0, 2.0, 3.0]).astype(np.float32)", "[1. 2. 3.]",
         "array([1., 2., 3.], dtype=float32)"),
        ("np.array([0.1, 0.25, 1e-5])", "[1.0e-01 2.5e-01 1.0e-05]",
         "array([1.0e-01, 2.5e-01, 1.0e-05])"),
        ("np.array([1e10, 1.0])", "[1.e+10 1.e+00]", "array([1.e+10, 1.e+00])"),
        ("np.array([[1, -20], [300, 4]])", "[[  1 -20]\n [300   4]]",
         "array([[  1, -20],\n       [300,   4]])"),
        ("np.array([True, False])", "[ True False]", "array([ True, False])"),
        ("np.array(1.0)", "1.0", "array(1.)"),
        ("np.array(2.5, dtype=np.float32)", "2.5", "array(2.5, dtype=float32)"),
        ("np.array([], dtype=np.float32)", "[]", "array([], dtype=float32)"),
        ("np.zeros((2, 0))", "[]", "array([], shape=(2, 0), dtype=float64)"),
        ("np.full((2, 3), 5, dtype=np.float16)", "[[5. 5. 5.]\n [5. 5. 5.]]",
         "array([[5., 5., 5.],\n       [5., 5., 5.]], dtype=float16)"),
        ("np.array([0.1, 0.2, 0.3], dtype=np.float16)", "[0.1 0.2 0.3]",
         "array([0.1, 0.2, 0.3], dtype=float16)"),
        ("np.array([100, -100], dtype=np.int8) + np.int8(100)", "[-56   0]",
         "array([-56,   0], dtype=int8)"),
        ("np.arange(12).reshape(3, 4)", "[[ 0  1  2  3]\n [ 4  5  6  7]\n [ 8  9 10 11]]",
         "array([[ 0,  1,  2,  3],\n       [ 4,  5,  6,  7],\n       [ 8,  9, 10, 11]])"),
        ("np.arange(1200, dtype=np.float32)",
         "[0.000e+00 1.000e+00 2.000e+00 ... 1.197e+03 1.198e+03 1.199e+03]",
         "array([0.000e+00, 1.000e+00, 2.000e+00, ..., 1.197e+03, 1.198e+03,\n       1.199e+03],"
         " dtype=float32)"),
        ("np.linspace(0, 1, 5)", "[0.   0.25 0.5  0.75 1.  ]",
         "array([0.  , 0.25, 0.5 , 0.75, 1.  ])"),
        ("np.random.RandomState(0).randn(2, 3)",
         "[[ 1.76405235  0.40015721  0.97873798]\n [ 2.2408932   1.86755799 -0.97727788]]",
         "array([[ 1.76405235,  0.40015721,  0.97873798],\n"
         "       [ 2.2408932 ,  1.86755799, -0.97727788]])"),
        ("np.array([np.nan, np.inf, -np.inf, 1.5])", "[ nan  inf -inf  1.5]",
         "array([ nan,  inf, -inf,  1.5])"),
        ("np.array([0.0001], dtype=np.float32)", "[1.e-04]", "array([1.e-04], dtype=float32)"),
        ("np.array([0.1, 0.2], np.float16).astype(np.float64)", "[0.09997559 0.19995117]",
         "array([0.09997559, 0.19995117])"),
        ("np.eye(2, dtype=np.int32)", "[[1 0]\n [0 1]]",
         "array([[1, 0],\n       [0, 1]], dtype=int32)"),
        ("np.float32(0.1)", "0.1", "0.1"),
        ("np.float16(0.1)", "0.1", "0.1"),
        ("np.float32(1.5) + 1", "2.5", "2.5"),
        ("np.float32(0.1) * 3", "0.30000000447034836", "0.30000000447034836"),
        ("np.sum(np.arange(100, dtype=np.float32) / 7)", "707.1429", "707.1429"),
        ("np.std(np.array([1.0, 2.0, 4.0], dtype=np.float32))", "1.2472192", "1.2472192"),
        ("np.bool_(True)", "True", "True"),
        ("np.int8(-5)", "-5", "-5"),
    ]

    def test_str_and_repr_are_numpys(self):
        for expr, want_str, want_repr in self.CASES:
            v = eval(expr, {"np": np})
            self.assertEqual(str(v), want_str, expr)
            self.assertEqual(repr(v), want_repr, expr)

    def test_printing_a_tensor_and_its_array_agree(self):
        t = pijit.Tensor([[0.5, 1e-3], [123.25, -7.0]])
        self.assertEqual(str(np.array(t)), str(t))
        self.assertEqual(str(np.array(t)),
                         "[[ 5.0000e-01  1.0000e-03]\n [ 1.2325e+02 -7.0000e+00]]")

    def test_set_printoptions_is_shared_with_pijit(self):
        try:
            np.set_printoptions(precision=3, suppress=True)
            self.assertEqual(str(np.array([1.0 / 3, 1e-7])), "[0.333 0.   ]")
            self.assertEqual(repr(np.array([1.0 / 3], np.float32)),
                             "array([0.333], dtype=float32)")
            self.assertEqual(str(pijit.Tensor([1.0 / 3])), "[0.333]")
            self.assertEqual(np.get_printoptions()["precision"], 3)
        finally:
            np.set_printoptions(precision=8, suppress=False)
        self.assertEqual(str(np.array([1.0 / 3])), "[0.33333333]")
        with self.assertRaisesRegex(NotImplementedError, "set_printoptions.formatter"):
            np.set_printoptions(formatter={"float": str})

    def test_format_and_scalars_in_fstrings(self):
        self.assertEqual("%s|%r" % (np.float32(2.5), np.array([1], np.int8)),
                         "2.5|array([1], dtype=int8)")
        self.assertEqual("{:.2f}".format(np.float32(1.0 / 3)), "0.33")
        self.assertEqual("{}".format(np.array([1.5, 2.0])), "[1.5 2. ]")


class TestArithmetic(unittest.TestCase):
    def check(self, value, dtype, values):
        self.assertEqual(str(value.dtype), dtype)
        self.assertEqual(value.tolist(), values)

    def test_numpy_type_promotion(self):
        self.check(np.array([1, 2]) / 2, "float64", [0.5, 1.0])
        self.check(np.array([1], np.int64) + np.array([1.5], np.float32), "float64", [2.5])
        self.check(np.array([1.5], np.float32) + 1, "float32", [2.5])
        self.check(np.array([1.5], np.float32) * 2.0, "float32", [3.0])
        self.check(np.array([1, 2], np.int8) + 1, "int8", [2, 3])
        self.check(np.array([1, 2], np.uint8) + (-1), "int16", [0, 1])
        self.check(np.array([1], np.int8) + 1000, "int16", [1001])
        self.check(np.array([1], np.float16) + 70000.0, "float32", [70001.0])
        self.check(np.array([True]) + 1, "int64", [2])
        self.check(np.array([1, 2], np.uint8) ** 300, "int16", [1, 0])
        self.assertIs(type(np.float32(1.5) + 1), np.float64)  # scalars: no value-based casting
        self.assertIs(type(np.float32(1.5) + np.float32(1)), np.float32)
        self.assertIs(type(np.array([1.5])[0]), np.float64)
        self.assertIs(np.result_type(np.array([1], np.int8), 1000), np.dtype("int16"))

    def test_integer_wraparound_and_float16_rounding(self):
        self.check(np.array([100, -100], np.int8) + np.int8(100), "int8", [-56, 0])
        self.assertEqual((np.int8(100) + np.int8(100)).item(), -56)
        self.check(np.array([300.7, -1.5, 255.9]).astype(np.int8), "int8", [44, -1, -1])
        self.check(np.array([-1.5, 256.0]).astype(np.uint8), "uint8", [255, 0])
        self.check(np.array([0.1], np.float16) + np.array([0.2], np.float16), "float16",
                   [0.2998046875])
        self.check(np.array([1e10, 1.0]).astype(np.int32), "int32", [-2147483648, 1])
        self.check(np.array([1e10], dtype=np.int32), "int32", [1410065408])  # via int()

    def test_division_modulo_and_power(self):
        self.check(np.array([7, -7]) // 2, "int64", [3, -4])
        self.check(np.array([7.5, -7.5]) % 2, "float64", [1.5, 0.5])
        self.check(np.array([True]) // np.array([True]), "int8", [1])
        self.check(np.array([3.0], np.float16) ** 2, "float16", [9.0])
        self.check(np.array([3], np.int8) ** 2.0, "float64", [9.0])
        self.check(np.array([3], np.int8) ** 2, "int8", [9])
        self.check(np.array([2.0], np.float32) ** -1, "float32", [0.5])
        with self.assertRaisesRegex(ValueError, "Integers to negative integer powers"):
            np.array([2]) ** -1

    def test_numpys_errors(self):
        with self.assertRaisesRegex(TypeError, "numpy boolean subtract"):
            np.array([True]) - np.array([True])
        with self.assertRaisesRegex(TypeError, "numpy boolean negative"):
            -np.array([True])
        with self.assertRaisesRegex(TypeError, "ufunc 'bitwise_and' not supported"):
            np.array([1.0]) & np.array([1.0])
        a = np.array([1, 2])
        with self.assertRaisesRegex(TypeError, "Cannot cast ufunc 'add' output from "
                                    "dtype\\('float64'\\) to dtype\\('int64'\\) with casting rule "
                                    "'same_kind'"):
            a += 1.5
        with self.assertRaisesRegex(ValueError, "could not be broadcast together with shapes "
                                    "\\(2,\\) \\(3,\\)"):
            np.array([1, 2]) < np.array([1, 2, 3])
        with self.assertRaisesRegex(ValueError, "truth value of an array with more than one"):
            bool(np.array([1, 2]))

    def test_in_place_ops_write_through_views(self):
        a = np.arange(6).reshape(2, 3)
        row = a[1]
        row += 10
        self.assertEqual(a.tolist(), [[0, 1, 2], [13, 14, 15]])
        b = np.array([1, 2], np.int8)
        b *= 100
        self.check(b, "int8", [100, -56])

    def test_comparisons_and_logic(self):
        self.check(np.array([1, 2, 3]) < 2, "bool", [True, False, False])
        self.check(np.array([1, 2]) == None, "bool", [False, False])  # noqa: E711
        self.check((np.arange(3) > 0) & (np.arange(3) < 2), "bool", [False, True, False])
        self.check(~np.array([1, -2], np.int8), "int8", [-2, 1])
        self.assertIs(type(np.float32(2) == 2), np.bool_)


class TestIndexing(unittest.TestCase):
    def test_views_share_memory_as_numpys_do(self):
        a = np.arange(6).reshape(2, 3)
        v = a[0]
        v[1] = 50
        a[1][2] = 9
        self.assertEqual(a.tolist(), [[0, 50, 2], [3, 4, 9]])
        t = a.T
        t[0, 1] = -1
        self.assertEqual(a[1, 0], -1)

    def test_results_and_scalars(self):
        a = np.array([[0, 50, 2], [3, 4, 9]])
        self.assertEqual((repr(a[0, 1]), type(a[0, 1]).__name__), ("50", "int64"))
        self.assertEqual(repr(a[..., 0]), "array([0, 3])")
        self.assertEqual(repr(a[a > 3]), "array([50,  4,  9])")
        self.assertEqual(repr(a[[1, 0], [0, 2]]), "array([3, 2])")
        self.assertEqual(repr(a[:, ::-1]), "array([[ 2, 50,  0],\n       [ 9,  4,  3]])")
        self.assertEqual(repr(np.array(5)[...]), "array(5)")
        self.assertIs(type(np.array(5)[()]), np.int64)
        self.assertEqual(a[np.int64(1), np.array(2)], 9)
        with self.assertRaisesRegex(IndexError, "only integers, slices"):
            a[1.0]

    def test_setitem_casts_like_numpy(self):
        b = np.zeros(3, np.int32)
        b[0] = 2.7
        b[1:] = [1.9, -1.9]
        self.assertEqual(b.tolist(), [2, 1, -1])
        h = np.zeros(2, np.float16)
        h[0] = 0.1
        self.assertEqual(h[0].item(), 0.0999755859375)
        with self.assertRaises(ValueError):
            b[0] = float("nan")


class TestReductions(unittest.TestCase):
    def test_float_sums_add_in_numpys_order(self):
        a = np.full(1000, 0.1, dtype=np.float32)  # pairwise: not the sequential 99.99905
        self.assertEqual(repr(np.sum(a)), "100.000015")
        self.assertEqual(repr(np.mean(a)), "0.10000002")
        b = np.arange(20000, dtype=np.float32) * np.float32(0.001)  # 8192-element buffers
        self.assertEqual(repr(np.sum(b)), "199990.0")
        self.assertEqual(repr(b.reshape(2, 10000).sum(axis=1)),
                         "array([ 49995., 149995.], dtype=float32)")
        self.assertEqual(repr(b.reshape(4, 5000).sum(axis=0)[:3]),
                         "array([30.      , 30.004002, 30.008001], dtype=float32)")
        h = np.full(20000, 0.1, dtype=np.float16)
        self.assertEqual((repr(np.sum(h)), repr(np.mean(h))), ("2000.0", "0.1"))
        self.assertEqual(repr(np.prod(np.full(10, 1.1, np.float16))), "2.584")

    def test_reduction_dtypes_and_values(self):
        self.assertEqual(repr(np.mean(np.array([1, 2, 3, 4]))), "2.5")
        self.assertIs(type(np.sum(np.array([1, 2], np.int8))), np.int64)
        self.assertEqual(repr(np.prod([1.5, 2.5, 3.5])), "13.125")
        self.assertEqual(repr(np.max(np.array([1, 5, 3]))), "5")
        self.assertEqual(repr(np.array([[1.5, np.nan]]).max()), "nan")
        self.assertEqual(repr(np.argmax(np.array([[1, 5], [7, 2]]), axis=0)), "array([1, 0])")
        self.assertEqual(repr(np.cumsum(np.full(5, 0.1, np.float32))),
                         "array([0.1, 0.2, 0.3, 0.4, 0.5], dtype=float32)")
        self.assertEqual(repr(np.all(np.array([1, 0]))), "False")
        self.assertEqual(repr(np.any([[0, 0], [0, 1]], axis=1)), "array([False,  True])")
        self.assertEqual(repr(np.arange(6).reshape(2, 3).sum(axis=0, keepdims=True)),
                         "array([[3, 5, 7]])")
        s = np.sum(np.array([1, 2], np.uint8))  # unsigned sums are uint64
        self.assertEqual((repr(s), s.dtype), ("3", np.dtype("uint64")))


class TestFunctions(unittest.TestCase):
    def test_comparisons_of_whole_arrays(self):
        self.assertIs(np.allclose([1.0, 2.0], [1.0, 2.0000001]), True)
        self.assertIs(np.allclose([1.0, np.nan], [1.0, np.nan]), False)
        self.assertIs(np.allclose([1.0, np.nan], [1.0, np.nan], equal_nan=True), True)
        self.assertEqual(repr(np.isclose([1e-9, 1.0, np.inf], [0.0, 1.1, np.inf])),
                         "array([ True, False,  True])")
        self.assertIs(np.array_equal([1, 2], [1, 2, 3]), False)
        self.assertIs(np.array_equal(np.ones(2), [1, 1]), True)
        a = np.ones(3, np.float32)
        self.assertTrue(np.all(a == a))

    def test_creation(self):
        self.assertEqual(repr(np.arange(0.0, 1.0, 0.3)), "array([0. , 0.3, 0.6, 0.9])")
        self.assertEqual(repr(np.arange(5, dtype=np.float16)),
                         "array([0., 1., 2., 3., 4.], dtype=float16)")
        self.assertEqual(repr(np.full((2,), True)), "array([ True,  True])")
        self.assertEqual(repr(np.zeros_like(np.ones((1, 2), np.int8))),
                         "array([[0, 0]], dtype=int8)")
        self.assertEqual(repr(np.ones_like([1.5])), "array([1.])")
        self.assertEqual(repr(np.where(np.array([1, 0]) > 0, 1.5, np.float32(2))),
                         "array([1.5, 2. ])")
        self.assertEqual(repr(np.concatenate([np.ones(2, np.int8), np.zeros(1, np.float16)])),
                         "array([1., 1., 0.], dtype=float16)")
        self.assertEqual(repr(np.stack([np.ones(2), np.zeros(2)], axis=1)),
                         "array([[1., 0.],\n       [1., 0.]])")
        self.assertEqual(repr(np.ndarray((2,), np.int32)), "array([0, 0], dtype=int32)")

    def test_elementwise_math(self):
        self.assertEqual(repr(np.minimum(np.array([1.0, np.nan]), 0.5)), "array([0.5, nan])")
        self.assertEqual(repr(np.round(np.array([0.5, 1.5, 2.5]))), "array([0., 2., 2.])")
        self.assertEqual(repr(np.round(np.array([1.234, 5.678]), 1)), "array([1.2, 5.7])")
        self.assertEqual(repr(np.sqrt(np.array([4, 9], np.int8))),
                         "array([2., 3.], dtype=float16)")
        self.assertEqual(repr(np.sqrt(np.array([4, 9]))), "array([2., 3.])")
        self.assertEqual(repr(np.clip(np.array([-1, 5, 10]), 0, 6)), "array([0, 5, 6])")
        self.assertEqual(repr(np.abs(np.array([-1, 2], np.int8))), "array([1, 2], dtype=int8)")
        self.assertEqual(repr(np.dot([1, 2], [3, 4])), "11")
        self.assertEqual(repr(np.arange(4).reshape(2, 2) @ np.arange(4).reshape(2, 2)),
                         "array([[ 2,  3],\n       [ 6, 11]])")
        self.assertEqual(repr(np.add.reduce(np.array([[1, 2], [3, 4]]))), "array([4, 6])")


class TestRandom(unittest.TestCase):
    def test_seeded_draws_are_numpys(self):
        np.random.seed(0)
        self.assertEqual(np.random.rand(3).tolist(),
                         [0.5488135039273248, 0.7151893663724195, 0.6027633760716439])
        self.assertEqual(np.random.randint(0, 10, 5).tolist(), [3, 7, 9, 3, 5])
        self.assertEqual(np.random.randn(), -1.5169827345248437)
        self.assertEqual(np.random.uniform(-1, 1), -0.8865740453651136)
        self.assertEqual(np.random.normal(3, 2), 1.2674475786822375)
        r = np.random.randint(7)
        self.assertEqual((r, type(r)), (4, int))

    def test_shapes_dtypes_and_independent_states(self):
        x = np.random.RandomState(0).randn(1, 3, 3, 3).astype(np.float32)
        self.assertEqual((x.shape, str(x.dtype)), ((1, 3, 3, 3), "float32"))
        self.assertEqual(x[0, 0, 0, 0].item(), 1.7640523910522461)
        prop = 100
        y = (np.random.RandomState(1).randn(*(100, 2)) * prop).astype(np.float32)
        self.assertEqual(y.shape, (100, 2))
        self.assertIs(type(np.random.rand()), float)


class TestPijitInterop(unittest.TestCase):
    def test_tensor_from_array_keeps_dtype_and_values(self):
        t = pijit.Tensor(np.array([1.0, 2.0, 3.0]).astype(np.float32))
        self.assertIs(type(t), pijit.Tensor)
        self.assertEqual((t.dtype, t.tolist()), (pijit.float32, [1.0, 2.0, 3.0]))
        self.assertEqual(str(pijit.tensor(np.array([1, 2, 3]))), "[1 2 3]")
        self.assertIs(pijit.Tensor(np.ones(2), pijit.float32).dtype, pijit.float32)
        self.assertIs(pijit.Tensor(np.ones(2)).dtype, pijit.float64)
        # int8/int16/uint8 live in int32, float16 in float32: a tensor gets the storage dtype.
        self.assertIs(pijit.Tensor(np.array([1, -2], np.int8)).dtype, pijit.int32)
        self.assertEqual(pijit.Tensor(np.array([0.1], np.float16)).tolist(), [0.0999755859375])
        self.assertEqual(memoryview(np.ones(2, np.float32)).format, "f")

    def test_ops_take_arrays_and_arrays_take_tensors(self):
        out = ops.add(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))
        self.assertIs(type(out), pijit.Tensor)
        self.assertEqual(out.tolist(), [[2.0, 2.0], [2.0, 2.0]])
        t = pijit.Tensor([[1.0, 2.0]])
        a = np.array(t)
        self.assertIs(type(a), np.ndarray)
        self.assertEqual(repr(a), "array([[1., 2.]], dtype=float32)")
        a[0, 0] = 9
        self.assertEqual(t.tolist(), [[1.0, 2.0]])  # array() copies
        s = np.asarray(t)
        s[0, 0] = 9
        self.assertEqual(t.tolist(), [[9.0, 2.0]])  # asarray shares, as with a buffer
        self.assertIs(type(pijit.Tensor([1.0]) + np.ones(1)), pijit.Tensor)  # numpy defers
        self.assertIs(type(np.ones(1) + pijit.Tensor([1.0])), pijit.Tensor)
        self.assertTrue(hasattr(np.ones(1), "__array_interface__"))

    def test_an_array_is_not_a_tensor_to_python_code(self):
        a = np.ones(2)
        self.assertNotIsInstance(a, pijit.Tensor)
        with self.assertRaisesRegex(AttributeError, "assign_value"):
            a.assign_value(pijit.Tensor([1.0, 2.0]))
        with self.assertRaises(TypeError):
            hash(a)


class TestMissingNames(unittest.TestCase):
    def test_missing_names_say_what_and_why(self):
        for name in ("fft", "linalg", "savez", "meshgrid"):
            with self.assertRaises(AttributeError) as cm:
                getattr(np, name)
            msg = str(cm.exception)
            self.assertIn("numpy.%s" % name, msg)
            self.assertIn("pijit's numpy stand-in", msg)
            self.assertIn("numpy is not installed for this Python", msg)
        self.assertFalse(hasattr(np, "float128"))
        with self.assertRaisesRegex(AttributeError, "numpy.ndarray.argsort.*stand-in"):
            np.ones(2).argsort()
        with self.assertRaisesRegex(AttributeError, "numpy.random.beta.*stand-in"):
            np.random.beta(1, 2)
        with self.assertRaisesRegex(NotImplementedError, "out= argument.*stand-in"):
            np.sum(np.ones(2), out=np.zeros(()))
        with self.assertRaisesRegex(NotImplementedError, "arrays of strings.*stand-in"):
            np.array(["a"])
        with self.assertRaisesRegex(NotImplementedError, "ordering comparisons of complex.*"
                                    "stand-in"):
            np.array([1j]) < 1


class TestImportHook(unittest.TestCase):
    SCRIPT = """
        import numpy
        import numpy.random
        from numpy.random import randn
        import mindspore as ms
        print(numpy.__name__, getattr(numpy, "__pijit_numpy_lite__", False))
        print(numpy.random.__name__)
        print(type(ms.Tensor(numpy.ones(2)).asnumpy()).__module__)
    """

    def test_pijit_run_serves_the_stand_in_only_without_numpy(self):
        p = run_script(self.SCRIPT)
        self.assertEqual(p.returncode, 0, p.stderr)
        if real_numpy_here():
            self.assertEqual(p.stdout.splitlines()[0], "numpy False")
        else:
            self.assertEqual(p.stdout.splitlines(),
                             ["pijit.numpy_lite True", "pijit.numpy_lite.random", "numpy"])

    def test_an_installed_numpy_always_wins(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "numpy"))
            with open(os.path.join(d, "numpy", "__init__.py"), "w") as f:
                f.write("IS_FAKE = True\n")
            p = run_script("import numpy\nprint(getattr(numpy, 'IS_FAKE', False))\n",
                           env={"PYTHONPATH": d})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "True")

    @unittest.skipIf(real_numpy_here(), "numpy is installed for this Python")
    def test_no_numpy_lite_flag_and_missing_submodules(self):
        p = run_script("import numpy\n", "--no-numpy-lite")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("No module named 'numpy'", p.stderr)
        p = run_script("import numpy.linalg\n")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("No module named 'numpy.linalg': pijit's numpy stand-in does not provide "
                      "it", p.stderr)
        p = run_script("import numpy as np\nnp.fft.fft([1])\n")
        self.assertIn("AttributeError: module 'numpy' has no attribute 'fft' (numpy.fft is not "
                      "provided by pijit's numpy stand-in", p.stderr)

    def test_plain_python_never_gets_the_stand_in(self):
        e = dict(os.environ, PYTHONPATH=PYSCRIPTS)
        p = subprocess.run([sys.executable, "-c", "import pijit, sys\n"
                            "try:\n    import numpy\nexcept ImportError:\n    print('absent')\n"
                            "else:\n    print(getattr(numpy, '__pijit_numpy_lite__', False))"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=e)
        self.assertEqual(p.stdout.strip(), "False" if real_numpy_here() else "absent", p.stderr)

    def test_system_python_keeps_its_real_numpy(self):
        py = "/usr/bin/python3"
        # (the child imports the real numpy; stress mode is not what this checks)
        env = {k: v for k, v in os.environ.items() if k != "PIJIT_STRESS"}
        probe = subprocess.run([py, "-c", "import numpy, pijit._C"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=dict(env, PYTHONPATH=PYSCRIPTS)) \
            if os.path.exists(py) else None
        if probe is None or probe.returncode != 0:
            self.skipTest("/usr/bin/python3 with numpy and a pijit._C build for it is not "
                          "available")
        p = run_script("import numpy\nprint(getattr(numpy, '__pijit_numpy_lite__', False), "
                       "numpy.ndarray.__module__, hasattr(numpy, 'linalg'))\n", python=py,
                       env={"PIJIT_STRESS": "0"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "False numpy True")


if __name__ == "__main__":
    unittest.main()
