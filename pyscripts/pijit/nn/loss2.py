"""Loss cells beyond nn.loss's first set, with MindSpore's constructor arguments, defaults and
checks: CTCLoss, CosineEmbeddingLoss, DiceLoss, MultiClassDiceLoss, FocalLoss, GaussianNLLLoss,
HingeEmbeddingLoss, HuberLoss, KLDivLoss, MarginRankingLoss, MultiLabelSoftMarginLoss,
MultiMarginLoss, MultilabelMarginLoss, PoissonNLLLoss, RMSELoss, SoftMarginLoss,
TripletMarginLoss and SampledSoftmaxLoss.

Each construct is composed of ops (ops.ctc_loss, ops.kl_div, ...), so a jitted training step
captures the loss into its graph and differentiates it. The cells that reduce with MindSpore's
LossBase.get_loss (CosineEmbeddingLoss, FocalLoss, PoissonNLLLoss) reduce in float32 and cast
back, as it does.
"""
import math as _math

from pijit import _C
from pijit import creation as _creation
from pijit import dtype as _dt
from pijit.nn.cell import Cell
from pijit.nn.loss import LossBase, MSELoss
from pijit.ops import functional as F
from pijit.ops import functional2 as F2
from pijit.ops import losses2 as L2

_Tensor = _C.TensorBase

__all__ = ["CTCLoss", "CosineEmbeddingLoss", "DiceLoss", "MultiClassDiceLoss", "FocalLoss",
           "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "MarginRankingLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultilabelMarginLoss", "PoissonNLLLoss",
           "RMSELoss", "SoftMarginLoss", "TripletMarginLoss", "SampledSoftmaxLoss"]


def _is_tensor(who, name, x):
    if not isinstance(x, _Tensor):
        raise TypeError("For '%s', the '%s' must be a Tensor, but got %s" % (who, name, type(x).__name__))
    return x


def _reduction(who, r):
    if r not in ("mean", "sum", "none"):
        raise ValueError("For '%s', the 'reduction' must be in ['mean', 'sum', 'none'], but got %s." % (who, r))
    return r


class _Loss(LossBase):
    def __init__(self, reduction="mean"):
        _reduction(type(self).__name__, reduction)
        super().__init__(reduction)


class CTCLoss(_Loss):
    """nn.CTCLoss(blank=0, reduction='mean', zero_infinity=False)(log_probs (T, N, C) or (T, C),
    targets (N, S) (or (S,) / (1, S) unbatched), input_lengths, target_lengths): ops.ctc_loss's
    loss."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def construct(self, log_probs, targets, input_lengths, target_lengths):
        who = "CTCLoss"
        _is_tensor(who, "log_probs", log_probs)
        _is_tensor(who, "targets", targets)
        if log_probs.ndim == 2:
            if targets.ndim > 2:
                raise ValueError("For CTCLoss, when the shape of log_probs is (T, C), the dimension of "
                                 "targets should be 1 or 2, but got %d." % targets.ndim)
            if targets.ndim == 2 and targets.shape[0] != 1:
                raise ValueError("For CTCLoss, the first dimension of 2-D targets should be 1, but got %d."
                                 % targets.shape[0])
            if targets.ndim == 1:
                targets = F.expand_dims(targets, 0)
            if isinstance(input_lengths, int) and not isinstance(input_lengths, bool):
                input_lengths = (input_lengths,)
            if isinstance(target_lengths, int) and not isinstance(target_lengths, bool):
                target_lengths = (target_lengths,)
            loss, _ = L2.ctc_loss(F.expand_dims(log_probs, 1), targets, input_lengths, target_lengths,
                                  self.blank, self.reduction, self.zero_infinity)
            return F.reshape(loss, ()) if self.reduction == "none" else loss
        loss, _ = L2.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                              self.reduction, self.zero_infinity)
        return loss


class CosineEmbeddingLoss(_Loss):
    """nn.CosineEmbeddingLoss(margin=0.0, reduction='mean')(logits_x1, logits_x2, labels): 1 - cos
    where labels is 1, max(0, cos - margin) where -1; cos over dim 1 (no epsilon, as MindSpore's
    cell). margin: a float in [-1, 1]."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        who = "CosineEmbeddingLoss"
        if not isinstance(margin, float):
            raise TypeError("For '%s', the 'margin' must be float, but got %s" % (who, type(margin).__name__))
        if not -1.0 <= margin <= 1.0:
            raise ValueError("For '%s', the 'margin' must be in range [-1.0, 1.0], but got %r" % (who, margin))
        self.margin = margin

    def construct(self, logits_x1, logits_x2, labels):
        who = "CosineEmbeddingLoss"
        a = _is_tensor(who, "logits_x1", logits_x1)
        b = _is_tensor(who, "logits_x2", logits_x2)
        _is_tensor(who, "labels", labels)
        if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
            raise TypeError("For '%s', 'logits_x1' and 'logits_x2' must have one dtype and shape, but got "
                            "%s%r and %s%r" % (who, a.dtype, tuple(a.shape), b.dtype, tuple(b.shape)))
        prod = F.sum(a * b, (1,))
        denom = F.sqrt(F.sum(F.square(a), (1,))) * F.sqrt(F.sum(F.square(b), (1,)))
        cos = prod / denom
        zeros = F.zeros_like(cos)
        pos = F.where(F.eq(labels, 1), 1.0 - cos, zeros)
        neg = F.where(F.eq(labels, -1), F.maximum(cos - self.margin, 0.0), zeros)
        return self.get_loss(pos + neg)


