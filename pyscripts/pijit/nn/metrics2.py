"""MindSpore's remaining evaluation metrics (mindspore.train / mindspore.nn): ConfusionMatrix,
ConfusionMatrixMetric, CosineSimilarity, Dice, Perplexity, ROC, BleuScore, OcclusionSensitivity,
and the segmentation surface metrics HausdorffDistance, MeanSurfaceDistance and
RootMeanSquareDistance.

Like nn.metrics they run outside any graph in Python floats (MindSpore's run in numpy); results
that MindSpore returns as numpy arrays come back as numpy arrays (pijit's stand-in where numpy is
missing). The surface metrics find edges by a binary erosion with the cross-shaped structure and
zero border, and distances to the nearest edge point (euclidean, chessboard or taxicab), as
scipy.ndimage does for MindSpore; here by direct search over edge points, which is exact and fine
for the images metrics see (it is quadratic in the number of edge points).
"""
import collections
import itertools
import math

from pijit.nn.metrics import Metric, rearrange_inputs, _data, _shape, _flat, _argmax

__all__ = ["ConfusionMatrix", "ConfusionMatrixMetric", "CosineSimilarity", "Dice", "Perplexity",
           "ROC", "BleuScore", "OcclusionSensitivity", "HausdorffDistance", "MeanSurfaceDistance",
           "RootMeanSquareDistance"]


def _np():
    try:
        import numpy
    except ImportError:
        from pijit import numpy_lite as numpy
    return numpy


def _array(nested, dtype=float):
    np = _np()
    return np.array(nested, dtype=np.float64 if dtype is float else np.int64)


