"""pijit/ops/detection.py (issue 42) against PyTorch and hand-written numpy references.

- grid_sample (2-D and 3-D, bilinear/nearest, zeros/border/reflection, align_corners) and
  affine_grid against torch.nn.functional, values and gradients (input, grid, theta).
- NMSWithMask, IOU, ROIAlign (values and the features' gradient), CropAndResize, ResizeBicubic,
  ResizeArea and the MatrixDiag*V3 family against numpy re-statements of MindSpore's (and, where
  MindSpore follows it, TensorFlow's) kernels written here from their documented rules; ROIAlign's
  gradient against torch autograd through a torch re-statement of the same sampling.
- CumulativeLogsumexp against torch.logcumsumexp (values and gradient), TridiagonalMatMul against a
  dense matmul, EuclideanNorm against numpy.
"""
import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
import math
import unittest

from requires import require_torch

try:
    import numpy as np
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover
    torch = None

import pijit as ms
from pijit import ops


def T(a, dtype=None):
    return ms.Tensor(np.ascontiguousarray(a), dtype)


class Case(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)
        self.rs = np.random.RandomState(11)

    def close(self, got, want, rtol=1e-6, atol=1e-6, msg=""):
        got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
        want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
        self.assertEqual(got.shape, want.shape, msg)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=msg)


# ---- grid sampling ------------------------------------------------------------------------------

class GridSample(Case):
    def cases(self):
        for nd in (2, 3):
            for mode in ("bilinear", "nearest"):
                for pad in ("zeros", "border", "reflection"):
                    for ac in (False, True):
                        yield nd, mode, pad, ac

    def inputs(self, nd):
        if nd == 2:
            x = self.rs.randn(2, 3, 5, 7)
            g = self.rs.uniform(-1.4, 1.4, size=(2, 4, 6, 2))
        else:
            x = self.rs.randn(2, 2, 4, 5, 3)
            g = self.rs.uniform(-1.4, 1.4, size=(2, 3, 4, 2, 3))
        return x, g

    def test_values_and_gradients_match_torch(self):
        for nd, mode, pad, ac in self.cases():
            with self.subTest(nd=nd, mode=mode, padding=pad, align_corners=ac):
                x, g = self.inputs(nd)
                tx = torch.tensor(x, requires_grad=True)
                tg = torch.tensor(g, requires_grad=True)
                want = TF.grid_sample(tx, tg, mode=mode, padding_mode=pad, align_corners=ac)
                w = self.rs.randn(*want.shape)
                (want * torch.tensor(w)).sum().backward()

                def loss(a, b):
                    return (ops.grid_sample(a, b, mode, pad, ac) * T(w)).sum()
                got = ops.grid_sample(T(x), T(g), mode, pad, ac)
                self.close(got, want, 1e-12, 1e-12)
                gx, gg = ms.grad(loss, grad_position=(0, 1))(T(x), T(g))
                self.close(gx, tx.grad, 1e-12, 1e-12, "d input")
                if mode == "bilinear":
                    self.close(gg, tg.grad, 1e-10, 1e-10, "d grid")
                else:
                    self.close(gg, np.zeros_like(g), 0, 0, "d grid (nearest)")

    def test_float32_and_primitives(self):
        x, g = self.inputs(2)
        want = TF.grid_sample(torch.tensor(x, dtype=torch.float32), torch.tensor(g, dtype=torch.float32),
                              mode="bilinear", padding_mode="border", align_corners=True)
        got = ops.GridSampler2D("bilinear", "border", True)(T(x, ms.float32), T(g, ms.float32))
        self.close(got, want, 1e-5, 1e-6)
        x3, g3 = self.inputs(3)
        want = TF.grid_sample(torch.tensor(x3), torch.tensor(g3), mode="nearest", padding_mode="zeros",
                              align_corners=False)
        self.close(ops.GridSampler3D("nearest")(T(x3), T(g3)), want, 0, 0)

    def test_affine_grid_and_stn_gradient_match_torch(self):
        for nd, size in ((2, (2, 3, 4, 5)), (3, (2, 1, 3, 4, 2))):
            for ac in (False, True):
                with self.subTest(nd=nd, align_corners=ac):
                    theta = self.rs.randn(2, nd, nd + 1) * 0.5
                    tt = torch.tensor(theta, requires_grad=True)
                    want = TF.affine_grid(tt, size, align_corners=ac)
                    self.close(ops.affine_grid(T(theta), size, ac), want, 1e-12, 1e-12)
                    self.close(ops.AffineGrid(ac)(T(theta), size), want, 1e-12, 1e-12)
                    # a spatial transformer: sample the input at the affine grid, gradient in theta
                    x = self.rs.randn(*size)
                    TF.grid_sample(torch.tensor(x), want, align_corners=ac).square().sum().backward()

                    def stn(th):
                        return ops.grid_sample(T(x), ops.affine_grid(th, size, ac), align_corners=ac).square().sum()
                    self.close(ms.grad(stn)(T(theta)), tt.grad, 1e-10, 1e-10, "d theta")


