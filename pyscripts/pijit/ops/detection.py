"""Detection and image ops (NMS, IOU, boxes, ROIAlign, CropAndResize, colour spaces, grid sampling):
primitives and functional forms, with MindSpore's semantics on the CPU.

Registry ops with C++ kernels (kernels/detection.cc), captured by jit as graph nodes:
  NMSWithMask (nms_with_mask), ROIAlign (roi_align, gradient for the features), CropAndResize
  (crop_and_resize, gradients for the image and the boxes under 'bilinear'), GridSampler2D/
  GridSampler3D/grid_sample (grid_sample, gradients for the input and the grid).
Composed from other ops (differentiable where their parts are): IOU/iou, BoundingBoxEncode/Decode,
CheckValid, AffineGrid/affine_grid, RGBToHSV, HSVToRGB, AdjustHue, AdjustSaturation, ResizeArea,
ResizeBicubic, the MatrixDiag*V3 family (index maps built from shapes, then one gather),
TridiagonalMatMul, EuclideanNorm, CumulativeLogsumexp, CompareAndBitpack, FillDiagonal, Padding,
SplitV, ConjugateTranspose, BatchToSpace, DataFormat*, InTopK, NthElement, ScatterAddWithAxis,
ScatterNonAliasingAdd, ParallelConcat, IdentityN.
Computed on the host (outputs whose shape depends on values; a graph break under jit):
NonMaxSuppressionV3, NonMaxSuppressionWithOverlaps, CombinedNonMaxSuppression, ListDiff,
RaggedRange, NoRepeatNGram's ban list, RandomChoiceWithMask/choice_with_mask.
"""
import builtins as _b
import math as _math
import random as _random

from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit.ops import functional as F
from pijit.ops.primitives import Primitive

_Tensor = _C.TensorBase

__all__ = []


def _export(obj):
    __all__.append(obj.__name__)
    return obj


def _new(data, dtype):
    from pijit.tensor import Tensor
    return Tensor(data, dtype)


def _tensor(who, name, x):
    if not isinstance(x, _Tensor):
        raise TypeError("For '%s', the input '%s' must be a Tensor, but got %s" % (who, name, type(x).__name__))
    return x


def _dtypes(who, name, x, allowed):
    if x.dtype not in allowed:
        raise TypeError("For '%s', the dtype of '%s' must be one of [%s], but got %s"
                        % (who, name, ", ".join(str(d) for d in allowed), x.dtype))


def _type(who, name, v, types, tname):
    if isinstance(v, bool) and bool not in types or not isinstance(v, types):
        raise TypeError("For '%s', the type of '%s' should be '%s', but got '%r' with type '%s'."
                        % (who, name, tname, v, type(v).__name__))
    return v


def _str_in(who, name, v, options):
    if not isinstance(v, str):
        raise TypeError("For '%s', the type of '%s' should be 'str', but got '%r' with type '%s'."
                        % (who, name, v, type(v).__name__))
    if v not in options:
        raise ValueError("For '%s', the '%s' must be one of %s, but got '%s'." % (who, name, list(options), v))
    return v


def _scalar_value(who, name, v):
    """A Python number from a number or a one-element Tensor."""
    if isinstance(v, _Tensor):
        if v.size != 1:
            raise ValueError("For '%s', '%s' must be a scalar, but got shape %s" % (who, name, v.shape))
        return v.reshape(()).item() if v.ndim else v.item()
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    raise TypeError("For '%s', '%s' must be a number or a Tensor, but got %s" % (who, name, type(v).__name__))


_F16_F32 = (_dt.float16, _dt.float32)
_FLOATS = (_dt.float16, _dt.float32, _dt.float64)


def _compute(x):
    """float16/bfloat16 inputs compute in float32 (the result is cast back)."""
    return F.cast(x, _dt.float32) if x.dtype in (_dt.float16, _dt.bfloat16) else x


def _back(y, dtype):
    return y if y.dtype == dtype else F.cast(y, dtype)


# ---- non-maximum suppression ----------------------------------------------------------------------

@_export
class NMSWithMask(Primitive):
    """NMSWithMask(iou_threshold=0.5)(bboxes (N, 5)) -> (output_boxes (N, 5) sorted by score
    descending, output_idx int32 (N,) their positions 0..N-1, selected_mask bool (N,)): greedy
    suppression over the sorted boxes, a box dropped when its IoU with a kept one exceeds the
    threshold (MindSpore's CPU/GPU kernel; areas without +1)."""

    def __init__(self, iou_threshold=0.5):
        _type("NMSWithMask", "iou_threshold", iou_threshold, (float,), "float")
        super().__init__(iou_threshold=iou_threshold)

    def __call__(self, bboxes):
        _tensor(self.name, "bboxes", bboxes)
        _dtypes(self.name, "bboxes", bboxes, _F16_F32)
        if bboxes.ndim != 2 or bboxes.shape[1] != 5:
            raise ValueError("For '%s', the shape of 'bboxes' must be (N, 5), but got %s" % (self.name, bboxes.shape))
        if bboxes.shape[0] <= 0:
            raise ValueError("For '%s', the first dimension of 'bboxes' must be greater than 0, but got %d"
                             % (self.name, bboxes.shape[0]))
        return tuple(_op("nms_with_mask", (bboxes,), iou_threshold=float(self.attrs["iou_threshold"])))


def _iou_tf(a, b):
    """TensorFlow's box IoU (corners may come in either order), 0 for an empty box."""
    ay0, ay1 = min(a[0], a[2]), max(a[0], a[2])
    ax0, ax1 = min(a[1], a[3]), max(a[1], a[3])
    by0, by1 = min(b[0], b[2]), max(b[0], b[2])
    bx0, bx1 = min(b[1], b[3]), max(b[1], b[3])
    area_a = (ay1 - ay0) * (ax1 - ax0)
    area_b = (by1 - by0) * (bx1 - bx0)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    iy = max(min(ay1, by1) - max(ay0, by0), 0.0)
    ix = max(min(ax1, bx1) - max(ax0, bx0), 0.0)
    inter = iy * ix
    return inter / (area_a + area_b - inter)


def _greedy_nms(scores, overlap, max_out, thr, score_thr):
    """Indices kept by greedy NMS: highest score first (ties: lower index), candidates with
    score > score_thr, a candidate dropped when overlap(kept, it) > thr."""
    order = sorted((i for i, s in enumerate(scores) if s > score_thr), key=lambda i: (-scores[i], i))
    kept = []
    for i in order:
        if len(kept) >= max_out:
            break
        if all(not (overlap(k, i) > thr) for k in kept):
            kept.append(i)
    return kept


def _nms_scalars(who, max_output_size, iou_threshold, score_threshold, iou_name="iou_threshold"):
    mo = _scalar_value(who, "max_output_size", max_output_size)
    thr = float(_scalar_value(who, iou_name, iou_threshold))
    st = float(_scalar_value(who, "score_threshold", score_threshold))
    if int(mo) != mo or mo < 0:
        raise ValueError("For '%s', 'max_output_size' must be a non-negative integer, but got %r" % (who, mo))
    return int(mo), thr, st


@_export
class NonMaxSuppressionV3(Primitive):
    """NonMaxSuppressionV3()(boxes (N, 4) y1 x1 y2 x2, scores (N,), max_output_size,
    iou_threshold, score_threshold) -> int32 indices of the kept boxes, best first
    (TensorFlow's NonMaxSuppressionV3)."""

    def __call__(self, boxes, scores, max_output_size, iou_threshold, score_threshold):
        who = self.name
        _tensor(who, "boxes", boxes)
        _tensor(who, "scores", scores)
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise ValueError("For '%s', the shape of 'boxes' must be (N, 4), but got %s" % (who, boxes.shape))
        if scores.ndim != 1 or scores.shape[0] != boxes.shape[0]:
            raise ValueError("For '%s', 'scores' must be 1-D with the boxes' count %d, but got %s"
                             % (who, boxes.shape[0], scores.shape))
        mo, thr, st = _nms_scalars(who, max_output_size, iou_threshold, score_threshold)
        if not 0 <= thr <= 1:
            raise ValueError("For '%s', 'iou_threshold' must be in [0, 1], but got %r" % (who, thr))
        b, s = boxes.tolist(), scores.tolist()
        kept = _greedy_nms(s, lambda i, j: _iou_tf(b[i], b[j]), mo, thr, st)
        return _new(kept, _dt.int32) if kept else F.zeros((0,), dtype=_dt.int32)


@_export
class NonMaxSuppressionWithOverlaps(Primitive):
    """NonMaxSuppressionWithOverlaps()(overlaps (N, N), scores (N,), max_output_size,
    overlap_threshold, score_threshold) -> int32 indices kept, with overlaps[i][j] as the
    similarity of boxes i and j."""

    def __call__(self, overlaps, scores, max_output_size, overlap_threshold, score_threshold):
        who = self.name
        _tensor(who, "overlaps", overlaps)
        _tensor(who, "scores", scores)
        if overlaps.ndim != 2 or overlaps.shape[0] != overlaps.shape[1]:
            raise ValueError("For '%s', 'overlaps' must be a square 2-D tensor, but got %s" % (who, overlaps.shape))
        if scores.ndim != 1 or scores.shape[0] != overlaps.shape[0]:
            raise ValueError("For '%s', 'scores' must be 1-D of length %d, but got %s"
                             % (who, overlaps.shape[0], scores.shape))
        mo, thr, st = _nms_scalars(who, max_output_size, overlap_threshold, score_threshold, "overlap_threshold")
        o, s = overlaps.tolist(), scores.tolist()
        kept = _greedy_nms(s, lambda i, j: o[i][j], mo, thr, st)
        return _new(kept, _dt.int32) if kept else F.zeros((0,), dtype=_dt.int32)


@_export
class CombinedNonMaxSuppression(Primitive):
    """CombinedNonMaxSuppression(pad_per_class=False, clip_boxes=True)(boxes (B, N, q, 4),
    scores (B, N, C), max_output_size_per_class, max_total_size, iou_threshold, score_threshold)
    -> (nmsed_boxes (B, T, 4), nmsed_scores (B, T), nmsed_classes (B, T) float32,
    valid_detections int32 (B,)): per-class greedy NMS, then the best T over all classes
    (TensorFlow's CombinedNonMaxSuppression)."""

    def __init__(self, pad_per_class=False, clip_boxes=True):
        _type("CombinedNonMaxSuppression", "pad_per_class", pad_per_class, (bool,), "bool")
        _type("CombinedNonMaxSuppression", "clip_boxes", clip_boxes, (bool,), "bool")
        super().__init__(pad_per_class=pad_per_class, clip_boxes=clip_boxes)

    def __call__(self, boxes, scores, max_output_size_per_class, max_total_size, iou_threshold, score_threshold):
        who = self.name
        _tensor(who, "boxes", boxes)
        _tensor(who, "scores", scores)
        if boxes.ndim != 4 or boxes.shape[3] != 4:
            raise ValueError("For '%s', 'boxes' must have shape (batch, num_boxes, q, 4), but got %s"
                             % (who, boxes.shape))
        if scores.ndim != 3 or scores.shape[:2] != boxes.shape[:2]:
            raise ValueError("For '%s', 'scores' must have shape (batch, num_boxes, num_classes), but got %s"
                             % (who, scores.shape))
        B, N, q, _ = boxes.shape
        C = scores.shape[2]
        if q != 1 and q != C:
            raise ValueError("For '%s', the third dimension of 'boxes' must be 1 or num_classes %d, but got %d"
                             % (who, C, q))
        per_class = int(_scalar_value(who, "max_output_size_per_class", max_output_size_per_class))
        total = int(_scalar_value(who, "max_total_size", max_total_size))
        if per_class <= 0 or total <= 0:
            raise ValueError("For '%s', 'max_output_size_per_class' and 'max_total_size' must be positive, "
                             "but got %d and %d" % (who, per_class, total))
        thr = float(_scalar_value(who, "iou_threshold", iou_threshold))
        st = float(_scalar_value(who, "score_threshold", score_threshold))
        if not 0 <= thr <= 1:
            raise ValueError("For '%s', 'iou_threshold' must be in [0, 1], but got %r" % (who, thr))
        size = min(total, per_class * C) if self.attrs["pad_per_class"] else total
        bx, sc = boxes.tolist(), scores.tolist()
        out_b, out_s, out_c, valid = [], [], [], []
        for bi in range(B):
            cand = []
            for c in range(C):
                cb = [bx[bi][n][0 if q == 1 else c] for n in range(N)]
                cs = [sc[bi][n][c] for n in range(N)]
                for k in _greedy_nms(cs, lambda i, j: _iou_tf(cb[i], cb[j]), per_class, thr, st):
                    cand.append((cs[k], c, cb[k]))
            cand.sort(key=lambda t: -t[0])  # (stable: class order, then selection order, on ties)
            cand = cand[:size]
            rows, ss, cs_ = [], [], []
            for s, c, box in cand:
                if self.attrs["clip_boxes"]:
                    box = [min(max(v, 0.0), 1.0) for v in box]
                rows.append(list(box))
                ss.append(s)
                cs_.append(float(c))
            valid.append(len(cand))
            pad = size - len(cand)
            out_b.append(rows + [[0.0] * 4] * pad)
            out_s.append(ss + [0.0] * pad)
            out_c.append(cs_ + [0.0] * pad)
        return (_new(out_b, _dt.float32), _new(out_s, _dt.float32), _new(out_c, _dt.float32),
                _new(valid, _dt.int32))


# ---- boxes ------------------------------------------------------------------------------------------

def _boxes(who, name, x, allowed=_F16_F32):
    _tensor(who, name, x)
    _dtypes(who, name, x, allowed)
    if x.ndim != 2 or x.shape[1] != 4:
        raise ValueError("For '%s', the shape of '%s' must be [N, 4], but got: %s" % (who, name, list(x.shape)))
    return x