def _nested(flat, shape):
    """flat (row-major) -> nested lists of the shape."""
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nested(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _arr(x, who):
    """Input as (flat list, shape)."""
    d = _data(x, who)
    return _flat(d), _shape(d)


def _check_type(who, name, value, types):
    if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
        raise TypeError("For '%s', the type of '%s' should be %s, but got %s." % (
            who, name, " or ".join(t.__name__ for t in types), type(value).__name__))
    return value


def _check_choice(who, name, value, choices):
    _check_type(who, name, value, (str,))
    if value not in choices:
        raise ValueError("For '%s', the argument '%s' should be one of %s, but got '%s'."
                         % (who, name, choices, value))
    return value


def _need_update(done):
    if not done:
        raise RuntimeError("Please call the 'update' method before calling 'eval' method.")


def _n_inputs(who, inputs, n, what):
    if len(inputs) != n:
        raise ValueError("For '%s.update', it needs %d inputs (%s), but got %d."
                         % (who, n, what, len(inputs)))


def _argmax_axis1(flat, shape):
    """argmax over axis 1 of an (N, C, ...) array -> (flat, (N, ...))."""
    n, c = shape[0], shape[1]
    inner = 1
    for s in shape[2:]:
        inner *= s
    out = []
    for b in range(n):
        for i in range(inner):
            out.append(_argmax([flat[(b * c + k) * inner + i] for k in range(c)]))
    return out, (n,) + tuple(shape[2:])


# ---- ConfusionMatrix ------------------------------------------------------------------------------

class ConfusionMatrix(Metric):
    """The (num_classes, num_classes) confusion matrix, rows the true class, columns the
    predicted one; normalize 'no_norm', 'target' (rows), 'prediction' (columns) or 'all'.
    y_pred of one more dimension than y is argmax-ed over axis 1; float y_pred of y's rank is
    thresholded (>= threshold)."""

    def __init__(self, num_classes, normalize="no_norm", threshold=0.5):
        super(ConfusionMatrix, self).__init__()
        self.num_classes = _check_type("ConfusionMatrix", "num_classes", num_classes, (int,))
        if normalize not in ["target", "prediction", "all", "no_norm"]:
            raise ValueError("For 'ConfusionMatrix', the argument 'normalize' must be in "
                             "['all', 'prediction', 'label', 'no_norm'(None)], but got %s." % (normalize,))
        self.normalize = normalize
        self.threshold = _check_type("ConfusionMatrix", "threshold", threshold, (float,))
        self.clear()

    def clear(self):
        self._counts = [0] * (self.num_classes ** 2)
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        _n_inputs("ConfusionMatrix", inputs, 2, "predicted value, true value")
        yp, sp = _arr(inputs[0], "ConfusionMatrix")
        y, sy = _arr(inputs[1], "ConfusionMatrix")
        if not (len(sp) == len(sy) or len(sp) == len(sy) + 1):
            raise ValueError("For 'ConfusionMatrix.update', predicted value (input[0]) and true value "
                             "(input[1]) should have same dimensions, or the dimension of predicted value "
                             "equals the dimension of true value add 1, but got predicted value ndim: "
                             "%d, true value ndim: %d." % (len(sp), len(sy)))
        if len(sp) == len(sy) + 1:
            yp, sp = _argmax_axis1(yp, sp)
        elif any(isinstance(v, float) for v in yp):
            yp = [1 if v >= self.threshold else 0 for v in yp]
        if len(yp) != len(y):
            raise ValueError("For 'ConfusionMatrix.update', predicted value and true value must hold as "
                             "many labels, but got %d and %d." % (len(yp), len(y)))
        nc = self.num_classes
        for t, p in zip(y, yp):
            k = int(t) * nc + int(p)
            if not 0 <= k < nc * nc:
                raise ValueError("For 'ConfusionMatrix.update', labels must be in [0, %d), but got true "
                                 "value %s and predicted value %s." % (nc, t, p))
            self._counts[k] += 1
        self._is_update = True

    def eval(self):
        _need_update(self._is_update)
        nc = self.num_classes
        m = [[float(self._counts[r * nc + c]) for c in range(nc)] for r in range(nc)]
        if self.normalize == "target":
            m = [[v / s if s else 0.0 for v in row] for row, s in zip(m, [sum(r) for r in m])]
        elif self.normalize == "prediction":
            cols = [sum(m[r][c] for r in range(nc)) for c in range(nc)]
            m = [[v / cols[c] if cols[c] else 0.0 for c, v in enumerate(row)] for row in m]
        elif self.normalize == "all":
            total = sum(sum(r) for r in m)
            m = [[v / total if total else 0.0 for v in row] for row in m]
        return _array(m)


# ---- ConfusionMatrixMetric ------------------------------------------------------------------------

_CM_ALIASES = {
    "tpr": ("sensitivity", "recall", "hit_rate", "true_positive_rate", "tpr"),
    "tnr": ("specificity", "selectivity", "true_negative_rate", "tnr"),
    "ppv": ("precision", "positive_predictive_value", "ppv"),
    "npv": ("negative_predictive_value", "npv"),
    "fnr": ("miss_rate", "false_negative_rate", "fnr"),
    "fpr": ("fall_out", "false_positive_rate", "fpr"),
    "fdr": ("false_discovery_rate", "fdr"),
    "for": ("false_omission_rate", "for"),
    "pt": ("prevalence_threshold", "pt"),
    "ts": ("threat_score", "critical_success_index", "ts", "csi"),
    "acc": ("accuracy", "acc"),
    "ba": ("balanced_accuracy", "ba"),
    "f1": ("f1_score", "f1"),
    "mcc": ("matthews_correlation_coefficient", "mcc"),
    "fm": ("fowlkes_mallows_index", "fm"),
    "bm": ("informedness", "bookmaker_informedness", "bm"),
    "mk": ("markedness", "deltap", "mk"),
}
_CM_NAME = {alias: key for key, aliases in _CM_ALIASES.items() for alias in aliases}
_NAN = float("nan")


def _div(a, b):
    if b == 0:
        return _NAN
    return a / b


def _cm_value(key, tp, fp, tn, fn):
    """One metric from the four counts (nan where undefined, as numpy's division gives)."""
    p, n = tp + fn, fp + tn
    if key in ("tpr", "tnr", "ppv", "npv", "fnr", "fpr", "fdr", "for", "ts", "acc", "f1"):
        num, den = {"tpr": (tp, p), "tnr": (tn, n), "ppv": (tp, tp + fp), "npv": (tn, tn + fn),
                    "fnr": (fn, p), "fpr": (fp, n), "fdr": (fp, fp + tp), "for": (fn, fn + tn),
                    "ts": (tp, tp + fn + fp), "acc": (tp + tn, p + n),
                    "f1": (2.0 * tp, 2.0 * tp + fn + fp)}[key]
        return _div(num, den)
    tpr, tnr = _div(tp, p), _div(tn, n)
    ppv, npv = _div(tp, tp + fp), _div(tn, tn + fn)
    if key == "pt":
        num = math.sqrt(tpr * (1.0 - tnr)) + tnr - 1.0 if tpr * (1.0 - tnr) >= 0 else _NAN
        return _div(num, tpr + tnr - 1.0)
    if key == "ba":
        return (tpr + tnr) / 2.0
    if key == "mcc":
        prod = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
        return _div(tp * tn - fp * fn, math.sqrt(prod))
    if key == "fm":
        return math.sqrt(ppv * tpr) if ppv == ppv and tpr == tpr else _NAN
    if key == "bm":
        return tpr + tnr - 1.0
    return ppv + npv - 1.0  # mk


class ConfusionMatrixMetric(Metric):
    """Metrics of the confusion matrix (sensitivity, specificity, precision, ..., markedness; the
    usual aliases accepted) over one-hot/binarized y_pred and y of shape (B, C, ...).
    calculation_method=False accumulates the counts of every update and computes once;
    True computes per sample and channel, reduces by `decrease`, and averages over updates."""

    _DECREASE = ["none", "mean", "sum", "mean_batch", "sum_batch", "mean_channel", "sum_channel"]

    def __init__(self, skip_channel=True, metric_name="sensitivity", calculation_method=False,
                 decrease="mean"):
        super(ConfusionMatrixMetric, self).__init__()
        who = "ConfusionMatrixMetric"
        self.skip_channel = _check_type(who, "skip_channel", skip_channel, (bool,))
        self.calculation_method = _check_type(who, "calculation_method", calculation_method, (bool,))
        self.metric_name = _check_type(who, "metric_name", metric_name, (str,))
        self.decrease = _check_choice(who, "decrease", decrease, self._DECREASE)
        self._key = _CM_NAME.get(metric_name.replace(" ", "_").lower())
        if self._key is None:
            raise NotImplementedError("The metric is not implemented.")
        self.clear()

    def clear(self):
        self._total_num = 0.0
        self._class_num = 0
        self._totals = [0.0, 0.0, 0.0, 0.0]

    def _counts(self, inputs):
        yp, sp = _arr(inputs[0], "ConfusionMatrixMetric")
        y, sy = _arr(inputs[1], "ConfusionMatrixMetric")
        if any(float(v) not in (0.0, 1.0) for v in y):
            raise ValueError("For 'ConfusionMatrix.update', the true value (input[1]) must be a binarized "
                             "ndarray.")
        if len(sp) < 2:
            raise ValueError("For 'ConfusionMatrix.update', the predicted value (input[0]) must have at least "
                             "2 dimensions, but got %d." % len(sp))
        if sp != sy:
            raise ValueError("For 'ConfusionMatrix.update', the shape of the true value %s must equal the "
                             "shape of the predicted value %s." % (sy, sp))
        b, c = sp[0], sp[1]
        inner = len(yp) // (b * c) if b * c else 0
        channels = range(1, c) if (not self.skip_channel and c > 1) else range(c)
        per_class = []  # [batch][channel] -> (tp, fp, tn, fn)
        for i in range(b):
            row = []
            for k in channels:
                base = (i * c + k) * inner
                tp = tn = pos = 0
                for j in range(inner):
                    s = float(yp[base + j]) + float(y[base + j])
                    tp += s == 2
                    tn += s == 0
                    pos += float(y[base + j])
                neg = inner - pos
                row.append((float(tp), float(neg - tn), float(tn), float(pos - tp)))
            per_class.append(row)
        classification = len(sp) == 2 or (len(sp) == 3 and sp[-1] == 1)
        return per_class, classification

    def _reduce(self, chart):
        """chart [batch][channel] with nans -> (value, not-nan count) by self.decrease."""
        ok = [[0.0 if v != v else 1.0 for v in row] for row in chart]
        chart = [[0.0 if v != v else v for v in row] for row in chart]
        d = self.decrease
        if d in ("sum", "none"):
            if d == "none":
                return chart, ok
            return sum(map(sum, chart)), sum(map(sum, ok))
        if d in ("mean", "mean_channel"):
            per_b = [_div(sum(r), sum(o)) if sum(o) > 0 else 0.0 for r, o in zip(chart, ok)]
            okb = [sum(o) for o in ok]
            if d == "mean_channel":
                return per_b, okb
            nb = sum(1.0 for v in okb if v > 0)
            return (sum(per_b) / nb if nb > 0 else 0.0), nb
        if d == "sum_channel":
            return [sum(r) for r in chart], [sum(o) for o in ok]
        cols = list(zip(*chart))
        okc = [sum(o) for o in zip(*ok)]
        if d == "sum_batch":
            return [sum(c) for c in cols], okc
        return [sum(c) / n if n > 0 else 0.0 for c, n in zip(cols, okc)], okc  # mean_batch

    @rearrange_inputs
    def update(self, *inputs):
        _n_inputs("ConfusionMatrixMetric", inputs, 2, "predicted value, true value")
        per_class, classification = self._counts(inputs)
        if self.calculation_method and not classification:
            chart = [[_cm_value(self._key, *cnt) for cnt in row] for row in per_class]
            score, not_nans = self._reduce(chart)
            if isinstance(score, list):
                raise ValueError("can only convert an array of size 1 to a Python scalar (decrease='%s' "
                                 "leaves one value per %s)" % (self.decrease, "batch item or channel"))
            self._total_num += score * int(not_nans)
            self._class_num += int(not_nans)
            return
        for row in per_class:
            for cnt in row:
                for i in range(4):
                    self._totals[i] += cnt[i]

    def eval(self):
        if self.calculation_method and self._class_num:
            return self._total_num / self._class_num
        if self.calculation_method and not any(self._totals):
            raise RuntimeError("The 'ConfusionMatrixMetric' can not be calculated, because the number of "
                               "samples is 0, please check whether your inputs(predicted value, true value) "
                               "are empty, or has called update method before calling eval method.")
        return _array([_cm_value(self._key, *self._totals)])


# ---- similarity, dice, perplexity -----------------------------------------------------------------

class CosineSimilarity(Metric):
    """The (N, N) similarity matrix of the rows of an (N, M) input ('cosine' or 'dot'), the
    diagonal zeroed by default; reduction 'none', 'sum' or 'mean' over the last axis."""

    def __init__(self, similarity="cosine", reduction="none", zero_diagonal=True):
        super(CosineSimilarity, self).__init__()
        who = "CosineSimilarity"
        self.similarity = _check_choice(who, "similarity", similarity, ["dot", "cosine"])
        self.reduction = _check_choice(who, "reduction", reduction, ["none", "sum", "mean"])
        self.zero_diagonal = _check_type(who, "zero_diagonal", zero_diagonal, (bool,))
        self.clear()

    def clear(self):
        self.sqr_mtx_res = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, inputs):
        rows = _data(inputs, "CosineSimilarity")
        if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
            raise ValueError("For 'CosineSimilarity.update', the input must be a 2-D matrix, but got shape %s."
                             % (_shape(rows) if isinstance(rows, list) else ()))
        rows = [[float(v) for v in r] for r in rows]
        if self.similarity == "cosine":
            norms = [math.sqrt(math.fsum(v * v for v in r)) for r in rows]
            rows = [[v / n for v in r] if n else [_NAN] * len(r) for r, n in zip(rows, norms)]
        self.sqr_mtx_res = [[math.fsum(a * b for a, b in zip(r, s)) for s in rows] for r in rows]
        self._is_update = True

    def eval(self):
        _need_update(self._is_update)
        m = [list(r) for r in self.sqr_mtx_res]
        if self.zero_diagonal:
            for i, r in enumerate(m):
                r[i] = 0.0
        if self.reduction == "mean":
            return _array([math.fsum(r) / len(r) for r in m])
        if self.reduction == "sum":
            return _array([math.fsum(r) for r in m])
        return _array(m)


