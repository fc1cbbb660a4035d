"""Detection and image ops (issue 42; pijit/ops/detection.py, kernels/detection.cc): values from
MindSpore's documented examples and by hand (the comments give the arithmetic), colour spaces
against the stdlib's colorsys, MindSpore's errors, gradients of ROIAlign and grid sampling by hand,
and the hot ops captured by jit as one graph giving what eager gives. The torch/numpy oracle is
tests/python/oracle/test_torch_detection.py."""
import colorsys
import math
import unittest

import pijit as ms
from pijit import ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def T(data, dtype=None):
    return ms.Tensor(data, dtype)


F32, I32 = ms.float32, ms.int32


class Close(unittest.TestCase):
    def close(self, got, want, tol=1e-6, msg=""):
        g = got.tolist() if hasattr(got, "tolist") else got

        def walk(a, b):
            if isinstance(b, (list, tuple)):
                self.assertEqual(len(a), len(b), msg)
                for x, y in zip(a, b):
                    walk(x, y)
            elif isinstance(b, float) and math.isinf(b):
                self.assertEqual(a, b, msg)
            else:
                self.assertLessEqual(abs(a - b), tol * max(1.0, abs(b)), "%s: %r != %r" % (msg, a, b))
        walk(g, want)


BOXES = [[100.0, 100.0, 150.0, 168.0, 0.63], [150.0, 75.0, 315.0, 190.0, 0.55],
         [12.0, 190.0, 300.0, 390.0, 0.9], [28.0, 130.0, 134.0, 302.0, 0.3]]


class Nms(Close):
    def test_nms_with_mask_doc_example(self):
        # sorted by score: boxes 2, 0, 1, 3; IoU(2, 3) = 11872 / 63960 = 0.186 > 0.1 drops box 3,
        # the others do not overlap. The index output counts positions in the sorted boxes.
        out, idx, mask = ops.NMSWithMask(0.1)(T(BOXES, F32))
        self.close(out, [BOXES[2], BOXES[0], BOXES[1], BOXES[3]])
        self.assertEqual((idx.dtype, mask.dtype), (I32, ms.bool_))
        self.assertEqual(idx.tolist(), [0, 1, 2, 3])
        self.assertEqual(mask.tolist(), [True, True, True, False])
        self.assertEqual(ops.NMSWithMask(0.2)(T(BOXES, F32))[2].tolist(), [True] * 4)

    def test_nms_with_mask_errors(self):
        with self.assertRaisesRegex(TypeError, "For 'NMSWithMask', the type of 'iou_threshold' should be 'float'"):
            ops.NMSWithMask(1)
        with self.assertRaisesRegex(ValueError, r"shape of 'bboxes' must be \(N, 5\)"):
            ops.NMSWithMask()(T([[1.0, 2.0, 3.0, 4.0]]))
        with self.assertRaisesRegex(TypeError, "dtype of 'bboxes'"):
            ops.NMSWithMask()(T([[1, 2, 3, 4, 5]], I32))

    def test_non_max_suppression_v3_and_with_overlaps(self):
        # TensorFlow's example: clusters around y = 0, 10, 100; best of each kept
        boxes = T([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                   [0, 100, 1, 101]], F32)
        scores = T([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], F32)
        got = ops.NonMaxSuppressionV3()(boxes, scores, 3, 0.5, 0.0)
        self.assertEqual((got.dtype, got.tolist()), (I32, [3, 0, 5]))
        self.assertEqual(ops.NonMaxSuppressionV3()(boxes, scores, T(2, I32), T(0.5, F32), T(0.4, F32)).tolist(), [3, 0])
        self.assertEqual(ops.NonMaxSuppressionV3()(boxes, scores, 3, 0.5, 0.99).shape, (0,))
        overlaps = T([[1.0, 0.8, 0.1], [0.8, 1.0, 0.2], [0.1, 0.2, 1.0]], F32)
        got = ops.NonMaxSuppressionWithOverlaps()(overlaps, T([0.5, 0.9, 0.3], F32), 3, 0.5, 0.0)
        self.assertEqual(got.tolist(), [1, 2])
        with self.assertRaisesRegex(ValueError, "'iou_threshold' must be in \\[0, 1\\]"):
            ops.NonMaxSuppressionV3()(boxes, scores, 3, 1.5, 0.0)

    def test_combined_non_max_suppression(self):
        # one image, two boxes shared by two classes, IoU(box 0, box 1) = 0.125 / 0.25 = 0.5. At
        # threshold 0.4 each class keeps its best box only; at 0.6 both, and the best 3 of the 4 stay
        boxes = T([[[[0.0, 0.0, 0.5, 0.5]], [[0.0, 0.0, 0.5, 0.25]]]], F32)
        scores = T([[[0.9, 0.2], [0.8, 0.7]]], F32)
        b, s, c, v = ops.CombinedNonMaxSuppression()(boxes, scores, 2, 4, 0.4, 0.1)
        self.close(s, [[0.9, 0.7, 0.0, 0.0]])
        self.close(c, [[0.0, 1.0, 0.0, 0.0]])
        self.close(b, [[[0.0, 0.0, 0.5, 0.5], [0.0, 0.0, 0.5, 0.25], [0.0] * 4, [0.0] * 4]])
        self.assertEqual((v.dtype, v.tolist()), (I32, [2]))
        b, s, c, v = ops.CombinedNonMaxSuppression()(boxes, scores, 2, 3, 0.6, 0.1)
        self.close(s, [[0.9, 0.8, 0.7]])
        self.close(c, [[0.0, 0.0, 1.0]])
        self.assertEqual(v.tolist(), [3])
        # clip_boxes clips to [0, 1]
        far = T([[[[-0.5, 0.2, 1.5, 0.9]]]], F32)
        self.close(ops.CombinedNonMaxSuppression()(far, T([[[0.9]]], F32), 1, 1, 0.5, 0.0)[0], [[[0.0, 0.2, 1.0, 0.9]]])
        self.assertEqual(ops.CombinedNonMaxSuppression(pad_per_class=True)(boxes, scores, 1, 5, 0.4, 0.1)[1].shape,
                         (1, 2))


