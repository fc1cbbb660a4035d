"""Special functions, random distributions, forward-mode autodiff and the remaining misc primitives
of mindspore.ops.

- Bessel functions J0, J1, Y0, Y1, K0, K1 and the scaled e^x K0, e^x K1 (ops.bessel_* and the
  Bessel* primitives), Hurwitz zeta (Zeta), the regularized incomplete beta (Betainc),
  mvlgamma/Mvlgamma, angle, Polar: registry ops of kernels/special2.cc (double-precision
  internally), differentiable where MindSpore is (graph/grads/special2_grads.cc).
- Eig (complex eigenvalues and unit right eigenvectors of real or complex matrices) and
  MatrixLogarithm (principal logarithm of complex matrices).
- Random draws on pijit's Philox stream (kernels/random.h): ops.gamma/Gamma, random_gamma,
  random_poisson/RandomPoisson, Cauchy, LogNormalReverse, ParameterizedTruncatedNormal,
  NonDeterministicInts, the candidate samplers. A primitive's seed pair (seed, seed2), when not
  both 0, fixes its draws (as pijit's other seeded primitives); 0, 0 draws from the global stream.
- Sparse optimizer updates (SparseApplyAdagradV2, SparseApplyFtrl(V2),
  SparseApplyProximalAdagrad), ApplyAdagradDA and LARSUpdate; they write Parameters in place (a
  graph break under jit, as pijit's other Apply* primitives); rows named twice by `indices` are
  updated one after the other, as MindSpore's CPU kernels do.
- SparseGatherV2, EmbeddingLookup, CheckNumerics, Assert, HookBackward, InsertGradientOf, Map.
- ops.jvp, jacfwd, jacrev: jvp by the double-vjp identity (the vjp of v -> vjp(v) is the jvp,
  which reverse mode gives exactly), Jacobians row by row (jacrev) or column by column (jacfwd)
  with MindSpore's structures: one Jacobian per (output, input) pair, output shape then input
  shape.
"""
import builtins as _b
import math as _math

from pijit import _C
from pijit import creation as _creation
from pijit import dtype as _dt
from pijit._ops_common import as_tensor as _t
from pijit._state import runtime_state
from pijit.ops import functional as F
from pijit.ops.primitives import Primitive
from pijit.ops.primitives2 import _tensor, _int, _bool, _ints, _is_int

_Tensor = _C.TensorBase
_op = _C.op

__all__ = []


def _export(obj):
    __all__.append(obj.__name__)
    return obj


