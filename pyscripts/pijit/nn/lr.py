"""Learning rates as MindSpore computes them.

The list functions (nn.piecewise_constant_lr, exponential_decay_lr, natural_exp_decay_lr,
inverse_decay_lr, cosine_decay_lr, polynomial_decay_lr, warmup_lr) return one Python float per
step, computed in float64 exactly as MindSpore's formulas (an optimizer given the list takes the
i-th value at step i). The schedule Cells (LearningRateSchedule and its subclasses) map a step
Tensor to a 0-d float32 learning-rate Tensor, so an optimizer calls them inside a jitted step.

Where MindSpore's code and its documented formula differ, the code wins (a program's numbers must
match MindSpore's): natural_exp_decay_lr and NaturalExpDecayLR decay by exp(-rate * epoch) (step)
without dividing by decay_epoch (decay_steps); is_stair rounds the epoch (step) down to a multiple
of it.
"""
import math

from pijit import dtype as _dt
from pijit.nn.cell import Cell
from pijit.ops import functional as F


def _float(who, name, v, positive=True, exact=True):
    """MindSpore's check_is_float / check_positive_float: a Python float (an int is a TypeError
    where MindSpore requires a float), > 0 (or >= 0 when not positive)."""
    if isinstance(v, bool) or not isinstance(v, (float, int)) or (exact and not isinstance(v, float)):
        raise TypeError("For '%s', the argument '%s' must be type of float, but got '%s' type: %s."
                        % (who, name, name, type(v)))
    if (positive and v <= 0) or (not positive and v < 0):
        raise ValueError("For '%s', the '%s' must be %s 0, but got %r."
                         % (who, name, "greater than" if positive else "greater than or equal to", v))
    return float(v)


def _pos_int(who, name, v):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("For '%s', the '%s' must be int, but got %s." % (who, name, type(v).__name__))
    if v <= 0:
        raise ValueError("For '%s', the '%s' must be a positive int, but got %d." % (who, name, v))
    return v


def _bool(who, name, v):
    if not isinstance(v, bool):
        raise TypeError("For '%s', the '%s' must be bool, but got %s." % (who, name, type(v).__name__))
    return v


# ---- per-step lists ----------------------------------------------------------------------------

def piecewise_constant_lr(milestone, learning_rates):
    """learning_rates[t] for every step in [milestone[t-1], milestone[t]): a list of milestone[-1]
    floats. milestone rises and holds positive ints; learning_rates are floats."""
    who = "piecewise_constant_lr"
    if not isinstance(milestone, (tuple, list)):
        raise TypeError("For '%s', the 'milestone' must be a list or tuple, got %s"
                        % (who, type(milestone).__name__))
    if not isinstance(learning_rates, (tuple, list)):
        raise TypeError("For '%s', the 'learning_rates' must be a list or tuple, got %s"
                        % (who, type(learning_rates).__name__))
    if len(milestone) != len(learning_rates):
        raise ValueError("For '%s', the size of 'milestone' must be same with the size of "
                         "'learning_rates', but got 'milestone' size: %d, 'learning_rates' size: %d."
                         % (who, len(milestone), len(learning_rates)))
    out, last = [], 0
    for i, (m, lr) in enumerate(zip(milestone, learning_rates)):
        _pos_int(who, "milestone[%d]" % i, m)
        _float(who, "learning_rates[%d]" % i, lr, positive=False)
        if m < last:
            raise ValueError("For '%s', the value of milestone[%d] must be greater than "
                             "milestone[%d], but got %d and %d." % (who, i, i - 1, m, last))
        out += [learning_rates[i]] * (m - last)
        last = m
    return out