class BoxesOps(Close):
    def test_encode_decode_doc_examples(self):
        # anchor (2, 2, 2, 3): centre (2, 2.5), size 1 x 2 (+1 sizes); gt (1, 2, 1, 4): (1, 3), 1 x 3
        a = T([[2, 2, 2, 3], [2, 2, 2, 3]], F32)
        g = T([[1, 2, 1, 4], [1, 2, 1, 4]], F32)
        self.close(ops.BoundingBoxEncode()(a, g), [[-1.0, 0.25, 0.0, math.log(1.5)]] * 2)
        self.close(ops.bounding_box_encode(a, g, stds=(2.0, 2.0, 1.0, 1.0)), [[-0.5, 0.125, 0.0, math.log(1.5)]] * 2)
        dec = ops.BoundingBoxDecode((768, 1280), wh_ratio_clip=0.016)
        got = dec(T([[4, 1, 2, 1], [2, 2, 2, 3]], F32), T([[3, 1, 2, 2], [1, 2, 1, 4]], F32))
        e, e4 = math.exp(2) / 2, 2 * math.exp(4) / 2
        self.close(got, [[e + 0.5, 0.0, 0.0, 2 + e - 0.5], [3 - math.e / 2 + 0.5, 0.0, 3 + math.e / 2 - 0.5,
                                                           6.5 + e4 - 0.5]], 1e-6)
        # a width delta past |log(0.016)| is clipped
        big = ops.bounding_box_decode(T([[0, 0, 9, 9]], F32), T([[0, 0, 10, 0]], F32), (1000, 1000))
        w = 10 * math.exp(abs(math.log(0.016)))
        self.close(big, [[0.0, 0.0, 4.5 + w / 2 - 0.5, 9.0]], 1e-5)

    def test_check_valid_and_iou(self):
        b = T([[0, 6 / 11, 12 / 11, 18 / 11], [24 / 11, 30 / 11, 36 / 11, 42 / 11],
               [48 / 11, 54 / 11, 60 / 11, 6.0]], F32)
        self.assertEqual(ops.check_valid(b, T([2, 1, 3], F32)).tolist(), [True, False, False])
        self.assertEqual(ops.CheckValid()(T([[0, 0, 2, 5], [-1, 0, 1, 1]], F32), T([2, 1, 3], F32)).tolist(),
                         [True, False])
        # (0, 0, 3, 3) and (1, 1, 4, 4): 3 x 3 overlap of two 4 x 4 boxes: 9 / 23
        got = ops.iou(T([[0, 0, 3, 3]], F32), T([[1, 1, 4, 4], [0, 0, 3, 3], [10, 10, 12, 12]], F32))
        self.close(got, [[9 / 23], [1.0], [0.0]])
        self.close(ops.IOU("iof")(T([[0, 0, 3, 3]], F32), T([[1, 1, 4, 4]], F32)), [[9 / 16]])
        with self.assertRaisesRegex(ValueError, "For 'IOU', the 'mode' must be one of"):
            ops.IOU("giou")
        with self.assertRaisesRegex(ValueError, r"shape of 'gt_boxes' must be \[N, 4\]"):
            ops.iou(T([[0, 0, 3, 3]], F32), T([[0, 0, 3]], F32))


