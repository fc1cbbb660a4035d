"""mindspore.ops names that no other suite calls by name: each primitive class (ops.Abs()(x), ...)
and functional form gives the values MindSpore documents, checked against Python's math on small
inputs; the in-place scatters write their Parameter."""
import math
import unittest

import pijit as ms
from pijit import Tensor, Parameter, ops

X = [[-1.5, 0.5], [2.0, -0.25]]
Y = [[2.0, -1.0], [0.5, 3.0]]


def f32(v):
    """v rounded to float32, as the tensors hold it."""
    import struct
    return struct.unpack("f", struct.pack("f", v))[0]


class Close(unittest.TestCase):
    def close(self, got, want, places=5):
        if isinstance(want, list):
            self.assertEqual(len(got), len(want))
            for g, w in zip(got, want):
                self.close(g, w, places)
        elif isinstance(want, float) and math.isnan(want):
            self.assertTrue(math.isnan(got), got)
        else:
            self.assertAlmostEqual(got, want, places=places)

    def ew(self, fn, *xs):
        """fn applied elementwise over nested lists xs."""
        if isinstance(xs[0], list):
            return [self.ew(fn, *parts) for parts in zip(*xs)]
        return fn(*xs)


class UnaryPrimitives(Close):
    def test_math(self):
        sign = lambda v: (v > 0) - (v < 0)
        cases = {
            "Abs": abs, "Ceil": math.ceil, "Floor": math.floor, "Cos": math.cos, "Sin": math.sin,
            "Erf": math.erf, "Exp": math.exp, "Reciprocal": lambda v: 1 / v,
            "Sign": lambda v: float(sign(v)),
            "Round": lambda v: float(round(v)),  # half to even, as numpy
            "Log1p": lambda v: math.log1p(v) if v > -1 else float("nan"),
        }
        for name, fn in cases.items():
            with self.subTest(name):
                self.close(getattr(ops, name)()(Tensor(X)).tolist(), self.ew(fn, X))
        pos = [[1.5, 0.5], [2.0, 0.25]]
        self.close(ops.Log()(Tensor(pos)).tolist(), self.ew(math.log, pos))
        self.close(ops.Rsqrt()(Tensor(pos)).tolist(), self.ew(lambda v: 1 / math.sqrt(v), pos))
        self.close(ops.Logit()(Tensor([0.25, 0.5])).tolist(), [math.log(1 / 3), 0.0])
        self.close(ops.Logit(eps=0.1)(Tensor([0.0, 1.0])).tolist(), [math.log(0.1 / 0.9), math.log(0.9 / 0.1)])

    def test_activations(self):
        gelu = lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2)))
        celu = lambda v: max(0.0, v) + min(0.0, math.expm1(v))
        scale, alpha = 1.0507009873554805, 1.6732632423543772
        selu = lambda v: scale * (v if v > 0 else alpha * math.expm1(v))
        self.close(ops.GeLU()(Tensor(X)).tolist(), self.ew(gelu, X), places=3)
        self.close(ops.CeLU(alpha=1.0)(Tensor(X)).tolist(), self.ew(celu, X))
        self.close(ops.SeLU()(Tensor(X)).tolist(), self.ew(selu, X))

    def test_stop_gradient_and_scalar_to_tensor(self):
        g = ms.grad(lambda x: (ops.StopGradient()(x) * x).sum())(Tensor([2.0, 3.0]))
        self.assertEqual(g.tolist(), [2.0, 3.0])
        t = ops.ScalarToTensor()(3, ms.float32)
        self.assertEqual((t.dtype, t.shape, t.item()), (ms.float32, (), 3.0))


class BinaryPrimitives(Close):
    def test_arithmetic_and_comparisons(self):
        cases = {
            "Div": lambda a, b: a / b, "RealDiv": lambda a, b: a / b,
            "FloorDiv": lambda a, b: float(math.floor(a / b)),
            "FloorMod": lambda a, b: a - math.floor(a / b) * b,
            "Mod": math.fmod,  # the dividend's sign: MindSpore documents Mod()([-4, 5, 6], [3, 2, 3]) = [-1, 1, 0]
            "Minimum": min,
        }
        for name, fn in cases.items():
            with self.subTest(name):
                self.close(getattr(ops, name)()(Tensor(X), Tensor(Y)).tolist(), self.ew(fn, X, Y))
        import operator
        for name, fn in (("Greater", operator.gt), ("GreaterEqual", operator.ge), ("Less", operator.lt),
                         ("LessEqual", operator.le), ("NotEqual", operator.ne)):
            with self.subTest(name):
                self.assertEqual(getattr(ops, name)()(Tensor(X), Tensor(Y)).tolist(), self.ew(fn, X, Y))
        self.assertEqual(ops.NotEqual()(Tensor([1.0, 2.0]), Tensor([1.0, 3.0])).tolist(), [False, True])

    def test_mod_documented_example(self):
        self.assertEqual(ops.Mod()(Tensor([-4.0, 5.0, 6.0]), Tensor([3.0, 2.0, 3.0])).tolist(), [-1.0, 1.0, 0.0])
        self.assertEqual(ops.Mod()(Tensor([-4, 5, 6]), Tensor([3, 2, 3])).tolist(), [-1, 1, 0])
        self.assertEqual(ops.FloorMod()(Tensor([-4.0, 5.0, 6.0]), Tensor([3.0, 2.0, 3.0])).tolist(), [2.0, 1.0, 0.0])

    def test_truncate_mod_and_lerp(self):
        self.assertEqual(ops.truncate_mod(Tensor([-7.0, 7.0]), Tensor([3.0, -3.0])).tolist(), [-1.0, 1.0])
        self.close(ops.Lerp()(Tensor(X), Tensor(Y), 0.5).tolist(), self.ew(lambda a, b: a + 0.5 * (b - a), X, Y))

    def test_logical(self):
        b = Tensor([[True, False], [True, True]])
        self.assertEqual(ops.LogicalAnd()(b, Tensor([[True, True], [False, True]])).tolist(),
                         [[True, False], [False, True]])
        self.assertEqual(ops.LogicalOr()(b, Tensor([[False, False], [False, True]])).tolist(),
                         [[True, False], [True, True]])
        self.assertEqual(ops.LogicalNot()(b).tolist(), [[False, True], [False, False]])


