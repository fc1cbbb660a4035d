"""Optimizers with MindSpore's names and update rules: nn.SGD, nn.Momentum, nn.Adam.

`optimizer(grads)` updates its Parameters in place (ops.assign: under jit the writes are replayed
after the graph) from one gradient per parameter, in the order of `parameters`. State (momenta,
Adam's moments, the step count) lives in Parameters the optimizer owns, so a jitted training step
reads and writes it like the weights.

The learning rate is a number, a 0-d Tensor, a list or 1-D Tensor of per-step values (the last one
holds after the list ends), or a callable (a LearningRateSchedule Cell or a function) called with
the step as an Int32 Tensor. weight_decay adds weight_decay * parameter to each gradient (L2), and
gradients are divided by loss_scale first.
"""
from pijit import _C
from pijit import dtype as _dt
from pijit.nn.cell import Cell
from pijit.parameter import Parameter, ParameterTuple
from pijit.tensor import Tensor
from pijit import ops as F
from pijit.ops.misc import assign


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_number(who, name, v, lo=None, hi=None, lo_open=False):
    if not _is_number(v):
        raise TypeError("%s: %s must be a number, got %r" % (who, name, v))
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError("%s: %s must be %s %s, got %r" % (who, name, ">" if lo_open else ">=", lo, v))
    if hi is not None and v > hi:
        raise ValueError("%s: %s must be <= %s, got %r" % (who, name, hi, v))
    return float(v)


_GROUP_KEYS = ("params", "lr", "weight_decay", "grad_centralization", "order_params")


def _parameters(who, parameters):
    """(ParameterTuple, [group dict of each parameter, or None], whether grouped) from a list of
    Parameters or of group dicts (MindSpore's keys; an {'order_params': [...]} entry gives the
    order the parameters and their gradients follow, else the groups' order)."""
    if isinstance(parameters, Parameter):
        raise TypeError("%s: parameters must be a list of Parameters (net.trainable_params()), "
                        "got one Parameter" % who)
    if parameters is None:
        raise ValueError("%s: the parameter list cannot be None" % who)
    items = list(parameters)
    if not items:
        raise ValueError("%s: the parameter list is empty" % who)
    grouped = isinstance(items[0], dict)
    for i, it in enumerate(items):
        if not isinstance(it, (dict, Parameter)):
            raise TypeError("%s: parameters[%d] is a %s, not a Parameter or a group dict"
                            % (who, i, type(it).__name__))
        if isinstance(it, dict) != grouped:
            raise TypeError("%s: all elements of parameters must be Parameters or all group dicts; "
                            "parameters[%d] is a %s" % (who, i, type(it).__name__))
    if not grouped:
        return ParameterTuple(items), [None] * len(items), False
    params, groups, order, names = [], [], None, set()
    for i, g in enumerate(items):
        bad = [k for k in g if k not in _GROUP_KEYS]
        if bad:
            raise KeyError("%s: the keys of a parameter group must be among %s, got %s"
                           % (who, list(_GROUP_KEYS), bad))
        if "order_params" in g:
            if len(g) > 1:
                raise ValueError("%s: the order_params group must hold only the 'order_params' "
                                 "key, got %s" % (who, sorted(g)))
            order = list(g["order_params"])
            continue
        if "params" not in g:
            raise ValueError("%s: parameter group %d has no 'params'" % (who, i))
        members = list(g["params"]) if not isinstance(g["params"], Parameter) else None
        if not members:
            raise ValueError("%s: the 'params' of group %d must be a non-empty list of Parameters"
                             % (who, i))
        if "grad_centralization" in g and not isinstance(g["grad_centralization"], bool):
            raise TypeError("%s: grad_centralization of group %d must be a bool, got %r"
                            % (who, i, g["grad_centralization"]))
        for p in members:
            if not isinstance(p, Parameter):
                raise TypeError("%s: group %d holds a %s, not a Parameter" % (who, i, type(p).__name__))
            if p.name in names:
                raise RuntimeError("%s: the parameter %s is in more than one group (or twice in "
                                   "one)" % (who, p.name))
            names.add(p.name)
            params.append(p)
            groups.append(g)
    if order is not None:
        if len(order) != len(params):
            raise ValueError("%s: order_params has %d parameters, the groups hold %d"
                             % (who, len(order), len(params)))
        by_name = {p.name: (p, g) for p, g in zip(params, groups)}
        for p in order:
            if not isinstance(p, Parameter) or p.name not in by_name:
                raise ValueError("%s: order_params holds %r, which is in no group"
                                 % (who, getattr(p, "name", p)))
        params = [by_name[p.name][0] for p in order]
        groups = [by_name[p.name][1] for p in order]
    return ParameterTuple(params), groups, True