IMG = [[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]


class RoiAlignAndCrop(Close):
    def test_roi_align_by_hand(self):
        # roi (0, 0)-(1, 1) plus roi_end_mode's 1: a 2 x 2 box, one bin of 2 x 2 samples at
        # (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5): values 3, 4, 6, 7, mean 5
        op = ops.ROIAlign(1, 1, 1.0, 2)
        self.close(op(T(IMG), T([[0, 0, 0, 1, 1]], F32)), [[[[5.0]]]])
        # roi_end_mode 0: box 0..1, samples at 0.25 and 0.75: mean at (0.5, 0.5) = 3
        self.close(ops.ROIAlign(1, 1, 1.0, 2, 0)(T(IMG), T([[0, 0, 0, 1, 1]], F32)), [[[[3.0]]]])
        # spatial_scale 0.5: the box (0, 0)-(1 + 1, 1 + 1) * 0.5; one sample per bin at 0.25, 0.75;
        # the image is 1 + x + 3y there
        self.close(ops.ROIAlign(2, 2, 0.5, 1)(T(IMG), T([[0, 0, 0, 1, 1]], F32)), [[[[2.0, 2.5], [3.5, 4.0]]]])

    def test_roi_align_gradient_by_hand(self):
        # each of the 4 samples spreads 1/4 of the bin's gradient over its 4 neighbours equally
        op = ops.ROIAlign(1, 1, 1.0, 2)
        g = ms.grad(lambda x: op(x, T([[0, 0, 0, 1, 1]], F32)).sum())(T(IMG))
        self.close(g, [[[[1 / 16, 1 / 8, 1 / 16], [1 / 8, 1 / 4, 1 / 8], [1 / 16, 1 / 8, 1 / 16]]]])

    def test_roi_align_errors(self):
        with self.assertRaisesRegex(ValueError, r"For 'ROIAlign', the 'roi_end_mode' must be in range of \[0, 1\]"):
            ops.ROIAlign(2, 2, 1.0, 2, 2)
        with self.assertRaisesRegex(TypeError, "the type of 'spatial_scale' should be 'float'"):
            ops.ROIAlign(2, 2, 1)
        with self.assertRaisesRegex(ValueError, r"batch index of each roi must be in \[0, 1\)"):
            ops.ROIAlign(1, 1, 1.0)(T(IMG), T([[1, 0, 0, 1, 1]], F32))

    def test_crop_and_resize_by_hand(self):
        img = T([[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]], [[7.0], [8.0], [9.0]]]])
        # the whole image at 2 x 2: the corners; at 3 x 3 the image itself
        self.close(ops.crop_and_resize(img, T([[0, 0, 1, 1]], F32), T([0], I32), (2, 2)), [[[[1], [3]], [[7], [9]]]])
        self.close(ops.CropAndResize()(img, T([[0, 0, 1, 1]], F32), T([0], I32), (3, 3)), IMG[0][0:1][0:1] and
                   [[[[1], [2], [3]], [[4], [5], [6]], [[7], [8], [9]]]])
        # a flipped box, one outside the image (extrapolation), and a 1 x 1 crop (the box centre)
        self.close(ops.crop_and_resize(img, T([[1, 0, 0, 1]], F32), T([0], I32), (2, 2)), [[[[7], [9]], [[1], [3]]]])
        self.close(ops.crop_and_resize(img, T([[0, 1.5, 1, 2]], F32), T([0], I32), (1, 1), "nearest", -7.0),
                   [[[[-7]]]])
        self.close(ops.crop_and_resize(img, T([[0, 0, 1, 0.5]], F32), T([0], I32), (1, 1), "bilinear"), [[[[4.5]]]])
        with self.assertRaisesRegex(ValueError, r"values of 'box_index' must be in \[0, 1\)"):
            ops.crop_and_resize(img, T([[0, 0, 1, 1]], F32), T([2], I32), (2, 2))
        with self.assertRaisesRegex(ValueError, "For 'CropAndResize', the 'method' must be one of"):
            ops.CropAndResize("bicubic")