def _number(who, name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("For '%s', the '%s' must be a number, but got %r" % (who, name, v))
    return float(v)


def _is_complex(t):
    return t.dtype in (_dt.complex64, _dt.complex128)


def _seed_pair(who, seed, seed2):
    _int(who, "seed", seed)
    _int(who, "seed2", seed2)
    if seed < 0 or seed2 < 0:
        raise ValueError("For '%s', 'seed' and 'seed2' must be non-negative" % who)
    return (seed * 1000003 + seed2) if (seed or seed2) else None


def _opt_seed(who, seed):
    if seed is None:
        return None
    _int(who, "seed", seed)
    if seed < 0:
        raise ValueError("For '%s', the 'seed' must be non-negative, but got %d" % (who, seed))
    return seed


def _shape_of(who, shape):
    if isinstance(shape, _Tensor):
        return tuple(int(v) for v in shape.reshape((-1,)).tolist())
    if _is_int(shape):
        return (shape,)
    return _ints(who, "shape", shape)


class _Seeded(Primitive):
    def __init__(self, seed=0, seed2=0, **attrs):
        _seed_pair(type(self).__name__, seed, seed2)
        super().__init__(seed=seed, seed2=seed2, **attrs)

    def _seed(self):
        return _seed_pair(type(self).__name__, self.attrs["seed"], self.attrs["seed2"])


# ----- special functions -------------------------------------------------------------------

def _unary(name, cls_name, doc):
    def f(input):
        x = _tensor(name, "input", input)
        if not (x.dtype.is_floating_point or x.dtype in (_dt.int32, _dt.int64)):
            raise TypeError("For '%s', the input must be a float16, float32 or float64 Tensor, but got %s"
                            % (name, x.dtype))
        return _op(name, (x,))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "ops.%s(input): %s, elementwise (float32 for integer input)." % (name, doc)
    globals()[name] = f
    __all__.append(name)

    class Cls(Primitive):
        def __call__(self, x):
            return f(x)
    Cls.__name__ = Cls.__qualname__ = cls_name
    Cls.__doc__ = "%s()(x): ops.%s's." % (cls_name, name)
    globals()[cls_name] = Cls
    __all__.append(cls_name)


_unary("bessel_j0", "BesselJ0", "the Bessel function of the first kind of order 0")
_unary("bessel_j1", "BesselJ1", "the Bessel function of the first kind of order 1")
_unary("bessel_y0", "BesselY0", "the Bessel function of the second kind of order 0 (NaN below 0)")
_unary("bessel_y1", "BesselY1", "the Bessel function of the second kind of order 1 (NaN below 0)")
_unary("bessel_k0", "BesselK0", "the modified Bessel function of the second kind of order 0")
_unary("bessel_k0e", "BesselK0e", "exp(x) * K0(x)")
_unary("bessel_k1", "BesselK1", "the modified Bessel function of the second kind of order 1")
_unary("bessel_k1e", "BesselK1e", "exp(x) * K1(x)")


@_export
class Zeta(Primitive):
    """Zeta()(x, q): the Hurwitz zeta function sum_k (q + k)^-x, x and q of one float dtype
    (inf at x = 1, NaN for x < 1). Differentiable in q."""

    def __call__(self, x, q):
        _tensor("Zeta", "x", x)
        _tensor("Zeta", "q", q)
        return _op("zeta", (x, q))


@_export
class Betainc(Primitive):
    """Betainc()(a, b, x): the regularized incomplete beta function I_x(a, b), a, b and x of one
    float dtype (NaN outside a, b > 0, 0 <= x <= 1). Differentiable in x."""

    def __call__(self, a, b, x):
        for n, v in (("a", a), ("b", b), ("x", x)):
            _tensor("Betainc", n, v)
        return _op("betainc", (a, b, x))


@_export
def mvlgamma(input, p):
    """ops.mvlgamma(input, p): the multivariate log-gamma function of dimension p,
    p(p-1)/4 log(pi) + sum_{j<p} lgamma(input - j/2). Every element must exceed (p-1)/2
    (ValueError, as MindSpore's kernel checks)."""
    x = _tensor("mvlgamma", "input", input)
    _int("mvlgamma", "p", p)
    if p < 1:
        raise ValueError("For 'mvlgamma', the 'p' must be greater than or equal to 1, but got %d" % p)
    if not x.dtype.is_floating_point:
        raise TypeError("For 'mvlgamma', the input must be float32 or float64, but got %s" % x.dtype)
    if x.size and not bool(F.all(F.gt(x, (p - 1) / 2.0))):
        raise ValueError("For 'mvlgamma', all elements of 'input' must be greater than (p-1)/2 = %r"
                         % ((p - 1) / 2.0))
    out = F.lgamma(x)
    for j in range(1, p):
        out = out + F.lgamma(x - j / 2.0)
    return out + p * (p - 1) / 4.0 * _math.log(_math.pi)


@_export
class Mvlgamma(Primitive):
    """Mvlgamma(p)(x): ops.mvlgamma(x, p)."""

    def __init__(self, p):
        _int("Mvlgamma", "p", p)
        if p < 1:
            raise ValueError("For 'Mvlgamma', the 'p' must be greater than or equal to 1, but got %d" % p)
        super().__init__(p=p)

    def __call__(self, x):
        return mvlgamma(x, self.attrs["p"])


@_export
def angle(input):
    """ops.angle(input): the argument atan2(imag, real) of a complex tensor, in its real dtype."""
    x = _tensor("angle", "input", input)
    if not _is_complex(x):
        raise TypeError("For 'angle', the input must be complex64 or complex128, but got %s" % x.dtype)
    return _op("angle", (x,))  # (its own op: the gradient at 0 is 0, as torch's, where atan2's is NaN)


@_export
class Polar(Primitive):
    """Polar()(abs, angle): the complex tensor abs * (cos(angle) + i sin(angle)); abs and angle
    of one dtype (float32 -> complex64, float64 -> complex128)."""

    def __call__(self, abs, angle):
        a = _tensor("Polar", "abs", abs)
        t = _tensor("Polar", "angle", angle)
        if a.dtype != t.dtype or a.dtype not in (_dt.float32, _dt.float64):
            raise TypeError("For 'Polar', 'abs' and 'angle' must both be float32 or both float64, but got %s "
                            "and %s" % (a.dtype, t.dtype))
        if a.shape != t.shape:
            raise ValueError("For 'Polar', 'abs' and 'angle' must have one shape, but got %r and %r"
                             % (a.shape, t.shape))
        return _op("complex", (a * F.cos(t), a * F.sin(t)))


@_export
class Eig(Primitive):
    """Eig(compute_v=False)(x) -> (eigen_values, eigen_vectors): the complex eigenvalues of the
    square matrices x [..., N, N] (float32/complex64 -> complex64, float64/complex128 ->
    complex128), in no particular order, and with compute_v the unit right eigenvectors as
    columns (each with its largest component real); without, eigen_vectors is an empty tensor."""

    def __init__(self, compute_v=False):
        super().__init__(compute_v=_bool("Eig", "compute_v", compute_v))

    def __call__(self, x):
        x = _tensor("Eig", "x", x)
        if x.dtype not in (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128):
            raise TypeError("For 'Eig', the 'x' must be float32, float64, complex64 or complex128, but got %s"
                            % x.dtype)
        w, v = _op("eig", (x,), {"compute_v": self.attrs["compute_v"]})
        if not self.attrs["compute_v"]:
            v = _creation.zeros((0,), dtype=w.dtype)
        return w, v


@_export
class MatrixLogarithm(Primitive):
    """MatrixLogarithm()(x): the principal logarithm of the complex square matrices x [..., N, N]
    (exp of the result gives x back); complex64 or complex128 only."""

    def __call__(self, x):
        x = _tensor("MatrixLogarithm", "x", x)
        if not _is_complex(x):
            raise TypeError("For 'MatrixLogarithm', the 'x' must be complex64 or complex128, but got %s" % x.dtype)
        return _op("matrix_log", (x,))


# ----- random draws ------------------------------------------------------------------------

def _gamma_draws(who, shape, alpha, seed):
    """Gamma(alpha, 1) draws of shape + alpha.shape."""
    a = _tensor(who, "alpha", alpha)
    if not a.dtype.is_floating_point:
        raise TypeError("For '%s', the 'alpha' must be a floating Tensor, but got %s" % (who, a.dtype))
    return _op("random_gamma", (a,), {"shape": tuple(shape), "seed": seed})


@_export
def gamma(shape, alpha, beta, seed=None):
    """ops.gamma(shape, alpha, beta, seed=None): Gamma draws with shape alpha and rate beta
    (mean alpha / beta), of the broadcast shape of `shape`, alpha and beta."""
    s = _shape_of("gamma", shape)
    a = _tensor("gamma", "alpha", alpha)
    b = _tensor("gamma", "beta", beta)
    out_shape = _broadcast_shape(_broadcast_shape(s, a.shape), b.shape)
    draws = _gamma_draws("gamma", (), F.broadcast_to(a, out_shape).contiguous(), _opt_seed("gamma", seed))
    return draws / F.cast(b, draws.dtype)


def _broadcast_shape(s, t):
    s, t = tuple(s), tuple(t)
    n = _b.max(len(s), len(t))
    s, t = (1,) * (n - len(s)) + s, (1,) * (n - len(t)) + t
    out = []
    for a, b in zip(s, t):
        if a != b and a != 1 and b != 1:
            raise ValueError("shapes %r and %r do not broadcast" % (s, t))
        out.append(b if a == 1 else a)
    return tuple(out)


@_export
class Gamma(_Seeded):
    """Gamma(seed=0, seed2=0)(shape, alpha, beta): ops.gamma's draws."""

    def __call__(self, shape, alpha, beta):
        s = _shape_of("Gamma", shape)
        a, b = _tensor("Gamma", "alpha", alpha), _tensor("Gamma", "beta", beta)
        out_shape = _broadcast_shape(_broadcast_shape(s, a.shape), b.shape)
        draws = _gamma_draws("Gamma", (), F.broadcast_to(a, out_shape).contiguous(), self._seed())
        return draws / F.cast(b, draws.dtype)


@_export
def random_gamma(shape, alpha, seed=0, seed2=0):
    """ops.random_gamma(shape, alpha, seed=0, seed2=0): Gamma(alpha, 1) draws of shape
    shape + alpha.shape (shape a tuple or 1-D int Tensor)."""
    s = _shape_of("random_gamma", shape)
    return _gamma_draws("random_gamma", s, alpha, _seed_pair("random_gamma", seed, seed2))


def _poisson(who, shape, rate, seed, dtype):
    s = _shape_of(who, shape)
    r = _tensor(who, "rate", rate)
    dtype = _dt.as_dtype(dtype)
    if dtype not in (_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64):
        raise TypeError("For '%s', the 'dtype' must be float16, float32, float64, int32 or int64, but got %s"
                        % (who, dtype))
    return _op("random_poisson", (r,), {"shape": s, "seed": seed, "dtype": dtype})


@_export
def random_poisson(shape, rate, seed=None, dtype=_dt.float32):
    """ops.random_poisson(shape, rate, seed=None, dtype=float32): Poisson(rate) draws of shape
    shape + rate.shape."""
    return _poisson("random_poisson", shape, rate, _opt_seed("random_poisson", seed), dtype)


@_export
class RandomPoisson(_Seeded):
    """RandomPoisson(seed=0, seed2=0, dtype=int64)(shape, rate): ops.random_poisson's draws."""

    def __init__(self, seed=0, seed2=0, dtype=_dt.int64):
        super().__init__(seed, seed2, dtype=_dt.as_dtype(dtype))

    def __call__(self, shape, rate):
        return _poisson("RandomPoisson", shape, rate, self._seed(), self.attrs["dtype"])


@_export
class Cauchy(Primitive):
    """Cauchy(size, median=0.0, sigma=1.0)(): float32 Cauchy draws, median + sigma *
    tan(pi (U - 1/2))."""

    def __init__(self, size, median=0.0, sigma=1.0):
        super().__init__(size=_ints("Cauchy", "size", size), median=_number("Cauchy", "median", median),
                         sigma=_number("Cauchy", "sigma", sigma))

    def __call__(self):
        a = self.attrs
        u = _creation.rand(a["size"], dtype=_dt.float64)
        return F.cast(F.tan((u - 0.5) * _math.pi) * a["sigma"] + a["median"], _dt.float32)


@_export
class LogNormalReverse(Primitive):
    """LogNormalReverse(mean=1.0, std=2.0)(input): exp(N(mean, std^2)) draws of input's shape and
    dtype."""

    def __init__(self, mean=1.0, std=2.0):
        super().__init__(mean=_number("LogNormalReverse", "mean", mean),
                         std=_number("LogNormalReverse", "std", std))

    def __call__(self, input):
        x = _tensor("LogNormalReverse", "input", input)
        if not x.dtype.is_floating_point:
            raise TypeError("For 'LogNormalReverse', the input must be float16 or float32, but got %s" % x.dtype)
        z = _creation.randn(tuple(x.shape), dtype=_dt.float32)
        return F.cast(F.exp(z * self.attrs["std"] + self.attrs["mean"]), x.dtype)


def _ndtr(x):
    return 0.5 * (1.0 + F.erf(x / _math.sqrt(2.0)))


@_export
class ParameterizedTruncatedNormal(_Seeded):
    """ParameterizedTruncatedNormal(seed=0, seed2=0)(shape, mean, stdevs, min, max): draws of
    shape [batch, ...] where batch b follows N(mean[b], stdevs[b]^2) conditioned on
    [min[b], max[b]] (inverse-CDF sampling in float64; every value lies in the interval)."""

    def __call__(self, shape, mean, stdevs, min, max):
        s = _shape_of("ParameterizedTruncatedNormal", shape)
        ts = [_tensor("ParameterizedTruncatedNormal", n, v)
              for n, v in (("mean", mean), ("stdevs", stdevs), ("min", min), ("max", max))]
        if not s:
            raise ValueError("For 'ParameterizedTruncatedNormal', the 'shape' must have at least one dim")
        batch = s[0]
        for n, t in zip(("mean", "stdevs", "min", "max"), ts):
            if t.ndim > 1 or (t.ndim == 1 and t.shape[0] not in (1, batch)):
                raise ValueError("For 'ParameterizedTruncatedNormal', the '%s' must have shape (%d,) or (1,), "
                                 "but got %r" % (n, batch, t.shape))
        dt = ts[0].dtype
        m, sd, lo, hi = [F.reshape(F.cast(t, _dt.float64), (-1,) + (1,) * (len(s) - 1)) for t in ts]
        a, b = (lo - m) / sd, (hi - m) / sd
        u = _creation.rand(s, dtype=_dt.float64, seed=self._seed())
        p = _ndtr(a) + u * (_ndtr(b) - _ndtr(a))
        z = F.erfinv(F.clamp(p * 2.0 - 1.0, -1.0 + 1e-16, 1.0 - 1e-16)) * _math.sqrt(2.0)
        return F.cast(F.minimum(F.maximum(m + sd * z, lo), hi), dt)


@_export
class NonDeterministicInts(Primitive):
    """NonDeterministicInts(dtype=int64)(shape): integers drawn uniformly over the dtype's range
    (int32 or int64), of `shape` (a tuple or 1-D int Tensor)."""

    def __init__(self, dtype=_dt.int64):
        dtype = _dt.as_dtype(dtype)
        if dtype not in (_dt.int32, _dt.int64):
            raise TypeError("For 'NonDeterministicInts', the 'dtype' must be int32 or int64, but got %s" % dtype)
        super().__init__(dtype=dtype)

    def __call__(self, shape):
        s = _shape_of("NonDeterministicInts", shape)
        if self.attrs["dtype"] == _dt.int32:
            return _creation.randint(-2 ** 31, 2 ** 31, s, dtype=_dt.int32)
        return _creation.randint(-2 ** 63, 2 ** 63 - 1, s, dtype=_dt.int64)


# The candidate samplers (UniformCandidateSampler, LogUniformCandidateSampler and their functions)
# have one definition, in ops.losses2: the same objects under this module's names.
from pijit.ops.losses2 import (UniformCandidateSampler, LogUniformCandidateSampler,  # noqa: F401,E402
                               uniform_candidate_sampler, log_uniform_candidate_sampler)
__all__ += ["UniformCandidateSampler", "LogUniformCandidateSampler", "uniform_candidate_sampler",
            "log_uniform_candidate_sampler"]


# ----- optimizer updates -------------------------------------------------------------------

def _s(x):
    if isinstance(x, _Tensor):
        return F.reshape(x, ()) if x.size == 1 else x
    return _number("optimizer", "scalar", x)


def _assign(targets, values):
    for t, v in zip(targets, values):
        t[...] = F.cast(v, t.dtype)


def _check_like(who, ref_name, ref, **ts):
    _tensor(who, ref_name, ref)
    for n, t in ts.items():
        _tensor(who, n, t)
        if t.shape != ref.shape:
            raise ValueError("For '%s', the '%s' must have the shape of '%s' %r, but got %r"
                             % (who, n, ref_name, ref.shape, t.shape))


def _rounds(who, var, grad, indices):
    """Rows of `indices` grouped into rounds without repeats, in order: [(index list, grad rows)]."""
    idx = _tensor(who, "indices", indices)
    if idx.dtype not in (_dt.int32, _dt.int64) or idx.ndim != 1:
        raise TypeError("For '%s', the 'indices' must be a 1-D int32 or int64 Tensor, but got %s %r"
                        % (who, idx.dtype, idx.shape))
    if grad.ndim != var.ndim or grad.shape[0] != idx.shape[0] or grad.shape[1:] != var.shape[1:]:
        raise ValueError("For '%s', the 'grad' must have shape (%d,) + %r, but got %r"
                         % (who, idx.shape[0], tuple(var.shape[1:]), grad.shape))
    rows = idx.tolist()
    for r in rows:
        if not 0 <= r < var.shape[0]:
            raise ValueError("For '%s', the index %d is out of range [0, %d)" % (who, r, var.shape[0]))
    rounds, left = [], list(range(len(rows)))
    while left:
        seen, now, later = set(), [], []
        for k in left:
            (later if rows[k] in seen else now).append(k)
            seen.add(rows[k])
        rounds.append(([rows[k] for k in now], F.gather(grad, F.cast(_t(now), _dt.int64), 0)))
        left = later
    return rounds


def _sparse_update(who, var, slots, grad, indices, step):
    """Applies step(var_rows, slot_rows..., grad_rows) -> (var_rows, slot_rows...) round by round."""
    for rows, g in _rounds(who, var, grad, indices):
        it = F.cast(_t(rows), _dt.int64)
        cur = [F.gather(t, it, 0) for t in (var,) + tuple(slots)]
        new = step(*(cur + [g]))
        for t, v in zip((var,) + tuple(slots), new):
            t[it] = F.cast(v, t.dtype)


@_export
class SparseApplyAdagradV2(Primitive):
    """SparseApplyAdagradV2(lr, epsilon, use_locking=False, update_slots=True)(var, accum, grad,
    indices) -> (var, accum): for each row i of indices, accum[i] += grad^2 (when update_slots)
    and var[i] -= lr * grad / (sqrt(accum[i]) + epsilon)."""

    def __init__(self, lr, epsilon, use_locking=False, update_slots=True):
        super().__init__(lr=_number("SparseApplyAdagradV2", "lr", lr),
                         epsilon=_number("SparseApplyAdagradV2", "epsilon", epsilon),
                         use_locking=_bool("SparseApplyAdagradV2", "use_locking", use_locking),
                         update_slots=_bool("SparseApplyAdagradV2", "update_slots", update_slots))

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, accum, grad, indices):
        _check_like("SparseApplyAdagradV2", "var", var, accum=accum)
        a = self.attrs

        def step(v, acc, g):
            acc = acc + g * g if a["update_slots"] else acc
            return v - g * a["lr"] / (F.sqrt(acc) + a["epsilon"]), acc
        _sparse_update("SparseApplyAdagradV2", var, (accum,), _tensor("SparseApplyAdagradV2", "grad", grad),
                       indices, step)
        return var, accum


