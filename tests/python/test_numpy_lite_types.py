"""pijit's numpy stand-in: complex64/complex128 and uint16/uint32/uint64, numpy.testing and
numpy.unique. Expected values are numpy 1.24's (taken from it; the oracle suite compares the two
side by side on the system Python)."""
import unittest

import pijit
import pijit.numpy_lite as np


class TestComplex(unittest.TestCase):
    def test_creation_printing_tolist(self):
        a = np.array([1 + 2j, 3 - 1.5j], dtype=np.complex64)
        self.assertEqual(repr(a), "array([1.+2.j , 3.-1.5j], dtype=complex64)")
        self.assertEqual(str(a), "[1.+2.j  3.-1.5j]")
        self.assertEqual(a.tolist(), [(1 + 2j), (3 - 1.5j)])
        self.assertEqual(repr(a[1]), "(3-1.5j)")
        self.assertIs(a.dtype, np.dtype("complex64"))
        self.assertEqual(repr(np.array(1 + 2j)), "array(1.+2.j)")
        self.assertEqual(repr(np.array([1 + 2j, 3])), "array([1.+2.j, 3.+0.j])")
        self.assertEqual(repr(np.complex64(1.5)), "(1.5+0j)")
        self.assertEqual(repr(np.complex128(2j)), "2j")
        self.assertEqual(repr(np.array([1 + 1e-5j, 100 + 2j])),
                         "array([  1.+1.e-05j, 100.+2.e+00j])")
        self.assertEqual(repr(np.array([np.nan + 1j, 1 - np.inf * 1j])),
                         "array([nan +1.j, nan-infj])")
        self.assertEqual(repr(np.zeros((2,), np.complex64)),
                         "array([0.+0.j, 0.+0.j], dtype=complex64)")
        self.assertIsInstance(np.complex128(1j), complex)
        with self.assertRaises(TypeError):
            np.array([1j], np.float32)  # numpy refuses, as float(1j) does

    def test_arithmetic_and_promotion(self):
        a = np.array([1 + 2j, 3 - 1.5j], dtype=np.complex64)
        self.assertEqual(repr(a * 2), "array([2.+4.j, 6.-3.j], dtype=complex64)")
        self.assertEqual(repr(a + np.float64(1)), "array([2.+2.j , 4.-1.5j], dtype=complex64)")
        self.assertEqual(repr(np.ones(3, np.float32) * 1j),
                         "array([0.+1.j, 0.+1.j, 0.+1.j], dtype=complex64)")
        self.assertEqual(repr(np.array([1, 2]) / np.array([1j, 2])), "array([0.-1.j, 1.+0.j])")
        self.assertEqual(str(np.promote_types(np.complex64, np.float64)), "complex128")
        self.assertEqual(str(np.promote_types(np.complex64, np.int16)), "complex64")
        self.assertEqual(str(np.promote_types(np.complex64, np.int32)), "complex128")
        b = np.array([[1 + 2j, 3 - 1.5j], [0.5j, -2]], dtype=np.complex64)
        c = b * np.complex64(1 - 1j)
        # numpy's Smith division in float32
        self.assertEqual((b / c).tolist()[0][0], (0.5000000596046448 + 0.5j))
        # hypotf (numpy without AVX-512 kernels, the oracle's reference)
        self.assertEqual(repr(np.abs(b)), "array([[2.236068, 3.354102],\n"
                                          "       [0.5     , 2.      ]], dtype=float32)")
        self.assertEqual(repr(b.real), "array([[ 1.,  3.],\n       [ 0., -2.]], "
                                       "dtype=float32)")
        self.assertEqual(repr(a.conj()), "array([1.-2.j , 3.+1.5j], dtype=complex64)")
        self.assertEqual(repr(np.sqrt(a)), "array([1.2720196+0.7861514j , "
                                           "1.7824284-0.42077428j], dtype=complex64)")
        self.assertEqual(np.isclose(b, c).tolist(), [[False, False], [False, False]])
        self.assertTrue(np.allclose(a, a + 1e-7))
        with self.assertRaisesRegex(NotImplementedError, "ordering comparisons of complex"):
            a < a

    def test_complex_cast_warns(self):
        a = np.array([1.5 + 2j])
        with self.assertWarnsRegex(np.ComplexWarning, "discards the imaginary part"):
            r = a.astype(np.int32)
        self.assertEqual(repr(r), "array([1], dtype=int32)")

    def test_tensors_take_complex_arrays(self):
        a = np.array([1 + 2j, -1j], dtype=np.complex64)
        t = pijit.Tensor(a)
        self.assertEqual(t.dtype, pijit.complex64)
        self.assertEqual(t.tolist(), [(1 + 2j), -1j])


