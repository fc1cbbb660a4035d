"""Defects fixed as MindSpore behaves: the metric name table (get_metric_fn/names and Model's
metrics strings), PrimitiveWithCheck/PrimitiveWithInfer running their checks and inference before
they compute, `ops.operations` (P) holding every primitive class of ops, the top-level
jvp/vjp/jacfwd/jacrev, one candidate-sampler implementation, row gathers of every dtype width,
max_pool2d's argmax and the nuclear norm."""
import math
import unittest

import pijit as pj
from pijit import nn, ops, mint, Tensor
from pijit import dtype as mstype
from pijit._toplevel2 import tensor_type
from pijit.ops.primitive import PrimitiveWithCheck, PrimitiveWithInfer, prim_attr_register

# MindSpore's mindspore.train.metrics __factory__ keys (2.5)
MS_METRIC_NAMES = ["F1", "acc", "accuracy", "auc", "bleu_score", "confusion_matrix", "confusion_matrix_metric",
                   "cosine_similarity", "dice", "hausdorff_distance", "loss", "mae", "mean_surface_distance", "mse",
                   "occlusion_sensitivity", "perplexity", "precision", "recall", "roc", "root_mean_square_distance",
                   "top_1_accuracy", "top_5_accuracy", "topk"]


class Metrics(unittest.TestCase):
    def test_names_are_mindspores(self):
        self.assertEqual(nn.names(), MS_METRIC_NAMES)
        classes = {"acc": nn.Accuracy, "accuracy": nn.Accuracy, "F1": nn.F1, "topk": nn.TopKCategoricalAccuracy,
                   "top_1_accuracy": nn.Top1CategoricalAccuracy, "top_5_accuracy": nn.Top5CategoricalAccuracy,
                   "mae": nn.MAE, "mse": nn.MSE, "loss": nn.Loss, "precision": nn.Precision, "recall": nn.Recall,
                   "dice": nn.Dice, "roc": nn.ROC, "bleu_score": nn.BleuScore,
                   "cosine_similarity": nn.CosineSimilarity, "confusion_matrix_metric": nn.ConfusionMatrixMetric,
                   "hausdorff_distance": nn.HausdorffDistance, "mean_surface_distance": nn.MeanSurfaceDistance,
                   "root_mean_square_distance": nn.RootMeanSquareDistance,
                   "occlusion_sensitivity": nn.OcclusionSensitivity, "perplexity": nn.Perplexity}
        for name, cls in classes.items():
            args = {"topk": (3,), "perplexity": (), "confusion_matrix": (2,)}.get(name, ())
            self.assertIs(type(nn.get_metric_fn(name, *args)), cls, name)
        self.assertIsInstance(nn.get_metric_fn("confusion_matrix", 2), nn.ConfusionMatrix)
        self.assertEqual(nn.get_metric_fn("topk", 2).k, 2)
        # 'auc' is the function, called with the arguments
        self.assertAlmostEqual(nn.get_metric_fn("auc", Tensor([0.0, 1.0]), Tensor([1.0, 1.0])), 1.0)
        for bad in ("f1", "top_k_accuracy", "Accuracy"):
            with self.assertRaisesRegex(KeyError, "unsupported metric %s" % bad):
                nn.get_metric_fn(bad)

    def test_model_takes_mindspores_metric_strings(self):
        from pijit.train.model import get_metrics
        got = get_metrics({"acc", "F1", "top_1_accuracy"})
        self.assertEqual({k: type(v) for k, v in got.items()},
                         {"acc": nn.Accuracy, "F1": nn.F1, "top_1_accuracy": nn.Top1CategoricalAccuracy})
        acc = get_metrics({"acc"})["acc"]
        acc.update(Tensor([[0.1, 0.9], [0.8, 0.2]]), Tensor([1, 1]))
        self.assertEqual(acc.eval(), 0.5)


