"""Losses of issue 42 (pijit/ops/losses2.py, pijit/nn/loss2.py, kernels/ctc.h): hand-derived
values, MindSpore's documented examples, argument errors, the candidate samplers' semantics, and a
jitted training step through a loss cell equal to the eager one (values against PyTorch are in
oracle/test_torch_losses2.py)."""
import math
import unittest

import pijit as ms
from pijit import nn, ops
# The samplers as losses2 defines them (special2 defines another set; the lead picks one).
from pijit.ops import losses2 as L2
from jit_compare import CAPTURE_ON, assert_ran_eagerly

F64 = ms.float64


def T(v, dtype=None):
    return ms.Tensor(v) if dtype is None else ms.Tensor(v, dtype)


class CTCHand(unittest.TestCase):
    def test_two_frames_one_label(self):
        # paths for label [1] over 2 frames, blank 0: (1,1), (0,1), (1,0)
        p = [[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]]
        lp = T([[[math.log(v) for v in p[0]]], [[math.log(v) for v in p[1]]]], F64)
        loss, alpha = ops.CTCLossV2()(lp, T([[1]], ms.int64), T([2], ms.int64), T([1], ms.int64))
        want = -math.log(0.5 * 0.3 + 0.2 * 0.3 + 0.5 * 0.6)
        self.assertAlmostEqual(loss.tolist()[0], want, places=12)
        self.assertEqual(alpha.shape, (1, 2, 3))
        self.assertAlmostEqual(alpha.tolist()[0][1][1], math.log(0.5 * 0.3 + 0.2 * 0.3), places=12)
        self.assertEqual(alpha.tolist()[0][0][2], -math.inf)
        # reductions: mean divides by the target length, sum adds
        self.assertAlmostEqual(ops.ctc_loss(lp, T([[1]], ms.int64), (2,), (1,), reduction="sum")[0].item(), want, 12)

    def test_sparse_ctcloss_merge_and_ignore(self):
        x = T([[[0.3, 0.6, 0.1]], [[0.2, 0.5, 0.3]]], F64)  # softmax inside, blank = 2
        idx, seq = T([[0, 0], [0, 1]], ms.int64), T([2], ms.int32)
        vals = T([1, 1], ms.int32)
        # label [1, 1] needs 3 frames with merging: no path, infinite loss, zero gradient
        loss, grad = ops.CTCLoss()(x, idx, vals, seq)
        self.assertEqual(loss.tolist(), [math.inf])
        self.assertEqual(grad.tolist(), [[[0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]]])
        # without merging, (1, 1) is the one path
        sm = [[math.exp(v) / sum(math.exp(u) for u in r) for v in r] for r in ([0.3, 0.6, 0.1], [0.2, 0.5, 0.3])]
        loss, _ = ops.CTCLoss(ctc_merge_repeated=False)(x, idx, vals, seq)
        self.assertAlmostEqual(loss.tolist()[0], -math.log(sm[0][1] * sm[1][1]), places=12)
        # collapsing the label first leaves [1]
        loss, _ = ops.CTCLoss(preprocess_collapse_repeated=True)(x, idx, vals, seq)
        want = -math.log(sm[0][1] * sm[1][1] + sm[0][2] * sm[1][1] + sm[0][1] * sm[1][2])
        self.assertAlmostEqual(loss.tolist()[0], want, places=12)
        # a label longer than the input: an error, or ignored (loss 0, gradient 0)
        long_idx, long_vals = T([[0, 0], [0, 1], [0, 2]], ms.int64), T([0, 1, 0], ms.int32)
        with self.assertRaisesRegex(RuntimeError, "label length: 3"):
            ops.CTCLoss()(x, long_idx, long_vals, seq)
        loss, grad = ops.CTCLoss(ignore_longer_outputs_than_inputs=True)(x, long_idx, long_vals, seq)
        self.assertEqual((loss.tolist(), grad.tolist()), ([0.0], [[[0.0] * 3], [[0.0] * 3]]))
        with self.assertRaisesRegex(RuntimeError, "greater than 0"):
            ops.CTCLoss()(x, idx, vals, T([0], ms.int32))

    def test_errors(self):
        lp = T([[[-1.0, -1.0]]])
        i64 = lambda v: T(v, ms.int64)
        with self.assertRaisesRegex(ValueError, "dim of log_probs must be equal to 3"):
            ops.CTCLossV2()(T([[-1.0, -1.0]]), i64([[1]]), i64([1]), i64([1]))
        with self.assertRaisesRegex(ValueError, "'blank' must be in \\[0, 2\\)"):
            ops.CTCLossV2(blank=2)(lp, i64([[1]]), i64([1]), i64([1]))
        with self.assertRaisesRegex(TypeError, "int32 or int64"):
            ops.CTCLossV2()(lp, T([[1.0]]), i64([1]), i64([1]))
        with self.assertRaisesRegex(ValueError, "reduction"):
            ops.CTCLossV2(reduction="mean")
        with self.assertRaisesRegex(ValueError, "reduction"):
            ops.ctc_loss(lp, i64([[1]]), i64([1]), i64([1]), reduction="avg")
        with self.assertRaisesRegex(TypeError, "zero_infinity"):
            ops.ctc_loss(lp, i64([[1]]), i64([1]), i64([1]), zero_infinity=1)
        with self.assertRaisesRegex(RuntimeError, "input_lengths\\[0\\] must be in \\[0, 1\\]"):
            ops.ctc_loss(lp, i64([[1]]), i64([2]), i64([1]))
        with self.assertRaisesRegex(RuntimeError, "targets\\[0, 0\\] must be a class"):
            ops.ctc_loss(lp, i64([[5]]), i64([1]), i64([1]))