class GridSampling(Close):
    def test_grid_sample_by_hand(self):
        # align_corners: -1 and 1 are the corner pixels; (0.5, -0.2) is column 1.5, row 0.8:
        # 2.5 + 0.8 * 3 = 4.9
        g = T([[[[-1.0, -1.0], [0.0, 0.0], [1.0, 1.0], [0.5, -0.2]]]])
        self.close(ops.grid_sample(T(IMG), g, align_corners=True), [[[[1.0, 5.0, 9.0, 4.9]]]])
        # without align_corners -1 is the outer edge of pixel 0: half of it is zero padding
        self.close(ops.grid_sample(T(IMG), T([[[[-1.0, -1.0]]]])), [[[[0.25]]]])
        self.close(ops.grid_sample(T(IMG), T([[[[-1.0, -1.0]]]]), padding_mode="border"), [[[[1.0]]]])
        self.close(ops.GridSampler2D("nearest")(T(IMG), T([[[[0.3, 0.6]]]])), [[[[8.0]]]])

    def test_grid_sample_gradients_by_hand(self):
        # inside a cell the value is bilinear: d/dx = 1 per column, d/dy = 3 per row; with
        # align_corners a grid unit is one pixel (size - 1) / 2 = 1
        x, g = T(IMG), T([[[[0.5, -0.2]]]])
        dx, dg = ms.grad(lambda a, b: ops.grid_sample(a, b, align_corners=True).sum(), grad_position=(0, 1))(x, g)
        self.close(dg, [[[[1.0, 3.0]]]])
        # the weights of the four neighbours (rows 0-1, columns 1-2): 0.2*0.5, ... summing to 1
        self.close(dx, [[[[0, 0.1, 0.1], [0, 0.4, 0.4], [0, 0, 0]]]])

    def test_affine_grid_identity(self):
        theta = T([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        self.close(ops.affine_grid(theta, (1, 1, 2, 2), align_corners=True),
                   [[[[-1, -1], [1, -1]], [[-1, 1], [1, 1]]]])
        self.close(ops.AffineGrid()(theta, (1, 1, 1, 2)), [[[[-0.5, 0.0], [0.5, 0.0]]]])
        # the identity transform samples the input back (align_corners=False both ways)
        x = T([[[[1.0, 2.0], [3.0, 4.0]]]])
        self.close(ops.grid_sample(x, ops.affine_grid(theta, (1, 1, 2, 2))), x.tolist())

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "For 'GridSampler2D', the 'interpolation_mode' must be one of"):
            ops.GridSampler2D("area")
        with self.assertRaisesRegex(ValueError, "For 'GridSampler3D', the dimension of 'input_x' must be 5"):
            ops.GridSampler3D()(T(IMG), T([[[[0.0, 0.0]]]]))
        with self.assertRaisesRegex(ValueError, "'grid' must have shape"):
            ops.grid_sample(T(IMG), T([[[0.0, 0.0]]]))
        with self.assertRaisesRegex(ValueError, r"'theta' must have shape \(N, 2, 3\)"):
            ops.affine_grid(T([[[1.0, 0.0], [0.0, 1.0]]]), (1, 1, 2, 2))


class Colour(Close):
    PIXELS = [[0.2, 0.4, 0.6], [0.9, 0.1, 0.1], [0.3, 0.8, 0.2], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0],
              [1.0, 0.0, 1.0], [0.25, 0.75, 0.7]]

    def test_rgb_hsv_round_trip_matches_colorsys(self):
        x = T([[self.PIXELS]], ms.float64)
        hsv = ops.RGBToHSV()(x)
        self.close(hsv, [[[list(colorsys.rgb_to_hsv(*p)) for p in self.PIXELS]]], 1e-12)
        self.close(ops.HSVToRGB()(hsv), [[self.PIXELS]], 1e-12)
        h = [[[[0.05, 0.5, 0.8], [0.55, 1.0, 0.3], [0.95, 0.2, 0.9]]]]
        self.close(ops.HSVToRGB()(T(h, ms.float64)), [[[list(colorsys.hsv_to_rgb(*p)) for p in h[0][0]]]], 1e-12)

    def test_adjust_hue_and_saturation_doc_examples(self):
        # [1, 2, 3]: h = 7/12, s = 2/3, v = 3; h + 0.2 -> 0.7833: (2.4, 1, 3)
        img = T([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]], [[13, 14, 15], [16, 17, 18]]], F32)
        self.close(ops.AdjustHue()(img, T(0.2, F32)),
                   [[[2.4, 1, 3], [5.4, 4, 6]], [[8.4, 7, 9], [11.4, 10, 12]], [[14.4, 13, 15], [17.4, 16, 18]]], 1e-6)
        self.close(ops.AdjustSaturation()(img[:2], T(0.5, F32)),
                   [[[2, 2.5, 3], [5, 5.5, 6]], [[8, 8.5, 9], [11, 11.5, 12]]], 1e-6)
        # hue wraps: +1 is the identity; saturation clips at 1
        px = T([[[0.2, 0.4, 0.6]]], ms.float32)
        self.close(ops.AdjustHue()(px, T(1.0, F32)), [[[0.2, 0.4, 0.6]]], 1e-6)
        self.close(ops.AdjustSaturation()(px, T(10.0, F32)), [[[0.0, 0.3, 0.6]]], 1e-6)
        with self.assertRaisesRegex(TypeError, "dtype of 'delta' must be float32"):
            ops.AdjustHue()(px, T(0.2, ms.float64))


class Resize(Close):
    def test_resize_area_and_bicubic(self):
        img = T([[[[1.0], [2.0]], [[3.0], [4.0]]]])  # NHWC
        got = ops.ResizeArea()(img, (1, 1))
        self.assertEqual(got.dtype, F32)
        self.close(got, [[[[2.5]]]])
        self.close(ops.ResizeArea()(img, (2, 4)), [[[[1.0], [1.0], [2.0], [2.0]], [[3.0], [3.0], [4.0], [4.0]]]])
        x = T([[[[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]]]])  # NCHW
        self.close(ops.ResizeBicubic()(x, (2, 3)), x.tolist())  # same size: the taps are 0, 1, 0, 0
        # 1 x 3 -> 1 x 6, legacy: output 1 at source 0.5: taps at -1, 0, 1, 2 (clamped to 0, 0, 1, 2)
        # with Keys' cubic (A = -0.75) at distances 1.5, 0.5, 0.5, 1.5: -0.09375, 0.59375, ...
        w = [-0.09375, 0.59375, 0.59375, -0.09375]
        want1 = (w[0] + w[1]) * 1.0 + w[2] * 2.0 + w[3] * 4.0
        got = ops.ResizeBicubic()(T([[[[1.0, 2.0, 4.0]]]]), (1, 6))
        self.close(got.tolist()[0][0][0][1], want1)