@_export
def iou(anchor_boxes, gt_boxes, mode='iou'):
    """ops.iou(anchor_boxes (N, 4), gt_boxes (M, 4), mode='iou') -> (M, N): overlap / union
    ('iou') or overlap / gt area ('iof'), corners x0 y0 x1 y1 inclusive (sizes x1 - x0 + 1), as
    MindSpore's kernel (with its 1e-10 in the denominator)."""
    who = "IOU"
    _str_in(who, "mode", mode, ("iou", "iof"))
    a = _boxes(who, "anchor_boxes", anchor_boxes)
    g = _boxes(who, "gt_boxes", gt_boxes)
    if a.dtype != g.dtype:
        raise TypeError("For '%s', 'anchor_boxes' and 'gt_boxes' must have one dtype, but got %s and %s"
                        % (who, a.dtype, g.dtype))
    dtype = a.dtype
    a, g = _compute(a), _compute(g)
    ax0, ay0, ax1, ay1 = (F.reshape(a[:, k], (1, -1)) for k in range(4))
    gx0, gy0, gx1, gy1 = (F.reshape(g[:, k], (-1, 1)) for k in range(4))
    w = F.maximum(F.minimum(ax1, gx1) - F.maximum(ax0, gx0) + 1, 0.0)
    h = F.maximum(F.minimum(ay1, gy1) - F.maximum(ay0, gy0) + 1, 0.0)
    overlap = w * h
    area_g = (gx1 - gx0 + 1) * (gy1 - gy0 + 1)
    if mode == "iou":
        area_a = (ax1 - ax0 + 1) * (ay1 - ay0 + 1)
        out = overlap / (area_a + area_g - overlap + 1e-10)
    else:
        out = overlap / (area_g + 1e-10)
    return _back(out, dtype)


@_export
class IOU(Primitive):
    """IOU(mode='iou')(anchor_boxes, gt_boxes): as ops.iou."""

    def __init__(self, mode='iou'):
        _str_in("IOU", "mode", mode, ("iou", "iof"))
        super().__init__(mode=mode)

    def __call__(self, anchor_boxes, gt_boxes):
        return iou(anchor_boxes, gt_boxes, self.attrs["mode"])


def _four(who, name, v):
    if not isinstance(v, (tuple, list)) or len(v) != 4:
        raise TypeError("For '%s', '%s' must be a tuple or list of 4 floats, but got %r" % (who, name, v))
    for e in v:
        _type(who, "%s elements" % name, e, (int, float), "float")
    return tuple(float(e) for e in v)


def _centres(b):
    """(centre x, centre y, width, height) with MindSpore's +1 sizes."""
    x0, y0, x1, y1 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    return (x0 + x1) * 0.5, (y0 + y1) * 0.5, x1 - x0 + 1.0, y1 - y0 + 1.0


@_export
def bounding_box_encode(anchor_box, groundtruth_box, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0)):
    """ops.bounding_box_encode(anchor_box (N, 4), groundtruth_box (N, 4), means, stds) -> (N, 4)
    deltas ((gx - px) / pw, (gy - py) / ph, log(gw / pw), log(gh / ph)) normalised by means/stds."""
    who = "BoundingBoxEncode"
    means, stds = _four(who, "means", means), _four(who, "stds", stds)
    if 0.0 in stds:
        raise ValueError("For '%s', 'stds' must not contain 0, but got %r" % (who, stds))
    a = _boxes(who, "anchor_box", anchor_box)
    g = _boxes(who, "groundtruth_box", groundtruth_box)
    if a.shape[0] != g.shape[0]:
        raise ValueError("For '%s', 'anchor_box' and 'groundtruth_box' must have the same first dimension, "
                         "but got %d and %d" % (who, a.shape[0], g.shape[0]))
    dtype = a.dtype
    px, py, pw, ph = _centres(_compute(a))
    gx, gy, gw, gh = _centres(_compute(g))
    d = ((gx - px) / pw, (gy - py) / ph, F.log(gw / pw), F.log(gh / ph))
    out = F.stack([(v - m) / s for v, m, s in zip(d, means, stds)], 1)
    return _back(out, dtype)


@_export
def bounding_box_decode(anchor_box, deltas, max_shape, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0),
                        wh_ratio_clip=0.016):
    """ops.bounding_box_decode(anchor_box (N, 4), deltas (N, 4), max_shape (h, w), means, stds,
    wh_ratio_clip=0.016) -> boxes (N, 4): deltas denormalised, width/height deltas clipped to
    |log(wh_ratio_clip)|, corners clipped to [0, w - 1] x [0, h - 1]."""
    who = "BoundingBoxDecode"
    means, stds = _four(who, "means", means), _four(who, "stds", stds)
    _type(who, "wh_ratio_clip", wh_ratio_clip, (float,), "float")
    if not isinstance(max_shape, (tuple, list)) or len(max_shape) != 2:
        raise ValueError("For '%s', the length of 'max_shape' must be 2, but got %r" % (who, max_shape))
    a = _boxes(who, "anchor_box", anchor_box)
    d = _boxes(who, "deltas", deltas)
    if a.shape[0] != d.shape[0]:
        raise ValueError("For '%s', 'anchor_box' and 'deltas' must have the same first dimension, but got %d and %d"
                         % (who, a.shape[0], d.shape[0]))
    dtype = a.dtype
    px, py, pw, ph = _centres(_compute(a))
    d = _compute(d)
    dx, dy, dw, dh = (d[:, k] * s + m for k, m, s in zip(range(4), means, stds))
    lim = abs(_math.log(wh_ratio_clip))
    dw, dh = F.clip_by_value(dw, -lim, lim), F.clip_by_value(dh, -lim, lim)
    gx, gy = px + pw * dx, py + ph * dy
    gw, gh = pw * F.exp(dw), ph * F.exp(dh)
    h, w = float(max_shape[0]), float(max_shape[1])
    x1 = F.clip_by_value(gx - gw * 0.5 + 0.5, 0.0, w - 1)
    y1 = F.clip_by_value(gy - gh * 0.5 + 0.5, 0.0, h - 1)
    x2 = F.clip_by_value(gx + gw * 0.5 - 0.5, 0.0, w - 1)
    y2 = F.clip_by_value(gy + gh * 0.5 - 0.5, 0.0, h - 1)
    return _back(F.stack([x1, y1, x2, y2], 1), dtype)


@_export
class BoundingBoxEncode(Primitive):
    """BoundingBoxEncode(means=(0, 0, 0, 0), stds=(1, 1, 1, 1))(anchor_box, groundtruth_box)."""

    def __init__(self, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0)):
        super().__init__(means=_four(self.__class__.__name__, "means", means),
                         stds=_four(self.__class__.__name__, "stds", stds))

    def __call__(self, anchor_box, groundtruth_box):
        return bounding_box_encode(anchor_box, groundtruth_box, self.attrs["means"], self.attrs["stds"])


@_export
class BoundingBoxDecode(Primitive):
    """BoundingBoxDecode(max_shape, means=(0, 0, 0, 0), stds=(1, 1, 1, 1),
    wh_ratio_clip=0.016)(anchor_box, deltas)."""

    def __init__(self, max_shape, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0), wh_ratio_clip=0.016):
        who = self.__class__.__name__
        _type(who, "wh_ratio_clip", wh_ratio_clip, (float,), "float")
        if not isinstance(max_shape, (tuple, list)) or len(max_shape) != 2:
            raise ValueError("For '%s', the length of 'max_shape' must be 2, but got %r" % (who, max_shape))
        super().__init__(max_shape=tuple(max_shape), means=_four(who, "means", means), stds=_four(who, "stds", stds),
                         wh_ratio_clip=wh_ratio_clip)

    def __call__(self, anchor_box, deltas):
        a = self.attrs
        return bounding_box_decode(anchor_box, deltas, a["max_shape"], a["means"], a["stds"], a["wh_ratio_clip"])


@_export
def check_valid(bboxes, img_metas):
    """ops.check_valid(bboxes (N, 4), img_metas (height, width, ratio)) -> bool (N,): x0, y0 >= 0
    and x1 <= width * ratio - 1, y1 <= height * ratio - 1."""
    who = "CheckValid"
    allowed = (_dt.float16, _dt.float32, _dt.int16, _dt.uint8)
    _boxes(who, "bboxes", bboxes, allowed)
    _tensor(who, "img_metas", img_metas)
    _dtypes(who, "img_metas", img_metas, allowed)
    if img_metas.shape != (3,):
        raise ValueError("For '%s', the shape of 'img_metas' must be (3,), but got %s" % (who, img_metas.shape))
    if bboxes.dtype != img_metas.dtype:
        raise TypeError("For '%s', 'bboxes' and 'img_metas' must have one dtype, but got %s and %s"
                        % (who, bboxes.dtype, img_metas.dtype))
    m = F.cast(img_metas, _dt.float64)
    b = F.cast(bboxes, _dt.float64)
    max_x = m[1] * m[2] - 1.0
    max_y = m[0] * m[2] - 1.0
    bad = F.logical_or(F.logical_or(b[:, 0] < 0, b[:, 1] < 0), F.logical_or(max_x < b[:, 2], max_y < b[:, 3]))
    return F.logical_not(bad)


@_export
class CheckValid(Primitive):
    """CheckValid()(bboxes, img_metas): as ops.check_valid."""

    def __call__(self, bboxes, img_metas):
        return check_valid(bboxes, img_metas)


# ---- ROIAlign, CropAndResize ------------------------------------------------------------------------

@_export
class ROIAlign(Primitive):
    """ROIAlign(pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1)(features
    (N, C, H, W), rois (R, 5): batch index, x0, y0, x1, y1) -> (R, C, pooled_height, pooled_width).
    roi_end_mode=1 adds 1 to x1, y1 before scaling; 0 forces rois to at least 1x1. Each bin averages
    sample_num x sample_num bilinear samples (sample_num <= 0: floor(roi size / pooled size) a side).
    Differentiable in the features (MindSpore's ROIAlignGrad)."""

    def __init__(self, pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1):
        who = "ROIAlign"
        _type(who, "pooled_height", pooled_height, (int,), "int")
        _type(who, "pooled_width", pooled_width, (int,), "int")
        _type(who, "spatial_scale", spatial_scale, (float,), "float")
        _type(who, "sample_num", sample_num, (int,), "int")
        _type(who, "roi_end_mode", roi_end_mode, (int,), "int")
        if roi_end_mode not in (0, 1):
            raise ValueError("For '%s', the 'roi_end_mode' must be in range of [0, 1], but got %d."
                             % (who, roi_end_mode))
        if pooled_height <= 0 or pooled_width <= 0:
            raise ValueError("For '%s', 'pooled_height' and 'pooled_width' must be positive, but got %d and %d"
                             % (who, pooled_height, pooled_width))
        super().__init__(pooled_height=pooled_height, pooled_width=pooled_width, spatial_scale=spatial_scale,
                         sample_num=sample_num, roi_end_mode=roi_end_mode)

    def __call__(self, features, rois):
        who = self.name
        _tensor(who, "features", features)
        _tensor(who, "rois", rois)
        _dtypes(who, "features", features, _FLOATS)
        if features.ndim != 4:
            raise ValueError("For '%s', the dimension of 'features' must be 4, but got %d" % (who, features.ndim))
        if rois.ndim != 2 or rois.shape[1] != 5:
            raise ValueError("For '%s', the shape of 'rois' must be (R, 5), but got %s" % (who, rois.shape))
        if rois.dtype != features.dtype:
            raise TypeError("For '%s', 'rois' must have the dtype of 'features' %s, but got %s"
                            % (who, features.dtype, rois.dtype))
        return _op("roi_align", (features, rois), **self.attrs)


@_export
def crop_and_resize(image, boxes, box_indices, crop_size, method='bilinear', extrapolation_value=0.0):
    """ops.crop_and_resize(image (B, H, W, C), boxes (R, 4) normalised y1 x1 y2 x2, box_indices
    int32 (R,), crop_size (h, w), method='bilinear'|'nearest', extrapolation_value=0.0) -> float32
    (R, h, w, C), TensorFlow's sampling (y -> y * (H - 1)); points outside the image read
    extrapolation_value."""
    who = "CropAndResize"
    _str_in(who, "method", method, ("bilinear", "nearest", "bilinear_v2"))
    if method == "bilinear_v2":
        raise NotImplementedError("For '%s', method 'bilinear_v2' is not supported by pijit; use 'bilinear'" % who)
    _type(who, "extrapolation_value", extrapolation_value, (float,), "float")
    _tensor(who, "x", image)
    _tensor(who, "boxes", boxes)
    _tensor(who, "box_index", box_indices)
    if not (isinstance(crop_size, tuple) and len(crop_size) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in crop_size)):
        raise TypeError("For '%s', 'crop_size' must be a tuple of two ints, but got %r" % (who, crop_size))
    if crop_size[0] <= 0 or crop_size[1] <= 0:
        raise ValueError("For '%s', the value of 'crop_size' must be positive, but got %r" % (who, crop_size))
    if image.ndim != 4:
        raise ValueError("For '%s', the dimension of 'x' must be 4, but got %d" % (who, image.ndim))
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError("For '%s', the shape of 'boxes' must be (num_boxes, 4), but got %s" % (who, boxes.shape))
    if box_indices.ndim != 1 or box_indices.shape[0] != boxes.shape[0]:
        raise ValueError("For '%s', 'box_index' must be 1-D with the boxes' count %d, but got shape %s"
                         % (who, boxes.shape[0], box_indices.shape))
    if boxes.dtype not in _FLOATS:
        raise TypeError("For '%s', the dtype of 'boxes' must be float, but got %s" % (who, boxes.dtype))
    if box_indices.dtype not in (_dt.int32, _dt.int64):
        raise TypeError("For '%s', the dtype of 'box_index' must be int32, but got %s" % (who, box_indices.dtype))
    img = image if image.dtype == _dt.float32 else F.cast(image, _dt.float32)
    bx = boxes if boxes.dtype == _dt.float32 else F.cast(boxes, _dt.float32)
    bi = box_indices if box_indices.dtype == _dt.int32 else F.cast(box_indices, _dt.int32)
    return _op("crop_and_resize", (img, bx, bi), crop_height=crop_size[0], crop_width=crop_size[1],
               method=method, extrapolation_value=float(extrapolation_value))