class _IteratorLearningRate(Cell):
    """A per-step learning-rate table (a list or 1-D Tensor lr): the Parameter `learning_rate`
    (MindSpore's name, so checkpoints carry it) read at the step; the last value holds after the
    table ends."""

    def __init__(self, values, name):
        super().__init__(auto_prefix=False)
        self.learning_rate = Parameter(Tensor(values, _dt.float32), name=name, requires_grad=False)

    def construct(self, global_step):
        last = self.learning_rate.shape[0] - 1
        return F.gather(self.learning_rate, F.minimum(global_step, last), 0)


class _ConvertToCell(Cell):
    """A constant group learning rate among dynamic ones: construct(step) returns the Parameter."""

    def __init__(self, learning_rate):
        super().__init__(auto_prefix=False)
        self.learning_rate = learning_rate

    def construct(self, global_step):
        return self.learning_rate


def _preprocess_lr(who, lr):
    """(value, dynamic): a float, a 0-d float32 Tensor, a list of floats (a table) or a schedule."""
    if _is_number(lr):
        return _check_number(who, "learning_rate", lr, 0), False
    if isinstance(lr, _C.TensorBase) and lr.ndim == 0:
        return Tensor(float(lr.item()), _dt.float32), False
    if isinstance(lr, (list, tuple)) or (isinstance(lr, _C.TensorBase) and lr.ndim == 1):
        values = [float(v) for v in (lr.tolist() if isinstance(lr, _C.TensorBase) else lr)]
        if not values:
            raise ValueError("%s: the learning-rate list is empty" % who)
        return values, True
    if isinstance(lr, _C.TensorBase):
        raise ValueError("For 'Optimizer', if 'learning_rate' is Tensor type, then the dimension of "
                         "it should be 0 or 1, but got %d." % lr.ndim)
    if callable(lr):
        return lr, True
    raise TypeError("%s: learning_rate must be a number, a Tensor, a list of numbers or a "
                    "schedule, got %s" % (who, type(lr).__name__))


def _build_lr(lr, name):
    """The learning rate as the optimizer holds it: a Parameter `name` (a constant), an
    _IteratorLearningRate (a table) or the schedule itself."""
    if isinstance(lr, float):
        return Parameter(Tensor(lr, _dt.float32), name=name, requires_grad=False)
    if isinstance(lr, _C.TensorBase):
        return Parameter(lr, name=name, requires_grad=False)
    if isinstance(lr, list):
        return _IteratorLearningRate(lr, name)
    return lr


def _lr_value(lr, step, dynamic):
    """The learning rate of the step: the Parameter itself, or the table or schedule at step.
    (`dynamic` is decided when the optimizer is built: under jit a Parameter read is a Tensor.)"""
    return lr(step) if dynamic else lr


class _LrHolder(object):
    """What Optimizer._lr gives: `.value`, the constant learning rate as a float (None when it is
    dynamic or grouped); setting it writes the learning_rate Parameter (for callers written
    against the former holder object, as train/callback/_monitors.py's _set_lr)."""

    def __init__(self, opt):
        self._opt = opt

    @property
    def value(self):
        lr = self._opt.learning_rate
        if self._opt.is_group_lr or not isinstance(lr, Parameter):
            return None
        return float(lr.item())

    @value.setter
    def value(self, v):
        lr = self._opt.learning_rate
        if self._opt.is_group_lr or not isinstance(lr, Parameter):
            raise ValueError("the learning rate is dynamic or grouped: it has no single value")
        lr.set_data(Tensor(float(v), _dt.float32))