class Diagonals(Close):
    def test_tensorflow_doc_examples(self):
        m = T([[1, 2, 3, 4], [5, 6, 7, 8], [9, 8, 7, 6]], F32)
        self.close(ops.matrix_diag_part(m), [1, 6, 7])
        self.close(ops.matrix_diag_part(m, 1), [2, 7, 6])
        self.close(ops.MatrixDiagPartV3()(m, T([-1, 2], I32), T(9, F32)),
                   [[9, 3, 8], [2, 7, 6], [1, 6, 7], [5, 8, 9]])
        self.close(ops.matrix_diag_part(m, (-1, 2), 9.0, "LEFT_RIGHT"), [[3, 8, 9], [2, 7, 6], [1, 6, 7], [9, 5, 8]])
        self.close(ops.matrix_diag(T([1, 2, 3], F32)), [[1, 0, 0], [0, 2, 0], [0, 0, 3]])
        self.close(ops.matrix_diag(T([1, 2], F32), 1), [[0, 1, 0], [0, 0, 2], [0, 0, 0]])
        self.close(ops.MatrixDiagV3()(T([1, 2], F32), T(-1, I32), T(3, I32), T(4, I32), T(9, F32)),
                   [[9, 9, 9, 9], [1, 9, 9, 9], [9, 2, 9, 9]])
        # k = (-1, 2): the superdiagonal 2 (length 2) right-aligned, the subdiagonal left-aligned
        self.close(ops.matrix_set_diag(T([[7.0] * 4] * 3), T([[0, 9, 1], [6, 5, 8], [1, 2, 3], [4, 5, 0]], F32),
                                       (-1, 2)),
                   [[1, 6, 9, 7], [4, 2, 5, 1], [7, 5, 3, 8]])
        self.close(ops.MatrixSetDiagV3()(T([[7.0] * 4] * 3), T([1, 2, 3], F32), T(0, I32)),
                   [[1, 7, 7, 7], [7, 2, 7, 7], [7, 7, 3, 7]])
        with self.assertRaisesRegex(ValueError, "the 'align' must be one of"):
            ops.MatrixDiagV3("RIGHT")

    def test_fill_diagonal(self):
        x = T([[1.0, 2, 3], [4, 5, 6], [7, 8, 9], [1, 2, 3], [4, 5, 6]])
        self.close(ops.FillDiagonal(9.0)(x), [[9, 2, 3], [4, 9, 6], [7, 8, 9], [1, 2, 3], [4, 5, 6]])
        self.close(ops.FillDiagonal(9.0, True)(x), [[9, 2, 3], [4, 9, 6], [7, 8, 9], [1, 2, 3], [9, 5, 6]])
        self.close(ops.FillDiagonal(-1.0)(T([[[0.0] * 2] * 2] * 2)), [[[-1, 0], [0, 0]], [[0, 0], [0, -1]]])