@_export
class CropAndResize(Primitive):
    """CropAndResize(method='bilinear', extrapolation_value=0.0)(x, boxes, box_index, crop_size)."""

    def __init__(self, method='bilinear', extrapolation_value=0.0):
        _str_in("CropAndResize", "method", method, ("bilinear", "nearest", "bilinear_v2"))
        _type("CropAndResize", "extrapolation_value", extrapolation_value, (float,), "float")
        super().__init__(method=method, extrapolation_value=extrapolation_value)

    def __call__(self, x, boxes, box_index, crop_size):
        return crop_and_resize(x, boxes, box_index, crop_size, self.attrs["method"], self.attrs["extrapolation_value"])


# ---- grid sampling ----------------------------------------------------------------------------------

def _grid_sample(who, x, grid, mode, padding_mode, align_corners, ndim=None):
    _tensor(who, "input", x)
    _tensor(who, "grid", grid)
    _str_in(who, "mode" if ndim is None else "interpolation_mode", mode, ("bilinear", "nearest"))
    _str_in(who, "padding_mode", padding_mode, ("zeros", "border", "reflection"))
    _type(who, "align_corners", align_corners, (bool,), "bool")
    if ndim is not None and x.ndim != ndim:
        raise ValueError("For '%s', the dimension of 'input_x' must be %d, but got %d" % (who, ndim, x.ndim))
    if x.ndim not in (4, 5):
        raise ValueError("For '%s', the dimension of 'input' must be 4 or 5, but got %d" % (who, x.ndim))
    if grid.ndim != x.ndim or grid.shape[-1] != x.ndim - 2 or grid.shape[0] != x.shape[0]:
        raise ValueError("For '%s', 'grid' must have shape (N, ..., %d) of %d dims with the input's batch %d, "
                         "but got %s" % (who, x.ndim - 2, x.ndim, x.shape[0], grid.shape))
    _dtypes(who, "input", x, _FLOATS)
    if grid.dtype != x.dtype:
        raise TypeError("For '%s', 'grid' must have the input's dtype %s, but got %s" % (who, x.dtype, grid.dtype))
    return _op("grid_sample", (x, grid), mode=mode, padding_mode=padding_mode, align_corners=align_corners)


@_export
def grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=False):
    """ops.grid_sample(input (N, C, H, W) | (N, C, D, H, W), grid (N, Ho, Wo, 2) | (N, Do, Ho, Wo, 3),
    mode='bilinear'|'nearest', padding_mode='zeros'|'border'|'reflection', align_corners=False):
    torch.nn.functional.grid_sample's sampling; differentiable in the input and the grid."""
    if mode == "bicubic":
        raise NotImplementedError("For 'grid_sample', mode 'bicubic' is not supported by pijit")
    return _grid_sample("grid_sample", input, grid, mode, padding_mode, align_corners)


def _grid_sampler_class(name, ndim):
    class G(Primitive):
        def __init__(self, interpolation_mode='bilinear', padding_mode='zeros', align_corners=False):
            _str_in(name, "interpolation_mode", interpolation_mode, ("bilinear", "nearest"))
            _str_in(name, "padding_mode", padding_mode, ("zeros", "border", "reflection"))
            _type(name, "align_corners", align_corners, (bool,), "bool")
            super().__init__(interpolation_mode=interpolation_mode, padding_mode=padding_mode,
                             align_corners=align_corners)

        def __call__(self, input_x, grid):
            a = self.attrs
            return _grid_sample(name, input_x, grid, a["interpolation_mode"], a["padding_mode"],
                                a["align_corners"], ndim)
    G.__name__ = G.__qualname__ = name
    G.__doc__ = "%s(interpolation_mode='bilinear', padding_mode='zeros', align_corners=False)(input_x, grid)." % name
    return _export(G)


GridSampler2D = _grid_sampler_class("GridSampler2D", 4)
GridSampler3D = _grid_sampler_class("GridSampler3D", 5)


def _base_coords(n, align_corners):
    """torch's affine_grid base coordinates along a dim of n points."""
    if n == 1:
        return [0.0]
    if align_corners:
        return [-1.0 + 2.0 * i / (n - 1) for i in range(n)]
    return [(2.0 * i + 1.0) / n - 1.0 for i in range(n)]


@_export
def affine_grid(theta, size, align_corners=False):
    """ops.affine_grid(theta (N, 2, 3) | (N, 3, 4), size (N, C, H, W) | (N, C, D, H, W),
    align_corners=False) -> grid (N, H, W, 2) | (N, D, H, W, 3): the sampling grid of an affine map
    (torch.nn.functional.affine_grid); differentiable in theta."""
    who = "affine_grid"
    _tensor(who, "theta", theta)
    _type(who, "align_corners", align_corners, (bool,), "bool")
    if isinstance(size, _Tensor):
        size = tuple(int(v) for v in size.tolist())
    if not isinstance(size, (tuple, list)) or len(size) not in (4, 5):
        raise ValueError("For '%s', 'size' must be a tuple of 4 or 5 ints, but got %r" % (who, size))
    size = tuple(int(v) for v in size)
    _dtypes(who, "theta", theta, _FLOATS)
    k = len(size) - 2  # spatial dims
    if theta.ndim != 3 or theta.shape[1:] != (k, k + 1):
        raise ValueError("For '%s', 'theta' must have shape (N, %d, %d) for a %d-D size, but got %s"
                         % (who, k, k + 1, len(size), theta.shape))
    if theta.shape[0] != size[0]:
        raise ValueError("For '%s', the batch of 'theta' %d must equal size[0] %d" % (who, theta.shape[0], size[0]))
    spatial = size[2:]
    axes = [_base_coords(n, align_corners) for n in spatial]  # (D,) H, W
    rows = []
    if k == 2:
        for y in axes[0]:
            for x in axes[1]:
                rows.append([x, y, 1.0])
    else:
        for z in axes[0]:
            for y in axes[1]:
                for x in axes[2]:
                    rows.append([x, y, z, 1.0])
    base = _new(rows, theta.dtype)  # (P, k + 1)
    out = F.matmul(base, F.transpose(theta, (0, 2, 1)))  # (N, P, k)
    return F.reshape(out, (size[0],) + tuple(spatial) + (k,))


@_export
class AffineGrid(Primitive):
    """AffineGrid(align_corners=False)(theta, output_size): as ops.affine_grid."""

    def __init__(self, align_corners=False):
        _type("AffineGrid", "align_corners", align_corners, (bool,), "bool")
        super().__init__(align_corners=align_corners)

    def __call__(self, theta, output_size):
        return affine_grid(theta, output_size, self.attrs["align_corners"])


# ---- colour spaces ----------------------------------------------------------------------------------

def _rgb(who, name, x, allowed=_FLOATS):
    _tensor(who, name, x)
    _dtypes(who, name, x, allowed)
    if x.ndim < 1 or x.shape[-1] != 3:
        raise ValueError("For '%s', the last dimension of '%s' must be 3, but got shape %s" % (who, name, x.shape))
    return x


def _rgb_to_hsv(x):
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    v = F.maximum(F.maximum(r, g), b)
    rng = v - F.minimum(F.minimum(r, g), b)
    zero = F.zeros_like(v)
    s = F.select(v > 0, rng / F.select(v > 0, v, F.ones_like(v)), zero)
    safe = F.select(rng > 0, rng, F.ones_like(rng))
    norm = 1.0 / (6.0 * safe)
    h = F.select(r == v, norm * (g - b), F.select(g == v, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0))
    h = F.select(rng > 0, h, zero)
    h = F.select(h < 0, h + 1.0, h)
    return h, s, v


def _hsv_to_rgb(h, s, v):
    dh = h * 6.0
    dr = F.clip_by_value(F.abs(dh - 3.0) - 1.0, 0.0, 1.0)
    dg = F.clip_by_value(2.0 - F.abs(dh - 2.0), 0.0, 1.0)
    db = F.clip_by_value(2.0 - F.abs(dh - 4.0), 0.0, 1.0)
    one_minus_s = 1.0 - s
    return F.stack([(one_minus_s + s * dr) * v, (one_minus_s + s * dg) * v, (one_minus_s + s * db) * v], -1)


@_export
class RGBToHSV(Primitive):
    """RGBToHSV()(images (..., 3)) -> hue, saturation, value in [0, 1] (TensorFlow's rgb_to_hsv)."""

    def __call__(self, images):
        x = _rgb(self.name, "images", images)
        h, s, v = _rgb_to_hsv(_compute(x))
        return _back(F.stack([h, s, v], -1), x.dtype)


@_export
class HSVToRGB(Primitive):
    """HSVToRGB()(x (..., 3) hue, saturation, value) -> RGB (TensorFlow's hsv_to_rgb)."""

    def __call__(self, x):
        x = _rgb(self.name, "x", x)
        if x.ndim != 4:
            raise ValueError("For '%s', the dimension of 'x' must be 4, but got %d" % (self.name, x.ndim))
        c = _compute(x)
        return _back(_hsv_to_rgb(c[..., 0], c[..., 1], c[..., 2]), x.dtype)


def _image_and_scalar(who, image, name, value):
    x = _rgb(who, "image", image, _F16_F32)
    if x.ndim < 3:
        raise ValueError("For '%s', the dimension of 'image' must be at least 3, but got %d" % (who, x.ndim))
    _tensor(who, name, value)
    if value.dtype != _dt.float32:
        raise TypeError("For '%s', the dtype of '%s' must be float32, but got %s" % (who, name, value.dtype))
    if value.ndim != 0:
        raise ValueError("For '%s', '%s' must be 0-D, but got shape %s" % (who, name, value.shape))
    return x


@_export
class AdjustHue(Primitive):
    """AdjustHue()(image (..., 3) RGB, delta 0-D float32): the hue shifted by delta (mod 1)."""

    def __call__(self, image, delta):
        x = _image_and_scalar(self.name, image, "delta", delta)
        h, s, v = _rgb_to_hsv(_compute(x))
        h = h + delta
        h = h - F.floor(h)
        return _back(_hsv_to_rgb(h, s, v), x.dtype)


@_export
class AdjustSaturation(Primitive):
    """AdjustSaturation()(image (..., 3) RGB, scale 0-D float32): the saturation times scale,
    clipped to [0, 1]."""

    def __call__(self, image, scale):
        x = _image_and_scalar(self.name, image, "scale", scale)
        h, s, v = _rgb_to_hsv(_compute(x))
        s = F.clip_by_value(s * scale, 0.0, 1.0)
        return _back(_hsv_to_rgb(h, s, v), x.dtype)


# ---- resizing -----------------------------------------------------------------------------------

def _size_pair(who, size):
    if isinstance(size, _Tensor):
        size = tuple(int(v) for v in size.tolist())
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise ValueError("For '%s', 'size' must have 2 elements, but got %r" % (who, size))
    size = tuple(int(v) for v in size)
    if size[0] <= 0 or size[1] <= 0:
        raise ValueError("For '%s', the values of 'size' must be positive, but got %r" % (who, size))
    return size


def _resample(x_nchw, wy, wx, dtype):
    """out[n, c] = Wy @ x[n, c] @ Wx^T with the weight matrices built on the host."""
    ty = _new(wy, dtype)
    tx = _new(wx, dtype)
    t = F.matmul(ty, x_nchw)  # (N, C, OH, W)
    return F.matmul(t, F.transpose(tx, (1, 0)))


def _area_weights(n_in, n_out, align_corners):
    scale = (n_in - 1) / (n_out - 1) if align_corners and n_out > 1 else n_in / n_out
    rows = []
    for o in range(n_out):
        lo, hi = o * scale, (o + 1) * scale
        row = [0.0] * n_in
        i = int(_math.floor(lo))
        while i < _math.ceil(hi):
            w = (min(i + 1, hi) - max(i, lo)) if i + 1 > hi or i < lo else 1.0
            if i + 1 > hi or i < lo:
                w = (hi - i if i + 1 > hi else 1.0) - (lo - i if i < lo else 0.0)
            row[min(max(i, 0), n_in - 1)] += w / scale
            i += 1
        rows.append(row)
    return rows


@_export
class ResizeArea(Primitive):
    """ResizeArea(align_corners=False)(images (N, H, W, C), size (new_h, new_w)) -> float32
    (N, new_h, new_w, C): each output pixel the area-weighted mean of the input pixels its box
    covers (TensorFlow's resize_area)."""

    def __init__(self, align_corners=False):
        _type("ResizeArea", "align_corners", align_corners, (bool,), "bool")
        super().__init__(align_corners=align_corners)

    def __call__(self, images, size):
        who = self.name
        _tensor(who, "images", images)
        if images.ndim != 4:
            raise ValueError("For '%s', the dimension of 'images' must be 4, but got %d" % (who, images.ndim))
        oh, ow = _size_pair(who, size)
        _, H, W, _ = images.shape
        ac = self.attrs["align_corners"]
        x = F.transpose(F.cast(images, _dt.float64), (0, 3, 1, 2))
        out = _resample(x, _area_weights(H, oh, ac), _area_weights(W, ow, ac), _dt.float64)
        return F.cast(F.transpose(out, (0, 2, 3, 1)), _dt.float32)