class TestUnsigned(unittest.TestCase):
    def test_values_and_printing(self):
        u = np.array([3, 5, 65535], np.uint16)
        self.assertEqual(repr(u // 2), "array([    1,     2, 32767], dtype=uint16)")
        self.assertEqual(repr(u * u), "array([ 9, 25,  1], dtype=uint16)")
        self.assertEqual(repr(u - 4), "array([65535,     1, 65531], dtype=uint16)")
        self.assertEqual(repr(~u), "array([65532, 65530,     0], dtype=uint16)")
        self.assertEqual(repr(u.astype(np.float32)),
                         "array([3.0000e+00, 5.0000e+00, 6.5535e+04], dtype=float32)")
        v = np.array([1, 2 ** 32 - 1], np.uint32)
        self.assertEqual(repr(v + v), "array([         2, 4294967294], dtype=uint32)")
        self.assertEqual(repr(v / 2), "array([5.00000000e-01, 2.14748365e+09])")
        self.assertEqual(repr(v.astype(np.int32)), "array([ 1, -1], dtype=int32)")
        self.assertEqual((v.dtype.str, v.dtype.char), ("<u4", "I"))
        self.assertEqual(repr(np.array([[-1, 2 ** 64 - 1]], dtype=np.uint64)),
                         "array([[18446744073709551615, 18446744073709551615]], dtype=uint64)")
        self.assertEqual(repr(np.array([2 ** 63])), "array([9223372036854775808], dtype=uint64)")
        self.assertEqual(repr(np.array([1, 2], np.uint32) + np.int64(1)),
                         "array([2, 3], dtype=uint32)")
        self.assertEqual(repr(np.array([1], np.uint8) * 300), "array([300], dtype=uint16)")
        s = np.array([[1, 2], [3, 65535]], np.uint16).sum(axis=0)
        self.assertEqual(repr(s), "array([    4, 65537], dtype=uint64)")
        self.assertEqual(repr(np.sqrt(np.array([4], np.uint16))), "array([2.], dtype=float32)")

    def test_uint64_comparisons_are_unsigned(self):
        u = np.array([1, 2 ** 63, 2 ** 64 - 1], np.uint64)
        v = np.array([2 ** 63, 1, 2 ** 64 - 2], np.uint64)
        self.assertEqual((u < v).tolist(), [True, False, False])
        self.assertEqual((u >= v).tolist(), [False, True, True])
        self.assertEqual((u < 5).tolist(), [True, False, False])
        self.assertEqual((u > np.uint64(2 ** 63)).tolist(), [False, False, True])


def _msg(fn):
    try:
        fn()
    except AssertionError as e:
        return str(e)
    return None


class TestTesting(unittest.TestCase):
    def test_messages(self):
        self.assertEqual(
            _msg(lambda: np.testing.assert_allclose([1.0, 2.0, 3.0], [1.0, 2.0, 3.1])),
            "\nNot equal to tolerance rtol=1e-07, atol=0\n\nMismatched elements: 1 / 3 (33.3%)"
            "\nMax absolute difference: 0.1\nMax relative difference: 0.03225806\n"
            " x: array([1., 2., 3.])\n y: array([1. , 2. , 3.1])")
        self.assertEqual(
            _msg(lambda: np.testing.assert_array_equal(np.array([1, 2], np.uint8),
                                                       np.array([3, 1], np.uint8))),
            "\nArrays are not equal\n\nMismatched elements: 2 / 2 (100%)\n"
            "Max absolute difference: 2\nMax relative difference: 1.\n"
            " x: array([1, 2], dtype=uint8)\n y: array([3, 1], dtype=uint8)")
        self.assertIn("x and y nan location mismatch",
                      _msg(lambda: np.testing.assert_allclose([1.0, np.nan], [1.0, 2.0])))
        self.assertIn("(shapes (2,), (3,) mismatch)",
                      _msg(lambda: np.testing.assert_array_equal([1, 2], [1, 2, 3])))
        self.assertIn("Arrays are not almost equal to 7 decimals",
                      _msg(lambda: np.testing.assert_almost_equal(1.0, 1.1)))
        self.assertIn("item=1", _msg(lambda: np.testing.assert_equal([1, (2, 3)], [1, (2, 4)])))

    def test_passing(self):
        np.testing.assert_allclose([1.0, np.nan], [1.0, np.nan])
        np.testing.assert_allclose(np.ones((2, 2), np.float32), 1.00000001)
        self.assertIn("Mismatched elements: 4 / 4 (100%)", _msg(
            lambda: np.testing.assert_allclose(np.ones((2, 2), np.float32), 1.0000001)))
        np.testing.assert_allclose([1, 0], [1, 0.05], atol=0.1)
        np.testing.assert_array_almost_equal([1.0, 2.0000001], [1.0, 2.0])
        np.testing.assert_almost_equal(1.0, 1.00000001)
        np.testing.assert_equal({"a": [1, 2]}, {"a": [1, 2]})
        np.testing.assert_array_equal(np.array([1 + 1j]), [1 + 1j])
        with np.testing.assert_raises(ZeroDivisionError):
            1 / 0
        np.testing.assert_raises(ValueError, int, "x")
        self.assertIsNotNone(_msg(lambda: np.testing.assert_allclose(
            [1.0, np.nan], [1.0, np.nan], equal_nan=False)))

    def test_missing_names(self):
        with self.assertRaisesRegex(AttributeError, "numpy.testing.assert_warns.*stand-in"):
            np.testing.assert_warns


class TestUfuncDtype(unittest.TestCase):
    def test_dtype_argument(self):
        self.assertEqual(repr(np.absolute(-1.5, dtype=np.float16)), "1.5")
        self.assertIs(np.absolute(-1.5, dtype=np.float16).dtype, np.dtype("float16"))
        self.assertEqual(repr(np.add(np.array([1, 2]), 3, dtype=np.float32)),
                         "array([4., 5.], dtype=float32)")
        with self.assertRaisesRegex(TypeError, "Cannot cast ufunc 'add' input 0 from "
                                    "dtype\\('float64'\\) to dtype\\('int64'\\) with casting "
                                    "rule 'same_kind'"):
            np.add(1.5, 2, dtype=int)
        with self.assertRaisesRegex(TypeError, "No loop matching the specified signature"):
            np.sqrt(np.array([4]), dtype=np.int64)


class TestUnique(unittest.TestCase):
    def test_unique(self):
        u, i, inv, c = np.unique([3, 1, 2, 3, 1], return_index=True, return_inverse=True,
                                 return_counts=True)
        self.assertEqual((u.tolist(), i.tolist(), inv.tolist(), c.tolist()),
                         ([1, 2, 3], [1, 2, 0], [2, 0, 1, 2, 0], [2, 1, 2]))
        self.assertEqual(repr(np.unique([3.0, np.nan, 1, np.nan])), "array([ 1.,  3., nan])")
        self.assertEqual(repr(np.unique(np.array([[1, 2, 1], [3, 4, 3]]), axis=1)),
                         "array([[1, 2],\n       [3, 4]])")
        self.assertEqual(repr(np.unique(np.array([[1, 2], [1, 2], [0, 5]]), axis=0)),
                         "array([[0, 5],\n       [1, 2]])")
        self.assertEqual(repr(np.unique(np.array([], np.float32))),
                         "array([], dtype=float32)")
        self.assertEqual(np.broadcast_shapes((2, 1), (3,)), (2, 3))


if __name__ == "__main__":
    unittest.main()
