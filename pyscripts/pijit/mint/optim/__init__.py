"""mindspore.mint.optim: PyTorch-style optimizers (AdamW, Adam, SGD) with torch's argument names
(lr, betas, weight_decay, amsgrad, maximize) and update rules, as pijit optimizer Cells:
`optimizer(grads)` updates the parameters in place (replayed after the graph under jit).

Parameter groups are dicts with 'params' and any of 'lr', 'weight_decay' (and 'betas', 'eps',
'momentum', ... for the optimizer's own hyper-parameters)."""
from pijit import _C
from pijit import dtype as _dt
from pijit import ops as _F
from pijit.nn.cell import Cell as _Cell
from pijit.ops.misc import assign as _assign
from pijit.parameter import Parameter as _Parameter, ParameterTuple as _ParameterTuple
from pijit.tensor import Tensor as _Tensor


def _number(who, name, v, lo=None, hi=None, hi_open=False):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("%s: %s must be a number, got %r" % (who, name, v))
    if (lo is not None and v < lo) or (hi is not None and (v > hi or (hi_open and v == hi))):
        raise ValueError("%s: invalid %s value: %r" % (who, name, v))
    return float(v)


class _TorchOptimizer(_Cell):
    """The base: the parameters (a list, or groups of dicts overriding the defaults), the step
    count, one set of hyper-parameters per parameter, and construct(grads)."""

    def __init__(self, params, defaults):
        super().__init__(auto_prefix=False)
        who = type(self).__name__
        if isinstance(params, _Parameter):
            raise TypeError("%s: params must be a list of Parameters or of group dicts, got one "
                            "Parameter" % who)
        items = list(params)
        if not items:
            raise ValueError("%s: got an empty parameter list" % who)
        plist, hyper = [], []
        for i, it in enumerate(items):
            group = it if isinstance(it, dict) else {"params": [it]}
            if "params" not in group:
                raise ValueError("%s: parameter group %d has no 'params'" % (who, i))
            unknown = set(group) - set(defaults) - {"params"}
            if unknown:
                raise ValueError("%s: parameter group %d has unknown keys %s"
                                 % (who, i, sorted(unknown)))
            ps = group["params"]
            ps = [ps] if isinstance(ps, _Parameter) else list(ps)
            h = dict(defaults)
            h.update({k: v for k, v in group.items() if k != "params"})
            _number(who, "lr", h["lr"], 0)
            _number(who, "weight_decay", h["weight_decay"], 0)
            for p in ps:
                if not isinstance(p, _Parameter):
                    raise TypeError("%s: expected Parameters, got %s" % (who, type(p).__name__))
                plist.append(p)
                hyper.append(h)
        self.parameters = _ParameterTuple(plist)
        # A plain tuple for the updates: capture reads its items along guarded paths (as the
        # Parameters the network reads), so a jitted step writes the same graph inputs.
        self._param_list = tuple(plist)
        self._hyper = hyper
        self.defaults = dict(defaults)
        self.step_count = _Parameter(_Tensor([0], _dt.int32), name="step_count",
                                     requires_grad=False)

    def _state(self, prefix):
        """One zero-initialised Parameter per parameter (moments, momentum buffers)."""
        return tuple(self.parameters.clone(prefix=prefix, init="zeros"))

    def construct(self, grads):
        who = type(self).__name__
        if not isinstance(grads, (tuple, list)):
            raise TypeError("%s: expected a tuple of gradients, one per parameter" % who)
        if len(grads) != len(self._param_list):
            raise ValueError("%s: %d gradients for %d parameters"
                             % (who, len(grads), len(self._param_list)))
        step = self.step_count.copy().reshape(())
        for i, (p, g) in enumerate(zip(self._param_list, grads)):
            if not isinstance(g, _C.TensorBase):
                raise TypeError("%s: the gradient of %s is a %s, not a Tensor"
                                % (who, p.name, type(g).__name__))
            if tuple(g.shape) != tuple(p.shape):
                raise ValueError("%s: the gradient of %s has shape %s, but the parameter has "
                                 "shape %s" % (who, p.name, tuple(g.shape), tuple(p.shape)))
            h = self._hyper[i]
            if h.get("maximize"):
                g = -g
            self._step_one(i, p, g, float(h["lr"]), step, float(h["weight_decay"]), h)
        _assign(self.step_count, self.step_count + 1)
        return True