def _cubic_weights(n_in, n_out, align_corners, half_pixel):
    """TensorFlow's resize_bicubic taps: a 1/1024 coefficient table, A = -0.5 with half-pixel
    centres (taps outside the image dropped and the rest renormalised), else A = -0.75 with
    clamped taps."""
    a = -0.5 if half_pixel else -0.75
    scale = (n_in - 1) / (n_out - 1) if align_corners and n_out > 1 else n_in / n_out

    def near(t):
        return ((a + 2) * t - (a + 3)) * t * t + 1

    def far(t):
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a

    rows = []
    for o in range(n_out):
        src = (o + 0.5) * scale - 0.5 if half_pixel else o * scale
        base = int(_math.floor(src))
        off = int(round((src - base) * 1024))
        d = off / 1024.0
        ws = [far(d + 1), near(d), near(1 - d), far(2 - d)]
        idx = [base - 1, base, base + 1, base + 2]
        if half_pixel:
            ws = [w if 0 <= i < n_in else 0.0 for w, i in zip(ws, idx)]
            tot = sum(ws)
            if abs(tot) >= 1000 * 1.1754943508222875e-38:
                ws = [w / tot for w in ws]
        row = [0.0] * n_in
        for w, i in zip(ws, idx):
            row[min(max(i, 0), n_in - 1)] += w
        rows.append(row)
    return rows