def _decay_args(who, learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair):
    _pos_int(who, "total_step", total_step)
    _pos_int(who, "step_per_epoch", step_per_epoch)
    _pos_int(who, "decay_epoch", decay_epoch)
    _float(who, "learning_rate", learning_rate)
    _float(who, "decay_rate", decay_rate)
    _bool(who, "is_stair", is_stair)


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False):
    """learning_rate * decay_rate ** (epoch / decay_epoch), epoch = floor(i / step_per_epoch);
    is_stair floors the exponent."""
    _decay_args("exponential_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch,
                decay_epoch, is_stair)
    out = []
    for i in range(total_step):
        epoch = i // step_per_epoch
        p = epoch // decay_epoch if is_stair else epoch / decay_epoch
        out.append(learning_rate * decay_rate ** p)
    return out


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False):
    """learning_rate * e ** (-decay_rate * epoch); is_stair rounds epoch down to a multiple of
    decay_epoch (MindSpore's code: decay_epoch does not divide the exponent)."""
    _decay_args("natural_exp_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch,
                decay_epoch, is_stair)
    out = []
    for i in range(total_step):
        epoch = i // step_per_epoch
        if is_stair:
            epoch = epoch // decay_epoch * decay_epoch
        out.append(learning_rate * math.e ** (-decay_rate * epoch))
    return out


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                     is_stair=False):
    """learning_rate / (1 + decay_rate * epoch / decay_epoch); is_stair floors the quotient."""
    _decay_args("inverse_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch,
                decay_epoch, is_stair)
    out = []
    for i in range(total_step):
        epoch = i // step_per_epoch
        if is_stair:
            out.append(learning_rate / (1 + decay_rate * (epoch // decay_epoch)))
        else:
            out.append(learning_rate / (1 + decay_rate * epoch / decay_epoch))
    return out


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch):
    """min_lr + (max_lr - min_lr) / 2 * (1 + cos(pi * min(epoch, decay_epoch) / decay_epoch))."""
    who = "cosine_decay_lr"
    _float(who, "min_lr", min_lr, positive=False)
    _float(who, "max_lr", max_lr)
    _pos_int(who, "total_step", total_step)
    _pos_int(who, "step_per_epoch", step_per_epoch)
    _pos_int(who, "decay_epoch", decay_epoch)
    if min_lr >= max_lr:
        raise ValueError("For '%s', the 'max_lr' should be greater than the 'min_lr', but got "
                         "'max_lr' value: %r, 'min_lr' value: %r." % (who, max_lr, min_lr))
    delta = 0.5 * (max_lr - min_lr)
    out = []
    for i in range(total_step):
        epoch = min(i // step_per_epoch, decay_epoch)
        out.append(min_lr + delta * (1 + math.cos(math.pi * epoch / decay_epoch)))
    return out


def polynomial_decay_lr(learning_rate, end_learning_rate, total_step, step_per_epoch, decay_epoch,
                        power, update_decay_epoch=False):
    """(learning_rate - end_learning_rate) * (1 - e / d) ** power + end_learning_rate with
    e = min(epoch, decay_epoch), d = decay_epoch; with update_decay_epoch e = epoch and
    d = decay_epoch * max(ceil(epoch / decay_epoch), 1)."""
    who = "polynomial_decay_lr"
    _float(who, "learning_rate", learning_rate)
    _float(who, "end_learning_rate", end_learning_rate, positive=False)
    _float(who, "power", power)
    _pos_int(who, "total_step", total_step)
    _pos_int(who, "step_per_epoch", step_per_epoch)
    _pos_int(who, "decay_epoch", decay_epoch)
    _bool(who, "update_decay_epoch", update_decay_epoch)
    delta = learning_rate - end_learning_rate
    out = []
    for i in range(total_step):
        epoch = i // step_per_epoch
        if update_decay_epoch:
            d, e = decay_epoch * max(math.ceil(epoch / decay_epoch), 1), epoch
        else:
            d, e = decay_epoch, min(epoch, decay_epoch)
        out.append(delta * (1 - e / d) ** power + end_learning_rate)
    return out


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch):
    """learning_rate * min(epoch, warmup_epoch) / warmup_epoch (0 in the first epoch)."""
    who = "warmup_lr"
    _float(who, "learning_rate", learning_rate, positive=False)
    _pos_int(who, "warmup_epoch", warmup_epoch)
    _pos_int(who, "total_step", total_step)
    _pos_int(who, "step_per_epoch", step_per_epoch)
    return [learning_rate * min(i // step_per_epoch, warmup_epoch) / warmup_epoch
            for i in range(total_step)]


# ---- schedule Cells ----------------------------------------------------------------------------

class LearningRateSchedule(Cell):
    """The base of learning-rate schedules: construct(global_step) -> a 0-d float32 Tensor."""

    def construct(self, global_step):
        raise NotImplementedError("a LearningRateSchedule subclass must define construct")


def _step(global_step):
    return F.cast(global_step, _dt.float32)


class _Decay(LearningRateSchedule):
    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair):
        super().__init__()
        who = type(self).__name__
        _pos_int(who, "decay_steps", decay_steps)
        self.learning_rate = _float(who, "learning_rate", learning_rate)
        self.decay_rate = _float(who, "decay_rate", decay_rate)
        self.decay_steps = decay_steps
        self.is_stair = _bool(who, "is_stair", is_stair)


class ExponentialDecayLR(_Decay):
    """learning_rate * decay_rate ** p, p = step / decay_steps (floored with is_stair)."""

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__(learning_rate, decay_rate, decay_steps, is_stair)

    def construct(self, global_step):
        p = _step(global_step) / self.decay_steps
        if self.is_stair:
            p = F.floor(p)
        return F.pow(self.decay_rate, p) * self.learning_rate


class NaturalExpDecayLR(_Decay):
    """learning_rate * e ** (-decay_rate * p), p = step (is_stair: rounded down to a multiple of
    decay_steps), as MindSpore's code computes it."""

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__(learning_rate, decay_rate, decay_steps, is_stair)

    def construct(self, global_step):
        p = _step(global_step)
        if self.is_stair:
            p = F.floor(p / self.decay_steps) * self.decay_steps
        return F.pow(math.e, p * -self.decay_rate) * self.learning_rate


class InverseDecayLR(_Decay):
    """learning_rate / (1 + decay_rate * p), p = step / decay_steps (floored with is_stair)."""

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__(learning_rate, decay_rate, decay_steps, is_stair)

    def construct(self, global_step):
        p = _step(global_step) / self.decay_steps
        if self.is_stair:
            p = F.floor(p)
        return self.learning_rate / (p * self.decay_rate + 1.0)


class CosineDecayLR(LearningRateSchedule):
    """min_lr + (max_lr - min_lr) / 2 * (1 + cos(pi * min(step, decay_steps) / decay_steps))."""

    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        who = "CosineDecayLR"
        self.min_lr = _float(who, "min_lr", min_lr, positive=False)
        self.max_lr = _float(who, "max_lr", max_lr)
        self.decay_steps = _pos_int(who, "decay_steps", decay_steps)
        if min_lr >= max_lr:
            raise ValueError("For 'CosineDecayLR', the 'max_lr' must be greater than the 'min_lr', "
                             "but got 'max_lr' value: %r, 'min_lr' value: %r." % (max_lr, min_lr))
        self.delta = 0.5 * (max_lr - min_lr)

    def construct(self, global_step):
        p = F.minimum(_step(global_step), float(self.decay_steps))
        return (F.cos(p * math.pi / self.decay_steps) + 1.0) * self.delta + self.min_lr


class PolynomialDecayLR(LearningRateSchedule):
    """(learning_rate - end_learning_rate) * (1 - s / d) ** power + end_learning_rate with
    s = min(step, decay_steps), d = decay_steps; with update_decay_steps s = step and
    d = decay_steps * max(ceil(step / decay_steps), 1)."""

    def __init__(self, learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False):
        super().__init__()
        who = "PolynomialDecayLR"
        self.start_learning_rate = _float(who, "learning_rate", learning_rate)
        self.end_learning_rate = _float(who, "end_learning_rate", end_learning_rate, positive=False)
        self.decay_steps = _pos_int(who, "decay_steps", decay_steps)
        self.update_decay_steps = _bool(who, "update_decay_steps", update_decay_steps)
        self.power = _float(who, "power", power)
        self.diff_learning_rate = learning_rate - end_learning_rate

    def construct(self, global_step):
        s = _step(global_step)
        if self.update_decay_steps:
            d = F.maximum(F.ceil(s / self.decay_steps), 1.0) * self.decay_steps
        else:
            s = F.minimum(s, float(self.decay_steps))
            d = self.decay_steps
        return F.pow(1.0 - s / d, self.power) * self.diff_learning_rate + self.end_learning_rate


class WarmUpLR(LearningRateSchedule):
    """learning_rate * min(step, warmup_steps) / warmup_steps."""

    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        self.learning_rate = _float("WarmUpLR", "learning_rate", learning_rate, positive=False)
        self.warmup_steps = _pos_int("WarmUpLR", "warmup_steps", warmup_steps)

    def construct(self, global_step):
        p = F.minimum(_step(global_step), float(self.warmup_steps)) / self.warmup_steps
        return p * self.learning_rate


__all__ = ["piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr",
           "inverse_decay_lr", "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr",
           "LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR",
           "CosineDecayLR", "PolynomialDecayLR", "WarmUpLR"]
