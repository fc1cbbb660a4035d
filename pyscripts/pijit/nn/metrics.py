"""MindSpore's evaluation metrics: nn.Metric (clear / update / eval, set_indexes,
rearrange_inputs), Accuracy, Loss, TopKCategoricalAccuracy with Top1/Top5, MAE, MSE, Precision,
Recall, Fbeta and F1, get_metric_fn and names.

update() takes Tensors, lists, tuples or numbers; the metrics accumulate in Python floats, so
they run outside any graph, as MindSpore's (which work in numpy) do. Precision, Recall, Fbeta
and F1 return one value per class as a list (MindSpore: a numpy array) or, with average=True,
their mean as a float.
"""
import functools
import math
import struct
import sys

from pijit import _C


def _data(x, who):
    """A Tensor, list, tuple or number as nested Python lists (floats / ints / bools)."""
    if isinstance(x, _C.TensorBase):
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [_data(v, who) for v in x]
    if isinstance(x, (int, float, bool)):
        return x
    if hasattr(x, "tolist"):  # numpy arrays where numpy exists
        return x.tolist()
    raise TypeError("For '%s', the input must be a Tensor, list, tuple or number, but got %s."
                    % (who, type(x).__name__))


def _shape(v):
    s = []
    while isinstance(v, list):
        s.append(len(v))
        v = v[0] if v else None
    return tuple(s)


def _flat(v):
    if not isinstance(v, list):
        return [v]
    out = []
    for it in v:
        out.extend(_flat(it))
    return out


def _f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def _same(v):
    return v


def _pairwise_sum(xs, rnd):
    """numpy's pairwise summation (blocks of 128, eight running sums), each addition rounded by
    rnd: float32 data sums to the bits MindSpore's numpy-based metrics get."""
    n = len(xs)
    if n < 8:
        acc = rnd(-0.0)
        for v in xs:
            acc = rnd(acc + v)
        return acc
    if n <= 128:
        r = list(xs[:8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] = rnd(r[j] + xs[i + j])
            i += 8
        acc = rnd(rnd(rnd(r[0] + r[1]) + rnd(r[2] + r[3])) + rnd(rnd(r[4] + r[5]) + rnd(r[6] + r[7])))
        for v in xs[i:]:
            acc = rnd(acc + v)
        return acc
    half = n // 2
    half -= half % 8
    return rnd(_pairwise_sum(xs[:half], rnd) + _pairwise_sum(xs[half:], rnd))


def _argmax(row):
    best = 0
    for i, v in enumerate(row):
        if v > row[best]:
            best = i
    return best


def _is_onehot(y):
    return all(sum(1 for v in row if v == 1) == 1 and all(v in (0, 1) for v in row) for row in y)


def rearrange_inputs(func):
    """Decorates a Metric's update so it receives its inputs reordered by set_indexes."""
    @functools.wraps(func)
    def wrapper(self, *inputs):
        indexes = self.indexes
        if indexes:
            inputs = [inputs[i] for i in indexes]
        return func(self, *inputs)
    return wrapper


class Metric(object):
    """The base of metrics: clear() resets, update(*inputs) accumulates, eval() computes.
    Calling the metric runs clear, update and eval once."""

    def __init__(self):
        self._indexes = None

    @property
    def indexes(self):
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes):
        """Which of update's inputs (by position) the metric uses, in order; returns self."""
        if not isinstance(indexes, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                    for i in indexes):
            raise ValueError("For 'set_indexes', the argument 'indexes' must be a list of int, "
                             "but got %r." % (indexes,))
        self._indexes = indexes
        return self

    def _convert_data(self, data):
        return _data(data, type(self).__name__)

    def __call__(self, *inputs):
        self.clear()
        self.update(*inputs)
        return self.eval()

    def clear(self):
        raise NotImplementedError("Metric.clear must be overridden")

    def update(self, *inputs):
        raise NotImplementedError("Metric.update must be overridden")

    def eval(self):
        raise NotImplementedError("Metric.eval must be overridden")


def _two(who, inputs):
    if len(inputs) != 2:
        raise ValueError("For '%s.update', it needs 2 inputs (predicted value, true value), but "
                         "got %d." % (who, len(inputs)))
    return _data(inputs[0], who), _data(inputs[1], who)