# ---- NMS, IOU ---------------------------------------------------------------------------------------

def nms_ref(b, thr):
    order = np.argsort(-b[:, 4], kind="stable")
    s = b[order]
    keep = np.ones(len(s), bool)
    for i in range(len(s)):
        if not keep[i]:
            continue
        for j in range(i + 1, len(s)):
            if not keep[j]:
                continue
            w = max(min(s[i, 2], s[j, 2]) - max(s[i, 0], s[j, 0]), 0)
            h = max(min(s[i, 3], s[j, 3]) - max(s[i, 1], s[j, 1]), 0)
            inter = w * h
            ai = (s[i, 2] - s[i, 0]) * (s[i, 3] - s[i, 1])
            aj = (s[j, 2] - s[j, 0]) * (s[j, 3] - s[j, 1])
            if inter / (ai + aj - inter) > thr:
                keep[j] = False
    return s, keep


class Boxes(Case):
    def boxes(self, n):
        xy = self.rs.uniform(0, 50, size=(n, 2))
        wh = self.rs.uniform(5, 30, size=(n, 2))
        return np.concatenate([xy, xy + wh, self.rs.uniform(0, 1, size=(n, 1))], 1)

    def test_nms_with_mask_matches_greedy_reference(self):
        for n, thr in ((1, 0.5), (7, 0.1), (40, 0.3), (64, 0.7)):
            with self.subTest(n=n, thr=thr):
                b = self.boxes(n).astype(np.float32)
                sb, keep = nms_ref(b.astype(np.float64), thr)
                out, idx, mask = ops.NMSWithMask(thr)(T(b))
                self.close(out, sb.astype(np.float32), 0, 0)
                self.assertEqual(idx.asnumpy().tolist(), list(range(n)))
                self.assertEqual(idx.dtype, ms.int32)
                self.assertEqual(mask.asnumpy().tolist(), keep.tolist())

    def test_iou_and_iof_match_numpy(self):
        a, g = self.boxes(6)[:, :4], self.boxes(4)[:, :4]
        ix0 = np.maximum(a[None, :, 0], g[:, None, 0])
        iy0 = np.maximum(a[None, :, 1], g[:, None, 1])
        ix1 = np.minimum(a[None, :, 2], g[:, None, 2])
        iy1 = np.minimum(a[None, :, 3], g[:, None, 3])
        inter = np.maximum(ix1 - ix0 + 1, 0) * np.maximum(iy1 - iy0 + 1, 0)
        area_a = (a[:, 2] - a[:, 0] + 1) * (a[:, 3] - a[:, 1] + 1)
        area_g = (g[:, 2] - g[:, 0] + 1) * (g[:, 3] - g[:, 1] + 1)
        want = inter / (area_a[None, :] + area_g[:, None] - inter + 1e-10)
        self.close(ops.iou(T(a, ms.float32), T(g, ms.float32)), want.astype(np.float32), 1e-5, 1e-7)
        self.close(ops.IOU("iof")(T(a, ms.float32), T(g, ms.float32)),
                   (inter / (area_g[:, None] + 1e-10)).astype(np.float32), 1e-5, 1e-7)


# ---- ROIAlign ---------------------------------------------------------------------------------------

