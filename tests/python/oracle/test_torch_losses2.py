"""pijit/ops/losses2.py and pijit/nn/loss2.py (issue 42) against PyTorch: CTC (values, log_alpha
and gradients through a log_softmax, every reduction, zero_infinity, blank other than 0, targets
longer than the input), the margin losses (multi-margin p=1/2 with weights, multilabel margin,
soft margin, triplet with swap), and the cells (CosineEmbeddingLoss, PoissonNLLLoss, FocalLoss via
its formula, ...), at seeded random inputs, float32 and float64.

The TensorFlow-style ops.CTCLoss has no torch twin: it is checked against torch's ctc_loss over
log_softmax(x) with blank C - 1 (the classic merge_repeated=True case) and its returned
gradient against torch's gradient with respect to the logits."""
import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
import unittest


try:
    import numpy as np
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import nn, ops


from torch_case import T, TorchCase


class Case(TorchCase):
    SEED = 11

    def ctc_case(self, T_, N, C, S, dtype):
        x = self.rs.randn(T_, N, C).astype(dtype)
        tl = self.rs.randint(0, S + 1, size=N)
        il = np.array([self.rs.randint(max(1, 2 * l + 1), T_ + 1) if 2 * l + 1 <= T_ else T_ for l in tl])
        tg = self.rs.randint(1, C, size=(N, S))
        tg[:, :2] = tg[:, :1]  # a repeated label: needs a blank between
        return x, tg.astype(np.int64), il.astype(np.int64), tl.astype(np.int64)


