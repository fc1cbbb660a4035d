"""Sparse tensors as MindSpore has them: COOTensor, CSRTensor, RowTensor, SparseTensor, the
coo_*/csr_* functions and the sparse primitives give MindSpore's documented results (its
docstring examples) and hand-derived ones; gradients reach the stored values."""
import math
import unittest

import pijit as ms
from pijit import Tensor, ops
from pijit import dtype as mstype


def coo(idx, vals, shape, idx_dtype=mstype.int64, val_dtype=mstype.float32):
    return ms.COOTensor(Tensor(idx, dtype=idx_dtype), Tensor(vals, dtype=val_dtype), shape)


def csr(indptr, indices, vals, shape, val_dtype=mstype.float32):
    return ms.CSRTensor(Tensor(indptr, dtype=mstype.int32), Tensor(indices, dtype=mstype.int32),
                        Tensor(vals, dtype=val_dtype), shape)


class COOTensors(unittest.TestCase):
    def test_documented_members(self):
        x = coo([[0, 1], [1, 2]], [1, 2], (3, 4), mstype.int32)
        self.assertEqual(x.values.tolist(), [1.0, 2.0])
        self.assertEqual(x.indices.tolist(), [[0, 1], [1, 2]])
        self.assertEqual(x.shape, (3, 4))
        self.assertIs(x.dtype, mstype.float32)
        self.assertEqual((x.size, x.ndim, x.itemsize), (2, 2, 4))
        self.assertIs(x.astype(mstype.float64).dtype, mstype.float64)
        self.assertEqual(x.to_dense().tolist(), [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
        i, v, s = x.to_tuple()
        self.assertEqual((i.tolist(), v.tolist(), s), ([[0, 1], [1, 2]], [1.0, 2.0], (3, 4)))

    def test_documented_add_and_coalesce(self):
        a = coo([[0, 1], [1, 2]], [1, 2], (3, 4), val_dtype=mstype.int32)
        b = coo([[0, 0], [1, 1]], [3, 4], (3, 4), val_dtype=mstype.int32)
        out = a.add(b, Tensor(0, dtype=mstype.int32))
        self.assertEqual(out.indices.tolist(), [[0, 0], [0, 1], [1, 1], [1, 2]])
        self.assertEqual(out.values.tolist(), [3, 1, 4, 2])
        c = ms.COOTensor(Tensor([[0, 0, 1], [1, 1, 2]], dtype=mstype.int64).transpose(),
                         Tensor([1, 5, 4], dtype=mstype.float32), (3, 3)).coalesce()
        self.assertEqual(c.indices.tolist(), [[0, 1], [1, 2]])
        self.assertEqual(c.values.tolist(), [6.0, 4.0])

    def test_threshold_drops_small_sums(self):
        a = coo([[0, 0], [1, 1]], [1.0, 0.25], (2, 2))
        b = coo([[0, 0]], [-0.5], (2, 2))
        out = ops.coo_add(a, b, Tensor(0.3))
        self.assertEqual(out.indices.tolist(), [[0, 0]])
        self.assertEqual(out.values.tolist(), [0.5])

    def test_operators_with_dense(self):
        x = coo([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
        d = Tensor([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual((x + d).tolist(), [[1.0, 4.0], [6.0, 4.0]])
        self.assertEqual((x - d).tolist(), [[-1.0, 0.0], [0.0, -4.0]])
        self.assertEqual((x * d).values.tolist(), [4.0, 9.0])
        self.assertEqual((x / d).values.tolist(), [1.0, 1.0])
        self.assertEqual((-x).values.tolist(), [-2.0, -3.0])
        self.assertEqual((x + x).to_dense().tolist(), [[0.0, 4.0], [6.0, 0.0]])
        with self.assertRaisesRegex(ValueError, "same shape"):
            x + Tensor([1.0])

    def test_to_csr_orders_rows(self):
        x = coo([[1, 0], [0, 2], [1, 3]], [1.0, 2.0, 3.0], (2, 4))
        c = x.to_csr()
        self.assertEqual(c.indptr.tolist(), [0, 1, 3])
        self.assertEqual(c.indices.tolist(), [2, 0, 3])
        self.assertEqual(c.values.tolist(), [2.0, 1.0, 3.0])
        self.assertEqual(c.to_dense().tolist(), x.to_dense().tolist())

    def test_bad_construction(self):
        with self.assertRaisesRegex(TypeError, "COOTensor\\(indices, values, shape\\)"):
            ms.COOTensor([[0, 1]], Tensor([1.0]), (2, 2))
        with self.assertRaisesRegex(ValueError, "indices must be 2-D"):
            ms.COOTensor(Tensor([0, 1]), Tensor([1.0]), (2, 2))
        with self.assertRaisesRegex(TypeError, "dtype of 'indices'"):
            ms.COOTensor(Tensor([[0, 1]], dtype=mstype.float32), Tensor([1.0]), (2, 2))

    def test_deprecated_sparse_tensor(self):
        s = ms.SparseTensor(Tensor([[0, 1], [1, 2]]), Tensor([1, 2], dtype=mstype.float32), (3, 4))
        self.assertEqual(s.values.tolist(), [1.0, 2.0])
        self.assertEqual(s.shape, (3, 4))
        with self.assertRaises(TypeError):
            ms.SparseTensor(Tensor([[0, 1]]), Tensor([1.0]), [3, 4])


class CSRTensors(unittest.TestCase):
    def test_documented_examples(self):
        c = csr([0, 1, 2], [0, 1], [2, 1], (2, 4))
        self.assertEqual(c.mv(Tensor([[1], [1], [1], [1]], dtype=mstype.float32)).tolist(), [[2.0], [1.0]])
        self.assertEqual(c.mm(Tensor([[1.0, 2.0]] * 4)).tolist(), [[2.0, 4.0], [1.0, 2.0]])
        self.assertEqual(c.sum(1).tolist(), [[2.0], [1.0]])
        self.assertEqual(c.sum(0).tolist(), [[2.0, 1.0, 0.0, 0.0]])
        b = csr([0, 1, 2], [0, 1], [1, 2], (2, 4))
        s = c.add(b, Tensor(1, mstype.float32), Tensor(1, mstype.float32))
        self.assertEqual((s.indptr.tolist(), s.indices.tolist(), s.values.tolist()),
                         ([0, 1, 2], [0, 1], [3.0, 3.0]))
        self.assertIs(c.astype(mstype.float64).dtype, mstype.float64)

    def test_merge_of_different_patterns(self):
        a = csr([0, 1, 2], [3, 0], [1.0, 2.0], (2, 4))
        b = csr([0, 2, 2], [0, 3], [5.0, 7.0], (2, 4))
        s = a - b
        self.assertEqual(s.indptr.tolist(), [0, 2, 3])
        self.assertEqual(s.indices.tolist(), [0, 3, 0])
        self.assertEqual(s.values.tolist(), [-5.0, -6.0, 2.0])
        self.assertEqual(s.to_dense().tolist(), [[-5.0, 0.0, 0.0, -6.0], [2.0, 0.0, 0.0, 0.0]])

    def test_dense_operands_broadcast(self):
        a = csr([0, 1, 2], [3, 0], [1.0, 2.0], (2, 4))
        self.assertEqual((a * Tensor([10.0, 20.0, 30.0, 40.0])).values.tolist(), [40.0, 20.0])
        self.assertEqual((a / Tensor([[2.0], [4.0]])).values.tolist(), [0.5, 0.5])

    def test_conversions(self):
        a = csr([0, 1, 3], [2, 0, 1], [1.0, 2.0, 3.0], (2, 3))
        c = a.to_coo()
        self.assertEqual(c.indices.tolist(), [[0, 2], [1, 0], [1, 1]])
        self.assertEqual(ops.csr_to_coo(a).values.tolist(), [1.0, 2.0, 3.0])
        d = ops.dense_to_sparse_csr(Tensor([[0.0, 5.0], [6.0, 0.0]]))
        self.assertEqual((d.indptr.tolist(), d.indices.tolist(), d.values.tolist()), ([0, 1, 2], [1, 0], [5.0, 6.0]))
        e = ops.dense_to_sparse_coo(Tensor([[0.0, 5.0], [6.0, 0.0]]))
        self.assertEqual((e.indices.tolist(), e.values.tolist()), ([[0, 1], [1, 0]], [5.0, 6.0]))

    def test_csr_mm_and_softmax(self):
        a = csr([0, 1, 2], [1, 0], [2.0, 3.0], (2, 2))
        b = csr([0, 1, 2], [0, 1], [4.0, 5.0], (2, 2))
        p = ops.csr_mm(a, b)
        self.assertEqual(p.to_dense().tolist(), [[0.0, 10.0], [12.0, 0.0]])
        self.assertEqual(ops.csr_mm(a, Tensor([[1.0], [1.0]]), trans_a=True).tolist(), [[3.0], [2.0]])
        s = ops.csr_softmax(csr([0, 2, 3], [0, 2, 1], [1.0, 2.0, 5.0], (2, 3)))
        e = math.exp(1.0) + math.exp(2.0)
        for got, want in zip(s.values.tolist(), [math.exp(1.0) / e, math.exp(2.0) / e, 1.0]):
            self.assertAlmostEqual(got, want, places=6)

    def test_bad_construction(self):
        with self.assertRaisesRegex(ValueError, "indptr must have shape\\[0\\] \\+ 1"):
            csr([0, 1], [0], [1.0], (2, 2))
        with self.assertRaisesRegex(TypeError, "same dtype"):
            ms.CSRTensor(Tensor([0, 1, 1], dtype=mstype.int32), Tensor([0], dtype=mstype.int64),
                         Tensor([1.0]), (2, 2))


class ElementwiseOnValues(unittest.TestCase):
    COO = ("coo_abs", "coo_acos", "coo_acosh", "coo_asin", "coo_asinh", "coo_atan", "coo_atanh", "coo_ceil",
           "coo_cos", "coo_cosh", "coo_exp", "coo_expm1", "coo_floor", "coo_inv", "coo_isfinite", "coo_isinf",
           "coo_isnan", "coo_log", "coo_log1p", "coo_neg", "coo_relu", "coo_relu6", "coo_round", "coo_sigmoid",
           "coo_sin", "coo_sinh", "coo_softsign", "coo_sqrt", "coo_square", "coo_tan", "coo_tanh")
    CSR = ("csr_abs", "csr_acos", "csr_acosh", "csr_asin", "csr_asinh", "csr_atan", "csr_atanh", "csr_ceil",
           "csr_cos", "csr_cosh", "csr_exp", "csr_expm1", "csr_floor", "csr_inv", "csr_isfinite", "csr_isinf",
           "csr_isnan", "csr_log", "csr_log1p", "csr_neg", "csr_relu", "csr_relu6", "csr_round", "csr_sigmoid",
           "csr_sin", "csr_sinh", "csr_softsign", "csr_sqrt", "csr_square", "csr_tan", "csr_tanh")

    def test_every_unary_maps_the_values(self):
        from pijit.ops.sparse import _UNARY
        self.assertEqual([n[4:] for n in self.COO], list(_UNARY))
        self.assertEqual([n[4:] for n in self.CSR], list(_UNARY))
        x = coo([[0, 0], [1, 1]], [0.25, 0.5], (2, 2))
        y = csr([0, 1, 2], [0, 1], [0.25, 0.5], (2, 2))
        for coo_name, csr_name in zip(self.COO, self.CSR):
            want = getattr(ops, coo_name[4:])(Tensor([0.25, 0.5])).tolist()
            got_coo = getattr(ops, coo_name)(x)
            got_csr = getattr(ops, csr_name)(y)
            self.assertEqual(str(got_coo.values.tolist()), str(want), coo_name)  # (acosh: nan both)
            self.assertEqual(str(got_csr.values.tolist()), str(want), csr_name)
            self.assertEqual(got_coo.indices.tolist(), [[0, 0], [1, 1]], coo_name)
        with self.assertRaisesRegex(TypeError, "coo_sin"):
            ops.coo_sin(y)


class SparsePrimitives(unittest.TestCase):
    def test_to_dense_add_matmul(self):
        idx = Tensor([[0, 1], [1, 2]])
        vals = Tensor([1.0, 2.0])
        self.assertEqual(ops.SparseToDense()(idx, vals, (3, 4)).tolist(),
                         [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
        self.assertEqual(ops.SparseTensorDenseAdd()(idx, vals, (3, 4), ops.ones((3, 4), mstype.float32)).tolist(),
                         [[1, 2, 1, 1], [1, 1, 3, 1], [1, 1, 1, 1]])
        dense = Tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
        self.assertEqual(ops.SparseTensorDenseMatmul()(idx, vals, (3, 4), dense).tolist(),
                         [[3.0, 4.0], [10.0, 12.0], [0.0, 0.0]])
        self.assertEqual(ops.SparseTensorDenseMatmul(adjoint_st=True)(idx, vals, (3, 4), Tensor([[1.0], [2.0], [3.0]])).tolist(),
                         [[0.0], [1.0], [4.0], [0.0]])

    def test_slice_and_coalesce(self):
        idx = Tensor([[0, 1], [1, 2], [2, 3], [1, 0]])
        y_idx, y_val, y_shape = ops.SparseSlice()(idx, Tensor([1.0, 2.0, 3.0, 4.0]), Tensor([3, 4]),
                                                  Tensor([1, 0]), Tensor([2, 3]))
        self.assertEqual(y_idx.tolist(), [[0, 2], [0, 0]])
        self.assertEqual(y_val.tolist(), [2.0, 4.0])
        self.assertEqual(y_shape.tolist(), [2, 3])
        i, v, s = ops.Coalesce()(Tensor([[0, 0, 1], [1, 1, 2]]), Tensor([1.0, 5.0, 4.0]), Tensor([3, 3]))
        self.assertEqual((i.tolist(), v.tolist(), s.tolist()), ([[0, 1], [1, 2]], [6.0, 4.0], [3, 3]))

    def test_concat_and_segment_mean(self):
        a = coo([[0, 1]], [1.0], (2, 2))
        b = coo([[1, 0]], [2.0], (2, 3))
        c = ops.coo_concat([a, b], 1)
        self.assertEqual(c.shape, (2, 5))
        self.assertEqual(c.to_dense().tolist(), [[0, 1, 0, 0, 0], [0, 0, 2, 0, 0]])
        with self.assertRaisesRegex(ValueError, "agree except"):
            ops.coo_concat([a, b], 0)
        m = ops.sparse_segment_mean(Tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), Tensor([0, 1, 2]),
                                    Tensor([0, 0, 2]))
        self.assertEqual(m.tolist(), [[2.0, 3.0], [0.0, 0.0], [5.0, 6.0]])


class RowTensors(unittest.TestCase):
    def test_documented_example(self):
        x = ms.RowTensor(Tensor([0]), Tensor([[1, 2]], dtype=mstype.float32), (3, 2))
        self.assertEqual(x.values.tolist(), [[1.0, 2.0]])
        self.assertEqual(x.indices.tolist(), [0])
        self.assertEqual(x.dense_shape, (3, 2))
        self.assertEqual(x.to_dense().tolist(), [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0]])


class Gradients(unittest.TestCase):
    def test_values_get_gradients(self):
        def through_coo(v):
            c = ms.COOTensor(Tensor([[0, 1], [1, 0]]), v, (2, 2))
            return (c.to_dense() * Tensor([[1.0, 2.0], [3.0, 4.0]])).sum()

        def through_csr(v):
            c = ms.CSRTensor(Tensor([0, 1, 2], dtype=mstype.int32), Tensor([1, 0], dtype=mstype.int32), v, (2, 2))
            return c.mm(Tensor([[1.0, 2.0], [3.0, 4.0]])).sum()

        self.assertEqual(ms.grad(through_coo)(Tensor([1.0, 2.0])).tolist(), [2.0, 3.0])
        self.assertEqual(ms.grad(through_csr)(Tensor([1.0, 2.0])).tolist(), [7.0, 3.0])


if __name__ == "__main__":
    unittest.main()
