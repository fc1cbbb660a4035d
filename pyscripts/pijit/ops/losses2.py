"""Loss functions beyond ops' first set, as MindSpore's functional forms and primitives:
CTC (CTCLossV2 / ctc_loss torch-style, CTCLoss TensorFlow-style with sparse labels,
CTCGreedyDecoder), MultiMarginLoss, MultilabelMarginLoss, SoftMarginLoss,
TripletMarginLoss, and the candidate samplers SampledSoftmaxLoss draws from
(UniformCandidateSampler, LogUniformCandidateSampler, ComputeAccidentalHits).

CTC runs registry ops with C++ kernels (kernels/ctc.h): 'ctc_loss' (+ its gradient op) and
'ctc_loss_sparse'; eager calls, capture and autodiff read the same declarations. The margin losses
are composed from registry ops, so they capture into the caller's graph and differentiate.
The decoder and the samplers produce data-dependent shapes or draw random numbers on the host;
under jit they run eagerly (MindSpore documents them as dynamic-shape / random ops).
Errors follow MindSpore's classes: TypeError for a wrong type, ValueError for a wrong value.
"""
import math as _math
import random as _random

from pijit import _C
from pijit import creation as _creation
from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit.ops import functional as F
from pijit.ops.primitives import Primitive

_Tensor = _C.TensorBase

__all__ = []


def _export(obj):
    __all__.append(obj.__name__)
    return obj


def _alias(name, obj):
    globals()[name] = obj
    __all__.append(name)


# ----- argument checks ------------------------------------------------------------------------

def _tensor(who, name, x):
    if not isinstance(x, _Tensor):
        raise TypeError("For '%s', the '%s' must be a Tensor, but got %s" % (who, name, type(x).__name__))
    return x


def _type(who, name, v, types, tname):
    if isinstance(v, bool) and bool not in types:
        raise TypeError("For '%s', the '%s' must be %s, but got bool" % (who, name, tname))
    if not isinstance(v, types):
        raise TypeError("For '%s', the '%s' must be %s, but got %s" % (who, name, tname, type(v).__name__))
    return v


def _int(who, name, v):
    return _type(who, name, v, (int,), "int")


def _bool(who, name, v):
    return _type(who, name, v, (bool,), "bool")


def _float(who, name, v):
    return _type(who, name, v, (float,), "float")


def _reduction(who, r, allowed=("none", "mean", "sum")):
    _type(who, "reduction", r, (str,), "str")
    if r not in allowed:
        raise ValueError("For '%s', the 'reduction' must be in %s, but got %s" % (who, list(allowed), r))
    return r


def _reduce(x, r):
    if r == "mean":
        return F.mean(x)
    if r == "sum":
        return F.sum(x)
    return x


def _floating(who, name, x, allowed=(_dt.float16, _dt.float32, _dt.float64)):
    if x.dtype not in allowed:
        raise TypeError("For '%s', the dtype of '%s' must be in %s, but got %s"
                        % (who, name, [str(d) for d in allowed], x.dtype))
    return x


def _integral(who, name, x, allowed=(_dt.int32, _dt.int64)):
    if x.dtype not in allowed:
        raise TypeError("For '%s', the dtype of '%s' must be in %s, but got %s"
                        % (who, name, [str(d) for d in allowed], x.dtype))
    return x


def _lengths(who, name, v):
    """input_lengths / target_lengths: a Tensor of int32/int64, or a tuple/list of ints."""
    if isinstance(v, _Tensor):
        return _integral(who, name, v)
    if isinstance(v, (tuple, list)) and all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        return _creation.tensor(list(v), _dt.int64)
    raise TypeError("For '%s', the '%s' must be a Tensor or a tuple of ints, but got %r" % (who, name, v))


# ----- CTC ------------------------------------------------------------------------------------