class DiceLoss(_Loss):
    """nn.DiceLoss(smooth=1e-5)(logits, labels): 1 - 2 sum(x y) / (sum(x^2) + sum(y^2) + smooth)
    over every element; logits and labels of one shape."""

    def __init__(self, smooth=1e-5):
        super().__init__()
        if isinstance(smooth, bool) or not isinstance(smooth, float):
            raise TypeError("For 'DiceLoss', the 'smooth' must be float, but got %s" % type(smooth).__name__)
        if smooth <= 0:
            raise ValueError("For 'DiceLoss', the 'smooth' must be a positive float, but got %r" % smooth)
        self.smooth = smooth

    def construct(self, logits, label):
        who = type(self).__name__ if type(self) is DiceLoss else "DiceLoss"
        _is_tensor(who, "logits", logits)
        _is_tensor(who, "labels", label)
        if tuple(logits.shape) != tuple(label.shape):
            raise ValueError("For '%s', the 'logits_shape' must be equal to 'label_shape', but got %r and %r"
                             % (who, tuple(logits.shape), tuple(label.shape)))
        if logits.dtype == _dt.uint8:
            raise TypeError("For '%s', the dtype of 'logits' can not be uint8." % who)
        if label.dtype == _dt.uint8:
            raise TypeError("For '%s', the dtype of 'labels' can not be uint8." % who)
        x, y = F.reshape(logits, (-1,)), F.reshape(label, (-1,))
        inter = F.sum(x * y)
        union = F.sum(x * x) + F.sum(y * y)
        return 1 - 2 * inter / (union + self.smooth)


_DICE_ACTIVATIONS = ["softmax", "logsoftmax", "relu", "relu6", "tanh", "sigmoid"]