class Optimizer(Cell):
    """The base: learning rate, parameters, weight decay, loss scale and the step count.

    The state is Parameters under MindSpore's names, registered in the optimizer as MindSpore's
    Cell registers a ParameterTuple's items, so parameters_dict(), save_checkpoint and
    load_param_into_net see them: 'global_step' (Int32, shape (1,)), 'learning_rate' (a 0-d
    float32 Parameter for a constant rate, 'learning_rate_group_<i>' for a group's; a table is
    an _IteratorLearningRate holding a 1-D 'learning_rate'; a schedule Cell is a child), and each
    subclass's per-parameter state ('moments.<name>', 'moment1.<name>', 'accum.<name>', ...).
    A jitted step reads the learning rate as a graph input: `opt.learning_rate.set_data(...)`,
    `ops.assign(opt.learning_rate, ...)` or `opt.learning_rate = Tensor(...)` between steps takes
    effect at the next step without a recompile."""

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        who = type(self).__name__
        self.parameters, groups, self.is_group = _parameters(who, parameters)
        # A plain tuple for the updates: capture reads its items along guarded paths (as the
        # Parameters the network reads), so a jitted step writes the same graph inputs.
        self._param_list = tuple(self.parameters)
        self.weight_decay = _check_number(who, "weight_decay", weight_decay, 0)
        self.loss_scale = _check_number(who, "loss_scale", loss_scale, 0, lo_open=True)
        self.global_step = Parameter(Tensor([0], _dt.int32), name="global_step", requires_grad=False)
        self._init_lr(who, learning_rate, parameters, groups)
        self.is_group_params_ordered = self.is_group and any(
            isinstance(it, dict) and "order_params" in it for it in parameters)
        if self.is_group:  # a group's weight decay applies to every parameter in it
            self._group_wd = [_check_number(who, "weight_decay", g["weight_decay"], 0)
                              if "weight_decay" in g else self.weight_decay for g in groups]
        else:  # MindSpore's default filter: no decay for parameters named beta or gamma (norms)
            self._group_wd = [0.0 if ("beta" in p.name or "gamma" in p.name) else self.weight_decay
                              for p in self.parameters]
        self.decay_flags = tuple(wd > 0 for wd in self._group_wd)
        self.grad_centralization_flags = tuple(bool(g.get("grad_centralization", False)) if g else False
                                               for g in groups)

    def _init_lr(self, who, learning_rate, items, groups):
        """learning_rate (and its Parameters registered); _lrs: each parameter's rate, as
        _lr_value reads it."""
        lr, self.dynamic_lr = _preprocess_lr(who, learning_rate)
        self.is_group_lr = any(g is not None and "lr" in g for g in groups)
        if not self.is_group_lr:
            self.learning_rate = _build_lr(lr, "learning_rate")
            self._lrs = (self.learning_rate,) * len(self._param_list)
            return
        items = list(items)
        default = _build_lr(lr, "learning_rate")
        built = {}
        for g in groups:
            if "lr" in g and id(g) not in built:
                glr, dyn = _preprocess_lr(who, g["lr"])
                self.dynamic_lr = self.dynamic_lr or dyn
                num = next(k for k, it in enumerate(items) if it is g)  # MindSpore's group number
                built[id(g)] = _build_lr(glr, "learning_rate_group_%d" % num)
        per = [built.get(id(g), default) for g in groups]
        if self.dynamic_lr:  # one kind for all: constants become cells returning their Parameter
            cells = {}
            per = [cells.setdefault(id(x), _ConvertToCell(x)) if isinstance(x, Parameter) else x
                   for x in per]
            for x in per:  # (not children: a container would prefix their Parameters' names)
                if isinstance(x, Cell):
                    for p in x.get_parameters():
                        self._register_state(p)
            holder = tuple(per)
        else:
            holder = ParameterTuple(per)
            for p in holder:
                self._register_state(p)
        # a plain attribute over the registry (the default rate is registered as 'learning_rate')
        object.__setattr__(self, "learning_rate", holder)
        self._lrs = tuple(per)

    def __setattr__(self, name, value):
        # MindSpore's Cell registers the items of a ParameterTuple attribute: so the optimizer's
        # state tuples (moments, accum, ...) are in parameters_dict() and in checkpoints
        if isinstance(value, tuple) and value and "_params" in self.__dict__ and \
                all(isinstance(p, Parameter) for p in value):
            for p in value:
                self._register_state(p)
        Cell.__setattr__(self, name, value)

    def _register_state(self, p):
        key, n = p.name, 0
        while self._params.get(key, p) is not p:  # two objects of one name: both kept
            n += 1
            key = "%s$%d" % (p.name, n)
        self._params[key] = p

    @property
    def _lr(self):
        return _LrHolder(self)

    @_lr.setter
    def _lr(self, holder):
        if holder.value is not None and isinstance(holder, _LrHolder) and holder._opt is not self:
            _LrHolder(self).value = holder.value

    def _state(self, prefix):
        """One zero-initialised Parameter per parameter (momenta, moments), named prefix.name."""
        return tuple(Parameter(_C.op("full", (), {"shape": tuple(p.shape), "value": 0, "dtype": p.dtype}),
                               name=prefix + "." + p.name, requires_grad=False)
                     for p in self.parameters)

    def _step(self):
        """The step count as a 0-d Int32 Tensor (a copy: the count is written in place later)."""
        return self.global_step.copy().reshape(())

    def get_lr(self):
        """The learning rate of the coming step: the learning_rate Parameter (a constant), or a
        0-d Tensor (a table or schedule at the step); a tuple of them, one per parameter, with
        group learning rates."""
        step = self._step()
        if self.is_group_lr:
            return tuple(_lr_value(lr, step, self.dynamic_lr) for lr in self._lrs)
        return _lr_value(self.learning_rate, step, self.dynamic_lr)

    def _checked(self, grads):
        who = type(self).__name__
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else None
        if grads is None:
            raise TypeError("%s: expected a tuple of gradients, one per parameter" % who)
        if len(grads) != len(self.parameters):
            raise ValueError("%s: %d gradients for %d parameters" % (who, len(grads), len(self.parameters)))
        for p, g in zip(self._param_list, grads):
            if not isinstance(g, _C.TensorBase):
                raise TypeError("%s: the gradient of %s is a %s, not a Tensor" % (who, p.name, type(g).__name__))
            if tuple(g.shape) != tuple(p.shape):
                raise ValueError("%s: the gradient of %s has shape %s, but the parameter has shape %s"
                                 % (who, p.name, tuple(g.shape), tuple(p.shape)))
        return grads

    def scale_grad(self, gradients):
        """The gradients divided by loss_scale (MindSpore's Optimizer.scale_grad)."""
        if self.loss_scale == 1.0:
            return tuple(gradients)
        return tuple(g / self.loss_scale for g in gradients)

    def decay_weight(self, gradients):
        """weight_decay * parameter added to each gradient whose decay flag is set (a group's
        own weight_decay, or the optimizer's for parameters not named beta or gamma)."""
        return tuple(g + p * wd if wd else g
                     for p, g, wd in zip(self._param_list, gradients, self._group_wd))

    def gradients_centralization(self, gradients):
        """For the groups with grad_centralization: a gradient of 2 or more dims whose dim 1 is a
        multiple of 16 (a convolution's) less its mean over every dim but the first."""
        out = []
        for g, gc in zip(gradients, self.grad_centralization_flags):
            if gc and g.ndim >= 2 and g.shape[1] % 16 == 0:
                g = g - F.mean(g, tuple(range(1, g.ndim)), True)
            out.append(g)
        return tuple(out)

    def get_weight_decay(self):
        return tuple(self._group_wd) if self.is_group else self.weight_decay

    def get_lr_parameter(self, param):
        """The learning rate of a Parameter (or a list of them): its learning-rate Parameter
        ('learning_rate' or 'learning_rate_group_<i>'; a table's 1-D one), or its schedule."""
        one = isinstance(param, Parameter)
        ps = [param] if one else param
        if not isinstance(ps, list):
            raise TypeError("For 'get_lr_parameter', the 'param' must be 'Parameter' or 'list' type, "
                            "but got %s." % type(param).__name__)
        ids = [id(p) for p in self._param_list]
        out = []
        for p in ps:
            if id(p) not in ids:
                raise ValueError("For 'get_lr_parameter', the parameter %s is not in optimizer, "
                                 "please check whether the argument 'param' is correct."
                                 % getattr(p, "name", p))
            own = self._lrs[ids.index(id(p))]
            out.append(own.learning_rate if isinstance(own, (_ConvertToCell, _IteratorLearningRate)) else own)
        return out[0] if one else out

    def _prepared(self, grads):
        """The gradients checked, unscaled, with weight decay added and centralised."""
        # (MindSpore decays before unscaling with a decay times loss_scale: the same sum)
        grads = self.decay_weight(self.scale_grad(self._checked(grads)))
        if any(self.grad_centralization_flags):
            grads = self.gradients_centralization(grads)
        return list(grads)

    def construct(self, grads):
        grads = self._prepared(grads)
        step = self._step()
        lr = None if self.is_group_lr else _lr_value(self.learning_rate, step, self.dynamic_lr)
        for i, (p, g) in enumerate(zip(self._param_list, grads)):
            cur = _lr_value(self._lrs[i], step, self.dynamic_lr) if self.is_group_lr else lr
            if cur.dtype != p.dtype:  # (a float16 parameter stays float16)
                cur = cur.astype(p.dtype)
            self._update(i, p, g, cur, step)
        assign(self.global_step, self.global_step + 1)
        return True

    def _update(self, i, p, g, lr, step):
        raise NotImplementedError