class UserPrimitives(unittest.TestCase):
    def test_primitive_with_check_runs_its_checks_first(self):
        calls = []

        class Flatten(PrimitiveWithCheck):  # as MindSpore's docs write it: the kernel is Flatten's
            @prim_attr_register
            def __init__(self):
                pass

            def check_shape(self, input_x):
                calls.append(("shape", input_x))
                if len(input_x) < 1:
                    raise ValueError("For 'Flatten', the rank of input_x must be >= 1")

            def check_dtype(self, input_x):
                calls.append(("dtype", input_x))
                if not isinstance(input_x, tensor_type):
                    raise TypeError("For 'Flatten', input_x must be a Tensor")

        out = Flatten()(Tensor([[[1.0, 2.0]], [[3.0, 4.0]]]))
        self.assertEqual(out.tolist(), [[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual(calls, [("dtype", tensor_type(mstype.float32)), ("shape", [2, 1, 2])])
        with self.assertRaisesRegex(ValueError, "rank of input_x must be >= 1"):
            Flatten()(Tensor(1.0))

        class AddN(PrimitiveWithCheck):
            def check_shape(self, inputs):
                if len(set(map(tuple, inputs))) != 1:
                    raise ValueError("For 'AddN', the shapes must be equal, but got %s" % (inputs,))

            def check_dtype(self, inputs):
                calls.append(("tuple", inputs))

            def __call__(self, inputs):
                calls.append("computed")
                return ops.addn(inputs)
        del calls[:]
        a, b = Tensor([1.0, 2.0]), Tensor([3, 4], mstype.int32)
        self.assertEqual(AddN()((a, a)).tolist(), [2.0, 4.0])
        self.assertEqual(calls, [("tuple", (tensor_type(mstype.float32),) * 2), "computed"])
        del calls[:]
        with self.assertRaisesRegex(ValueError, "shapes must be equal"):
            AddN()((a, Tensor([1.0])))
        self.assertEqual(calls, [("tuple", (tensor_type(mstype.float32),) * 2)])  # never computed
        self.assertEqual(AddN()([a, a]).tolist(), [2.0, 4.0])
        del b

    def test_primitive_with_infer_infers_before_computing(self):
        calls = []

        class Square(PrimitiveWithInfer):
            @prim_attr_register
            def __init__(self):
                self.init_prim_io_names(inputs=["x"], outputs=["y"])

            def infer_shape(self, x_shape):
                calls.append(x_shape)
                return x_shape

            def infer_dtype(self, x_dtype):
                if x_dtype.element_type() not in (mstype.float16, mstype.float32):
                    raise TypeError("For 'Square', x must be float16 or float32, but got %s" % x_dtype)
                return x_dtype

            def __call__(self, x):
                return x * x

        sq = Square()
        self.assertEqual(sq(Tensor([3.0, -2.0])).tolist(), [9.0, 4.0])
        self.assertEqual(calls, [[2]])
        with self.assertRaisesRegex(TypeError, r"float16 or float32, but got Tensor\[Int32\]"):
            sq(Tensor([3], mstype.int32))
        # jitted: the same result, the checks traced with the call
        f = pj.jit(lambda x: sq(x) + 1.0)
        self.assertEqual(f(Tensor([2.0])).tolist(), [5.0])
        self.assertEqual(f(Tensor([3.0])).tolist(), [10.0])

        class ShapeSize(PrimitiveWithInfer):  # infer_value: the value is the result
            def infer_value(self, shape):
                n = 1
                for d in shape:
                    n *= d
                return n
        self.assertEqual(ShapeSize()((2, 3, 4)), 24)

        class Neg(PrimitiveWithInfer):  # no __call__: the pijit.ops primitive of the class's name
            def infer_shape(self, x_shape):
                calls.append(("Neg", x_shape))
                return x_shape
        self.assertEqual(Neg()(Tensor([1.0, -2.0])).tolist(), [-1.0, 2.0])
        self.assertEqual(calls[-1], ("Neg", [2]))

        class NoKernelHere(PrimitiveWithCheck):
            def check_dtype(self, x):
                calls.append("checked")
        with self.assertRaisesRegex(NotImplementedError, "NoKernelHere: a PrimitiveWithCheck subclass must "
                                                         "define __call__"):
            NoKernelHere()(Tensor([1.0]))
        self.assertEqual(calls[-1], "checked")


class Operations(unittest.TestCase):
    def test_every_primitive_class_of_ops_is_in_P(self):
        from pijit.ops import operations as P
        prims = [n for n in dir(ops) if not n.startswith("_") and isinstance(getattr(ops, n), type)
                 and issubclass(getattr(ops, n), ops.Primitive)]
        self.assertGreater(len(prims), 300)
        for n in prims:
            self.assertIs(getattr(P, n, None), getattr(ops, n), n)
            self.assertIn(n, P.__all__)
        for n in ("Zeta", "Conv3D", "CTCLoss", "NMSWithMask", "LSTM", "Mul"):
            self.assertIs(getattr(P, n), getattr(ops, n))
        ns = {}
        exec("from pijit.ops.operations import *", ns)
        self.assertIs(ns["Zeta"], ops.Zeta)
        self.assertEqual(P.Conv3D(out_channel=1, kernel_size=1).name, "Conv3D")


class TopLevel(unittest.TestCase):
    def test_jvp_vjp_jacobians_at_the_top_level(self):
        for n in ("jvp", "vjp", "jacfwd", "jacrev"):
            self.assertIs(getattr(pj, n), getattr(ops, n), n)
            self.assertIn(n, pj._toplevel2.__all__)
        x = Tensor([1.0, 2.0])
        out, tangent = pj.jvp(lambda t: t * t, x, Tensor([1.0, 1.0]))
        self.assertEqual((out.tolist(), tangent.tolist()), ([1.0, 4.0], [2.0, 4.0]))
        self.assertEqual(pj.jacrev(lambda t: t * t)(x).tolist(), [[2.0, 0.0], [0.0, 4.0]])
        self.assertEqual(pj.jacfwd(lambda t: t * t)(x).tolist(), [[2.0, 0.0], [0.0, 4.0]])


class Samplers(unittest.TestCase):
    def test_one_implementation(self):
        from pijit.ops import losses2, special2
        from pijit.nn import loss2
        for n in ("UniformCandidateSampler", "LogUniformCandidateSampler", "uniform_candidate_sampler",
                  "log_uniform_candidate_sampler"):
            self.assertIs(getattr(special2, n), getattr(losses2, n), n)
            self.assertIs(getattr(ops, n), getattr(losses2, n), n)
        loss = nn.SampledSoftmaxLoss(num_sampled=4, num_classes=7, num_true=1)
        self.assertIsInstance(loss.sampler, losses2.UniformCandidateSampler)
        self.assertIs(loss2.L2, losses2)

    def test_documented_log_uniform_example_counts(self):
        # MindSpore's example: LogUniformCandidateSampler(2, 5, True, 5) over [[1, 7], [0, 4], [3, 3]]:
        # every class drawn; counts 1 - (1 - P(k))^tries with the tries taken (10 in the docs' run)
        P = lambda k: math.log((k + 2) / (k + 1)) / math.log(6)
        for seed in (1, 2, 3):
            s, te, se = ops.LogUniformCandidateSampler(2, 5, True, 5, seed)(Tensor([[1, 7], [0, 4], [3, 3]], mstype.int64))
            self.assertEqual(sorted(s.tolist()), [0, 1, 2, 3, 4])
            self.assertEqual((s.dtype, te.shape, se.shape), (mstype.int64, (3, 2), (5,)))
            tries = math.log(1 - se.tolist()[0]) / math.log(1 - P(s.tolist()[0]))
            self.assertAlmostEqual(tries, round(tries), places=3)
            if round(tries) == 10:  # the documented values
                self.assertTrue(all(abs(a - b) < 1e-6 for a, b in zip(
                    sorted(se.tolist()), sorted([0.73553443, 0.82625800, 0.99248987, 0.65806371, 0.92312991]))))
        # without rejections (not unique) the expected count is num_sampled * P(k)
        s, te, se = ops.LogUniformCandidateSampler(1, 3, False, 5, 4)(Tensor([[2]], mstype.int64))
        for k, e in zip(s.tolist(), se.tolist()):
            self.assertAlmostEqual(e, 3 * P(k), places=6)
        self.assertAlmostEqual(te.tolist()[0][0], 3 * P(2), places=6)
        # the uniform sampler keeps true_classes' dtype
        s, _, _ = ops.UniformCandidateSampler(1, 3, False, 4, 1)(Tensor([[1], [2]], mstype.int32))
        self.assertEqual(s.dtype, mstype.int32)


ALL_DTYPES = [mstype.bool_, mstype.int8, mstype.uint8, mstype.int16, mstype.uint16, mstype.float16,
              mstype.bfloat16, mstype.int32, mstype.uint32, mstype.float32, mstype.int64, mstype.uint64,
              mstype.float64, mstype.complex64, mstype.complex128]


class Gathers(unittest.TestCase):
    def test_row_gathers_of_every_dtype(self):
        base = [[1, 0, 3], [4, 5, 0]]
        for dt in ALL_DTYPES:
            vals = [[bool(v) for v in r] for r in base] if dt == mstype.bool_ else base
            x = Tensor(vals, mstype.float32).astype(dt) if dt != mstype.bool_ else Tensor(vals, dt)
            idx = Tensor([[2, 0], [1, 1]], mstype.int64)
            want = [[vals[0][2], vals[0][0]], [vals[1][1], vals[1][1]]]
            for got in (ops.gather_elements(x, 1, idx), ops.gather_d(x, 1, idx)):
                self.assertEqual(got.dtype, dt, dt)
                g = got.astype(mstype.float32).tolist() if dt not in (mstype.bool_,) else got.tolist()
                if dt in (mstype.complex64, mstype.complex128):
                    g = [[v.real for v in r] for r in got.tolist()]
                self.assertEqual(g, [[float(v) if dt != mstype.bool_ else v for v in r] for r in want], dt)
            rows = x[Tensor([1, 0, 1])]
            self.assertEqual(rows.dtype, dt)
            self.assertEqual(rows.shape, (3, 3))
            self.assertEqual(ops.gather(x, Tensor([2, 0]), 1).shape, (2, 2))
            # a scatter back through an index (the same row mover)
            y = x.copy()
            y[Tensor([0])] = x[Tensor([1])]
            self.assertEqual(y[0].tolist(), x[1].tolist(), dt)


class PoolAndNorm(unittest.TestCase):
    def test_max_pool2d_return_indices(self):
        x = Tensor([[[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 9.0, 1.0], [0.0, 0.0, 1.0, 2.0], [7.0, 0.0, 3.0, 8.0]]]])
        out, idx = ops.max_pool2d(x, 2, 2, return_indices=True)
        self.assertEqual(out.tolist(), [[[[5.0, 9.0], [7.0, 8.0]]]])
        self.assertEqual(idx.dtype, mstype.int64)
        self.assertEqual(idx.tolist(), [[[[1, 6], [12, 15]]]])  # h * W + w in the plane
        self.assertEqual(ops.max_pool2d(x, 2, 2).tolist(), out.tolist())
        o2, i2 = ops.max_pool2d(x, 3, 1, padding=1, return_indices=True)
        self.assertEqual(o2.shape, (1, 1, 4, 4))
        flat = sum(x.tolist()[0][0], [])
        self.assertEqual([[flat[i] for i in row] for row in i2.tolist()[0][0]], o2.tolist()[0][0])

    def test_nuclear_norm(self):
        x = Tensor([[1.0, 2.0], [3.0, 4.0]])
        # singular values of [[1, 2], [3, 4]]: sqrt(15 +- sqrt(221))
        want = math.sqrt(15 + math.sqrt(221)) + math.sqrt(15 - math.sqrt(221))
        self.assertAlmostEqual(float(mint.norm(x, "nuc")), want, places=5)
        b = Tensor([[[1.0, 2.0], [3.0, 4.0]], [[2.0, 0.0], [0.0, -3.0]]])
        got = mint.norm(b, "nuc", dim=(1, 2), keepdim=True)
        self.assertEqual(got.shape, (2, 1, 1))
        self.assertAlmostEqual(got.tolist()[1][0][0], 5.0, places=5)
        # the matrices over dims (0, 2) of a (2, 3, 2) tensor: one norm per index of dim 1
        t = Tensor([[[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], [[0.0, 3.0], [1.0, 0.0], [1.0, 1.0]]])
        got = mint.norm(t, "nuc", dim=(0, 2))
        self.assertEqual(got.shape, (3,))
        self.assertAlmostEqual(got.tolist()[0], 1.0 + 3.0, places=5)   # [[1, 0], [0, 3]]
        self.assertAlmostEqual(got.tolist()[2], 2.0, places=5)         # [[1, 1], [1, 1]]: rank 1, norm 2


if __name__ == "__main__":
    unittest.main()
