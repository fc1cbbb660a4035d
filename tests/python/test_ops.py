"""pijit.ops and tensor methods on 3.7/3.9 (no numpy here: expected values are written out; the
oracle suite compares against numpy on the system Python)."""
import unittest

import pijit as pj
from pijit import ops


class TestCreation(unittest.TestCase):
    def test_fills(self):
        self.assertEqual(pj.ones(2, 3).tolist(), [[1.0] * 3] * 2)
        self.assertEqual(pj.zeros((2,), dtype=pj.int32).tolist(), [0, 0])
        self.assertIs(pj.zeros((2,), dtype=pj.int32).dtype, pj.int32)
        self.assertEqual(pj.full((2, 2), 7).tolist(), [[7, 7], [7, 7]])
        self.assertIs(pj.full((1,), 7).dtype, pj.int64)
        self.assertIs(pj.full((1,), 0.5).dtype, pj.float32)
        self.assertEqual(pj.ones_like(pj.Tensor([1, 2])).tolist(), [1, 1])

    def test_ranges(self):
        self.assertEqual(pj.arange(5).tolist(), [0, 1, 2, 3, 4])
        self.assertIs(pj.arange(5).dtype, pj.int64)
        self.assertEqual(pj.arange(1, 2, 0.25).tolist(), [1.0, 1.25, 1.5, 1.75])
        self.assertEqual(pj.arange(5, 0, -2).tolist(), [5, 3, 1])
        self.assertEqual(pj.linspace(0, 1, 5).tolist(), [0.0, 0.25, 0.5, 0.75, 1.0])
        self.assertEqual(pj.eye(2, 3).tolist(), [[1, 0, 0], [0, 1, 0]])
        with self.assertRaises(ValueError):
            pj.arange(0, 5, 0)

    def test_seeded_random(self):
        pj.set_seed(42)
        a = pj.rand(100)
        b = pj.randn(3, 4)
        pj.set_seed(42)
        self.assertEqual(pj.rand(100).tolist(), a.tolist())
        self.assertEqual(pj.randn(3, 4).tolist(), b.tolist())
        self.assertTrue(bool(((a >= 0) & (a < 1)).all()))
        r = pj.randint(3, 7, (1000,))
        self.assertEqual(r.min().item(), 3)
        self.assertEqual(r.max().item(), 6)
        with self.assertRaises(ValueError):
            pj.randint(5, 5, (2,))
        with self.assertRaises(ValueError):
            pj.set_seed(-1)

    def test_negative_shape(self):
        with self.assertRaises(ValueError):
            pj.zeros(2, -1)