class Dice(Metric):
    """The Dice coefficient 2|A.B| / (|A|^2 + |B|^2 + smooth) of each update's (y_pred, y),
    averaged per sample (each update counts y.shape[0] samples)."""

    def __init__(self, smooth=1e-5):
        super(Dice, self).__init__()
        if isinstance(smooth, bool) or not isinstance(smooth, float) or not smooth > 0:
            raise ValueError("For 'Dice', the argument 'smooth' must be a positive float, but got %r." % (smooth,))
        self.smooth = smooth
        self.clear()

    def clear(self):
        self._dice_coeff_sum = 0.0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        _n_inputs("Dice", inputs, 2, "predicted value, true value")
        yp, sp = _arr(inputs[0], "Dice")
        y, sy = _arr(inputs[1], "Dice")
        self._samples_num += sy[0] if sy else 1
        if sp != sy:
            raise ValueError("For 'Dice.update', predicted value (input[0]) and true value (input[1]) should "
                             "have same shape, but got predicted value shape: %s, true value shape: %s."
                             % (sp, sy))
        inter = math.fsum(float(a) * float(b) for a, b in zip(yp, y))
        union = math.fsum(float(a) * float(a) for a in yp) + math.fsum(float(b) * float(b) for b in y)
        self._dice_coeff_sum += 2 * inter / (union + self.smooth)

    def eval(self):
        if self._samples_num == 0:
            raise RuntimeError("The 'Dice coefficient' can not be calculated, because the number of samples is "
                               "0, please check whether your inputs(predicted value, true value) are empty, or "
                               "has called update method before calling eval method.")
        return self._dice_coeff_sum / float(self._samples_num)


