"""MindSpore's Taylor-mode higher derivatives: ops.jet(fn, primals, series) and
ops.derivative(fn, primals, order).

Both push a truncated Taylor path through `fn`: each input moves along
x(t) = x0 + s1 t + s2 t^2/2! + ... + sn t^n/n! (s_k the k-th derivative of the input along the
path; derivative() uses s1 = 1 and the rest 0), and the results are the derivatives
d^k/dt^k fn(x(t)) at t = 0 for k = 1..n, each of the output's shape.

pijit gets them by composing its reverse mode: t is one scalar per element (a tensor of the
inputs' broadcast shape), and the k-th derivative is the gradient of the sum of the (k-1)-th one.
That is exact for what MindSpore's Taylor mode accepts, elementwise functions (sin, cos, exp,
log, +, -, *, / ... and their chains): output element i depends on t_i alone. A function whose
output has another shape than its inputs' broadcast shape is refused with ValueError."""
import math

from pijit import _C
from pijit import dtype as _dt
from pijit._state import runtime_state

__all__ = ["jet", "derivative"]

_ACCEPTED = (_dt.int32, _dt.int64, _dt.float32, _dt.float64)


def _float_input(who, x):
    if not isinstance(x, _C.TensorBase) or x.dtype not in _ACCEPTED:
        raise TypeError("For '%s', the elements of primals%s must be Tensors of int32, int64, float32 or "
                        "float64, but got %s" % (who, " and series" if who == "F.jet" else "",
                                                  x.dtype if isinstance(x, _C.TensorBase) else type(x).__name__))
    return x.astype(_dt.float32) if x.dtype in (_dt.int32, _dt.int64) else x


def _broadcast_shape(shapes):
    nd = max(len(s) for s in shapes)
    out = []
    for k in range(nd):
        dims = set(s[k - nd + len(s)] for s in shapes if k - nd + len(s) >= 0) - {1}
        if len(dims) > 1:
            raise ValueError("the inputs' shapes %s do not broadcast" % (list(shapes),))
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _path(x0, series, t):
    """x0 + sum_k series[k-1] t^k / k!, by Horner's rule (products and sums only: their
    gradients at t = 0 are exact)."""
    n = len(series)
    acc = series[n - 1] * (1.0 / math.factorial(n))
    for k in range(n - 1, 0, -1):
        acc = series[k - 1] * (1.0 / math.factorial(k)) + t * acc
    return x0 + t * acc


def _taylor(who, fn, primals, series):
    """(out_primals, per output the list of its n derivatives) for inputs primals (a list) and
    series (per input, a list of n tensors)."""
    from pijit.autodiff import grad
    from pijit.ops import functional as F

    outs = fn(*primals)
    single = not isinstance(outs, (tuple, list))
    outs = (outs,) if single else tuple(outs)
    shape = _broadcast_shape([tuple(p.shape) for p in primals])
    dtype = _dt.float64 if any(p.dtype == _dt.float64 for p in primals) else _dt.float32
    for o in outs:
        if not isinstance(o, _C.TensorBase):
            raise TypeError("For '%s', fn must return Tensors, but got %s" % (who, type(o).__name__))
        if tuple(o.shape) != shape:
            raise ValueError("For '%s', Taylor mode takes elementwise functions: an output of shape %s "
                             "from inputs of broadcast shape %s" % (who, tuple(o.shape), shape))
    t0 = F.zeros(shape, dtype)
    n = len(series[0])

    def along(t):
        return fn(*[_path(p, s, t) for p, s in zip(primals, series)])

    result = []
    for j in range(len(outs)):
        g = (lambda t: along(t)) if single else (lambda t, j=j: along(t)[j])
        derivs = []
        for _ in range(n):
            g = _next(grad, g, t0)
            derivs.append(g(t0))
        result.append(derivs)
    return list(outs), result


def _next(grad, g, t0):
    """t -> d/dt g(t), elementwise: the gradient of g's sum (zeros where g does not depend on t)."""
    from pijit.ops import functional as F
    dg = grad(lambda t: g(t).sum())

    def d(t):
        r = dg(t)
        return F.zeros_like(t0) if r is None else r
    return d


def _as_list(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


@runtime_state("takes gradients of gradients (capture gives those no graph)")
def jet(fn, primals, series):
    """ops.jet(fn, primals, series) -> (out_primals, out_series): primals a Tensor (or a tuple,
    one per input of fn), series a Tensor of shape (n,) + primal's shape (or a tuple of them)
    holding the input's 1st..n-th derivatives along the path; out_series stacks the output's
    1st..n-th derivatives, shape (n,) + output shape (a list of them when fn returns a tuple).
    int32/int64 inputs are computed in float32."""
    both_tensors = isinstance(primals, _C.TensorBase) and isinstance(series, _C.TensorBase)
    both_tuples = isinstance(primals, tuple) and isinstance(series, tuple)
    if not (both_tensors or both_tuples):
        raise TypeError("For 'F.jet', the 'primals' and `series` must be both Tensor or tuple.")
    if both_tuples and len(primals) != len(series):
        raise ValueError("The lengths of primals and series must be the same.")
    ps, ss = [], []
    for p, s in zip(_as_list(primals), _as_list(series)):
        p, s = _float_input("F.jet", p), _float_input("F.jet", s)
        if tuple(s.shape) == tuple(p.shape):
            s = s.reshape((1,) + tuple(p.shape))
        elif tuple(s.shape[1:]) != tuple(p.shape):
            raise ValueError("In series, the shape of each element must be the same as the primals.")
        ps.append(p)
        ss.append([s[k] for k in range(s.shape[0])])
    if len(set(len(s) for s in ss)) > 1:
        raise ValueError("For 'F.jet', every series must hold the same number of derivatives, got %s"
                         % [len(s) for s in ss])
    if ss and len(ss[0]) == 0:
        raise ValueError("For 'F.jet', series must hold at least one derivative.")
    from pijit.ops import functional as F
    outs, derivs = _taylor("F.jet", fn, ps, ss)
    stacked = [F.stack(d, 0) for d in derivs]
    if len(outs) > 1:
        return outs, stacked
    return outs[0], stacked[0]


@runtime_state("takes gradients of gradients (capture gives those no graph)")
def derivative(fn, primals, order):
    """ops.derivative(fn, primals, order) -> (out_primals, out_series): the order-th derivative
    of fn's output along every input moving at unit speed (jet with series 1, 0, ..., 0).
    out_series has the output's shape (a list when fn returns a tuple)."""
    if isinstance(order, bool) or not isinstance(order, int):
        raise TypeError("For `F.derivative`, the type of order must be int.")
    if order < 1:
        raise ValueError("For `F.derivative`, value of order should not be less than 1, but got %d." % order)
    if not isinstance(primals, (_C.TensorBase, tuple)):
        raise TypeError("For `F.derivative`, 'primals' must be a Tensor or a tuple of Tensors, but got %s"
                        % type(primals).__name__)
    from pijit.ops import functional as F
    ps = [_float_input("F.derivative", p) for p in _as_list(primals)]
    ss = [[F.ones_like(p)] + [F.zeros_like(p) for _ in range(order - 1)] for p in ps]
    outs, derivs = _taylor("F.derivative", fn, ps, ss)
    if len(outs) > 1:
        return outs, [d[-1] for d in derivs]
    return outs[0], derivs[0][-1]