class Reductions(Close):
    def test_reduce_primitives(self):
        x = Tensor(X)
        self.assertEqual(ops.ReduceMax()(x, 1).tolist(), [0.5, 2.0])
        self.assertEqual(ops.ReduceMin(keep_dims=True)(x, 0).tolist(), [[-1.5, -0.25]])
        self.assertEqual(ops.ReduceProd()(x).tolist(), -1.5 * 0.5 * 2.0 * -0.25)
        b = Tensor([[True, False], [True, True]])
        self.assertEqual(ops.ReduceAll()(b, 1).tolist(), [False, True])
        self.assertEqual(ops.ReduceAny()(b).tolist(), True)
        self.assertEqual(ops.Argmax()(x).tolist(), [1, 0])
        self.assertEqual(ops.Argmax(axis=0)(x).tolist(), [1, 0])

    def test_segment_min_and_determinants(self):
        out = ops.unsorted_segment_min(Tensor([3.0, 1.0, 2.0]), Tensor([0, 0, 2]), 3).tolist()
        self.assertEqual(out[0], 1.0)
        self.assertEqual(out[2], 2.0)
        self.assertEqual(out[1], f32(3.4028234663852886e+38))  # an empty segment holds the dtype's max
        self.assertEqual(ops.matrix_determinant(Tensor([[2.0, 1.0], [1.0, 3.0]])).tolist(), 5.0)
        sign, logabs = ops.log_matrix_determinant(Tensor([[2.0, 0.0], [0.0, -3.0]]))
        self.assertEqual(sign.item(), -1.0)
        self.assertAlmostEqual(logabs.item(), math.log(6.0), places=6)


