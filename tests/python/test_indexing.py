"""Indexing for reading and writing: basic (views), advanced (copies), masks, and errors."""
import unittest

import pijit as pj


def grid():
    # [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    return pj.arange(12).reshape(3, 4)


class TestBasic(unittest.TestCase):
    def test_ints_and_negative(self):
        g = grid()
        self.assertEqual(g[1].tolist(), [4, 5, 6, 7])
        self.assertEqual(g[-1, -2].item(), 10)
        self.assertEqual(g[2][3].item(), 11)

    def test_slices_with_steps(self):
        g = grid()
        self.assertEqual(g[:, 1:3].tolist(), [[1, 2], [5, 6], [9, 10]])
        self.assertEqual(g[::2, ::-1].tolist(), [[3, 2, 1, 0], [11, 10, 9, 8]])
        self.assertEqual(g[5:].shape, (0, 4))
        self.assertEqual(g[-100:100, 3].tolist(), [3, 7, 11])

    def test_none_and_ellipsis(self):
        g = grid()
        self.assertEqual(g[None].shape, (1, 3, 4))
        self.assertEqual(g[:, None, 1].tolist(), [[1], [5], [9]])
        self.assertEqual(g[..., 0].tolist(), [0, 4, 8])
        self.assertEqual(g[...].shape, (3, 4))

    def test_basic_indexing_returns_views(self):
        g = grid()
        v = g[1:, ::2]
        self.assertEqual(v._storage_ptr(), g._storage_ptr())
        v.add_(100)  # (an in-place write; `v += 100` rebinds v, as MindSpore's += does)
        self.assertEqual(g.tolist(), [[0, 1, 2, 3], [104, 5, 106, 7], [108, 9, 110, 11]])

    def test_errors(self):
        g = grid()
        with self.assertRaises(IndexError) as cm:
            g[3]
        self.assertEqual(str(cm.exception), "index 3 is out of bounds for axis 0 with size 3")
        with self.assertRaises(IndexError) as cm:
            g[0, 0, 0]
        self.assertIn("too many indices", str(cm.exception))
        with self.assertRaises(IndexError):
            g[1.5]
        with self.assertRaises(IndexError):
            g["a"]
        with self.assertRaises(ValueError):
            g[::0]


class TestAdvanced(unittest.TestCase):
    def test_integer_arrays(self):
        g = grid()
        self.assertEqual(g[[2, 0]].tolist(), [[8, 9, 10, 11], [0, 1, 2, 3]])
        self.assertEqual(g[[0, 2], [1, 3]].tolist(), [1, 11])
        self.assertEqual(g[:, [3, 0]].tolist(), [[3, 0], [7, 4], [11, 8]])
        self.assertEqual(g[pj.Tensor([[0], [2]]), pj.Tensor([0, 1])].tolist(), [[0, 1], [8, 9]])
        self.assertEqual(g[[-1]].tolist(), [[8, 9, 10, 11]])

    def test_advanced_result_is_a_copy(self):
        g = grid()
        c = g[[0]]
        c += 1
        self.assertEqual(g[0].tolist(), [0, 1, 2, 3])

    def test_separated_advanced_indices_go_first(self):
        x = pj.arange(24).reshape(2, 3, 4)
        self.assertEqual(x[[0, 1], :, [0, 3]].shape, (2, 3))
        self.assertEqual(x[:, [0, 1], [0, 3]].shape, (2, 2))
        self.assertEqual(x[[0, 1], :, [0, 3]].tolist(), [[0, 4, 8], [15, 19, 23]])

    def test_boolean_masks(self):
        g = grid()
        self.assertEqual(g[g > 8].tolist(), [9, 10, 11])
        self.assertEqual(g[pj.Tensor([True, False, True])].tolist(), [[0, 1, 2, 3], [8, 9, 10, 11]])
        self.assertEqual(g[g > 100].shape, (0,))
        with self.assertRaises(IndexError) as cm:
            g[pj.Tensor([True, False])]
        self.assertIn("boolean index did not match", str(cm.exception))

    def test_out_of_range_array_index(self):
        with self.assertRaises(IndexError):
            grid()[[0, 3]]

    def test_float_index_tensor_is_refused(self):
        with self.assertRaises(IndexError):
            grid()[pj.Tensor([0.0])]


class TestSetItem(unittest.TestCase):
    def test_scalar_and_broadcast_assignment(self):
        g = grid()
        g[0] = 0
        g[:, 0] = pj.Tensor([7, 8, 9])
        g[1:, 1:] = pj.Tensor([-1, -2, -3])
        self.assertEqual(g.tolist(), [[7, 0, 0, 0], [8, -1, -2, -3], [9, -1, -2, -3]])

    def test_assignment_casts_to_the_tensor_dtype(self):
        g = grid()
        g[0, 0] = 2.7
        self.assertEqual(g[0, 0].item(), 2)
        self.assertIs(g.dtype, pj.int64)

    def test_mask_and_array_assignment(self):
        g = grid()
        g[g % 2 == 1] = 0
        g[[0, 2], [0, 0]] = pj.Tensor([100, 200])
        self.assertEqual(g.tolist(), [[100, 0, 2, 0], [4, 0, 6, 0], [200, 0, 10, 0]])

    def test_assignment_shape_mismatch(self):
        g = grid()
        with self.assertRaises(ValueError):
            g[0] = pj.Tensor([1, 2, 3])
        self.assertEqual(g[0].tolist(), [0, 1, 2, 3])

    def test_assignment_of_bad_type(self):
        with self.assertRaises(TypeError):
            grid()[0] = "x"


if __name__ == "__main__":
    unittest.main()