class SGD(Optimizer):
    """nn.SGD(params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
    nesterov=False, loss_scale=1.0): buf = momentum buf + (1 - dampening) g (buf = g on the first
    step), then p -= lr (g + momentum buf) with nesterov, else p -= lr buf."""

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _check_number("SGD", "momentum", momentum, 0)
        self.dampening = _check_number("SGD", "dampening", dampening, 0)
        if not isinstance(nesterov, bool):
            raise TypeError("SGD: nesterov must be a bool, got %r" % (nesterov,))
        if nesterov and (self.momentum <= 0 or self.dampening != 0):
            raise ValueError("SGD: nesterov needs momentum > 0 and dampening = 0")
        self.nesterov = nesterov
        # MindSpore's state: the momentum buffers and 'stat', 1 until a parameter's first update
        self.accum = self._state("accum")
        self.stat = _filled(self, "stat", 1.0)

    def _update(self, i, p, g, lr, step):
        if self.momentum <= 0:
            assign(p, p - g * lr)
            return
        buf, stat = self.accum[i], self.stat[i]
        # buf = g on the first step (stat 1): elementwise coefficients, one fused loop
        keep = (1.0 - stat) * self.momentum
        take = stat + (1.0 - stat) * (1.0 - self.dampening)
        new_buf = buf * keep + g * take
        assign(buf, new_buf)
        assign(stat, stat * 0.0)
        d = g + new_buf * self.momentum if self.nesterov else new_buf
        assign(p, p - d * lr)


