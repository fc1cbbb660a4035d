"""The remaining MindSpore metrics (ConfusionMatrix, ConfusionMatrixMetric, CosineSimilarity,
Dice, Perplexity, ROC, BleuScore, OcclusionSensitivity and the surface distances) give MindSpore's
documented results (its docstring examples, float64 inputs as numpy makes them) and hand-derived
values, reached from mindspore.nn, mindspore.train and the top level; and the top-level names of
pijit/_toplevel2.py."""
import io
import math
import os
import unittest
from contextlib import redirect_stdout

import pijit as ms
from pijit import nn, Tensor
from pijit import numpy_lite as np
from pijit.common import dtype as mstype


def f64(v):
    return Tensor(np.array(v, dtype=np.float64))


def i64(v):
    return Tensor(np.array(v, dtype=np.int64))


class Exports(unittest.TestCase):
    NAMES = ["ConfusionMatrix", "ConfusionMatrixMetric", "CosineSimilarity", "Dice", "Perplexity",
             "ROC", "BleuScore", "OcclusionSensitivity", "HausdorffDistance", "MeanSurfaceDistance",
             "RootMeanSquareDistance"]

    def test_one_object_under_every_path(self):
        import pijit.train
        for name in self.NAMES:
            self.assertIs(getattr(nn, name), getattr(ms, name), name)
            self.assertIs(getattr(nn, name), getattr(pijit.train, name), name)