def _ftrl_step(lr, l1, l2, lr_power, shrinkage=0.0):
    def step(v, acc, lin, g):
        new_acc = acc + g * g
        gs = g + v * (2.0 * shrinkage) if shrinkage else g
        lin = lin + gs - (F.pow(new_acc, -lr_power) - F.pow(acc, -lr_power)) / lr * v
        quad = F.pow(new_acc, -lr_power) / lr + 2.0 * l2
        new_v = F.where(F.gt(F.abs(lin), l1), (F.sign(lin) * l1 - lin) / quad, F.zeros_like(v))
        return new_v, new_acc, lin
    return step


@_export
class SparseApplyFtrl(Primitive):
    """SparseApplyFtrl(lr, l1, l2, lr_power, use_locking=False)(var, accum, linear, grad,
    indices) -> (var, accum, linear): FTRL-proximal on the rows of indices: accum' = accum +
    g^2; linear += g - (accum'^-p - accum^-p) / lr * var; var = (sign(linear) l1 - linear) /
    (accum'^-p / lr + 2 l2) where |linear| > l1, else 0 (p = lr_power)."""

    def __init__(self, lr, l1, l2, lr_power, use_locking=False):
        who = type(self).__name__
        super().__init__(lr=_number(who, "lr", lr), l1=_number(who, "l1", l1), l2=_number(who, "l2", l2),
                         lr_power=_number(who, "lr_power", lr_power), use_locking=_bool(who, "use_locking",
                                                                                       use_locking))
        if self.attrs["lr"] <= 0 or self.attrs["l1"] < 0 or self.attrs["l2"] < 0 or self.attrs["lr_power"] > 0:
            raise ValueError("For '%s', lr must be positive, l1 and l2 non-negative and lr_power <= 0" % who)

    def _shrinkage(self):
        return 0.0

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, accum, linear, grad, indices):
        who = type(self).__name__
        _check_like(who, "var", var, accum=accum, linear=linear)
        a = self.attrs
        _sparse_update(who, var, (accum, linear), _tensor(who, "grad", grad), indices,
                       _ftrl_step(a["lr"], a["l1"], a["l2"], a["lr_power"], self._shrinkage()))
        return var, accum, linear


