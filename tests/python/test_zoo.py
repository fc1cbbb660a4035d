"""Model-zoo networks (tests/zoo/*_zoo.py, written as MindSpore's model zoo writes them) run
unchanged under `python -m pijit run`: each trains a few steps eagerly and jitted from the same
start and prints `ZOO {json}`. Asserted per network: the script succeeds, the jitted losses equal
the eager ones (bitwise here), the loss decreased, the jitted training step is one graph with no
break, and the eager losses are those of a run with capture off (--no-capture: nothing but the
step the script jits is captured), so auto-capture of the eager half changes nothing either."""
import json
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZOO = os.path.join(ROOT, "tests", "zoo")
from jit_compare import CAPTURE_ON as CAPTURE_BUILT, CAPTURE_OFF_WHY  # noqa: E402


def run_zoo(script, *args, capture=True):
    """Runs tests/zoo/<script> under `python -m pijit run` (--no-capture unless capture) and returns
    (process, summary dict or None)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "pyscripts"))
    cmd = [sys.executable, "-m", "pijit", "run"] + ([] if capture else ["--no-capture"])
    p = subprocess.run(cmd + [os.path.join(ZOO, script)] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=600)
    lines = [l for l in p.stdout.splitlines() if l.startswith("ZOO ")]
    return p, (json.loads(lines[-1][4:]) if lines else None)


@unittest.skipUnless(CAPTURE_BUILT, CAPTURE_OFF_WHY)
class ZooNetworksTrainEagerAndJitted(unittest.TestCase):
    def check(self, script, *args, net, steps):
        p, out = run_zoo(script, *args)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIsNotNone(out, p.stdout[-2000:])
        self.assertEqual(out["net"], net)
        self.assertEqual(out["steps"], steps)
        self.assertEqual(len(out["jit"]), steps)
        self.assertTrue(out["bitwise"], "jitted %r != eager %r" % (out["jit"], out["eager"]))
        self.assertTrue(out["equal"])
        self.assertTrue(out["decreased"], out["eager"])
        self.assertEqual((out["graphs"], out["breaks"]), (1, 0), "the jitted step: one graph, no break")
        # the eager half with capture off computes the same losses
        q, plain = run_zoo(script, *args, capture=False)
        self.assertEqual(q.returncode, 0, q.stderr[-3000:])
        self.assertEqual(plain["eager"], out["eager"])
        self.assertEqual(plain["jit"], out["jit"])
        self.assertEqual((plain["graphs"], plain["breaks"]), (1, 0))
        return out

    def test_lenet(self):
        self.check("lenet_zoo.py", net="lenet", steps=6)

    def test_resnet50_style_bottleneck_with_se_block(self):
        out = self.check("resnet_zoo.py", "bottleneck", net="resnet_bottleneck", steps=5)
        self.assertTrue(out["bn_stats_equal"])

    def test_resnet18_style_basic_block_pad_mode_pad(self):
        out = self.check("resnet_zoo.py", "basic", net="resnet_basic", steps=5)
        self.assertTrue(out["bn_stats_equal"])

    def test_mobilenetv2_depthwise(self):
        self.check("mobilenetv2_zoo.py", net="mobilenetv2", steps=5)

    def test_vgg_with_dropout(self):
        self.check("vgg_zoo.py", net="vgg", steps=5)

    def test_alexnet_with_dropout(self):
        self.check("alexnet_zoo.py", net="alexnet", steps=6)

    def test_lstm_sentiment_net(self):
        out = self.check("lstm_sentiment_zoo.py", net="lstm_sentiment", steps=6)
        self.assertTrue(out["embedding_frozen"])

    def test_gru_seq2seq_with_attention_and_clipping(self):
        self.check("gru_seq2seq_zoo.py", net="gru_seq2seq", steps=5)

    def test_transformer_under_ms_function(self):
        self.check("transformer_zoo.py", net="transformer", steps=5)

    def test_bert_pretraining_momentum(self):
        self.check("bert_zoo.py", "Momentum", net="bert_Momentum", steps=5)

    def test_bert_pretraining_adam_weight_decay_with_polynomial_decay_lr(self):
        self.check("bert_zoo.py", "AdamWeightDecay", net="bert_AdamWeightDecay", steps=5)

    def test_bert_pretraining_lamb(self):
        self.check("bert_zoo.py", "Lamb", net="bert_Lamb", steps=5)


@unittest.skipUnless(CAPTURE_BUILT, CAPTURE_OFF_WHY)
class ZooMixedPrecision(unittest.TestCase):
    check = ZooNetworksTrainEagerAndJitted.check

    def check_half(self, mode):
        # MindSpore's to_float casts what each layer computes on, not the Parameters: float16
        # logits from float32 weights, BatchNorm kept float32, jitted bitwise equal to eager
        out = self.check("resnet_amp_zoo.py", mode, net="resnet_amp_" + mode, steps=4)
        self.assertEqual((out["logits_dtype"], out["weight_dtype"]), ("Float16", "Float32"))

    def test_resnet_to_float16_with_float32_batchnorm(self):
        self.check_half("to_float")

    def test_resnet_amp_build_train_network_O2_with_loss_scale(self):
        self.check_half("O2")


class ZooIdioms(unittest.TestCase):
    """The functional names the zoo scripts lean on, in-process."""

    def test_functional_partial_make_range_and_clip_by_value(self):
        import pijit as ms
        import pijit.ops.functional as F
        import pijit.ops.composite as C
        add3 = F.partial(lambda a, b, c: a * 100 + b * 10 + c, 1, 2)
        self.assertEqual(add3(3), 123)
        with self.assertRaisesRegex(TypeError, "partial: the first input must be callable, got int"):
            F.partial(3)
        self.assertEqual(F.make_range(3), (0, 1, 2))
        self.assertEqual(F.make_range(1, 7, 2), (1, 3, 5))
        with self.assertRaisesRegex(TypeError, "make_range: limit must be an int, got float"):
            F.make_range(0, 2.0)
        with self.assertRaisesRegex(ValueError, "make_range: delta must not be 0"):
            F.make_range(0, 3, 0)
        self.assertEqual(C.clip_by_value(ms.Tensor([-2.0, 0.5, 3.0]), -1.0, 1.0).tolist(), [-1.0, 0.5, 1.0])
        self.assertIs(F.tuple_to_array, ms.ops.tuple_to_array)
        self.assertIs(F.zeros_like, ms.ops.zeros_like)

    @unittest.skipUnless(CAPTURE_BUILT, CAPTURE_OFF_WHY)
    def test_label_smoothed_loss_cell_captured_under_an_eager_tape(self):
        # OneHot with Tensor on/off values feeding a dense-label cross-entropy, its Cell run as a
        # graph under the eager training step's tape: the graph's backward differentiates the
        # probabilities too (it once raised "cannot differentiate cross_entropy with respect to
        # its class probabilities"). The gradient with respect to the probabilities is checked
        # against -(log_softmax(x)) / N.
        import pijit as ms
        from pijit import nn, ops
        x = ms.Tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 0.3]])
        p = ms.Tensor([[0.9, 0.05, 0.05], [0.05, 0.05, 0.9]])
        loss = nn.SoftmaxCrossEntropyWithLogits(reduction="mean")

        def f(x, p):
            return loss(x, p)
        gx, gp = ops.grad(ms.jit(f), grad_position=(0, 1))(x, p)
        want = (-ops.log_softmax(x, -1) / 2.0).tolist()
        for row, wrow in zip(gp.tolist(), want):
            for a, b in zip(row, wrow):
                self.assertAlmostEqual(a, b, places=6)
        gx_eager, gp_eager = ops.grad(f, grad_position=(0, 1))(x, p)
        self.assertEqual(gp.tolist(), gp_eager.tolist())
        self.assertEqual(gx.tolist(), gx_eager.tolist())


if __name__ == "__main__":
    unittest.main()
