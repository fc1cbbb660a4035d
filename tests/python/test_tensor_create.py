"""Creating tensors from Python data, buffers and tensors; attributes; conversions back."""
import array
import math
import unittest

import pijit as pj


class TestFromData(unittest.TestCase):
    def test_default_dtypes_follow_mindspore(self):
        self.assertIs(pj.Tensor(1.5).dtype, pj.float32)
        self.assertIs(pj.Tensor(3).dtype, pj.int64)
        self.assertIs(pj.Tensor(True).dtype, pj.bool_)
        self.assertIs(pj.Tensor([1, 2.5]).dtype, pj.float32)
        self.assertIs(pj.Tensor([True, 2]).dtype, pj.int64)
        self.assertIs(pj.Tensor([]).dtype, pj.float32)

    def test_nested_lists_and_tuples(self):
        t = pj.Tensor(((1, 2, 3), [4, 5, 6]))
        self.assertEqual(t.shape, (2, 3))
        self.assertEqual(t.ndim, 2)
        self.assertEqual(t.size, 6)
        self.assertEqual(t.tolist(), [[1, 2, 3], [4, 5, 6]])

    def test_explicit_dtype_converts(self):
        t = pj.Tensor([1.7, -2.2], pj.int32)
        self.assertIs(t.dtype, pj.int32)
        self.assertEqual(t.tolist(), [1, -2])
        self.assertEqual(pj.Tensor([0, 3], dtype="bool").tolist(), [False, True])
        self.assertIs(pj.Tensor([1], dtype=float).dtype, pj.float32)
        self.assertIs(pj.tensor([1], pj.float64).dtype, pj.float64)

    def test_zero_d(self):
        t = pj.Tensor(2.5)
        self.assertEqual(t.shape, ())
        self.assertEqual(t.ndim, 0)
        self.assertEqual(t.item(), 2.5)
        self.assertEqual(float(t), 2.5)

    def test_ragged_raises_value_error(self):
        with self.assertRaises(ValueError) as cm:
            pj.Tensor([[1, 2], [3]])
        self.assertIn("inhomogeneous shape after 1 dimensions", str(cm.exception))

    def test_bad_element_raises_type_error(self):
        with self.assertRaises(TypeError) as cm:
            pj.Tensor([1, "a"])
        self.assertIn("'str'", str(cm.exception))
        with self.assertRaises(TypeError):
            pj.Tensor(object())

    def test_bad_dtype_raises_type_error(self):
        with self.assertRaises(TypeError) as cm:
            pj.Tensor([1], dtype="float8")
        self.assertIn("not understood", str(cm.exception))

    def test_int_overflow_is_an_error(self):
        with self.assertRaises(ValueError):
            pj.Tensor([2 ** 70])
        with self.assertRaises(ValueError):
            pj.Tensor([2 ** 40], pj.int32)

    def test_from_tensor_copies(self):
        a = pj.Tensor([1.0, 2.0])
        b = pj.Tensor(a)
        b += 1
        self.assertEqual(a.tolist(), [1.0, 2.0])
        self.assertEqual(b.tolist(), [2.0, 3.0])

    def test_list_of_tensors(self):
        a = pj.Tensor([1.0, 2.0])
        t = pj.Tensor([a, a * 2])
        self.assertEqual(t.shape, (2, 2))
        self.assertEqual(t.tolist(), [[1.0, 2.0], [2.0, 4.0]])