class Perplexity(Metric):
    """exp(mean negative log probability of the labels); preds (..., C) probabilities, labels of
    the leading shape; ignore_label drops those positions."""

    def __init__(self, ignore_label=None):
        super(Perplexity, self).__init__()
        if ignore_label is not None:
            _check_type("Perplexity", "ignore_label", ignore_label, (int,))
        self.ignore_label = ignore_label
        self.clear()

    def clear(self):
        self._sum_metric = 0.0
        self._num_inst = 0

    @rearrange_inputs
    def update(self, *inputs):
        _n_inputs("Perplexity", inputs, 2, "predicted value, label")
        pred, sp = _arr(inputs[0], "Perplexity")
        label, sl = _arr(inputs[1], "Perplexity")
        c = sp[-1] if sp else 1
        if not sp or len(label) * c != len(pred):
            raise RuntimeError("For 'Perplexity.update', predicted value (input[0]) and label (input[1]) should "
                               "have the same shape, but got predicted value shape %s, label shape %s."
                               % (sp, sl))
        loss, num = 0.0, 0
        for i, lab in enumerate(label):
            if self.ignore_label is not None and lab == self.ignore_label:
                continue
            loss -= math.log(max(1e-10, float(pred[i * c + int(lab)])))
            num += 1
        self._sum_metric += loss
        self._num_inst += num

    def eval(self):
        if self._num_inst == 0:
            raise RuntimeError("The 'Perplexity' can not be calculated, because the number of samples is 0, "
                               "please check whether has called update method before calling eval method.")
        return math.exp(self._sum_metric / self._num_inst)


# ---- ROC ------------------------------------------------------------------------------------------