@_export
class CTCLossV2(Primitive):
    """CTCLossV2(blank=0, reduction='none', zero_infinity=False)(log_probs [T, N, C],
    targets [N, S], input_lengths [N], target_lengths [N]) -> (neg_log_likelihood [N],
    log_alpha [N, T, 2S + 1]). log_probs float32/float64 log-probabilities; only 'none'."""

    def __init__(self, blank=0, reduction="none", zero_infinity=False):
        _int("CTCLossV2", "blank", blank)
        _type("CTCLossV2", "reduction", reduction, (str,), "str")
        reduction = reduction.lower()
        if reduction != "none":
            raise ValueError("For 'CTCLossV2', the 'reduction' must be in ['none'], but got %s" % reduction)
        _bool("CTCLossV2", "zero_infinity", zero_infinity)
        super().__init__(blank=blank, reduction=reduction, zero_infinity=zero_infinity)

    def __call__(self, log_probs, targets, input_lengths, target_lengths):
        who = "CTCLossV2"
        lp = _tensor(who, "log_probs", log_probs)
        tg = _tensor(who, "targets", targets)
        il = _lengths(who, "input_lengths", input_lengths)
        tl = _lengths(who, "target_lengths", target_lengths)
        return _op("ctc_loss", (lp, tg, il, tl), blank=self.attrs["blank"],
                   zero_infinity=self.attrs["zero_infinity"])


@_export
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """ops.ctc_loss(...) -> (loss, log_alpha): CTCLossV2's per-sample loss reduced: 'mean'
    divides each by its target length (at least 1) and averages, 'sum' adds, 'none' keeps."""
    who = "ctc_loss"
    _int(who, "blank", blank)
    _reduction(who, reduction)
    _bool(who, "zero_infinity", zero_infinity)
    tl = _lengths(who, "target_lengths", target_lengths)
    loss, log_alpha = CTCLossV2(blank, "none", zero_infinity)(log_probs, targets, input_lengths, tl)
    if reduction == "sum":
        loss = F.sum(loss)
    elif reduction == "mean":
        t = loss.dtype
        denom = F.maximum(F.cast(tl, _dt.float32), 1.0)
        loss = F.cast(F.mean(F.cast(loss, _dt.float32) / denom), t)
    return loss, log_alpha


@_export
class CTCLoss(Primitive):
    """CTCLoss(preprocess_collapse_repeated=False, ctc_merge_repeated=True,
    ignore_longer_outputs_than_inputs=False)(x [max_time, N, C] logits, labels_indices [n, 2]
    int64, labels_values [n] int32, sequence_length [N] int32) -> (loss [N], gradient): the
    TensorFlow-style loss over softmax(x) with blank C - 1, and its gradient with respect to x."""

    def __init__(self, preprocess_collapse_repeated=False, ctc_merge_repeated=True,
                 ignore_longer_outputs_than_inputs=False):
        _bool("CTCLoss", "preprocess_collapse_repeated", preprocess_collapse_repeated)
        _bool("CTCLoss", "ctc_merge_repeated", ctc_merge_repeated)
        _bool("CTCLoss", "ignore_longer_outputs_than_inputs", ignore_longer_outputs_than_inputs)
        super().__init__(preprocess_collapse_repeated=preprocess_collapse_repeated,
                         ctc_merge_repeated=ctc_merge_repeated,
                         ignore_longer_outputs_than_inputs=ignore_longer_outputs_than_inputs)

    def __call__(self, x, labels_indices, labels_values, sequence_length):
        who = "CTCLoss"
        x = _floating(who, "x", _tensor(who, "x", x))
        ix = _tensor(who, "labels_indices", labels_indices)
        v = _tensor(who, "labels_values", labels_values)
        sl = _tensor(who, "sequence_length", sequence_length)
        return _op("ctc_loss_sparse", (x, ix, v, sl), **self.attrs)


def _rows(x):
    """A host copy of a tensor's values as nested lists (data-dependent code only)."""
    return x.tolist()