class ArrayOps(Close):
    def test_small_ops_by_hand(self):
        self.assertEqual(ops.intopk(T([[1, 3, 2], [4, 1, 3]], F32), T([1, 1], I32), 1).tolist(), [True, False])
        # ties at the boundary are inside (none strictly greater than k-1 others); NaN never is
        self.assertEqual(ops.InTopK(1)(T([[2, 2, 1], [float("nan"), 0, 0]], F32), T([1, 0], I32)).tolist(),
                         [True, False])
        self.assertEqual(ops.DataFormatDimMap()(T([-4, -3, -2, -1, 0, 1, 2, 3], I32)).tolist(),
                         [0, 2, 3, 1, 0, 2, 3, 1])
        self.assertEqual(ops.DataFormatVecPermute()(T([1, 2, 3, 4], I32)).tolist(), [1, 4, 2, 3])
        self.assertEqual(ops.DataFormatVecPermute("NCHW", "NHWC")(T([[1, 2], [3, 4], [5, 6], [7, 8]], I32)).tolist(),
                         [[1, 2], [5, 6], [7, 8], [3, 4]])
        self.close(ops.BatchToSpace(2, [[0, 0], [0, 0]])(T([[[[1.0]]], [[[2.0]]], [[[3.0]]], [[[4.0]]]])),
                   [[[[1, 2], [3, 4]]]])
        a, b = T([1.0]), T([2], I32)
        self.assertEqual([t is u for t, u in zip(ops.IdentityN()((a, b)), (a, b))], [True, True])
        with self.assertRaisesRegex(TypeError, "must be a list or tuple of Tensors"):
            ops.IdentityN()(a)
        self.close(ops.ConjugateTranspose()(T([[1.0, 2.0], [3.0, 4.0]]), (1, 0)), [[1, 3], [2, 4]])
        parts = ops.SplitV([1, -1], 1, 2)(T([[1, 2, 3], [4, 5, 6]], I32))
        self.assertEqual([p.tolist() for p in parts], [[[1], [4]], [[2, 3], [5, 6]]])
        with self.assertRaisesRegex(ValueError, "sum of 'size_splits'"):
            ops.SplitV([1, 1], 1, 2)(T([[1, 2, 3]], I32))
        self.close(ops.padding(T([[8.0], [10.0]]), 4), [[8, 0, 0, 0], [10, 0, 0, 0]])
        with self.assertRaisesRegex(ValueError, "the last dimension of 'x' must be 1"):
            ops.Padding()(T([[1.0, 2.0]]))
        self.assertEqual(ops.ParallelConcat()([T([[0, 1]], I32), T([[2, 1]], I32)]).tolist(), [[0, 1], [2, 1]])
        self.close(ops.ScatterAddWithAxis(1)(T([[1.0, 2, 3], [4, 5, 6]]), T([[0, 2], [1, 1]], I32),
                                             T([[10.0, 20], [1, 2]])), [[11, 2, 23], [4, 8, 6]])
        p = ms.Parameter(T([1.0, 2, 3, 4]), name="p")
        out = ops.ScatterNonAliasingAdd()(p, T([[0], [2], [0]], I32), T([10.0, 20, 30]))
        self.close(p, [41, 2, 23, 4])
        self.assertIs(out, p)
        self.close(ops.NthElement()(T([[1.0, 5, 3], [9, 2, 7]]), 1), [3, 7])
        self.close(ops.NthElement(True)(T([[1.0, 5, 3], [9, 2, 7]]), T(0, I32)), [5, 9])
        out, idx = ops.ListDiff()(T([1, 2, 3, 4, 5, 6], I32), T([1, 3, 5], I32))
        self.assertEqual((out.tolist(), idx.tolist(), idx.dtype), ([2, 4, 6], [1, 3, 5], I32))
        bits = ops.CompareAndBitpack()(T([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 0, 0, 9]), T(6.0))
        self.assertEqual((bits.dtype, bits.tolist()), (ms.uint8, [3, 129]))

    def test_no_repeat_ngram_ragged_range_and_norms(self):
        # [1, 2, 1, 2] with n = 3: the tail (1, 2) followed 1 once before, so token 1 is banned
        got = ops.NoRepeatNGram(3)(T([[[1, 2, 1, 2]]], I32), T([[[0.1, 0.2, 0.3, 0.4]]], F32)).tolist()[0][0]
        self.assertEqual(got[1], -3.4028234663852886e38)
        self.close([got[0], got[2], got[3]], [0.1, 0.3, 0.4])
        splits, vals = ops.RaggedRange(I32)(T([2, 5, 8], I32), T([3, 5, 12], I32), T(1, I32))
        self.assertEqual((splits.tolist(), vals.tolist()), ([0, 1, 1, 5], [2, 8, 9, 10, 11]))
        self.assertEqual(ops.EuclideanNorm()(T([[3, 4], [6, 8]], I32), (1,)).tolist(), [5, 10])
        self.close(ops.EuclideanNorm(True)(T([[3.0, 4.0]]), 1), [[5.0]])
        self.close(ops.TridiagonalMatMul()(T([[1.0, 2, 3]]), T([[1.0, 1, 1]]), T([[5.0, 6, 7]]),
                                           T([[1.0, 0], [0, 1], [1, 1]])), [[1, 1], [8, 3], [1, 8]])
        c = ops.CumulativeLogsumexp()
        self.close(c(T([0.0, 0, 0, 1000]), 0), [0, math.log(2), math.log(3), 1000])
        self.close(ops.CumulativeLogsumexp(True, True)(T([1.0, 2, 3]), 0),
                   [math.log(math.exp(2) + math.exp(3)), 3, -float("inf")], 1e-6)

    def test_choice_with_mask(self):
        x = T([[True, False, True], [False, True, True]])
        idx, mask = ops.choice_with_mask(x, 6, 1, 2)
        self.assertEqual((idx.dtype, idx.shape, mask.tolist()), (I32, (6, 2), [True] * 4 + [False] * 2))
        self.assertEqual(sorted(map(tuple, idx.tolist()[:4])), [(0, 0), (0, 2), (1, 1), (1, 2)])
        self.assertEqual(idx.tolist()[4:], [[0, 0], [0, 0]])
        again = ops.RandomChoiceWithMask(2, 1, 2)(x)
        self.assertEqual(again[1].tolist(), [True, True])
        self.assertEqual(ops.RandomChoiceWithMask(6, 1, 2)(x)[0].tolist(), idx.tolist())  # seeded