def roi_align_ref(x, rois, ph, pw, scale, sample_num, end_mode):
    N, C, H, W = x.shape
    out = np.zeros((len(rois), C, ph, pw))
    for r, roi in enumerate(rois):
        b = int(np.rint(roi[0] + 0.00007))
        sw, sh = roi[1] * scale, roi[2] * scale
        rw, rh = (roi[3] + end_mode) * scale - sw, (roi[4] + end_mode) * scale - sh
        if end_mode == 0:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = sample_num if sample_num > 0 else int(np.floor(rh / ph))
        gw = sample_num if sample_num > 0 else int(np.floor(rw / pw))
        for i in range(ph):
            for j in range(pw):
                acc = np.zeros(C)
                for iy in range(gh):
                    y = sh + i * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        xx = sw + j * bw + (ix + 0.5) * bw / gw
                        if y < -1 or y > H or xx < -1 or xx > W:
                            continue
                        yy, xc = max(y, 0.0), max(xx, 0.0)
                        y0 = 0 if yy <= 0.00007 else int(np.floor(yy))
                        x0 = 0 if xc <= 0.00007 else int(np.floor(xc))
                        if y0 >= H - 1:
                            y0 = y1 = H - 1
                            yy = float(y0)
                        else:
                            y1 = y0 + 1
                        if x0 >= W - 1:
                            x0 = x1 = W - 1
                            xc = float(x0)
                        else:
                            x1 = x0 + 1
                        ly, lx = yy - y0, xc - x0
                        acc += ((1 - ly) * (1 - lx) * x[b, :, y0, x0] + (1 - ly) * lx * x[b, :, y0, x1]
                                + ly * (1 - lx) * x[b, :, y1, x0] + ly * lx * x[b, :, y1, x1])
                out[r, :, i, j] = acc / (gh * gw) if gh * gw else 0
    return out


class RoiAlign(Case):
    def setUp(self):
        super().setUp()
        self.x = self.rs.randn(2, 3, 9, 11)
        self.rois = np.array([[0, 1.2, 0.5, 6.3, 7.9], [1, -2.0, -1.5, 4.0, 3.0], [1, 3.0, 2.0, 3.5, 2.2],
                              [0, 8.0, 5.0, 14.0, 12.0], [1, 0.0, 0.0, 20.0, 18.0]])

    def test_values_match_reference(self):
        for ph, pw, scale, sn, em in ((2, 2, 1.0, 2, 1), (3, 2, 0.5, 0, 1), (2, 3, 1.0, 3, 0), (1, 1, 0.25, 0, 0)):
            with self.subTest(pooled=(ph, pw), scale=scale, sample_num=sn, roi_end_mode=em):
                want = roi_align_ref(self.x, self.rois, ph, pw, scale, sn, em)
                got = ops.ROIAlign(ph, pw, scale, sn, em)(T(self.x), T(self.rois))
                self.close(got, want, 1e-12, 1e-12)
                got32 = ops.ROIAlign(ph, pw, scale, sn, em)(T(self.x, ms.float32), T(self.rois, ms.float32))
                self.close(got32, want, 1e-5, 1e-5)

    def test_gradient_matches_torch_autograd_of_the_same_sampling(self):
        ph, pw, scale, sn, em = 3, 2, 0.75, 2, 1
        N, C, H, W = self.x.shape
        tx = torch.tensor(self.x, requires_grad=True)
        # the reference's sampling written as gathers, so autograd gives d out / d x
        outs = []
        for roi in self.rois:
            b = int(np.rint(roi[0]))
            sw, sh = roi[1] * scale, roi[2] * scale
            rw, rh = (roi[3] + em) * scale - sw, (roi[4] + em) * scale - sh
            bh, bw = rh / ph, rw / pw
            cells = []
            for i in range(ph):
                for j in range(pw):
                    acc = torch.zeros(C, dtype=torch.float64)
                    for iy in range(sn):
                        y = sh + i * bh + (iy + 0.5) * bh / sn
                        for ix in range(sn):
                            xx = sw + j * bw + (ix + 0.5) * bw / sn
                            if y < -1 or y > H or xx < -1 or xx > W:
                                continue
                            yy, xc = max(y, 0.0), max(xx, 0.0)
                            y0, x0 = int(np.floor(yy)), int(np.floor(xc))
                            y1, x1 = min(y0 + 1, H - 1), min(x0 + 1, W - 1)
                            if y0 >= H - 1:
                                y0 = y1 = H - 1
                                yy = float(y0)
                            if x0 >= W - 1:
                                x0 = x1 = W - 1
                                xc = float(x0)
                            ly, lx = yy - y0, xc - x0
                            acc = acc + ((1 - ly) * (1 - lx) * tx[b, :, y0, x0] + (1 - ly) * lx * tx[b, :, y0, x1]
                                         + ly * (1 - lx) * tx[b, :, y1, x0] + ly * lx * tx[b, :, y1, x1])
                    cells.append(acc / (sn * sn))
            outs.append(torch.stack(cells, -1).reshape(C, ph, pw))
        want = torch.stack(outs)
        self.close(ops.ROIAlign(ph, pw, scale, sn, em)(T(self.x), T(self.rois)), want, 1e-12, 1e-12)
        w = self.rs.randn(*want.shape)
        (want * torch.tensor(w)).sum().backward()
        roi_align = ops.ROIAlign(ph, pw, scale, sn, em)
        got = ms.grad(lambda a: (roi_align(a, T(self.rois)) * T(w)).sum())(T(self.x))
        self.close(got, tx.grad, 1e-12, 1e-12)