@_export
class SparseApplyFtrlV2(SparseApplyFtrl):
    """SparseApplyFtrlV2(lr, l1, l2, l2_shrinkage, lr_power, use_locking=False)(var, accum,
    linear, grad, indices): SparseApplyFtrl with the linear term fed g + 2 l2_shrinkage var (the
    accumulator still takes g^2)."""

    def __init__(self, lr, l1, l2, l2_shrinkage, lr_power, use_locking=False):
        super().__init__(lr, l1, l2, lr_power, use_locking)
        self.attrs["l2_shrinkage"] = _number("SparseApplyFtrlV2", "l2_shrinkage", l2_shrinkage)

    def _shrinkage(self):
        return self.attrs["l2_shrinkage"]


@_export
class SparseApplyProximalAdagrad(Primitive):
    """SparseApplyProximalAdagrad(use_locking=False)(var, accum, lr, l1, l2, grad, indices) ->
    (var, accum): on the rows of indices, accum += g^2; prox = var - lr g / sqrt(accum); var =
    sign(prox) / (1 + lr l2) * max(|prox| - lr l1, 0)."""

    def __init__(self, use_locking=False):
        super().__init__(use_locking=_bool("SparseApplyProximalAdagrad", "use_locking", use_locking))

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, accum, lr, l1, l2, grad, indices):
        who = "SparseApplyProximalAdagrad"
        _check_like(who, "var", var, accum=accum)
        r, a1, a2 = _s(lr), _s(l1), _s(l2)

        def step(v, acc, g):
            acc = acc + g * g
            prox = v - g * r / F.sqrt(acc)
            return F.sign(prox) / (r * a2 + 1.0) * F.relu(F.abs(prox) - r * a1), acc
        _sparse_update(who, var, (accum,), _tensor(who, "grad", grad), indices, step)
        return var, accum