class Shapes(Close):
    def test_expand_linspace_gather(self):
        self.assertEqual(ops.Expand()(Tensor([[1.0], [2.0]]), Tensor([2, 3])).tolist(),
                         [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
        self.assertEqual(ops.LinSpace()(Tensor(0.0), Tensor(1.0), 5).tolist(), [0.0, 0.25, 0.5, 0.75, 1.0])
        self.assertEqual(ops.GatherNd()(Tensor(X), Tensor([[0, 1], [1, 0]])).tolist(), [0.5, 2.0])
        self.assertEqual(ops.gather_d(Tensor([[1.0, 2.0], [3.0, 4.0]]), 1, Tensor([[1, 0], [0, 0]])).tolist(),
                         [[2.0, 1.0], [3.0, 3.0]])
        self.assertEqual(ops.col2im(Tensor([[[[1.0, 2.0, 3.0, 4.0]]]]), Tensor([2, 2]), [1, 1], [1, 1], [0, 0],
                                    [1, 1]).tolist(), [[[[1.0, 2.0], [3.0, 4.0]]]])

    def test_pools_windows_distances(self):
        self.assertEqual(ops.AdaptiveAvgPool2D((1, 1))(Tensor([[[[1.0, 2.0], [3.0, 4.0]]]])).tolist(), [[[[2.5]]]])
        self.assertEqual(ops.adaptive_max_pool2d(Tensor([[[[1.0, 5.0], [3.0, 4.0]]]]), (1, 1)).tolist(), [[[[5.0]]]])
        n = 5  # periodic Blackman window: 0.42 - 0.5 cos(2 pi k / n) + 0.08 cos(4 pi k / n)
        want = [0.42 - 0.5 * math.cos(2 * math.pi * k / n) + 0.08 * math.cos(4 * math.pi * k / n) for k in range(n)]
        self.close(ops.BlackmanWindow()(Tensor(n)).tolist(), want)
        self.close(ops.Cdist()(Tensor([[[0.0, 0.0], [1.0, 1.0]]]), Tensor([[[3.0, 4.0]]])).tolist(),
                   [[[5.0], [math.sqrt(13.0)]]])

    def test_renorm_and_bce(self):
        got = ops.Renorm(p=2, dim=0, maxnorm=1.0)(Tensor(Y)).tolist()
        n0, n1 = math.hypot(2.0, 1.0), math.hypot(0.5, 3.0)
        self.close(got, [[2.0 / n0, -1.0 / n0], [0.5 / n1, 3.0 / n1]])
        self.close(ops.BinaryCrossEntropy()(Tensor([0.25, 0.75]), Tensor([0.0, 1.0]), Tensor([1.0, 1.0])).item(),
                   -math.log(0.75))


class IndexedUpdates(Close):
    def test_inplace_and_index_ops(self):
        self.assertEqual(ops.inplace_add(Tensor([[1.0, 2.0], [3.0, 4.0]]), Tensor([[10.0, 10.0]]), (1,)).tolist(),
                         [[1.0, 2.0], [13.0, 14.0]])
        self.assertEqual(ops.inplace_update(Tensor([[1.0, 2.0], [3.0, 4.0]]), Tensor([[10.0, 10.0]]), (0,)).tolist(),
                         [[10.0, 10.0], [3.0, 4.0]])
        p = Parameter(Tensor([5.0, 6.0]), "p")
        ops.assign_sub(p, Tensor([1.0, 2.0]))
        self.assertEqual(p.tolist(), [4.0, 4.0])
        p = Parameter(Tensor([[1.0, 1.0], [1.0, 1.0]]), "r")
        self.assertEqual(ops.IndexAdd(axis=0)(p, Tensor([1], ms.int32), Tensor([[2.0, 3.0]])).tolist(),
                         [[1.0, 1.0], [3.0, 4.0]])
        self.assertEqual(ops.IndexFill()(Tensor([[1.0, 2.0], [3.0, 4.0]]), 1, Tensor([0], ms.int32), Tensor(9.0)).tolist(),
                         [[9.0, 2.0], [9.0, 4.0]])

    def test_scatters_on_parameters(self):
        want = {"scatter_div": [[2.0, 4.0], [3.0, 4.0]], "scatter_min": [[2.0, 4.0], [2.0, 2.0]],
                "scatter_mul": [[2.0, 4.0], [12.0, 16.0]], "scatter_update": [[2.0, 4.0], [2.0, 2.0]]}
        for name, w in want.items():
            p = Parameter(Tensor([[2.0, 4.0], [6.0, 8.0]]), "q")
            getattr(ops, name)(p, Tensor([1]), Tensor([[2.0, 2.0]]))
            self.assertEqual(p.tolist(), w, name)
        nd = {"scatter_nd_div": [1.0, 4.0, f32(0.6)], "scatter_nd_max": [2.0, 4.0, 10.0],
              "scatter_nd_min": [2.0, 4.0, 6.0], "scatter_nd_sub": [0.0, 4.0, -4.0],
              "ScatterNdAdd": [4.0, 4.0, 16.0], "ScatterNdDiv": [1.0, 4.0, f32(0.6)],
              "ScatterNdMin": [2.0, 4.0, 6.0], "ScatterNdMul": [4.0, 4.0, 60.0]}
        for name, w in nd.items():
            p = Parameter(Tensor([2.0, 4.0, 6.0]), "q")
            fn = getattr(ops, name)
            (fn()(p, Tensor([[0], [2]]), Tensor([2.0, 10.0])) if name[0].isupper()
             else fn(p, Tensor([[0], [2]]), Tensor([2.0, 10.0])))
            self.assertEqual(p.tolist(), w, name)

    def test_tensor_scatters_leave_the_input(self):
        base = Tensor([2.0, 4.0, 6.0])
        idx = Tensor([[0], [2]])
        cases = {"tensor_scatter_div": [1.0, 4.0, f32(0.6)], "tensor_scatter_max": [2.0, 4.0, 10.0],
                 "tensor_scatter_mul": [4.0, 4.0, 60.0]}
        for name, w in cases.items():
            self.assertEqual(getattr(ops, name)(base, idx, Tensor([2.0, 10.0])).tolist(), w, name)
        prims = {"TensorScatterMax": [3.0, 4.0, 6.0], "TensorScatterMin": [2.0, 4.0, 1.0],
                 "TensorScatterMul": [6.0, 4.0, 6.0], "TensorScatterSub": [-1.0, 4.0, 5.0]}
        for name, w in prims.items():
            self.assertEqual(getattr(ops, name)()(base, idx, Tensor([3.0, 1.0])).tolist(), w, name)
        self.assertEqual(base.tolist(), [2.0, 4.0, 6.0])


class Sampling(Close):
    def test_random_categorical_and_unique_with_pad(self):
        out = ops.random_categorical(Tensor([[0.0, -100.0], [-100.0, 0.0]]), 3, 0).tolist()
        self.assertEqual(out, [[0, 0, 0], [1, 1, 1]])
        u, idx = ops.unique_with_pad(Tensor([1, 1, 2, 4, 4]), 0)
        self.assertEqual((u.tolist(), idx.tolist()), ([1, 2, 4, 0, 0], [0, 0, 1, 2, 2]))


if __name__ == "__main__":
    unittest.main()