# ---- CropAndResize, resizing --------------------------------------------------------------------

def crop_ref(img, boxes, idx, size, method, extrap):
    B, H, W, C = img.shape
    ch, cw = size
    f = np.float32  # TensorFlow's kernel computes positions in float: so does the reference
    out = np.zeros((len(boxes), ch, cw, C), np.float32)
    for r, (y1, x1, y2, x2) in enumerate(boxes):
        im = img[idx[r]]
        hs = (y2 - y1) * f(H - 1) / f(ch - 1) if ch > 1 else f(0)
        ws = (x2 - x1) * f(W - 1) / f(cw - 1) if cw > 1 else f(0)
        for y in range(ch):
            in_y = y1 * f(H - 1) + f(y) * hs if ch > 1 else f(0.5) * (y1 + y2) * f(H - 1)
            for x in range(cw):
                in_x = x1 * f(W - 1) + f(x) * ws if cw > 1 else f(0.5) * (x1 + x2) * f(W - 1)
                if not (0 <= in_y <= H - 1 and 0 <= in_x <= W - 1):
                    out[r, y, x] = extrap
                elif method == "nearest":
                    out[r, y, x] = im[int(np.floor(in_y + f(0.5))), int(np.floor(in_x + f(0.5)))]  # (roundf: >= 0 here)
                else:
                    t, bt = int(np.floor(in_y)), int(np.ceil(in_y))
                    lf, rt = int(np.floor(in_x)), int(np.ceil(in_x))
                    fy, fx = in_y - t, in_x - lf
                    top = im[t, lf] + (im[t, rt] - im[t, lf]) * fx
                    bot = im[bt, lf] + (im[bt, rt] - im[bt, lf]) * fx
                    out[r, y, x] = top + (bot - top) * fy
    return out


def cubic_ref_1d(n_in, n_out, ac, hp):
    a = -0.5 if hp else -0.75
    scale = (n_in - 1) / (n_out - 1) if ac and n_out > 1 else n_in / n_out
    m = np.zeros((n_out, n_in))

    def k(t):
        t = abs(t)
        if t <= 1:
            return ((a + 2) * t - (a + 3)) * t * t + 1
        if t < 2:
            return ((t - 5) * t + 8) * t * a - 4 * a
        return 0.0
    for o in range(n_out):
        src = (o + 0.5) * scale - 0.5 if hp else o * scale
        base = int(np.floor(src))
        d = round((src - base) * 1024) / 1024
        taps = [(base + t, k(d - t)) for t in (-1, 0, 1, 2)]
        if hp:
            taps = [(i, w if 0 <= i < n_in else 0.0) for i, w in taps]
            s = sum(w for _, w in taps)
            taps = [(i, w / s) for i, w in taps]
        for i, w in taps:
            m[o, min(max(i, 0), n_in - 1)] += w
    return m


