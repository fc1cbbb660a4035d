"""Loss cells: SoftmaxCrossEntropyWithLogits, CrossEntropyLoss, MSELoss, L1Loss,
BCEWithLogitsLoss, SmoothL1Loss, NLLLoss."""
from pijit._validate import check_tensor
from pijit.nn.cell import Cell
from pijit.ops import functional as F
from pijit.ops import nn_functional as NF


def _check(who, logits, labels):
    check_tensor(who, "logits", logits)
    check_tensor(who, "labels", labels)


class LossBase(Cell):
    """The base of loss cells. Subclasses written for MindSpore compute an elementwise loss and
    finish with self.get_loss(x, weights): weighted, reduced by `reduction` over every axis, in
    `dtype` (float32) and cast back; self.average / self.reduce say which reduction."""

    def __init__(self, reduction="mean", dtype=None):
        super().__init__()
        if reduction not in ("none", "mean", "sum"):
            raise ValueError("For '%s', the 'reduction' must be in ['mean', 'sum', 'none'], but got %s."
                             % (type(self).__name__, reduction))
        from pijit import dtype as _dt
        self.reduction = reduction
        self.average = reduction != "sum"
        self.reduce = reduction != "none"
        self.dtype = _dt.float32 if dtype is None else dtype

    def get_axis(self, x):
        """Every axis of x, as a tuple (0, 1, ..., ndim - 1)."""
        return tuple(range(len(x.shape)))

    def get_loss(self, x, weights=1.0):
        """weights * x in self.dtype, reduced as `reduction` says, in x's dtype."""
        input_dtype = x.dtype
        x = F.cast(x, self.dtype)
        if isinstance(weights, (int, float)):
            x = x * float(weights)
        else:
            x = F.mul(F.cast(weights, self.dtype), x)
        if self.reduce and self.average:
            x = F.mean(x, self.get_axis(x))
        elif self.reduce:
            x = F.sum(x, self.get_axis(x))
        return F.cast(x, input_dtype)

    def construct(self, logits, labels):
        raise NotImplementedError("%s.construct: a loss cell defines construct(logits, labels)"
                                  % type(self).__name__)

    def extend_repr(self):
        return "reduction=%s" % self.reduction


class SoftmaxCrossEntropyWithLogits(LossBase):
    """sparse=True: labels are class indices; else one-hot/probabilities. reduction='none'."""

    def __init__(self, sparse=False, reduction="none"):
        super().__init__(reduction)
        self.sparse = bool(sparse)

    def construct(self, logits, labels):
        _check("SoftmaxCrossEntropyWithLogits", logits, labels)
        if self.sparse:
            labels = labels.astype("int64")
        else:
            labels = labels.astype(logits.dtype)
        return NF.cross_entropy(logits, labels, reduction=self.reduction)


class CrossEntropyLoss(LossBase):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError("CrossEntropyLoss: label_smoothing must be in [0, 1], got %r"
                             % (label_smoothing,))
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def construct(self, logits, labels):
        _check("CrossEntropyLoss", logits, labels)
        return NF.cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction,
                                self.label_smoothing)


class NLLLoss(LossBase):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def construct(self, logits, labels):
        _check("NLLLoss", logits, labels)
        return NF.nll_loss(logits, labels, self.weight, self.ignore_index, self.reduction)


class MSELoss(LossBase):
    def construct(self, logits, labels):
        _check("MSELoss", logits, labels)
        return NF.mse_loss(logits, labels, self.reduction)


class L1Loss(LossBase):
    def construct(self, logits, labels):
        _check("L1Loss", logits, labels)
        return NF.l1_loss(logits, labels, self.reduction)


class SmoothL1Loss(LossBase):
    def __init__(self, beta=1.0, reduction="none"):
        super().__init__(reduction)
        self.beta = beta

    def construct(self, logits, labels):
        _check("SmoothL1Loss", logits, labels)
        return NF.smooth_l1_loss(logits, labels, self.beta, self.reduction)


class BCEWithLogitsLoss(LossBase):
    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def construct(self, logits, labels):
        _check("BCEWithLogitsLoss", logits, labels)
        return NF.binary_cross_entropy_with_logits(logits, labels, self.weight, self.pos_weight,
                                                   self.reduction)


class BCELoss(LossBase):
    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, logits, labels):
        _check("BCELoss", logits, labels)
        return NF.binary_cross_entropy(logits, labels, self.weight, self.reduction)