def _empty(who):
    return RuntimeError("The '%s' can not be calculated, because the number of samples is 0, "
                        "please check whether your inputs(predicted value, true value) are empty, "
                        "or has called update method before calling eval method." % who)


class _Classification(Metric):
    """Shared by Accuracy and the precision family: y_pred (N, C) scores; y (N,) class indices
    or (N, C) one-hot ('classification'), or (N, C) 0/1 labels ('multilabel')."""

    def __init__(self, eval_type="classification"):
        super().__init__()
        if eval_type not in ("classification", "multilabel"):
            raise ValueError("For '%s', the argument 'eval_type' must be 'classification' or "
                             "'multilabel', but got %r." % (type(self).__name__, eval_type))
        self._type = eval_type
        self.clear()

    def _pairs(self, inputs):
        """(predicted rows, true rows) as 0/1 rows of class_num entries."""
        who = type(self).__name__
        y_pred, y = _two(who, inputs)
        ps = _shape(y_pred)
        if len(ps) != 2:
            raise ValueError("For '%s', the 'y_pred' must be 2-D (N, C), but got shape %s."
                             % (who, ps))
        n, c = ps
        if self._class_num == 0:
            self._class_num = c
        elif c != self._class_num:
            raise ValueError("For '%s.update', class number not match, last input predicted data "
                             "contain %d classes, but current predicted data contain %d classes, "
                             "please check your predicted value(inputs[0])."
                             % (who, self._class_num, c))
        if self._type == "multilabel":
            if _shape(y) != ps:
                raise ValueError("For '%s', in the 'multilabel' mode y_pred and y must have the "
                                 "same shape, got %s and %s." % (who, ps, _shape(y)))
            pred = [[1 if round(v) == 1 else 0 for v in row] for row in y_pred]
            true = [[1 if v == 1 else 0 for v in row] for row in y]
            return pred, true
        if len(_shape(y)) == 2 and _is_onehot(y):
            y = [_argmax(row) for row in y]
        y = [int(v) for v in _flat(y)]
        if len(y) != n:
            raise ValueError("For '%s', y_pred has %d samples but y has %d." % (who, n, len(y)))
        pred = [_argmax(row) for row in y_pred]
        onehot = lambda k: [1 if i == k else 0 for i in range(c)]  # noqa: E731
        return [onehot(k) for k in pred], [onehot(k) for k in y]


class Accuracy(_Classification):
    """Accuracy(eval_type='classification'): the fraction of samples whose arg-max prediction
    equals the label (multilabel: whose rounded predictions equal every label)."""

    def clear(self):
        self._correct_num = 0
        self._total_num = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        pred, true = self._pairs(inputs)
        self._correct_num += sum(1 for p, t in zip(pred, true) if p == t)
        self._total_num += len(pred)

    def eval(self):
        if self._total_num == 0:
            raise _empty("Accuracy")
        return self._correct_num / self._total_num