@_export
class CTCGreedyDecoder(Primitive):
    """CTCGreedyDecoder(merge_repeated=True)(inputs [max_time, N, C], sequence_length [N] int32)
    -> (decoded_indices [n, 2] int64, decoded_values [n] int64, decoded_shape [2] int64,
    log_probability [N, 1]): the best class per frame, blanks (C - 1) dropped and, with
    merge_repeated, repeats of the previous frame's class merged; log_probability is minus the
    sum over the frames of each frame's largest input."""

    def __init__(self, merge_repeated=True):
        _bool("CTCGreedyDecoder", "merge_repeated", merge_repeated)
        super().__init__(merge_repeated=merge_repeated)

    def __call__(self, inputs, sequence_length):
        who = "CTCGreedyDecoder"
        x = _floating(who, "inputs", _tensor(who, "inputs", inputs), (_dt.float32, _dt.float64))
        sl = _integral(who, "sequence_length", _tensor(who, "sequence_length", sequence_length),
                       (_dt.int32,))
        if x.ndim != 3:
            raise ValueError("For '%s', the 'inputs' must be 3-D, but got %d-D" % (who, x.ndim))
        if sl.ndim != 1 or sl.shape[0] != x.shape[1]:
            raise ValueError("For '%s', the 'sequence_length' must be 1-D of the batch size %d, but "
                             "got shape %r" % (who, x.shape[1], tuple(sl.shape)))
        T, N, C = x.shape
        blank = C - 1
        lengths = _rows(sl)
        for b, n in enumerate(lengths):
            if n > T:
                raise ValueError("For '%s', sequence_length[%d] %d should be less than or equal to "
                                 "max_time %d" % (who, b, n, T))
        rows = _rows(x)                            # [T][N][C]
        merge = self.attrs["merge_repeated"]
        indices, values, logp, longest = [], [], [], 0
        for b in range(N):
            seq, prev, total = [], -1, 0.0
            for t in range(_builtin_max(lengths[b], 0)):
                row = rows[t][b]
                c = _builtin_max(range(C), key=row.__getitem__)   # ties: the first class
                total -= row[c]
                if c != blank and not (merge and c == prev):
                    seq.append(c)
                prev = c
            for k, c in enumerate(seq):
                indices.append([b, k])
                values.append(c)
            longest = _builtin_max(longest, len(seq))
            logp.append([total])
        di = (_creation.tensor(indices, _dt.int64) if indices
              else _creation.zeros((0, 2), dtype=_dt.int64))
        dv = _creation.tensor(values, _dt.int64) if values else _creation.zeros((0,), dtype=_dt.int64)
        ds = _creation.tensor([N, longest], _dt.int64)
        return di, dv, ds, _creation.tensor(logp, x.dtype)


_builtin_max = max


@_export
def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True):
    """ops.ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True): CTCGreedyDecoder."""
    return CTCGreedyDecoder(merge_repeated)(inputs, sequence_length)


# ----- margin losses ---------------------------------------------------------------------------

def _pick(x, hot):
    """x[i, target_i] as [N, 1] from a one-hot [N, C] of the targets."""
    return F.sum(x * hot, 1, keepdim=True)


@_export
class MultiMarginLoss(Primitive):
    """MultiMarginLoss(p=1, margin=1.0, reduction='mean')(x [N, C], target [N] int64, weight=None
    [C]): per sample sum over j != y of max(0, margin - x[y] + x[j])^p * weight[y] / C."""

    def __init__(self, p=1, margin=1.0, reduction="mean"):
        who = "MultiMarginLoss"
        _int(who, "p", p)
        if p not in (1, 2):
            raise ValueError("For '%s', the 'p' must be in [1, 2], but got %d" % (who, p))
        _float(who, "margin", margin)
        _reduction(who, reduction)
        super().__init__(p=p, margin=margin, reduction=reduction)

    def __call__(self, x, target, weight=None):
        who = "MultiMarginLoss"
        x = _floating(who, "x", _tensor(who, "x", x))
        y = _integral(who, "target", _tensor(who, "target", target), (_dt.int64,))
        if x.ndim != 2 or y.ndim != 1 or y.shape[0] != x.shape[0]:
            raise ValueError("For '%s', 'x' must be 2-D (N, C) and 'target' 1-D (N,), but got %r and %r"
                             % (who, tuple(x.shape), tuple(y.shape)))
        C = x.shape[1]
        hot = F.one_hot(y, C, 1.0, 0.0, -1)
        hot = hot if hot.dtype == x.dtype else F.cast(hot, x.dtype)
        z = F.relu(self.attrs["margin"] - _pick(x, hot) + x)
        if self.attrs["p"] == 2:
            z = z * z
        z = z * (1 - hot)                          # the target class itself does not count
        if weight is not None:
            w = _floating(who, "weight", _tensor(who, "weight", weight))
            if tuple(w.shape) != (C,):
                raise ValueError("For '%s', the 'weight' must be 1-D of the classes %d, but got %r"
                                 % (who, C, tuple(w.shape)))
            z = z * _pick(F.reshape(F.cast(w, x.dtype), (1, C)), hot)
        return _reduce(F.sum(z, 1) / C, self.attrs["reduction"])