class AdamW(_TorchOptimizer):
    """AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
    maximize=False): p *= 1 - lr wd (decoupled); m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
    p -= lr / (1 - b1^t) m / (sqrt(v / (1 - b2^t)) + eps) (amsgrad: the running max of v)."""

    _DECOUPLED = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False):
        who = type(self).__name__
        b1, b2 = betas
        _number(who, "beta1", b1, 0, 1, True)
        _number(who, "beta2", b2, 0, 1, True)
        _number(who, "eps", eps, 0)
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay,
                                  "betas": (float(b1), float(b2)), "eps": float(eps),
                                  "amsgrad": bool(amsgrad), "maximize": bool(maximize)})
        self.exp_avg = self._state("exp_avg")
        self.exp_avg_sq = self._state("exp_avg_sq")
        self.max_exp_avg_sq = self._state("max_exp_avg_sq") if _builtin_any(
            h["amsgrad"] for h in self._hyper) else None

    def _step_one(self, i, p, g, lr, step, wd, h):
        b1, b2 = h["betas"]
        if wd:
            if self._DECOUPLED:
                _assign(p, p * (1.0 - lr * wd))
            else:
                g = g + p * wd
        m, v = self.exp_avg[i], self.exp_avg_sq[i]
        new_m = m * b1 + g * (1.0 - b1)
        new_v = v * b2 + _F.square(g) * (1.0 - b2)
        _assign(m, new_m)
        _assign(v, new_v)
        if h["amsgrad"]:
            mx = self.max_exp_avg_sq[i]
            new_v = _F.maximum(mx, new_v)
            _assign(mx, new_v)
        t = (step + 1).astype(_dt.float32)
        bc1 = 1.0 - _F.pow(b1, t)
        bc2 = 1.0 - _F.pow(b2, t)
        denom = _F.sqrt(new_v / bc2) + h["eps"]
        _assign(p, p - new_m / denom * (lr / bc1))


def _builtin_any(it):
    for v in it:
        if v:
            return True
    return False


class Adam(AdamW):
    """Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    maximize=False): as AdamW, with weight decay added to the gradient (L2)."""

    _DECOUPLED = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


class SGD(_TorchOptimizer):
    """SGD(params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
    maximize=False): g += wd p; buf = momentum buf + (1 - dampening) g (g on the first step);
    p -= lr (g + momentum buf if nesterov else buf)."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False):
        who = "SGD"
        _number(who, "momentum", momentum, 0)
        _number(who, "dampening", dampening, 0)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay,
                                  "momentum": float(momentum), "dampening": float(dampening),
                                  "nesterov": bool(nesterov), "maximize": bool(maximize)})
        self.momentum_buffer = self._state("momentum_buffer") if _builtin_any(
            h["momentum"] > 0 for h in self._hyper) else None

    def _step_one(self, i, p, g, lr, step, wd, h):
        if wd:
            g = g + p * wd
        mom = h["momentum"]
        if mom > 0:
            buf = self.momentum_buffer[i]
            first = _F.equal(step, 0).astype(g.dtype)
            new_buf = buf * ((1.0 - first) * mom) + g * (first + (1.0 - first) * (1.0 - h["dampening"]))
            _assign(buf, new_buf)
            g = g + new_buf * mom if h["nesterov"] else new_buf
        _assign(p, p - g * lr)


__all__ = ["AdamW", "Adam", "SGD"]