class Loss(Metric):
    """Loss(): the mean of the losses given to update (each a number or a 0-d / one-element
    Tensor)."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._sum_loss = 0.0
        self._total_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 1:
            raise ValueError("For 'Loss.update', it needs 1 input (loss), but got %d." % len(inputs))
        loss = _data(inputs[0], "Loss")
        shape = _shape(loss)
        if len(shape) > 1:
            raise ValueError("For 'Loss.update', the dimension of your input (loss) must be 0 or "
                             "1, but got %d." % len(shape))
        values = _flat(loss)
        loss = sum(values) / len(values) if isinstance(loss, list) else loss
        self._sum_loss += float(loss)
        self._total_num += 1

    def eval(self):
        if self._total_num == 0:
            raise RuntimeError("The 'Loss' can not be calculated, because the number of samples "
                               "is 0, please check whether has called update method before "
                               "calling eval method.")
        return self._sum_loss / self._total_num


class TopKCategoricalAccuracy(Metric):
    """TopKCategoricalAccuracy(k): the fraction of samples whose label is among the k highest
    scores (ties ordered by class index)."""

    def __init__(self, k):
        super().__init__()
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError("For 'TopKCategoricalAccuracy', the type of 'k' must be int, but got %s."
                            % type(k).__name__)
        if k < 1:
            raise ValueError("For 'TopKCategoricalAccuracy', the 'k' must be >= 1, but got %d." % k)
        self.k = k
        self.clear()

    def clear(self):
        self._correct_num = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        who = type(self).__name__
        y_pred, y = _two(who, inputs)
        if len(_shape(y_pred)) != 2:
            raise ValueError("For '%s', the 'y_pred' must be 2-D (N, C), got shape %s."
                             % (who, _shape(y_pred)))
        if len(_shape(y)) == 2:
            y = [_argmax(row) for row in y]
        y = [int(v) for v in _flat(y)]
        for row, label in zip(y_pred, y):
            top = sorted(range(len(row)), key=lambda i: -row[i])[:self.k]
            self._correct_num += 1 if label in top else 0
        self._samples_num += len(y)

    def eval(self):
        if self._samples_num == 0:
            raise _empty(type(self).__name__)
        return self._correct_num / self._samples_num


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """TopKCategoricalAccuracy with k = 1."""

    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """TopKCategoricalAccuracy with k = 5."""

    def __init__(self):
        super().__init__(5)


class _ErrorMetric(Metric):
    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._error_sum = 0.0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        who = type(self).__name__
        # float32 Tensors are worked in float32, as MindSpore's numpy code does
        f32 = all(isinstance(v, _C.TensorBase) and str(v.dtype) == "Float32" for v in inputs[:2])
        rnd = _f32 if f32 else _same
        y_pred, y = _two(who, inputs)
        p, t = _flat(y_pred), _flat(y)
        if len(p) != len(t):
            raise ValueError("For '%s', y_pred and y must hold as many elements, got %d and %d."
                             % (who, len(p), len(t)))
        errors = [rnd(self._error(rnd(b - a))) for a, b in zip(p, t)]
        self._error_sum += _pairwise_sum(errors, rnd)
        shape = _shape(y)
        self._samples_num += shape[0] if shape else 1

    def eval(self):
        if self._samples_num == 0:
            raise _empty(type(self).__name__)
        return self._error_sum / self._samples_num


class MAE(_ErrorMetric):
    """MAE(): the sum of |y_pred - y| over all elements divided by the number of samples
    (MindSpore's definition: per-sample sums, averaged over the batch dim)."""

    @staticmethod
    def _error(d):
        return abs(d)


class MSE(_ErrorMetric):
    """MSE(): the sum of (y_pred - y)^2 over all elements divided by the number of samples."""

    @staticmethod
    def _error(d):
        return d * d


class _Counts(_Classification):
    """True positives, predicted positives and actual positives per class."""
    eps = sys.float_info.min

    def clear(self):
        self._class_num = 0
        self._true_positives = None
        self._positives = None
        self._actual_positives = None

    @rearrange_inputs
    def update(self, *inputs):
        pred, true = self._pairs(inputs)
        c = self._class_num
        if self._true_positives is None:
            self._true_positives, self._positives, self._actual_positives = [0] * c, [0] * c, [0] * c
        for p, t in zip(pred, true):
            for i in range(c):
                self._true_positives[i] += p[i] * t[i]
                self._positives[i] += p[i]
                self._actual_positives[i] += t[i]

    def _result(self, values, average):
        if not isinstance(average, bool):
            raise TypeError("For '%s.eval', the type of 'average' must be bool, but got %s."
                            % (type(self).__name__, type(average).__name__))
        return sum(values) / len(values) if average else values

    def _check(self):
        if self._true_positives is None:
            raise RuntimeError("The '%s' can not be calculated, because the number of samples is "
                               "0, please check whether has called update method before calling "
                               "eval method." % type(self).__name__)


class Precision(_Counts):
    """Precision(eval_type='classification'): eval(average=False) -> per class tp / predicted
    positives (0 where a class was never predicted), or their mean."""

    def eval(self, average=False):
        self._check()
        return self._result([tp / (p + self.eps) for tp, p in
                             zip(self._true_positives, self._positives)], average)


class Recall(_Counts):
    """Recall(eval_type='classification'): eval(average=False) -> per class tp / actual
    positives, or their mean."""

    def eval(self, average=False):
        self._check()
        return self._result([tp / (a + self.eps) for tp, a in
                             zip(self._true_positives, self._actual_positives)], average)


class Fbeta(_Counts):
    """Fbeta(beta): eval(average=False) -> per class (1 + beta^2) tp / (beta^2 actual positives
    + predicted positives), or their mean. Classification only, as MindSpore's."""

    def __init__(self, beta):
        if isinstance(beta, bool) or not isinstance(beta, (int, float)):
            raise TypeError("For 'Fbeta', the type of 'beta' must be float, but got %s."
                            % type(beta).__name__)
        if beta <= 0:
            raise ValueError("For 'Fbeta', the 'beta' must be > 0, but got %r." % (beta,))
        self.beta = beta
        super().__init__("classification")

    def eval(self, average=False):
        self._check()
        b2 = self.beta ** 2
        return self._result([(1.0 + b2) * tp / (b2 * a + p + self.eps) for tp, p, a in
                             zip(self._true_positives, self._positives, self._actual_positives)],
                            average)


class F1(Fbeta):
    """F1(): Fbeta with beta = 1."""

    def __init__(self):
        super().__init__(1.0)


def _factory():
    """MindSpore's table of metric names (mindspore.train.metrics' __factory__); built on first
    use, as nn.metrics2 (ConfusionMatrix, ROC, ...) imports this module."""
    global _METRICS
    if _METRICS is None:
        from pijit.nn import metrics2 as m2
        _METRICS = {
            "accuracy": Accuracy, "acc": Accuracy, "precision": Precision, "recall": Recall,
            "F1": F1, "dice": m2.Dice, "roc": m2.ROC, "auc": auc, "bleu_score": m2.BleuScore,
            "cosine_similarity": m2.CosineSimilarity,
            "occlusion_sensitivity": m2.OcclusionSensitivity, "topk": TopKCategoricalAccuracy,
            "hausdorff_distance": m2.HausdorffDistance, "top_1_accuracy": Top1CategoricalAccuracy,
            "top_5_accuracy": Top5CategoricalAccuracy, "mae": MAE, "mse": MSE, "loss": Loss,
            "mean_surface_distance": m2.MeanSurfaceDistance,
            "root_mean_square_distance": m2.RootMeanSquareDistance, "perplexity": m2.Perplexity,
            "confusion_matrix": m2.ConfusionMatrix, "confusion_matrix_metric": m2.ConfusionMatrixMetric,
        }
    return _METRICS


_METRICS = None


def names():
    """The names get_metric_fn knows, sorted (MindSpore's list)."""
    return sorted(_factory())


def get_metric_fn(name, *args, **kwargs):
    """A new metric object by name ('accuracy', 'acc', 'F1', 'topk', 'mae', ...; names()),
    built with args/kwargs ('auc' is the function, called with them)."""
    table = _factory()
    if not isinstance(name, str) or name not in table:
        raise KeyError("For 'get_metric_fn', unsupported metric %s, please refer to official website "
                       "for more details about supported metrics." % (name,))
    return table[name](*args, **kwargs)


def auc(x, y, reorder=False):
    """The area under the curve through the points (x, y) by the trapezoidal rule; x must be
    monotonic unless reorder sorts the points by x."""
    xs, ys = _flat(_data(x, "auc")), _flat(_data(y, "auc"))
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("For 'auc', x and y must hold the same number (>= 2) of points, got %d "
                         "and %d." % (len(xs), len(ys)))
    if reorder:
        pts = sorted(zip(xs, ys))
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    steps = [b - a for a, b in zip(xs, xs[1:])]
    sign = 1.0
    if any(s < 0 for s in steps):
        if all(s <= 0 for s in steps):
            sign = -1.0
        else:
            raise ValueError("For 'auc', the x array is neither increasing nor decreasing.")
    area = sum((b - a) * (yb + ya) / 2.0 for a, b, ya, yb in zip(xs, xs[1:], ys, ys[1:]))
    return sign * area if not math.isnan(area) else area