class TestBuffers(unittest.TestCase):
    def test_array_module(self):
        t = pj.Tensor(array.array("f", [1.0, 2.0]))
        self.assertIs(t.dtype, pj.float32)
        self.assertEqual(t.tolist(), [1.0, 2.0])
        self.assertIs(pj.Tensor(array.array("q", [5])).dtype, pj.int64)
        self.assertIs(pj.Tensor(array.array("i", [5])).dtype, pj.int32)
        self.assertIs(pj.Tensor(array.array("d", [5])).dtype, pj.float64)

    def test_memoryview_with_shape(self):
        m = memoryview(array.array("d", range(6))).cast("B").cast("d", (2, 3))
        t = pj.Tensor(m)
        self.assertEqual(t.shape, (2, 3))
        self.assertEqual(t.tolist(), [[0, 1, 2], [3, 4, 5]])

    def test_unsupported_format(self):
        with self.assertRaises(TypeError) as cm:
            pj.Tensor(array.array("u", "ab"))  # wchar_t text: no number type
        self.assertIn("format", str(cm.exception))
        self.assertIs(pj.Tensor(array.array("h", [1, -2])).dtype, pj.int16)

    def test_export_is_zero_copy(self):
        t = pj.Tensor([[1.0, 2.0], [3.0, 4.0]])
        m = memoryview(t)
        self.assertEqual(m.format, "f")
        self.assertEqual(m.shape, (2, 2))
        self.assertEqual(m.strides, (8, 4))
        self.assertEqual(m.tolist(), [[1.0, 2.0], [3.0, 4.0]])
        t.add_(1)  # in place: the memoryview sees it
        self.assertEqual(m.tolist(), [[2.0, 3.0], [4.0, 5.0]])
        t += 1  # MindSpore's +=: a new tensor for t, the exported one unchanged
        self.assertEqual(m.tolist(), [[2.0, 3.0], [4.0, 5.0]])
        self.assertEqual(t.tolist(), [[3.0, 4.0], [5.0, 6.0]])

    def test_round_trip_every_dtype(self):
        for dt in (pj.bool_, pj.int32, pj.int64, pj.float32, pj.float64):
            t = pj.Tensor([[0, 1], [1, 0]], dt)
            back = pj.Tensor(memoryview(t))
            self.assertIs(back.dtype, dt)
            self.assertEqual(back.tolist(), t.tolist())

    def test_asnumpy_without_numpy_says_so(self):
        try:
            import numpy  # noqa: F401
            self.skipTest("numpy is installed here; covered by the oracle suite")
        except ImportError:
            pass
        with self.assertRaises(ImportError) as cm:
            pj.Tensor([1.0]).asnumpy()
        self.assertIn("needs numpy", str(cm.exception))


class TestConversions(unittest.TestCase):
    def test_item_and_scalars(self):
        self.assertEqual(pj.Tensor([[7]]).item(), 7)
        self.assertEqual(int(pj.Tensor([2.9])), 2)
        self.assertEqual(int(pj.Tensor(-2.9)), -2)
        self.assertIs(bool(pj.Tensor([0.0])), False)
        self.assertIs(bool(pj.Tensor(3)), True)
        self.assertTrue(math.isnan(float(pj.Tensor(float("nan")))))

    def test_multi_element_errors_match_numpy(self):
        t = pj.Tensor([1.0, 2.0])
        with self.assertRaises(ValueError) as cm:
            t.item()
        self.assertEqual(str(cm.exception), "can only convert an array of size 1 to a Python scalar")
        with self.assertRaises(TypeError) as cm:
            float(t)
        self.assertEqual(str(cm.exception), "only size-1 arrays can be converted to Python scalars")
        with self.assertRaises(ValueError) as cm:
            bool(t)
        self.assertIn("ambiguous", str(cm.exception))

    def test_index_only_for_integer_scalars(self):
        self.assertEqual([10, 20, 30][pj.Tensor(1)], 20)
        with self.assertRaises(TypeError):
            [1, 2][pj.Tensor(1.0)]

    def test_len_and_iteration(self):
        t = pj.Tensor([[1, 2], [3, 4], [5, 6]])
        self.assertEqual(len(t), 3)
        self.assertEqual([r.tolist() for r in t], [[1, 2], [3, 4], [5, 6]])
        with self.assertRaises(TypeError):
            len(pj.Tensor(1))
        with self.assertRaises(TypeError):
            iter(pj.Tensor(1)).__next__()

    def test_strides_are_bytes(self):
        self.assertEqual(pj.Tensor([[1, 2, 3]], pj.int32).strides, (12, 4))
        self.assertEqual(pj.Tensor([[1, 2, 3]], pj.float64).itemsize, 8)
        self.assertEqual(pj.Tensor([[1, 2, 3]], pj.float64).nbytes, 24)

    def test_astype_and_copy(self):
        t = pj.Tensor([1.5, -0.5])
        self.assertEqual(t.astype(pj.int64).tolist(), [1, 0])
        self.assertIs(t.astype("float64").dtype, pj.float64)
        c = t.copy()
        c += 1
        self.assertEqual(t.tolist(), [1.5, -0.5])

    def test_hashable_by_identity(self):
        a, b = pj.Tensor([1.0]), pj.Tensor([1.0])
        self.assertEqual(len({a: 1, b: 2}), 2)

    def test_dtype_objects_print_like_mindspore(self):
        self.assertEqual(str(pj.float32), "Float32")
        self.assertEqual(repr(pj.int64), "Int64")
        self.assertEqual(pj.float32.name, "float32")
        self.assertIs(pj.dtype.float32, pj.float32)


if __name__ == "__main__":
    unittest.main()