class Decoder(unittest.TestCase):
    def test_documented_example_and_merge(self):
        x = T([[[0.6, 0.4, 0.2], [0.8, 0.6, 0.3]], [[0.0, 0.6, 0.0], [0.5, 0.4, 0.5]]])
        di, dv, ds, lp = ops.ctc_greedy_decoder(x, T([2, 2], ms.int32))
        self.assertEqual(di.tolist(), [[0, 0], [0, 1], [1, 0]])
        self.assertEqual(dv.tolist(), [0, 1, 0])
        self.assertEqual(ds.tolist(), [2, 2])
        self.assertEqual([[round(v, 5) for v in r] for r in lp.tolist()], [[-1.2], [-1.3]])
        # a class repeated over frames merges unless merge_repeated=False; blank (C-1) drops out
        y = T([[[0.9, 0.1, 0.0]], [[0.8, 0.1, 0.0]], [[0.0, 0.1, 0.9]], [[0.7, 0.0, 0.0]]])
        self.assertEqual(ops.CTCGreedyDecoder()(y, T([4], ms.int32))[1].tolist(), [0, 0])
        self.assertEqual(ops.CTCGreedyDecoder(False)(y, T([4], ms.int32))[1].tolist(), [0, 0, 0])
        with self.assertRaises(ValueError):
            ops.CTCGreedyDecoder()(y, T([5], ms.int32))
        with self.assertRaises(TypeError):
            ops.CTCGreedyDecoder(merge_repeated=1)