class WindowsAndSampling(Close):
    def test_dilation2d_by_hand(self):
        x = T([[[[1.0, 2, 3], [4, 5, 6], [7, 8, 9]]]])
        f = T([[[0.0, 1], [1, 0]]])
        # window (0, 0): max(1 + 0, 2 + 1, 4 + 1, 5 + 0) = 5
        self.close(ops.Dilation2D(1, 1, "VALID")(x, f), [[[[5, 6], [8, 9]]]])
        # SAME pads one row/column after: the corner window holds x[2, 2] + 0 only
        self.close(ops.Dilation2D((1, 1, 1, 1), 1, "same")(x, f), [[[[5, 6, 7], [8, 9, 10], [9, 10, 9]]]])
        # dilation 2: the taps (0, 0), (0, 2), (2, 0), (2, 2) of the one window: 1, 3 + 1, 7 + 1, 9
        self.close(ops.Dilation2D(1, 2, "VALID")(x, f), [[[[9]]]])
        self.close(ops.Dilation2D(1, 2, "VALID")(x, T([[[0.0, 1], [3, -5]]])), [[[[10]]]])
        with self.assertRaisesRegex(ValueError, "the first two elements of 'stride' must be 1"):
            ops.Dilation2D((2, 1, 1, 1), 1)

    def test_extract_volume_patches_channel_innermost(self):
        # x[0, c, 0, h, w] = 10 c + 2 h + w; one 1x2x2 window: (kh, kw, c) with c fastest
        x = T([[[[[10.0 * c + 2 * h + w for w in range(2)] for h in range(2)]] for c in range(2)]])
        got = ops.ExtractVolumePatches((1, 2, 2), 1, "VALID")(x)
        self.assertEqual(got.shape, (1, 8, 1, 1, 1))
        self.close([v[0][0][0] for v in got.tolist()[0]], [0, 10, 1, 11, 2, 12, 3, 13])
        same = ops.ExtractVolumePatches((1, 1, 1, 2, 2), (1, 1, 1, 1, 1), "SAME")(x)
        self.assertEqual(same.shape, (1, 8, 1, 2, 2))
        # the window at (h, w) = (1, 1) sees x[1, 1] then zero padding
        self.close([v[0][1][1] for v in same.tolist()[0]], [3, 13, 0, 0, 0, 0, 0, 0])

    def test_scale_and_translate_by_hand(self):
        im = T([[[[1.0], [2.0], [3.0], [4.0]]]])
        # triangle kernel, x2 along x: output o samples (o + 0.5) / 2; the first sees only pixel 0
        got = ops.ScaleAndTranslate("triangle", False)(im, (1, 8), T([1.0, 2.0]), T([0.0, 0.0]))
        self.assertEqual(got.dtype, F32)
        self.close(got, [[[[1.0], [1.25], [1.75], [2.25], [2.75], [3.25], [3.75], [4.0]]]])
        # box kernel halving with antialias: pairs averaged
        self.close(ops.ScaleAndTranslate("box")(im, (1, 2), T([1.0, 0.5]), T([0.0, 0.0])), [[[[1.5], [3.5]]]])
        # translation by one output pixel shifts the samples by one input pixel
        self.close(ops.ScaleAndTranslate("triangle")(im, (1, 4), T([1.0, 1.0]), T([0.0, 1.0])),
                   [[[[0.0], [1.0], [2.0], [3.0]]]])

    def test_edit_distance_tensorflow_example(self):
        i64 = ms.int64
        hyp_i = T([[0, 0, 0], [1, 0, 0]], i64)
        truth_i = T([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]], i64)
        args = (hyp_i, T([1.0, 2.0]), T([2, 1, 1], i64), truth_i, T([1.0, 2.0, 3.0, 1.0]), T([2, 2, 2], i64))
        # (0, 0): "a" vs nothing: inf; (0, 1): nothing vs "a": 1; (1, 0): "b" vs "bc": 1/2;
        # (1, 1): nothing vs "a": 1
        self.close(ops.EditDistance()(*args), [[float("inf"), 1.0], [0.5, 1.0]])
        self.close(ops.EditDistance(False)(*args), [[1.0, 1.0], [1.0, 1.0]])

    def test_extract_glimpse(self):
        x = T([[[[float(10 * r + c)] for c in range(4)] for r in range(4)]], F32)  # (1, 4, 4, 1)
        # centred, normalised offset (0, 0): the window's centre at (2, 2), its top-left (1, 1)
        got = ops.ExtractGlimpse()(x, (2, 2), T([[0.0, 0.0]], F32))
        self.close(got, [[[[11], [12]], [[21], [22]]]])
        # pixel offsets from the corner: top-left (3 - 1, 3 - 1); the window hangs over the edge,
        # zero noise fills the outside
        op = ops.ExtractGlimpse(False, False, False, "zero")
        self.close(op(x, T([2, 2], I32), T([[3.0, 3.0]], F32)), [[[[22], [23]], [[32], [33]]]])
        # top-left (4 - 1.5, 0.5 - 1) truncates toward zero to (2, 0); row 4 is outside
        self.close(op(x, (3, 2), T([[4.0, 0.5]], F32)), [[[[20], [21]], [[30], [31]], [[0], [0]]]])
        noisy = ops.ExtractGlimpse(False, False)(x, (1, 2), T([[-3.0, 0.0]], F32)).tolist()[0][0]
        self.assertTrue(all(0.0 <= v[0] < 1.0 for v in noisy))
        with self.assertRaisesRegex(ValueError, "the value of 'noise' must be uniform when uniform_noise is True"):
            ops.ExtractGlimpse(noise="zero")

    def test_sample_distorted_bounding_box(self):
        op = ops.SampleDistortedBoundingBoxV2(seed=1, seed2=2, area_range=(0.1, 0.5))
        begin, size, box = op(T([480, 640, 3], I32), T([[0.1, 0.1, 0.6, 0.6]], F32), T(0.3, F32))
        (y, x, z), (h, w, c) = begin.tolist(), size.tolist()
        self.assertEqual((z, c, begin.dtype), (0, -1, I32))
        self.assertTrue(0 <= y and y + h <= 480 and 0 <= x and x + w <= 640)
        self.assertTrue(0.1 * 480 * 640 * 0.9 <= h * w <= 0.5 * 480 * 640 * 1.1)
        # it covers at least 30% of the box (48..288 x 64..384)
        inter = max(0, min(y + h, 288) - max(y, 48)) * max(0, min(x + w, 384) - max(x, 64))
        self.assertGreaterEqual(inter / (240 * 320), 0.3)
        self.close(box, [[[y / 480, x / 640, (y + h) / 480, (x + w) / 640]]])
        with self.assertRaisesRegex(ValueError, "no bounding boxes provided"):
            op(T([480, 640, 3], I32), ms.ops.zeros((0, 4)), T(0.3, F32))