class ConfusionMatrices(unittest.TestCase):
    def test_documented_example(self):
        m = nn.ConfusionMatrix(num_classes=2, normalize="no_norm", threshold=0.5)
        m.clear()
        m.update(i64([1, 0, 1, 0]), i64([1, 0, 0, 1]))
        self.assertEqual(m.eval().tolist(), [[1.0, 1.0], [1.0, 1.0]])

    def test_scores_argmax_and_normalisations(self):
        m = nn.ConfusionMatrix(2)
        m.update(Tensor([[0.1, 0.9], [0.8, 0.2]]), i64([1, 1]))
        self.assertEqual(m.eval().tolist(), [[0.0, 0.0], [1.0, 1.0]])
        m = nn.ConfusionMatrix(3, normalize="target")
        m.update(i64([0, 1, 1]), i64([0, 0, 1]))
        self.assertEqual(m.eval().tolist(), [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
        m = nn.ConfusionMatrix(3, normalize="prediction")
        m.update(i64([0, 1, 1]), i64([0, 0, 1]))
        self.assertEqual(m.eval().tolist(), [[1.0, 0.5, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.0]])
        m = nn.ConfusionMatrix(2, normalize="all")
        m.update(f64([0.7, 0.2, 0.6, 0.1]), i64([1, 0, 0, 0]))  # thresholded at 0.5
        self.assertEqual(m.eval().tolist(), [[0.5, 0.25], [0.0, 0.25]])

    def test_bad_input(self):
        with self.assertRaisesRegex(ValueError, "normalize"):
            nn.ConfusionMatrix(2, normalize="rows")
        with self.assertRaisesRegex(TypeError, "threshold"):
            nn.ConfusionMatrix(2, threshold=1)
        m = nn.ConfusionMatrix(2)
        with self.assertRaisesRegex(RuntimeError, "call the 'update' method"):
            m.eval()
        with self.assertRaisesRegex(ValueError, "needs 2 inputs"):
            m.update(i64([1]))
        with self.assertRaisesRegex(ValueError, "same dimensions"):
            m.update(Tensor([[[0.1]]]), i64([1]))


class ConfusionMatrixMetrics(unittest.TestCase):
    PRED = [[[[1, 1], [0, 1]], [[0, 1], [1, 0]]]]
    TRUE = [[[[1, 1], [0, 0]], [[0, 0], [1, 1]]]]

    def metric(self, name, per_sample, decrease="mean"):
        m = nn.ConfusionMatrixMetric(skip_channel=True, metric_name=name,
                                     calculation_method=per_sample, decrease=decrease)
        m.update(i64(self.PRED), i64(self.TRUE))
        return m.eval()

    def test_documented_example(self):
        m = nn.ConfusionMatrixMetric(skip_channel=True, metric_name="tpr", calculation_method=False,
                                     decrease="mean")
        m.clear()
        m.update(i64([[[0], [1]], [[1], [0]]]), i64([[[0], [1]], [[0], [1]]]))
        self.assertEqual(m.eval().tolist(), [0.5])

    def test_accumulated_counts(self):
        # totals: tp 3, fp 2, tn 2, fn 1
        self.assertEqual(self.metric("sensitivity", False).tolist(), [0.75])
        self.assertEqual(self.metric("Precision", False).tolist(), [0.6])
        self.assertAlmostEqual(self.metric("matthews correlation coefficient", False).tolist()[0],
                               4 / math.sqrt(240), places=12)
        self.assertAlmostEqual(self.metric("balanced_accuracy", False).tolist()[0], (0.75 + 0.5) / 2)

    def test_per_sample_then_reduced(self):
        # channel 0: tp 2 tn 1 fp 1 fn 0; channel 1: one of each
        self.assertAlmostEqual(self.metric("tpr", True), 0.75)
        self.assertAlmostEqual(self.metric("ppv", True), (2 / 3 + 0.5) / 2)
        self.assertAlmostEqual(self.metric("tnr", True, "sum"), 1.0)

    def test_skip_channel_false_drops_the_first(self):
        m = nn.ConfusionMatrixMetric(skip_channel=False, metric_name="tpr")
        m.update(i64(self.PRED), i64(self.TRUE))
        self.assertEqual(m.eval().tolist(), [0.5])

    def test_bad_names(self):
        with self.assertRaisesRegex(NotImplementedError, "not implemented"):
            nn.ConfusionMatrixMetric(metric_name="wellness")
        with self.assertRaisesRegex(ValueError, "decrease"):
            nn.ConfusionMatrixMetric(decrease="median")
        m = nn.ConfusionMatrixMetric()
        with self.assertRaisesRegex(ValueError, "binarized"):
            m.update(i64([[0, 1]]), f64([[0.5, 1.0]]))


class SimilarityDicePerplexity(unittest.TestCase):
    def test_cosine_documented_example(self):
        m = nn.CosineSimilarity()
        m.update(f64([[1, 3, 4, 7], [2, 4, 2, 5], [3, 1, 5, 8]]))
        got = m.eval().tolist()
        want = [[0.0, 0.94025615, 0.95162452], [0.94025615, 0.0, 0.86146098],
                [0.95162452, 0.86146098, 0.0]]
        for r, w in zip(got, want):
            for a, b in zip(r, w):
                self.assertAlmostEqual(a, b, places=8)

    def test_cosine_dot_and_reductions(self):
        m = nn.CosineSimilarity(similarity="dot", reduction="sum", zero_diagonal=False)
        m.update(f64([[1, 2], [3, 4]]))
        self.assertEqual(m.eval().tolist(), [5.0 + 11.0, 11.0 + 25.0])
        m = nn.CosineSimilarity(similarity="dot", reduction="mean")
        m.update(f64([[1, 2], [3, 4]]))
        self.assertEqual(m.eval().tolist(), [5.5, 5.5])

    def test_dice_documented_example(self):
        m = nn.Dice(smooth=1e-5)
        m.update(f64([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]), i64([[0, 1], [1, 0], [0, 1]]))
        self.assertEqual(m.eval(), 0.20467791371802546)
        with self.assertRaisesRegex(RuntimeError, "number of samples is 0"):
            nn.Dice().eval()
        with self.assertRaisesRegex(ValueError, "same shape"):
            nn.Dice().update(f64([1.0, 2.0]), f64([1.0]))

    def test_perplexity_documented_example_and_ignore(self):
        m = nn.Perplexity(ignore_label=None)
        m.update(f64([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]), i64([1, 0, 1]))
        self.assertEqual(m.eval(), 2.231443166940565)
        m = nn.Perplexity(ignore_label=0)
        m.update(f64([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]), i64([1, 0, 1]))
        self.assertAlmostEqual(m.eval(), math.exp(-(math.log(0.5) + math.log(0.6)) / 2), places=12)


class ROCCurves(unittest.TestCase):
    def test_binary_documented_example(self):
        m = nn.ROC(pos_label=2)
        m.update(i64([3, 1, 4, 2]), i64([0, 1, 2, 3]))
        fpr, tpr, thr = m.eval()
        self.assertEqual([round(v, 8) for v in fpr.tolist()], [0.0, 0.0, 0.33333333, 0.66666667, 1.0])
        self.assertEqual(tpr.tolist(), [0.0, 1.0, 1.0, 1.0, 1.0])
        self.assertEqual(thr.tolist(), [5, 4, 3, 2, 1])

    def test_multiclass_documented_example(self):
        m = nn.ROC(class_num=4)
        m.update(f64([[0.28, 0.55, 0.15, 0.05], [0.10, 0.20, 0.05, 0.05], [0.20, 0.05, 0.15, 0.05],
                      [0.05, 0.05, 0.05, 0.75]]), i64([0, 1, 2, 3]))
        fpr, tpr, thr = m.eval()
        self.assertEqual([[round(v, 8) for v in a.tolist()] for a in fpr],
                         [[0.0, 0.0, 0.33333333, 0.66666667, 1.0], [0.0, 0.33333333, 0.33333333, 1.0],
                          [0.0, 0.33333333, 1.0], [0.0, 0.0, 1.0]])
        self.assertEqual([a.tolist() for a in tpr],
                         [[0.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
        self.assertEqual([[round(v, 8) for v in a.tolist()] for a in thr],
                         [[1.28, 0.28, 0.2, 0.1, 0.05], [1.55, 0.55, 0.2, 0.05], [1.15, 0.15, 0.05],
                          [1.75, 0.75, 0.05]])

    def test_errors(self):
        m = nn.ROC()
        m.update(i64([1, 2]), i64([1, 1]))
        with self.assertRaisesRegex(ValueError, "no negative samples"):
            m.eval()
        with self.assertRaisesRegex(ValueError, "'class_num' must equal"):
            nn.ROC(class_num=3).update(f64([[0.1, 0.9]]), i64([1]))


class Bleu(unittest.TestCase):
    def test_documented_example(self):
        m = nn.BleuScore()
        m.update([["i", "have", "a", "pen", "on", "my", "desk"]],
                 [[["i", "have", "a", "pen", "in", "my", "desk"],
                   ["there", "is", "a", "pen", "on", "the", "desk"]]])
        self.assertEqual(m.eval(), 0.5946035575013605)

    def test_no_match_smoothing_and_brevity(self):
        m = nn.BleuScore(n_gram=2)
        m.update([["a", "b"]], [[["c", "d"]]])
        self.assertEqual(m.eval(), 0.0)
        m = nn.BleuScore(n_gram=2, smooth=True)
        m.update([["a", "b"]], [[["a", "b", "c"]]])
        # precisions (2+1)/(2+1), (1+1)/(1+1); brevity exp(1 - 3/2)
        self.assertAlmostEqual(m.eval(), math.exp(1 - 1.5), places=12)
        with self.assertRaisesRegex(ValueError, "n_gram"):
            nn.BleuScore(n_gram=5)


class Occlusion(unittest.TestCase):
    def test_documented_example(self):
        class DenseNet(nn.Cell):
            def __init__(self):
                super(DenseNet, self).__init__()
                w = np.array([[0.1, 0.8, 0.1, 0.1], [1, 1, 1, 1]]).astype(np.float32)
                b = np.array([0.3, 0.6]).astype(np.float32)
                self.dense = nn.Dense(4, 2, weight_init=Tensor(w), bias_init=Tensor(b))

            def construct(self, x):
                return self.dense(x)

        m = nn.OcclusionSensitivity()
        m.clear()
        m.update(DenseNet(), np.array([[0.1, 0.2, 0.3, 0.4]]).astype(np.float32),
                 np.array(1).astype(np.int32))
        got = m.eval()
        self.assertEqual(str(got), "[0.29999995 0.6        1.         0.9       ]")
        with self.assertRaisesRegex(RuntimeError, "must be 1"):
            m.update(DenseNet(), np.ones((2, 4), dtype=np.float32), np.array([1, 1]))


class SurfaceDistances(unittest.TestCase):
    X = [[3, 0, 1], [1, 3, 0], [1, 0, 2]]
    Y = [[0, 2, 1], [1, 2, 1], [0, 0, 1]]

    def run_metric(self, metric):
        metric.clear()
        metric.update(i64(self.X), i64(self.Y), 0)
        return metric.eval()

    def test_documented_examples(self):
        self.assertEqual(self.run_metric(nn.HausdorffDistance()), 1.4142135623730951)
        self.assertEqual(self.run_metric(nn.MeanSurfaceDistance(symmetric=False)), 0.8047378541243649)
        self.assertEqual(self.run_metric(nn.RootMeanSquareDistance(symmetric=False)), 1.0000000000000002)

    def test_hand_derived(self):
        # edges of y_pred: (0,1) (1,2) (2,1); of y: (0,0) (2,0) (2,1)
        self.assertEqual(self.run_metric(nn.HausdorffDistance(distance_metric="chessboard")), 1.0)
        self.assertEqual(self.run_metric(nn.HausdorffDistance(distance_metric="taxicab")), 2.0)
        self.assertEqual(self.run_metric(nn.HausdorffDistance(distance_metric="taxicab",
                                                              directed=True)), 2.0)
        self.assertEqual(self.run_metric(nn.HausdorffDistance(percentile=50.0)), 1.0)
        self.assertAlmostEqual(self.run_metric(nn.MeanSurfaceDistance(symmetric=True)),
                               ((1 + math.sqrt(2)) / 3 + 2 / 3) / 2, places=12)
        self.assertAlmostEqual(self.run_metric(nn.RootMeanSquareDistance(symmetric=True)),
                               math.sqrt((1.0 + 2 / 3) / 2), places=12)

    def test_interior_is_not_edge(self):
        # a 3x3 block inside a 5x5 image: its centre erodes away, 8 edge voxels; against itself 0
        img = [[0] * 5] + [[0, 1, 1, 1, 0] for _ in range(3)] + [[0] * 5]
        m = nn.MeanSurfaceDistance()
        m.update(i64(img), i64(img), 1)
        self.assertEqual(m.eval(), 0.0)
        self.assertEqual(sum(m._y_edges), 8)

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "needs 3 inputs"):
            nn.HausdorffDistance().update(i64(self.X), i64(self.Y))
        with self.assertRaisesRegex(ValueError, "must be in predicted value"):
            nn.HausdorffDistance().update(i64(self.X), i64(self.Y), 7)
        with self.assertRaisesRegex(TypeError, "label index"):
            nn.RootMeanSquareDistance().update(i64(self.X), i64(self.Y), "0")
        with self.assertRaisesRegex(ValueError, "distance_metric"):
            nn.MeanSurfaceDistance(distance_metric="manhattan")


class TopLevelNames(unittest.TestCase):
    def test_generic_types(self):
        self.assertIsInstance(mstype.int32, mstype.Int)
        self.assertNotIsInstance(mstype.float32, mstype.Int)
        self.assertIs(mstype.Int(16), mstype.int16)
        self.assertIn(mstype.uint8, mstype.uint)
        self.assertIn(mstype.float16, mstype.number)
        self.assertNotIn(mstype.bool_, mstype.number)
        self.assertEqual(str(mstype.tensor_type(mstype.float32)), "Tensor[Float32]")
        self.assertIs(ms.QuantDtype.INT4, mstype.QuantDtype.INT4)
        self.assertEqual(ms.QuantDtype.UINT8.num_bits(), 8)
        for name in ("Int", "uint", "number", "string", "list_", "tuple_", "type_none", "tensor_type",
                     "QuantDtype", "JitConfig", "set_dump", "ms_memory_recycle"):
            self.assertTrue(hasattr(ms.common, name), name)

    def test_logging_config(self):
        old = os.environ.pop("GLOG_v", None)
        try:
            self.assertEqual(ms.get_level(), "2")
            os.environ["GLOG_v"] = "1"
            self.assertEqual(ms.get_log_config()["GLOG_v"], "1")
            os.environ["GLOG_v"] = "9"
            with self.assertRaisesRegex(ValueError, "GLOG_v"):
                ms.get_level()
        finally:
            os.environ.pop("GLOG_v", None)
            if old is not None:
                os.environ["GLOG_v"] = old

    def test_run_check_computes(self):
        out = io.StringIO()
        with redirect_stdout(out):
            ms.run_check()
        self.assertIn("multiplication calculation is correct", out.getvalue())

    def test_set_dump_and_offload(self):
        net = nn.Dense(2, 2)
        ms.set_dump(net, enabled=False)
        self.assertFalse(net._dump_enabled)
        with self.assertRaisesRegex(ValueError, "Cell or Primitive"):
            ms.set_dump(3)
        ms.set_offload_context({"offload_param": "cpu"})
        self.assertEqual(ms.get_offload_context()["offload_param"], "cpu")
        with self.assertRaisesRegex(ValueError, "not supported"):
            ms.set_offload_context({"warp_speed": 9})

    def test_merge_sliced_parameter(self):
        a = ms.Parameter(Tensor([[1.0, 2.0]]), "w")
        b = ms.Parameter(Tensor([[3.0, 4.0]]), "w")
        p = ms.merge_sliced_parameter([a, b])
        self.assertEqual(p.name, "w")
        self.assertEqual(p.tolist(),
                         [[1.0, 2.0], [3.0, 4.0]])
        with self.assertRaisesRegex(ValueError, "same name"):
            ms.merge_sliced_parameter([a, ms.Parameter(Tensor([[1.0, 2.0]]), "v")])
        with self.assertRaisesRegex(TypeError, "list"):
            ms.merge_sliced_parameter((a, b))


if __name__ == "__main__":
    unittest.main()