class MultiClassDiceLoss(_Loss):
    """nn.MultiClassDiceLoss(weights=None, ignore_indiex=None, activation='softmax')(logits,
    label) (both (N, C, ...)): the mean over the classes (ignore_indiex skipped, but still
    counted in the divisor, as MindSpore) of DiceLoss(activation(logits)[:, i], label[:, i]),
    each times weights[i] when weights is given."""

    def __init__(self, weights=None, ignore_indiex=None, activation="softmax"):
        super().__init__()
        who = "MultiClassDiceLoss"
        if weights is not None:
            if not isinstance(weights, _Tensor):
                raise TypeError("For '%s', the 'weights' must be a Tensor, but got %s" % (who, type(weights).__name__))
            if weights.ndim != 2:
                raise ValueError("For '%s', the dimension of 'weights' must be 2, but got %d." % (who, weights.ndim))
        if ignore_indiex is not None and (isinstance(ignore_indiex, bool) or not isinstance(ignore_indiex, int)):
            raise TypeError("For '%s', the 'ignore_indiex' must be int, but got %s" % (who, type(ignore_indiex).__name__))
        if isinstance(activation, str):
            if activation not in _DICE_ACTIVATIONS:
                raise ValueError("For '%s', the 'activation' must be in %s, but got %s."
                                 % (who, _DICE_ACTIVATIONS, activation))
            from pijit.nn.layers2 import get_activation
            activation = get_activation(activation)
        if activation is not None and not isinstance(activation, Cell):
            raise TypeError("For '%s', the 'activation' must be str or Cell, but got %s." % (who, type(activation)))
        self.weights, self.ignore_indiex, self.activation = weights, ignore_indiex, activation
        self.binarydiceloss = DiceLoss(smooth=1e-5)

    def construct(self, logits, label):
        who = "MultiClassDiceLoss"
        _is_tensor(who, "logits", logits)
        _is_tensor(who, "labels", label)
        if tuple(logits.shape) != tuple(label.shape):
            raise ValueError("For '%s', the 'logits_shape' must be equal to 'label_shape', but got %r and %r"
                             % (who, tuple(logits.shape), tuple(label.shape)))
        if logits.ndim < 2:
            raise ValueError("For '%s', the 'logits' dimension must be greater than 1, but got %d." % (who, logits.ndim))
        if label.ndim < 2:
            raise ValueError("For '%s', the 'labels' dimension must be greater than 1, but got %d." % (who, label.ndim))
        if self.activation is not None:
            logits = self.activation(logits)
        total = 0
        C = label.shape[1]
        for i in range(C):
            if i != self.ignore_indiex:
                d = self.binarydiceloss(logits[:, i], label[:, i])
                if self.weights is not None:
                    if self.weights.shape[0] != C:
                        raise ValueError("For '%s', the weight_shape[0] must be equal to label_shape[1], but got "
                                         "weight_shape[0]: %d and label_shape[1]: %d."
                                         % (who, self.weights.shape[0], C))
                    d = d * self.weights[i]
                total = total + d
        return total / C


class FocalLoss(_Loss):
    """nn.FocalLoss(weight=None, gamma=2.0, reduction='mean')(logits (N, C, ...), labels (N, 1,
    ...) class indices or (N, C, ...) one-hot/probabilities): -(1 - p)^gamma log p (times weight
    per class), averaged over dim 1 (index labels) or the last dim, then reduced."""

    def __init__(self, weight=None, gamma=2.0, reduction="mean"):
        super().__init__(reduction)
        who = "FocalLoss"
        if isinstance(gamma, bool) or not isinstance(gamma, float):
            raise TypeError("For '%s', the 'gamma' must be float, but got %s" % (who, type(gamma).__name__))
        if weight is not None and not isinstance(weight, _Tensor):
            raise TypeError("For '%s', the type of 'weight' must be a Tensor, but got %s." % (who, type(weight).__name__))
        if isinstance(weight, _Tensor) and weight.ndim != 1:
            raise ValueError("For '%s', the dimension of 'weight' must be 1, but got %d." % (who, weight.ndim))
        self.gamma, self.weight = gamma, weight

    def construct(self, logits, labels):
        who = "FocalLoss"
        _is_tensor(who, "logits", logits)
        _is_tensor(who, "labels", labels)
        for name, n in (("logits", logits.ndim), ("labels", labels.ndim)):
            if n < 2 or n > 4:
                raise ValueError("For '%s', the dimensions of '%s' must be in [2, 4], but got dimension of "
                                 "'%s' %d." % (who, name, name, n))
        if logits.ndim != labels.ndim:
            raise ValueError("For '%s', the dimensions of 'logits' and 'labels' must be equal, but got "
                             "dimension of 'logits' %d and dimension of 'labels' %d." % (who, logits.ndim, labels.ndim))
        C = logits.shape[1]
        if C == 1:
            raise ValueError("For '%s', the 'logits'.shape[1] cannot be one, but got %d." % (who, C))
        if labels.shape[1] not in (1, C):
            raise ValueError("For '%s', the 'labels'.shape[1] must be one or equal to 'logits'.shape[1]: %d, but "
                             "got %d." % (who, C, labels.shape[1]))
        if labels.dtype not in (_dt.int32, _dt.int64, _dt.float16, _dt.float32):
            raise TypeError("For '%s', the 'labels' type must be in [Int32, Int64, Float16, Float32], but got %s."
                            % (who, labels.dtype))
        index_labels = labels.shape[1] == 1
        N = logits.shape[0]
        x = F.reshape(logits, (N, C, -1))
        y = F.reshape(labels, (N, labels.shape[1], -1))
        logp = F.log_softmax(x, 1)
        if index_labels:
            hot = F.one_hot(F.cast(F.reshape(y, (N, -1)), _dt.int64), C, 1.0, 0.0, 1)      # (N, C, S)
            hot = hot if hot.dtype == logp.dtype else F.cast(hot, logp.dtype)
            logp = F.sum(logp * hot, 1)                                                     # (N, S)
        p = F.exp(logp)
        if self.weight is not None:
            w = F.reshape(F.cast(self.weight, logp.dtype), (1, C, 1))
            logp = logp * (F.sum(w * hot, 1) if index_labels else w)
        focal = F.pow(1.0 - p, self.gamma)
        if index_labels:
            loss = F.mean(F.neg(focal) * logp, 1)
        else:
            loss = F.mean(F.neg(focal) * F.cast(y, logp.dtype) * logp, -1)
        return self.get_loss(loss)


