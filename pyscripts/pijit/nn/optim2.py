"""Optimizers beyond nn.optim's first set, with MindSpore's update rules and checks: ASGD, AdaMax,
Adadelta, Rprop, ProximalAdagrad, LazyAdam and AdamOffload.

They share nn.optim's Optimizer: parameter groups (lr, weight_decay, grad_centralization,
order_params), learning-rate tables and schedules, weight decay added to the gradient, loss_scale
division, and state kept in Parameters so a jitted step reads and writes it like the weights.
Each `_update(i, p, g, lr, step)` sees the gradient already prepared and `step`, the number of
steps taken before this one (MindSpore's global_step less one while the update runs).

LazyAdam and AdamOffload are Adam for dense gradients: LazyAdam's lazy rows only differ for a
sparse (RowTensor) gradient, which pijit's autodiff never produces, and AdamOffload's difference
is where MindSpore keeps the moments (host memory); pijit runs on the host already, so the
moments stay where the parameters are.
"""
from pijit import dtype as _dt
from pijit import ops as F
from pijit.nn.optim import Optimizer, Adam, _check_float, _check_bool, _filled
from pijit.ops.misc import assign
from pijit.parameter import Parameter
from pijit.tensor import Tensor


def _check_unit_open(who, name, v):
    return _check_float(who, name, v, 0.0, 1.0, True, True)