class Margins(unittest.TestCase):
    def test_hand_values(self):
        x = T([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1]])
        # row 0, y=3: (1-0.8+0.1)+(1-0.8+0.2)+(1-0.8+0.4) = 1.3 -> /4; row 1, y=0: 0.5+1.2+0.8 -> /4
        self.assertAlmostEqual(ops.multi_margin_loss(x, T([3, 0], ms.int64)).item(), (1.3 + 2.5) / 8, places=6)
        # MindSpore's documented multilabel example: 0.325
        loss, is_t = ops.MultilabelMarginLoss()(T([[0.1, 0.2, 0.4, 0.8], [0.2, 0.3, 0.5, 0.7]]),
                                                T([[1, 2, 0, 3], [2, 3, -1, 1]], ms.int32))
        self.assertAlmostEqual(loss.item(), 0.325, places=6)
        self.assertEqual(is_t.tolist(), [[1, 1, 1, 1], [0, 0, 1, 1]])
        self.assertAlmostEqual(ops.soft_margin_loss(T([0.0, 2.0]), T([1.0, -1.0])).item(),
                               (math.log(2) + math.log1p(math.exp(2))) / 2, places=6)

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "margin"):
            ops.multi_margin_loss(T([[1.0, 2.0]]), T([0], ms.int64), margin=1.5)
        with self.assertRaisesRegex(ValueError, "'p' must be in"):
            ops.MultiMarginLoss(p=3)
        with self.assertRaisesRegex(TypeError, "margin"):
            ops.MultiMarginLoss(margin=1)
        with self.assertRaisesRegex(ValueError, "shape"):
            ops.SoftMarginLoss()(T([1.0, 2.0]), T([1.0]))
        with self.assertRaisesRegex(TypeError, "eps"):
            ops.TripletMarginLoss(eps=1)
        with self.assertRaisesRegex(TypeError, "margin"):
            nn.CosineEmbeddingLoss(margin=1)
        with self.assertRaisesRegex(ValueError, "reduction"):
            nn.SoftMarginLoss("avg")


class Samplers(unittest.TestCase):
    def test_uniform(self):
        t = T([[1], [3], [4], [6], [3]], ms.int64)
        s, te, se = L2.UniformCandidateSampler(1, 3, True, 8, seed=5, remove_accidental_hits=True)(t)
        self.assertEqual((s.shape, te.shape, se.shape), ((3,), (5, 1), (3,)))
        vals = s.tolist()
        self.assertEqual(len(set(vals)), 3)
        self.assertFalse(set(vals) & {1, 3, 4, 6})
        self.assertTrue(all(0 <= v < 8 for v in vals))
        # one seed, one sequence
        self.assertEqual(L2.uniform_candidate_sampler(t, 1, 3, True, 8, 5, True)[0].tolist(), vals)
        s, te, se = L2.UniformCandidateSampler(1, 4, False, 10, seed=3)(t)
        self.assertTrue(all(abs(v - 0.4) < 1e-7 for v in se.tolist()))
        with self.assertRaisesRegex(ValueError, "num_sampled"):
            L2.UniformCandidateSampler(1, 9, True, 8)

    def test_log_uniform_expected_counts(self):
        t = T([[1, 7], [0, 4], [3, 3]], ms.int64)
        s, te, se = L2.LogUniformCandidateSampler(2, 5, True, 5, seed=1)(t)
        self.assertEqual(sorted(s.tolist()), [0, 1, 2, 3, 4])
        # unique over 5 classes of 5: the counts follow 1 - (1 - P(k))^tries, one tries for all
        P = lambda k: math.log((k + 2) / (k + 1)) / math.log(6)
        n = math.log(1 - se.tolist()[0]) / math.log(1 - P(s.tolist()[0]))
        for k, e in zip(s.tolist(), se.tolist()):
            self.assertAlmostEqual(e, 1 - (1 - P(k)) ** round(n), places=5)

    def test_accidental_hits_documented_example(self):
        i, ids, w = L2.ComputeAccidentalHits(2)(T([[1, 2], [0, 4], [3, 3]], ms.int64), T([0, 1, 2, 3, 4], ms.int64))
        self.assertEqual(i.tolist(), [0, 0, 1, 1, 2, 2])
        self.assertEqual(ids.tolist(), [1, 2, 0, 4, 3, 3])
        self.assertTrue(all(v == -3.4028234663852886e38 for v in w.tolist()))