def _binary_curve(preds, target, pos_label):
    """(fps, tps, thresholds) at each distinct score, scores descending."""
    order = sorted(range(len(preds)), key=lambda i: -preds[i])
    ps = [preds[i] for i in order]
    hit = [1 if target[i] == pos_label else 0 for i in order]
    fps, tps, thr = [], [], []
    tp = 0
    for i, h in enumerate(hit):
        tp += h
        if i == len(ps) - 1 or ps[i + 1] != ps[i]:
            tps.append(tp)
            fps.append(i + 1 - tp)
            thr.append(ps[i])
    return fps, tps, thr


class ROC(Metric):
    """The ROC curve (fpr, tpr, thresholds): binary for y_pred of y's shape (pos_label, default 1),
    one-vs-rest per class for (N, C) scores (lists of arrays, one per class)."""

    def __init__(self, class_num=None, pos_label=None):
        super(ROC, self).__init__()
        if class_num is not None:
            _check_type("ROC", "class_num", class_num, (int,))
        if pos_label is not None:
            _check_type("ROC", "pos_label", pos_label, (int,))
        self.class_num = class_num
        self.pos_label = pos_label
        self.clear()

    def clear(self):
        self.y_pred = 0
        self.y = 0
        self._is_update = False

    def _prepare(self, yp, sp, y, sy, class_num, pos_label):
        if not (len(sp) == len(sy) or len(sp) == len(sy) + 1):
            raise ValueError("For 'ROC', predicted value (input[0]) and true value (input[1]) must have same "
                             "dimensions, or the dimension of predicted value equal the dimension of true value "
                             "add 1, but got predicted value ndim: %d, true value ndim: %d." % (len(sp), len(sy)))
        if len(sp) == len(sy):
            if class_num is not None and class_num != 1:
                raise ValueError("For 'ROC', when predicted value (input[0]) and true value (input[1]) have the "
                                 "same shape, the 'class_num' must be 1, but got %d." % class_num)
            return yp, y, 1, 1 if pos_label is None else pos_label
        if pos_label is not None:
            raise ValueError("For 'ROC', when the dimension of predicted value (input[0]) equals the dimension of "
                             "true value (input[1]) add 1, the 'pos_label' must be None, but got %d." % pos_label)
        if class_num != sp[1]:
            raise ValueError("For 'ROC', the 'class_num' must equal the number of classes from predicted value "
                             "(input[0]), but got 'class_num' %s, the number of classes from predicted value %d."
                             % (class_num, sp[1]))
        c = sp[1]
        cols = [[yp[i * c + k] for i in range(len(yp) // c)] for k in range(c)]
        return cols, y, c, None

    @rearrange_inputs
    def update(self, *inputs):
        _n_inputs("ROC", inputs, 2, "predicted value, true value")
        yp, sp = _arr(inputs[0], "ROC")
        y, sy = _arr(inputs[1], "ROC")
        self.y_pred, self.y, self.class_num, self.pos_label = self._prepare(
            yp, sp, y, sy, self.class_num, self.pos_label)
        self._is_update = True

    @staticmethod
    def _curve(preds, y, pos_label):
        fps, tps, thr = _binary_curve(preds, y, pos_label)
        fps, tps = [0] + fps, [0] + tps
        thr = [thr[0] + 1] + thr
        if fps[-1] <= 0:
            raise ValueError("For 'ROC.eval', there is no negative samples in true value, false positive value "
                             "is meaningless.")
        if tps[-1] <= 0:
            raise ValueError("For 'ROC.eval', there is no positive samples in true value, true positive value "
                             "is meaningless.")
        dtype = float if any(isinstance(t, float) for t in thr) else int
        return (_array([f / fps[-1] for f in fps]), _array([t / tps[-1] for t in tps]),
                _array(thr, dtype))

    def eval(self):
        _need_update(self._is_update)
        if self.class_num == 1:
            return self._curve(self.y_pred, self.y, self.pos_label)
        curves = [self._curve(col, self.y, c) for c, col in enumerate(self.y_pred)]
        return [c[0] for c in curves], [c[1] for c in curves], [c[2] for c in curves]


# ---- BleuScore ------------------------------------------------------------------------------------

def _ngrams(words, n_gram):
    counts = collections.Counter()
    for n in range(1, n_gram + 1):
        for j in range(len(words) - n + 1):
            counts[tuple(words[j:j + n])] += 1
    return counts


class BleuScore(Metric):
    """Corpus BLEU of candidate sentences (lists of tokens) against lists of references, with
    n-grams up to n_gram (1..4), clipped counts, brevity penalty, optional add-one smoothing."""

    def __init__(self, n_gram=4, smooth=False):
        super(BleuScore, self).__init__()
        self.n_gram = _check_type("BleuScore", "n_gram", n_gram, (int,))
        if not 1 <= n_gram <= 4:
            raise ValueError("For 'BleuScore', the argument 'n_gram' should range from 1 to 4, but got %d."
                             % n_gram)
        self.smooth = _check_type("BleuScore", "smooth", smooth, (bool,))
        self.clear()

    def clear(self):
        self._numerator = [0.0] * self.n_gram
        self._denominator = [0.0] * self.n_gram
        self._c = 0.0
        self._r = 0.0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        _n_inputs("BleuScore", inputs, 2, "candidate_corpus, reference_corpus")
        candidates, references = inputs
        if len(candidates) != len(references):
            raise ValueError("For 'BleuScore.update', 'translate_corpus' (inputs[0]) and 'reference_corpus' "
                             "(inputs[1]) should be equal in length, but got %d, %d"
                             % (len(candidates), len(references)))
        for cand, refs in zip(candidates, references):
            self._c += len(cand)
            lens = [len(r) for r in refs]
            diffs = [abs(len(cand) - x) for x in lens]
            self._r += lens[diffs.index(min(diffs))]
            got = _ngrams(cand, self.n_gram)
            ref_counts = collections.Counter()
            for r in refs:
                ref_counts |= _ngrams(r, self.n_gram)
            for gram, k in (got & ref_counts).items():
                self._numerator[len(gram) - 1] += k
            for gram, k in got.items():
                self._denominator[len(gram) - 1] += k
        self._is_update = True

    def eval(self):
        _need_update(self._is_update)
        if min(self._numerator) == 0.0:
            return 0.0
        if self.smooth:
            prec = [(a + 1.0) / (b + 1.0) for a, b in zip(self._numerator, self._denominator)]
        else:
            prec = [a / b for a, b in zip(self._numerator, self._denominator)]
        geo = math.exp(math.fsum(math.log(p) / self.n_gram for p in prec))
        penalty = 1.0 if self._c > self._r else math.exp(1 - self._r / self._c)
        return penalty * geo


# ---- OcclusionSensitivity -------------------------------------------------------------------------

class OcclusionSensitivity(Metric):
    """How much the model's score for `label` drops when a cube of +-margin around each voxel of
    the (1, ...) input is set to pad_val (the baseline score minus each occluded score), run in
    batches of n_batch; b_box [min1, max1, min2, max2, ...] restricts the voxels."""

    def __init__(self, pad_val=0.0, margin=2, n_batch=128, b_box=None):
        super(OcclusionSensitivity, self).__init__()
        who = "OcclusionSensitivity"
        self.pad_val = _check_type(who, "pad_val", pad_val, (float,))
        self.margin = _check_type(who, "margin", margin, (int, list))
        self.n_batch = _check_type(who, "n_batch", n_batch, (int,))
        self.b_box = b_box if b_box is None else _check_type(who, "b_box", b_box, (list,))
        self.clear()

    def clear(self):
        self._baseline = 0.0
        self._sensitivity = None
        self._is_update = False

    def _box(self, shape):
        if self.b_box is None:
            return [0] * len(shape), [s - 1 for s in shape]
        if len(self.b_box) != 2 * len(shape):
            raise ValueError("For 'OcclusionSensitivity', the bounding box must contain upper and lower for all "
                             "dimensions (except batch number), and the length of 'b_box' must be twice as long "
                             "as predicted value's (except batch number), but got 'b_box' length %d, predicted "
                             "value length (except batch number) %d." % (len(self.b_box), len(shape)))
        lo = [max(v, 0) for v in self.b_box[::2]]
        hi = [s - 1 if v < 0 else v for v, s in zip(self.b_box[1::2], shape)]
        if any(h >= s for h, s in zip(hi, shape)):
            raise ValueError("For 'OcclusionSensitivity', maximum bounding box must be smaller than image size "
                             "for all values.")
        if any(a > b for a, b in zip(lo, hi)):
            raise ValueError("For 'OcclusionSensitivity', minimum bounding box must be smaller than maximum "
                             "bounding box for all values.")
        return lo, hi

    @rearrange_inputs
    def update(self, *inputs):
        from pijit import Tensor, nn, ops
        _n_inputs("OcclusionSensitivity", inputs, 3, "classification model, predicted value, label")
        model = inputs[0]
        if not isinstance(model, nn.Cell):
            raise TypeError("For 'OcclusionSensitivity', the type of 'model' should be Cell, but got %s."
                            % type(model).__name__)
        data = _data(inputs[1], "OcclusionSensitivity")
        shape = _shape(data)
        if shape[0] > 1:
            raise RuntimeError("For 'OcclusionSensitivity.update', the shape at index 0 of the predicted value "
                               "(input[1]) must be 1, but got %d." % shape[0])
        label = _flat(_data(inputs[2], "OcclusionSensitivity"))
        if len(label) != shape[0]:
            raise RuntimeError("For 'OcclusionSensitivity.update', the number of the label (input[2]) must be "
                               "same as the batches, but got the label number %d, and batches %d."
                               % (len(label), shape[0]))
        label = int(label[0])
        image = Tensor(data).astype("float32") if not isinstance(inputs[1], Tensor) else inputs[1]
        self._baseline = float(model(image)[0, label].item())
        im_shape = shape[1:]
        lo, hi = self._box(im_shape)
        out_shape = [b - a + 1 for a, b in zip(lo, hi)]
        margins = self.margin if isinstance(self.margin, list) else [self.margin] * len(im_shape)
        scores, batch = [], []
        voxels = list(itertools.product(*[range(a, b + 1) for a, b in zip(lo, hi)]))
        for n, idx in enumerate(voxels):
            occluded = image.copy()
            box = tuple(slice(max(0, i - m), min(s, i + m)) for i, m, s in zip(idx, margins, im_shape))
            occluded[(Ellipsis,) + box] = self.pad_val
            batch.append(occluded)
            if len(batch) == self.n_batch or n == len(voxels) - 1:
                out = model(ops.concat(batch, 0))
                self._dtype = out.dtype
                scores.extend(float(row[label]) for row in out.tolist())
                batch = []
        self._sensitivity = (scores, [d for d in out_shape if d != 1])
        self._is_update = True

    def eval(self):
        if not self._is_update:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        scores, shape = self._sensitivity
        np = _np()
        # the difference in the model's own dtype, as numpy subtracts MindSpore's asnumpy() values
        dtype = np.float32 if str(self._dtype) == "Float32" else np.float64
        diffs = np.array(scores, dtype=dtype)
        diffs = dtype(self._baseline) - diffs
        return diffs.reshape(tuple(shape)) if shape else diffs[0]


# ---- surface distances ----------------------------------------------------------------------------

def _binary(x, label_idx, who):
    flat, shape = _arr(x, who)
    if any(isinstance(v, bool) for v in flat):
        return [bool(v) for v in flat], shape
    return [v == label_idx for v in flat], shape


def _strides(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return st[::-1]


def _coords(i, strides, shape):
    return tuple((i // st) % s for st, s in zip(strides, shape))


def _edges(mask, shape):
    """mask XOR its erosion by the cross structure with a zero border: the boundary voxels."""
    strides = _strides(shape)
    out = [False] * len(mask)
    for i, m in enumerate(mask):
        if not m:
            continue
        c = _coords(i, strides, shape)
        inner = True
        for d, (cd, st, sd) in enumerate(zip(c, strides, shape)):
            if cd == 0 or cd == sd - 1 or not mask[i - st] or not mask[i + st]:
                inner = False
                break
        out[i] = not inner
    return out


def _distance(a, b, metric):
    if metric == "euclidean":
        return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    if metric == "chessboard":
        return float(max(abs(x - y) for x, y in zip(a, b)))
    return float(sum(abs(x - y) for x, y in zip(a, b)))


def _surface_distances(src, dst, shape, metric):
    """For each edge voxel of src, the distance to the nearest edge voxel of dst (inf if none)."""
    strides = _strides(shape)
    pts_src = [_coords(i, strides, shape) for i, v in enumerate(src) if v]
    pts_dst = [_coords(i, strides, shape) for i, v in enumerate(dst) if v]
    if not pts_dst:
        return [math.inf] * len(pts_src)
    return [min(_distance(p, q, metric) for q in pts_dst) for p in pts_src]


def _crop_to_union(a, b, shape):
    """Both masks cropped to the bounding box of a | b, size-1 axes squeezed (MindSpore crops
    before finding edges, so voxels on the box's faces count as boundary)."""
    strides = _strides(shape)
    fg = [_coords(i, strides, shape) for i, (u, v) in enumerate(zip(a, b)) if u or v]
    lo = [min(c[d] for c in fg) for d in range(len(shape))]
    hi = [max(c[d] for c in fg) + 1 for d in range(len(shape))]
    new_shape = [h - l for l, h in zip(lo, hi)]
    idx = [sum((l + o) * st for l, o, st in zip(lo, off, strides))
           for off in itertools.product(*[range(s) for s in new_shape])]
    return [a[i] for i in idx], [b[i] for i in idx], tuple(s for s in new_shape if s != 1)


class _SurfaceMetric(Metric):
    _METRICS = ["euclidean", "chessboard", "taxicab"]

    def _set_metric(self, distance_metric):
        self.distance_metric = _check_choice(type(self).__name__, "distance_metric", distance_metric,
                                             self._METRICS)

    def clear(self):
        self._y_pred_edges = None
        self._y_edges = None
        self._shape = None
        self._is_update = False

    def _masks(self, inputs, label_type_error):
        who = type(self).__name__
        _n_inputs(who, inputs, 3, "predicted value, true value, label index")
        label_idx = inputs[2]
        if not isinstance(label_idx, (int, float)):
            msg = ("For '%s.update', the label index (input[2]) must be int or float, but got %s."
                   % (who, type(label_idx)))
            raise (TypeError if label_type_error else ValueError)(msg)
        yp_raw, sp = _arr(inputs[0], who)
        y_raw, sy = _arr(inputs[1], who)
        if label_idx not in yp_raw and label_idx not in y_raw:
            raise ValueError("For '%s.update', the label index (input[2]) must be in predicted value (input[0]) "
                             "or true value (input[1]), but %s is not." % (who, label_idx))
        if not yp_raw or sp != sy:
            raise ValueError("For '%s.update', the size of predicted value (input[0]) and true value (input[1]) "
                             "must be greater than 0, in addition to that, predicted value and true value "
                             "should have the same shape, but got predicted value size: %d, shape: %s, true "
                             "value size: %d, shape: %s." % (who, len(yp_raw), sp, len(y_raw), sy))
        yp, _ = _binary(inputs[0], label_idx, who)
        y, _ = _binary(inputs[1], label_idx, who)
        return yp, y, sp

    def _set_edges(self, yp, y, shape):
        self._y_pred_edges, self._y_edges, self._shape = _edges(yp, shape), _edges(y, shape), shape
        self._is_update = True

    def _dist(self, src, dst):
        return _surface_distances(src, dst, self._shape, self.distance_metric)


class HausdorffDistance(_SurfaceMetric):
    """max(h(y_pred, y), h(y, y_pred)), h(A, B) the largest distance from an edge voxel of A to
    the edges of B (or its `percentile`); directed=True gives h(y_pred, y) alone; crop=True crops
    both images to their union's bounding box first."""

    def __init__(self, distance_metric="euclidean", percentile=None, directed=False, crop=True):
        super(HausdorffDistance, self).__init__()
        self._set_metric(distance_metric)
        if percentile is not None:
            _check_type("HausdorffDistance", "percentile", percentile, (float,))
        self.percentile = percentile
        self.directed = _check_type("HausdorffDistance", "directed", directed, (bool,))
        self.crop = _check_type("HausdorffDistance", "crop", crop, (bool,))
        self.clear()

    @rearrange_inputs
    def update(self, *inputs):
        yp, y, shape = self._masks(inputs, label_type_error=False)
        if self.crop:
            if not any(yp) and not any(y):
                self._y_pred_edges, self._y_edges, self._shape = yp, y, shape
                self._is_update = True
                return
            yp, y, shape = _crop_to_union(yp, y, shape)
        self._set_edges(yp, y, shape)

    def _directed(self, src, dst):
        d = self._dist(src, dst)
        if not d:
            return math.inf
        if not self.percentile:
            return max(d)
        if not 0 <= self.percentile <= 100:
            raise ValueError("For 'HausdorffDistance', the value of the argument 'percentile' must be [0, 100], "
                             "but got %s." % self.percentile)
        d = sorted(d)  # numpy's default (linear) percentile
        pos = (len(d) - 1) * self.percentile / 100.0
        lo = int(math.floor(pos))
        hi = min(lo + 1, len(d) - 1)
        return d[lo] + (d[hi] - d[lo]) * (pos - lo)

    def eval(self):
        _need_update(self._is_update)
        hd = self._directed(self._y_pred_edges, self._y_edges)
        if self.directed:
            return hd
        return max(hd, self._directed(self._y_edges, self._y_pred_edges))


class MeanSurfaceDistance(_SurfaceMetric):
    """The mean distance from y_pred's edge voxels to y's edges; symmetric=True averages it with
    the reverse direction."""

    def __init__(self, symmetric=False, distance_metric="euclidean"):
        super(MeanSurfaceDistance, self).__init__()
        self._set_metric(distance_metric)
        self.symmetric = _check_type("MeanSurfaceDistance", "symmetric", symmetric, (bool,))
        self.clear()

    @rearrange_inputs
    def update(self, *inputs):
        self._set_edges(*self._masks(inputs, label_type_error=False))

    def eval(self):
        _need_update(self._is_update)
        d = self._dist(self._y_pred_edges, self._y_edges)
        if not d:
            return math.inf
        avg = math.fsum(d) / len(d)
        if not self.symmetric:
            return avg
        r = self._dist(self._y_edges, self._y_pred_edges)
        if not r:
            return math.inf
        return (avg + math.fsum(r) / len(r)) / 2


class RootMeanSquareDistance(_SurfaceMetric):
    """Surface distances from y_pred's edges to y's, squared and averaged; symmetric=True gives
    sqrt of the mean of both directions' mean squares. (As in MindSpore, the one-directed value is
    the mean square itself, without the root: its documented example prints 1.0000000000000002.)"""

    def __init__(self, symmetric=False, distance_metric="euclidean"):
        super(RootMeanSquareDistance, self).__init__()
        self._set_metric(distance_metric)
        self.symmetric = _check_type("RootMeanSquareDistance", "symmetric", symmetric, (bool,))
        self.clear()

    @rearrange_inputs
    def update(self, *inputs):
        self._set_edges(*self._masks(inputs, label_type_error=True))

    def eval(self):
        _need_update(self._is_update)
        d = self._dist(self._y_pred_edges, self._y_edges)
        if not d:
            return math.inf
        ms = sum(v * v for v in d) / len(d)
        if not self.symmetric:
            return ms
        r = self._dist(self._y_edges, self._y_pred_edges)
        if not r:
            return math.inf
        return math.sqrt((ms + sum(v * v for v in r) / len(r)) / 2)