class ASGD(Optimizer):
    """nn.ASGD(params, learning_rate=0.1, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0):
    with eta the step size (lr on the first step) and mu the averaging rate (1 at first),
    p = p (1 - lambd eta) - eta g; ax = p while mu is 1, else ax += (p - ax) mu; then for step
    t (from 1) eta = lr / (1 + lambd lr t)^alpha and mu = 1 / max(1, t - t0)."""

    def __init__(self, params, learning_rate=0.1, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        who = "ASGD"
        for name, v in (("lambd", lambd), ("alpha", alpha), ("t0", t0)):
            _check_float(who, name, v)
        self.lambd, self.alpha, self.t0 = lambd, alpha, t0
        # one scalar step size and averaging rate per parameter, as MindSpore keeps them
        self.eta = tuple(Parameter(Tensor(0.0, _dt.float32), name="eta_" + p.name,
                                   requires_grad=False) for p in self.parameters)
        self.mu = tuple(Parameter(Tensor(1.0, _dt.float32), name="mu_" + p.name,
                                  requires_grad=False) for p in self.parameters)
        self.ax = self._state("ax")

    def _update(self, i, p, g, lr, step):
        eta, mu, ax = self.eta[i], self.mu[i], self.ax[i]
        first = F.equal(step, 0)
        e = F.where(first, F.zeros_like(eta) + lr, eta)
        new_p = p * (1.0 - e * self.lambd) - e * g
        assign(p, new_p)
        assign(ax, F.where(F.not_equal(mu, 1.0), ax + (new_p - ax) * mu, new_p))
        t = (step + 1).astype(_dt.float32)
        assign(eta, F.zeros_like(eta) + lr / F.pow(1.0 + t * (self.lambd * lr), self.alpha))
        assign(mu, F.zeros_like(mu) + 1.0 / F.maximum(t - self.t0, 1.0))


class AdaMax(Optimizer):
    """nn.AdaMax(params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-08,
    weight_decay=0.0, loss_scale=1.0): m = b1 m + (1 - b1) g, v = max(b2 v, |g|),
    p -= lr / (1 - b1^t) m / (v + eps) at step t (from 1)."""

    def __init__(self, params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-08,
                 weight_decay=0.0, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        who = "AdaMax"
        self.beta1 = _check_unit_open(who, "beta1", beta1)
        self.beta2 = _check_unit_open(who, "beta2", beta2)
        self.eps = _check_float(who, "eps", eps, 0.0, lo_open=True)
        self.moment1 = self._state("moment1")
        self.moment2 = self._state("moment2")

    def _update(self, i, p, g, lr, step):
        m, v = self.moment1[i], self.moment2[i]
        new_m = m * self.beta1 + g * (1.0 - self.beta1)
        new_v = F.maximum(v * self.beta2, F.abs(g))
        assign(m, new_m)
        assign(v, new_v)
        t = (step + 1).astype(_dt.float32)
        assign(p, p - new_m / (new_v + self.eps) * (lr / (1.0 - F.pow(self.beta1, t))))


class Adadelta(Optimizer):
    """nn.Adadelta(params, learning_rate=1.0, rho=0.9, epsilon=1e-6, loss_scale=1.0,
    weight_decay=0.0): a = rho a + (1 - rho) g^2, u = sqrt(d + eps) / sqrt(a + eps) g,
    d = rho d + (1 - rho) u^2, p -= lr u."""

    def __init__(self, params, learning_rate=1.0, rho=0.9, epsilon=1e-6, loss_scale=1.0,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        who = "Adadelta"
        self.rho = _check_float(who, "rho", rho, 0.0, 1.0)
        self.epsilon = _check_float(who, "epsilon", epsilon, 0.0)
        self.accum = self._state("accum")
        self.accum_update = self._state("accum_update")

    def _update(self, i, p, g, lr, step):
        a, d = self.accum[i], self.accum_update[i]
        new_a = a * self.rho + F.square(g) * (1.0 - self.rho)
        u = F.sqrt(d + self.epsilon) / F.sqrt(new_a + self.epsilon) * g
        assign(a, new_a)
        assign(d, d * self.rho + F.square(u) * (1.0 - self.rho))
        assign(p, p - u * lr)


class Rprop(Optimizer):
    """nn.Rprop(params, learning_rate=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.),
    weight_decay=0.0): each element's step size (lr at first) grows by etaplus while its
    gradient keeps its sign, shrinks by etaminus when the sign flips (that step then moves
    nothing and forgets the gradient), clipped to step_sizes; p -= sign(g) step."""

    def __init__(self, params, learning_rate=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.),
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        who = "Rprop"
        if not isinstance(etas, tuple):
            raise TypeError("For Rprop, etas must be a tuple, but got %s." % type(etas).__name__)
        if len(etas) != 2:
            raise ValueError("For Rprop, etas must be a tuple with the size of 2, but got %d."
                             % len(etas))
        if not isinstance(step_sizes, tuple):
            raise TypeError("For Rprop, step_sizes must be a tuple, but got %s."
                            % type(step_sizes).__name__)
        if len(step_sizes) != 2:
            raise ValueError("For Rprop, step_sizes must be a tuple with the size of 2, but got %d."
                             % len(step_sizes))
        if step_sizes[0] > step_sizes[1]:
            raise ValueError("For Rprop, maximal step size should not be less than minimal step "
                             "size, but got %s > %s." % (step_sizes[0], step_sizes[1]))
        _check_unit_open(who, "etaminus", etas[0])
        _check_float(who, "etaplus", etas[1])
        if etas[1] <= 1.0:
            raise ValueError("For Rprop, etaplus must be greater than 1.0, but got etaplus %s."
                             % (etas[1],))
        _check_float(who, "min_step_sizes", step_sizes[0])
        _check_float(who, "max_step_sizes", step_sizes[1])
        self.etaminus, self.etaplus = etas
        self.step_size_min, self.step_size_max = step_sizes
        self.prev = self._state("prev")
        self.step_size = self._state("step_size")

    def _update(self, i, p, g, lr, step):
        prev, size = self.prev[i], self.step_size[i]
        size = F.where(F.equal(step, 0), F.zeros_like(size) + lr, size)
        s = F.sign(g * prev)
        factor = F.where(F.greater(s, 0.0), F.full_like(s, self.etaplus),
                         F.where(F.less(s, 0.0), F.full_like(s, self.etaminus), F.ones_like(s)))
        new_size = F.clamp(size * factor, self.step_size_min, self.step_size_max)
        g_used = F.where(F.less(s, 0.0), F.zeros_like(g), g)
        assign(p, p - F.sign(g_used) * new_size)
        assign(prev, g_used)
        assign(self.step_size[i], new_size)


class ProximalAdagrad(Optimizer):
    """nn.ProximalAdagrad(params, accum=0.1, learning_rate=0.001, l1=0.0, l2=0.0,
    use_locking=False, loss_scale=1.0, weight_decay=0.0): a += g^2 (a starts at accum),
    v = p - lr g / sqrt(a), p = sign(v) max(|v| - lr l1, 0) / (1 + lr l2)."""

    def __init__(self, params, accum=0.1, learning_rate=0.001, l1=0.0, l2=0.0, use_locking=False,
                 loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        who = "ProximalAdagrad"
        self.init_accum = _check_float(who, "accum", accum, 0.0)
        self.l1 = _check_float(who, "l1", l1, 0.0)
        self.l2 = _check_float(who, "l2", l2, 0.0)
        self.use_locking = _check_bool(who, "use_locking", use_locking)
        self.accum = _filled(self, "accum", accum)

    def _update(self, i, p, g, lr, step):
        a = self.accum[i]
        new_a = a + F.square(g)
        assign(a, new_a)
        v = p - g * lr / F.sqrt(new_a)
        shrunk = F.maximum(F.abs(v) - lr * self.l1, 0.0)
        assign(p, F.sign(v) * shrunk / (1.0 + lr * self.l2))


def _check_adam(who, beta1, beta2, eps, weight_decay):
    _check_unit_open(who, "beta1", beta1)
    _check_unit_open(who, "beta2", beta2)
    _check_float(who, "eps", eps, 0.0, lo_open=True)
    if isinstance(weight_decay, bool) or not isinstance(weight_decay, (int, float)):
        raise TypeError("For '%s', the type of 'weight_decay' must be float, but got %s."
                        % (who, type(weight_decay).__name__))


class LazyAdam(Adam):
    """nn.LazyAdam(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
    use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0): Adam's update
    (nn.Adam) for dense gradients, the only kind pijit produces (see the module notes)."""

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
        _check_adam("LazyAdam", beta1, beta2, eps, weight_decay)
        _check_bool("LazyAdam", "use_locking", use_locking)
        _check_bool("LazyAdam", "use_nesterov", use_nesterov)
        super().__init__(params, learning_rate, beta1, beta2, eps, use_locking, use_nesterov,
                         weight_decay, loss_scale)


class AdamOffload(Adam):
    """nn.AdamOffload(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
    use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0): Adam's update with
    the moments in host memory, where pijit keeps them anyway (see the module notes)."""

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
        _check_adam("AdamOffload", beta1, beta2, eps, weight_decay)
        _check_bool("AdamOffload", "use_locking", use_locking)
        _check_bool("AdamOffload", "use_nesterov", use_nesterov)
        super().__init__(params, learning_rate, beta1, beta2, eps, use_locking, use_nesterov,
                         weight_decay, loss_scale)


__all__ = ["ASGD", "AdaMax", "Adadelta", "Rprop", "ProximalAdagrad", "LazyAdam", "AdamOffload"]