@_export
def multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction="mean"):
    """ops.multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction='mean'):
    MultiMarginLoss; MindSpore takes an int margin here."""
    if isinstance(margin, bool) or not isinstance(margin, int):
        raise TypeError("For 'multi_margin_loss', the type of 'margin' must be int, but got %s."
                        % type(margin))
    return MultiMarginLoss(p, float(margin), reduction)(input, target, weight)


@_export
class MultilabelMarginLoss(Primitive):
    """MultilabelMarginLoss(reduction='mean')(x [C] or [N, C], target int32 of x's shape) -> (loss,
    is_target): target lists class indices, ended by the first -1; per sample
    sum over listed j and unlisted k of max(0, 1 - (x[j] - x[k])) / C. is_target (int32, x's
    shape) marks the listed classes."""

    def __init__(self, reduction="mean"):
        _reduction("MultilabelMarginLoss", reduction)
        super().__init__(reduction=reduction)

    def __call__(self, x, target):
        who = "MultilabelMarginLoss"
        x = _floating(who, "x", _tensor(who, "x", x))
        y = _integral(who, "target", _tensor(who, "target", target), (_dt.int32,))
        if x.ndim not in (1, 2) or tuple(y.shape) != tuple(x.shape):
            raise ValueError("For '%s', 'x' must be 1-D or 2-D and 'target' of its shape, but got %r and %r"
                             % (who, tuple(x.shape), tuple(y.shape)))
        one_d = x.ndim == 1
        if one_d:
            x, y = F.reshape(x, (1, -1)), F.reshape(y, (1, -1))
        C = x.shape[1]
        # listed positions: before the first negative entry
        listed = F.cast(F.eq(F.cumsum(F.cast(F.lt(y, 0), _dt.int32), 1), 0), x.dtype)      # [N, S]
        hot = F.one_hot(F.cast(F.maximum(y, 0), _dt.int64), C, 1.0, 0.0, -1)              # [N, S, C]
        hot = (hot if hot.dtype == x.dtype else F.cast(hot, x.dtype)) * F.expand_dims(listed, 2)
        is_t = F.cast(F.gt(F.sum(hot, 1), 0), x.dtype)                                      # [N, C]
        xj = F.sum(hot * F.expand_dims(x, 1), 2)                                            # [N, S]
        pair = F.relu(1 - F.expand_dims(xj, 2) + F.expand_dims(x, 1))                       # [N, S, C]
        pair = pair * F.expand_dims(listed, 2) * F.expand_dims(1 - is_t, 1)
        loss = F.sum(pair, (1, 2)) / C
        is_target = F.cast(is_t, _dt.int32)
        if one_d:
            loss, is_target = F.reshape(loss, ()), F.reshape(is_target, (-1,))
        return _reduce(loss, self.attrs["reduction"]), is_target


@_export
def multilabel_margin_loss(input, target, reduction="mean"):
    """ops.multilabel_margin_loss(input, target, reduction='mean'): MultilabelMarginLoss's loss."""
    return MultilabelMarginLoss(reduction)(input, target)[0]


_alias("multi_label_margin_loss", multilabel_margin_loss)


@_export
class SoftMarginLoss(Primitive):
    """SoftMarginLoss(reduction='mean')(logits, labels): log(1 + exp(-labels * logits)); logits
    and labels of one shape and floating dtype."""

    def __init__(self, reduction="mean"):
        _reduction("SoftMarginLoss", reduction)
        super().__init__(reduction=reduction)

    def __call__(self, logits, labels):
        who = "SoftMarginLoss"
        x = _floating(who, "logits", _tensor(who, "logits", logits))
        y = _floating(who, "labels", _tensor(who, "labels", labels))
        if tuple(x.shape) != tuple(y.shape):
            raise ValueError("For '%s', the shape of 'labels' %r must be the same as 'logits' %r"
                             % (who, tuple(y.shape), tuple(x.shape)))
        z = F.neg(y * x)
        # log1p(exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|))
        out = F.relu(z) + F.log1p(F.exp(F.neg(F.abs(z))))
        return _reduce(out, self.attrs["reduction"])