class Resizing(Case):
    def test_crop_and_resize_matches_reference(self):
        img = self.rs.uniform(0, 255, size=(2, 6, 8, 3)).astype(np.float32)
        boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.9, 0.7, 0.1, 0.0], [-0.2, -0.1, 1.3, 1.1], [0.5, 0.5, 0.5, 0.5]],
                         np.float32)
        idx = np.array([0, 1, 1, 0], np.int32)
        for method in ("bilinear", "nearest"):
            for size in ((4, 5), (1, 3), (7, 1)):
                with self.subTest(method=method, size=size):
                    want = crop_ref(img, boxes, idx, size, method, -1.0)
                    got = ops.crop_and_resize(T(img), T(boxes), T(idx), size, method, -1.0)
                    self.close(got, want, 1e-5, 1e-3)
                    self.assertEqual(got.dtype, ms.float32)
        got = ops.CropAndResize()(T(img.astype(np.int32)), T(boxes), T(idx), (3, 3))
        self.close(got, crop_ref(img.astype(np.int32).astype(np.float32), boxes, idx, (3, 3), "bilinear", 0.0),
                   1e-5, 1e-3)

    def test_crop_and_resize_gradients_match_torch_autograd(self):
        img = self.rs.uniform(0, 5, size=(2, 5, 6, 2))
        boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.9, 0.7, 0.15, 0.05], [0.3, 0.1, 0.6, 0.95]])
        idx = [0, 1, 1]
        ch, cw = 4, 3
        ti = torch.tensor(img, requires_grad=True)
        tb = torch.tensor(boxes, requires_grad=True)
        B, H, W, C = img.shape
        rows = []
        for r in range(len(boxes)):
            y1, x1, y2, x2 = tb[r]
            for y in range(ch):
                in_y = y1 * (H - 1) + y * (y2 - y1) * (H - 1) / (ch - 1)
                t, b = int(np.floor(in_y.item())), int(np.ceil(in_y.item()))
                ly = in_y - t
                for x in range(cw):
                    in_x = x1 * (W - 1) + x * (x2 - x1) * (W - 1) / (cw - 1)
                    lf, rt = int(np.floor(in_x.item())), int(np.ceil(in_x.item()))
                    lx = in_x - lf
                    im = ti[idx[r]]
                    top = im[t, lf] + (im[t, rt] - im[t, lf]) * lx
                    bot = im[b, lf] + (im[b, rt] - im[b, lf]) * lx
                    rows.append(top + (bot - top) * ly)
        want = torch.stack(rows).reshape(len(boxes), ch, cw, C)
        w = self.rs.randn(*want.shape)
        (want * torch.tensor(w)).sum().backward()
        f = lambda a, b: (ops.crop_and_resize(a, b, T(np.array(idx, np.int32)), (ch, cw)) * T(w, ms.float32)).sum()
        gi, gb = ms.grad(f, grad_position=(0, 1))(T(img, ms.float32), T(boxes, ms.float32))
        self.close(gi, ti.grad, 1e-4, 1e-4, "d image")
        self.close(gb, tb.grad, 1e-4, 1e-3, "d boxes")
        # nearest has no gradient in MindSpore: zeros
        g0 = ms.grad(lambda a: ops.crop_and_resize(a, T(boxes, ms.float32), T(np.array(idx, np.int32)), (2, 2),
                                                   "nearest").sum())(T(img, ms.float32))
        self.close(g0, np.zeros_like(img), 0, 0)

    def test_resize_bicubic_matches_tensorflow_rules(self):
        x = self.rs.randn(2, 3, 5, 6)
        for ac, hp in ((False, False), (True, False), (False, True)):
            for size in ((7, 4), (3, 9)):
                with self.subTest(align_corners=ac, half_pixel_centers=hp, size=size):
                    wy, wx = cubic_ref_1d(5, size[0], ac, hp), cubic_ref_1d(6, size[1], ac, hp)
                    want = np.einsum("oh,nchw,pw->ncop", wy, x, wx)
                    got = ops.ResizeBicubic(ac, hp)(T(x), size)
                    self.close(got, want, 1e-12, 1e-12)

    def test_resize_area_matches_box_averages(self):
        x = self.rs.uniform(0, 10, size=(1, 6, 4, 2))
        # 6 -> 4 rows: boxes of 1.5 input rows; 4 -> 2 columns: pairs
        got = ops.ResizeArea()(T(x), (4, 2)).asnumpy()
        cols = (x[:, :, 0::2] + x[:, :, 1::2]) / 2
        rows = [cols[:, 0] + 0.5 * cols[:, 1], 0.5 * cols[:, 1] + cols[:, 2], cols[:, 3] + 0.5 * cols[:, 4],
                0.5 * cols[:, 4] + cols[:, 5]]
        want = np.stack([r / 1.5 for r in rows], 1)
        self.close(got, want.astype(np.float32), 1e-6, 1e-5)
        self.assertEqual(got.dtype, np.float32)