@_export
class ApplyAdagradDA(Primitive):
    """ApplyAdagradDA(use_locking=False)(var, gradient_accumulator, gradient_squared_accumulator,
    grad, lr, l1, l2, global_step) -> var: ga += grad; gsa += grad^2; var = -lr *
    sign(ga) max(|ga| - l1 global_step, 0) / (l2 global_step lr + sqrt(gsa)) (with l1 = 0 the
    shrinkage is skipped: var = -lr ga / (...))."""

    def __init__(self, use_locking=False):
        super().__init__(use_locking=_bool("ApplyAdagradDA", "use_locking", use_locking))

    @runtime_state("writes a Parameter in place")
    def __call__(self, var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2, global_step):
        who = "ApplyAdagradDA"
        _check_like(who, "var", var, gradient_accumulator=gradient_accumulator,
                    gradient_squared_accumulator=gradient_squared_accumulator, grad=grad)
        r, a1, a2, step = _s(lr), _s(l1), _s(l2), _s(global_step)
        step = F.cast(step, var.dtype) if isinstance(step, _Tensor) else float(step)
        ga = gradient_accumulator + grad
        gsa = gradient_squared_accumulator + grad * grad
        shrunk = F.sign(ga) * F.relu(F.abs(ga) - a1 * step)
        tmp = F.where(F.gt(F.cast(_t(a1), var.dtype), 0), shrunk, ga)
        new = -(tmp * r) / (a2 * step * r + F.sqrt(gsa))
        _assign((gradient_accumulator, gradient_squared_accumulator, var), (ga, gsa, new))
        return var