class Deformable(Close):
    def test_zero_offsets_and_unit_masks_give_the_plain_convolution(self):
        x = T([[[[float((3 * r + 5 * c + 7 * ch) % 11) for c in range(6)] for r in range(5)] for ch in range(2)]])
        w = T([[[[1.0, -1.0, 2.0], [0.5, 0.0, 1.0]], [[0.0, 1.0, 0.0], [-2.0, 1.0, 1.0]]]] * 3)
        ho, wo = (5 + 1 - 1 - 1) // 1 + 1, (6 + 2 - 4 - 1) // 2 + 1
        offsets = ops.concat((ops.zeros((1, 12, ho, wo)), ops.ones((1, 6, ho, wo))), 1)
        got = ops.deformable_conv2d(x, w, offsets, (2, 3), (1, 1, 1, 2), (1, 0, 1, 1), T([1.0, 2.0, 3.0]),
                                    (1, 1, 1, 2))
        from pijit.ops import nn_functional as NF
        padded = ops.pad(x, (1, 1, 1, 0))
        want = NF.conv2d(padded, w, None, (1, 2), "valid", 0, (1, 2)) + T([1.0, 2.0, 3.0]).reshape((1, 3, 1, 1))
        self.close(got, want.tolist(), 1e-6)
        # an offset of +1 along x on every tap reads the next column: as if the left padding were
        # one column narrower and the right one wider
        shift = ops.concat((ops.ones((1, 6, ho, wo)), ops.zeros((1, 6, ho, wo)), ops.ones((1, 6, ho, wo))), 1)
        moved = ops.deformable_conv2d(x, w, shift, (2, 3), (1, 1, 1, 2), (1, 0, 1, 1), None, (1, 1, 1, 2))
        want = NF.conv2d(ops.pad(x, (0, 2, 1, 0)), w, None, (1, 2), "valid", 0, (1, 2))
        self.close(moved, want.tolist(), 1e-6)
        with self.assertRaisesRegex(ValueError, "the shape of 'offsets' must be"):
            ops.deformable_conv2d(x, w, offsets[:, :9], (2, 3), (1, 1, 1, 2), (1, 0, 1, 1), None, (1, 1, 1, 2))
        with self.assertRaisesRegex(ValueError, "only modulated=True"):
            ops.deformable_conv2d(x, w, offsets, (2, 3), (1, 1, 1, 2), (1, 0, 1, 1), modulated=False)


class Captured(Close):
    def one_graph(self, name, f):
        want = f()
        ns = {"f": f}
        exec(compile("def case_%s():\n    return f()\n" % name, "<%s>" % name, "exec"), ns)
        jf = ms.jit(ns["case_" + name])
        for _ in range(2):
            got = jf()
            if isinstance(want, tuple):
                self.assertEqual([g.tolist() for g in got], [w.tolist() for w in want], name)
            else:
                self.assertEqual(got.tolist(), want.tolist(), name)
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["compiles"], st["graphs"], st["break_reasons"]), (1, 1, []), name)
        else:  # (no capture: jf ran eagerly, equal to eager above)
            assert_ran_eagerly(self, jf)

    def test_hot_ops_capture_into_one_graph(self):
        x = T(IMG)
        theta = T([[[0.9, 0.1, 0.0], [0.0, 1.1, 0.1]]])
        b = T(BOXES, F32)
        cases = {
            "stn": lambda: ops.grid_sample(x, ops.affine_grid(theta, (1, 1, 2, 2)), align_corners=True),
            "nms": lambda: ops.NMSWithMask(0.1)(b),
            "roi": lambda: ops.ROIAlign(2, 2, 1.0)(x, T([[0.0, 0, 0, 1, 1]])),
            "iou": lambda: ops.iou(b[:, :4], b[:2, :4]),
            "boxes": lambda: ops.bounding_box_decode(b[:, :4], ops.bounding_box_encode(b[:, :4], b[:, :4] + 1),
                                                     (400, 400)),
            "hsv": lambda: ops.AdjustHue()(x.reshape((1, 1, 3, 3)) / 10, T(0.3, F32)),
            "diag": lambda: ops.matrix_set_diag(x[0, 0], ops.matrix_diag_part(x[0, 0], (-1, 1)) * 2, (-1, 1)),
            "crop": lambda: ops.crop_and_resize(x.reshape((1, 3, 3, 1)), T([[0.0, 0, 1, 1]]), T([0], I32), (2, 2)),
            "deform": lambda: ops.deformable_conv2d(x, ops.ones((2, 1, 2, 2)), ops.full((1, 12, 2, 2), 0.25), (2, 2),
                                                    (1, 1, 1, 1), (0, 0, 0, 0)),
        }
        for name, f in cases.items():
            with self.subTest(case=name):
                self.one_graph(name, f)

    def test_gradients_jitted_equal_eager(self):
        roi = ops.ROIAlign(2, 2, 1.0)

        def loss(x, theta):
            g = ops.affine_grid(theta, (1, 1, 3, 3))
            return (ops.grid_sample(x, g, padding_mode="reflection") ** 2).sum() + roi(x, T([[0.0, 0, 0, 1, 1]])).sum()

        x, theta = T(IMG), T([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.1]]])
        gf = ms.grad(loss, grad_position=(0, 1))
        want = [g.tolist() for g in gf(x, theta)]
        jg = ms.jit(lambda a, b: gf(a, b))
        self.assertEqual([g.tolist() for g in jg(x, theta)], want)
        self.assertEqual(ms.jit_stats(jg)["break_reasons"], [])


if __name__ == "__main__":
    unittest.main()