@_export
def soft_margin_loss(input, target, reduction="mean"):
    """ops.soft_margin_loss(input, target, reduction='mean'): SoftMarginLoss."""
    return SoftMarginLoss(reduction)(input, target)


@_export
class TripletMarginLoss(Primitive):
    """TripletMarginLoss(p=2, swap=False, eps=1e-6, reduction='mean')(x, positive, negative,
    margin): max(d(x, positive) - d(x, negative) + margin, 0), d(u, v) = ||u - v + eps||_p over
    the last dim; swap takes min(d(x, n), d(positive, n)). margin: a 0-d Tensor."""

    def __init__(self, p=2, swap=False, eps=1e-6, reduction="mean"):
        who = "TripletMarginLoss"
        _int(who, "p", p)
        _bool(who, "swap", swap)
        _float(who, "eps", eps)
        _reduction(who, reduction)
        super().__init__(p=p, swap=swap, eps=eps, reduction=reduction)

    def __call__(self, x, positive, negative, margin):
        who = "TripletMarginLoss"
        a = _floating(who, "x", _tensor(who, "x", x))
        pos = _floating(who, "positive", _tensor(who, "positive", positive))
        neg = _floating(who, "negative", _tensor(who, "negative", negative))
        m = _floating(who, "margin", _tensor(who, "margin", margin), (_dt.float32,))
        if m.ndim != 0:
            raise ValueError("For '%s', the 'margin' must be a 0-D Tensor, but got shape %r"
                             % (who, tuple(m.shape)))
        if a.ndim < 1:
            raise ValueError("For '%s', the 'x' must have at least 1 dim, but got shape ()" % who)
        p, eps = self.attrs["p"], self.attrs["eps"]

        def dist(u, v):
            diff = u - v + eps
            if p == 0:
                return F.sum(F.cast(F.ne(diff, 0), diff.dtype), diff.ndim - 1)
            if p == 1:
                return F.sum(F.abs(diff), diff.ndim - 1)
            if p == 2:
                return F.sqrt(F.sum(diff * diff, diff.ndim - 1))
            return F.pow(F.sum(F.pow(F.abs(diff), float(p)), diff.ndim - 1), 1.0 / p)
        dp, dn = dist(a, pos), dist(a, neg)
        if self.attrs["swap"]:
            dn = F.minimum(dn, dist(pos, neg))
        out = F.relu(dp - dn + F.cast(m, dp.dtype))
        return _reduce(out, self.attrs["reduction"])


# ----- candidate samplers ----------------------------------------------------------------------