@_export
class LARSUpdate(Primitive):
    """LARSUpdate(epsilon=1e-05, hyperpara=0.001, use_clip=False)(weight, gradient, norm_weight,
    norm_gradient, weight_decay, learning_rate): the LARS-scaled gradient
    lambda * (gradient + weight_decay * weight), lambda = hyperpara ||w|| / (||g|| +
    weight_decay ||w|| + epsilon) with ||w|| = sqrt(norm_weight), ||g|| = sqrt(norm_gradient)
    (the inputs are sums of squares); with use_clip lambda = min(lambda / learning_rate, 1)."""

    def __init__(self, epsilon=1e-05, hyperpara=0.001, use_clip=False):
        super().__init__(epsilon=_number("LARSUpdate", "epsilon", epsilon),
                         hyperpara=_number("LARSUpdate", "hyperpara", hyperpara),
                         use_clip=_bool("LARSUpdate", "use_clip", use_clip))

    def __call__(self, weight, gradient, norm_weight, norm_gradient, weight_decay, learning_rate):
        who = "LARSUpdate"
        _check_like(who, "weight", weight, gradient=gradient)
        a = self.attrs
        wn, gn = F.sqrt(_s(_tensor(who, "norm_weight", norm_weight))), F.sqrt(_s(_tensor(who, "norm_gradient",
                                                                                         norm_gradient)))
        wd, lr = _s(weight_decay), _s(learning_rate)
        lam = wn * a["hyperpara"] / (gn + wn * wd + a["epsilon"])
        if a["use_clip"]:
            lam = F.minimum(lam / lr, F.ones_like(lam))
        return F.cast((gradient + weight * wd) * lam, gradient.dtype)


# ----- gathers -------------------------------------------------------------------------------

@_export
class SparseGatherV2(Primitive):
    """SparseGatherV2()(input_params, input_indices, axis): ops.gather's slices (the sparse
    variant of Gather; the same values)."""

    def __call__(self, input_params, input_indices, axis):
        _tensor("SparseGatherV2", "input_params", input_params)
        _tensor("SparseGatherV2", "input_indices", input_indices)
        _int("SparseGatherV2", "axis", axis)
        return F.gather(input_params, input_indices, axis)


@_export
class EmbeddingLookup(Primitive):
    """EmbeddingLookup()(input_params, input_indices, offset): rows input_params[i - offset] for
    each index i; an index whose row falls outside [0, len(input_params)) gives a zero row."""

    def __call__(self, input_params, input_indices, offset):
        p = _tensor("EmbeddingLookup", "input_params", input_params)
        i = _tensor("EmbeddingLookup", "input_indices", input_indices)
        if i.dtype not in (_dt.int32, _dt.int64):
            raise TypeError("For 'EmbeddingLookup', the 'input_indices' must be int32 or int64, but got %s" % i.dtype)
        _int("EmbeddingLookup", "offset", offset)
        n = p.shape[0]
        rel = i - offset
        ok = F.logical_and(F.ge(rel, 0), F.lt(rel, n))
        rows = F.gather(p, F.where(ok, rel, F.zeros_like(rel)), 0)
        mask = F.reshape(ok, tuple(ok.shape) + (1,) * (p.ndim - 1))
        return F.where(mask, rows, F.zeros_like(rows))


# ----- checks and gradient hooks ---------------------------------------------------------------

@_export
class CheckNumerics(Primitive):
    """CheckNumerics()(x): x itself when every element is finite; otherwise ValueError (the
    check reads the values: a graph break under jit)."""

    def __call__(self, x):
        x = _tensor("CheckNumerics", "x", x)
        if not x.dtype.is_floating_point:
            raise TypeError("For 'CheckNumerics', the 'x' must be a floating Tensor, but got %s" % x.dtype)
        if x.size and not bool(F.all(F.isfinite(x))):
            raise ValueError("For 'CheckNumerics', the input has NaN or Inf values")
        return x


@_export
class Assert(Primitive):
    """Assert(summarize=3)(condition, input_data): raises ValueError with the first `summarize`
    values of each input_data tensor when the boolean condition is False."""

    def __init__(self, summarize=3):
        super().__init__(summarize=_int("Assert", "summarize", summarize))

    def __call__(self, condition, input_data):
        c = condition
        if isinstance(c, _Tensor):
            if c.dtype != _dt.bool_:
                raise TypeError("For 'Assert', the 'condition' must be a bool Tensor, but got %s" % c.dtype)
            ok = bool(F.all(c))
        elif isinstance(c, bool):
            ok = c
        else:
            raise TypeError("For 'Assert', the 'condition' must be a bool or a bool Tensor, but got %s"
                            % type(c).__name__)
        if not isinstance(input_data, (tuple, list)):
            raise TypeError("For 'Assert', the 'input_data' must be a tuple or list of Tensors")
        if not ok:
            n = self.attrs["summarize"]
            parts = [str(t.reshape((-1,)).tolist()[:n]) if isinstance(t, _Tensor) else repr(t) for t in input_data]
            raise ValueError("For 'Assert', the condition is False: %s" % ", ".join(parts))


def _identity_with_backward(args, backward, name):
    """args as they are; under a gradient tape, backward(douts tuple) gives their gradients."""
    single = len(args) == 1
    if not _C.tape_active():
        return args[0] if single else args

    def forward(*xs):
        outs = tuple(F.mul(x, 1) if isinstance(x, _Tensor) else x for x in xs)
        return outs[0] if single else outs

    def bprop(*a):
        dout = a[-1]
        return backward(dout if isinstance(dout, tuple) else (dout,))

    return _C.call_with_bprop(forward, bprop, tuple(args), name)


@_export
class HookBackward(Primitive):
    """HookBackward(hook_fn, cell_id="")(*inputs): the inputs unchanged; when a gradient flows
    back through them, hook_fn(grad) is called (grad a tuple for several inputs) and what it
    returns (not None) replaces the gradient."""

    def __init__(self, hook_fn, cell_id=""):
        if not callable(hook_fn):
            raise TypeError("For 'HookBackward', the 'hook_fn' must be callable, but got %s" % type(hook_fn).__name__)
        if not isinstance(cell_id, str):
            raise TypeError("For 'HookBackward', the 'cell_id' must be a str, but got %r" % (cell_id,))
        super().__init__(cell_id=cell_id)
        self.hook_fn = hook_fn

    @runtime_state("reads the gradient tape: its hook runs in the backward")
    def __call__(self, *inputs):
        if not inputs:
            raise ValueError("For 'HookBackward', at least one input is needed")

        def backward(douts):
            r = self.hook_fn(douts[0] if len(douts) == 1 else douts)
            if r is None:
                return douts
            return tuple(r) if isinstance(r, (tuple, list)) else (r,)
        return _identity_with_backward(inputs, backward, "HookBackward")