class CTC(Case):
    def test_values_log_alpha_and_gradients_match_torch(self):
        for dtype, tol in ((np.float64, 1e-9), (np.float32, 2e-5)):
            for reduction in ("none", "sum", "mean"):
                x, tg, il, tl = self.ctc_case(12, 4, 6, 4, dtype)
                xt = torch.tensor(x, requires_grad=True)
                lpt = torch.log_softmax(xt, 2)
                want = TF.ctc_loss(lpt, torch.tensor(tg), torch.tensor(il), torch.tensor(tl), blank=0,
                                   reduction=reduction)
                (want.sum() if reduction == "none" else want).backward()

                def f(xx):
                    loss, _ = ops.ctc_loss(ops.log_softmax(xx, 2), T(tg), T(il), T(tl), 0, reduction)
                    return loss
                got = f(T(x))
                # 'mean' divides and averages in float32 and casts back, as MindSpore's ops.ctc_loss
                rt = max(tol, 1e-6) if reduction == "mean" else tol
                self.close(got, want, rt, rt, "%s %s" % (dtype.__name__, reduction))
                g = pj.grad(lambda xx: f(xx).sum())(T(x))
                self.close(g, xt.grad, 10 * tol, 10 * tol, "grad %s %s" % (dtype.__name__, reduction))

    def test_log_alpha_matches_a_direct_recursion(self):
        x, tg, il, tl = self.ctc_case(7, 2, 4, 2, np.float64)
        lp = torch.log_softmax(torch.tensor(x), 2).numpy()
        _, la = ops.CTCLossV2()(T(lp), T(tg), T(il), T(tl))
        la = la.asnumpy()
        self.assertEqual(la.shape, (2, 7, 5))
        for b in range(2):
            ext = [0]
            for v in tg[b, :tl[b]]:
                ext += [int(v), 0]
            U = len(ext)
            a = np.full((il[b], U), -np.inf)
            a[0, 0] = lp[0, b, 0]
            if U > 1:
                a[0, 1] = lp[0, b, ext[1]]
            for t in range(1, il[b]):
                for s in range(U):
                    terms = [a[t - 1, s]] + ([a[t - 1, s - 1]] if s else []) + \
                        ([a[t - 1, s - 2]] if s >= 2 and ext[s] != 0 and ext[s] != ext[s - 2] else [])
                    a[t, s] = np.logaddexp.reduce(terms) + lp[t, b, ext[s]]
            np.testing.assert_allclose(la[b, :il[b], :U], a, rtol=1e-12)
            self.assertTrue(np.all(np.isneginf(la[b, il[b]:])))
            self.assertTrue(np.all(np.isneginf(la[b, :, U:])))

    def test_blank_elsewhere_zero_infinity_and_impossible_targets(self):
        x = self.rs.randn(3, 2, 5)
        tg = np.array([[1, 1, 2], [2, 3, 0]], dtype=np.int64)  # sample 0 needs 5 frames: impossible
        il, tl = np.array([3, 3]), np.array([3, 2])
        for zero_inf in (False, True):
            xt = torch.tensor(x, requires_grad=True)
            want = TF.ctc_loss(torch.log_softmax(xt, 2), torch.tensor(tg), torch.tensor(il), torch.tensor(tl),
                               blank=4, reduction="none", zero_infinity=zero_inf)
            want.sum().backward()
            f = lambda xx: ops.ctc_loss(ops.log_softmax(xx, 2), T(tg), T(il), T(tl), 4, "none", zero_inf)[0]
            got = f(T(x))
            self.close(got, want, 1e-9, 1e-9)
            g = pj.grad(lambda xx: f(xx).sum())(T(x)).asnumpy()
            if zero_inf:
                np.testing.assert_allclose(g, xt.grad.numpy(), rtol=1e-8, atol=1e-9)
            else:
                self.assertTrue(np.isinf(got.asnumpy()[0]))
                np.testing.assert_allclose(g[:, 1], xt.grad.numpy()[:, 1], rtol=1e-8, atol=1e-9)

    def test_nn_ctcloss_batched_and_unbatched(self):
        x, tg, il, tl = self.ctc_case(10, 3, 5, 3, np.float32)
        lp = torch.log_softmax(torch.tensor(x), 2)
        for reduction in ("mean", "sum", "none"):
            want = torch.nn.CTCLoss(reduction=reduction)(lp, torch.tensor(tg), torch.tensor(il), torch.tensor(tl))
            got = nn.CTCLoss(reduction=reduction)(T(lp.numpy()), T(tg), T(il), T(tl))
            self.close(got, want, 2e-5, 2e-5)
        want = torch.nn.CTCLoss(reduction="none")(lp[:, 0], torch.tensor(tg[0, :tl[0]]), (int(il[0]),), (int(tl[0]),))
        got = nn.CTCLoss(reduction="none")(T(lp[:, 0].numpy()), T(tg[0, :tl[0]]), int(il[0]), int(tl[0]))
        self.close(got, want, 2e-5, 2e-5)

    def test_tensorflow_style_ctcloss_matches_torch_over_log_softmax(self):
        Tm, N, C = 8, 3, 5
        x = self.rs.randn(Tm, N, C)
        labels = [[0, 1, 1], [2], [3, 0]]
        seq = np.array([8, 5, 6], dtype=np.int32)
        idx = [[b, k] for b, lab in enumerate(labels) for k in range(len(lab))]
        vals = [v for lab in labels for v in lab]
        loss, grad = ops.CTCLoss()(T(x), T(np.array(idx, dtype=np.int64)), T(np.array(vals, dtype=np.int32)),
                                   T(seq))
        for b in range(N):
            xt = torch.tensor(x[:seq[b], b:b + 1], requires_grad=True)
            w = TF.ctc_loss(torch.log_softmax(xt, 2), torch.tensor([labels[b]]), (int(seq[b]),), (len(labels[b]),),
                            blank=C - 1, reduction="sum")
            w.backward()
            self.close(loss.asnumpy()[b], w, 1e-9, 1e-9)
            self.close(grad.asnumpy()[:seq[b], b], xt.grad[:, 0], 1e-8, 1e-9)
            self.assertTrue(np.all(grad.asnumpy()[seq[b]:, b] == 0))
        # the loss is differentiable: its gradient times the output gradient
        dx = pj.grad(lambda xx: (ops.CTCLoss()(xx, T(np.array(idx, dtype=np.int64)),
                                               T(np.array(vals, dtype=np.int32)), T(seq))[0] * T([1.0, 2.0, 3.0])).sum())(T(x))
        np.testing.assert_allclose(dx.asnumpy(), grad.asnumpy() * np.array([1.0, 2.0, 3.0])[None, :, None],
                                   rtol=1e-12)