class Momentum(Optimizer):
    """nn.Momentum(params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
    use_nesterov=False): accum = momentum accum + g; p -= lr accum (nesterov: lr (g + momentum
    accum))."""

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _check_number("Momentum", "momentum", momentum, 0)
        if not isinstance(use_nesterov, bool):
            raise TypeError("Momentum: use_nesterov must be a bool, got %r" % (use_nesterov,))
        self.use_nesterov = use_nesterov
        self.moments = self._state("moments")

    def _update(self, i, p, g, lr, step):
        acc = self.moments[i]
        new = acc * self.momentum + g
        assign(acc, new)
        d = g + new * self.momentum if self.use_nesterov else new
        assign(p, p - d * lr)


class Adam(Optimizer):
    """nn.Adam(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
    use_nesterov=False, weight_decay=0.0, loss_scale=1.0): m = b1 m + (1 - b1) g,
    v = b2 v + (1 - b2) g^2, p -= lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + eps) (MindSpore's
    Adam: eps is added to sqrt(v) before the bias correction)."""

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
                 use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1 = _check_number("Adam", "beta1", beta1, 0, 1)
        self.beta2 = _check_number("Adam", "beta2", beta2, 0, 1)
        self.eps = _check_number("Adam", "eps", eps, 0, lo_open=True)
        if self.beta1 >= 1 or self.beta2 >= 1:
            raise ValueError("Adam: beta1 and beta2 must be in [0, 1)")
        self.use_nesterov = bool(use_nesterov)
        # MindSpore's state: beta1^t and beta2^t (shape (1,)), and the two moments
        self.beta1_power = Parameter(Tensor([1.0], _dt.float32), name="beta1_power", requires_grad=False)
        self.beta2_power = Parameter(Tensor([1.0], _dt.float32), name="beta2_power", requires_grad=False)
        self.moment1 = self._state("moment1")
        self.moment2 = self._state("moment2")

    def construct(self, grads):
        # the powers advance once a step, before the updates read them (as MindSpore's Adam)
        assign(self.beta1_power, self.beta1_power * self.beta1)
        assign(self.beta2_power, self.beta2_power * self.beta2)
        return Optimizer.construct(self, grads)

    def _update(self, i, p, g, lr, step):
        m, v = self.moment1[i], self.moment2[i]
        new_m = m * self.beta1 + g * (1.0 - self.beta1)
        new_v = v * self.beta2 + F.square(g) * (1.0 - self.beta2)
        assign(m, new_m)
        assign(v, new_v)
        b1p, b2p = self.beta1_power.reshape(()), self.beta2_power.reshape(())
        corr = F.sqrt(1.0 - b2p) / (1.0 - b1p)
        if self.use_nesterov:
            num = new_m * self.beta1 + g * (1.0 - self.beta1)
        else:
            num = new_m
        assign(p, p - num / (F.sqrt(new_v) + self.eps) * (corr * lr))