@_export
class InsertGradientOf(Primitive):
    """InsertGradientOf(f)(x): x unchanged; its gradient is replaced by f(gradient)."""

    def __init__(self, f):
        if not callable(f):
            raise TypeError("For 'InsertGradientOf', the 'f' must be callable, but got %s" % type(f).__name__)
        super().__init__()
        self.f = f

    @runtime_state("reads the gradient tape: f runs in the backward")
    def __call__(self, input_x):
        return _identity_with_backward((input_x,), lambda douts: (self.f(douts[0]),), "InsertGradientOf")


@_export
class Map(Primitive):
    """Map(ops=None, reverse=False): applies a function element by element over sequences of
    the same length (one level, unlike HyperMap); Map(fn)(*seqs) or Map()(fn, *seqs). The
    result has the first sequence's type (tuple or list)."""

    def __init__(self, ops=None, reverse=False):
        super().__init__(reverse=_bool("Map", "reverse", reverse))
        self.ops = ops

    def __call__(self, *args):
        fn, seqs = (self.ops, args) if self.ops is not None else (args[0] if args else None, args[1:])
        if not callable(fn):
            raise TypeError("For 'Map', the function to map must be callable, but got %s" % type(fn).__name__)
        if not seqs:
            raise TypeError("For 'Map', no sequence to map over")
        for s in seqs:
            if not isinstance(s, (tuple, list)):
                raise TypeError("For 'Map', the inputs must be tuples or lists, but got %s" % type(s).__name__)
        n = len(seqs[0])
        if any(len(s) != n for s in seqs):
            raise ValueError("For 'Map', the sequences must have the same length, got %s"
                             % ", ".join(str(len(s)) for s in seqs))
        order = range(n - 1, -1, -1) if self.attrs["reverse"] else range(n)
        out = {}
        for i in order:
            out[i] = fn(*[s[i] for s in seqs])
        return type(seqs[0])([out[i] for i in range(n)])


# ----- forward-mode autodiff and Jacobians -----------------------------------------------------

def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _vjp_all(fn, inputs):
    """(outputs, vjp(cotangents tuple) -> gradient per input) by pijit's reverse mode."""
    from pijit.autodiff import GradOperation
    out = fn(*inputs)
    grad_all = GradOperation(get_all=True, sens_param=True)(fn)

    def vjp(ct):
        g = grad_all(*(tuple(inputs) + (ct if isinstance(out, tuple) else ct[0],)))
        return _as_tuple(g)
    return out, vjp


def _check_floating(who, name, ts):
    for t in ts:
        if not isinstance(t, _Tensor):
            raise TypeError("For '%s', the '%s' must be Tensors, but got %s" % (who, name, type(t).__name__))


@_export
@runtime_state("takes a gradient of a gradient (capture gives those no graph)")
def jvp(fn, inputs, v, has_aux=False):
    """ops.jvp(fn, inputs, v, has_aux=False) -> (outputs, jvp_result) (and aux with has_aux):
    the Jacobian of fn at inputs times v (v shaped like inputs; a Tensor for one input, a tuple
    for several), with fn's output structure. Computed as the vjp of u -> J^T u, which is
    linear in u, so the result is exact."""
    _bool("jvp", "has_aux", has_aux)
    ins, vs = _as_tuple(inputs), _as_tuple(v)
    _check_floating("jvp", "inputs", ins)
    _check_floating("jvp", "v", vs)
    if len(ins) != len(vs):
        raise ValueError("For 'jvp', 'v' must match 'inputs' in length, got %d and %d" % (len(vs), len(ins)))
    for a, b in zip(ins, vs):
        if a.shape != b.shape:
            raise ValueError("For 'jvp', each 'v' must have its input's shape, got %r and %r" % (b.shape, a.shape))
    aux = None
    if has_aux:
        full = fn(*ins)
        if not isinstance(full, tuple) or len(full) < 2:
            raise ValueError("For 'jvp', with has_aux=True fn must return (output, aux...), but got %s"
                             % type(full).__name__)
        aux = full[1] if len(full) == 2 else full[1:]
        f = lambda *a: fn(*a)[0]  # noqa: E731
    else:
        f = fn
    out, vjp = _vjp_all(f, ins)
    outs = _as_tuple(out)
    res = _forward_columns(outs, vjp, [tuple(vs)])[0]
    if not _consistent(outs, ins, vjp, [res], [tuple(vs)]):
        res = _tangents_by_rows(outs, vjp, tuple(vs))
    res = res if isinstance(out, tuple) else res[0]
    return (out, res, aux) if has_aux else (out, res)


def _forward_columns(outs, vjp, tangent_sets):
    """J t for each tuple t of input tangents: the vjp of u -> J^T u (linear in u) taken at t."""
    zeros = tuple(F.zeros_like(o) for o in outs)
    _, vjp2 = _vjp_all(lambda *u: vjp(u), zeros)
    return [vjp2(t) for t in tangent_sets]


def _probe(t):
    """A fixed vector with no zero or repeated pattern, shaped like t."""
    n = _b.max(t.size, 1)
    return F.reshape(F.cos(F.cast(_creation.arange(n), t.dtype) * 0.7548776662 + 0.5), tuple(t.shape))


def _flat_dot(a, b):
    return F.sum(F.reshape(F.cast(a, _dt.float64), (-1,)) * F.reshape(F.cast(b, _dt.float64), (-1,)))