@_export
class ResizeBicubic(Primitive):
    """ResizeBicubic(align_corners=False, half_pixel_centers=False)(images (N, C, H, W), size)
    -> (N, C, new_h, new_w) in the images' dtype (TensorFlow's bicubic kernel)."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        _type("ResizeBicubic", "align_corners", align_corners, (bool,), "bool")
        _type("ResizeBicubic", "half_pixel_centers", half_pixel_centers, (bool,), "bool")
        if align_corners and half_pixel_centers:
            raise ValueError("For 'ResizeBicubic', the half_pixel_centers must be false when align_corners is "
                             "true, but got half_pixel_centers: True")
        super().__init__(align_corners=align_corners, half_pixel_centers=half_pixel_centers)

    def __call__(self, images, size):
        who = self.name
        _tensor(who, "images", images)
        _dtypes(who, "images", images, _FLOATS)
        if images.ndim != 4:
            raise ValueError("For '%s', the dimension of 'images' must be 4, but got %d" % (who, images.ndim))
        oh, ow = _size_pair(who, size)
        H, W = images.shape[2:]
        a = self.attrs
        wy = _cubic_weights(H, oh, a["align_corners"], a["half_pixel_centers"])
        wx = _cubic_weights(W, ow, a["align_corners"], a["half_pixel_centers"])
        out = _resample(F.cast(images, _dt.float64), wy, wx, _dt.float64)
        return F.cast(out, images.dtype)


# ---- array ops ------------------------------------------------------------------------------------

def _int_value(who, name, v):
    v = _scalar_value(who, name, v)
    if int(v) != v:
        raise TypeError("For '%s', '%s' must be an integer, but got %r" % (who, name, v))
    return int(v)


@_export
def intopk(x1, x2, k):
    """ops.intopk(x1 (N, C) float, x2 (N,) int targets, k) -> bool (N,): whether x2[i]'s
    prediction is among the k largest of row i (ties at the boundary count as inside; a
    non-finite prediction or a target out of range gives False)."""
    who = "InTopK"
    _type(who, "k", k, (int,), "int")
    _tensor(who, "x1", x1)
    _tensor(who, "x2", x2)
    _dtypes(who, "x1", x1, _F16_F32)
    _dtypes(who, "x2", x2, (_dt.int32, _dt.int64))
    if x1.ndim != 2 or x2.ndim != 1 or x2.shape[0] != x1.shape[0]:
        raise ValueError("For '%s', 'x1' must be 2-D and 'x2' 1-D with x1's rows, but got %s and %s"
                         % (who, x1.shape, x2.shape))
    C = x1.shape[1]
    inside = F.logical_and(x2 >= 0, x2 < C)
    safe = F.cast(F.select(inside, x2, F.zeros_like(x2)), _dt.int64)
    target = F.gather_elements(x1, 1, F.reshape(safe, (-1, 1)))  # (N, 1)
    greater = F.reduce_sum(F.cast(x1 > target, _dt.int32), 1)
    finite = F.isfinite(F.reshape(target, (-1,)))
    return F.logical_and(F.logical_and(inside, finite), greater < k)


@_export
class InTopK(Primitive):
    """InTopK(k)(x1, x2): as ops.intopk."""

    def __init__(self, k):
        _type("InTopK", "k", k, (int,), "int")
        super().__init__(k=k)

    def __call__(self, x1, x2):
        return intopk(x1, x2, self.attrs["k"])


def _formats(who, src, dst):
    _type(who, "src_format", src, (str,), "str")
    _type(who, "dst_format", dst, (str,), "str")
    if len(src) not in (4, 5) or sorted(src) != sorted(dst) or len(set(src)) != len(src):
        raise ValueError("For '%s', 'src_format' and 'dst_format' must be permutations of one another of length 4 "
                         "or 5, but got '%s' and '%s'" % (who, src, dst))
    return src, dst


@_export
class DataFormatDimMap(Primitive):
    """DataFormatDimMap(src_format='NHWC', dst_format='NCHW')(input_x int in [-4, 4)): the index in
    dst_format of the dimension input_x names in src_format."""

    def __init__(self, src_format='NHWC', dst_format='NCHW'):
        _formats("DataFormatDimMap", src_format, dst_format)
        super().__init__(src_format=src_format, dst_format=dst_format)

    def __call__(self, input_x):
        who = self.name
        _tensor(who, "input_x", input_x)
        _dtypes(who, "input_x", input_x, (_dt.int32, _dt.int64))
        src, dst = self.attrs["src_format"], self.attrs["dst_format"]
        n = len(src)
        table = _new([dst.index(src[i]) for i in range(n)], input_x.dtype)
        idx = F.cast(input_x % n, _dt.int64)
        return F.reshape(F.gather(table, F.reshape(idx, (-1,)), 0), input_x.shape)


@_export
class DataFormatVecPermute(Primitive):
    """DataFormatVecPermute(src_format='NHWC', dst_format='NCHW')(input_x (4,) | (4, 2) int): the
    vector (or rows) reordered from src_format to dst_format."""

    def __init__(self, src_format='NHWC', dst_format='NCHW'):
        _formats("DataFormatVecPermute", src_format, dst_format)
        super().__init__(src_format=src_format, dst_format=dst_format)

    def __call__(self, input_x):
        who = self.name
        _tensor(who, "input_x", input_x)
        _dtypes(who, "input_x", input_x, (_dt.int32, _dt.int64))
        src, dst = self.attrs["src_format"], self.attrs["dst_format"]
        n = len(src)
        if input_x.shape not in ((n,), (n, 2)):
            raise ValueError("For '%s', the shape of 'input_x' must be (%d,) or (%d, 2), but got %s"
                             % (who, n, n, input_x.shape))
        perm = _new([src.index(c) for c in dst], _dt.int64)
        return F.gather(input_x, perm, 0)


@_export
class BatchToSpace(Primitive):
    """BatchToSpace(block_size, crops)(input_x (N, C, H, W)) -> (N / block_size**2, C,
    H * block_size - crops, W * block_size - crops)."""

    def __init__(self, block_size, crops):
        who = "BatchToSpace"
        _type(who, "block_size", block_size, (int,), "int")
        if block_size < 2:
            raise ValueError("For '%s', the 'block_size' must be greater than or equal to 2, but got %d"
                             % (who, block_size))
        if (not isinstance(crops, (tuple, list)) or len(crops) != 2
                or any(not isinstance(c, (tuple, list)) or len(c) != 2 for c in crops)):
            raise ValueError("For '%s', 'crops' must be a 2x2 list, but got %r" % (who, crops))
        if any(v < 0 for c in crops for v in c):
            raise ValueError("For '%s', the values of 'crops' must be non-negative, but got %r" % (who, crops))
        super().__init__(block_size=block_size, crops=tuple(tuple(c) for c in crops))

    def __call__(self, input_x):
        from pijit.ops import primitives3 as P3
        _tensor(self.name, "input_x", input_x)
        if input_x.ndim != 4:
            raise ValueError("For '%s', the dimension of 'input_x' must be 4, but got %d" % (self.name, input_x.ndim))
        b = self.attrs["block_size"]
        return P3._batch_to_space(self.name, input_x, (b, b), self.attrs["crops"])


@_export
class IdentityN(Primitive):
    """IdentityN()(x: list or tuple of Tensors) -> the same Tensors."""

    def __call__(self, x):
        if not isinstance(x, (list, tuple)) or not all(isinstance(t, _Tensor) for t in x):
            raise TypeError("For '%s', the input 'x' must be a list or tuple of Tensors, but got %s"
                            % (self.name, type(x).__name__))
        return type(x)(x)


@_export
class ConjugateTranspose(Primitive):
    """ConjugateTranspose()(x, perm): the conjugate of x transposed by perm (transpose for real x)."""

    def __call__(self, x, perm):
        _tensor(self.name, "x", x)
        y = F.transpose(x, tuple(perm))
        from pijit.ops.complex_fns import conj, is_complex
        return conj(y) if is_complex(y) else y


@_export
class SplitV(Primitive):
    """SplitV(size_splits, split_dim, num_split)(input_x) -> num_split Tensors along split_dim of
    the given sizes (one size may be -1: the rest)."""

    def __init__(self, size_splits, split_dim, num_split):
        who = "SplitV"
        if not isinstance(size_splits, (tuple, list)):
            raise TypeError("For '%s', 'size_splits' must be a tuple or list, but got %s"
                            % (who, type(size_splits).__name__))
        _type(who, "split_dim", split_dim, (int,), "int")
        _type(who, "num_split", num_split, (int,), "int")
        if num_split <= 0 or len(size_splits) != num_split:
            raise ValueError("For '%s', 'num_split' must be positive and equal len(size_splits) %d, but got %d"
                             % (who, len(size_splits), num_split))
        if sum(1 for s in size_splits if s == -1) > 1:
            raise ValueError("For '%s', at most one of 'size_splits' may be -1, but got %r" % (who, size_splits))
        super().__init__(size_splits=tuple(size_splits), split_dim=split_dim, num_split=num_split)

    def __call__(self, input_x):
        who = self.name
        _tensor(who, "input_x", input_x)
        dim = self.attrs["split_dim"]
        if not -input_x.ndim <= dim < input_x.ndim:
            raise ValueError("For '%s', 'split_dim' must be in [%d, %d), but got %d"
                             % (who, -input_x.ndim, input_x.ndim, dim))
        dim %= input_x.ndim
        n = input_x.shape[dim]
        sizes = list(self.attrs["size_splits"])
        known = sum(s for s in sizes if s != -1)
        if -1 in sizes:
            sizes[sizes.index(-1)] = n - known
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise ValueError("For '%s', the sum of 'size_splits' must equal the dimension %d of 'input_x', but got %r"
                             % (who, n, self.attrs["size_splits"]))
        out, start = [], 0
        for s in sizes:
            idx = (slice(None),) * dim + (slice(start, start + s),)
            out.append(input_x[idx])
            start += s
        return tuple(out)


@_export
def padding(x, pad_dim_size=8):
    """ops.padding(x (..., 1), pad_dim_size=8) -> (..., pad_dim_size): x in the first column,
    zeros in the rest."""
    who = "Padding"
    _type(who, "pad_dim_size", pad_dim_size, (int,), "int")
    if pad_dim_size <= 0:
        raise ValueError("For '%s', the 'pad_dim_size' must be greater than 0, but got %d" % (who, pad_dim_size))
    _tensor(who, "x", x)
    if x.ndim < 1 or x.shape[-1] != 1:
        raise ValueError("For '%s', the last dimension of 'x' must be 1, but got shape %s" % (who, x.shape))
    if pad_dim_size == 1:
        return F.concat((x,), -1)
    zeros = F.zeros(x.shape[:-1] + (pad_dim_size - 1,), dtype=x.dtype)
    return F.concat((x, zeros), -1)


@_export
class Padding(Primitive):
    """Padding(pad_dim_size=8)(x): as ops.padding."""

    def __init__(self, pad_dim_size=8):
        _type("Padding", "pad_dim_size", pad_dim_size, (int,), "int")
        super().__init__(pad_dim_size=pad_dim_size)

    def __call__(self, x):
        return padding(x, self.attrs["pad_dim_size"])


@_export
class ParallelConcat(Primitive):
    """ParallelConcat()(values: tuple or list of Tensors of one shape (1, ...) and dtype) -> their
    concatenation along axis 0."""

    def __call__(self, values):
        who = self.name
        if not isinstance(values, (list, tuple)) or not values or not all(isinstance(t, _Tensor) for t in values):
            raise TypeError("For '%s', 'values' must be a non-empty tuple or list of Tensors" % who)
        s, d = values[0].shape, values[0].dtype
        for t in values:
            if t.dtype != d:
                raise TypeError("For '%s', all inputs must have one dtype, but got %s and %s" % (who, d, t.dtype))
            if t.shape != s:
                raise ValueError("For '%s', all inputs must have one shape, but got %s and %s" % (who, s, t.shape))
        if not s or s[0] != 1:
            raise ValueError("For '%s', the first dimension of each input must be 1, but got shape %s" % (who, s))
        return F.concat(tuple(values), 0)


@_export
class ScatterAddWithAxis(Primitive):
    """ScatterAddWithAxis(axis=0)(input_x, indices, updates): input_x with updates added at the
    positions indices names along axis (tensor_scatter_elements with reduction 'add')."""

    def __init__(self, axis=0):
        _type("ScatterAddWithAxis", "axis", axis, (int,), "int")
        super().__init__(axis=axis)

    def __call__(self, input_x, indices, updates):
        from pijit.ops import functional2 as F2
        who = self.name
        _tensor(who, "input_x", input_x)
        _tensor(who, "indices", indices)
        _tensor(who, "updates", updates)
        if indices.shape != updates.shape:
            raise ValueError("For '%s', 'indices' and 'updates' must have one shape, but got %s and %s"
                             % (who, indices.shape, updates.shape))
        return F2.tensor_scatter_elements(input_x, indices, updates, self.attrs["axis"], "add")


@_export
class ScatterNonAliasingAdd(Primitive):
    """ScatterNonAliasingAdd()(input_x Parameter, indices, updates): updates added in place at the
    ScatterNd positions indices; returns input_x."""

    def __call__(self, input_x, indices, updates):
        from pijit.ops import functional2 as F2
        who = self.name
        _tensor(who, "input_x", input_x)
        _tensor(who, "indices", indices)
        _dtypes(who, "indices", indices, (_dt.int32, _dt.int64))
        return F2.scatter_nd_add(input_x, indices, updates)


@_export
class NthElement(Primitive):
    """NthElement(reverse=False)(input (..., N), n) -> (...): the n-th smallest (reverse: largest)
    value of each last-dim vector, n counted from 0."""

    def __init__(self, reverse=False):
        _type("NthElement", "reverse", reverse, (bool,), "bool")
        super().__init__(reverse=reverse)

    def __call__(self, input, n):
        who = self.name
        _tensor(who, "input", input)
        n = _int_value(who, "n", n)
        if input.ndim < 1:
            raise ValueError("For '%s', the dimension of 'input' must be at least 1, but got 0" % who)
        if n < 0 or n >= input.shape[-1]:
            raise ValueError("For '%s', 'n' must be in [0, %d), but got %d" % (who, input.shape[-1], n))
        s = F.sort(input, -1, self.attrs["reverse"])[0]
        return s[..., n]


@_export
class ListDiff(Primitive):
    """ListDiff(out_idx=int32)(x (N,), y (M,)) -> (out, idx): the values of x not in y, in x's
    order, and their positions in x."""

    def __init__(self, out_idx=None):
        out_idx = _dt.int32 if out_idx is None else out_idx
        if out_idx not in (_dt.int32, _dt.int64):
            raise TypeError("For 'ListDiff', 'out_idx' must be int32 or int64, but got %s" % (out_idx,))
        super().__init__(out_idx=out_idx)

    def __call__(self, x, y):
        who = self.name
        _tensor(who, "x", x)
        _tensor(who, "y", y)
        if x.ndim != 1 or y.ndim != 1:
            raise ValueError("For '%s', 'x' and 'y' must be 1-D, but got %s and %s" % (who, x.shape, y.shape))
        if x.dtype != y.dtype:
            raise TypeError("For '%s', 'x' and 'y' must have one dtype, but got %s and %s" % (who, x.dtype, y.dtype))
        ys = set(y.tolist())
        pos = [i for i, v in enumerate(x.tolist()) if v not in ys]
        idx = _new(pos, self.attrs["out_idx"]) if pos else F.zeros((0,), dtype=self.attrs["out_idx"])
        out = F.gather(x, F.cast(idx, _dt.int64), 0) if pos else F.zeros((0,), dtype=x.dtype)
        return out, idx


@_export
class CompareAndBitpack(Primitive):
    """CompareAndBitpack()(x (..., 8k), threshold 0-D) -> uint8 (..., k): bits x > threshold,
    eight to a byte, the first element in the highest bit."""

    def __call__(self, x, threshold):
        who = self.name
        _tensor(who, "x", x)
        _tensor(who, "threshold", threshold)
        if threshold.ndim != 0:
            raise ValueError("For '%s', 'threshold' must be 0-D, but got shape %s" % (who, threshold.shape))
        if x.dtype != threshold.dtype:
            raise TypeError("For '%s', 'x' and 'threshold' must have one dtype, but got %s and %s"
                            % (who, x.dtype, threshold.dtype))
        if x.ndim < 1 or x.shape[-1] % 8:
            raise ValueError("For '%s', the last dimension of 'x' must be divisible by 8, but got shape %s"
                             % (who, x.shape))
        bits = F.cast(x > threshold, _dt.int32)
        bits = F.reshape(bits, x.shape[:-1] + (x.shape[-1] // 8, 8))
        weights = _new([128, 64, 32, 16, 8, 4, 2, 1], _dt.int32)
        return F.cast(F.reduce_sum(bits * weights, -1), _dt.uint8)


@_export
class NoRepeatNGram(Primitive):
    """NoRepeatNGram(ngram_size=4)(state_seq (batch, beam, length) int32, log_probs (batch, beam,
    vocab)) -> log_probs with -FLT_MAX at every token that would repeat an n-gram already in the
    sequence."""

    def __init__(self, ngram_size=4):
        _type("NoRepeatNGram", "ngram_size", ngram_size, (int,), "int")
        if ngram_size <= 0:
            raise ValueError("For 'NoRepeatNGram', the 'ngram_size' must be greater than 0, but got %d" % ngram_size)
        super().__init__(ngram_size=ngram_size)

    def __call__(self, state_seq, log_probs):
        who = self.name
        _tensor(who, "state_seq", state_seq)
        _tensor(who, "log_probs", log_probs)
        _dtypes(who, "state_seq", state_seq, (_dt.int32,))
        if state_seq.ndim != 3 or log_probs.ndim != 3 or state_seq.shape[:2] != log_probs.shape[:2]:
            raise ValueError("For '%s', 'state_seq' and 'log_probs' must be 3-D with the same first two dimensions, "
                             "but got %s and %s" % (who, state_seq.shape, log_probs.shape))
        n = self.attrs["ngram_size"]
        B, K, L = state_seq.shape
        V = log_probs.shape[2]
        seqs = state_seq.tolist()
        banned = [[[False] * V for _ in range(K)] for _ in range(B)]
        for b in range(B):
            for k in range(K):
                s = seqs[b][k]
                if n > L:
                    continue
                tail = s[L - n + 1:] if n > 1 else []
                for i in range(L - n + 1):
                    if s[i:i + n - 1] == tail and 0 <= s[i + n - 1] < V:
                        banned[b][k][s[i + n - 1]] = True
        mask = _new(banned, _dt.bool_)
        return F.select(mask, F.full_like(log_probs, -3.4028234663852886e38), log_probs)


@_export
class RaggedRange(Primitive):
    """RaggedRange(Tsplits)(starts, limits, deltas) -> (rt_nested_splits (N + 1,) Tsplits,
    rt_dense_values): the ranges range(starts[i], limits[i], deltas[i]) concatenated, with their
    row splits."""

    def __init__(self, Tsplits):
        if Tsplits not in (_dt.int32, _dt.int64):
            raise TypeError("For 'RaggedRange', 'Tsplits' must be int32 or int64, but got %s" % (Tsplits,))
        super().__init__(Tsplits=Tsplits)

    def __call__(self, starts, limits, deltas):
        who = self.name
        for name, t in (("starts", starts), ("limits", limits), ("deltas", deltas)):
            _tensor(who, name, t)
            if t.ndim > 1:
                raise ValueError("For '%s', '%s' must be 0-D or 1-D, but got shape %s" % (who, name, t.shape))
        if not (starts.dtype == limits.dtype == deltas.dtype):
            raise TypeError("For '%s', 'starts', 'limits' and 'deltas' must have one dtype" % who)
        lens = [t.shape[0] for t in (starts, limits, deltas) if t.ndim == 1]
        if lens and any(v != lens[0] for v in lens):
            raise ValueError("For '%s', 'starts', 'limits' and 'deltas' must have one length, but got %r" % (who, lens))
        n = lens[0] if lens else 1

        def vals(t):
            v = t.tolist()
            return v if t.ndim else [v] * n
        s, l, d = vals(starts), vals(limits), vals(deltas)
        splits, values = [0], []
        for a, b, c in zip(s, l, d):
            if c == 0:
                raise ValueError("For '%s', 'deltas' must not contain 0" % who)
            cnt = max(0, int(_math.ceil((b - a) / c)))
            values.extend(a + i * c for i in range(cnt))
            splits.append(splits[-1] + cnt)
        dense = _new(values, starts.dtype) if values else F.zeros((0,), dtype=starts.dtype)
        return _new(splits, self.attrs["Tsplits"]), dense


@_export
class FillDiagonal(Primitive):
    """FillDiagonal(fill_value, wrap=False)(input_x): numpy.fill_diagonal's positions (a 2-D
    matrix's diagonal, restarting every W + 1 rows of a tall one under wrap; the i, i, ..., i
    positions of an N-D input of equal dims) set to fill_value."""

    def __init__(self, fill_value, wrap=False):
        _type("FillDiagonal", "fill_value", fill_value, (float, int), "float")
        _type("FillDiagonal", "wrap", wrap, (bool,), "bool")
        super().__init__(fill_value=float(fill_value), wrap=wrap)

    def __call__(self, input_x):
        who = self.name
        _tensor(who, "input_x", input_x)
        s = input_x.shape
        if len(s) < 2:
            raise ValueError("For '%s', the dimension of 'input_x' must be at least 2, but got %d" % (who, len(s)))
        if len(s) > 2 and len(set(s)) != 1:
            raise ValueError("For '%s', all dimensions of 'input_x' must be equal when it has more than 2 dims, "
                             "but got %s" % (who, s))
        total = 1
        for v in s:
            total *= v
        if len(s) == 2:
            step = s[1] + 1
            end = total if self.attrs["wrap"] else min(total, s[1] * s[1])
        else:
            step = sum(s[0] ** i for i in range(len(s)))
            end = total
        flat = [False] * total
        for p in range(0, end, step):
            flat[p] = True
        mask = F.reshape(_new(flat, _dt.bool_), s)
        return F.select(mask, F.full_like(input_x, self.attrs["fill_value"]), input_x)


# ---- matrix diagonals (MatrixDiagV3 family: TensorFlow's layout and alignment) ---------------------

_ALIGNS = ("LEFT_RIGHT", "LEFT_LEFT", "RIGHT_LEFT", "RIGHT_RIGHT")


def _k_range(who, k):
    if isinstance(k, _Tensor):
        k = k.tolist()
    if isinstance(k, int):
        k = [k]
    k = list(k) if isinstance(k, (list, tuple)) else [k]
    if len(k) not in (1, 2) or not all(isinstance(v, int) for v in k):
        raise ValueError("For '%s', 'k' must be an int or a pair of ints, but got %r" % (who, k))
    lo, hi = (k[0], k[0]) if len(k) == 1 else (k[0], k[1])
    if lo > hi:
        raise ValueError("For '%s', k[0] must not be greater than k[1], but got %d and %d" % (who, lo, hi))
    return lo, hi


def _diag_len(m, n, d):
    return min(m + min(d, 0), n - max(d, 0))


def _offset(d, max_len, m, n, align):
    sup, sub = align.split("_")
    left = sup == "LEFT" if d >= 0 else sub == "LEFT"
    if d == 0:
        left = sup == "LEFT"  # the main diagonal follows the superdiagonals
    return 0 if left else max_len - _diag_len(m, n, d)


def _gather_last(src, index, out_shape, pad):
    """out[..., p] = concat(src_flat, pad)[..., index[p]]: src (..., S) flattened on its last dims."""
    lead = src.shape
    srcp = F.concat((src, F.broadcast_to(pad, lead[:-1] + (1,))), -1)
    idx = _new(index, _dt.int64)
    return F.reshape(F.gather(srcp, idx, srcp.ndim - 1), lead[:-1] + tuple(out_shape))


def _pad_scalar(who, x, padding_value):
    if isinstance(padding_value, _Tensor):
        if padding_value.size != 1:
            raise ValueError("For '%s', 'padding_value' must be a scalar, but got shape %s" % (who, padding_value.shape))
        return F.cast(F.reshape(padding_value, (1,)), x.dtype)
    return F.full((1,), padding_value, dtype=x.dtype)


@_export
def matrix_diag_part(x, k=0, padding_value=0, align="RIGHT_LEFT"):
    """ops.matrix_diag_part(x (..., M, N), k=0, padding_value=0, align='RIGHT_LEFT'): diagonals
    k[0]..k[1] of each matrix, stacked from k[1] down, padded to the longest per `align`; (..., L)
    for one diagonal."""
    who = "MatrixDiagPartV3"
    _tensor(who, "x", x)
    _str_in(who, "align", align, _ALIGNS)
    if x.ndim < 2:
        raise ValueError("For '%s', the dimension of 'x' must be at least 2, but got %d" % (who, x.ndim))
    lo, hi = _k_range(who, k)
    m, n = x.shape[-2:]
    if not (-m < lo <= 0 or 0 <= lo < n) or not (-m < hi <= 0 or 0 <= hi < n):
        if not (m == 0 or n == 0):
            raise ValueError("For '%s', the diagonal range k=%r is out of bounds for a %dx%d matrix" % (who, k, m, n))
    max_len = _diag_len(m, n, hi) if hi < 0 else _diag_len(m, n, lo) if lo > 0 else min(m + min(hi, 0), n - max(lo, 0))
    nd = hi - lo + 1
    pad_at = m * n
    index = []
    for d in range(hi, lo - 1, -1):
        off = _offset(d, max_len, m, n, align)
        ln = _diag_len(m, n, d)
        row = [pad_at] * max_len
        for e in range(ln):
            row[off + e] = (e + max(0, -d)) * n + e + max(0, d)
        index.append(row)
    flat = F.reshape(x, x.shape[:-2] + (m * n,))
    shape = (nd, max_len) if nd > 1 else (max_len,)
    return _gather_last(flat, index if nd > 1 else index[0], shape, _pad_scalar(who, x, padding_value))


@_export
def matrix_diag(x, k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """ops.matrix_diag(x, k=0, num_rows=-1, num_cols=-1, padding_value=0, align='RIGHT_LEFT'): the
    matrices with diagonals k[0]..k[1] taken from x (..., [num_diags,] L), padding_value elsewhere;
    -1 sizes become the smallest that fit."""
    who = "MatrixDiagV3"
    _tensor(who, "x", x)
    _str_in(who, "align", align, _ALIGNS)
    lo, hi = _k_range(who, k)
    num_rows = _int_value(who, "num_rows", num_rows)
    num_cols = _int_value(who, "num_cols", num_cols)
    nd = hi - lo + 1
    if x.ndim < (2 if nd > 1 else 1) or (nd > 1 and x.shape[-2] != nd):
        raise ValueError("For '%s', 'x' must have shape (..., %d, L) for k=%r, but got %s" % (who, nd, k, x.shape))
    max_len = x.shape[-1]
    min_rows, min_cols = max_len - min(hi, 0), max_len + max(lo, 0)
    if num_rows == -1 and num_cols == -1:
        num_rows = num_cols = max(min_rows, min_cols)
    elif num_rows == -1:
        num_rows = min_rows
    elif num_cols == -1:
        num_cols = min_cols
    if num_rows < min_rows or num_cols < min_cols:
        raise ValueError("For '%s', num_rows and num_cols must be at least %d and %d, but got %d and %d"
                         % (who, min_rows, min_cols, num_rows, num_cols))
    pad_at = nd * max_len
    index = []
    for i in range(num_rows):
        for j in range(num_cols):
            d = j - i
            p = pad_at
            if lo <= d <= hi:
                e = min(i, j)
                pos = _offset(d, max_len, num_rows, num_cols, align) + e
                if 0 <= pos < max_len and e < _diag_len(num_rows, num_cols, d):
                    p = (hi - d) * max_len + pos
            index.append(p)
    lead = x.shape[:-2] if nd > 1 else x.shape[:-1]
    flat = F.reshape(x, lead + (nd * max_len,))
    return _gather_last(flat, index, (num_rows, num_cols), _pad_scalar(who, x, padding_value))


@_export
def matrix_set_diag(x, diagonal, k=0, align="RIGHT_LEFT"):
    """ops.matrix_set_diag(x (..., M, N), diagonal (..., [num_diags,] L), k=0, align='RIGHT_LEFT'):
    x with diagonals k[0]..k[1] replaced from `diagonal`."""
    who = "MatrixSetDiagV3"
    _tensor(who, "x", x)
    _tensor(who, "diagonal", diagonal)
    _str_in(who, "align", align, _ALIGNS)
    if x.ndim < 2:
        raise ValueError("For '%s', the dimension of 'x' must be at least 2, but got %d" % (who, x.ndim))
    if diagonal.dtype != x.dtype:
        raise TypeError("For '%s', 'diagonal' must have the dtype of 'x' %s, but got %s" % (who, x.dtype, diagonal.dtype))
    lo, hi = _k_range(who, k)
    m, n = x.shape[-2:]
    nd = hi - lo + 1
    max_len = min(m + min(hi, 0), n - max(lo, 0))
    want = x.shape[:-2] + ((nd, max_len) if nd > 1 else (max_len,))
    if diagonal.shape != want:
        raise ValueError("For '%s', the shape of 'diagonal' must be %s, but got %s" % (who, want, diagonal.shape))
    base = m * n
    index = []
    for i in range(m):
        for j in range(n):
            d = j - i
            p = i * n + j
            if lo <= d <= hi:
                e = min(i, j)
                p = base + (hi - d) * max_len + _offset(d, max_len, m, n, align) + e
            index.append(p)
    src = F.concat((F.reshape(x, x.shape[:-2] + (base,)), F.reshape(diagonal, x.shape[:-2] + (nd * max_len,))), -1)
    return F.reshape(F.gather(src, _new(index, _dt.int64), src.ndim - 1), x.shape)


def _v3_class(name, doc, fn, nargs):
    class M(Primitive):
        def __init__(self, align="RIGHT_LEFT"):
            _str_in(name, "align", align, _ALIGNS)
            super().__init__(align=align)

        def __call__(self, *args):
            self._arity(args, nargs)
            return fn(*args, align=self.attrs["align"])
    M.__name__ = M.__qualname__ = name
    M.__doc__ = doc
    return _export(M)


MatrixDiagV3 = _v3_class("MatrixDiagV3", "MatrixDiagV3(align='RIGHT_LEFT')(x, k, num_rows, num_cols, "
                         "padding_value): as ops.matrix_diag.", matrix_diag, 5)
MatrixDiagPartV3 = _v3_class("MatrixDiagPartV3", "MatrixDiagPartV3(align='RIGHT_LEFT')(x, k, padding_value): "
                             "as ops.matrix_diag_part.", matrix_diag_part, 3)
MatrixSetDiagV3 = _v3_class("MatrixSetDiagV3", "MatrixSetDiagV3(align='RIGHT_LEFT')(x, diagonal, k): as "
                            "ops.matrix_set_diag.", matrix_set_diag, 3)


@_export
class TridiagonalMatMul(Primitive):
    """TridiagonalMatMul()(superdiag, maindiag, subdiag (..., 1, M), rhs (..., M, N)): the
    tridiagonal matrix times rhs (superdiag's last and subdiag's first element unused)."""

    def __call__(self, superdiag, maindiag, subdiag, rhs):
        who = self.name
        for nm, t in (("superdiag", superdiag), ("maindiag", maindiag), ("subdiag", subdiag), ("rhs", rhs)):
            _tensor(who, nm, t)
        if rhs.ndim < 2:
            raise ValueError("For '%s', the dimension of 'rhs' must be at least 2, but got %d" % (who, rhs.ndim))
        m = rhs.shape[-2]
        want = rhs.shape[:-2] + (1, m)
        for nm, t in (("superdiag", superdiag), ("maindiag", maindiag), ("subdiag", subdiag)):
            if t.shape != want:
                raise ValueError("For '%s', the shape of '%s' must be %s, but got %s" % (who, nm, want, t.shape))
            if t.dtype != rhs.dtype:
                raise TypeError("For '%s', '%s' must have the dtype of 'rhs' %s, but got %s"
                                % (who, nm, rhs.dtype, t.dtype))
        col = lambda t: F.transpose(t, tuple(range(t.ndim - 2)) + (t.ndim - 1, t.ndim - 2))  # noqa: E731
        out = col(maindiag) * rhs
        if m > 1:
            zero = F.zeros_like(rhs[..., :1, :])
            up = F.concat((rhs[..., 1:, :], zero), -2)
            down = F.concat((zero, rhs[..., :-1, :]), -2)
            out = out + col(superdiag) * up + col(subdiag) * down
        return out


@_export
class EuclideanNorm(Primitive):
    """EuclideanNorm(keep_dims=False)(x, axes): sqrt of the sum of squares over axes, in x's dtype
    (integers truncated)."""

    def __init__(self, keep_dims=False):
        _type("EuclideanNorm", "keep_dims", keep_dims, (bool,), "bool")
        super().__init__(keep_dims=keep_dims)

    def __call__(self, x, axes):
        who = self.name
        _tensor(who, "x", x)
        if isinstance(axes, _Tensor):
            axes = axes.tolist()
        axes = [axes] if isinstance(axes, int) else list(axes)
        for a in axes:
            if not -x.ndim <= a < _b.max(x.ndim, 1):
                raise ValueError("For '%s', each of 'axes' must be in [%d, %d), but got %d"
                                 % (who, -x.ndim, x.ndim, a))
        axes = tuple(sorted(set(a % x.ndim for a in axes))) if x.ndim else ()
        floating = x.dtype in _FLOATS or x.dtype == _dt.bfloat16
        c = _compute(x) if floating else F.cast(x, _dt.float64)
        y = F.sqrt(F.reduce_sum(c * c, axes, self.attrs["keep_dims"])) if axes else F.abs(c)
        return F.cast(y, x.dtype) if y.dtype != x.dtype else y


def _logcumsumexp_last(x):
    """log(cumsum(exp(x))) along the last dim of a float64 x, exact to rounding: within a block of
    B values, out[k] = m[k] + log(sum_{j <= k} exp(x[j] - m[k])) with m the running maximum (every
    term <= 1 and the maximum's term 1, so nothing overflows or vanishes); blocks are chained with
    logaddexp. The maximum is a shift only: its gradient is stopped."""
    from pijit.ops import functional2 as F2
    L = x.shape[-1]
    blk = 256
    tri = _new([[j <= k for j in range(_b.min(blk, L))] for k in range(_b.min(blk, L))], _dt.bool_)
    out, carry = [], None
    for s0 in range(0, L, blk):
        xb = x[..., s0:s0 + blk]
        n = xb.shape[-1]
        mask = tri if n == tri.shape[0] else tri[:n, :n]
        m = F.stop_gradient(F2.cummax(xb, xb.ndim - 1)[0])
        m = F.select(F.isfinite(m), m, F.zeros_like(m))
        diff = F.expand_dims(xb, -2) - F.expand_dims(m, -1)  # [..., k, j] = x[j] - m[k]
        neg = F.full_like(diff, -float("inf"))
        e = F.exp(F.select(F.broadcast_to(mask, diff.shape), diff, neg))
        yb = F.log(F.reduce_sum(e, -1)) + m
        if carry is not None:
            from pijit.ops import logaddexp
            yb = logaddexp(yb, carry)
        carry = yb[..., n - 1:n]
        out.append(yb)
    return out[0] if len(out) == 1 else F.concat(tuple(out), -1)


@_export
class CumulativeLogsumexp(Primitive):
    """CumulativeLogsumexp(exclusive=False, reverse=False)(x, axis): log(cumsum(exp(x))) along
    axis without overflow or underflow (computed in float64; exclusive: shifted by one, the first
    -inf; reverse: from the end). Differentiable."""

    def __init__(self, exclusive=False, reverse=False):
        _type("CumulativeLogsumexp", "exclusive", exclusive, (bool,), "bool")
        _type("CumulativeLogsumexp", "reverse", reverse, (bool,), "bool")
        super().__init__(exclusive=exclusive, reverse=reverse)

    def __call__(self, x, axis):
        who = self.name
        _tensor(who, "x", x)
        _dtypes(who, "x", x, _FLOATS)
        axis = _int_value(who, "axis", axis)
        if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
            raise ValueError("For '%s', 'axis' must be in [%d, %d), but got %d" % (who, -x.ndim, x.ndim, axis))
        axis %= x.ndim
        if x.shape[axis] == 0:
            return x
        last = x.ndim - 1
        perm = tuple(i for i in range(x.ndim) if i != axis) + (axis,)
        c = F.transpose(F.cast(x, _dt.float64), perm) if axis != last else F.cast(x, _dt.float64)
        if self.attrs["reverse"]:
            c = F.flip(c, (last,))
        y = _logcumsumexp_last(c)
        if self.attrs["exclusive"]:
            first = F.full_like(y[..., :1], -float("inf"))
            y = F.concat((first, y[..., :-1]), -1)
        if self.attrs["reverse"]:
            y = F.flip(y, (last,))
        if axis != last:
            inv = [0] * x.ndim
            for i, p in enumerate(perm):
                inv[p] = i
            y = F.transpose(y, tuple(inv))
        return F.cast(y, x.dtype)


# ---- random selection -------------------------------------------------------------------------------

@_export
def choice_with_mask(input_x, count=256, seed=None, seed2=None):
    """ops.choice_with_mask(input_x bool (1-5 D), count=256, seed=None, seed2=None) -> (index int32
    (count, rank), mask bool (count,)): up to count True positions of input_x in random order,
    zero rows (mask False) after them."""
    who = "RandomChoiceWithMask"
    _type(who, "count", count, (int,), "int")
    if count <= 0:
        raise ValueError("For '%s', the 'count' must be greater than 0, but got %d" % (who, count))
    _tensor(who, "input_x", input_x)
    _dtypes(who, "input_x", input_x, (_dt.bool_,))
    if not 1 <= input_x.ndim <= 5:
        raise ValueError("For '%s', the dimension of 'input_x' must be in [1, 5], but got %d" % (who, input_x.ndim))
    flat = F.reshape(input_x, (-1,)).tolist()
    pos = [i for i, v in enumerate(flat) if v]
    s = (seed or 0, seed2 or 0)
    rng = _random.Random(hash(s)) if s != (0, 0) else _random.Random()
    rng.shuffle(pos)
    pos = pos[:count]
    shape = input_x.shape
    rows = []
    for p in pos:
        coord = []
        for d in reversed(shape):
            coord.append(p % d)
            p //= d
        rows.append(coord[::-1])
    nvalid = len(rows)
    rows += [[0] * len(shape)] * (count - nvalid)
    return _new(rows, _dt.int32), _new([True] * nvalid + [False] * (count - nvalid), _dt.bool_)


@_export
class RandomChoiceWithMask(Primitive):
    """RandomChoiceWithMask(count=256, seed=0, seed2=0)(input_x): as ops.choice_with_mask."""

    def __init__(self, count=256, seed=0, seed2=0):
        _type("RandomChoiceWithMask", "count", count, (int,), "int")
        _type("RandomChoiceWithMask", "seed", seed, (int,), "int")
        _type("RandomChoiceWithMask", "seed2", seed2, (int,), "int")
        super().__init__(count=count, seed=seed, seed2=seed2)

    def __call__(self, input_x):
        a = self.attrs
        return choice_with_mask(input_x, a["count"], a["seed"], a["seed2"])


# ---- windows: Dilation2D, ExtractVolumePatches ------------------------------------------------------

def _window_arg(who, name, v, n):
    """An int, n ints, or n + 2 ints whose first two are 1 (MindSpore's NCHW-style forms)."""
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,) * n
    if not isinstance(v, (tuple, list)) or not all(isinstance(e, int) and not isinstance(e, bool) for e in v):
        raise TypeError("For '%s', '%s' must be an int or a tuple of ints, but got %r" % (who, name, v))
    v = tuple(v)
    if len(v) == n + 2:
        if v[:2] != (1, 1):
            raise ValueError("For '%s', the first two elements of '%s' must be 1, but got %r" % (who, name, v))
        v = v[2:]
    if len(v) != n or any(e < 1 for e in v):
        raise ValueError("For '%s', '%s' must be %d (or %d) positive ints, but got %r" % (who, name, n, n + 2, v))
    return v


def _same_pads(size, k, s, d=1):
    eff = (k - 1) * d + 1
    out = -(-size // s)
    total = max((out - 1) * s + eff - size, 0)
    return out, total // 2, total - total // 2


def _strided(x, starts, steps, counts):
    """x[..., start + step * i for i in range(count)] over the last len(starts) dims."""
    lead = (slice(None),) * (x.ndim - len(starts))
    return x[lead + tuple(slice(a, a + s * (c - 1) + 1, s) for a, s, c in zip(starts, steps, counts))]


@_export
class Dilation2D(Primitive):
    """Dilation2D(stride, dilation, pad_mode='SAME', data_format='NCHW')(x (N, C, H, W),
    filter (C, kh, kw)): the greyscale morphological dilation out[n, c, y, x] = max over the
    window of x[...] + filter[c, i, j] (positions outside the input do not take part)."""

    def __init__(self, stride, dilation, pad_mode="SAME", data_format="NCHW"):
        who = "Dilation2D"
        stride = _window_arg(who, "stride", stride, 2)
        dilation = _window_arg(who, "dilation", dilation, 2)
        _type(who, "pad_mode", pad_mode, (str,), "str")
        pad_mode = pad_mode.upper()
        _str_in(who, "pad_mode", pad_mode, ("SAME", "VALID"))
        _str_in(who, "data_format", data_format, ("NCHW",))
        super().__init__(stride=stride, dilation=dilation, pad_mode=pad_mode, data_format=data_format)

    def __call__(self, x, filter):
        who = self.name
        _tensor(who, "x", x)
        _tensor(who, "filter", filter)
        if x.ndim != 4 or filter.ndim != 3 or filter.shape[0] != x.shape[1]:
            raise ValueError("For '%s', 'x' must be (N, C, H, W) and 'filter' (C, kh, kw) with x's C, but got %s and %s"
                             % (who, x.shape, filter.shape))
        if x.dtype != filter.dtype:
            raise TypeError("For '%s', 'x' and 'filter' must have one dtype, but got %s and %s"
                            % (who, x.dtype, filter.dtype))
        (sh, sw), (dh, dw) = self.attrs["stride"], self.attrs["dilation"]
        _, C, H, W = x.shape
        kh, kw = filter.shape[1:]
        if self.attrs["pad_mode"] == "SAME":
            oh, t, b = _same_pads(H, kh, sh, dh)
            ow, l, r = _same_pads(W, kw, sw, dw)
        else:
            oh, ow = (H - (kh - 1) * dh - 1) // sh + 1, (W - (kw - 1) * dw - 1) // sw + 1
            t = b = l = r = 0
        if oh <= 0 or ow <= 0:
            raise ValueError("For '%s', the dilated filter %s does not fit the input %s" % (who, (kh, kw), (H, W)))
        floating = x.dtype in _FLOATS
        low = -float("inf") if floating else -2 ** 31
        c = x
        if t or b or l or r:
            c = F.concat((F.full(c.shape[:2] + (t, W), low, dtype=c.dtype), c,
                          F.full(c.shape[:2] + (b, W), low, dtype=c.dtype)), 2) if t or b else c
            c = F.concat((F.full(c.shape[:3] + (l,), low, dtype=c.dtype), c,
                          F.full(c.shape[:3] + (r,), low, dtype=c.dtype)), 3) if l or r else c
        out = None
        for i in range(kh):
            for j in range(kw):
                v = _strided(c, (i * dh, j * dw), (sh, sw), (oh, ow)) + F.reshape(filter[:, i, j], (1, C, 1, 1))
                out = v if out is None else F.maximum(out, v)
        return out


@_export
class ExtractVolumePatches(Primitive):
    """ExtractVolumePatches(kernel_size, strides, padding)(input_x (N, C, D, H, W)) -> (N,
    C * kd * kh * kw, Do, Ho, Wo): each output position's window flattened with the channel
    innermost (TensorFlow's extract_volume_patches order), zero padding under 'SAME'."""

    def __init__(self, kernel_size, strides, padding):
        who = "ExtractVolumePatches"
        kernel_size = _window_arg(who, "kernel_size", kernel_size, 3)
        strides = _window_arg(who, "strides", strides, 3)
        _str_in(who, "padding", padding, ("SAME", "VALID"))
        super().__init__(kernel_size=kernel_size, strides=strides, padding=padding)

    def __call__(self, input_x):
        who = self.name
        _tensor(who, "input_x", input_x)
        if input_x.ndim != 5:
            raise ValueError("For '%s', the dimension of 'input_x' must be 5, but got %d" % (who, input_x.ndim))
        ks, ss = self.attrs["kernel_size"], self.attrs["strides"]
        sp = input_x.shape[2:]
        pads, outs = [], []
        for n, k, s in zip(sp, ks, ss):
            if self.attrs["padding"] == "SAME":
                o, lo, hi = _same_pads(n, k, s)
            else:
                o, lo, hi = (n - k) // s + 1, 0, 0
            if o <= 0:
                raise ValueError("For '%s', the kernel %r does not fit the input %r" % (who, ks, sp))
            outs.append(o)
            pads.append((lo, hi))
        x = input_x
        if any(lo or hi for lo, hi in pads):
            from pijit.ops import nn_functional as NF
            flat = []
            for lo, hi in reversed(pads):
                flat.extend((lo, hi))
            x = NF.pad(x, tuple(flat))
        patches = []
        for a in range(ks[0]):
            for b in range(ks[1]):
                for c in range(ks[2]):
                    patches.append(_strided(x, (a, b, c), ss, outs))
        N, C = input_x.shape[:2]
        return F.reshape(F.stack(patches, 1), (N, len(patches) * C) + tuple(outs))


# ---- ScaleAndTranslate ----------------------------------------------------------------------------

def _sinc_pi(x):
    return 1.0 if abs(x) < 1e-9 else _math.sin(_math.pi * x) / (_math.pi * x)


def _box_kernel(x):
    return 1.0 if x < 0.5 else 0.5 if x == 0.5 else 0.0


_SCALE_KERNELS = {
    "lanczos1": (1.0, lambda x: _sinc_pi(x) * _sinc_pi(x) if x < 1 else 0.0),
    "lanczos3": (3.0, lambda x: _sinc_pi(x) * _sinc_pi(x / 3.0) if x < 3 else 0.0),
    "lanczos5": (5.0, lambda x: _sinc_pi(x) * _sinc_pi(x / 5.0) if x < 5 else 0.0),
    "gaussian": (1.5, lambda x: _math.exp(-x * x / (2 * 0.5 * 0.5)) if x < 1.5 else 0.0),
    "box": (1.0, _box_kernel),
    "triangle": (1.0, lambda x: max(0.0, 1.0 - x)),
    "keyscubic": (2.0, lambda x: 0.0 if x >= 2 else ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0 if x >= 1
                  else (1.5 * x - 2.5) * x * x + 1.0),
    "mitchellcubic": (2.0, lambda x: 0.0 if x >= 2 else (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0
                      if x >= 1 else ((7.0 / 6.0) * x - 2.0) * x * x + 8.0 / 9.0),
}


def _scale_weights(n_in, n_out, scale, translate, kernel, antialias):
    radius, fn = _SCALE_KERNELS[kernel]
    inv_scale = 1.0 / scale
    kscale = max(inv_scale, 1.0) if antialias else 1.0
    rows = []
    for o in range(n_out):
        row = [0.0] * n_in
        sample = (o + 0.5) * inv_scale - inv_scale * translate
        if 0 <= sample <= n_in:
            lo = min(max(int(_math.ceil(sample - radius * kscale - 0.5)), 0), n_in - 1)
            hi = min(max(int(_math.floor(sample + radius * kscale - 0.5)), 0), n_in - 1) + 1
            ws = [fn(abs((s + 0.5 - sample) / kscale)) for s in range(lo, hi)]
            tot = sum(ws)
            if abs(tot) >= 1000 * 1.1754943508222875e-38:
                for s, w in zip(range(lo, hi), ws):
                    row[s] = w / tot
        rows.append(row)
    return rows


@_export
class ScaleAndTranslate(Primitive):
    """ScaleAndTranslate(kernel_type='lanczos3', antialias=True)(images (N, H, W, C), size
    (new_h, new_w), scale (sy, sx), translation (ty, tx)) -> float32 (N, new_h, new_w, C):
    TensorFlow's scale_and_translate (separable kernel weights, widened by 1 / scale when
    antialiasing a downscale, normalised per output pixel)."""

    def __init__(self, kernel_type="lanczos3", antialias=True):
        _str_in("ScaleAndTranslate", "kernel_type", kernel_type, tuple(sorted(_SCALE_KERNELS)))
        _type("ScaleAndTranslate", "antialias", antialias, (bool,), "bool")
        super().__init__(kernel_type=kernel_type, antialias=antialias)

    def __call__(self, images, size, scale, translation):
        who = self.name
        _tensor(who, "images", images)
        if images.ndim != 4:
            raise ValueError("For '%s', the dimension of 'images' must be 4, but got %d" % (who, images.ndim))
        oh, ow = _size_pair(who, size)
        sc = scale.tolist() if isinstance(scale, _Tensor) else list(scale)
        tr = translation.tolist() if isinstance(translation, _Tensor) else list(translation)
        if len(sc) != 2 or len(tr) != 2:
            raise ValueError("For '%s', 'scale' and 'translation' must have 2 elements, but got %r and %r"
                             % (who, sc, tr))
        if sc[0] <= 0 or sc[1] <= 0:
            raise ValueError("For '%s', the values of 'scale' must be positive, but got %r" % (who, sc))
        a = self.attrs
        _, H, W, _ = images.shape
        wy = _scale_weights(H, oh, float(sc[0]), float(tr[0]), a["kernel_type"], a["antialias"])
        wx = _scale_weights(W, ow, float(sc[1]), float(tr[1]), a["kernel_type"], a["antialias"])
        x = F.transpose(F.cast(images, _dt.float64), (0, 3, 1, 2))
        return F.cast(F.transpose(_resample(x, wy, wx, _dt.float64), (0, 2, 3, 1)), _dt.float32)


# ---- EditDistance, SampleDistortedBoundingBoxV2 -----------------------------------------------------

def _levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


@_export
class EditDistance(Primitive):
    """EditDistance(normalize=True)(hypothesis_indices, hypothesis_values, hypothesis_shape,
    truth_indices, truth_values, truth_shape) -> float32 of shape max(hypothesis_shape,
    truth_shape)[:-1]: the Levenshtein distance of each pair of sparse sequences (grouped by all
    but the last index), divided by the truth's length when normalize (an empty truth gives inf,
    or 0 for an empty hypothesis too)."""

    def __init__(self, normalize=True):
        _type("EditDistance", "normalize", normalize, (bool,), "bool")
        super().__init__(normalize=normalize)

    def __call__(self, hypothesis_indices, hypothesis_values, hypothesis_shape, truth_indices, truth_values,
                 truth_shape):
        who = self.name
        args = (("hypothesis_indices", hypothesis_indices), ("hypothesis_values", hypothesis_values),
                ("hypothesis_shape", hypothesis_shape), ("truth_indices", truth_indices),
                ("truth_values", truth_values), ("truth_shape", truth_shape))
        for name, t in args:
            _tensor(who, name, t)
        hs, ts = hypothesis_shape.tolist(), truth_shape.tolist()
        if len(hs) != len(ts) or len(hs) < 1:
            raise ValueError("For '%s', 'hypothesis_shape' and 'truth_shape' must have one length, but got %r and %r"
                             % (who, hs, ts))
        rank = len(hs)
        for (iname, idx), (vname, val) in (((args[0]), args[1]), ((args[3]), args[4])):
            if idx.ndim != 2 or idx.shape[1] != rank or val.ndim != 1 or val.shape[0] != idx.shape[0]:
                raise ValueError("For '%s', '%s' must be (n, %d) and '%s' (n,), but got %s and %s"
                                 % (who, iname, rank, vname, idx.shape, val.shape))
        out_shape = [max(a, b) for a, b in zip(hs[:-1], ts[:-1])]

        def groups(idx, val):
            g = {}
            for i, v in sorted(zip(map(tuple, idx.tolist()), val.tolist())):
                g.setdefault(i[:-1], []).append(v)
            return g
        hyp, truth = groups(hypothesis_indices, hypothesis_values), groups(truth_indices, truth_values)
        norm = self.attrs["normalize"]
        total = 1
        for v in out_shape:
            total *= v
        flat = [0.0] * total
        for key in set(hyp) | set(truth):
            h, t = hyp.get(key, []), truth.get(key, [])
            d = float(_levenshtein(h, t))
            if norm:
                d = d / len(t) if t else (float("inf") if h else 0.0)
            pos = 0
            for k, n in zip(key, out_shape):
                pos = pos * n + k
            flat[pos] = d
        return F.reshape(_new(flat, _dt.float32), tuple(out_shape))


@_export
class SampleDistortedBoundingBoxV2(Primitive):
    """SampleDistortedBoundingBoxV2(seed=0, seed2=0, aspect_ratio_range=(0.75, 1.33),
    area_range=(0.05, 1.0), max_attempts=100, use_image_if_no_bounding_boxes=False)(image_size
    (h, w, c), bounding_boxes (N, 4) normalised y1 x1 y2 x2, min_object_covered) -> (begin (3,),
    size (3,), bboxes (1, 1, 4) float32): a random crop whose area fraction and aspect ratio lie in
    the ranges and that covers at least min_object_covered of some box (TensorFlow's rules; the
    whole image after max_attempts failures)."""

    def __init__(self, seed=0, seed2=0, aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 1.0), max_attempts=100,
                 use_image_if_no_bounding_boxes=False):
        who = "SampleDistortedBoundingBoxV2"
        _type(who, "seed", seed, (int,), "int")
        _type(who, "seed2", seed2, (int,), "int")
        for name, r in (("aspect_ratio_range", aspect_ratio_range), ("area_range", area_range)):
            if not isinstance(r, (tuple, list)) or len(r) != 2 or not all(isinstance(v, (int, float)) for v in r):
                raise TypeError("For '%s', '%s' must be a tuple of two floats, but got %r" % (who, name, r))
            if r[0] <= 0 or r[0] > r[1]:
                raise ValueError("For '%s', '%s' must be positive and ordered, but got %r" % (who, name, r))
        if area_range[1] > 1:
            raise ValueError("For '%s', 'area_range' must be in (0, 1], but got %r" % (who, area_range))
        _type(who, "max_attempts", max_attempts, (int,), "int")
        if max_attempts <= 0:
            raise ValueError("For '%s', 'max_attempts' must be positive, but got %d" % (who, max_attempts))
        _type(who, "use_image_if_no_bounding_boxes", use_image_if_no_bounding_boxes, (bool,), "bool")
        super().__init__(seed=seed, seed2=seed2, aspect_ratio_range=tuple(aspect_ratio_range),
                         area_range=tuple(area_range), max_attempts=max_attempts,
                         use_image_if_no_bounding_boxes=use_image_if_no_bounding_boxes)
        self._rng = _random.Random(hash((seed, seed2))) if (seed, seed2) != (0, 0) else _random.Random()

    def __call__(self, image_size, bounding_boxes, min_object_covered):
        who = self.name
        _tensor(who, "image_size", image_size)
        _tensor(who, "bounding_boxes", bounding_boxes)
        size = image_size.tolist()
        if len(size) != 3 or any(v <= 0 for v in size[:2]):
            raise ValueError("For '%s', 'image_size' must be 3 values with positive height and width, but got %r"
                             % (who, size))
        H, W, C = size
        boxes = bounding_boxes.tolist() if bounding_boxes.size else []
        if bounding_boxes.ndim != 2 or (bounding_boxes.size and bounding_boxes.shape[1] != 4):
            raise ValueError("For '%s', 'bounding_boxes' must have shape (N, 4), but got %s" % (who, bounding_boxes.shape))
        a = self.attrs
        if not boxes:
            if not a["use_image_if_no_bounding_boxes"]:
                raise ValueError("For '%s', no bounding boxes provided as input. One must enable "
                                 "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes." % who)
            boxes = [[0.0, 0.0, 1.0, 1.0]]
        cover = float(_scalar_value(who, "min_object_covered", min_object_covered))
        rects = [(b[1] * W, b[0] * H, b[3] * W, b[2] * H) for b in boxes]  # x0, y0, x1, y1 in pixels
        rng, area = self._rng, float(H * W)
        found = None
        for _ in range(a["max_attempts"]):
            ratio = rng.uniform(*a["aspect_ratio_range"])
            target = rng.uniform(*a["area_range"]) * area
            h = int(round(_math.sqrt(target / ratio)))
            w = int(round(h * ratio))
            if not (0 < h <= H and 0 < w <= W):
                continue
            y0, x0 = rng.randint(0, H - h), rng.randint(0, W - w)
            for rx0, ry0, rx1, ry1 in rects:
                iw = max(0.0, min(x0 + w, rx1) - max(x0, rx0))
                ih = max(0.0, min(y0 + h, ry1) - max(y0, ry0))
                barea = (rx1 - rx0) * (ry1 - ry0)
                if barea > 0 and iw * ih / barea >= cover or barea <= 0 and cover <= 0:
                    found = (y0, x0, h, w)
                    break
            if found:
                break
        y0, x0, h, w = found or (0, 0, H, W)
        dt = image_size.dtype
        return (_new([y0, x0, 0], dt), _new([h, w, -1], dt),
                _new([[[y0 / H, x0 / W, (y0 + h) / H, (x0 + w) / W]]], _dt.float32))


@_export
class ExtractGlimpse(Primitive):
    """ExtractGlimpse(centered=True, normalized=True, uniform_noise=True, noise='uniform')(x
    (B, H, W, C) float32, size (gh, gw), offsets (B, 2) float32) -> float32 (B, gh, gw, C): the
    window whose top-left is offsets (scaled by H, W when normalized; relative to the centre when
    centered) minus half the window, truncated to whole pixels; positions outside the image hold
    noise: uniform in [0, 1), max(0, N(0, 1)) ('gaussian') or 0 ('zero')."""

    def __init__(self, centered=True, normalized=True, uniform_noise=True, noise="uniform"):
        who = "ExtractGlimpse"
        _type(who, "centered", centered, (bool,), "bool")
        _type(who, "normalized", normalized, (bool,), "bool")
        _type(who, "uniform_noise", uniform_noise, (bool,), "bool")
        _str_in(who, "noise", noise, ("uniform", "gaussian", "zero"))
        if uniform_noise and noise != "uniform":
            raise ValueError("For '%s', the value of 'noise' must be uniform when uniform_noise is True, but got %s."
                             % (who, noise))
        super().__init__(centered=centered, normalized=normalized, uniform_noise=uniform_noise, noise=noise)

    def __call__(self, x, size, offsets):
        who = self.name
        _tensor(who, "x", x)
        _tensor(who, "offsets", offsets)
        _dtypes(who, "x", x, (_dt.float32,))
        if x.ndim != 4:
            raise ValueError("For '%s', the dimension of 'x' must be 4, but got %d" % (who, x.ndim))
        gh, gw = _size_pair(who, size)
        B, H, W, C = x.shape
        if offsets.shape != (B, 2):
            raise ValueError("For '%s', the shape of 'offsets' must be (%d, 2), but got %s" % (who, B, offsets.shape))
        a = self.attrs
        idx, inside = [], []
        for b, (oy, ox) in enumerate(offsets.tolist()):
            if a["normalized"]:
                oy, ox = oy * H, ox * W
            if a["centered"]:
                oy, ox = oy / 2.0 + H / 2.0, ox / 2.0 + W / 2.0
            r0, c0 = int(oy - gh / 2.0), int(ox - gw / 2.0)  # (truncated toward zero, as the kernel does)
            for j in range(gh):
                for k in range(gw):
                    r, c = r0 + j, c0 + k
                    ok = 0 <= r < H and 0 <= c < W
                    inside.append(ok)
                    idx.append((b * H + r) * W + c if ok else 0)
        got = F.gather(F.reshape(x, (B * H * W, C)), _new(idx, _dt.int64), 0)
        if all(inside):
            return F.reshape(got, (B, gh, gw, C))
        n = len(idx) * C
        if a["noise"] == "zero" and not a["uniform_noise"]:
            noise = F.zeros((len(idx), C), dtype=_dt.float32)
        elif a["noise"] == "gaussian" and not a["uniform_noise"]:
            noise = F.reshape(_new([max(0.0, _random.gauss(0.0, 1.0)) for _ in range(n)], _dt.float32), (-1, C))
        else:
            noise = F.reshape(_new([_random.random() for _ in range(n)], _dt.float32), (-1, C))
        mask = F.reshape(_new(inside, _dt.bool_), (-1, 1))
        return F.reshape(F.select(F.broadcast_to(mask, got.shape), got, noise), (B, gh, gw, C))


# ---- deformable convolution -------------------------------------------------------------------------

def _four_ones(who, name, v):
    if not isinstance(v, (tuple, list)) or len(v) != 4 or tuple(v[:2]) != (1, 1) \
            or not all(isinstance(e, int) and e >= 1 for e in v):
        raise ValueError("For '%s', '%s' must be a tuple of 4 positive ints whose N and C values are 1, but got %r"
                         % (who, name, v))
    return int(v[2]), int(v[3])


@_export
def deformable_conv2d(x, weight, offsets, kernel_size, strides, padding, bias=None, dilations=(1, 1, 1, 1), groups=1,
                      deformable_groups=1, modulated=True):
    """ops.deformable_conv2d(x (N, C, H, W), weight (Co, C / groups, kh, kw), offsets (N, 3 * dg *
    kh * kw, Ho, Wo): x offsets, y offsets, masks, kernel_size, strides (1, 1, sh, sw), padding
    (top, bottom, left, right), bias=None, dilations=(1, 1, dh, dw), groups=1,
    deformable_groups=1, modulated=True): deformable convolution v2 — each tap reads x bilinearly
    (zero outside) at its grid position plus its offset, times its mask, then the weights apply.
    Differentiable in x, weight, offsets and bias (built on grid_sample and conv2d)."""
    who = "deformable_conv2d"
    for name, t in (("x", x), ("weight", weight), ("offsets", offsets)):
        _tensor(who, name, t)
        _dtypes(who, name, t, _FLOATS)
    if not modulated:
        raise ValueError("For '%s', only modulated=True (deformable convolution v2) is supported, as in MindSpore"
                         % who)
    if not isinstance(kernel_size, (tuple, list)) or len(kernel_size) != 2:
        raise TypeError("For '%s', 'kernel_size' must be a tuple of two ints, but got %r" % (who, kernel_size))
    kh, kw = (int(k) for k in kernel_size)
    sh, sw = _four_ones(who, "strides", strides)
    dh, dw = _four_ones(who, "dilations", dilations)
    if not isinstance(padding, (tuple, list)) or len(padding) != 4 or any(p < 0 for p in padding):
        raise ValueError("For '%s', 'padding' must be 4 non-negative ints (top, bottom, left, right), but got %r"
                         % (who, padding))
    pt, pb, pl, pr = (int(p) for p in padding)
    if x.ndim != 4 or weight.ndim != 4 or offsets.ndim != 4:
        raise ValueError("For '%s', 'x', 'weight' and 'offsets' must be 4-D, but got %s, %s and %s"
                         % (who, x.shape, weight.shape, offsets.shape))
    N, C, H, W = x.shape
    dg = deformable_groups
    if C % dg or C % groups or weight.shape[0] % groups or weight.shape[1] * groups != C \
            or tuple(weight.shape[2:]) != (kh, kw):
        raise ValueError("For '%s', the channels of 'x' (%d) and 'weight' %s do not fit kernel_size %r, groups %d and "
                         "deformable_groups %d" % (who, C, weight.shape, (kh, kw), groups, dg))
    ho = (H + pt + pb - (kh - 1) * dh - 1) // sh + 1
    wo = (W + pl + pr - (kw - 1) * dw - 1) // sw + 1
    if offsets.shape != (N, 3 * dg * kh * kw, ho, wo):
        raise ValueError("For '%s', the shape of 'offsets' must be %s, but got %s"
                         % (who, (N, 3 * dg * kh * kw, ho, wo), offsets.shape))
    dt = x.dtype
    off = F.reshape(offsets, (N, 3, dg, kh, kw, ho, wo))
    # base sampling positions of every tap: row o*sh - pt + i*dh, column o*sw - pl + j*dw
    base_y = _new([[[[float(a * sh - pt + i * dh)] * wo for a in range(ho)] for _ in range(kw)] for i in range(kh)], dt)
    base_x = _new([[[[float(b * sw - pl + j * dw) for b in range(wo)]] * ho for j in range(kw)] for _ in range(kh)], dt)
    cols = []
    for g in range(dg):
        px = base_x + off[:, 0, g]  # (N, kh, kw, ho, wo)
        py = base_y + off[:, 1, g]
        # pixel coordinates to grid_sample's align_corners=False units: (2p + 1) / size - 1
        gx = (px * 2.0 + 1.0) / W - 1.0
        gy = (py * 2.0 + 1.0) / H - 1.0
        # tap (i, j) of output (a, b) lands at row a*kh + i, column b*kw + j of a (ho*kh, wo*kw) plane
        grid = F.stack([F.transpose(gx, (0, 3, 1, 4, 2)), F.transpose(gy, (0, 3, 1, 4, 2))], -1)
        grid = F.reshape(grid, (N, ho * kh, wo * kw, 2))
        xg = x[:, g * (C // dg):(g + 1) * (C // dg)]
        sampled = grid_sample(xg, grid, "bilinear", "zeros", False)
        mask = F.reshape(F.transpose(off[:, 2, g], (0, 3, 1, 4, 2)), (N, 1, ho * kh, wo * kw))
        cols.append(sampled * mask)
    cols = cols[0] if dg == 1 else F.concat(tuple(cols), 1)
    from pijit.ops import nn_functional as NF
    out = NF.conv2d(cols, weight, None, (kh, kw), "valid", 0, 1, groups)
    if bias is not None:
        _tensor(who, "bias", bias)
        out = out + F.reshape(bias, (1, -1, 1, 1))
    return out