class Margin(Case):
    def grads(self, fn_pj, fn_t, *arrays, tol=1e-6):
        ts = [torch.tensor(a, requires_grad=True) for a in arrays]
        want = fn_t(*ts)
        want.sum().backward()
        got = fn_pj(*[T(a) for a in arrays])
        self.close(got, want, tol, tol)
        g = pj.grad(lambda *xs: fn_pj(*xs).sum(), grad_position=tuple(range(len(arrays))))(*[T(a) for a in arrays])
        g = g if isinstance(g, tuple) else (g,)
        for gg, t in zip(g, ts):
            self.close(gg, t.grad, tol, tol)

    def test_multi_margin_loss(self):
        x = self.rs.randn(5, 4)
        y = self.rs.randint(0, 4, size=5).astype(np.int64)
        w = self.rs.uniform(0.5, 2, size=4)
        for p in (1, 2):
            for reduction in ("none", "mean", "sum"):
                for weight in (None, w):
                    self.grads(lambda a: ops.MultiMarginLoss(p, 0.7, reduction)(a, T(y), None if weight is None else T(weight)),
                               lambda a: TF.multi_margin_loss(a, torch.tensor(y), p, 0.7,
                                                              None if weight is None else torch.tensor(weight),
                                                              reduction=reduction), x)
        self.close(ops.multi_margin_loss(T(x), T(y), margin=2), TF.multi_margin_loss(torch.tensor(x), torch.tensor(y), margin=2.0))
        self.close(nn.MultiMarginLoss(weight=T(w))(T(x), T(y)),
                   torch.nn.MultiMarginLoss(weight=torch.tensor(w))(torch.tensor(x), torch.tensor(y)))

    def test_multilabel_margin_loss(self):
        x = self.rs.randn(4, 5)
        y = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1], [4, 4, -1, 0, 0]], dtype=np.int64)
        for reduction in ("none", "mean", "sum"):
            self.grads(lambda a: ops.MultilabelMarginLoss(reduction)(a, T(y.astype(np.int32)))[0],
                       lambda a: TF.multilabel_margin_loss(a, torch.tensor(y), reduction=reduction), x)
        _, is_t = ops.MultilabelMarginLoss()(T(x), T(y.astype(np.int32)))
        self.assertEqual(is_t.tolist(), [[1, 0, 0, 1, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]])
        self.close(ops.multilabel_margin_loss(T(x[0]), T(y[0].astype(np.int32))),
                   TF.multilabel_margin_loss(torch.tensor(x[0]), torch.tensor(y[0])))

    def test_soft_margin_and_triplet(self):
        x = self.rs.randn(3, 4) * 3
        y = np.sign(self.rs.randn(3, 4))
        for reduction in ("none", "mean", "sum"):
            self.grads(lambda a: ops.soft_margin_loss(a, T(y), reduction),
                       lambda a: TF.soft_margin_loss(a, torch.tensor(y), reduction=reduction), x)
            self.close(nn.SoftMarginLoss(reduction)(T(x), T(y)), TF.soft_margin_loss(torch.tensor(x), torch.tensor(y),
                                                                                   reduction=reduction))
        a, p_, n_ = self.rs.randn(5, 3), self.rs.randn(5, 3), self.rs.randn(5, 3)
        for p in (1, 2, 3):
            for swap in (False, True):
                self.grads(lambda u, v, w: ops.TripletMarginLoss(p, swap, 1e-6, "none")(u, v, w, pj.Tensor(0.8)),
                           lambda u, v, w: TF.triplet_margin_loss(u, v, w, margin=0.8, p=p, swap=swap, reduction="none"),
                           a, p_, n_, tol=1e-5)
        self.close(nn.TripletMarginLoss(margin=0.5)(T(a), T(p_), T(n_)),
                   TF.triplet_margin_loss(torch.tensor(a), torch.tensor(p_), torch.tensor(n_), margin=0.5), 1e-6, 1e-6)