__all__ = ["Optimizer", "SGD", "Momentum", "Adam"]


# ---- AdamWeightDecay, RMSProp, Adagrad, Lamb, LARS, FTRL (MindSpore 2.5's update rules) --------

def _check_float(who, name, v, lo=None, hi=None, lo_open=False, hi_open=False):
    """MindSpore's hyper-parameter checks: a Python float (an int is a TypeError), in range."""
    if isinstance(v, bool) or not isinstance(v, float):
        raise TypeError("For '%s', the type of '%s' must be float, but got %s."
                        % (who, name, type(v).__name__))
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError("For '%s', the '%s' must be %s %s, but got %r."
                         % (who, name, ">" if lo_open else ">=", lo, v))
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise ValueError("For '%s', the '%s' must be %s %s, but got %r."
                         % (who, name, "<" if hi_open else "<=", hi, v))
    return v


def _check_bool(who, name, v):
    if not isinstance(v, bool):
        raise TypeError("For '%s', the type of '%s' must be bool, but got %s."
                        % (who, name, type(v).__name__))
    return v


def _filled(opt, prefix, value):
    """One Parameter per parameter of opt, filled with value (RMSProp's ones, Adagrad's accum)."""
    return tuple(Parameter(_C.op("full", (), {"shape": tuple(p.shape), "value": float(value),
                                                  "dtype": p.dtype}),
                           name=prefix + "." + p.name, requires_grad=False)
                 for p in opt.parameters)


def _norm(x):
    return F.sqrt(F.sum(F.square(x)))


def _trust_ratio(w_norm, u_norm):
    """||w|| / ||u|| where both are positive, else 1 (Lamb's layer-wise ratio)."""
    ok = F.logical_and(F.greater(w_norm, 0.0), F.greater(u_norm, 0.0))
    return F.where(ok, w_norm / F.where(ok, u_norm, 1.0), 1.0)


class _DecoupledDecay(Optimizer):
    """Optimizers whose weight decay enters the update itself (AdamWeightDecay, Lamb), not the
    gradient: decay_weight leaves the gradients as they are."""

    def decay_weight(self, gradients):
        return tuple(gradients)


class AdamWeightDecay(_DecoupledDecay):
    """nn.AdamWeightDecay(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6,
    weight_decay=0.0): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2 (no bias correction),
    u = m / (sqrt(v) + eps) + weight_decay * p (for parameters with a decay flag), p -= lr u."""

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        who = "AdamWeightDecay"
        self.beta1 = _check_float(who, "beta1", beta1, 0.0, 1.0, True, True)
        self.beta2 = _check_float(who, "beta2", beta2, 0.0, 1.0, True, True)
        self.eps = _check_float(who, "eps", eps, 0.0, lo_open=True)
        self.moments1 = self._state("adam_m")
        self.moments2 = self._state("adam_v")

    def _update(self, i, p, g, lr, step):
        m, v = self.moments1[i], self.moments2[i]
        new_m = m * self.beta1 + g * (1.0 - self.beta1)
        new_v = v * self.beta2 + F.square(g) * (1.0 - self.beta2)
        assign(m, new_m)
        assign(v, new_v)
        u = new_m / (F.sqrt(new_v) + self.eps)
        wd = self._group_wd[i]
        if wd:
            u = u + p * wd
        assign(p, p - u * lr)