class TestReductions(unittest.TestCase):
    def test_sum_mean_axes(self):
        x = pj.arange(6).reshape(2, 3)
        self.assertEqual(x.sum().item(), 15)
        self.assertEqual(x.sum(axis=0).tolist(), [3, 5, 7])
        self.assertEqual(x.sum(axis=-1, keepdims=True).tolist(), [[3], [12]])
        self.assertEqual(ops.sum(x, (0, 1)).item(), 15)
        self.assertIs(x.mean().dtype, pj.float32)
        self.assertEqual(x.mean(axis=1).tolist(), [1.0, 4.0])
        self.assertIs(pj.Tensor([True, True]).sum().dtype, pj.int64)

    def test_max_min_arg(self):
        x = pj.Tensor([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]])
        self.assertEqual(x.max().item(), 9.0)
        self.assertEqual(x.min(axis=1).tolist(), [1.0, 1.0])
        self.assertEqual(x.argmax().item(), 5)
        self.assertEqual(x.argmax(axis=1).tolist(), [2, 2])
        self.assertEqual(ops.argmin(x, 0).tolist(), [1, 0, 0])
        self.assertTrue(x.max(axis=1, keepdims=True).shape == (2, 1))

    def test_var_std_prod_logsumexp_all_any(self):
        x = pj.Tensor([1.0, 2.0, 3.0, 4.0])
        self.assertAlmostEqual(x.var().item(), 1.25)
        self.assertAlmostEqual(x.var(ddof=1).item(), 5.0 / 3, places=6)
        self.assertAlmostEqual(x.std().item(), 1.25 ** 0.5, places=6)
        self.assertEqual(x.prod().item(), 24.0)
        self.assertAlmostEqual(ops.logsumexp(pj.Tensor([0.0, 0.0])).item(), 0.6931472, places=6)
        self.assertFalse(bool((x > 1).all()))
        self.assertTrue(bool((x > 3).any()))

    def test_cumsum_softmax(self):
        self.assertEqual(ops.cumsum(pj.Tensor([1, 2, 3]), 0).tolist(), [1, 3, 6])
        s = ops.softmax(pj.Tensor([[0.0, 0.0], [1000.0, 1000.0]]), -1)
        self.assertEqual(s.tolist(), [[0.5, 0.5], [0.5, 0.5]])

    def test_reduction_errors(self):
        x = pj.ones(2, 3)
        with self.assertRaises(IndexError) as cm:
            x.sum(axis=2)
        self.assertIn("axis 2 is out of bounds", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            pj.zeros(0).max()
        self.assertIn("zero-size array", str(cm.exception))


class TestMatmul(unittest.TestCase):
    def test_shapes(self):
        a = pj.arange(6, dtype=pj.float32).reshape(2, 3)
        b = pj.arange(12, dtype=pj.float32).reshape(3, 4)
        self.assertEqual((a @ b).tolist(), [[20, 23, 26, 29], [56, 68, 80, 92]])
        self.assertEqual(ops.matmul(pj.Tensor([1.0, 2.0]), pj.Tensor([3.0, 4.0])).item(), 11.0)
        batched = pj.ones(5, 2, 3) @ pj.ones(3, 4)
        self.assertEqual(batched.shape, (5, 2, 4))
        self.assertEqual((pj.ones(2, 3, dtype=pj.int64) @ pj.ones(3, dtype=pj.int64)).tolist(), [3, 3])

    def test_core_dimension_mismatch(self):
        with self.assertRaises(ValueError) as cm:
            pj.ones(2, 3) @ pj.ones(4, 2)
        self.assertIn("mismatch in its core dimension 0", str(cm.exception))
        with self.assertRaises(ValueError):
            pj.Tensor(1.0) @ pj.ones(2)


class TestShapeOps(unittest.TestCase):
    def test_reshape_view_transpose(self):
        x = pj.arange(6)
        r = x.reshape(2, 3)
        self.assertEqual(r._storage_ptr(), x._storage_ptr())
        self.assertEqual(r.T.tolist(), [[0, 3], [1, 4], [2, 5]])
        self.assertEqual(r.transpose().shape, (3, 2))
        self.assertEqual(r.permute(1, 0).shape, (3, 2))
        self.assertEqual(r.reshape(-1, 2).shape, (3, 2))
        with self.assertRaises(ValueError) as cm:
            x.reshape(4, 2)
        self.assertIn("cannot reshape tensor of size 6 into shape (4, 2)", str(cm.exception))
        self.assertEqual(r.T.view(6).tolist(), [0, 3, 1, 4, 2, 5])  # MindSpore's view reshapes
        self.assertEqual(r.view(3, 2)._storage_ptr(), x._storage_ptr())
        self.assertEqual(r.T.reshape(6).tolist(), [0, 3, 1, 4, 2, 5])

    def test_squeeze_unsqueeze_flatten(self):
        x = pj.zeros(1, 3, 1)
        self.assertEqual(x.squeeze().shape, (3,))
        self.assertEqual(x.squeeze(0).shape, (3, 1))
        self.assertEqual(x.unsqueeze(0).shape, (1, 1, 3, 1))
        self.assertEqual(x.expand_dims(-1).shape, (1, 3, 1, 1))
        self.assertEqual(x.flatten().shape, (3,))
        with self.assertRaises(ValueError):
            x.squeeze(1)

    def test_concat_stack_split_tile_broadcast(self):
        a, b = pj.Tensor([[1, 2]]), pj.Tensor([[3, 4]])
        self.assertEqual(ops.concat((a, b)).tolist(), [[1, 2], [3, 4]])
        self.assertEqual(ops.concat([a, b], axis=1).tolist(), [[1, 2, 3, 4]])
        self.assertEqual(ops.stack([a, b]).shape, (2, 1, 2))
        parts = ops.split(pj.arange(6), 2)  # MindSpore: an int is each chunk's size
        self.assertEqual([p.tolist() for p in parts], [[0, 1], [2, 3], [4, 5]])
        self.assertEqual([p.tolist() for p in ops.split(pj.arange(6), [1, 2, 3])],
                         [[0], [1, 2], [3, 4, 5]])  # ... and a list the sizes
        self.assertEqual(ops.tile(pj.Tensor([1, 2]), 2).tolist(), [1, 2, 1, 2])
        self.assertEqual(pj.Tensor([1, 2]).broadcast_to((2, 2)).tolist(), [[1, 2], [1, 2]])
        with self.assertRaises(ValueError):
            ops.concat((pj.ones(2, 2), pj.ones(2, 3)))
        with self.assertRaises(TypeError):
            ops.concat(pj.ones(2))

    def test_gather_index_select_one_hot(self):
        x = pj.Tensor([[1, 2, 3], [4, 5, 6]])
        self.assertEqual(ops.gather(x, pj.Tensor([2, 0]), 1).tolist(), [[3, 1], [6, 4]])
        self.assertEqual(ops.index_select(x, 0, pj.Tensor([1])).tolist(), [[4, 5, 6]])
        self.assertEqual(ops.one_hot(pj.Tensor([1, 0]), 3).tolist(), [[0, 1, 0], [1, 0, 0]])
        with self.assertRaises(IndexError):
            ops.gather(x, pj.Tensor([3]), 1)

    def test_sort_topk(self):
        v, i = ops.sort(pj.Tensor([3.0, 1.0, 2.0]))
        self.assertEqual(v.tolist(), [1.0, 2.0, 3.0])
        self.assertEqual(i.tolist(), [1, 2, 0])
        v, i = ops.sort(pj.Tensor([3.0, 1.0, 2.0]), descending=True)
        self.assertEqual(v.tolist(), [3.0, 2.0, 1.0])
        v, i = ops.topk(pj.Tensor([1.0, 5.0, 3.0, 4.0]), 2)
        self.assertEqual((v.tolist(), i.tolist()), ([5.0, 4.0], [1, 3]))


class TestElementwiseFunctions(unittest.TestCase):
    def test_unary(self):
        x = pj.Tensor([-1.0, 0.0, 2.0])
        self.assertEqual(ops.relu(x).tolist(), [0.0, 0.0, 2.0])
        self.assertEqual(ops.abs(x).tolist(), [1.0, 0.0, 2.0])
        self.assertEqual(ops.sign(x).tolist(), [-1.0, 0.0, 1.0])
        self.assertEqual(ops.square(x).tolist(), [1.0, 0.0, 4.0])
        self.assertEqual(ops.exp(pj.Tensor([0.0])).tolist(), [1.0])
        self.assertIs(ops.exp(pj.Tensor([1])).dtype, pj.float32)
        self.assertEqual(ops.round(pj.Tensor([0.5, 1.5, 2.5])).tolist(), [0.0, 2.0, 2.0])
        self.assertAlmostEqual(ops.gelu(pj.Tensor([1.0])).item(), 0.8413447, places=6)
        self.assertAlmostEqual(ops.gelu(pj.Tensor([1.0]), approximate="tanh").item(), 0.8411920, places=6)
        with self.assertRaises(ValueError):
            ops.gelu(x, approximate="fast")

    def test_binary_functions_take_scalars(self):
        self.assertEqual(ops.add(pj.Tensor([1, 2]), 1).tolist(), [2, 3])
        self.assertEqual(ops.maximum(pj.Tensor([1.0, 5.0]), 3.0).tolist(), [3.0, 5.0])
        self.assertEqual(ops.add(1, 2).item(), 3)

    def test_where_clamp_cast(self):
        c = pj.Tensor([True, False])
        self.assertEqual(ops.where(c, pj.Tensor([1.0, 2.0]), 0.0).tolist(), [1.0, 0.0])
        self.assertEqual(ops.clamp(pj.Tensor([-2.0, 0.5, 9.0]), 0.0, 1.0).tolist(), [0.0, 0.5, 1.0])
        self.assertIs(ops.cast(pj.Tensor([1.5]), pj.int32).dtype, pj.int32)
        with self.assertRaises(ValueError):
            ops.clamp(pj.Tensor([1.0]))

    def test_op_input_type_errors(self):
        with self.assertRaises(TypeError):
            pj._C.op("add", (pj.Tensor([1.0]), 2.0))
        with self.assertRaises(ValueError):
            pj._C.op("no_such_op", ())
        with self.assertRaises(TypeError):
            pj._C.op("add", (pj.Tensor([1.0]),))

    def test_threads(self):
        n = pj.get_num_threads()
        try:
            pj.set_num_threads(1)
            self.assertEqual(pj.get_num_threads(), 1)
            self.assertEqual((pj.ones(100000) + 1).sum().item(), 200000.0)
        finally:
            pj.set_num_threads(n)
        with self.assertRaises(ValueError):
            pj.set_num_threads(0)

    def test_every_functional_op_is_in_the_registry(self):
        names = set(pj._C.registered_ops())
        for n in ops._UNARY + ops._BINARY + ("matmul", "sum", "argmax", "concat", "sort", "topk",
                                             "one_hot", "gather", "where", "cast", "softmax"):
            self.assertIn(n, names)

if __name__ == "__main__":
    unittest.main()


class TestRegistryBoundary(unittest.TestCase):
    """Found by fuzzing _C.op: malformed calls raise Python errors, never abort the process."""

    def test_missing_inputs_and_attrs(self):
        with self.assertRaises(TypeError) as cm:
            pj._C.op("index", ())
        self.assertIn("at least 1", str(cm.exception))
        with self.assertRaises(TypeError):
            pj._C.op("conv2d", (pj.ones(1, 1, 3, 3),))
        with self.assertRaises(TypeError) as cm:
            pj._C.op("add", (pj.ones(1), pj.ones(1)), {"bogus": 1})
        self.assertIn("unexpected attribute 'bogus'", str(cm.exception))
        with self.assertRaises(TypeError):
            pj._C.op("tile", (pj.ones(2),), {})

    def test_malformed_index_code(self):
        with self.assertRaises(ValueError):
            pj._C.op("index", (pj.ones(3),), {"items": (9, 0, 0)})