class Cells(Case):
    def test_poisson_cosine_and_the_wrappers(self):
        x, y = self.rs.randn(4, 3), self.rs.uniform(0, 4, size=(4, 3))
        for log_input in (True, False):
            for full in (False, True):
                xin = x if log_input else np.abs(x)
                want = torch.nn.PoissonNLLLoss(log_input, full)(torch.tensor(xin), torch.tensor(y))
                self.close(nn.PoissonNLLLoss(log_input, full)(T(xin), T(y)), want)
        a, b = self.rs.randn(5, 3), self.rs.randn(5, 3)
        lab = np.array([1, -1, 1, -1, -1])
        for reduction in ("none", "mean", "sum"):
            self.close(nn.CosineEmbeddingLoss(0.2, reduction)(T(a), T(b), T(lab)),
                       torch.nn.CosineEmbeddingLoss(0.2, reduction=reduction)(torch.tensor(a), torch.tensor(b),
                                                                              torch.tensor(lab)))
            self.close(nn.HingeEmbeddingLoss(0.5, reduction)(T(a), T(np.sign(b))),
                       torch.nn.HingeEmbeddingLoss(0.5, reduction=reduction)(torch.tensor(a), torch.tensor(np.sign(b))))
            self.close(nn.MarginRankingLoss(0.1, reduction)(T(a), T(b), T(np.sign(b))),
                       torch.nn.MarginRankingLoss(0.1, reduction=reduction)(torch.tensor(a), torch.tensor(b),
                                                                            torch.tensor(np.sign(b))))
            self.close(nn.HuberLoss(reduction, 0.7)(T(a), T(b)),
                       torch.nn.HuberLoss(reduction, 0.7)(torch.tensor(a), torch.tensor(b)))
            self.close(nn.MultiLabelSoftMarginLoss(reduction=reduction)(T(a), T((b > 0).astype(np.float64))),
                       torch.nn.MultiLabelSoftMarginLoss(reduction=reduction)(torch.tensor(a),
                                                                              torch.tensor((b > 0).astype(np.float64))))
            v = self.rs.uniform(0.1, 2, size=(5, 3))
            self.close(nn.GaussianNLLLoss(reduction=reduction)(T(a), T(b), T(v)),
                       torch.nn.GaussianNLLLoss(reduction=reduction)(torch.tensor(a), torch.tensor(b), torch.tensor(v)))
        lp = torch.log_softmax(torch.tensor(a), 1)
        q = torch.softmax(torch.tensor(b), 1)
        for reduction in ("sum", "batchmean", "none", "mean"):
            self.close(nn.KLDivLoss(reduction)(T(lp.numpy()), T(q.numpy())),
                       torch.nn.KLDivLoss(reduction=reduction)(lp, q))
        self.close(nn.RMSELoss()(T(a), T(b)), torch.sqrt(TF.mse_loss(torch.tensor(a), torch.tensor(b))))

    def test_focal_loss_formula(self):
        x = self.rs.randn(4, 3, 5)
        y = self.rs.randint(0, 3, size=(4, 1, 5))
        w = np.array([0.5, 1.0, 2.0])
        lp = torch.log_softmax(torch.tensor(x), 1)
        g = torch.gather(lp, 1, torch.tensor(y))[:, 0]
        wt = torch.tensor(w)[torch.tensor(y[:, 0])]
        want = (-(1 - g.exp()) ** 2.0 * g * wt).mean(1).mean()
        self.close(nn.FocalLoss(T(w), 2.0)(T(x), T(y.astype(np.int32))), want, 1e-5, 1e-6)
        hot = np.eye(3)[y[:, 0]].transpose(0, 2, 1)  # (N, C, S)
        want2 = (-(1 - lp.exp()) ** 1.5 * torch.tensor(hot) * lp).mean(-1).sum()
        self.close(nn.FocalLoss(gamma=1.5, reduction="sum")(T(x), T(hot.astype(np.float32))), want2, 1e-5, 1e-6)


if __name__ == "__main__":
    unittest.main()