# ---- matrix diagonals, misc ---------------------------------------------------------------------

def diag_part_ref(x, k0, k1, pad, align):
    m, n = x.shape[-2:]
    max_len = min(m + min(k1, 0), n - max(k0, 0))
    rows = []
    for d in range(k1, k0 - 1, -1):
        ln = min(m + min(d, 0), n - max(d, 0))
        vals = [x[..., e + max(0, -d), e + max(0, d)] for e in range(ln)]
        sup, sub = align.split("_")
        right = (sup if d >= 0 else sub) == "RIGHT"
        padding = [np.full(x.shape[:-2], pad)] * (max_len - ln)
        rows.append(np.stack(padding + vals if right else vals + padding, -1))
    out = np.stack(rows, -2)
    return out[..., 0, :] if k0 == k1 else out


class Diagonals(Case):
    def test_diag_part_set_diag_and_diag_round_trip(self):
        x = self.rs.randn(2, 4, 5)
        for k0, k1 in ((0, 0), (-2, 1), (1, 3), (-3, -1)):
            for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
                with self.subTest(k=(k0, k1), align=align):
                    want = diag_part_ref(x, k0, k1, 9.0, align)
                    part = ops.matrix_diag_part(T(x), (k0, k1), 9.0, align)
                    self.close(part, want, 0, 0)
                    # set: replace the band by new values; everything outside stays
                    new = self.rs.randn(*want.shape)
                    got = ops.matrix_set_diag(T(x), T(new), (k0, k1), align).asnumpy()
                    self.close(ops.matrix_diag_part(T(got), (k0, k1), 9.0, align),
                               np.where(want == 9.0, 9.0, new), 0, 0)
                    i, j = np.indices((4, 5))
                    outside = ((j - i) < k0) | ((j - i) > k1)
                    self.close(got[:, outside], x[:, outside], 0, 0)
                    # diag: the band of a zero matrix of x's size from the diagonals
                    band = ops.matrix_diag(T(new), (k0, k1), 4, 5, 0.0, align).asnumpy()
                    self.close(band[:, outside], np.zeros_like(x[:, outside]), 0, 0)
                    self.close(ops.matrix_diag_part(T(band), (k0, k1), 9.0, align),
                               np.where(want == 9.0, 9.0, new), 0, 0)

    def test_cumulative_logsumexp_matches_torch(self):
        x = self.rs.randn(3, 300) * 20
        x[0, :5] -= 2000  # far below the rest: a shift by the slice maximum would lose them
        tx = torch.tensor(x, requires_grad=True)
        want = torch.logcumsumexp(tx, 1)
        w = self.rs.randn(*x.shape)
        (want * torch.tensor(w)).sum().backward()
        op = ops.CumulativeLogsumexp()
        self.close(op(T(x), 1), want, 1e-12, 1e-9)
        self.close(ms.grad(lambda a: (op(a, 1) * T(w)).sum())(T(x)), tx.grad, 1e-10, 1e-10)
        rev = torch.logcumsumexp(torch.tensor(x).flip(0), 0).flip(0)
        self.close(ops.CumulativeLogsumexp(reverse=True)(T(x), 0), rev, 1e-12, 1e-9)

    def test_tridiagonal_matmul_and_euclidean_norm(self):
        sup, main, sub = (self.rs.randn(2, 1, 5) for _ in range(3))
        rhs = self.rs.randn(2, 5, 3)
        dense = np.zeros((2, 5, 5))
        for b in range(2):
            dense[b] = np.diag(main[b, 0]) + np.diag(sup[b, 0, :-1], 1) + np.diag(sub[b, 0, 1:], -1)
        self.close(ops.TridiagonalMatMul()(T(sup), T(main), T(sub), T(rhs)), dense @ rhs, 1e-12, 1e-12)
        x = self.rs.randn(3, 4, 5)
        self.close(ops.EuclideanNorm(True)(T(x), (0, 2)), np.sqrt((x * x).sum((0, 2), keepdims=True)), 1e-12, 0)