class _Sampler(Primitive):
    """Shared by the candidate samplers: a host generator per primitive (seed 0: drawn from
    pijit's global seed when one was set, else from the system), so a seeded sampler repeats its
    sequence and successive calls differ."""

    def _rng(self):
        rng = getattr(self, "_gen", None)
        if rng is None:
            seed = self.attrs.get("seed", 0)
            if seed == 0:
                g = _creation.get_seed()
                rng = _random.Random(None if not g else (g * 1000003 + id(self) % 1000003))
            else:
                rng = _random.Random(seed)
            self._gen = rng
        return rng

    def _check_attrs(self, who, num_true, num_sampled, unique, range_max, seed):
        _int(who, "num_true", num_true)
        _int(who, "num_sampled", num_sampled)
        _bool(who, "unique", unique)
        _int(who, "range_max", range_max)
        _int(who, "seed", seed)
        for name, v in (("num_true", num_true), ("num_sampled", num_sampled), ("range_max", range_max)):
            if v < 1:
                raise ValueError("For '%s', the '%s' must be greater than 0, but got %d" % (who, name, v))
        if seed < 0:
            raise ValueError("For '%s', the 'seed' must be greater than or equal to 0, but got %d" % (who, seed))
        if unique and num_sampled > range_max:
            raise ValueError("For '%s', the 'num_sampled' can not be larger than 'range_max' when 'unique' "
                             "is True, but got 'num_sampled' = %d, 'range_max' = %d"
                             % (who, num_sampled, range_max))

    def _true_classes(self, who, true_classes):
        t = _integral(who, "true_classes", _tensor(who, "true_classes", true_classes))
        if t.ndim != 2 or t.shape[1] != self.attrs["num_true"]:
            raise ValueError("For '%s', the input 'true_classes' must be 2-D with 'num_true' = %d columns, "
                             "but got shape %r" % (who, self.attrs["num_true"], tuple(t.shape)))
        return t

    def _draw(self, draw_one, avoid):
        """(candidates, tries): num_sampled draws; unique rejects repeats (and, with avoid, the
        true classes)."""
        n, unique = self.attrs["num_sampled"], self.attrs["unique"]
        if not unique and not avoid:
            return [draw_one() for _ in range(n)], n
        out, seen, tries = [], set(), 0
        while len(out) < n:
            c = draw_one()
            tries += 1
            if (unique and c in seen) or c in avoid:
                continue
            seen.add(c)
            out.append(c)
        return out, tries


def _expected_count(p, num_sampled, tries):
    """How often a class of probability p is expected among the candidates: p * num_sampled when
    every draw was kept (always without unique), else the chance it turned up in the tries,
    1 - (1 - p)^tries."""
    if tries == num_sampled:
        return p * num_sampled
    return -_math.expm1(tries * _math.log1p(-p)) if p < 1 else 1.0


@_export
class UniformCandidateSampler(_Sampler):
    """UniformCandidateSampler(num_true, num_sampled, unique, range_max, seed=0,
    remove_accidental_hits=False)(true_classes [batch, num_true]) -> (sampled_candidates
    [num_sampled], true_expected_count, sampled_expected_count (float32)): classes uniform in
    [0, range_max); unique draws without replacement (rejecting repeats), and
    remove_accidental_hits also rejects the true classes. Each expected count is
    num_sampled / range_max when every draw was kept, else 1 - (1 - 1/range_max)^tries."""

    def __init__(self, num_true, num_sampled, unique, range_max, seed=0, remove_accidental_hits=False):
        who = "UniformCandidateSampler"
        self._check_attrs(who, num_true, num_sampled, unique, range_max, seed)
        _bool(who, "remove_accidental_hits", remove_accidental_hits)
        super().__init__(num_true=num_true, num_sampled=num_sampled, unique=unique, range_max=range_max,
                         seed=seed, remove_accidental_hits=remove_accidental_hits)

    def __call__(self, true_classes):
        who = "UniformCandidateSampler"
        t = self._true_classes(who, true_classes)
        a = self.attrs
        avoid = set(v for row in _rows(t) for v in row) if a["remove_accidental_hits"] else set()
        if a["remove_accidental_hits"] and a["range_max"] - len(avoid) < (a["num_sampled"] if a["unique"] else 1):
            raise ValueError("For '%s', too few classes outside 'true_classes' remain to draw %d from"
                             % (who, a["num_sampled"]))
        rng = self._rng()
        rmax = a["range_max"]
        sampled, tries = self._draw(lambda: rng.randrange(rmax), avoid)
        n = a["num_sampled"]
        e = _expected_count(1.0 / rmax, n, tries)
        true_e = _creation.full(tuple(t.shape), e, dtype=_dt.float32)
        return (_creation.tensor(sampled, t.dtype), true_e,
                _creation.full((n,), e, dtype=_dt.float32))


@_export
def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=0,
                              remove_accidental_hits=False):
    """ops.uniform_candidate_sampler(...): UniformCandidateSampler."""
    return UniformCandidateSampler(num_true, num_sampled, unique, range_max, seed,
                                   remove_accidental_hits)(true_classes)