class Cells(unittest.TestCase):
    def test_dice_and_rmse(self):
        d = nn.DiceLoss(smooth=1e-5)(T([[0.1, 0.9], [0.2, 0.8]]), T([[0.0, 1.0], [1.0, 0.0]]))
        self.assertAlmostEqual(d.item(), 1 - 2 * 1.1 / (0.01 + 0.81 + 0.04 + 0.64 + 2 + 1e-5), places=6)
        self.assertAlmostEqual(nn.RMSELoss()(T([1.0, 3.0]), T([0.0, 0.0])).item(), math.sqrt(5), places=6)
        m = nn.MultiClassDiceLoss(activation=None)(T([[0.1, 0.9], [0.2, 0.8]]), T([[0.0, 1.0], [1.0, 0.0]]))
        d0 = 1 - 2 * 0.2 / (0.05 + 1 + 1e-5)
        d1 = 1 - 2 * 0.9 / (1.45 + 1 + 1e-5)
        self.assertAlmostEqual(m.item(), (d0 + d1) / 2, places=6)

    def test_sampled_softmax_with_given_samples(self):
        w = T([[0.1, 0.2], [0.3, -0.1], [0.0, 0.5], [0.4, 0.4]])
        b = T([0.1, 0.0, -0.2, 0.3])
        x = T([[1.0, 2.0], [0.5, -1.0]])
        lab = T([[2], [0]], ms.int32)
        sv = (T([1, 3], ms.int32), T([[0.5], [0.5]]), T([0.5, 0.5]))
        out = nn.SampledSoftmaxLoss(2, 4, sampled_values=sv)(w, b, lab, x).tolist()
        W, B, X = w.tolist(), b.tolist(), x.tolist()
        for r, (xr, t) in enumerate(zip(X, [2, 0])):
            logit = lambda c: sum(p * q for p, q in zip(xr, W[c])) + B[c] - math.log(0.5)
            zs = [logit(t), logit(1), logit(3)]
            want = -(zs[0] - math.log(sum(math.exp(z) for z in zs)))
            self.assertAlmostEqual(out[r], want, places=5)
        drawn = nn.SampledSoftmaxLoss(2, 4, seed=3)(w, b, lab, x)
        self.assertEqual(drawn.shape, (2,))


class Train(unittest.TestCase):
    def test_jitted_step_with_a_loss_cell_equals_eager(self):
        def run(jitted):
            ms.set_seed(1)
            net = nn.Dense(3, 4)
            loss_fn = nn.MultiMarginLoss()
            wl = nn.WithLossCell(net, loss_fn)
            opt = nn.SGD(net.trainable_params(), 0.1)
            step = nn.TrainOneStepCell(wl, opt)
            if jitted:
                step = ms.jit(step)
            x = T([[0.1, 0.2, 0.3], [0.3, -0.1, 0.4], [1.0, 0.0, -1.0]])
            y = T([1, 3, 0], ms.int64)
            return [step(x, y).item() for _ in range(4)], [p.tolist() for p in net.trainable_params()]
        self.assertEqual(run(False), run(True))

    def test_jitted_ctc_step_equals_eager(self):
        def run(jitted):
            ms.set_seed(2)
            net = nn.Dense(3, 5)
            ctc = nn.CTCLoss(blank=4)

            def loss(x):
                lp = ops.log_softmax(net(x), 2)
                return ctc(lp, T([[1, 2], [0, 0]], ms.int64), T([4, 3], ms.int64), T([2, 1], ms.int64))
            fn = ms.value_and_grad(loss, None, net.trainable_params())
            if jitted:
                fn = ms.jit(fn)
            x = T([[[0.1, 0.2, 0.3], [0.3, -0.1, 0.4]]] * 4)
            # (value_and_grad's wrapper is one code object for every function it wraps: other
            # suites' entries live there too, so count what this call adds)
            before = ms.jit_stats(fn) if jitted else None
            v, g = fn(x)
            if jitted and not CAPTURE_ON:  # (no capture: fn ran eagerly)
                assert_ran_eagerly(self, fn)
            elif jitted:  # one graph holding the CTC forward and its gradient op, no break
                st = ms.jit_stats(fn)
                self.assertEqual((st["compiles"] - before["compiles"], st["breaks"] - before["breaks"]), (1, 0),
                                 st["break_reasons"])
                self.assertTrue(any("ctc_loss_grad(" in (e["graph"] or "") for e in st["entries"]))
            return v.item(), [gg.tolist() for gg in g]
        self.assertEqual(run(False), run(True))


if __name__ == "__main__":
    unittest.main()