def deform_ref(x, w, off, k, s, pad, dil, groups, dg, bias):
    N, C, H, W = x.shape
    kh, kw = k
    (sh, sw), (dh, dw), (pt, pb, pl, pr) = s, dil, pad
    ho = (H + pt + pb - (kh - 1) * dh - 1) // sh + 1
    wo = (W + pl + pr - (kw - 1) * dw - 1) // sw + 1
    o = off.reshape(N, 3, dg, kh, kw, ho, wo)

    def bil(img, y, xx):
        y0, x0 = int(np.floor(y)), int(np.floor(xx))
        acc = 0.0
        for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
            for xc, wx in ((x0, 1 - (xx - x0)), (x0 + 1, xx - x0)):
                if 0 <= yy < H and 0 <= xc < W:
                    acc = acc + wy * wx * img[..., yy, xc]
        return acc
    cols = np.zeros((N, C, kh, kw, ho, wo))
    cg = C // dg
    for n in range(N):
        for g in range(dg):
            for i in range(kh):
                for j in range(kw):
                    for a in range(ho):
                        for b in range(wo):
                            y = a * sh - pt + i * dh + o[n, 1, g, i, j, a, b]
                            xx = b * sw - pl + j * dw + o[n, 0, g, i, j, a, b]
                            cols[n, g * cg:(g + 1) * cg, i, j, a, b] = (bil(x[n, g * cg:(g + 1) * cg], y, xx)
                                                                        * o[n, 2, g, i, j, a, b])
    Co = w.shape[0]
    out = np.zeros((N, Co, ho, wo))
    cpg, opg = C // groups, Co // groups
    for co in range(Co):
        gi = co // opg
        out[:, co] = np.einsum("ncijab,cij->nab", cols[:, gi * cpg:(gi + 1) * cpg], w[co])
    return out + (0 if bias is None else bias[None, :, None, None])


class Deformable(Case):
    def test_deformable_conv2d_matches_loop_reference(self):
        for groups, dg, s, pad, dil in ((1, 1, (1, 1), (0, 0, 0, 0), (1, 1)), (2, 2, (2, 1), (1, 0, 2, 1), (1, 2))):
            with self.subTest(groups=groups, deformable_groups=dg, strides=s, padding=pad, dilations=dil):
                x = self.rs.randn(2, 4, 6, 7)
                w = self.rs.randn(4, 4 // groups, 2, 3)
                bias = self.rs.randn(4)
                ho = (6 + pad[0] + pad[1] - dil[0] - 1) // s[0] + 1
                wo = (7 + pad[2] + pad[3] - 2 * dil[1] - 1) // s[1] + 1
                off = self.rs.randn(2, 3 * dg * 6, ho, wo) * 1.5
                want = deform_ref(x, w, off, (2, 3), s, pad, dil, groups, dg, bias)
                args = ((2, 3), (1, 1) + s, pad, T(bias), (1, 1) + dil, groups, dg)
                got = ops.deformable_conv2d(T(x), T(w), T(off), *args)
                self.close(got, want, 1e-10, 1e-10)
                # gradients against central differences of the reference, at a few coordinates
                gw = self.rs.randn(*want.shape)
                gx, gwt, goff = ms.grad(lambda a, b, c: (ops.deformable_conv2d(a, b, c, *args) * T(gw)).sum(),
                                        grad_position=(0, 1, 2))(T(x), T(w), T(off))
                for arr, g in ((x, gx), (w, gwt), (off, goff)):
                    g = g.asnumpy()
                    for _ in range(4):
                        idx = tuple(self.rs.randint(0, d) for d in arr.shape)
                        e = 1e-6
                        arr[idx] += e
                        up = (deform_ref(x, w, off, (2, 3), s, pad, dil, groups, dg, bias) * gw).sum()
                        arr[idx] -= 2 * e
                        down = (deform_ref(x, w, off, (2, 3), s, pad, dil, groups, dg, bias) * gw).sum()
                        arr[idx] += e
                        self.assertAlmostEqual(g[idx], (up - down) / (2 * e), delta=1e-5 * max(1, abs(g[idx])))


if __name__ == "__main__":
    unittest.main()