@_export
class LogUniformCandidateSampler(_Sampler):
    """LogUniformCandidateSampler(num_true=1, num_sampled=5, unique=True, range_max=5, seed=0)
    (true_classes [batch, num_true]) -> (sampled_candidates [num_sampled] of true_classes' dtype,
    true_expected_count, sampled_expected_count (float32)): class k drawn with probability
    P(k) = log((k + 2) / (k + 1)) / log(range_max + 1); expected count of k: num_sampled * P(k)
    when every draw was kept (always without unique), else 1 - (1 - P(k))^tries."""

    def __init__(self, num_true=1, num_sampled=5, unique=True, range_max=5, seed=0):
        self._check_attrs("LogUniformCandidateSampler", num_true, num_sampled, unique, range_max, seed)
        super().__init__(num_true=num_true, num_sampled=num_sampled, unique=unique, range_max=range_max,
                         seed=seed)

    def __call__(self, true_classes):
        t = self._true_classes("LogUniformCandidateSampler", true_classes)
        a = self.attrs
        rmax, n = a["range_max"], a["num_sampled"]
        log_range = _math.log1p(rmax)
        rng = self._rng()

        def draw():
            return int(_math.exp(rng.random() * log_range)) - 1 if rmax > 0 else 0
        sampled, tries = self._draw(lambda: _builtin_min(_builtin_max(draw(), 0), rmax - 1), set())

        def expected(k):
            pk = (_math.log(k + 2.0) - _math.log(k + 1.0)) / log_range
            return _expected_count(pk, n, tries)
        true_e = [[expected(k) for k in row] for row in _rows(t)]
        return (_creation.tensor(sampled, t.dtype), _creation.tensor(true_e, _dt.float32),
                _creation.tensor([expected(k) for k in sampled], _dt.float32))


_builtin_min = min


@_export
def log_uniform_candidate_sampler(true_classes, num_true=1, num_sampled=5, unique=True, range_max=5, seed=0):
    """ops.log_uniform_candidate_sampler(...): LogUniformCandidateSampler."""
    return LogUniformCandidateSampler(num_true, num_sampled, unique, range_max, seed)(true_classes)


_FLOAT_LOWEST = -3.4028234663852886e38


@_export
class ComputeAccidentalHits(Primitive):
    """ComputeAccidentalHits(num_true=1)(true_classes [batch, num_true], sampled_candidates
    [num_sampled]) -> (indices int32, ids int64, weights float32): for each row i and each of its
    true classes in order, a hit where the class was sampled: (i, its position in
    sampled_candidates (the last one if repeated), the lowest float32)."""

    def __init__(self, num_true=1):
        _int("ComputeAccidentalHits", "num_true", num_true)
        if num_true < 1:
            raise ValueError("For 'ComputeAccidentalHits', the 'num_true' must be greater than or equal "
                             "to 1, but got %d" % num_true)
        super().__init__(num_true=num_true)

    def __call__(self, true_classes, sampled_candidates):
        who = "ComputeAccidentalHits"
        t = _integral(who, "true_classes", _tensor(who, "true_classes", true_classes))
        s = _integral(who, "sampled_candidates", _tensor(who, "sampled_candidates", sampled_candidates))
        if t.ndim != 2 or t.shape[1] != self.attrs["num_true"]:
            raise ValueError("For '%s', the 'true_classes' must be 2-D with 'num_true' = %d columns, but got "
                             "shape %r" % (who, self.attrs["num_true"], tuple(t.shape)))
        if s.ndim != 1:
            raise ValueError("For '%s', the 'sampled_candidates' must be 1-D, but got shape %r"
                             % (who, tuple(s.shape)))
        pos = {}
        for j, c in enumerate(_rows(s)):
            pos[c] = j
        idx, ids = [], []
        for i, row in enumerate(_rows(t)):
            for c in row:
                if c in pos:
                    idx.append(i)
                    ids.append(pos[c])
        n = len(idx)
        if n == 0:
            return (_creation.zeros((0,), dtype=_dt.int32), _creation.zeros((0,), dtype=_dt.int64),
                    _creation.zeros((0,), dtype=_dt.float32))
        return (_creation.tensor(idx, _dt.int32), _creation.tensor(ids, _dt.int64),
                _creation.full((n,), _FLOAT_LOWEST, dtype=_dt.float32))
