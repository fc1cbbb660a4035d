"""Python operators on tensors: broadcasting, promotion, scalars, in-place forms, errors."""
import unittest

import pijit as pj


class TestArithmetic(unittest.TestCase):
    def test_binary_operators(self):
        a = pj.Tensor([[1.0, 2.0], [3.0, 4.0]])
        b = pj.Tensor([10.0, 20.0])
        self.assertEqual((a + b).tolist(), [[11, 22], [13, 24]])
        self.assertEqual((a - b).tolist(), [[-9, -18], [-7, -16]])
        self.assertEqual((a * b).tolist(), [[10, 40], [30, 80]])
        q = (b / a).tolist()
        self.assertEqual(q[0], [10.0, 10.0])
        self.assertAlmostEqual(q[1][0], 10.0 / 3.0, places=5)
        self.assertEqual(q[1][1], 5.0)
        self.assertEqual((a ** 2).tolist(), [[1, 4], [9, 16]])
        self.assertEqual((-a).tolist(), [[-1, -2], [-3, -4]])
        self.assertEqual(abs(-a).tolist(), a.tolist())

    def test_python_floor_div_and_mod_semantics(self):
        a = pj.Tensor([7, -7, 7, -7])
        b = pj.Tensor([2, 2, -2, -2])
        self.assertEqual((a // b).tolist(), [7 // 2, -7 // 2, 7 // -2, -7 // -2])
        self.assertEqual((a % b).tolist(), [7 % 2, -7 % 2, 7 % -2, -7 % -2])
        fa, fb = a.astype(pj.float64), b.astype(pj.float64)
        self.assertEqual((fa // fb).tolist(), [7.0 // 2, -7.0 // 2, 7.0 // -2, -7.0 // -2])
        self.assertEqual((fa % fb).tolist(), [7.0 % 2, -7.0 % 2, 7.0 % -2, -7.0 % -2])

    def test_integer_division_by_zero_does_not_crash(self):
        a = pj.Tensor([1, 2])
        self.assertEqual((a // 0).tolist(), [0, 0])
        self.assertEqual((a % 0).tolist(), [0, 0])

    def test_scalars_are_weak(self):
        i32 = pj.Tensor([1, 2], pj.int32)
        self.assertIs((i32 + 1).dtype, pj.int32)
        self.assertIs((1 + i32).dtype, pj.int32)
        self.assertIs((i32 + 1.5).dtype, pj.float32)
        self.assertIs((pj.Tensor([1.0], pj.float64) * 2.0).dtype, pj.float64)
        self.assertIs((pj.Tensor([True]) + 1).dtype, pj.int64)
        self.assertEqual((3 - pj.Tensor([1.0, 2.0])).tolist(), [2.0, 1.0])
        self.assertEqual((2 ** pj.Tensor([1, 3])).tolist(), [2, 8])

    def test_tensor_promotion(self):
        i32 = pj.Tensor([1], pj.int32)
        self.assertIs((i32 + pj.Tensor([1], pj.int64)).dtype, pj.int64)
        self.assertIs((i32 + pj.Tensor([1.0])).dtype, pj.float32)
        self.assertIs((i32 / i32).dtype, pj.float32)
        self.assertIs((pj.Tensor([1.0]) + pj.Tensor([1.0], pj.float64)).dtype, pj.float64)

    def test_matmul_operator(self):
        a = pj.Tensor([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual((a @ a).tolist(), [[7, 10], [15, 22]])
        self.assertEqual((a @ [1.0, 1.0]).tolist(), [3, 7])

    def test_lists_as_operands(self):
        self.assertEqual((pj.Tensor([1, 2]) + [10, 20]).tolist(), [11, 22])
        self.assertEqual(([10, 20] - pj.Tensor([1, 2])).tolist(), [9, 18])

    def test_unsupported_operand_types(self):
        with self.assertRaises(TypeError):
            pj.Tensor([1.0]) + "a"
        with self.assertRaises(TypeError):
            pj.Tensor([1.0]) + None
        self.assertFalse(pj.Tensor([1.0]) == None)  # noqa: E711  (identity fallback, like numpy)

    def test_broadcast_error_names_both_shapes(self):
        with self.assertRaises(ValueError) as cm:
            pj.Tensor([[1.0, 2.0, 3.0]] * 2) + pj.Tensor([1.0, 2.0])
        self.assertEqual(str(cm.exception),
                         "operands could not be broadcast together with shapes (2, 3) (2,)")

    def test_bool_negative_and_subtract_are_refused(self):
        b = pj.Tensor([True, False])
        with self.assertRaises(TypeError):
            -b
        with self.assertRaises(TypeError):
            b - b
        self.assertEqual((~b).tolist(), [False, True])

    def test_negative_integer_power(self):
        with self.assertRaises(ValueError) as cm:
            pj.Tensor([2, 3]) ** -1
        self.assertEqual(str(cm.exception), "Integers to negative integer powers are not allowed.")
        self.assertEqual((pj.Tensor([2.0]) ** -1).tolist(), [0.5])


class TestComparisons(unittest.TestCase):
    def test_comparisons_return_bool(self):
        a = pj.Tensor([1, 2, 3])
        self.assertEqual((a < 2).tolist(), [True, False, False])
        self.assertEqual((a <= 2).tolist(), [True, True, False])
        self.assertEqual((a == 2).tolist(), [False, True, False])
        self.assertEqual((a != 2).tolist(), [True, False, True])
        self.assertEqual((a > 2.5).tolist(), [False, False, True])
        self.assertEqual((2 < a).tolist(), [False, False, True])
        self.assertIs((a >= 2).dtype, pj.bool_)

    def test_logical_operators(self):
        a, b = pj.Tensor([True, True, False]), pj.Tensor([True, False, False])
        self.assertEqual((a & b).tolist(), [True, False, False])
        self.assertEqual((a | b).tolist(), [True, True, False])
        self.assertEqual((a ^ b).tolist(), [False, True, False])


class TestInPlace(unittest.TestCase):
    """`+=` and friends under MindSpore's JIT_ENABLE_AUGASSIGN_INPLACE = '1' (PyTorch's meaning);
    by default they are the plain operators (test_tensor_iadd.py)."""

    def setUp(self):
        from pijit._extends.parse import compile_config
        saved = compile_config.JIT_ENABLE_AUGASSIGN_INPLACE
        compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = '1'
        self.addCleanup(setattr, compile_config, "JIT_ENABLE_AUGASSIGN_INPLACE", saved)

    def test_in_place_writes_storage(self):
        a = pj.Tensor([1.0, 2.0])
        ptr = a._data_ptr()
        alias = a
        a += 1
        a *= pj.Tensor([2.0, 3.0])
        a -= 1
        a /= 2
        self.assertIs(alias, a)
        self.assertEqual(a._data_ptr(), ptr)
        self.assertEqual(a.tolist(), [1.5, 4.0])

    def test_in_place_same_kind_rule(self):
        a = pj.Tensor([1, 2])
        with self.assertRaises(TypeError) as cm:
            a += 1.5
        self.assertIn("same_kind", str(cm.exception))
        self.assertEqual(a.tolist(), [1, 2])  # unchanged after the error
        f = pj.Tensor([1.0])
        f += pj.Tensor([1], pj.int64)
        self.assertIs(f.dtype, pj.float32)

    def test_in_place_cannot_broadcast_self(self):
        a = pj.Tensor([1.0])
        with self.assertRaises(ValueError):
            a += pj.Tensor([1.0, 2.0])


if __name__ == "__main__":
    unittest.main()
