"""MindSpore primitives of issue 42 (pijit/ops/primitives2.py) against PyTorch and numpy on random
inputs: GatherD, ScatterNd, Einsum, LayerNorm, the resizes, MaxPool 'same', the softmax and NLL
cross-entropies, KLDivLoss, CumSum's exclusive/reverse forms and StridedSlice's masks (against
numpy's subscripts). Values come from seeded numpy draws; torch is Debian's python3-torch."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_torch

try:
    import numpy as np
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import ops


def rand(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-2, 2, size=shape).astype("float32")


class Case(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)

    def check(self, got, want, rtol=1e-5, atol=1e-6, msg=""):
        if isinstance(want, torch.Tensor):
            want = want.detach().numpy()
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol, err_msg=msg)


class Indexing(Case):
    def test_gather_d(self):
        x = rand(3, 4, 5, seed=1)
        rs = np.random.RandomState(2)
        for dim in (0, 1, 2):
            shape = [3, 4, 5]
            shape[dim] = 6
            idx = rs.randint(0, x.shape[dim], size=shape)
            want = torch.gather(torch.from_numpy(x), dim, torch.from_numpy(idx))
            self.check(ops.GatherD()(pj.Tensor(x), dim, pj.Tensor(idx)), want, msg="dim %d" % dim)

    def test_scatter_nd_adds_repeats(self):
        rs = np.random.RandomState(3)
        for k in (1, 2):
            idx = rs.randint(0, 3, size=(7, k))
            upd = rand(7, 4, seed=4)
            shape = (3, 4) if k == 1 else (3, 3, 4)
            want = torch.zeros(shape)
            want.index_put_(tuple(torch.from_numpy(idx[:, i]) for i in range(k)), torch.from_numpy(upd),
                            accumulate=True)
            self.check(ops.ScatterNd()(pj.Tensor(idx), pj.Tensor(upd), shape), want, rtol=1e-5, atol=1e-5)

    def test_strided_slice_masks_against_numpy(self):
        x = np.arange(3 * 4 * 5 * 6).reshape(3, 4, 5, 6)
        rs = np.random.RandomState(5)
        seen = {"sliced": 0, "refused": 0}
        for trial in range(200):
            n = rs.randint(1, 5)
            begin = tuple(int(v) for v in rs.randint(-7, 7, n))
            end = tuple(int(v) for v in rs.randint(-7, 7, n))
            strides = tuple(int(v) for v in rs.choice([-3, -2, -1, 1, 2, 3], n))
            bm, em, nm, sm = (int(v) for v in rs.randint(0, 1 << n, 4))
            el = int(1 << rs.randint(0, n)) if rs.rand() < 0.3 else 0
            items, ok = [], True
            for i in range(n):  # numpy's subscript, built independently from the masks
                bit = 1 << i
                if el & bit:
                    items.append(Ellipsis)
                elif nm & bit:
                    items.append(None)
                elif sm & bit:
                    items.append(begin[i])
                else:
                    items.append(slice(None if bm & bit else begin[i], None if em & bit else end[i], strides[i]))
            try:
                want = x[tuple(items)]
            except IndexError:
                ok = False
            if sum(1 for it in items if it is not None and it is not Ellipsis) > 4:
                ok = False
            prim = ops.StridedSlice(bm, em, el, nm, sm)
            if not ok:
                with self.assertRaises(ValueError):
                    prim(pj.Tensor(x), begin, end, strides)
                seen["refused"] += 1
                continue
            got = prim(pj.Tensor(x), begin, end, strides)
            self.assertEqual(got.shape, want.shape, (begin, end, strides, bm, em, el, nm, sm))
            self.assertEqual(np.asarray(got).tolist(), want.tolist())
            seen["sliced"] += 1
        self.assertGreater(seen["sliced"], 100, seen)  # both paths exercised
        self.assertGreater(seen["refused"], 5, seen)


class Math(Case):
    def test_einsum(self):
        a, b, c = rand(2, 3, 4, seed=6), rand(2, 4, 5, seed=7), rand(3, 3, seed=8)
        for eq, args in (("bij,bjk->bik", (a, b)), ("bij->jb", (a,)), ("ii->i", (c,)), ("ii", (c,)),
                         ("bij,bjk", (a, b)), ("ij,kj->ik", (c, c)), ("i,j->ij", (c[0], c[1])),
                         ("bij,bij->b", (a, a))):
            want = torch.einsum(eq, *[torch.from_numpy(v) for v in args])
            self.check(ops.einsum(eq, *[pj.Tensor(v) for v in args]), want, rtol=1e-4, atol=1e-5, msg=eq)

    def test_cumsum_exclusive_reverse(self):
        x = rand(4, 5, seed=9)
        t = torch.from_numpy(x)
        inc = torch.cumsum(t, 1)
        rev = torch.flip(torch.cumsum(torch.flip(t, [1]), 1), [1])
        for (e, r), want in (((False, False), inc), ((True, False), inc - t), ((False, True), rev),
                             ((True, True), rev - t)):
            self.check(ops.CumSum(e, r)(pj.Tensor(x), 1), want, rtol=1e-5, atol=1e-5, msg=str((e, r)))


class NN(Case):
    def test_layer_norm(self):
        x, g, b = rand(2, 3, 4, seed=10), rand(3, 4, seed=11), rand(3, 4, seed=12)
        out, mean, var = ops.LayerNorm(1, 1, 1e-5)(pj.Tensor(x), pj.Tensor(g), pj.Tensor(b))
        t = torch.from_numpy(x)
        self.check(out, TF.layer_norm(t, (3, 4), torch.from_numpy(g), torch.from_numpy(b), 1e-5), rtol=1e-4, atol=1e-5)
        self.check(mean, t.mean((1, 2), keepdim=True), atol=1e-6)
        self.check(var, t.var((1, 2), unbiased=False, keepdim=True), atol=1e-6)

    def test_resizes(self):
        x = rand(2, 3, 5, 7, seed=13)
        t = torch.from_numpy(x)
        for size in ((9, 4), (5, 14), (3, 3)):
            self.check(ops.ResizeBilinear(size, half_pixel_centers=True)(pj.Tensor(x)),
                       TF.interpolate(t, size, mode="bilinear", align_corners=False), rtol=1e-5, atol=1e-5)
            self.check(ops.ResizeBilinear(size, align_corners=True)(pj.Tensor(x)),
                       TF.interpolate(t, size, mode="bilinear", align_corners=True), rtol=1e-5, atol=1e-5)
            # TensorFlow's legacy nearest (floor(i * in / out)) is torch's 'nearest'
            self.check(ops.ResizeNearestNeighbor(size)(pj.Tensor(x)), TF.interpolate(t, size, mode="nearest"))

    def test_max_pool_same(self):
        x = rand(2, 3, 7, 8, seed=14)
        for k, s in ((3, 2), (2, 2), (3, 1), (4, 3)):
            outs = [-(-n // s) for n in (7, 8)]
            pads = [max((o - 1) * s + k - n, 0) for o, n in zip(outs, (7, 8))]
            padded = TF.pad(torch.from_numpy(x), (pads[1] // 2, pads[1] - pads[1] // 2,
                                                  pads[0] // 2, pads[0] - pads[0] // 2), value=float("-inf"))
            self.check(ops.MaxPool(k, s, "same")(pj.Tensor(x)), TF.max_pool2d(padded, k, s), msg=str((k, s)))

    def test_cross_entropies(self):
        logits, labels = rand(6, 5, seed=15), np.random.RandomState(16).randint(0, 5, 6)
        t, y = torch.from_numpy(logits), torch.from_numpy(labels)
        self.check(ops.SparseSoftmaxCrossEntropyWithLogits()(pj.Tensor(logits), pj.Tensor(labels)),
                   TF.cross_entropy(t, y), rtol=1e-5)
        tr = t.clone().requires_grad_(True)
        TF.cross_entropy(tr, y).backward()
        self.check(ops.SparseSoftmaxCrossEntropyWithLogits(True)(pj.Tensor(logits), pj.Tensor(labels)),
                   tr.grad, atol=1e-6)
        probs = np.random.RandomState(17).dirichlet(np.ones(5), 6).astype("float32")
        loss, d = ops.SoftmaxCrossEntropyWithLogits()(pj.Tensor(logits), pj.Tensor(probs))
        self.check(loss, TF.cross_entropy(t, torch.from_numpy(probs), reduction="none"), rtol=1e-5)
        self.check(d, torch.softmax(t, -1) - torch.from_numpy(probs), atol=1e-6)
        w = np.random.RandomState(18).uniform(0.5, 2, 5).astype("float32")
        lp = torch.log_softmax(t, -1)
        loss, total = ops.NLLLoss()(pj.Tensor(lp.numpy()), pj.Tensor(labels), pj.Tensor(w))
        self.check(loss, TF.nll_loss(lp, y, torch.from_numpy(w)), rtol=1e-5)
        self.check(total, torch.from_numpy(w)[y].sum(), rtol=1e-6)
        self.check(ops.KLDivLoss("batchmean")(pj.Tensor(lp.numpy()), pj.Tensor(probs)),
                   TF.kl_div(lp, torch.from_numpy(probs), reduction="batchmean"), rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