def _consistent(outs, ins, vjp, results, tangent_sets):
    """<u, J t> == <J^T u, t> for a probe u: second-order reverse mode through some callables
    (a jitted function's graph under nested tapes) gives zeros; then the caller uses rows."""
    u = tuple(_probe(o) for o in outs)
    back = vjp(u)
    for res, ts in zip(results, tangent_sets):
        lhs = float(sum(_flat_dot(a, b) for a, b in zip(u, res)))
        rhs = float(sum(_flat_dot(a, b) for a, b in zip(back, ts)))
        if abs(lhs - rhs) > 1e-3 * (abs(lhs) + abs(rhs)) + 1e-6:
            return False
    return True


def _rows(outs, vjp):
    """rows[o][k] = e_k^T J for output o's element k (a gradient per input)."""
    return [[vjp(tuple(_basis(z, k) if m == o else F.zeros_like(z) for m, z in enumerate(outs)))
             for k in range(y.size)] for o, y in enumerate(outs)]


def _tangents_by_rows(outs, vjp, ts):
    rows = _rows(outs, vjp)
    res = []
    for o, y in enumerate(outs):
        vals = [float(sum(_flat_dot(g, t) for g, t in zip(r, ts))) for r in rows[o]]
        res.append(F.reshape(_creation.tensor(vals, y.dtype) if vals else F.zeros_like(y), tuple(y.shape)))
    return tuple(res)


def _positions(who, grad_position, n):
    if _is_int(grad_position):
        pos, single = (grad_position,), True
    elif isinstance(grad_position, tuple) and grad_position and all(_is_int(p) for p in grad_position):
        pos, single = grad_position, False
    else:
        raise TypeError("For '%s', the 'grad_position' must be an int or a non-empty tuple of ints, but got %r"
                        % (who, grad_position))
    for p in pos:
        if not -n <= p < n:
            raise ValueError("For '%s', the 'grad_position' %d is out of range for %d inputs" % (who, p, n))
    return tuple(p % n for p in pos), single


def _jacobian(who, fn, grad_position, has_aux, forward):
    _bool(who, "has_aux", has_aux)

    @runtime_state("takes gradients of the function, one per Jacobian row or column")
    def jac_fn(*args):
        pos, single_in = _positions(who, grad_position, len(args))
        aux = None
        if has_aux:
            full = fn(*args)
            if not isinstance(full, tuple) or len(full) < 2:
                raise ValueError("For '%s', with has_aux=True fn must return more than one output" % who)
            aux = full[1] if len(full) == 2 else full[1:]

        def f(*sel):
            a = list(args)
            for p, s in zip(pos, sel):
                a[p] = s
            r = fn(*a)
            return r[0] if has_aux else r
        sel = tuple(args[p] for p in pos)
        _check_floating(who, "inputs", sel)
        by_columns = forward
        out, vjp = _vjp_all(f, sel)
        outs = _as_tuple(out)
        # J[o][i] has shape out_o.shape + in_i.shape
        jac = [[None] * len(sel) for _ in outs]
        if by_columns:  # column by column: J e_j through jvp
            columns = []
            for i, x in enumerate(sel):
                columns.append(_forward_columns(outs, vjp, [
                    tuple(_basis(s, j) if k == i else F.zeros_like(s) for k, s in enumerate(sel))
                    for j in range(x.size)]))
            probe = tuple(_probe(s) for s in sel)
            jp = []  # J probe, from the columns
            for o in range(len(outs)):
                acc = F.zeros_like(outs[o])
                for i in range(len(sel)):
                    pv = probe[i].reshape((-1,)).tolist()
                    for j, c in enumerate(columns[i]):
                        acc = acc + c[o] * pv[j]
                jp.append(acc)
            ok = _consistent(outs, sel, vjp, [tuple(jp)], [probe])
            by_columns = ok
        if by_columns:
            for i, x in enumerate(sel):
                cols = columns[i]
                for o, y in enumerate(outs):
                    if x.size == 0:
                        jac[o][i] = F.zeros(tuple(y.shape) + tuple(x.shape), y.dtype)
                        continue
                    st = F.stack([F.reshape(c[o], (-1,)) for c in cols], -1)
                    jac[o][i] = F.reshape(st, tuple(y.shape) + tuple(x.shape))
        else:  # row by row: e_k^T J through vjp
            all_rows = _rows(outs, vjp)
            for o, y in enumerate(outs):
                rows = all_rows[o]
                for i, x in enumerate(sel):
                    if y.size == 0:
                        jac[o][i] = F.zeros(tuple(y.shape) + tuple(x.shape), x.dtype)
                        continue
                    st = F.stack([F.reshape(r[i], (-1,)) for r in rows], 0)
                    jac[o][i] = F.reshape(st, tuple(y.shape) + tuple(x.shape))
        per_out = [row[0] if single_in else tuple(row) for row in jac]
        res = per_out[0] if not isinstance(out, tuple) else tuple(per_out)
        return (res, aux) if has_aux else res
    return jac_fn


def _basis(t, k):
    flat = F.zeros((t.size,), t.dtype)
    flat[k] = 1
    return F.reshape(flat, tuple(t.shape))


@_export
def jacfwd(fn, grad_position=0, has_aux=False):
    """ops.jacfwd(fn, grad_position=0, has_aux=False): a function giving the Jacobian of fn at
    its inputs, one Jacobian-vector product per input element. For an output of shape O and an
    input of shape I the Jacobian has shape O + I; several outputs give a tuple, several
    positions a tuple per output; with has_aux, (jacobian, aux) where aux is fn's other output."""
    return _jacobian("jacfwd", fn, grad_position, has_aux, True)


@_export
def jacrev(fn, grad_position=0, has_aux=False):
    """ops.jacrev(fn, grad_position=0, has_aux=False): jacfwd's result, one vector-Jacobian
    product per output element (better when outputs are fewer than inputs)."""
    return _jacobian("jacrev", fn, grad_position, has_aux, False)