class GaussianNLLLoss(_Loss):
    """nn.GaussianNLLLoss(*, full=False, eps=1e-6, reduction='mean')(logits, labels, var):
    ops.gaussian_nll_loss."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction)
        who = "GaussianNLLLoss"
        if isinstance(eps, bool) or not isinstance(eps, (int, float)):
            raise TypeError("For '%s', the 'eps' must be float, but got %s" % (who, type(eps).__name__))
        if not eps > 0:
            raise ValueError("For '%s', the 'eps' must be in range (0, inf), but got %r" % (who, eps))
        if not isinstance(full, bool):
            raise TypeError("For '%s', the 'full' must be bool, but got %s" % (who, type(full).__name__))
        self.full, self.eps = full, eps

    def construct(self, logits, labels, var):
        who = "GaussianNLLLoss"
        _is_tensor(who, "logits", logits)
        _is_tensor(who, "labels", labels)
        _is_tensor(who, "var", var)
        return F2.gaussian_nll_loss(logits, labels, var, self.full, self.eps, self.reduction)


class HingeEmbeddingLoss(_Loss):
    """nn.HingeEmbeddingLoss(margin=1.0, reduction='mean')(logits, labels):
    ops.hinge_embedding_loss."""

    def __init__(self, margin=1.0, reduction="mean"):
        super().__init__(reduction)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)):
            raise TypeError("For 'HingeEmbeddingLoss', the 'margin' must be float or int, but got %s"
                            % type(margin).__name__)
        self.margin = margin

    def construct(self, logits, labels):
        return F2.hinge_embedding_loss(logits, labels, self.margin, self.reduction)


class HuberLoss(_Loss):
    """nn.HuberLoss(reduction='mean', delta=1.0)(logits, labels): ops.huber_loss."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        self.delta = delta

    def construct(self, logits, labels):
        return F2.huber_loss(logits, labels, self.reduction, self.delta)


class KLDivLoss(LossBase):
    """nn.KLDivLoss(reduction='mean')(logits, labels): ops.kl_div ('batchmean' allowed)."""

    def __init__(self, reduction="mean"):
        if reduction not in ("none", "mean", "sum", "batchmean"):
            raise ValueError("For 'KLDivLoss', the 'reduction' must be 'none', 'mean', 'sum' or "
                             "'batchmean', but got %s." % (reduction,))
        super().__init__()
        self.reduction = reduction

    def construct(self, logits, labels):
        _is_tensor("KLDivLoss", "logits", logits)
        _is_tensor("KLDivLoss", "labels", labels)
        return F2.kl_div(logits, labels, self.reduction)


class MarginRankingLoss(_Loss):
    """nn.MarginRankingLoss(margin=0.0, reduction='mean')(input1, input2, target):
    ops.margin_ranking_loss."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = margin

    def construct(self, input1, input2, target):
        return F2.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """nn.MultiLabelSoftMarginLoss(weight=None, reduction='mean')(x, target):
    ops.multilabel_soft_margin_loss."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, x, target):
        return F2.multilabel_soft_margin_loss(x, target, self.weight, self.reduction)