class RMSProp(Optimizer):
    """nn.RMSProp(params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10,
    use_locking=False, centered=False, loss_scale=1.0, weight_decay=0.0):
    s = decay s + (1 - decay) g^2 (s starts at ones, as MindSpore's mean_square),
    m = momentum m + lr g / sqrt(s + eps), p -= m; centered also keeps the mean gradient
    a = decay a + (1 - decay) g and divides by sqrt(s - a^2 + eps)."""

    def __init__(self, params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        who = "RMSProp"
        self.decay = _check_float(who, "decay", decay, 0.0)
        self.momentum = _check_float(who, "momentum", momentum, 0.0)
        self.epsilon = _check_float(who, "epsilon", epsilon, 0.0, lo_open=True)
        _check_bool(who, "use_locking", use_locking)
        self.centered = _check_bool(who, "centered", centered)
        self.mg = self._state("mean_grad") if centered else None
        self.ms = _filled(self, "mean_square", 1.0)
        self.moment = self._state("moment")

    def _update(self, i, p, g, lr, step):
        ms, mom = self.ms[i], self.moment[i]
        new_ms = ms * self.decay + F.square(g) * (1.0 - self.decay)
        assign(ms, new_ms)
        if self.centered:
            mg = self.mg[i]
            new_mg = mg * self.decay + g * (1.0 - self.decay)
            assign(mg, new_mg)
            denom = F.sqrt(new_ms - F.square(new_mg) + self.epsilon)
        else:
            denom = F.sqrt(new_ms + self.epsilon)
        new_mom = mom * self.momentum + g * lr / denom
        assign(mom, new_mom)
        assign(p, p - new_mom)


class Adagrad(Optimizer):
    """nn.Adagrad(params, accum=0.1, learning_rate=0.001, update_slots=True, loss_scale=1.0,
    weight_decay=0.0): a += g^2 (a starts at accum; kept when update_slots is False),
    p -= lr g / sqrt(a)."""

    def __init__(self, params, accum=0.1, learning_rate=0.001, update_slots=True, loss_scale=1.0,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.init_accum = _check_float("Adagrad", "accum", accum, 0.0)
        self.update_slots = _check_bool("Adagrad", "update_slots", update_slots)
        self.accum = _filled(self, "accum", accum)

    def _update(self, i, p, g, lr, step):
        a = self.accum[i]
        if self.update_slots:
            a_new = a + F.square(g)
            assign(a, a_new)
        else:
            a_new = a
        assign(p, p - g * lr / F.sqrt(a_new))


class Lamb(_DecoupledDecay):
    """nn.Lamb(params, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
    Adam's bias-corrected moments at step t (from 1), u = m^ / (sqrt(v^) + eps) + weight_decay p
    (decay-flagged parameters), then p -= lr (||p|| / ||u||) u, the ratio 1 where either norm
    is 0."""

    def __init__(self, params, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        who = "Lamb"
        self.beta1 = _check_float(who, "beta1", beta1, 0.0, 1.0, True, True)
        self.beta2 = _check_float(who, "beta2", beta2, 0.0, 1.0, True, True)
        self.eps = _check_float(who, "eps", eps, 0.0, lo_open=True)
        self.moments1 = self._state("lamb_m")
        self.moments2 = self._state("lamb_v")

    def _update(self, i, p, g, lr, step):
        m, v = self.moments1[i], self.moments2[i]
        new_m = m * self.beta1 + g * (1.0 - self.beta1)
        new_v = v * self.beta2 + F.square(g) * (1.0 - self.beta2)
        assign(m, new_m)
        assign(v, new_v)
        t = (step + 1).astype(_dt.float32)
        mh = new_m / (1.0 - F.pow(self.beta1, t))
        vh = new_v / (1.0 - F.pow(self.beta2, t))
        u = mh / (F.sqrt(vh) + self.eps)
        wd = self._group_wd[i]
        if wd:
            u = u + p * wd
        ratio = _trust_ratio(_norm(p), _norm(u))
        assign(p, p - u * (ratio * lr))


class LARS(Optimizer):
    """nn.LARS(optimizer, epsilon=1e-05, coefficient=0.001, use_clip=False,
    lars_filter=lambda x: 'LayerNorm' not in x.name and 'bias' not in x.name): rescales each
    filtered gradient before the wrapped optimizer runs: with w = ||p||, n = ||g||,
    r = coefficient w / (n + wd w + epsilon) (1 where w or n is 0; with use_clip min(r / lr, 1)),
    g = r (g + wd p). The weight decay and loss scale move from the wrapped optimizer to LARS."""

    def __init__(self, optimizer, epsilon=1e-05, coefficient=0.001, use_clip=False,
                 lars_filter=lambda x: "LayerNorm" not in x.name and "bias" not in x.name):
        Cell.__init__(self, auto_prefix=False)
        who = "LARS"
        if not isinstance(optimizer, Optimizer):
            raise TypeError("For '%s', the type of 'optimizer' must be Optimizer, but got %s."
                            % (who, type(optimizer).__name__))
        self.epsilon = _check_float(who, "epsilon", epsilon)
        self.coefficient = _check_float(who, "coefficient", coefficient)
        self.use_clip = _check_bool(who, "use_clip", use_clip)
        self.opt = optimizer
        self.parameters = optimizer.parameters
        self._param_list = optimizer._param_list
        self.is_group = optimizer.is_group
        self.is_group_lr = optimizer.is_group_lr
        self.lars_flag = tuple(bool(lars_filter(p)) for p in self._param_list)
        self.decay_flags = optimizer.decay_flags
        self.loss_scale = optimizer.loss_scale
        # LARS takes over the decay and the unscaling; the wrapped optimizer sees neither
        self._lars_wd = [wd if flag else 0.0 for wd, flag in zip(optimizer._group_wd, self.decay_flags)]
        self.weight_decay = optimizer.weight_decay
        optimizer._group_wd = [0.0] * len(optimizer._group_wd)
        optimizer.decay_flags = tuple(False for _ in self.decay_flags)
        optimizer.weight_decay = 0.0
        optimizer.loss_scale = 1.0
        self.global_step = optimizer.global_step
        # the Optimizer attributes readers expect (get_lr, get_weight_decay, TrainOneStepCell)
        self.dynamic_lr = optimizer.dynamic_lr
        self.learning_rate = optimizer.learning_rate
        self._lrs = optimizer._lrs
        self._group_wd = list(self._lars_wd)
        self.is_group_params_ordered = optimizer.is_group_params_ordered
        self.grad_centralization_flags = optimizer.grad_centralization_flags

    def construct(self, gradients):
        opt = self.opt
        grads = tuple(gradients)
        if self.loss_scale != 1.0:
            grads = tuple(g / self.loss_scale for g in grads)
        step = opt._step()
        out = []
        for i, (p, g) in enumerate(zip(self._param_list, grads)):
            if not self.lars_flag[i]:
                out.append(g)
                continue
            wd = self._lars_wd[i]
            w_norm, g_norm = _norm(p), _norm(g)
            ratio = w_norm * self.coefficient / (g_norm + w_norm * wd + self.epsilon)
            ok = F.logical_and(F.greater(w_norm, 0.0), F.greater(g_norm, 0.0))
            ratio = F.where(ok, ratio, 1.0)
            if self.use_clip:
                ratio = F.minimum(ratio / _lr_value(opt._lrs[i], step, opt.dynamic_lr), 1.0)
            out.append((g + p * wd) * ratio if wd else g * ratio)
        return opt(tuple(out))


class FTRL(Optimizer):
    """nn.FTRL(params, initial_accum=0.1, learning_rate=0.001, lr_power=-0.5, l1=0.0, l2=0.0,
    use_locking=False, loss_scale=1.0, weight_decay=0.0): per element, a' = a + g^2,
    z += g - (a'^-lr_power - a^-lr_power) / lr * p, p = (sign(z) l1 - z) / (a'^-lr_power / lr
    + 2 l2) where |z| > l1, else 0. learning_rate is a fixed float, as in MindSpore."""

    def __init__(self, params, initial_accum=0.1, learning_rate=0.001, lr_power=-0.5, l1=0.0, l2=0.0,
                 use_locking=False, loss_scale=1.0, weight_decay=0.0):
        who = "FTRL"
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)):
            raise TypeError("For '%s', the 'learning_rate' must be a float (a fixed learning rate), "
                            "but got %s." % (who, type(learning_rate).__name__))
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if self.is_group_lr:
            raise RuntimeError("For 'FTRL', the learning rate is fixed; a group's 'lr' is not "
                               "supported.")
        self.initial_accum = _check_float(who, "initial_accum", initial_accum, 0.0)
        _check_number(who, "learning_rate", learning_rate, 0, lo_open=True)
        self.lr_power = _check_float(who, "lr_power", lr_power, hi=0.0)
        self.l1 = _check_float(who, "l1", l1, 0.0)
        self.l2 = _check_float(who, "l2", l2, 0.0)
        _check_bool(who, "use_locking", use_locking)
        self.moments = _filled(self, "moments", initial_accum)
        self.linear = self._state("linear")

    def _update(self, i, p, g, lr, step):
        a, z = self.moments[i], self.linear[i]
        a_new = a + F.square(g)
        ka, kn = F.pow(a, -self.lr_power), F.pow(a_new, -self.lr_power)
        z_new = z + g - (kn - ka) / lr * p
        quad = kn / lr + 2.0 * self.l2
        p_new = F.where(F.greater(F.abs(z_new), self.l1), (F.sign(z_new) * self.l1 - z_new) / quad,
                        F.zeros_like(p))
        assign(a, a_new)
        assign(z, z_new)
        assign(p, p_new)


__all__ += ["AdamWeightDecay", "RMSProp", "Adagrad", "Lamb", "LARS", "FTRL"]