class MultiMarginLoss(_Loss):
    """nn.MultiMarginLoss(p=1, margin=1.0, reduction='mean', weight=None)(x, target, weight=None):
    ops.MultiMarginLoss; the constructor's weight wins over the call's."""

    def __init__(self, p=1, margin=1.0, reduction="mean", weight=None):
        super().__init__(reduction)
        self.multi_margin_loss = L2.MultiMarginLoss(p=p, margin=margin, reduction=reduction)
        self.weight = weight

    def construct(self, x, target, weight=None):
        who = "MultiMarginLoss"
        _is_tensor(who, "x", x)
        _is_tensor(who, "target", target)
        if self.weight is not None:
            weight = self.weight
        if weight is not None:
            _is_tensor(who, "weight", weight)
        return self.multi_margin_loss(x, target, weight)


class MultilabelMarginLoss(_Loss):
    """nn.MultilabelMarginLoss(reduction='mean')(x, target): ops.MultilabelMarginLoss's loss."""

    def __init__(self, reduction="mean"):
        super().__init__(reduction)
        self.multilabel_margin_loss = L2.MultilabelMarginLoss(reduction=reduction)

    def construct(self, x, target):
        loss, _ = self.multilabel_margin_loss(x, target)
        return loss


class PoissonNLLLoss(_Loss):
    """nn.PoissonNLLLoss(log_input=True, full=False, eps=1e-8, reduction='mean')(input, target):
    exp(input) - target * input (log_input) or input - target * log(input + eps); full adds the
    Stirling term target log target - target + 0.5 log(2 pi target) where target > 1."""

    def __init__(self, log_input=True, full=False, eps=1e-8, reduction="mean"):
        super().__init__(reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def construct(self, input, target):
        who = "PoissonNLLLoss"
        _is_tensor(who, "input", input)
        _is_tensor(who, "target", target)
        target = F.cast(target, input.dtype)
        if self.log_input:
            loss = F.exp(input) - target * input
        else:
            loss = input - target * F.log(input + self.eps)
        if self.full:
            t = F.maximum(target, self.eps)
            stirling = (t + 0.5) * F.log(t) - t + 0.5 * _math.log(2 * _math.pi)
            loss = loss + F.where(F.gt(t, 1), stirling, F.zeros_like(stirling))
        return self.get_loss(loss)


class RMSELoss(LossBase):
    """nn.RMSELoss()(logits, label): sqrt(mean((logits - label)^2))."""

    def __init__(self):
        super().__init__()
        self.MSELoss = MSELoss()

    def construct(self, logits, label):
        for x in (logits, label):
            if isinstance(x, _Tensor) and x.dtype in (_dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64):
                raise TypeError("For 'RMSELoss', the parameters data type must not be in [UInt8, UInt16, "
                                "UInt32, UInt64], but got %s." % x.dtype)
        return F.sqrt(self.MSELoss(logits, label))


class SoftMarginLoss(_Loss):
    """nn.SoftMarginLoss(reduction='mean')(logits, labels): ops.soft_margin_loss."""

    def construct(self, logits, labels):
        return L2.soft_margin_loss(logits, labels, self.reduction)


class TripletMarginLoss(_Loss):
    """nn.TripletMarginLoss(p=2, swap=False, eps=1e-6, reduction='mean', margin=1.0)(x, positive,
    negative, margin=1.0): ops.TripletMarginLoss; a constructor margin other than 1.0 wins over
    the call's."""

    def __init__(self, p=2, swap=False, eps=1e-6, reduction="mean", margin=1.0):
        super().__init__(reduction)
        self.p, self.swap, self.eps, self.margin = p, swap, eps, margin

    def construct(self, x, positive, negative, margin=1.0):
        if self.margin != 1.0:
            margin = self.margin
        if not isinstance(margin, _Tensor):
            margin = _scalar_tensor(margin)
        return L2.TripletMarginLoss(self.p, self.swap, self.eps, self.reduction)(x, positive, negative, margin)


def _scalar_tensor(v):
    return _creation.tensor(float(v), _dt.float32)


class SampledSoftmaxLoss(_Loss):
    """nn.SampledSoftmaxLoss(num_sampled, num_classes, num_true=1, sampled_values=None,
    remove_accidental_hits=True, seed=0, reduction='none')(weights [C, dim], biases [C], labels
    [N, num_true] int, logits [N, dim]) -> [N]: softmax cross entropy over the true classes (each
    labelled 1 / num_true) and num_sampled classes drawn by UniformCandidateSampler (unique,
    rejecting the true classes when remove_accidental_hits), each logit minus the log of its
    expected count. As MindSpore's cell, the loss is returned per example whatever reduction."""

    def __init__(self, num_sampled, num_classes, num_true=1, sampled_values=None, remove_accidental_hits=True,
                 seed=0, reduction="none"):
        super().__init__(reduction)
        who = "SampledSoftmaxLoss"
        if num_true < 1:
            raise ValueError("For '%s', the 'num_true' must be greater than or equal to 1, but got %d." % (who, num_true))
        if seed < 0:
            raise ValueError("For '%s', the 'seed' must be greater than or equal to 0, but got %d." % (who, seed))
        if num_sampled > num_classes:
            raise ValueError("For '%s', the 'num_sampled' must be smaller than or equal to 'num_classes', but got "
                             "'num_sampled': %d and 'num_classes': %d." % (who, num_sampled, num_classes))
        if num_true > num_classes:
            raise ValueError("For '%s', the 'num_true' must be smaller than or equal to 'num_classes', but got "
                             "'num_true': %d amd 'num_classes': %d." % (who, num_true, num_classes))
        if sampled_values is not None:
            if not isinstance(sampled_values, (list, tuple)):
                raise TypeError("For '%s', the type of 'sampled_values' must be a list or tuple, but got %s."
                                % (who, type(sampled_values).__name__))
            if len(sampled_values) != 3:
                raise ValueError("For '%s', the length of 'sampled_values' must be equal to 3,but got %d."
                                 % (who, len(sampled_values)))
        self.num_sampled, self.num_classes, self.num_true = num_sampled, num_classes, num_true
        self.sampled_values, self.remove_accidental_hits, self.seed = sampled_values, remove_accidental_hits, seed
        self.sampler = L2.UniformCandidateSampler(num_true, num_sampled, True, num_classes, seed,
                                                  remove_accidental_hits)

    def construct(self, weights, biases, labels, logits):
        who = "SampledSoftmaxLoss"
        for name, v in (("weights", weights), ("biases", biases), ("labels", labels), ("logits", logits)):
            _is_tensor(who, name, v)
        if labels.dtype not in (_dt.int32, _dt.int64):
            raise TypeError("For '%s', the 'labels' type must be in [Int32, Int64], but got %s." % (who, labels.dtype))
        out_logits, out_labels = self._compute_sampled_logits(weights, biases, labels, logits)
        return self._softmax_cross_entropy(out_logits, out_labels)

    def _softmax_cross_entropy(self, logits, targets):
        e = F.exp(logits - F.max(logits, 1, True)[0])
        pred = e / F.sum(e, 1, keepdim=True)
        return -1 * F.sum(targets * F.log(pred + 1e-20), 1)

    def _compute_sampled_logits(self, weights, biases, labels, logits):
        k = self.num_true
        labels = F.reshape(F.cast(labels, _dt.int32), (-1, k))
        flat = F.reshape(labels, (-1,))
        sv = self.sampled_values if self.sampled_values is not None else self.sampler(labels)
        sampled, true_expected, sampled_expected = sv
        sampled = F.cast(sampled, _dt.int32)
        ids = F.concat((flat, sampled), 0)
        all_w = F.gather(weights, ids, 0)
        n_true, n_sampled, dim = flat.shape[0], sampled.shape[0], all_w.shape[1]
        true_w, sampled_w = all_w[:n_true], all_w[n_true:]
        sampled_logits = F.matmul(logits, F.transpose(sampled_w, (1, 0)))
        all_b = F.gather(biases, ids, 0)
        true_b, sampled_b = all_b[:n_true], all_b[n_true:]
        dots = F.expand_dims(logits, 1) * F.reshape(true_w, (-1, k, dim))
        true_logits = F.reshape(F.sum(F.reshape(dots, (-1, dim)), 1), (-1, k)) + F.reshape(true_b, (-1, k))
        sampled_logits = sampled_logits + sampled_b
        true_logits = true_logits - F.log(true_expected)
        sampled_logits = sampled_logits - F.log(sampled_expected)
        out_logits = F.concat((true_logits, sampled_logits), 1)
        out_labels = F.concat((F.ones_like(true_logits) / k, F.zeros_like(sampled_logits)), 1)
        return out_logits, out_labels
